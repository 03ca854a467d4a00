/*
 * vmrun_analyze.c - `vmrun analyze FILE|DIR [--hints OUT] [--json]` (issue 27;
 * seed 003, Paradise's post-mortem analysis): from a stencil job's trace,
 * the characteristics seed 003 infers -- grain size per kind of work, the
 * communication graph and its shape, load over time, communication
 * against computation, idle time per host -- with their numbers; then the
 * rules (vmrun_rules.c) and the hints file for the next run, a job file
 * whose every setting carries a comment naming its evidence.  PVM task
 * traces (LIQUIDVM_TRACE=DIR) go to vmrun_panalyze.c, merged.
 */
#include "vmrun_trace.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmrun_prules.h"
#include "vmrun_rules.h"
#include "wire.h"

static const char an_usage[] =
    "usage: vmrun analyze FILE|DIR [--hints OUT] [--json] [--min-msgs N] [--wait-share F]\n"
    "\n"
    "  Read a stencil job's trace (vmrun stencil --trace FILE; a PVM program's:\n"
    "  below) and print its characteristics: grain size (mean and coefficient of\n"
    "  variation of compute per quantum and iteration, light and heavy regions),\n"
    "  the communication graph (messages and bytes per pair, its shape), load over\n"
    "  time (per-epoch balance efficiency; steady, drifting or bursty), waiting\n"
    "  against computing, idle time per host; then the rules that fired and why.  A\n"
    "  directory: every *.json trace in it, by name, one after the other (other\n"
    "  files are named and skipped).\n"
    "\n"
    "  --hints OUT   write the hints (a job file: vmrun stencil --hints OUT); from a\n"
    "                directory, those every trace that gives them agrees on\n"
    "  --json        print the analysis as JSON instead (a directory: an array)\n"
    "\n"
    "  A PVM program's traces (LIQUIDVM_TRACE=DIR or vmctl spawn -@, a file per\n"
    "  task, written as each task exits) are read together: per task its compute\n"
    "  between PVM calls (grain), its waits in receives; the message and byte\n"
    "  matrix; message sizes.  The hints (OUT) are for libpvm3\n"
    "  (LIQUIDVM_HINTS=OUT): direct routes, spawn placement, fragment size.\n"
    "  --min-msgs N  messages between two tasks that make a direct route or one\n"
    "                host worth it (100)\n"
    "  --wait-share F  placement only for pairs waiting this share of their life (0.25)\n";

/* Per-kind grain: light regions (0) and heavy ones (1). */
struct an_grain {
    int n;
    double sum, sum2;
};

struct an {
    const struct vmrun_trace *t;
    struct vmrun_traits tr;
    struct an_grain kind[2];
    int nitems;                 /* blocks */
    int nregions;
    double *lcompute, *lwait, *lplan; /* per lane */
    double *msgs, *bytes;       /* nlanes x nlanes */
    int nwin;                   /* windows of the load series: epochs, a few together */
    int nepochs;                /* epochs (when the trace marks them) */
    double *wcomp, *wwork;      /* nlanes x nwin: compute s and work (point-phases) */
    double *be;                 /* per window */
    double span_t0, span_t1;    /* the workers' first and last event */
    int epochs_by_marks;
};

static double
an_cv(const struct an_grain *g)
{
    double m = g->n ? g->sum / g->n : 0, v = g->n > 1 ? (g->sum2 - g->n * m * m) / (g->n - 1) : 0;

    return m > 0 && v > 0 ? sqrt(v) / m : 0;
}

static int
an_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The load window of a span on lane l starting at time t. */
static int
an_window(const struct an *a, int l, double t)
{
    int w = 0;

    if (!a->epochs_by_marks) {
        double f = (t - a->span_t0) / (a->span_t1 - a->span_t0 + 1e-12);

        /* A master's span may lie outside the workers' [t0, t1]: clamp
         * before the conversion, whose overflow is undefined. */
        if (!(f > 0))
            return 0;
        return f >= 1 ? a->nwin - 1 : (int)(f * a->nwin);
    }
    for (int i = 0; i < a->t->nmarks; i++)
        w += a->t->marks[i].lane == l && a->t->marks[i].epoch >= 0 && a->t->marks[i].t <= t;
    w = (int)((long long)w * a->nwin / a->nepochs);
    return w < a->nwin ? w : a->nwin - 1;
}

/* A block: a region's compute over one pass, inner and outer parts summed. */
struct an_block {
    int lane, first, quanta, heavy;
    double grain;               /* s per quantum-iteration */
};

