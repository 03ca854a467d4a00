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
 *
 * The engine sits above the policies (it picks one by method) and the
 * policies sit above decomp_split.c, whose helpers they share; no policy
 * calls back into the engine.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>
#include <string.h>

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

/* The scratch a build needs besides the tree itself; span has one entry per
 * node, so the walk below never reallocates. */
static int
tree_alloc(struct decomp__tctx *t, struct decomp__span **span, struct decomp_tree *out)
{
    const struct decomp_grid *g = t->g;
    int p = t->s->nowners;
    size_t maxnodes = 2 * (size_t)p - 1;
    uint32_t maxdim = g->dim[0];

    for (int a = 1; a < DECOMP_MAX_DIM; a++)
        if (g->dim[a] > maxdim)
            maxdim = g->dim[a];
    out->order = malloc((size_t)p * sizeof *out->order);
    out->node = calloc(maxnodes, sizeof *out->node);
    *span = calloc(maxnodes, sizeof **span);
    t->group = malloc((size_t)p * sizeof *t->group);
    /* One spare entry: PHD stores the end of the last group run. */
    t->scratch = malloc(((size_t)p + 1) * sizeof *t->scratch);
    t->scratch2 = malloc(((size_t)p + 1) * sizeof *t->scratch2);
    t->slab = malloc(maxdim * sizeof *t->slab);
    if (!out->order || !out->node || !*span || !t->group || !t->scratch || !t->scratch2 ||
        !t->slab)
        return -ENOMEM;
    t->order = out->order;
    out->nowners = p;
    return 0;
}

static void
tree_scratch_free(struct decomp__tctx *t, struct decomp__span *span)
{
    free(t->slab);
    free(t->scratch2);
    free(t->scratch);
    free(t->group);
    free(span);
}

/* The owner list the root starts from. The thesis sorts processors by speed
 * before any block method; block and ORB keep the caller's order, which the
 * runtime may use to keep neighbouring hosts adjacent. */
static int
order_owners(struct decomp__tctx *t)
{
    const struct decomp_spec *s = t->s;
    int p = s->nowners;

    if (s->method == DECOMP_BRBD || s->method == DECOMP_FBRD || s->method == DECOMP_PHD)
        decomp__sort_by_speed(s->speed, t->order, p);
    else
        for (int i = 0; i < p; i++)
            t->order[i] = i;
    if (s->method == DECOMP_PHD)
        return decomp__phd_prepare(t);
    return 0;
}

static void
root_span(const struct decomp_grid *g, int p, struct decomp__span *root)
{
    root->first = 0;
    root->count = p;
    for (int a = 0; a < DECOMP_MAX_DIM; a++) {
        root->lo[a] = 0;
        root->hi[a] = g->dim[a];
        root->shape[a] = 1;
    }
}

/* The two children of sp, cut at `cut` across axis sl->axis. */
static void
child_spans(const struct decomp__span *sp, const struct decomp__split *sl, double cut,
            struct decomp__span *l, struct decomp__span *r)
{
    int a = sl->axis;

    *l = *sp;
    *r = *sp;
    l->count = sl->n1;
    r->first = sp->first + sl->n1;
    r->count = sp->count - sl->n1;
    l->depth = r->depth = sp->depth + 1;
    l->tag = sl->tag1;
    r->tag = sl->tag2;
    memcpy(l->shape, sl->shape1, sizeof l->shape);
    memcpy(r->shape, sl->shape2, sizeof r->shape);
    l->hi[a] = cut;
    r->lo[a] = cut;
}

/* Record node ni from its span and, if it has more than one owner, ask the
 * policy how to split it and append its two children at *nnodes. */
static int
expand_node(struct decomp__tctx *t, decomp__policy_fn policy, struct decomp__span *span,
            int ni, int *nnodes, int maxnodes, struct decomp_tree *out)
{
    const struct decomp__span *sp = &span[ni];
    struct decomp_node *nd = &out->node[ni];
    struct decomp__split sl;
    int rc;

    nd->first = sp->first;
    nd->count = sp->count;
    nd->left = nd->right = -1;
    nd->axis = -1;
    memcpy(nd->lo, sp->lo, sizeof nd->lo);
    memcpy(nd->hi, sp->hi, sizeof nd->hi);
    if (sp->count == 1)
        return 0;

    memset(&sl, 0, sizeof sl);
    if ((rc = policy(t, sp, &sl)) < 0)
        return rc;
    /* A policy bug must not turn into an endless or out-of-bounds walk. */
    if (sl.n1 < 1 || sl.n1 >= sp->count || sl.axis < 0 || sl.axis >= t->g->ndim ||
        *nnodes + 2 > maxnodes)
        return -EINVAL;
    int a = sl.axis;
    double cut;
    if (t->exact) {
        cut = sp->lo[a] + sl.frac * (sp->hi[a] - sp->lo[a]);
        nd->granule = 0;
    } else {
        cut = cell_cut(t, sp, a, sl.frac, &nd->granule);
    }
    nd->axis = a;
    nd->frac = sl.frac;
    nd->cut = cut;
    nd->left = *nnodes;
    nd->right = *nnodes + 1;
    child_spans(sp, &sl, cut, &span[*nnodes], &span[*nnodes + 1]);
    *nnodes += 2;
    return 0;
}

static int
tree_build(const struct decomp_grid *g, const struct decomp_spec *s, int exact,
           struct decomp_tree *out)
{
    int p = s->nowners;
    int maxnodes = 2 * p - 1;
    struct decomp__span *span = NULL;
    struct decomp__tctx t = { .g = g, .s = s, .exact = exact };
    decomp__policy_fn policy = policy_of(s->method);
    int rc;

    memset(out, 0, sizeof *out);
    if (policy == NULL)
        return -EINVAL;
    if ((rc = tree_alloc(&t, &span, out)) < 0 || (rc = order_owners(&t)) < 0)
        goto fail;
    root_span(g, p, &span[0]);
    int nnodes = 1;
    for (int ni = 0; ni < nnodes; ni++)
        if ((rc = expand_node(&t, policy, span, ni, &nnodes, maxnodes, out)) < 0)
            goto fail;
    out->nnodes = nnodes;
    tree_scratch_free(&t, span);
    return 0;
fail:
    decomp_tree_free(out);
    tree_scratch_free(&t, span);
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
