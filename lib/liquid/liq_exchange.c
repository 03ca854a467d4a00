/*
 * liq_exchange.c - the halo exchange (step 4 of the liquid runtime, seed
 * 000's deep halos): which patches of its regions a worker sends each
 * other worker and receives from it once per block, and the copies
 * between its own regions.  Both ends of a link build it from the same
 * placement in the same order (the receiver's regions in liq_regions
 * order, each its liq_box_patches from the sender's quanta by id), so a
 * message is a bare array of doubles.
 *
 * A link's ghosts go as messages of at most LIQ_MSG_BYTES (a patch
 * larger than that is cut into slabs of planes, or of rows), which both
 * ends cut alike: the sender stages one message, not a link's every ghost
 * (deep halos at 256^3 are 4-5 MB a link), and a receiver that must
 * unpack unpacks one.
 */
#include "liq_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "pvm_ext.h"

/* Room in *v (of *cap) for `more` patches after its n. */
static int
liq_patch_room(struct liq_patch **v, int n, int *cap, int more)
{
    int c = *cap ? *cap : 16;
    struct liq_patch *x;

    if (n + more <= *cap)
        return 0;
    while (c < n + more)
        c *= 2;
    if ((x = realloc(*v, (size_t)c * sizeof(*x))) == NULL)
        return -ENOMEM;
    *v = x;
    *cap = c;
    return 0;
}

/* Append a patch to a growing array. */
static int
liq_patch_push(struct liq_patch **v, int *n, int *cap, const struct liq_patch *p)
{
    if (liq_patch_room(v, *n, cap, 1) != 0)
        return -ENOMEM;
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
    return m;
}

/* Append patch p, cut into pieces of at most `most` points. */
static int
liq_link_push(struct liq_link *l, int *cap, const struct liq_patch *p, size_t most)
{
    int m = liq_patch_cut(p, most, NULL, 0);

    l->points += p->points;
    if (liq_patch_room(&l->patch, l->npatch, cap, m) != 0)
        return -ENOMEM;
    l->npatch += liq_patch_cut(p, most, l->patch + l->npatch, m);
    return 0;
}

/* Group the link's patches, in order, into messages of at most `most`
 * points each (times nstate), a larger patch (a row) alone. */
static int
liq_link_messages(struct liq_link *l, size_t most, int nstate)
{
    struct liq_ghost_msg *m = NULL;
    size_t in = 0;

    if (l->npatch == 0)
        return 0;
    if ((l->msg = calloc((size_t)l->npatch, sizeof(*l->msg))) == NULL)
        return -ENOMEM;
    for (int f = 0; f < l->npatch; f++) {
        if (m == NULL || in + l->patch[f].points > most) {
            m = &l->msg[l->nmsg++];
            in = 0;
        }
        in += l->patch[f].points;
        m->end = f + 1;
        m->points += l->patch[f].points * (size_t)nstate;
        l->most = m->points > l->most ? m->points : l->most;
    }
    return 0;
}

/* The faces of region r beyond which patch p lies: its halo there waits
 * for another worker's points (the overlap's inner trapezoids stop short
 * of them, liq_sweep.c).  Taken from the patch before it is cut, since a
 * piece may lie beyond a face the patch does not. */
static void
liq_stale_mark(struct liq_region *r, const struct liq_patch *p)
{
    for (int a = 0; a < 3; a++) {
        r->stale[2 * a] |= p->hi[a] <= r->box.lo[a];
        r->stale[2 * a + 1] |= p->lo[a] >= r->box.hi[a];
    }
}

/*
 * The patches worker `from` sends worker `to` in one exchange, in the order
 * both sides compute alike: the regions of `to` in the cut's order, then
 * their sources of `from` by id, and the messages they go in.  On the
 * sending side src is a local region index, on the receiving side dst.
 */
static int
liq_link_make(struct liq_worker *w, struct liq_link *l, int from, int to, int receiving)
{
    size_t most = liq_msg_points(w);
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
            if (receiving)
                liq_stale_mark(w->rg[p.dst], &p);
            if (liq_link_push(l, &cap, &p, most) != 0)
                return -ENOMEM;
        }
    }
    l->points *= (size_t)w->nstate; /* every state box's points, one after the other */
    return liq_link_messages(l, most, w->nstate);
}

