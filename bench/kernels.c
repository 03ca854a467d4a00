/*
 * bench/kernels.c - grind time of the stencil kernels against the memory
 * roofline of this machine (issue 5).
 *
 * For Jacobi and red-black Gauss-Seidel it measures the grind time (seconds
 * per point per iteration, seed 000's metric) and updates/s of each variant
 * over N = 64..512 and the thesis's odd sizes N = 140..200, beside a STREAM
 * triad measured in the same run:
 *   naive         the reference kernels: untiled, unpadded, plain loops;
 *   tiled         the thesis's Autoblocker: GcdPad3D tiles, a sweep per colour;
 *   tiled+gcdpad  the same in a GcdPad3D-padded box: the thesis's tiled+padded;
 *   fast-1sweep   Jacobi in the fast layout, one sweep per pass over memory;
 *   fast          the fastest: tiles of whole rows in a line-padded box, AVX2
 *                 rows, six Jacobi sweeps per pass, red and black fused.
 * The roofline is 24 bytes per update (read u, read rhs, write the result:
 * what one sweep must move) at the triad's bandwidth; the triad is run with
 * ordinary and with non-temporal stores, at the start and at the end, and
 * the fastest of those is the roofline, so a share of 100% means the kernel
 * moves its compulsory bytes as fast as this memory moved any bytes during
 * the run.  Temporal blocking moves fewer bytes than that, so it may pass
 * 100%.
 *
 * It prints a table and the three goals of the issue, writes an SVG plot
 * of grind time against N and, with --json, every figure.  Timings are the
 * best and the median of several repetitions: other virtual machines share
 * this one's memory bandwidth, and the best is the figure least disturbed
 * by them.  Nothing here asserts on time: this is a benchmark, not a test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define MAX_RESULTS 1024
#define ROOF_BYTES 24.0         /* bytes an update must move: u, rhs, result */

enum kernel { K_JACOBI, K_RBGS };

enum variant {
    V_NAIVE,        /* the reference: untiled, unpadded, plain loops */
    V_TILED,        /* the thesis's Autoblocker, GcdPad3D tiles, no padding, a sweep per colour */
    V_TILED_PAD,    /* the same with GcdPad3D padding: the thesis's tiled+padded */
    V_FAST1,        /* Jacobi: row tiles, line padding, AVX2, streaming stores, one sweep a pass */
    V_FAST,         /* the same tiled+padded layout with six Jacobi sweeps a pass, or red and
                     * black fused into one pass: the fastest variant */
    V_COUNT
};

static const char *const kernel_name[] = { "jacobi", "rbgs" };
static const char *const variant_name[] = { "naive", "tiled", "tiled+gcdpad", "fast-1sweep",
                                             "fast" };
static const char *const variant_color[] = { "#d62728", "#ff7f0e", "#2ca02c", "#9467bd",
                                             "#1f77b4" };

struct result {
    enum kernel kernel;
    enum variant variant;
    int n;
    int iters;          /* iterations per repetition */
    double best, median; /* grind time, s per point per iteration */
};

struct run {
    enum kernel kernel;
    enum variant variant;
    struct kern_box u, tmp, rhs;
    struct kern_plan plan;
};

struct bench {
    struct run spare;   /* boxes kept for the next variant (measure) */
    int quick;
    int reps;
    int rounds;         /* rounds of the odd-size series */
    double min_time;    /* seconds per repetition to aim for */
    double series_time; /* the same, per sample of the odd-size series */
    size_t cache;       /* bytes, for the plans */
    int steps, jrows, tilej; /* overrides of the fast plans, 0 = the plan's own */
    const char *svg, *json;
    double triad, triad_nt; /* bytes/s */
    struct result res[MAX_RESULTS];
    int nres;
};

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* ---- STREAM triad ---- */

static void triad_plain(double *a, const double *b, const double *c, size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static void triad_stream(double *a, const double *b, const double *c, size_t n, double s)
{
#if defined(__x86_64__)
    __m128d vs = _mm_set1_pd(s);

    for (size_t i = 0; i + 2 <= n; i += 2)
        _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(vs, _mm_load_pd(c + i))));
    _mm_sfence();
#else
    triad_plain(a, b, c, n, s);
#endif
}

