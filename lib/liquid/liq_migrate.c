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
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

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
        p.points *= (size_t)w->nstate;
        if ((buf = malloc(p.points * sizeof(double))) == NULL) {
            liq_fail(w, "move: out of memory");
            return -1;
        }
        p.points /= (size_t)w->nstate;
        liq_state_get(w, w->rg[q->region], &p, buf);
        pvm_initsend(PvmDataInPlace);
        pvm_pkint(&q->id, 1, 1);
        pvm_pkdouble(buf, (int)(p.points * (size_t)w->nstate), 1);
        double ts = liq_now();

        rc = pvm_send(tids[owner[q->id]], liq_gtag(LIQ_TAG_MOVE, w->gen));
        free(buf);
        liq_trace_rec(&w->tr, LIQ_TEV_SEND, ts, ts, tids[owner[q->id]], LIQ_TAG_MOVE,
                      (int)(sizeof(int) + p.points * (size_t)w->nstate * sizeof(double)), q->id,
                      0);
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
    double t0 = liq_now();
    int b = liq_wait(w, from, liq_gtag(LIQ_TAG_MOVE, w->gen)), id = -1, bytes, tag, tid;
    struct liq_patch p;
    double *buf;

    if (b <= 0)
        return -1;
    pvm_bufinfo(b, &bytes, &tag, &tid);
    liq_trace_rec(&w->tr, LIQ_TEV_RECV, t0, liq_now(), from, LIQ_TAG_MOVE, bytes, q->id, 0);
    liq_quantum_patch(q, &p);
    size_t all = p.points * (size_t)w->nstate;

    pvm_bufinfo(b, &bytes, &tag, &tid);
    pvm_upkint(&id, 1, 1);
    if (id != q->id || (size_t)bytes != sizeof(int) + all * sizeof(double)) {
        liq_fail(w, "move: expected quantum %d (%zu values) from t%x, got %d (%d bytes)", q->id,
                 all, (unsigned)tid, id, bytes);
        return -1;
    }
    if ((buf = malloc(all * sizeof(double))) == NULL || pvm_upkdouble(buf, (int)all, 1) < 0) {
        free(buf);
        liq_fail(w, "move: quantum %d could not be unpacked", q->id);
        return -1;
    }
    liq_state_put(w, r, &p, buf);
    free(buf);
    return 0;
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
            if ((m->rg[m->nrg] = liq_region_new(w, &m->all[r], k > 1, &rc)) == NULL) {
                liq_fail(w, "move: cannot allocate region %d: %s", r, strerror(-rc));
                return -1;
            }
            m->fresh[m->nrg] = 1;
        }
        m->loc[r] = m->nrg++;
    }
    return 0;
}

/* The lowest z of the quanta after w->q[o] (by id) that stay here and are
 * still to be copied out of its region, or INT_MAX.  Ids run x fastest and
 * z slowest, so the planes below it are done with. */
static int
kept_after(const struct liq_worker *w, const int *owner, int o)
{
    for (int i = o + 1; i < w->nq; i++)
        if (w->q[i].region == w->q[o].region && owner[w->q[i].id] == w->me)
            return w->q[i].lo[2];
    return INT_MAX;
}

/* The new quanta, by id: kept ones copied into a fresh region, arrivals
 * received; an old region's planes go back to the system as soon as its
 * quanta have left them, so that a worker does not hold its points twice.
 * 0, or -1 after telling the master. */
static int
liq_moved_quanta(struct liq_worker *w, struct liq_moved *m, const int *owner)
{
    for (int a = 0, o = 0; a < w->g.nquanta; a++) {
        int r = m->loc[m->of[a]];

        while (o < w->nq && w->q[o].id < a)
            o++;
        if (owner[a] != w->me)
            continue;

        struct liq_quantum *q = &m->q[m->made];

        if (w->owner[a] == w->me) {
            struct liq_quantum *old = &w->q[o];
            struct liq_patch p;

            *q = *old;
            q->region = r;
            old->hist = NULL;
            if (m->fresh[r]) {
                liq_quantum_patch(old, &p);
                liq_state_copy(w, m->rg[r], w->rg[old->region], &p);
                liq_region_release_below(w, w->rg[old->region], kept_after(w, owner, o));
            }
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
