/*
 * liq_farm.c - liquid_farm(), a program's own loop over a 1D, 2D or 3D
 * index space as a farm (issue 28's "From C"): the master's options, the
 * tiles (liq_farm.h), the JOB, and each tile's records put in place in the
 * caller's result array, the first result of a tile only (exactly-once
 * results).  The schedule and the VM session are the farm's common ones
 * (liq_farm_sched.c, liq_farm_vm.c), as in `vmrun farm`; the worker role
 * is liq_farm_worker.c.
 */
#include "liq_farm.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq.h"
#include "lvm_err.h"
#include "pvm3.h"

struct fmaster {
    const char *name;
    int n[3], b, t[3];
    size_t record;
    unsigned char *result, *tmp;
};

static void
farm_usage(const char *name)
{
    printf("usage: %s [options]\n"
           "\n"
           "  A loop over an index space, run as a farm on the virtual machine's hosts\n"
           "  (liquid_farm(3)): tiles scheduled by Fractiling.\n"
           "\n"
           "  --hosts LIST           only these hosts (default: every host of the VM)\n"
           "  --tasks-per-host T     workers per host (1)\n"
           "  --json FILE            the report: per host tiles and busy time, every chunk\n"
           "  --quiet                no progress line, no summary\n"
           "  --schedule KIND        fractiling (default), static (equal blocks), self (one by one)\n"
           "  --fraction F           share of what is left each Factoring batch hands out (0.5)\n"
           "  --min-chunk N          smallest chunk in tiles (1)\n"
           "  --reclaim on|off       a host whose owner needs it stops taking chunks (on)\n"
           "  --help                 this text\n"
           "\n"
           "  Exit status: 0 done, 1 the job or the VM failed, 2 bad options.\n",
           name);
}

/* 0, 2 after saying why, or -1 for --help. */
static int
farm_args(struct liq_farm_opts *o, const char **json, const char *name, int argc, char **argv)
{
    enum { O_HOSTS = 256, O_TPH, O_JSON, O_QUIET, O_SCHED, O_FRACTION, O_MINCHUNK, O_RECLAIM,
           O_HELP };
    static const struct option lo[] = {
        { "hosts", required_argument, NULL, O_HOSTS },
        { "tasks-per-host", required_argument, NULL, O_TPH },
        { "json", required_argument, NULL, O_JSON },
        { "quiet", no_argument, NULL, O_QUIET },
        { "schedule", required_argument, NULL, O_SCHED },
        { "fraction", required_argument, NULL, O_FRACTION },
        { "min-chunk", required_argument, NULL, O_MINCHUNK },
        { "reclaim", required_argument, NULL, O_RECLAIM },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0;
    char *end;
    double x;

    liq_farm_opts_defaults(o);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case O_HOSTS:
            o->hosts = optarg;
            if (!liq_hosts_valid(optarg)) {
                fprintf(stderr, "%s: --hosts: expected host names separated by commas, got "
                                "'%s'\n", name, optarg);
                bad = 1;
            }
            break;
        case O_JSON: *json = optarg; break;
        case O_QUIET: o->quiet = 1; break;
        case O_TPH:
        case O_MINCHUNK:
        case O_FRACTION:
            errno = 0;
            x = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || errno != 0 || !isfinite(x) ||
                (c == O_FRACTION ? !(x > 0 && x <= 1)
                                 : (x != floor(x) || x < 1 || x > (c == O_TPH ? 64 : 1e9)))) {
                fprintf(stderr, "%s: --%s %s: %s\n", name, lo[c - O_HOSTS].name, optarg,
                        c == O_FRACTION ? "must be in (0, 1]"
                        : c == O_TPH    ? "not a whole number in 1..64"
                                        : "not a whole number >= 1");
                bad = 1;
            } else if (c == O_TPH)
                o->tasks_per_host = (int)x;
            else if (c == O_MINCHUNK)
                o->fo.min_chunk = (uint64_t)x;
            else
                o->fo.fraction = x;
            break;
        case O_SCHED:
            if (strcmp(optarg, "fractiling") == 0)
                o->fo.mode = LIQ_FRACTILE_FACTORING;
            else if (strcmp(optarg, "static") == 0)
                o->fo.mode = LIQ_FRACTILE_STATIC;
            else if (strcmp(optarg, "self") == 0)
                o->fo.mode = LIQ_FRACTILE_SELF;
            else {
                fprintf(stderr, "%s: --schedule %s: fractiling, static or self\n", name, optarg);
                bad = 1;
            }
            break;
        case O_RECLAIM:
            if (strcmp(optarg, "on") == 0 || strcmp(optarg, "off") == 0)
                o->reclaim = strcmp(optarg, "on") == 0;
            else {
                fprintf(stderr, "%s: --reclaim %s: on or off\n", name, optarg);
                bad = 1;
            }
            break;
        case 'h':
        case O_HELP:
            return -1;
        default:
            if (optopt >= O_HOSTS)
                fprintf(stderr, "%s: option --%s needs a value\n", name,
                        lo[optopt - O_HOSTS].name);
            else
                fprintf(stderr, "%s: unknown option '%s'\n", name, argv[optind - 1]);
            bad = 1;
            break;
        }
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", name, argv[optind]);
        bad = 1;
    }
    return bad ? 2 : 0;
}

