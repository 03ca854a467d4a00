/*
 * vmrun_advise.c - `vmrun advise`, the offline advisor of seed 001 chapter 7
 * (Fig. 42): rank the decompositions of a stencil job by predicted time per
 * iteration from speeds, lambda and tau the user supplies, without a VM.
 *
 * It only reads the command line, turns it into a struct decomp_job and prints
 * what decomp/ ranked and formatted; the cost model lives in decomp_cost.c and
 * the ranking in decomp_advisor.c.  Everything a human typed is checked here,
 * so the library never sees a value it would refuse: a bad option is exit 2
 * with a message naming it, a job no method can place is exit 1.
 *
 * Units.  --grid counts points, as `vmrun stencil --grid` does; with --cell
 * the advisor places quanta of that many points (the unit the runtime places),
 * else single points.  Speeds are updates (points) per second per host, so a
 * point costs one work unit; --work changes that unit and --flops takes the
 * thesis's Mflops instead.
 */
#include "vmrun.h"

#include "decomp.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADVISE_MAX_HOSTS 4096
/* Cells the advisor places one by one: ten methods over 2^24 cells take a
 * few seconds and 64 MiB; beyond that, quanta (--cell) are the right unit. */
#define ADVISE_MAX_CELLS ((size_t)1 << 24)

/* Limits on typed numbers, so that no product in the cost model overflows to
 * infinity and every message can say what range is wanted. */
#define ADVISE_MAX_LAMBDA 3600.0        /* seconds per message */
#define ADVISE_MAX_TAU 1.0              /* seconds per byte */
#define ADVISE_MIN_SPEED 1e-6
#define ADVISE_MAX_SPEED 1e18
#define ADVISE_MAX_WORK 1e12            /* work units (or flops) per point */
#define ADVISE_MAX_BYTES 1e9            /* bytes per point, per frame */

struct advise_opts {
    int ndim;                   /* 2 or 3, from --grid */
    const char *grid_arg;       /* --grid as typed, for messages */
    unsigned long grid[3];      /* as typed: rows x cols, or nx x ny x nz */
    int ncell;                  /* 0, 1 (same size on every axis) or ndim */
    unsigned long cell[3];
    int stencil;                /* 0 (from the grid), 5 or 7 */
    int procs;                  /* --procs, 0 when not given */
    int comm_only;              /* no --speeds: equal hosts, no compute term */
    int nspeeds;
    double *speed;              /* ADVISE_MAX_HOSTS entries */
    int has_lambda, has_tau;
    double work;                /* work units per point; < 0 when not given */
    double flops;               /* flops per point (speeds in Mflops); < 0 when not given */
    double bytes;               /* bytes per point sent to a neighbour */
    int json;
    struct decomp_net net;
    unsigned methods;
    uint64_t seed;
    double group_tol;
    unsigned periodic;
    const char *name;
};

static const char advise_usage_text[] =
    "usage: vmrun advise --grid G --speeds S1,S2,... --lambda T --tau T [options]\n"
    "       vmrun advise --grid G --procs P --lambda T --tau T [options]\n"
    "\n"
    "Rank the decompositions of a stencil job by predicted time per iteration\n"
    "(best = 1.00) with the network cost model of seed 001, without a VM.\n"
    "\n"
    "  --grid G          N (an N x N x N cube), NXxNYxNZ, or ROWSxCOLS (2D); points\n"
    "  --speeds LIST     updates (points) per second of each host, comma separated\n"
    "  --procs P         P hosts, communication only (no speeds, no compute term)\n"
    "  --lambda T        seconds per message; suffix s, ms, us or ns (2.5ms)\n"
    "  --tau T           seconds per byte on the wire; same suffixes (1.5us)\n"
    "  --stencil 5|7     5-point (2D grid) or 7-point (3D grid); default from --grid\n"
    "  --network KIND    shared (one message on the wire at a time, default) or\n"
    "                    switched (every host receives at once)\n"
    "  --work W          work units per point per iteration, speeds then in units/s\n"
    "                    (default 1: one update per point)\n"
    "  --flops F         flops per point per iteration, speeds then in Mflops\n"
    "  --bytes D         bytes per point sent to a neighbour (default 8)\n"
    "  --cell C          place quanta of C points (N, or one size per grid axis, each\n"
    "                    dividing it) instead of single points\n"
    "  --mtu M           data bytes per frame, 0 for no framing (default 1460)\n"
    "  --frame F         header and trailer bytes per frame (default 58)\n"
    "  --periodic        wrap every axis (the thesis's torus)\n"
    "  --methods LIST    rank only these: row,point,hilbert,interleaved,scatter,\n"
    "                    block,brbd,fbrd,phd,orb (default all)\n"
    "  --seed N          scatter's random seed (default 1)\n"
    "  --group-tol X     PHD: relative speed difference that still counts as equal\n"
    "  --name NAME       application name for the report\n"
    "  --json            print {\"ranking\":[{\"method\",\"rating\",\"predicted_s\"},...],...}\n"
    "  --help            print this text\n"
    "\n"
    "Exit status: 0 ranked, 1 no method can place the job, 2 bad options.\n"
    "The thesis's Fig. 42 (Row 1.00 above Block):\n"
    "  vmrun advise --grid 64x64 --periodic --speeds 10,10,10,10 --flops 10 \\\n"
    "               --lambda 2.5ms --tau 1.5us --methods row,block --name thermal.c\n";

