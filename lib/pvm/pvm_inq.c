/*
 * pvm_inq.c - the queue of messages that arrived and wait for a receive,
 * oldest first, and the handlers that take queued messages (pvm_mhf.c
 * holds the table).
 *
 * The daemon's frames (pvm_daemon.c) and the direct links (pvm_link.c)
 * push messages here in arrival order; the receives (pvm_msg.c) and the
 * library's own exchanges (pvm_reduce.c) take them.  A message a handler
 * matches is marked as it is pushed and handed to the handler by
 * pvm__mhf_run_pending, which the callers invoke only where a handler may
 * run: never while a request to the daemon waits for its reply, nor while
 * a write waits for its socket (pvm__ctx.io_depth).  Nothing here reads a
 * socket, so the transport below may push without calling back up.
 */
#include "pvm_int.h"

#include <stdlib.h>
#include <string.h>

void
pvm__msg_free(struct pvm__msg *m)
{
    if (m->buf != NULL && pvm__msg_owns_buf(m))
        pvm__buf_free(m->buf);
    free(m->data);
    free(m);
}

void
pvm__inq_free(void)
{
    struct pvm__msg *m = pvm__ctx.inq_head, *next;

    for (; m; m = next) {
        next = m->next;
        pvm__msg_free(m);
    }
    pvm__ctx.inq_head = pvm__ctx.inq_tail = NULL;
    pvm__ctx.mhf_pending = 0;
}

int
pvm__msg_wrap(struct pvm__msg *m)
{
    struct pvm__buf *b;
    struct pvmminfo mi;
    int rc;

    if (m->buf != NULL)
        return 0;
    rc = pvm__buf_adopt(m->encword, m->data, m->len, m->len, 0, &b);
    if (rc != 0)
        return rc;
    m->data = NULL;
    memset(&mi, 0, sizeof(mi));
    mi.src = m->src;
    mi.dst = m->dst;
    mi.tag = m->tag;
    mi.ctx = m->ctx;
    pvm__buf_set_info(b, &mi);
    b->held = m;
    m->buf = b;
    m->bufid = b->id;
    return 0;
}

struct pvm__msg *
pvm__inq_take(int src, int tag, int ctx)
{
    struct pvm__msg *m, *prev = NULL;

    for (m = pvm__ctx.inq_head; m; prev = m, m = m->next) {
        if (m->mhf || pvm__msg_dead(m) || m->ctx != ctx)
            continue;
        if ((src == -1 || m->src == src) && (tag == -1 || m->tag == tag)) {
            pvm__inq_unlink(prev, m);
            return m;
        }
    }
    return NULL;
}

int
pvm__inq_push(struct pvm__msg *m)
{
    if (pvm__ctx.nmhf > 0 && pvm__mhf_find(m->src, m->tag, m->ctx) >= 0) {
        m->mhf = 1;
        pvm__ctx.mhf_pending++;
    }
    if (pvm__ctx.inq_tail)
        pvm__ctx.inq_tail->next = m;
    else
        pvm__ctx.inq_head = m;
    pvm__ctx.inq_tail = m;
    return m->mhf;
}

int
pvm__mhf_run_pending(void)
{
    struct pvm__msg *m, *prev;
    int idx, rc;

    /* Handlers do not nest: one that receives leaves the others queued.
     * Nor do they run while a write waits for its socket (io_depth). */
    if (pvm__ctx.mhf_pending == 0 || pvm__ctx.mhf_depth > 0 || pvm__ctx.io_depth > 0)
        return 0;
again:
    prev = NULL;
    for (m = pvm__ctx.inq_head; m; prev = m, m = m->next) {
        if (!m->mhf)
            continue;
        idx = pvm__mhf_find(m->src, m->tag, m->ctx);
        if (idx < 0) {
            /* Its handler was deleted meanwhile: an ordinary message now. */
            m->mhf = 0;
            continue;
        }
        if ((rc = pvm__msg_wrap(m)) < 0)
            return rc;
        pvm__inq_unlink(prev, m);
        struct pvm__buf *b = m->buf;
        free(m);
        pvm__ctx.mhf_pending--;
        pvm__mhf_call(idx, b);
        /* The handler may have changed the queue: start over. */
        goto again;
    }
    pvm__ctx.mhf_pending = 0;
    return 0;
}