/*
 * The workers' arguments: LIQUID_FARM_WORKER_ARG, then the program's own
 * command line as it was started (/proc/self/cmdline, argv[0] left out),
 * so that main() reads the same options in the workers.  NULL-ended, one
 * allocation (*mem) holding the strings too; NULL when it cannot be read.
 */
static char **
worker_argv(char **mem)
{
    size_t len = 0, cap = 4096, k = 1;
    char *buf = malloc(cap), **av;
    ssize_t got;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

    *mem = NULL;
    if (fd < 0 || buf == NULL)
        goto bad;
    while ((got = read(fd, buf + len, cap - len)) > 0)
        if ((len += (size_t)got) == cap) {
            char *nb = realloc(buf, cap *= 2);

            if (nb == NULL)
                goto bad;
            buf = nb;
        }
    close(fd);
    fd = -1;
    for (size_t i = 0; i < len; i++)
        k += buf[i] == '\0';
    if ((av = calloc(k + 2, sizeof(char *))) == NULL)
        goto bad;
    av[0] = LIQUID_FARM_WORKER_ARG;
    k = 1;
    /* Skip argv[0]: PVM gives the workers their own. */
    for (size_t i = strlen(buf) + 1; i < len; i += strlen(buf + i) + 1)
        av[k++] = buf + i;
    av[k] = NULL;
    *mem = buf;
    return av;
bad:
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

/* A CHUNK's item: the tile's number. */
static void
pack_tile(struct liq_farm_master *m, uint64_t idx, void *arg)
{
    int t = (int)idx;

    (void)m;
    (void)arg;
    pvm_pkint(&t, 1, 1);
}

/* A tile's records, unpacked to fm->tmp, into their place in the result. */
static void
place(struct fmaster *fm, uint64_t idx)
{
    int lo[3], cnt[3];
    size_t row;

    liq_farm_tile_box(fm->n, fm->b, fm->t, idx, lo, cnt);
    row = (size_t)cnt[0] * fm->record;
    for (int c = 0; c < cnt[2]; c++)
        for (int b = 0; b < cnt[1]; b++) {
            size_t to = (size_t)lo[0] +
                        (size_t)fm->n[0] * ((size_t)(lo[1] + b) + (size_t)fm->n[1] * (size_t)(lo[2] + c));

            memcpy(fm->result + to * fm->record,
                   fm->tmp + ((size_t)b + (size_t)cnt[1] * (size_t)c) * row, row);
        }
}

static int
on_msg(struct liq_farm_master *m, int w, int tag, int src, void *arg)
{
    struct fmaster *fm = arg;
    int head[2], lo[3], cnt[3], bytes, rtag, rsrc;
    double secs;
    char why[256];

    if (tag == LIQ_FARM_TAG_FAIL) {
        why[0] = '\0';
        pvm_upkstr(why);
        snprintf(m->why, sizeof(m->why), "worker t%x: %.300s", (unsigned)src, why);
        return -1;
    }
    if (tag != LIQ_FARM_TAG_RESULT || w < 0)
        return 0; /* a worker already counted lost: its tiles run elsewhere */
    pvm_bufinfo(pvm_getrbuf(), &bytes, &rtag, &rsrc);
    pvm_upkint(head, 2, 1);
    pvm_upkdouble(&secs, 1, 1);
    if (head[1] < 0 || (uint64_t)head[1] >= m->n)
        goto bad;
    liq_farm_tile_box(fm->n, fm->b, fm->t, (uint64_t)head[1], lo, cnt);
    size_t len = (size_t)cnt[0] * cnt[1] * cnt[2] * fm->record;

    /* The records must be all that is left of the message. */
    if ((size_t)bytes < len || pvm_upkbyte((char *)fm->tmp, (int)len, 1) < 0)
        goto bad;
    switch (liq_farm_result(m, w, head[0], (uint64_t)head[1], secs, 1)) {
    case 1:
        place(fm, (uint64_t)head[1]);
        return 0;
    case 0:
        return 0; /* a duplicate: the first result was placed */
    default:
        break;
    }
bad:
    fprintf(stderr, "%s: a malformed result from t%x; ignored\n", fm->name, (unsigned)src);
    return 0;
}

static void
write_report(const struct liq_farm_master *m, const struct fmaster *fm, FILE *fp,
             double makespan)
{
    fputs("{\"program\":", fp);
    fprintf(fp, "\"%s\"", fm->name); /* checked: [A-Za-z0-9_.-] */
    fprintf(fp, ",\"n\":[%d,%d,%d],\"record\":%zu,\"tile\":%d,\"tiles\":%llu,", fm->n[0],
            fm->n[1], fm->n[2], fm->record, fm->b, (unsigned long long)m->n);
    liq_farm_report(m, fp, makespan);
    fputs("}\n", fp);
}

int
liquid_farm_master(int argc, char **argv)
{
    if (argc >= 2 && argv[1] != NULL && strcmp(argv[1], LIQUID_FARM_WORKER_ARG) == 0)
        return 0;
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 0;
        if (strcmp(argv[i], "--") == 0)
            break;
    }
    return 1;
}