static int
an_block_cmp(const void *a, const void *b)
{
    const struct an_block *x = a, *y = b;

    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->quanta != y->quanta)
        return x->quanta < y->quanta ? -1 : 1;
    return x->grain < y->grain ? -1 : x->grain > y->grain;
}

/* The grain's dispersion over regions: each region's (lane, first quantum,
 * quanta) median over its blocks, then their mean and CV.  A block's own
 * time varies with preemption on a shared machine, which is noise and not
 * the work's; the median of a region's blocks keeps what differs between
 * regions (heavy ones, slower hosts) and drops what differs between passes.
 * b is sorted here. */
static void
an_regions(struct an *a, struct an_block *b, int n)
{
    double sum = 0, sum2 = 0;
    int nr = 0;

    if (n > 1)
        qsort(b, (size_t)n, sizeof(*b), an_block_cmp);
    for (int i = 0, j; i < n; i = j) {
        double m;
        struct an_grain *g;

        for (j = i; j < n && b[j].lane == b[i].lane && b[j].first == b[i].first &&
                    b[j].quanta == b[i].quanta;
             j++)
            ;
        m = (j - i) % 2 ? b[i + (j - i) / 2].grain
                        : (b[i + (j - i) / 2 - 1].grain + b[i + (j - i) / 2].grain) / 2;
        g = &a->kind[b[i].heavy > 1];
        g->n++;
        g->sum += m;
        g->sum2 += m * m;
        sum += m;
        sum2 += m * m;
        nr++;
    }
    struct an_grain all = { nr, sum, sum2 };

    a->nregions = nr;
    a->tr.grain_mean_s = nr ? sum / nr : 0;
    a->tr.grain_cv = an_cv(&all);
    a->tr.heavy_ratio = a->kind[0].n && a->kind[1].n
                            ? (a->kind[1].sum / a->kind[1].n) / (a->kind[0].sum / a->kind[0].n)
                            : 1;
}

/* Grain, waits, the load series. */
static int
an_compute(struct an *a)
{
    const struct vmrun_trace *t = a->t;
    /* Inner parts waiting for their region's outer part, and the blocks. */
    struct an_block *pend = malloc(((size_t)t->nspans + 1) * sizeof(*pend));
    struct an_block *blk = malloc(((size_t)t->nspans + 1) * sizeof(*blk));
    double *gw = malloc(((size_t)t->nspans + 1) * sizeof(double)), blocks = 0;
    /* Each gw entry's lane and peer; per lane, its exchange's tag and the
     * first gw entry that may be of it. */
    int *gwho = malloc(((size_t)t->nspans + 1) * 2 * sizeof(int));
    int *ex = malloc(((size_t)t->nlanes + 1) * 2 * sizeof(int));
    int npend = 0, ngw = 0;

    if (pend == NULL || blk == NULL || gw == NULL || gwho == NULL || ex == NULL) {
        free(pend);
        free(blk);
        free(gw);
        free(gwho);
        free(ex);
        return -1;
    }
    for (int l = 0; l < t->nlanes; l++)
        ex[2 * l] = -1, ex[2 * l + 1] = 0;
    for (int i = 0; i < t->nspans; i++) {
        const struct vmrun_tspan *s = &t->spans[i];
        int l = s->lane;

        if (s->kind == VT_COMPUTE) {
            int win = an_window(a, l, s->t);
            double dur = s->dur, work = (double)s->quanta * s->iters;

            a->lcompute[l] += s->dur;
            a->wcomp[l * a->nwin + win] += s->dur;
            /* A region's inner part comes before its outer part, with other
             * regions' inner parts in between (the ghosts arrive meanwhile):
             * pair them by lane and first quantum. */
            if (s->part == 1) {
                pend[npend++] = (struct an_block){ l, s->first, s->quanta, s->heavy, s->dur };
                continue;
            }
            if (s->part == 2)
                for (int k = 0; k < npend; k++)
                    if (pend[k].lane == l && pend[k].first == s->first) {
                        dur += pend[k].grain;
                        pend[k] = pend[--npend];
                        break;
                    }
            if (work <= 0)
                continue;
            a->wwork[l * a->nwin + win] += work * (s->heavy > 0 ? s->heavy : 1);
            blk[a->nitems++] = (struct an_block){ l, s->first, s->quanta, s->heavy, dur / work };
            blocks += dur;
        } else if (s->kind == VT_WAIT_GHOST || s->kind == VT_WAIT_MOVE ||
                   s->kind == VT_WAIT_PLAN || s->kind == VT_WAIT_VERDICT) {
            a->lwait[l] += s->dur;
            if (s->kind == VT_WAIT_PLAN)
                a->lplan[l] += s->dur;
            /* A link's ghosts beyond 1 MiB come as several messages, one
             * wait each, those of its links in any order: the exchange's
             * wait on a link is the sum of its messages'.  An exchange is
             * a run of one tag on the lane. */
            if (s->kind == VT_WAIT_GHOST) {
                int j = ngw;

                if (ex[2 * l] != s->tag) {
                    ex[2 * l] = s->tag;
                    ex[2 * l + 1] = ngw;
                }
                for (int x = ex[2 * l + 1]; x < ngw && j == ngw; x++)
                    if (gwho[2 * x] == l && gwho[2 * x + 1] == s->peer)
                        j = x;
                if (j == ngw) {
                    gw[ngw] = 0;
                    gwho[2 * ngw] = l;
                    gwho[2 * ngw++ + 1] = s->peer;
                }
                gw[j] += s->dur;
            }
        } else if (s->kind == VT_PLAN) {
            a->tr.moved += s->arg;
        }
    }
    a->tr.block_s = a->nitems ? blocks / a->nitems : 0;
    an_regions(a, blk, a->nitems);
    if (ngw > 0) {
        qsort(gw, (size_t)ngw, sizeof(double), an_dcmp);
        a->tr.ghost_wait_s = gw[ngw / 2];
    }
    free(pend);
    free(blk);
    free(gw);
    free(gwho);
    free(ex);
    return 0;
}

