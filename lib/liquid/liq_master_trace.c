/*
 * liq_master_trace.c - a stencil job's trace on the master's side (issue
 * 27; seed 003, Paradise's tracing; liq.h, "traces", says what a worker
 * records): the hosts' clocks measured against the master's before the
 * job, the workers' traces gathered at its end, and the one file written,
 * in Chrome's Trace Event JSON (the Perfetto UI and chrome://tracing open
 * it): a process per host, a thread per task, "X" spans, "i" instants, a
 * message as an "s"/"f" flow pair sharing an id, "M" names, and the
 * clocks, the job's settings and what was dropped under "otherData".
 *
 * Message ends are paired here, not on the workers: messages between two
 * tasks keep their order, so the k-th send from A to B with a tag is the
 * k-th receipt by B from A with that tag.
 */
#include "liq_master.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "wire.h"

int
liq_mt_start(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liq_mtrace *mt = &st->tr;
    double *best;
    int dtid;

    if (o->trace[0] == '\0')
        return 0;
    mt->on = 1;
    mt->t0 = liq_vm_now();
    mt->mtid = vm->mytid;
    dtid = pvm_tidtohost(vm->mytid);
    for (int h = 0; h < vm->nhosts; h++)
        if (vm->host[h].dtid == dtid)
            mt->mhost = h;
    mt->offset = calloc((size_t)vm->nhosts, sizeof(double));
    mt->residual = malloc((size_t)vm->nhosts * sizeof(double));
    best = malloc((size_t)vm->nhosts * sizeof(double));
    if (mt->offset == NULL || mt->residual == NULL || best == NULL ||
        liq_trace_init(&mt->mine, 65536) != 0) {
        free(best);
        snprintf(vm->why, sizeof(vm->why), "out of memory for the trace");
        return -1;
    }
    for (int h = 0; h < vm->nhosts; h++) {
        mt->residual[h] = -1;
        best[h] = INFINITY;
    }
    /* A worker's clock at the moment it answers lies within half the
     * round trip of the middle of it; the shortest round trip of a few
     * bounds that best (a ping queued behind another message is slow). */
    for (int w = 0; w < vm->nworkers; w++) {
        int h = vm->whost[w];

        for (int k = 0; vm->tids[w] != 0 && k < LIQ_MT_PINGS; k++) {
            int tag, src;
            double t0 = liq_vm_now(), tw = 0, t1;

            pvm_initsend(PvmDataDefault);
            if (pvm_send(vm->tids[w], LIQ_TAG_TSYNC) < 0 || liq_vm_next(vm, &tag, &src) < 0 ||
                tag != LIQ_TAG_TSYNCED || src != vm->tids[w] || pvm_upkdouble(&tw, 1, 1) < 0) {
                if (vm->why[0] == '\0')
                    snprintf(vm->why, sizeof(vm->why),
                             "worker t%x did not answer the trace's clock ping",
                             (unsigned)vm->tids[w]);
                free(best);
                return -1;
            }
            t1 = liq_vm_now();
            if (t1 - t0 < best[h]) {
                best[h] = t1 - t0;
                mt->offset[h] = tw - (t0 + t1) / 2;
                mt->residual[h] = (t1 - t0) / 2;
            }
        }
    }
    free(best);
    liq_trace_rec(&mt->mine, LIQ_TEV_SYNC, mt->t0, liq_vm_now(), 0, 0, 0, 0, 0);
    return 0;
}

int
liq_mt_expect(struct liq_vm *vm, struct liq_stats *st, int w)
{
    struct liq_mtrace *mt = &st->tr;

    if (!mt->on)
        return 0;
    if (mt->nw == mt->capw) {
        int c = mt->capw ? 2 * mt->capw : 16;
        struct liq_mtrace_worker *x = realloc(mt->w, (size_t)c * sizeof(*x));

        if (x == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the trace");
            return -1;
        }
        mt->w = x;
        mt->capw = c;
    }
    memset(&mt->w[mt->nw], 0, sizeof(mt->w[0]));
    mt->w[mt->nw].tid = vm->tids[w];
    mt->w[mt->nw].host = vm->whost[w];
    mt->nw++;
    mt->due++;
    return 0;
}

