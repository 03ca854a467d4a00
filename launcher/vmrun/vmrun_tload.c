/*
 * vmrun_tload.c - a trace read back into lanes, spans, messages and
 * marks (vmrun_trace.h; issue 27).  It checks what the Trace Event format
 * asks of each phase (ph, pid, tid and ts on all; dur on "X"; id on "s"
 * and "f"; args.name on "M") and pairs flow starts and finishes by id, a
 * number or a string; the names and args it reads are
 * liq_master_trace.c's and lib/pvm/pvm_trace.c's.  A directory of PVM
 * task traces is read file by file into one trace: their flow ids are the
 * same at both ends of a message, so pairing them is the same job, and
 * their wall-clock times are moved to start at 0 afterwards.
 */
#include "vmrun_trace.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <time.h>

#include "vmrun_json.h"

/* Grow an array of elements of size sz to hold n + 1.  0 or -1. */
static int
grow(void **v, int n, int *cap, size_t sz)
{
    if (n < *cap)
        return 0;
    int c = *cap ? 2 * *cap : 64;
    void *x = realloc(*v, (size_t)c * sz);

    if (x == NULL)
        return -1;
    *v = x;
    *cap = c;
    return 0;
}

struct tl {
    struct vmrun_trace *t;
    int caph, capl, caps, capf, capm;
    /* flow ends by id */
    struct tl_end { char id[80]; int lane; double t, bytes; int tag; } *s, *f;
    int ns, nf, capsn, capfn;
    /* The runs a directory's PVM traces are of (otherData's run; traces
     * written before it was recorded have none), the first few named. */
    struct tl_run { char name[64], program[64]; double t_start_us; } runs[4];
    int nruns, more;            /* more: a fifth run, not kept */
};

static int
tl_host(struct tl *x, int pid)
{
    struct vmrun_trace *t = x->t;

    for (int h = 0; h < t->nhosts; h++)
        if (t->hosts[h].pid == pid)
            return h;
    if (grow((void **)&t->hosts, t->nhosts, &x->caph, sizeof(*t->hosts)) != 0)
        return -1;
    t->hosts[t->nhosts].pid = pid;
    snprintf(t->hosts[t->nhosts].name, sizeof(t->hosts[0].name), "pid %d", pid);
    return t->nhosts++;
}

static int
tl_lane(struct tl *x, int pid, int tid)
{
    struct vmrun_trace *t = x->t;
    int h;

    for (int l = 0; l < t->nlanes; l++)
        if (t->lanes[l].pid == pid && t->lanes[l].tid == tid)
            return l;
    if ((h = tl_host(x, pid)) < 0 ||
        grow((void **)&t->lanes, t->nlanes, &x->capl, sizeof(*t->lanes)) != 0)
        return -1;
    memset(&t->lanes[t->nlanes], 0, sizeof(t->lanes[0]));
    t->lanes[t->nlanes].pid = pid;
    t->lanes[t->nlanes].tid = tid;
    t->lanes[t->nlanes].host = h;
    snprintf(t->lanes[t->nlanes].name, sizeof(t->lanes[0].name), "t%x", (unsigned)tid);
    return t->nlanes++;
}

static enum vmrun_tkind
tl_kind(const char *name, const char *cat)
{
    static const struct { const char *name; enum vmrun_tkind k; } map[] = {
        { "compute", VT_COMPUTE }, { "wait ghosts", VT_WAIT_GHOST },
        { "wait reduction ghosts", VT_WAIT_GHOST }, { "wait move", VT_WAIT_MOVE },
        { "wait plan", VT_WAIT_PLAN }, { "wait verdict", VT_WAIT_VERDICT },
        { "migrate", VT_MIGRATE }, { "plan", VT_PLAN }, { "clock sync", VT_SYNC },
        { "recovery", VT_RECOVERY },
    };

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(name, map[i].name) == 0)
            return map[i].k;
    /* PVM task traces name the call; the category says what it did. */
    if (cat != NULL && strncmp(name, "pvm_", 4) == 0) {
        if (strcmp(cat, "wait") == 0)
            return VT_PVM_WAIT;
        if (strcmp(cat, "send") == 0)
            return VT_SEND;
        if (strcmp(cat, "spawn") == 0)
            return VT_PVM_SPAWN;
    }
    return strncmp(name, "send", 4) == 0 ? VT_SEND : VT_OTHER;
}

