/*
 * vmrun_tload.c - a stencil job's trace read back into lanes, spans,
 * messages and marks (vmrun_trace.h; issue 27).  It checks what the
 * Trace Event format asks of each phase (ph, pid, tid and ts on all; dur
 * on "X"; id on "s" and "f"; args.name on "M") and pairs flow starts and
 * finishes by id; the names and args it reads are liq_master_trace.c's.
 */
#include "vmrun_trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    struct tl_end { int id, lane; double t, bytes; int tag; } *s, *f;
    int ns, nf, capsn, capfn;
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
tl_kind(const char *name)
{
    static const struct { const char *name; enum vmrun_tkind k; } map[] = {
        { "compute", VT_COMPUTE }, { "wait ghosts", VT_WAIT_GHOST },
        { "wait reduction ghosts", VT_WAIT_GHOST }, { "wait move", VT_WAIT_MOVE },
        { "wait plan", VT_WAIT_PLAN }, { "wait verdict", VT_WAIT_VERDICT },
        { "migrate", VT_MIGRATE }, { "plan", VT_PLAN }, { "clock sync", VT_SYNC },
    };

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(name, map[i].name) == 0)
            return map[i].k;
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
        s->kind = tl_kind(name);
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
        if (ts + dur > t->t_end)
            t->t_end = ts + dur;
        return 0;
    }
    if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
        const struct vmrun_json *id = vmrun_json_get(e, "id");
        int fin = ph[0] == 'f';
        struct tl_end *v;

        if (id == NULL || id->type != VJ_NUM)
            return 1;
        if (grow((void **)(fin ? &x->f : &x->s), fin ? x->nf : x->ns, fin ? &x->capfn : &x->capsn,
                 sizeof(struct tl_end)) != 0)
            return -1;
        v = fin ? &x->f[x->nf++] : &x->s[x->ns++];
        v->id = vmrun_json_clamp(id->num, -1);
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
    int x = ((const struct tl_end *)a)->id, y = ((const struct tl_end *)b)->id;

    return x < y ? -1 : x > y;
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

int
vmrun_tload(const char *path, struct vmrun_trace *t, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    char *text = NULL, why[256];
    long len;
    struct vmrun_json root;
    const struct vmrun_json *ev;
    struct tl x;
    int rc = -1, bad = 0;

    memset(t, 0, sizeof(*t));
    memset(&x, 0, sizeof(x));
    x.t = t;
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (len = ftell(fp)) < 0 ||
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
        int r = tl_event(&x, &ev->v[i]);

        if (r < 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -2;
        } else if (r > 0 && bad++ == 0) {
            snprintf(err, errlen, "%s: event %d lacks a field its phase needs", path, i);
        }
    }
    if (rc == -1 && bad == 0) {
        tl_job(t, vmrun_json_get(&root, "otherData"));
        if (tl_flows(&x) != 0)
            snprintf(err, errlen, "%s: out of memory", path);
        else
            rc = 0;
    }
    vmrun_json_free(&root);
out:
    if (fp != NULL)
        fclose(fp);
    free(text);
    free(x.s);
    free(x.f);
    if (rc != 0) {
        vmrun_tfree(t);
        return -1;
    }
    return 0;
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