/* Best of reps, in bytes/s counted as STREAM does (24 bytes per element). */
static double triad(size_t n, int reps, int nt)
{
    double *a = aligned_alloc(64, n * sizeof(double));
    double *b = aligned_alloc(64, n * sizeof(double));
    double *c = aligned_alloc(64, n * sizeof(double));
    double best = 1e30;

    if (a == NULL || b == NULL || c == NULL) {
        fprintf(stderr, "kernels: no memory for the triad\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    for (int r = 0; r < reps; r++) {
        double t = now();

        if (nt)
            triad_stream(a, b, c, n, 3.0);
        else
            triad_plain(a, b, c, n, 3.0);
        t = now() - t;
        if (t < best)
            best = t;
    }
    if (a[n / 2] != 7.0)
        fprintf(stderr, "kernels: triad gave %g, not 7\n", a[n / 2]);
    free(a);
    free(b);
    free(c);
    return 24.0 * (double)n / best;
}

/* ---- kernels ---- */

static const double CC = 1.0 / 6.0, C2 = 1e-3;

static void print_row(const struct bench *b, const struct result *r);

static void die(const char *what, int rc)
{
    fprintf(stderr, "kernels: %s: %s\n", what, strerror(-rc));
    exit(1);
}

static void make_plan(struct bench *b, struct run *r, int n)
{
    unsigned flags = 0;
    int rc;

    if (r->variant == V_TILED_PAD)
        flags = KERN_PLAN_PAD;
    else if (r->variant >= V_FAST1)
        flags = KERN_PLAN_FAST;
    rc = kern_plan_make(&r->plan, b->cache, n, n, n, flags);
    if (rc != 0)
        die("plan", rc);
    if (r->variant >= V_FAST1) {
        if (b->steps > 0)
            r->plan.jac_steps = b->steps;
        if (b->jrows > 0)
            r->plan.jac_rows = b->jrows;
        if (b->tilej > 0)
            r->plan.tile_j = b->tilej;
    }
    if (r->variant == V_FAST1)
        r->plan.jac_steps = 1;
}

static void alloc_boxes(struct run *r, int n)
{
    int rc = kern_box_alloc(&r->u, n, n, n, r->plan.bi, r->plan.bj);

    if (rc == 0)
        rc = kern_box_alloc(&r->rhs, n, n, n, r->plan.bi, r->plan.bj);
    if (rc == 0 && r->kernel == K_JACOBI)
        rc = kern_box_alloc(&r->tmp, n, n, n, r->plan.bi, r->plan.bj);
    if (rc != 0)
        die("box", rc);
    kern_box_fill(&r->u, 1);
    kern_box_fill(&r->rhs, 2);
    if (r->kernel == K_JACOBI)
        kern_box_copy(&r->tmp, &r->u);
}

static void setup(struct bench *b, struct run *r, int n)
{
    make_plan(b, r, n);
    alloc_boxes(r, n);
}

static void teardown(struct run *r)
{
    kern_box_free(&r->u);
    kern_box_free(&r->tmp);
    kern_box_free(&r->rhs);
}

static void iterate(struct run *r, int iters)
{
    struct kern_box t;

    switch (r->kernel) {
    case K_JACOBI:
        if (r->variant >= V_FAST1) {
            kern_jacobi_run(&r->u, &r->tmp, &r->rhs, CC, C2, iters, &r->plan);
            return;
        }
        for (int it = 0; it < iters; it++) {
            if (r->variant == V_NAIVE)
                kern_jacobi_ref(&r->tmp, &r->u, &r->rhs, CC, C2);
            else
                kern_jacobi_sweep(&r->tmp, &r->u, &r->rhs, CC, C2, &r->plan);
            t = r->u;
            r->u = r->tmp;
            r->tmp = t;
        }
        return;
    case K_RBGS:
        if (r->variant >= V_FAST1) {
            kern_rbgs_run(&r->u, &r->rhs, CC, C2, iters, &r->plan);
            return;
        }
        for (int it = 0; it < iters; it++) {
            for (int colour = KERN_RED; colour <= KERN_BLACK; colour++) {
                if (r->variant == V_NAIVE)
                    kern_rbgs_ref(&r->u, &r->rhs, CC, C2, colour);
                else
                    kern_rbgs_sweep(&r->u, &r->rhs, CC, C2, colour, &r->plan);
            }
        }
        return;
    }
}

static void store(struct bench *b, enum kernel k, enum variant v, int n, int iters,
                  double *times, int reps)
{
    struct result *res;

    if (b->nres >= MAX_RESULTS)
        return;
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    res = &b->res[b->nres++];
    res->kernel = k;
    res->variant = v;
    res->n = n;
    res->iters = iters;
    res->best = times[0];
    res->median = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
}

/*
 * Boxes of a 512^3 run take seconds to fault in and fill, so a variant
 * whose layout is the one of the variant before takes over its boxes (the
 * values do not matter to the time).
 */
static void measure(struct bench *b, enum kernel k, enum variant v, int n)
{
    struct run r;
    double pts = (double)n * n * n, t, times[32];
    int iters, unit = 1, reps = b->reps < 32 ? b->reps : 32;

    memset(&r, 0, sizeof(r));
    r.kernel = k;
    r.variant = v;
    make_plan(b, &r, n);
    if (b->spare.u.data != NULL && b->spare.kernel == k && b->spare.u.ni == n
        && b->spare.u.bi == r.plan.bi && b->spare.u.bj == r.plan.bj) {
        r.u = b->spare.u;
        r.tmp = b->spare.tmp;
        r.rhs = b->spare.rhs;
    } else {
        teardown(&b->spare);
        alloc_boxes(&r, n);
    }
    memset(&b->spare, 0, sizeof(b->spare));
    if (k == K_JACOBI && v == V_FAST)
        unit = 2 * (r.plan.jac_steps > 0 ? r.plan.jac_steps : 1);
    else if (k == K_JACOBI)
        unit = 2; /* an even count ends in u: no copy */

    /* The warm-up faults tmp in and sizes the repetitions. */
    t = now();
    iterate(&r, unit);
    t = now() - t;
    iters = unit * (int)(b->min_time / (t > 1e-6 ? t : 1e-6) + 0.999);
    if (iters < unit)
        iters = unit;
    if (iters > 256 * unit)
        iters = 256 * unit;
    for (int x = 0; x < reps; x++) {
        t = now();
        iterate(&r, iters);
        times[x] = (now() - t) / ((double)iters * pts);
    }
    b->spare = r;
    store(b, k, v, n, iters, times, reps);
}

/*
 * A series of sizes measured in rounds: every size once per round, so that
 * a burst of load from other virtual machines (they share this one's memory
 * bandwidth) lands on one sample of every size instead of on all samples of
 * a few neighbouring sizes, which would pass for a conflict spike.  The
 * boxes of all sizes stay allocated between rounds, and the series runs
 * twice, allocated in ascending and then in descending order: the boxes
 * allocated first after a large free get the recycled pages, and in one
 * order only we measured those sizes 10-20% slower whatever they were.
 */
static void measure_series(struct bench *b, enum kernel k, enum variant v, const int *ns,
                           int count, int rounds, double *best)
{
    int half = (rounds + 1) / 2, total = 2 * half;
    struct run *runs = calloc((size_t)count, sizeof(*runs));
    double *times = calloc((size_t)count * (size_t)total, sizeof(double));
    int *iters = calloc((size_t)count, sizeof(int));

    if (runs == NULL || times == NULL || iters == NULL) {
        fprintf(stderr, "kernels: no memory for the series\n");
        exit(1);
    }
    for (int order = 0; order < 2; order++) {
        for (int y = 0; y < count; y++) {
            int x = order == 0 ? y : count - 1 - y, unit = k == K_JACOBI ? 2 : 1;
            double t;

            memset(&runs[x], 0, sizeof(runs[x]));
            runs[x].kernel = k;
            runs[x].variant = v;
            setup(b, &runs[x], ns[x]);
            if (k == K_JACOBI && v == V_FAST)
                unit = 2 * runs[x].plan.jac_steps;
            t = now();
            iterate(&runs[x], unit);
            t = now() - t;
            if (order == 0)
                iters[x] = unit * (int)(b->series_time / (t > 1e-6 ? t : 1e-6) + 0.999);
        }
        for (int r = 0; r < half; r++) {
            for (int x = 0; x < count; x++) {
                double pts = (double)ns[x] * ns[x] * ns[x], t = now();

                iterate(&runs[x], iters[x]);
                times[x * total + order * half + r] = (now() - t) / ((double)iters[x] * pts);
            }
        }
        for (int x = 0; x < count; x++)
            teardown(&runs[x]);
    }
    for (int x = 0; x < count; x++) {
        if (best != NULL) {
            qsort(times + x * total, (size_t)total, sizeof(double), cmp_double);
            best[x] = times[x * total];
            continue;
        }
        store(b, k, v, ns[x], iters[x], times + x * total, total);
        print_row(b, &b->res[b->nres - 1]);
    }
    free(runs);
    free(times);
    free(iters);
}

static const struct result *find(const struct bench *b, enum kernel k, enum variant v, int n)
{
    for (int x = 0; x < b->nres; x++)
        if (b->res[x].kernel == k && b->res[x].variant == v && b->res[x].n == n)
            return &b->res[x];
    return NULL;
}

static double share(const struct bench *b, double grind)
{
    double roof = b->triad > b->triad_nt ? b->triad : b->triad_nt;

    return ROOF_BYTES / grind / roof;
}

/*
 * The largest deviation of grind time from its running median (window of
 * 5 sizes, clipped at the ends) over n0..n1: seed 000's smoothness, where
 * the untiled code varied by up to 20% and GcdPad3D was "smooth, linear".
 */
static double spread_of(const double *g, int m)
{
    double worst = -1.0;

    /* The window is the 5 nearest measured sizes, clipped at the ends. */
    for (int x = 0; x < m; x++) {
        int lo = x - 2 < 0 ? 0 : x - 2, hi = lo + 4 < m ? lo + 4 : m - 1, w = 0;
        double win[5], med, dev;

        if (hi - lo < 4)
            lo = hi - 4 < 0 ? 0 : hi - 4;
        for (int y = lo; y <= hi; y++)
            win[w++] = g[y];
        qsort(win, (size_t)w, sizeof(double), cmp_double);
        med = w % 2 ? win[w / 2] : 0.5 * (win[w / 2 - 1] + win[w / 2]);
        dev = med > 0 ? (g[x] > med ? g[x] - med : med - g[x]) / med : 0;
        if (dev > worst)
            worst = dev;
    }
    return m >= 5 ? worst : -1.0;
}

static double spread(const struct bench *b, enum kernel k, enum variant v, int n0, int n1)
{
    double g[MAX_RESULTS];
    int m = 0;

    for (int n = n0; n <= n1; n++) {
        const struct result *r = find(b, k, v, n);

        if (r != NULL)
            g[m++] = r->best;
    }
    return spread_of(g, m);
}

/* ---- output ---- */

static void print_row(const struct bench *b, const struct result *r)
{
    printf("  %-6s %-12s %4d  %7.3f ns  (median %7.3f)  %7.1f Mupd/s  %5.1f%% of roofline\n",
           kernel_name[r->kernel], variant_name[r->variant], r->n, r->best * 1e9,
           r->median * 1e9, 1e-6 / r->best, 100.0 * share(b, r->best));
    fflush(stdout);
}

struct panel {
    double x, y, w, h;
    int n0, n1;
    double g0, g1;      /* grind time range, ns */
};

static double px(const struct panel *p, double n)
{
    return p->x + p->w * (n - p->n0) / (double)(p->n1 - p->n0);
}

static double py(const struct panel *p, double g)
{
    return p->y + p->h - p->h * (g - p->g0) / (p->g1 - p->g0);
}

static void svg_panel(FILE *f, const struct bench *b, enum kernel k, int n0, int n1,
                      double x, double y, const char *title)
{
    struct panel p = { x, y, 420, 260, n0, n1, 0, 0 };
    double gmax = 0;

    for (int i = 0; i < b->nres; i++)
        if (b->res[i].kernel == k && b->res[i].n >= n0 && b->res[i].n <= n1
            && b->res[i].best * 1e9 > gmax)
            gmax = b->res[i].best * 1e9;
    p.g1 = gmax > 0 ? gmax * 1.1 : 1;
    fprintf(f, "<text x='%g' y='%g' font-weight='bold'>%s</text>\n", x, y - 10, title);
    fprintf(f, "<rect x='%g' y='%g' width='%g' height='%g' fill='none' stroke='#444'/>\n", p.x,
            p.y, p.w, p.h);
    for (int t = 0; t <= 5; t++) {
        double g = p.g1 * t / 5.0;

        fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd'/>", p.x, py(&p, g),
                p.x + p.w, py(&p, g));
        fprintf(f, "<text x='%g' y='%g' text-anchor='end' font-size='11'>%.2f</text>\n",
                p.x - 4, py(&p, g) + 4, g);
    }
    for (int t = 0; t <= 4; t++) {
        int n = n0 + (n1 - n0) * t / 4;

        fprintf(f, "<text x='%g' y='%g' text-anchor='middle' font-size='11'>%d</text>\n",
                px(&p, n), p.y + p.h + 15, n);
    }
    fprintf(f, "<text x='%g' y='%g' text-anchor='middle' font-size='12'>N</text>\n",
            p.x + p.w / 2, p.y + p.h + 32);
    fprintf(f, "<text x='%g' y='%g' font-size='12' transform='rotate(-90 %g %g)' "
               "text-anchor='middle'>grind time (ns per point per iteration)</text>\n",
            p.x - 42, p.y + p.h / 2, p.x - 42, p.y + p.h / 2);
    {
        /* The roofline as a grind time: 24 bytes at the best triad. */
        double roof = b->triad > b->triad_nt ? b->triad : b->triad_nt;
        double g = roof > 0 ? ROOF_BYTES / roof * 1e9 : 0;

        if (g > 0 && g < p.g1)
            fprintf(f, "<line x1='%g' y1='%.1f' x2='%g' y2='%.1f' stroke='#000' "
                       "stroke-dasharray='4 3'/><text x='%g' y='%.1f' font-size='10'>"
                       "roofline</text>\n",
                    p.x, py(&p, g), p.x + p.w, py(&p, g), p.x + 4, py(&p, g) - 3);
    }
    for (int v = 0; v < V_COUNT; v++) {
        int pts = 0;

        for (int n = n0; n <= n1; n++) {
            const struct result *r = find(b, k, (enum variant)v, n);

            if (r == NULL)
                continue;
            fprintf(f, "%s%.1f,%.1f", pts == 0 ? "<polyline fill='none' stroke-width='1.5' points='"
                                               : " ",
                    px(&p, n), py(&p, r->best * 1e9));
            pts++;
        }
        if (pts > 0)
            fprintf(f, "' stroke='%s'/>\n", variant_color[v]);
        for (int n = n0; n <= n1; n++) {
            const struct result *r = find(b, k, (enum variant)v, n);

            if (r != NULL)
                fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2' fill='%s'/>", px(&p, n),
                        py(&p, r->best * 1e9), variant_color[v]);
        }
        fprintf(f, "\n");
    }
}

