/*
 * liq_sweep.c - a block's sweeps on the worker's regions (step 4 of the
 * liquid runtime): the whole block as one call of the fast kernel with
 * its temporal blocking inside (seed 000's deep halos), or for Jacobi the
 * trapezoid, whose sweeps shrink towards the points owned; the overlap of
 * the sweeps with the ghosts' journey (the inner trapezoids first, the
 * skirts after); the choice of sweeps per pass for this host's cache; and
 * what each quantum is charged for its part.  Every path computes each
 * owned point from the operands of the whole-box sweep, so the bits are
 * the reference's (docs/architecture.md, the invariant).
 */
#include "liq_int.h"

#define LIQ_PASS_MAX 32 /* sweeps in one temporally blocked pass on shrinking boxes */

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

/*
 * The trapezoid.  A block of n sweeps on a region whose halo is d deep
 * (d >= n) need not sweep the whole extended box each time: what the
 * block must leave right is the region's own points, and sweep s of n
 * need only compute the points that sweeps s+1..n still read -- the own
 * points and n - s layers of the halo on each face (a 7-point sweep
 * reaches one point further each time).  So sweep s runs on the box
 * shrunk from the extended one by the halo layers beyond n - s
 * (liq_needed), and the redundant layers per face and block fall from
 * n(d-1) to n(n-1)/2.  Every point computed reads
 * the values the whole-box sweep would (its neighbours lie in the box of
 * the sweep before, or in the halo as exchanged), so the bits are the
 * same; the layers left behind hold older values, which nothing reads
 * before the next exchange overwrites them.  Where the halo reaches the
 * grid's end, the box's ghost layer is the Dirichlet boundary in both
 * boxes (liq_region_make), so a face that is not shrunk reads it as the
 * whole-box sweep does.  Jacobi only (red-black sweeps in place), at one
 * sweep per pass or, temporally blocked, when the block's sweeps fit in
 * one pass: kern_jacobi_trap then shrinks each sweep's box within the pass
 * (a heavy region's repeated sweeps go one at a time, on whole boxes).
 */
static int
liq_trapezoid(const struct liq_worker *w, const struct liq_region *r, int n)
{
    return w->kernel == LIQ_JACOBI &&
           (r->plan.jac_steps == 1 ||
            (r->repeat == 1 && n <= r->plan.jac_steps && n <= LIQ_PASS_MAX));
}

/* The box indices [lo, hi] of region r that sweep s of a block of n
 * sweeps computes (the whole box for a region that is not a trapezoid). */
static void
liq_needed(const struct liq_worker *w, const struct liq_region *r, int s, int n, int lo[3],
           int hi[3])
{
    const struct kern_box *b = r->cur;
    const int len[3] = { b->ni, b->nj, b->nk };
    int t = liq_trapezoid(w, r, n);

    for (int a = 0; a < 3; a++) {
        const int *e = &r->ext[2 * a];

        lo[a] = 1 + (t ? e[0] - liq_trapezoid_layers(e[0], n, s) : 0);
        hi[a] = len[a] - (t ? e[1] - liq_trapezoid_layers(e[1], n, s) : 0);
    }
}

/* Points region r computes in a block of n sweeps, counting each sweep of
 * its kernel once (a heavy region repeats each). */
static double
liq_block_points(const struct liq_worker *w, const struct liq_region *r, int n)
{
    double all = 0;

    for (int s = 1; s <= n; s++) {
        int lo[3], hi[3];
        double v = 1;

        liq_needed(w, r, s, n, lo, hi);
        for (int a = 0; a < 3; a++)
            v *= hi[a] - lo[a] + 1;
        all += v;
    }
    return all;
}

/* Sweep s's inner trapezoid of region r in a block of n sweeps, as box
 * indices [lo, hi] per axis; 0 when it is empty. */
static int
liq_inner(const struct liq_worker *w, const struct liq_region *r, int s, int n, int lo[3],
          int hi[3])
{
    const struct kern_box *b = r->cur;
    const long o[3] = { (long)b->oi, (long)b->oj, (long)b->ok };

    liq_needed(w, r, s, n, lo, hi);
    for (int a = 0; a < 3; a++) {
        if (r->stale[2 * a])
            lo[a] = (int)(r->box.lo[a] + 1 - o[a]) + s;
        if (r->stale[2 * a + 1])
            hi[a] = (int)(r->box.hi[a] - o[a]) - s;
        if (lo[a] > hi[a])
            return 0;
    }
    return 1;
}

