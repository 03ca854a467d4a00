/*
 * farm_burn.c - one item of bench/farm.sh's sweep: burn UNITS units of CPU
 * (a fixed loop, about 5 ms of one core each on the machine of
 * docs/performance.md), then print the CPU seconds this process used, so
 * the bench sums the work actually done whatever the contention was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int
main(int argc, char **argv)
{
    long units = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
    volatile double x = 1.0;
    struct timespec ts;

    for (long u = 0; u < units; u++)
        for (long i = 0; i < 2000000; i++)
            x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    printf("%.6f\n", (double)ts.tv_sec + ts.tv_nsec * 1e-9);
    return x > 0 ? 0 : 1;
}