static int
advise_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
advise_bad(const char *fmt, ...)
{
    va_list ap;

    fputs("vmrun advise: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'vmrun advise --help'.\n", stderr);
    return VMRUN_EXIT_USAGE;
}

/* A finite number with nothing after it; strtod's "nan" and "inf" are refused. */
static int
parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int
parse_range(const char *s, double lo, double hi, double *out)
{
    return parse_double(s, out) < 0 || !(*out >= lo && *out <= hi) ? -1 : 0;
}

/* A time with an optional unit suffix, in [0, max] seconds. */
static int
parse_seconds(const char *s, double max, double *out)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = { { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 } };
    char buf[64];
    size_t n = strlen(s);
    double scale = 1;

    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n + 1);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t k = strlen(units[u].suffix);
        if (n > k && strcmp(buf + n - k, units[u].suffix) == 0) {
            buf[n - k] = '\0';
            scale = units[u].scale;
            break;
        }
    }
    if (parse_double(buf, out) < 0)
        return -1;
    *out *= scale;
    return *out >= 0 && *out <= max ? 0 : -1;
}

/* "N", "AxB" or "AxBxC" of integers 1 .. DECOMP_MAX_EXTENT; the count or -1. */
static int
parse_extents(const char *s, unsigned long *d)
{
    const char *p = s;
    int n = 0;

    while (n < 3) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno != 0 || v == 0 || v > DECOMP_MAX_EXTENT)
            return -1;
        d[n++] = v;
        if (*end == '\0')
            return n;
        if (*end != 'x')
            return -1;
        p = end + 1;
    }
    return -1;
}

#define ITEM_MAX 64

/* Calls fn on each comma-separated item of s; an empty item is -EINVAL.
 * On failure item holds the item refused, for the message, and fn's code
 * comes back. */
static int
for_each_item(const char *s, int (*fn)(const char *item, void *arg), void *arg,
              char item[ITEM_MAX])
{
    for (;;) {
        size_t len = strcspn(s, ",");
        if (len >= ITEM_MAX)
            len = ITEM_MAX - 1;
        memcpy(item, s, len);
        item[len] = '\0';
        if (len == 0)
            return -EINVAL;
        int rc = fn(item, arg);
        if (rc < 0)
            return rc;
        if (s[len] == '\0')
            return 0;
        s += len + 1;
    }
}

static int
add_speed(const char *item, void *arg)
{
    struct advise_opts *o = arg;

    if (o->nspeeds >= ADVISE_MAX_HOSTS)
        return -E2BIG;
    if (parse_range(item, ADVISE_MIN_SPEED, ADVISE_MAX_SPEED, &o->speed[o->nspeeds]) < 0)
        return -EINVAL;
    o->nspeeds++;
    return 0;
}

static int
add_method(const char *item, void *arg)
{
    unsigned *mask = arg;
    enum decomp_method m;

    if (decomp_method_parse(item, &m) < 0)
        return -EINVAL;
    *mask |= 1u << m;
    return 0;
}

