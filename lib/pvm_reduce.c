/*
 * pvm_reduce.c - the group collectives that carry data: pvm_reduce,
 * pvm_gather, pvm_scatter, and PVM's predefined reduction functions
 * PvmMax, PvmMin, PvmSum and PvmProduct.
 *
 * The data travels as ordinary messages with the caller's msgtag in the
 * current context, packed in PvmDataDefault, as PVM 3.4.6's do; they never
 * touch the program's send or receive buffer.  The members come from the
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
 * The predefined functions follow PVM 3.4.6, as measured: Max and Min for
 * PVM_BYTE to PVM_LONG (complex values by modulus), Sum and Product for all
 * of those but PVM_BYTE; another type sets *info to PvmBadParam and leaves
 * x alone.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Send count items at p to tid in a buffer of our own. */
static int
coll_send(int tid, int tag, int type, const void *p, int count)
{
    struct pvm__buf *b;
    const unsigned char *body;
    size_t len;
    int rc = pvm__buf_new(PvmDataDefault, &b);

    if (rc < 0)
        return rc;
    if ((rc = pvm__pack(b, type, p, count, 1)) == 0 &&
        (rc = pvm__buf_flatten(b, &body, &len)) == 0)
        rc = pvm__send_frame(tid, tag, body, len, pvm__buf_encword(b));
    pvm__buf_free(b);
    return rc;
}

/* Wait for the message of src with tag (current context) and unpack it into p. */
static int
coll_recv(int src, int tag, int type, void *p, int count)
{
    int ctx = pvm__context(), rc;

    for (;;) {
        struct pvm__msg *m = pvm__inq_take(src, tag, ctx);
        if (m != NULL) {
            struct pvm__buf *b = m->buf;
            if (b == NULL) {
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
        if ((rc = pvm__pump(-1, NULL, NULL)) < 0)
            return rc;
    }
}

static int
host_of(int tid)
{
    return (tid >> 18) & 0xfff;
}

/* Common checks; the members, my instance and the root's tid. */
static int
coll_begin(const void *data, int count, int datatype, int msgtag, const char *group,
           int rootginst, int **tids, int *ninst, int *me, int *root)
{
    int rc;

    *tids = NULL;
    if ((rc = pvm__group_name_ok(group)) != 0)
        return rc;
    if (count <= 0 || data == NULL || coll_size(datatype) == 0 || msgtag < 0)
        return -EINVAL;
    if ((rc = pvm__group_members(group, tids, ninst, NULL)) != 0)
        return rc;
    *me = -1;
    for (int i = 0; i < *ninst; i++)
        if ((*tids)[i] == pvm__ctx.mytid)
            *me = i;
    if (*me < 0 || rootginst < 0 || rootginst >= *ninst || (*tids)[rootginst] == 0) {
        free(*tids);
        *tids = NULL;
        return WIRE_ENOINST;
    }
    *root = (*tids)[rootginst];
    return 0;
}

/* The member that gathers host h's arrays: the root there, else the lowest instance. */
static int
coordinator(const int *tids, int ninst, int root, int h)
{
    if (host_of(root) == h)
        return root;
    for (int i = 0; i < ninst; i++)
        if (tids[i] != 0 && host_of(tids[i]) == h)
            return tids[i];
    return 0;
}

int
pvm_reduce(void (*func)(int *, void *, void *, int *, int *), void *data, int count,
           int datatype, int msgtag, char *group, int rootginst)
{
    int *tids, ninst, me, root, rc;
    void *tmp = NULL;

    if (func == NULL)
        return pvm__err(-EINVAL, "pvm_reduce");
    /* The types of PVM 3.4.6's pvm_reduce (no unsigned ones, no strings). */
    if (datatype < PVM_BYTE || datatype > PVM_LONG ||
        (datatype == PVM_BYTE && (func == PvmSum || func == PvmProduct)))
        return pvm__err(-EINVAL, "pvm_reduce");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_reduce");
    rc = coll_begin(data, count, datatype, msgtag, group, rootginst, &tids, &ninst, &me, &root);
    if (rc != 0)
        return pvm__err(rc, "pvm_reduce");
    int mytid = pvm__ctx.mytid;
    int myhost = host_of(mytid);
    int coord = coordinator(tids, ninst, root, myhost);
    if (coord != mytid) {
        rc = coll_send(coord, msgtag, datatype, data, count);
        goto done;
    }
    if ((tmp = pvm__malloc(coll_size(datatype) * (size_t)count)) == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    int info = 0, n = count, dt = datatype;
    /* The other members of this host, in instance order. */
    for (int i = 0; i < ninst && rc == 0; i++) {
        if (tids[i] == 0 || tids[i] == mytid || host_of(tids[i]) != myhost)
            continue;
        if ((rc = coll_recv(tids[i], msgtag, datatype, tmp, count)) == 0 && info == 0)
            func(&dt, data, tmp, &n, &info);
    }
    if (rc == 0 && mytid != root) {
        rc = coll_send(root, msgtag, datatype, data, count);
    } else if (rc == 0) {
        /* The root: one array per other host, in the order of their first member. */
        for (int i = 0; i < ninst && rc == 0; i++) {
            int h = tids[i] ? host_of(tids[i]) : myhost;
            if (h == myhost || coordinator(tids, ninst, root, h) != tids[i])
                continue;
            if ((rc = coll_recv(tids[i], msgtag, datatype, tmp, count)) == 0 && info == 0)
                func(&dt, data, tmp, &n, &info);
        }
    }
    if (rc == 0 && info < 0)
        rc = PVM__ECODE(info);
done:
    free(tmp);
    free(tids);
    return pvm__err(rc, "pvm_reduce");
}

int
pvm_gather(void *result, void *data, int count, int datatype, int msgtag, char *group,
           int rootginst)
{
    int *tids, ninst, me, root, rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_gather");
    rc = coll_begin(data, count, datatype, msgtag, group, rootginst, &tids, &ninst, &me, &root);
    if (rc != 0)
        return pvm__err(rc, "pvm_gather");
    size_t sz = coll_size(datatype) * (size_t)count;
    if (root != pvm__ctx.mytid) {
        rc = coll_send(root, msgtag, datatype, data, count);
    } else if (result == NULL) {
        rc = -EINVAL;
    } else {
        memmove((char *)result + (size_t)me * sz, data, sz);
        for (int i = 0; i < ninst && rc == 0; i++)
            if (tids[i] != 0 && i != me)
                rc = coll_recv(tids[i], msgtag, datatype, (char *)result + (size_t)i * sz, count);
    }
    free(tids);
    return pvm__err(rc, "pvm_gather");
}

int
pvm_scatter(void *result, void *data, int count, int datatype, int msgtag, char *group,
            int rootginst)
{
    int *tids, ninst, me, root, rc;

    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_scatter");
    /* data matters on the root only; result everywhere. */
    rc = coll_begin(result, count, datatype, msgtag, group, rootginst, &tids, &ninst, &me, &root);
    if (rc != 0)
        return pvm__err(rc, "pvm_scatter");
    size_t sz = coll_size(datatype) * (size_t)count;
    if (root != pvm__ctx.mytid) {
        rc = coll_recv(root, msgtag, datatype, result, count);
    } else if (data == NULL) {
        rc = -EINVAL;
    } else {
        for (int i = 0; i < ninst && rc == 0; i++)
            if (tids[i] != 0 && i != me)
                rc = coll_send(tids[i], msgtag, datatype, (char *)data + (size_t)i * sz, count);
        if (rc == 0)
            memmove(result, (char *)data + (size_t)me * sz, sz);
    }
    free(tids);
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
