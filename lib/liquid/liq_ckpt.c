/*
 * liq_ckpt.c - a worker's side of checkpoints and recovery (issue 26;
 * liq.h, "checkpoints"): every few epochs it copies the state of the
 * quanta it holds into plain heap buffers, keeps one copy and sends its
 * buddy the other; it keeps the buddies' copies it is sent and tells the
 * master of each; it drops old copies once the master confirms a newer
 * checkpoint complete.  When the master gives the job up for a recovery,
 * the copies of the last confirmed checkpoint outlive the job, and the
 * next JOB fills its quanta from them.  Copies are what a move carries
 * (liq_state_get: every field's current level and the one before), so a
 * restored quantum has the same bits.
 */
#include "liq_int.h"

#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

int
liq_ckpt_buddy(const int *tids, const int *whost, int n, int me)
{
    int nh = 0;

    for (int s = 0; s < n; s++)
        if (whost[s] + 1 > nh)
            nh = whost[s] + 1;
    /* Another host first: a copy on the same host dies with it. */
    for (int d = 1; d < nh; d++) {
        int h = (whost[me] + d) % nh;

        for (int s = 0; s < n; s++)
            if (whost[s] == h && tids[s] != 0)
                return s;
    }
    for (int d = 1; d < n; d++) {
        int s = (me + d) % n;

        if (tids[s] != 0)
            return s;
    }
    return -1;
}

/* The copy of quantum id at iteration iter, made if there is none, with
 * room for n doubles; NULL when out of memory. */
static struct liq_ckcopy *
ck_slot(struct liq_worker *w, int id, int iter, size_t n)
{
    struct liq_ckcopy *c = NULL;

    for (int i = 0; i < w->nck && c == NULL; i++)
        if (w->ck[i].id == id && w->ck[i].iter == iter)
            c = &w->ck[i];
    if (c == NULL) {
        if (w->nck == w->capck) {
            int cap = w->capck ? 2 * w->capck : 16;
            struct liq_ckcopy *x = realloc(w->ck, (size_t)cap * sizeof(*x));

            if (x == NULL)
                return NULL;
            w->ck = x;
            w->capck = cap;
        }
        c = &w->ck[w->nck++];
        memset(c, 0, sizeof(*c));
        c->id = id;
        c->iter = iter;
    }
    if (c->n != n) {
        double *v = realloc(c->v, n * sizeof(double));

        if (v == NULL)
            return NULL;
        c->v = v;
        c->n = n;
    }
    return c;
}

/* Drop the copies older than iter (older), or all but iter's. */
static void
ck_drop(struct liq_worker *w, int iter, int older)
{
    int k = 0;

    for (int i = 0; i < w->nck; i++) {
        struct liq_ckcopy *c = &w->ck[i];

        if (older ? c->iter < iter : c->iter != iter)
            free(c->v);
        else
            w->ck[k++] = *c;
    }
    w->nck = k;
}

/* Tell the master a copy of quantum id (owner's at iteration iter) is held here. */
static void
ck_ack(struct liq_worker *w, int iter, int owner, int id, size_t n)
{
    int hdr[4] = { w->gen, iter, owner, id };
    double bytes = (double)n * sizeof(double);

    pvm_initsend(PvmDataDefault);
    pvm_pkint(hdr, 4, 1);
    pvm_pkdouble(&bytes, 1, 1);
    pvm_send(w->master, LIQ_TAG_CKACK);
}

/* Messages of the generations before this one that may still be queued:
 * they were on their way when the job was given up. */
static void
ck_drain(int gen)
{
    static const int tags[] = { LIQ_TAG_CKDATA, LIQ_TAG_CKHAND, LIQ_TAG_GHOST,
                                LIQ_TAG_GHOST + 1, LIQ_TAG_RGHOST, LIQ_TAG_MOVE };

    for (int g = 0; g < gen; g++)
        for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++)
            while (pvm_nrecv(-1, liq_gtag(tags[t], g)) > 0)
                ;
}

/* The master writes checkpoint it to disk: our own copies of it go to it. */
static int
ck_save(struct liq_worker *w, int it)
{
    for (int i = 0; i < w->nck; i++) {
        struct liq_ckcopy *c = &w->ck[i];
        int hdr[3] = { w->gen, it, c->id };

        if (c->iter != it || c->owner != w->mytid)
            continue;
        pvm_initsend(PvmDataInPlace);
        pvm_pkint(hdr, 3, 1);
        pvm_pkdouble(c->v, (int)c->n, 1);
        if (pvm_send(w->master, LIQ_TAG_CKSAVE) < 0) {
            liq_fail(w, "checkpoint %d: quantum %d's copy could not be sent to the master", it,
                     c->id);
            return -1;
        }
    }
    return 0;
}

