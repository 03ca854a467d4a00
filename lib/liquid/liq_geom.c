/*
 * liq_geom.c - the quanta grid: how a job's grid is cut into quanta, and
 * which quantum lies beyond each face of another; and the median that
 * turns a quantum's (or a ring round's) timings into one figure.
 */
#include "liq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How far a quantum of extents e[] is from a cube: longest over shortest. */
static double
liq_aspect(const double e[3])
{
    double lo = e[0], hi = e[0];

    for (int a = 1; a < 3; a++) {
        if (e[a] < lo)
            lo = e[a];
        if (e[a] > hi)
            hi = e[a];
    }
    return hi / lo;
}

int
liq_geom_make(struct liq_geom *g, const int n[3], int nquanta)
{
    double best_aspect = 0, best_cut = 0;
    int found = 0;

    if (g == NULL || n == NULL || nquanta < 1 || nquanta > LIQ_MAX_QUANTA)
        return -EINVAL;
    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || n[a] > LIQ_MAX_EXTENT)
            return -EINVAL;
    memset(g, 0, sizeof(*g));
    for (int qx = 1; qx <= nquanta; qx++) {
        if (nquanta % qx != 0 || qx > n[0])
            continue;
        for (int qy = 1; qy <= nquanta / qx; qy++) {
            int qz;
            double e[3], cut, aspect;

            if ((nquanta / qx) % qy != 0 || qy > n[1])
                continue;
            qz = nquanta / qx / qy;
            if (qz > n[2])
                continue;
            e[0] = (double)n[0] / qx;
            e[1] = (double)n[1] / qy;
            e[2] = (double)n[2] / qz;
            aspect = liq_aspect(e);
            /* Cut faces: each interior cut plane normal to an axis. */
            cut = (double)(qx - 1) * n[1] * n[2] + (double)(qy - 1) * n[0] * n[2]
                  + (double)(qz - 1) * n[0] * n[1];
            if (!found || aspect < best_aspect - 1e-12 ||
                (aspect <= best_aspect + 1e-12 && cut < best_cut)) {
                found = 1;
                best_aspect = aspect;
                best_cut = cut;
                g->q[0] = qx;
                g->q[1] = qy;
                g->q[2] = qz;
            }
        }
    }
    if (!found)
        return -ERANGE;
    memcpy(g->n, n, sizeof(g->n));
    g->nquanta = nquanta;
    return 0;
}

void
liq_quantum_extent(const struct liq_geom *g, int id, int lo[3], int hi[3])
{
    int r[3];

    r[0] = id % g->q[0];
    r[1] = id / g->q[0] % g->q[1];
    r[2] = id / g->q[0] / g->q[1];
    for (int a = 0; a < 3; a++) {
        lo[a] = (int)((long long)r[a] * g->n[a] / g->q[a]);
        hi[a] = (int)((long long)(r[a] + 1) * g->n[a] / g->q[a]);
    }
}

int
liq_quantum_neighbour(const struct liq_geom *g, int id, int dir)
{
    int r[3], a = dir / 2;

    r[0] = id % g->q[0];
    r[1] = id / g->q[0] % g->q[1];
    r[2] = id / g->q[0] / g->q[1];
    r[a] += dir % 2 == 0 ? -1 : 1;
    if (r[a] < 0 || r[a] >= g->q[a])
        return -1;
    return r[0] + g->q[0] * (r[1] + g->q[1] * r[2]);
}

void
liq_geom_max_extent(const struct liq_geom *g, int ext[3])
{
    for (int a = 0; a < 3; a++)
        ext[a] = (g->n[a] + g->q[a] - 1) / g->q[a];
}

double
liq_spacing(const int n[3])
{
    int m = n[0];

    if (n[1] > m)
        m = n[1];
    if (n[2] > m)
        m = n[2];
    return 1.0 / (m + 1);
}

void
liq_coeffs(const int n[3], double *c, double *c2)
{
    double h = liq_spacing(n);

    *c = 1.0 / 6.0;
    *c2 = h * h;
}

int
liq_quantum_heavy(const struct liq_geom *g, int id)
{
    int lo[3], hi[3];

    /* An axis of one point (a 2D grid's z) does not halve: without this
     * no quantum of a 2D grid would be heavy. */
    liq_quantum_extent(g, id, lo, hi);
    for (int a = 0; a < 3; a++)
        if (g->n[a] > 1 && lo[a] >= g->n[a] / 2)
            return 0;
    return 1;
}

static int
liq_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
liq_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(double), liq_cmp_double);
    return v[n / 2];
}