static int write_svg(const struct bench *b)
{
    FILE *f = fopen(b->svg, "w");

    if (f == NULL) {
        fprintf(stderr, "kernels: %s: %s\n", b->svg, strerror(errno));
        return -1;
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='1020' height='700' "
               "font-family='sans-serif' font-size='13'>\n<rect width='100%%' height='100%%' "
               "fill='white'/>\n");
    fprintf(f, "<text x='20' y='24' font-size='15'>LiquidVM kernels: grind time against N "
               "(best of %d; triad %.1f GB/s, non-temporal %.1f GB/s)</text>\n",
            b->reps, b->triad * 1e-9, b->triad_nt * 1e-9);
    svg_panel(f, b, K_JACOBI, 64, 512, 80, 70, "Jacobi, N = 64..512");
    svg_panel(f, b, K_RBGS, 64, 512, 580, 70, "Red-black Gauss-Seidel, N = 64..512");
    svg_panel(f, b, K_JACOBI, 140, 200, 80, 400, "Jacobi, N = 140..200");
    svg_panel(f, b, K_RBGS, 140, 200, 580, 400, "Red-black Gauss-Seidel, N = 140..200");
    for (int v = 0; v < V_COUNT; v++)
        fprintf(f, "<rect x='%d' y='682' width='12' height='3' fill='%s'/><text x='%d' "
                   "y='688' font-size='12'>%s</text>\n",
                80 + 180 * v, variant_color[v], 96 + 180 * v, variant_name[v]);
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "kernels: %s: %s\n", b->svg, strerror(errno));
        return -1;
    }
    return 0;
}

