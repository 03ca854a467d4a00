/*
 * vmrun_farm_worker.c - `vmrun farm-worker`, the PVM task vmrun farm
 * spawns on every host: it takes the job, asks for work, runs each item of
 * its chunks with fork/exec (vmrun_farm_exec.c), retries a failing one up
 * to --retries times and sends one result per item.  It asks again when it
 * starts its last queued item (one request ahead), drops everything when
 * the master says so (its host was reclaimed past the limit), and exits on
 * QUIT or when the master is gone.
 */
#include "vmrun_farm.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvm3.h"

struct witem {
    struct liq_farm_key k;
    int idx;
    int xyz[3];
    char text[FARM_ITEM_MAX];
};

struct worker {
    int master;
    int argc;
    char **tmpl;            /* the command template */
    double timeout;
    int retries;
    struct liq_farm_queue fq;   /* of struct witem */
    int asked;              /* an ASK is outstanding */
    int dropped, quit;
};

/* One message from the master, already received into the active buffer. */
static void
w_take(struct worker *w, int tag)
{
    switch (tag) {
    case FARM_TAG_CHUNK: {
        struct witem it;
        int count = 0;

        pvm_upkint(&it.k.chunk, 1, 1);
        pvm_upkint(&count, 1, 1);
        for (int i = 0; i < count; i++) {
            it.k.ord = i;
            pvm_upkint(&it.idx, 1, 1);
            it.text[0] = '\0';
            pvm_upkstr(it.text);
            pvm_upkint(it.xyz, 3, 1);
            if (liq_farm_push(&w->fq, &it) != 0)
                w->quit = 1; /* out of memory: the master reruns our items elsewhere */
        }
        w->asked = 0;
        break;
    }
    case FARM_TAG_DROP:
        w->fq.head = w->fq.tail = 0;
        w->dropped = 1;
        break;
    case FARM_TAG_SHRINK: {
        int chunk = -1, keep = 0;

        pvm_upkint(&chunk, 1, 1);
        pvm_upkint(&keep, 1, 1);
        liq_farm_shrink(&w->fq, chunk, keep);
        break;
    }
    case FARM_TAG_QUIT:
    case FARM_TAG_EXITED: /* the master is gone */
        w->quit = 1;
        break;
    default:
        break;
    }
}

/* Between polls of a running item: anything from the master? */
static int
w_check(void *arg)
{
    struct worker *w = arg;
    int b, bytes, tag, src;

    while ((b = pvm_nrecv(-1, -1)) > 0) {
        pvm_bufinfo(b, &bytes, &tag, &src);
        if (src == w->master || tag == FARM_TAG_EXITED)
            w_take(w, tag);
    }
    return w->dropped || w->quit;
}

static void
w_ask(struct worker *w)
{
    int zero = 0;

    if (w->asked)
        return;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&zero, 1, 1);
    pvm_send(w->master, FARM_TAG_ASK);
    w->asked = 1;
}

static int
w_job(struct worker *w)
{
    int b = pvm_recv(w->master, FARM_TAG_JOB);
    char arg[FARM_ARG_MAX], cwd[4096];

    if (b < 0)
        return -1;
    pvm_upkint(&w->argc, 1, 1);
    if (w->argc < 1 || w->argc > 4096 || (w->tmpl = calloc((size_t)w->argc + 1, sizeof(char *))) == NULL)
        return -1;
    for (int i = 0; i < w->argc; i++) {
        arg[0] = '\0';
        pvm_upkstr(arg);
        if ((w->tmpl[i] = strdup(arg)) == NULL)
            return -1;
    }
    pvm_upkdouble(&w->timeout, 1, 1);
    pvm_upkint(&w->retries, 1, 1);
    cwd[0] = '\0';
    pvm_upkstr(cwd);
    /* The master's directory, where relative paths in the command mean
     * what the user meant; a host without it runs in its own. */
    if (cwd[0] != '\0' && chdir(cwd) != 0)
        (void)0;
    return 0;
}

