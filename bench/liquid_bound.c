/*
 * bench/liquid_bound.c - what the machine allows a stencil job under CPU
 * quotas when messages cost nothing (issue 8, bench/liquid.sh).
 *
 *   liquid_bound [--grid N] [--iters K] [--sync H] [--epoch E]
 *                [--parts W1,W2,...] [--cgroups D1[:D1b],D2,...]
 *
 * One process per part, each with a slab of the grid along k in proportion
 * to its weight (the largest remainders get the odd planes), each in the
 * cgroup(s) named for it (it writes its pid to DIR/cgroup.procs, so the
 * cgroup's CFS quota limits it).  Every process runs the job's Jacobi
 * kernel on its slab the way a `vmrun stencil` worker does (one sweep per
 * pass where its boxes fit half of one CPU's share of the last-level
 * cache, blocked passes otherwise), and every H iterations all of them
 * meet at a barrier that sleeps (a process-shared pthread barrier), as a
 * ghost exchange would make them meet; H = 0 never.  No ghost is sent and
 * no point is swept twice: the placement is the quotas' own, exact to a
 * plane, and the exchange is free.  So the time it takes is a lower bound
 * for any placement and any runtime on this machine under these quotas --
 * what remains is the kernels' rate with all parts running at once (the
 * cores, the shared cache and memory) and the time the barriers leave
 * quota unused (a part throttled for the rest of its CFS period holds up
 * the others).  The values are not the job's (the slabs' ghosts stay
 * fixed); only the time is.
 *
 * Output: one JSON line -- the grid, iterations, the sync period, the wall
 * time from the first barrier to the last part's end, the updates (N^3 *
 * K) and updates/s, the BE of the parts' compute wall times (mean over
 * max, the job's definition), per part its weight, planes, wall, busy
 * (computing) and CPU seconds, the BE of every epoch of E iterations
 * (where the parts meet: the job's per-epoch BE), and ok.  Exit status:
 * 0 measured; 1 a part failed (it says why on stderr and nothing is
 * printed; a part killed by a signal takes the others with it, and all
 * die with the parent, so that none waits at a barrier forever); 2 bad
 * usage.
 */
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kern.h"
#include "liq.h"

#define MAX_PARTS 16
#define MAX_EPOCHS 4096

struct shared {
    pthread_barrier_t bar;
    double t0[MAX_PARTS], t1[MAX_PARTS], cpu[MAX_PARTS], busy[MAX_PARTS];
    double ebusy[MAX_EPOCHS][MAX_PARTS]; /* compute wall time per epoch */
};