/*
 * Overlap for a region that needs other workers' points.  Most workers'
 * regions all touch another's; if they waited for their ghosts, such a
 * worker would compute nothing while they are on the way and lose a
 * neighbour's every delay (a CFS throttle, a message behind the queue) as
 * idle quota.  So a Jacobi region (not heavy) does not wait to begin.  Swept once per pass, before
 * the ghosts come it runs, sweep by sweep, the points they cannot reach
 * yet: sweep s on its trapezoid's box shrunk by s from each face whose
 * halo waits for them (the inner trapezoid; a 7-point sweep reaches one
 * point further each time).  After they come it runs the rest of each
 * sweep's box (the skirt), sweep by sweep.  Every point of every sweep is
 * computed once, from the values the whole-box sweep would read: inner
 * sweep s reads only points inner sweep s - 1 wrote or that were fresh,
 * and the skirt of sweep s reads no point inner sweep s + 1 overwrote in
 * the box it reads, since each inner box lies one point inside the one
 * before on every shrunk face (a skirt point lies outside the inner box
 * on a shrunk face: on the others the inner box spans the sweep's).  So
 * the bits are the same.  The steps leave the other box's ghost layer as
 * it was: on a face with a neighbour it lies beyond what the block's
 * sweeps can carry to the owned points, and on the grid's boundary both
 * boxes hold the boundary values from their making (liq_region_make; the
 * heavy path relies on it too).  A region that waits on a face in x does
 * not split: its skirt would be short rows, which cost more than the
 * overlap saves.  Temporally blocked, it splits in passes (liq_bands).
 */
static int
liq_split(const struct liq_worker *w, const struct liq_region *r, int n)
{
    int lo[3], hi[3];

    if (!liq_trapezoid(w, r, n) || r->repeat != 1 || !r->box.remote || r->stale[0] ||
        r->stale[1])
        return 0;
    /* Temporally blocked: only with a core the ghosts cannot reach (liq_bands). */
    return r->plan.jac_steps == 1 || liq_inner(w, r, n, n, lo, hi);
}

/* One sweep out <- in over the box indices [lo, hi] of region r's boxes
 * (nothing if that is empty). */
static void
liq_sweep_part(const struct liq_worker *w, const struct liq_region *r, struct kern_box *out,
               const struct kern_box *in, const int lo[3], const int hi[3])
{
    const int e[6] = { lo[0] - 1, 0, lo[1] - 1, 0, lo[2] - 1, 0 };
    int n[3];
    struct kern_box vo, vi, vr;

    for (int a = 0; a < 3; a++)
        if ((n[a] = hi[a] - lo[a] + 1) < 1)
            return;
    liq_quantum_view(out, e, n, &vo);
    liq_quantum_view(in, e, n, &vi);
    liq_quantum_view(&r->rhs, e, n, &vr);
    (void)kern_jacobi_step(&vo, &vi, &vr, w->c, w->c2, &r->plan);
}

/* Slab (a, side) of the box [b0, b1] less the box [lo, hi] inside it, as
 * [x0, x1]: for a = 2, 1, 0 and side below (0) or above (1), whole planes
 * in z, then whole rows beside [lo, hi] in y, then the rest of its rows in
 * x; the six tile the difference.  Returns 0 when the slab is empty. */
static int
liq_slab(const int b0[3], const int b1[3], const int lo[3], const int hi[3], int a, int side,
         int x0[3], int x1[3])
{
    int empty = 0;

    for (int b = 0; b < 3; b++) {
        x0[b] = b > a ? lo[b] : b0[b];
        x1[b] = b > a ? hi[b] : b1[b];
    }
    x0[a] = side == 0 ? b0[a] : hi[a] + 1;
    x1[a] = side == 0 ? lo[a] - 1 : b1[a];
    for (int b = 0; b < 3; b++)
        empty |= x0[b] > x1[b];
    return !empty;
}

/* The skirt of sweep s of n: its box less the inner trapezoid, in slabs
 * (liq_slab). */
static void
liq_skirt(const struct liq_worker *w, const struct liq_region *r, struct kern_box *out,
          const struct kern_box *in, int s, int n)
{
    int lo[3], hi[3], a0[3], a1[3], b0[3], b1[3];

    liq_needed(w, r, s, n, b0, b1);
    if (!liq_inner(w, r, s, n, lo, hi)) {
        liq_sweep_part(w, r, out, in, b0, b1);
        return;
    }
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++)
            if (liq_slab(b0, b1, lo, hi, a, side, a0, a1))
                liq_sweep_part(w, r, out, in, a0, a1);
}

