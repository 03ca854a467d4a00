/*
 * kern_jacobi.c - the 7-point Jacobi sweep: reference, tiled, and temporally
 * blocked.
 *
 * The thesis has no Jacobi kernel (seed 000 s0); this is its red-black
 * update done out of place, with the same tiling (Autoblocker, s3.7).  A
 * sweep reads u and rhs once and writes out once: 24 bytes per update, so
 * even a perfect single sweep runs at the memory's speed.  The fast kernel
 * therefore runs several sweeps per pass over memory (temporal blocking):
 * a block of rows walks down k as a wavefront, sweep t trailing sweep t-1
 * by one plane, the intermediate sweeps living in small scratch planes that
 * stay in cache.  Blocks overlap by one row per remaining sweep (halos) so
 * that no block waits for another; the halo rows are computed twice, from
 * the same inputs, so the result is bit-identical to the reference.
 */
#include "kern_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* out and u must be distinct boxes of rhs's shape. */
static int check3(const struct kern_box *out, const struct kern_box *u,
                  const struct kern_box *rhs)
{
    if (kern__same_shape(out, u) != 0 || kern__same_shape(rhs, u) != 0)
        return -EINVAL;
    if (out->data == u->data)
        return -EINVAL;
    return 0;
}

int kern_jacobi_ref(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                    double c, double c2)
{
    if (check3(out, u, rhs) != 0)
        return -EINVAL;
    for (int k = 1; k <= u->nk; k++) {
        for (int j = 1; j <= u->nj; j++) {
            double *o = kern_at(out, 0, j, k);
            const double *uc = kern_at(u, 0, j, k);
            const double *ujm = kern_at(u, 0, j - 1, k), *ujp = kern_at(u, 0, j + 1, k);
            const double *ukm = kern_at(u, 0, j, k - 1), *ukp = kern_at(u, 0, j, k + 1);
            const double *r = kern_at(rhs, 0, j, k);

            for (int i = 1; i <= u->ni; i++)
                o[i] = kern__point(uc[i - 1], uc[i + 1], ujm[i], ujp[i], ukm[i], ukp[i], r[i], c,
                                   c2);
        }
    }
    return 0;
}

int kern_jacobi_tile(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                     double c, double c2, int i0, int i1, int j0, int j1, unsigned flags)
{
    if (check3(out, u, rhs) != 0)
        return -EINVAL;
    if (i0 < 1 || i1 > u->ni || i0 > i1 || j0 < 1 || j1 > u->nj || j0 > j1)
        return -EINVAL;
    flags &= KERN_PLAN_SIMD;
    for (int k = 1; k <= u->nk; k++) {
        for (int j = j0; j <= j1; j++) {
            struct kern__nbr nb;

            kern__nbr_box(&nb, u, rhs, j, k);
            kern__jrow(kern_at(out, 0, j, k), kern_at(u, 0, j, k), &nb, i0, i1, c, c2, flags);
        }
    }
    return 0;
}

int kern_jacobi_sweep(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                      double c, double c2, const struct kern_plan *p)
{
    if (check3(out, u, rhs) != 0 || p == NULL || p->tile_i < 1 || p->tile_j < 1)
        return -EINVAL;
    for (int jj = 1; jj <= u->nj; jj += p->tile_j) {
        int j1 = jj + p->tile_j - 1 < u->nj ? jj + p->tile_j - 1 : u->nj;

        for (int ii = 1; ii <= u->ni; ii += p->tile_i) {
            int i1 = ii + p->tile_i - 1 < u->ni ? ii + p->tile_i - 1 : u->ni;

            (void)kern_jacobi_tile(out, u, rhs, c, c2, ii, i1, jj, j1, p->flags);
        }
    }
    return 0;
}

/*
 * One pass: `steps` sweeps from in to out.  Level 0 is in, level `steps` is
 * out, and levels in between live in three scratch planes each (k-1, k, k+1
 * are all a sweep reads), indexed k mod 3.  Ghost rows and planes are
 * constant, so every level reads them from in.
 */
struct pass {
    const struct kern_box *in, *rhs;
    struct kern_box *out;
    double *ring;       /* (steps-1) levels x 3 planes x rows x rs */
    size_t rs;          /* row stride of the scratch planes */
    int rows;           /* rows per scratch plane */
    int steps;
    int jlo;            /* the block's first row in the scratch planes */
    int ends;           /* out takes in's ghosts as the pass writes beside them */
};

