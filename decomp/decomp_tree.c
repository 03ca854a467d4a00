/*
 * decomp_tree.c: the recursive bisection engine behind homogeneous block,
 * BRBD, FBRD, PHD and ORB (seed 001 chapter 5, seed 003 section 9.3). Each
 * method is a policy that says, for a region and its list of owners, which
 * owners go left, across which axis, and in what share; this file owns the
 * geometry and the rounding, so every method cuts the same way:
 *
 * - exact mode keeps cut positions as fractions of the extents (the thesis's
 *   continuous analysis, used for Fig. 28 and the cost table);
 * - cell mode puts the cut at the slab prefix (by cell weight) nearest to the
 *   left share of the region's weight, a tie going to the lower prefix, so a
 *   cut moves a share by at most half a slab of that region.
 *
 * Nodes are expanded in creation order from an explicit array rather than by
 * recursion: FBRD and PHD chains can be as deep as the owner count.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>
#include <stdlib.h>
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

static decomp__policy_fn
policy_of(enum decomp_method m)
{
    switch (m) {
    case DECOMP_BLOCK:
        return decomp__block_policy;
    case DECOMP_BRBD:
        return decomp__brbd_policy;
    case DECOMP_FBRD:
        return decomp__fbrd_policy;
    case DECOMP_PHD:
        return decomp__phd_policy;
    case DECOMP_ORB:
        return decomp__orb_policy;
    default:
        return NULL;
    }
}

/* Cell mode: the integer cut position along axis a of the span's region. */
static uint32_t
cell_cut(struct decomp__tctx *t, const struct decomp__span *sp, int a, double frac,
         double *granule)
{
    const struct decomp_grid *g = t->g;
    uint32_t lo[DECOMP_MAX_DIM], hi[DECOMP_MAX_DIM];

    for (int b = 0; b < DECOMP_MAX_DIM; b++) {
        lo[b] = (uint32_t)sp->lo[b];
        hi[b] = (uint32_t)sp->hi[b];
    }
    uint32_t ext = hi[a] - lo[a];
    if (ext == 0) {
        *granule = 0;
        return lo[a];
    }
    double *slab = t->slab;
    double W = 0, cross = 1;
    for (int b = 0; b < DECOMP_MAX_DIM; b++)
        if (b != a)
            cross *= hi[b] - lo[b];
    if (g->weight != NULL) {
        memset(slab, 0, ext * sizeof *slab);
        for (uint32_t z = lo[2]; z < hi[2]; z++)
            for (uint32_t y = lo[1]; y < hi[1]; y++)
                for (uint32_t x = lo[0]; x < hi[0]; x++) {
                    uint32_t xyz[DECOMP_MAX_DIM] = { x, y, z };
                    slab[xyz[a] - lo[a]] += g->weight[decomp__index(g, x, y, z)];
                }
        for (uint32_t k = 0; k < ext; k++)
            W += slab[k];
    }
    /* A region of zero weight is split by geometry instead: its cells still
     * have to go somewhere, and by area is the only meaningful share. */
    if (g->weight == NULL || !(W > 0)) {
        for (uint32_t k = 0; k < ext; k++)
            slab[k] = cross;
        W = cross * ext;
    }
    double target[3] = { 0, frac * W, W };
    struct decomp__cursor cur = { target, 2, 0, 0 };
    uint32_t k1 = 0;
    double gmax = 0;
    for (uint32_t k = 0; k < ext; k++) {
        if (decomp__cursor_take(&cur, slab[k]) == 0)
            k1++;
        if (slab[k] > gmax)
            gmax = slab[k];
    }
    *granule = gmax;
    return lo[a] + k1;
}

static int
tree_build(const struct decomp_grid *g, const struct decomp_spec *s, int exact,
           struct decomp_tree *out)
{
    int p = s->nowners;
    int maxnodes = 2 * p - 1;
    uint32_t maxdim = g->dim[0];
    struct decomp__span *span = NULL;
    struct decomp__tctx t = { .g = g, .s = s, .exact = exact };
    decomp__policy_fn policy = policy_of(s->method);
    int rc = -ENOMEM;

    memset(out, 0, sizeof *out);
    if (policy == NULL)
        return -EINVAL;
    for (int a = 1; a < DECOMP_MAX_DIM; a++)
        if (g->dim[a] > maxdim)
            maxdim = g->dim[a];

    out->order = malloc((size_t)p * sizeof *out->order);
    out->node = calloc((size_t)maxnodes, sizeof *out->node);
    span = calloc((size_t)maxnodes, sizeof *span);
    t.group = malloc((size_t)p * sizeof *t.group);
    /* One spare entry: PHD stores the end of the last group run. */
    t.scratch = malloc(((size_t)p + 1) * sizeof *t.scratch);
    t.scratch2 = malloc(((size_t)p + 1) * sizeof *t.scratch2);
    t.slab = malloc(maxdim * sizeof *t.slab);
    if (!out->order || !out->node || !span || !t.group || !t.scratch || !t.scratch2 || !t.slab)
        goto fail;
    t.order = out->order;
    out->nowners = p;