int
liq_mt_take(struct liq_vm *vm, struct liq_stats *st, int src)
{
    struct liq_mtrace *mt = &st->tr;
    struct liq_mtrace_worker *x = NULL;
    int hdr[3], bytes, tag, tid;
    double *tv = NULL;
    int *iv = NULL;

    for (int i = 0; i < mt->nw; i++)
        if (mt->w[i].tid == src && !mt->w[i].done)
            x = &mt->w[i];
    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &tid);
    if (x == NULL || pvm_upkint(hdr, 3, 1) < 0 || hdr[0] < 0 || hdr[2] < 0 ||
        (size_t)bytes != 3 * sizeof(int) + (size_t)hdr[0] * (2 * sizeof(double) + 6 * sizeof(int)))
        goto bad;
    if (x->tr.n + hdr[0] > x->tr.cap) {
        int c = x->tr.n + hdr[0];
        struct liq_tev *e = realloc(x->tr.ev, (size_t)(c > 0 ? c : 1) * sizeof(*e));

        if (e == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for worker t%x's trace",
                     (unsigned)src);
            return -1;
        }
        x->tr.ev = e;
        x->tr.cap = c;
    }
    if ((tv = malloc((size_t)(hdr[0] + 1) * 2 * sizeof(double))) == NULL ||
        (iv = malloc((size_t)(hdr[0] + 1) * 6 * sizeof(int))) == NULL ||
        pvm_upkdouble(tv, 2 * hdr[0], 1) < 0 || pvm_upkint(iv, 6 * hdr[0], 1) < 0) {
        free(tv);
        free(iv);
        goto bad;
    }
    for (int i = 0; i < hdr[0]; i++) {
        struct liq_tev *e = &x->tr.ev[x->tr.n++];

        e->t0 = tv[2 * i];
        e->t1 = tv[2 * i + 1];
        e->kind = iv[6 * i];
        e->a = iv[6 * i + 1];
        e->b = iv[6 * i + 2];
        e->c = iv[6 * i + 3];
        e->d = iv[6 * i + 4];
        e->e = iv[6 * i + 5];
    }
    free(tv);
    free(iv);
    x->tr.dropped = x->dropped0 + hdr[2];
    if (hdr[1]) {
        x->done = 1;
        mt->due--;
    }
    return 0;
bad:
    snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed trace message",
             (unsigned)src);
    return -1;
}

void
liq_mt_reopen(struct liq_stats *st, int tid)
{
    struct liq_mtrace *mt = &st->tr;

    for (int i = 0; i < mt->nw; i++)
        if (mt->w[i].tid == tid && mt->w[i].done) {
            mt->w[i].done = 0;
            mt->w[i].dropped0 = mt->w[i].tr.dropped;
            mt->due++;
        }
}

void
liq_mt_free(struct liq_stats *st)
{
    struct liq_mtrace *mt = &st->tr;

    for (int i = 0; i < mt->nw; i++)
        liq_trace_free(&mt->w[i].tr);
    free(mt->w);
    free(mt->offset);
    free(mt->residual);
    liq_trace_free(&mt->mine);
    memset(mt, 0, sizeof(*mt));
}

/* ---- the file ---- */

/* One end of a message: sorted by (src, dst, tag, order) to pair them. */
struct mt_end {
    int src, dst, tag, seq;
    int w, i;                   /* the trace (mt->nw: the master's) and event */
};