/* A block of n sweeps on region r, each on the trapezoid's box. */
static void
liq_trapezoid_block(const struct liq_worker *w, struct liq_region *r, int n)
{
    struct kern_box *x[2] = { r->cur, r->nxt };
    int lo[3], hi[3];

    for (int s = 1; s <= n; s++) {
        liq_needed(w, r, s, n, lo, hi);
        for (int k = 0; k < r->repeat; k++)
            liq_sweep_part(w, r, x[s % 2], x[(s - 1) % 2], lo, hi);
    }
    if (n % 2 != 0) {
        r->cur = x[1];
        r->nxt = x[0];
    }
}

/* The block's result is in nxt: make it cur. */
static void
liq_swap(struct liq_region *r)
{
    struct kern_box *x = r->cur;

    r->cur = r->nxt;
    r->nxt = x;
}

/* Region r's block of n sweeps in one temporally blocked pass cur -> nxt,
 * sweep s on the box lo[s-1] .. hi[s-1] (kern_jacobi_trap). */
static void
liq_pass(struct liq_worker *w, struct liq_region *r, int n, int lo[][3], int hi[][3])
{
    liq_kernel_rc(w, kern_jacobi_trap(r->nxt, r->cur, &r->rhs, w->c, w->c2, n,
                                      (const int (*)[3])lo, (const int (*)[3])hi, &r->plan));
}

/* A temporally blocked block of n sweeps on the trapezoid's boxes. */
static void
liq_trapezoid_pass(struct liq_worker *w, struct liq_region *r, int n)
{
    int lo[LIQ_PASS_MAX][3], hi[LIQ_PASS_MAX][3];

    for (int s = 1; s <= n; s++)
        liq_needed(w, r, s, n, lo[s - 1], hi[s - 1]);
    liq_pass(w, r, n, lo, hi);
    liq_swap(r);
}

/*
 * Overlap where a region's sweeps run temporally blocked.  Its inner
 * trapezoids (liq_inner) are one pass, the core, which reads only points
 * the ghosts do not change; but the pass keeps its sweeps between the
 * first and the last in scratch planes, so the skirt cannot be swept
 * after it sweep by sweep from them as liq_sweep does at one sweep per
 * pass.  Instead each slab of the last sweep's skirt (liq_slab) is a
 * pass of its own from the block's start, after the ghosts came: sweep s
 * on the slab grown by n - s (what the last sweep's slab depends on),
 * within sweep s's trapezoid.  Every pass reads cur and writes only its
 * last sweep's box to nxt, the core and the slabs tile the region's own
 * points, and a point computed by two passes is computed from the same
 * values, so the bits are those of the whole block.  The price is the
 * points the slabs' passes compute again inside the core: per face that
 * waits, n(n-1) layers a block (20 at n = 5) against n x the region's
 * depth (480 for a 96-point region).  inner: the core, else the slabs.
 */
static void
liq_bands(struct liq_worker *w, struct liq_region *r, int inner, int n)
{
    int lo[LIQ_PASS_MAX][3], hi[LIQ_PASS_MAX][3], c0[3], c1[3], b0[3], b1[3];

    if (inner) {
        for (int s = 1; s <= n; s++)
            (void)liq_inner(w, r, s, n, lo[s - 1], hi[s - 1]); /* liq_split: none empty */
        liq_pass(w, r, n, lo, hi);
        return;
    }
    liq_needed(w, r, n, n, b0, b1);
    (void)liq_inner(w, r, n, n, c0, c1);
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++) {
            int x0[3], x1[3];

            if (!liq_slab(b0, b1, c0, c1, a, side, x0, x1))
                continue;
            for (int s = 1; s <= n; s++) {
                int n0[3], n1[3];

                liq_needed(w, r, s, n, n0, n1);
                for (int b = 0; b < 3; b++) {
                    lo[s - 1][b] = x0[b] - (n - s) > n0[b] ? x0[b] - (n - s) : n0[b];
                    hi[s - 1][b] = x1[b] + (n - s) < n1[b] ? x1[b] + (n - s) : n1[b];
                }
            }
            liq_pass(w, r, n, lo, hi);
        }
    liq_swap(r);
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
 * not need another worker's points; with inner = 1, only the inner
 * trapezoids of those that overlap (liq_split) -- their skirts then come
 * with remote = 1, and their times add up.
 */
/* A program's own update: each region a block of shrinking boxes
 * (liq_ubox_block), one that needs other workers' points in two passes
 * around the ghosts' arrival (liq_ubox_split) where it can. */
