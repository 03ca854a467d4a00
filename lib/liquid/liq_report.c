/*
 * liq_report.c - what a worker tells its master (steps 5 and 8 of the
 * liquid runtime): progress after every block, each epoch's report that
 * the balancer weighs the quanta by (issue 8: the median of each
 * quantum's CPU time per iteration, seed 000's unit of timing), the
 * totals when it leaves an evacuated host (seed 002's reclaim), and at
 * the end its figures, its checksum and, when asked, the final field.
 * The message layouts are liq.h's ("the worker").
 */
#include "liq_int.h"

#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

int
liq_report_progress(struct liq_worker *w, int iter, double compute, double comm)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&iter, 1, 1);
    pvm_pkdouble(&compute, 1, 1);
    pvm_pkdouble(&comm, 1, 1);
    if (pvm_send(w->master, LIQ_TAG_PROGRESS) < 0) {
        liq_fail(w, "progress could not be sent to the master");
        return -1;
    }
    return 0;
}

/* The end of an epoch: the median of each quantum's times, and the
 * worker's speed now (its mean compute time per iteration). */
int
liq_report_epoch(struct liq_worker *w, int epoch)
{
    double *t = malloc((size_t)w->epoch * sizeof(double)), recent = 0;

    if (t == NULL) {
        liq_fail(w, "epoch: out of memory");
        return -1;
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&epoch, 1, 1);
    pvm_pkint(&w->nq, 1, 1);
    for (int i = 0; i < w->nq; i++) {
        double med;

        memcpy(t, w->q[i].hist, (size_t)w->epoch * sizeof(double));
        med = liq_median(t, (size_t)w->epoch);
        pvm_pkint(&w->q[i].id, 1, 1);
        pvm_pkdouble(&med, 1, 1);
    }
    free(t);
    for (int k = 0; k < w->epoch; k++)
        recent += w->ctime[k] / w->epoch;
    pvm_pkdouble(&recent, 1, 1);
    pvm_pkdouble(&w->last_move, 1, 1);
    w->last_move = 0;
    /* The share of a CPU this worker spent outside its kernels since the
     * last report (messages, copies, TLS), for the report's
     * other_cpu_share; the balancer does not model it (liq_balance.c). */
    double now = liq_now(), cpu = liq_process_cpu(), other = 0;

    if (now > w->ep_t)
        other = ((cpu - w->ep_cpu) - (w->compute_cpu - w->ep_kcpu)) / (now - w->ep_t);
    if (!(other >= 0))
        other = 0;
    pvm_pkdouble(&other, 1, 1);
    /* What its checkpoints cost so far: the master spaces them by it. */
    pvm_pkdouble(&w->ck_seconds, 1, 1);
    pvm_pkint(&w->ck_taken, 1, 1);
    w->ep_t = now;
    w->ep_cpu = cpu;
    w->ep_kcpu = w->compute_cpu;
    if (pvm_send(w->master, LIQ_TAG_EPOCH) < 0) {
        liq_fail(w, "epoch %d: the report could not be sent", epoch);
        return -1;
    }
    return 0;
}

/* Evacuated: the totals, then this worker leaves. */
void
liq_report_left(struct liq_worker *w, int iters_done)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&w->compute_all, 1, 1);
    pvm_pkdouble(&w->comm_all, 1, 1);
    pvm_pkint(&iters_done, 1, 1);
    pvm_pkdouble(&w->last_move, 1, 1);
    pvm_send(w->master, LIQ_TAG_LEFT);
}

uint64_t
liq_quantum_checksum(const struct liq_worker *w, const struct liq_quantum *q)
{
    int nf = w->user != NULL ? w->user->nf : 1;
    uint64_t sum = 0;

    /* Each field weighed by an odd number: fields that trade values show.
     * A constant field tells nothing of the run. */
    for (int f = 0; f < nf; f++) {
        struct kern_box own;

        if (w->user != NULL && w->user->f[f].konst)
            continue;
        liq_quantum_field(w, q, f, &own);
        sum += liq_field_checksum(&own) * (uint64_t)(2 * f + 1);
    }
    return sum;
}

/* The job is done: its times, the checksum of the quanta it holds, and
 * each quantum's compute seconds.  t_start: when the job came. */
/* The process's peak resident memory (VmHWM), in bytes; 0 if unknown. */
static double
peak_rss(void)
{
    char line[256];
    double kb = 0;
    FILE *fp = fopen("/proc/self/status", "r");

    if (fp == NULL)
        return 0;
    while (fgets(line, sizeof(line), fp) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtod(line + 6, NULL);
            break;
        }
    fclose(fp);
    return kb >= 0 ? kb * 1024 : 0;
}

double
liq_held_bytes(const struct liq_worker *w)
{
    double sum = 0;

    for (int i = 0; i < w->nrg; i++) {
        const struct liq_region *r = w->rg[i];

        sum += (double)r->a.map_len + (double)r->b.map_len + (double)r->rhs.map_len;
        if (w->user != NULL && r->u.box != NULL)
            for (int x = 0; x < r->u.nlev * r->u.nf; x++)
                sum += (double)r->u.box[x].map_len;
    }
    return sum;
}

