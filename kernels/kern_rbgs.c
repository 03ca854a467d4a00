/*
 * kern_rbgs.c - red-black Gauss-Seidel, the 7-point kernel of seed 000.
 *
 * The reference is the thesis's untiled RedBlack3D (Figure 2), one call per
 * colour; the tiled kernel is its auto-blocked Figure 5, called once per
 * tile per colour by the Autoblocker (s3.7, j tiles outermost).  Colours
 * are by global parity (kern.h), so any box at any offset agrees.
 *
 * The fast kernel fuses the two colours of an iteration into one pass over
 * memory: a red point reads only black points and a black point only red
 * ones, so once red is done on planes k-2..k, black can run on plane k-1
 * while those planes are still in cache.  Within the plan's tiles black
 * trails red by one plane, one row and one column, so a black point never
 * waits for red from a later tile; further iterations can trail the same
 * way (temporal blocking, plan->rb_steps).  Every point still reads exactly
 * the values it reads in the reference order, hence bit-identical results.
 *
 * The thesis's per-colour tiles are kept beside the fused kernel as the
 * reference scheme; the fused kernel in whole-row tiles and line padding is
 * the fast one (docs/performance.md, Kernels, has both).
 */
#include "kern_int.h"

#include <errno.h>

static int check2(const struct kern_box *u, const struct kern_box *rhs, int colour)
{
    if (kern__same_shape(u, rhs) != 0 || (colour != KERN_RED && colour != KERN_BLACK))
        return -EINVAL;
    return 0;
}

int kern_rbgs_ref(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                  int colour)
{
    if (check2(u, rhs, colour) != 0)
        return -EINVAL;
    for (int k = 1; k <= u->nk; k++) {
        for (int j = 1; j <= u->nj; j++) {
            double *a = kern_at(u, 0, j, k);
            const double *ujm = kern_at(u, 0, j - 1, k), *ujp = kern_at(u, 0, j + 1, k);
            const double *ukm = kern_at(u, 0, j, k - 1), *ukp = kern_at(u, 0, j, k + 1);
            const double *r = kern_at(rhs, 0, j, k);

            for (int i = kern__first(u, 1, j, k, colour); i <= u->ni; i += 2)
                a[i] = kern__point(a[i - 1], a[i + 1], ujm[i], ujp[i], ukm[i], ukp[i], r[i], c,
                                   c2);
        }
    }
    return 0;
}

/* One row of one colour over i0..i1. */
static void rb_row(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                   int colour, int i0, int i1, int j, int k, unsigned flags)
{
    struct kern__nbr nb;
    int first = kern__first(u, i0, j, k, colour);

    if (first > i1)
        return;
    kern__nbr_box(&nb, u, rhs, j, k);
    kern__rbrow(kern_at(u, 0, j, k), &nb, i0, i1, first, c, c2, flags);
}

int kern_rbgs_tile(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                   int colour, int i0, int i1, int j0, int j1, unsigned flags)
{
    if (check2(u, rhs, colour) != 0)
        return -EINVAL;
    if (i0 < 1 || i1 > u->ni || i0 > i1 || j0 < 1 || j1 > u->nj || j0 > j1)
        return -EINVAL;
    flags &= KERN_PLAN_SIMD;
    for (int k = 1; k <= u->nk; k++)
        for (int j = j0; j <= j1; j++)
            rb_row(u, rhs, c, c2, colour, i0, i1, j, k, flags);
    return 0;
}

int kern_rbgs_sweep(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                    int colour, const struct kern_plan *p)
{
    if (check2(u, rhs, colour) != 0 || p == NULL || p->tile_i < 1 || p->tile_j < 1)
        return -EINVAL;
    for (int jj = 1; jj <= u->nj; jj += p->tile_j) {
        int j1 = jj + p->tile_j - 1 < u->nj ? jj + p->tile_j - 1 : u->nj;

        for (int ii = 1; ii <= u->ni; ii += p->tile_i) {
            int i1 = ii + p->tile_i - 1 < u->ni ? ii + p->tile_i - 1 : u->ni;

            (void)kern_rbgs_tile(u, rhs, c, c2, colour, ii, i1, jj, j1, p->flags);
        }
    }
    return 0;
}

/*
 * Half-sweeps h = 0 .. 2*iters-1 (red, black, red, ...) over one tile, in
 * one pass over memory.  Half-sweep h runs on the tile shifted back by h in
 * i and in j (clipped at 1, and extended to ni and nj in the last tiles),
 * on plane k - h while half-sweep 0 is on plane k, and on row j - h while
 * half-sweep 0 is on row j.  A point read by half-sweep h belongs to the
 * other colour, whose last update is half-sweep h-1 and next is h+1; the
 * shifts make h-1's region, plane and row one ahead of h's and h+1's one
 * behind, so every point reads exactly the values it reads when the
 * colours sweep the whole box one after the other (kern_rbgs_ref), in this
 * tile and across tiles, which run in order.  The shifted regions of each
 * half-sweep partition the interior as the tiles do.  With iters = 1 this
 * is the red-black fusion; more iterations are temporal blocking.
 */
static void fused_tile(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                       int i0, int i1, int j0, int j1, int iters, unsigned flags)
{
    int ni = u->ni, nj = u->nj, nk = u->nk, halves = 2 * iters;

    for (int kk = 1; kk <= nk + halves - 1; kk++) {
        for (int j = j0; j <= j1 + halves - 1; j++) {
            for (int h = 0; h < halves; h++) {
                int k = kk - h, row = j - h;
                int lo_j = j0 - h > 1 ? j0 - h : 1, hi_j = j1 == nj ? nj : j1 - h;
                int lo_i = i0 - h > 1 ? i0 - h : 1, hi_i = i1 == ni ? ni : i1 - h;

                if (k < 1 || k > nk || row < lo_j || row > hi_j || lo_i > hi_i)
                    continue;
                rb_row(u, rhs, c, c2, h % 2 ? KERN_BLACK : KERN_RED, lo_i, hi_i, row, k, flags);
            }
        }
    }
}

int kern_rbgs_run(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                  int iters, const struct kern_plan *p)
{
    int steps;

    if (check2(u, rhs, KERN_RED) != 0 || p == NULL || iters < 0 || p->tile_i < 1
        || p->tile_j < 1)
        return -EINVAL;
    steps = p->rb_steps < 1 ? 1 : p->rb_steps;
    for (int done = 0; done < iters; done += steps) {
        int now = iters - done < steps ? iters - done : steps;

        for (int jj = 1; jj <= u->nj; jj += p->tile_j) {
            int j1 = jj + p->tile_j - 1 < u->nj ? jj + p->tile_j - 1 : u->nj;

            for (int ii = 1; ii <= u->ni; ii += p->tile_i) {
                int i1 = ii + p->tile_i - 1 < u->ni ? ii + p->tile_i - 1 : u->ni;

                fused_tile(u, rhs, c, c2, ii, i1, jj, j1, now, p->flags & KERN_PLAN_SIMD);
            }
        }
    }
    return 0;
}
