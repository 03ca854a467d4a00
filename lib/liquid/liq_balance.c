/*
 * liq_balance.c - the balancer's decision (issue 8, seed 000): from the
 * median time of every quantum in the last epoch, re-solve the placement by
 * recursive bisection of prefix sums along the Hilbert curve, and keep it
 * only when the predicted gain over the rest of the job exceeds the cost of
 * moving the quanta (the dampener).  Pure: no I/O, no PVM.
 */
#include "liq.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Give owners first..first+count-1 the quanta order[lo..hi) in that order,
 * cutting where the prefix of weights is nearest to the speed share of the
 * left half (a tie goes to the lower prefix), recursively.
 */
static void
bisect(const uint32_t *order, const double *prefix, size_t lo, size_t hi, int first, int count,
       const double *speed, int32_t *owner)
{
    if (count == 1) {
        for (size_t r = lo; r < hi; r++)
            owner[order[r]] = first;
        return;
    }
    int left = count / 2;
    double sl = 0, st = 0;

    for (int i = 0; i < count; i++) {
        st += speed[first + i];
        if (i < left)
            sl += speed[first + i];
    }
    double target = prefix[lo] + (prefix[hi] - prefix[lo]) * (st > 0 ? sl / st : 0.5);
    size_t cut = lo;

    for (size_t r = lo + 1; r <= hi; r++)
        if (fabs(prefix[r] - target) < fabs(prefix[cut] - target))
            cut = r;
    bisect(order, prefix, lo, cut, first, left, speed, owner);
    bisect(order, prefix, cut, hi, first + left, count - left, speed, owner);
}

/* The times of the segments [cut[i], cut[i+1]) at their speeds: their max,
 * and in *sq the sum of their squares. */
static double
seg_times(const double *prefix, const size_t *cut, int count, const double *speed, double *sq)
{
    double max = 0;

    *sq = 0;
    for (int i = 0; i < count; i++) {
        double t = (prefix[cut[i + 1]] - prefix[cut[i]]) / (speed[i] > 0 ? speed[i] : 1e-300);

        *sq += t * t;
        if (t > max)
            max = t;
    }
    return max;
}

/*
 * Polish the bisection: shift the cuts between neighbouring segments one
 * quantum at a time while that lowers the slowest segment's time, or
 * leaves it and lowers the sum of the squares (which walks across a
 * plateau: handing a quantum from the slowest to a neighbour that then
 * becomes as slow, so that the next shift can pass one on).  Recursive
 * bisection rounds at every level, and with few quanta per worker the
 * rounding adds up: under the liquid scenario's cut the bisection gave
 * 18/9/5 quanta to workers of 60/30/15 % (the slowest 9 % over) where
 * 19/9/4 was 5 % better by the same model.  A segment keeps at least one
 * quantum.  Segments are in worker order along the curve, as bisect
 * leaves them.
 */
static void
polish(const uint32_t *order, const double *prefix, size_t n, int count, const double *speed,
       int32_t *owner)
{
    size_t *cut = malloc(((size_t)count + 1) * sizeof(size_t));
    double sq, max;

    if (cut == NULL)
        return; /* the bisection's placement: correct, only coarser */
    cut[0] = 0;
    for (int i = 1, r = 0; i <= count; i++) {
        while ((size_t)r < n && owner[order[r]] < i)
            r++;
        cut[i] = (size_t)r;
    }
    cut[count] = n;
    max = seg_times(prefix, cut, count, speed, &sq);
    for (size_t step = 0; step < n * (size_t)count; step++) {
        int best_i = -1, best_d = 0;
        double best_max = max, best_sq = sq;

        for (int i = 1; i < count; i++)
            for (int d = -1; d <= 1; d += 2) {
                double m, q;

                /* The donor keeps one quantum at least. */
                if ((d < 0 && cut[i] - cut[i - 1] < 2) || (d > 0 && cut[i + 1] - cut[i] < 2))
                    continue;
                cut[i] = (size_t)((long)cut[i] + d);
                m = seg_times(prefix, cut, count, speed, &q);
                cut[i] = (size_t)((long)cut[i] - d);
                if (m < best_max * (1 - 1e-9) || (m <= best_max * (1 + 1e-9) && q < best_sq * (1 - 1e-9))) {
                    best_i = i;
                    best_d = d;
                    best_max = m;
                    best_sq = q;
                }
            }
        if (best_i < 0)
            break;
        cut[best_i] = (size_t)((long)cut[best_i] + best_d);
        max = best_max;
        sq = best_sq;
    }
    for (int i = 0; i < count; i++)
        for (size_t r = cut[i]; r < cut[i + 1]; r++)
            owner[order[r]] = i;
    free(cut);
}