int
liq_report_done(struct liq_worker *w, double t_start, double t_setup)
{
    uint64_t sum = 0;

    for (int i = 0; i < w->nq; i++)
        sum += liq_quantum_checksum(w, &w->q[i]);

    double run = liq_now() - t_start - t_setup;
    unsigned cs[2] = { (unsigned)sum, (unsigned)(sum >> 32) };

    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&t_setup, 1, 1);
    pvm_pkdouble(&run, 1, 1);
    pvm_pkdouble(&w->compute_all, 1, 1);
    pvm_pkdouble(&w->comm_all, 1, 1);
    pvm_pkuint(cs, 2, 1);
    pvm_pkint(&w->nq, 1, 1);
    for (int i = 0; i < w->nq; i++) {
        pvm_pkint(&w->q[i].id, 1, 1);
        pvm_pkdouble(&w->q[i].seconds, 1, 1);
    }
    pvm_pkdouble(&w->last_move, 1, 1);
    /* CPU in the kernels and in the whole process since the job came
     * (setup, messages, TLS, packing; not the probes before it); wall
     * time blocked for ghosts and for plans; bytes of ghosts received;
     * peak resident memory, and the regions' bytes now and at most
     * (LIQ_WCPU). */
    double fig[] = { w->compute_cpu, liq_process_cpu() - w->cpu0, w->overlap_cpu,
                     w->ghost_wait, w->plan_wait, w->ghost_bytes, peak_rss(), liq_held_bytes(w),
                     w->held_peak };

    pvm_pkdouble(fig, (int)(sizeof(fig) / sizeof(fig[0])), 1);
    /* Checkpoints (liq_ckpt.c): wall s and bytes sent, every generation. */
    double ck[2] = { w->ck_seconds, w->ck_bytes };

    pvm_pkdouble(ck, 2, 1);
    return pvm_send(w->master, LIQ_TAG_DONE) < 0 ? -1 : 0;
}

/* The final fields, quantum by quantum, in slabs of planes. */
int
liq_report_field(struct liq_worker *w)
{
    int nf = w->user != NULL ? w->user->nf : 1;

    for (int x = 0; x < w->nq * nf; x++) {
        struct kern_box own, *b = &own;
        size_t plane;
        int per, i = x / nf, f = x % nf;
        double *buf;

        liq_quantum_field(w, &w->q[i], f, &own);
        plane = (size_t)b->ni * (size_t)b->nj;
        per = (int)(LIQ_FIELD_CHUNK / sizeof(double) / plane);
        if (per < 1)
            per = 1;
        if ((buf = malloc((size_t)per * plane * sizeof(double))) == NULL) {
            liq_fail(w, "field: out of memory");
            return -1;
        }
        for (int k0 = 1; k0 <= b->nk; k0 += per) {
            int k1 = k0 + per - 1 < b->nk ? k0 + per - 1 : b->nk;
            int hdr[4] = { w->q[i].id, k0, k1, f };
            size_t n = 0;

            for (int k = k0; k <= k1; k++)
                for (int j = 1; j <= b->nj; j++, n += (size_t)b->ni)
                    memcpy(buf + n, kern_at(b, 1, j, k), (size_t)b->ni * sizeof(double));
            pvm_initsend(PvmDataRaw);
            pvm_pkint(hdr, 4, 1);
            pvm_pkdouble(buf, (int)n, 1);
            if (pvm_send(w->master, LIQ_TAG_FIELD) < 0) {
                free(buf);
                liq_fail(w, "field: send failed");
                return -1;
            }
        }
        free(buf);
    }
    return 0;
}

/* The trace, chunk by chunk (liq.h, "traces"): count, last, dropped, then
 * the times of every event and their six ints.  An empty trace is one
 * chunk of no events, so the master always hears the last one. */
int
liq_report_trace(struct liq_worker *w)
{
    const struct liq_trace *t = &w->tr;
    int per = (int)(LIQ_FIELD_CHUNK / (2 * sizeof(double) + 6 * sizeof(int32_t))), rc = 0;
    double *tv = malloc((size_t)per * 2 * sizeof(double));
    int *iv = malloc((size_t)per * 6 * sizeof(int));

    if (tv == NULL || iv == NULL) {
        liq_fail(w, "trace: out of memory");
        rc = -1;
        goto out;
    }
    for (int i0 = 0; rc == 0 && (i0 < t->n || i0 == 0); i0 += per) {
        int n = t->n - i0 < per ? t->n - i0 : per;
        int hdr[3] = { n, i0 + n >= t->n, t->dropped };

        for (int i = 0; i < n; i++) {
            const struct liq_tev *v = &t->ev[i0 + i];

            tv[2 * i] = v->t0;
            tv[2 * i + 1] = v->t1;
            iv[6 * i] = v->kind;
            iv[6 * i + 1] = v->a;
            iv[6 * i + 2] = v->b;
            iv[6 * i + 3] = v->c;
            iv[6 * i + 4] = v->d;
            iv[6 * i + 5] = v->e;
        }
        pvm_initsend(PvmDataDefault);
        pvm_pkint(hdr, 3, 1);
        pvm_pkdouble(tv, 2 * n, 1);
        pvm_pkint(iv, 6 * n, 1);
        if (pvm_send(w->master, LIQ_TAG_TRACE) < 0) {
            liq_fail(w, "trace: send failed");
            rc = -1;
        }
    }
out:
    free(tv);
    free(iv);
    liq_trace_free(&w->tr);
    return rc;
}
