/*
 * decomp_block.c: homogeneous block, seed 001 section 4.5. The thesis uses it
 * only when p is a perfect square and sqrt(p) divides the sides; here p is
 * factored into the most square (2D) or cubic (3D) grid of parts, the largest
 * factor along the longest side, so any p has a block layout and a prime p
 * gives strips. Speeds are ignored on purpose: the method's point is equal
 * blocks, and the cost model shows what that does to heterogeneous hosts.
 * With weights, each cut still balances weight, so blocks stay equal in work.
 */
#include "decomp.h"
#include "decomp_int.h"

enum { BLOCK_ROOT, BLOCK_GRID };

int
decomp__block_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                     struct decomp__split *out)
{
    if (sp->tag == BLOCK_ROOT) {
        struct decomp__span root = *sp;
        decomp__factor(t, sp, sp->count, root.shape);
        /* More parts than cells along an axis cannot be equal blocks. */
        if (!t->exact)
            for (int a = 0; a < DECOMP_MAX_DIM; a++)
                if ((double)root.shape[a] > sp->hi[a] - sp->lo[a])
                    return -ERANGE;
        decomp__grid_split(t, &root, true, BLOCK_GRID, out);
        return 0;
    }
    decomp__grid_split(t, sp, true, BLOCK_GRID, out);
    return 0;
}
