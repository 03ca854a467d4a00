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

/*
 * vmctl add's per-host options after the names (an older vmctl sends
 * none): u32 n, then n pairs of strings key, value; keys as in vmd.conf's
 * hosts entries.  Pointers borrow from body.  -EINVAL with the key in bad.
 */
static int
add_options(const struct wire_hdr *h, const unsigned char *body, struct conf_host *set,
            char *store, size_t cap, const char **bad)
{
    struct wire_rbuf r;
    uint32_t n, nopt;
    char name[VMD_NAME_MAX];
    size_t used = 0;
    conf_host_clear(set);
    wire_rbuf_init(&r, body, h->len);
    if (wire_get_u32(&r, &n) != 0)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (wire_get_str(&r, name, sizeof(name)) != 0)
            return -EINVAL;
    if (wire_get_u32(&r, &nopt) != 0)
        return 0;
    for (uint32_t i = 0; i < nopt && i < 64; i++) {
        char *key = store + used, *val;
        if (used + 64 > cap || wire_get_str(&r, key, 64) != 0)
            return -EINVAL;
        used += strlen(key) + 1;
        val = store + used;
        if (wire_get_str(&r, val, cap - used) != 0)
            return -EINVAL;
        used += strlen(val) + 1;
        *bad = key;
        char *end;
        long v = strtol(val, &end, 10);
        struct sockaddr_in sa;
        if (strcmp(key, "address") == 0 && uv_ip4_addr(val, 0, &sa) == 0)
            set->address = val;
        else if (strcmp(key, "port") == 0 && *end == '\0' && *val && v >= 0 && v <= 65535)
            set->port = (int)v;
        else if (strcmp(key, "speed") == 0 && *end == '\0' && *val && v >= 1 && v <= 1000000)
            set->speed = (int)v;
        else if (strcmp(key, "vmd") == 0 && *val)
            set->vmd = val;
        else if (strcmp(key, "home") == 0 && *val)
            set->home = val;
        else if (strcmp(key, "send_certs") == 0 && (v == 0 || v == 1) && *end == '\0' && *val)
            set->send_certs = (int)v;
        else if (strcmp(key, "spawn_path") == 0 && *val && set->spawn_path_len < CONF_MAX_SPAWN_PATH)
            set->spawn_path[set->spawn_path_len++] = val;
        else
            return -EINVAL;
    }
    return 0;
}

/* Hosts join: u32 n, n names[, options]; each one's hoststart settles its item. */
int
vmd_ops_add(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
            const unsigned char *body)
{
    int err, origin = from->host;
    uint32_t client_id = from->client_id;
    struct vmd_op *op = op_from_names(vmd, WIRE_T_REQ_ADD, origin, client_id, h, body, &err);
    if (op == NULL)
        return err == -ENOMEM ? (vmd_reply(vmd, origin, client_id, h->id, err, NULL), 0) : err;
    static char store[WIRE_STR_MAX * 2];    /* loop thread only; used before we return */
    struct conf_host set;
    const char *bad = "?";
    int opt_err = add_options(h, body, &set, store, sizeof(store), &bad);
    for (int i = 0; i < op->nitems; i++) {
        const char *name = op->items[i].name;
        struct vmd_host *host;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= strcmp(op->items[j].name, name) == 0;
        if (opt_err != 0) {
            char msg[128];
            snprintf(msg, sizeof(msg), "the add option %.40s has a bad value", bad);
            vmd_op_item_done(vmd, op, i, -EINVAL, msg);
        } else if (!host_name_ok(name)) {
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
            char why[512] = "";

            if ((err = vmd_hoststart(vmd, op, i, host, &set, why, sizeof(why))) != 0) {
                vmd_host_free(vmd, host);
                vmd_op_item_done(vmd, op, i, err, why[0] ? why : NULL);
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