struct goals {
    double jac512_fast, jac512_fast1;       /* share of roofline */
    double rb_ratio_min, rb_fast_ratio_min; /* N >= 256: naive/tiled+gcdpad, naive/fast */
    double spread_pad, spread_naive, spread_fast;
    int have_jac512, have_rb256, have_spread;
};

static void evaluate(const struct bench *b, struct goals *g)
{
    const struct result *f, *f1;

    memset(g, 0, sizeof(*g));
    f = find(b, K_JACOBI, V_FAST, 512);
    f1 = find(b, K_JACOBI, V_FAST1, 512);
    if (f != NULL && f1 != NULL) {
        g->have_jac512 = 1;
        g->jac512_fast = share(b, f->best);
        g->jac512_fast1 = share(b, f1->best);
    }
    g->rb_ratio_min = g->rb_fast_ratio_min = 1e30;
    for (int x = 0; x < b->nres; x++) {
        const struct result *r = &b->res[x], *naive;

        if (r->kernel != K_RBGS || r->n < 256 || r->variant == V_NAIVE)
            continue;
        naive = find(b, K_RBGS, V_NAIVE, r->n);
        if (naive == NULL)
            continue;
        g->have_rb256 = 1;
        if (r->variant == V_TILED_PAD && naive->best / r->best < g->rb_ratio_min)
            g->rb_ratio_min = naive->best / r->best;
        if (r->variant == V_FAST && naive->best / r->best < g->rb_fast_ratio_min)
            g->rb_fast_ratio_min = naive->best / r->best;
    }
    g->spread_pad = spread(b, K_RBGS, V_TILED_PAD, 140, 200);
    g->spread_naive = spread(b, K_RBGS, V_NAIVE, 140, 200);
    g->spread_fast = spread(b, K_RBGS, V_FAST, 140, 200);
    g->have_spread = g->spread_pad >= 0 && g->spread_naive >= 0;
}

