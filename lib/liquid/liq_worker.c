/*
 * liq_worker.c - the worker task of a stencil job: probes the host's speed,
 * takes part in the ring benchmark, and computes its quanta in blocks of
 * iterations.  Adjacent quanta it owns are swept as one box, a region
 * (liq_region.c); the regions' halos (liq_halo.c) are refreshed by memcpy
 * between its own regions and by one PVM message per neighbour worker per
 * block, overlapped with the regions that need nothing from another worker.
 */
#include "liq.h"
#include "pvm3.h"
#include "pvm_ext.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often a waiting worker looks for QUIT or its master's exit. */
#define LIQ_POLL_USEC 200000
#define LIQ_PASS_MAX 32 /* sweeps in one temporally blocked pass on shrinking boxes */

/* A box of quanta swept as one (heap-allocated: cur and nxt point into it). */
struct liq_region {
    struct liq_region_box box;
    int ext[6];                 /* halo layers of the box beyond its points, per side */
    struct kern_box a, b, rhs;  /* the extended boxes; b is Jacobi's second */
    struct kern_box *cur, *nxt;
    struct kern_plan plan;
    int steps;                  /* Jacobi sweeps per pass the plan chose */
    unsigned flags;             /* the plan's flags as made */
    int repeat;                 /* phases run this many times (heavy region) */
    int stale[6];               /* -x +x -y +y -z +z: its halo there holds another
                                 * worker's points (liq_layout) */
    double wall, cpu;           /* compute time of this block */
};

/* A quantum: the unit of timing and moving, a view into its region. */
struct liq_quantum {
    int id;
    int region;                 /* local region index */
    int lo[3], n[3];            /* its own points, 0-based, and how many per axis */
    double share;               /* its points over its region's */
    double seconds;             /* compute time, whole run */
    double cpu;                 /* CPU time of this block's compute, per iteration */
    double *hist;               /* CPU time of each iteration, this epoch */
};

/* One direction of the exchange with one other worker: its patches, src
 * (sending) or dst (receiving) a local region index. */
struct liq_link {
    int tid;
    int npatch;
    struct liq_patch *patch;
    size_t points;
    double *buf;
};

struct liq_worker {
    int mytid, master;
    size_t cache;
    /* the job */
    struct liq_geom g;
    enum liq_kernel kernel;
    int iters, gather, nworkers, me, epoch, heavy;
    int halo, depth;            /* iterations per exchange, halo depth */
    int start;                  /* the iteration this worker joined at */
    uint64_t seed;
    int *tids;
    int *owner;
    double c, c2;
    int nq;
    struct liq_quantum *q;      /* by id */
    int nrg;
    struct liq_region **rg;     /* this worker's regions, in the cut's order */
    int nall;
    struct liq_region_box *all; /* every worker's regions (liq_regions) */
    int *region_of;             /* quantum id -> index in all */
    int *rlocal;                /* index in all -> local region index, or -1 */
    int nsend, nrecv;
    struct liq_link *send, *recv;
    int ncopy;
    struct liq_patch *copy;     /* halo patches between local regions (local indices) */
    int nscratch;
    struct liq_patch *scratch;  /* one region's patches, while links are built */
    double *ctime;              /* compute seconds of each iteration, this epoch */
    double last_move;           /* seconds the last move took */
    size_t llc;                 /* one CPU's share of the last-level cache; 0 unknown */
    int passes;                 /* Jacobi sweeps per pass (liq_passes): 1 or the plans' */
    double compute_all, comm_all;
    double compute_cpu;         /* CPU seconds in the kernels, this job */
    double overlap_cpu;         /* ... of them while ghosts were on the way (liq_split) */
    double ghost_wait;          /* wall s blocked for ghosts (liq_exchange_finish) */
    double ghost_bytes;         /* bytes of ghosts received from other workers */
    double plan_wait;           /* wall s blocked for the master's plan (liq_plan) */
    int kerr;                   /* a kernel's error (-errno), 0 while there is none */
    double cpu0;                /* the process's CPU seconds when the job came */
    double ep_t, ep_cpu, ep_kcpu; /* wall, process CPU, kernel CPU at the last report */
};

static void liq_links_free(struct liq_worker *w);

static double
liq_clock(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
liq_now(void)
{
    return liq_clock(CLOCK_MONOTONIC);
}

/* CPU time of this thread: what a quantum costs, whatever share of a CPU
 * the worker gets (preemption, a cgroup's throttling). */
static double
liq_cpu_now(void)
{
    return liq_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* CPU time of the whole process, every thread. */
static double
liq_process_cpu(void)
{
    return liq_clock(CLOCK_PROCESS_CPUTIME_ID);
}

static void liq_fail(struct liq_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Tell the master why this worker gives up. */
static void
liq_fail(struct liq_worker *w, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    fprintf(stderr, "vmrun worker t%x: %s\n", (unsigned)w->mytid, text);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(text);
    pvm_send(w->master, LIQ_TAG_FAIL);
}

/*
 * Receive a message from tid with tag (-1: any), giving up when the master
 * says QUIT or exits.  Returns the buffer id, 0 when told to stop, or a PVM
 * error.
 */
static int
liq_wait(struct liq_worker *w, int tid, int tag)
{
    struct timeval tmo = { 0, LIQ_POLL_USEC };

    for (;;) {
        int b = pvm_trecv(tid, tag, &tmo);

        if (b != 0)
            return b;
        if (pvm_nrecv(w->master, LIQ_TAG_QUIT) > 0 || pvm_nrecv(-1, LIQ_TAG_EXITED) > 0)
            return 0;
    }
}

static int
liq_send_progress(struct liq_worker *w, int iter, double compute, double comm)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&iter, 1, 1);
    pvm_pkdouble(&compute, 1, 1);
    pvm_pkdouble(&comm, 1, 1);
    return pvm_send(w->master, LIQ_TAG_PROGRESS);
}

/* Allocate and fill a region's boxes for this host's cache: its points
 * [lo, hi) with ext[] halo layers around them.  many: the worker sweeps
 * more than this box in turn. */
static int
liq_region_make(struct liq_worker *w, struct liq_region *r, const int lo[3], const int hi[3],
                const int ext[6], int repeat, int many)
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

static void
liq_region_clear(struct liq_region *r)
{
    kern_box_free(&r->a);
    kern_box_free(&r->b);
    kern_box_free(&r->rhs);
}

static void
liq_region_free(struct liq_region *r)
{
    if (r != NULL)
        liq_region_clear(r);
    free(r);
}

/* A new region of the job for box (heap-allocated), or NULL. */
static struct liq_region *
liq_region_new(struct liq_worker *w, const struct liq_region_box *box, int many, int *rc)
{
    struct liq_region *r = malloc(sizeof(*r));
    int ext[6];

    if (r == NULL) {
        *rc = -ENOMEM;
        return NULL;
    }
    liq_box_halo(&w->g, box->lo, box->hi, w->depth, ext);
    if ((*rc = liq_region_make(w, r, box->lo, box->hi, ext, box->heavy ? w->heavy : 1,
                               many)) != 0) {
        liq_region_free(r);
        return NULL;
    }
    r->box = *box;
    return r;
}

/* A quantum of the job in local region `region`, whose box is b. */
static int
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
static void
liq_quantum_patch(const struct liq_quantum *q, struct liq_patch *p)
{
    p->src = p->dst = q->id;
    p->points = 1;
    for (int a = 0; a < 3; a++) {
        p->lo[a] = q->lo[a];
        p->hi[a] = q->lo[a] + q->n[a];
        p->points *= (size_t)q->n[a];
    }
}

/* The quantum's own points, as a box of their own inside its region's. */
static void
liq_quantum_own(const struct liq_worker *w, const struct liq_quantum *q, struct kern_box *view)
{
    const struct kern_box *b = w->rg[q->region]->cur;
    int e[6] = { q->lo[0] - (int)b->oi, 0, q->lo[1] - (int)b->oj, 0, q->lo[2] - (int)b->ok, 0 };

    liq_quantum_view(b, e, q->n, view);
}

/* Keep a kernel's first error for liq_job to end the worker with. */
static void
liq_kernel_rc(struct liq_worker *w, int rc)
{
    if (rc != 0 && w->kerr == 0)
        w->kerr = rc;
}

/* One block of iterations on one region. */
static void
liq_region_block(struct liq_worker *w, struct liq_region *r, int iters)
{
    liq_kernel_rc(w, liq_block(&r->cur, &r->nxt, &r->rhs, w->kernel, w->c, w->c2, iters,
                               r->repeat, &r->plan));
}

/* ---- the speed probe ---- */

static void
liq_probe(struct liq_worker *w)
{
    int ext[3], kernel, lo[3] = { 0, 0, 0 }, none[6] = { 0 }, rc;
    double seconds, t0, c0 = 0, t, ups, ups_cpu;
    long sweeps = 0;
    struct liq_region q;

    pvm_upkint(ext, 3, 1);
    pvm_upkint(&kernel, 1, 1);
    pvm_upkdouble(&seconds, 1, 1);
    pvm_upkint(&w->halo, 1, 1);
    if (kernel != LIQ_JACOBI && kernel != LIQ_RBGS) {
        liq_fail(w, "probe: bad kernel %d", kernel);
        return;
    }
    if (w->halo < 1 || w->halo > LIQ_MAX_HALO) {
        liq_fail(w, "probe: bad halo %d", w->halo);
        return;
    }
    for (int a = 0; a < 3; a++)
        if (ext[a] < 1 || ext[a] > LIQ_MAX_EXTENT) {
            liq_fail(w, "probe: bad box %dx%dx%d", ext[0], ext[1], ext[2]);
            return;
        }
    w->kernel = (enum liq_kernel)kernel;
    w->seed = 1;
    liq_coeffs(ext, &w->c, &w->c2);
    /* A box with no halo, run in the job's blocks: the kernel's speed. */
    if ((rc = liq_region_make(w, &q, lo, ext, none, 1, 0)) != 0) {
        liq_region_clear(&q);
        liq_fail(w, "probe: cannot allocate a %dx%dx%d box: %s", ext[0], ext[1], ext[2],
                 strerror(-rc));
        return;
    }
    /* One untimed iteration faults the pages in; then iterate for the time. */
    for (int warm = 1;; warm = 0) {
        t0 = liq_now();
        c0 = liq_cpu_now();
        do {
            liq_region_block(w, &q, w->halo);
            sweeps += w->halo;
            t = liq_now() - t0;
        } while (!warm && (t < seconds || sweeps < 3));
        if (!warm)
            break;
        sweeps = 0;
    }
    ups = (double)ext[0] * ext[1] * ext[2] * (double)sweeps / t;
    c0 = liq_cpu_now() - c0;
    ups_cpu = c0 > 0 ? (double)ext[0] * ext[1] * ext[2] * (double)sweeps / c0 : ups;
    liq_region_clear(&q);
    double cache = (double)w->cache;

    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&ups, 1, 1);
    pvm_pkdouble(&cache, 1, 1);
    pvm_pkdouble(&ups_cpu, 1, 1);
    pvm_send(w->master, LIQ_TAG_PROBED);
}

