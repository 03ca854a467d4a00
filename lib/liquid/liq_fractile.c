/*
 * liq_fractile.c - Fractiling's scheduler for farms (seed 002 section 3,
 * issue 28): weighted Factoring sizes the chunks, tiles of a Morton walk
 * shape them, and the master's state is O(workers + runs): the runs still to
 * hand out, nothing about chunks already handed out.  Pure: the caller
 * (vmrun_farm_master.c) brings the weights and turns positions into items.
 *
 * The Factoring rule is the one the digest marks as the common practical
 * form (Hummel, Schonberg and Flynn): in batches, each handing out a
 * fraction (1/2) of what is left, split among the workers; here the split
 * is by weight (weighted Factoring, Banicescu and Hummel), not equal.
 */
#include "liq_fractile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
liq_fractile_defaults(struct liq_fractile_opts *o)
{
    o->mode = LIQ_FRACTILE_FACTORING;
    o->fraction = 0.5;
    o->min_chunk = 1;
}

static int
seg_push(struct liq_fractile *f, uint64_t lo, uint64_t hi, int owner)
{
    if (f->nseg == f->segcap) {
        size_t cap = f->segcap ? 2 * f->segcap : 16;
        struct liq_fractile_seg *s = realloc(f->seg, cap * sizeof(*s));

        if (s == NULL)
            return -ENOMEM;
        f->seg = s;
        f->segcap = cap;
    }
    f->seg[f->nseg].lo = lo;
    f->seg[f->nseg].hi = hi;
    f->seg[f->nseg].owner = owner;
    f->nseg++;
    return 0;
}

int
liq_fractile_init(struct liq_fractile *f, uint64_t n, int nworkers, const double *weight,
                  const struct liq_fractile_opts *o)
{
    double total = 0;
    int nactive = 0;

    memset(f, 0, sizeof(*f));
    if (n == 0 || nworkers < 1 || o == NULL || !(o->fraction > 0 && o->fraction <= 1))
        return -EINVAL;
    f->o = *o;
    if (f->o.min_chunk < 1)
        f->o.min_chunk = 1;
    f->n = n;
    f->nworkers = nworkers;
    if ((f->weight = calloc((size_t)nworkers, sizeof(double))) == NULL)
        return -ENOMEM;
    for (int w = 0; w < nworkers; w++) {
        f->weight[w] = weight == NULL ? 1 : weight[w] > 0 ? weight[w] : 0;
        total += f->weight[w];
        nactive += f->weight[w] > 0;
    }
    if (nactive == 0) {
        liq_fractile_free(f);
        return -EINVAL;
    }
    f->left = n;
    if (o->mode == LIQ_FRACTILE_SELF) {
        if (seg_push(f, 0, n, -1) != 0)
            goto nomem;
        return 0;
    }
    /* One tile per active worker, in worker order: sized by weight, or
     * equal for static blocks.  The cumulative share rounds, so the tiles
     * cover 0..n-1 exactly once. */
    double acc = 0;
    uint64_t lo = 0;

    for (int w = 0; w < nworkers; w++) {
        if (f->weight[w] <= 0)
            continue;
        acc += o->mode == LIQ_FRACTILE_STATIC ? total / nactive : f->weight[w];
        uint64_t hi = acc >= total ? n : (uint64_t)llround((double)n * acc / total);

        if (hi > n)
            hi = n;
        if (hi > lo && seg_push(f, lo, hi, w) != 0)
            goto nomem;
        if (hi > lo)
            lo = hi;
    }
    return 0;
nomem:
    liq_fractile_free(f);
    return -ENOMEM;
}

void
liq_fractile_free(struct liq_fractile *f)
{
    free(f->weight);
    free(f->seg);
    f->weight = NULL;
    f->seg = NULL;
    f->nseg = f->segcap = 0;
}

void
liq_fractile_weight(struct liq_fractile *f, int w, double weight)
{
    if (w < 0 || w >= f->nworkers)
        return;
    if (!(weight > 0)) {
        weight = 0;
        for (size_t i = 0; i < f->nseg; i++)
            if (f->seg[i].owner == w)
                f->seg[i].owner = -1;
    }
    f->weight[w] = weight;
}

int
liq_fractile_add(struct liq_fractile *f, double weight)
{
    double *wt = realloc(f->weight, (size_t)(f->nworkers + 1) * sizeof(double));

    if (wt == NULL)
        return -ENOMEM;
    f->weight = wt;
    f->weight[f->nworkers] = weight > 0 ? weight : 0;
    return f->nworkers++;
}