/* One event.  0, 1 when it lacks a field its phase needs, -1 out of memory. */
static int
tl_event(struct tl *x, const struct vmrun_json *e)
{
    struct vmrun_trace *t = x->t;
    const char *ph = vmrun_json_str(e, "ph"), *name = vmrun_json_str(e, "name");
    const struct vmrun_json *args = vmrun_json_get(e, "args");
    double ts = vmrun_json_num(e, "ts", NAN) * 1e-6;
    int pid = vmrun_json_int(e, "pid", -1), tid = vmrun_json_int(e, "tid", -1), lane;

    if (ph == NULL || name == NULL || pid < 0 || tid < 0 || !isfinite(ts))
        return 1;
    if (strcmp(ph, "M") == 0) {
        const char *v = vmrun_json_str(args, "name");

        if (strcmp(name, "process_name") == 0 || strcmp(name, "thread_name") == 0) {
            if (v == NULL)
                return 1;
            if (name[0] == 'p') {
                int h = tl_host(x, pid);

                if (h < 0)
                    return -1;
                snprintf(t->hosts[h].name, sizeof(t->hosts[h].name), "%s", v);
            } else {
                if ((lane = tl_lane(x, pid, tid)) < 0)
                    return -1;
                snprintf(t->lanes[lane].name, sizeof(t->lanes[lane].name), "%s", v);
                t->lanes[lane].master = strncmp(v, "master", 6) == 0;
            }
        }
        return 0;
    }
    if ((lane = tl_lane(x, pid, tid)) < 0)
        return -1;
    if (strcmp(ph, "X") == 0) {
        double dur = vmrun_json_num(e, "dur", -1) * 1e-6;
        struct vmrun_tspan *s;

        if (!(dur >= 0) || !isfinite(dur))
            return 1;
        if (grow((void **)&t->spans, t->nspans, &x->caps, sizeof(*t->spans)) != 0)
            return -1;
        s = &t->spans[t->nspans++];
        memset(s, 0, sizeof(*s));
        s->lane = lane;
        s->kind = tl_kind(name, vmrun_json_str(e, "cat"));
        s->t = ts;
        s->dur = dur;
        s->first = vmrun_json_int(args, "first_quantum", -1);
        s->quanta = vmrun_json_int(args, "quanta", 0);
        s->iters = vmrun_json_int(args, "iters", 0);
        s->heavy = vmrun_json_int(args, "heavy", 1);
        const char *part = vmrun_json_str(args, "part");

        s->part = part == NULL ? 0 : strcmp(part, "inner") == 0 ? 1 : strcmp(part, "outer") == 0;
        if (part != NULL && strcmp(part, "outer") == 0)
            s->part = 2;
        s->arg = vmrun_json_int(args, s->kind == VT_PLAN ? "moved" : "quanta_change", 0);
        s->peer = vmrun_json_int(args, "peer", 0);
        s->tag = vmrun_json_int(args, "tag", 0);
        s->bytes = vmrun_json_num(args, "bytes", 0);
        if (ts + dur > t->t_end)
            t->t_end = ts + dur;
        return 0;
    }
    if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
        const struct vmrun_json *id = vmrun_json_get(e, "id");
        int fin = ph[0] == 'f';
        struct tl_end *v;

        if (id == NULL || (id->type != VJ_NUM && id->type != VJ_STR) ||
            (id->type == VJ_STR && strlen(id->str) >= sizeof(x->s[0].id)))
            return 1;
        if (grow((void **)(fin ? &x->f : &x->s), fin ? x->nf : x->ns, fin ? &x->capfn : &x->capsn,
                 sizeof(struct tl_end)) != 0)
            return -1;
        v = fin ? &x->f[x->nf++] : &x->s[x->ns++];
        if (id->type == VJ_NUM)
            snprintf(v->id, sizeof(v->id), "%d", vmrun_json_clamp(id->num, -1));
        else
            snprintf(v->id, sizeof(v->id), "%s", id->str);
        v->lane = lane;
        v->t = ts;
        v->bytes = vmrun_json_num(args, "bytes", 0);
        v->tag = vmrun_json_int(args, "tag", 0);
        return 0;
    }
    if (strcmp(ph, "i") == 0 || strcmp(ph, "I") == 0) {
        struct vmrun_tmark *m;

        if (grow((void **)&t->marks, t->nmarks, &x->capm, sizeof(*t->marks)) != 0)
            return -1;
        m = &t->marks[t->nmarks++];
        m->lane = lane;
        m->t = ts;
        m->epoch = strcmp(name, "epoch") == 0 ? vmrun_json_int(args, "epoch", -1) : -1;
        snprintf(m->name, sizeof(m->name), "%s", name);
        return 0;
    }
    return 0; /* other phases are valid, and of no use here */
}