enum {
    OPT_GRID = 256, OPT_SPEEDS, OPT_PROCS, OPT_LAMBDA, OPT_TAU, OPT_STENCIL, OPT_NETWORK,
    OPT_WORK, OPT_FLOPS, OPT_BYTES, OPT_CELL, OPT_MTU, OPT_FRAME, OPT_PERIODIC, OPT_METHODS,
    OPT_SEED, OPT_GROUP_TOL, OPT_NAME, OPT_JSON, OPT_HELP
};

static const struct option advise_options[] = {
    { "grid", required_argument, NULL, OPT_GRID },
    { "speeds", required_argument, NULL, OPT_SPEEDS },
    { "procs", required_argument, NULL, OPT_PROCS },
    { "lambda", required_argument, NULL, OPT_LAMBDA },
    { "tau", required_argument, NULL, OPT_TAU },
    { "stencil", required_argument, NULL, OPT_STENCIL },
    { "network", required_argument, NULL, OPT_NETWORK },
    { "work", required_argument, NULL, OPT_WORK },
    { "flops", required_argument, NULL, OPT_FLOPS },
    { "bytes", required_argument, NULL, OPT_BYTES },
    { "cell", required_argument, NULL, OPT_CELL },
    { "mtu", required_argument, NULL, OPT_MTU },
    { "frame", required_argument, NULL, OPT_FRAME },
    { "periodic", no_argument, NULL, OPT_PERIODIC },
    { "methods", required_argument, NULL, OPT_METHODS },
    { "seed", required_argument, NULL, OPT_SEED },
    { "group-tol", required_argument, NULL, OPT_GROUP_TOL },
    { "name", required_argument, NULL, OPT_NAME },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
};

static const char *
option_name(int val)
{
    for (const struct option *p = advise_options; p->name != NULL; p++)
        if (p->val == val)
            return p->name;
    return "?";
}

