/*
 * decomp_advise: the offline advisor of seed 001 chapter 7 (Fig. 42), until
 * `vmrun advise` exists. It only reads the command line, asks decomp/ to
 * rank the decompositions and prints what decomp/ formatted.
 *
 * Exit status: 0 ranked, 1 the advisor failed (out of memory, or no method
 * can place the job), 2 bad command line. Without arguments it ranks the
 * thesis's Fig. 42 example, so `make bench`, which runs every benchmark bare,
 * shows a ranking.
 */
#include "decomp.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOSTS 4096

static const char usage_text[] =
    "usage: decomp_advise --grid ROWSxCOLS | NXxNYxNZ (--procs P | --speeds S1,S2,...)\n"
    "                     [options]\n"
    "\n"
    "Rank grid decompositions for a stencil job by predicted time per iteration\n"
    "(best = 1.00), with the network cost model of seed 001.\n"
    "\n"
    "  --grid G          2D grid ROWSxCOLS (5-point stencil) or 3D NXxNYxNZ (7-point)\n"
    "  --procs P         P processors of equal speed\n"
    "  --speeds LIST     relative speeds in Mflops, comma separated (one per processor)\n"
    "  --flops F         flops per point per iteration (default 0: communication only)\n"
    "  --bytes D         bytes per point sent to a neighbour (default 8)\n"
    "  --cell AxB[xC]    points per grid cell when cells are quanta (default 1)\n"
    "  --lambda T        seconds per message; suffix s, ms, us or ns (default 2.5ms)\n"
    "  --tau T           seconds per byte; same suffixes (default 1.5us)\n"
    "  --mtu M           data bytes per frame, 0 for no framing (default 1460)\n"
    "  --frame F         header and trailer bytes per frame (default 58)\n"
    "  --net KIND        shared (one message on the wire at a time) or switched\n"
    "  --periodic        wrap every axis (the thesis's torus)\n"
    "  --methods LIST    rank only these: row,point,hilbert,interleaved,scatter,\n"
    "                    block,brbd,fbrd,phd,orb (default all)\n"
    "  --seed N          scatter's random seed (default 1)\n"
    "  --group-tol X     PHD: relative speed difference that still counts as equal\n"
    "  --name NAME       application name for the report\n"
    "  --json            print JSON instead of the table\n"
    "  --help            print this text\n"
    "\n"
    "Without arguments: the thesis's Fig. 42 example, as\n"
    "  decomp_advise --grid 64x64 --periodic --speeds 10,10,10,10 --flops 10 \\\n"
    "                --methods row,block --name thermal.c\n";

static int
usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "decomp_advise: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'decomp_advise --help'.\n");
    return 2;
}

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

/* A time with an optional unit suffix. */
static int
parse_seconds(const char *s, double *out)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = { { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 } };
    char buf[64];
    size_t n = strlen(s);

    if (n == 0 || n >= sizeof buf)
        return -1;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t k = strlen(units[u].suffix);
        if (n > k && strcmp(s + n - k, units[u].suffix) == 0) {
            memcpy(buf, s, n - k);
            buf[n - k] = '\0';
            if (parse_double(buf, out) < 0 || *out < 0)
                return -1;
            *out *= units[u].scale;
            return 0;
        }
    }
    return parse_double(s, out) < 0 || *out < 0 ? -1 : 0;
}

/* "AxB" or "AxBxC" of positive integers; returns the count or -1. */
static int
parse_dims(const char *s, unsigned long *d)
{
    int n = 0;
    const char *p = s;

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
            return n >= 2 ? n : -1;
        if (*end != 'x')
            return -1;
        p = end + 1;
    }
    return -1;
}

static int
parse_speeds(const char *s, double *speed, int *n)
{
    const char *p = s;

    *n = 0;
    for (;;) {
        char item[64];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item || *n >= MAX_HOSTS)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_double(item, &speed[*n]) < 0 || !(speed[*n] > 0))
            return -1;
        (*n)++;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static int