/*
 * A worker's CPU share: its host's, never 0, so every worker has a speed.
 * It used to be less the share the worker spent outside its kernels
 * (messages grow with a worker's boundary, not its volume).  But that
 * overhead differs between workers with their neighbours and their timing,
 * and a cut does not carry it along as the model assumed: 8 workers of a
 * uniform job time-sliced on 2 CPUs read 20-30 % apart, and the balancer
 * moved quanta in 7 of 18 runs (0 of 10 without it); in the liquid
 * scenario it made no difference to the time (1.55-1.73x ideal either
 * way) and starved the small hosts, whose wall-clock BE fell to a median
 * of 0.65-0.77 (0.80-0.86 without it).
 */
double
liq_balance_share(double s)
{
    if (!(s >= 0))
        return 1;
    return s < 0.01 ? 0.01 : s;
}

static double
share_of(const struct liq_balance_in *in, int w)
{
    return liq_balance_share(in->share != NULL ? in->share[w] : -1);
}

/*
 * The order of the active workers act[0..nact) along the curve: those that
 * hold quanta where their quanta lie (by the mean rank of them), so that a
 * re-solve shifts cuts instead of handing every segment to another worker;
 * each one without quanta (back from reclaim, or new) where it makes the
 * fewest bytes move -- a worker back at the curve's start would otherwise
 * push every other worker's segment along, and the dampener, rightly,
 * refuses a move of half the grid.  aspeed follows act.
 */
static void
order_workers(const struct liq_balance_in *in, const double *prefix, const double *speed,
              int *act, double *aspeed, int nact, int32_t *aowner)
{
    int n = in->nquanta, held = 0;
    double *pos = calloc((size_t)in->nworkers, sizeof(double));
    int *cnt = calloc((size_t)in->nworkers, sizeof(int)), *all = malloc((size_t)nact * sizeof(int));
    int *orig = malloc((size_t)nact * sizeof(int));

    if (pos == NULL || cnt == NULL || all == NULL || orig == NULL)
        goto out; /* the index order: correct, only dearer */
    memcpy(orig, act, (size_t)nact * sizeof(int));
    for (int r = 0; r < n; r++) {
        int w = in->owner[in->order[r]];

        pos[w] += r;
        cnt[w]++;
    }
    /* Holders first, by position (insertion sort: a few workers). */
    for (int i = 0; i < nact; i++) {
        int w = orig[i], j;

        if (cnt[w] == 0)
            continue;
        pos[w] /= cnt[w];
        for (j = held; j > 0 && pos[all[j - 1]] > pos[w]; j--)
            all[j] = all[j - 1];
        all[j] = w;
        held++;
    }
    /* Then each newcomer at its cheapest place among those placed. */
    for (int i = 0; i < nact; i++) {
        int w = orig[i], best = held;
        double best_bytes = -1;

        if (cnt[w] > 0)
            continue;
        for (int at = 0; at <= held; at++) {
            double moved = 0;
            int k = 0;

            for (int j = 0; j <= held; j++) {
                int x = j == at ? w : all[j - (j > at)];

                act[k] = x;
                aspeed[k++] = speed[x];
            }
            bisect(in->order, prefix, 0, (size_t)n, 0, held + 1, aspeed, aowner);
            for (int q = 0; q < n; q++)
                if (act[aowner[q]] != in->owner[q])
                    moved += in->bytes[q];
            if (best_bytes < 0 || moved < best_bytes) {
                best_bytes = moved;
                best = at;
            }
        }
        for (int j = held; j > best; j--)
            all[j] = all[j - 1];
        all[best] = w;
        held++;
    }
    for (int i = 0; i < nact; i++) {
        act[i] = all[i];
        aspeed[i] = speed[all[i]];
    }
out:
    free(pos);
    free(cnt);
    free(all);
    free(orig);
}

