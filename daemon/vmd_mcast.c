/*
 * vmd_mcast.c - one message for several tasks (pvm_mcast, pvm_bcast), as
 * PVM's daemons fan a multicast out: the task hands its daemon the body
 * once with the list of tids (WIRE_T_TASK_MCAST); the daemon delivers to
 * its own tasks and sends each other host one WIRE_T_MCAST frame holding
 * the body and that host's tids, which its daemon delivers.  A 1 MB
 * broadcast to 15 tasks on 4 hosts thus crosses the task's socket once and
 * each link between daemons once, and the daemon does not copy it to frame
 * it (vmd_peer_send2 encrypts it from the receive buffer).
 *
 * Body: u32 n, u32 tids[n], then the message body.  The header carries the
 * message's tag, context and encoding word like WIRE_T_MSG; the first
 * daemon stamps the source tid, and a peer may send only for its own tasks
 * (both in vmd_dispatch.c) and only to ours.
 */
#define LOG_TAG "mcast"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MCAST_MAX_TIDS 65536

/* Parse the tid list: *tids points into body (big-endian words). */
static int
parse(const struct wire_hdr *h, const unsigned char *body, uint32_t *n,
      const unsigned char **tids, const unsigned char **msg, size_t *mlen)
{
    struct wire_rbuf r;
    const void *p;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, n)) != 0)
        return rc;
    if (*n > MCAST_MAX_TIDS || (rc = wire_get_bytes(&r, &p, (size_t)*n * 4)) != 0)
        return WIRE_EFRAME;
    *tids = p;
    *msg = body + r.pos;
    *mlen = r.len - r.pos;
    return 0;
}

static uint32_t
tid_at(const unsigned char *t, uint32_t i)
{
    return wire_be32_get(t + 4 * (size_t)i);
}

static void
deliver_one(struct vmd *vmd, const struct wire_hdr *h, uint32_t src, uint32_t dst,
            const unsigned char *msg, size_t mlen)
{
    struct wire_hdr m = { .type = WIRE_T_MSG, .src = src, .dst = dst, .tag = h->tag,
                          .ctx = h->ctx, .flags = h->flags, .len = (uint32_t)mlen };
    if ((dst & VMD_TID_LOCAL_MASK) == 0 || VMD_TID_HOST(dst) == 0)
        return;
    vmd_route_deliver(vmd, &m, msg);
}

/* Send host `host` its part: one MCAST frame, or messages while its link is not up. */
static void
send_part(struct vmd *vmd, const struct wire_hdr *h, uint32_t src, int host,
          const unsigned char *tids, uint32_t n, const unsigned char *msg, size_t mlen)
{
    struct vmd_host *dh = vmd->hosts[host];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        k += VMD_TID_HOST(tid_at(tids, i)) == host;
    if (dh == NULL || dh->peer == NULL || dh->peer->state != VMD_PEER_UP || dh->qhead || k == 1) {
        /* Held in order with the host's other messages (or a single one). */
        for (uint32_t i = 0; i < n; i++)
            if (VMD_TID_HOST(tid_at(tids, i)) == host)
                deliver_one(vmd, h, src, tid_at(tids, i), msg, mlen);
        return;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, k);
    for (uint32_t i = 0; i < n; i++)
        if (VMD_TID_HOST(tid_at(tids, i)) == host)
            wire_put_u32(&b, tid_at(tids, i));
    struct wire_hdr m = { .type = WIRE_T_MCAST, .src = src, .tag = h->tag, .ctx = h->ctx,
                          .flags = h->flags };
    /* The message goes from our receive buffer straight into TLS. */
    int rc = b.err ? b.err : vmd_peer_send2(dh->peer, &m, b.data, b.len, msg, mlen);
    if (rc != 0)
        log_code(rc, "multicast from t%x: cannot forward to %s", src, dh->name);
    wire_wbuf_free(&b);
}

/* A local task's multicast; the dispatcher stamped its tid as src. */
int
vmd_mcast_client(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    uint32_t n;
    const unsigned char *tids, *msg;
    size_t mlen;
    int rc;

    (void)from;
    if ((rc = parse(h, body, &n, &tids, &msg, &mlen)) != 0)
        return rc;
    uint32_t src = h->src;
    unsigned char seen[(VMD_MAX_HOSTS + 1 + 7) / 8];
    memset(seen, 0, sizeof(seen));
    /* Other hosts first, in the order their tids first appear, each once:
     * their daemons deliver while we copy to our own tasks. */
    for (uint32_t i = 0; i < n; i++) {
        int host = VMD_TID_HOST(tid_at(tids, i));
        if (host == 0 || host == vmd->index || (seen[host / 8] & (1u << (host % 8))))
            continue;
        seen[host / 8] |= (unsigned char)(1u << (host % 8));
        if (vmd->hosts[host] != NULL)
            send_part(vmd, h, src, host, tids, n, msg, mlen);
    }
    for (uint32_t i = 0; i < n; i++)
        if (VMD_TID_HOST(tid_at(tids, i)) == vmd->index)
            deliver_one(vmd, h, src, tid_at(tids, i), msg, mlen);
    return 0;
}

/* Another host's part of a multicast (its src is one of that host's tasks:
 * vmd_dispatch.c). */
int
vmd_mcast_on_peer(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    uint32_t n;
    const unsigned char *tids, *msg;
    size_t mlen;
    int rc;

    (void)from;
    if ((rc = parse(h, body, &n, &tids, &msg, &mlen)) != 0)
        return rc;
    for (uint32_t i = 0; i < n; i++)
        if (VMD_TID_HOST(tid_at(tids, i)) != vmd->index)
            return WIRE_EFRAME;     /* peers deliver only to our own tasks */
    for (uint32_t i = 0; i < n; i++)
        deliver_one(vmd, h, h->src, tid_at(tids, i), msg, mlen);
    return 0;
}
