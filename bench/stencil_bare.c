/*
 * bench/stencil_bare.c - the bare kernel on a whole grid, no runtime: what
 * `vmrun stencil` on one host is measured against (issue 7, bench/vmrun.sh).
 *
 *   stencil_bare [--grid N|NXxNYxNZ] [--iters K] [--kernel jacobi|rbgs]
 *
 * The grid is one box laid out by this host's plan (kern_plan_make with
 * KERN_PLAN_FAST) and filled with the job's field (liq_field_init, seed 1),
 * and it runs K iterations two ways:
 *   blocked   kern_jacobi_run / kern_rbgs_run: temporal blocking (several
 *             Jacobi sweeps, or red and black fused, per pass over memory);
 *   1-sweep   kern_jacobi_step / kern_rbgs_sweep per colour: one pass over
 *             memory per sweep, as a runtime that refreshes ghosts between
 *             sweeps must do.
 * It prints one JSON line: updates/s of each (best of 3 runs), the faster
 * of the two (which one depends on the machine: blocking where the grid
 * streams from memory, one sweep where the last cache level holds it), and the
 * checksum of the result, which must equal vmrun stencil's for the same job
 * (same seed): a check that the two computed the same thing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern.h"
#include "liq.h"

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
parse_grid(const char *s, int n[3])
{
    int c = sscanf(s, "%dx%dx%d", &n[0], &n[1], &n[2]);

    if (c == 1)
        n[1] = n[2] = n[0];
    else if (c != 3)
        return -1;
    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || n[a] > 4096)
            return -1;
    return 0;
}

/* One timed run from the initial field; the result stays in *u. */
static double
run(struct kern_box *u, struct kern_box *v, struct kern_box *rhs, const struct kern_plan *p,
    int kernel, int iters, int fastest, const int n[3])
{
    double c, c2, t;

    liq_coeffs(n, &c, &c2);
    liq_field_init(u, rhs, 1);
    kern_box_copy(v, u);
    t = now();
    if (kernel == LIQ_JACOBI && fastest) {
        kern_jacobi_run(u, v, rhs, c, c2, iters, p);
    } else if (kernel == LIQ_JACOBI) {
        struct kern_box *a = u, *b = v, *x;

        for (int i = 0; i < iters; i++) {
            kern_jacobi_step(b, a, rhs, c, c2, p);
            x = a;
            a = b;
            b = x;
        }
        t = now() - t;
        if (a != u)
            kern_box_copy(u, a);
        return t;
    } else if (fastest) {
        kern_rbgs_run(u, rhs, c, c2, iters, p);
    } else {
        for (int i = 0; i < iters; i++) {
            kern_rbgs_sweep(u, rhs, c, c2, KERN_RED, p);
            kern_rbgs_sweep(u, rhs, c, c2, KERN_BLACK, p);
        }
    }
    return now() - t;
}

int
main(int argc, char **argv)
{
    int n[3] = { 128, 128, 128 }, iters = 20, kernel = LIQ_JACOBI;
    struct kern_box u, v, rhs;
    struct kern_plan p;
    double best[2] = { 1e30, 1e30 };
    uint64_t sum[2] = { 0, 0 };

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: stencil_bare [--grid N|NXxNYxNZ] [--iters K] [--kernel jacobi|rbgs]\n");
            return 0;
        } else if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc) {
            if (parse_grid(argv[++i], n) != 0)
                goto usage;
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
            if (iters < 1 || iters > 100000)
                goto usage;
        } else if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "jacobi") == 0)
                kernel = LIQ_JACOBI;
            else if (strcmp(argv[i], "rbgs") == 0)
                kernel = LIQ_RBGS;
            else
                goto usage;
        } else {
            goto usage;
        }
    }
    if (kern_plan_make(&p, kern_cache_bytes(0), n[0], n[1], n[2], KERN_PLAN_FAST) != 0 ||
        kern_box_alloc(&u, n[0], n[1], n[2], p.bi, p.bj) != 0 ||
        kern_box_alloc(&v, n[0], n[1], n[2], p.bi, p.bj) != 0 ||
        kern_box_alloc(&rhs, n[0], n[1], n[2], p.bi, p.bj) != 0) {
        fprintf(stderr, "stencil_bare: cannot allocate a %dx%dx%d grid\n", n[0], n[1], n[2]);
        return 1;
    }
    for (int rep = 0; rep < 3; rep++)
        for (int f = 0; f < 2; f++) {
            double t = run(&u, &v, &rhs, &p, kernel, iters, f, n);

            if (t < best[f])
                best[f] = t;
            sum[f] = liq_field_checksum(&u);
        }
    double pts = (double)n[0] * n[1] * n[2] * iters;

    printf("{\"kernel\":\"%s\",\"grid\":[%d,%d,%d],\"iters\":%d,"
           "\"blocked_updates_per_s\":%.6g,\"one_sweep_updates_per_s\":%.6g,"
           "\"best_updates_per_s\":%.6g,"
           "\"checksum\":\"%016" PRIx64 "\",\"checksums_agree\":%s}\n",
           kernel == LIQ_RBGS ? "rbgs" : "jacobi", n[0], n[1], n[2], iters, pts / best[1],
           pts / best[0], pts / (best[0] < best[1] ? best[0] : best[1]), sum[1], sum[0] == sum[1] ? "true" : "false");
    kern_box_free(&u);
    kern_box_free(&v);
    kern_box_free(&rhs);
    return sum[0] == sum[1] ? 0 : 1;
usage:
    fprintf(stderr, "stencil_bare: bad arguments (stencil_bare --help)\n");
    return 2;
}
