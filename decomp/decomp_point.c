/*
 * decomp_point.c: contiguous point, seed 001 section 4.2. Cells are taken in
 * row-major order, the slowest axis being the one slabs are cut across, so
 * with p dividing the rows it reduces to contiguous row as the thesis says.
 * Each owner gets one contiguous range whose boundaries sit at the cell
 * prefix nearest its target (within one cell). The thesis's lookup is the
 * start index of each range (4p bytes) and a binary search.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>

int
decomp__point_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner)
{
    int p = s->nowners;
    double *target = malloc(((size_t)p + 1) * sizeof *target);

    if (target == NULL)
        return -ENOMEM;
    decomp__targets(s->speed, NULL, p, decomp__total_weight(g), target);

    /* Axis order: slow = slab axis, then the others with the lower index
     * varying faster. */
    int slow = decomp__slab_axis(g);
    int ax[2], k = 0;
    for (int a = 0; a < DECOMP_MAX_DIM; a++)
        if (a != slow)
            ax[k++] = a;
    int fast = ax[0], mid = ax[1];

    struct decomp__cursor cur = { target, p, 0, 0 };
    uint32_t xyz[DECOMP_MAX_DIM];
    for (xyz[slow] = 0; xyz[slow] < g->dim[slow]; xyz[slow]++) {
        for (xyz[mid] = 0; xyz[mid] < g->dim[mid]; xyz[mid]++) {
            for (xyz[fast] = 0; xyz[fast] < g->dim[fast]; xyz[fast]++) {
                size_t c = decomp__index(g, xyz[0], xyz[1], xyz[2]);
                owner[c] = decomp__cursor_take(&cur, decomp__w(g, c));
            }
        }
    }
    free(target);
    return 0;
}
