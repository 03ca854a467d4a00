/*
 * decomp_orb.c: weighted orthogonal recursive bisection, seed 003 section
 * 9.3. Each region is bisected by a plane across its longest extent so the
 * weight (measured cost) on each side matches the speed of the owners sent
 * there: the first ceil(k/2) owners in the caller's order go left. Unlike
 * the thesis's block methods, ORB neither sorts owners nor ignores weights:
 * it is the method for irregular loads, re-run as loads are measured.
 */
#include "decomp.h"
#include "decomp_int.h"

int
decomp__orb_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                   struct decomp__split *out)
{
    out->n1 = (sp->count + 1) / 2;
    out->axis = decomp__longest_axis(t, sp);
    out->frac = decomp__span_speed(t, sp->first, out->n1) /
                decomp__span_speed(t, sp->first, sp->count);
    return 0;
}
