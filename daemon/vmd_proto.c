/*
 * vmd_proto.c - what daemons say to each other over their TLS links:
 * HELLO (who I am), HOSTTABLE (the master's table), HEARTBEAT and HALT,
 * and what a link coming up or going means for the VM.
 *
 * Each frame reaches its handler here only after the dispatch table
 * checked it against the link's state and the sender's role (only the
 * master may send a table or a halt; HELLO comes once, first).  A handler
 * that finds the body wrong returns an error, and the link closes
 * (STYLE.md 5.3).
 */
#define LOG_TAG "proto"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void peer_up(struct vmd_peer *p);

int
vmd_proto_hello(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct vmd_peer *p = from->peer;
    struct wire_rbuf r;
    uint32_t version, index, speed;
    char name[VMD_NAME_MAX], arch[16], master[VMD_NAME_MAX];
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &version)) || (rc = wire_get_str(&r, name, sizeof(name))) ||
        (rc = wire_get_u32(&r, &index)) || (rc = wire_get_str(&r, arch, sizeof(arch))) ||
        (rc = wire_get_u32(&r, &speed)) || (rc = wire_get_str(&r, master, sizeof(master))))
        return rc;
    if (version != WIRE_VERSION)
        return WIRE_EVERSION;
    if (strcmp(name, p->name) != 0) {
        log_warn("peer %s (%s): says it is %s; the certificate disagrees", p->name, p->addr, name);
        return WIRE_ENAME;
    }
    /* A daemon of another VM that happens to share our CA is not a peer. */
    if (vmd->index != 0 && strcmp(master, vmd->master_name) != 0) {
        log_warn("peer %s (%s): belongs to the VM of master %s, not %s", p->name, p->addr,
                 master, vmd->master_name);
        return WIRE_ENAME;
    }
    /* The certificate proved the name; the link is bound to its host only
     * now, so a second link for a host that has one is refused here. */
    if (p->host == NULL) {
        struct vmd_host *host = vmd_host_by_name(vmd, name);
        if (host && host->peer) {
            log_warn("peer %s (%s): already linked to %s; refusing a second link", p->name,
                     p->addr, name);
            return WIRE_EDUPHOST;
        }
        if (host) {
            host->peer = p;
            p->host = host;
        }
    }
    p->state = VMD_PEER_UP;
    uv_timer_stop(&p->timer);
    if (p->host) {
        vmd_strlcpy(p->host->arch, arch, sizeof(p->host->arch));
        p->host->speed = (int)speed;
    }
    log_info("peer %s (%s): link up", p->name, p->addr);
    peer_up(p);
    return 0;
}

/* Bind links that came up before their host was in our table. */
static void
bind_unattached_peers(struct vmd *vmd)
{
    for (struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next) {
        struct vmd_peer *p = vmd_container_of(l, struct vmd_peer, link);
        if (p->state != VMD_PEER_UP || p->host)
            continue;
        struct vmd_host *h = vmd_host_by_name(vmd, p->name);
        if (h && h->peer == NULL) {
            h->peer = p;
            p->host = h;
            vmd_route_flush_host(vmd, h);
        }
    }
}

int
vmd_proto_heartbeat(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    (void)vmd, (void)from, (void)h, (void)body;
    return 0;
}

/* The master's table (only the master may send it: vmd_dispatch.c). */
int
vmd_proto_hosttable(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    int rc;
    (void)from;
    if ((rc = vmd_hosts_apply(vmd, body, h->len)) != 0)
        return rc;
    bind_unattached_peers(vmd);
    return 0;
}

int
vmd_proto_halt(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    (void)from, (void)h, (void)body;
    vmd_halt(vmd, "halted by the master");
    return 0;
}

/* A link finished its HELLO: what waited for the host goes, and on the
 * master a host being added is now in the VM. */
static void
peer_up(struct vmd_peer *p)
{
    struct vmd *vmd = p->vmd;
    struct vmd_host *h = p->host;
    if (h)
        vmd_route_flush_host(vmd, h);
    if (!vmd->is_master || h == NULL || h->state != VMD_HOST_STARTING)
        return;
    h->state = VMD_HOST_UP;
    log_info("host %s (t%x) added at %s:%d", h->name, VMD_HOST_TID(h->index), h->address,
             h->port);
    vmd_hosts_broadcast(vmd, h);
    vmd_hooks_host_added(vmd, h);
    vmd_hoststart_peer_ready(vmd, h, 0, NULL);
}

/* Our link to h closed: the master drops the host (or fails its add);
 * another daemon leaves the VM with its master. */
static void
proto_link_lost(struct vmd *vmd, struct vmd_host *h, int err)
{
    if (vmd->halting || vmd->halting_vm)
        return;
    if (vmd->is_master) {
        int starting = h->state == VMD_HOST_STARTING, index = h->index;
        if (starting) {
            char msg[160];
            snprintf(msg, sizeof(msg), "the link to its daemon failed: %s",
                     err ? wire_strerror(err) : "closed");
            vmd_hoststart_peer_ready(vmd, h, err ? err : WIRE_ECANTSTART, msg);
            /* The failed add freed the host: nothing is left to remove. */
            if (vmd->hosts[index] != h)
                return;
        }
        vmd_host_remove(vmd, h, err == -ETIMEDOUT ? "timed out" : "its link closed");
        if (!starting)
            vmd_hosts_broadcast(vmd, NULL);
        return;
    }
    if (h->index == vmd->master_index) {
        log_warn("lost the master %s; leaving the VM", h->name);
        vmd_halt(vmd, "the master is gone");
    }
}

const struct vmd_hooks vmd_proto_hooks = {
    .module = "proto",
    .link_lost = proto_link_lost,
};
