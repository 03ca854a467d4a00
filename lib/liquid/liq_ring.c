/*
 * liq_ring.c - the ring benchmark (step 1 of the liquid runtime, seed
 * 001): the workers pass messages of several sizes around a ring, each
 * timing its rounds, and send the times to the master, which fits the
 * network's lambda (s per message) and tau (s per byte) by least squares
 * weighted by relative error (decomp_fit_ring).
 */
#include "liq_int.h"

#include <stdlib.h>

#include "pvm3.h"
#include "pvm_ext.h"

#define LIQ_RING_MAX_SIZES 32
/* How long the members may wait for their links to be made before they
 * time the rounds anyway. */
#define LIQ_RING_SETTLE_S 2.0

/*
 * Pass small messages around the ring until every member's link to the
 * next one is settled (pvm__link_settled): links are made on the first
 * messages, and a handshake then would be timed as the network's latency
 * (the first size's rounds read 1-3 ms where later 8-byte rounds took
 * 0.06 ms).  The members must stop after the same round: each block of
 * n - 1 steps passes the least of their flags, taken at its start, around
 * the ring, so all of them end it with the same verdict.  0, or -1 to stop
 * (the master was told why, or told us to).
 */
static int
ring_settle(struct liq_worker *w, const int *tids, int n, int me)
{
    int next = tids[(me + 1) % n], prev = tids[(me + n - 1) % n];
    double t0 = liq_now();

    for (;;) {
        int v = pvm__link_settled(next) || liq_now() - t0 > LIQ_RING_SETTLE_S;

        for (int k = 0; k < n - 1; k++) {
            int u = 0;

            pvm_initsend(PvmDataRaw);
            pvm_pkint(&v, 1, 1);
            if (pvm_send(next, LIQ_TAG_RINGMSG) < 0) {
                liq_fail(w, "ring: send to t%x failed", (unsigned)next);
                return -1;
            }
            if (liq_wait(w, prev, LIQ_TAG_RINGMSG) <= 0)
                return -1;
            pvm_upkint(&u, 1, 1);
            v = v && u == 1;
        }
        if (v)
            return 0;
    }
}

void
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
    if (ring_settle(w, tids, n, me) != 0)
        goto out;
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