static const double *src_row(const struct pass *ps, int level, int j, int k)
{
    const struct kern_box *in = ps->in;

    if (level == 0 || j == 0 || j == in->nj + 1 || k == 0 || k == in->nk + 1)
        return kern_at(in, 0, j, k);
    return ps->ring
           + (((size_t)(level - 1) * 3 + (size_t)(k % 3)) * (size_t)ps->rows
              + (size_t)(j - ps->jlo))
                 * ps->rs;
}

static double *dst_row(const struct pass *ps, int level, int j, int k)
{
    if (level == ps->steps)
        return kern_at(ps->out, 0, j, k);
    return ps->ring
           + (((size_t)(level - 1) * 3 + (size_t)(k % 3)) * (size_t)ps->rows
              + (size_t)(j - ps->jlo))
                 * ps->rs;
}

/*
 * The first pass of a run gives out the ghost rows of in beside row (j, k)
 * -- the ghost planes in k, the ghost rows in j, the edges where they meet
 * -- as it writes the row: the kernel has just read them, so they are in
 * the cache, where copying the shell before the pass touched two lines of
 * every row of both boxes.  Each ghost row is beside one interior row.
 */
static void ghost_rows_beside(const struct pass *ps, int j, int k)
{
    const struct kern_box *in = ps->in;
    size_t row = ((size_t)in->ni + 2) * sizeof(double);

    for (int dk = -1; dk <= 1; dk++) {
        int kk = k + dk;

        if (dk != 0 && kk != 0 && kk != in->nk + 1)
            continue;
        for (int dj = -1; dj <= 1; dj++) {
            int jj = j + dj;

            if ((dj == 0 && dk == 0) || (dj != 0 && jj != 0 && jj != in->nj + 1))
                continue;
            memcpy(kern_at(ps->out, 0, jj, kk), kern_at(in, 0, jj, kk), row);
        }
    }
}

static void run_pass(struct pass *ps, double c, double c2, int block, unsigned flags)
{
    const struct kern_box *in = ps->in;
    int ni = in->ni, nj = in->nj, nk = in->nk, T = ps->steps;
    unsigned inner = flags & ~KERN_PLAN_STREAM;

    /* Blocks span whole rows: a block's rows of one plane are then one
     * contiguous run of memory, which the prefetchers stream well; blocks
     * cut in i as well break those runs (docs/decisions.md, Kernels). */
    for (int j0 = 1; j0 <= nj; j0 += block) {
        int j1 = j0 + block - 1 < nj ? j0 + block - 1 : nj;

        ps->jlo = j0 - (T - 1);
        /* Wavefront: at step kk, level t computes plane kk - (t-1), after
         * level t-1 computed the plane above it in this same step. */
        for (int kk = 1; kk <= nk + T - 1; kk++) {
            for (int t = 1; t <= T; t++) {
                int k = kk - (t - 1);
                int jl = j0 - (T - t) > 1 ? j0 - (T - t) : 1;
                int jh = j1 + (T - t) < nj ? j1 + (T - t) : nj;
                int il = 1, ih = ni;

                if (k < 1 || k > nk)
                    continue;
                for (int j = jl; j <= jh; j++) {
                    struct kern__nbr nb;
                    double *o = dst_row(ps, t, j, k);

                    nb.jm = src_row(ps, t - 1, j - 1, k);
                    nb.jp = src_row(ps, t - 1, j + 1, k);
                    nb.km = src_row(ps, t - 1, j, k - 1);
                    nb.kp = src_row(ps, t - 1, j, k + 1);
                    nb.r = kern_at(ps->rhs, 0, j, k);
                    kern__jrow(o, src_row(ps, t - 1, j, k), &nb, il, ih, c, c2,
                               t == T ? flags : inner);
                    if (t < T || ps->ends) {
                        /* The next level reads the ghost columns too, and
                         * so does the next pass. */
                        o[0] = *kern_at(in, 0, j, k);
                        o[ni + 1] = *kern_at(in, ni + 1, j, k);
                    }
                    if (t == T && ps->ends)
                        ghost_rows_beside(ps, j, k);
                }
            }
        }
    }
    kern__fence(flags);
}

