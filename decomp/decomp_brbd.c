/*
 * decomp_brbd.c: binary recursive block decomposition, seed 001 section 4.7
 * (thesis Fig. 20). Owners sorted by speed, descending; the ceil(p/2) fastest
 * go left (low coordinates), in the share of their speed sum; the cut axis
 * alternates strictly with depth, starting with a vertical cut (across x).
 * In 3D the cycle is x, y, z. In cell mode an axis only one cell thick is
 * skipped for the next in the cycle, since it cannot be cut.
 */
#include "decomp.h"
#include "decomp_int.h"

int
decomp__brbd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                    struct decomp__split *out)
{
    out->n1 = (sp->count + 1) / 2;
    out->axis = decomp__cycle_axis(t, sp);
    out->frac = decomp__span_speed(t, sp->first, out->n1) /
                decomp__span_speed(t, sp->first, sp->count);
    return 0;
}