static int
mt_end_cmp(const void *pa, const void *pb)
{
    const struct mt_end *a = pa, *b = pb;

    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The message ends of every worker's trace, sends (recv = 0) or receipts,
 * numbered in their order per (src, dst, tag).  Returns how many, -1 out
 * of memory. */
static int
mt_ends(const struct liq_mtrace *mt, int recv, struct mt_end **out)
{
    int n = 0, k = 0;
    struct mt_end *v;

    for (int w = 0; w < mt->nw; w++)
        for (int i = 0; i < mt->w[w].tr.n; i++)
            n += mt->w[w].tr.ev[i].kind == (recv ? LIQ_TEV_RECV : LIQ_TEV_SEND);
    if ((v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v))) == NULL)
        return -1;
    for (int w = 0; w < mt->nw; w++)
        for (int i = 0; i < mt->w[w].tr.n; i++) {
            const struct liq_tev *e = &mt->w[w].tr.ev[i];

            if (e->kind != (recv ? LIQ_TEV_RECV : LIQ_TEV_SEND))
                continue;
            v[k].src = recv ? e->a : mt->w[w].tid;
            v[k].dst = recv ? mt->w[w].tid : e->a;
            v[k].tag = e->b;
            v[k].seq = k; /* the event order, for now */
            v[k].w = w;
            v[k].i = i;
            k++;
        }
    if (n > 1)
        qsort(v, (size_t)n, sizeof(*v), mt_end_cmp);
    for (int j = 0, s = 0; j < n; j++) {
        s = j > 0 && v[j].src == v[j - 1].src && v[j].dst == v[j - 1].dst &&
                    v[j].tag == v[j - 1].tag ? s + 1 : 0;
        v[j].seq = s;
    }
    *out = v;
    return n;
}

static const char *
mt_msg_name(int tag)
{
    return tag == LIQ_TAG_MOVE ? "move" : tag == LIQ_TAG_RGHOST ? "reduction ghosts" : "ghosts";
}

struct mt_out {
    FILE *fp;
    const struct liq_vm *vm;
    const struct liq_mtrace *mt;
    int first;
};

/* An event's head: phase, name, category, process, thread, time (µs). */
static void
mt_head(struct mt_out *m, const char *ph, const char *name, const char *cat, int host, int tid,
        double t)
{
    fprintf(m->fp, "%s\n{\"ph\":\"%s\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,"
                   "\"ts\":%.3f",
            m->first ? "" : ",", ph, name, cat, host + 1, tid, (t - m->mt->t0) * 1e6);
    m->first = 0;
}

static void
mt_worker_event(struct mt_out *m, const struct liq_mtrace_worker *x, const struct liq_tev *e,
                int flow)
{
    static const char *const part[] = { "whole", "inner", "outer" };
    double off = m->mt->offset[x->host], t0 = e->t0 - off, t1 = e->t1 - off;
    char name[64];
    FILE *fp = m->fp;

    switch (e->kind) {
    case LIQ_TEV_COMPUTE:
        mt_head(m, "X", "compute", "compute", x->host, x->tid, t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"first_quantum\":%d,\"quanta\":%d,\"iters\":%d,"
                    "\"part\":\"%s\",\"heavy\":%d}}",
                (t1 - t0) * 1e6, e->a, e->b, e->c, part[e->d >= 0 && e->d <= 2 ? e->d : 0],
                e->e);
        break;
    case LIQ_TEV_SEND:
        snprintf(name, sizeof(name), "send %s", mt_msg_name(e->b));
        mt_head(m, "X", name, "send", x->host, x->tid, t0);
        fprintf(fp, ",\"dur\":0,\"args\":{\"peer\":%d,\"tag\":%d,\"bytes\":%d,\"quantum\":%d}}",
                e->a, e->b, e->c, e->d);
        if (flow >= 0) {
            mt_head(m, "s", mt_msg_name(e->b), "msg", x->host, x->tid, t0);
            fprintf(fp, ",\"id\":%d,\"args\":{\"to\":%d,\"tag\":%d,\"bytes\":%d}}", flow, e->a,
                    e->b, e->c);
        }
        break;
    case LIQ_TEV_RECV:
        snprintf(name, sizeof(name), "wait %s", mt_msg_name(e->b));
        mt_head(m, "X", name, "wait", x->host, x->tid, t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"peer\":%d,\"tag\":%d,\"bytes\":%d,\"quantum\":%d}}",
                (t1 - t0) * 1e6, e->a, e->b, e->c, e->d);
        if (flow >= 0) {
            mt_head(m, "f", mt_msg_name(e->b), "msg", x->host, x->tid, t1);
            fprintf(fp, ",\"bp\":\"e\",\"id\":%d,\"args\":{\"from\":%d,\"tag\":%d,\"bytes\":%d}}",
                    flow, e->a, e->b, e->c);
        }
        break;
    case LIQ_TEV_WAIT:
        mt_head(m, "X", e->b == LIQ_TAG_PLAN ? "wait plan" : "wait verdict", "wait", x->host,
                x->tid, t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"at\":%d}}", (t1 - t0) * 1e6, e->c);
        break;
    case LIQ_TEV_EPOCH:
        mt_head(m, "i", "epoch", "epoch", x->host, x->tid, t0);
        fprintf(fp, ",\"s\":\"t\",\"args\":{\"epoch\":%d,\"iteration\":%d}}", e->a, e->c);
        break;
    case LIQ_TEV_MIGRATE:
        mt_head(m, "X", "migrate", "move", x->host, x->tid, t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"boundary\":%d,\"quanta_change\":%d}}",
                (t1 - t0) * 1e6, e->a, e->c);
        break;
    default:
        break;
    }
}

