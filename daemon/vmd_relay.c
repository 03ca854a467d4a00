/*
 * vmd_relay.c - answering a request, wherever its client is, and taking to
 * the master the requests only the master handles (as PVM's slave pvmds
 * forwarded host requests to the master pvmd).
 *
 * A request's client is on this host (host 0) or, for a request that came
 * through RELAY, on the host whose daemon relayed it.  A daemon that is not
 * the master wraps a request of its client in a RELAY frame (u32 client
 * id, u32 type, the request) to the master; the master's answer comes back
 * as a RELAY frame with VMD_RELAY_REPLY set (u32 client id, the reply
 * body), which this daemon hands to its client.  Client id 0 is nobody:
 * the daemons' own requests (a task's departure) want no answer.
 */
#define LOG_TAG "relay"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdint.h>

void
vmd_reply(struct vmd *vmd, int host, uint32_t client_id, uint32_t req_id, int status,
          const struct wire_wbuf *body)
{
    if (host == 0) {
        vmd_client_reply(vmd, client_id, req_id, status, body);
        return;
    }
    struct vmd_host *h = host > 0 && host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (h == NULL || h->peer == NULL)
        return;
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, client_id);
    if (body && body->len)
        wire_put_bytes(&b, body->data, body->len);
    struct wire_hdr hdr = { .type = WIRE_T_RELAY, .flags = VMD_RELAY_REPLY, .id = req_id,
                            .tag = status, .src = VMD_HOST_TID(vmd->index) };
    if (b.err == 0)
        vmd_peer_send(h->peer, &hdr, b.data, b.len);
    wire_wbuf_free(&b);
}

void
vmd_answer(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h, int status,
           const struct wire_wbuf *body)
{
    vmd_reply(vmd, from->host, from->client_id, h->id, status, body);
}

int
vmd_relay_request(struct vmd *vmd, uint32_t client_id, const struct wire_hdr *h,
                  const unsigned char *body)
{
    struct vmd_host *m = vmd->master_index ? vmd->hosts[vmd->master_index] : NULL;
    if (m == NULL || m->peer == NULL) {
        vmd_client_reply(vmd, client_id, h->id, WIRE_ENOVM, NULL);
        return 0;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, client_id);
    wire_put_u32(&b, h->type);
    wire_put_bytes(&b, body, h->len);
    struct wire_hdr hdr = { .type = WIRE_T_RELAY, .id = h->id, .src = VMD_HOST_TID(vmd->index) };
    int rc = b.err ? b.err : vmd_peer_send(m->peer, &hdr, b.data, b.len);
    wire_wbuf_free(&b);
    if (rc != 0)
        vmd_client_reply(vmd, client_id, h->id, rc, NULL);
    return 0;
}

void
vmd_relay_own(struct vmd *vmd, int type, const void *body, size_t len)
{
    struct wire_hdr h = { .type = (uint8_t)type, .len = (uint32_t)len };
    if (vmd->halting || vmd->halting_vm)
        return;
    vmd_relay_request(vmd, 0, &h, body);
}

/* The master's answer to a request we relayed: to our client. */
int
vmd_relay_on_reply(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                   const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t client_id;
    (void)from;
    wire_rbuf_init(&r, body, h->len);
    if (wire_get_u32(&r, &client_id) != 0)
        return 0;
    struct wire_wbuf b = { .data = (unsigned char *)(uintptr_t)(body + r.pos),
                           .len = r.len - r.pos };
    vmd_client_reply(vmd, client_id, h->id, h->tag, &b);
    return 0;
}
