/*
 * liq_migrate.c - migration (step 5 of the liquid runtime, issue 8, seed
 * 000's quanta as the unit of moving): at an epoch boundary the worker
 * takes the master's plan, sends each quantum that leaves as one message
 * of its own points, receives those that come, and lays its quanta out
 * again for this host's cache.  Both sides cut the new placement into
 * regions alike (liq_region.c); a region whose box is unchanged is kept,
 * a new one is filled from the old regions and the arrivals.  Also the
 * boundaries at which plans are taken, which the master shares.
 */
#include "liq_int.h"

#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "pvm_ext.h"

/* The pieces quantum q moves in, one message each (liq_msg_points), in
 * *v (to be freed): how many, or -1 after telling the master. */
static int
liq_move_pieces(struct liq_worker *w, const struct liq_quantum *q, struct liq_patch **v)
{
    struct liq_patch p;
    int n;

    liq_quantum_patch(q, &p);
    n = liq_patch_cut(&p, liq_msg_points(w), NULL, 0);
    if ((*v = malloc((size_t)n * sizeof(**v))) == NULL) {
        liq_fail(w, "move: out of memory");
        return -1;
    }
    return liq_patch_cut(&p, liq_msg_points(w), *v, n);
}

/* At least n doubles in *buf (of *cap).  0, or -1 after telling the master. */
static int
liq_move_buf(struct liq_worker *w, double **buf, size_t *cap, size_t n)
{
    double *x;

    if (n <= *cap)
        return 0;
    if ((x = realloc(*buf, n * sizeof(double))) == NULL) {
        liq_fail(w, "move: out of memory");
        return -1;
    }
    *buf = x;
    *cap = n;
    return 0;
}

/* Send the quanta that leave, in id order (sends do not wait for the
 * receiver): each in pieces, a message a piece of its id, the piece's
 * number and the piece's points. */
static int
liq_send_moves(struct liq_worker *w, const int *owner, const int *tids)
{
    double *buf = NULL;
    size_t cap = 0;
    int rc = 0;

    for (int i = 0; i < w->nq && rc == 0; i++) {
        struct liq_quantum *q = &w->q[i];
        struct liq_patch *v;
        int n, to = tids[owner[q->id]];

        if (owner[q->id] == w->me)
            continue;
        if ((n = liq_move_pieces(w, q, &v)) < 0) {
            rc = -1;
            break;
        }
        for (int k = 0; k < n && rc == 0; k++) {
            size_t all = v[k].points * (size_t)w->nstate;
            int head[2] = { q->id, k };

            if ((rc = liq_move_buf(w, &buf, &cap, all)) != 0)
                break;
            liq_state_get(w, w->rg[q->region], &v[k], buf);
            pvm_initsend(PvmDataInPlace);
            pvm_pkint(head, 2, 1);
            pvm_pkdouble(buf, (int)all, 1);
            double ts = liq_now();

            if (pvm_send(to, liq_gtag(LIQ_TAG_MOVE, w->gen)) < 0) {
                liq_fail(w, "move: quantum %d could not be sent to t%x", q->id, (unsigned)to);
                rc = -1;
                break;
            }
            liq_trace_rec(&w->tr, LIQ_TEV_SEND, ts, ts, to, LIQ_TAG_MOVE,
                          (int)(sizeof(head) + all * sizeof(double)), q->id, 0);
        }
        free(v);
    }
    free(buf);
    return rc;
}

/* Receive quantum q's points from worker tid `from` into region r, piece
 * by piece, straight from each message where it can be. */
static int
liq_recv_move(struct liq_worker *w, const struct liq_quantum *q, struct liq_region *r, int from)
{
    struct liq_patch *v;
    double *buf = NULL;
    size_t cap = 0;
    int n = liq_move_pieces(w, q, &v), rc = 0;

    for (int k = 0; k < n && rc == 0; k++) {
        size_t all = v[k].points * (size_t)w->nstate;
        double t0 = liq_now();
        int b = liq_wait(w, from, liq_gtag(LIQ_TAG_MOVE, w->gen)), head[2] = { -1, -1 }, bytes,
            tag, tid;
        const double *x;

        if (b <= 0) {
            rc = -1;
            break;
        }
        pvm_bufinfo(b, &bytes, &tag, &tid);
        liq_trace_rec(&w->tr, LIQ_TEV_RECV, t0, liq_now(), from, LIQ_TAG_MOVE, bytes, q->id, 0);
        pvm_upkint(head, 2, 1);
        if (head[0] != q->id || head[1] != k ||
            (size_t)bytes != sizeof(head) + all * sizeof(double)) {
            liq_fail(w, "move: expected piece %d of quantum %d (%zu values) from t%x, got "
                        "piece %d of %d (%d bytes)",
                     k, q->id, all, (unsigned)tid, head[1], head[0], bytes);
            rc = -1;
            break;
        }
        if ((x = pvm__upk_view(all * sizeof(double))) == NULL) {
            if ((rc = liq_move_buf(w, &buf, &cap, all)) != 0)
                break;
            if (pvm_upkdouble(buf, (int)all, 1) < 0) {
                liq_fail(w, "move: quantum %d could not be unpacked", q->id);
                rc = -1;
                break;
            }
            x = buf;
        }
        liq_state_put(w, r, &v[k], x);
    }
    if (n > 0)
        free(v);
    free(buf);
    return n < 0 ? -1 : rc;
}