    /* The thesis sorts processors by speed before any block method; block
     * and ORB keep the caller's order, which the runtime may use to keep
     * neighbouring hosts adjacent. */
    if (s->method == DECOMP_BRBD || s->method == DECOMP_FBRD || s->method == DECOMP_PHD)
        decomp__sort_by_speed(s->speed, t.order, p);
    else
        for (int i = 0; i < p; i++)
            t.order[i] = i;
    if (s->method == DECOMP_PHD && (rc = decomp__phd_prepare(&t)) < 0)
        goto fail;

    span[0].first = 0;
    span[0].count = p;
    for (int a = 0; a < DECOMP_MAX_DIM; a++) {
        span[0].lo[a] = 0;
        span[0].hi[a] = g->dim[a];
        span[0].shape[a] = 1;
    }
    int nnodes = 1;
    for (int ni = 0; ni < nnodes; ni++) {
        struct decomp__span *sp = &span[ni];
        struct decomp_node *nd = &out->node[ni];

        nd->first = sp->first;
        nd->count = sp->count;
        nd->left = nd->right = -1;
        nd->axis = -1;
        memcpy(nd->lo, sp->lo, sizeof nd->lo);
        memcpy(nd->hi, sp->hi, sizeof nd->hi);
        if (sp->count == 1)
            continue;

        struct decomp__split sl;
        memset(&sl, 0, sizeof sl);
        if ((rc = policy(&t, sp, &sl)) < 0)
            goto fail;
        /* A policy bug must not turn into an endless or out-of-bounds walk. */
        if (sl.n1 < 1 || sl.n1 >= sp->count || sl.axis < 0 || sl.axis >= g->ndim ||
            nnodes + 2 > maxnodes) {
            rc = -EINVAL;
            goto fail;
        }
        int a = sl.axis;
        double cut;
        if (exact) {
            cut = sp->lo[a] + sl.frac * (sp->hi[a] - sp->lo[a]);
            nd->granule = 0;
        } else {
            cut = cell_cut(&t, sp, a, sl.frac, &nd->granule);
        }
        nd->axis = a;
        nd->frac = sl.frac;
        nd->cut = cut;
        nd->left = nnodes;
        nd->right = nnodes + 1;

        struct decomp__span *l = &span[nnodes], *r = &span[nnodes + 1];
        *l = *sp;
        *r = *sp;
        l->count = sl.n1;
        r->first = sp->first + sl.n1;
        r->count = sp->count - sl.n1;
        l->depth = r->depth = sp->depth + 1;
        l->tag = sl.tag1;
        r->tag = sl.tag2;
        memcpy(l->shape, sl.shape1, sizeof l->shape);
        memcpy(r->shape, sl.shape2, sizeof r->shape);
        l->hi[a] = cut;
        r->lo[a] = cut;
        nnodes += 2;
    }
    out->nnodes = nnodes;
    rc = 0;
    goto done;
fail:
    decomp_tree_free(out);
done:
    free(t.slab);
    free(t.scratch2);
    free(t.scratch);
    free(t.group);
    free(span);
    return rc;
}

int
decomp_tree_build(const struct decomp_grid *g, const struct decomp_spec *s, int exact,
                  struct decomp_tree *out)
{
    int rc;

    if (out == NULL)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if ((rc = decomp_grid_check(g)) < 0 || (rc = decomp__spec_check(g, s)) < 0)
        return rc;
    if (policy_of(s->method) == NULL)
        return -EINVAL;
    /* Fractional cuts have no cells to weigh. */
    if (exact && g->weight != NULL)
        return -EINVAL;
    return tree_build(g, s, exact != 0, out);
}

int
decomp_tree_xboxes(const struct decomp_tree *t, struct decomp_xbox *box)
{
    if (t == NULL || box == NULL || t->node == NULL)
        return -EINVAL;
    for (int i = 0; i < t->nnodes; i++) {
        const struct decomp_node *nd = &t->node[i];
        if (nd->left >= 0)
            continue;
        struct decomp_xbox *b = &box[t->order[nd->first]];
        memcpy(b->lo, nd->lo, sizeof b->lo);
        memcpy(b->hi, nd->hi, sizeof b->hi);
    }
    return 0;
}

void
decomp_tree_free(struct decomp_tree *t)
{
    if (t == NULL)
        return;
    free(t->order);
    free(t->node);
    memset(t, 0, sizeof *t);
}

int
decomp__tree_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner,
                   struct decomp_box *box)
{
    struct decomp_tree t;
    int rc = tree_build(g, s, 0, &t);

    if (rc < 0)
        return rc;
    for (int i = 0; i < t.nnodes; i++) {
        const struct decomp_node *nd = &t.node[i];
        if (nd->left >= 0)
            continue;
        int32_t o = t.order[nd->first];
        uint32_t lo[DECOMP_MAX_DIM], hi[DECOMP_MAX_DIM];
        for (int a = 0; a < DECOMP_MAX_DIM; a++) {
            lo[a] = (uint32_t)nd->lo[a];
            hi[a] = (uint32_t)nd->hi[a];
        }
        if (box != NULL) {
            memcpy(box[o].lo, lo, sizeof lo);
            memcpy(box[o].hi, hi, sizeof hi);
        }
        for (uint32_t z = lo[2]; z < hi[2]; z++)
            for (uint32_t y = lo[1]; y < hi[1]; y++)
                for (uint32_t x = lo[0]; x < hi[0]; x++)
                    owner[decomp__index(g, x, y, z)] = o;
    }
    decomp_tree_free(&t);
    return 0;
}