/* One option and its value; VMRUN_EXIT_OK or VMRUN_EXIT_USAGE. */
static int
advise_option(struct advise_opts *o, int ch, const char *arg)
{
    const char *opt = option_name(ch);
    char item[ITEM_MAX];
    char *end;

    switch (ch) {
    case OPT_GRID:
        o->grid_arg = arg;
        if ((o->ndim = parse_extents(arg, o->grid)) < 0)
            return advise_bad("--grid '%s': want N, NXxNYxNZ or ROWSxCOLS, each from 1 to %u",
                              arg, DECOMP_MAX_EXTENT);
        if (o->ndim == 1) {
            o->grid[1] = o->grid[2] = o->grid[0];
            o->ndim = 3;
        }
        return VMRUN_EXIT_OK;
    case OPT_CELL:
        if ((o->ncell = parse_extents(arg, o->cell)) < 0)
            return advise_bad("--cell '%s': want N, AxB or AxBxC points, each from 1 to %u",
                              arg, DECOMP_MAX_EXTENT);
        return VMRUN_EXIT_OK;
    case OPT_SPEEDS: {
        o->nspeeds = 0;
        int rc = for_each_item(arg, add_speed, o, item);
        if (rc == -E2BIG)
            return advise_bad("--speeds: more than %d hosts", ADVISE_MAX_HOSTS);
        if (rc < 0)
            return advise_bad("--speeds '%s': '%s' is not a speed; want numbers from %g to %g "
                              "(updates per second) separated by commas",
                              arg, item, ADVISE_MIN_SPEED, ADVISE_MAX_SPEED);
        return VMRUN_EXIT_OK;
    }
    case OPT_PROCS: {
        errno = 0;
        long p = strtol(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || p < 1 || p > ADVISE_MAX_HOSTS)
            return advise_bad("--procs '%s': want a host count from 1 to %d", arg,
                              ADVISE_MAX_HOSTS);
        o->procs = (int)p;
        return VMRUN_EXIT_OK;
    }
    case OPT_LAMBDA:
        o->has_lambda = 1;
        if (parse_seconds(arg, ADVISE_MAX_LAMBDA, &o->net.lambda) < 0)
            return advise_bad("--lambda '%s': want seconds per message from 0 to %g, such as "
                              "2.5ms",
                              arg, ADVISE_MAX_LAMBDA);
        return VMRUN_EXIT_OK;
    case OPT_TAU:
        o->has_tau = 1;
        if (parse_seconds(arg, ADVISE_MAX_TAU, &o->net.tau) < 0)
            return advise_bad("--tau '%s': want seconds per byte from 0 to %g, such as 1.5us",
                              arg, ADVISE_MAX_TAU);
        return VMRUN_EXIT_OK;
    case OPT_STENCIL:
        if (strcmp(arg, "5") == 0)
            o->stencil = 5;
        else if (strcmp(arg, "7") == 0)
            o->stencil = 7;
        else
            return advise_bad("--stencil '%s': want 5 (2D) or 7 (3D)", arg);
        return VMRUN_EXIT_OK;
    case OPT_NETWORK:
        if (strcmp(arg, "shared") == 0)
            o->net.kind = DECOMP_NET_SHARED;
        else if (strcmp(arg, "switched") == 0)
            o->net.kind = DECOMP_NET_SWITCHED;
        else
            return advise_bad("--network '%s': want shared or switched", arg);
        return VMRUN_EXIT_OK;
    case OPT_WORK:
    case OPT_FLOPS:
        if (parse_range(arg, 0, ADVISE_MAX_WORK, ch == OPT_WORK ? &o->work : &o->flops) < 0)
            return advise_bad("--%s '%s': want a number from 0 to %g per point", opt, arg,
                              ADVISE_MAX_WORK);
        return VMRUN_EXIT_OK;
    case OPT_BYTES:
        if (parse_range(arg, 0, ADVISE_MAX_BYTES, &o->bytes) < 0 || o->bytes == 0)
            return advise_bad("--bytes '%s': want bytes per point above 0, at most %g", arg,
                              ADVISE_MAX_BYTES);
        return VMRUN_EXIT_OK;
    case OPT_MTU:
        /* A fractional payload under one byte would count frames by the billion. */
        if (parse_range(arg, 0, ADVISE_MAX_BYTES, &o->net.payload) < 0 ||
            (o->net.payload > 0 && o->net.payload < 1))
            return advise_bad("--mtu '%s': want 0 (no framing) or bytes from 1 to %g", arg,
                              ADVISE_MAX_BYTES);
        return VMRUN_EXIT_OK;
    case OPT_FRAME:
        if (parse_range(arg, 0, ADVISE_MAX_BYTES, &o->net.overhead) < 0)
            return advise_bad("--frame '%s': want bytes from 0 to %g", arg, ADVISE_MAX_BYTES);
        return VMRUN_EXIT_OK;
    case OPT_PERIODIC:
        o->periodic = DECOMP_PERIODIC_ALL;
        return VMRUN_EXIT_OK;
    case OPT_METHODS:
        o->methods = 0;
        if (for_each_item(arg, add_method, &o->methods, item) < 0) {
            char names[128] = "";
            for (int m = 0; m < DECOMP_NMETHODS; m++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         m ? "," : "", decomp_method_name((enum decomp_method)m));
            return advise_bad("--methods '%s': unknown method '%s'; want some of %s", arg, item,
                              names);
        }
        return VMRUN_EXIT_OK;
    case OPT_SEED:
        errno = 0;
        o->seed = strtoull(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || arg[0] < '0' || arg[0] > '9')
            return advise_bad("--seed '%s': want an integer from 0 to %" PRIu64, arg,
                              UINT64_MAX);
        return VMRUN_EXIT_OK;
    case OPT_GROUP_TOL:
        if (parse_range(arg, 0, 1, &o->group_tol) < 0 || o->group_tol == 1)
            return advise_bad("--group-tol '%s': want a number in [0, 1)", arg);
        return VMRUN_EXIT_OK;
    case OPT_NAME:
        o->name = arg;
        return VMRUN_EXIT_OK;
    case OPT_JSON:
        o->json = 1;
        return VMRUN_EXIT_OK;
    default:
        return advise_bad("internal: option %d not handled", ch);
    }
}

