/*
 * liq_job.c - a worker's job (step 4 of the liquid runtime): it reads the
 * JOB message, builds its regions, quanta and links, and runs the
 * iterations in blocks, each block one exchange of ghosts and one call of
 * the kernel per region (seed 000's deep halos and temporal blocking),
 * with an epoch report and the master's plan at epoch boundaries (issue
 * 8's balancing; seed 002's reclaim ends the job of an evacuated worker).
 * The exchange, the sweeps, migration and the reports have their own
 * files (liq_int.h lists them).
 */
#include "liq_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

void
liq_job_free(struct liq_worker *w)
{
    liq_quanta_free(w->q, w->nq);
    liq_regions_free(w->rg, w->nrg);
    liq_exchange_free(w);
    free(w->all);
    free(w->region_of);
    free(w->rlocal);
    free(w->owner);
    free(w->tids);
    free(w->ctime);
    free(w->whost);
    /* A job given up for a recovery goes on from a checkpoint: its trace
     * keeps what came before (the next JOB, a restore, records on). */
    if (w->rec_gen == 0)
        liq_trace_free(&w->tr);
    w->q = NULL;
    w->rg = NULL;
    w->all = NULL;
    w->region_of = w->rlocal = w->owner = w->tids = w->whost = NULL;
    w->ctime = NULL;
    w->nq = w->nrg = w->nall = 0;
}

/* A program's own update: the description this process holds (liquid_run
 * made it, as the master did) must be the master's.  0 or -EINVAL. */
static int
liq_job_user(struct liq_worker *w, uint32_t spec)
{
    const struct liquid *lq = liq_user_spec;
    int stride;

    if (lq == NULL) {
        liq_fail(w, "job: a program's own update, but this worker is not that program");
        return -EINVAL;
    }
    if (liq_user_setup(liq_user_spec, w->g.n, w->iters) != 0) {
        liq_fail(w, "job: %s", lq->err);
        return -EINVAL;
    }
    if (liq_user_fingerprint(lq) != spec ||
        (w->kernel == LIQ_USER_RB) != (lq->levels == LIQUID_RED_BLACK)) {
        liq_fail(w, "job: %s describes its job otherwise in this worker than in the master "
                    "(fields, reach, levels, boundaries or reductions differ)", lq->name);
        return -EINVAL;
    }
    w->user = lq;
    w->nstate = liq_user_nboxes(lq);
    liq_user_geom(lq, &w->g);
    w->depth *= liq_geom_reach(&w->g); /* reach R: R points a phase */
    for (int a = 0; a < 3; a++) {
        if (w->g.periodic[a] && w->depth > w->g.n[a]) {
            liq_fail(w, "job: a halo of %d layers reaches across the periodic %c axis of %d "
                        "points more than once", w->depth, "xyz"[a], w->g.n[a]);
            return -EINVAL;
        }
    }
    if ((stride = liq_user_stride(lq)) > 0) {
        if (w->epoch > 0 && w->epoch % stride != 0) {
            liq_fail(w, "job: epoch of %d iterations is not a multiple of the reductions' %d",
                     w->epoch, stride);
            return -EINVAL;
        }
        w->span = stride;
    }
    return 0;
}

