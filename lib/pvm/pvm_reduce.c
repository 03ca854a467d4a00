/*
 * pvm_reduce.c - the group collectives that carry data: pvm_reduce,
 * pvm_gather, pvm_scatter, and PVM's predefined reduction functions
 * PvmMax, PvmMin, PvmSum and PvmProduct.
 *
 * The data travels as ordinary messages with the caller's msgtag in the
 * current context, packed in PvmDataRaw (every host is LINUX64), where
 * PVM 3.4.6's use PvmDataDefault, whose XDR longs are 32 bits: a 64-bit
 * value there would fail to pack (or, in 3.4.6, lose its high half); they
 * never touch the program's send or receive buffer.  The members come from the
 * master's table (pvm_group.c), ordered by instance.
 *
 * pvm_reduce gathers per host, then between hosts: on each host one member
 * (the root on the root's host, else the member with the lowest instance)
 * receives the other local members' arrays over its Unix socket, folds them
 * in with func in instance order, and sends one array to the root, which
 * folds in one array per other host.  So the links between hosts carry one
 * array per host, not one per member, and the order of the folds, hence the
 * result, depends only on the membership.
 *
 * A member that dies never sends.  PVM 3.4.6 then hangs; here whoever
 * waits for it asks, after PVM__COLL_PROBE_MS, whether it can still send
 * (coll_lost) and fails with PvmNoTask once it cannot; a reduce's
 * coordinator tells the root with an empty message.  The fast path costs
 * nothing: the question is asked only by a task that has waited that long.
 *
 * The predefined functions follow PVM 3.4.6, as measured: Max and Min for
 * PVM_BYTE to PVM_LONG (complex values by modulus), Sum and Product for all
 * of those but PVM_BYTE; another type sets *info to PvmBadParam and leaves
 * x alone.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a collective waits for a member before it asks whether that
 * member can still send, and how long before our view a member's death
 * may have misled others (coll_lost). */
#define PVM__COLL_PROBE_MS 250
#define PVM__COLL_RECENT_MS 2000

/* The size of one item of a type a collective takes, or 0. */
static size_t
coll_size(int type)
{
    switch (type) {
    case PVM_BYTE:
        return 1;
    case PVM_SHORT:
    case PVM_USHORT:
        return sizeof(short);
    case PVM_INT:
    case PVM_UINT:
        return sizeof(int);
    case PVM_FLOAT:
        return sizeof(float);
    case PVM_CPLX:
        return 2 * sizeof(float);
    case PVM_DOUBLE:
        return sizeof(double);
    case PVM_DCPLX:
        return 2 * sizeof(double);
    case PVM_LONG:
    case PVM_ULONG:
        return sizeof(long);
    default:
        return 0;
    }
}

/*
 * A collective in progress: the group as the master saw it when we began
 * (our view), and whether senders chose whom to send to from their own
 * view (pvm_reduce's coordinators).
 */
struct coll {
    const char *group;
    struct pvm__gview v;
    int me, root, mytid;
    double t_view;              /* coll_ms() when the view was taken */
    int hier;
};

static double
coll_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Send count items at p to tid in a buffer of our own. */
static int
coll_send(int tid, int tag, int type, const void *p, int count)
{
    struct pvm__buf *b;
    const unsigned char *body;
    size_t len;
    int rc = pvm__buf_new(PvmDataRaw, &b);

    if (rc < 0)
        return rc;
    if ((rc = pvm__pack(b, type, p, count, 1)) == 0 &&
        (rc = pvm__buf_flatten(b, &body, &len)) == 0)
        rc = pvm__send_frame(tid, tag, body, len, pvm__buf_encword(b));
    pvm__buf_free(b);
    return rc;
}


/* An empty message where an array was due: "my part failed".  Data never
 * travels empty (count > 0), so the receiver cannot mistake it. */
static int
coll_send_failed(int tid, int tag)
{
    return pvm__send_frame(tid, tag, NULL, 0, PVM__ENCWORD_XDR);
}

/* coll_send, and if it fails here the empty "my part failed" message
 * instead: the receiver is told, not left waiting. */
