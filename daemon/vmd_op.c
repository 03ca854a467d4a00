/*
 * vmd_op.c - requests that wait (struct vmd_op): an add waits for its
 * hoststart commands, one item per host, and a halt for every daemon to
 * go.  When the last item is settled the answer goes to the local client
 * or, through RELAY, to the host that forwarded the request.
 */
#define LOG_TAG "ops"
#include "log.h"
#include "vmd.h"

#include <stdio.h>
#include <stdlib.h>

/* n items; pending is the caller's to set. */
struct vmd_op *
vmd_op_new(struct vmd *vmd, int type, int origin_host, uint32_t client_id, uint32_t req_id, int n)
{
    struct vmd_op *op = calloc(1, sizeof(*op));
    if (op == NULL || (n > 0 && (op->items = calloc((size_t)n, sizeof(*op->items))) == NULL)) {
        free(op);
        return NULL;
    }
    op->id = ++vmd->next_op_id;
    op->type = type;
    op->origin_host = origin_host;
    op->client_id = client_id;
    op->req_id = req_id;
    op->nitems = n;
    vmd_list_insert(&vmd->ops, &op->link);
    return op;
}

void
vmd_op_free(struct vmd_op *op)
{
    vmd_list_remove(&op->link);
    free(op->items);
    free(op);
}

static void
op_finish(struct vmd *vmd, struct vmd_op *op)
{
    struct wire_wbuf b;
    int failed = 0;
    wire_wbuf_init(&b);
    wire_put_u32(&b, (uint32_t)op->nitems);
    for (int i = 0; i < op->nitems; i++) {
        wire_put_str(&b, op->items[i].name);
        wire_put_i32(&b, op->items[i].status);
        wire_put_u32(&b, op->items[i].dtid);
        wire_put_str(&b, op->items[i].msg);
        failed += op->items[i].status != 0;
    }
    vmd_reply(vmd, op->origin_host, op->client_id, op->req_id,
           failed == op->nitems && op->nitems > 0 ? op->items[0].status : 0, &b);
    wire_wbuf_free(&b);
    vmd_op_free(op);
}

/* Drop one reason to wait; the last one sends the answer. */
void
vmd_op_release(struct vmd *vmd, struct vmd_op *op)
{
    if (--op->pending == 0)
        op_finish(vmd, op);
}

void
vmd_op_item_done(struct vmd *vmd, struct vmd_op *op, int item, int status, const char *msg)
{
    op->items[item].status = status;
    snprintf(op->items[item].msg, sizeof(op->items[item].msg), "%s",
             msg ? msg : (status ? wire_strerror(status) : ""));
    vmd_op_release(vmd, op);
}

/* The daemon stops: the halt request is answered with the number of
 * daemons that did not confirm (their links are still open: this hook
 * runs before the links close). */
static void
op_halt(struct vmd *vmd)
{
    int stragglers = vmd_halt_open_links(vmd);
    struct vmd_op *op = vmd->halt_op;
    if (op == NULL)
        return;
    vmd->halt_op = NULL;
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, (uint32_t)stragglers);
    vmd_reply(vmd, op->origin_host, op->client_id, op->req_id, 0, &b);
    wire_wbuf_free(&b);
    vmd_op_free(op);
}


const struct vmd_hooks vmd_op_hooks = {
    .module = "op",
    .halt = op_halt,
};
