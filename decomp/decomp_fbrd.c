/*
 * decomp_fbrd.c: fair binary recursive decomposition, seed 001 section 4.8
 * (thesis Fig. 22). The sorted owners are dealt alternately to two lists
 * until the next one would push its list over half the total; the rest go,
 * in order, to the list with the lower total (a tie to the first). The cut
 * always crosses the region's longest extent (ties: the lower axis, so the
 * first cut of a square grid is vertical). Each list keeps descending order.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <string.h>

int
decomp__fbrd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                    struct decomp__split *out)
{
    const double *speed = t->s->speed;
    int32_t *ord = t->order + sp->first;
    int32_t *side = t->scratch;     /* 0 = left list, 1 = right list */
    int n = sp->count;
    double total = decomp__span_speed(t, sp->first, n);
    double half = total / 2, sum[2] = { 0, 0 };
    int i = 0;

    for (; i < n; i++) {
        int l = i % 2;
        if (sum[l] + speed[ord[i]] > half)
            break;
        side[i] = l;
        sum[l] += speed[ord[i]];
    }
    for (; i < n; i++) {
        int l = sum[1] < sum[0];
        side[i] = l;
        sum[l] += speed[ord[i]];
    }

    /* Stable partition: left list first, both keep their order. */
    int32_t *tmp = t->scratch2;
    int k = 0;
    for (int j = 0; j < n; j++)
        if (side[j] == 0)
            tmp[k++] = ord[j];
    out->n1 = k;
    for (int j = 0; j < n; j++)
        if (side[j] == 1)
            tmp[k++] = ord[j];
    memcpy(ord, tmp, (size_t)n * sizeof *ord);

    out->axis = decomp__longest_axis(t, sp);
    out->frac = sum[0] / total;
    return 0;
}