/* The placement a move builds, until it replaces the worker's. */
struct liq_moved {
    struct liq_region_box *all; /* the new cut */
    int *of;                    /* quantum id -> index in all */
    int nall;
    int *loc;                   /* index in all -> new local region, or -1 */
    struct liq_region **rg;     /* the new local regions */
    int *fresh;                 /* per new local region: made now, to be filled */
    int nrg;
    struct liq_quantum *q;      /* the new quanta, by id */
    int nq;                     /* how many there will be */
    int made;                   /* how many of them hold what they own */
};

static void
liq_moved_free(struct liq_moved *m)
{
    liq_quanta_free(m->q, m->made);
    liq_regions_free(m->rg, m->nrg);
    free(m->all);
    free(m->of);
    free(m->loc);
    free(m->fresh);
}

/* The new regions: the old one of the same box, taken over as it is, or a
 * fresh one laid out for this host.  0, or -1 after telling the master. */
static int
liq_moved_regions(struct liq_worker *w, struct liq_moved *m)
{
    int k = 0, rc;

    for (int r = 0; r < m->nall; r++)
        k += m->all[r].owner == w->me;
    for (int r = 0; r < m->nall; r++) {
        m->loc[r] = -1;
        if (m->all[r].owner != w->me)
            continue;
        for (int x = 0; x < w->nrg && m->rg[m->nrg] == NULL; x++) {
            struct liq_region *o = w->rg[x];

            if (o != NULL && memcmp(o->box.lo, m->all[r].lo, sizeof(o->box.lo)) == 0 &&
                memcmp(o->box.hi, m->all[r].hi, sizeof(o->box.hi)) == 0 &&
                o->box.heavy == m->all[r].heavy) {
                m->rg[m->nrg] = o;
                o->box = m->all[r];
                w->rg[x] = NULL;
            }
        }
        if (m->rg[m->nrg] == NULL) {
            if ((m->rg[m->nrg] = liq_region_new(w, &m->all[r], k > 1, 1, &rc)) == NULL) {
                liq_fail(w, "move: cannot allocate region %d: %s", r, strerror(-rc));
                return -1;
            }
            m->fresh[m->nrg] = 1;
        }
        m->loc[r] = m->nrg++;
    }
    return 0;
}

/* Planes copied at a time out of a region a move replaces: each is given
 * back once every quantum that stays has it copied. */
#define LIQ_MOVE_SLAB 4

/*
 * Give back every plane of old region x (one the move replaces) that no
 * quantum still to be copied out of it lies in: those that stay here, from
 * plane z on.  Ids run x fastest and z slowest, so their planes come in
 * order.
 */
static void
liq_release_done(struct liq_worker *w, const int *owner, int x, int z)
{
    int done = INT_MIN;

    for (int i = 0; i < w->nq; i++) {
        const struct liq_quantum *q = &w->q[i];
        int lo = q->lo[2] > z ? q->lo[2] : z, hi = q->lo[2] + q->n[2];

        if (q->region != x || owner[q->id] != w->me || hi <= lo)
            continue;
        if (lo > done)
            liq_region_release(w, w->rg[x], done, lo);
        done = hi > done ? hi : done;
    }
    liq_region_release(w, w->rg[x], done, INT_MAX);
}

/* Copy the quanta that stay out of old region x into their fresh regions,
 * LIQ_MOVE_SLAB planes at a time, giving each plane back as it is done, so
 * that the worker never holds their points twice. */
static void
liq_copy_kept(struct liq_worker *w, const struct liq_moved *m, const int *owner, int x)
{
    int zlo = INT_MAX, zhi = INT_MIN;

    for (int i = 0; i < w->nq; i++)
        if (w->q[i].region == x && owner[w->q[i].id] == w->me) {
            zlo = w->q[i].lo[2] < zlo ? w->q[i].lo[2] : zlo;
            zhi = w->q[i].lo[2] + w->q[i].n[2] > zhi ? w->q[i].lo[2] + w->q[i].n[2] : zhi;
        }
    for (int z = zlo; z < zhi; z += LIQ_MOVE_SLAB) {
        for (int i = 0; i < w->nq; i++) {
            const struct liq_quantum *q = &w->q[i];
            int r = m->loc[m->of[q->id]];
            struct liq_patch p;

            if (q->region != x || owner[q->id] != w->me || !m->fresh[r])
                continue;
            liq_quantum_patch(q, &p);
            p.lo[2] = p.lo[2] > z ? p.lo[2] : z;
            p.hi[2] = p.hi[2] < z + LIQ_MOVE_SLAB ? p.hi[2] : z + LIQ_MOVE_SLAB;
            if (p.hi[2] <= p.lo[2])
                continue;
            p.points = (size_t)q->n[0] * (size_t)q->n[1] * (size_t)(p.hi[2] - p.lo[2]);
            liq_state_copy(w, m->rg[r], w->rg[x], &p);
        }
        liq_release_done(w, owner, x, z + LIQ_MOVE_SLAB);
    }
}

