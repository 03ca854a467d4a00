/*
 * pvm_group.c - dynamic groups: pvm_joingroup, pvm_lvgroup, pvm_gettid,
 * pvm_getinst, pvm_gsize, pvm_freezegroup, pvm_barrier, pvm_bcast.  In PVM
 * these are libgpvm3's and talk to the group server task pvmgs; here the
 * daemons keep the groups (daemon/vmd_group.c), so each call is one
 * request to the task's own daemon, which asks the master, and a barrier
 * waits at the daemon, which gathers its host's members first.
 *
 * Codes and corner cases are PVM 3.4.6's, as measured against it: a NULL
 * or empty name is PvmNullGroup, a group with no members left is gone
 * (PvmNoGroup), pvm_freezegroup returns the frozen size, a second freeze is
 * PvmDupGroup and a join of a frozen group PvmNotInGroup, pvm_bcast to a
 * group with nobody but the sender is PvmNoInst, and a barrier count below
 * -1 or of 0 is PvmBadParam.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
pvm__group_name_ok(const char *group)
{
    if (group == NULL || group[0] == '\0')
        return WIRE_ENULLGROUP;
    if (strlen(group) >= 256)
        return -EINVAL;
    return 0;
}

/* A group request: u32 tid (our daemon fills it in), str group, extra. */
static int
group_call(int type, const char *group, const struct wire_wbuf *extra, unsigned char **body,
           size_t *len)
{
    struct wire_wbuf req;
    int rc;

    *body = NULL;
    *len = 0;
    if ((rc = pvm__group_name_ok(group)) != 0)
        return rc;
    if ((rc = pvm__enroll()) != 0)
        return rc;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);
    wire_put_str(&req, group);
    if (extra)
        wire_put_bytes(&req, extra->data, extra->len);
    rc = pvm__request(type, &req, body, len);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = pvm__mhf_run_pending();
    return rc;
}

/* A request whose reply is one 32-bit value. */
static int
group_int(int type, const char *group, int has_arg, int32_t arg, int32_t *out)
{
    struct wire_wbuf x;
    unsigned char *body = NULL;     /* freed below even when no request was made */
    size_t len;
    struct wire_rbuf r;

    wire_wbuf_init(&x);
    if (has_arg)
        wire_put_i32(&x, arg);
    int rc = x.err ? x.err : group_call(type, group, &x, &body, &len);
    wire_wbuf_free(&x);
    if (rc == 0 && out) {
        wire_rbuf_init(&r, body, len);
        rc = wire_get_i32(&r, out);
    }
    free(body);
    return rc;
}

int
pvm_joingroup(char *group)
{
    int32_t inst;
    int rc = group_int(WIRE_T_GROUP_JOIN, group, 0, 0, &inst);
    return rc ? pvm__err(rc, "pvm_joingroup") : inst;
}

int
pvm_lvgroup(char *group)
{
    return pvm__err(group_int(WIRE_T_GROUP_LEAVE, group, 0, 0, NULL), "pvm_lvgroup");
}

int
pvm_gettid(char *group, int inum)
{
    int32_t tid;
    int rc = group_int(WIRE_T_GROUP_TID, group, 1, inum, &tid);
    return rc ? pvm__err(rc, "pvm_gettid") : tid;
}

int
pvm_getinst(char *group, int tid)
{
    int32_t inst;
    int rc = group_int(WIRE_T_GROUP_INST, group, 1, tid, &inst);
    return rc ? pvm__err(rc, "pvm_getinst") : inst;
}

int
pvm_gsize(char *group)
{
    int32_t size;
    int rc = group_int(WIRE_T_GROUP_SIZE, group, 0, 0, &size);
    return rc ? pvm__err(rc, "pvm_gsize") : size;
}

int
pvm_freezegroup(char *group, int size)
{
    int32_t frozen;
    if (size == 0 || size < -1)
        return pvm__err(-EINVAL, "pvm_freezegroup");
    int rc = group_int(WIRE_T_GROUP_FREEZE, group, 1, size, &frozen);
    return rc ? pvm__err(rc, "pvm_freezegroup") : frozen;
}