void
liq_exchange_free(struct liq_worker *w)
{
    for (int i = 0; i < w->nsend; i++) {
        free(w->send[i].patch);
        free(w->send[i].msg);
    }
    for (int i = 0; i < w->nrecv; i++) {
        free(w->recv[i].patch);
        free(w->recv[i].msg);
        free(w->recv[i].buf);
    }
    free(w->send);
    free(w->recv);
    free(w->sendbuf);
    w->sendbuf = NULL;
    free(w->copy);
    free(w->scratch);
    w->send = w->recv = NULL;
    w->copy = w->scratch = NULL;
    w->nsend = w->nrecv = w->ncopy = w->nscratch = 0;
}

/* The patches copied between this worker's own regions, in w->copy. */
static int
liq_exchange_copies(struct liq_worker *w)
{
    int cap = 0;

    for (int r = 0; r < w->nall; r++) {
        int n, dst = w->rlocal[r];

        if (dst < 0)
            continue;
        if ((n = liq_patches_of(w, r)) < 0)
            return -ENOMEM;
        for (int x = 0; x < n; x++) {
            struct liq_patch p = w->scratch[x];

            if (w->owner[p.src] != w->me)
                continue;
            p.src = w->rlocal[w->region_of[p.src]];
            p.dst = dst;
            if (liq_patch_push(&w->copy, &w->ncopy, &cap, &p) != 0)
                return -ENOMEM;
        }
    }
    return 0;
}

