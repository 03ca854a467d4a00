/*
 * vmd_halt.c - stopping.  vmd_halt() stops this daemon: every handle is
 * closed (links after their queued bytes are written) and the loop ends.
 * vmd_halt_vm() is the master's `halt`: it tells every daemon to stop,
 * waits until their links close (at most VMD_HALT_WAIT_MS), answers the
 * client that asked, and stops itself.
 */
#define LOG_TAG "halt"
#include "log.h"
#include "vmd.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void
close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

static void
remove_master_file(struct vmd *vmd)
{
    char path[4200], name[VMD_NAME_MAX] = "";
    snprintf(path, sizeof(path), "%s/run/master", vmd->home);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return;
    if (fgets(name, sizeof(name), fp))
        name[strcspn(name, "\n")] = '\0';
    fclose(fp);
    /* Only our own: another VM's master may have taken the home since. */
    if (strcmp(name, vmd->name) == 0)
        unlink(path);
}

void
vmd_halt(struct vmd *vmd, const char *why)
{
    struct vmd_list *l, *next;
    if (vmd->halting)
        return;
    vmd->halting = 1;
    log_info("stopping: %s", why);
    vmd_ops_halt_done(vmd, 0);
    vmd_hoststart_cancel_all(vmd);
    vmd_task_kill_all(vmd);
    vmd_spawn_close_all(vmd);
    vmd_fwd_sweep(vmd);
    vmd_mbox_clear(vmd);
    vmd_group_clear(vmd);
    for (l = vmd->peers.next; l != &vmd->peers; l = next) {
        next = l->next;
        vmd_peer_close(vmd_container_of(l, struct vmd_peer, link), 0, "stopping");
    }
    vmd_client_close_all(vmd);
    close_if_open((uv_handle_t *)&vmd->listener);
    close_if_open((uv_handle_t *)&vmd->local);
    unlink(vmd->sock_path);
    if (vmd->is_master)
        remove_master_file(vmd);
    close_if_open((uv_handle_t *)&vmd->hb_timer);
    vmd_load_stop(vmd);
    close_if_open((uv_handle_t *)&vmd->halt_timer);
    close_if_open((uv_handle_t *)&vmd->sig_term);
    close_if_open((uv_handle_t *)&vmd->sig_int);
    close_if_open((uv_handle_t *)&vmd->sig_hup);
}

static int
open_peers(const struct vmd *vmd)
{
    int n = 0;
    for (const struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next)
        n++;
    return n;
}

static void
halt_vm_done(struct vmd *vmd)
{
    int left = open_peers(vmd);
    if (left)
        log_warn("%d daemon%s did not confirm the halt in time", left, left == 1 ? "" : "s");
    vmd_ops_halt_done(vmd, left);
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
    if (vmd->halting_vm && !vmd->halting && open_peers(vmd) == 0)
        halt_vm_done(vmd);
}

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
    uv_timer_start(&vmd->halt_timer, on_halt_timer, VMD_HALT_WAIT_MS, 0);
    vmd_halt_check(vmd);
}