static void
mt_master_event(struct mt_out *m, int host, const struct liq_tev *e)
{
    const struct liq_vm *vm = m->vm;
    const struct liq_mtrace *mt = m->mt;
    FILE *fp = m->fp;

    switch (e->kind) {
    case LIQ_TEV_PLAN:
        mt_head(m, "X", "plan", "epoch", host, mt->mtid, e->t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"epoch\":%d,\"applied\":%d,\"moved\":%d,"
                    "\"be\":%.3f,\"forced\":%d}}",
                (e->t1 - e->t0) * 1e6, e->a, e->b, e->c, e->d / 1000.0, e->e);
        break;
    case LIQ_TEV_RECLAIM:
        mt_head(m, "i", e->b ? "rejoin" : "evacuate", "reclaim", host, mt->mtid, e->t0);
        fprintf(fp, ",\"s\":\"g\",\"args\":{\"host\":");
        wire_json_str(fp, e->a >= 0 && e->a < vm->nhosts ? vm->host[e->a].name : "?");
        fprintf(fp, ",\"epoch\":%d}}", e->c);
        break;
    case LIQ_TEV_REDUCE:
        mt_head(m, "i", "verdict", "reduce", host, mt->mtid, e->t0);
        fprintf(fp, ",\"s\":\"t\",\"args\":{\"iteration\":%d,\"stop\":%d}}", e->a, e->b);
        break;
    case LIQ_TEV_SYNC:
        mt_head(m, "X", "clock sync", "sync", host, mt->mtid, e->t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"pings\":%d}}", (e->t1 - e->t0) * 1e6,
                LIQ_MT_PINGS);
        break;
    case LIQ_TEV_LOST:
        mt_head(m, "i", "lost", "failure", host, mt->mtid, e->t0);
        fprintf(fp, ",\"s\":\"g\",\"args\":{\"worker\":%d,\"host\":", e->a);
        wire_json_str(fp, e->b >= 0 && e->b < vm->nhosts ? vm->host[e->b].name : "?");
        fprintf(fp, ",\"reached\":%d,\"during_recovery\":%d}}", e->c, e->d);
        break;
    case LIQ_TEV_RECOVER:
        mt_head(m, "X", "recovery", "failure", host, mt->mtid, e->t0);
        fprintf(fp, ",\"dur\":%.3f,\"args\":{\"back_to\":%d,\"generation\":%d,"
                    "\"replaced\":%d}}",
                (e->t1 - e->t0) * 1e6, e->a, e->b, e->c);
        break;
    default:
        break;
    }
}

