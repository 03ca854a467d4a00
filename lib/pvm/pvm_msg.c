/*
 * pvm_msg.c - point-to-point messages: pvm_send, pvm_recv, pvm_nrecv,
 * pvm_trecv, pvm_probe, pvm_psend, pvm_precv, pvm_recvf: matching the
 * queue of messages that arrived, and when message handlers run.
 *
 * A send writes one WIRE_T_MSG frame to the daemon, which routes it; the
 * frame carries the current context (pvm_context.c).  Frames from the
 * daemon are read into a queue in arrival order.  A receive takes the
 * oldest queued message that the match function accepts: by default the
 * one of PVM 3.4.6 (tid and tag, -1 matching any, and the current
 * context, unless that is -1); with pvm_recvf the program's, which is
 * given each message's bufid and ranks them as the man page says.  The
 * message becomes the receive buffer; recv, nrecv and trecv free the
 * previous one first, as PVM's do, found or not.  pvm_probe hands out the
 * bufid a later receive will return.  Order between a pair of tasks is the
 * order of the links, which are streams, also across the switch to a direct
 * link (pvm_link.c).  The queue itself is pvm_inq.c's, and the frames
 * from the daemon are read by pvm_daemon.c.
 *
 * A traced task (pvm_trace.c) records each send, and each message a
 * receive takes with the wait before it; pvm_probe and messages that
 * handlers take are not recorded.
 *
 * Message handlers (pvm_mhf.c) take matching messages as they arrive,
 * before any receive sees them.  PVM runs them inside whatever call reads
 * its socket; so do we, except while a request to the daemon waits for
 * its reply (pvm__request): those messages wait, marked, and their
 * handlers run when that request is over and the library next reads or
 * sends, so that a handler making a request of its own cannot take the
 * reply of the one in progress.  The send calls read what is already
 * readable only when handlers are installed, which keeps a plain send at
 * one write.
 */
#include "pvm_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/*
 * Frames read in one go without waiting: a peer that keeps sending must
 * not keep pvm_nrecv from returning.
 */
#define PVM__DRAIN_MAX 256

/* ---- reading what is readable ---- */

int
pvm__poll_input(void)
{
    int i, rc = 0;

    if (pvm__ctx.fd < 0)
        return 0;
    for (i = 0; i < PVM__DRAIN_MAX; i++)
        if ((rc = pvm__pump(0, NULL, NULL)) <= 0)
            break;
    if (rc < 0)
        return rc;
    if ((rc = pvm__direct_work()) < 0)
        return rc;
    return pvm__mhf_run_pending();
}

/* ---- matching ---- */

static int
default_match(int src, int tag, int ctx, int tid, int msgtag)
{
    int my = pvm__context();

    return (tid == -1 || src == tid) && (msgtag == -1 || tag == msgtag) &&
           (my == -1 ? !PVM__CTX_DAEMON(ctx) : ctx == my);
}

/* The default match function as a program may call it (pvm_recvf's result). */
static int
default_match_mid(int mid, int tid, int tag)
{
    struct pvm__buf *b = pvm__buf_get(mid);

    if (b == NULL)
        return PvmNoSuchBuf;
    return default_match(b->src, b->tag, b->ctx, tid, tag);
}

/* A match function's error, as one of our codes. */
static int
matcher_code(int cc)
{
    return cc >= PvmIPLoopback ? PVM__ECODE(cc) : -EIO;
}

/*
 * Find the message a receive of (tid, tag) takes now: 1 with *out (still
 * queued) and *outprev its predecessor, 0 if none, or a negative code.
 */
