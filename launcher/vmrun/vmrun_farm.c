/*
 * vmrun_farm.c - `vmrun farm`, the master of a farm of independent items
 * (issue 28): it checks the input before anything runs, spawns the
 * workers, hands out chunks by Fractiling (liq_fractile.c) on the workers'
 * requests, writes exactly one JSON line per item (the first result of an
 * item wins: a lost worker's items run again elsewhere, so execution is at
 * least once and results exactly once), takes a host its owner needs out of
 * the schedule (seed 002's reclaim, by its daemon's capacity), and ends
 * with a summary and a JSON report.
 */
#include "vmrun_farm.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq_fractile.h"
#include "lvm_err.h"
#include "pvm3.h"

/* Item times kept per worker for its rate. */
#define FARM_RATE_WINDOW 16
/* How often the master reads capacities and redraws the progress line. */
#define FARM_TICK_S 0.5

struct farm_opts {
    const char *range, *items, *grid;
    const char *output, *json, *hosts;
    int retries, tasks_per_host, quiet;
    double timeout;
    struct liq_fractile_opts fo;
    int reclaim;
    double reclaim_below, reclaim_after, rejoin_above, rejoin_after, reclaim_limit;
    char **argv;            /* the command template */
    int argc;
};

struct farm_chunk {
    int w;
    uint64_t lo, hi;        /* positions */
    uint64_t got;           /* results from its worker */
    uint64_t batch;
    double t;               /* when it was sent, since the start */
    int open;               /* its worker may still be running it */
};

struct farm_worker {
    int alive, pending;     /* pending: it asked and got nothing yet */
    double dur[FARM_RATE_WINDOW];
    int ndur;
    double share0;          /* its host's CPU share at the start (weight before any result) */
};

struct farm_hstate {
    int benched, lost, dropped;
    double below_since, above_since, benched_at;
    uint64_t items;
    double busy;
};

struct farm_event {
    double t;
    int host;
    const char *what;
};

