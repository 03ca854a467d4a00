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

/* The first watch of what by task tid with that tag and context (and, for
 * PvmHostDelete, of host dtid), or NULL. */
static struct vmd_hostwatch *
hostwatch_find(struct vmd *vmd, int what, uint32_t tid, int32_t tag, int32_t ctx, uint32_t dtid)
{
    for (struct vmd_list *l = vmd->hostwatch.next; l != &vmd->hostwatch; l = l->next) {
        struct vmd_hostwatch *w = vmd_container_of(l, struct vmd_hostwatch, link);
        if (w->what == what && w->tid == tid && w->tag == tag && w->ctx == ctx &&
            (what != PVM_HOST_DELETE || w->dtid == dtid))
            return w;
    }
    return NULL;
}

/*
 * PvmHostAdd: one request per task, tag and context, as in PVM.  A new
 * count replaces what is left of the old one (-1: every addition); a count
 * of 0, or PvmNotifyCancel, ends the request, with no notice (there is no
 * host to name in one).
 */
static int
hostadd_request(struct vmd *vmd, uint32_t from, int32_t tag, int32_t ctx, int32_t count,
                int cancel)
{
    struct vmd_hostwatch *w = hostwatch_find(vmd, PVM_HOST_ADD, from, tag, ctx, 0);
    if (count == 0 || cancel) {
        if (w != NULL) {
            vmd_list_remove(&w->link);
            free(w);
        }
        return 0;
    }
    if (w == NULL) {
        if ((w = calloc(1, sizeof(*w))) == NULL)
            return -ENOMEM;
        w->what = PVM_HOST_ADD;
        w->tid = from;
        w->tag = tag;
        w->ctx = ctx;
        vmd_list_insert(&vmd->hostwatch, &w->link);
    }
    w->count = count < 0 ? -1 : count;
    return 0;
}

/*
 * A local task's pvm_notify for hosts: PvmHostDelete for the dtids given,
 * PvmHostAdd for the next n additions (n = -1: all).  Body: u32 what
 * (| VMD_NOTIFY_CANCEL), i32 tag, u32 n, u32 tids[n] (HostAdd: n is the
 * count, no tids).  Cancelling a PvmHostDelete watch tells the task now,
 * as if the host had left, as PVM's man page says.
 */
int
vmd_hostwatch_request(struct vmd *vmd, uint32_t from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t what, n;
    int32_t tag;
    int rc, cancel;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &what)) || (rc = wire_get_i32(&r, &tag)) ||
        (rc = wire_get_u32(&r, &n)))
        return rc;
    cancel = (what & VMD_NOTIFY_CANCEL) != 0;
    what &= ~VMD_NOTIFY_CANCEL;
    if (what == PVM_HOST_ADD)
        return hostadd_request(vmd, from, tag, h->ctx, (int32_t)n, cancel);
    if (what != PVM_HOST_DELETE || n > VMD_MAX_HOSTS)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t dtid;
        if ((rc = wire_get_u32(&r, &dtid)) != 0)
            return rc;
        int idx = VMD_TID_HOST(dtid);
        int known = idx >= 1 && vmd->hosts[idx] != NULL;
        if (cancel) {
            struct vmd_hostwatch *w =
                known ? hostwatch_find(vmd, PVM_HOST_DELETE, from, tag, h->ctx,
                                       VMD_HOST_TID(idx))
                      : NULL;
            if (w != NULL) {
                vmd_route_ints(vmd, from, tag, h->ctx, &w->dtid, 1);
                vmd_list_remove(&w->link);
                free(w);
            }
            continue;
        }
        if (!known) {
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

/* A task ended: nobody is left to tell of its requests. */
static void
hostwatch_task_gone(struct vmd *vmd, struct vmd_task *t)
{
    struct vmd_list *l, *next;
    for (l = vmd->hostwatch.next; l != &vmd->hostwatch; l = next) {
        next = l->next;
        struct vmd_hostwatch *w = vmd_container_of(l, struct vmd_hostwatch, link);
        if (w->tid == t->tid) {
            vmd_list_remove(&w->link);
            free(w);
        }
    }
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
    .task_gone = hostwatch_task_gone,
    .host_added = hostwatch_host_added,
    .host_gone = hostwatch_host_gone,
};
