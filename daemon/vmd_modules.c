/*
 * vmd_modules.c - the daemon's modules wired together: the frame
 * dispatcher the receiving paths call, and the registry of lifecycle
 * hooks, in the order they run.  Only start-up (vmd_main.c) and the tests
 * refer to this file, so no module depends on another through it.
 *
 * The order is part of the behaviour.  When the daemon halts, the waiting
 * requests are answered first (op: the halt request, with the daemons
 * still linked), hoststarts are cancelled, tasks are killed (their ends
 * run the task_gone hooks below), and links and clients close last, after
 * what is queued on them.  When a task ends its watchers are told before
 * the mailbox and the groups drop it; when a host goes, the tasks that
 * watched it are told first, then the groups, then the watchers of its
 * tasks.
 */
#include "vmd.h"

static const struct vmd_hooks *const registry[] = {
    &vmd_op_hooks,
    &vmd_hoststart_hooks,
    &vmd_task_hooks,
    &vmd_watch_hooks,
    &vmd_hostwatch_hooks,
    &vmd_spawn_hooks,
    &vmd_fwd_hooks,
    &vmd_mbox_hooks,
    &vmd_group_hooks,
    &vmd_watch_remote_hooks,
    &vmd_peer_hooks,
    &vmd_client_hooks,
    &vmd_load_hooks,
    &vmd_clock_hooks,
    &vmd_proto_hooks,
    NULL,
};

void
vmd_modules_install(struct vmd *vmd)
{
    vmd->on_frame = vmd_dispatch_frame;
    vmd->hooks = registry;
}
