/*
 * pvm_groups - group collectives checked against a sequential computation
 * (issue 4).  Written only against pvm3.h.  Started from the shell, it
 * joins a group, spawns N-1 copies of itself, and every copy runs the same
 * checks:
 *
 *   pvm_groups reduce N   every predefined function and a user function
 *                         on every type pvm_reduce takes, with the root
 *                         moving through the members; pvm_gather and
 *                         pvm_scatter of every type; the root compares with
 *                         the same fold done sequentially in instance order
 *   pvm_groups death N    a barrier, then member 1 dies (SIGKILL) and the
 *                         others call the next barrier, some before the
 *                         death is known, one after: it must end with an
 *                         error for all, not hang; the others report to the
 *                         first task, which prints "survivors: K of M
 *                         returned, E failed"
 *   pvm_groups OP N [V]   OP is reduce-death, gather-death, scatter-death or
 *                         bcast-death: after a barrier of all, member V
 *                         (default 1) dies 300 ms later without taking part
 *                         while the others are in the collective (root 0;
 *                         for scatter-death the root is V itself; for
 *                         bcast-death the root sends once V is dead).
 *                         Every survivor reports its result to the first
 *                         task, which prints "root: RC", "survivors: K of
 *                         M returned, E failed" and, for bcast-death,
 *                         "received: R"; the test's timeout catches a hang
 *
 * The first task prints "ok CHECKS" or one line per mismatch, then "done";
 * the exit status is 0 if nothing failed.  Values are small integers, so
 * that every fold order gives the same floating-point result.
 */
#include <pvm3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define COUNT 5
#define MAXN 32

static const int types[] = { PVM_BYTE, PVM_SHORT, PVM_INT, PVM_FLOAT,
                             PVM_CPLX, PVM_DOUBLE, PVM_DCPLX, PVM_LONG };
static const char *const tnames[] = { "byte", "short", "int", "float",
                                      "cplx", "double", "dcplx", "long" };
#define NTYPES 8

static size_t
tsize(int t)
{
    switch (t) {
    case PVM_BYTE: return 1;
    case PVM_SHORT: return sizeof(short);
    case PVM_INT: return sizeof(int);
    case PVM_FLOAT: return sizeof(float);
    case PVM_CPLX: return 2 * sizeof(float);
    case PVM_DOUBLE: return sizeof(double);
    case PVM_DCPLX: return 2 * sizeof(double);
    default: return sizeof(long);
    }
}

/* Member inst's input for element i (components: 2 per complex item). */
static double
value(int inst, int i, int comp)
{
    return (double)(((inst * 7 + i * 3 + comp * 5) % 9) - 3);
}

/* Max and min of complex values go by modulus; with the imaginary parts 0
 * and the real parts >= 0, equal moduli mean equal values, so the fold
 * order cannot show. */
static int real_only;

static void
fill(int type, void *p, int inst)
{
    for (int i = 0; i < COUNT; i++)
        switch (type) {
        case PVM_BYTE: ((char *)p)[i] = (char)value(inst, i, 0); break;
        case PVM_SHORT: ((short *)p)[i] = (short)value(inst, i, 0); break;
        case PVM_INT: ((int *)p)[i] = (int)value(inst, i, 0); break;
        case PVM_LONG: ((long *)p)[i] = (long)value(inst, i, 0); break;
        case PVM_FLOAT: ((float *)p)[i] = (float)value(inst, i, 0); break;
        case PVM_DOUBLE: ((double *)p)[i] = value(inst, i, 0); break;
        case PVM_CPLX:
            ((float *)p)[2 * i] = (float)(value(inst, i, 0) + 3 * real_only);
            ((float *)p)[2 * i + 1] = real_only ? 0.0f : (float)value(inst, i, 1);
            break;
        case PVM_DCPLX:
            ((double *)p)[2 * i] = value(inst, i, 0) + 3 * real_only;
            ((double *)p)[2 * i + 1] = real_only ? 0.0 : value(inst, i, 1);
            break;
        }
}

/* A user function (associative and commutative, as pvm_reduce needs):
 * the larger magnitude, on ints only. */
static void
absmax(int *datatype, void *x, void *y, int *num, int *info)
{
    int *a = x, *b = y;
    if (*datatype != PVM_INT) {
        *info = PvmBadParam;
        return;
    }
    for (int i = 0; i < *num; i++) {
        int u = abs(a[i]), v = abs(b[i]);
        a[i] = u > v ? u : v;
    }
    *info = PvmOk;
}

typedef void (*redfn)(int *, void *, void *, int *, int *);

static int checks, failures;

static void
fail(const char *what, const char *type, int root)
{
    failures++;
    printf("MISMATCH %s %s root %d\n", what, type, root);
}

