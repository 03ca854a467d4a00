/*
 * pvm_hostload - a PVM task that asks the VM for its hosts' load with
 * lvm_hostload() (lib/pvm/lvm_load.h), as a job master would.
 *
 *   pvm_hostload          print one line per host, check the answer
 *                         against pvm_config; exit 0 if they agree
 *   pvm_hostload burn S   enroll, then keep one CPU busy for S seconds
 *                         (a VM process that is not the daemon's child)
 *
 * A line: "host NAME dtid=tX cpus=N load1=F ext=F vm=F quota=F
 * capacity=F mem_total=N mem_avail=N age=F".
 */
#include <lvm_load.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
burn(double seconds)
{
    struct timespec t0, t;
    volatile unsigned long x = 0;
    if (pvm_mytid() < 0)
        return 1;
    printf("burning\n");
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    struct lvm_hostload *hl;
    struct pvmhostinfo *hi;
    int n, nhost, narch, bad = 0;

    if (argc == 3 && strcmp(argv[1], "burn") == 0)
        return burn(atof(argv[2]));
    if (pvm_mytid() < 0)
        return 1;
    pvm_setopt(PvmAutoErr, 0);
    if (lvm_hostload(NULL, &n) != PvmBadParam) {
        fprintf(stderr, "lvm_hostload(NULL) did not fail with PvmBadParam\n");
        bad = 1;
    }
    if (pvm_config(&nhost, &narch, &hi) < 0 || lvm_hostload(&hl, &n) < 0) {
        pvm_exit();
        return 1;
    }
    if (n != nhost) {
        fprintf(stderr, "lvm_hostload: %d hosts, pvm_config: %d\n", n, nhost);
        bad = 1;
    }
    for (int i = 0; i < n; i++) {
        int known = 0;
        for (int j = 0; j < nhost; j++)
            known |= hi[j].hi_tid == hl[i].dtid && strcmp(hi[j].hi_name, hl[i].name) == 0;
        if (!known) {
            fprintf(stderr, "%s (t%x) is not in pvm_config's table\n", hl[i].name, hl[i].dtid);
            bad = 1;
        }
        printf("host %s dtid=t%x cpus=%d load1=%.2f ext=%.3f vm=%.3f quota=%.3f capacity=%.3f "
               "mem_total=%llu mem_avail=%llu age=%.3f\n", hl[i].name, hl[i].dtid, hl[i].cpus,
               hl[i].load1, hl[i].ext_busy, hl[i].vm_busy, hl[i].quota, hl[i].capacity,
               hl[i].mem_total, hl[i].mem_avail, hl[i].age);
    }
    free(hl);
    pvm_exit();
    return bad;
}