struct farm {
    struct farm_opts *o;
    struct farm_items it;
    struct farm_vm vm;
    struct liq_fractile f;
    FILE *out;
    char *done;
    uint64_t ndone, nok, nfailed, ntimeout, reruns, dups, steals;
    struct farm_chunk *chunk;
    size_t nchunk, chunkcap;
    struct farm_worker *w;
    struct farm_hstate *h;
    struct farm_event *ev;
    size_t nev, evcap;
    int nlive;
    double t0;
    int progress;
    char why[512];
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
    o->hosts = "";
    o->tasks_per_host = 1;
    liq_fractile_defaults(&o->fo);
    o->reclaim = 1;
    /* The stencil's thresholds (vmrun_opts.c), for one meaning of "the
     * owner needs it" across vmrun. */
    o->reclaim_below = 0.125;
    o->reclaim_after = 3;
    o->rejoin_above = 0.25;
    o->rejoin_after = 1;
    o->reclaim_limit = 5;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case O_RANGE: o->range = optarg; break;
        case O_ITEMS: o->items = optarg; break;
        case O_GRID: o->grid = optarg; break;
        case O_OUTPUT: o->output = optarg; break;
        case O_JSON: o->json = optarg; break;
        case O_HOSTS: o->hosts = optarg; break;
        case O_QUIET: o->quiet = 1; break;
        case O_RETRIES: bad |= parse_int("retries", optarg, 0, 100, &o->retries); break;
        case O_TPH: bad |= parse_int("tasks-per-host", optarg, 1, 64, &o->tasks_per_host); break;
        case O_MINCHUNK:
            bad |= parse_int("min-chunk", optarg, 1, 1000000000, &mc);
            o->fo.min_chunk = (uint64_t)(mc > 0 ? mc : 1);
            break;
        case O_TIMEOUT: bad |= parse_double("timeout", optarg, 0, &o->timeout); break;
        case O_FRACTION:
            bad |= parse_double("fraction", optarg, 0, &o->fo.fraction);
            if (!(o->fo.fraction > 0 && o->fo.fraction <= 1)) {
                fprintf(stderr, "vmrun farm: --fraction %s: must be in (0, 1]\n", optarg);
                bad = -1;
            }
            break;
        case O_RBELOW: bad |= parse_double("reclaim-below", optarg, 0, &o->reclaim_below); break;
        case O_RAFTER: bad |= parse_double("reclaim-after", optarg, 0, &o->reclaim_after); break;
        case O_JABOVE: bad |= parse_double("rejoin-above", optarg, 0, &o->rejoin_above); break;
        case O_JAFTER: bad |= parse_double("rejoin-after", optarg, 0, &o->rejoin_after); break;
        case O_RLIMIT: bad |= parse_double("reclaim-limit", optarg, 0, &o->reclaim_limit); break;
        case O_SCHED:
            if (strcmp(optarg, "fractiling") == 0)
                o->fo.mode = LIQ_FRACTILE_FACTORING;
            else if (strcmp(optarg, "static") == 0)
                o->fo.mode = LIQ_FRACTILE_STATIC;
            else if (strcmp(optarg, "self") == 0)
                o->fo.mode = LIQ_FRACTILE_SELF;
            else {
                fprintf(stderr, "vmrun farm: --schedule %s: fractiling, static or self\n", optarg);
                bad = -1;
            }
            break;
        case O_RECLAIM:
            if (strcmp(optarg, "on") == 0)
                o->reclaim = 1;
            else if (strcmp(optarg, "off") == 0)
                o->reclaim = 0;
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
event(struct farm *fm, int host, const char *what)
{
    if (fm->nev == fm->evcap) {
        size_t cap = fm->evcap ? 2 * fm->evcap : 16;
        struct farm_event *e = realloc(fm->ev, cap * sizeof(*e));

        if (e == NULL)
            return;
        fm->ev = e;
        fm->evcap = cap;
    }
    fm->ev[fm->nev].t = farm_now() - fm->t0;
    fm->ev[fm->nev].host = host;
    fm->ev[fm->nev].what = what;
    fm->nev++;
    if (fm->progress)
        fprintf(stderr, "\r\033[K");
    if (!fm->o->quiet)
        fprintf(stderr, "vmrun farm: %.1f s: host %s %s\n", farm_now() - fm->t0,
                fm->vm.host[host].name, what);
}

static double
worker_rate(const struct farm_worker *w)
{
    double s = 0;
    int n = w->ndur < FARM_RATE_WINDOW ? w->ndur : FARM_RATE_WINDOW;

    for (int i = 0; i < n; i++)
        s += w->dur[i];
    return n > 0 && s > 0 ? n / s : 0;
}

/*
 * Every taking worker's weight: its measured rate (items per second over
 * its last FARM_RATE_WINDOW items) once every taking worker has one, until
 * then its host's CPU share at the start, so weights of one kind are never
 * compared with the other's.
 */
static void
reweigh(struct farm *fm)
{
    int all = 1;

    for (int w = 0; w < fm->vm.nworkers; w++)
        if (fm->w[w].alive && !fm->h[fm->vm.whost[w]].benched && fm->w[w].ndur == 0)
            all = 0;
    for (int w = 0; w < fm->vm.nworkers; w++) {
        if (!fm->w[w].alive || fm->h[fm->vm.whost[w]].benched)
            continue;
        liq_fractile_weight(&fm->f, w, all ? worker_rate(&fm->w[w]) : fm->w[w].share0);
    }
}

/*
 * The pool is empty and w asks: rule (ii) of Fractiling, the idle worker
 * helps with the largest unfinished subtile, here the open chunk with the
 * most items not started (a worker runs its chunk in order, so those are
 * its back: after the `got` reported and the one running).  The back half
 * goes to the pool and its worker is told to drop it; an item it started
 * meanwhile runs twice, and its first result counts.  1 if something was
 * taken.
 */
static int
steal(struct farm *fm, int w)
{
    struct farm_chunk *best = NULL;
    uint64_t most = 1;

    if (fm->o->fo.mode == LIQ_FRACTILE_STATIC)
        return 0;
    for (size_t i = 0; i < fm->nchunk; i++) {
        struct farm_chunk *c = &fm->chunk[i];
        uint64_t size = c->hi - c->lo, unstarted = c->got + 1 < size ? size - c->got - 1 : 0;

        if (c->open && c->w != w && fm->w[c->w].alive && unstarted > most) {
            best = c;
            most = unstarted;
        }
    }
    if (best == NULL)
        return 0;
    uint64_t k = (most + 1) / 2, keep = best->hi - best->lo - k;
    int msg[2] = { (int)(best - fm->chunk), (int)keep };

    if (liq_fractile_giveback(&fm->f, best->hi - k, best->hi) != 0)
        return 0;
    best->hi -= k;
    fm->steals++;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(msg, 2, 1);
    pvm_send(fm->vm.tids[best->w], FARM_TAG_SHRINK);
    return 1;
}

static int
serve(struct farm *fm, int w)
{
    struct liq_fractile_chunk c;
    int id, count;

    fm->w[w].pending = 0;
    if (!fm->w[w].alive)
        return 0;
    if (fm->h[fm->vm.whost[w]].benched ||
        (!liq_fractile_next(&fm->f, w, &c) && !(steal(fm, w) && liq_fractile_next(&fm->f, w, &c)))) {
        fm->w[w].pending = 1;
        return 0;
    }
    if (fm->nchunk == fm->chunkcap) {
        size_t cap = fm->chunkcap ? 2 * fm->chunkcap : 64;
        struct farm_chunk *ch = realloc(fm->chunk, cap * sizeof(*ch));

        if (ch == NULL) {
            snprintf(fm->why, sizeof(fm->why), "out of memory");
            return -1;
        }
        fm->chunk = ch;
        fm->chunkcap = cap;
    }
    id = (int)fm->nchunk++;
    fm->chunk[id] = (struct farm_chunk){ w, c.lo, c.hi, 0, c.batch, farm_now() - fm->t0, 1 };
    count = (int)(c.hi - c.lo);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&id, 1, 1);
    pvm_pkint(&count, 1, 1);
    for (uint64_t p = c.lo; p < c.hi; p++) {
        char text[FARM_ITEM_MAX];
        int xyz[3], idx = (int)farm_items_at(&fm->it, p);

        farm_items_text(&fm->it, (uint64_t)idx, text, sizeof(text), xyz);
        pvm_pkint(&idx, 1, 1);
        pvm_pkstr(text);
        pvm_pkint(xyz, 3, 1);
    }
    pvm_send(fm->vm.tids[w], FARM_TAG_CHUNK);
    return 0;
}

