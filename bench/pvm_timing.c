/*
 * pvm_timing.c - PVM's timing protocol (pvm-examples timing.c and
 * timing_slave.c) between two tasks, as a benchmark that prints figures.
 *
 * The master spawns a copy of itself (the slave) on the host named with -H,
 * waits for its "ready" message, then times round trips as timing.c does:
 * a 4-byte message answered by a 4-byte message, then messages of 100 B,
 * 1 KB, 10 KB, 100 KB and 1 MB (ints, PvmDataRaw) each answered by the
 * slave's 4-byte reply.  The send and the receive of the reply are timed;
 * packing is timed apart (timing.c's "Pack uSec").  With -d both tasks ask
 * for PvmRouteDirect first, as timing.c and timing_slave.c do.  With -i
 * the master packs with PvmDataInPlace instead of PvmDataRaw (the message
 * refers to the array, which is read when it is sent; no pack copy).
 *
 * The same source is built against our pvm3.h (build/bench/pvm_timing) and
 * against real PVM 3.4.6 (build/bench/pvm_timing_pvm, PVM_TIMING_IMPL set
 * by bench/build.mk); bench/pvm_timing.sh runs both and prints them side
 * by side.
 *
 *   pvm_timing [-H HOST] [-d] [-i] [-r REPS] [-w WARMUP] [--json]
 *
 * Exit status: 0 ok, 1 a PVM call failed or a reply did not come within
 * 30 s, 2 bad usage.
 */
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#ifndef PVM_TIMING_IMPL
#define PVM_TIMING_IMPL "LiquidVM"
#endif

#define TAG_READY 0
#define TAG_PING 1
#define TAG_PONG 2
#define TAG_STOP 99
#define REPLY_TIMEOUT_S 30
#define MAX_REPS 100000

static const int sizes[] = { 4, 100, 1000, 10000, 100000, 1000000 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

struct result {
    int bytes;
    double median_us, mean_us, min_us, pack_us;
};

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
usage(const char *me)
{
    fprintf(stderr, "usage: %s [-H HOST] [-d] [-i] [-r REPS] [-w WARMUP] [--json]\n", me);
    exit(2);
}

/* The slave: timing_slave.c, answering every message with its 4-byte tid. */
static int
slave(int direct)
{
    int mytid = pvm_mytid(), bufid, src, tag, ptid = pvm_parent();

    if (mytid < 0 || ptid < 0)
        return 1;
    if (direct)
        pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_initsend(PvmDataRaw);
    if (pvm_send(ptid, TAG_READY) < 0)
        goto fail;
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&mytid, 1, 1);
    for (;;) {
        if ((bufid = pvm_recv(-1, -1)) < 0)
            goto fail;
        if (pvm_bufinfo(bufid, NULL, &tag, &src) < 0)
            goto fail;
        pvm_freebuf(bufid);
        if (tag == TAG_STOP)
            break;
        if (pvm_send(src, TAG_PONG) < 0)
            goto fail;
    }
    pvm_exit();
    return 0;
fail:
    pvm_exit();
    return 1;
}

/* One timed round trip of the current send buffer; 0 or -1. */
static int
round_trip(int stid, double *us)
{
    double t0 = now_us();
    int bufid;

    if (pvm_send(stid, TAG_PING) < 0) {
        pvm_perror("pvm_timing: pvm_send");
        return -1;
    }
    bufid = pvm_trecv(stid, TAG_PONG, &(struct timeval){ REPLY_TIMEOUT_S, 0 });
    if (bufid <= 0) {
        if (bufid == 0)
            fprintf(stderr, "pvm_timing: no reply within %d s\n", REPLY_TIMEOUT_S);
        else
            pvm_perror("pvm_timing: pvm_trecv");
        return -1;
    }
    *us = now_us() - t0;
    pvm_freebuf(bufid);
    return 0;
}

