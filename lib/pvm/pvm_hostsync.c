/*
 * pvm_hostsync.c - pvm_hostsync: a host's time-of-day clock and its
 * difference from ours.
 *
 * As PVM 3.4.6 does, the local clock is read before and after the
 * request, and delta is the remote clock minus the midpoint of the two,
 * which halves the error the round trip adds.  The daemon answers for its
 * own host or asks the host's daemon (daemon/vmd_clock.c).  A timeval is
 * normalised as the man page says: microseconds in 0..999999, the sign in
 * the seconds (-1 us is -1 s + 999999 us).  host is a daemon tid; only
 * its host part counts, as in PVM.  Errors: PvmNoHost (not a host of the
 * VM), PvmHostFail (its link is down, or it went away before answering),
 * PvmSysErr (no daemon).
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>

static int64_t
tv_us(const struct timeval *tv)
{
    return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

/* us microseconds as a timeval whose tv_usec is in 0..999999. */
void
pvm__tv_split(int64_t us, struct timeval *tv)
{
    int64_t sec = us / 1000000, rem = us % 1000000;
    if (rem < 0) {
        rem += 1000000;
        sec--;
    }
    tv->tv_sec = (time_t)sec;
    tv->tv_usec = (suseconds_t)rem;
}

/* The daemon's answer: u64 seconds (two's complement), u32 microseconds. */
static int
parse_clock(const unsigned char *body, size_t len, int64_t *us)
{
    struct wire_rbuf r;
    uint64_t sec;
    uint32_t usec;
    int rc;
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u64(&r, &sec)) || (rc = wire_get_u32(&r, &usec)))
        return rc;
    if (usec > 999999 || r.pos != r.len)
        return WIRE_EFRAME;
    *us = (int64_t)sec * 1000000 + usec;
    return 0;
}

/* One question to the daemon of host dtid: its clock (*remote) and ours
 * when we asked (*t0) and when it answered (*t1), in microseconds. */
static int
clock_sample(int dtid, int64_t *remote, int64_t *t0, int64_t *t1)
{
    struct wire_wbuf req;
    struct timeval a, b;
    unsigned char *body = NULL;
    size_t len;
    int rc;

    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)dtid);
    gettimeofday(&a, NULL);
    rc = pvm__request(WIRE_T_REQ_CLOCK, &req, &body, &len);
    gettimeofday(&b, NULL);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = parse_clock(body, len, remote);
    free(body);
    *t0 = tv_us(&a);
    *t1 = tv_us(&b);
    return rc;
}

int
pvm__clock_offset(int dtid, int tries, int64_t *offset_us, int64_t *residual_us)
{
    int64_t best = -1;
    int rc = 0;

    for (int k = 0; k < tries; k++) {
        int64_t remote = 0, t0, t1, rtt;

        if ((rc = clock_sample(dtid, &remote, &t0, &t1)) != 0)
            return rc;
        /* The shortest round trip bounds the error best (a request queued
         * behind others is slow). */
        rtt = t1 - t0;
        if (best < 0 || rtt < best) {
            best = rtt;
            *offset_us = remote - (t0 + rtt / 2);
            *residual_us = (rtt + 1) / 2;
        }
    }
    return best < 0 ? -EINVAL : 0;
}

int
pvm_hostsync(int host, struct timeval *clk, struct timeval *delta)
{
    int64_t remote = 0, t0, t1;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_hostsync");
    if ((rc = clock_sample(host, &remote, &t0, &t1)) != 0)
        return pvm__err(rc, "pvm_hostsync");
    /* The midpoint, without overflow: t0 + (t1 - t0) / 2. */
    int64_t mid = t0 + (t1 - t0) / 2;
    if (clk)
        pvm__tv_split(remote, clk);
    if (delta)
        pvm__tv_split(remote - mid, delta);
    return PvmOk;
}