int
pvm_barrier(char *group, int count)
{
    int rc = pvm__group_name_ok(group);
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    if (rc == 0 && (count == 0 || count < -1))
        rc = -EINVAL;
    if (rc == 0)
        rc = group_int(WIRE_T_GROUP_BARRIER, group, 1, count, NULL);
    pvm__trace_coll(PVM__TC_BARRIER, t0);
    return pvm__err(rc, "pvm_barrier");
}

int
pvm__group_view(const char *group, struct pvm__gview *v)
{
    unsigned char *body;
    size_t len;
    struct wire_rbuf r;
    uint32_t fz, n, tid, u, nd;
    int32_t inst;
    int *t = NULL, max = 0;

    memset(v, 0, sizeof(*v));
    int rc = group_call(WIRE_T_GROUP_INFO, group, NULL, &body, &len);
    if (rc != 0) {
        free(body);
        return rc;
    }
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &fz)) || (rc = wire_get_u32(&r, &n)))
        goto done;
    /* Two passes: the highest instance first, then the table. */
    size_t start = r.pos;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if ((rc = wire_get_i32(&r, &inst)) == 0 && (rc = wire_get_u32(&r, &tid)) == 0) {
            if (inst < 0 || inst >= 65536)
                rc = WIRE_EFRAME;
            else if (inst + 1 > max)
                max = inst + 1;
        }
    if (rc != 0)
        goto done;
    if ((t = pvm__calloc(max ? (size_t)max : 1, sizeof(*t))) == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    r.pos = start;
    for (uint32_t i = 0; i < n; i++) {
        wire_get_i32(&r, &inst);
        wire_get_u32(&r, &tid);
        t[inst] = (int)tid;
    }
    if ((rc = wire_get_u32(&r, &u)) || (rc = wire_get_u32(&r, &nd)) || nd > PVM__GVIEW_DEAD) {
        rc = rc ? rc : WIRE_EFRAME;
        free(t);
        goto done;
    }
    v->gen = u;
    for (uint32_t i = 0; i < nd && rc == 0; i++)
        if ((rc = wire_get_u32(&r, &tid)) == 0 && (rc = wire_get_i32(&r, &inst)) == 0 &&
            (rc = wire_get_u32(&r, &u)) == 0) {
            v->dead[i] = (int)tid;
            v->dead_inst[i] = inst;
            v->dead_ago_ms[i] = u;
        }
    if (rc != 0) {
        free(t);
        goto done;
    }
    v->ndead = (int)nd;
    v->tids = t;
    v->ninst = max;
    v->frozen = (int)fz;
done:
    free(body);
    return rc;
}

int
pvm__group_members(const char *group, int **tids, int *ninst, int *frozen)
{
    struct pvm__gview v;
    int rc = pvm__group_view(group, &v);

    *tids = v.tids;
    *ninst = v.ninst;
    if (rc == 0 && frozen)
        *frozen = v.frozen;
    return rc;
}

int
pvm_bcast(char *group, int msgtag)
{
    const unsigned char *p;
    size_t len;
    int *tids, ninst, n = 0, rc;
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;

    if ((rc = pvm__group_members(group, &tids, &ninst, NULL)) != 0)
        return pvm__err(rc, "pvm_bcast");
    for (int i = 0; i < ninst; i++)
        if (tids[i] != 0 && tids[i] != pvm__ctx.mytid)
            tids[n++] = tids[i];
    if (n == 0)
        rc = WIRE_ENOINST;
    else if (msgtag < 0 && !pvm__opt(PvmResvTids))
        rc = -EINVAL;
    else if (pvm__ctx.sbuf == NULL)
        rc = PVM__ENOBUF;
    else if ((rc = pvm__buf_flatten(pvm__ctx.sbuf, &p, &len)) == 0) {
        pvm__ctx.sbuf->ctx = pvm__context();
        rc = pvm__mcast_frame(tids, n, msgtag, p, len, pvm__buf_encword(pvm__ctx.sbuf));
        /* Traced as one send per member, so that each receipt has its pair. */
        for (int i = 0; rc == 0 && t0 != 0 && i < n; i++)
            pvm__trace_msg(PVM__TEV_SEND, PVM__TC_BCAST, t0, tids[i], msgtag,
                           pvm__ctx.sbuf->ctx, len);
        if (rc == 0 && pvm__ctx.nmhf > 0)
            rc = pvm__poll_input();
    }
    free(tids);
    return pvm__err(rc, "pvm_bcast");
}