/* Messages, bytes, latency, the shape. */
static void
an_comm(struct an *a, const struct vmrun_thresholds *th)
{
    const struct vmrun_trace *t = a->t;
    int nl = t->nlanes, n = 0;
    double *lat = malloc((size_t)(t->nflows + 1) * sizeof(double));

    for (int i = 0; i < t->nflows; i++) {
        const struct vmrun_tflow *f = &t->flows[i];

        a->msgs[f->from * nl + f->to]++;
        a->bytes[f->from * nl + f->to] += f->bytes;
        if (lat != NULL && f->t1 >= f->t0)
            lat[n++] = f->t1 - f->t0;
    }
    if (lat != NULL && n > 0) {
        qsort(lat, (size_t)n, sizeof(double), an_dcmp);
        a->tr.latency_s = lat[n / 10];
    }
    free(lat);
    a->tr.shape = vmrun_shape_of(nl, a->msgs, th);
}

/* Per-window balance efficiency and each worker's speed over the run. */
static void
an_load(struct an *a, const struct vmrun_thresholds *th)
{
    const struct vmrun_trace *t = a->t;
    double *v = malloc((size_t)a->nwin * sizeof(double)), besum = 0;
    int nbe = 0;

    a->tr.be_min = 1;
    for (int w = 0; w < a->nwin; w++) {
        double sum = 0, max = 0;
        int k = 0;

        for (int l = 0; l < t->nlanes; l++) {
            double c = a->wcomp[l * a->nwin + w];

            if (c > 0) {
                sum += c;
                k++;
                max = c > max ? c : max;
            }
        }
        a->be[w] = max > 0 ? sum / k / max : 1;
        if (k > 1) {
            besum += a->be[w];
            nbe++;
            a->tr.be_min = a->be[w] < a->tr.be_min ? a->be[w] : a->tr.be_min;
        }
    }
    a->tr.be_mean = nbe ? besum / nbe : 1;
    /* A worker's seconds per unit of work, window by window: what its host
     * gives it, whatever quanta it holds -- over the mean of all workers in
     * that window.  A balancer follows the workers' speeds relative to each
     * other; when the whole machine slows down (other users' work on shared
     * cores) every worker drifts alike, and there is nothing to follow. */
    double *mean = calloc((size_t)a->nwin + 1, sizeof(double));

    for (int w = 0; mean != NULL && w < a->nwin; w++) {
        int k = 0;

        for (int l = 0; l < t->nlanes; l++)
            if (a->wwork[l * a->nwin + w] > 0) {
                mean[w] += a->wcomp[l * a->nwin + w] / a->wwork[l * a->nwin + w];
                k++;
            }
        mean[w] = k ? mean[w] / k : 0;
    }
    a->tr.load = VR_LOAD_STEADY;
    for (int l = 0; v != NULL && mean != NULL && l < t->nlanes; l++) {
        int n = 0;
        double d, b;
        enum vmrun_load c;

        for (int w = 0; w < a->nwin; w++)
            if (a->wwork[l * a->nwin + w] > 0 && mean[w] > 0)
                v[n++] = a->wcomp[l * a->nwin + w] / a->wwork[l * a->nwin + w] / mean[w];
        if (n < 3)
            continue;
        c = vmrun_load_class(v, n, th, &d, &b);
        if (d > a->tr.drift)
            a->tr.drift = d;
        if (b > a->tr.burst)
            a->tr.burst = b;
        if (c == VR_LOAD_DRIFTING || (c == VR_LOAD_BURSTY && a->tr.load == VR_LOAD_STEADY))
            a->tr.load = c;
    }
    free(v);
    free(mean);
    a->tr.epochs = a->nwin;
}

