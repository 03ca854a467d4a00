/*
 * decomp_split.c: the questions every bisection policy asks of a region, so
 * homogeneous block, BRBD, FBRD, PHD and ORB (seed 001 sections 4.5-4.9 and
 * chapter 5, seed 003 section 9.3) answer them the same way: the speed sum
 * of a run of owners, the axis to cut (the longest extent, or a strict cycle
 * by depth), the near-square or near-cubic grid of k parts (thesis Fig. 25),
 * and the next slab of such a grid. It sits below the policies and knows
 * nothing of the tree that calls them; decomp_tree.c turns the answers into
 * cuts.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <string.h>

double
decomp__span_speed(const struct decomp__tctx *t, int32_t first, int32_t n)
{
    double sum = 0;

    for (int32_t i = first; i < first + n; i++)
        sum += t->s->speed[t->order[i]];
    return sum;
}

static double
extent(const struct decomp__span *sp, int a)
{
    return sp->hi[a] - sp->lo[a];
}

int
decomp__longest_axis(const struct decomp__tctx *t, const struct decomp__span *sp)
{
    int best = -1;

    for (int a = 0; a < t->g->ndim; a++) {
        /* In cell mode a single-cell extent cannot be cut. */
        if (!t->exact && extent(sp, a) < 2)
            continue;
        if (best < 0 || extent(sp, a) > extent(sp, best))
            best = a;
    }
    return best < 0 ? 0 : best;
}

int
decomp__cycle_axis(const struct decomp__tctx *t, const struct decomp__span *sp)
{
    int n = t->g->ndim;

    for (int i = 0; i < n; i++) {
        int a = (sp->depth + i) % n;
        if (t->exact || extent(sp, a) >= 2)
            return a;
    }
    return sp->depth % n;
}

bool
decomp__is_prime(int k)
{
    if (k < 2)
        return false;
    for (int d = 2; (long)d * d <= k; d++)
        if (k % d == 0)
            return false;
    return true;
}

void
decomp__factor(const struct decomp__tctx *t, const struct decomp__span *sp, int k,
               int shape[DECOMP_MAX_DIM])
{
    int f[DECOMP_MAX_DIM] = { k, 1, 1 };

    if (t->g->ndim == 2) {
        /* The two factors closest to each other (thesis Fig. 25). */
        for (int b = 1; (long)b * b <= k; b++)
            if (k % b == 0) {
                f[0] = k / b;
                f[1] = b;
            }
    } else {
        /* The most cubic triple: smallest largest factor, then the largest
         * smallest one. */
        for (int c = 1; (long)c * c * c <= k; c++) {
            if (k % c)
                continue;
            for (int b = c; (long)b * b <= k / c; b++) {
                if ((k / c) % b)
                    continue;
                int a = k / c / b;
                if (a < f[0] || (a == f[0] && c > f[2])) {
                    f[0] = a;
                    f[1] = b;
                    f[2] = c;
                }
            }
        }
    }
    /* Largest factor along the longest extent; ties go to the lower axis. */
    int ax[DECOMP_MAX_DIM] = { 0, 1, 2 };
    int n = t->g->ndim;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && extent(sp, ax[j]) > extent(sp, ax[j - 1]); j--) {
            int tmp = ax[j];
            ax[j] = ax[j - 1];
            ax[j - 1] = tmp;
        }
    for (int a = 0; a < DECOMP_MAX_DIM; a++)
        shape[a] = 1;
    for (int i = 0; i < n; i++)
        shape[ax[i]] = f[i];
}

void
decomp__grid_split(const struct decomp__tctx *t, const struct decomp__span *sp, bool equal,
                   int tag, struct decomp__split *out)
{
    int ax = 0;

    /* The lowest axis still to cut goes first, so owners are numbered down
     * each column of blocks and a block's owner is one div and one mod away
     * from its coordinates (the thesis's lookup); the order of the cuts does
     * not change the blocks. */
    while (ax < DECOMP_MAX_DIM - 1 && sp->shape[ax] < 2)
        ax++;
    /* Peel one slab of parts off along ax: a chain of equal cuts gives the
     * a x b (x c) grid of blocks, exactly aligned in exact mode and aligned
     * after rounding when weights are uniform. */
    out->axis = ax;
    out->n1 = sp->count / sp->shape[ax];
    out->frac = equal ? (double)out->n1 / sp->count
                      : decomp__span_speed(t, sp->first, out->n1) /
                            decomp__span_speed(t, sp->first, sp->count);
    out->tag1 = out->tag2 = tag;
    memcpy(out->shape1, sp->shape, sizeof out->shape1);
    memcpy(out->shape2, sp->shape, sizeof out->shape2);
    out->shape1[ax] = 1;
    out->shape2[ax] = sp->shape[ax] - 1;
}