/* ---- the ring benchmark ---- */

#define LIQ_RING_MAX_SIZES 32

static void
liq_ring(struct liq_worker *w)
{
    int n, nsizes, rounds, me = -1, *tids = NULL, sizes[LIQ_RING_MAX_SIZES];
    double *times = NULL;
    char *buf = NULL;
    int maxsize = 0;

    pvm_upkint(&n, 1, 1);
    if (n < 2 || n > 65536) {
        liq_fail(w, "ring: bad member count %d", n);
        return;
    }
    if ((tids = calloc((size_t)n, sizeof(int))) == NULL)
        goto nomem;
    pvm_upkint(tids, n, 1);
    pvm_upkint(&nsizes, 1, 1);
    if (nsizes < 1 || nsizes > LIQ_RING_MAX_SIZES) {
        liq_fail(w, "ring: bad size count %d", nsizes);
        goto out;
    }
    pvm_upkint(sizes, nsizes, 1);
    pvm_upkint(&rounds, 1, 1);
    if (rounds < 1 || rounds > 1000) {
        liq_fail(w, "ring: bad round count %d", rounds);
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (tids[i] == w->mytid)
            me = i;
    for (int s = 0; s < nsizes; s++) {
        if (sizes[s] < 1 || sizes[s] > (64 << 20)) {
            liq_fail(w, "ring: bad message size %d", sizes[s]);
            goto out;
        }
        if (sizes[s] > maxsize)
            maxsize = sizes[s];
    }
    if (me < 0) {
        liq_fail(w, "ring: this worker is not a member");
        goto out;
    }
    if ((buf = calloc((size_t)maxsize, 1)) == NULL ||
        (times = calloc((size_t)nsizes * (size_t)rounds, sizeof(double))) == NULL)
        goto nomem;
    for (int s = 0; s < nsizes; s++) {
        /* Round -1 warms the links up and lines the members up. */
        for (int r = -1; r < rounds; r++) {
            double t0 = liq_now();

            pvm_initsend(PvmDataRaw);
            pvm_pkbyte(buf, sizes[s], 1);
            if (pvm_send(tids[(me + 1) % n], LIQ_TAG_RINGMSG) < 0) {
                liq_fail(w, "ring: send to t%x failed", (unsigned)tids[(me + 1) % n]);
                goto out;
            }
            if (liq_wait(w, tids[(me + n - 1) % n], LIQ_TAG_RINGMSG) <= 0)
                goto out;
            if (r >= 0)
                times[s * rounds + r] = liq_now() - t0;
        }
    }
    int count = nsizes * rounds;

    pvm_initsend(PvmDataDefault);
    pvm_pkint(&count, 1, 1);
    pvm_pkdouble(times, count, 1);
    pvm_send(w->master, LIQ_TAG_RINGED);
    goto out;
nomem:
    liq_fail(w, "ring: out of memory");
out:
    free(tids);
    free(times);
    free(buf);
}

/* ---- the job ---- */

static void
liq_quanta_free(struct liq_quantum *q, int n)
{
    for (int i = 0; i < n; i++)
        free(q[i].hist);
    free(q);
}

static void
liq_regions_free(struct liq_region **rg, int n)
{
    for (int i = 0; i < n; i++)
        liq_region_free(rg[i]);
    free(rg);
}

static void
liq_job_free(struct liq_worker *w)
{
    liq_quanta_free(w->q, w->nq);
    liq_regions_free(w->rg, w->nrg);
    liq_links_free(w);
    free(w->all);
    free(w->region_of);
    free(w->rlocal);
    free(w->owner);
    free(w->tids);
    free(w->ctime);
    w->q = NULL;
    w->rg = NULL;
    w->all = NULL;
    w->region_of = w->rlocal = w->owner = w->tids = NULL;
    w->ctime = NULL;
    w->nq = w->nrg = w->nall = 0;
}

/* Append a patch to a growing array. */
static int
liq_patch_push(struct liq_patch **v, int *n, int *cap, const struct liq_patch *p)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        struct liq_patch *x = realloc(*v, (size_t)c * sizeof(*x));

        if (x == NULL)
            return -ENOMEM;
        *v = x;
        *cap = c;
    }
    (*v)[(*n)++] = *p;
    return 0;
}

/* The patches of region r's halo (an index in w->all), in w->scratch
 * (grown as needed): how many, or -ENOMEM. */
static int
liq_patches_of(struct liq_worker *w, int r)
{
    const struct liq_region_box *b = &w->all[r];
    int m = liq_box_patches(&w->g, w->depth, b->lo, b->hi, r, w->scratch, w->nscratch);

    if (m > w->nscratch) {
        struct liq_patch *x = realloc(w->scratch, (size_t)m * sizeof(*x));

        if (x == NULL)
            return -ENOMEM;
        w->scratch = x;
        w->nscratch = m;
        m = liq_box_patches(&w->g, w->depth, b->lo, b->hi, r, w->scratch, w->nscratch);
    }
    return m < 0 ? 0 : m;
}

/*
 * The patches worker `from` sends worker `to` in one exchange, in the order
 * both sides compute alike: the regions of `to` in the cut's order, then
 * their sources of `from` by id.  On the sending side src is a local
 * region index, on the receiving side dst.
 */