/* Run one item (retries included) and send its result unless dropped. */
static void
w_run(struct worker *w, const struct witem *it, struct farm_run *r)
{
    char **argv = calloc((size_t)w->argc + 1, sizeof(char *));
    int attempts = 0, rc = 0, len;
    double seconds = 0, cpu = 0;

    if (argv == NULL)
        goto nomem;
    for (int i = 0; i < w->argc; i++) {
        char buf[FARM_ARG_MAX];

        if (farm_expand(w->tmpl[i], it->text, it->xyz, buf, sizeof(buf)) != 0)
            snprintf(buf, sizeof(buf), "%s", w->tmpl[i]);
        if ((argv[i] = strdup(buf)) == NULL)
            goto nomem;
    }
    do {
        rc = farm_exec(argv, w->timeout, w_check, w, r);
        attempts++;
        seconds += r->seconds;
        cpu += r->cpu;
    } while (rc == 0 && r->exit != 0 && attempts <= w->retries);
    if (rc == 1 || w->dropped || w->quit)
        goto out; /* dropped: the master gave the item to another worker */
    pvm_initsend(PvmDataDefault);
    int head[2] = { it->k.chunk, it->idx };

    pvm_pkint(head, 2, 1);
    pvm_pkint(&r->exit, 1, 1);
    pvm_pkint(&r->flags, 1, 1);
    pvm_pkint(&r->sig, 1, 1);
    pvm_pkint(&attempts, 1, 1);
    pvm_pkdouble(&seconds, 1, 1);
    pvm_pkdouble(&cpu, 1, 1);
    len = (int)r->outlen;
    pvm_pkint(&len, 1, 1);
    if (len > 0)
        pvm_pkbyte(r->out, len, 1);
    len = (int)r->errlen;
    pvm_pkint(&len, 1, 1);
    if (len > 0)
        pvm_pkbyte(r->err, len, 1);
    pvm_send(w->master, FARM_TAG_RESULT);
    goto out;
nomem:
    w->quit = 1;
out:
    if (argv != NULL)
        for (int i = 0; i < w->argc; i++)
            free(argv[i]);
    free(argv);
}

int
vmrun_farm_worker_main(int argc, char **argv)
{
    struct worker w;
    struct farm_run *r = malloc(sizeof(*r));
    int rc = 1;

    (void)argv;
    memset(&w, 0, sizeof(w));
    w.fq.size = sizeof(struct witem);
    if (argc != 1) {
        fprintf(stderr, "vmrun farm-worker: takes no arguments; vmrun farm spawns it\n");
        free(r);
        return 2;
    }
    pvm_setopt(PvmAutoErr, 0);
    if (r == NULL || pvm_mytid() < 0 || (w.master = pvm_parent()) <= 0) {
        fprintf(stderr, "vmrun farm-worker: %s; vmrun farm spawns it\n",
                r == NULL ? "out of memory" : pvm_mytid() < 0 ? "no virtual machine here"
                                                              : "no parent task");
        goto out;
    }
    pvm_notify(PvmTaskExit, FARM_TAG_EXITED, 1, &w.master);
    if (w_job(&w) != 0)
        goto out;
    while (!w.quit) {
        struct witem it;

        if (liq_farm_pop(&w.fq, &it) != 0) {
            int b, bytes, tag, src;

            w_ask(&w);
            if ((b = pvm_recv(-1, -1)) < 0)
                break;
            pvm_bufinfo(b, &bytes, &tag, &src);
            if (src == w.master || tag == FARM_TAG_EXITED)
                w_take(&w, tag);
            w.dropped = 0;
            continue;
        }
        if (w.fq.head == w.fq.tail)
            w_ask(&w); /* one request ahead: the next chunk comes while this item runs */
        w.dropped = 0;
        w_run(&w, &it, r);
    }
    rc = 0;
out:
    if (w.tmpl != NULL)
        for (int i = 0; i < w.argc; i++)
            free(w.tmpl[i]);
    free(w.tmpl);
    free(w.fq.q);
    free(r);
    pvm_exit();
    return rc;
}