static int
run_reduce(char *g, int n, int me)
{
    redfn fns[] = { PvmMax, PvmMin, PvmSum, PvmProduct, absmax };
    const char *fnames[] = { "max", "min", "sum", "product", "user" };
    unsigned char data[COUNT * 16], want[COUNT * 16], other[COUNT * 16];
    unsigned char all[MAXN * COUNT * 16], part[COUNT * 16];
    int round = 0;

    for (int f = 0; f < 5; f++)
        for (int t = 0; t < NTYPES; t++) {
            int type = types[t];
            if ((f == 2 || f == 3) && type == PVM_BYTE)
                continue;       /* PVM has no Sum or Product of bytes */
            if (f == 4 && type != PVM_INT)
                continue;
            int root = round++ % n;
            real_only = f < 2;
            fill(type, data, me);
            int rc = pvm_reduce(fns[f], data, COUNT, type, 100 + round, g, root);
            if (rc < 0) {
                printf("reduce %s %s: %d\n", fnames[f], tnames[t], rc);
                fail(fnames[f], tnames[t], root);
                continue;
            }
            if (me != root)
                continue;
            /* The sequential fold, in instance order. */
            int dt = type, num = COUNT, info = 0;
            fill(type, want, 0);
            for (int k = 1; k < n; k++) {
                fill(type, other, k);
                fns[f](&dt, want, other, &num, &info);
            }
            checks++;
            if (info != 0 || memcmp(want, data, tsize(type) * COUNT) != 0)
                fail(fnames[f], tnames[t], root);
        }
    /* Gather and scatter of every type, roots moving too. */
    real_only = 0;
    for (int t = 0; t < NTYPES; t++) {
        int type = types[t], root = (t + 1) % n;
        size_t sz = tsize(type) * COUNT;
        fill(type, data, me);
        memset(all, 0, sizeof(all));
        if (pvm_gather(all, data, COUNT, type, 300 + t, g, root) < 0)
            fail("gather", tnames[t], root);
        else if (me == root) {
            checks++;
            for (int k = 0; k < n; k++) {
                fill(type, want, k);
                if (memcmp(all + k * sz, want, sz) != 0) {
                    fail("gather", tnames[t], root);
                    break;
                }
            }
        }
        /* The root scatters member k's fill to member k. */
        for (int k = 0; k < n; k++)
            fill(type, all + k * sz, k + 10);
        memset(part, 0, sizeof(part));
        if (pvm_scatter(part, all, COUNT, type, 400 + t, g, root) < 0) {
            fail("scatter", tnames[t], root);
        } else {
            fill(type, want, me + 10);
            checks++;
            if (memcmp(part, want, sz) != 0)
                fail("scatter", tnames[t], root);
        }
    }
    /* Longs past 32 bits (a Fortran INTEGER8 of 3e9): summed whole, not
     * refused by a 32-bit XDR long on one member while the root waits. */
    long big[2] = { 3000000000L + me, -3000000000L }, bigsum[2];

    memcpy(bigsum, big, sizeof(big));
    checks++;
    if (pvm_reduce(PvmSum, bigsum, 2, PVM_LONG, 502, g, 0) != 0)
        fail("reduce of longs past 32 bits", "long", 0);
    else if (me == 0 && (bigsum[0] != 3000000000L * n + (long)n * (n - 1) / 2 ||
                         bigsum[1] != -3000000000L * n))
        fail("reduce of longs past 32 bits: the sum", "long", 0);
    /* Types and functions PVM refuses. */
    unsigned u[COUNT] = { 0 };
    int old = pvm_setopt(PvmAutoErr, 0);
    checks += 2;
    if (pvm_reduce(PvmSum, u, COUNT, PVM_UINT, 500, g, 0) != PvmBadParam)
        fail("reduce refuses", "uint", 0);
    if (pvm_reduce(PvmSum, data, COUNT, PVM_BYTE, 501, g, 0) != PvmBadParam)
        fail("sum refuses", "byte", 0);
    pvm_setopt(PvmAutoErr, old);
    return 0;
}

#define TAG_COLL 700
#define TAG_REPORT 701
#define TAG_BCAST 702