static int
liq_link_make(struct liq_worker *w, struct liq_link *l, int from, int to, int receiving)
{
    int cap = 0;

    memset(l, 0, sizeof(*l));
    l->tid = w->tids[receiving ? from : to];
    for (int r = 0; r < w->nall; r++) {
        int n;

        if (w->all[r].owner != to)
            continue;
        if ((n = liq_patches_of(w, r)) < 0)
            return -ENOMEM;
        for (int i = 0; i < n; i++) {
            struct liq_patch p = w->scratch[i];

            if (w->owner[p.src] != from)
                continue;
            p.src = receiving ? -1 : w->rlocal[w->region_of[p.src]];
            p.dst = receiving ? w->rlocal[r] : -1;
            if (liq_patch_push(&l->patch, &l->npatch, &cap, &p) != 0)
                return -ENOMEM;
            l->points += p.points;
        }
    }
    if (l->npatch > 0 && (l->buf = malloc(l->points * sizeof(double))) == NULL)
        return -ENOMEM;
    return 0;
}

static void
liq_links_free(struct liq_worker *w)
{
    for (int i = 0; i < w->nsend; i++) {
        free(w->send[i].patch);
        free(w->send[i].buf);
    }
    for (int i = 0; i < w->nrecv; i++) {
        free(w->recv[i].patch);
        free(w->recv[i].buf);
    }
    free(w->send);
    free(w->recv);
    free(w->copy);
    free(w->scratch);
    w->send = w->recv = NULL;
    w->copy = w->scratch = NULL;
    w->nsend = w->nrecv = w->ncopy = w->nscratch = 0;
}

/*
 * From w->owner, the cut (w->all, w->region_of) and this worker's regions
 * (w->rg, in the cut's order): local region indices, the patches copied
 * between local regions, and the links to the other workers.
 */
static int
liq_layout(struct liq_worker *w)
{
    int cap = 0;

    liq_links_free(w);
    for (int r = 0, i = 0; r < w->nall; r++)
        w->rlocal[r] = w->all[r].owner == w->me ? i++ : -1;
    for (int r = 0; r < w->nall; r++) {
        int n, dst = w->rlocal[r];

        if (dst < 0)
            continue;
        if ((n = liq_patches_of(w, r)) < 0)
            goto nomem;
        for (int x = 0; x < n; x++) {
            struct liq_patch p = w->scratch[x];

            if (w->owner[p.src] != w->me)
                continue;
            p.src = w->rlocal[w->region_of[p.src]];
            p.dst = dst;
            if (liq_patch_push(&w->copy, &w->ncopy, &cap, &p) != 0)
                goto nomem;
        }
    }
    w->send = calloc((size_t)w->nworkers, sizeof(*w->send));
    w->recv = calloc((size_t)w->nworkers, sizeof(*w->recv));
    if (w->send == NULL || w->recv == NULL)
        goto nomem;
    for (int p = 0; p < w->nworkers; p++) {
        if (p == w->me)
            continue;
        if (liq_link_make(w, &w->send[w->nsend], w->me, p, 0) != 0 ||
            liq_link_make(w, &w->recv[w->nrecv], p, w->me, 1) != 0) {
            w->nsend++;
            w->nrecv++;
            goto nomem;
        }
        if (w->send[w->nsend].npatch > 0)
            w->nsend++;
        else
            free(w->send[w->nsend].patch);
        if (w->recv[w->nrecv].npatch > 0)
            w->nrecv++;
        else
            free(w->recv[w->nrecv].patch);
    }
    /* The faces whose halo waits for another worker's points. */
    for (int i = 0; i < w->nrg; i++)
        memset(w->rg[i]->stale, 0, sizeof(w->rg[i]->stale));
    for (int l = 0; l < w->nrecv; l++)
        for (int f = 0; f < w->recv[l].npatch; f++) {
            const struct liq_patch *p = &w->recv[l].patch[f];
            struct liq_region *r = w->rg[p->dst];

            for (int a = 0; a < 3; a++) {
                r->stale[2 * a] |= p->hi[a] <= r->box.lo[a];
                r->stale[2 * a + 1] |= p->lo[a] >= r->box.hi[a];
            }
        }
    return 0;
nomem:
    liq_fail(w, "job: out of memory");
    return -ENOMEM;
}

/* The cut of placement owner into regions: *all and *of allocated here. */
static int
liq_cut(struct liq_worker *w, const int *owner, struct liq_region_box **all, int **of)
{
    *all = malloc((size_t)w->g.nquanta * sizeof(**all));
    *of = malloc((size_t)w->g.nquanta * sizeof(int));
    if (*all == NULL || *of == NULL)
        return -ENOMEM;
    return liq_regions(&w->g, owner, w->depth, w->heavy, *of, *all);
}

/* Read the JOB message and build the regions, quanta and links. */
static int
liq_job_setup(struct liq_worker *w)
{
    int hdr[LIQ_JOB_HDR], seed[2], rc, mine = 0;

    pvm_upkint(hdr, LIQ_JOB_HDR, 1);
    pvm_upkint(seed, 2, 1);
    w->kernel = (enum liq_kernel)hdr[LIQ_JOB_KERNEL];
    w->iters = hdr[LIQ_JOB_ITERS];
    w->gather = hdr[LIQ_JOB_GATHER] & 1;
    w->epoch = hdr[LIQ_JOB_EPOCH];
    w->heavy = hdr[LIQ_JOB_HEAVY];
    w->start = hdr[LIQ_JOB_START];
    w->halo = hdr[LIQ_JOB_HALO];
    w->seed = (uint64_t)(unsigned)seed[0] | (uint64_t)(unsigned)seed[1] << 32;
    if ((rc = liq_geom_make(&w->g, hdr, hdr[3])) != 0 ||
        (w->kernel != LIQ_JACOBI && w->kernel != LIQ_RBGS) || w->iters < 0 || w->epoch < 0 ||
        w->epoch > 100000 || w->heavy < 0 || w->heavy > 1000 || w->start < 0 ||
        w->halo < 1 || w->halo > LIQ_MAX_HALO ||
        w->start >= (w->iters > 0 ? w->iters : 1) ||
        (w->start > 0 && (w->epoch == 0 || w->start % w->epoch != 0))) {
        liq_fail(w, "job: bad description (grid %dx%dx%d, %d quanta, kernel %d, %d iterations)",
                 hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5]);
        return -EINVAL;
    }
    w->depth = liq_halo_depth(w->kernel, w->halo);
    liq_coeffs(w->g.n, &w->c, &w->c2);
    pvm_upkint(&w->nworkers, 1, 1);
    if (w->nworkers < 1 || w->nworkers > 65536) {
        liq_fail(w, "job: bad worker count %d", w->nworkers);
        return -EINVAL;
    }
    w->tids = calloc((size_t)w->nworkers, sizeof(int));
    w->owner = calloc((size_t)w->g.nquanta, sizeof(int));
    w->rlocal = calloc((size_t)w->g.nquanta, sizeof(int));
    if (w->epoch > 0)
        w->ctime = calloc((size_t)w->epoch, sizeof(double));
    if (w->tids == NULL || w->owner == NULL || w->rlocal == NULL || (w->epoch > 0 && !w->ctime))
        goto nomem;
    pvm_upkint(w->tids, w->nworkers, 1);
    pvm_upkint(w->owner, w->g.nquanta, 1);
    w->me = -1;
    for (int i = 0; i < w->nworkers; i++)
        if (w->tids[i] == w->mytid)
            w->me = i;
    if (w->me < 0) {
        liq_fail(w, "job: this worker is not in the job's worker list");
        return -EINVAL;
    }
    for (int a = 0; a < w->g.nquanta; a++) {
        if (w->owner[a] < 0 || w->owner[a] >= w->nworkers || w->tids[w->owner[a]] == 0) {
            liq_fail(w, "job: quantum %d has no valid owner (%d)", a, w->owner[a]);
            return -EINVAL;
        }
        w->nq += w->owner[a] == w->me;
    }
    if ((w->nall = liq_cut(w, w->owner, &w->all, &w->region_of)) < 0)
        goto nomem;
    for (int r = 0; r < w->nall; r++)
        mine += w->all[r].owner == w->me;
    if ((mine > 0 && (w->rg = calloc((size_t)mine, sizeof(*w->rg))) == NULL) ||
        (w->nq > 0 && (w->q = calloc((size_t)w->nq, sizeof(*w->q))) == NULL))
        goto nomem;
    for (int r = 0; r < w->nall; r++) {
        if (w->all[r].owner != w->me)
            continue;
        w->rlocal[r] = w->nrg;
        if ((w->rg[w->nrg] = liq_region_new(w, &w->all[r], mine > 1, &rc)) == NULL) {
            liq_fail(w, "job: cannot allocate region %d: %s", r, strerror(-rc));
            return rc;
        }
        w->nrg++;
    }
    for (int a = 0, i = 0; a < w->g.nquanta; a++)
        if (w->owner[a] == w->me &&
            liq_quantum_init(w, &w->q[i++], a, w->rlocal[w->region_of[a]],
                             &w->all[w->region_of[a]]) != 0)
            goto nomem;
    return liq_layout(w);
