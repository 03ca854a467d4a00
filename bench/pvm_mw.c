/*
 * pvm_mw - a PVM master/worker program with unequal tasks, for
 * bench/paradise_pvm.sh (issue 27: a PVM program run by default, with the
 * hints of its own trace, and with each setting of a sweep).  It is plain
 * PVM 3.4 and knows nothing of hints: the library applies them.
 *
 * Started by hand it is the master: it spawns W copies of itself (one
 * pvm_spawn call, no host named) and hands out N items, one at a time
 * to whichever worker answers; item i costs 1 + (37 i mod 13) units of
 * U microseconds of CPU, so the tasks are unequal.  A worker answers each
 * item with its number and a checksum of its work.  The master prints the
 * time from the first item sent to the last answer and the sum of the
 * answers (the same in every run).
 *
 *   pvm_mw [WORKERS [ITEMS [UNIT_US]]]     (default 4 2000 20)
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_ITEM 1
#define TAG_DONE 2
#define TAG_STOP 3

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* unit microseconds of CPU per unit, spent on a checksum of the item */
static double
work(int item, int units, int unit_us)
{
    double t0 = now(), x = item;

    while (now() - t0 < units * unit_us / 1e6)
        for (int k = 0; k < 64; k++)
            x = x * 0.999999 + 1.0;
    return (double)item * units;
}

static int
worker(void)
{
    int parent = pvm_parent(), hdr[2], bytes, tag, tid;

    for (;;) {
        int b = pvm_recv(parent, -1);

        if (b < 0 || pvm_bufinfo(b, &bytes, &tag, &tid) < 0 || tag == TAG_STOP)
            break;
        pvm_upkint(hdr, 2, 1); /* item, unit_us */
        double r = work(hdr[0], 1 + (37 * hdr[0]) % 13, hdr[1]);

        pvm_initsend(PvmDataDefault);
        pvm_pkint(hdr, 1, 1);
        pvm_pkdouble(&r, 1, 1);
        pvm_send(parent, TAG_DONE);
    }
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    int me = pvm_mytid(), nw = 4, items = 2000, unit = 20, *tids, next = 0, done = 0;
    char self[4096], *args[] = { "worker", NULL };
    double sum = 0, t0;
    ssize_t len;

    if (me < 0)
        return 1;
    if (argc > 1 && strcmp(argv[1], "worker") == 0)
        return worker();
    if (argc > 1)
        nw = atoi(argv[1]);
    if (argc > 2)
        items = atoi(argv[2]);
    if (argc > 3)
        unit = atoi(argv[3]);
    if (nw < 1 || nw > 64 || items < 1 || unit < 0) {
        fprintf(stderr, "usage: pvm_mw [WORKERS (1-64) [ITEMS [UNIT_US]]]\n");
        pvm_exit();
        return 2;
    }
    if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
        perror("pvm_mw: /proc/self/exe");
        pvm_exit();
        return 1;
    }
    self[len] = '\0';
    tids = calloc((size_t)nw, sizeof(int));
    if (tids == NULL || pvm_spawn(self, args, PvmTaskDefault, NULL, nw, tids) != nw) {
        fprintf(stderr, "pvm_mw: could not spawn %d workers\n", nw);
        pvm_exit();
        return 1;
    }
    t0 = now();
    for (int w = 0; w < nw && next < items; w++, next++) {
        int hdr[2] = { next, unit };

        pvm_initsend(PvmDataDefault);
        pvm_pkint(hdr, 2, 1);
        pvm_send(tids[w], TAG_ITEM);
    }
    while (done < items) {
        int b = pvm_recv(-1, TAG_DONE), bytes, tag, tid, item;
        double r;

        if (b < 0 || pvm_bufinfo(b, &bytes, &tag, &tid) < 0) {
            fprintf(stderr, "pvm_mw: receive failed\n");
            pvm_exit();
            return 1;
        }
        pvm_upkint(&item, 1, 1);
        pvm_upkdouble(&r, 1, 1);
        sum += r;
        done++;
        pvm_initsend(PvmDataDefault);
        if (next < items) {
            int hdr[2] = { next++, unit };

            pvm_pkint(hdr, 2, 1);
            pvm_send(tid, TAG_ITEM);
        } else {
            pvm_send(tid, TAG_STOP);
        }
    }
    printf("pvm_mw: %d items on %d workers in %.4f s, sum %.0f\n", items, nw, now() - t0, sum);
    free(tids);
    pvm_exit();
    return 0;
}