static double
clock_s(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Enter every cgroup of the colon-separated list dirs. */
static int
enter_cgroups(char *dirs)
{
    for (char *d = strtok(dirs, ":"); d != NULL; d = strtok(NULL, ":")) {
        char path[4096];
        FILE *fp;

        if (snprintf(path, sizeof(path), "%s/cgroup.procs", d) >= (int)sizeof(path) ||
            (fp = fopen(path, "w")) == NULL) {
            fprintf(stderr, "liquid_bound: cannot enter the cgroup %s: %s\n", d, strerror(errno));
            return -1;
        }
        fprintf(fp, "%d\n", (int)getpid());
        if (fclose(fp) != 0) {
            fprintf(stderr, "liquid_bound: cannot enter the cgroup %s: %s\n", d, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Part p's run: its slab of nk planes, iters sweeps, a barrier every sync. */
static int
part(struct shared *sh, int p, int n, int nk, int iters, int sync, int epoch, char *cgroups)
{
    struct kern_box u, v, rhs;
    struct kern_plan plan;
    double c, c2;
    int dims[3] = { n, n, n }, rc = 0;
    size_t llc = kern_llc_bytes(0);

    if (cgroups != NULL && enter_cgroups(cgroups) != 0)
        rc = -1;
    if (rc == 0 &&
        (kern_plan_make(&plan, kern_cache_bytes(0), n, n, nk, KERN_PLAN_FAST) != 0 ||
         kern_box_alloc(&u, n, n, nk, plan.bi, plan.bj) != 0 ||
         kern_box_alloc(&v, n, n, nk, plan.bi, plan.bj) != 0 ||
         kern_box_alloc(&rhs, n, n, nk, plan.bi, plan.bj) != 0)) {
        fprintf(stderr, "liquid_bound: part %d: cannot allocate %dx%dx%d\n", p, n, n, nk);
        rc = -1;
    }
    if (rc == 0) {
        liq_field_init(&u, &rhs, 1);
        kern_box_copy(&v, &u);
        /* The worker's rule: one sweep per pass in the cache. */
        if (liq_one_sweep_fits(u.map_len + v.map_len + rhs.map_len, llc)) {
            plan.jac_steps = 1;
            plan.flags &= ~KERN_PLAN_STREAM;
        }
    }
    liq_coeffs(dims, &c, &c2);
    /* Everybody allocated (or failed) before the clock starts. */
    pthread_barrier_wait(&sh->bar);
    sh->t0[p] = clock_s(CLOCK_MONOTONIC);
    double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    struct kern_box *a = &u, *b = &v;

    for (int done = 0; done < iters;) {
        int k = sync > 0 && iters - done > sync ? sync : iters - done;

        /* Nor past the end of an epoch, whose BE is the job's per epoch. */
        if (k > epoch - done % epoch)
            k = epoch - done % epoch;

        double t = clock_s(CLOCK_MONOTONIC);

        if (rc == 0 && kern_jacobi_run_swap(&a, &b, &rhs, c, c2, k, &plan) != 0) {
            fprintf(stderr, "liquid_bound: part %d: the kernel failed\n", p);
            rc = -1; /* it still meets the others at every barrier */
        }
        t = clock_s(CLOCK_MONOTONIC) - t;
        sh->busy[p] += t;
        if (done / epoch < MAX_EPOCHS)
            sh->ebusy[done / epoch][p] += t;
        done += k;
        if (sync > 0 && (done % sync == 0 || done == iters))
            pthread_barrier_wait(&sh->bar);
    }
    sh->t1[p] = clock_s(CLOCK_MONOTONIC);
    sh->cpu[p] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    return rc;
}

static int
parse_list(const char *s, double *w, int max)
{
    int n = 0;
    const char *q = s;

    while (*q != '\0') {
        char *end;
        double x = strtod(q, &end);

        if (end == q || !(x > 0) || x > 1e9 || n == max)
            return -1;
        w[n++] = x;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        q = end;
    }
    return n;
}

/* An integer lo..hi, all of s; -1 otherwise. */
static int
parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int
usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: liquid_bound [--grid N] [--iters K] [--sync H] [--epoch E]\n"
            "                    [--parts W1,W2,...] [--cgroups D1[:D1b],D2,...]\n"
            "  one process per part (default 4 equal parts), a slab of the N^3 grid\n"
            "  (default 128) in proportion to its weight, K Jacobi iterations (default\n"
            "  60), a sleeping barrier every H (default 5; 0 never); each process enters\n"
            "  the cgroups of its entry in --cgroups.  Prints one JSON line, with the\n"
            "  BE of every E iterations (default 10) where the parts meet.\n");
    return rc;
}

int
main(int argc, char **argv)
{
    int n = 128, iters = 60, sync = 5, epoch = 10, np = 4, nk[MAX_PARTS];
    double w[MAX_PARTS] = { 1, 1, 1, 1 }, sw = 0;
    char *cg[MAX_PARTS] = { NULL }, *cglist = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--help") == 0)
            return usage(0);
        if (v == NULL)
            return usage(2);
        i++;
        if (strcmp(a, "--grid") == 0) {
            if (parse_int(v, 8, 2048, &n) != 0)
                return usage(2);
        } else if (strcmp(a, "--iters") == 0) {
            if (parse_int(v, 1, 1000000, &iters) != 0)
                return usage(2);
        } else if (strcmp(a, "--sync") == 0) {
            if (parse_int(v, 0, 1000000, &sync) != 0)
                return usage(2);
        } else if (strcmp(a, "--epoch") == 0) {
            if (parse_int(v, 1, 1000000, &epoch) != 0)
                return usage(2);
        } else if (strcmp(a, "--parts") == 0) {
            if ((np = parse_list(v, w, MAX_PARTS)) < 1)
                return usage(2);
        } else if (strcmp(a, "--cgroups") == 0) {
            free(cglist);
            if ((cglist = strdup(v)) == NULL) {
                fprintf(stderr, "liquid_bound: out of memory\n");
                return 1;
            }
        } else {
            return usage(2);
        }
    }
    if (cglist != NULL) {
        int m = 0;

        for (char *s = cglist, *c; s != NULL; s = c) {
            if ((c = strchr(s, ',')) != NULL)
                *c++ = '\0';
            if (m == MAX_PARTS || *s == '\0')
                return usage(2);
            cg[m++] = s;
        }
        if (m != np) {
            fprintf(stderr, "liquid_bound: %d cgroup entries for %d parts\n", m, np);
            return 2;
        }
    }
    /* Planes in proportion to the weights, the odd ones by largest remainder. */
    int given = 0;

    for (int p = 0; p < np; p++)
        sw += w[p];
    for (int p = 0; p < np; p++)
        given += nk[p] = (int)(n * w[p] / sw);
    while (given < n) {
        int best = 0;
        double rem = -1;

        for (int p = 0; p < np; p++) {
            double r = n * w[p] / sw - nk[p];

            if (r > rem) {
                rem = r;
                best = p;
            }
        }
        nk[best]++;
        given++;
    }
    for (int p = 0; p < np; p++)
        if (nk[p] < 1) {
            fprintf(stderr, "liquid_bound: part %d gets no plane of %d\n", p, n);
            return 2;
        }

    struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_barrierattr_t ba;
    pid_t pid[MAX_PARTS];

    if (sh == MAP_FAILED || pthread_barrierattr_init(&ba) != 0 ||
        pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) != 0 ||
        pthread_barrier_init(&sh->bar, &ba, (unsigned)np) != 0) {
        fprintf(stderr, "liquid_bound: cannot set up the shared barrier\n");
        return 1;
    }
    fflush(stdout);
    for (int p = 0; p < np; p++) {
        if ((pid[p] = fork()) < 0) {
            fprintf(stderr, "liquid_bound: fork: %s\n", strerror(errno));
            for (int q = 0; q < p; q++) { /* they would wait at the barrier forever */
                kill(pid[q], SIGKILL);
                waitpid(pid[q], NULL, 0);
            }
            return 1;
        }
        if (pid[p] == 0) {
            /* A part whose parent is gone would wait at the barrier forever. */
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
                _exit(1);
            _exit(part(sh, p, n, nk[p], iters, sync, sync > 0 ? epoch : iters, cg[p]) == 0 ? 0 : 1);
        }
    }
    int failed = 0, left = np;

    /* Reap in any order: a part killed by a signal never reaches the next
     * barrier, and the others would wait there forever. */
    while (left > 0) {
        int st;
        pid_t c = waitpid(-1, &st, 0);

        if (c < 0) {
            if (errno == EINTR)
                continue;
            failed = 1;
            break;
        }
        left--;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            if (!failed && WIFSIGNALED(st)) {
                fprintf(stderr, "liquid_bound: a part died of signal %d\n", WTERMSIG(st));
                for (int q = 0; q < np; q++)
                    if (pid[q] != c)
                        kill(pid[q], SIGKILL);
            }
            failed = 1;
        }
    }
    if (failed) {
        fprintf(stderr, "liquid_bound: a part failed; no time is reported\n");
        free(cglist);
        return 1;
    }
    double t0 = sh->t0[0], t1 = sh->t1[0], upd = (double)n * n * n * iters, bsum = 0, bmax = 0;

    for (int p = 1; p < np; p++) {
        if (sh->t0[p] < t0)
            t0 = sh->t0[p];
        if (sh->t1[p] > t1)
            t1 = sh->t1[p];
    }
    for (int p = 0; p < np; p++) {
        bsum += sh->busy[p];
        if (sh->busy[p] > bmax)
            bmax = sh->busy[p];
    }
    printf("{\"grid\":%d,\"iters\":%d,\"sync\":%d,\"time_s\":%.6f,\"updates\":%.0f,"
           "\"updates_per_s\":%.6g,\"be\":%.4f,\"parts\":[",
           n, iters, sync, t1 - t0, upd, upd / (t1 - t0), bmax > 0 ? bsum / np / bmax : 1.0);
    for (int p = 0; p < np; p++)
        printf("%s{\"weight\":%g,\"planes\":%d,\"wall_s\":%.6f,\"busy_s\":%.6f,\"cpu_s\":%.6f}",
               p ? "," : "", w[p], nk[p], sh->t1[p] - sh->t0[p], sh->busy[p], sh->cpu[p]);
    /* BE per epoch, as the job reports it, where the parts meet (else
     * their epochs are not the same stretch of time). */
    printf("],\"epoch\":%d,\"epoch_be\":[", sync > 0 ? epoch : 0);
    for (int e = 0; sync > 0 && e < MAX_EPOCHS && e * epoch < iters; e++) {
        double es = 0, em = 0;

        for (int p = 0; p < np; p++) {
            es += sh->ebusy[e][p];
            if (sh->ebusy[e][p] > em)
                em = sh->ebusy[e][p];
        }
        printf("%s%.4f", e ? "," : "", em > 0 ? es / np / em : 1.0);
    }
    printf("],\"ok\":true}\n");
    free(cglist);
    return failed;
}