nomem:
    liq_fail(w, "job: out of memory");
    return -ENOMEM;
}

/* Send every remote patch, copy every local one.  Returns 0 or -1. */
static int
liq_exchange_start(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nsend; l++) {
        struct liq_link *k = &w->send[l];
        double *p = k->buf;

        for (int f = 0; f < k->npatch; f++) {
            liq_region_get(w->rg[k->patch[f].src]->cur, &k->patch[f], p);
            p += k->patch[f].points;
        }
        pvm_initsend(PvmDataInPlace);
        pvm_pkdouble(k->buf, (int)k->points, 1);
        if (pvm_send(k->tid, tag) < 0) {
            liq_fail(w, "ghost points to t%x could not be sent", (unsigned)k->tid);
            return -1;
        }
    }
    for (int c = 0; c < w->ncopy; c++) {
        const struct liq_patch *p = &w->copy[c];

        liq_region_copy(w->rg[p->dst]->cur, w->rg[p->src]->cur, p);
    }
    return 0;
}

/* Receive every remote patch into the halos.  Returns 0, or -1 to stop. */
static int
liq_exchange_finish(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nrecv; l++) {
        struct liq_link *k = &w->recv[l];
        const double *p;
        double t0 = liq_now();
        int b = liq_wait(w, k->tid, tag), bytes, rtag, rtid;

        w->ghost_wait += liq_now() - t0;
        if (b <= 0)
            return -1;
        pvm_bufinfo(b, &bytes, &rtag, &rtid);
        if ((size_t)bytes != k->points * sizeof(double)) {
            liq_fail(w, "ghost points from t%x: %d bytes, expected %zu", (unsigned)k->tid,
                     bytes, k->points * sizeof(double));
            return -1;
        }
        w->ghost_bytes += bytes;
        /* Put straight from the message where it can be: one copy of every
         * ghost the fewer. */
        if ((p = pvm__upk_view(k->points * sizeof(double))) == NULL) {
            if (pvm_upkdouble(k->buf, (int)k->points, 1) < 0) {
                liq_fail(w, "ghost points from t%x could not be unpacked", (unsigned)k->tid);
                return -1;
            }
            p = k->buf;
        }
        for (int f = 0; f < k->npatch; f++) {
            liq_region_put(w->rg[k->patch[f].dst]->cur, &k->patch[f], p);
            p += k->patch[f].points;
        }
    }
    return 0;
}

/*
 * The trapezoid.  A block of n sweeps on a region whose halo is d deep
 * (d >= n) need not sweep the whole extended box each time: what the
 * block must leave right is the region's own points, and sweep s of n
 * need only compute the points that sweeps s+1..n still read -- the own
 * points and n - s layers of the halo on each face (a 7-point sweep
 * reaches one point further each time).  So sweep s runs on the box
 * shrunk from the extended one by the halo layers beyond n - s
 * (liq_needed), and the redundant layers per face and block fall from
 * n(d-1) to n(n-1)/2: at the liquid scenario's halo of 5, from 20 % more
 * points than the regions own to about 10 %.  Every point computed reads
 * the values the whole-box sweep would (its neighbours lie in the box of
 * the sweep before, or in the halo as exchanged), so the bits are the
 * same; the layers left behind hold older values, which nothing reads
 * before the next exchange overwrites them.  Where the halo reaches the
 * grid's end, the box's ghost layer is the Dirichlet boundary in both
 * boxes (liq_region_make), so a face that is not shrunk reads it as the
 * whole-box sweep does.  Jacobi only (red-black sweeps in place), at one
 * sweep per pass or, temporally blocked, when the block's sweeps fit in
 * one pass: kern_jacobi_trap then shrinks each sweep's box within the pass
 * (a heavy region's repeated sweeps go one at a time, on whole boxes).
 */
static int
liq_trapezoid(const struct liq_worker *w, const struct liq_region *r, int n)
{
    return w->kernel == LIQ_JACOBI &&
           (r->plan.jac_steps == 1 ||
            (r->repeat == 1 && n <= r->plan.jac_steps && n <= LIQ_PASS_MAX));
}

/* The box indices [lo, hi] of region r that sweep s of a block of n
 * sweeps computes (the whole box for a region that is not a trapezoid). */
static void
liq_needed(const struct liq_worker *w, const struct liq_region *r, int s, int n, int lo[3],
           int hi[3])
{
    const struct kern_box *b = r->cur;
    const int len[3] = { b->ni, b->nj, b->nk };
    int t = liq_trapezoid(w, r, n);

    for (int a = 0; a < 3; a++) {
        const int *e = &r->ext[2 * a];

        lo[a] = 1 + (t ? e[0] - liq_trapezoid_layers(e[0], n, s) : 0);
        hi[a] = len[a] - (t ? e[1] - liq_trapezoid_layers(e[1], n, s) : 0);
    }
}

/* Points region r computes in a block of n sweeps, counting each sweep of
 * its kernel once (a heavy region repeats each). */
static double
liq_block_points(const struct liq_worker *w, const struct liq_region *r, int n)
{
    double all = 0;

    for (int s = 1; s <= n; s++) {
        int lo[3], hi[3];
        double v = 1;

        liq_needed(w, r, s, n, lo, hi);
        for (int a = 0; a < 3; a++)
            v *= hi[a] - lo[a] + 1;
        all += v;
    }
    return all;
}

/* Sweep s's inner trapezoid of region r in a block of n sweeps, as box
 * indices [lo, hi] per axis; 0 when it is empty. */
static int
liq_inner(const struct liq_worker *w, const struct liq_region *r, int s, int n, int lo[3],
          int hi[3])
{
    const struct kern_box *b = r->cur;
    const long o[3] = { (long)b->oi, (long)b->oj, (long)b->ok };

    liq_needed(w, r, s, n, lo, hi);
    for (int a = 0; a < 3; a++) {
        if (r->stale[2 * a])
            lo[a] = (int)(r->box.lo[a] + 1 - o[a]) + s;
        if (r->stale[2 * a + 1])
            hi[a] = (int)(r->box.hi[a] - o[a]) - s;
        if (lo[a] > hi[a])
            return 0;
    }
    return 1;
}

/*
 * Overlap for a region that needs other workers' points.  A worker whose
 * regions all touch another's -- most of them -- computed nothing while
 * its ghosts were on the way, and lost a neighbour's every delay (a CFS
 * throttle, a message behind the queue) as idle quota.  So a Jacobi
 * region (not heavy) does not wait to begin.  Swept once per pass, before
 * the ghosts come it runs, sweep by sweep, the points they cannot reach
 * yet: sweep s on its trapezoid's box shrunk by s from each face whose
 * halo waits for them (the inner trapezoid; a 7-point sweep reaches one
 * point further each time).  After they come it runs the rest of each
 * sweep's box (the skirt), sweep by sweep.  Every point of every sweep is
 * computed once, from the values the whole-box sweep would read: inner
 * sweep s reads only points inner sweep s - 1 wrote or that were fresh,
 * and the skirt of sweep s reads no point inner sweep s + 1 overwrote in
 * the box it reads, since each inner box lies one point inside the one
 * before on every shrunk face (a skirt point lies outside the inner box
 * on a shrunk face: on the others the inner box spans the sweep's).  So
 * the bits are the same.  The steps leave the other box's ghost layer as
 * it was: on a face with a neighbour it lies beyond what the block's
 * sweeps can carry to the owned points, and on the grid's boundary both
 * boxes hold the boundary values from their making (liq_region_make; the
 * heavy path relies on it too).  A region that waits on a face in x does
 * not split: its skirt would be short rows, which cost more than the
 * overlap saved.  Temporally blocked, it splits in passes (liq_bands).
 */