/* The JOB message's description of the job, checked.  0 or -EINVAL. */
static int
liq_job_header(struct liq_worker *w)
{
    int hdr[LIQ_JOB_HDR], seed[2], rc;

    if (pvm_upkint(hdr, LIQ_JOB_HDR, 1) < 0 || pvm_upkint(seed, 2, 1) < 0) {
        liq_fail(w, "job: the message is too short for its header");
        return -EINVAL;
    }
    w->user = NULL;
    w->nstate = 1;
    w->kernel = (enum liq_kernel)hdr[LIQ_JOB_KERNEL];
    w->iters = hdr[LIQ_JOB_ITERS];
    w->gather = hdr[LIQ_JOB_GATHER] & 1;
    w->input = (unsigned)hdr[LIQ_JOB_GATHER] >> 1;
    w->epoch = hdr[LIQ_JOB_EPOCH];
    w->heavy = hdr[LIQ_JOB_HEAVY];
    w->start = hdr[LIQ_JOB_START];
    w->halo = hdr[LIQ_JOB_HALO];
    w->ckpt = hdr[LIQ_JOB_CKPT];
    w->ckmul = hdr[LIQ_JOB_CKMUL];
    w->gen = hdr[LIQ_JOB_GEN];
    w->restore = hdr[LIQ_JOB_RESTORE] != 0;
    w->seed = (uint64_t)(unsigned)seed[0] | (uint64_t)(unsigned)seed[1] << 32;
    if ((rc = liq_geom_make(&w->g, hdr, hdr[3])) != 0 ||
        !liq_kernel_user(w->kernel) || /* the built-in kernels: vmrun bench's probe only */
        w->iters < 0 || w->epoch < 0 ||
        w->epoch > 100000 || w->heavy < 0 || w->heavy > 1000 || w->start < 0 ||
        w->halo < 1 || w->halo > LIQ_MAX_HALO ||
        w->start >= (w->iters > 0 ? w->iters : 1) ||
        w->ckpt < 0 || w->ckmul < 1 || w->ckmul > LIQ_MAX_CKMUL || w->gen < 0 ||
        w->gen > LIQ_MAX_GEN || (w->restore && w->ckpt == 0) ||
        (w->start > 0 && !w->restore && (w->epoch == 0 || w->start % w->epoch != 0)) ||
        (w->start > 0 && w->restore && w->start % w->ckpt != 0)) {
        liq_fail(w, "job: bad description (grid %dx%dx%d, %d quanta, kernel %d, %d iterations)",
                 hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5]);
        return -EINVAL;
    }
    /* The master asks for its LIQ_TRACE_EVENTS or for none. */
    if (hdr[LIQ_JOB_TRACE] < 0 || hdr[LIQ_JOB_TRACE] > LIQ_TRACE_EVENTS) {
        liq_fail(w, "job: a trace of %d events, not 0..%d", hdr[LIQ_JOB_TRACE], LIQ_TRACE_EVENTS);
        return -EINVAL;
    }
    /* A restore after a recovery records on into the trace kept. */
    if (!(w->restore && w->tr.cap > 0)) {
        liq_trace_free(&w->tr);
        if (liq_trace_init(&w->tr, hdr[LIQ_JOB_TRACE]) != 0) {
            liq_fail(w, "job: out of memory for a trace of %d events", hdr[LIQ_JOB_TRACE]);
            return -ENOMEM;
        }
    }
    w->depth = liq_halo_depth(w->kernel, w->halo);
    liq_coeffs(w->g.n, &w->c, &w->c2);
    w->span = w->epoch > 0 ? w->epoch : w->ckpt > 0 ? w->ckpt : w->iters;
    return liq_job_user(w, (uint32_t)hdr[LIQ_JOB_SPEC]);
}

/* The JOB message's workers and the owner of every quantum, checked.
 * 0, -EINVAL or -ENOMEM, the master told why. */
