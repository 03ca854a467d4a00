/*
 * pvm_mcast.c - pvm_mcast: the active send buffer to a list of tasks.
 *
 * As in PVM 3.4.6 the list is sorted and each task gets one copy however
 * often it is named, and never the sender itself.  Each copy is one
 * WIRE_T_MSG frame to the local daemon, which routes it like any message;
 * PVM's daemons fan the message out per host instead, which saves the
 * network the copies for tasks of one host (TODO(#3): a multicast frame).
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_tid(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

int
pvm_mcast(int *tids, int ntask, int msgtag)
{
    const unsigned char *p;
    size_t len;
    int *dst, i, n, rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_mcast");
    if (pvm__ctx.sbuf == NULL)
        return pvm__err(PVM__ENOBUF, "pvm_mcast");
    if (ntask < 0 || (ntask > 0 && tids == NULL) || (msgtag < 0 && !pvm__opt(PvmResvTids)))
        return pvm__err(-EINVAL, "pvm_mcast");
    for (i = 0; i < ntask; i++)
        if (!pvm__tid_ok(tids[i]))
            return pvm__err(-EINVAL, "pvm_mcast");
    if (ntask == 0)
        return PvmOk;
    if ((rc = pvm__buf_flatten(pvm__ctx.sbuf, &p, &len)) != 0)
        return pvm__err(rc, "pvm_mcast");
    if ((dst = pvm__malloc((size_t)ntask * sizeof *dst)) == NULL)
        return pvm__err(-ENOMEM, "pvm_mcast");
    memcpy(dst, tids, (size_t)ntask * sizeof *dst);
    qsort(dst, (size_t)ntask, sizeof *dst, cmp_tid);
    pvm__ctx.sbuf->ctx = pvm__context();
    for (i = 0, n = 0; i < ntask && rc == 0; i++) {
        if (dst[i] == pvm__ctx.mytid || (i > 0 && dst[i] == dst[i - 1]))
            continue;
        rc = pvm__send_frame(dst[i], msgtag, p, len, pvm__buf_encword(pvm__ctx.sbuf));
        n++;
    }
    free(dst);
    /* PVM's sends read the socket too, which runs message handlers. */
    if (rc == 0 && n > 0 && pvm__ctx.nmhf > 0)
        rc = pvm__poll_input();
    return pvm__err(rc, "pvm_mcast");
}