static int
an_run(struct an *a, const struct vmrun_trace *t, const struct vmrun_thresholds *th)
{
    int nl = t->nlanes, marks = 0;
    double comp = 0, wait = 0, plan = 0;

    memset(a, 0, sizeof(*a));
    a->t = t;
    a->span_t0 = 1e300;
    for (int i = 0; i < t->nspans; i++)
        if (!t->lanes[t->spans[i].lane].master) {
            a->span_t0 = t->spans[i].t < a->span_t0 ? t->spans[i].t : a->span_t0;
            a->span_t1 = t->spans[i].t + t->spans[i].dur > a->span_t1
                             ? t->spans[i].t + t->spans[i].dur : a->span_t1;
        }
    for (int l = 0; l < nl; l++) {
        int m = 0;

        for (int i = 0; i < t->nmarks; i++)
            m += t->marks[i].lane == l && t->marks[i].epoch >= 0;
        marks = m > marks ? m : marks;
    }
    a->epochs_by_marks = marks >= 2;
    a->nepochs = marks + 1;
    /* A window of the load series spans epochs enough for window_s: a
     * worker's speed over one short epoch (10 ms here) is the scheduler's
     * slices (a CFS quota's period, other processes' turns), which would
     * read as bursts and imbalance that no balancer can follow. */
    a->nwin = 8;
    if (a->epochs_by_marks) {
        double run = a->span_t1 - a->span_t0;
        int by_time = run > 0 && th->window_s > 0 ? (int)fmin(run / th->window_s, 1e6) : 0;

        a->nwin = by_time < 3 ? 3 : by_time;
        a->nwin = a->nwin < a->nepochs ? a->nwin : a->nepochs;
    }
    a->lcompute = calloc((size_t)nl + 1, sizeof(double));
    a->lwait = calloc((size_t)nl + 1, sizeof(double));
    a->lplan = calloc((size_t)nl + 1, sizeof(double));
    a->msgs = calloc((size_t)nl * nl + 1, sizeof(double));
    a->bytes = calloc((size_t)nl * nl + 1, sizeof(double));
    a->wcomp = calloc((size_t)nl * a->nwin + 1, sizeof(double));
    a->wwork = calloc((size_t)nl * a->nwin + 1, sizeof(double));
    a->be = calloc((size_t)a->nwin + 1, sizeof(double));
    if (!a->lcompute || !a->lwait || !a->lplan || !a->msgs || !a->bytes || !a->wcomp ||
        !a->wwork || !a->be)
        return -1;
    a->tr.workers = t->job.workers;
    a->tr.balance = t->job.balance;
    a->tr.halo = t->job.halo;
    a->tr.halo_auto = t->job.halo_auto;
    a->tr.halo_slack = t->job.halo_slack;
    a->tr.epoch = t->job.epoch;
    a->tr.quanta = t->job.quanta;
    a->tr.heavy = t->job.heavy;
    a->tr.min_gain = t->job.min_gain;
    if (an_compute(a) != 0)
        return -1;
    an_comm(a, th);
    an_load(a, th);
    for (int l = 0; l < nl; l++) {
        comp += a->lcompute[l];
        wait += a->lwait[l];
        plan += a->lplan[l];
    }
    a->tr.comm_ratio = comp > 0 ? wait / comp : 0;
    a->tr.plan_wait_share = comp > 0 ? plan / comp : 0;
    return 0;
}

static void
an_free(struct an *a)
{
    free(a->lcompute);
    free(a->lwait);
    free(a->lplan);
    free(a->msgs);
    free(a->bytes);
    free(a->wcomp);
    free(a->wwork);
    free(a->be);
}

/* A host's idle share: its workers' waits over their lanes' time. */
static double
an_idle(const struct an *a, int h)
{
    double w = 0, span = a->span_t1 - a->span_t0;
    int k = 0;

    for (int l = 0; l < a->t->nlanes; l++)
        if (a->t->lanes[l].host == h && !a->t->lanes[l].master) {
            w += a->lwait[l];
            k++;
        }
    return k > 0 && span > 0 ? w / (k * span) : 0;
}