static int
liq_split(const struct liq_worker *w, const struct liq_region *r, int n)
{
    int lo[3], hi[3];

    if (!liq_trapezoid(w, r, n) || r->repeat != 1 || !r->box.remote || r->stale[0] ||
        r->stale[1])
        return 0;
    /* Temporally blocked: only with a core the ghosts cannot reach (liq_bands). */
    return r->plan.jac_steps == 1 || liq_inner(w, r, n, n, lo, hi);
}

/* One sweep out <- in over the box indices [lo, hi] of region r's boxes
 * (nothing if that is empty). */
static void
liq_sweep_part(const struct liq_worker *w, const struct liq_region *r, struct kern_box *out,
               const struct kern_box *in, const int lo[3], const int hi[3])
{
    const int e[6] = { lo[0] - 1, 0, lo[1] - 1, 0, lo[2] - 1, 0 };
    int n[3];
    struct kern_box vo, vi, vr;

    for (int a = 0; a < 3; a++)
        if ((n[a] = hi[a] - lo[a] + 1) < 1)
            return;
    liq_quantum_view(out, e, n, &vo);
    liq_quantum_view(in, e, n, &vi);
    liq_quantum_view(&r->rhs, e, n, &vr);
    (void)kern_jacobi_step(&vo, &vi, &vr, w->c, w->c2, &r->plan);
}

/* Slab (a, side) of the box [b0, b1] less the box [lo, hi] inside it, as
 * [x0, x1]: for a = 2, 1, 0 and side below (0) or above (1), whole planes
 * in z, then whole rows beside [lo, hi] in y, then the rest of its rows in
 * x; the six tile the difference.  Returns 0 when the slab is empty. */
static int
liq_slab(const int b0[3], const int b1[3], const int lo[3], const int hi[3], int a, int side,
         int x0[3], int x1[3])
{
    int empty = 0;

    for (int b = 0; b < 3; b++) {
        x0[b] = b > a ? lo[b] : b0[b];
        x1[b] = b > a ? hi[b] : b1[b];
    }
    x0[a] = side == 0 ? b0[a] : hi[a] + 1;
    x1[a] = side == 0 ? lo[a] - 1 : b1[a];
    for (int b = 0; b < 3; b++)
        empty |= x0[b] > x1[b];
    return !empty;
}

/* The skirt of sweep s of n: its box less the inner trapezoid, in slabs
 * (liq_slab). */
static void
liq_skirt(const struct liq_worker *w, const struct liq_region *r, struct kern_box *out,
          const struct kern_box *in, int s, int n)
{
    int lo[3], hi[3], a0[3], a1[3], b0[3], b1[3];

    liq_needed(w, r, s, n, b0, b1);
    if (!liq_inner(w, r, s, n, lo, hi)) {
        liq_sweep_part(w, r, out, in, b0, b1);
        return;
    }
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++)
            if (liq_slab(b0, b1, lo, hi, a, side, a0, a1))
                liq_sweep_part(w, r, out, in, a0, a1);
}

/* A block of n sweeps on region r, each on the trapezoid's box. */
static void
liq_trapezoid_block(const struct liq_worker *w, struct liq_region *r, int n)
{
    struct kern_box *x[2] = { r->cur, r->nxt };
    int lo[3], hi[3];

    for (int s = 1; s <= n; s++) {
        liq_needed(w, r, s, n, lo, hi);
        for (int k = 0; k < r->repeat; k++)
            liq_sweep_part(w, r, x[s % 2], x[(s - 1) % 2], lo, hi);
    }
    if (n % 2 != 0) {
        r->cur = x[1];
        r->nxt = x[0];
    }
}

/* The block's result is in nxt: make it cur. */
static void
liq_swap(struct liq_region *r)
{
    struct kern_box *x = r->cur;

    r->cur = r->nxt;
    r->nxt = x;
}

/* Region r's block of n sweeps in one temporally blocked pass cur -> nxt,
 * sweep s on the box lo[s-1] .. hi[s-1] (kern_jacobi_trap). */
static void
liq_pass(struct liq_worker *w, struct liq_region *r, int n, int lo[][3], int hi[][3])
{
    liq_kernel_rc(w, kern_jacobi_trap(r->nxt, r->cur, &r->rhs, w->c, w->c2, n,
                                      (const int (*)[3])lo, (const int (*)[3])hi, &r->plan));
}

/* A temporally blocked block of n sweeps on the trapezoid's boxes. */
static void
liq_trapezoid_pass(struct liq_worker *w, struct liq_region *r, int n)
{
    int lo[LIQ_PASS_MAX][3], hi[LIQ_PASS_MAX][3];

    for (int s = 1; s <= n; s++)
        liq_needed(w, r, s, n, lo[s - 1], hi[s - 1]);
    liq_pass(w, r, n, lo, hi);
    liq_swap(r);
}

/*
 * Overlap where a region's sweeps run temporally blocked.  Its inner
 * trapezoids (liq_inner) are one pass, the core, which reads only points
 * the ghosts do not change; but the pass keeps its sweeps between the
 * first and the last in scratch planes, so the skirt cannot be swept
 * after it sweep by sweep from them as liq_compute does at one sweep per
 * pass.  Instead each slab of the last sweep's skirt (liq_slab) is a
 * pass of its own from the block's start, after the ghosts came: sweep s
 * on the slab grown by n - s (what the last sweep's slab depends on),
 * within sweep s's trapezoid.  Every pass reads cur and writes only its
 * last sweep's box to nxt, the core and the slabs tile the region's own
 * points, and a point computed by two passes is computed from the same
 * values, so the bits are those of the whole block.  The price is the
 * points the slabs' passes compute again inside the core: per face that
 * waits, n(n-1) layers a block (20 at n = 5) against n x the region's
 * depth (480 for a 96-point region).  inner: the core, else the slabs.
 */
static void
liq_bands(struct liq_worker *w, struct liq_region *r, int inner, int n)
{
    int lo[LIQ_PASS_MAX][3], hi[LIQ_PASS_MAX][3], c0[3], c1[3], b0[3], b1[3];

    if (inner) {
        for (int s = 1; s <= n; s++)
            (void)liq_inner(w, r, s, n, lo[s - 1], hi[s - 1]); /* liq_split: none empty */
        liq_pass(w, r, n, lo, hi);
        return;
    }
    liq_needed(w, r, n, n, b0, b1);
    (void)liq_inner(w, r, n, n, c0, c1);
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++) {
            int x0[3], x1[3];

            if (!liq_slab(b0, b1, c0, c1, a, side, x0, x1))
                continue;
            for (int s = 1; s <= n; s++) {
                int n0[3], n1[3];

                liq_needed(w, r, s, n, n0, n1);
                for (int b = 0; b < 3; b++) {
                    lo[s - 1][b] = x0[b] - (n - s) > n0[b] ? x0[b] - (n - s) : n0[b];
                    hi[s - 1][b] = x1[b] + (n - s) < n1[b] ? x1[b] + (n - s) : n1[b];
                }
            }
            liq_pass(w, r, n, lo, hi);
        }
    liq_swap(r);
}

/*
 * A block of iters iterations on the regions that do (remote = 1) or do
 * not need another worker's points; with inner = 1, only the inner
 * trapezoids of those that overlap (liq_split) -- their skirts then come
 * with remote = 1, and their times add up.
 */