int
liq_ckpt_load(struct liq_worker *w)
{
    int hdr[2] = { -1, -1 }, bytes, tag, src;
    struct liq_ckcopy *c;
    size_t n;

    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
    n = bytes > (int)(2 * sizeof(int)) ? ((size_t)bytes - 2 * sizeof(int)) / sizeof(double) : 0;
    if (pvm_upkint(hdr, 2, 1) < 0 || hdr[0] <= 0 || hdr[1] < 0 || n == 0 ||
        (size_t)bytes != 2 * sizeof(int) + n * sizeof(double)) {
        liq_fail(w, "resume: a malformed quantum state from the master (%d bytes)", bytes);
        return -1;
    }
    if ((c = ck_slot(w, hdr[1], hdr[0], n)) == NULL || pvm_upkdouble(c->v, (int)n, 1) < 0) {
        liq_fail(w, "resume: quantum %d's state at iteration %d could not be kept", hdr[1],
                 hdr[0]);
        return -1;
    }
    c->owner = w->mytid;
    return 0;
}

int
liq_ckpt_take(struct liq_worker *w, int it)
{
    int buddy;
    double t0;

    if (w->ckpt <= 0)
        return 0;
    if (it % ((long long)w->ckpt * w->ckmul) != 0 || it >= w->iters)
        return liq_ckpt_poll(w); /* the buddies' copies, acknowledged every block */
    t0 = liq_now();
    w->ck_taken++;
    buddy = liq_ckpt_buddy(w->tids, w->whost, w->nworkers, w->me);
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        struct liq_ckcopy *c;
        struct liq_patch p;
        size_t n;

        liq_quantum_patch(q, &p);
        n = p.points * (size_t)w->nstate;
        if ((c = ck_slot(w, q->id, it, n)) == NULL) {
            liq_fail(w, "checkpoint %d: out of memory for quantum %d's copy", it, q->id);
            return -1;
        }
        liq_state_get(w, w->rg[q->region], &p, c->v);
        c->owner = w->mytid;
        if (buddy < 0) {
            /* Alone: the copy here is the only one there is. */
            ck_ack(w, it, w->mytid, q->id, n);
            continue;
        }
        int hdr[3] = { it, q->id, w->mytid };

        pvm_initsend(PvmDataInPlace);
        pvm_pkint(hdr, 3, 1);
        pvm_pkdouble(c->v, (int)n, 1);
        if (pvm_send(w->tids[buddy], liq_gtag(LIQ_TAG_CKDATA, w->gen)) < 0) {
            liq_fail(w, "checkpoint %d: quantum %d's copy could not be sent to t%x", it, q->id,
                     (unsigned)w->tids[buddy]);
            return -1;
        }
        w->ck_bytes += (double)n * sizeof(double);
    }
    w->ck_seconds += liq_now() - t0;
    return liq_ckpt_poll(w);
}

/*
 * Keep the copy in message b: nh ints (c, quantum id, owner tid, and for a
 * hand-over the leaver's tid) into hdr, then the values.  The values'
 * count, or 0 (the job is told why) for a malformed or unkept one.
 */
static size_t
ck_take(struct liq_worker *w, int b, int nh, int *hdr)
{
    int bytes, tag, src;
    size_t head = (size_t)nh * sizeof(int), n;
    struct liq_ckcopy *c;

    hdr[0] = hdr[1] = -1;
    hdr[2] = hdr[3] = 0;
    pvm_bufinfo(b, &bytes, &tag, &src);
    pvm_upkint(hdr, nh, 1);
    n = bytes > (int)head ? ((size_t)bytes - head) / sizeof(double) : 0;
    if (hdr[0] < 0 || hdr[1] < 0 || hdr[1] >= w->g.nquanta || n == 0 ||
        (size_t)bytes != head + n * sizeof(double)) {
        liq_fail(w, "checkpoint: a malformed copy from t%x (%d bytes)", (unsigned)src, bytes);
        return 0;
    }
    if ((c = ck_slot(w, hdr[1], hdr[0], n)) == NULL || pvm_upkdouble(c->v, (int)n, 1) < 0) {
        liq_fail(w, "checkpoint %d: quantum %d's copy could not be kept", hdr[0], hdr[1]);
        return 0;
    }
    c->owner = hdr[2];
    return n;
}

