/*
 * pvm_daemon.c - frames to and from the local daemon over the task's Unix
 * socket (pvm__ctx.fd): writing one whole frame, and reading one frame and
 * handing it on.
 *
 * A message goes to the queue (pvm_inq.c), and its handler runs at once
 * unless a request waits for its reply; a reply goes back to the request
 * that waits for it (pvm_request.c); a spawned task's output goes to
 * pvm_output.c; a WIRE_T_DIRECT frame goes to the direct-link
 * protocol through pvm__ctx.on_direct, since that protocol sits above this
 * file and uses it.  With direct links, waiting for the daemon is the one
 * wait over every socket (pvm_poll.c).
 *
 * A write that finds the socket full reads meanwhile (the daemon pauses a
 * task whose messages pile up for a slow peer, and two tasks sending to
 * each other must not wait on each other); handlers and other frames to
 * the daemon wait until it is over (pvm__ctx.io_depth).
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The daemon never sends more than max_message; this is only a sanity cap. */
#define PVM__MAX_FRAME (1u << 30)

/*
 * Move the iovecs of mh past the k bytes sendmsg took; the one partly
 * sent starts at its first unsent byte.
 */
static void
iov_advance(struct msghdr *mh, size_t k)
{
    while (mh->msg_iovlen > 0 && k >= mh->msg_iov[0].iov_len) {
        k -= mh->msg_iov[0].iov_len;
        mh->msg_iov++;
        mh->msg_iovlen--;
    }
    if (mh->msg_iovlen > 0) {
        mh->msg_iov[0].iov_base = (char *)mh->msg_iov[0].iov_base + k;
        mh->msg_iov[0].iov_len -= k;
    }
}

int
pvm__daemon_write(struct wire_hdr *h, const void *body, size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    struct iovec iov[2] = { { hdr, WIRE_HDR_LEN }, { (void *)(uintptr_t)body, len } };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };
    int rc = 0, dready, wready;

    if (len > UINT32_MAX)
        return -EMSGSIZE;
    if (pvm__ctx.fd < 0)
        return WIRE_ENOVM;
    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    pvm__ctx.io_depth++;
    while (mh.msg_iovlen > 0) {
        ssize_t k = sendmsg(pvm__ctx.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The daemon is slow to take it, or has paused us: read meanwhile. */
            if ((rc = pvm__poll_wait(-1, pvm__ctx.fd, &dready, &wready)) < 0)
                break;
            if (dready && !wready && (rc = pvm__pump_daemon(NULL, NULL)) < 0)
                break;
            rc = 0;
            continue;
        }
        if (k < 0) {
            rc = -errno;
            break;
        }
        iov_advance(&mh, (size_t)k);
    }
    pvm__ctx.io_depth--;
    return rc;
}

/* A message frame from the daemon, as pvm__pump says; body is taken. */
static int
message_frame(const struct wire_hdr *h, unsigned char *body, const struct wire_hdr *reply)
{
    struct pvm__msg *m;
    int rc;

    /* A spawned task's output (pvm_output.c): printed for pvm_catchout, or
     * a message of PVM's making for PvmOutputTid. */
    if (h->ctx == WIRE_CTX_OUTPUT) {
        m = pvm__output_frame(h, body);
        free(body);
        if (m == NULL)
            return 1;
    } else if ((m = calloc(1, sizeof(*m))) == NULL) {
        free(body);
        return -ENOMEM;
    } else {
        m->src = (int)h->src;
        m->dst = (int)h->dst;
        m->tag = h->tag;
        m->ctx = h->ctx;
        m->encword = (int)h->flags;
        m->data = body;
        m->len = h->len;
    }
    /* What a task put in shared memory before it died comes before the
     * daemon's word of its death (pvm_link.c's drain). */
    if (pvm__ctx.pollsrc != NULL && pvm__ctx.pollsrc->drain != NULL)
        pvm__ctx.pollsrc->drain();
    if (pvm__inq_push(m) && reply == NULL && (rc = pvm__mhf_run_pending()) < 0)
        return rc;
    return 1;
}

/* Handle one frame from the daemon, as pvm__pump says; body is taken. */
static int
daemon_frame(struct wire_hdr *h, unsigned char *body, struct wire_hdr *reply,
             unsigned char **reply_body)
{
    if (h->type == WIRE_T_REPLY) {
        if (reply) {
            *reply = *h;
            *reply_body = body;
        } else {
            free(body);
        }
        return 2;
    }
    if (h->type == WIRE_T_DIRECT) {
        if (pvm__ctx.on_direct != NULL)
            pvm__ctx.on_direct(h, body);
        else
            free(body);
        return 1;
    }
    if (h->type != WIRE_T_MSG) {
        free(body);
        return 1;
    }
    return message_frame(h, body, reply);
}

int
pvm__pump_daemon(struct wire_hdr *reply, unsigned char **reply_body)
{
    struct wire_hdr h;
    unsigned char *body;
    int rc = wire_read_frame(pvm__ctx.fd, PVM__MAX_FRAME, 0, &h, &body);

    if (rc <= 0)
        return rc < 0 ? WIRE_ENOVM : 0;
    return daemon_frame(&h, body, reply, reply_body);
}

/*
 * reply != NULL means a daemon request is waiting for it.  With direct
 * links the wait covers them too (pvm__poll_wait), and what they bring
 * counts as a frame handled.
 */
int
pvm__pump(int timeout_ms, struct wire_hdr *reply, unsigned char **reply_body)
{
    const struct pvm__pollsrc *src = pvm__ctx.pollsrc;
    struct wire_hdr h;
    unsigned char *body;
    int rc, dready;

    if (src != NULL && src->active()) {
        if ((rc = pvm__poll_wait(timeout_ms, -1, &dready, NULL)) < 0)
            return rc;
        if (dready)
            rc = pvm__pump_daemon(reply, reply_body);
        if (rc >= 0 && rc != 2 && reply == NULL && pvm__ctx.mhf_pending > 0) {
            int hrc = pvm__mhf_run_pending();
            if (hrc < 0)
                return hrc;
        }
        return rc;
    }
    rc = wire_read_frame(pvm__ctx.fd, PVM__MAX_FRAME, timeout_ms, &h, &body);
    if (rc <= 0)
        return rc < 0 ? WIRE_ENOVM : 0;
    return daemon_frame(&h, body, reply, reply_body);
}
