/*
 * decomp_phd.c: partial homogeneous decomposition, seed 001 section 4.9
 * (thesis Figs. 24-26). Owners of equal speed form a group whose speed is
 * the members' sum; groups are sorted by that sum, descending. A list of
 * several groups is split into two sets by the digest's rule [R], the one
 * that reproduces the thesis's example: scan the groups adding to set 1
 * while it stays within half the list's total, stop at the first that would
 * not fit, continue adding to set 2 under the same test, and give each
 * remaining group to the set with the lower total (a tie to set 1). A single
 * group of k owners becomes a near-square (2D) or near-cubic (3D) grid of
 * blocks when k is composite, and splits 1 | k-1 when k is prime. Every cut
 * crosses the region's longest extent, which is what Successor() amounts to.
 *
 * "Equal" speed: measured speeds are never exactly equal, so the spec's
 * group_tol lets speeds within that relative distance of a group's fastest
 * member join it. Blocks inside a group still take shares by member speed,
 * so shares stay exact; with equal speeds they are the thesis's equal blocks.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>
#include <string.h>

enum { PHD_SETS, PHD_GROUP, PHD_GRID };

/* Group ids by speed, renumbered by group speed descending; the order array
 * is rearranged so each group's members are contiguous, groups in rank order. */
int
decomp__phd_prepare(struct decomp__tctx *t)
{
    const double *speed = t->s->speed;
    int p = t->s->nowners;
    int32_t *ord = t->order;         /* sorted by speed, descending */
    int32_t *gid = t->scratch;       /* creation id per position in ord */
    double *gsum = malloc((size_t)p * sizeof *gsum);
    int32_t *rank = malloc((size_t)p * sizeof *rank);
    int ng = 0;

    if (gsum == NULL || rank == NULL) {
        free(gsum);
        free(rank);
        return -ENOMEM;
    }
    double lead = 0;
    for (int i = 0; i < p; i++) {
        double v = speed[ord[i]];
        if (i == 0 || v < lead * (1 - t->s->group_tol)) {
            lead = v;
            gsum[ng++] = 0;
        }
        gid[i] = ng - 1;
        gsum[ng - 1] += v;
    }
    /* Rank groups by sum; creation order (speed descending) breaks ties.
     * Insertion sort: the group count is small next to the cells. */
    for (int g = 0; g < ng; g++)
        rank[g] = g;
    for (int i = 1; i < ng; i++)
        for (int j = i; j > 0 && gsum[rank[j]] > gsum[rank[j - 1]]; j--) {
            int32_t tmp = rank[j];
            rank[j] = rank[j - 1];
            rank[j - 1] = tmp;
        }
    int32_t *out = t->scratch2;
    int k = 0;
    for (int r = 0; r < ng; r++)
        for (int i = 0; i < p; i++)
            if (gid[i] == rank[r]) {
                out[k] = ord[i];
                t->group[ord[i]] = r;
                k++;
            }
    memcpy(ord, out, (size_t)p * sizeof *ord);
    free(rank);
    free(gsum);
    return 0;
}

static int
split_sets(struct decomp__tctx *t, const struct decomp__span *sp, struct decomp__split *out)
{
    int32_t *ord = t->order + sp->first;
    int n = sp->count;
    int32_t *gstart = t->scratch;    /* start of each group run in the span */
    int32_t *set = t->scratch2;      /* set of each group run */
    int ng = 0;

    for (int i = 0; i < n; i++)
        if (i == 0 || t->group[ord[i]] != t->group[ord[i - 1]])
            gstart[ng++] = i;
    gstart[ng] = n;
    double total = decomp__span_speed(t, sp->first, n), half = total / 2;
    double sum[2] = { 0, 0 };
    int g = 0;
    for (int s = 0; s < 2; s++) {
        for (; g < ng; g++) {
            double gs = decomp__span_speed(t, sp->first + gstart[g], gstart[g + 1] - gstart[g]);
            if (sum[s] + gs > half)
                break;
            set[g] = s;
            sum[s] += gs;
        }
    }
    for (; g < ng; g++) {
        int s = sum[1] < sum[0];
        set[g] = s;
        sum[s] += decomp__span_speed(t, sp->first + gstart[g], gstart[g + 1] - gstart[g]);
    }
    /* Reorder: set 1's groups, then set 2's, each in rank order. */
    int32_t *tmp = malloc((size_t)n * sizeof *tmp);
    if (tmp == NULL)
        return -ENOMEM;
    int k = 0;
    for (int s = 0; s < 2; s++) {
        for (int gg = 0; gg < ng; gg++) {
            if (set[gg] != s)
                continue;
            for (int i = gstart[gg]; i < gstart[gg + 1]; i++)
                tmp[k++] = ord[i];
        }
        if (s == 0)
            out->n1 = k;
    }
    memcpy(ord, tmp, (size_t)n * sizeof *ord);
    free(tmp);
    out->frac = sum[0] / total;
    out->axis = decomp__longest_axis(t, sp);
    out->tag1 = out->tag2 = PHD_SETS;
    return 0;
}

static void
split_group(struct decomp__tctx *t, const struct decomp__span *sp, struct decomp__split *out)
{
    if (decomp__is_prime(sp->count)) {
        out->n1 = 1;
        out->axis = decomp__longest_axis(t, sp);
        out->frac = decomp__span_speed(t, sp->first, 1) /
                    decomp__span_speed(t, sp->first, sp->count);
        out->tag1 = out->tag2 = PHD_GROUP;
        return;
    }
    struct decomp__span grid = *sp;
    decomp__factor(t, sp, sp->count, grid.shape);
    decomp__grid_split(t, &grid, false, PHD_GRID, out);
}

int
decomp__phd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                   struct decomp__split *out)
{
    switch (sp->tag) {
    case PHD_SETS: {
        const int32_t *ord = t->order + sp->first;
        if (t->group[ord[0]] != t->group[ord[sp->count - 1]])
            return split_sets(t, sp, out);
        split_group(t, sp, out);
        return 0;
    }
    case PHD_GROUP:
        split_group(t, sp, out);
        return 0;
    default:
        decomp__grid_split(t, sp, false, PHD_GRID, out);
        return 0;
    }
}
