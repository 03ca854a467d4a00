/*
 * liq_sweep.c - a block's sweeps on the worker's regions (step 4 of the
 * liquid runtime): each region's block of the description's phases on
 * shrinking boxes as a wavefront (liq_usweep.c), one that needs other
 * workers' points in two passes around the ghosts' journey (the inner
 * boxes first, the skirts after); and what each quantum is charged for
 * its part.  vmrun bench's probe sweeps the built-in kernels' block as one
 * call of the fast kernel.  Every path computes each owned point from the
 * operands of the whole-box sweep, so the bits are the reference's
 * (docs/architecture.md, the invariant).
 */
#include "liq_int.h"

/* Keep a kernel's first error for liq_job to end the worker with. */
static void
liq_kernel_rc(struct liq_worker *w, int rc)
{
    if (rc != 0 && w->kerr == 0)
        w->kerr = rc;
}

void
liq_sweep_region(struct liq_worker *w, struct liq_region *r, int iters)
{
    if (w->user != NULL) {
        int rc = liq_ubox_block(&r->u, w->user, w->g.n, r->ext, w->it, iters, r->repeat, 0);

        /* The update's own error is positive; kerr keeps it as it is. */
        if (rc != 0 && w->kerr == 0)
            w->kerr = rc;
        return;
    }
    liq_kernel_rc(w, liq_block(&r->cur, &r->nxt, &r->rhs, w->kernel, w->c, w->c2, iters,
                               r->repeat, &r->plan));
}

/* A region's compute span into the trace (a few stores; nothing when off). */
static inline void
liq_sweep_trace(struct liq_worker *w, const struct liq_region *r, double t0, double t1,
                int iters, int part)
{
    const int *q0 = r->box.q0, *q1 = r->box.q1;

    if (w->tr.cap == 0)
        return;
    liq_trace_rec(&w->tr, LIQ_TEV_COMPUTE, t0, t1, q0[0] + w->g.q[0] * (q0[1] + w->g.q[1] * q0[2]),
                  (q1[0] - q0[0]) * (q1[1] - q0[1]) * (q1[2] - q0[2]), iters, part, r->repeat);
}

/*
 * A block of iters iterations on the regions that do (remote = 1) or do
 * not need another worker's points: each a block of shrinking boxes
 * (liq_ubox_block); with inner = 1, only the inner boxes of those that
 * can run in two passes around the ghosts' arrival (liq_ubox_split) and
 * wait on no face in x -- their skirts then come with remote = 1, and
 * their times add up.
 */
double
liq_sweep(struct liq_worker *w, int remote, int inner, int iters)
{
    double total = 0;

    for (int i = 0; i < w->nrg; i++) {
        struct liq_region *r = w->rg[i];
        double t0, c0;
        /* A region that waits on a face in x does not split: its skirt
         * would be short rows, which cost more than the overlap saves. */
        int split = remote && !r->stale[0] && !r->stale[1] &&
                    liq_ubox_can_split(&r->u, w->user, w->g.n, iters);
        int rc = 0, part;

        if (r->box.remote != remote || (inner && !split))
            continue;
        part = !split ? LIQ_TEV_WHOLE : inner ? LIQ_TEV_INNER : LIQ_TEV_OUTER;
        c0 = liq_cpu_now();
        t0 = liq_now();
        if (!split)
            liq_sweep_region(w, r, iters);
        else
            rc = liq_ubox_split(&r->u, w->user, w->g.n, r->ext, r->stale, w->it, iters,
                                r->repeat, !inner);
        if (rc != 0 && w->kerr == 0)
            w->kerr = rc;
        /* the two passes of a split block add up */
        if (inner || !split)
            r->wall = r->cpu = 0;
        double dt = liq_now() - t0, dc = liq_cpu_now() - c0;

        r->wall += dt;
        r->cpu += dc;
        liq_sweep_trace(w, r, t0, t0 + dt, iters, part);
        w->compute_cpu += dc;
        if (inner)
            w->overlap_cpu += dc;
        total += dt;
    }
    return total;
}

int
liq_one_sweep_fits(size_t bytes, size_t llc)
{
    return llc != 0 && bytes <= llc / 2;
}

/*
 * Each quantum's part of its region's block.  Its compute time is its
 * share of the region's points.  Its CPU time, which the balancer weighs
 * it by, is what its own points cost: the region's CPU time per point
 * swept, halo layers included, times its points.  The halo's share of a
 * region's sweep depends on how the quanta are grouped (a quantum alone in
 * its box sweeps twice its points with a deep halo; among others, a few
 * per cent more), so charging it to the quanta would make their weights
 * change with every move: the balancer's next epoch would see a placement
 * worse than it had predicted and move again.
 */
void
liq_sweep_charge(struct liq_worker *w, int iters)
{
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        const struct liq_region *r = w->rg[q->region];
        double swept = liq_ubox_points(w->user, w->g.n, r->u.lv[0][0], r->ext, iters);

        q->seconds += r->wall * q->share;
        q->cpu = r->cpu * ((double)q->n[0] * q->n[1] * q->n[2] / swept);
    }
}
