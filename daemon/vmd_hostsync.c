/*
 * vmd_hostsync.c - keeping every daemon's host table in step with the
 * master's (docs/architecture.md, Hosts).  The master's copy is authoritative; it
 * sends the whole table (a serial number and every host) to all daemons
 * whenever it changes, and the others replace theirs with it.  A daemon
 * missing from a table it receives has been dropped from the VM and
 * leaves.  A host that leaves the table is announced to the modules
 * through their host_gone hooks, one that joins through host_added.
 */
#define LOG_TAG "hosts"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One host of a table: index, name, address, port, arch, speed, fingerprint. */
static int
parse_host(struct wire_rbuf *r, struct vmd_host *in)
{
    uint32_t idx, port, speed;
    int rc;
    memset(in, 0, sizeof(*in));
    if ((rc = wire_get_u32(r, &idx)) || (rc = wire_get_str(r, in->name, VMD_NAME_MAX)) ||
        (rc = wire_get_str(r, in->address, VMD_ADDR_MAX)) || (rc = wire_get_u32(r, &port)) ||
        (rc = wire_get_str(r, in->arch, sizeof(in->arch))) || (rc = wire_get_u32(r, &speed)) ||
        (rc = wire_get_str(r, in->fingerprint, sizeof(in->fingerprint))))
        return rc;
    if (idx < 1 || idx > VMD_MAX_HOSTS || port > 65535 || in->name[0] == '\0')
        return WIRE_EFRAME;
    in->index = (int)idx;
    in->port = (int)port;
    in->speed = (int)speed;
    return 0;
}

/* The n hosts of a table into in[], each index and name once, nothing
 * after them; *self: our own index in it, 0 if we are not listed. */
static int
parse_hosts(struct vmd *vmd, struct wire_rbuf *r, uint32_t n, struct vmd_host *in, int *self)
{
    int rc;
    *self = 0;
    for (uint32_t i = 0; i < n; i++) {
        if ((rc = parse_host(r, &in[i])) != 0)
            return rc;
        for (uint32_t j = 0; j < i; j++)
            if (in[j].index == in[i].index || strcmp(in[j].name, in[i].name) == 0)
                return WIRE_EFRAME;
        if (strcmp(in[i].name, vmd->name) == 0)
            *self = in[i].index;
    }
    return r->pos == r->len ? 0 : WIRE_EFRAME;
}

/* Our table becomes in[]: hosts that are gone, or whose index changed,
 * leave; new ones join; every one takes the master's fields. */
static int
take_hosts(struct vmd *vmd, const struct vmd_host *in, uint32_t n, int self)
{
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *h = vmd->hosts[i];
        int keep = 0;
        if (h == NULL)
            continue;
        for (uint32_t j = 0; j < n; j++)
            if (in[j].index == h->index && strcmp(in[j].name, h->name) == 0)
                keep = 1;
        if (!keep)
            vmd_host_remove(vmd, h, "removed by the master");
    }
    for (uint32_t j = 0; j < n; j++) {
        struct vmd_host *h = vmd->hosts[in[j].index];
        if (h == NULL) {
            if ((h = vmd_host_new(vmd, in[j].name, in[j].index)) == NULL)
                return -ENOMEM;
            log_info("host %s (t%x) joined the VM", h->name, VMD_HOST_TID(h->index));
            if (h->index != self)
                vmd_hooks_host_added(vmd, h);
        }
        vmd_strlcpy(h->address, in[j].address, sizeof(h->address));
        h->port = in[j].port;
        vmd_strlcpy(h->arch, in[j].arch, sizeof(h->arch));
        h->speed = in[j].speed;
        vmd_strlcpy(h->fingerprint, in[j].fingerprint, sizeof(h->fingerprint));
        h->state = VMD_HOST_UP;
    }
    return 0;
}

/*
 * A non-master daemon takes the master's table.  Hosts that vanished are
 * dropped with their links; new hosts with a higher index than ours are
 * connected to (the lower index dials, so each pair has one link).  A
 * table that fails any check changes nothing.
 */
int
vmd_hosts_apply(struct vmd *vmd, const void *body, size_t len)
{
    struct wire_rbuf r;
    uint32_t serial, master, n;
    struct vmd_host incoming[64], *in = incoming;
    int rc, self;

    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &serial) || wire_get_u32(&r, &master) || wire_get_u32(&r, &n) ||
        n == 0 || n > VMD_MAX_HOSTS || master < 1 || master > VMD_MAX_HOSTS)
        return WIRE_EFRAME;
    if (n > 64 && (in = calloc(n, sizeof(*in))) == NULL)
        return -ENOMEM;
    if ((rc = parse_hosts(vmd, &r, n, in, &self)) != 0)
        goto done;
    if (self == 0) {
        log_warn("the master's host table no longer lists %s; leaving the VM", vmd->name);
        vmd_halt(vmd, "dropped from the host table");
        goto done;
    }
    vmd->table_serial = serial;
    vmd->index = self;
    vmd->master_index = (int)master;
    if ((rc = take_hosts(vmd, in, n, self)) != 0)
        goto done;
    for (int i = vmd->index + 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *h = vmd->hosts[i];
        int crc;
        if (h && h->peer == NULL && strcmp(h->name, vmd->name) != 0 &&
            (crc = vmd_peer_connect(vmd, h)) != 0)
            log_code(crc, "cannot connect to %s at %s:%d", h->name, h->address, h->port);
    }
done:
    if (in != incoming)
        free(in);
    return rc;
}

/*
 * Master: send the table to every daemon that is up, to first before the
 * others.  A host just added must know every member before any of them
 * dials it: they dial on reading this table, and its copy left first.
 */
void
vmd_hosts_broadcast(struct vmd *vmd, struct vmd_host *first)
{
    struct wire_wbuf b;
    struct wire_hdr h = { .type = WIRE_T_HOSTTABLE, .src = VMD_HOST_TID(vmd->index) };

    vmd->table_serial++;
    wire_wbuf_init(&b);
    vmd_hosts_pack(vmd, &b, NULL);
    if (b.err) {
        log_code(b.err, "cannot build the host table");
        wire_wbuf_free(&b);
        return;
    }
    if (first && first->peer && first->peer->state == VMD_PEER_UP)
        vmd_peer_send(first->peer, &h, b.data, b.len);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *host = vmd->hosts[i];
        if (host && host != first && host->state == VMD_HOST_UP && host->peer &&
            host->peer->state == VMD_PEER_UP)
            vmd_peer_send(host->peer, &h, b.data, b.len);
    }
    wire_wbuf_free(&b);
}

/* Forget a host and close our link to it. */
void
vmd_host_remove(struct vmd *vmd, struct vmd_host *h, const char *why)
{
    struct vmd_peer *p = h->peer;
    log_info("host %s (t%x) removed: %s", h->name, VMD_HOST_TID(h->index), why);
    /* Who watched it, its tasks' groups, the watches on its tasks. */
    vmd_hooks_host_gone(vmd, h);
    if (p) {
        p->host = NULL;
        h->peer = NULL;
        vmd_peer_close(p, 0, why);
    }
    vmd_host_free(vmd, h);
}

