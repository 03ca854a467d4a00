/*
 * decomp_row.c: contiguous row (2D) or slab (3D), seed 001 section 4.3.
 * Whole slabs across the longest axis are the unit (rows on a square 2D
 * grid, as in the thesis; columns on a wide one). Owners take consecutive
 * slabs in id order, each boundary at the slab prefix nearest its target, so
 * a share is within one slab of W * s_i / S. The thesis's lookup is the start
 * slab of each owner (4p bytes); the box array holds exactly that.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>

int
decomp__row_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner,
                  struct decomp_box *box)
{
    int a = decomp__slab_axis(g);
    uint32_t nslab = g->dim[a];
    int p = s->nowners;

    /* With fewer slabs than owners the method degenerates into leaving owners
     * idle for no reason; the thesis gives every processor a row (m >= p). */
    if ((uint32_t)p > nslab)
        return -ERANGE;

    double *slabw = calloc(nslab, sizeof *slabw);
    double *target = malloc(((size_t)p + 1) * sizeof *target);
    int32_t *slab_owner = malloc(nslab * sizeof *slab_owner);
    int rc = -ENOMEM;
    if (slabw == NULL || target == NULL || slab_owner == NULL)
        goto done;

    size_t n = decomp_grid_cells(g);
    uint32_t xyz[DECOMP_MAX_DIM];
    double total = 0;
    for (size_t c = 0; c < n; c++) {
        decomp__coords(g, c, xyz);
        slabw[xyz[a]] += decomp__w(g, c);
    }
    for (uint32_t k = 0; k < nslab; k++)
        total += slabw[k];

    decomp__targets(s->speed, NULL, p, total, target);
    struct decomp__cursor cur = { target, p, 0, 0 };
    for (uint32_t k = 0; k < nslab; k++)
        slab_owner[k] = decomp__cursor_take(&cur, slabw[k]);

    for (size_t c = 0; c < n; c++) {
        decomp__coords(g, c, xyz);
        owner[c] = slab_owner[xyz[a]];
    }

    if (box != NULL) {
        for (int i = 0; i < p; i++) {
            for (int b = 0; b < DECOMP_MAX_DIM; b++) {
                box[i].lo[b] = 0;
                box[i].hi[b] = g->dim[b];
            }
            box[i].lo[a] = box[i].hi[a] = 0;
        }
        /* Slab owners are non-decreasing, so each owner's slabs are one run;
         * an owner with no slab keeps an empty box placed at the next start. */
        uint32_t k = 0;
        for (int i = 0; i < p; i++) {
            box[i].lo[a] = k;
            while (k < nslab && slab_owner[k] == i)
                k++;
            box[i].hi[a] = k;
        }
    }
    rc = 0;
done:
    free(slab_owner);
    free(target);
    free(slabw);
    return rc;
}
