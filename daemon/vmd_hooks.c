/*
 * vmd_hooks.c - lifecycle hooks: what the daemon's modules do when the
 * daemon halts, a link to a host is lost, a host joins or leaves the VM, a
 * task ends or a local client goes.  The code that detects an event calls
 * one of these, which runs every module's hook for it in the order of the
 * registry vmd_modules.c installs; so the detecting code names no module,
 * and a module that keeps something of a host or a task cleans it up in
 * its own file.
 */
#include "vmd.h"

#define FOR_EACH_HOOK(vmd, p) \
    for (const struct vmd_hooks *const *p = (vmd)->hooks; p && *p; p++)

void
vmd_hooks_halt(struct vmd *vmd)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->halt)
            (*p)->halt(vmd);
}

void
vmd_hooks_link_lost(struct vmd *vmd, struct vmd_host *h, int err)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->link_lost)
            (*p)->link_lost(vmd, h, err);
}

void
vmd_hooks_host_added(struct vmd *vmd, struct vmd_host *h)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->host_added)
            (*p)->host_added(vmd, h);
}

void
vmd_hooks_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->host_gone)
            (*p)->host_gone(vmd, h);
}

void
vmd_hooks_task_gone(struct vmd *vmd, struct vmd_task *t)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->task_gone)
            (*p)->task_gone(vmd, t);
}

void
vmd_hooks_client_gone(struct vmd *vmd, struct vmd_client *c)
{
    FOR_EACH_HOOK(vmd, p)
        if ((*p)->client_gone)
            (*p)->client_gone(vmd, c);
}
