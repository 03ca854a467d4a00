/*
 * vmrun_farm.c - `vmrun farm`, the master of a farm of independent items
 * (issue 28): it checks the input before anything runs, spawns the
 * workers, and writes exactly one JSON line per item (the first result of
 * an item wins: a lost worker's items run again elsewhere, so execution is
 * at least once and results exactly once), then a summary and a JSON
 * report.  The schedule -- Fractiling chunks on the workers' requests,
 * lost hosts, reclaim -- is libliquid's farm master (liq_farm_sched.c),
 * which liquid_farm() uses too; this file holds what a command line item
 * is.
 */
#include "vmrun_farm.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq.h"
#include "liq_farm.h"
#include "lvm_err.h"
#include "pvm3.h"
#include "wire.h"


struct farm_opts {
    const char *range, *items, *grid;
    const char *output, *json;
    int retries;
    double timeout;
    struct liq_farm_opts lf;    /* --hosts, --tasks-per-host, --schedule ... --quiet */
    char **argv;            /* the command template */
    int argc;
};

struct farm {
    struct farm_opts *o;
    struct farm_items it;
    struct liq_farm_master m;
    FILE *out;
    int out_err;                /* errno of the first result not written */
    uint64_t nok, nfailed, ntimeout;
    struct farm_run *r;
};

static void
farm_usage(FILE *fp)
{
    fprintf(fp,
            "usage: vmrun farm (--range A:B[:STEP] | --items FILE | --grid NXxNY[xNZ])\n"
            "                  [--output FILE.jsonl] [--json REPORT] [--retries N] [--timeout S]\n"
            "                  [--hosts h1,h2,...] [--tasks-per-host T] [options] -- COMMAND ARGS...\n"
            "\n"
            "  Run COMMAND once per item on the virtual machine's hosts, scheduled by Fractiling.\n"
            "  {} in an argument is the item ({x} {y} {z}: a grid point's coordinates); with no\n"
            "  placeholder the item is the last argument.  One JSON line per item in --output\n"
            "  (default: standard output); stdout and stderr kept up to 64 KiB each.\n"
            "\n"
            "  --range A:B[:STEP]     A, A+STEP, ... up to B inclusive, as seq counts\n"
            "  --items FILE           one item per line (blank lines skipped)\n"
            "  --grid NXxNY[xNZ]      every point of a 2D or 3D grid, in Morton-ordered tiles\n"
            "  --output FILE          the results, one JSON line per item ('-': stdout)\n"
            "  --json FILE            the report: per host items and busy time, chunks, events\n"
            "  --retries N            run a failing item up to N more times (0)\n"
            "  --timeout S            kill an item after S seconds: exit 124, \"timeout\":true\n"
            "  --hosts LIST           only these hosts (default: every host of the VM)\n"
            "  --tasks-per-host T     workers per host, each running one item at a time (1)\n"
            "  --schedule KIND        fractiling (default), static (equal blocks), self (one by one)\n"
            "  --fraction F           share of what is left each Factoring batch hands out (0.5)\n"
            "  --min-chunk N          smallest chunk in items (1)\n"
            "  --reclaim on|off       a host whose owner needs it stops taking chunks (on)\n"
            "  --reclaim-below F      ... when its CPU share per worker stays below F (0.125)\n"
            "  --reclaim-after S      ... for S seconds (3)\n"
            "  --rejoin-above F       it takes chunks again at a share of F or more (0.25)\n"
            "  --rejoin-after S       ... held for S seconds (1)\n"
            "  --reclaim-limit S      its running chunk goes back to the pool after S seconds (5)\n"
            "  --quiet                no progress line, no summary\n"
            "\n"
            "  Exit status: 0 every item exited 0, 1 some item failed or the VM failed, 2 bad usage.\n");
}

static int
parse_double(const char *name, const char *v, double lo, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !(*out >= lo) || !isfinite(*out)) {
        fprintf(stderr, "vmrun farm: --%s %s: not a number >= %g\n", name, v, lo);
        return -1;
    }
    return 0;
}