/* The options that only make sense together; VMRUN_EXIT_OK or VMRUN_EXIT_USAGE. */
static int
advise_check(struct advise_opts *o)
{
    if (o->ndim == 0)
        return advise_bad("--grid is required (N, NXxNYxNZ or ROWSxCOLS points)");
    if (o->nspeeds == 0 && o->procs == 0)
        return advise_bad("give --speeds (updates per second of each host), or --procs for "
                          "communication only");
    if (o->nspeeds != 0 && o->procs != 0 && o->nspeeds != o->procs)
        return advise_bad("--procs %d but --speeds lists %d hosts", o->procs, o->nspeeds);
    if (!o->has_lambda)
        return advise_bad("--lambda is required (seconds per message, such as 2.5ms)");
    if (!o->has_tau)
        return advise_bad("--tau is required (seconds per byte, such as 1.5us)");
    if (o->work >= 0 && o->flops >= 0)
        return advise_bad("--work and --flops both give the work per point; give one");
    if (o->nspeeds == 0 && (o->work >= 0 || o->flops >= 0))
        return advise_bad("--%s needs --speeds: with --procs alone there is no compute term",
                          o->work >= 0 ? "work" : "flops");

    int want = o->ndim == 2 ? 5 : 7;
    if (o->stencil != 0 && o->stencil != want)
        return advise_bad("--stencil %d needs a %s grid, but --grid %s is %dD (%d-point)",
                          o->stencil, o->stencil == 5 ? "2D (ROWSxCOLS)" : "3D (N or NXxNYxNZ)",
                          o->grid_arg, o->ndim, want);

    if (o->nspeeds == 0) {
        for (int i = 0; i < o->procs; i++)
            o->speed[i] = 1;
        o->nspeeds = o->procs;
        o->comm_only = 1;
    }

    if (o->ncell == 1) {
        o->cell[1] = o->cell[2] = o->cell[0];
    } else if (o->ncell != 0 && o->ncell != o->ndim) {
        return advise_bad("--cell gives %d sizes but --grid has %d axes", o->ncell, o->ndim);
    } else if (o->ncell == 0) {
        o->cell[0] = o->cell[1] = o->cell[2] = 1;
    }
    /* At most 3 x 21 bits: no overflow in 64. */
    uint64_t cells = 1;
    for (int a = 0; a < o->ndim; a++) {
        if (o->grid[a] % o->cell[a] != 0)
            return advise_bad("--cell: quanta of %lu points do not divide the %lu points of "
                              "--grid %s",
                              o->cell[a], o->grid[a], o->grid_arg);
        cells *= o->grid[a] / o->cell[a];
    }
    if (cells > ADVISE_MAX_CELLS)
        return advise_bad("--grid %s: %" PRIu64 " %s to place one by one, more than %zu; give %s",
                          o->grid_arg, cells, o->ncell ? "quanta" : "points", ADVISE_MAX_CELLS,
                          o->ncell ? "larger --cell quanta" : "--cell to place quanta of points");
    return VMRUN_EXIT_OK;
}

/*
 * The command line, parsed and checked: VMRUN_EXIT_OK, VMRUN_EXIT_USAGE, or
 * -1 when --help was printed.
 */