int
liquid_farm(int argc, char **argv, const char *name, const int n[3], size_t record,
            liquid_tile_fn fn, void *arg, void *result)
{
    struct liq_farm_opts o;
    struct liq_farm_master m;
    struct fmaster fm;
    const char *json = NULL;
    char *mem = NULL, **wargv = NULL;
    uint64_t *order = NULL, ntiles;
    int rc, status = 2, started = 0;

    static const char namechars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_.-";

    /* The name goes into the JSON report as it is. */
    if (name == NULL || name[0] == '\0' || strspn(name, namechars) != strlen(name))
        name = "liquid_farm";
    if (n == NULL || n[0] < 1 || n[1] < 1 || n[2] < 1 || n[0] > (1 << 21) || n[1] > (1 << 21) ||
        n[2] > (1 << 21) || record < 1 || record > LIQ_FARM_RECORD_MAX || fn == NULL) {
        fprintf(stderr, "%s: liquid_farm: bad arguments (extents 1..2^21, record 1..%d bytes, "
                        "a tile function)\n", name, LIQ_FARM_RECORD_MAX);
        return 2;
    }
    if (argc >= 2 && argv[1] != NULL && strcmp(argv[1], LIQUID_FARM_WORKER_ARG) == 0)
        return liq_farm_worker_main(name, n, record, fn, arg);
    if ((rc = farm_args(&o, &json, name, argc, argv)) != 0) {
        if (rc < 0) {
            farm_usage(name);
            return 0;
        }
        fprintf(stderr, "%s: --help shows the options\n", name);
        return 2;
    }
    if (result == NULL) {
        fprintf(stderr, "%s: liquid_farm: no result array\n", name);
        return 2;
    }
    if (json != NULL && strcmp(json, "-") != 0) {
        char why[600];

        if (liq_writable(json, "--json", why, sizeof(why)) != 0) {
            fprintf(stderr, "%s: %s\n", name, why);
            return 2;
        }
    }
    memset(&fm, 0, sizeof(fm));
    memset(&m, 0, sizeof(m));
    fm.name = name;
    memcpy(fm.n, n, sizeof(fm.n));
    fm.record = record;
    fm.result = result;
    liq_farm_tiles(n, &fm.b, fm.t);
    ntiles = (uint64_t)fm.t[0] * fm.t[1] * fm.t[2];
    status = 1;
    order = malloc(ntiles * sizeof(*order));
    fm.tmp = malloc((size_t)fm.b * (n[1] > 1 ? fm.b : 1) * (n[2] > 1 ? fm.b : 1) * record);
    if (order == NULL || fm.tmp == NULL || liq_fractile_morton(fm.t, order) != 0) {
        fprintf(stderr, "%s: out of memory\n", name);
        goto out;
    }
    if ((wargv = worker_argv(&mem)) == NULL) {
        fprintf(stderr, "%s: cannot read this program's command line (/proc/self/cmdline)\n",
                name);
        goto out;
    }
    started = 1;
    if (liq_farm_start(&m, name, "tiles", &o, ntiles, order, wargv, pack_tile, &fm) != 0) {
        fprintf(stderr, "%s: %s\n", name, m.why);
        if (m.vm.usage)
            status = 2;
        goto out;
    }
    int job[5] = { n[0], n[1], n[2], (int)record, fm.b };

    pvm_initsend(PvmDataDefault);
    pvm_pkint(job, 5, 1);
    if (liq_farm_send_job(&m) != 0) {
        fprintf(stderr, "%s: %s\n", name, m.why);
        goto out;
    }
    rc = liq_farm_loop(&m, on_msg, &fm);
    double makespan = liq_farm_now() - m.t0;

    if (m.progress)
        liq_farm_progress(&m, 1);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", name, m.why);
    if (!o.quiet) {
        fprintf(stderr, "%s: %dx%dx%d points in %llu tiles of side %d on %d host%s (%d worker%s)"
                        " in %.2f s; %zu chunks",
                name, n[0], n[1], n[2], (unsigned long long)ntiles, fm.b, m.vm.nhosts,
                m.vm.nhosts == 1 ? "" : "s", m.vm.nworkers, m.vm.nworkers == 1 ? "" : "s",
                makespan, m.nchunk);
        if (m.reruns > 0)
            fprintf(stderr, "; %llu tiles given to another worker", (unsigned long long)m.reruns);
        fputc('\n', stderr);
        liq_farm_summary_hosts(&m, stderr);
    }
    if (json != NULL) {
        FILE *jp = liq_report_open(name, "--json", json);

        if (jp == NULL) {
            rc = -1;
        } else {
            write_report(&m, &fm, jp, makespan);
            if (liq_report_close(name, "--json", json, jp) != 0)
                rc = -1;
        }
    }
    status = rc == 0 && m.ndone == m.n ? 0 : 1;
out:
    if (started)
        liq_farm_end(&m, status != 0);
    free(order);
    free(fm.tmp);
    free(wargv);
    free(mem);
    return status;
}