/* The master's marks of reclaim and failures, and its recoveries. */
struct an_events {
    int evacuate, rejoin, lost, recoveries;
    double recovery_s;
};

static struct an_events
an_events(const struct vmrun_trace *t)
{
    struct an_events e = { 0 };

    for (int i = 0; i < t->nmarks; i++) {
        e.evacuate += strcmp(t->marks[i].name, "evacuate") == 0;
        e.rejoin += strcmp(t->marks[i].name, "rejoin") == 0;
        e.lost += strcmp(t->marks[i].name, "lost") == 0;
    }
    for (int i = 0; i < t->nspans; i++)
        if (t->spans[i].kind == VT_RECOVERY) {
            e.recoveries++;
            e.recovery_s += t->spans[i].dur;
        }
    return e;
}

static void
an_print(FILE *fp, const char *path, const struct an *a, const struct vmrun_advice *adv)
{
    const struct vmrun_trace *t = a->t;
    int nl = t->nlanes;
    double msgs = 0, bytes = 0;

    fprintf(fp, "trace %s: %s, %dx%dx%d %s, %d iterations, %d workers on %d hosts, %.3f s; "
                "clocks within %.1f us; %ld events dropped, %d message ends unpaired\n",
            path, t->job.program, t->job.grid[0], t->job.grid[1], t->job.grid[2], t->job.kernel,
            t->job.iters, t->job.workers, t->nhosts, a->span_t1 - a->span_t0, t->residual_us,
            t->dropped, t->unpaired);
    fprintf(fp, "settings: balance %s, epoch %d, min-gain %g, halo %d%s, quanta %d per host, "
                "decomp %s, heavy %d\n",
            t->job.balance ? "on" : "off", t->job.epoch, t->job.min_gain, t->job.halo,
            t->job.halo_auto ? " (auto)" : "", t->job.quanta, t->job.decomp, t->job.heavy);
    fprintf(fp, "grain: %.3g us per quantum-iteration, CV %.2f over %d regions (their "
                "medians over %d blocks; mean block %.3g ms)\n",
            1e6 * a->tr.grain_mean_s, a->tr.grain_cv, a->nregions, a->nitems,
            1e3 * a->tr.block_s);
    for (int k = 0; k < 2; k++)
        if (a->kind[k].n > 0)
            fprintf(fp, "  %-5s regions: %d, %.3g us per quantum-iteration, CV %.2f\n",
                    k ? "heavy" : "light", a->kind[k].n, 1e6 * a->kind[k].sum / a->kind[k].n,
                    an_cv(&a->kind[k]));
    if (a->kind[1].n > 0)
        fprintf(fp, "  heavy over light: %.2fx\n", a->tr.heavy_ratio);
    for (int i = 0; i < nl * nl; i++) {
        msgs += a->msgs[i];
        bytes += a->bytes[i];
    }
    fprintf(fp, "communication: %.0f messages, %.2f MB; shape %s; latency %.3g ms (10th "
                "percentile of send to receipt); a wait for ghosts %.3g ms (median)\n",
            msgs, bytes / 1e6, vmrun_shape_name(a->tr.shape), 1e3 * a->tr.latency_s,
            1e3 * a->tr.ghost_wait_s);
    fprintf(fp, "  %-14s", "from \\ to");
    for (int j = 0; j < nl; j++)
        if (!t->lanes[j].master)
            fprintf(fp, " %16s", t->lanes[j].name);
    fputc('\n', fp);
    for (int i = 0; i < nl; i++) {
        if (t->lanes[i].master)
            continue;
        fprintf(fp, "  %-14s", t->lanes[i].name);
        for (int j = 0; j < nl; j++)
            if (!t->lanes[j].master)
                fprintf(fp, " %6.0f %6.2fMB", a->msgs[i * nl + j], a->bytes[i * nl + j] / 1e6);
        fputc('\n', fp);
    }
    fprintf(fp, "load: %d %s; balance efficiency %.2f at worst, %.2f mean; %s (speed drift "
                "%.0f%%, bursts %.0f%%); %d quanta moved\n",
            a->nwin, a->epochs_by_marks ? "windows of epochs" : "time windows", a->tr.be_min,
            a->tr.be_mean,
            vmrun_load_name(a->tr.load), 100 * a->tr.drift, 100 * a->tr.burst, a->tr.moved);
    fprintf(fp, "  compute s per window:");
    for (int l = 0; l < nl; l++) {
        if (t->lanes[l].master)
            continue;
        fprintf(fp, "\n    %-14s", t->lanes[l].name);
        for (int w = 0; w < a->nwin && w < 24; w++)
            fprintf(fp, " %.3f", a->wcomp[l * a->nwin + w]);
    }
    fprintf(fp, "\nwaiting / computing: %.1f%% (plans %.1f%%)\nidle per host:",
            100 * a->tr.comm_ratio, 100 * a->tr.plan_wait_share);
    for (int h = 0; h < t->nhosts; h++)
        fprintf(fp, " %s %.1f%%", t->hosts[h].name, 100 * an_idle(a, h));
    struct an_events ev = an_events(t);

    if (ev.evacuate + ev.rejoin + ev.lost + ev.recoveries > 0)
        fprintf(fp, "\nreclaim and failures: %d evacuated, %d rejoined; %d worker%s lost, "
                    "%d recover%s in %.3f s",
                ev.evacuate, ev.rejoin, ev.lost, ev.lost == 1 ? "" : "s", ev.recoveries,
                ev.recoveries == 1 ? "y" : "ies", ev.recovery_s);
    fprintf(fp, "\nrules:\n");
    for (int i = 0; i < adv->nrules; i++)
        fprintf(fp, "  %s %-16s %s\n", adv->rule[i].fired ? "FIRED" : "  -  ", adv->rule[i].name,
                adv->rule[i].why);
    fprintf(fp, "hints:%s\n", adv->nhints ? "" : " none (the settings fit the run)");
    for (int i = 0; i < adv->nhints; i++)
        fprintf(fp, "  %s = %s;\n", adv->hint[i].key, adv->hint[i].value);
}