parse_methods(const char *s, unsigned *mask)
{
    const char *p = s;

    *mask = 0;
    for (;;) {
        char item[32];
        size_t len = strcspn(p, ",");
        enum decomp_method m;
        if (len == 0 || len >= sizeof item)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (decomp_method_parse(item, &m) < 0)
            return -1;
        *mask |= 1u << m;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "grid", required_argument, NULL, 'g' },   { "procs", required_argument, NULL, 'p' },
        { "speeds", required_argument, NULL, 's' }, { "flops", required_argument, NULL, 'f' },
        { "bytes", required_argument, NULL, 'd' },  { "cell", required_argument, NULL, 'c' },
        { "lambda", required_argument, NULL, 'l' }, { "tau", required_argument, NULL, 't' },
        { "mtu", required_argument, NULL, 'M' },    { "frame", required_argument, NULL, 'F' },
        { "net", required_argument, NULL, 'n' },    { "periodic", no_argument, NULL, 'P' },
        { "methods", required_argument, NULL, 'm' }, { "seed", required_argument, NULL, 'S' },
        { "group-tol", required_argument, NULL, 'G' }, { "name", required_argument, NULL, 'N' },
        { "json", no_argument, NULL, 'j' },         { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static double speed[MAX_HOSTS];
    unsigned long gd[3] = { 0, 0, 0 }, cd[3] = { 1, 1, 1 };
    int ndim = 0, ncell = 0, procs = 0, nspeeds = 0, json = 0;
    double flops = 0, bytes = 8;
    struct decomp_job job;
    char *end;

    memset(&job, 0, sizeof job);
    job.net = (struct decomp_net){ 2.5e-3, 1.5e-6, DECOMP_ETH_PAYLOAD, DECOMP_ETH_OVERHEAD,
                                   DECOMP_NET_SHARED };
    job.seed = 1;

    if (argc == 1) {
        static char *fig42[] = { "decomp_advise", "--grid", "64x64", "--periodic", "--speeds",
                                 "10,10,10,10", "--flops", "10", "--methods", "row,block",
                                 "--name", "thermal.c", NULL };
        argc = (int)(sizeof fig42 / sizeof fig42[0]) - 1;
        argv = fig42;
    }

    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'g':
            if ((ndim = parse_dims(optarg, gd)) < 0)
                return usage_error("--grid '%s': want ROWSxCOLS or NXxNYxNZ, each 1..2097152",
                                   optarg);
            break;
        case 'p':
            errno = 0;
            procs = (int)strtol(optarg, &end, 10);
            if (errno != 0 || *end != '\0' || procs < 1 || procs > MAX_HOSTS)
                return usage_error("--procs '%s': want a count from 1 to 4096", optarg);
            break;
        case 's':
            if (parse_speeds(optarg, speed, &nspeeds) < 0)
                return usage_error("--speeds '%s': want positive numbers separated by commas",
                                   optarg);
            break;
        case 'f':
            if (parse_double(optarg, &flops) < 0 || flops < 0)
                return usage_error("--flops '%s': want a number >= 0", optarg);
            break;
        case 'd':
            if (parse_double(optarg, &bytes) < 0 || !(bytes > 0))
                return usage_error("--bytes '%s': want a number > 0", optarg);
            break;
        case 'c':
            if ((ncell = parse_dims(optarg, cd)) < 0)
                return usage_error("--cell '%s': want AxB or AxBxC points", optarg);
            break;
        case 'l':
            if (parse_seconds(optarg, &job.net.lambda) < 0)
                return usage_error("--lambda '%s': want a time such as 2.5ms", optarg);
            break;
        case 't':
            if (parse_seconds(optarg, &job.net.tau) < 0)
                return usage_error("--tau '%s': want a time per byte such as 1.5us", optarg);
            break;
        case 'M':
            if (parse_double(optarg, &job.net.payload) < 0 || job.net.payload < 0)
                return usage_error("--mtu '%s': want bytes >= 0", optarg);
            break;
        case 'F':
            if (parse_double(optarg, &job.net.overhead) < 0 || job.net.overhead < 0)
                return usage_error("--frame '%s': want bytes >= 0", optarg);
            break;
        case 'n':
            if (strcmp(optarg, "shared") == 0)
                job.net.kind = DECOMP_NET_SHARED;
            else if (strcmp(optarg, "switched") == 0)
                job.net.kind = DECOMP_NET_SWITCHED;
            else
                return usage_error("--net '%s': want shared or switched", optarg);
            break;
        case 'P':
            job.grid.periodic = DECOMP_PERIODIC_ALL;
            break;
        case 'm':
            if (parse_methods(optarg, &job.methods) < 0)
                return usage_error("--methods '%s': unknown method (see --help)", optarg);
            break;
        case 'S':
            errno = 0;
            job.seed = strtoull(optarg, &end, 10);
            if (errno != 0 || *end != '\0' || optarg[0] == '-')
                return usage_error("--seed '%s': want a non-negative integer", optarg);
            break;
        case 'G':
            if (parse_double(optarg, &job.group_tol) < 0 || job.group_tol < 0 ||
                job.group_tol >= 1)
                return usage_error("--group-tol '%s': want a number in [0, 1)", optarg);
            break;
        case 'N':
            job.name = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (ndim == 0)
        return usage_error("%s", "--grid is required");
    if (procs == 0 && nspeeds == 0)
        return usage_error("%s", "give --procs or --speeds");
    if (procs != 0 && nspeeds != 0 && procs != nspeeds)
        return usage_error("%s", "--procs and --speeds disagree on the processor count");
    if (ncell != 0 && ncell != ndim)
        return usage_error("%s", "--cell needs as many sizes as --grid");
    if (nspeeds == 0) {
        for (int i = 0; i < procs; i++)
            speed[i] = 1;
        nspeeds = procs;
    }

    double cells = (double)gd[0] * gd[1] * (ndim == 3 ? gd[2] : 1);
    if (nspeeds > cells) {
        fprintf(stderr, "decomp_advise: %d processors but only %.0f grid cells\n", nspeeds, cells);
        return 2;
    }

    /* A 2D grid is given as the thesis writes it, rows x columns. */
    job.grid.ndim = ndim;
    if (ndim == 2) {
        job.grid.dim[0] = (uint32_t)gd[1];
        job.grid.dim[1] = (uint32_t)gd[0];
        job.grid.dim[2] = 1;
        unsigned long t = cd[0];
        cd[0] = cd[1];
        cd[1] = t;
    } else {
        for (int a = 0; a < 3; a++)
            job.grid.dim[a] = (uint32_t)gd[a];
    }
    job.nowners = nspeeds;
    job.speed = speed;
    double points = (double)cd[0] * cd[1] * cd[2];
    for (int a = 0; a < 3; a++)
        job.work.face_bytes[a] = bytes * points / cd[a];
    /* Speeds are Mflops, so a cell's work is in Mflop. */
    job.work.work_per_cell = flops * points / 1e6;

    struct decomp_advice adv;
    int rc = decomp_advise(&job, &adv);
    if (rc == -EINVAL || rc == -ERANGE) {
        fprintf(stderr, "decomp_advise: this job cannot be placed: %s (%d processors, %.0f "
                        "cells)\n",
                rc == -ERANGE ? "grid too large" : "check the grid, speeds and network values",
                job.nowners, cells);
        return 2;
    }
    if (rc < 0) {
        fprintf(stderr, "decomp_advise: %s\n", strerror(-rc));
        return 1;
    }

    ssize_t need = json ? decomp_advice_json(&adv, NULL, 0) : decomp_advice_table(&adv, NULL, 0);
    char *text = need >= 0 ? malloc((size_t)need + 1) : NULL;
    if (text == NULL) {
        fprintf(stderr, "decomp_advise: %s\n", strerror(need < 0 ? (int)-need : ENOMEM));
        return 1;
    }
    if (json)
        decomp_advice_json(&adv, text, (size_t)need + 1);
    else
        decomp_advice_table(&adv, text, (size_t)need + 1);
    fputs(text, stdout);
    free(text);
    if (adv.nranked == 0) {
        fprintf(stderr, "decomp_advise: no method can place this grid on %d processors\n",
                job.nowners);
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
