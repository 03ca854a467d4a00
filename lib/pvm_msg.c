/*
 * pvm_msg.c - point-to-point messages: pvm_send, pvm_recv, pvm_nrecv,
 * pvm_trecv, pvm_probe.
 *
 * A send flattens the active send buffer and writes one WIRE_T_MSG frame to
 * the daemon, which routes it.  Frames from the daemon are read into a queue
 * in arrival order; a receive takes the oldest queued message that matches
 * (tid and tag, -1 matching any) and makes it the active receive buffer,
 * freeing the previous one, as PVM does.  Order between a pair of tasks is
 * the order of the links, which are streams.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* The daemon never sends more than max_message; this is only a sanity cap. */
#define PVM__MAX_FRAME (1u << 30)

void
pvm__inq_free(void)
{
    struct pvm__msg *m = pvm__ctx.inq_head, *next;
    for (; m; m = next) {
        next = m->next;
        free(m->data);
        free(m);
    }
    pvm__ctx.inq_head = pvm__ctx.inq_tail = NULL;
}

/*
 * Read one frame: a message is queued (returns 1); a reply is handed back
 * in *reply / *reply_body (returns 2); 0 on timeout.
 */
int
pvm__pump(int timeout_ms, struct wire_hdr *reply, unsigned char **reply_body)
{
    struct wire_hdr h;
    unsigned char *body;
    int rc = wire_read_frame(pvm__ctx.fd, PVM__MAX_FRAME, timeout_ms, &h, &body);
    if (rc <= 0)
        return rc < 0 ? WIRE_ENOVM : 0;
    if (h.type == WIRE_T_REPLY) {
        if (reply) {
            *reply = h;
            *reply_body = body;
        } else {
            free(body);
        }
        return 2;
    }
    if (h.type != WIRE_T_MSG) {
        free(body);
        return 1;
    }
    struct pvm__msg *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        free(body);
        return -ENOMEM;
    }
    m->src = (int)h.src;
    m->dst = (int)h.dst;
    m->tag = h.tag;
    m->ctx = h.ctx;
    m->encword = (int)h.flags;
    m->data = body;
    m->len = h.len;
    /* The daemon's own messages: a child's output line is printed at once
     * (pvm_catchout); others (siblings) wait in the queue for their reader. */
    if (m->ctx == WIRE_CTX_OUTPUT) {
        pvm__output(m);
        free(m->data);
        free(m);
        return 1;
    }
    if (pvm__ctx.inq_tail)
        pvm__ctx.inq_tail->next = m;
    else
        pvm__ctx.inq_head = m;
    pvm__ctx.inq_tail = m;
    return 1;
}

static int
matches(const struct pvm__msg *m, int tid, int tag)
{
    return (tid == -1 || m->src == tid) && (tag == -1 || m->tag == tag);
}

/* Unlink and return the oldest match, or NULL. */
static struct pvm__msg *
take(int tid, int tag, int remove)
{
    struct pvm__msg *prev = NULL;
    for (struct pvm__msg *m = pvm__ctx.inq_head; m; prev = m, m = m->next) {
        if (!matches(m, tid, tag))
            continue;
        if (remove) {
            if (prev)
                prev->next = m->next;
            else
                pvm__ctx.inq_head = m->next;
            if (pvm__ctx.inq_tail == m)
                pvm__ctx.inq_tail = prev;
            m->next = NULL;
        }
        return m;
    }
    return NULL;
}

/* Turn a message into the active receive buffer; returns its bufid. */
static int
deliver(struct pvm__msg *m)
{
    struct pvm__buf *b;
    struct pvmminfo mi;
    int rc = pvm__buf_adopt(m->encword, m->data, m->len, m->len, 0, &b);
    if (rc != 0)
        return rc;          /* m still owns its data; the caller frees m */
    m->data = NULL;
    memset(&mi, 0, sizeof(mi));
    mi.src = m->src;
    mi.dst = m->dst;
    mi.tag = m->tag;
    mi.ctx = m->ctx;
    pvm__buf_set_info(b, &mi);
    if (pvm__ctx.rbuf)
        pvm__buf_free(pvm__ctx.rbuf);
    pvm__ctx.rbuf = b;
    return b->id;
}

/*
 * Wait up to timeout_ms (-1 for ever) for a match.  With remove, it becomes
 * the receive buffer (returns the bufid); else 1 if one is there.  0 if
 * none came in time.
 */
static int
wait_for(int tid, int tag, int timeout_ms, int remove)
{
    struct timespec t0;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pvm__msg *m = take(tid, tag, remove);
        if (m) {
            if (!remove)
                return 1;
            rc = deliver(m);
            free(m->data);
            free(m);
            return rc;
        }
        int left = -1;
        if (timeout_ms >= 0) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
            left = spent >= timeout_ms ? 0 : timeout_ms - (int)spent;
        }
        rc = pvm__pump(left, NULL, NULL);
        if (rc < 0)
            return rc;
        if (rc == 0 && timeout_ms >= 0) {
            /* Timed out: one last look at what is already readable. */
            while ((rc = pvm__pump(0, NULL, NULL)) > 0)
                ;
            if (rc < 0)
                return rc;
            m = take(tid, tag, remove);
            if (m == NULL)
                return 0;
            if (!remove)
                return 1;
            rc = deliver(m);
            free(m->data);
            free(m);
            return rc;
        }
    }
}

int
pvm_send(int tid, int msgtag)
{
    const unsigned char *p;
    size_t len;
    int rc;

    if (msgtag < 0 && msgtag != -1)
        return pvm__err(-EINVAL, "pvm_send");
    if (tid <= 0)
        return pvm__err(-EINVAL, "pvm_send");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_send");
    if (pvm__ctx.sbuf == NULL)
        return pvm__err(PVM__ENOBUF, "pvm_send");
    if ((rc = pvm__buf_flatten(pvm__ctx.sbuf, &p, &len)) != 0)
        return pvm__err(rc, "pvm_send");
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)tid, .tag = msgtag,
                          .flags = (uint32_t)pvm__buf_encword(pvm__ctx.sbuf) };
    if ((rc = wire_write_frame(pvm__ctx.fd, &h, p, len)) != 0)
        return pvm__err(WIRE_ENOVM, "pvm_send");
    return PvmOk;
}

int
pvm_recv(int tid, int msgtag)
{
    int rc = wait_for(tid, msgtag, -1, 1);
    return rc < 0 ? pvm__err(rc, "pvm_recv") : rc;
}

int
pvm_nrecv(int tid, int msgtag)
{
    int rc = wait_for(tid, msgtag, 0, 1);
    return rc < 0 ? pvm__err(rc, "pvm_nrecv") : rc;
}

int
pvm_trecv(int tid, int msgtag, struct timeval *tmout)
{
    int ms = -1;
    if (tmout) {
        if (tmout->tv_sec < 0 || tmout->tv_usec < 0)
            return pvm__err(-EINVAL, "pvm_trecv");
        long long t = (long long)tmout->tv_sec * 1000 + tmout->tv_usec / 1000;
        ms = t > 0x7fffffff ? 0x7fffffff : (int)t;
    }
    int rc = wait_for(tid, msgtag, ms, 1);
    return rc < 0 ? pvm__err(rc, "pvm_trecv") : rc;
}

int
pvm_probe(int tid, int msgtag)
{
    int rc = wait_for(tid, msgtag, 0, 0);
    if (rc < 0)
        return pvm__err(rc, "pvm_probe");
    if (rc == 0)
        return 0;
    /* PVM returns the bufid of the message; ours is made when received. */
    return 1;
}