static int
tl_end_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tl_end *)a)->id, ((const struct tl_end *)b)->id);
}

/* Flow starts and finishes with one id make a message. */
static int
tl_flows(struct tl *x)
{
    struct vmrun_trace *t = x->t;
    int cap = 0;

    /* qsort's array must not be NULL, even for no elements. */
    if (x->ns > 1)
        qsort(x->s, (size_t)x->ns, sizeof(*x->s), tl_end_cmp);
    if (x->nf > 1)
        qsort(x->f, (size_t)x->nf, sizeof(*x->f), tl_end_cmp);
    for (int a = 0, b = 0; a < x->ns || b < x->nf;) {
        int c = a >= x->ns ? 1 : b >= x->nf ? -1 : tl_end_cmp(&x->s[a], &x->f[b]);

        if (c != 0) {
            t->unpaired++;
            a += c < 0;
            b += c > 0;
            continue;
        }
        if (grow((void **)&t->flows, t->nflows, &cap, sizeof(*t->flows)) != 0)
            return -1;
        t->flows[t->nflows++] = (struct vmrun_tflow){ x->s[a].lane, x->f[b].lane, x->s[a].t,
                                                      x->f[b].t, x->s[a].bytes, x->s[a].tag };
        a++;
        b++;
    }
    return 0;
}

static void
tl_job(struct vmrun_trace *t, const struct vmrun_json *other)
{
    const struct vmrun_json *job = vmrun_json_get(other, "job"), *grid = vmrun_json_get(job, "grid");
    struct vmrun_tjob *j = &t->job;
    const char *s;

    for (int a = 0; grid != NULL && grid->type == VJ_ARR && a < 3 && a < grid->n; a++)
        j->grid[a] = vmrun_json_clamp(grid->v[a].num, 0);
    j->iters = vmrun_json_int(job, "iters", 0);
    j->quanta = vmrun_json_int(job, "quanta", 8);
    j->tasks_per_host = vmrun_json_int(job, "tasks_per_host", 1);
    j->hosts = vmrun_json_int(job, "hosts", 0);
    j->workers = vmrun_json_int(job, "workers", 0);
    j->nquanta = vmrun_json_int(job, "nquanta", 0);
    j->halo = vmrun_json_int(job, "halo", 1);
    j->halo_auto = vmrun_json_int(job, "halo_auto", 1);
    j->halo_slack = vmrun_json_int(job, "halo_slack", 0);
    j->balance = vmrun_json_int(job, "balance", 1);
    j->epoch = vmrun_json_int(job, "epoch", 10);
    j->heavy = vmrun_json_int(job, "heavy", 1);
    j->reclaim = vmrun_json_int(job, "reclaim", 1);
    j->decomp_asked = vmrun_json_int(job, "decomp_asked", 0);
    j->min_gain = vmrun_json_num(job, "min_gain", 0.2);
    j->reclaim_below = vmrun_json_num(job, "reclaim_below", 0.125);
    snprintf(j->kernel, sizeof(j->kernel), "%s", (s = vmrun_json_str(job, "kernel")) ? s : "?");
    snprintf(j->decomp, sizeof(j->decomp), "%s", (s = vmrun_json_str(job, "decomp")) ? s : "?");
    snprintf(j->program, sizeof(j->program), "%s",
             (s = vmrun_json_str(other, "program")) ? s : "?");
    t->residual_us = vmrun_json_num(vmrun_json_get(other, "clock"), "residual_us", -1);
    t->dropped = vmrun_json_int(other, "dropped", 0);
}