static double
liq_compute(struct liq_worker *w, int remote, int inner, int iters)
{
    double total = 0;

    for (int i = 0; i < w->nrg; i++) {
        struct liq_region *r = w->rg[i];
        int split;
        double t0, c0;

        if (r->box.remote != remote)
            continue;
        /* One sweep per pass where the boxes stay in the last level: no
         * non-temporal stores either, which would push them out of it. */
        r->plan.jac_steps = w->passes == 1 ? 1 : r->steps;
        r->plan.flags = w->passes == 1 ? r->flags & ~KERN_PLAN_STREAM : r->flags;
        split = liq_split(w, r, iters);
        if (inner && !split)
            continue;
        c0 = liq_cpu_now();
        t0 = liq_now();
        if (split && r->plan.jac_steps > 1) {
            liq_bands(w, r, inner, iters);
        } else if (!split && liq_trapezoid(w, r, iters)) {
            if (r->plan.jac_steps == 1)
                liq_trapezoid_block(w, r, iters);
            else
                liq_trapezoid_pass(w, r, iters);
        } else if (!split) {
            liq_region_block(w, r, iters);
        } else {
            struct kern_box *x[2] = { r->cur, r->nxt };
            int lo[3], hi[3];

            for (int s = 1; s <= iters; s++) {
                if (!inner)
                    liq_skirt(w, r, x[s % 2], x[(s - 1) % 2], s, iters);
                else if (liq_inner(w, r, s, iters, lo, hi))
                    liq_sweep_part(w, r, x[s % 2], x[(s - 1) % 2], lo, hi);
                else
                    break; /* each one lies inside the one before */
            }
            if (!inner && iters % 2 != 0) {
                r->cur = x[1];
                r->nxt = x[0];
            }
        }
        if (inner || !split) {
            r->wall = 0;
            r->cpu = 0;
        }
        double dt = liq_now() - t0, dc = liq_cpu_now() - c0;

        r->wall += dt;
        r->cpu += dc;
        w->compute_cpu += dc;
        if (inner)
            w->overlap_cpu += dc;
        total += dt;
    }
    return total;
}

/*
 * Jacobi's temporal blocking (the plan's sweeps per pass over memory) pays
 * where a worker's boxes stream from memory and costs where they stay in
 * the last-level cache between sweeps.  Measured at 160^3 (3 boxes, 100
 * MB): on a Xeon whose 2 CPUs share a 480 MB L3, one sweep per pass ran
 * 636-711 Mupdates/s against 556-589 with six; on a Zen 4 with 32 MB, six
 * ran twice as fast as one.  So a worker whose boxes together fill at most
 * half of one CPU's share of the last level (kern_llc_bytes; the llc_bytes
 * key) sweeps once per pass, and a larger one blocks as the plans say.
 * Half: on that Xeon (a 240 MB share) one sweep stopped paying between
 * 144 and 168 planes of 192^2 (3 boxes of 120 planes, 106 MB: 715 against
 * 648 Mupdates/s; 144, 128 MB: 676/645; 168, 149 MB: 588/640) -- the
 * sweep's three streams do not keep a cache full, and a VM's last level
 * is shared with more than its own CPUs.  At the share itself, 192^3 (170
 * MB) ran 520 against 637.  Timing both
 * ways instead proved unreliable: one-sweep passes speed up over the first
 * eight or so sweeps as the boxes settle into the L3 (2.5 -> 1.6 ns per
 * update), so a short trial misjudged them, and a trial inside the job
 * made the first epochs' quantum times depend on it, which the balancer
 * took for a change of speed.  The bits are the same either way.  The
 * share assumes one worker per CPU: more workers than CPUs on a machine
 * may together overflow the cache each of them fits in.
 */
static void
liq_passes(struct liq_worker *w)
{
    size_t bytes = 0;
    int steps = 1;

    if (w->kernel != LIQ_JACOBI || w->nrg == 0)
        return; /* nothing swept: w->passes says what it last was (0: never) */
    for (int i = 0; i < w->nrg; i++) {
        const struct liq_region *r = w->rg[i];

        if (r->repeat == 1 && r->steps > steps)
            steps = r->steps;
        bytes += r->a.map_len + r->b.map_len + r->rhs.map_len;
    }
    w->passes = steps > 1 && liq_one_sweep_fits(bytes, w->llc) ? 1 : steps;
}

int
liq_one_sweep_fits(size_t bytes, size_t llc)
{
    return llc != 0 && bytes <= llc / 2;
}

/*
 * Each quantum's part of its region's block.  Its compute time is its
 * share of the region's points.  Its CPU time, which the balancer weighs
 * it by, is what its own points cost: the region's CPU time per point
 * swept, halo layers included, times its points.  The halo's share of a
 * region's sweep depends on how the quanta are grouped (a quantum alone in
 * its box sweeps twice its points with a deep halo; among others, a few
 * per cent more), so charging it to the quanta made their weights change
 * with every move: the balancer's next epoch then saw a placement worse
 * than it had predicted and moved again (seed 000's non-uniform case moved
 * quanta after its first epoch in 6 runs of 6).
 */
static void
liq_charge(struct liq_worker *w, int iters)
{
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        const struct liq_region *r = w->rg[q->region];
        double swept = liq_block_points(w, r, iters);

        q->seconds += r->wall * q->share;
        q->cpu = r->cpu * ((double)q->n[0] * q->n[1] * q->n[2] / swept);
    }
}

/* The final field, quantum by quantum, in slabs of planes. */
static int
liq_send_field(struct liq_worker *w)
{
    for (int i = 0; i < w->nq; i++) {
        struct kern_box own, *b = &own;
        size_t plane;
        int per;
        double *buf;

        liq_quantum_own(w, &w->q[i], &own);
        plane = (size_t)b->ni * (size_t)b->nj;
        per = (int)(LIQ_FIELD_CHUNK / sizeof(double) / plane);
        if (per < 1)
            per = 1;
        if ((buf = malloc((size_t)per * plane * sizeof(double))) == NULL) {
            liq_fail(w, "field: out of memory");
            return -1;
        }
        for (int k0 = 1; k0 <= b->nk; k0 += per) {
            int k1 = k0 + per - 1 < b->nk ? k0 + per - 1 : b->nk, hdr[3] = { w->q[i].id, k0, k1 };
            size_t n = 0;

            for (int k = k0; k <= k1; k++)
                for (int j = 1; j <= b->nj; j++, n += (size_t)b->ni)
                    memcpy(buf + n, kern_at(b, 1, j, k), (size_t)b->ni * sizeof(double));
            pvm_initsend(PvmDataRaw);
            pvm_pkint(hdr, 3, 1);
            pvm_pkdouble(buf, (int)n, 1);
            if (pvm_send(w->master, LIQ_TAG_FIELD) < 0) {
                free(buf);
                liq_fail(w, "field: send failed");
                return -1;
            }
        }
        free(buf);
    }
    return 0;
}

/* Send the quanta that leave, in id order (sends do not wait for the
 * receiver): each as its id and its own points. */
static int
liq_send_moves(struct liq_worker *w, const int *owner, const int *tids)
{
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        struct liq_patch p;
        double *buf;
        int rc;

        if (owner[q->id] == w->me)
            continue;
        liq_quantum_patch(q, &p);
        if ((buf = malloc(p.points * sizeof(double))) == NULL) {
            liq_fail(w, "move: out of memory");
            return -1;
        }
        liq_region_get(w->rg[q->region]->cur, &p, buf);
        pvm_initsend(PvmDataInPlace);
        pvm_pkint(&q->id, 1, 1);
        pvm_pkdouble(buf, (int)p.points, 1);
        rc = pvm_send(tids[owner[q->id]], LIQ_TAG_MOVE);
        free(buf);
        if (rc < 0) {
            liq_fail(w, "move: quantum %d could not be sent to t%x", q->id,
                     (unsigned)tids[owner[q->id]]);
            return -1;
        }
    }
    return 0;
}

/* Receive quantum q's points from worker tid `from` into region r. */
static int
liq_recv_move(struct liq_worker *w, const struct liq_quantum *q, struct liq_region *r, int from)
{
    int b = liq_wait(w, from, LIQ_TAG_MOVE), id = -1, bytes, tag, tid;
    struct liq_patch p;
    double *buf;

    if (b <= 0)
        return -1;
    liq_quantum_patch(q, &p);
    pvm_bufinfo(b, &bytes, &tag, &tid);
    pvm_upkint(&id, 1, 1);
    if (id != q->id || (size_t)bytes != sizeof(int) + p.points * sizeof(double)) {
        liq_fail(w, "move: expected quantum %d (%zu points) from t%x, got %d (%d bytes)", q->id,
                 p.points, (unsigned)tid, id, bytes);
        return -1;
    }
    if ((buf = malloc(p.points * sizeof(double))) == NULL ||
        pvm_upkdouble(buf, (int)p.points, 1) < 0) {
        free(buf);
        liq_fail(w, "move: quantum %d could not be unpacked", q->id);
        return -1;
    }
    liq_region_put(r->cur, &p, buf);
    free(buf);
    return 0;
}