/* The plan's working arrays: per worker (p) and per quantum (n). */
struct plan_scratch {
    double *wmed, *wpts, *speed, *after, *aspeed, *intr, *xbytes, *xmsgs;   /* p */
    int *act;                                                               /* p */
    double *weight, *prefix;                                                /* n, n + 1 */
    int32_t *aowner;                                                        /* n */
    int nact;
};

static void
scratch_free(struct plan_scratch *s)
{
    double *d[] = { s->wmed, s->wpts, s->speed, s->after, s->aspeed, s->intr, s->xbytes,
                    s->xmsgs, s->weight, s->prefix };

    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        free(d[i]);
    free(s->act);
    free(s->aowner);
}

static int
scratch_alloc(struct plan_scratch *s, int n, int p)
{
    double **pw[] = { &s->wmed, &s->wpts, &s->speed, &s->after, &s->aspeed, &s->intr,
                      &s->xbytes, &s->xmsgs };
    int bad = 0;

    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < sizeof(pw) / sizeof(pw[0]); i++)
        bad |= (*pw[i] = calloc((size_t)p, sizeof(double))) == NULL;
    bad |= (s->act = calloc((size_t)p, sizeof(int))) == NULL;
    bad |= (s->weight = calloc((size_t)n, sizeof(double))) == NULL;
    bad |= (s->prefix = calloc((size_t)n + 1, sizeof(double))) == NULL;
    bad |= (s->aowner = calloc((size_t)n, sizeof(int32_t))) == NULL;
    if (bad) {
        scratch_free(s);
        return -ENOMEM;
    }
    return 0;
}

/*
 * The epoch as it ran: each worker's speed now, the workers that may hold
 * quanta, and the balance efficiency of the wall clock and of the model.
 *
 * The model: a worker's CPU computes cpu_speed points of the uniform kernel
 * per CPU-second (the probe's, the same box on every worker) at the share
 * of a CPU its host gives it now.  A quantum weighs its median CPU time at
 * its worker's CPU speed: what it costs in points of the uniform kernel, so
 * a heavy quantum weighs more wherever it goes and whatever else its worker
 * holds.  CPU times and sensed shares are steady where wall-clock times are
 * not: a worker preempted on a busy machine does not look like a slow one.
 */
static void
plan_measure(const struct liq_balance_in *in, const int32_t *ran, struct plan_scratch *s,
             struct liq_epoch *out)
{
    double sum = 0, max = 0, msum = 0, mmax = 0;
    int busy = 0;

    for (int q = 0; q < in->nquanta; q++) {
        s->wmed[ran[q]] += in->cost[q];
        s->wpts[ran[q]] += in->points[q];
    }
    for (int w = 0; w < in->nworkers; w++) {
        s->intr[w] = in->cpu_speed[w] > 0 ? in->cpu_speed[w] : 1;
        s->speed[w] = s->intr[w] * share_of(in, w);
        if (s->wpts[w] > 0) {
            double model = s->wmed[w] / share_of(in, w);
            double t = in->wtime != NULL ? in->wtime[w] : model;

            sum += t;
            msum += model;
            busy++;
            if (t > max)
                max = t;
            if (model > mmax)
                mmax = model;
        }
        if (in->active == NULL || in->active[w]) {
            s->act[s->nact] = w;
            s->aspeed[s->nact++] = s->speed[w];
        }
    }
    out->be = max > 0 ? sum / busy / max : 1;
    out->be_cpu = mmax > 0 ? msum / busy / mmax : 1;
}

/* The largest of a per-worker time. */
static double
slowest(const double *t, int p)
{
    double max = 0;

    for (int w = 0; w < p; w++)
        if (t[w] > max)
            max = t[w];
    return max;
}

/* Each quantum's weight (its CPU time at the CPU it ran on), their prefix
 * sums along the curve, and the model's time of the placement held next:
 * the one to beat. */
