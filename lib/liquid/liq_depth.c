/*
 * liq_depth.c - how deep a halo to run with (seed 000's deep halos, step
 * 4 of the liquid runtime): the depth a block of sweeps needs, the points
 * a depth makes the grid's boxes sweep per point they own, and the
 * deepest halo whose redundant points stay within LIQ_HALO_SLACK.  The
 * master chooses with it before the job and after the first placement;
 * it relies on the halo's geometry (liq_halo.c) and the regions' cut
 * (liq_region.c), and is pure.
 */
#include "liq.h"

#include <stdlib.h>
#include <string.h>

int
liq_halo_depth(enum liq_kernel k, int sweeps)
{
    return k == LIQ_RBGS || k == LIQ_USER_RB ? 2 * sweeps : sweeps;
}

double
liq_halo_work(const struct liq_geom *g, enum liq_kernel k, int sweeps, const int *owner,
              int heavy)
{
    double own = 0, all = 0;
    int depth = liq_halo_depth(k, sweeps), n = g->nquanta;
    /* A description's block is depth phases, each on the box the later
     * ones still read (liq_usweep.c).  With levels and a reach of 1 it is
     * priced as that trapezoid, as the built-in Jacobi's sweeps are.  In
     * place (red-black), as whole boxes: its phases shrink too, but the
     * deeper halos that price allows ran slower (docs/decisions.md). */
    int user = liq_kernel_user(k), phases = user ? depth : sweeps;
    int trap = k == LIQ_JACOBI ||
               (k == LIQ_USER && g->reach[0] <= 1 && g->reach[1] <= 1 && g->reach[2] <= 1);
    struct liq_region_box *r = NULL;
    int *of = NULL;

    if (owner != NULL) {
        r = malloc((size_t)g->nquanta * sizeof(*r));
        of = malloc((size_t)g->nquanta * sizeof(int));
        if (r == NULL || of == NULL || (n = liq_regions(g, owner, depth, heavy, of, r)) < 0) {
            free(r);
            free(of);
            return -1.0;
        }
    }
    for (int x = 0; x < n; x++) {
        int lo[3], hi[3], ext[6];
        double o = 1, e = 1;

        if (r != NULL) {
            memcpy(lo, r[x].lo, sizeof(lo));
            memcpy(hi, r[x].hi, sizeof(hi));
        } else {
            liq_quantum_extent(g, x, lo, hi);
        }
        liq_box_halo(g, lo, hi, depth, ext);
        for (int a = 0; a < 3; a++)
            o *= hi[a] - lo[a];
        e = 0;
        for (int s = 1; s <= phases; s++) {
            double v = 1;

            for (int a = 0; a < 3; a++) {
                int down = ext[2 * a], up = ext[2 * a + 1];

                if (trap) {
                    down = liq_trapezoid_layers(down, phases, s);
                    up = liq_trapezoid_layers(up, phases, s);
                }
                v *= hi[a] - lo[a] + down + up;
            }
            e += v / phases;
        }
        own += o;
        all += e;
    }
    free(r);
    free(of);
    return own > 0 ? all / own : 1.0;
}

int
liq_halo_auto(const struct liq_geom *g, enum liq_kernel k, int max, const int *owner, int heavy)
{
    int best = 1;

    if (max > LIQ_MAX_HALO)
        max = LIQ_MAX_HALO;
    for (int h = 2; h <= max; h++) {
        double work = liq_halo_work(g, k, h, owner, heavy);

        if (work < 0 || work > 1.0 + LIQ_HALO_SLACK)
            break;
        best = h;
    }
    return best;
}
