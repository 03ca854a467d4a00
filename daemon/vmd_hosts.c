/*
 * vmd_hosts.c - the host table.  The master's copy is authoritative; it
 * sends the whole table (a serial number and every host) to all daemons
 * whenever it changes, and the others replace theirs with it (DESIGN.md,
 * Hosts).  A daemon missing from a table it receives has been dropped
 * from the VM and leaves.
 */
#define LOG_TAG "hosts"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *
vmd_host_state_name(enum vmd_host_state s)
{
    return s == VMD_HOST_UP ? "up" : "starting";
}

struct vmd_host *
vmd_host_by_name(struct vmd *vmd, const char *name)
{
    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i] && strcmp(vmd->hosts[i]->name, name) == 0)
            return vmd->hosts[i];
    return NULL;
}

/* index 0: the lowest free index. */
struct vmd_host *
vmd_host_new(struct vmd *vmd, const char *name, int index)
{
    if (index == 0) {
        for (int i = 1; i <= VMD_MAX_HOSTS && index == 0; i++)
            if (vmd->hosts[i] == NULL)
                index = i;
        if (index == 0)
            return NULL;
    }
    if (index < 1 || index > VMD_MAX_HOSTS || vmd->hosts[index])
        return NULL;
    struct vmd_host *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    h->index = index;
    vmd_strlcpy(h->name, name, sizeof(h->name));
    snprintf(h->arch, sizeof(h->arch), "LINUX64");
    h->speed = vmd->conf.speed;
    if (strcmp(name, vmd->name) == 0) {
        vmd_strlcpy(h->address, vmd->address, sizeof(h->address));
        h->port = vmd->port;
        vmd_strlcpy(h->fingerprint, vmd->fingerprint, sizeof(h->fingerprint));
    }
    vmd->hosts[index] = h;
    return h;
}

void
vmd_host_free(struct vmd *vmd, struct vmd_host *h)
{
    if (h->peer)
        h->peer->host = NULL;
    vmd_qmsg_free_all(h->qhead);
    vmd->hosts[h->index] = NULL;
    free(h);
    /* Tasks paused for it go on: its tasks are gone with it. */
    vmd_client_flow_check(vmd);
}

int
vmd_host_count(const struct vmd *vmd, int up_only)
{
    int n = 0;
    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i] && (!up_only || vmd->hosts[i]->state == VMD_HOST_UP))
            n++;
    return n;
}

static void
pack_host(struct wire_wbuf *b, const struct vmd_host *h)
{
    wire_put_u32(b, (uint32_t)h->index);
    wire_put_str(b, h->name);
    wire_put_str(b, h->address);
    wire_put_u32(b, (uint32_t)h->port);
    wire_put_str(b, h->arch);
    wire_put_u32(b, (uint32_t)h->speed);
    wire_put_str(b, h->fingerprint);
}

/* The hosts that are up, plus extra (a host being added, which must learn
 * its own index and everyone else before the others connect to it). */
void
vmd_hosts_pack(const struct vmd *vmd, struct wire_wbuf *b, const struct vmd_host *extra)
{
    int n = vmd_host_count(vmd, 1) + (extra && extra->state != VMD_HOST_UP);
    wire_put_u32(b, vmd->table_serial);
    wire_put_u32(b, (uint32_t)vmd->master_index);
    wire_put_u32(b, (uint32_t)n);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        const struct vmd_host *h = vmd->hosts[i];
        if (h && (h->state == VMD_HOST_UP || h == extra))
            pack_host(b, h);
    }
}

/*
 * A non-master daemon takes the master's table.  Hosts that vanished are
 * dropped with their links; new hosts with a higher index than ours are
 * connected to (the lower index dials, so each pair has one link).
 */
int
vmd_hosts_apply(struct vmd *vmd, const void *body, size_t len)
{
    struct wire_rbuf r;
    uint32_t serial, master, n;
    struct vmd_host incoming[64], *in = incoming;
    int rc = 0, self = 0;

    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &serial) || wire_get_u32(&r, &master) || wire_get_u32(&r, &n) ||
        n == 0 || n > VMD_MAX_HOSTS || master < 1 || master > VMD_MAX_HOSTS)
        return WIRE_EFRAME;
    if (n > 64 && (in = calloc(n, sizeof(*in))) == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t idx, port, speed;
        memset(&in[i], 0, sizeof(in[i]));
        if ((rc = wire_get_u32(&r, &idx)) || (rc = wire_get_str(&r, in[i].name, VMD_NAME_MAX)) ||
            (rc = wire_get_str(&r, in[i].address, VMD_ADDR_MAX)) ||
            (rc = wire_get_u32(&r, &port)) ||
            (rc = wire_get_str(&r, in[i].arch, sizeof(in[i].arch))) ||
            (rc = wire_get_u32(&r, &speed)) ||
            (rc = wire_get_str(&r, in[i].fingerprint, sizeof(in[i].fingerprint))))
            break;
        if (idx < 1 || idx > VMD_MAX_HOSTS || port > 65535 || in[i].name[0] == '\0') {
            rc = WIRE_EFRAME;
            break;
        }
        for (uint32_t j = 0; j < i; j++)
            if (in[j].index == (int)idx || strcmp(in[j].name, in[i].name) == 0)
                rc = WIRE_EFRAME;
        in[i].index = (int)idx;
        in[i].port = (int)port;
        in[i].speed = (int)speed;
        if (strcmp(in[i].name, vmd->name) == 0)
            self = (int)idx;
    }
    if (rc == 0 && r.pos != r.len)
        rc = WIRE_EFRAME;
    if (rc != 0)
        goto done;
    if (self == 0) {
        log_warn("the master's host table no longer lists %s; leaving the VM", vmd->name);
        vmd_halt(vmd, "dropped from the host table");
        goto done;
    }

    vmd->table_serial = serial;
    vmd->index = self;
    vmd->master_index = (int)master;

    /* Drop hosts that are gone, or whose index changed. */
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
            h = vmd_host_new(vmd, in[j].name, in[j].index);
            if (h == NULL) {
                rc = -ENOMEM;
                goto done;
            }
            log_info("host %s (t%x) joined the VM", h->name, VMD_HOST_TID(h->index));
            if (h->index != self)
                vmd_task_host_event(vmd, 3, VMD_HOST_TID(h->index));
        }
        vmd_strlcpy(h->address, in[j].address, sizeof(h->address));
        h->port = in[j].port;
        vmd_strlcpy(h->arch, in[j].arch, sizeof(h->arch));
        h->speed = in[j].speed;
        vmd_strlcpy(h->fingerprint, in[j].fingerprint, sizeof(h->fingerprint));
        h->state = VMD_HOST_UP;
    }
    for (int i = vmd->index + 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *h = vmd->hosts[i];
        if (h && h->peer == NULL && strcmp(h->name, vmd->name) != 0 &&
            (rc = vmd_peer_connect(vmd, h)) != 0) {
            log_code(rc, "cannot connect to %s at %s:%d", h->name, h->address, h->port);
            rc = 0;
        }
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
    vmd_task_host_event(vmd, 2, VMD_HOST_TID(h->index));
    vmd_group_host_gone(vmd, h->index);
    vmd_task_host_gone(vmd, h->index);
    if (p) {
        p->host = NULL;
        h->peer = NULL;
        vmd_peer_close(p, 0, why);
    }
    vmd_host_free(vmd, h);
}
