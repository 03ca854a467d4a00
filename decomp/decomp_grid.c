/*
 * decomp_grid.c: the grid and the inputs every method shares: validation,
 * weights, owner speeds and the targets the rounding rule aims at (seed 001
 * (6.8): owner i's share is W * s_i / S).
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[DECOMP_NMETHODS] = {
    [DECOMP_ROW] = "row",         [DECOMP_POINT] = "point",
    [DECOMP_HILBERT] = "hilbert", [DECOMP_INTERLEAVED] = "interleaved",
    [DECOMP_SCATTER] = "scatter", [DECOMP_BLOCK] = "block",
    [DECOMP_BRBD] = "brbd",       [DECOMP_FBRD] = "fbrd",
    [DECOMP_PHD] = "phd",         [DECOMP_ORB] = "orb",
};

const char *
decomp_method_name(enum decomp_method m)
{
    if ((unsigned)m >= DECOMP_NMETHODS)
        return "unknown";
    return method_names[m];
}

int
decomp_method_parse(const char *name, enum decomp_method *out)
{
    if (name == NULL || out == NULL)
        return -EINVAL;
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        if (strcmp(name, method_names[m]) == 0) {
            *out = (enum decomp_method)m;
            return 0;
        }
    }
    return -EINVAL;
}

int
decomp_method_has_boxes(enum decomp_method m)
{
    switch (m) {
    case DECOMP_ROW:
    case DECOMP_BLOCK:
    case DECOMP_BRBD:
    case DECOMP_FBRD:
    case DECOMP_PHD:
    case DECOMP_ORB:
        return 1;
    default:
        return 0;
    }
}

size_t
decomp_grid_cells(const struct decomp_grid *g)
{
    return (size_t)g->dim[0] * g->dim[1] * g->dim[2];
}

int
decomp_grid_check(const struct decomp_grid *g)
{
    if (g == NULL || (g->ndim != 2 && g->ndim != 3))
        return -EINVAL;
    for (int a = 0; a < DECOMP_MAX_DIM; a++) {
        if (g->dim[a] == 0)
            return -EINVAL;
        if (g->dim[a] > DECOMP_MAX_EXTENT)
            return -ERANGE;
    }
    if (g->ndim == 2 && g->dim[2] != 1)
        return -EINVAL;
    if (g->periodic & ~DECOMP_PERIODIC_ALL)
        return -EINVAL;
    /* Three factors below 2^21 cannot overflow size_t on a 64-bit host, but a
     * 32-bit one would: check in steps. */
    size_t xy = (size_t)g->dim[0] * g->dim[1];
    if (xy / g->dim[0] != g->dim[1] || xy > DECOMP_MAX_CELLS || g->dim[2] > DECOMP_MAX_CELLS / xy)
        return -ERANGE;
    if (g->weight != NULL) {
        size_t n = decomp_grid_cells(g);
        double sum = 0;
        for (size_t c = 0; c < n; c++) {
            double w = g->weight[c];
            if (!isfinite(w) || w < 0)
                return -EINVAL;
            sum += w;
        }
        if (!(sum > 0) || !isfinite(sum))
            return -EINVAL;
    }
    return 0;
}

int
decomp__spec_check(const struct decomp_grid *g, const struct decomp_spec *s)
{
    if (s == NULL || s->speed == NULL)
        return -EINVAL;
    if ((unsigned)s->method >= DECOMP_NMETHODS)
        return -EINVAL;
    if (s->nowners < 1 || s->nowners > DECOMP_MAX_OWNERS)
        return -EINVAL;
    if ((size_t)s->nowners > decomp_grid_cells(g))
        return -EINVAL;
    if (!isfinite(s->group_tol) || s->group_tol < 0 || s->group_tol >= 1)
        return -EINVAL;
    double sum = 0;
    for (int i = 0; i < s->nowners; i++) {
        if (!isfinite(s->speed[i]) || !(s->speed[i] > 0))
            return -EINVAL;
        sum += s->speed[i];
    }
    if (!isfinite(sum))
        return -EINVAL;
    return 0;
}

double
decomp__total_weight(const struct decomp_grid *g)
{
    size_t n = decomp_grid_cells(g);

    if (g->weight == NULL)
        return (double)n;
    double sum = 0;
    for (size_t c = 0; c < n; c++)
        sum += g->weight[c];
    return sum;
}

int
decomp__slab_axis(const struct decomp_grid *g)
{
    int best = g->ndim - 1;

    for (int a = g->ndim - 2; a >= 0; a--)
        if (g->dim[a] > g->dim[best])
            best = a;
    return best;
}

void
decomp__targets(const double *speed, const int32_t *idx, int n, double total, double *target)
{
    double S = 0, run = 0;

    for (int i = 0; i < n; i++)
        S += speed[idx ? idx[i] : i];
    target[0] = 0;
    for (int i = 0; i < n; i++) {
        run += speed[idx ? idx[i] : i];
        /* Dividing the running sum (rather than adding per-owner shares)
         * makes the last target exactly the total. */
        target[i + 1] = total * (run / S);
    }
    target[n] = total;
}

/* qsort has no context argument in C11; the comparison below needs the speed
 * array, so sorting goes through a small merge sort instead, which is also
 * stable and so deterministic without relying on qsort's tie order. */
static void
merge_sort(const double *speed, int32_t *a, int32_t *tmp, int n)
{
    if (n < 2)
        return;
    int h = n / 2;
    merge_sort(speed, a, tmp, h);
    merge_sort(speed, a + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        /* Descending speed; equal speeds keep their (ascending id) order. */
        if (speed[a[j]] > speed[a[i]])
            tmp[k++] = a[j++];
        else
            tmp[k++] = a[i++];
    }
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

void
decomp__sort_by_speed(const double *speed, int32_t *idx, int n)
{
    int32_t stackbuf[64];
    int32_t *tmp = n <= 64 ? stackbuf : malloc((size_t)n * sizeof *tmp);

    for (int i = 0; i < n; i++)
        idx[i] = i;
    if (tmp == NULL) {
        /* Insertion sort needs no memory; only reached when malloc fails. */
        for (int i = 1; i < n; i++) {
            int32_t v = idx[i];
            int j = i;
            while (j > 0 && speed[idx[j - 1]] < speed[v]) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
        return;
    }
    merge_sort(speed, idx, tmp, n);
    if (tmp != stackbuf)
        free(tmp);
}

int
decomp_loads(const struct decomp_grid *g, const int32_t *owner, int nowners, double *load)
{
    int rc = decomp_grid_check(g);

    if (rc < 0)
        return rc;
    if (owner == NULL || load == NULL || nowners < 1)
        return -EINVAL;
    size_t n = decomp_grid_cells(g);
    for (int i = 0; i < nowners; i++)
        load[i] = 0;
    for (size_t c = 0; c < n; c++) {
        if (owner[c] < 0 || owner[c] >= nowners)
            return -EINVAL;
        load[owner[c]] += decomp__w(g, c);
    }
    return 0;
}