static void
an_json(FILE *fp, const char *path, const struct an *a, const struct vmrun_advice *adv)
{
    const struct vmrun_trace *t = a->t;

    fprintf(fp, "{\"trace\":");
    wire_json_str(fp, path);
    fprintf(fp, ",\"grain\":{\"mean_s\":%.6g,\"cv\":%.4f,\"regions\":%d,\"blocks\":%d,"
                "\"block_s\":%.6g,\"heavy_ratio\":%.4f,\"kinds\":[",
            a->tr.grain_mean_s, a->tr.grain_cv, a->nregions, a->nitems, a->tr.block_s,
            a->tr.heavy_ratio);
    for (int k = 0, first = 1; k < 2; k++)
        if (a->kind[k].n > 0) {
            fprintf(fp, "%s{\"kind\":\"%s\",\"regions\":%d,\"mean_s\":%.6g,\"cv\":%.4f}",
                    first ? "" : ",", k ? "heavy" : "light", a->kind[k].n,
                    a->kind[k].sum / a->kind[k].n, an_cv(&a->kind[k]));
            first = 0;
        }
    fprintf(fp, "]},\"communication\":{\"shape\":\"%s\",\"latency_s\":%.6g,"
                "\"ghost_wait_s\":%.6g,\"pairs\":[",
            vmrun_shape_name(a->tr.shape), a->tr.latency_s, a->tr.ghost_wait_s);
    for (int i = 0, first = 1; i < t->nlanes; i++)
        for (int j = 0; j < t->nlanes; j++)
            if (a->msgs[i * t->nlanes + j] > 0) {
                fprintf(fp, "%s{\"from\":%d,\"to\":%d,\"messages\":%.0f,\"bytes\":%.0f}",
                        first ? "" : ",", t->lanes[i].tid, t->lanes[j].tid,
                        a->msgs[i * t->nlanes + j], a->bytes[i * t->nlanes + j]);
                first = 0;
            }
    fprintf(fp, "]},\"load\":{\"windows\":%d,\"by\":\"%s\",\"class\":\"%s\",\"drift\":%.4f,"
                "\"burst\":%.4f,\"be_min\":%.4f,\"be_mean\":%.4f,\"moved\":%d,\"be\":[",
            a->nwin, a->epochs_by_marks ? "epochs" : "time", vmrun_load_name(a->tr.load),
            a->tr.drift, a->tr.burst, a->tr.be_min, a->tr.be_mean, a->tr.moved);
    for (int w = 0; w < a->nwin; w++)
        fprintf(fp, "%s%.4f", w ? "," : "", a->be[w]);
    fprintf(fp, "]},\"comm_ratio\":%.4f,\"plan_wait_share\":%.4f,\"idle\":{",
            a->tr.comm_ratio, a->tr.plan_wait_share);
    for (int h = 0; h < t->nhosts; h++) {
        fprintf(fp, "%s", h ? "," : "");
        wire_json_str(fp, t->hosts[h].name);
        fprintf(fp, ":%.4f", an_idle(a, h));
    }
    struct an_events ev = an_events(t);

    fprintf(fp, "},\"events\":{\"evacuate\":%d,\"rejoin\":%d,\"lost\":%d,\"recoveries\":%d,"
                "\"recovery_s\":%.6g},\"rules\":[",
            ev.evacuate, ev.rejoin, ev.lost, ev.recoveries, ev.recovery_s);
    for (int i = 0; i < adv->nrules; i++) {
        fprintf(fp, "%s{\"name\":\"%s\",\"fired\":%s,\"why\":", i ? "," : "", adv->rule[i].name,
                adv->rule[i].fired ? "true" : "false");
        wire_json_str(fp, adv->rule[i].why);
        fputc('}', fp);
    }
    fprintf(fp, "],\"hints\":{");
    for (int i = 0; i < adv->nhints; i++) {
        fprintf(fp, "%s\"%s\":", i ? "," : "", adv->hint[i].key);
        wire_json_str(fp, adv->hint[i].value);
    }
    fprintf(fp, "}}\n");
}

