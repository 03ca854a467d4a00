/*
 * pvm_mcast.c - pvm_mcast: the active send buffer to a list of tasks.
 *
 * As in PVM 3.4.6 the list is sorted and each task gets one copy however
 * often it is named, and never the sender itself.  pvm_mcast writes one
 * WIRE_T_MSG frame per task; pvm_bcast (pvm_group.c) uses
 * pvm__mcast_frame: the body goes to the local daemon once, in one
 * WIRE_T_TASK_MCAST frame with the list of tids, and the daemons fan it
 * out per host as PVM's do (daemon/vmd_mcast.c).  A task our messages reach
 * over a link or a ring (pvm_link.c) gets its copy that way too, so that
 * the pair's order holds.
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
pvm__mcast_frame(const int *tids, int n, int tag, const void *body, size_t len, int encword)
{
    int ctx = pvm__context();
    size_t head = WIRE_HDR_LEN + 4 + 4 * (size_t)n;
    unsigned char *pre;
    int rc;

    if (n <= 0)
        return 0;
    if (n == 1)
        return pvm__send_frame(tids[0], tag, body, len, encword);
    if (PVM__CTX_DAEMON(ctx))
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        if (!pvm__direct_linked(tids[i]))
            continue;
        /* Linked ones one by one, the rest in one frame. */
        int *rest = pvm__malloc((size_t)n * sizeof(*rest)), k = 0;
        if (rest == NULL)
            return -ENOMEM;
        rc = 0;
        for (int j = 0; j < n && rc == 0; j++) {
            if (pvm__direct_linked(tids[j]))
                rc = pvm__send_frame(tids[j], tag, body, len, encword);
            else
                rest[k++] = tids[j];
        }
        if (rc == 0)
            rc = pvm__mcast_frame(rest, k, tag, body, len, encword);
        free(rest);
        return rc;
    }
    if (len + 4 + 4 * (size_t)n > UINT32_MAX ||
        (pvm__ctx.max_msg && len + 4 + 4 * (size_t)n > pvm__ctx.max_msg))
        return -EMSGSIZE;
    if ((pre = pvm__malloc(head)) == NULL)
        return -ENOMEM;
    struct wire_hdr h = { .type = WIRE_T_TASK_MCAST, .src = (uint32_t)pvm__ctx.mytid, .tag = tag,
                          .ctx = ctx, .flags = (uint32_t)encword,
                          .len = (uint32_t)(len + 4 + 4 * (size_t)n) };
    wire_hdr_pack(&h, pre);
    unsigned char *q = pre + WIRE_HDR_LEN;
    uint32_t words[1] = { (uint32_t)n };
    for (int i = -1; i < n; i++, q += 4) {
        uint32_t v = i < 0 ? words[0] : (uint32_t)tids[i];
        q[0] = (unsigned char)(v >> 24);
        q[1] = (unsigned char)(v >> 16);
        q[2] = (unsigned char)(v >> 8);
        q[3] = (unsigned char)v;
    }
    rc = wire_write_full(pvm__ctx.fd, pre, head);
    if (rc == 0 && len)
        rc = wire_write_full(pvm__ctx.fd, body, len);
    free(pre);
    return rc ? WIRE_ENOVM : 0;
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
    for (i = 0, n = 0; i < ntask; i++) {
        if (dst[i] == pvm__ctx.mytid || (n > 0 && dst[i] == dst[n - 1]))
            continue;
        dst[n++] = dst[i];
    }
    /* One frame per task, as the unit tests' fake daemon reads them;
     * pvm_bcast uses the multicast frame. TODO(#4): here too. */
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    for (i = 0, rc = 0; i < n && rc == 0; i++) {
        rc = pvm__send_frame(dst[i], msgtag, p, len, pvm__buf_encword(pvm__ctx.sbuf));
        /* Traced as one send per task, so that each receipt has its pair. */
        if (rc == 0 && t0 != 0)
            pvm__trace_msg(PVM__TEV_SEND, PVM__TC_MCAST, t0, dst[i], msgtag, pvm__ctx.sbuf->ctx,
                           len);
    }
    free(dst);
    /* PVM's sends read the socket too, which runs message handlers. */
    if (rc == 0 && n > 0 && pvm__ctx.nmhf > 0)
        rc = pvm__poll_input();
    return pvm__err(rc, "pvm_mcast");
}