/* A collective with member victim dying during it (see the head comment). */
static int
run_death(const char *op, char *g, int n, int me, int victim)
{
    int data[COUNT], all[MAXN * COUNT], rc = 0, got = -1;

    for (int i = 0; i < COUNT; i++)
        data[i] = me + i;
    for (int i = 0; i < MAXN * COUNT; i++)
        all[i] = i;
    if (me == victim) {
        usleep(300000);
        fflush(stdout);
        raise(SIGKILL);
    }
    int old = pvm_setopt(PvmAutoErr, 0);
    if (strcmp(op, "reduce-death") == 0) {
        rc = pvm_reduce(PvmSum, data, COUNT, PVM_INT, TAG_COLL, g, 0);
    } else if (strcmp(op, "gather-death") == 0) {
        rc = pvm_gather(all, data, COUNT, PVM_INT, TAG_COLL, g, 0);
    } else if (strcmp(op, "scatter-death") == 0) {
        rc = pvm_scatter(data, all, COUNT, PVM_INT, TAG_COLL, g, victim);
    } else if (strcmp(op, "bcast-death") == 0) {
        if (me == 0) {
            usleep(600000);     /* the victim is dead by now */
            pvm_initsend(PvmDataDefault);
            pvm_pkint(data, COUNT, 1);
            rc = pvm_bcast(g, TAG_BCAST);
        } else {
            rc = pvm_recv(pvm_parent(), TAG_BCAST);
            if (rc >= 0 && pvm_upkint(&got, 1, 1) >= 0 && got == 0)
                rc = 0;
            else
                rc = rc < 0 ? rc : -1;
        }
    } else {
        return 2;
    }
    pvm_setopt(PvmAutoErr, old);
    if (me != 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&rc, 1, 1);
        pvm_send(pvm_parent(), TAG_REPORT);
        pvm_exit();
        return 0;
    }
    int returned = 0, failed = 0, received = 0;
    struct timeval tmo = { 20, 0 };
    for (int k = 0; k < n - 2; k++) {
        int r;
        if (pvm_trecv(-1, TAG_REPORT, &tmo) <= 0 || pvm_upkint(&r, 1, 1) < 0)
            break;
        returned++;
        failed += r < 0;
        received += r == 0;
    }
    printf("%s, member %d dead: root: %d\n", op, victim, rc);
    printf("survivors: %d of %d returned, %d failed\n", returned, n - 2, failed);
    if (strcmp(op, "bcast-death") == 0)
        printf("received: %d\n", received);
    printf("done\n");
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    char g[64];
    int n, me, tids[MAXN];

    if (argc < 3 || (n = atoi(argv[2])) < 2 || n > MAXN)
        return 2;
    int victim = argc > 3 ? atoi(argv[3]) : 1;
    if (victim < 1 || victim >= n)
        return 2;
    /* One group per mode and victim: a run's members may still be leaving
     * the group when the next run starts. */
    snprintf(g, sizeof(g), "pvm_groups.%.20s.%d", argv[1], victim);
    setvbuf(stdout, NULL, _IOLBF, 0);   /* children's lines reach the parent at once */
    int mytid = pvm_mytid();
    if (mytid < 0)
        return 1;
    if ((me = pvm_joingroup(g)) < 0)
        return 1;
    if (pvm_parent() == PvmNoParent) {
        char *args[] = { argv[1], argv[2], argc > 3 ? argv[3] : NULL, NULL };
        pvm_catchout(stdout);
        char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        if (pvm_spawn(prog, args, PvmTaskDefault, "", n - 1, tids) != n - 1) {
            printf("spawn failed\n");
            return 1;
        }
    }
    if (pvm_barrier(g, n) < 0) {
        printf("first barrier failed\n");
        return 1;
    }
    if (strcmp(argv[1], "reduce") == 0) {
        run_reduce(g, n, me);
        /* Everyone's verdict at instance 0. */
        int f = failures, total = 0;
        pvm_reduce(PvmSum, &f, 1, PVM_INT, 600, g, 0);
        total = f;
        pvm_barrier(g, n);
        if (me == 0) {
            if (total == 0)
                printf("ok %d checks\n", checks);
            else {
                sleep(1);   /* the members' reports are on their way */
                printf("%d failures in all\n", total);
            }
            printf("done\n");
        }
        pvm_lvgroup(g);
        pvm_exit();
        return total == 0 && failures == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "death") == 0) {
        if (me == 1) {
            fflush(stdout);
            raise(SIGKILL);
        }
        /* Instance 0 waits before the death is known, instance 2 calls the
         * barrier after it: both must end with an error. */
        if (me == 2)
            usleep(300000);
        int rc = pvm_barrier(g, n);
        if (me != 0) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&rc, 1, 1);
            pvm_send(pvm_parent(), TAG_REPORT);
        } else {
            int returned = 0, failed = 0;
            struct timeval tmo = { 20, 0 };
            for (int k = 0; k < n - 2; k++) {
                int r;
                if (pvm_trecv(-1, TAG_REPORT, &tmo) <= 0 || pvm_upkint(&r, 1, 1) < 0)
                    break;
                returned++;
                failed += r < 0;
            }
            printf("barrier with a dead member: %d (%s)\n", rc,
                   rc == PvmNoTask ? "PvmNoTask" : rc < 0 ? "error" : "passed");
            printf("survivors: %d of %d returned, %d failed\n", returned, n - 2, failed);
            printf("done\n");
        }
        pvm_exit();
        return rc < 0 ? 0 : 1;
    }
    if (strstr(argv[1], "-death") != NULL)
        return run_death(argv[1], g, n, me, victim);
    return 2;
}