static void print_goals(const struct goals *g)
{
    printf("\nGoals (issue 5); \"fast\" is tiled (whole-row tiles) and padded (line padding),\n"
           "\"tiled+gcdpad\" is the thesis's own scheme (GcdPad3D tiles and padding):\n");
    if (g->have_jac512)
        printf("  Jacobi 512^3, share of the single-sweep roofline: fast %.0f%% "
               "(one sweep per pass %.0f%%); goal >= 80%%: %s\n",
               100 * g->jac512_fast, 100 * g->jac512_fast1,
               g->jac512_fast >= 0.8 ? "met" : "NOT met");
    else
        printf("  Jacobi 512^3: not measured in this run\n");
    if (g->have_rb256)
        printf("  Red-black N >= 256, speed-up over naive at the worst N: fast %.2fx, "
               "tiled+gcdpad %.2fx;\n    goal >= 1.30x: %s by fast, %s by tiled+gcdpad\n",
               g->rb_fast_ratio_min, g->rb_ratio_min,
               g->rb_fast_ratio_min >= 1.3 ? "met" : "NOT met",
               g->rb_ratio_min >= 1.3 ? "met" : "not met");
    else
        printf("  Red-black N >= 256: not measured in this run\n");
    if (g->have_spread)
        printf("  Red-black N = 140..200, largest deviation of grind time from its running "
               "median:\n    fast %.1f%%, tiled+gcdpad %.1f%%, naive %.1f%%; goal <= 5%%: %s by "
               "fast, %s by tiled+gcdpad\n",
               100 * g->spread_fast, 100 * g->spread_pad, 100 * g->spread_naive,
               g->spread_fast <= 0.05 ? "met" : "NOT met",
               g->spread_pad <= 0.05 ? "met" : "not met");
    else
        printf("  Red-black N = 140..200: fewer than 5 sizes measured in this run\n");
}

