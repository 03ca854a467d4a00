/*
 * vmd_hosts.c - the host table: finding, adding, counting and freeing
 * hosts, and packing the table as the master sends it.  Keeping every
 * daemon's copy in step with the master's is vmd_hostsync.c's.
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