/*
 * Hand over the quanta that leave, take those that come (from the workers
 * of the old tids, to those of the new), cut the new placement into
 * regions -- a region of the same box as before is kept as it is, a new
 * one is laid out for this host and filled from the old regions and the
 * arrivals -- and re-link.  Halos are refreshed before the next block.
 */
static int
liq_migrate(struct liq_worker *w, const int *owner, const int *tids)
{
    struct liq_region_box *all = NULL;
    struct liq_region **rg = NULL;
    struct liq_quantum *nq = NULL;
    int *of = NULL, *loc = NULL, *fresh = NULL, nall, nrg = 0, n = 0, i = 0, k = 0, rc;

    if (liq_send_moves(w, owner, tids) != 0)
        return -1;
    for (int a = 0; a < w->g.nquanta; a++)
        n += owner[a] == w->me;
    if ((nall = liq_cut(w, owner, &all, &of)) < 0 ||
        (loc = malloc((size_t)nall * sizeof(int))) == NULL ||
        (fresh = calloc((size_t)nall, sizeof(int))) == NULL ||
        (rg = calloc((size_t)nall, sizeof(*rg))) == NULL ||
        (nq = calloc((size_t)(n > 0 ? n : 1), sizeof(*nq))) == NULL)
        goto nomem;
    for (int r = 0; r < nall; r++)
        k += all[r].owner == w->me;
    /* The new regions: the old one of the same box, or a fresh one. */
    for (int r = 0; r < nall; r++) {
        loc[r] = -1;
        if (all[r].owner != w->me)
            continue;
        for (int x = 0; x < w->nrg && rg[nrg] == NULL; x++) {
            struct liq_region *o = w->rg[x];

            if (o != NULL && memcmp(o->box.lo, all[r].lo, sizeof(o->box.lo)) == 0 &&
                memcmp(o->box.hi, all[r].hi, sizeof(o->box.hi)) == 0 &&
                o->box.heavy == all[r].heavy) {
                rg[nrg] = o;
                o->box = all[r];
                w->rg[x] = NULL;
            }
        }
        if (rg[nrg] == NULL) {
            if ((rg[nrg] = liq_region_new(w, &all[r], k > 1, &rc)) == NULL) {
                liq_fail(w, "move: cannot allocate region %d: %s", r, strerror(-rc));
                goto fail;
            }
            fresh[nrg] = 1;
        }
        loc[r] = nrg++;
    }
    /* The new quanta, by id: kept ones copied into a fresh region, arrivals received. */
    for (int a = 0, o = 0; a < w->g.nquanta; a++) {
        int r = loc[of[a]];

        while (o < w->nq && w->q[o].id < a)
            o++;
        if (owner[a] != w->me)
            continue;
        if (w->owner[a] == w->me) {
            struct liq_quantum *old = &w->q[o];
            struct liq_patch p;

            nq[i] = *old;
            nq[i].region = r;
            old->hist = NULL;
            if (fresh[r]) {
                liq_quantum_patch(old, &p);
                liq_region_copy(rg[r]->cur, w->rg[old->region]->cur, &p);
            }
        } else if (liq_quantum_init(w, &nq[i], a, r, &all[of[a]]) != 0) {
            i++;
            goto nomem;
        } else if (liq_recv_move(w, &nq[i], rg[r], w->tids[w->owner[a]]) != 0) {
            i++;
            goto fail;
        }
        i++;
    }
    liq_quanta_free(w->q, w->nq);
    liq_regions_free(w->rg, w->nrg);
    free(w->all);
    free(w->region_of);
    w->q = nq;
    w->nq = n;
    w->rg = rg;
    w->nrg = nrg;
    w->all = all;
    w->nall = nall;
    w->region_of = of;
    free(loc);
    free(fresh);
    memcpy(w->owner, owner, (size_t)w->g.nquanta * sizeof(int));
    memcpy(w->tids, tids, (size_t)w->nworkers * sizeof(int));
    return liq_layout(w);
nomem:
    liq_fail(w, "move: out of memory");
fail:
    liq_quanta_free(nq, i);
    liq_regions_free(rg, nrg);
    free(all);
    free(of);
    free(loc);
    free(fresh);
    return -1;
}

/* The end of an epoch: the median of each quantum's times, and the
 * worker's speed now (its mean compute time per iteration). */
static int
liq_report(struct liq_worker *w, int epoch)
{
    double *t = malloc((size_t)w->epoch * sizeof(double)), recent = 0;

    if (t == NULL) {
        liq_fail(w, "epoch: out of memory");
        return -1;
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&epoch, 1, 1);
    pvm_pkint(&w->nq, 1, 1);
    for (int i = 0; i < w->nq; i++) {
        double med;

        memcpy(t, w->q[i].hist, (size_t)w->epoch * sizeof(double));
        med = liq_median(t, (size_t)w->epoch);
        pvm_pkint(&w->q[i].id, 1, 1);
        pvm_pkdouble(&med, 1, 1);
    }
    free(t);
    for (int k = 0; k < w->epoch; k++)
        recent += w->ctime[k] / w->epoch;
    pvm_pkdouble(&recent, 1, 1);
    pvm_pkdouble(&w->last_move, 1, 1);
    w->last_move = 0;
    /* The share of a CPU this worker spent outside its kernels since the
     * last report (messages, copies, TLS), for the report's
     * other_cpu_share; the balancer does not model it (vmrun_balance.c). */
    double now = liq_now(), cpu = liq_process_cpu(), other = 0;

    if (now > w->ep_t)
        other = ((cpu - w->ep_cpu) - (w->compute_cpu - w->ep_kcpu)) / (now - w->ep_t);
    if (!(other >= 0))
        other = 0;
    pvm_pkdouble(&other, 1, 1);
    w->ep_t = now;
    w->ep_cpu = cpu;
    w->ep_kcpu = w->compute_cpu;
    if (pvm_send(w->master, LIQ_TAG_EPOCH) < 0) {
        liq_fail(w, "epoch %d: the report could not be sent", epoch);
        return -1;
    }
    return 0;
}

/* Take the plan of an epoch boundary and move.  Returns 0, 1 when this
 * worker's slot is given up (it has handed its quanta over), or -1. */
static int
liq_plan(struct liq_worker *w, int epoch)
{
    int *owner = malloc((size_t)w->g.nquanta * sizeof(int));
    int *tids = malloc((size_t)w->nworkers * sizeof(int)), b, e = -1, n = -1, rc = -1;
    double t0;

    if (owner == NULL || tids == NULL) {
        liq_fail(w, "epoch: out of memory");
        goto out;
    }
    t0 = liq_now();
    b = liq_wait(w, w->master, LIQ_TAG_PLAN);
    w->plan_wait += liq_now() - t0;
    if (b <= 0)
        goto out;
    t0 = liq_now();
    pvm_upkint(&e, 1, 1);
    if (e != epoch || pvm_upkint(owner, w->g.nquanta, 1) < 0 || pvm_upkint(&n, 1, 1) < 0 ||
        n != w->nworkers || pvm_upkint(tids, n, 1) < 0) {
        liq_fail(w, "epoch %d: bad plan (for epoch %d, %d workers)", epoch, e, n);
        goto out;
    }
    for (int a = 0; a < w->g.nquanta; a++)
        if (owner[a] < 0 || owner[a] >= w->nworkers || tids[owner[a]] == 0) {
            liq_fail(w, "epoch %d: quantum %d has no valid owner", epoch, a);
            goto out;
        }
    if (memcmp(owner, w->owner, (size_t)w->g.nquanta * sizeof(int)) == 0 &&
        memcmp(tids, w->tids, (size_t)w->nworkers * sizeof(int)) == 0)
        rc = 0;
    else {
        double c0 = liq_process_cpu();

        if ((rc = liq_migrate(w, owner, tids)) == 0)
            w->last_move = liq_now() - t0;
        /* A move's CPU is not what the worker's messages cost per epoch. */
        w->ep_cpu += liq_process_cpu() - c0;
        w->ep_t += liq_now() - t0;
    }
    if (rc == 0 && tids[w->me] != w->mytid)
        rc = 1;
out:
    free(owner);
    free(tids);
    return rc;
}