int kern_jacobi_step(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                     double c, double c2, const struct kern_plan *p)
{
    struct pass ps;

    if (check3(out, u, rhs) != 0 || p == NULL)
        return -EINVAL;
    ps.in = u;
    ps.out = out;
    ps.rhs = rhs;
    ps.steps = 1;
    ps.rs = 0;
    ps.rows = 0;
    ps.ring = NULL;
    ps.ends = 0;
    run_pass(&ps, c, c2, p->jac_rows < 1 ? 1 : p->jac_rows, p->flags);
    return 0;
}

/* The scratch planes of passes of up to ps->steps sweeps over u's rows in
 * blocks of block rows (none for one sweep).  0, or -ENOMEM. */
static int pass_ring(struct pass *ps, const struct kern_box *u, int block)
{
    size_t len;

    ps->rs = ((size_t)u->ni + 2 + 7) & ~(size_t)7;
    ps->rows = block + 2 * (ps->steps - 1);
    ps->ring = NULL;
    if (ps->steps < 2)
        return 0;
    len = (size_t)(ps->steps - 1) * 3 * (size_t)ps->rows * ps->rs * sizeof(double);
    ps->ring = aligned_alloc(64, (len + 63) & ~(size_t)63);
    return ps->ring != NULL ? 0 : -ENOMEM;
}

/* The passes of kern_jacobi_run; the result is left in *res (u or tmp).
 * even: split the sweeps into an even number of passes when that is
 * possible, so that the result lands in u without a copy. */
static int
jacobi_passes(struct kern_box *u, struct kern_box *tmp, const struct kern_box *rhs, double c,
              double c2, int iters, const struct kern_plan *p, int even, struct kern_box **res)
{
    struct pass ps;
    struct kern_box *src = u, *dst = tmp;
    int T, block, npass, done = 0;

    *res = u;
    if (check3(tmp, u, rhs) != 0 || p == NULL || iters < 0)
        return -EINVAL;
    if (iters == 0)
        return 0;
    T = p->jac_steps < 1 ? 1 : p->jac_steps;
    if (T > iters)
        T = iters;
    block = p->jac_rows < 1 ? 1 : p->jac_rows;

    /* Passes alternate u -> tmp -> u; an even number of them leaves the
     * result in u without a copy, so split one more pass when that is
     * possible. */
    npass = (iters + T - 1) / T;
    if (even && npass % 2 != 0 && npass < iters)
        npass++;

    ps.in = NULL;
    ps.rhs = rhs;
    ps.steps = T;
    if (pass_ring(&ps, u, block) != 0)
        return -ENOMEM;
    ps.ends = 1; /* check3: tmp and u are distinct */
    tmp->oi = u->oi;
    tmp->oj = u->oj;
    tmp->ok = u->ok;

    for (int n = 0; n < npass; n++) {
        struct kern_box *x;
        /* Spread iters over the passes; none gets more than T. */
        int steps = (iters - done) / (npass - n) + ((iters - done) % (npass - n) != 0);

        ps.in = src;
        ps.out = dst;
        ps.steps = steps;
        run_pass(&ps, c, c2, block, p->flags);
        ps.ends = 0; /* both boxes hold the ghosts now */
        done += steps;
        x = src;
        src = dst;
        dst = x;
    }
    *res = src;
    free(ps.ring);
    return 0;
}

int kern_jacobi_run(struct kern_box *u, struct kern_box *tmp, const struct kern_box *rhs,
                    double c, double c2, int iters, const struct kern_plan *p)
{
    struct kern_box *res;
    int rc = jacobi_passes(u, tmp, rhs, c, c2, iters, p, 1, &res);

    if (rc == 0 && res != u)
        (void)kern_box_copy(u, res);
    return rc;
}

int kern_jacobi_run_swap(struct kern_box **u, struct kern_box **tmp, const struct kern_box *rhs,
                         double c, double c2, int iters, const struct kern_plan *p)
{
    struct kern_box *res, *x;
    int rc;

    if (u == NULL || tmp == NULL)
        return -EINVAL;
    if ((rc = jacobi_passes(*u, *tmp, rhs, c, c2, iters, p, 0, &res)) == 0 && res != *u) {
        x = *u;
        *u = *tmp;
        *tmp = x;
    }
    return rc;
}
