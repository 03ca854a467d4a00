/*
 * vmd_ops.c - the requests of local clients: conf, status, add, delete,
 * halt.  Any daemon answers conf and status from its own copy of the table;
 * add, delete and halt change the VM, so only the master handles them: a
 * daemon that is not relays them to it (vmd_relay.c).
 *
 * An add waits for its hoststart commands, and a halt for the daemons to
 * go: both are kept as a struct vmd_op (vmd_op.c) until settled.
 */
#define LOG_TAG "ops"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
pack_conf(struct vmd *vmd, struct wire_wbuf *b)
{
    wire_put_u32(b, vmd->table_serial);
    wire_put_str(b, vmd->master_name);
    wire_put_u32(b, (uint32_t)vmd_host_count(vmd, 0));
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        const struct vmd_host *h = vmd->hosts[i];
        if (h == NULL)
            continue;
        wire_put_u32(b, VMD_HOST_TID(h->index));
        wire_put_str(b, h->name);
        wire_put_str(b, h->address);
        wire_put_u32(b, (uint32_t)h->port);
        wire_put_str(b, h->arch);
        wire_put_u32(b, (uint32_t)h->speed);
        wire_put_str(b, vmd_host_state_name(h->state));
    }
    /* Appended after the table, so readers that stop there still work. */
    vmd_load_pack_all(vmd, b);
}

static void
pack_status(struct vmd *vmd, struct wire_wbuf *b)
{
    wire_put_str(b, vmd->name);
    wire_put_u32(b, VMD_HOST_TID(vmd->index));
    wire_put_u32(b, (uint32_t)vmd->is_master);
    wire_put_str(b, vmd->master_name);
    wire_put_u32(b, (uint32_t)vmd_host_count(vmd, 1));
    wire_put_u64(b, uv_now(vmd->loop) - vmd->started_ms);
    wire_put_u32(b, (uint32_t)getpid());
    wire_put_str(b, LIQUIDVM_VERSION);
    wire_put_str(b, vmd->address);
    wire_put_u32(b, (uint32_t)vmd->port);
    wire_put_str(b, vmd->home);
}

/* Names from the request: u32 count, then the strings. */
static struct vmd_op *
op_from_names(struct vmd *vmd, int type, int origin, uint32_t client_id,
              const struct wire_hdr *h, const unsigned char *body, int *err)
{
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, body, h->len);
    if ((*err = wire_get_u32(&r, &n)) != 0 || n == 0 || n > VMD_MAX_HOSTS) {
        *err = *err ? *err : -EINVAL;
        return NULL;
    }
    struct vmd_op *op = vmd_op_new(vmd, type, origin, client_id, h->id, (int)n);
    if (op == NULL) {
        *err = -ENOMEM;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if ((*err = wire_get_str(&r, op->items[i].name, VMD_NAME_MAX)) != 0) {
            vmd_op_free(op);
            return NULL;
        }
    }
    op->pending = (int)n + 1;   /* +1 until every item is dispatched */
    return op;
}

static int
host_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253 || s[0] == '-' || s[0] == '.')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' || *s == '_'))
            return 0;
    return 1;
}

/* Hosts join: u32 n, n names; each one's hoststart settles its item. */
int
vmd_ops_add(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
            const unsigned char *body)
{
    int err, origin = from->host;
    uint32_t client_id = from->client_id;
    struct vmd_op *op = op_from_names(vmd, WIRE_T_REQ_ADD, origin, client_id, h, body, &err);
    if (op == NULL)
        return err == -ENOMEM ? (vmd_reply(vmd, origin, client_id, h->id, err, NULL), 0) : err;
    for (int i = 0; i < op->nitems; i++) {
        const char *name = op->items[i].name;
        struct vmd_host *host;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= strcmp(op->items[j].name, name) == 0;
        if (!host_name_ok(name)) {
            vmd_op_item_done(vmd, op, i, -EINVAL, "not a valid host name");
        } else if (dup || vmd_host_by_name(vmd, name)) {
            vmd_op_item_done(vmd, op, i, WIRE_EDUPHOST, NULL);
        } else if (vmd->halting) {
            vmd_op_item_done(vmd, op, i, WIRE_EHALTED, NULL);
        } else if ((host = vmd_host_new(vmd, name, 0)) == NULL) {
            vmd_op_item_done(vmd, op, i, -ENOSPC, "the host table is full");
        } else {
            host->state = VMD_HOST_STARTING;
            op->items[i].dtid = VMD_HOST_TID(host->index);
            log_info("adding host %s (t%x)", name, op->items[i].dtid);
            if ((err = vmd_hoststart(vmd, op, i, host)) != 0) {
                vmd_host_free(vmd, host);
                vmd_op_item_done(vmd, op, i, err, NULL);
            }
        }
    }
    vmd_op_release(vmd, op);
    return 0;
}