static int write_json(const struct bench *b, const struct goals *g)
{
    FILE *f = strcmp(b->json, "-") == 0 ? stdout : fopen(b->json, "w");

    if (f == NULL) {
        fprintf(stderr, "kernels: %s: %s\n", b->json, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"cache_bytes\": %zu,\n  \"reps\": %d,\n", b->cache, b->reps);
    fprintf(f, "  \"triad_bytes_per_s\": %.6g,\n  \"triad_nt_bytes_per_s\": %.6g,\n", b->triad,
            b->triad_nt);
    fprintf(f, "  \"roofline_bytes_per_update\": %.0f,\n", ROOF_BYTES);
    fprintf(f, "  \"goals\": {\"jacobi512_fast_share\": %.4f, \"jacobi512_fast1_share\": %.4f, "
               "\"rbgs_tiled_gcdpad_speedup_min_n256\": %.4f, "
               "\"rbgs_fast_speedup_min_n256\": %.4f, "
               "\"rbgs_spread_tiled_gcdpad\": %.4f, \"rbgs_spread_fast\": %.4f, "
               "\"rbgs_spread_naive\": %.4f},\n",
            g->jac512_fast, g->jac512_fast1, g->have_rb256 ? g->rb_ratio_min : 0,
            g->have_rb256 ? g->rb_fast_ratio_min : 0, g->spread_pad, g->spread_fast,
            g->spread_naive);
    fprintf(f, "  \"results\": [\n");
    for (int x = 0; x < b->nres; x++) {
        const struct result *r = &b->res[x];

        fprintf(f, "    {\"kernel\": \"%s\", \"variant\": \"%s\", \"n\": %d, \"iters\": %d, "
                   "\"grind_best_s\": %.6g, \"grind_median_s\": %.6g, \"updates_per_s\": %.6g, "
                   "\"roofline_share\": %.4f}%s\n",
                kernel_name[r->kernel], variant_name[r->variant], r->n, r->iters, r->best,
                r->median, 1.0 / r->best, share(b, r->best), x + 1 < b->nres ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (f != stdout && fclose(f) != 0) {
        fprintf(stderr, "kernels: %s: %s\n", b->json, strerror(errno));
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kernels [--quick] [--json PATH|-] [--svg PATH] [--cache BYTES] [--reps N]\n"
            "               [--rounds N]"
            " [--only jacobi|rbgs] [--sizes N,N,...] [--odd N0:N1:STEP]\n"
            "               [--noise N] [--steps T] [--jrows R] [--tile-j R]\n"
            "\n"
            "Grind time and updates/s of the stencil kernels for N = 64..512 and\n"
            "N = 140..200, beside a STREAM triad measured in the same run; prints each\n"
            "variant's share of the memory roofline (24 bytes per update at the fastest\n"
            "triad) and the goals of issue 5, and plots grind time against N as SVG.\n"
            "Variants: naive (reference), tiled and tiled+gcdpad (the thesis's GcdPad3D\n"
            "tiles, unpadded and padded, a sweep per colour), fast-1sweep and fast (whole-\n"
            "row tiles, line padding, AVX2; Jacobi 6 sweeps per pass, red-black fused).\n"
            "Default run: about 3 minutes; --quick: about a minute.\n"
            "\n"
            "  --quick         fewer sizes and repetitions\n"
            "  --json PATH     write every figure as JSON (- for stdout)\n"
            "  --svg PATH      the plot (default kernels.svg)\n"
            "  --cache BYTES   cache size for tiles and padding (default: detected)\n"
            "  --reps N        repetitions per point (default 5, quick 3)\n"
            "  --rounds N      rounds of the odd-size series, half in each allocation\n"
            "                  order (default 6, quick 2)\n"
            "  --only K        run one kernel\n"
            "  --sizes LIST    the sizes of the N = 64..512 series\n"
            "  --odd A:B:S     the red-black odd-size series (default 140:200:2, quick\n"
            "                  140:200:10); Jacobi uses a step 5 times as long\n"
            "  --noise N       also measure red-black N^3 31 times as the odd series is\n"
            "                  measured: the smoothness statistic of pure noise\n"
            "  --steps T, --jrows R, --tile-j R   override the fast plans' blocking\n");
}

int main(int argc, char **argv)
{
    static struct bench b;
    static const int sizes_full[] = { 64, 128, 256, 384, 512 };
    static const int sizes_quick[] = { 128, 512 };
    int sizes[32], nsizes = 0, odd0 = 140, odd1 = 200, oddstep = 0, only = -1, noise = 0;
    struct goals g;
    size_t detected = 0;
    double t0 = now();

    b.reps = 0;
    b.svg = "kernels.svg";
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--quick") == 0) {
            b.quick = 1;
            continue;
        }
        if (val == NULL) {
            usage(stderr);
            return 2;
        }
        a++;
        if (strcmp(arg, "--json") == 0) {
            b.json = val;
        } else if (strcmp(arg, "--svg") == 0) {
            b.svg = val;
        } else if (strcmp(arg, "--cache") == 0) {
            b.cache = strtoull(val, NULL, 0);
        } else if (strcmp(arg, "--reps") == 0) {
            b.reps = atoi(val);
        } else if (strcmp(arg, "--rounds") == 0) {
            b.rounds = atoi(val);
        } else if (strcmp(arg, "--noise") == 0) {
            noise = atoi(val);
        } else if (strcmp(arg, "--steps") == 0) {
            b.steps = atoi(val);
        } else if (strcmp(arg, "--jrows") == 0) {
            b.jrows = atoi(val);
        } else if (strcmp(arg, "--tile-j") == 0) {
            b.tilej = atoi(val);
        } else if (strcmp(arg, "--only") == 0) {
            only = strcmp(val, "jacobi") == 0 ? K_JACOBI : strcmp(val, "rbgs") == 0 ? K_RBGS : -2;
        } else if (strcmp(arg, "--odd") == 0) {
            if (sscanf(val, "%d:%d:%d", &odd0, &odd1, &oddstep) != 3)
                oddstep = -1;
        } else if (strcmp(arg, "--sizes") == 0) {
            for (const char *s = val; *s != '\0' && nsizes < 32;) {
                char *end;
                long n = strtol(s, &end, 10);

                if (end == s)
                    break;
                sizes[nsizes++] = (int)n;
                s = *end == ',' ? end + 1 : end;
            }
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (only == -2 || oddstep < 0 || b.reps < 0 || b.reps > 32 || b.rounds < 0
        || b.rounds > 64) {
        usage(stderr);
        return 2;
    }
    if (b.reps == 0)
        b.reps = b.quick ? 3 : 5;
    if (oddstep == 0)
        oddstep = b.quick ? 10 : 2;
    b.min_time = b.quick ? 0.05 : 0.1;
    b.series_time = 0.02;
    if (b.rounds == 0)
        b.rounds = b.quick ? 2 : 6;
    if (nsizes == 0) {
        const int *src = b.quick ? sizes_quick : sizes_full;

        nsizes = b.quick ? 2 : 5;
        memcpy(sizes, src, (size_t)nsizes * sizeof(int));
    }
    if (b.cache == 0) {
        if (kern_cache_detect(&detected) == 0)
            b.cache = detected;
        else
            b.cache = KERN_CACHE_DEFAULT;
    }

    printf("LiquidVM stencil kernels: cache %zu bytes (%s), %d repetitions per point\n",
           b.cache, detected ? "detected" : "given", b.reps);
    b.triad = triad((size_t)1 << 25, b.quick ? 5 : 10, 0);
    b.triad_nt = triad((size_t)1 << 25, b.quick ? 5 : 10, 1);
    printf("STREAM triad (3 x 256 MiB): %.2f GB/s, with non-temporal stores %.2f GB/s\n\n",
           b.triad * 1e-9, b.triad_nt * 1e-9);

    for (int k = K_JACOBI; k <= K_RBGS; k++) {
        if (only >= 0 && only != k)
            continue;
        printf("%s, N = 64..512:\n", kernel_name[k]);
        for (int s = 0; s < nsizes; s++) {
            for (int v = 0; v < V_COUNT; v++) {
                if (k == K_RBGS && v == V_FAST1)
                    continue;
                measure(&b, (enum kernel)k, (enum variant)v, sizes[s]);
                print_row(&b, &b.res[b.nres - 1]);
            }
        }
    }
    teardown(&b.spare);
    for (int k = K_JACOBI; k <= K_RBGS; k++) {
        /* Seed 000 Figure 15 is red-black; Jacobi gets fewer sizes. */
        int step = k == K_RBGS ? oddstep : 5 * oddstep, ns[256], count = 0;

        if (only >= 0 && only != k)
            continue;
        for (int n = odd0; n <= odd1 && count < 256; n += step)
            ns[count++] = n;
        printf("%s, N = %d..%d step %d, %d interleaved rounds:\n", kernel_name[k], odd0, odd1,
               step, b.rounds);
        for (int v = 0; v < V_COUNT; v++)
            if (v != V_FAST1 && v != V_TILED)
                measure_series(&b, (enum kernel)k, (enum variant)v, ns, count, b.rounds, NULL);
    }

    if (noise > 0 && noise <= 1024) {
        /*
         * The noise floor of the smoothness goal: one size, measured as
         * often and in the same way as the odd-size series, gets the same
         * statistic.  Whatever it shows is this machine, not the kernel.
         */
        int ns[31];
        double best[31];

        for (int x = 0; x < 31; x++)
            ns[x] = noise;
        for (int v = V_NAIVE; v <= V_FAST; v += V_FAST - V_NAIVE) {
            measure_series(&b, K_RBGS, (enum variant)v, ns, 31, b.rounds, best);
            printf("noise floor: red-black %s, N = %d measured 31 times as the series: "
                   "largest deviation from the running median %.1f%%\n",
                   variant_name[v], noise, 100 * spread_of(best, 31));
        }
    }

    /* Measured again at the end, so the roofline is the best the memory
     * did during the whole run, not during one lucky or unlucky moment. */
    {
        double t = triad((size_t)1 << 25, b.quick ? 5 : 10, 0);
        double tn = triad((size_t)1 << 25, b.quick ? 5 : 10, 1);

        printf("\nSTREAM triad again: %.2f GB/s, non-temporal %.2f GB/s\n", t * 1e-9, tn * 1e-9);
        if (t > b.triad)
            b.triad = t;
        if (tn > b.triad_nt)
            b.triad_nt = tn;
    }
    printf("roofline: %.0f bytes per update at %.2f GB/s (the best triad) = %.1f Mupd/s; the\n"
           "shares printed above used the first triad, the goals below use this one\n",
           ROOF_BYTES, (b.triad > b.triad_nt ? b.triad : b.triad_nt) * 1e-9,
           (b.triad > b.triad_nt ? b.triad : b.triad_nt) / ROOF_BYTES * 1e-6);

    evaluate(&b, &g);
    print_goals(&g);
    if (write_svg(&b) == 0)
        printf("plot: %s\n", b.svg);
    if (b.json != NULL && write_json(&b, &g) == 0 && strcmp(b.json, "-") != 0)
        printf("json: %s\n", b.json);
    printf("elapsed %.0f s\n", now() - t0);
    return 0;
}
