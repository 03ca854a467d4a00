/*
 * liq_region.c - regions: the boxes of adjacent quanta a worker sweeps as
 * one (liq.h).  Pure: the same placement gives every worker the same cut.
 */
#include "liq.h"

#include <errno.h>
#include <stdlib.h>

/* Does quantum id need a point of a quantum another worker owns? */
static int
liq_needs_remote(const struct liq_geom *g, const int *owner, int depth, int id,
                 struct liq_patch **buf, int *cap)
{
    int n = liq_halo_patches(g, depth, id, *buf, *cap);

    if (n > *cap) {
        struct liq_patch *x = realloc(*buf, (size_t)n * sizeof(*x));

        if (x == NULL)
            return -ENOMEM;
        *buf = x;
        *cap = n;
        n = liq_halo_patches(g, depth, id, *buf, *cap);
    }
    for (int i = 0; i < n; i++)
        if (owner[(*buf)[i].src] != owner[id])
            return 1;
    return 0;
}

/* Are the quanta [x0,x1) x [y0,y1) x [z0,z1) all free and of class c? */
static int
liq_fits(const struct liq_geom *g, const int *region, const int *cls, int c, int x0, int x1,
         int y0, int y1, int z0, int z1)
{
    for (int z = z0; z < z1; z++)
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                int id = x + g->q[0] * (y + g->q[1] * z);

                if (region[id] >= 0 || cls[id] != c)
                    return 0;
            }
    return 1;
}

int
liq_regions(const struct liq_geom *g, const int *owner, int depth, int heavy, int *region,
            struct liq_region_box *out)
{
    int *cls = malloc((size_t)g->nquanta * sizeof(int)), n = 0, cap = 0;
    char *remote = malloc((size_t)g->nquanta);
    struct liq_patch *buf = NULL;

    if (cls == NULL || remote == NULL) {
        free(cls);
        free(remote);
        return -ENOMEM;
    }
    /*
     * A quantum's class: its owner, heavy or not, and with g->apart
     * whether it needs another's points.  Without, a region may hold
     * quanta of both kinds: it sweeps its inner boxes while the ghosts
     * travel, so the overlap stays, and fewer boxes sweep fewer halo
     * points between a worker's own regions (docs/decisions.md).
     */
    for (int id = 0; id < g->nquanta; id++) {
        int rem = liq_needs_remote(g, owner, depth, id, &buf, &cap);
        int hv = heavy > 1 && liq_quantum_heavy(g, id);

        if (rem < 0) {
            free(buf);
            free(cls);
            free(remote);
            return -ENOMEM;
        }
        remote[id] = (char)rem;
        cls[id] = owner[id] * 4 + (g->apart ? rem * 2 : 0) + hv;
        region[id] = -1;
    }
    free(buf);
    for (int id = 0; id < g->nquanta; id++) {
        int c = cls[id], q0[3], q1[3];
        struct liq_region_box *r = &out[n];

        if (region[id] >= 0)
            continue;
        q0[0] = id % g->q[0];
        q0[1] = id / g->q[0] % g->q[1];
        q0[2] = id / g->q[0] / g->q[1];
        for (int a = 0; a < 3; a++)
            q1[a] = q0[a] + 1;
        while (q1[0] < g->q[0] &&
               liq_fits(g, region, cls, c, q1[0], q1[0] + 1, q0[1], q1[1], q0[2], q1[2]))
            q1[0]++;
        while (q1[1] < g->q[1] &&
               liq_fits(g, region, cls, c, q0[0], q1[0], q1[1], q1[1] + 1, q0[2], q1[2]))
            q1[1]++;
        while (q1[2] < g->q[2] &&
               liq_fits(g, region, cls, c, q0[0], q1[0], q0[1], q1[1], q1[2], q1[2] + 1))
            q1[2]++;
        r->remote = 0;
        for (int z = q0[2]; z < q1[2]; z++)
            for (int y = q0[1]; y < q1[1]; y++)
                for (int x = q0[0]; x < q1[0]; x++) {
                    region[x + g->q[0] * (y + g->q[1] * z)] = n;
                    r->remote |= remote[x + g->q[0] * (y + g->q[1] * z)];
                }
        r->owner = owner[id];
        r->heavy = c % 2;
        for (int a = 0; a < 3; a++) {
            int lo[3], hi[3], last;

            r->q0[a] = q0[a];
            r->q1[a] = q1[a];
            liq_quantum_extent(g, id, lo, hi);
            r->lo[a] = lo[a];
            /* The last quantum along this axis ends the region. */
            last = id + (q1[a] - 1 - q0[a]) * (a == 0 ? 1 : a == 1 ? g->q[0] : g->q[0] * g->q[1]);
            liq_quantum_extent(g, last, lo, hi);
            r->hi[a] = hi[a];
        }
        n++;
    }
    free(cls);
    free(remote);
    return n;
}