int
liq_ckpt_handover(struct liq_worker *w)
{
    int me = w->mytid, buddy;

    if (w->ckpt <= 0)
        return 0;
    /* What was sent to us first, acknowledged as usual. */
    if (liq_ckpt_poll(w) != 0)
        return -1;
    buddy = liq_ckpt_buddy(w->tids, w->whost, w->nworkers, w->me);
    for (int i = 0; i < w->nck; i++) {
        struct liq_ckcopy *c = &w->ck[i];
        /* The other copy: our buddy's of our own quanta, else its owner's. */
        int other = c->owner == me ? (buddy >= 0 ? w->tids[buddy] : 0) : c->owner;
        int s = w->owner[c->id], to = 0, hdr[4] = { c->iter, c->id, c->owner, me };

        for (int k = 0; k < w->nworkers && to == 0; k++) {
            int t = w->tids[(s + k) % w->nworkers];

            if (t != 0 && t != me && t != other)
                to = t;
        }
        if (to == 0)
            continue; /* nobody else: the other copy is all there is */
        pvm_initsend(PvmDataInPlace);
        pvm_pkint(hdr, 4, 1);
        pvm_pkdouble(c->v, (int)c->n, 1);
        if (pvm_send(to, liq_gtag(LIQ_TAG_CKHAND, w->gen)) < 0)
            return -1;
    }
    return 0;
}

int
liq_ckpt_poll(struct liq_worker *w)
{
    double t0 = liq_now();
    int b;

    if (w->ckpt <= 0)
        return 0;
    while ((b = pvm_nrecv(-1, liq_gtag(LIQ_TAG_CKDATA, w->gen))) > 0) {
        int hdr[4];
        size_t n;

        if ((n = ck_take(w, b, 3, hdr)) == 0)
            return -1;
        ck_ack(w, hdr[0], hdr[2], hdr[1], n);
    }
    /* A leaving worker's copies (liq_ckpt_handover): the master hears
     * who holds them now. */
    while ((b = pvm_nrecv(-1, liq_gtag(LIQ_TAG_CKHAND, w->gen))) > 0) {
        int hdr[4], msg[4];

        if (ck_take(w, b, 4, hdr) == 0)
            return -1;
        msg[0] = w->gen;
        msg[1] = hdr[0];
        msg[2] = hdr[1];
        msg[3] = hdr[3];
        pvm_initsend(PvmDataDefault);
        pvm_pkint(msg, 4, 1);
        pvm_send(w->master, LIQ_TAG_CKHANDED);
    }
    /* The master gave the job up: stop at this block's end rather than at
     * the next wait for a message that may never come. */
    if ((b = pvm_nrecv(w->master, LIQ_TAG_RECOVER)) > 0) {
        int msg[2] = { 0, 0 };

        pvm_upkint(msg, 2, 1);
        w->rec_gen = msg[0];
        w->rec_iter = msg[1];
        return -1;
    }
    while ((b = pvm_nrecv(w->master, LIQ_TAG_CKCONFIRM)) > 0) {
        int msg[3] = { -1, -1, 0 };

        pvm_upkint(msg, 3, 1);
        if (msg[0] != w->gen)
            continue;
        ck_drop(w, msg[1], 1);
        ck_drain(w->gen);
        if (msg[2] == 1 && ck_save(w, msg[1]) != 0)
            return -1;
    }
    w->ck_seconds += liq_now() - t0;
    return 0;
}

int
liq_ckpt_restore(struct liq_worker *w)
{
    for (int i = 0; i < w->nq; i++) {
        struct liq_quantum *q = &w->q[i];
        struct liq_ckcopy *c = NULL;
        struct liq_patch p;

        liq_quantum_patch(q, &p);
        for (int x = 0; x < w->nck && c == NULL; x++)
            if (w->ck[x].id == q->id && w->ck[x].iter == w->start)
                c = &w->ck[x];
        if (c == NULL || c->n != p.points * (size_t)w->nstate) {
            liq_fail(w, "recovery: no copy of quantum %d at iteration %d here", q->id,
                     w->start);
            return -1;
        }
        liq_state_put(w, w->rg[q->region], &p, c->v);
    }
    return 0;
}

void
liq_ckpt_recovered(struct liq_worker *w)
{
    static const int old[] = { LIQ_TAG_PLAN, LIQ_TAG_VERDICT, LIQ_TAG_INIT, LIQ_TAG_CKCONFIRM };
    int gen = w->rec_gen;

    /* The master's messages of the job given up came before RECOVER. */
    for (size_t t = 0; t < sizeof(old) / sizeof(old[0]); t++)
        while (pvm_nrecv(w->master, old[t]) > 0)
            ;
    ck_drain(gen);
    /* Iteration 0 is no copy: the job starts again from its initial field. */
    ck_drop(w, w->rec_iter, 0);
    if (w->rec_iter == 0)
        liq_ckpt_free(w);
    w->rec_gen = 0;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&gen, 1, 1);
    pvm_send(w->master, LIQ_TAG_RECOVERED);
}

void
liq_ckpt_free(struct liq_worker *w)
{
    for (int i = 0; i < w->nck; i++)
        free(w->ck[i].v);
    free(w->ck);
    w->ck = NULL;
    w->nck = w->capck = 0;
}