static int
scan(int tid, int tag, struct pvm__msg **out, struct pvm__msg **outprev)
{
    struct pvm__msg *m, *prev, *next, *best, *bestprev;
    int bestcc, cc, rc;

again:
    best = bestprev = NULL;
    bestcc = 0;
    prev = NULL;
    for (m = pvm__ctx.inq_head; m; m = next) {
        next = m->next;
        if (m->mhf || PVM__CTX_DAEMON(m->ctx)) {
            prev = m;
            continue;
        }
        if (pvm__msg_dead(m)) {
            pvm__inq_unlink(prev, m);
            pvm__msg_free(m);
            continue;
        }
        if (pvm__ctx.recvf == NULL) {
            if (default_match(m->src, m->tag, m->ctx, tid, tag)) {
                *out = m;
                *outprev = prev;
                return 1;
            }
            prev = m;
            continue;
        }
        if ((rc = pvm__msg_wrap(m)) < 0)
            return rc;
        /* Each look starts at the top: pvm_setrbuf(mid) rewinds it. */
        if (m->buf != pvm__ctx.rbuf)
            m->buf->unpacking = 0;
        /* A match function must not receive: the queue is ours meanwhile. */
        cc = pvm__ctx.recvf(m->bufid, tid, tag);
        if (cc < 0)
            return matcher_code(cc);
        if (pvm__msg_dead(m))
            goto again;     /* it freed the message it was shown */
        if (cc == 1) {
            *out = m;
            *outprev = prev;
            return 1;
        }
        if (cc > bestcc) {
            bestcc = cc;
            best = m;
            bestprev = prev;
        }
        prev = m;
    }
    if (best == NULL)
        return 0;
    if (pvm__msg_dead(best))
        goto again;
    *out = best;
    *outprev = bestprev;
    return 1;
}

enum pvm__get {
    PVM__GET_RECV,      /* make it the receive buffer; return its bufid */
    PVM__GET_PROBE,     /* leave it queued; return its bufid */
    PVM__GET_TAKE       /* unlink it and hand it over (pvm_precv) */
};

static int
got(struct pvm__msg *m, struct pvm__msg *prev, enum pvm__get how, struct pvm__msg **taken)
{
    struct pvm__buf *b;
    int rc;

    if (how == PVM__GET_TAKE) {
        pvm__inq_unlink(prev, m);
        *taken = m;
        return 1;
    }
    if ((rc = pvm__msg_wrap(m)) < 0)
        return rc;          /* it stays queued */
    if (how == PVM__GET_PROBE)
        return m->bufid;
    pvm__inq_unlink(prev, m);
    b = m->buf;
    free(m);
    b->held = NULL;
    b->unpacking = 1;
    b->pos = 0;
    if (pvm__ctx.sbuf == b)
        pvm__ctx.sbuf = NULL;
    pvm__ctx.rbuf = b;
    return b->id;
}

/*
 * Wait up to timeout_ms (-1 for ever) for a message a receive of (tid,
 * tag) accepts and get it as how says.  0 if none came in time.
 */
/* A message a receive takes, for the trace (pvm_trace.c). */
static void
traced(int call, int64_t t0, const struct pvm__msg *m)
{
    pvm__trace_msg(PVM__TEV_RECV, call, t0, m->src, m->tag, m->ctx,
                   m->buf != NULL ? pvm__buf_len(m->buf) : m->len);
}

static int
wait_for(int tid, int tag, int timeout_ms, enum pvm__get how, struct pvm__msg **taken, int call)
{
    struct pvm__msg *m, *prev;
    struct timespec t0, t;
    int rc, i, left;
    int64_t tt0 = 0;

    if ((rc = pvm__enroll()) != 0)
        return rc;
    if (how != PVM__GET_PROBE && pvm__tracing())
        tt0 = pvm__trace_begin();
    if (how == PVM__GET_RECV && pvm__ctx.rbuf != NULL)
        pvm__buf_free(pvm__ctx.rbuf);
    if ((rc = pvm__mhf_run_pending()) < 0)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        /* Link requests are answered here, where requests may be made. */
        if ((rc = pvm__direct_work()) < 0)
            return rc;
        if ((rc = scan(tid, tag, &m, &prev)) != 0) {
            if (rc > 0 && tt0 != 0)
                traced(call, tt0, m);
            return rc < 0 ? rc : got(m, prev, how, taken);
        }
        left = -1;
        if (timeout_ms >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
            left = spent >= timeout_ms ? 0 : timeout_ms - (int)spent;
        }
        if (left == 0) {
            /* Out of time: one last look at what is already readable. */
            for (i = 0; i < PVM__DRAIN_MAX; i++)
                if ((rc = pvm__pump(0, NULL, NULL)) <= 0)
                    break;
            if (rc < 0)
                return rc;
            if ((rc = scan(tid, tag, &m, &prev)) != 0) {
                if (rc > 0 && tt0 != 0)
                    traced(call, tt0, m);
                return rc < 0 ? rc : got(m, prev, how, taken);
            }
            return 0;
        }
        if ((rc = pvm__pump(left, NULL, NULL)) < 0)
            return rc;
    }
}

