/*
 * vmrun_balance.c - the balancer's decision (issue 8, seed 000): from the
 * median time of every quantum in the last epoch, re-solve the placement by
 * recursive bisection of prefix sums along the Hilbert curve, and keep it
 * only when the predicted gain over the rest of the job exceeds the cost of
 * moving the quanta (the dampener).  Pure: no I/O, no PVM.
 */
#include "vmrun.h"

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

int
vmrun_balance_plan(const struct vmrun_balance_in *in, int32_t *owner, struct vmrun_epoch *out)
{
    int n = in->nquanta, p = in->nworkers;
    double *wtime = calloc((size_t)p, sizeof(double)), *wpts = calloc((size_t)p, sizeof(double));
    double *speed = calloc((size_t)p, sizeof(double)), *weight = calloc((size_t)n, sizeof(double));
    double *prefix = calloc((size_t)n + 1, sizeof(double)), *after = calloc((size_t)p, sizeof(double));
    int rc = -ENOMEM;

    memset(out, 0, sizeof(*out));
    if (!wtime || !wpts || !speed || !weight || !prefix || !after)
        goto done;
    for (int q = 0; q < n; q++) {
        int w = in->owner[q];

        wtime[w] += in->cost[q];
        wpts[w] += in->points[q];
    }
    /* A worker's speed now: the points it computed per second of compute
     * (an idle worker keeps its probed speed).  A quantum's weight is the
     * time it took times that speed: what it costs in points of the
     * uniform kernel, so a heavy quantum weighs more wherever it goes. */
    double sum = 0, max = 0;
    int busy = 0;

    for (int w = 0; w < p; w++) {
        speed[w] = wtime[w] > 0 ? wpts[w] / wtime[w] : in->fallback_speed[w];
        if (!(speed[w] > 0))
            speed[w] = 1;
        if (wpts[w] > 0) {
            sum += wtime[w];
            busy++;
            if (wtime[w] > max)
                max = wtime[w];
        }
    }
    out->be = max > 0 ? sum / busy / max : 1;
    out->before_s = max;
    for (int q = 0; q < n; q++)
        weight[q] = in->cost[q] * speed[in->owner[q]];
    for (int r = 0; r < n; r++)
        prefix[r + 1] = prefix[r] + weight[in->order[r]];
    bisect(in->order, prefix, 0, (size_t)n, 0, p, speed, owner);
    for (int q = 0; q < n; q++) {
        after[owner[q]] += weight[q] / speed[owner[q]];
        if (owner[q] != in->owner[q]) {
            out->moved++;
            out->bytes += in->bytes[q];
        }
    }
    for (int w = 0; w < p; w++)
        if (after[w] > out->after_s)
            out->after_s = after[w];
    /* The dampener: a relative gain worth having, and more time saved over
     * the iterations left than the moves cost on the network. */
    double gain = (out->before_s - out->after_s) * in->remaining;
    double cost = out->bytes * in->tau + out->moved * in->lambda;

    out->applied = out->moved > 0 && out->before_s > 0 &&
                   (out->before_s - out->after_s) / out->before_s > in->min_gain && gain > cost;
    if (!out->applied) {
        memcpy(owner, in->owner, (size_t)n * sizeof(int32_t));
        out->moved = 0;
        out->bytes = 0;
    }
    rc = 0;
done:
    free(wtime);
    free(wpts);
    free(speed);
    free(weight);
    free(prefix);
    free(after);
    return rc;
}