int
main(int argc, char **argv)
{
    char *host = NULL, *me = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int direct = 0, reps = 20, warmup = 3, json = 0, stid = -1, i, s, rc = 1;
    int enc = PvmDataRaw;
    struct result res[NSIZES];
    double *rt = NULL, *pk = NULL;
    int *iarray = NULL;
    char *slave_argv[3] = { "-slave", NULL, NULL };

    if (argc >= 2 && strcmp(argv[1], "-slave") == 0)
        return slave(argc >= 3 && strcmp(argv[2], "-d") == 0);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-H") == 0 && i + 1 < argc)
            host = argv[++i];
        else if (strcmp(argv[i], "-d") == 0)
            direct = 1;
        else if (strcmp(argv[i], "-i") == 0)
            enc = PvmDataInPlace;
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            usage(me);
    }
    if (reps < 1 || reps > MAX_REPS || warmup < 0 || warmup > MAX_REPS)
        usage(me);

    if (pvm_mytid() < 0) {
        fprintf(stderr, "%s: cannot enroll in the virtual machine\n", me);
        return 1;
    }
    rt = malloc((size_t)reps * sizeof *rt);
    pk = malloc((size_t)reps * sizeof *pk);
    iarray = calloc((size_t)sizes[NSIZES - 1] / 4, sizeof *iarray);
    if (rt == NULL || pk == NULL || iarray == NULL) {
        fprintf(stderr, "%s: out of memory\n", me);
        goto done;
    }
    /* Data, as a program sends: untouched calloc'ed pages are all the one
     * zero page, which stays in the cache however much is copied. */
    for (i = 0; i < sizes[NSIZES - 1] / 4; i++)
        iarray[i] = i;
    if (direct) {
        pvm_setopt(PvmRoute, PvmRouteDirect);
        slave_argv[1] = "-d";
    }
    if (pvm_spawn(me, slave_argv, host ? PvmTaskHost : PvmTaskDefault, host ? host : "",
                  1, &stid) != 1 || stid < 0) {
        fprintf(stderr, "%s: cannot spawn the slave%s%s (%d)\n", me, host ? " on " : "",
                host ? host : "", stid);
        stid = -1;
        goto done;
    }
    if (pvm_trecv(stid, TAG_READY, &(struct timeval){ REPLY_TIMEOUT_S, 0 }) <= 0) {
        fprintf(stderr, "%s: the slave t%x did not start\n", me, (unsigned)stid);
        goto done;
    }

    for (s = 0; s < NSIZES; s++) {
        int n = sizes[s] / 4;

        if (!json) {
            fprintf(stderr, "\r%s %s: %7d B ...", PVM_TIMING_IMPL, direct ? "direct" : "default",
                    sizes[s]);
            fflush(stderr);
        }
        for (i = -warmup; i < reps; i++) {
            double t0 = now_us(), us;

            /* The 4-byte test packs once, as timing.c does; the others pack every time. */
            if (s > 0 || i == -warmup) {
                if (pvm_initsend(enc) < 0 || pvm_pkint(iarray, n, 1) < 0) {
                    pvm_perror("pvm_timing: packing");
                    goto done;
                }
            }
            if (i >= 0)
                pk[i] = now_us() - t0;
            if (round_trip(stid, &us) != 0) {
                fprintf(stderr, "\n%s: round trip of %d B failed\n", me, sizes[s]);
                goto done;
            }
            if (i >= 0)
                rt[i] = us;
        }
        res[s].bytes = sizes[s];
        res[s].mean_us = 0;
        for (i = 0; i < reps; i++)
            res[s].mean_us += rt[i] / reps;
        res[s].median_us = median(rt, reps);
        res[s].min_us = rt[0];
        res[s].pack_us = median(pk, reps);
    }
    if (!json)
        fprintf(stderr, "\r%60s\r", "");

    if (json) {
        printf("{\"impl\":\"%s\",\"route\":\"%s\",\"slave_host\":\"%s\",\"reps\":%d,\"results\":[",
               PVM_TIMING_IMPL, direct ? "direct" : "default", host ? host : "", reps);
        for (s = 0; s < NSIZES; s++)
            printf("%s{\"bytes\":%d,\"median_us\":%.1f,\"mean_us\":%.1f,\"min_us\":%.1f,"
                   "\"pack_us\":%.1f}", s ? "," : "", res[s].bytes, res[s].median_us,
                   res[s].mean_us, res[s].min_us, res[s].pack_us);
        printf("]}\n");
    } else {
        printf("%s, route %s, slave t%x%s%s, %d round trips per size (median)\n", PVM_TIMING_IMPL,
               direct ? "PvmRouteDirect" : "default", (unsigned)stid, host ? " on " : "",
               host ? host : "", reps);
        printf("%9s %12s %12s %12s %10s %10s\n", "bytes", "median us", "mean us", "min us",
               "pack us", "MB/s");
        for (s = 0; s < NSIZES; s++)
            printf("%9d %12.1f %12.1f %12.1f %10.1f %10.1f\n", res[s].bytes, res[s].median_us,
                   res[s].mean_us, res[s].min_us, res[s].pack_us,
                   res[s].bytes / res[s].median_us);
    }
    rc = 0;
done:
    if (stid > 0) {
        pvm_initsend(PvmDataRaw);
        if (rc != 0 || pvm_send(stid, TAG_STOP) < 0)
            pvm_kill(stid);
    }
    free(rt);
    free(pk);
    free(iarray);
    pvm_exit();
    return rc;
}
