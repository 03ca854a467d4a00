/*
 * vmd_watch.c - pvm_notify(PvmTaskExit): who is told when a task leaves
 * the VM.  A watch of a task of this host hangs on the task, and the
 * watchers get PVM's notice (an XDR int, the tid) when it ends.  A watch a
 * local task keeps on a task of another host lives on that host, and is
 * lost if that host dies; so this daemon keeps a copy and tells the
 * watcher itself when the host leaves the VM.  The copy goes when the
 * notice comes from the other host or the watcher ends.
 */
#define LOG_TAG "watch"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>

/* A watch of task tid of this host for watcher; told at once if it is gone. */
int
vmd_watch_exit(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, tid);
    if (t == NULL) {
        /* Already gone: PVM tells at once. */
        vmd_route_ints(vmd, watcher, tag, ctx, &tid, 1);
        return 0;
    }
    struct vmd_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    w->tid = watcher;
    w->tag = tag;
    w->ctx = ctx;
    w->next = t->watch;
    t->watch = w;
    return 0;
}

/*
 * pvm_notify(PvmTaskExit | PvmNotifyCancel) of task tid of this host: the
 * first of watcher's watches with that tag and context goes, and the
 * watcher gets its notice now if tell says so, as PVM's man page has it
 * (no notice when the watcher's own daemon has given it).  Cancelling
 * what was never asked for does nothing.
 */
void
vmd_watch_cancel(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid,
                 int tell)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, tid);
    if (t == NULL)
        return;
    for (struct vmd_watch **pw = &t->watch; *pw; pw = &(*pw)->next) {
        struct vmd_watch *w = *pw;
        if (w->tid != watcher || w->tag != tag || w->ctx != ctx)
            continue;
        *pw = w->next;
        if (tell)
            vmd_route_ints(vmd, watcher, tag, ctx, &tid, 1);
        free(w);
        return;
    }
}

/*
 * The cancel of a local task's watch of a task of another host: its copy
 * here goes and the watcher is told now.  1 if there was one (the watch on
 * the other host is then to be dropped too), else 0.
 */
int
vmd_watch_remote_cancel(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx,
                        uint32_t tid)
{
    for (struct vmd_list *l = vmd->rwatch.next; l != &vmd->rwatch; l = l->next) {
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (w->watcher == watcher && w->tid == tid && w->tag == tag && w->ctx == ctx) {
            vmd_list_remove(&w->link);
            free(w);
            vmd_route_ints(vmd, watcher, tag, ctx, &tid, 1);
            return 1;
        }
    }
    return 0;
}

/*
 * A local task watches a task of another host (pvm_notify PvmTaskExit):
 * the watch lives there, and is lost if that host dies.  So the watcher's
 * daemon keeps a copy and tells the watcher itself when the host leaves
 * the VM (watch_host_gone); the copy goes when the notice comes from
 * the other host (vmd_watch_noticed) or the watcher ends.
 */
int
vmd_watch_remote_add(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid)
{
    struct vmd_rwatch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    w->watcher = watcher;
    w->tid = tid;
    w->tag = tag;
    w->ctx = ctx;
    vmd_list_insert(&vmd->rwatch, &w->link);
    return 0;
}

/* A message from another host's daemon: if it is the exit notice a copy
 * stands for, the copy is done. */
void
vmd_watch_noticed(struct vmd *vmd, const struct wire_hdr *h, const unsigned char *body)
{
    if (h->type != WIRE_T_MSG || (h->src & VMD_TID_LOCAL_MASK) != 0 || h->len != 4 ||
        vmd_list_empty(&vmd->rwatch))
        return;
    uint32_t tid = wire_be32_get(body);
    for (struct vmd_list *l = vmd->rwatch.next; l != &vmd->rwatch; l = l->next) {
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (w->watcher == h->dst && w->tid == tid && w->tag == h->tag && w->ctx == h->ctx &&
            VMD_TID_HOST(tid) == VMD_TID_HOST(h->src)) {
            vmd_list_remove(&w->link);
            free(w);
            return;
        }
    }
}

/* Host h left the VM: its tasks are gone; tell whoever watched them. */
static void
watch_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    int index = h->index;
    struct vmd_list *l, *next;
    for (l = vmd->rwatch.next; l != &vmd->rwatch; l = next) {
        next = l->next;
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (VMD_TID_HOST(w->tid) != index)
            continue;
        vmd_list_remove(&w->link);
        log_info("task t%x left with host %d; telling t%x", w->tid, index, w->watcher);
        vmd_route_ints(vmd, w->watcher, w->tag, w->ctx, &w->tid, 1);
        free(w);
    }
}

/* The watcher ended: its copies have nobody to tell. */
static void
rwatch_drop_watcher(struct vmd *vmd, uint32_t watcher)
{
    struct vmd_list *l, *next;
    for (l = vmd->rwatch.next; l != &vmd->rwatch; l = next) {
        next = l->next;
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (w->watcher == watcher) {
            vmd_list_remove(&w->link);
            free(w);
        }
    }
}

/* Task t ended: its watchers get PVM's notice, an XDR int, the tid; the
 * copies it kept of watches elsewhere have nobody to tell. */
static void
watch_task_gone(struct vmd *vmd, struct vmd_task *t)
{
    for (struct vmd_watch *w = t->watch, *n; w; w = n) {
        n = w->next;
        vmd_route_ints(vmd, w->tid, w->tag, w->ctx, &t->tid, 1);
        free(w);
    }
    t->watch = NULL;
    rwatch_drop_watcher(vmd, t->tid);
}

/* Two registrations: the notices go before the mailbox and the groups
 * hear of a task's end, the copies' notices after the groups hear of a
 * host's (vmd_modules.c keeps that order). */
const struct vmd_hooks vmd_watch_hooks = {
    .module = "watch",
    .task_gone = watch_task_gone,
};

const struct vmd_hooks vmd_watch_remote_hooks = {
    .module = "watch (remote copies)",
    .host_gone = watch_host_gone,
};