/* One trace's analysis, kept for the hints file. */
struct an_one {
    char *path;
    struct vmrun_advice adv;
};

/* The rule that gave hint h its evidence. */
static const char *
an_rule_of(const struct vmrun_advice *adv, const struct vmrun_hint *h)
{
    for (int r = 0; r < adv->nrules; r++)
        if (adv->rule[r].fired && strcmp(adv->rule[r].why, h->why) == 0)
            return adv->rule[r].name;
    return "";
}

/* The hints file: a job file, a comment with its evidence above each
 * setting.  From several traces (a directory), a key goes in only when
 * every trace that hints at it gives the same value, its evidence the
 * first trace's; a key they disagree on is left out, and a comment says
 * so: the runs do not bear one setting out. */
static int
an_hints(const char *out, const char *in, const struct an_one *one, int n)
{
    FILE *fp = fopen(out, "w");

    if (fp == NULL)
        return -1;
    fprintf(fp, "# Hints by vmrun analyze from the trace%s %s (its rules: vmrun(1)).\n"
                "# Read by vmrun stencil --hints FILE (and by users' programs): options given\n"
                "# on the command line or in --job win over these.\n",
            n > 1 ? "s in" : "", in);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < one[k].adv.nhints; i++) {
            const struct vmrun_hint *h = &one[k].adv.hint[i];
            int seen = 0, agree = 1;

            for (int o = 0; o < n; o++)
                for (int j = 0; j < one[o].adv.nhints; j++)
                    if (strcmp(one[o].adv.hint[j].key, h->key) == 0) {
                        seen |= o < k;
                        agree &= strcmp(one[o].adv.hint[j].value, h->value) == 0;
                    }
            if (seen)
                continue; /* written (or refused) for an earlier trace */
            if (!agree) {
                fprintf(fp, "\n# %s: the traces disagree (", h->key);
                for (int o = 0, first = 1; o < n; o++)
                    for (int j = 0; j < one[o].adv.nhints; j++)
                        if (strcmp(one[o].adv.hint[j].key, h->key) == 0) {
                            fprintf(fp, "%s%s in %s", first ? "" : ", ",
                                    one[o].adv.hint[j].value, one[o].path);
                            first = 0;
                        }
                fprintf(fp, "); left to the defaults\n");
                continue;
            }
            fprintf(fp, "\n# %s%s%s: %s\n%s = %s;\n", an_rule_of(&one[k].adv, h),
                    n > 1 ? " in " : "", n > 1 ? one[k].path : "", h->why, h->key, h->value);
        }
    return fclose(fp) != 0 ? -1 : 0;
}

static int
an_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The traces to read: FILE itself, or every *.json in DIR, by name. */
static int
an_inputs(const char *in, char ***paths, int *n, int *dir)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int cap = 0;

    *paths = NULL;
    *n = 0;
    *dir = stat(in, &st) == 0 && S_ISDIR(st.st_mode);
    if (!*dir) {
        if ((*paths = malloc(sizeof(char *))) == NULL || ((*paths)[0] = strdup(in)) == NULL)
            return -1;
        *n = 1;
        return 0;
    }
    if ((d = opendir(in)) == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char **x;

        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            if ((x = realloc(*paths, (size_t)cap * sizeof(char *))) == NULL)
                break;
            *paths = x;
        }
        if (asprintf(&(*paths)[*n], "%s/%s", in, e->d_name) < 0)
            break;
        ++*n;
    }
    closedir(d);
    if (e != NULL)
        return -1;
    if (*n > 0)
        qsort(*paths, (size_t)*n, sizeof(char *), an_name_cmp);
    return 0;
}