/* A PVM task trace's otherData: its lane's path, program and parent, the
 * clocks' residual.  0, 1 when the task's lane has one already (two files
 * of one task), or -1 out of memory. */
static int
tl_pvm(struct tl *x, const struct vmrun_json *other)
{
    struct vmrun_trace *t = x->t;
    const struct vmrun_json *host = vmrun_json_get(other, "host");
    int tid = vmrun_json_int(other, "tid", -1), pid = vmrun_json_int(host, "index", -1), lane;
    double res = vmrun_json_num(vmrun_json_get(other, "clock"), "residual_us", -1);
    const char *s;

    if (tid < 0 || pid < 0)
        return 0;
    if ((lane = tl_lane(x, pid, tid)) < 0)
        return -1;
    /* A task's trace is one file: a second (a copy) would count it twice. */
    if (t->lanes[lane].path[0] != '\0')
        return 1;
    snprintf(t->lanes[lane].path, sizeof(t->lanes[lane].path), "%s",
             (s = vmrun_json_str(other, "path")) ? s : "?");
    snprintf(t->lanes[lane].program, sizeof(t->lanes[lane].program), "%s",
             (s = vmrun_json_str(other, "program")) ? s : "?");
    t->lanes[lane].parent = vmrun_json_int(other, "parent", 0);
    if ((s = vmrun_json_str(other, "run")) != NULL && s[0] != '\0') {
        double t0 = vmrun_json_num(other, "t_start_us", 0);
        int r = 0;

        while (r < x->nruns && strncmp(x->runs[r].name, s, sizeof(x->runs[r].name) - 1) != 0)
            r++;
        if (r == 4) {
            x->more = 1;
        } else if (r == x->nruns) {
            snprintf(x->runs[r].name, sizeof(x->runs[r].name), "%s", s);
            snprintf(x->runs[r].program, sizeof(x->runs[r].program), "%s",
                     t->lanes[lane].program);
            x->runs[r].t_start_us = t0;
            x->nruns++;
        } else if (t0 < x->runs[r].t_start_us) {
            /* The run's first task names it. */
            snprintf(x->runs[r].program, sizeof(x->runs[r].program), "%s",
                     t->lanes[lane].program);
            x->runs[r].t_start_us = t0;
        }
    }
    /* One clock unmeasured makes the whole unknown (-1). */
    if (t->pvm == 0)
        t->residual_us = res;
    else if (res < 0 || t->residual_us < 0)
        t->residual_us = -1;
    else
        t->residual_us = fmax(t->residual_us, res);
    t->dropped += vmrun_json_int(other, "dropped", 0);
    /* What the tasks took from hints, each setting once: "a; b". */
    const struct vmrun_json *ap = vmrun_json_get(vmrun_json_get(other, "hints"), "applied");
    for (int i = 0; ap != NULL && ap->type == VJ_ARR && i < ap->n; i++) {
        size_t used = strlen(t->hints), n;
        const char *v = ap->v[i].type == VJ_STR ? ap->v[i].str : NULL, *at;

        if (v == NULL || (n = strlen(v)) == 0)
            continue;
        for (at = strstr(t->hints, v); at != NULL; at = strstr(at + 1, v))
            if ((at == t->hints || at[-1] == ' ') && (at[n] == '\0' || at[n] == ';'))
                break;
        if (at == NULL && used + n + 3 < sizeof(t->hints))
            snprintf(t->hints + used, sizeof(t->hints) - used, "%s%s", used ? "; " : "", v);
    }
    if (t->pvm == 0)
        snprintf(t->job.program, sizeof(t->job.program), "%s", t->lanes[lane].program);
    t->pvm++;
    return 0;
}