static double
liq_sweep_user(struct liq_worker *w, int remote, int inner, int iters)
{
    double total = 0;

    for (int i = 0; i < w->nrg; i++) {
        struct liq_region *r = w->rg[i];
        double t0, c0;
        int split = remote && liq_ubox_can_split(&r->u, w->user, w->g.n, iters), rc = 0, part;

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

double
liq_sweep(struct liq_worker *w, int remote, int inner, int iters)
{
    double total = 0;

    if (w->user != NULL)
        return liq_sweep_user(w, remote, inner, iters);

    for (int i = 0; i < w->nrg; i++) {
        struct liq_region *r = w->rg[i];
        int split;
        double t0, c0;

        if (r->box.remote != remote)
            continue;
        /* One sweep per pass where the boxes stay in the last level: no
         * non-temporal stores either, which would push them out of it. */
        r->plan.jac_steps = w->passes == 1 ? 1 : r->steps;
        r->plan.flags = w->passes == 1 ? r->flags & ~KERN_PLAN_STREAM : r->flags;
        split = liq_split(w, r, iters);
        if (inner && !split)
            continue;
        c0 = liq_cpu_now();
        t0 = liq_now();
        if (split && r->plan.jac_steps > 1) {
            liq_bands(w, r, inner, iters);
        } else if (!split && liq_trapezoid(w, r, iters)) {
            if (r->plan.jac_steps == 1)
                liq_trapezoid_block(w, r, iters);
            else
                liq_trapezoid_pass(w, r, iters);
        } else if (!split) {
            liq_sweep_region(w, r, iters);
        } else {
            struct kern_box *x[2] = { r->cur, r->nxt };
            int lo[3], hi[3];

            for (int s = 1; s <= iters; s++) {
                if (!inner)
                    liq_skirt(w, r, x[s % 2], x[(s - 1) % 2], s, iters);
                else if (liq_inner(w, r, s, iters, lo, hi))
                    liq_sweep_part(w, r, x[s % 2], x[(s - 1) % 2], lo, hi);
                else
                    break; /* each one lies inside the one before */
            }
            if (!inner && iters % 2 != 0) {
                r->cur = x[1];
                r->nxt = x[0];
            }
        }
        if (inner || !split) {
            r->wall = 0;
            r->cpu = 0;
        }
        double dt = liq_now() - t0, dc = liq_cpu_now() - c0;

        liq_sweep_trace(w, r, t0, t0 + dt, iters,
                        inner ? LIQ_TEV_INNER : split ? LIQ_TEV_OUTER : LIQ_TEV_WHOLE);
        r->wall += dt;
        r->cpu += dc;
        w->compute_cpu += dc;
        if (inner)
            w->overlap_cpu += dc;
        total += dt;
    }
    return total;
}

/*
 * Jacobi's temporal blocking (the plan's sweeps per pass over memory) pays
 * where a worker's boxes stream from memory and costs where they stay in
 * the last-level cache between sweeps.  So a worker whose boxes together
 * fill at most half of one CPU's share of the last level (kern_llc_bytes;
 * the llc_bytes key) sweeps once per pass, and a larger one blocks as the
 * plans say.  Half, not all of it: the sweep's three streams do not keep
 * a cache full, and a VM's last level is shared with more than its own
 * CPUs.  The rule is static rather than a timed trial: one-sweep passes
 * speed up over their first sweeps as the boxes settle into the cache,
 * so a short trial misjudges them, and a trial inside the job would make
 * the first epochs' quantum times depend on it, which the balancer would
 * take for a change of speed.  The bits are the same either way.  The
 * share assumes one worker per CPU: more workers than CPUs on a machine
 * may together overflow the cache each of them fits in.
 */
void
liq_sweep_passes(struct liq_worker *w)
{
    size_t bytes = 0;
    int steps = 1;

    if (w->kernel != LIQ_JACOBI || w->nrg == 0)
        return; /* nothing swept: w->passes says what it last was (0: never) */
    for (int i = 0; i < w->nrg; i++) {
        const struct liq_region *r = w->rg[i];

        if (r->repeat == 1 && r->steps > steps)
            steps = r->steps;
        bytes += r->a.map_len + r->b.map_len + r->rhs.map_len;
    }
    w->passes = steps > 1 && liq_one_sweep_fits(bytes, w->llc) ? 1 : steps;
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
        double swept = w->user != NULL
                           ? liq_ubox_points(w->user, w->g.n, r->u.lv[0][0], r->ext, iters)
                           : liq_block_points(w, r, iters);

        q->seconds += r->wall * q->share;
        q->cpu = r->cpu * ((double)q->n[0] * q->n[1] * q->n[2] / swept);
    }
}