static int
liq_job_owners(struct liq_worker *w)
{
    int nq = 0, bytes = 0;
    size_t want;

    w->nworkers = 0;
    if (pvm_upkint(&w->nworkers, 1, 1) < 0 || w->nworkers < 1 || w->nworkers > 65536) {
        liq_fail(w, "job: bad worker count %d", w->nworkers);
        return -EINVAL;
    }
    /* The header, the seed, the count, the tids, the owners and, with
     * checkpoints, the hosts: what the master packed, nothing more or less
     * (and no allocation larger than the message). */
    want = (size_t)LIQ_JOB_HDR + 3 + (size_t)w->nworkers * (w->ckpt > 0 ? 2 : 1) +
           (size_t)w->g.nquanta;
    pvm_bufinfo(pvm_getrbuf(), &bytes, NULL, NULL);
    if ((size_t)bytes != want * sizeof(int)) {
        liq_fail(w, "job: %d bytes for %d workers and %d quanta%s, expected %zu", bytes,
                 w->nworkers, w->g.nquanta, w->ckpt > 0 ? " with checkpoints" : "",
                 want * sizeof(int));
        return -EINVAL;
    }
    w->tids = calloc((size_t)w->nworkers, sizeof(int));
    w->whost = calloc((size_t)w->nworkers, sizeof(int));
    w->owner = calloc((size_t)w->g.nquanta, sizeof(int));
    w->rlocal = calloc((size_t)w->g.nquanta, sizeof(int));
    if (w->epoch > 0)
        w->ctime = calloc((size_t)w->epoch, sizeof(double));
    if (w->tids == NULL || w->whost == NULL || w->owner == NULL || w->rlocal == NULL ||
        (w->epoch > 0 && !w->ctime)) {
        liq_fail(w, "job: out of memory");
        return -ENOMEM;
    }
    if (pvm_upkint(w->tids, w->nworkers, 1) < 0 || pvm_upkint(w->owner, w->g.nquanta, 1) < 0 ||
        (w->ckpt > 0 && pvm_upkint(w->whost, w->nworkers, 1) < 0)) {
        liq_fail(w, "job: the workers, owners or hosts could not be unpacked");
        return -EINVAL;
    }
    for (int i = 0; i < w->nworkers; i++)
        if (w->whost[i] < 0 || w->whost[i] >= w->nworkers) {
            liq_fail(w, "job: bad host index %d of worker %d", w->whost[i], i);
            return -EINVAL;
        }
    w->me = -1;
    for (int i = 0; i < w->nworkers; i++)
        if (w->tids[i] == w->mytid)
            w->me = i;
    if (w->me < 0) {
        liq_fail(w, "job: this worker is not in the job's worker list");
        return -EINVAL;
    }
    for (int a = 0; a < w->g.nquanta; a++) {
        if (w->owner[a] < 0 || w->owner[a] >= w->nworkers || w->tids[w->owner[a]] == 0) {
            liq_fail(w, "job: quantum %d has no valid owner (%d)", a, w->owner[a]);
            return -EINVAL;
        }
        nq += w->owner[a] == w->me;
    }
    w->nq = nq;
    return 0;
}

/* --input: the master's initial values of this worker's quanta, field by
 * field as it has them, into every level.  0, or -1 (the master told). */
static int
liq_job_input(struct liq_worker *w)
{
    int nin = 0;

    if ((w->input >> w->user->nf) != 0) {
        liq_fail(w, "input: values for fields the job does not have (mask 0x%x)", w->input);
        return -1;
    }
    for (int f = 0; f < w->user->nf; f++)
        nin += w->input >> f & 1;
    for (int i = 0; i < w->nq; i++)
        for (int x = 0; x < nin; x++) {
            struct liq_quantum *q = &w->q[i];
            struct liq_region *r = w->rg[q->region];
            struct liq_patch p;
            int b = liq_wait(w, w->master, LIQ_TAG_INIT), hdr[2] = { -1, -1 }, bytes, tag, tid;
            double *buf;

            if (b <= 0)
                return -1;
            liq_quantum_patch(q, &p);
            pvm_bufinfo(b, &bytes, &tag, &tid);
            pvm_upkint(hdr, 2, 1);
            if (hdr[0] != q->id || hdr[1] < 0 || hdr[1] >= w->user->nf ||
                (size_t)bytes != 2 * sizeof(int) + p.points * sizeof(double)) {
                liq_fail(w, "input: expected quantum %d's values, got quantum %d field %d "
                            "(%d bytes)", q->id, hdr[0], hdr[1], bytes);
                return -1;
            }
            if ((buf = malloc(p.points * sizeof(double))) == NULL ||
                pvm_upkdouble(buf, (int)p.points, 1) < 0) {
                free(buf);
                liq_fail(w, "input: quantum %d could not be unpacked", q->id);
                return -1;
            }
            for (int l = 0; l < r->u.nlev; l++)
                liq_region_put(r->u.lv[l][hdr[1]], &p, buf);
            free(buf);
        }
    return 0;
}

