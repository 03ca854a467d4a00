/*
 * vmd_task.c - PVM tasks on this host and the routing of their messages
 * (DESIGN.md, Task ids and Routing).
 *
 * A task is a local client that sent TASK_ENROLL; it gets a tid in PVM's
 * layout, our host index in bits 18-29 and a local part in bits 0-17.  A
 * message goes task -> this daemon -> (the destination host's daemon over
 * its TLS link) -> task.  Each link is ordered, so messages between a pair
 * of tasks keep their order.  The first daemon stamps the source tid, so a
 * task cannot speak for another; a daemon accepts from a peer only messages
 * whose source is on that peer's host.
 */
#define LOG_TAG "task"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <string.h>

#define VMD_TID_LOCAL_MASK 0x3ffffu

int
vmd_task_enroll(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t pid, parent;
    char name[256];
    struct wire_wbuf b;
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &pid)) || (rc = wire_get_u32(&r, &parent)) ||
        (rc = wire_get_str(&r, name, sizeof(name))))
        return rc;
    if (c->tid != 0)
        return WIRE_EFRAME;     /* enrolls once */
    if (vmd->index == 0 || vmd->halting || vmd->halting_vm) {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENOVM, NULL);
        return 0;
    }
    if ((uint64_t)vmd->ntasks >= vmd->conf.max_tasks) {
        vmd_client_reply(vmd, c->id, h->id, -EAGAIN, NULL);
        return 0;
    }
    /* The next free local part; 0 is never a task's. */
    uint32_t tid = 0;
    for (uint32_t tries = 0; tries < VMD_TID_LOCAL_MASK && tid == 0; tries++) {
        vmd->next_task = (vmd->next_task % VMD_TID_LOCAL_MASK) + 1;
        uint32_t t = VMD_HOST_TID(vmd->index) | vmd->next_task;
        if (vmd_client_by_tid(vmd, t) == NULL)
            tid = t;
    }
    if (tid == 0) {
        vmd_client_reply(vmd, c->id, h->id, -EAGAIN, NULL);
        return 0;
    }
    c->tid = tid;
    c->pid = (long)pid;
    vmd->ntasks++;
    log_info("task t%x enrolled: pid %u, %s, parent t%x", tid, pid, name[0] ? name : "-", parent);
    wire_wbuf_init(&b);
    wire_put_u32(&b, tid);
    vmd_client_reply(vmd, c->id, h->id, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}

void
vmd_task_gone(struct vmd *vmd, struct vmd_client *c)
{
    log_info("task t%x (pid %ld) exited", c->tid, c->pid);
    vmd->ntasks--;
    c->tid = 0;
}

/*
 * from: the local task that sent it, or NULL for a frame from a peer.
 * Messages to a task that does not exist are dropped, as PVM drops them.
 */
int
vmd_task_route(struct vmd *vmd, struct vmd_client *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct wire_hdr m = *h;
    if (from) {
        if (from->tid == 0)
            return WIRE_EFRAME;  /* enroll first */
        m.src = from->tid;
    }
    int host = (int)((m.dst >> VMD_TID_HOST_SHIFT) & 0xfff);
    if ((m.dst & VMD_TID_LOCAL_MASK) == 0 || host == 0)
        return from ? 0 : WIRE_EFRAME;
    if (host == vmd->index) {
        struct vmd_client *to = vmd_client_by_tid(vmd, m.dst);
        if (to == NULL) {
            log_debug("message t%x -> t%x tag %d: no such task; dropped", m.src, m.dst, m.tag);
            return 0;
        }
        vmd_client_send(to, &m, body, m.len);
        return 0;
    }
    if (from == NULL)
        return WIRE_EFRAME;     /* peers deliver only to our own tasks */
    struct vmd_host *dh = host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (dh == NULL || dh->peer == NULL || dh->peer->state != VMD_PEER_UP) {
        log_debug("message t%x -> t%x: host %d unreachable; dropped", m.src, m.dst, host);
        return 0;
    }
    int rc = vmd_peer_send(dh->peer, &m, body, m.len);
    if (rc != 0)
        log_code(rc, "message t%x -> t%x: cannot forward to %s", m.src, m.dst, dh->name);
    return 0;
}

/*
 * A context id unique in the VM: our host index in bits 18-29, like a tid,
 * and a counter below.  Context 0 is PVM's base context, never given out.
 */
int
vmd_task_newctx(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h)
{
    struct wire_wbuf b;
    if (c->tid == 0)
        return WIRE_EFRAME;
    vmd->next_ctx = (vmd->next_ctx % VMD_TID_LOCAL_MASK) + 1;
    wire_wbuf_init(&b);
    wire_put_u32(&b, VMD_HOST_TID(vmd->index) | vmd->next_ctx);
    vmd_client_reply(vmd, c->id, h->id, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}
