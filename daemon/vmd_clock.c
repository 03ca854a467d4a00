/*
 * vmd_clock.c - pvm_hostsync: a host's time-of-day clock.
 *
 * A task asks its own daemon (WIRE_T_REQ_CLOCK, u32 the host's daemon
 * tid; only the host part counts, as in PVM).  The daemon answers for
 * itself at once; for another host it sends that daemon WIRE_T_CLOCK with
 * a fresh id, which the other daemon answers with WIRE_T_CLOCK carrying
 * WIRE_CLOCK_ANSWER in its flags, the same id and its clock.  The task's
 * library reads its own clock before and after the request and takes the
 * midpoint (lib/pvm/pvm_hostsync.c), so the daemon adds no timing of its own.
 *
 * Answers: 0 and u64 seconds, u32 microseconds (gettimeofday);
 * WIRE_ENOHOST for a host that is not in the table; WIRE_EHOSTFAIL when
 * the host's link is down, or is lost, or the host leaves the VM before it
 * answered.  A request waits on nothing else: each one is answered when
 * its host answers or its link goes, and dropped if its task goes first.
 */
#define LOG_TAG "clock"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>

/* A request waiting for another host's clock (in vmd->clocks). */
struct vmd_clock {
    struct vmd_list link;
    uint32_t id;                /* the id of our WIRE_T_CLOCK */
    int host;                   /* the host asked */
    uint32_t client_id, req_id; /* the task's connection and request */
};

static void
put_now(struct wire_wbuf *b)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    wire_put_u64(b, (uint64_t)(int64_t)tv.tv_sec);
    wire_put_u32(b, (uint32_t)tv.tv_usec);
}

static void
answer_local(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h)
{
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    put_now(&b);
    vmd_answer(vmd, from, h, 0, &b);
    wire_wbuf_free(&b);
}

/* A task's request: u32 the host's daemon tid. */
int
vmd_clock_request(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    if (h->len != 4)
        return WIRE_EFRAME;
    int idx = (int)VMD_TID_HOST(wire_be32_get(body));
    if (idx == vmd->index) {
        answer_local(vmd, from, h);
        return 0;
    }
    struct vmd_host *host = idx >= 1 && idx <= VMD_MAX_HOSTS ? vmd->hosts[idx] : NULL;
    if (host == NULL) {
        vmd_answer(vmd, from, h, WIRE_ENOHOST, NULL);
        return 0;
    }
    if (host->peer == NULL || host->peer->state != VMD_PEER_UP) {
        vmd_answer(vmd, from, h, WIRE_EHOSTFAIL, NULL);
        return 0;
    }
    struct vmd_clock *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        vmd_answer(vmd, from, h, -ENOMEM, NULL);
        return 0;
    }
    c->id = ++vmd->next_op_id;
    c->host = idx;
    c->client_id = from->client_id;
    c->req_id = h->id;
    vmd_list_insert(&vmd->clocks, &c->link);
    struct wire_hdr q = { .type = WIRE_T_CLOCK, .src = VMD_HOST_TID(vmd->index),
                          .dst = VMD_HOST_TID(idx), .id = c->id };
    int rc = vmd_peer_send(host->peer, &q, NULL, 0);
    if (rc != 0) {
        vmd_list_remove(&c->link);
        free(c);
        vmd_answer(vmd, from, h, WIRE_EHOSTFAIL, NULL);
    }
    return 0;
}

static struct vmd_clock *
find(struct vmd *vmd, uint32_t id, int host)
{
    for (struct vmd_list *l = vmd->clocks.next; l != &vmd->clocks; l = l->next) {
        struct vmd_clock *c = vmd_container_of(l, struct vmd_clock, link);
        if (c->id == id && c->host == host)
            return c;
    }
    return NULL;
}

/* Another daemon asks for our clock, or answers our question. */
int
vmd_clock_on_peer(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    struct vmd_host *host = from->peer->host;
    if (!(h->flags & WIRE_CLOCK_ANSWER)) {
        if (h->len != 0)
            return WIRE_EFRAME;
        struct wire_wbuf b;
        wire_wbuf_init(&b);
        put_now(&b);
        struct wire_hdr a = { .type = WIRE_T_CLOCK, .src = VMD_HOST_TID(vmd->index),
                              .dst = VMD_HOST_TID(host->index), .id = h->id,
                              .flags = WIRE_CLOCK_ANSWER };
        int rc = b.err ? b.err : vmd_peer_send(from->peer, &a, b.data, b.len);
        wire_wbuf_free(&b);
        return rc;
    }
    if (h->len != 12)
        return WIRE_EFRAME;
    struct vmd_clock *c = find(vmd, h->id, host->index);
    if (c == NULL)
        return 0;               /* its task left meanwhile */
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_bytes(&b, body, 12);
    vmd_client_reply(vmd, c->client_id, c->req_id, 0, &b);
    wire_wbuf_free(&b);
    vmd_list_remove(&c->link);
    free(c);
    return 0;
}

/* Answer every request for host index (0: all) with status; or, with
 * client_id != 0, drop that client's requests unanswered. */
static void
settle(struct vmd *vmd, int host, uint32_t client_id, int status)
{
    struct vmd_list *l = vmd->clocks.next;
    while (l != &vmd->clocks) {
        struct vmd_clock *c = vmd_container_of(l, struct vmd_clock, link);
        l = l->next;
        if (client_id != 0 ? c->client_id != client_id : host != 0 && c->host != host)
            continue;
        if (client_id == 0)
            vmd_client_reply(vmd, c->client_id, c->req_id, status, NULL);
        vmd_list_remove(&c->link);
        free(c);
    }
}

static void
clock_halt(struct vmd *vmd)
{
    settle(vmd, 0, 0, WIRE_EHALTED);
}

static void
clock_link_lost(struct vmd *vmd, struct vmd_host *h, int err)
{
    (void)err;
    settle(vmd, h->index, 0, WIRE_EHOSTFAIL);
}

static void
clock_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    settle(vmd, h->index, 0, WIRE_EHOSTFAIL);
}

static void
clock_client_gone(struct vmd *vmd, struct vmd_client *c)
{
    settle(vmd, 0, c->id, 0);
}

const struct vmd_hooks vmd_clock_hooks = {
    .module = "clock",
    .halt = clock_halt,
    .link_lost = clock_link_lost,
    .host_gone = clock_host_gone,
    .client_gone = clock_client_gone,
};
