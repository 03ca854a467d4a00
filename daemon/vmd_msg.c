/*
 * vmd_msg.c - a task message arriving as a frame (WIRE_T_MSG, and
 * WIRE_T_DIRECT, which PvmRouteDirect uses to set a link up): from a
 * local task, whose tid the dispatcher stamped as its source, or from a
 * peer for one of its own tasks (vmd_dispatch.c), which may deliver only
 * to ours.  A local sender whose messages pile up for a slow host or a
 * task that does not read waits (flow control, vmd_client.c).
 */
#define LOG_TAG "msg"
#include "log.h"
#include "vmd.h"

/*
 * A MSG or DIRECT frame, from a local task (its src stamped by the
 * dispatcher) or from a peer (for its own tasks).  Messages to a task that
 * does not exist are dropped, as PVM drops them.
 */
int
vmd_msg_route(struct vmd *vmd, const struct vmd_from *src, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct vmd_client *from = src->kind == VMD_FROM_CLIENT ? src->client : NULL;
    struct wire_hdr m = *h;
    if ((m.dst & VMD_TID_LOCAL_MASK) == 0 || VMD_TID_HOST(m.dst) == 0)
        return from ? 0 : WIRE_EFRAME;
    if (from == NULL && VMD_TID_HOST(m.dst) != vmd->index)
        return WIRE_EFRAME;     /* peers deliver only to our own tasks */
    if (from == NULL)
        vmd_watch_noticed(vmd, &m, body);
    vmd_route_deliver(vmd, &m, body);
    /* Flow control: a sender whose messages pile up for a host or for a
     * local task that does not read waits. */
    if (from && VMD_TID_HOST(m.dst) == vmd->index) {
        if (vmd_task_backlog(vmd, m.dst) >= vmd->conf.max_peer_queue)
            vmd_client_pause(from, 0, m.dst);
    } else if (from && vmd_host_backlog(vmd, VMD_TID_HOST(m.dst)) >= vmd->conf.max_peer_queue) {
        vmd_client_pause(from, VMD_TID_HOST(m.dst), 0);
    }
    return 0;
}
