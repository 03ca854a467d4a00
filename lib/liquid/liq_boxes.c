/*
 * liq_boxes.c - what a worker holds in memory: its regions, each a box of
 * adjacent quanta with its halo, laid out for this host's cache (the
 * kernels' plan, kern.h), and its quanta, each a view into its region's
 * box (seed 000: quanta are the unit of timing and moving, a region only
 * how they are swept).  Which quanta form a region is liq_region.c's cut;
 * how deep the halo reaches is liq_halo.c's.
 */
#include "liq_int.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int
liq_region_make(struct liq_worker *w, struct liq_region *r, const int lo[3], const int hi[3],
                const int ext[6], int repeat, int many, int unfilled)
{
    int ni, nj, nk, rc;

    memset(r, 0, sizeof(*r));
    memcpy(r->ext, ext, sizeof(r->ext));
    for (int a = 0; a < 3; a++) {
        r->box.lo[a] = lo[a];
        r->box.hi[a] = hi[a];
    }
    ni = hi[0] - lo[0] + ext[0] + ext[1];
    nj = hi[1] - lo[1] + ext[2] + ext[3];
    nk = hi[2] - lo[2] + ext[4] + ext[5];
    if ((rc = kern_plan_make(&r->plan, w->cache, ni, nj, nk, KERN_PLAN_FAST)) != 0)
        return rc;
    /* The plan leaves a box that fits in the last cache level unblocked;
     * but a worker sweeps all its regions in turn, and it is their sum
     * that would have to stay there. */
    if (many && r->plan.jac_steps == 1)
        r->plan.jac_steps = KERN_JAC_STEPS;
    r->steps = r->plan.jac_steps;
    r->flags = r->plan.flags;
    r->repeat = repeat;
    if (w->user != NULL) {
        /* The fields' levels in this layout: a header-only box gives
         * their shape and place. */
        struct kern_box shape = { .ni = ni, .nj = nj, .nk = nk, .bi = r->plan.bi,
                                  .bj = r->plan.bj, .oi = lo[0] - ext[0], .oj = lo[1] - ext[2],
                                  .ok = lo[2] - ext[4] };

        return liq_ubox_make(&r->u, w->user, w->g.n, &shape, unfilled);
    }
    if ((rc = kern_box_alloc(&r->a, ni, nj, nk, r->plan.bi, r->plan.bj)) != 0)
        return rc;
    if ((rc = kern_box_alloc(&r->rhs, ni, nj, nk, r->plan.bi, r->plan.bj)) != 0)
        return rc;
    r->a.oi = r->rhs.oi = lo[0] - ext[0];
    r->a.oj = r->rhs.oj = lo[1] - ext[2];
    r->a.ok = r->rhs.ok = lo[2] - ext[4];
    liq_field_init(&r->a, &r->rhs, w->seed);
    r->cur = &r->a;
    r->repeat = repeat;
    if (w->kernel == LIQ_JACOBI) {
        if ((rc = kern_box_alloc(&r->b, ni, nj, nk, r->plan.bi, r->plan.bj)) != 0)
            return rc;
        kern_box_copy(&r->b, &r->a); /* the Dirichlet ghosts, in both boxes */
        r->nxt = &r->b;
    }
    return 0;
}

void
liq_region_shell(const struct liq_worker *w, struct liq_region *r)
{
    liq_ubox_shell(&r->u, w->user, w->g.n, r->ext);
}

void
liq_region_clear(struct liq_region *r)
{
    kern_box_free(&r->a);
    kern_box_free(&r->b);
    kern_box_free(&r->rhs);
    liq_ubox_free(&r->u);
}

static void
liq_region_free(struct liq_region *r)
{
    if (r != NULL)
        liq_region_clear(r);
    free(r);
}

/* A new region of the job for box (heap-allocated), or NULL. */
struct liq_region *
liq_region_new(struct liq_worker *w, const struct liq_region_box *box, int many, int unfilled,
               int *rc)
{
    struct liq_region *r = malloc(sizeof(*r));
    int ext[6];

    if (r == NULL) {
        *rc = -ENOMEM;
        return NULL;
    }
    liq_box_halo(&w->g, box->lo, box->hi, w->depth, ext);
    if ((*rc = liq_region_make(w, r, box->lo, box->hi, ext, box->heavy ? w->heavy : 1, many,
                               unfilled)) != 0) {
        liq_region_free(r);
        return NULL;
    }
    r->box = *box;
    return r;
}

/* A quantum of the job in local region `region`, whose box is b. */
int
liq_quantum_init(struct liq_worker *w, struct liq_quantum *q, int id, int region,
                 const struct liq_region_box *b)
{
    int hi[3];
    double pts = 1, all = 1;

    memset(q, 0, sizeof(*q));
    q->id = id;
    q->region = region;
    liq_quantum_extent(&w->g, id, q->lo, hi);
    for (int a = 0; a < 3; a++) {
        q->n[a] = hi[a] - q->lo[a];
        pts *= q->n[a];
        all *= b->hi[a] - b->lo[a];
    }
    q->share = pts / all;
    if (w->epoch > 0 && (q->hist = calloc((size_t)w->epoch, sizeof(double))) == NULL)
        return -ENOMEM;
    return 0;
}

