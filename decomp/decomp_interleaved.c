/*
 * decomp_interleaved.c: interleaved rows (slabs in 3D), seed 001 section 4.4.
 * Homogeneous owners get row r mod p. Heterogeneous ones follow the thesis's
 * pattern: per cycle one row to every owner with quota left, repeated until
 * owner i has its quota q_i, and the pattern repeats down the grid; speeds
 * (4,2,2,1) give 0,1,2,3,0,1,2,0,0. Integral speeds are their own quotas
 * (divided by their gcd); other speeds have no natural period, so the quotas
 * are the row counts themselves and the pattern spans the whole grid.
 * The total per owner is capped at its share of the rows (within one row,
 * by count: this method deals whole rows and does not look at weights); a
 * row whose pattern owner is full goes to the next owner in the pattern with
 * room, so a grid that is not a whole number of periods stays balanced.
 * Owners are dealt in speed order, fastest first, as the thesis sorts them
 * (and as its 4(p-1) message count assumes: with the order mixed, a fast
 * owner in the middle of the cycle gains neighbours on both sides).
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>
#include <stdlib.h>

#define MAX_PERIOD (1u << 24)

static uint64_t
gcd64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int
decomp__interleaved_place(const struct decomp_grid *g, const struct decomp_spec *s,
                          int32_t *owner)
{
    int a = decomp__slab_axis(g);
    uint32_t rows = g->dim[a];
    int p = s->nowners;

    if ((uint32_t)p > rows)
        return -ERANGE;

    uint32_t *cap = calloc((size_t)p, sizeof *cap);
    int32_t *by_speed = malloc((size_t)p * sizeof *by_speed);
    uint32_t *quota = calloc((size_t)p, sizeof *quota);
    double *target = malloc(((size_t)p + 1) * sizeof *target);
    int32_t *row_owner = malloc(rows * sizeof *row_owner);
    int32_t *pattern = NULL;
    int rc = -ENOMEM;
    if (cap == NULL || by_speed == NULL || quota == NULL || target == NULL || row_owner == NULL)
        goto done;
    decomp__sort_by_speed(s->speed, by_speed, p);

    decomp__targets(s->speed, NULL, p, (double)rows, target);
    struct decomp__cursor cur = { target, p, 0, 0 };
    for (uint32_t r = 0; r < rows; r++)
        cap[decomp__cursor_take(&cur, 1.0)]++;

    /* Quotas per period: the speeds when they are small integers. */
    bool integral = true;
    uint64_t div = 0, period = 0;
    for (int i = 0; i < p && integral; i++) {
        double v = s->speed[i];
        if (v != floor(v) || v > MAX_PERIOD)
            integral = false;
        else
            div = gcd64(div, (uint64_t)v);
    }
    if (integral) {
        for (int i = 0; i < p; i++)
            period += (uint64_t)s->speed[i] / div;
        if (period > MAX_PERIOD)
            integral = false;
    }
    if (integral) {
        for (int i = 0; i < p; i++)
            quota[i] = (uint32_t)((uint64_t)s->speed[i] / div);
    } else {
        period = rows;
        for (int i = 0; i < p; i++)
            quota[i] = cap[i];
    }

    pattern = malloc(period * sizeof *pattern);
    if (pattern == NULL)
        goto done;
    size_t len = 0;
    while (len < period) {
        for (int r = 0; r < p; r++) {
            int i = by_speed[r];
            if (quota[i] > 0) {
                pattern[len++] = i;
                quota[i]--;
            }
        }
    }

    for (uint32_t r = 0; r < rows; r++) {
        size_t k = r % period;
        /* Some owner with room appears within one period: every owner with
         * a non-zero cap has a non-zero quota, and caps sum to the rows. */
        while (cap[pattern[k]] == 0)
            k = (k + 1) % period;
        row_owner[r] = pattern[k];
        cap[pattern[k]]--;
    }

    size_t n = decomp_grid_cells(g);
    uint32_t xyz[DECOMP_MAX_DIM];
    for (size_t c = 0; c < n; c++) {
        decomp__coords(g, c, xyz);
        owner[c] = row_owner[xyz[a]];
    }
    rc = 0;
done:
    free(pattern);
    free(row_owner);
    free(target);
    free(quota);
    free(by_speed);
    free(cap);
    return rc;
}
