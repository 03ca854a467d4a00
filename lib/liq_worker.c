/*
 * liq_worker.c - the worker task of a stencil job: probes the host's speed,
 * takes part in the ring benchmark, and computes its quanta in blocks of
 * iterations, refreshing their halos (liq_halo.c) by memcpy between its own
 * quanta and by one PVM message per neighbour worker per block, overlapped
 * with the quanta that need nothing from another worker.
 */
#include "liq.h"
#include "pvm3.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often a waiting worker looks for QUIT or its master's exit. */
#define LIQ_POLL_USEC 200000

struct liq_quantum {
    int id;
    int remote;                 /* some neighbour lives on another worker */
    int n[3];                   /* its own points per axis */
    int ext[6];                 /* halo layers of the box beyond them, per side */
    struct kern_box a, b, rhs;  /* the extended boxes; b is Jacobi's second */
    struct kern_box *cur, *nxt;
    struct kern_plan plan;
    double seconds;             /* compute time, whole run */
    double now;                 /* compute time, this iteration */
    double cpu;                 /* CPU time of this iteration's compute */
    double *hist;               /* CPU time of each iteration, this epoch */
    int repeat;                 /* phases run this many times (heavy region) */
};

/* One direction of the exchange with one other worker: its patches, src
 * (sending) or dst (receiving) a local quantum index. */
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
    struct liq_quantum *q;
    int *local;                 /* quantum id -> local index, or -1 */
    int nsend, nrecv;
    struct liq_link *send, *recv;
    int ncopy;
    struct liq_patch *copy;     /* halo patches between local quanta (local indices) */
    int nscratch;
    struct liq_patch *scratch;  /* one quantum's patches, while links are built */
    double *ctime;              /* compute seconds of each iteration, this epoch */
    double last_move;           /* seconds the last move took */
    double compute_all, comm_all;
};

static void liq_links_free(struct liq_worker *w);