/* The quantum's own points as a patch (a move's body). */
void
liq_quantum_patch(const struct liq_quantum *q, struct liq_patch *p)
{
    p->src = p->dst = q->id;
    p->points = 1;
    memset(p->shift, 0, sizeof(p->shift));
    for (int a = 0; a < 3; a++) {
        p->lo[a] = q->lo[a];
        p->hi[a] = q->lo[a] + q->n[a];
        p->points *= (size_t)q->n[a];
    }
}

/* The quantum's own points, as a box of their own inside its region's. */
void
liq_quantum_own(const struct liq_worker *w, const struct liq_quantum *q, struct kern_box *view)
{
    liq_quantum_field(w, q, 0, view);
}

void
liq_quantum_field(const struct liq_worker *w, const struct liq_quantum *q, int f,
                  struct kern_box *view)
{
    const struct liq_region *r = w->rg[q->region];
    const struct kern_box *b = r->u.lv[0][f];
    int e[6] = { q->lo[0] - (int)b->oi, 0, q->lo[1] - (int)b->oj, 0, q->lo[2] - (int)b->ok, 0 };

    liq_quantum_view(b, e, q->n, view);
}

void
liq_quanta_free(struct liq_quantum *q, int n)
{
    /* A setup that failed may count quanta it never allocated. */
    for (int i = 0; q != NULL && i < n; i++)
        free(q[i].hist);
    free(q);
}

void
liq_regions_free(struct liq_region **rg, int n)
{
    for (int i = 0; i < n; i++)
        liq_region_free(rg[i]);
    free(rg);
}

/* The cut of placement owner into regions: *all and *of allocated here. */
int
liq_cut(struct liq_worker *w, const int *owner, struct liq_region_box **all, int **of)
{
    *all = malloc((size_t)w->g.nquanta * sizeof(**all));
    *of = malloc((size_t)w->g.nquanta * sizeof(int));
    if (*all == NULL || *of == NULL)
        return -ENOMEM;
    return liq_regions(&w->g, owner, w->depth, w->heavy, *of, *all);
}

int
liq_region_state(const struct liq_worker *w, struct liq_region *r, struct kern_box **out)
{
    return liq_ubox_state(&r->u, w->user, out);
}

#define LIQ_STATE_MAX (2 * LIQUID_MAX_FIELDS)

void
liq_state_get(const struct liq_worker *w, struct liq_region *r, const struct liq_patch *p,
              double *buf)
{
    struct kern_box *v[LIQ_STATE_MAX];
    int n = liq_region_state(w, r, v);

    for (int i = 0; i < n; i++)
        liq_region_get(v[i], p, buf + (size_t)i * p->points);
}

void
liq_state_put(const struct liq_worker *w, struct liq_region *r, const struct liq_patch *p,
              const double *buf)
{
    struct kern_box *v[LIQ_STATE_MAX];
    int n = liq_region_state(w, r, v);

    for (int i = 0; i < n; i++)
        liq_region_put(v[i], p, buf + (size_t)i * p->points);
}

void
liq_state_copy(const struct liq_worker *w, struct liq_region *dst, struct liq_region *src,
               const struct liq_patch *p)
{
    struct kern_box *d[LIQ_STATE_MAX], *s[LIQ_STATE_MAX];
    int n = liq_region_state(w, dst, d);

    (void)liq_region_state(w, src, s);
    for (int i = 0; i < n; i++)
        liq_region_copy(d[i], s[i], p);
}

/* Give back the pages of box b that hold only its planes [k0, k1) (box
 * indices, 0 to nk + 2: the whole box). */
static void
liq_box_release(const struct kern_box *b, long k0, long k1)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), end, lo, hi;

    if (b->map == NULL || k1 <= k0)
        return;
    end = (uintptr_t)b->map + b->map_len;
    lo = k0 <= 0 ? (uintptr_t)b->map : (uintptr_t)kern_at(b, 0, 0, (int)k0);
    hi = k1 >= b->nk + 2 ? end : (uintptr_t)kern_at(b, 0, 0, (int)k1);
    lo = (lo + page - 1) / page * page;
    hi = (hi < end ? hi : end) / page * page;
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void
liq_region_release(const struct liq_worker *w, struct liq_region *r, int zlo, int zhi)
{
    struct kern_box *v[LIQ_STATE_MAX];
    int n = liq_region_state(w, r, v);

    for (int i = 0; i < n; i++) {
        /* box plane k holds global z = k - 1 + ok */
        long top = v[i]->nk + 2;
        long k0 = zlo == INT_MIN ? 0 : (long)zlo + 1 - v[i]->ok;
        long k1 = zhi == INT_MAX ? top : (long)zhi + 1 - v[i]->ok;

        liq_box_release(v[i], k0 < 0 ? 0 : k0, k1 > top ? top : k1);
    }
}

void
liq_region_release_rest(const struct liq_worker *w, struct liq_region *r)
{
    struct kern_box *v[LIQ_STATE_MAX];
    int n = liq_region_state(w, r, v);

    for (int i = 0; r->u.box != NULL && i < r->u.nlev * r->u.nf; i++) {
        int state = 0;

        for (int j = 0; j < n; j++)
            state |= v[j] == &r->u.box[i];
        if (!state)
            liq_box_release(&r->u.box[i], 0, r->u.box[i].nk + 2);
    }
}