int
liq_plan_boundary(int epoch)
{
    return epoch == 1 ? 1 : epoch + 1;
}

int
liq_plan_at(int boundary)
{
    return boundary == 1 || boundary >= 3;
}

/* Evacuated: the totals, then this worker leaves. */
static void
liq_leave(struct liq_worker *w, int iters_done)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&w->compute_all, 1, 1);
    pvm_pkdouble(&w->comm_all, 1, 1);
    pvm_pkint(&iters_done, 1, 1);
    pvm_pkdouble(&w->last_move, 1, 1);
    pvm_send(w->master, LIQ_TAG_LEFT);
}

/*
 * The block that starts at iteration it: its number, and its length in
 * *len.  Each epoch (the whole job without epochs; the job's end may cut
 * the last one short) is cut into as few blocks as the halo's reach allows,
 * of lengths that differ by at most one: 10 iterations with a halo of 3
 * are 3, 3, 2, 2, not 3, 3, 3, 1, whose last exchange of ghosts would buy
 * one iteration and leave it no interior to hide behind.  Workers agree on
 * the numbers whenever they joined, and a number's parity tells two
 * consecutive exchanges apart.
 */
static int
liq_block_at(const struct liq_worker *w, int it, int *len)
{
    int span = w->epoch > 0 ? w->epoch : w->iters, e = it / span, o = it % span;
    int n = w->iters - e * span < span ? w->iters - e * span : span;
    int nb = (n + w->halo - 1) / w->halo, q = n / nb, r = n % nb;
    int b = o < r * (q + 1) ? o / (q + 1) : r + (o - r * (q + 1)) / q;

    *len = b < r ? q + 1 : q;
    return e * ((span + w->halo - 1) / w->halo) + b;
}

/* Run the job.  Returns 1 when this worker was evacuated and must exit. */
static int
liq_job(struct liq_worker *w)
{
    double t_start = liq_now(), t_setup;
    int leave = 0, it, blk, done = 0;
    uint64_t sum = 0;

    w->cpu0 = liq_process_cpu();
    w->passes = 0;
    if (liq_job_setup(w) != 0)
        goto out;
    t_setup = liq_now() - t_start;
    w->compute_all = w->comm_all = w->compute_cpu = w->overlap_cpu = 0;
    w->ghost_wait = w->plan_wait = w->ghost_bytes = 0;
    w->kerr = 0;
    w->ep_t = liq_now();
    w->ep_cpu = liq_process_cpu();
    w->ep_kcpu = 0;
    /* A worker that joins at an epoch boundary takes that boundary's plan. */
    done = w->start;
    if (w->start > 0 && (leave = liq_plan(w, w->start / w->epoch)) != 0)
        goto gone;
    for (it = w->start; it < w->iters; it += blk) {
        liq_passes(w); /* the regions change when quanta move */

        double compute = 0, t0 = liq_now();
        int tag = LIQ_TAG_GHOST + (liq_block_at(w, it, &blk) & 1);

        if (liq_exchange_start(w, tag) != 0)
            goto out;
        compute += liq_compute(w, 0, 0, blk);
        compute += liq_compute(w, 1, 1, blk);
        if (liq_exchange_finish(w, tag) != 0)
            goto out;
        compute += liq_compute(w, 1, 0, blk);
        if (w->kerr != 0) {
            liq_fail(w, "the kernel failed: %s", strerror(-w->kerr));
            goto out;
        }
        liq_charge(w, blk);
        if (w->epoch > 0) {
            /* Each iteration of the block is charged its share. */
            for (int x = it; x < it + blk; x++) {
                for (int i = 0; i < w->nq; i++)
                    w->q[i].hist[x % w->epoch] = w->q[i].cpu;
                w->ctime[x % w->epoch] = compute / blk;
            }
            /* Report, and take the plan for this boundary (liq_plan_at). */
            int b = (it + blk) / w->epoch;

            if ((it + blk) % w->epoch == 0 && it + blk < w->iters &&
                (liq_report(w, b) != 0 ||
                 (liq_plan_at(b) && b > w->start / w->epoch && (leave = liq_plan(w, b)) < 0)))
                goto out;
        }
        double comm = liq_now() - t0 - compute;

        w->compute_all += compute;
        w->comm_all += comm;
        if (liq_send_progress(w, it + blk, compute, comm) < 0) {
            liq_fail(w, "progress could not be sent to the master");
            goto out;
        }
        if (leave) {
            done = it + blk;
            goto gone;
        }
    }
    for (int i = 0; i < w->nq; i++) {
        struct kern_box own;

        liq_quantum_own(w, &w->q[i], &own);
        sum += liq_field_checksum(&own);
    }

    double run = liq_now() - t_start - t_setup;
    unsigned cs[2] = { (unsigned)sum, (unsigned)(sum >> 32) };

    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&t_setup, 1, 1);
    pvm_pkdouble(&run, 1, 1);
    pvm_pkdouble(&w->compute_all, 1, 1);
    pvm_pkdouble(&w->comm_all, 1, 1);
    pvm_pkuint(cs, 2, 1);
    pvm_pkint(&w->nq, 1, 1);
    for (int i = 0; i < w->nq; i++) {
        pvm_pkint(&w->q[i].id, 1, 1);
        pvm_pkdouble(&w->q[i].seconds, 1, 1);
    }
    pvm_pkdouble(&w->last_move, 1, 1);
    pvm_pkint(&w->passes, 1, 1);
    /* CPU in the kernels and in the whole process since the job came
     * (setup, messages, TLS, packing; not the probes before it); wall
     * time blocked for ghosts and for plans; bytes of ghosts received
     * (the launcher's JOB_WCPU). */
    double fig[] = { w->compute_cpu, liq_process_cpu() - w->cpu0, w->overlap_cpu,
                     w->ghost_wait, w->plan_wait, w->ghost_bytes };

    pvm_pkdouble(fig, (int)(sizeof(fig) / sizeof(fig[0])), 1);
    if (pvm_send(w->master, LIQ_TAG_DONE) < 0)
        goto out;
    if (w->gather)
        liq_send_field(w);
    goto out;
gone:
    if (leave > 0)
        liq_leave(w, done);
out:
    liq_job_free(w);
    return leave > 0;
}

int
liq_worker_main(void)
{
    struct liq_worker w;
    const char *cache = getenv("LIQUIDVM_CACHE"), *llc = getenv("LIQUIDVM_LLC");

    memset(&w, 0, sizeof(w));
    if ((w.mytid = pvm_mytid()) < 0) {
        fprintf(stderr, "vmrun worker: cannot enroll in the VM (%d)\n", w.mytid);
        return 1;
    }
    if ((w.master = pvm_parent()) < 0) {
        fprintf(stderr, "vmrun worker: no parent task; workers are started by vmrun\n");
        pvm_exit();
        return 2;
    }
    /* Ghost messages of a megabyte or so come and go every block.  glibc
     * would serve each from fresh pages (mmap, or a heap top trimmed after
     * the last one was freed), and every page of every message faulted in
     * and was zeroed again: 1-2 % of a worker's CPU in the liquid
     * scenario.  Kept on the heap and never trimmed, they reuse the same
     * pages.  The boxes are mapped on their own (kern_box_alloc). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    w.cache = kern_cache_bytes(cache != NULL ? strtoull(cache, NULL, 10) : 0);
    w.llc = kern_llc_bytes(llc != NULL ? strtoull(llc, NULL, 10) : 0);
    /* Ghost faces and moves go task to task, not through the daemons: a
     * daemon relays for all of its host's tasks and, in a cgroup with a CPU
     * quota, is throttled with them. */
    pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_notify(PvmTaskExit, LIQ_TAG_EXITED, 1, &w.master);
    for (;;) {
        int b = liq_wait(&w, w.master, -1), bytes, tag, tid;

        if (b <= 0)
            break;
        pvm_bufinfo(b, &bytes, &tag, &tid);
        if (tag == LIQ_TAG_PROBE)
            liq_probe(&w);
        else if (tag == LIQ_TAG_RING)
            liq_ring(&w);
        else if (tag == LIQ_TAG_JOB && liq_job(&w))
            break; /* evacuated */
        else if (tag == LIQ_TAG_QUIT)
            break;
    }
    pvm_exit();
    return 0;
}