static void
plan_weigh(const struct liq_balance_in *in, const int32_t *ran, struct plan_scratch *s,
           struct liq_epoch *out)
{
    int n = in->nquanta;

    for (int q = 0; q < n; q++)
        s->weight[q] = in->cost[q] * s->intr[ran[q]];
    for (int q = 0; q < n; q++)
        s->after[in->owner[q]] += s->weight[q] / s->speed[in->owner[q]];
    out->before_s = slowest(s->after, in->nworkers);
    memset(s->after, 0, (size_t)in->nworkers * sizeof(double));
    for (int r = 0; r < n; r++)
        s->prefix[r + 1] = s->prefix[r] + s->weight[in->order[r]];
}

/* Cut the curve among the active workers and count what would move and
 * what each worker would send and receive. */
static void
plan_place(const struct liq_balance_in *in, struct plan_scratch *s, int32_t *owner,
           struct liq_epoch *out)
{
    int n = in->nquanta;

    order_workers(in, s->prefix, s->speed, s->act, s->aspeed, s->nact, s->aowner);
    bisect(in->order, s->prefix, 0, (size_t)n, 0, s->nact, s->aspeed, s->aowner);
    polish(in->order, s->prefix, (size_t)n, s->nact, s->aspeed, s->aowner);
    for (int q = 0; q < n; q++) {
        int from = in->owner[q];

        owner[q] = s->act[s->aowner[q]];
        if (in->active != NULL && !in->active[from])
            out->forced = 1;
        s->after[owner[q]] += s->weight[q] / s->speed[owner[q]];
        if (owner[q] != from) {
            out->moved++;
            out->bytes += in->bytes[q];
            /* Workers send and receive at once: each pays for its own. */
            s->xbytes[owner[q]] += in->bytes[q];
            s->xbytes[from] += in->bytes[q];
            s->xmsgs[owner[q]]++;
            s->xmsgs[from]++;
        }
    }
    out->after_s = slowest(s->after, in->nworkers);
}

/*
 * The dampener: a relative gain worth having, and more time saved over the
 * iterations left than the moves cost on the network (the busiest worker's
 * sends and receipts) -- unless quanta must leave a worker that is going.
 * A gain under twice min_gain must be seen in two epochs in a row: quanta's
 * CPU times wander between epochs on a time-sliced machine, and a single
 * epoch's reading would now and then move quanta of a placement that is
 * already right.
 */
static void
plan_dampen(const struct liq_balance_in *in, const struct plan_scratch *s, int32_t *owner,
            struct liq_epoch *out)
{
    double gain = (out->before_s - out->after_s) * in->remaining, cost = 0;
    double rel = out->before_s > 0 ? (out->before_s - out->after_s) / out->before_s : 0;

    for (int w = 0; w < in->nworkers; w++)
        if (s->xbytes[w] * in->tau + s->xmsgs[w] * in->lambda > cost)
            cost = s->xbytes[w] * in->tau + s->xmsgs[w] * in->lambda;
    out->wanted = out->moved > 0 && rel > in->min_gain && gain > cost;
    out->applied = out->forced || (out->wanted && (rel > 2 * in->min_gain || in->wanted));
    if (!out->applied) {
        memcpy(owner, in->owner, (size_t)in->nquanta * sizeof(int32_t));
        out->moved = 0;
        out->bytes = 0;
    }
}

int
liq_balance_plan(const struct liq_balance_in *in, int32_t *owner, struct liq_epoch *out)
{
    struct plan_scratch s;
    /* The epoch's figures are of the placement it ran (measured); the
     * plan starts from the one the workers hold next (owner). */
    const int32_t *ran = in->measured != NULL ? in->measured : in->owner;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = scratch_alloc(&s, in->nquanta, in->nworkers)) != 0)
        return rc;
    plan_measure(in, ran, &s, out);
    plan_weigh(in, ran, &s, out);
    if (s.nact == 0) {
        rc = -EINVAL;
    } else {
        plan_place(in, &s, owner, out);
        plan_dampen(in, &s, owner, out);
    }
    scratch_free(&s);
    return rc;
}