int
liq_fractile_giveback(struct liq_fractile *f, uint64_t lo, uint64_t hi)
{
    int rc;

    if (lo >= hi || hi > f->n)
        return -EINVAL;
    if ((rc = seg_push(f, lo, hi, -1)) != 0)
        return rc;
    f->left += hi - lo;
    /* What comes back opens a new Factoring batch, sized on what is left
     * now: a batch that began near the end would otherwise hand the
     * returned run out one item at a time. */
    f->batch_spent = f->batch_weight;
    return 0;
}

/* The chunk size Factoring gives worker w now. */
static uint64_t
factoring_size(struct liq_fractile *f, int w)
{
    double total = 0;

    for (int i = 0; i < f->nworkers; i++)
        total += f->weight[i];
    /* A new batch when the last one's weight is spent (or the active set
     * changed so much that the rest of the batch would be out of scale). */
    if (f->batch_weight <= 0 || f->batch_spent >= f->batch_weight * (1 - 1e-9) ||
        total > 2 * f->batch_weight) {
        if (f->batch_weight > 0)
            f->batch++;
        f->batch_left = f->left;
        f->batch_weight = total;
        f->batch_spent = 0;
    }
    f->batch_spent += f->weight[w];
    double want = ceil(f->o.fraction * (double)f->batch_left * f->weight[w] / f->batch_weight);
    uint64_t size = want < 1 ? 1 : (uint64_t)want;

    return size < f->o.min_chunk ? f->o.min_chunk : size;
}

int
liq_fractile_next(struct liq_fractile *f, int w, struct liq_fractile_chunk *c)
{
    size_t best = f->nseg;

    if (w < 0 || w >= f->nworkers || !(f->weight[w] > 0) || f->left == 0)
        return 0;
    /* Rule (i): the worker's own tile first; rule (ii): then the largest
     * run, whoever owns it (static blocks take only runs nobody owns). */
    for (size_t i = 0; i < f->nseg; i++)
        if (f->seg[i].owner == w && f->seg[i].hi > f->seg[i].lo) {
            best = i;
            break;
        }
    if (best == f->nseg)
        for (size_t i = 0; i < f->nseg; i++) {
            const struct liq_fractile_seg *s = &f->seg[i];

            if (s->hi <= s->lo || (f->o.mode == LIQ_FRACTILE_STATIC && s->owner >= 0))
                continue;
            if (best == f->nseg || s->hi - s->lo > f->seg[best].hi - f->seg[best].lo)
                best = i;
        }
    if (best == f->nseg)
        return 0;

    struct liq_fractile_seg *s = &f->seg[best];
    uint64_t avail = s->hi - s->lo, size;

    switch (f->o.mode) {
    case LIQ_FRACTILE_SELF:
        size = 1;
        break;
    case LIQ_FRACTILE_STATIC:
        size = avail;
        break;
    default:
        size = factoring_size(f, w);
        break;
    }
    if (size > avail)
        size = avail;
    c->from = s->owner;
    c->batch = f->batch;
    if (s->owner == w || s->owner < 0) {
        c->lo = s->lo;
        c->hi = s->lo + size;
        s->lo += size;
    } else {
        c->hi = s->hi;
        c->lo = s->hi - size;
        s->hi -= size;
    }
    f->left -= size;
    if (s->lo == s->hi) {
        f->seg[best] = f->seg[f->nseg - 1];
        f->nseg--;
    }
    return 1;
}

/* Visit the box of side `side` at (x, y, z) in Morton order, skipping what
 * lies outside the grid. */
static void
morton_box(const int n[3], int dims, uint32_t x, uint32_t y, uint32_t z, uint32_t side,
           uint64_t *order, uint64_t *k)
{
    if (x >= (uint32_t)n[0] || y >= (uint32_t)n[1] || z >= (uint32_t)n[2])
        return;
    if (side == 1) {
        order[(*k)++] = x + (uint64_t)n[0] * (y + (uint64_t)n[1] * z);
        return;
    }
    uint32_t h = side / 2;

    for (int c = 0; c < (1 << dims); c++)
        morton_box(n, dims, x + (c & 1 ? h : 0), y + (c & 2 ? h : 0), z + (c & 4 ? h : 0), h,
                   order, k);
}

int
liq_fractile_morton(const int n[3], uint64_t *order)
{
    uint32_t side = 1;
    uint64_t k = 0;
    int dims = 0;

    for (int a = 0; a < 3; a++) {
        if (n[a] < 1 || n[a] > (1 << 21))
            return -EINVAL;
        if (n[a] > 1)
            dims = a + 1;
        while (side < (uint32_t)n[a])
            side *= 2;
    }
    if (dims == 0)
        dims = 1;
    morton_box(n, dims, 0, 0, 0, side, order, &k);
    return 0;
}