/* Read the JOB message and build the regions, quanta and links. */
int
liq_job_setup(struct liq_worker *w)
{
    int rc, mine = 0;

    if ((rc = liq_job_header(w)) != 0 || (rc = liq_job_owners(w)) != 0)
        return rc;
    if ((w->nall = liq_cut(w, w->owner, &w->all, &w->region_of)) < 0)
        goto nomem;
    for (int r = 0; r < w->nall; r++)
        mine += w->all[r].owner == w->me;
    if ((mine > 0 && (w->rg = calloc((size_t)mine, sizeof(*w->rg))) == NULL) ||
        (w->nq > 0 && (w->q = calloc((size_t)w->nq, sizeof(*w->q))) == NULL))
        goto nomem;
    for (int r = 0; r < w->nall; r++) {
        if (w->all[r].owner != w->me)
            continue;
        w->rlocal[r] = w->nrg;
        if ((w->rg[w->nrg] = liq_region_new(w, &w->all[r], mine > 1, 0, &rc)) == NULL) {
            liq_fail(w, "job: cannot allocate region %d: %s", r, strerror(-rc));
            return rc;
        }
        w->nrg++;
    }
    for (int a = 0, i = 0; a < w->g.nquanta; a++)
        if (w->owner[a] == w->me &&
            liq_quantum_init(w, &w->q[i++], a, w->rlocal[w->region_of[a]],
                             &w->all[w->region_of[a]]) != 0)
            goto nomem;
    if (w->input && liq_job_input(w) != 0)
        return -EINVAL;
    return liq_exchange_layout(w);
nomem:
    liq_fail(w, "job: out of memory");
    return -ENOMEM;
}

/*
 * The block that starts at iteration it: its number, and its length in
 * *len.  Each epoch (the whole job without epochs; the job's end may cut
 * the last one short) is cut into as few blocks as the halo's reach allows,
 * of lengths that differ by at most one: 10 iterations with a halo of 3
 * are 3, 3, 2, 2, not 3, 3, 3, 1, whose last exchange of ghosts would buy
 * one iteration and leave it no interior to hide behind.  Workers agree on
 * the numbers whenever they joined, and a number's parity tells two
 * consecutive exchanges apart.
 */
static int
liq_block_at(const struct liq_worker *w, int it, int *len)
{
    int span = w->span, e = it / span, o = it % span;
    int n = w->iters - e * span < span ? w->iters - e * span : span;
    int nb = (n + w->halo - 1) / w->halo, q = n / nb, r = n % nb;
    int b = o < r * (q + 1) ? o / (q + 1) : r + (o - r * (q + 1)) / q;

    *len = b < r ? q + 1 : q;
    return e * ((span + w->halo - 1) / w->halo) + b;
}

/* One block of blk iterations, its ghosts sent with tag: ghosts out, the
 * regions that need none, the inner parts of those that do, ghosts in,
 * the rest.  *compute gets the compute seconds.  0, or -1 to stop (the
 * master told why). */
static int
liq_job_block(struct liq_worker *w, int blk, int tag, double *compute)
{
    *compute = 0;
    if (liq_exchange_start(w, tag) != 0)
        return -1;
    *compute += liq_sweep(w, 0, 0, blk);
    *compute += liq_sweep(w, 1, 1, blk);
    if (liq_exchange_finish(w, tag) != 0)
        return -1;
    *compute += liq_sweep(w, 1, 0, blk);
    if (w->kerr > 0 && blk == 1) {
        liq_fail(w, "%s: the update returned %d (iteration %d)", w->user->name, w->kerr,
                 w->it + 1);
        return -1;
    }
    if (w->kerr > 0) {
        liq_fail(w, "%s: the update returned %d (iterations %d..%d)", w->user->name, w->kerr,
                 w->it + 1, w->it + blk);
        return -1;
    }
    if (w->kerr != 0) {
        liq_fail(w, "the kernel failed: %s", strerror(-w->kerr));
        return -1;
    }
    liq_sweep_charge(w, blk);
    return 0;
}