/* The names: a process per host, a thread per task. */
static void
mt_names(struct mt_out *m, int mhost)
{
    const struct liq_vm *vm = m->vm;
    const struct liq_mtrace *mt = m->mt;
    FILE *fp = m->fp;

    for (int h = 0; h < vm->nhosts; h++) {
        mt_head(m, "M", "process_name", "__metadata", h, 0, mt->t0);
        fprintf(fp, ",\"args\":{\"name\":");
        wire_json_str(fp, vm->host[h].name);
        fprintf(fp, "}}");
        mt_head(m, "M", "process_labels", "__metadata", h, 0, mt->t0);
        if (mt->residual[h] >= 0)
            fprintf(fp, ",\"args\":{\"labels\":\"clock offset %.1f us, +/- %.1f us\"}}",
                    mt->offset[h] * 1e6, mt->residual[h] * 1e6);
        else
            fprintf(fp, ",\"args\":{\"labels\":\"clock not measured\"}}");
        mt_head(m, "M", "process_sort_index", "__metadata", h, 0, mt->t0);
        fprintf(fp, ",\"args\":{\"sort_index\":%d}}", h + 1);
    }
    mt_head(m, "M", "thread_name", "__metadata", mhost, mt->mtid, mt->t0);
    fprintf(fp, ",\"args\":{\"name\":\"master t%x\"}}", (unsigned)mt->mtid);
    mt_head(m, "M", "thread_sort_index", "__metadata", mhost, mt->mtid, mt->t0);
    fprintf(fp, ",\"args\":{\"sort_index\":0}}");
    for (int i = 0; i < mt->nw; i++) {
        mt_head(m, "M", "thread_name", "__metadata", mt->w[i].host, mt->w[i].tid, mt->t0);
        fprintf(fp, ",\"args\":{\"name\":\"worker t%x\"}}", (unsigned)mt->w[i].tid);
        mt_head(m, "M", "thread_sort_index", "__metadata", mt->w[i].host, mt->w[i].tid, mt->t0);
        fprintf(fp, ",\"args\":{\"sort_index\":%d}}", i + 1);
    }
}

/* "otherData": the clocks, the job's settings, what was dropped. */
static void
mt_other(struct mt_out *m, const struct liq_opts *o, const struct liq_stats *st, int mhost,
         int unsent, int unreceived, long events)
{
    const struct liq_vm *vm = m->vm;
    const struct liq_mtrace *mt = m->mt;
    FILE *fp = m->fp;
    double worst = 0;
    long dropped = mt->mine.dropped;

    for (int i = 0; i < mt->nw; i++)
        dropped += mt->w[i].tr.dropped;
    for (int h = 0; h < vm->nhosts; h++)
        if (mt->residual[h] > worst)
            worst = mt->residual[h];
    fprintf(fp, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"format\":\"liquidvm-trace 1\","
                "\"program\":");
    wire_json_str(fp, vm->prog->name);
    fprintf(fp, ",\"master\":{\"tid\":%d,\"host\":%d},\"clock\":{\"source\":\"CLOCK_MONOTONIC\","
                "\"pings\":%d,\"residual_us\":%.3f,\"hosts\":[",
            mt->mtid, mhost, LIQ_MT_PINGS, worst * 1e6);
    for (int h = 0; h < vm->nhosts; h++) {
        fprintf(fp, "%s{\"name\":", h ? "," : "");
        wire_json_str(fp, vm->host[h].name);
        fprintf(fp, ",\"offset_us\":%.3f,\"residual_us\":%.3f}", mt->offset[h] * 1e6,
                mt->residual[h] >= 0 ? mt->residual[h] * 1e6 : -1.0);
    }
    fprintf(fp, "]},\"job\":{\"grid\":[%d,%d,%d],\"iters\":%d,\"kernel\":\"%s\","
                "\"quanta\":%d,\"tasks_per_host\":%d,\"hosts\":%d,\"workers\":%d,"
                "\"nquanta\":%d,\"halo\":%d,\"halo_auto\":%s,\"halo_slack\":%d,"
                "\"balance\":%s,\"epoch\":%d,"
                "\"min_gain\":%.6g,\"heavy\":%d,\"reclaim\":%s,\"reclaim_below\":%.6g,"
                "\"decomp\":\"%s\",\"decomp_asked\":%s,\"iters_done\":%d},",
            st->g.n[0], st->g.n[1], st->g.n[2], o->iters, liq_kernel_name(o), o->quanta,
            o->tasks_per_host, vm->nhosts, vm->nworkers, st->g.nquanta, st->halo,
            o->halo == 0 ? "true" : "false", st->halo_slack, o->balance ? "true" : "false", o->epoch, o->min_gain,
            o->heavy, o->reclaim ? "true" : "false", o->reclaim_below,
            decomp_method_name(st->method), o->decomp >= 0 ? "true" : "false", st->iters_done);
    fprintf(fp, "\"hints\":");
    if (o->hints[0] != '\0')
        wire_json_str(fp, o->hints);
    else
        fprintf(fp, "null");
    fprintf(fp, ",\"events\":%ld,\"dropped\":%ld,\"capacity\":%d,\"unpaired_sends\":%d,"
                "\"unpaired_receipts\":%d}}\n",
            events, dropped, LIQ_TRACE_EVENTS, unsent, unreceived);
}