static int
coll_send_or_fail(int tid, int tag, int type, const void *p, int count)
{
    int rc = coll_send(tid, tag, type, p, count);

    if (rc != 0)
        (void)coll_send_failed(tid, tag);
    return rc;
}

static int
host_of(int tid)
{
    return WIRE_TID_HOST(tid);
}

static int
inst_of(const struct pvm__gview *v, int tid)
{
    for (int i = 0; i < v->ninst; i++)
        if (v->tids[i] == tid)
            return i;
    return -1;
}

/* Is tid still a task of the VM?  Asked of its own daemon, whose link to
 * ours also carries its messages: what tid sent before it ended is queued
 * here once the answer is. */
static int
task_alive(int tid, int *alive)
{
    struct wire_wbuf req;
    struct wire_rbuf r;
    unsigned char *body = NULL;
    size_t len;
    uint32_t n;

    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)tid);
    int rc = req.err ? req.err : pvm__request(WIRE_T_TASK_LIST, &req, &body, &len);
    wire_wbuf_free(&req);
    *alive = 0;
    if (rc == WIRE_EHOSTFAIL || rc == WIRE_ENOTASK) {
        rc = 0;
    } else if (rc == 0) {
        wire_rbuf_init(&r, body, len);
        if ((rc = wire_get_u32(&r, &n)) == 0)
            *alive = n > 0;
    }
    free(body);
    return rc;
}

/*
 * We have waited a while for src's array: can it still come?  Not if src
 * left the group or the VM (asked in that order, so that an array it sent
 * before is queued by the time we know).  For pvm_reduce, not either if a
 * member died that some member may have taken for the coordinator src
 * stands in for now: one that had a lower instance on src's host (we wait
 * for a host's coordinator) or on ours (we coordinate), and that died
 * around the time we took our view (views taken before its death still
 * hold it, and their arrays went to it).
 */
static int
coll_lost(struct coll *c, int src, int *lost)
{
    struct pvm__gview now;
    int rc = pvm__group_view(c->group, &now), alive = 0;

    *lost = 0;
    if (rc == WIRE_ENOGROUP) {
        *lost = 1;              /* everyone left */
        return 0;
    }
    if (rc != 0)
        return rc;
    if (inst_of(&now, src) < 0) {
        *lost = 1;
    } else if ((rc = task_alive(src, &alive)) != 0) {
        free(now.tids);
        return rc;
    } else if (!alive) {
        *lost = 1;
    }
    /* On the root's host every member sends to the root, whatever its view. */
    if (!*lost && c->hier && !(host_of(src) == host_of(c->mytid) && c->mytid == c->root)) {
        double t = coll_ms();
        int local = host_of(src) == host_of(c->mytid);
        int cmp = local ? c->me : inst_of(&c->v, src);
        int h = host_of(src);
        for (int i = 0; i < now.ndead; i++)
            if (host_of(now.dead[i]) == h && now.dead_inst[i] < cmp &&
                inst_of(&c->v, now.dead[i]) < 0 &&
                t - now.dead_ago_ms[i] >= c->t_view - PVM__COLL_RECENT_MS)
                *lost = 1;
    }
    free(now.tids);
    return 0;
}

/*
 * Wait for the array of src with tag (current context) and unpack it into
 * p.  A member that dies never sends: every PVM__COLL_PROBE_MS we ask
 * whether src can still send (coll_lost); once it cannot, what it may have
 * sent gets one more such wait, then the collective fails with PvmNoTask.
 */