/* The block [it, it + blk) is done: charge its iterations to the epoch,
 * and at an epoch boundary report and take the plan for it (liq_plan_at).
 * Returns 0, 1 when this worker gave its slot up, or -1. */
static int
liq_job_epoch(struct liq_worker *w, int it, int blk, double compute)
{
    int b = (it + blk) / w->epoch;

    /* Each iteration of the block is charged its share. */
    for (int x = it; x < it + blk; x++) {
        for (int i = 0; i < w->nq; i++)
            w->q[i].hist[x % w->epoch] = w->q[i].cpu;
        w->ctime[x % w->epoch] = compute / blk;
    }
    if ((it + blk) % w->epoch != 0 || it + blk >= w->iters)
        return 0;
    liq_trace_rec(&w->tr, LIQ_TEV_EPOCH, liq_now(), 0, b, 0, it + blk, 0, 0);
    if (liq_report_epoch(w, b) != 0)
        return -1;
    if (liq_plan_at(b) && b > w->start / w->epoch)
        return liq_migrate_plan(w, b);
    return 0;
}

/*
 * A reduction point (liq_user_due): the ghosts again (the reductions read
 * neighbours), each quantum's partials to the master, and its verdict.
 * Returns 1 to stop here, 0 to go on, -1 when it failed.
 */
static int
liq_job_reduce(struct liq_worker *w, int it)
{
    const struct liquid *lq = w->user;
    int due[LIQUID_MAX_REDUCTIONS], any = 0, b, at = -1, stop = 0, rc = 0, bad = -1;
    double part[LIQUID_MAX_REDUCTIONS];

    for (int r = 0; r < lq->nred; r++)
        any |= due[r] = liq_user_due(lq, r, it, w->iters);
    if (!any)
        return 0;
    int rtag = liq_gtag(LIQ_TAG_RGHOST, w->gen);

    if (liq_exchange_start(w, rtag) != 0 || liq_exchange_finish(w, rtag) != 0)
        return -1;
    for (int i = 0; i < w->nrg; i++)
        liq_ubox_bounds(&w->rg[i]->u, lq, w->g.n, 0);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&it, 1, 1);
    pvm_pkint(&w->nq, 1, 1);
    for (int i = 0; i < w->nq && rc == 0; i++) {
        struct kern_box view[LIQUID_MAX_FIELDS], *v[LIQUID_MAX_FIELDS];

        for (int f = 0; f < lq->nf; f++) {
            liq_quantum_field(w, &w->q[i], f, &view[f]);
            v[f] = &view[f];
        }
        rc = liq_ubox_reduce(lq, w->g.n, v, it, due, part);
        for (int r = 0; rc != 0 && bad < 0 && r < lq->nred; r++)
            if (due[r] && isnan(part[r]))
                bad = r;
        pvm_pkint(&w->q[i].id, 1, 1);
        pvm_pkdouble(part, lq->nred, 1);
    }
    if (rc != 0) {
        liq_fail(w, "%s: reduction %s is not a number at iteration %d", lq->name,
                 bad >= 0 ? lq->red[bad].name : "?", it);
        return -1;
    }
    if (pvm_send(w->master, LIQ_TAG_REDUCE) < 0) {
        liq_fail(w, "reduction: could not reach the master");
        return -1;
    }
    double t0 = liq_now();

    if ((b = liq_wait(w, w->master, LIQ_TAG_VERDICT)) <= 0)
        return -1;
    liq_trace_rec(&w->tr, LIQ_TEV_WAIT, t0, liq_now(), w->master, LIQ_TAG_VERDICT, it, 0, 0);
    pvm_upkint(&at, 1, 1);
    pvm_upkint(&stop, 1, 1);
    if (at != it) {
        liq_fail(w, "reduction: the master's verdict is for iteration %d, not %d", at, it);
        return -1;
    }
    return stop != 0;
}

