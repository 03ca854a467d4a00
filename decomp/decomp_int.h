/*
 * decomp_int.h: shared only by the files of decomp/; never installed.
 * Names that cross files are decomp__*; everything else is static.
 */
#ifndef DECOMP_INT_H
#define DECOMP_INT_H

#include "decomp.h"

#include <errno.h>
#include <stdbool.h>

/* Coordinates of cell c. */
static inline void
decomp__coords(const struct decomp_grid *g, size_t c, uint32_t xyz[DECOMP_MAX_DIM])
{
    xyz[0] = (uint32_t)(c % g->dim[0]);
    c /= g->dim[0];
    xyz[1] = (uint32_t)(c % g->dim[1]);
    xyz[2] = (uint32_t)(c / g->dim[1]);
}

static inline size_t
decomp__index(const struct decomp_grid *g, uint32_t x, uint32_t y, uint32_t z)
{
    return (size_t)x + (size_t)g->dim[0] * ((size_t)y + (size_t)g->dim[1] * z);
}

static inline double
decomp__w(const struct decomp_grid *g, size_t c)
{
    return g->weight ? g->weight[c] : 1.0;
}

/* Validate a spec against a checked grid: owners, speeds. */
int decomp__spec_check(const struct decomp_grid *g, const struct decomp_spec *s);
/* Total weight of the grid (cells when unweighted). */
double decomp__total_weight(const struct decomp_grid *g);
/* The axis slabs are cut across: the longest, a tie going to the highest
 * index, so a square 2D grid is cut into rows as in the thesis. */
int decomp__slab_axis(const struct decomp_grid *g);

/*
 * The one rounding rule of the library. A cursor walks units in a fixed order
 * and gives each to an owner in list order; the boundary between owners i-1
 * and i falls at the unit prefix nearest to target[i], a tie going to the
 * lower prefix (a unit whose midpoint reaches the target goes to the next
 * owner). target has nowners + 1 cumulative entries, target[0] = 0.
 */
struct decomp__cursor {
    const double *target;
    int n;
    int owner;
    double prefix;
};

static inline int
decomp__cursor_take(struct decomp__cursor *cur, double w)
{
    double mid = cur->prefix + w / 2;

    while (cur->owner < cur->n - 1 && mid >= cur->target[cur->owner + 1])
        cur->owner++;
    cur->prefix += w;
    return cur->owner;
}

/* target[0..n] for owners taken in the order given by idx (NULL = 0..n-1). */
void decomp__targets(const double *speed, const int32_t *idx, int n, double total,
                     double *target);
/* idx[0..n) = owner ids sorted by speed descending, ties by id. */
void decomp__sort_by_speed(const double *speed, int32_t *idx, int n);

/* walk: 1 = walk the whole curve, 0 = sort cells by index, -1 = choose. */
int decomp__hilbert_order_mode(const struct decomp_grid *g, uint32_t *order, int walk);

/* Placement entry points, one per method file; arguments already checked. */
int decomp__row_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner,
                      struct decomp_box *box);
int decomp__point_place(const struct decomp_grid *g, const struct decomp_spec *s,
                        int32_t *owner);
int decomp__hilbert_place(const struct decomp_grid *g, const struct decomp_spec *s,
                          int32_t *owner);
int decomp__interleaved_place(const struct decomp_grid *g, const struct decomp_spec *s,
                              int32_t *owner);
int decomp__scatter_place(const struct decomp_grid *g, const struct decomp_spec *s,
                          int32_t *owner);
int decomp__tree_place(const struct decomp_grid *g, const struct decomp_spec *s,
                       int32_t *owner, struct decomp_box *box);

/*
 * The recursive bisection engine (decomp_tree.c) asks a method's policy how
 * to split each node with more than one owner. The policy may permute
 * order[first .. first + count) so the left list comes first, and returns the
 * left count, the axis, the left share and a tag for each child (the policy's
 * own state, e.g. PHD's "grid of a group").
 */
struct decomp__tctx;

struct decomp__span {
    int32_t first, count;
    int depth;
    int tag;                    /* policy state; 0 at the root */
    int shape[DECOMP_MAX_DIM];  /* homogeneous grid still to cut: parts per axis */
    double lo[DECOMP_MAX_DIM];
    double hi[DECOMP_MAX_DIM];
};

struct decomp__split {
    int n1;
    int axis;
    double frac;                /* share of the left child */
    int tag1, tag2;
    int shape1[DECOMP_MAX_DIM];
    int shape2[DECOMP_MAX_DIM];
};

typedef int (*decomp__policy_fn)(struct decomp__tctx *t, const struct decomp__span *sp,
                                 struct decomp__split *out);

struct decomp__tctx {
    const struct decomp_grid *g;
    const struct decomp_spec *s;
    int exact;
    int32_t *order;
    int32_t *group;             /* PHD: group id per owner */
    int32_t *scratch;           /* nowners entries each, for policies' permutations */
    int32_t *scratch2;
    double *slab;               /* max extent entries for weighted cuts */
};

/* decomp_split.c: what every policy asks of a region. */

/* Speed sum of order[first .. first + n). */
double decomp__span_speed(const struct decomp__tctx *t, int32_t first, int32_t n);
/* Longest extent of the span's region (ties: lowest axis). In cell mode an
 * axis with a single cell is never chosen when another has two or more. */
int decomp__longest_axis(const struct decomp__tctx *t, const struct decomp__span *sp);
/* Next axis of a strict cycle by depth, skipping single-cell extents. */
int decomp__cycle_axis(const struct decomp__tctx *t, const struct decomp__span *sp);
/* Factor k parts into a near-square (2D) or near-cubic (3D) grid over the
 * span's region, the largest factor along the longest extent. */
void decomp__factor(const struct decomp__tctx *t, const struct decomp__span *sp, int k,
                    int shape[DECOMP_MAX_DIM]);
/* Split a span that is a homogeneous grid of `shape` parts; equal = ignore
 * speeds (homogeneous block), else shares follow member speeds (PHD). */
void decomp__grid_split(const struct decomp__tctx *t, const struct decomp__span *sp,
                        bool equal, int tag, struct decomp__split *out);
bool decomp__is_prime(int k);

int decomp__block_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                         struct decomp__split *out);
int decomp__brbd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                        struct decomp__split *out);
int decomp__fbrd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                        struct decomp__split *out);
int decomp__phd_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                       struct decomp__split *out);
int decomp__orb_policy(struct decomp__tctx *t, const struct decomp__span *sp,
                       struct decomp__split *out);
/* Per-method preparation of order (and group) before the root is split. */
int decomp__phd_prepare(struct decomp__tctx *t);

/* Counting from boxes with double corners: shared by exact and cell boxes. */
int decomp__count_dboxes(const struct decomp_grid *g, const struct decomp_xbox *box,
                         int nowners, double eps, struct decomp_counts *out);
int decomp__counts_alloc(struct decomp_counts *c, int nowners, int ndirs);
/* Fill msgs/faces from the sorted link array. */
void decomp__counts_tally(struct decomp_counts *c);

/* splitmix64: scatter's deterministic stream. */
static inline uint64_t
decomp__rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif /* DECOMP_INT_H */