/* The links to every other worker this one sends to or receives from. */
static int
liq_exchange_links(struct liq_worker *w)
{
    w->send = calloc((size_t)w->nworkers, sizeof(*w->send));
    w->recv = calloc((size_t)w->nworkers, sizeof(*w->recv));
    if (w->send == NULL || w->recv == NULL)
        return -ENOMEM;
    for (int p = 0; p < w->nworkers; p++) {
        if (p == w->me)
            continue;
        if (liq_link_make(w, &w->send[w->nsend], w->me, p, 0) != 0 ||
            liq_link_make(w, &w->recv[w->nrecv], p, w->me, 1) != 0) {
            /* Counted, so that liq_exchange_free frees what they hold. */
            w->nsend++;
            w->nrecv++;
            return -ENOMEM;
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
    /* One staging buffer for every send (a worker's ghosts leave one
     * message after another), as large as the largest message. */
    size_t most = 0;

    for (int l = 0; l < w->nsend; l++)
        most = w->send[l].most > most ? w->send[l].most : most;
    if (most > 0 && (w->sendbuf = malloc(most * sizeof(double))) == NULL)
        return -ENOMEM;
    return 0;
}

int
liq_exchange_layout(struct liq_worker *w)
{
    liq_exchange_free(w);
    for (int r = 0, i = 0; r < w->nall; r++)
        w->rlocal[r] = w->all[r].owner == w->me ? i++ : -1;
    for (int i = 0; i < w->nrg; i++)
        memset(w->rg[i]->stale, 0, sizeof(w->rg[i]->stale));
    if (liq_exchange_copies(w) != 0 || liq_exchange_links(w) != 0) {
        liq_fail(w, "job: out of memory");
        return -ENOMEM;
    }
    /* Beside the process's peak resident memory in the report: the most
     * its regions held at once, which a move may have lowered since. */
    if (liq_held_bytes(w) > w->held_peak)
        w->held_peak = liq_held_bytes(w);
    return 0;
}

/* Link k's next message, received as buffer b after a wait from t0 to t1,
 * into the halos.  Returns 0, or -1 to stop. */
static int
liq_exchange_take(struct liq_worker *w, struct liq_link *k, int b, double t0, double t1, int tag)
{
    const struct liq_ghost_msg *msg = &k->msg[k->next++];
    const double *p;
    int bytes, rtag, rtid;

    w->ghost_wait += t1 - t0;
    pvm_bufinfo(b, &bytes, &rtag, &rtid);
    liq_trace_rec(&w->tr, LIQ_TEV_RECV, t0, t1, k->tid, tag, bytes, -1, 0);
    if ((size_t)bytes != msg->points * sizeof(double)) {
        liq_fail(w, "ghost points from t%x: %d bytes, expected %zu", (unsigned)k->tid, bytes,
                 msg->points * sizeof(double));
        return -1;
    }
    w->ghost_bytes += bytes;
    /* Put straight from the message where it can be: one copy of every
     * ghost the fewer. */
    if ((p = pvm__upk_view(msg->points * sizeof(double))) == NULL) {
        if (k->buf == NULL && (k->buf = malloc(k->most * sizeof(double))) == NULL) {
            liq_fail(w, "ghost points from t%x: out of memory", (unsigned)k->tid);
            return -1;
        }
        if (pvm_upkdouble(k->buf, (int)msg->points, 1) < 0) {
            liq_fail(w, "ghost points from t%x could not be unpacked", (unsigned)k->tid);
            return -1;
        }
        p = k->buf;
    }
    for (; k->at < msg->end; k->at++) {
        liq_state_put(w, w->rg[k->patch[k->at].dst], &k->patch[k->at], p);
        p += k->patch[k->at].points * (size_t)w->nstate;
    }
    return 0;
}

/*
 * Put into the halos every ghost message already here, in each link's
 * order: while a worker sends, its neighbours' messages come in, and each
 * put at once goes back to the heap before the next is read, rather than
 * all of an exchange's waiting whole until the worker asks.  The halos'
 * points near the faces they fill are neither read nor written before
 * liq_exchange_finish (the block's first pass stays off them).
 */
static int
liq_exchange_drain(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nrecv; l++) {
        struct liq_link *k = &w->recv[l];

        while (k->next < k->nmsg) {
            double t = liq_now();
            int b = pvm_nrecv(k->tid, tag);

            if (b < 0) {
                liq_fail(w, "ghost points from t%x could not be received", (unsigned)k->tid);
                return -1;
            }
            if (b == 0)
                break;
            if (liq_exchange_take(w, k, b, t, t, tag) != 0)
                return -1;
        }
    }
    return 0;
}

/* Send every remote patch, copy every local one; put in the ghosts that
 * came meanwhile.  Returns 0 or -1. */
int
liq_exchange_start(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nrecv; l++)
        w->recv[l].next = w->recv[l].at = 0;
    for (int l = 0; l < w->nsend; l++) {
        struct liq_link *k = &w->send[l];
        int f = 0;

        /* A ring to a worker of this host holds the link's every message,
         * as it held them as one: the sender need not wait for it. */
        pvm__link_burst(k->tid, k->points * sizeof(double), k->nmsg);
        for (int m = 0; m < k->nmsg; m++) {
            double *p = w->sendbuf;

            for (; f < k->msg[m].end; f++) {
                liq_state_get(w, w->rg[k->patch[f].src], &k->patch[f], p);
                p += k->patch[f].points * (size_t)w->nstate;
            }
            pvm_initsend(PvmDataInPlace);
            pvm_pkdouble(w->sendbuf, (int)k->msg[m].points, 1);
            /* The send's time is its start: a large message may be in the
             * receiver's hands before pvm_send returns. */
            double ts = liq_now();

            if (pvm_send(k->tid, tag) < 0) {
                liq_fail(w, "ghost points to t%x could not be sent", (unsigned)k->tid);
                return -1;
            }
            liq_trace_rec(&w->tr, LIQ_TEV_SEND, ts, ts, k->tid, tag,
                          (int)(k->msg[m].points * sizeof(double)), -1, 0);
            if (liq_exchange_drain(w, tag) != 0)
                return -1;
        }
    }
    for (int c = 0; c < w->ncopy; c++) {
        const struct liq_patch *p = &w->copy[c];

        liq_state_copy(w, w->rg[p->dst], w->rg[p->src], p);
    }
    return liq_exchange_drain(w, tag);
}

/* Receive every remote patch still to come into the halos.  Returns 0, or
 * -1 to stop. */
int
liq_exchange_finish(struct liq_worker *w, int tag)
{
    for (int l = 0; l < w->nrecv; l++) {
        struct liq_link *k = &w->recv[l];

        while (k->next < k->nmsg) {
            double t0 = liq_now();
            int b = liq_wait(w, k->tid, tag);

            if (b <= 0 || liq_exchange_take(w, k, b, t0, liq_now(), tag) != 0)
                return -1;
        }
    }
    return 0;
}
