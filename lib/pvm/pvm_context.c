/*
 * pvm_context.c - message contexts: pvm_newcontext, pvm_setcontext,
 * pvm_getcontext, pvm_freecontext.
 *
 * A context is one more field of every message: a task sends in its
 * current context and its receives see only messages of that context
 * (pvm_msg.c), so a library's messages never meet the program's.  Context
 * 0 is PVM's base context; -1 as the current context receives from every
 * context, as in PVM 3.4.6's matcher.  The daemons hand out VM-unique ids
 * (vmd_task_newctx: the host's index in bits 18-29 and a counter, as PVM's
 * pvmd does); pvm_freecontext gives the id back to that daemon, which
 * never hands out an id that is still held.  A spawned task starts in the
 * context its parent had when it called pvm_spawn (LIQUIDVM_CTX in its
 * environment); pvm__context (pvm_ctx.c) reads the current one.
 */
#include "pvm_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

int
pvm_newcontext(void)
{
    unsigned char *body = NULL;
    size_t len = 0;
    struct wire_rbuf r;
    uint32_t id = 0;
    int *n;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_newcontext");
    rc = pvm__request(WIRE_T_TASK_NEWCTX, NULL, &body, &len);
    if (rc == 0) {
        wire_rbuf_init(&r, body, len);
        rc = wire_get_u32(&r, &id);
        /* The daemon never gives the base context nor one of its own. */
        if (rc == 0 && (id == 0 || id > INT_MAX || PVM__CTX_DAEMON(id)))
            rc = -EPROTO;
    }
    free(body);
    if (rc != 0)
        return pvm__err(rc, "pvm_newcontext");
    n = pvm__realloc(pvm__ctx.myctxs, (size_t)(pvm__ctx.nmyctxs + 1) * sizeof *n);
    if (n == NULL)
        return pvm__err(-ENOMEM, "pvm_newcontext");
    n[pvm__ctx.nmyctxs++] = (int)id;
    pvm__ctx.myctxs = n;
    return (int)id;
}

/* Any value is accepted, as in PVM; pvm_send refuses the daemons' own. */
int
pvm_setcontext(int ctx)
{
    int old = pvm__context();

    pvm__ctx.msgctx = ctx;
    return old;
}

int
pvm_getcontext(void)
{
    return pvm__context();
}

/*
 * PVM's pvmd answers PvmNotFound for a context it did not hand out or
 * that was freed already.  The man page: "pvm_freecontext frees ctx so
 * that it may be reused.  Contexts are a system resource that will be
 * exhausted if not recycled."  So the daemon that handed it out is told,
 * and gives it out again later; the task remembers which it asked for.
 */
int
pvm_freecontext(int ctx)
{
    struct wire_wbuf req;
    unsigned char *body = NULL;
    size_t len = 0;
    int i, rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_freecontext");
    for (i = 0; i < pvm__ctx.nmyctxs; i++)
        if (pvm__ctx.myctxs[i] == ctx)
            break;
    if (i == pvm__ctx.nmyctxs)
        return pvm__err(PVM__ECODE(PvmNotFound), "pvm_freecontext");
    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)ctx);
    rc = pvm__request(WIRE_T_TASK_FREECTX, &req, &body, &len);
    wire_wbuf_free(&req);
    free(body);
    /* Not the daemon's (anymore): forgotten here as well. */
    if (rc == 0 || rc == WIRE_ENOTFOUND)
        pvm__ctx.myctxs[i] = pvm__ctx.myctxs[--pvm__ctx.nmyctxs];
    return pvm__err(rc, "pvm_freecontext");
}
