/*
 * pvm_mhf.c - message handlers: pvm_addmhf, pvm_delmhf, and calling a
 * handler for a message that arrived (pvm_msg.c decides when).
 *
 * The table is indexed by handler id; a free slot has no function.  Ids
 * are handed out as PVM 3.4.6 hands them out, so that a session typed
 * against PVM (mhf_tickle's "delete handler 9") means the same here: PVM's
 * library installs 9 handlers of its own at enrollment, so a program's
 * first handler gets id 9 (ids 0-8 are never given to a program here, and
 * deleting one is PvmNotFound), and a deleted id is the next one reused
 * (a last-in first-out free list) before any new one.  As in PVM, a
 * handler that overlaps an installed one (each of src, tag and ctx equal,
 * or -1 on either side) is refused with PvmExists, so at most one handler
 * matches any message and the order in which they are tried does not
 * matter.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct pvm__mhf {
    int src, tag, ctx;          /* -1: any */
    int (*func)(int mid);       /* NULL: a free slot */
    int next_free;              /* a free slot: the next free id + 1, 0 at the end */
};

/* The first id a program gets (PVM 3.4.6's library holds 0-8). */
#define MHF_FIRST 9

static int
field_overlaps(int a, int b)
{
    return a == -1 || b == -1 || a == b;
}

int
pvm__mhf_find(int src, int tag, int ctx)
{
    int i;

    for (i = 0; i < pvm__ctx.nmhf; i++) {
        const struct pvm__mhf *h = &pvm__ctx.mhf[i];

        if (h->func == NULL)
            continue;
        if ((h->src == -1 || h->src == src) && (h->tag == -1 || h->tag == tag) &&
            (h->ctx == ctx || (h->ctx == -1 && !PVM__CTX_DAEMON(ctx))))
            return i;
    }
    return -1;
}

void
pvm__mhf_reset(void)
{
    free(pvm__ctx.mhf);
    pvm__ctx.mhf = NULL;
    pvm__ctx.nmhf = 0;
    pvm__ctx.mhf_free = 0;
}

static void
push_free(int id)
{
    pvm__ctx.mhf[id].func = NULL;
    pvm__ctx.mhf[id].next_free = pvm__ctx.mhf_free;
    pvm__ctx.mhf_free = id + 1;
}

int
pvm_addmhf(int src, int tag, int ctx, int (*handler)(int mid))
{
    struct pvm__mhf *t;
    int i, id, n;

    if (handler == NULL)
        return pvm__err(-EINVAL, "pvm_addmhf");
    for (i = 0; i < pvm__ctx.nmhf; i++) {
        const struct pvm__mhf *h = &pvm__ctx.mhf[i];

        if (h->func != NULL && field_overlaps(h->src, src) && field_overlaps(h->tag, tag) &&
            field_overlaps(h->ctx, ctx))
            return pvm__err(PVM__ECODE(PvmExists), "pvm_addmhf");
    }
    if (pvm__ctx.mhf_free == 0) {
        /* New slots go on the free list lowest first, as PVM numbers them. */
        if (pvm__ctx.nmhf >= 1 << 20)
            return pvm__err(-ENOMEM, "pvm_addmhf");
        n = pvm__ctx.nmhf ? pvm__ctx.nmhf * 2 : 2 * MHF_FIRST;
        t = pvm__realloc(pvm__ctx.mhf, (size_t)n * sizeof *t);
        if (t == NULL)
            return pvm__err(-ENOMEM, "pvm_addmhf");
        for (i = pvm__ctx.nmhf; i < n; i++) {
            t[i].func = NULL;
            t[i].next_free = 0;
        }
        pvm__ctx.mhf = t;
        for (i = n - 1; i >= pvm__ctx.nmhf && i >= MHF_FIRST; i--)
            push_free(i);
        pvm__ctx.nmhf = n;
    }
    id = pvm__ctx.mhf_free - 1;
    t = &pvm__ctx.mhf[id];
    pvm__ctx.mhf_free = t->next_free;
    t->src = src;
    t->tag = tag;
    t->ctx = ctx;
    t->func = handler;
    return id;
}

int
pvm_delmhf(int mhid)
{
    if (mhid < 0)
        return pvm__err(-EINVAL, "pvm_delmhf");
    if (mhid >= pvm__ctx.nmhf || pvm__ctx.mhf[mhid].func == NULL)
        return pvm__err(PVM__ECODE(PvmNotFound), "pvm_delmhf");
    push_free(mhid);
    return PvmOk;
}

/* b if it is still the buffer with that id, else NULL. */
static struct pvm__buf *
still(struct pvm__buf *b, int id)
{
    return b != NULL && pvm__buf_get(id) == b ? b : NULL;
}

void
pvm__mhf_call(int idx, struct pvm__buf *b)
{
    int (*func)(int) = pvm__ctx.mhf[idx].func;
    struct pvm__buf *ssave = pvm__ctx.sbuf, *rsave = pvm__ctx.rbuf, *cur;
    int sid = ssave ? ssave->id : 0, rid = rsave ? rsave->id : 0;
    int ctxsave = pvm__context();
    int mid = b->id;

    /*
     * held marks b as the message of this call: if the handler frees it
     * and a buffer it makes next gets the same id and address, that one
     * is zeroed and is not taken for b below.
     */
    b->held = b;
    b->unpacking = 1;
    b->pos = 0;
    pvm__ctx.sbuf = NULL;
    pvm__ctx.rbuf = b;
    pvm__ctx.msgctx = b->ctx;
    pvm__ctx.mhf_depth++;
    func(mid);
    pvm__ctx.mhf_depth--;
    pvm__ctx.msgctx = ctxsave;

    /* Whatever the handler left active is freed and ours come back. */
    cur = pvm__ctx.sbuf;
    pvm__ctx.sbuf = still(ssave, sid);
    if (cur != NULL && cur != pvm__ctx.sbuf)
        pvm__buf_free(cur);
    cur = pvm__ctx.rbuf;
    pvm__ctx.rbuf = still(rsave, rid);
    if (cur != NULL && cur != pvm__ctx.rbuf)
        pvm__buf_free(cur);
    /* Each free above cleared its slot, so this finds b only if it lives. */
    cur = pvm__buf_get(mid);
    if (cur != NULL && cur->held == b)
        pvm__buf_free(cur);
}

void
pvmdisplaymhfinfo(char *who, char *msg, int tid)
{
    int i, n = 0;

    for (i = 0; i < pvm__ctx.nmhf; i++)
        n += pvm__ctx.mhf[i].func != NULL;
    printf("\n%s t%x: Display Message Handler Information: %d handler%s\n",
           who ? who : "", (unsigned)tid, n, n == 1 ? "" : "s");
    printf("%s t%x: %s\n", who ? who : "", (unsigned)tid, msg ? msg : "");
    for (i = 0; i < pvm__ctx.nmhf; i++) {
        const struct pvm__mhf *h = &pvm__ctx.mhf[i];

        if (h->func == NULL)
            continue;
        printf("%s t%x: mhid = %2d  src = t%-8x  ctx = %8d  tag = %8d\n", who ? who : "",
               (unsigned)tid, i, (unsigned)h->src, h->ctx, h->tag);
    }
    printf("\n\n");
    fflush(stdout);
}