/* ---- sending ---- */

int
pvm__tid_ok(int tid)
{
    return WIRE_TID_IS_TASK(tid) || pvm__opt(PvmResvTids);
}

static int
tag_ok(int tag)
{
    return tag >= 0 || pvm__opt(PvmResvTids);
}

int
pvm__send_frame(int tid, int tag, const void *body, size_t len, int encword)
{
    int ctx = pvm__context();

    /* The daemon would close the link on a frame in one of its contexts. */
    if (PVM__CTX_DAEMON(ctx))
        return -EINVAL;
    /* Above the VM's max_message the daemon would drop our link: refuse. */
    if (len > UINT32_MAX || (pvm__ctx.max_msg && len > pvm__ctx.max_msg))
        return -EMSGSIZE;
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)tid, .tag = tag, .ctx = ctx,
                          .flags = (uint32_t)encword };
    int rc = pvm__direct_send(tid, &h, body, len);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if ((rc = pvm__daemon_write(&h, body, len)) != 0)
        return rc == -ENOMEM ? rc : WIRE_ENOVM;
    return 0;
}

/*
 * After a send: PVM's sends read the socket too, which runs handlers; and
 * a link request that came meanwhile is answered.
 */
static int
after_send(void)
{
    int rc = pvm__direct_work();

    if (rc == 0 && pvm__ctx.nmhf > 0)
        rc = pvm__poll_input();
    return rc;
}

int
pvm_send(int tid, int msgtag)
{
    const unsigned char *p;
    size_t len;
    int rc;

    if (!tag_ok(msgtag) || !pvm__tid_ok(tid))
        return pvm__err(-EINVAL, "pvm_send");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_send");
    if (pvm__ctx.sbuf == NULL)
        return pvm__err(PVM__ENOBUF, "pvm_send");
    if ((rc = pvm__buf_flatten(pvm__ctx.sbuf, &p, &len)) != 0)
        return pvm__err(rc, "pvm_send");
    pvm__ctx.sbuf->ctx = pvm__context();
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    rc = pvm__send_frame(tid, msgtag, p, len, pvm__buf_encword(pvm__ctx.sbuf));
    if (rc == 0 && t0 != 0)
        pvm__trace_msg(PVM__TEV_SEND, PVM__TC_SEND, t0, tid, msgtag, pvm__ctx.sbuf->ctx, len);
    if (rc == 0)
        rc = after_send();
    return pvm__err(rc, "pvm_send");
}

/* ---- receiving ---- */

int
pvm_recv(int tid, int msgtag)
{
    return pvm__err(wait_for(tid, msgtag, -1, PVM__GET_RECV, NULL, PVM__TC_RECV), "pvm_recv");
}

int
pvm_nrecv(int tid, int msgtag)
{
    return pvm__err(wait_for(tid, msgtag, 0, PVM__GET_RECV, NULL, PVM__TC_NRECV), "pvm_nrecv");
}

int
pvm_trecv(int tid, int msgtag, struct timeval *tmout)
{
    int ms = -1;
    if (tmout) {
        /* A time already past (a negative field, as from a deadline
         * minus now) is a poll, as in PVM: no error. */
        long long t = (long long)tmout->tv_sec * 1000 + tmout->tv_usec / 1000;
        ms = t < 0 ? 0 : t > 0x7fffffff ? 0x7fffffff : (int)t;
    }
    return pvm__err(wait_for(tid, msgtag, ms, PVM__GET_RECV, NULL, PVM__TC_TRECV), "pvm_trecv");
}

int
pvm_probe(int tid, int msgtag)
{
    return pvm__err(wait_for(tid, msgtag, 0, PVM__GET_PROBE, NULL, PVM__TC_NONE), "pvm_probe");
}

