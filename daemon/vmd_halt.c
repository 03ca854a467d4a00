/*
 * vmd_halt.c - stopping.  vmd_halt() stops this daemon: every module's
 * halt hook runs (answers the waiting, closes links and clients after
 * their queued bytes, kills the tasks), then the daemon's own timers and
 * signal handles close, and the loop ends once every handle is closed.
 *
 * The master's `halt` of the whole VM (vmd_halt_vm, vmd_ops.c) tells every
 * daemon to stop and waits here until their links close, at most
 * VMD_HALT_WAIT_MS, before it stops itself; the client that asked is
 * answered by the ops module's halt hook.  This file calls no module: it
 * only runs the hooks.
 */
#define LOG_TAG "halt"
#include "log.h"
#include "vmd.h"

static void
close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

void
vmd_halt(struct vmd *vmd, const char *why)
{
    if (vmd->halting)
        return;
    vmd->halting = 1;
    log_info("stopping: %s", why);
    vmd_hooks_halt(vmd);
    close_if_open((uv_handle_t *)&vmd->hb_timer);
    close_if_open((uv_handle_t *)&vmd->halt_timer);
    close_if_open((uv_handle_t *)&vmd->sig_term);
    close_if_open((uv_handle_t *)&vmd->sig_int);
    close_if_open((uv_handle_t *)&vmd->sig_hup);
}

int
vmd_halt_open_links(const struct vmd *vmd)
{
    int n = 0;
    /* Daemons of the table only: a stranger (a connection still in its TLS
     * handshake, or a flood's) has nothing to confirm. */
    for (const struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next) {
        const struct vmd_peer *p = (const struct vmd_peer *)(const void *)
            ((const char *)l - offsetof(struct vmd_peer, link));
        n += p->host != NULL;
    }
    return n;
}

static void
halt_vm_done(struct vmd *vmd)
{
    int left = vmd_halt_open_links(vmd);
    if (left)
        log_warn("%d daemon%s did not confirm the halt in time", left, left == 1 ? "" : "s");
    vmd_halt(vmd, "the VM is halted");
}

static void
on_halt_timer(uv_timer_t *t)
{
    halt_vm_done(t->data);
}

void
vmd_halt_check(struct vmd *vmd)
{
    if (vmd->halting_vm && !vmd->halting && vmd_halt_open_links(vmd) == 0)
        halt_vm_done(vmd);
}

void
vmd_halt_wait(struct vmd *vmd)
{
    uv_timer_start(&vmd->halt_timer, on_halt_timer, VMD_HALT_WAIT_MS, 0);
    vmd_halt_check(vmd);
}
