/*
 * vmd_dispatch.c - who may send what: the one table every frame the daemon
 * receives goes through, and the dispatcher that applies it.
 *
 * A frame comes from a local client (vmctl or a task, on the Unix socket),
 * from another daemon over its TLS link, or, on the master, from a client
 * of another host whose daemon relayed it (RELAY).  The receiving path says
 * which (struct vmd_from); the row of the frame's type says which origins
 * may send it, how long its body is at least, and what must hold of the
 * sender: an enrolled task, a link bound to a host of our table, a source
 * tid of the sending host.  The dispatcher checks all of it, stamps the
 * sender's tid where the row says so (a task never speaks for another),
 * relays to the master what only the master does, and only then runs the
 * handler.  A frame that fails a check reaches no handler: the caller
 * closes that client or link (STYLE.md 5.3), and a relayed request is
 * logged and dropped.
 *
 * Only vmd_modules.c (which start-up calls) and the unit test refer to
 * this file: the receiving paths reach it through vmd->on_frame, so the
 * transport files never depend on the handlers above them.
 */
#define LOG_TAG "dispatch"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int relay_request(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                         const unsigned char *body);

#define C VMD_FROM_CLIENT
#define R VMD_FROM_RELAY
#define D VMD_FROM_DAEMON
#define ROW(type, fn_, from_, min_, flags_) \
    [type] = { .fn = (fn_), .from = (from_), .min_len = (min_), .flags = (flags_), .name = #type }

/* The task's tid in the body's first word, stamped here for a local
 * client, checked for a relay; the master acts, other daemons relay. */
#define MASTER_TASK (VMD_F_TASK | VMD_F_STAMP_BODY | VMD_F_MASTER)
#define MASTER_ANY (VMD_F_STAMP_BODY | VMD_F_MASTER)
/* A task's message: from its own task, in its own contexts; from a daemon,
 * for its own tasks. */
#define TASK_MSG (VMD_F_TASK | VMD_F_STAMP_SRC | VMD_F_TASK_CTX | VMD_F_BOUND | VMD_F_OWN_SRC)

/*
 * Minimum lengths count the fixed part of each body (a string counts its
 * 4-byte length): the handlers' readers still refuse what is short inside.
 */
const struct vmd_frame vmd_frames[VMD_FRAME_ROWS] = {
    /* Between daemons. */
    ROW(WIRE_T_HELLO, vmd_proto_hello, VMD_FROM_STRANGER, 24, 0),
    ROW(WIRE_T_HOSTTABLE, vmd_proto_hosttable, VMD_FROM_MASTER, 12, 0),
    ROW(WIRE_T_HEARTBEAT, vmd_proto_heartbeat, D, 0, 0),
    ROW(WIRE_T_HALT, vmd_proto_halt, VMD_FROM_MASTER, 0, 0),
    ROW(WIRE_T_RELAY, relay_request, VMD_FROM_MEMBER, 8, VMD_F_BOUND),
    ROW(VMD_FRAME_RELAY_REPLY, vmd_relay_on_reply, VMD_FROM_MASTER, 4, 0),
    ROW(WIRE_T_FWD, vmd_fwd_on_request, D, 12, VMD_F_BOUND),
    ROW(WIRE_T_FWD_REPLY, vmd_fwd_on_reply, D, 4, VMD_F_BOUND),
    ROW(WIRE_T_GROUP_SYNC, vmd_group_on_sync, VMD_FROM_MASTER, 20, VMD_F_BOUND),
    ROW(WIRE_T_BARRIER_ARRIVE, vmd_group_on_arrive, VMD_FROM_MEMBER, 16, VMD_F_BOUND),
    ROW(WIRE_T_BARRIER_DONE, vmd_group_on_done, VMD_FROM_MASTER, 12, VMD_F_BOUND),
    ROW(WIRE_T_MCAST, vmd_mcast_on_peer, D, 4, VMD_F_BOUND | VMD_F_OWN_SRC),
    ROW(WIRE_T_LOAD, vmd_load_on_peer, D, VMD_LOAD_SAMPLE_LEN, 0),
    ROW(WIRE_T_CLOCK, vmd_clock_on_peer, D, 0, VMD_F_BOUND),

    /* vmctl's requests. */
    ROW(WIRE_T_REQ_CONF, vmd_ops_conf, C, 0, 0),
    ROW(WIRE_T_REQ_ADD, vmd_ops_add, C | R, 4, VMD_F_MASTER),
    ROW(WIRE_T_REQ_DELETE, vmd_ops_delete, C | R, 4, VMD_F_MASTER),
    ROW(WIRE_T_REQ_HALT, vmd_ops_halt, C | R, 0, VMD_F_MASTER),
    ROW(WIRE_T_REQ_STATUS, vmd_ops_status, C, 0, 0),
    ROW(WIRE_T_REQ_LOAD, vmd_load_request, C, 0, 0),
    ROW(WIRE_T_REQ_CLOCK, vmd_clock_request, C, 4, VMD_F_TASK),

    /* A task's requests to its daemon. */
    ROW(WIRE_T_TASK_ENROLL, vmd_task_enroll, C, 12, 0),
    ROW(WIRE_T_TASK_NEWCTX, vmd_task_newctx, C, 0, VMD_F_TASK),
    ROW(WIRE_T_TASK_SPAWN, vmd_fwd_spawn, C, 32, VMD_F_TASK),
    ROW(WIRE_T_TASK_KILL, vmd_fwd_kill, C, 8, VMD_F_TASK),
    ROW(WIRE_T_TASK_LIST, vmd_fwd_list, C, 4, VMD_F_TASK),
    ROW(WIRE_T_TASK_NOTIFY, vmd_fwd_notify, C, 12, VMD_F_TASK),
    ROW(WIRE_T_TASK_DIRECT, vmd_task_direct_info, C, 4, VMD_F_TASK),
    ROW(WIRE_T_TASK_FREECTX, vmd_task_freectx, C, 4, VMD_F_TASK),

    /* The mailbox and the groups live on the master. */
    ROW(WIRE_T_MBOX_PUT, vmd_mbox_put, C | R, 16, MASTER_TASK),
    ROW(WIRE_T_MBOX_GET, vmd_mbox_get, C | R, 16, MASTER_TASK),
    ROW(WIRE_T_MBOX_DEL, vmd_mbox_del, C | R, 16, MASTER_TASK),
    ROW(WIRE_T_MBOX_LIST, vmd_mbox_list, C | R, 8, MASTER_TASK),
    ROW(WIRE_T_MBOX_GONE, vmd_mbox_gone, R, 4, MASTER_ANY),
    ROW(WIRE_T_GROUP_JOIN, vmd_group_join, C | R, 8, MASTER_TASK),
    ROW(WIRE_T_GROUP_LEAVE, vmd_group_leave, C | R, 8, MASTER_TASK),
    ROW(WIRE_T_GROUP_TID, vmd_group_tid, C | R, 12, MASTER_ANY),
    ROW(WIRE_T_GROUP_INST, vmd_group_inst, C | R, 12, MASTER_ANY),
    ROW(WIRE_T_GROUP_SIZE, vmd_group_size, C | R, 8, MASTER_ANY),
    ROW(WIRE_T_GROUP_FREEZE, vmd_group_freeze, C | R, 12, MASTER_TASK),
    ROW(WIRE_T_GROUP_INFO, vmd_group_info, C | R, 8, MASTER_ANY),
    ROW(WIRE_T_GROUP_LIST, vmd_group_list, C | R, 8, MASTER_ANY),
    ROW(WIRE_T_GROUP_GONE, vmd_group_gone, R, 8, MASTER_ANY),
    /* The task's own daemon gathers a barrier before the master sees it. */
    ROW(WIRE_T_GROUP_BARRIER, vmd_group_barrier, C | R, 12, VMD_F_TASK | VMD_F_STAMP_BODY),

    /* Task messages. */
    ROW(WIRE_T_MSG, vmd_msg_route, C | D, 0, TASK_MSG),
    ROW(WIRE_T_DIRECT, vmd_msg_route, C | D, 0, TASK_MSG),
    ROW(WIRE_T_TASK_MCAST, vmd_mcast_client, C, 4,
        VMD_F_TASK | VMD_F_STAMP_SRC | VMD_F_TASK_CTX),
};

#undef C
#undef R
#undef D

int
vmd_frame_row(const struct wire_hdr *h)
{
    if (h->type == WIRE_T_RELAY && (h->flags & VMD_RELAY_REPLY))
        return VMD_FRAME_RELAY_REPLY;
    return h->type;
}

const char *
vmd_from_name(unsigned kind)
{
    switch (kind) {
    case VMD_FROM_CLIENT:
        return "a local client";
    case VMD_FROM_RELAY:
        return "a relayed client";
    case VMD_FROM_STRANGER:
        return "a daemon before its HELLO";
    case VMD_FROM_PEER:
        return "a daemon";
    case VMD_FROM_MEMBER:
        return "a daemon to the master";
    case VMD_FROM_MASTER:
        return "the master";
    default:
        return "nobody";
    }
}

/* The checks on the sender that the row's flags ask for. */
static int
check_sender(struct vmd *vmd, const struct vmd_frame *f, const struct vmd_from *from,
             const struct wire_hdr *h, const unsigned char *body)
{
    (void)vmd;
    if (from->kind == VMD_FROM_CLIENT) {
        if ((f->flags & VMD_F_TASK) && (from->client == NULL || from->client->task == NULL))
            return -EPERM;          /* enroll first */
        /* The daemons' own contexts are not for tasks to forge. */
        if ((f->flags & VMD_F_TASK_CTX) && ((uint32_t)h->ctx & 0x7fff0000u) == 0x7fff0000u)
            return -EPERM;
        return 0;
    }
    if (from->kind == VMD_FROM_RELAY) {
        /* A daemon speaks only for its own tasks (it stamped this word). */
        if (f->flags & VMD_F_STAMP_BODY) {
            uint32_t tid = wire_be32_get(body);
            if (tid != 0 && VMD_TID_HOST(tid) != from->host)
                return -EPERM;
        }
        return 0;
    }
    struct vmd_host *host = from->peer ? from->peer->host : NULL;
    if ((f->flags & (VMD_F_BOUND | VMD_F_OWN_SRC)) && host == NULL)
        return -EPERM;
    /* A host speaks only for its own tasks. */
    if ((f->flags & VMD_F_OWN_SRC) && VMD_TID_HOST(h->src) != host->index)
        return -EPERM;
    return 0;
}

/* Run the row's handler, or relay what only the master does to it. */
static int
run(struct vmd *vmd, const struct vmd_frame *f, const struct vmd_from *from,
    const struct wire_hdr *h, const unsigned char *body)
{
    if ((f->flags & VMD_F_MASTER) && !vmd->is_master) {
        if (from->kind != VMD_FROM_CLIENT)
            return -EPERM;          /* relays go to the master only */
        return vmd_relay_request(vmd, from->client_id, h, body);
    }
    return f->fn(vmd, from, h, body);
}

/* A local client's frame with its tid written in: in the header's src,
 * and in the body's first word (0 before it enrolled). */
static int
stamp_and_run(struct vmd *vmd, const struct vmd_frame *f, const struct vmd_from *from,
              const struct wire_hdr *h, const unsigned char *body)
{
    const struct vmd_task *t = from->client ? from->client->task : NULL;
    uint32_t tid = t ? t->tid : 0;
    struct wire_hdr m = *h;
    if (f->flags & VMD_F_STAMP_SRC)
        m.src = tid;
    if (!(f->flags & VMD_F_STAMP_BODY))
        return run(vmd, f, from, &m, body);
    unsigned char *copy = malloc(h->len);
    if (copy == NULL)
        return -ENOMEM;
    memcpy(copy, body, h->len);
    wire_be32_put(copy, tid);
    int rc = run(vmd, f, from, &m, copy);
    free(copy);
    return rc;
}

int
vmd_dispatch(struct vmd *vmd, const struct vmd_frame *table, const struct vmd_from *from,
             const struct wire_hdr *h, const unsigned char *body)
{
    const struct vmd_frame *f = &table[vmd_frame_row(h)];
    int rc;

    if (f->fn == NULL) {
        log_warn("%s sent frame type %u, which nobody may send", vmd_from_name(from->kind),
                 h->type);
        return WIRE_EFRAME;
    }
    if (!(f->from & from->kind)) {
        log_warn("%s sent %s, which only others may send", vmd_from_name(from->kind), f->name);
        return -EPERM;
    }
    if (h->len < f->min_len) {
        log_warn("%s sent %s with %u bytes, fewer than its %u", vmd_from_name(from->kind),
                 f->name, h->len, f->min_len);
        return WIRE_EFRAME;
    }
    if ((rc = check_sender(vmd, f, from, h, body)) != 0) {
        log_warn("%s may not send this %s", vmd_from_name(from->kind), f->name);
        return rc;
    }
    if (from->kind == VMD_FROM_CLIENT && (f->flags & (VMD_F_STAMP_SRC | VMD_F_STAMP_BODY)))
        return stamp_and_run(vmd, f, from, h, body);
    return run(vmd, f, from, h, body);
}

int
vmd_dispatch_frame(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                   const unsigned char *body)
{
    return vmd_dispatch(vmd, vmd_frames, from, h, body);
}

/*
 * The master: a request a member daemon relays for its client (body: u32
 * client id, u32 type, the request).  It goes through the table again as
 * the relayed client's, so the same rules hold for it; a refused one is
 * dropped, and its client, on the other host, gets no answer.
 */
static int
relay_request(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t client_id, type;
    wire_rbuf_init(&r, body, h->len);
    if (wire_get_u32(&r, &client_id) || wire_get_u32(&r, &type) || type > WIRE_T_MAX)
        return 0;
    struct wire_hdr req = *h;
    req.type = (uint8_t)type;
    req.flags = 0;
    req.len = (uint32_t)(r.len - r.pos);
    struct vmd_from inner = { .kind = VMD_FROM_RELAY, .peer = from->peer, .host = from->host,
                              .client_id = client_id };
    int rc = vmd_dispatch(vmd, vmd_frames, &inner, &req, body + r.pos);
    if (rc != 0)
        log_code(rc, "peer %s: relayed request type %u dropped",
                 from->peer ? from->peer->name : "?", type);
    return 0;
}