/* One file into x.  0, -1 with err set (-2: out of memory). */
static int
tl_file(struct tl *x, const char *path, char *err, size_t errlen)
{
    struct vmrun_trace *t = x->t;
    FILE *fp = wire_fopen_regular(path);
    char *text = NULL, why[256];
    long len;
    struct vmrun_json root;
    const struct vmrun_json *ev, *other;
    const char *fmt;
    int rc = -1, bad = 0;

    if (fp == NULL) {
        snprintf(err, errlen, "%s: cannot read: %s", path,
                 errno == EINVAL ? "not a regular file" : strerror(errno));
        goto out;
    }
    if (fseek(fp, 0, SEEK_END) != 0 || (len = ftell(fp)) < 0 ||
        fseek(fp, 0, SEEK_SET) != 0 || (text = malloc((size_t)len + 1)) == NULL ||
        fread(text, 1, (size_t)len, fp) != (size_t)len) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto out;
    }
    if (vmrun_json_parse(text, (size_t)len, &root, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: not JSON: %s", path, why);
        goto out;
    }
    if ((ev = vmrun_json_get(&root, "traceEvents")) == NULL || ev->type != VJ_ARR) {
        snprintf(err, errlen, "%s: no traceEvents array", path);
        vmrun_json_free(&root);
        goto out;
    }
    for (int i = 0; i < ev->n && rc == -1; i++) {
        int r = tl_event(x, &ev->v[i]);

        if (r < 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -2;
        } else if (r > 0 && bad++ == 0) {
            snprintf(err, errlen, "%s: event %d lacks a field its phase needs", path, i);
        }
    }
    if (rc == -1 && bad == 0) {
        other = vmrun_json_get(&root, "otherData");
        fmt = vmrun_json_str(other, "format");
        if (fmt != NULL && strcmp(fmt, "liquidvm-pvm-trace 1") == 0) {
            int r = tl_pvm(x, other);

            if (r < 0)
                snprintf(err, errlen, "%s: out of memory", path);
            else if (r > 0)
                snprintf(err, errlen, "%s: task t%x's trace is in another file of this folder "
                                      "too (a copy?): its events would count twice",
                         path, (unsigned)vmrun_json_int(other, "tid", 0));
            else
                rc = 0;
        } else {
            tl_job(t, other);
            rc = 0;
        }
    }
    vmrun_json_free(&root);
out:
    if (fp != NULL)
        fclose(fp);
    free(text);
    return rc;
}

/* PVM traces carry wall-clock microseconds: time 0 becomes the first event. */
static void
tl_origin(struct vmrun_trace *t)
{
    double t0 = INFINITY;

    for (int i = 0; i < t->nspans; i++)
        t0 = fmin(t0, t->spans[i].t);
    for (int i = 0; i < t->nflows; i++)
        t0 = fmin(t0, fmin(t->flows[i].t0, t->flows[i].t1));
    for (int i = 0; i < t->nmarks; i++)
        t0 = fmin(t0, t->marks[i].t);
    if (!isfinite(t0))
        return;
    t->origin_us = t0 * 1e6;
    t->t_end = 0;
    for (int i = 0; i < t->nspans; i++) {
        t->spans[i].t -= t0;
        t->t_end = fmax(t->t_end, t->spans[i].t + t->spans[i].dur);
    }
    for (int i = 0; i < t->nflows; i++) {
        t->flows[i].t0 -= t0;
        t->flows[i].t1 -= t0;
        t->t_end = fmax(t->t_end, t->flows[i].t1);
    }
    for (int i = 0; i < t->nmarks; i++) {
        t->marks[i].t -= t0;
        t->t_end = fmax(t->t_end, t->marks[i].t);
    }
}