static int
coll_recv(struct coll *c, int src, int tag, int type, void *p, int count)
{
    int ctx = pvm__context(), rc, lost = 0;
    double next = coll_ms() + PVM__COLL_PROBE_MS;

    for (;;) {
        struct pvm__msg *m = pvm__inq_take(src, tag, ctx);
        if (m != NULL) {
            struct pvm__buf *b = m->buf;
            if (b == NULL && m->len == 0) {
                rc = WIRE_ENOTASK;      /* the sender's part failed */
            } else if (b == NULL) {
                if ((rc = pvm__buf_adopt(m->encword, m->data, m->len, m->len, 0, &b)) != 0) {
                    pvm__msg_free(m);
                    return rc;
                }
                m->data = NULL;
                rc = pvm__unpack(b, type, p, count, 1);
                pvm__buf_free(b);
            } else {
                b->pos = 0;
                rc = pvm__unpack(b, type, p, count, 1);
            }
            pvm__msg_free(m);
            return rc;
        }
        double left = next - coll_ms();
        if (left <= 0) {
            if (lost)
                return WIRE_ENOTASK;
            if ((rc = coll_lost(c, src, &lost)) < 0)
                return rc;
            next = coll_ms() + PVM__COLL_PROBE_MS;
            continue;
        }
        if ((rc = pvm__pump((int)left + 1, NULL, NULL)) < 0)
            return rc;
    }
}

/* Common checks; our view of the members, my instance and the root's tid. */
static int
coll_begin(struct coll *c, const void *data, int count, int datatype, int msgtag,
           const char *group, int rootginst)
{
    int rc;

    memset(c, 0, sizeof(*c));
    c->group = group;
    if ((rc = pvm__group_name_ok(group)) != 0)
        return rc;
    if (count <= 0 || data == NULL || coll_size(datatype) == 0 || msgtag < 0)
        return -EINVAL;
    if ((rc = pvm__group_view(group, &c->v)) != 0)
        return rc;
    c->t_view = coll_ms();
    c->mytid = pvm__ctx.mytid;
    c->me = inst_of(&c->v, c->mytid);
    if (c->me < 0 || rootginst < 0 || rootginst >= c->v.ninst || c->v.tids[rootginst] == 0) {
        free(c->v.tids);
        c->v.tids = NULL;
        return WIRE_ENOINST;
    }
    c->root = c->v.tids[rootginst];
    return 0;
}

/* The member that gathers host h's arrays: the root there, else the lowest instance. */
static int
coordinator(const struct coll *c, int h)
{
    if (host_of(c->root) == h)
        return c->root;
    for (int i = 0; i < c->v.ninst; i++)
        if (c->v.tids[i] != 0 && host_of(c->v.tids[i]) == h)
            return c->v.tids[i];
    return 0;
}

/*
 * A member that dies: whoever waits for it fails with PvmNoTask once it is
 * known (coll_recv), but still takes what the others send, so that nothing
 * of this collective is left queued; a coordinator whose part failed tells
 * the root with an empty message, so the root fails at once too.
 */
