/*
 * pvm_noreset.c - tasks that survive a reset: pvm_setopt(PvmNoReset)'s
 * mailbox entry and pvm_getnoresets.
 *
 * As in PVM 3.4.6, a task that sets PvmNoReset puts an entry holding its
 * tid (one XDR int) into the mailbox class PVMNORESETCLASS, several
 * instances allowed and not persistent, so the master deletes it when the
 * task leaves the VM; clearing the option deletes it.  pvm_getnoresets
 * lists the class's entries and returns their owners' tids (the tid each
 * one holds), leaving pvm_getmboxinfo's last answer and the program's
 * buffers alone.  The array is the library's, valid until the next call.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* PvmNoReset turns on (on != 0) or off: put or delete our entry. */
int
pvm__noreset_set(int on)
{
    /* An entry of an earlier enrollment went when that task left. */
    if (pvm__ctx.noreset_tid != pvm__ctx.mytid)
        pvm__ctx.noreset_index = 0;
    if (!on) {
        if (pvm__ctx.noreset_index == 0)
            return 0;
        int rc = pvm_delinfo(PVMNORESETCLASS, pvm__ctx.noreset_index - 1, 0);
        pvm__ctx.noreset_index = 0;
        return rc < 0 && rc != PvmNotFound ? rc : 0;
    }
    if (pvm__ctx.noreset_index != 0)
        return 0;
    struct pvm__buf *b;
    int rc = pvm__buf_new(PvmDataDefault, &b);
    if (rc < 0)
        return pvm__err(rc, "pvm_setopt");
    int tid = pvm__ctx.mytid;
    if ((rc = pvm__pack(b, PVM_INT, &tid, 1, 1)) != 0) {
        pvm__buf_free(b);
        return pvm__err(rc, "pvm_setopt");
    }
    rc = pvm_putinfo(PVMNORESETCLASS, b->id, PvmMboxMultiInstance);
    pvm__buf_free(b);
    if (rc < 0)
        return rc;
    pvm__ctx.noreset_index = rc + 1;
    pvm__ctx.noreset_tid = tid;
    return 0;
}

/* The owners of the class's entries (body of a MBOX_LIST reply) into
 * pvm__ctx.noresets; their number, or a negative code. */
static int
take_owners(struct wire_rbuf *r)
{
    uint32_t nclass, n = 0;
    int rc;
    if ((rc = wire_get_u32(r, &nclass)) != 0)
        return rc;
    for (uint32_t i = 0; i < nclass; i++) {
        char name[256];
        uint32_t ne;
        if ((rc = wire_get_str(r, name, sizeof(name))) || (rc = wire_get_u32(r, &ne)))
            return rc;
        if (ne > 65536)
            return WIRE_EFRAME;
        int keep = strcmp(name, PVMNORESETCLASS) == 0;
        int *t = keep ? pvm__realloc(pvm__ctx.noresets, (n + ne + 1) * sizeof(int)) : NULL;
        if (keep && t == NULL)
            return -ENOMEM;
        if (keep)
            pvm__ctx.noresets = t;
        for (uint32_t k = 0; k < ne; k++) {
            int32_t idx;
            uint32_t owner, fl;
            if ((rc = wire_get_i32(r, &idx)) || (rc = wire_get_u32(r, &owner)) ||
                (rc = wire_get_u32(r, &fl)))
                return rc;
            /* Owner 0: a persistent entry whose task has left. */
            if (keep && owner != 0)
                pvm__ctx.noresets[n++] = (int)owner;
        }
    }
    return (int)n;
}

int
pvm_getnoresets(int **tids, int *ntids)
{
    struct wire_wbuf req;
    unsigned char *body = NULL;
    size_t len;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_getnoresets");
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);      /* the owner word, which our daemon fills in */
    wire_put_str(&req, PVMNORESETCLASS);
    rc = pvm__request(WIRE_T_MBOX_LIST, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc == 0) {
        struct wire_rbuf r;
        wire_rbuf_init(&r, body, len);
        rc = take_owners(&r);
    }
    free(body);
    if (rc < 0)
        return pvm__err(rc, "pvm_getnoresets");
    if (tids)
        *tids = pvm__ctx.noresets;
    if (ntids)
        *ntids = rc;
    return PvmOk;
}