/*
 * The new quanta, by id: arrivals received, then kept ones copied into the
 * fresh regions.  The old regions the move replaces give back their planes
 * as soon as no quantum needs them: those of the quanta that left at once,
 * the others as they are copied.  0, or -1 after telling the master.
 */
static int
liq_moved_quanta(struct liq_worker *w, struct liq_moved *m, const int *owner)
{
    for (int x = 0; x < w->nrg; x++)
        if (w->rg[x] != NULL) {
            liq_region_release_rest(w, w->rg[x]);
            liq_release_done(w, owner, x, INT_MIN);
        }
    for (int a = 0, o = 0; a < w->g.nquanta; a++) {
        int r = m->loc[m->of[a]];

        while (o < w->nq && w->q[o].id < a)
            o++;
        if (owner[a] != w->me)
            continue;

        struct liq_quantum *q = &m->q[m->made];

        if (w->owner[a] == w->me) {
            *q = w->q[o];
            q->region = r;
            w->q[o].hist = NULL;
        } else if (liq_quantum_init(w, q, a, r, &m->all[m->of[a]]) != 0) {
            m->made++;
            liq_fail(w, "move: out of memory");
            return -1;
        } else if (liq_recv_move(w, q, m->rg[r], w->tids[w->owner[a]]) != 0) {
            m->made++;
            return -1;
        }
        m->made++;
    }
    /* The arrivals' messages are read; what they held goes back. */
    malloc_trim(0);
    for (int x = 0; x < w->nrg; x++)
        if (w->rg[x] != NULL)
            liq_copy_kept(w, m, owner, x);
    /* Last, once the old regions are given back: the rest of the fresh
     * ones (halos, boundaries, the levels a move does not carry), which
     * would have made every page of them resident at once. */
    for (int r = 0; r < m->nrg; r++)
        if (m->fresh[r])
            liq_region_shell(w, m->rg[r]);
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
    struct liq_moved m;

    memset(&m, 0, sizeof(m));
    if (liq_send_moves(w, owner, tids) != 0)
        return -1;
    for (int a = 0; a < w->g.nquanta; a++)
        m.nq += owner[a] == w->me;
    if ((m.nall = liq_cut(w, owner, &m.all, &m.of)) < 0 ||
        (m.loc = malloc((size_t)m.nall * sizeof(int))) == NULL ||
        (m.fresh = calloc((size_t)m.nall, sizeof(int))) == NULL ||
        (m.rg = calloc((size_t)m.nall, sizeof(*m.rg))) == NULL ||
        (m.q = calloc((size_t)(m.nq > 0 ? m.nq : 1), sizeof(*m.q))) == NULL) {
        liq_fail(w, "move: out of memory");
        liq_moved_free(&m);
        return -1;
    }
    if (liq_moved_regions(w, &m) != 0 || liq_moved_quanta(w, &m, owner) != 0) {
        liq_moved_free(&m);
        return -1;
    }
    liq_quanta_free(w->q, w->nq);
    liq_regions_free(w->rg, w->nrg);
    free(w->all);
    free(w->region_of);
    w->q = m.q;
    w->nq = m.nq;
    w->rg = m.rg;
    w->nrg = m.nrg;
    w->all = m.all;
    w->nall = m.nall;
    w->region_of = m.of;
    free(m.loc);
    free(m.fresh);
    memcpy(w->owner, owner, (size_t)w->g.nquanta * sizeof(int));
    memcpy(w->tids, tids, (size_t)w->nworkers * sizeof(int));
    return liq_exchange_layout(w);
}

int
liq_migrate_plan(struct liq_worker *w, int epoch)
{
    int *owner = malloc((size_t)w->g.nquanta * sizeof(int));
    int *tids = malloc((size_t)w->nworkers * sizeof(int)), b, e = -1, n = -1, m = 0, rc = -1;
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
    liq_trace_rec(&w->tr, LIQ_TEV_WAIT, t0, liq_now(), w->master, LIQ_TAG_PLAN, epoch, 0, 0);
    t0 = liq_now();
    pvm_upkint(&e, 1, 1);
    if (e != epoch || pvm_upkint(owner, w->g.nquanta, 1) < 0 || pvm_upkint(&n, 1, 1) < 0 ||
        n != w->nworkers || pvm_upkint(tids, n, 1) < 0 || pvm_upkint(&m, 1, 1) < 0 || m < 1 ||
        m > LIQ_MAX_CKMUL) {
        liq_fail(w, "epoch %d: bad plan (for epoch %d, %d workers, checkpoints x%d)", epoch, e,
                 n, m);
        goto out;
    }
    w->ckmul = m;
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

        int had = w->nq;

        if ((rc = liq_migrate(w, owner, tids)) == 0)
            w->last_move = liq_now() - t0;
        liq_trace_rec(&w->tr, LIQ_TEV_MIGRATE, t0, liq_now(), epoch, 0, w->nq - had, 0, 0);
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