int
vmrun_analyze_main(int argc, char **argv)
{
    const char *in = NULL, *hints = NULL;
    int json = 0, rc = 1, n = 0, dir = 0, done = 0;
    char **paths = NULL;
    struct an_one *one = NULL;
    struct vmrun_thresholds th;
    struct vmrun_pthresholds pth;
    int npvm = 0;

    vmrun_prules_defaults(&pth);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(an_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--hints") == 0 && i + 1 < argc) {
            hints = argv[++i];
        } else if ((strcmp(argv[i], "--min-msgs") == 0 || strcmp(argv[i], "--wait-share") == 0) &&
                   i + 1 < argc) {
            char *end;
            double v = strtod(argv[i + 1], &end);

            if (end == argv[i + 1] || *end != '\0' || !(v >= 0) || !isfinite(v) ||
                (argv[i][2] == 'w' && v > 1)) {
                fprintf(stderr, "vmrun analyze: %s wants %s, not '%s'\n", argv[i],
                        argv[i][2] == 'w' ? "a share 0..1" : "a number >= 0", argv[i + 1]);
                return 2;
            }
            *(argv[i][2] == 'm' ? &pth.pair_msgs : &pth.wait_share) = v;
            i++;
        } else if (argv[i][0] != '-' && in == NULL) {
            in = argv[i];
        } else {
            fprintf(stderr, "vmrun analyze: unexpected argument '%s'\n%s", argv[i], an_usage);
            return 2;
        }
    }
    if (in == NULL) {
        fputs(an_usage, stderr);
        return 2;
    }
    if (an_inputs(in, &paths, &n, &dir) != 0) {
        fprintf(stderr, "vmrun analyze: %s: cannot list: %s\n", in, strerror(errno));
        goto out;
    }
    for (int i = 0; i < n; i++)
        npvm += vmrun_tis_pvm(paths[i]);
    if (npvm > 0) {
        /* A PVM run's task traces make one analysis, merged. */
        if (npvm < n)
            fprintf(stderr, "vmrun analyze: %s: %d files that are no PVM task traces passed "
                            "over\n", in, n - npvm);
        rc = vmrun_panalyze(in, dir, hints, json, &pth);
        goto out;
    }
    if ((one = calloc((size_t)n + 1, sizeof(*one))) == NULL) {
        fprintf(stderr, "vmrun analyze: out of memory\n");
        goto out;
    }
    vmrun_rules_defaults(&th);
    if (json && dir)
        fputc('[', stdout);
    for (int i = 0; i < n; i++) {
        struct vmrun_trace t;
        struct an a;
        char err[512];

        /* In a directory, a file that is no trace (a job's report beside
         * it) is named and passed over; a file named alone must be one. */
        if (vmrun_tload(paths[i], &t, err, sizeof(err)) != 0) {
            fprintf(stderr, "vmrun analyze: %s%s\n", err, dir ? "; skipped" : "");
            continue;
        }
        if (an_run(&a, &t, &th) != 0) {
            fprintf(stderr, "vmrun analyze: out of memory\n");
            an_free(&a);
            vmrun_tfree(&t);
            goto out;
        }
        one[done].path = paths[i];
        vmrun_rules_apply(&a.tr, &th, &one[done].adv);
        if (json) {
            if (dir && done > 0)
                fputc(',', stdout);
            an_json(stdout, paths[i], &a, &one[done].adv);
        } else {
            if (done > 0)
                fputc('\n', stdout);
            an_print(stdout, paths[i], &a, &one[done].adv);
        }
        done++;
        an_free(&a);
        vmrun_tfree(&t);
    }
    if (json && dir)
        fputs("]\n", stdout);
    if (done == 0) {
        if (dir)
            fprintf(stderr, "vmrun analyze: %s: no trace in it (*.json)\n", in);
        goto out;
    }
    if (hints != NULL && an_hints(hints, in, one, done) != 0) {
        fprintf(stderr, "vmrun analyze: cannot write %s\n", hints);
        goto out;
    }
    if (hints != NULL && !json)
        printf("wrote %s\n", hints);
    rc = 0;
out:
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(one);
    return rc;
}
