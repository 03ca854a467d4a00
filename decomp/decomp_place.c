/*
 * decomp_place.c: the one entry point that places a grid by any method of
 * seed 001 chapter 4, the Hilbert order of seed 000 or the ORB of seed 003
 * section 9.3. It holds no method itself: it checks the inputs once so each
 * method file can trust them, and hands the grid to the file that owns the
 * method.
 */
#include "decomp.h"
#include "decomp_int.h"

int
decomp_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner,
             struct decomp_box *box)
{
    int rc = decomp_grid_check(g);

    if (rc < 0)
        return rc;
    if ((rc = decomp__spec_check(g, s)) < 0)
        return rc;
    if (owner == NULL)
        return -EINVAL;

    switch (s->method) {
    case DECOMP_ROW:
        return decomp__row_place(g, s, owner, box);
    case DECOMP_POINT:
        return decomp__point_place(g, s, owner);
    case DECOMP_HILBERT:
        return decomp__hilbert_place(g, s, owner);
    case DECOMP_INTERLEAVED:
        return decomp__interleaved_place(g, s, owner);
    case DECOMP_SCATTER:
        return decomp__scatter_place(g, s, owner);
    case DECOMP_BLOCK:
    case DECOMP_BRBD:
    case DECOMP_FBRD:
    case DECOMP_PHD:
    case DECOMP_ORB:
        return decomp__tree_place(g, s, owner, box);
    default:
        return -EINVAL;
    }
}