int (*pvm_recvf(int (*new_match)(int bufid, int tid, int tag)))(int (*)(int, int, int))
{
    typedef int (*pvm__recvf_ret)(int (*)(int, int, int));
    int (*old)(int, int, int) = pvm__ctx.recvf ? pvm__ctx.recvf : default_match_mid;

    /* NULL, or the default handed back, restores the default (and its speed). */
    pvm__ctx.recvf = new_match == default_match_mid ? NULL : new_match;
    /* PVM's prototype declares another type; programs cast it back. */
    return (pvm__recvf_ret)(void (*)(void))old;
}

/* ---- pvm_psend, pvm_precv ---- */

/* The size of one item, 0 for PVM_STR, -1 for an unknown type. */
static int
item_size(int type)
{
    switch (type) {
    case PVM_STR:
        return 0;
    case PVM_BYTE:
        return 1;
    case PVM_SHORT:
    case PVM_USHORT:
        return (int)sizeof(short);
    case PVM_INT:
    case PVM_UINT:
        return (int)sizeof(int);
    case PVM_LONG:
    case PVM_ULONG:
        return (int)sizeof(long);
    case PVM_FLOAT:
        return (int)sizeof(float);
    case PVM_CPLX:
        return 2 * (int)sizeof(float);
    case PVM_DOUBLE:
        return (int)sizeof(double);
    case PVM_DCPLX:
        return 2 * (int)sizeof(double);
    default:
        return -1;
    }
}

/* len items of type at buf as a byte count: 0, or a negative code. */
static int
byte_count(const void *buf, int len, int type, size_t *bytes)
{
    int size = item_size(type);

    /* PVM's psend and precv carry bytes only; it has no string form. */
    if (size == 0)
        return -ENOTSUP;
    if (size < 0 || len < 0 || (len > 0 && buf == NULL) || len > INT_MAX / size)
        return -EINVAL;
    *bytes = (size_t)len * (size_t)size;
    return 0;
}

/*
 * The bytes of buf as they are, in a PvmDataRaw message (PVM 3.4: "this
 * parameter only determines message length, not data conversion"); the
 * send buffer is left alone.
 */
int
pvm_psend(int tid, int msgtag, void *buf, int len, int datatype)
{
    size_t n;
    int rc;

    if ((rc = byte_count(buf, len, datatype, &n)) != 0)
        return pvm__err(rc, "pvm_psend");
    if (!tag_ok(msgtag) || !pvm__tid_ok(tid))
        return pvm__err(-EINVAL, "pvm_psend");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_psend");
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    rc = pvm__send_frame(tid, msgtag, buf, n, pvm__dsig());
    if (rc == 0 && t0 != 0)
        pvm__trace_msg(PVM__TEV_SEND, PVM__TC_PSEND, t0, tid, msgtag, pvm__context(), n);
    if (rc == 0)
        rc = after_send();
    return pvm__err(rc, "pvm_psend");
}

/*
 * Receive as pvm_recv does (same matching, handlers, contexts) but copy the
 * body's first bytes into buf, up to len items, and leave the receive
 * buffer alone.  *alen is the message's length in bytes, as in PVM 3.4.6.
 */
int
pvm_precv(int tid, int msgtag, void *buf, int len, int datatype, int *atid, int *atag,
          int *alen)
{
    struct pvm__msg *m = NULL;
    const unsigned char *data;
    size_t n, mlen;
    int rc;

    if ((rc = byte_count(buf, len, datatype, &n)) != 0)
        return pvm__err(rc, "pvm_precv");
    rc = wait_for(tid, msgtag, -1, PVM__GET_TAKE, &m, PVM__TC_PRECV);
    if (rc < 0)
        return pvm__err(rc, "pvm_precv");
    if (m->buf != NULL) {
        data = m->buf->data;
        mlen = pvm__buf_len(m->buf);
    } else {
        data = m->data;
        mlen = m->len;
    }
    if (n > mlen)
        n = mlen;
    if (n > 0)
        memcpy(buf, data, n);
    if (atid)
        *atid = m->src;
    if (atag)
        *atag = m->tag;
    if (alen)
        *alen = mlen > INT_MAX ? INT_MAX : (int)mlen;
    pvm__msg_free(m);
    return PvmOk;
}
