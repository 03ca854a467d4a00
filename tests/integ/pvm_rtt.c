/*
 * pvm_rtt - round-trip time of PVM messages, default route against
 * PvmRouteDirect: a quick measurement program (the official timing
 * benchmark is bench/pvm_timing).  Written only against pvm3.h.
 *
 *   pvm_rtt echo                      prints its tid; echoes until tag 99
 *   pvm_rtt ping TID ROUTE [N]        ROUTE default or direct; prints the
 *                                     median and mean round trip of 4 B and
 *                                     1 MB messages (PvmDataRaw), N of each
 *
 * Before timing, round trips run until the route is settled (with direct,
 * until the link is up on this side) plus a warm-up.
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int
echo(void)
{
    int me = pvm_mytid();

    if (me < 0)
        return 1;
    printf("t%x\n", me);
    fflush(stdout);
    for (;;) {
        int len, tag, src, b = pvm_recv(-1, -1);
        if (b < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0)
            return 1;
        if (tag == 99)
            break;
        pvm_setsbuf(b);
        pvm_setrbuf(0);
        if (pvm_send(src, tag) < 0)
            return 1;
        pvm_freebuf(b);
        pvm_setsbuf(0);
    }
    pvm_exit();
    return 0;
}

static int
round_trip(int peer, char *buf, int size)
{
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte(buf, size, 1);
    if (pvm_send(peer, 1) < 0 || pvm_recv(peer, 1) < 0)
        return -1;
    return 0;
}

static int
measure(int peer, char *buf, int size, int n, const char *route)
{
    double *t = malloc(sizeof(double) * (size_t)n), sum = 0;

    if (t == NULL)
        return -1;
    for (int i = 0; i < 20; i++)
        if (round_trip(peer, buf, size) < 0)
            return -1;
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        if (round_trip(peer, buf, size) < 0)
            return -1;
        t[i] = now_us() - t0;
        sum += t[i];
    }
    qsort(t, (size_t)n, sizeof(double), cmp);
    printf("%-7s %8d B  median %9.1f us  mean %9.1f us  (%d round trips)\n", route, size,
           t[n / 2], sum / n, n);
    free(t);
    return 0;
}

static int
ping(int peer, const char *route, int n)
{
    int direct = strcmp(route, "direct") == 0, *fds;
    char *buf = calloc(1, 1 << 20);

    if (pvm_mytid() < 0 || buf == NULL)
        return 1;
    if (direct)
        pvm_setopt(PvmRoute, PvmRouteDirect);
    /* Until the link is up (daemon, listener, link), at most 1000 tries. */
    for (int i = 0; direct && i < 1000 && pvm_getfds(&fds) < 3; i++)
        if (round_trip(peer, buf, 4) < 0)
            return 1;
    if (direct && pvm_getfds(&fds) < 3) {
        fprintf(stderr, "no direct link came up\n");
        return 1;
    }
    if (measure(peer, buf, 4, n, route) < 0 || measure(peer, buf, 1 << 20, n / 10 + 1, route) < 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, 99);
    free(buf);
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "echo") == 0)
        return echo();
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "ping") == 0)
        return ping((int)strtol(argv[2] + (argv[2][0] == 't'), NULL, 16), argv[3],
                    argc == 5 ? atoi(argv[4]) : 2000);
    fprintf(stderr, "usage: pvm_rtt echo | pvm_rtt ping TID default|direct [N]\n");
    return 2;
}