int
pvm_reduce(void (*func)(int *, void *, void *, int *, int *), void *data, int count,
           int datatype, int msgtag, char *group, int rootginst)
{
    struct coll c;
    void *tmp = NULL;
    int rc;

    if (func == NULL)
        return pvm__err(-EINVAL, "pvm_reduce");
    /* The types of PVM 3.4.6's pvm_reduce (no unsigned ones, no strings). */
    if (datatype < PVM_BYTE || datatype > PVM_LONG ||
        (datatype == PVM_BYTE && (func == PvmSum || func == PvmProduct)))
        return pvm__err(-EINVAL, "pvm_reduce");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_reduce");
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    if ((rc = coll_begin(&c, data, count, datatype, msgtag, group, rootginst)) != 0)
        return pvm__err(rc, "pvm_reduce");
    c.hier = 1;
    int myhost = host_of(c.mytid);
    int coord = coordinator(&c, myhost);
    if (coord != c.mytid) {
        rc = coll_send_or_fail(coord, msgtag, datatype, data, count);
        goto done;
    }
    if ((tmp = pvm__malloc(coll_size(datatype) * (size_t)count)) == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    int info = 0, n = count, dt = datatype, r;
    /* The other members of this host, in instance order. */
    for (int i = 0; i < c.v.ninst; i++) {
        int t = c.v.tids[i];
        if (t == 0 || t == c.mytid || host_of(t) != myhost)
            continue;
        if ((r = coll_recv(&c, t, msgtag, datatype, tmp, count)) == 0 && rc == 0 && info == 0)
            func(&dt, data, tmp, &n, &info);
        else if (r != 0 && rc == 0)
            rc = r;
    }
    if (c.mytid != c.root) {
        r = rc == 0 ? coll_send_or_fail(c.root, msgtag, datatype, data, count)
                    : coll_send_failed(c.root, msgtag);
        if (rc == 0)
            rc = r;
    } else {
        /* The root: one array per other host, in the order of their first member. */
        for (int i = 0; i < c.v.ninst; i++) {
            int t = c.v.tids[i];
            int h = t ? host_of(t) : myhost;
            if (h == myhost || coordinator(&c, h) != t)
                continue;
            if ((r = coll_recv(&c, t, msgtag, datatype, tmp, count)) == 0 && rc == 0 &&
                info == 0)
                func(&dt, data, tmp, &n, &info);
            else if (r != 0 && rc == 0)
                rc = r;
        }
    }
    if (rc == 0 && info < 0)
        rc = PVM__ECODE(info);
done:
    free(tmp);
    free(c.v.tids);
    pvm__trace_coll(PVM__TC_REDUCE, t0);
    return pvm__err(rc, "pvm_reduce");
}

int
pvm_gather(void *result, void *data, int count, int datatype, int msgtag, char *group,
           int rootginst)
{
    struct coll c;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_gather");
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    if ((rc = coll_begin(&c, data, count, datatype, msgtag, group, rootginst)) != 0)
        return pvm__err(rc, "pvm_gather");
    size_t sz = coll_size(datatype) * (size_t)count;
    if (c.root != c.mytid) {
        rc = coll_send_or_fail(c.root, msgtag, datatype, data, count);
    } else if (result == NULL) {
        rc = -EINVAL;
    } else {
        memmove((char *)result + (size_t)c.me * sz, data, sz);
        /* Every member's array, even after one failed (see pvm_reduce). */
        for (int i = 0; i < c.v.ninst; i++)
            if (c.v.tids[i] != 0 && i != c.me) {
                int r = coll_recv(&c, c.v.tids[i], msgtag, datatype,
                                  (char *)result + (size_t)i * sz, count);
                if (r != 0 && rc == 0)
                    rc = r;
            }
    }
    free(c.v.tids);
    pvm__trace_coll(PVM__TC_GATHER, t0);
    return pvm__err(rc, "pvm_gather");
}

int
pvm_scatter(void *result, void *data, int count, int datatype, int msgtag, char *group,
            int rootginst)
{
    struct coll c;
    int rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_scatter");
    int64_t t0 = pvm__tracing() ? pvm__trace_begin() : 0;
    /* data matters on the root only; result everywhere. */
    if ((rc = coll_begin(&c, result, count, datatype, msgtag, group, rootginst)) != 0)
        return pvm__err(rc, "pvm_scatter");
    size_t sz = coll_size(datatype) * (size_t)count;
    if (c.root != c.mytid) {
        rc = coll_recv(&c, c.root, msgtag, datatype, result, count);
    } else if (data == NULL) {
        /* The members wait for their part: they learn that there is none. */
        for (int i = 0; i < c.v.ninst; i++)
            if (c.v.tids[i] != 0 && i != c.me)
                coll_send_failed(c.v.tids[i], msgtag);
        rc = -EINVAL;
    } else {
        /* Every member gets its part, even after a send to one failed. */
        for (int i = 0; i < c.v.ninst; i++)
            if (c.v.tids[i] != 0 && i != c.me) {
                int r = coll_send_or_fail(c.v.tids[i], msgtag, datatype,
                                          (char *)data + (size_t)i * sz, count);
                if (r != 0 && rc == 0)
                    rc = r;
            }
        memmove(result, (char *)data + (size_t)c.me * sz, sz);
    }
    free(c.v.tids);
    pvm__trace_coll(PVM__TC_SCATTER, t0);
    return pvm__err(rc, "pvm_scatter");
}

/* ---- the predefined functions ---- */

enum pvm__op { OP_MAX, OP_MIN, OP_SUM, OP_PROD };

#define PVM__FOLD(T, W)                                                        \
    do {                                                                      \
        T *a = x;                                                             \
        const T *b = y;                                                       \
        for (int i = 0; i < n; i++)                                           \
            switch (op) {                                                     \
            case OP_MAX:                                                      \
                if (b[i] > a[i])                                              \
                    a[i] = b[i];                                              \
                break;                                                        \
            case OP_MIN:                                                      \
                if (b[i] < a[i])                                              \
                    a[i] = b[i];                                              \
                break;                                                        \
            case OP_SUM:                                                      \
                a[i] = (T)((W)a[i] + (W)b[i]);                                \
                break;                                                        \
            case OP_PROD:                                                     \
                a[i] = (T)((W)a[i] * (W)b[i]);                                \
                break;                                                        \
            }                                                                 \
    } while (0)

/* W: the type the sum and product are computed in; unsigned for the
 * integers, so that they wrap around as PVM's did instead of overflowing. */

/* Complex pairs (re, im): max and min by modulus, the product complex. */
#define PVM__FOLD_CPLX(T)                                                     \
    do {                                                                      \
        T *a = x;                                                             \
        const T *b = y;                                                       \
        for (int i = 0; i < 2 * n; i += 2) {                                  \
            T ma = a[i] * a[i] + a[i + 1] * a[i + 1];                         \
            T mb = b[i] * b[i] + b[i + 1] * b[i + 1];                         \
            T re, im;                                                         \
            switch (op) {                                                     \
            case OP_MAX:                                                      \
            case OP_MIN:                                                      \
                if (op == OP_MAX ? mb > ma : mb < ma) {                       \
                    a[i] = b[i];                                              \
                    a[i + 1] = b[i + 1];                                      \
                }                                                             \
                break;                                                        \
            case OP_SUM:                                                      \
                a[i] += b[i];                                                 \
                a[i + 1] += b[i + 1];                                         \
                break;                                                        \
            case OP_PROD:                                                     \
                re = a[i] * b[i] - a[i + 1] * b[i + 1];                       \
                im = a[i] * b[i + 1] + a[i + 1] * b[i];                       \
                a[i] = re;                                                    \
                a[i + 1] = im;                                                \
                break;                                                        \
            }                                                                 \
        }                                                                     \
    } while (0)

static void
fold(enum pvm__op op, const int *datatype, void *x, const void *y, const int *num, int *info)
{
    int n = num ? *num : -1;

    if (datatype == NULL || x == NULL || y == NULL || n < 0) {
        if (info)
            *info = PvmBadParam;
        return;
    }
    switch (*datatype) {
    case PVM_BYTE:
        if (op == OP_SUM || op == OP_PROD)
            goto bad;
        PVM__FOLD(char, unsigned int);
        break;
    case PVM_SHORT:
        PVM__FOLD(short, unsigned int);
        break;
    case PVM_INT:
        PVM__FOLD(int, unsigned int);
        break;
    case PVM_LONG:
        PVM__FOLD(long, unsigned long);
        break;
    case PVM_FLOAT:
        PVM__FOLD(float, float);
        break;
    case PVM_DOUBLE:
        PVM__FOLD(double, double);
        break;
    case PVM_CPLX:
        PVM__FOLD_CPLX(float);
        break;
    case PVM_DCPLX:
        PVM__FOLD_CPLX(double);
        break;
    default:
        goto bad;
    }
    if (info)
        *info = PvmOk;
    return;
bad:
    if (info)
        *info = PvmBadParam;
}

void
PvmMax(int *datatype, void *x, void *y, int *num, int *info)
{
    fold(OP_MAX, datatype, x, y, num, info);
}

void
PvmMin(int *datatype, void *x, void *y, int *num, int *info)
{
    fold(OP_MIN, datatype, x, y, num, info);
}

void
PvmSum(int *datatype, void *x, void *y, int *num, int *info)
{
    fold(OP_SUM, datatype, x, y, num, info);
}

void
PvmProduct(int *datatype, void *x, void *y, int *num, int *info)
{
    fold(OP_PROD, datatype, x, y, num, info);
}