static int
serve_pending(struct farm *fm)
{
    for (int w = 0; w < fm->vm.nworkers; w++)
        if (fm->w[w].pending && serve(fm, w) != 0)
            return -1;
    return 0;
}

/* Worker w's open chunks go back to the pool: the items without a result. */
static void
give_back(struct farm *fm, int w)
{
    for (size_t i = 0; i < fm->nchunk; i++) {
        struct farm_chunk *c = &fm->chunk[i];

        if (c->w != w || !c->open)
            continue;
        c->open = 0;
        for (uint64_t p = c->lo; p < c->hi;) {
            uint64_t q = p;

            while (q < c->hi && !fm->done[farm_items_at(&fm->it, q)])
                q++;
            if (q > p) {
                liq_fractile_giveback(&fm->f, p, q);
                fm->reruns += q - p;
            }
            p = q + 1;
        }
    }
}

static void
lose_worker(struct farm *fm, int w)
{
    if (!fm->w[w].alive)
        return;
    fm->w[w].alive = 0;
    fm->w[w].pending = 0;
    fm->vm.tids[w] = 0;
    fm->nlive--;
    liq_fractile_weight(&fm->f, w, 0);
    give_back(fm, w);
}

static void
write_result(struct farm *fm, uint64_t idx, int w, const struct farm_run *r, int attempts)
{
    FILE *fp = fm->out;

    fputs("{\"item\":", fp);
    farm_items_json(fp, &fm->it, idx);
    fprintf(fp, ",\"index\":%llu,\"exit\":%d,\"stdout\":", (unsigned long long)idx, r->exit);
    farm_json_bytes(fp, r->out, r->outlen);
    fputs(",\"stderr\":", fp);
    farm_json_bytes(fp, r->err, r->errlen);
    fputs(",\"host\":", fp);
    farm_json_bytes(fp, fm->vm.host[fm->vm.whost[w]].name,
                    strlen(fm->vm.host[fm->vm.whost[w]].name));
    fprintf(fp, ",\"seconds\":%.3f,\"attempts\":%d", r->seconds, attempts);
    if (r->flags & FARM_F_TIMEOUT)
        fputs(",\"timeout\":true", fp);
    if (r->flags & FARM_F_SIGNAL)
        fprintf(fp, ",\"signal\":%d", r->sig);
    if (r->flags & (FARM_F_OUTTRUNC | FARM_F_ERRTRUNC))
        fputs(",\"truncated\":true", fp);
    fputs("}\n", fp);
    fflush(fp);
}