/* Pair the flows and finish t; frees x's scratch.  0, or -1 (t freed). */
static int
tl_finish(struct tl *x, int rc, const char *what, char *err, size_t errlen)
{
    struct vmrun_trace *t = x->t;

    if (rc == 0 && tl_flows(x) != 0) {
        snprintf(err, errlen, "%s: out of memory", what);
        rc = -1;
    }
    if (rc == 0 && t->pvm)
        tl_origin(t);
    free(x->s);
    free(x->f);
    if (rc != 0) {
        vmrun_tfree(t);
        return -1;
    }
    return 0;
}

int
vmrun_tload(const char *path, struct vmrun_trace *t, char *err, size_t errlen)
{
    struct tl x;

    memset(t, 0, sizeof(*t));
    memset(&x, 0, sizeof(x));
    x.t = t;
    return tl_finish(&x, tl_file(&x, path, err, errlen), path, err, errlen);
}

int
vmrun_tis_pvm(const char *path)
{
    FILE *fp = wire_fopen_regular(path);
    char buf[1024];
    size_t n;
    int yes = 0;

    if (fp == NULL)
        return 0;
    /* The format is in otherData, at the end of the file. */
    if (fseek(fp, -(long)sizeof(buf) + 1, SEEK_END) != 0)
        rewind(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    yes = strstr(buf, "\"format\":\"liquidvm-pvm-trace 1\"") != NULL;
    fclose(fp);
    return yes;
}

static int
tl_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory with the traces of several runs: tids repeat between runs,
 * so their tasks would be taken for one program's.  Names the runs. */
static int
tl_mixed(const struct tl *x, const char *dir, char *err, size_t errlen)
{
    size_t used = 0;
    int n;

    n = snprintf(err, errlen, "%s holds the traces of %s%d runs (", dir,
                 x->more ? "more than " : "", x->nruns);
    used = n > 0 ? (size_t)n : 0;
    for (int r = 0; r < x->nruns && used < errlen; r++) {
        time_t s = (time_t)(x->runs[r].t_start_us / 1e6);
        struct tm tm;
        char when[32] = "?";

        if (localtime_r(&s, &tm) != NULL)
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        n = snprintf(err + used, errlen - used, "%s%s started %s", r ? ", " : "",
                     x->runs[r].program, when);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < errlen)
        snprintf(err + used, errlen - used, "%s): give each run a folder of its own "
                 "(vmctl spawn -@ makes one; LIQUIDVM_TRACE=DIR names one)",
                 x->more ? ", ..." : "");
    return -1;
}

int
vmrun_tload_pvm_dir(const char *dir, struct vmrun_trace *t, char *err, size_t errlen)
{
    DIR *d;
    struct dirent *e;
    char **names = NULL, path[4200];
    int n = 0, cap = 0, rc = 0;
    struct tl x;

    memset(t, 0, sizeof(*t));
    memset(&x, 0, sizeof(x));
    x.t = t;
    if ((d = opendir(dir)) == NULL) {
        snprintf(err, errlen, "%s: cannot list: %s", dir, strerror(errno));
        return -1;
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);

        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (grow((void **)&names, n, &cap, sizeof(*names)) != 0 ||
            (names[n] = strdup(e->d_name)) == NULL) {
            snprintf(err, errlen, "%s: out of memory", dir);
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, (size_t)n, sizeof(*names), tl_name_cmp);
    for (int i = 0; rc == 0 && i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (vmrun_tis_pvm(path))
            rc = tl_file(&x, path, err, errlen);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc == 0 && t->pvm == 0) {
        snprintf(err, errlen, "%s: no PVM task trace in it (LIQUIDVM_TRACE=%s)", dir, dir);
        rc = -1;
    }
    if (rc == 0 && x.nruns > 1)
        rc = tl_mixed(&x, dir, err, errlen);
    return tl_finish(&x, rc, dir, err, errlen);
}

void
vmrun_tfree(struct vmrun_trace *t)
{
    free(t->hosts);
    free(t->lanes);
    free(t->spans);
    free(t->flows);
    free(t->marks);
    memset(t, 0, sizeof(*t));
}