static int
parse_int(const char *name, const char *v, long lo, long hi, int *out)
{
    char *end;
    long x;

    errno = 0;
    x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi) {
        fprintf(stderr, "vmrun farm: --%s %s: not a whole number in %ld..%ld\n", name, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* 0, VMRUN-style 2 after printing why, or -1 for --help. */
static int
farm_args(struct farm_opts *o, int argc, char **argv)
{
    enum { O_RANGE = 256, O_ITEMS, O_GRID, O_OUTPUT, O_JSON, O_RETRIES, O_TIMEOUT, O_HOSTS,
           O_TPH, O_SCHED, O_FRACTION, O_MINCHUNK, O_RECLAIM, O_RBELOW, O_RAFTER, O_JABOVE,
           O_JAFTER, O_RLIMIT, O_QUIET, O_HELP };
    static const struct option lo[] = {
        { "range", required_argument, NULL, O_RANGE },
        { "items", required_argument, NULL, O_ITEMS },
        { "grid", required_argument, NULL, O_GRID },
        { "output", required_argument, NULL, O_OUTPUT },
        { "json", required_argument, NULL, O_JSON },
        { "retries", required_argument, NULL, O_RETRIES },
        { "timeout", required_argument, NULL, O_TIMEOUT },
        { "hosts", required_argument, NULL, O_HOSTS },
        { "tasks-per-host", required_argument, NULL, O_TPH },
        { "schedule", required_argument, NULL, O_SCHED },
        { "fraction", required_argument, NULL, O_FRACTION },
        { "min-chunk", required_argument, NULL, O_MINCHUNK },
        { "reclaim", required_argument, NULL, O_RECLAIM },
        { "reclaim-below", required_argument, NULL, O_RBELOW },
        { "reclaim-after", required_argument, NULL, O_RAFTER },
        { "rejoin-above", required_argument, NULL, O_JABOVE },
        { "rejoin-after", required_argument, NULL, O_JAFTER },
        { "reclaim-limit", required_argument, NULL, O_RLIMIT },
        { "quiet", no_argument, NULL, O_QUIET },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0, mc;

    memset(o, 0, sizeof(*o));
    o->output = "-";
    liq_farm_opts_defaults(&o->lf);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case O_RANGE: o->range = optarg; break;
        case O_ITEMS: o->items = optarg; break;
        case O_GRID: o->grid = optarg; break;
        case O_OUTPUT: o->output = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_HOSTS:
            o->lf.hosts = optarg;
            if (!liq_hosts_valid(optarg)) {
                fprintf(stderr, "vmrun farm: --hosts: expected host names separated by commas, "
                                "got '%s'\n", optarg);
                bad = -1;
            }
            break;
        case O_QUIET: o->lf.quiet = 1; break;
        case O_RETRIES: bad |= parse_int("retries", optarg, 0, 100, &o->retries); break;
        case O_TPH: bad |= parse_int("tasks-per-host", optarg, 1, 64, &o->lf.tasks_per_host); break;
        case O_MINCHUNK:
            bad |= parse_int("min-chunk", optarg, 1, 1000000000, &mc);
            o->lf.fo.min_chunk = (uint64_t)(mc > 0 ? mc : 1);
            break;
        case O_TIMEOUT: bad |= parse_double("timeout", optarg, 0, &o->timeout); break;
        case O_FRACTION:
            bad |= parse_double("fraction", optarg, 0, &o->lf.fo.fraction);
            if (!(o->lf.fo.fraction > 0 && o->lf.fo.fraction <= 1)) {
                fprintf(stderr, "vmrun farm: --fraction %s: must be in (0, 1]\n", optarg);
                bad = -1;
            }
            break;
        case O_RBELOW: bad |= parse_double("reclaim-below", optarg, 0, &o->lf.reclaim_below); break;
        case O_RAFTER: bad |= parse_double("reclaim-after", optarg, 0, &o->lf.reclaim_after); break;
        case O_JABOVE: bad |= parse_double("rejoin-above", optarg, 0, &o->lf.rejoin_above); break;
        case O_JAFTER: bad |= parse_double("rejoin-after", optarg, 0, &o->lf.rejoin_after); break;
        case O_RLIMIT: bad |= parse_double("reclaim-limit", optarg, 0, &o->lf.reclaim_limit); break;
        case O_SCHED:
            if (strcmp(optarg, "fractiling") == 0)
                o->lf.fo.mode = LIQ_FRACTILE_FACTORING;
            else if (strcmp(optarg, "static") == 0)
                o->lf.fo.mode = LIQ_FRACTILE_STATIC;
            else if (strcmp(optarg, "self") == 0)
                o->lf.fo.mode = LIQ_FRACTILE_SELF;
            else {
                fprintf(stderr, "vmrun farm: --schedule %s: fractiling, static or self\n", optarg);
                bad = -1;
            }
            break;
        case O_RECLAIM:
            if (strcmp(optarg, "on") == 0)
                o->lf.reclaim = 1;
            else if (strcmp(optarg, "off") == 0)
                o->lf.reclaim = 0;
            else {
                fprintf(stderr, "vmrun farm: --reclaim %s: on or off\n", optarg);
                bad = -1;
            }
            break;
        case 'h':
        case O_HELP:
            return -1;
        default:
            if (optopt != 0)
                fprintf(stderr, "vmrun farm: option --%s needs a value\n",
                        lo[optopt - O_RANGE].name);
            else
                fprintf(stderr, "vmrun farm: unknown option '%s'\n", argv[optind - 1]);
            bad = -1;
            break;
        }
    }
    if (bad)
        return 2;
    char why[160];

    if (liq_reclaim_check(o->lf.reclaim_below, o->lf.rejoin_above, o->lf.reclaim, why,
                          sizeof(why)) != 0) {
        fprintf(stderr, "vmrun farm: %s\n", why);
        return 2;
    }
    if ((o->range != NULL) + (o->items != NULL) + (o->grid != NULL) != 1) {
        fprintf(stderr, "vmrun farm: give exactly one of --range, --items and --grid\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "vmrun farm: no command (put it after --)\n");
        return 2;
    }
    o->argv = argv + optind;
    o->argc = argc - optind;
    return 0;
}

static void
write_result(struct farm *fm, uint64_t idx, int w, const struct farm_run *r, int attempts)
{
    FILE *fp = fm->out;

    fputs("{\"item\":", fp);
    farm_items_json(fp, &fm->it, idx);
    fprintf(fp, ",\"index\":%llu,\"exit\":%d,\"stdout\":", (unsigned long long)idx, r->exit);
    wire_json_bytes(fp, r->out, r->outlen);
    fputs(",\"stderr\":", fp);
    wire_json_bytes(fp, r->err, r->errlen);
    fputs(",\"host\":", fp);
    wire_json_bytes(fp, fm->m.vm.host[fm->m.vm.whost[w]].name,
                    strlen(fm->m.vm.host[fm->m.vm.whost[w]].name));
    fprintf(fp, ",\"seconds\":%.3f,\"cpu_s\":%.3f,\"attempts\":%d", r->seconds,
            r->cpu, attempts);
    if (r->flags & FARM_F_TIMEOUT)
        fputs(",\"timeout\":true", fp);
    if (r->flags & FARM_F_SIGNAL)
        fprintf(fp, ",\"signal\":%d", r->sig);
    if (r->flags & (FARM_F_OUTTRUNC | FARM_F_ERRTRUNC))
        fputs(",\"truncated\":true", fp);
    fputs("}\n", fp);
    if ((fflush(fp) != 0 || ferror(fp)) && fm->out_err == 0)
        fm->out_err = errno != 0 ? errno : EIO;
}

/* One RESULT from worker w, in the active buffer. */

/* One item of a CHUNK: its index, its text ({}), x, y, z. */
static void
pack_item(struct liq_farm_master *m, uint64_t i, void *arg)
{
    struct farm *fm = arg;
    char text[FARM_ITEM_MAX];
    int xyz[3], idx = (int)i;

    (void)m;
    farm_items_text(&fm->it, i, text, sizeof(text), xyz);
    pvm_pkint(&idx, 1, 1);
    pvm_pkstr(text);
    pvm_pkint(xyz, 3, 1);
}

/* One RESULT from worker w, in the active buffer. */
static int
take_result(struct farm *fm, int w, struct farm_run *r)
{
    int id, idx, attempts, len, rc;

    pvm_upkint(&id, 1, 1);
    pvm_upkint(&idx, 1, 1);
    pvm_upkint(&r->exit, 1, 1);
    pvm_upkint(&r->flags, 1, 1);
    pvm_upkint(&r->sig, 1, 1);
    pvm_upkint(&attempts, 1, 1);
    pvm_upkdouble(&r->seconds, 1, 1);
    pvm_upkdouble(&r->cpu, 1, 1);
    pvm_upkint(&len, 1, 1);
    if (len < 0 || len > FARM_OUTPUT_MAX)
        return -1;
    if (len > 0)
        pvm_upkbyte(r->out, len, 1);
    r->outlen = (size_t)len;
    pvm_upkint(&len, 1, 1);
    if (len < 0 || len > FARM_OUTPUT_MAX)
        return -1;
    if (len > 0)
        pvm_upkbyte(r->err, len, 1);
    r->errlen = (size_t)len;
    if (idx < 0)
        return -1;
    if ((rc = liq_farm_result(&fm->m, w, id, (uint64_t)idx, r->seconds, attempts)) <= 0)
        return rc;
    if (r->exit == 0)
        fm->nok++;
    else
        fm->nfailed++;
    if (r->flags & FARM_F_TIMEOUT)
        fm->ntimeout++;
    write_result(fm, (uint64_t)idx, w, r, attempts);
    return 0;
}

static int
on_msg(struct liq_farm_master *m, int w, int tag, int src, void *arg)
{
    struct farm *fm = arg;

    /* A RESULT from a worker already counted lost is dropped. */
    if (tag == FARM_TAG_RESULT && w >= 0 && take_result(fm, w, fm->r) != 0)
        fprintf(stderr, "vmrun farm: a malformed result from t%x; ignored\n", (unsigned)src);
    /* Results that cannot be kept: no item more is run for nothing. */
    if (fm->out_err != 0) {
        snprintf(m->why, sizeof(m->why), "--output %s: cannot write: %s; stopped",
                 strcmp(fm->o->output, "-") == 0 ? "(standard output)" : fm->o->output,
                 strerror(fm->out_err));
        return -1;
    }
    return 0;
}

static void
write_report(struct farm *fm, FILE *fp, double makespan)
{
    fputs("{\"command\":[", fp);
    for (int i = 0; i < fm->o->argc; i++) {
        if (i)
            fputc(',', fp);
        wire_json_bytes(fp, fm->o->argv[i], strlen(fm->o->argv[i]));
    }
    fprintf(fp, "],\"items\":%llu,\"exit0\":%llu,\"failed\":%llu,\"timeouts\":%llu,"
                "\"not_run\":%llu,",
            (unsigned long long)fm->it.n, (unsigned long long)fm->nok,
            (unsigned long long)fm->nfailed, (unsigned long long)fm->ntimeout,
            (unsigned long long)(fm->it.n - fm->m.ndone));
    liq_farm_report(&fm->m, fp, makespan);
    fputs("}\n", fp);
}

static void
summary(struct farm *fm, double makespan)
{
    const struct liq_farm_master *m = &fm->m;

    fprintf(stderr,
            "vmrun farm: %llu items on %d host%s (%d worker%s) in %.2f s: %llu exit 0, "
            "%llu failed (%llu timed out)",
            (unsigned long long)fm->it.n, m->vm.nhosts, m->vm.nhosts == 1 ? "" : "s",
            m->vm.nworkers, m->vm.nworkers == 1 ? "" : "s", makespan,
            (unsigned long long)fm->nok, (unsigned long long)fm->nfailed,
            (unsigned long long)fm->ntimeout);
    if (m->ndone < fm->it.n)
        fprintf(stderr, ", %llu not run", (unsigned long long)(fm->it.n - m->ndone));
    if (m->reruns > 0)
        fprintf(stderr, "; %llu given to another worker", (unsigned long long)m->reruns);
    fprintf(stderr, "; %zu chunks\n", m->nchunk);
    liq_farm_summary_hosts(m, stderr);
}

/* The job on the started workers; 0, or -1 with fm->m.why set (the VM failed). */
static int
farm_run(struct farm *fm)
{
    char cwd[4096];

    if (getcwd(cwd, sizeof(cwd)) == NULL)
        cwd[0] = '\0';
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&fm->o->argc, 1, 1);
    for (int i = 0; i < fm->o->argc; i++)
        pvm_pkstr(fm->o->argv[i]);
    pvm_pkdouble(&fm->o->timeout, 1, 1);
    pvm_pkint(&fm->o->retries, 1, 1);
    pvm_pkstr(cwd);
    if (liq_farm_send_job(&fm->m) != 0)
        return -1;
    return liq_farm_loop(&fm->m, on_msg, fm);
}

int
vmrun_farm_main(int argc, char **argv)
{
    static char *wargv[] = { "farm-worker", NULL };
    struct farm_opts o;
    struct farm fm;
    char err[4096], **argv2 = NULL;
    int rc, status = 2, started = 0;

    memset(&fm, 0, sizeof(fm));
    if ((rc = farm_args(&o, argc, argv)) != 0) {
        if (rc < 0) {
            farm_usage(stdout);
            return 0;
        }
        fprintf(stderr, "vmrun farm: --help shows the options\n");
        return 2;
    }
    fm.o = &o;
    /* Bad input is told before anything runs. */
    if (o.range)
        rc = farm_items_range(&fm.it, o.range, err, sizeof(err));
    else if (o.items)
        rc = farm_items_file(&fm.it, o.items, err, sizeof(err));
    else
        rc = farm_items_grid(&fm.it, o.grid, err, sizeof(err));
    if (rc != 0) {
        for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
            fprintf(stderr, "vmrun farm: %s\n", line);
        return 2;
    }
    if (farm_command_check(o.argv, o.argc, fm.it.kind, fm.it.dims, err, sizeof(err)) != 0) {
        fprintf(stderr, "vmrun farm: %s\n", err);
        goto out2;
    }
    /* No placeholder: the item is the last argument, as GNU parallel does. */
    if (!farm_command_has_placeholder(o.argv, o.argc)) {
        if ((argv2 = calloc((size_t)o.argc + 2, sizeof(char *))) == NULL)
            goto out;
        memcpy(argv2, o.argv, (size_t)o.argc * sizeof(char *));
        argv2[o.argc++] = "{}";
        o.argv = argv2;
    }
    if (o.json != NULL && strcmp(o.json, "-") != 0 &&
        liq_writable(o.json, "--json", err, sizeof(err)) != 0) {
        fprintf(stderr, "vmrun farm: %s\n", err);
        goto out2;
    }
    if ((fm.out = liq_report_open("vmrun farm", "--output", o.output)) == NULL)
        goto out2;
    status = 1;
    if ((fm.r = malloc(sizeof(*fm.r))) == NULL) {
        fprintf(stderr, "vmrun farm: out of memory\n");
        goto out2;
    }
    started = 1;
    if (liq_farm_start(&fm.m, "vmrun farm", "items", &o.lf, fm.it.n, fm.it.order, wargv,
                       pack_item, &fm) != 0) {
        fprintf(stderr, "vmrun farm: %s\n", fm.m.why);
        if (fm.m.vm.usage)
            status = 2;
        goto out2;
    }
    rc = farm_run(&fm);
    double makespan = liq_farm_now() - fm.m.t0;

    if (fm.m.progress)
        liq_farm_progress(&fm.m, 1);
    /* Exactly one line per item, even for those no worker was left to run. */
    for (uint64_t i = 0; i < fm.it.n; i++) {
        if (fm.m.done[i])
            continue;
        fputs("{\"item\":", fm.out);
        farm_items_json(fm.out, &fm.it, i);
        fprintf(fm.out, ",\"index\":%llu,\"exit\":null,\"error\":\"not run: %s\",\"host\":null,"
                        "\"seconds\":0,\"cpu_s\":0}\n",
                (unsigned long long)i, "every worker was lost");
    }
    if (rc != 0)
        fprintf(stderr, "vmrun farm: %s\n", fm.m.why);
    /* Results that did not reach their file are a failure, whatever ran
     * (said once: a failed write during the run stopped it). */
    if (fm.out_err != 0)
        (void)wire_out_close(fm.out);
    else if (liq_report_close("vmrun farm", "--output", o.output, fm.out) != 0)
        rc = -1;
    fm.out = NULL;
    if (!o.lf.quiet)
        summary(&fm, makespan);
    if (o.json != NULL) {
        FILE *jp = liq_report_open("vmrun farm", "--json", o.json);

        if (jp == NULL) {
            rc = -1;
        } else {
            write_report(&fm, jp, makespan);
            if (liq_report_close("vmrun farm", "--json", o.json, jp) != 0)
                rc = -1;
        }
    }
    status = rc == 0 && fm.nfailed == 0 && fm.m.ndone == fm.it.n ? 0 : 1;
out2:
    free(argv2);
    if (started)
        liq_farm_end(&fm.m, status != 0 && fm.m.ndone < fm.it.n);
    if (fm.out != NULL && fm.out != stdout)
        fclose(fm.out);
    free(fm.r);
out:
    farm_items_free(&fm.it);
    return status;
}