static double
liq_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: what a quantum costs, whatever share of a CPU
 * the worker gets (preemption, a cgroup's throttling). */
static double
liq_cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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

/* Allocate and fill one quantum's boxes for this host's cache: its points
 * [lo, hi) and, for a quantum of the job (id >= 0), its halo. */
static int
liq_quantum_make(struct liq_worker *w, struct liq_quantum *q, int id, const int lo[3],
                 const int hi[3])
{
    int ni, nj, nk, rc;

    memset(q, 0, sizeof(*q));
    q->id = id;
    if (id >= 0)
        liq_quantum_halo(&w->g, id, w->depth, q->ext);
    for (int a = 0; a < 3; a++)
        q->n[a] = hi[a] - lo[a];
    ni = q->n[0] + q->ext[0] + q->ext[1];
    nj = q->n[1] + q->ext[2] + q->ext[3];
    nk = q->n[2] + q->ext[4] + q->ext[5];
    if ((rc = kern_plan_make(&q->plan, w->cache, ni, nj, nk, KERN_PLAN_FAST)) != 0)
        return rc;
    /* The plan leaves a box that fits in the last cache level unblocked;
     * but a worker sweeps all its quanta in turn, and it is their sum that
     * would have to stay there. */
    if (id >= 0 && w->nq > 1 && q->plan.jac_steps == 1)
        q->plan.jac_steps = KERN_JAC_STEPS;
    if ((rc = kern_box_alloc(&q->a, ni, nj, nk, q->plan.bi, q->plan.bj)) != 0)
        return rc;
    if ((rc = kern_box_alloc(&q->rhs, ni, nj, nk, q->plan.bi, q->plan.bj)) != 0)
        return rc;
    q->a.oi = q->rhs.oi = lo[0] - q->ext[0];
    q->a.oj = q->rhs.oj = lo[1] - q->ext[2];
    q->a.ok = q->rhs.ok = lo[2] - q->ext[4];
    liq_field_init(&q->a, &q->rhs, w->seed);
    q->cur = &q->a;
    q->repeat = id >= 0 && w->heavy > 1 && liq_quantum_heavy(&w->g, id) ? w->heavy : 1;
    if (w->epoch > 0 && (q->hist = calloc((size_t)w->epoch, sizeof(double))) == NULL)
        return -ENOMEM;
    if (w->kernel == LIQ_JACOBI) {
        if ((rc = kern_box_alloc(&q->b, ni, nj, nk, q->plan.bi, q->plan.bj)) != 0)
            return rc;
        kern_box_copy(&q->b, &q->a); /* the Dirichlet ghosts, in both boxes */
        q->nxt = &q->b;
    }
    return 0;
}

static void
liq_quantum_free(struct liq_quantum *q)
{
    kern_box_free(&q->a);
    kern_box_free(&q->b);
    kern_box_free(&q->rhs);
    free(q->hist);
    q->hist = NULL;
}

/* The quantum's own points, as a box of their own. */
static void
liq_quantum_own(const struct liq_quantum *q, struct kern_box *view)
{
    liq_quantum_view(q->cur, q->ext, q->n, view);
}

/* One block of iterations on one quantum. */
static void
liq_quantum_block(struct liq_worker *w, struct liq_quantum *q, int iters)
{
    liq_block(&q->cur, &q->nxt, &q->rhs, w->kernel, w->c, w->c2, iters, q->repeat, &q->plan);
}

/* ---- the speed probe ---- */

static void
liq_probe(struct liq_worker *w)
{
    int ext[3], kernel, lo[3] = { 0, 0, 0 }, rc;
    double seconds, t0, c0 = 0, t, ups, ups_cpu;
    long sweeps = 0;
    struct liq_quantum q;

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
    if ((rc = liq_quantum_make(w, &q, -1, lo, ext)) != 0) {
        liq_quantum_free(&q);
        liq_fail(w, "probe: cannot allocate a %dx%dx%d box: %s", ext[0], ext[1], ext[2],
                 strerror(-rc));
        return;
    }
    /* One untimed iteration faults the pages in; then iterate for the time. */
    for (int warm = 1;; warm = 0) {
        t0 = liq_now();
        c0 = liq_cpu_now();
        do {
            liq_quantum_block(w, &q, w->halo);
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
    liq_quantum_free(&q);
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
liq_job_free(struct liq_worker *w)
{
    for (int i = 0; i < w->nq; i++)
        liq_quantum_free(&w->q[i]);
    liq_links_free(w);
    free(w->q);
    free(w->local);
    free(w->owner);
    free(w->tids);
    free(w->ctime);
    w->q = NULL;
    w->local = w->owner = w->tids = NULL;
    w->ctime = NULL;
    w->nq = 0;
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

/* The patches of quantum dst's halo, in w->scratch (grown as needed):
 * how many, or -ENOMEM. */
static int
liq_patches_of(struct liq_worker *w, int dst)
{
    int m = liq_halo_patches(&w->g, w->depth, dst, w->scratch, w->nscratch);

    if (m > w->nscratch) {
        struct liq_patch *x = realloc(w->scratch, (size_t)m * sizeof(*x));

        if (x == NULL)
            return -ENOMEM;
        w->scratch = x;
        w->nscratch = m;
        m = liq_halo_patches(&w->g, w->depth, dst, w->scratch, w->nscratch);
    }
    return m < 0 ? 0 : m;
}

/*
 * The patches worker `from` sends worker `to` in one exchange, in the order
 * both sides compute alike: destination quanta of `to` by id, then their
 * sources of `from` by id.  On the sending side src is a local index, on
 * the receiving side dst.
 */
static int
liq_link_make(struct liq_worker *w, struct liq_link *l, int from, int to, int receiving)
{
    int cap = 0;

    memset(l, 0, sizeof(*l));
    l->tid = w->tids[receiving ? from : to];
    for (int t = 0; t < w->g.nquanta; t++) {
        int n;

        if (w->owner[t] != to)
            continue;
        if ((n = liq_patches_of(w, t)) < 0)
            return -ENOMEM;
        for (int i = 0; i < n; i++) {
            struct liq_patch p = w->scratch[i];

            if (w->owner[p.src] != from)
                continue;
            p.src = receiving ? -1 : w->local[p.src];
            p.dst = receiving ? w->local[p.dst] : -1;
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
 * From w->owner and w->q (sorted by id): local indices, the patches copied
 * between local quanta, which quanta need another worker's points, and the
 * links to the other workers.
 */
static int
liq_layout(struct liq_worker *w)
{
    int cap = 0;

    liq_links_free(w);
    for (int a = 0; a < w->g.nquanta; a++)
        w->local[a] = -1;
    for (int i = 0; i < w->nq; i++)
        w->local[w->q[i].id] = i;
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        int n;

        q->remote = 0;
        if ((n = liq_patches_of(w, q->id)) < 0)
            goto nomem;
        for (int x = 0; x < n; x++) {
            struct liq_patch p = w->scratch[x];

            if (w->owner[p.src] != w->me) {
                q->remote = 1;
                continue;
            }
            p.src = w->local[p.src];
            p.dst = i;
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
    return 0;
nomem:
    liq_fail(w, "job: out of memory");
    return -ENOMEM;
}

/* Read the JOB message and build the quanta and links. */
static int
liq_job_setup(struct liq_worker *w)
{
    int hdr[LIQ_JOB_HDR], seed[2], lo[3], hi[3], rc;

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
    w->local = calloc((size_t)w->g.nquanta, sizeof(int));
    if (w->epoch > 0)
        w->ctime = calloc((size_t)w->epoch, sizeof(double));
    if (w->tids == NULL || w->owner == NULL || w->local == NULL || (w->epoch > 0 && !w->ctime))
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
    if (w->nq > 0 && (w->q = calloc((size_t)w->nq, sizeof(*w->q))) == NULL)
        goto nomem;
    for (int a = 0, i = 0; a < w->g.nquanta; a++) {
        if (w->owner[a] != w->me)
            continue;
        liq_quantum_extent(&w->g, a, lo, hi);
        if ((rc = liq_quantum_make(w, &w->q[i], a, lo, hi)) != 0) {
            liq_fail(w, "job: cannot allocate quantum %d: %s", a, strerror(-rc));
            return rc;
        }
        i++;
    }
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
            liq_region_get(w->q[k->patch[f].src].cur, &k->patch[f], p);
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

        liq_region_copy(w->q[p->dst].cur, w->q[p->src].cur, p);
    }
    return 0;
}

/* Receive every remote patch into the halos.  Returns 0, or -1 to stop. */
static int
liq_exchange_finish(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nrecv; l++) {
        struct liq_link *k = &w->recv[l];
        const double *p = k->buf;
        int b = liq_wait(w, k->tid, tag), bytes, rtag, rtid;

        if (b <= 0)
            return -1;
        pvm_bufinfo(b, &bytes, &rtag, &rtid);
        if ((size_t)bytes != k->points * sizeof(double) ||
            pvm_upkdouble(k->buf, (int)k->points, 1) < 0) {
            liq_fail(w, "ghost points from t%x: %d bytes, expected %zu", (unsigned)k->tid,
                     bytes, k->points * sizeof(double));
            return -1;
        }
        for (int f = 0; f < k->npatch; f++) {
            liq_region_put(w->q[k->patch[f].dst].cur, &k->patch[f], p);
            p += k->patch[f].points;
        }
    }
    return 0;
}

/* A block of iters iterations on the quanta that do (remote = 1) or do not
 * need another worker's points. */
static double
liq_compute(struct liq_worker *w, int remote, int iters)
{
    double total = 0;

    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        double t0;

        if (q->remote != remote)
            continue;
        double c0 = liq_cpu_now();

        t0 = liq_now();
        liq_quantum_block(w, q, iters);
        t0 = liq_now() - t0;
        q->cpu += liq_cpu_now() - c0;
        q->seconds += t0;
        q->now += t0;
        total += t0;
    }
    return total;
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

        liq_quantum_own(&w->q[i], &own);
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

/* Hand over the quanta that leave, take those that come (from the workers
 * of the old tids, to those of the new); then re-link. */
static int
liq_migrate(struct liq_worker *w, const int *owner, const int *tids)
{
    struct liq_quantum *nq;
    int n = 0, lo[3], hi[3], rc;

    for (int a = 0; a < w->g.nquanta; a++)
        n += owner[a] == w->me;
    if ((nq = calloc((size_t)(n > 0 ? n : 1), sizeof(*nq))) == NULL) {
        liq_fail(w, "move: out of memory");
        return -1;
    }
    /* Send first (sends do not wait for the receiver), in id order. */
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        struct kern_box own;
        size_t pts;
        double *buf;

        if (owner[q->id] == w->me)
            continue;
        /* Its own points and their ghost layer: the halo is refreshed
         * before the next block anyway. */
        liq_quantum_own(q, &own);
        pts = kern_box_points(&own);
        if ((buf = malloc(pts * sizeof(double))) == NULL) {
            free(nq);
            liq_fail(w, "move: out of memory");
            return -1;
        }
        kern_box_pack(&own, buf);
        pvm_initsend(PvmDataInPlace);
        pvm_pkint(&q->id, 1, 1);
        pvm_pkdouble(buf, (int)pts, 1);
        rc = pvm_send(tids[owner[q->id]], LIQ_TAG_MOVE);
        free(buf);
        if (rc < 0) {
            free(nq);
            liq_fail(w, "move: quantum %d could not be sent to t%x", q->id,
                     (unsigned)tids[owner[q->id]]);
            return -1;
        }
    }
    /* The new set, by id: kept quanta as they are, arrivals laid out for this host. */
    for (int a = 0, i = 0, k = 0; a < w->g.nquanta; a++) {
        while (k < w->nq && w->q[k].id < a)
            k++;
        if (owner[a] != w->me)
            continue;
        if (w->owner[a] == w->me) {
            /* cur and nxt point into the struct: aim them at the copy. */
            struct liq_quantum *old = &w->q[k];

            nq[i] = *old;
            nq[i].cur = old->cur == &old->a ? &nq[i].a : &nq[i].b;
            nq[i].nxt = old->nxt == NULL ? NULL : old->nxt == &old->a ? &nq[i].a : &nq[i].b;
            memset(old, 0, sizeof(*old));
        } else {
            int b = liq_wait(w, w->tids[w->owner[a]], LIQ_TAG_MOVE), id = -1, bytes, tag, tid;

            liq_quantum_extent(&w->g, a, lo, hi);
            if (b <= 0 || (rc = liq_quantum_make(w, &nq[i], a, lo, hi)) != 0) {
                liq_quantum_free(&nq[i]);
                for (int j = 0; j < i; j++)
                    liq_quantum_free(&nq[j]);
                free(nq);
                if (b > 0)
                    liq_fail(w, "move: cannot allocate quantum %d", a);
                return -1;
            }
            struct kern_box own;

            pvm_bufinfo(b, &bytes, &tag, &tid);
            pvm_upkint(&id, 1, 1);
            liq_quantum_own(&nq[i], &own);
            size_t pts = kern_box_points(&own);

            if (id != a || (size_t)bytes != sizeof(int) + pts * sizeof(double)) {
                for (int j = 0; j <= i; j++)
                    liq_quantum_free(&nq[j]);
                free(nq);
                liq_fail(w, "move: expected quantum %d (%zu points) from t%x, got %d (%d bytes)",
                         a, pts, (unsigned)tid, id, bytes);
                return -1;
            }
            double *buf = malloc(pts * sizeof(double));

            if (buf == NULL || pvm_upkdouble(buf, (int)pts, 1) < 0) {
                free(buf);
                for (int j = 0; j <= i; j++)
                    liq_quantum_free(&nq[j]);
                free(nq);
                liq_fail(w, "move: quantum %d could not be unpacked", a);
                return -1;
            }
            /* Its other box got the Dirichlet ghosts when it was made. */
            kern_box_unpack(&own, buf);
            free(buf);
        }
        i++;
    }
    for (int i = 0; i < w->nq; i++)
        liq_quantum_free(&w->q[i]);
    free(w->q);
    w->q = nq;
    w->nq = n;
    memcpy(w->owner, owner, (size_t)w->g.nquanta * sizeof(int));
    memcpy(w->tids, tids, (size_t)w->nworkers * sizeof(int));
    return liq_layout(w);
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
    if ((b = liq_wait(w, w->master, LIQ_TAG_PLAN)) <= 0)
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
    else if ((rc = liq_migrate(w, owner, tids)) == 0)
        w->last_move = liq_now() - t0;
    if (rc == 0 && tids[w->me] != w->mytid)
        rc = 1;
out:
    free(owner);
    free(tids);
    return rc;
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
 * The number of the block that starts at iteration it: blocks of w->halo
 * iterations from each epoch's start (the last one of an epoch shorter).
 * Workers agree on it whenever they joined, and its parity tells two
 * consecutive exchanges apart.
 */
static int
liq_block_index(const struct liq_worker *w, int it)
{
    if (w->epoch <= 0)
        return it / w->halo;
    return it / w->epoch * ((w->epoch + w->halo - 1) / w->halo) + it % w->epoch / w->halo;
}

/* Run the job.  Returns 1 when this worker was evacuated and must exit. */
static int
liq_job(struct liq_worker *w)
{
    double t_start = liq_now(), t_setup;
    int leave = 0, it, blk, done = 0;
    uint64_t sum = 0;

    if (liq_job_setup(w) != 0)
        goto out;
    t_setup = liq_now() - t_start;
    w->compute_all = w->comm_all = 0;
    /* A worker that joins at an epoch boundary takes that boundary's plan. */
    done = w->start;
    if (w->start > 0 && (leave = liq_plan(w, w->start / w->epoch)) != 0)
        goto gone;
    for (it = w->start; it < w->iters; it += blk) {
        double compute = 0, t0 = liq_now();
        int tag = LIQ_TAG_GHOST + (liq_block_index(w, it) & 1);

        /* A block ends at the halo's reach, an epoch's end or the job's. */
        blk = w->halo < w->iters - it ? w->halo : w->iters - it;
        if (w->epoch > 0 && blk > w->epoch - it % w->epoch)
            blk = w->epoch - it % w->epoch;
        for (int i = 0; i < w->nq; i++)
            w->q[i].now = w->q[i].cpu = 0;
        if (liq_exchange_start(w, tag) != 0)
            goto out;
        compute += liq_compute(w, 0, blk);
        if (liq_exchange_finish(w, tag) != 0)
            goto out;
        compute += liq_compute(w, 1, blk);
        if (w->epoch > 0) {
            /* Each iteration of the block is charged its share. */
            for (int x = it; x < it + blk; x++) {
                for (int i = 0; i < w->nq; i++)
                    w->q[i].hist[x % w->epoch] = w->q[i].cpu / blk;
                w->ctime[x % w->epoch] = compute / blk;
            }
            if ((it + blk) % w->epoch == 0 && it + blk < w->iters &&
                (liq_report(w, (it + blk) / w->epoch) != 0 ||
                 (leave = liq_plan(w, (it + blk) / w->epoch)) < 0))
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

        liq_quantum_own(&w->q[i], &own);
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
    const char *cache = getenv("LIQUIDVM_CACHE");

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
    w.cache = kern_cache_bytes(cache != NULL ? strtoull(cache, NULL, 10) : 0);
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