static int
advise_parse(int argc, char **argv, struct advise_opts *o)
{
    int ch, rc;

    /* optind 0 makes glibc's getopt start afresh, whatever ran before. */
    optind = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", advise_options, NULL)) != -1) {
        if (ch == OPT_HELP) {
            fputs(advise_usage_text, stdout);
            return -1;
        }
        if (ch == ':')
            return advise_bad("option '--%s' needs a value", option_name(optopt));
        if (ch == '?')
            return advise_bad("unknown option '%s'", argv[optind - 1]);
        if ((rc = advise_option(o, ch, optarg)) != VMRUN_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return advise_bad("unexpected argument '%s'", argv[optind]);
    return advise_check(o);
}

/* The checked options as the library's job; speeds stay in o. */
static void
advise_job(const struct advise_opts *o, struct decomp_job *job)
{
    unsigned long cell[3] = { o->cell[0], o->cell[1], o->cell[2] };

    memset(job, 0, sizeof *job);
    job->name = o->name;
    job->grid.ndim = o->ndim;
    job->grid.periodic = o->periodic;
    if (o->ndim == 2) {
        /* Typed as the thesis writes it, rows x columns; axis 0 is x. */
        job->grid.dim[0] = (uint32_t)(o->grid[1] / o->cell[1]);
        job->grid.dim[1] = (uint32_t)(o->grid[0] / o->cell[0]);
        job->grid.dim[2] = 1;
        cell[0] = o->cell[1];
        cell[1] = o->cell[0];
        cell[2] = 1;
    } else {
        for (int a = 0; a < 3; a++)
            job->grid.dim[a] = (uint32_t)(o->grid[a] / o->cell[a]);
    }
    job->nowners = o->nspeeds;
    job->speed = o->speed;
    double points = (double)cell[0] * cell[1] * cell[2];
    for (int a = 0; a < 3; a++)
        job->work.face_bytes[a] = o->bytes * points / cell[a];
    /* Speeds in Mflops make a point's work Mflop; else it is in the speeds'
     * own unit, one update by default. */
    double per_point = o->flops >= 0 ? o->flops / 1e6 : o->work >= 0 ? o->work : 1;
    job->work.work_per_cell = o->comm_only ? 0 : per_point * points;
    job->net = o->net;
    job->methods = o->methods;
    job->seed = o->seed;
    job->group_tol = o->group_tol;
}

static void
print_extents(const unsigned long *d, int n)
{
    for (int a = 0; a < n; a++)
        printf("%s%lu", a ? "x" : "", d[a]);
}

/* Prints what the library formatted; the JSON object gains the stencil, the
 * points and the quanta, which the library does not know. */
static int
advise_print(const struct advise_opts *o, const struct decomp_advice *adv)
{
    ssize_t need = o->json ? decomp_advice_json(adv, NULL, 0) : decomp_advice_table(adv, NULL, 0);
    char *text = need >= 0 ? malloc((size_t)need + 1) : NULL;

    if (text == NULL) {
        fprintf(stderr, "vmrun advise: %s\n", strerror(need < 0 ? (int)-need : ENOMEM));
        return VMRUN_EXIT_FAIL;
    }
    if (o->json)
        decomp_advice_json(adv, text, (size_t)need + 1);
    else
        decomp_advice_table(adv, text, (size_t)need + 1);

    int stencil = o->ndim == 2 ? 5 : 7;
    if (o->json) {
        /* The library's object ends in "}\n": continue it with our keys. */
        text[need - 2] = '\0';
        printf("%s,\"stencil\":%d,\"points\":\"", text, stencil);
        print_extents(o->grid, o->ndim);
        printf("\",\"cell\":\"");
        print_extents(o->cell, o->ndim);
        printf("\",\"compute\":%s}\n", o->comm_only ? "false" : "true");
    } else {
        printf("Points: ");
        print_extents(o->grid, o->ndim);
        if (o->ncell != 0) {
            printf(" in quanta of ");
            print_extents(o->cell, o->ndim);
        }
        printf(", %d-point stencil, %s\n", stencil,
               o->comm_only     ? "communication only (no speeds)"
               : o->flops >= 0  ? "speeds in Mflops"
               : o->work >= 0   ? "speeds in work units/s"
                                : "speeds in updates/s");
        fputs(text, stdout);
    }
    free(text);
    return fflush(stdout) == 0 && !ferror(stdout) ? VMRUN_EXIT_OK : VMRUN_EXIT_FAIL;
}

int
vmrun_advise_main(int argc, char **argv)
{
    static double speed[ADVISE_MAX_HOSTS];
    struct advise_opts o = {
        .speed = speed,
        .work = -1,
        .flops = -1,
        .bytes = 8,
        .net = { 0, 0, DECOMP_ETH_PAYLOAD, DECOMP_ETH_OVERHEAD, DECOMP_NET_SHARED },
        .seed = 1,
    };
    struct decomp_job job;
    struct decomp_advice adv;

    int rc = advise_parse(argc, argv, &o);
    if (rc < 0)
        return VMRUN_EXIT_OK;
    if (rc != VMRUN_EXIT_OK)
        return rc;
    advise_job(&o, &job);
    rc = decomp_advise(&job, &adv);
    if (rc == -EINVAL) {
        /* Every value was checked above; what is left is more hosts than cells. */
        fprintf(stderr, "vmrun advise: no method can place %zu cells on %d hosts\n",
                decomp_grid_cells(&job.grid), job.nowners);
        return VMRUN_EXIT_FAIL;
    }
    if (rc < 0) {
        fprintf(stderr, "vmrun advise: %s\n", strerror(-rc));
        return VMRUN_EXIT_FAIL;
    }
    if ((rc = advise_print(&o, &adv)) != VMRUN_EXIT_OK)
        return rc;
    if (adv.nranked == 0) {
        fprintf(stderr, "vmrun advise: no method can place this grid on %d hosts\n",
                job.nowners);
        return VMRUN_EXIT_FAIL;
    }
    return VMRUN_EXIT_OK;
}