/* The figures of a job start from zero. */
static void
liq_job_clear(struct liq_worker *w)
{
    w->compute_all = w->comm_all = w->compute_cpu = w->overlap_cpu = 0;
    w->ghost_wait = w->plan_wait = w->ghost_bytes = 0;
    w->kerr = 0;
    w->ep_t = liq_now();
    w->ep_cpu = liq_process_cpu();
    w->ep_kcpu = 0;
}

int
liq_job(struct liq_worker *w)
{
    double t_start = liq_now(), t_setup;
    int leave = 0, it, blk, done = 0;

    w->cpu0 = liq_process_cpu();
    if (liq_job_setup(w) != 0)
        goto out;
    /* A new job's copies start from none; a recovery's are what it
     * restores from. */
    if (!w->restore) {
        liq_ckpt_free(w);
        w->ck_seconds = w->ck_bytes = 0;
        w->ck_taken = 0;
    } else if (w->start > 0 && liq_ckpt_restore(w) != 0)
        goto out;
    t_setup = liq_now() - t_start;
    liq_job_clear(w);
    /* A worker that joins at an epoch boundary takes that boundary's plan
     * (a recovery's JOB holds the placement from its checkpoint on). */
    done = w->start;
    if (w->start > 0 && !w->restore && (leave = liq_migrate_plan(w, w->start / w->epoch)) != 0)
        goto gone;
    /* ... and the reduction there, which the others make after that plan
     * (made before the checkpoint a recovery starts from). */
    if (w->start > 0 && !w->restore && w->user != NULL && w->user->nred > 0) {
        int stop = liq_job_reduce(w, w->start);

        if (stop < 0)
            goto out;
        if (stop > 0)
            goto end;
    }
    for (it = w->start; it < w->iters; it += blk) {
        w->it = it;

        double compute, t0 = liq_now();
        int tag = liq_gtag(LIQ_TAG_GHOST + (liq_block_at(w, it, &blk) & 1), w->gen);

        if (liq_job_block(w, blk, tag, &compute) != 0)
            goto out;
        if (w->epoch > 0 && (leave = liq_job_epoch(w, it, blk, compute)) < 0)
            goto out;

        double comm = liq_now() - t0 - compute;

        w->compute_all += compute;
        w->comm_all += comm;
        if (liq_report_progress(w, it + blk, compute, comm) != 0)
            goto out;
        /* A master killed (kill -9, a lost host) leaves no one to tell us
         * to stop: its exit notice ends the job at a block's end, since a
         * worker that waits on no one would otherwise run to the end. */
        if (pvm_nrecv(-1, LIQ_TAG_EXITED) > 0) {
            w->orphan = 1;
            goto out;
        }
        if (leave) {
            done = it + blk;
            goto gone;
        }
        if (w->user != NULL && w->user->nred > 0) {
            int stop = liq_job_reduce(w, it + blk);

            if (stop < 0)
                goto out;
            if (stop > 0)
                break;
        }
        if (w->ckpt > 0 && liq_ckpt_take(w, it + blk) != 0)
            goto out;
    }
end:
    if (liq_report_done(w, t_start, t_setup) == 0 && (!w->gather || liq_report_field(w) == 0) &&
        w->tr.cap > 0)
        liq_report_trace(w);
    goto out;
gone:
    /* Our checkpoint copies stay with the job; the trace goes before LEFT:
     * after LEFT the master takes nothing from this worker. */
    if (leave > 0)
        (void)liq_ckpt_handover(w);
    if (leave > 0 && (w->tr.cap == 0 || liq_report_trace(w) == 0))
        liq_report_left(w, done);
out:
    liq_job_free(w);
    return leave > 0;
}
