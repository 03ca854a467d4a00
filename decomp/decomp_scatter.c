/*
 * decomp_scatter.c: scatter, seed 001 section 4.1. Cells go to random owners
 * with counts (weights) proportional to speed: the cells are shuffled by a
 * Fisher-Yates pass driven by splitmix64 from the spec's seed, and the
 * shuffled sequence is cut into contiguous shares, each within one cell of
 * its target. Integer arithmetic only, so a seed gives the same layout on
 * every host. The thesis's lookup is a full m*n owner table: the owner array.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>

/* Uniform in [0, n) without modulo bias. */
static uint64_t
bounded(uint64_t *state, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;

    do
        r = decomp__rand(state);
    while (r >= limit);
    return r % n;
}

int
decomp__scatter_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner)
{
    size_t cells = decomp_grid_cells(g);
    int p = s->nowners;
    uint32_t *perm = malloc(cells * sizeof *perm);
    double *target = malloc(((size_t)p + 1) * sizeof *target);
    int rc = -ENOMEM;

    if (perm == NULL || target == NULL)
        goto done;
    uint64_t state = s->seed;
    for (size_t c = 0; c < cells; c++)
        perm[c] = (uint32_t)c;
    for (size_t c = cells - 1; c > 0; c--) {
        size_t j = (size_t)bounded(&state, (uint64_t)c + 1);
        uint32_t t = perm[c];
        perm[c] = perm[j];
        perm[j] = t;
    }
    decomp__targets(s->speed, NULL, p, decomp__total_weight(g), target);
    struct decomp__cursor cur = { target, p, 0, 0 };
    for (size_t r = 0; r < cells; r++)
        owner[perm[r]] = decomp__cursor_take(&cur, decomp__w(g, perm[r]));
    rc = 0;
done:
    free(target);
    free(perm);
    return rc;
}