/* Hosts leave: u32 n, n names; the master itself cannot. */
int
vmd_ops_delete(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    int err, changed = 0, origin = from->host;
    uint32_t client_id = from->client_id;
    struct vmd_op *op = op_from_names(vmd, WIRE_T_REQ_DELETE, origin, client_id, h, body, &err);
    if (op == NULL)
        return err == -ENOMEM ? (vmd_reply(vmd, origin, client_id, h->id, err, NULL), 0) : err;
    for (int i = 0; i < op->nitems; i++) {
        struct vmd_host *host = vmd_host_by_name(vmd, op->items[i].name);
        if (host == NULL) {
            vmd_op_item_done(vmd, op, i, WIRE_ENOHOST, NULL);
        } else if (host->index == vmd->index) {
            vmd_op_item_done(vmd, op, i, WIRE_EMASTER, "the master cannot be deleted; use halt");
        } else if (host->state != VMD_HOST_UP) {
            vmd_op_item_done(vmd, op, i, WIRE_EBUSY, "the host is still being added");
        } else {
            op->items[i].dtid = VMD_HOST_TID(host->index);
            if (host->peer) {
                struct wire_hdr hh = { .type = WIRE_T_HALT, .src = VMD_HOST_TID(vmd->index) };
                vmd_peer_send(host->peer, &hh, NULL, 0);
            }
            vmd_host_remove(vmd, host, "deleted");
            changed = 1;
            vmd_op_item_done(vmd, op, i, 0, NULL);
        }
    }
    if (changed)
        vmd_hosts_broadcast(vmd, NULL);
    vmd_op_release(vmd, op);
    return 0;
}

int
vmd_ops_conf(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    struct wire_wbuf b;
    (void)body;
    wire_wbuf_init(&b);
    pack_conf(vmd, &b);
    vmd_answer(vmd, from, h, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}

int
vmd_ops_status(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct wire_wbuf b;
    (void)body;
    wire_wbuf_init(&b);
    pack_status(vmd, &b);
    vmd_answer(vmd, from, h, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}

/* The whole VM stops; answered when every daemon is gone (vmd_halt.c). */
int
vmd_ops_halt(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    (void)body;
    if (vmd->halt_op != NULL) {
        vmd_answer(vmd, from, h, WIRE_EHALTED, NULL);
        return 0;
    }
    vmd->halt_op = vmd_op_new(vmd, WIRE_T_REQ_HALT, from->host, from->client_id, h->id, 0);
    if (vmd->halt_op == NULL) {
        vmd_answer(vmd, from, h, -ENOMEM, NULL);
        return 0;
    }
    vmd_halt_vm(vmd);
    return 0;
}

/*
 * The master's `halt` (and its SIGTERM): every daemon is told to stop;
 * the master waits for their links to close (vmd_halt_wait), then stops.
 */
void
vmd_halt_vm(struct vmd *vmd)
{
    if (vmd->halting_vm || vmd->halting)
        return;
    vmd->halting_vm = 1;
    log_info("halting the VM: %d host%s", vmd_host_count(vmd, 0),
             vmd_host_count(vmd, 0) == 1 ? "" : "s");
    vmd_hoststart_cancel_all(vmd);
    struct wire_hdr h = { .type = WIRE_T_HALT, .src = VMD_HOST_TID(vmd->index) };
    for (struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next) {
        struct vmd_peer *p = vmd_container_of(l, struct vmd_peer, link);
        if (p->state == VMD_PEER_UP)
            vmd_peer_send(p, &h, NULL, 0);
    }
    vmd_halt_wait(vmd);
}