int
liq_mt_write(const char *path, const struct liq_vm *vm, const struct liq_opts *o,
             const struct liq_stats *st)
{
    const struct liq_mtrace *mt = &st->tr;
    struct mt_end *snd = NULL, *rcv = NULL;
    int **flow = calloc((size_t)(mt->nw > 0 ? mt->nw : 1), sizeof(int *));
    int ns, nr, nflow = 0, unsent = 0, unreceived = 0, mhost = mt->mhost, rc = -1;
    long events = mt->mine.n;
    struct mt_out m = { NULL, vm, mt, 1 };

    if (flow == NULL || (ns = mt_ends(mt, 0, &snd)) < 0 || (nr = mt_ends(mt, 1, &rcv)) < 0) {
        errno = ENOMEM;
        goto out;
    }
    for (int w = 0; w < mt->nw; w++) {
        events += mt->w[w].tr.n;
        if ((flow[w] = malloc((size_t)(mt->w[w].tr.n + 1) * sizeof(int))) == NULL) {
            errno = ENOMEM;
            goto out;
        }
        for (int i = 0; i < mt->w[w].tr.n; i++)
            flow[w][i] = -1;
    }
    /* Both lists are sorted by (src, dst, tag, order): merge them. */
    for (int a = 0, b = 0; a < ns || b < nr;) {
        int c = a >= ns ? 1 : b >= nr ? -1 : mt_end_cmp(&snd[a], &rcv[b]);

        if (c == 0) {
            flow[snd[a].w][snd[a].i] = flow[rcv[b].w][rcv[b].i] = nflow++;
            a++;
            b++;
        } else if (c < 0) {
            unsent++, a++;
        } else {
            unreceived++, b++;
        }
    }
    if ((m.fp = fopen(path, "w")) == NULL)
        goto out;
    fprintf(m.fp, "{\"traceEvents\":[");
    mt_names(&m, mhost);
    for (int i = 0; i < mt->mine.n; i++)
        mt_master_event(&m, mhost, &mt->mine.ev[i]);
    for (int w = 0; w < mt->nw; w++)
        for (int i = 0; i < mt->w[w].tr.n; i++)
            mt_worker_event(&m, &mt->w[w], &mt->w[w].tr.ev[i], flow[w][i]);
    mt_other(&m, o, st, mhost, unsent, unreceived, events);
    rc = ferror(m.fp) ? -1 : 0;
    if (fclose(m.fp) != 0)
        rc = -1;
out:
    for (int w = 0; flow != NULL && w < mt->nw; w++)
        free(flow[w]);
    free(flow);
    free(snd);
    free(rcv);
    return rc;
}
