/*
 * pvm_tracer - a PVM program for the trace tests (issue 27), written only
 * against pvm3.h: it turns tracing on through PVM's own interface, spawns
 * itself once and plays ping-pong with the child.
 *
 *   pvm_tracer MODE ROUNDS BYTES [WORK_US]
 *
 * MODE says how tracing is asked for: "mask" sets its own trace mask and
 * the children's (pvm_settmask), "flag" spawns the child with PvmTaskTrace
 * only, "tracer" names itself its tracer (PvmSelfTraceTid, with code 77,
 * which the children's PvmTraceTid follows), "none" asks for nothing
 * (LIQUIDVM_TRACE may still trace it), and
 * "dontroute" asks for nothing but sets PvmRoute to PvmDontRoute before
 * anything else (the program's own option, which hints must not change),
 * "noexit" asks for nothing and returns from main without pvm_exit (its
 * trace must be whole all the same).
 * It prints the masks it reads back, its options, and the mean round trip
 * (with WORK_US microseconds of spinning before each send: a grain, for
 * bench/pvm_trace_overhead.sh).
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_PING 7
#define TAG_STOP 8

static int
child(void)
{
    int parent = pvm_parent();
    char *buf = NULL;
    int n = 0;

    for (;;) {
        int b = pvm_recv(parent, -1), len, tag, src;

        if (b < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0)
            return 1;
        if (tag == TAG_STOP)
            break;
        if (len > n && (buf = realloc(buf, (size_t)len)) == NULL)
            return 1;
        n = len > n ? len : n;
        pvm_upkbyte(buf, len, 1);
        pvm_initsend(PvmDataRaw);
        pvm_pkbyte(buf, len, 1);
        pvm_send(parent, TAG_PING);
    }
    free(buf);
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    char mask[64], back[64], *buf;
    int rounds, bytes, tid, flags = PvmTaskDefault;
    struct timespec t0, t1, w0, w1;
    double work;

    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child();
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: pvm_tracer mask|flag|tracer|none|dontroute|noexit "
                        "ROUNDS BYTES [WORK_US]\n");
        return 2;
    }
    rounds = atoi(argv[2]);
    bytes = atoi(argv[3]);
    work = argc == 5 ? atof(argv[4]) * 1e3 : 0;
    if (strcmp(argv[1], "dontroute") == 0)
        pvm_setopt(PvmRoute, PvmDontRoute);
    if (pvm_mytid() < 0)
        return 1;
    if (strcmp(argv[1], "mask") == 0) {
        /* TEV_MASK_INIT, then the first event's bit (TEV_MASK_SET). */
        memset(mask, '@', 35);
        mask[35] = '\0';
        mask[0] |= 1;
        if (pvm_settmask(PvmTaskSelf, mask) < 0 || pvm_settmask(PvmTaskChild, mask) < 0)
            return 1;
    } else if (strcmp(argv[1], "flag") == 0) {
        flags |= PvmTaskTrace;
    } else if (strcmp(argv[1], "tracer") == 0) {
        if (pvm_setopt(PvmSelfTraceTid, pvm_mytid()) < 0 || pvm_setopt(PvmSelfTraceCode, 77) < 0)
            return 1;
    }
    pvm_gettmask(PvmTaskSelf, back);
    printf("self mask %s\n", back);
    pvm_gettmask(PvmTaskChild, back);
    printf("child mask %s\n", back);
    if (pvm_spawn("pvm_tracer", (char *[]){ "child", NULL }, flags, NULL, 1, &tid) != 1) {
        fprintf(stderr, "pvm_tracer: spawn failed (%d)\n", tid);
        pvm_exit();
        return 1;
    }
    if ((buf = calloc(1, (size_t)bytes + 1)) == NULL)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < rounds; i++) {
        /* The grain: spin, as computing would. */
        clock_gettime(CLOCK_MONOTONIC, &w0);
        do
            clock_gettime(CLOCK_MONOTONIC, &w1);
        while ((w1.tv_sec - w0.tv_sec) * 1e9 + (w1.tv_nsec - w0.tv_nsec) < work);
        pvm_initsend(PvmDataRaw);
        pvm_pkbyte(buf, bytes, 1);
        if (pvm_send(tid, TAG_PING) < 0 || pvm_recv(tid, TAG_PING) < 0)
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pvm_initsend(PvmDataDefault);
    pvm_send(tid, TAG_STOP);
    printf("route %d fragsize %d\n", pvm_getopt(PvmRoute), pvm_getopt(PvmFragSize));
    printf("rtt_us %.2f\n", rounds > 0 ? ((t1.tv_sec - t0.tv_sec) * 1e6 +
                                          (t1.tv_nsec - t0.tv_nsec) / 1e3) / rounds : 0.0);
    free(buf);
    if (strcmp(argv[1], "noexit") != 0)
        pvm_exit();
    return 0;
}