/* One RESULT from worker w, in the active buffer. */
static int
take_result(struct farm *fm, int w, struct farm_run *r)
{
    int id, idx, attempts, len;

    pvm_upkint(&id, 1, 1);
    pvm_upkint(&idx, 1, 1);
    pvm_upkint(&r->exit, 1, 1);
    pvm_upkint(&r->flags, 1, 1);
    pvm_upkint(&r->sig, 1, 1);
    pvm_upkint(&attempts, 1, 1);
    pvm_upkdouble(&r->seconds, 1, 1);
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
    if (idx < 0 || (uint64_t)idx >= fm->it.n || id < 0 || (size_t)id >= fm->nchunk)
        return -1;
    struct farm_chunk *c = &fm->chunk[id];
    struct farm_worker *fw = &fm->w[w];
    int h = fm->vm.whost[w];

    if (c->w == w && ++c->got >= c->hi - c->lo)
        c->open = 0;
    fw->dur[fw->ndur++ % FARM_RATE_WINDOW] = r->seconds / (attempts > 0 ? attempts : 1);
    fm->h[h].busy += r->seconds;
    if (fm->done[idx]) {
        fm->dups++;
        return 0;
    }
    fm->done[idx] = 1;
    fm->ndone++;
    fm->h[h].items++;
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
live_takers(const struct farm *fm)
{
    int n = 0;

    for (int h = 0; h < fm->vm.nhosts; h++)
        n += !fm->h[h].lost && !fm->h[h].benched;
    return n;
}

/* Reclaim (seed 002's coarse layer): a host whose CPU share per worker
 * stays low stops taking chunks; past the limit its chunks go back. */
static int
reclaim_tick(struct farm *fm, double now)
{
    const struct farm_opts *o = fm->o;
    double *cap = calloc((size_t)fm->vm.nhosts, sizeof(double));

    if (cap == NULL)
        return 0;
    if (farm_vm_capacity(&fm->vm, cap) != 0) {
        free(cap);
        return 0; /* nothing known: nothing changes */
    }
    for (int h = 0; h < fm->vm.nhosts; h++) {
        struct farm_hstate *hs = &fm->h[h];
        int live = 0;

        for (int w = fm->vm.host[h].first; w < fm->vm.host[h].first + fm->vm.host[h].count; w++)
            live += fm->w[w].alive;
        if (hs->lost || live == 0 || cap[h] < 0)
            continue;
        double share = cap[h] / live > 1 ? 1 : cap[h] / live;

        if (!hs->benched) {
            if (share >= o->reclaim_below) {
                hs->below_since = -1;
            } else {
                if (hs->below_since < 0)
                    hs->below_since = now;
                /* Somebody keeps computing: the last host is never benched. */
                if (now - hs->below_since >= o->reclaim_after && live_takers(fm) > 1) {
                    hs->benched = 1;
                    hs->benched_at = now;
                    hs->above_since = -1;
                    hs->dropped = 0;
                    for (int w = fm->vm.host[h].first;
                         w < fm->vm.host[h].first + fm->vm.host[h].count; w++)
                        liq_fractile_weight(&fm->f, w, 0);
                    event(fm, h, "is reclaimed by its owner: it takes no more chunks");
                }
            }
        } else {
            if (share < o->rejoin_above) {
                hs->above_since = -1;
            } else {
                if (hs->above_since < 0)
                    hs->above_since = now;
                if (now - hs->above_since >= o->rejoin_after) {
                    hs->benched = 0;
                    hs->below_since = -1;
                    event(fm, h, "is free again: it takes chunks");
                    reweigh(fm);
                }
            }
            if (hs->benched && !hs->dropped && now - hs->benched_at >= o->reclaim_limit) {
                int had = 0;

                for (int w = fm->vm.host[h].first;
                     w < fm->vm.host[h].first + fm->vm.host[h].count; w++) {
                    for (size_t i = 0; i < fm->nchunk; i++)
                        had |= fm->chunk[i].w == w && fm->chunk[i].open;
                    if (!fm->w[w].alive)
                        continue;
                    give_back(fm, w);
                    pvm_initsend(PvmDataDefault);
                    pvm_send(fm->vm.tids[w], FARM_TAG_DROP);
                }
                hs->dropped = 1;
                if (had)
                    event(fm, h, "still runs a chunk past --reclaim-limit: its items go back");
            }
        }
    }
    free(cap);
    return serve_pending(fm);
}

static void
progress_line(struct farm *fm, double now, int final)
{
    double t = now - fm->t0, rate = t > 0 ? fm->ndone / t : 0;
    double eta = rate > 0 ? (double)(fm->it.n - fm->ndone) / rate : 0;

    fprintf(stderr, "\r\033[Kvmrun farm: %llu/%llu items, %.1f/s, ETA %.0f s",
            (unsigned long long)fm->ndone, (unsigned long long)fm->it.n, rate, eta);
    if (final)
        fputc('\n', stderr);
}

static void
write_report(struct farm *fm, FILE *fp, double makespan)
{
    static const char *sched[] = { "fractiling", "static", "self" };

    fputs("{\"command\":[", fp);
    for (int i = 0; i < fm->o->argc; i++) {
        if (i)
            fputc(',', fp);
        farm_json_bytes(fp, fm->o->argv[i], strlen(fm->o->argv[i]));
    }
    fprintf(fp,
            "],\"items\":%llu,\"schedule\":\"%s\",\"fraction\":%g,\"min_chunk\":%llu,"
            "\"tasks_per_host\":%d,\"makespan_s\":%.3f,\"exit0\":%llu,\"failed\":%llu,"
            "\"timeouts\":%llu,\"not_run\":%llu,\"reruns\":%llu,\"duplicates\":%llu,\"steals\":%llu,\"hosts\":[",
            (unsigned long long)fm->it.n, sched[fm->o->fo.mode], fm->o->fo.fraction,
            (unsigned long long)fm->o->fo.min_chunk, fm->o->tasks_per_host, makespan,
            (unsigned long long)fm->nok, (unsigned long long)fm->nfailed,
            (unsigned long long)fm->ntimeout, (unsigned long long)(fm->it.n - fm->ndone),
            (unsigned long long)fm->reruns, (unsigned long long)fm->dups,
            (unsigned long long)fm->steals);
    for (int h = 0; h < fm->vm.nhosts; h++)
        fprintf(fp, "%s{\"name\":\"%s\",\"workers\":%d,\"items\":%llu,\"busy_s\":%.3f,"
                    "\"lost\":%s,\"reclaimed\":%s}",
                h ? "," : "", fm->vm.host[h].name, fm->vm.host[h].count,
                (unsigned long long)fm->h[h].items, fm->h[h].busy,
                fm->h[h].lost ? "true" : "false", fm->h[h].benched ? "true" : "false");
    fputs("],\"events\":[", fp);
    for (size_t i = 0; i < fm->nev; i++)
        fprintf(fp, "%s{\"t_s\":%.3f,\"host\":\"%s\",\"what\":\"%s\"}", i ? "," : "",
                fm->ev[i].t, fm->vm.host[fm->ev[i].host].name, fm->ev[i].what);
    fputs("],\"chunks\":[", fp);
    for (size_t i = 0; i < fm->nchunk; i++) {
        const struct farm_chunk *c = &fm->chunk[i];

        fprintf(fp, "%s{\"t_s\":%.3f,\"worker\":%d,\"host\":\"%s\",\"size\":%llu,\"batch\":%llu}",
                i ? "," : "", c->t, c->w, fm->vm.host[fm->vm.whost[c->w]].name,
                (unsigned long long)(c->hi - c->lo), (unsigned long long)c->batch);
    }
    fputs("]}\n", fp);
}

static void
summary(struct farm *fm, double makespan)
{
    fprintf(stderr,
            "vmrun farm: %llu items on %d host%s (%d worker%s) in %.2f s: %llu exit 0, "
            "%llu failed (%llu timed out)",
            (unsigned long long)fm->it.n, fm->vm.nhosts, fm->vm.nhosts == 1 ? "" : "s",
            fm->vm.nworkers, fm->vm.nworkers == 1 ? "" : "s", makespan,
            (unsigned long long)fm->nok, (unsigned long long)fm->nfailed,
            (unsigned long long)fm->ntimeout);
    if (fm->ndone < fm->it.n)
        fprintf(stderr, ", %llu not run", (unsigned long long)(fm->it.n - fm->ndone));
    if (fm->reruns > 0)
        fprintf(stderr, "; %llu given to another worker", (unsigned long long)fm->reruns);
    fprintf(stderr, "; %zu chunks\n", fm->nchunk);
    for (int h = 0; h < fm->vm.nhosts; h++)
        fprintf(stderr, "  %-16s %8llu items  busy %8.2f s%s%s\n", fm->vm.host[h].name,
                (unsigned long long)fm->h[h].items, fm->h[h].busy,
                fm->h[h].lost ? "  (lost)" : "", fm->h[h].benched ? "  (reclaimed)" : "");
}

/* The job on the started workers; 0, or -1 with fm->why set (the VM failed). */
static int
farm_run(struct farm *fm)
{
    struct farm_run *r = malloc(sizeof(*r));
    double *cap = calloc((size_t)fm->vm.nhosts, sizeof(double));
    double *wt = calloc((size_t)fm->vm.nworkers, sizeof(double));
    double next_tick;
    char cwd[4096];
    int rc = -1;

    if (r == NULL || cap == NULL || wt == NULL) {
        snprintf(fm->why, sizeof(fm->why), "out of memory");
        goto out;
    }
    /* Until rates are measured, each worker weighs its host's share of CPU. */
    farm_vm_capacity(&fm->vm, cap);
    for (int w = 0; w < fm->vm.nworkers; w++) {
        int h = fm->vm.whost[w];
        double s = cap[h] > 0 ? cap[h] / fm->vm.host[h].count : 1;

        fm->w[w].alive = 1;
        fm->w[w].share0 = wt[w] = s > 1 ? 1 : s < 0.01 ? 0.01 : s;
        fm->h[h].below_since = fm->h[h].above_since = -1;
    }
    fm->nlive = fm->vm.nworkers;
    if (liq_fractile_init(&fm->f, fm->it.n, fm->vm.nworkers, wt, &fm->o->fo) != 0) {
        snprintf(fm->why, sizeof(fm->why), "cannot set up the schedule");
        goto out;
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        cwd[0] = '\0';
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&fm->o->argc, 1, 1);
    for (int i = 0; i < fm->o->argc; i++)
        pvm_pkstr(fm->o->argv[i]);
    pvm_pkdouble(&fm->o->timeout, 1, 1);
    pvm_pkint(&fm->o->retries, 1, 1);
    pvm_pkstr(cwd);
    if ((rc = pvm_mcast(fm->vm.tids, fm->vm.nworkers, FARM_TAG_JOB)) < 0) {
        snprintf(fm->why, sizeof(fm->why), "cannot send the job: %s", lvm_errtext(rc));
        rc = -1;
        goto out;
    }
    rc = -1;
    next_tick = farm_now() + FARM_TICK_S;
    while (fm->ndone < fm->it.n && fm->nlive > 0) {
        struct timeval tv = { 0, 100000 };
        int b = pvm_trecv(-1, -1, &tv), bytes, tag, src, w, h;
        double now;

        if (b < 0) {
            snprintf(fm->why, sizeof(fm->why), "receive: %s", lvm_errtext(b));
            goto out;
        }
        if (b > 0) {
            pvm_bufinfo(b, &bytes, &tag, &src);
            switch (tag) {
            case FARM_TAG_ASK:
                if ((w = farm_vm_worker(&fm->vm, src)) >= 0 && serve(fm, w) != 0)
                    goto out;
                break;
            case FARM_TAG_RESULT:
                if ((w = farm_vm_worker(&fm->vm, src)) < 0)
                    break; /* a worker already counted lost */
                if (take_result(fm, w, r) != 0) {
                    fprintf(stderr, "vmrun farm: a malformed result from t%x; ignored\n",
                            (unsigned)src);
                    break;
                }
                reweigh(fm);
                break;
            case FARM_TAG_EXITED: {
                int who;

                pvm_upkint(&who, 1, 1);
                if ((w = farm_vm_worker(&fm->vm, who)) < 0)
                    break;
                event(fm, fm->vm.whost[w], "lost a worker: its items go to the others");
                lose_worker(fm, w);
                if (serve_pending(fm) != 0)
                    goto out;
                break;
            }
            case FARM_TAG_HOSTGONE: {
                int who;

                pvm_upkint(&who, 1, 1);
                if ((h = farm_vm_host(&fm->vm, who)) < 0 || fm->h[h].lost)
                    break;
                fm->h[h].lost = 1;
                event(fm, h, "left the virtual machine: its items go to the others");
                for (w = fm->vm.host[h].first; w < fm->vm.host[h].first + fm->vm.host[h].count;
                     w++)
                    lose_worker(fm, w);
                if (serve_pending(fm) != 0)
                    goto out;
                break;
            }
            default:
                break;
            }
        }
        now = farm_now();
        if (now >= next_tick) {
            next_tick = now + FARM_TICK_S;
            if (fm->o->reclaim && reclaim_tick(fm, now) != 0)
                goto out;
            if (fm->progress)
                progress_line(fm, now, 0);
        }
    }
    if (fm->ndone < fm->it.n) {
        snprintf(fm->why, sizeof(fm->why), "every worker was lost; %llu items not run",
                 (unsigned long long)(fm->it.n - fm->ndone));
        goto out;
    }
    rc = 0;
out:
    free(r);
    free(cap);
    free(wt);
    return rc;
}

int
vmrun_farm_main(int argc, char **argv)
{
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
    if (strcmp(o.output, "-") == 0)
        fm.out = stdout;
    else if ((fm.out = fopen(o.output, "w")) == NULL) {
        fprintf(stderr, "vmrun farm: --output %s: %s\n", o.output, strerror(errno));
        goto out2;
    }
    if ((fm.done = calloc((size_t)fm.it.n, 1)) == NULL) {
        fprintf(stderr, "vmrun farm: out of memory for %llu items\n",
                (unsigned long long)fm.it.n);
        status = 1;
        goto out2;
    }
    fm.progress = !o.quiet && isatty(2);
    status = 1;
    fm.t0 = farm_now();
    started = 1;
    if (farm_vm_start(&fm.vm, o.hosts, o.tasks_per_host) != 0) {
        fprintf(stderr, "vmrun farm: %s\n", fm.vm.why);
        if (fm.vm.usage)
            status = 2;
        goto out2;
    }
    fm.w = calloc((size_t)fm.vm.nworkers, sizeof(*fm.w));
    fm.h = calloc((size_t)fm.vm.nhosts, sizeof(*fm.h));
    if (fm.w == NULL || fm.h == NULL) {
        fprintf(stderr, "vmrun farm: out of memory\n");
        goto out2;
    }
    fm.t0 = farm_now();
    rc = farm_run(&fm);
    double makespan = farm_now() - fm.t0;

    if (fm.progress)
        progress_line(&fm, farm_now(), 1);
    /* Exactly one line per item, even for those no worker was left to run. */
    for (uint64_t i = 0; i < fm.it.n; i++) {
        if (fm.done[i])
            continue;
        fputs("{\"item\":", fm.out);
        farm_items_json(fm.out, &fm.it, i);
        fprintf(fm.out, ",\"index\":%llu,\"exit\":null,\"error\":\"not run: %s\",\"host\":null,"
                        "\"seconds\":0}\n",
                (unsigned long long)i, "every worker was lost");
    }
    fflush(fm.out);
    if (rc != 0)
        fprintf(stderr, "vmrun farm: %s\n", fm.why);
    if (!o.quiet)
        summary(&fm, makespan);
    if (o.json != NULL) {
        FILE *jp = strcmp(o.json, "-") == 0 ? stdout : fopen(o.json, "w");

        if (jp == NULL) {
            fprintf(stderr, "vmrun farm: --json %s: %s\n", o.json, strerror(errno));
            rc = -1;
        } else {
            write_report(&fm, jp, makespan);
            if (jp != stdout)
                fclose(jp);
        }
    }
    status = rc == 0 && fm.nfailed == 0 && fm.ndone == fm.it.n ? 0 : 1;
out2:
    free(argv2);
    if (started)
        farm_vm_stop(&fm.vm, status != 0 && fm.ndone < fm.it.n);
    farm_vm_free(&fm.vm);
    if (fm.out != NULL && fm.out != stdout)
        fclose(fm.out);
    liq_fractile_free(&fm.f);
    free(fm.done);
    free(fm.chunk);
    free(fm.w);
    free(fm.h);
    free(fm.ev);
out:
    farm_items_free(&fm.it);
    return status;
}
