/*
 * vmd_route.c - getting a task message to its task (docs/architecture.md, Routing):
 * here, held until the task connects, or over the link to its host's
 * daemon, held in order while that link is being made.
 *
 * A message goes task -> this daemon -> (the destination host's daemon
 * over its TLS link) -> task.  Links are ordered, so messages between a
 * pair of tasks keep their order; so are the queues that hold them while
 * a link or a task is not there yet.  The tasks that feed a full queue
 * are paused (vmd_client_pause) rather than their messages dropped.
 */
#define LOG_TAG "route"
#include "log.h"
#include "vmd.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

/* A message of the daemon's own to task `to`: n XDR ints (PVM's notices). */
void
vmd_route_ints(struct vmd *vmd, uint32_t to, int32_t tag, int32_t ctx, const uint32_t *v, int n)
{
    unsigned char body[4 * 64];
    int k = n > 64 ? 64 : n;
    for (int i = 0; i < k; i++) {
        body[4 * i] = (unsigned char)(v[i] >> 24);
        body[4 * i + 1] = (unsigned char)(v[i] >> 16);
        body[4 * i + 2] = (unsigned char)(v[i] >> 8);
        body[4 * i + 3] = (unsigned char)v[i];
    }
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = VMD_HOST_TID(vmd->index), .dst = to,
                          .tag = tag, .ctx = ctx, .flags = WIRE_ENC_XDR, .len = (uint32_t)(4 * k) };
    vmd_route_deliver(vmd, &h, body);
}

static struct vmd_qmsg *
qmsg_new(const struct wire_hdr *h, const void *body)
{
    struct vmd_qmsg *q = calloc(1, sizeof(*q));
    if (q == NULL || (h->len && (q->body = malloc(h->len)) == NULL)) {
        free(q);
        return NULL;
    }
    q->h = *h;
    if (h->len)
        memcpy(q->body, body, h->len);
    return q;
}

/* Held in order for a host whose link is being made; the tasks that feed it
 * are paused once max_peer_queue bytes wait (vmd_msg_route).  0, or
 * -ENOMEM with the frame dropped (the caller says so). */
static int
hold(struct vmd *vmd, struct vmd_host *dh, const struct wire_hdr *h, const void *body)
{
    struct vmd_qmsg *q;
    (void)vmd;
    if ((q = qmsg_new(h, body)) == NULL)
        return -ENOMEM;
    if (dh->qtail)
        dh->qtail->next = q;
    else
        dh->qhead = q;
    dh->qtail = q;
    dh->qbytes += h->len;
    return 0;
}

/* The one rule of what goes to another host: behind what waits for it. */
int
vmd_route_to_host(struct vmd *vmd, struct vmd_host *dh, struct wire_hdr *h,
                  const void *body)
{
    if (dh->peer == NULL || dh->peer->state != VMD_PEER_UP || dh->qhead)
        return hold(vmd, dh, h, body);
    return vmd_peer_send(dh->peer, h, body, h->len);
}

/* The link to h is up: send what waited for it. */
void
vmd_route_flush_host(struct vmd *vmd, struct vmd_host *h)
{
    while (h->qhead && h->peer && h->peer->state == VMD_PEER_UP) {
        struct vmd_qmsg *q = h->qhead;
        h->qhead = q->next;
        if (h->qhead == NULL)
            h->qtail = NULL;
        h->qbytes -= q->h.len;
        int rc = vmd_peer_send(h->peer, &q->h, q->body, q->h.len);
        if (rc != 0)
            log_code(rc, "message t%x -> t%x: cannot forward to %s", q->h.src, q->h.dst,
                     h->name);
        free(q->body);
        free(q);
    }
    vmd_client_flow_check(vmd);
}

/* A message whose task is gone is dropped; a line of output whose catcher
 * has left goes to our log, as a task's output that no one catches does. */
static void
drop(const struct wire_hdr *h, const void *body, int hostgone)
{
    if (h->ctx == WIRE_CTX_OUTPUT && (h->flags == WIRE_OUT_LINE || h->flags == WIRE_OUT_PART))
        log_info("t%x: %.*s (its catcher t%x has left%s)", h->src, (int)h->len,
                 (const char *)body, h->dst, hostgone ? " with its host" : "");
    else
        log_debug("message t%x -> t%x tag %d: %s; dropped", h->src, h->dst, h->tag,
                  hostgone ? "its host is not in the VM" : "no such task");
}

/* Deliver a message to a task of this host, or hold it until it connects. */
static void
deliver_local(struct vmd *vmd, struct wire_hdr *h, const void *body)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, h->dst);
    if (t == NULL) {
        drop(h, body, 0);
        return;
    }
    if (t->client) {
        vmd_client_send(t->client, h, body, h->len);
        return;
    }
    if (t->qbytes + h->len > vmd->conf.max_peer_queue) {
        log_warn("task t%x has not connected and holds %zu bytes; message from t%x dropped",
                 t->tid, t->qbytes, h->src);
        return;
    }
    struct vmd_qmsg *q = qmsg_new(h, body);
    if (q == NULL) {
        log_warn("out of memory holding a message for t%x", t->tid);
        return;
    }
    if (t->qtail)
        t->qtail->next = q;
    else
        t->qhead = q;
    t->qtail = q;
    t->qbytes += h->len;
}

/* Send a message to any task of the VM: here, or over the link to its host. */
void
vmd_route_deliver(struct vmd *vmd, struct wire_hdr *h, const void *body)
{
    int host = VMD_TID_HOST(h->dst);
    if (host == vmd->index) {
        deliver_local(vmd, h, body);
        return;
    }
    struct vmd_host *dh = host > 0 && host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (dh == NULL) {
        drop(h, body, 1);
        return;
    }
    /* Held in order while the link is being made (a new host, a redial);
     * the host leaving the VM drops what waits. */
    int rc = vmd_route_to_host(vmd, dh, h, body);
    if (rc != 0)
        log_code(rc, "message t%x -> t%x: cannot forward to %s; dropped", h->src, h->dst,
                 dh->name);
}
