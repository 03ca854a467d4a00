/*
 * vmd_hostwatch.c - pvm_notify(PvmHostDelete, PvmHostAdd) of the tasks of
 * this host: which of them are told when a host leaves the VM or joins
 * it, with PVM's notices (XDR ints: the host's dtid; for an addition the
 * count 1, then the dtid).
 */
#define LOG_TAG "hostwatch"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>

/* PVM's pvm_notify kinds. */
#define PVM_HOST_DELETE 2
#define PVM_HOST_ADD 3

/*
 * A local task's pvm_notify for hosts: PvmHostDelete for the dtids given,
 * PvmHostAdd for the next n additions (n = -1: all).  Body: u32 what,
 * i32 tag, u32 n, u32 tids[n] (HostAdd: n is the count, no tids).
 */
int
vmd_hostwatch_request(struct vmd *vmd, uint32_t from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t what, n;
    int32_t tag;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &what)) || (rc = wire_get_i32(&r, &tag)) ||
        (rc = wire_get_u32(&r, &n)))
        return rc;
    if (what == PVM_HOST_ADD) {
        struct vmd_hostwatch *w = calloc(1, sizeof(*w));
        if (w == NULL)
            return -ENOMEM;
        w->what = PVM_HOST_ADD;
        w->tid = from;
        w->tag = tag;
        w->ctx = h->ctx;
        w->count = (int32_t)n;
        vmd_list_insert(&vmd->hostwatch, &w->link);
        return 0;
    }
    if (what != PVM_HOST_DELETE || n > VMD_MAX_HOSTS)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t dtid;
        if ((rc = wire_get_u32(&r, &dtid)) != 0)
            return rc;
        int idx = VMD_TID_HOST(dtid);
        if (idx < 1 || vmd->hosts[idx] == NULL) {
            vmd_route_ints(vmd, from, tag, h->ctx, &dtid, 1);
            continue;
        }
        struct vmd_hostwatch *w = calloc(1, sizeof(*w));
        if (w == NULL)
            return -ENOMEM;
        w->what = PVM_HOST_DELETE;
        w->tid = from;
        w->tag = tag;
        w->ctx = h->ctx;
        w->dtid = VMD_HOST_TID(idx);
        vmd_list_insert(&vmd->hostwatch, &w->link);
    }
    return 0;
}

/* A host joined or left: tell the local tasks that asked. */
static void
host_event(struct vmd *vmd, int what, uint32_t dtid)
{
    struct vmd_list *l, *next;
    for (l = vmd->hostwatch.next; l != &vmd->hostwatch; l = next) {
        next = l->next;
        struct vmd_hostwatch *w = vmd_container_of(l, struct vmd_hostwatch, link);
        if (w->what != what || (what == PVM_HOST_DELETE && w->dtid != dtid))
            continue;
        if (what == PVM_HOST_ADD) {
            uint32_t v[2] = { 1, dtid };
            vmd_route_ints(vmd, w->tid, w->tag, w->ctx, v, 2);
            if (w->count > 0 && --w->count == 0) {
                vmd_list_remove(&w->link);
                free(w);
            }
        } else {
            vmd_route_ints(vmd, w->tid, w->tag, w->ctx, &dtid, 1);
            vmd_list_remove(&w->link);
            free(w);
        }
    }
}

static void
hostwatch_host_added(struct vmd *vmd, struct vmd_host *h)
{
    host_event(vmd, PVM_HOST_ADD, VMD_HOST_TID(h->index));
}

static void
hostwatch_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    host_event(vmd, PVM_HOST_DELETE, VMD_HOST_TID(h->index));
}

/* Halting: nobody is left to tell. */
static void
hostwatch_halt(struct vmd *vmd)
{
    while (!vmd_list_empty(&vmd->hostwatch)) {
        struct vmd_list *w = vmd->hostwatch.next;
        vmd_list_remove(w);
        free(vmd_container_of(w, struct vmd_hostwatch, link));
    }
}

const struct vmd_hooks vmd_hostwatch_hooks = {
    .module = "hostwatch",
    .halt = hostwatch_halt,
    .host_added = hostwatch_host_added,
    .host_gone = hostwatch_host_gone,
};
