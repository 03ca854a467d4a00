/*
 * liq_reclaim.c - reclaim, seed 002's coarse layer: a host whose owner takes
 * it back (its workers' CPU share stays low) is emptied and its workers
 * leave; it rejoins once idle again.  Pure: no I/O, no PVM; the caller
 * brings the shares and the clock.
 */
#include "liq.h"

#include <stdio.h>

int
liq_reclaim_check(double below, double rejoin_above, int reclaim, char *why, size_t len)
{
    if (!(below >= 0 && below <= 1 && rejoin_above >= 0 && rejoin_above <= 1)) {
        snprintf(why, len, "--reclaim-below and --rejoin-above are shares of one CPU, 0..1");
        return -1;
    }
    if (reclaim && rejoin_above <= below && !(rejoin_above == 0 && below == 0)) {
        snprintf(why, len,
                 "--rejoin-above (%g) must be above --reclaim-below (%g) (or both 0), "
                 "or a host would leave and come back in turn",
                 rejoin_above, below);
        return -1;
    }
    return 0;
}

int
liq_reclaim_step(struct liq_reclaim *r, int nhosts, const double *cap, const int *count,
                 double now, const struct liq_reclaim_opts *o, int *act)
{
    int nact = 0, staying = 0, best = -1;
    double best_share = -1;

    for (int h = 0; h < nhosts; h++) {
        double share;

        act[h] = 0;
        if (count[h] < 1)
            continue; /* no worker (lost): it neither stays nor computes */
        share = cap[h] < 0 ? -1 : cap[h] / count[h];
        if (share > 1)
            share = 1;
        if (share < 0) {
            staying += !r[h].evacuated;
            continue; /* unknown: nothing is decided, no clock starts or stops */
        }
        if (!r[h].evacuated) {
            if (share >= o->below) {
                r[h].below_since = -1;
            } else if (r[h].below_since < 0) {
                r[h].below_since = now;
            }
            if (share < o->below)
                r[h].benched = 1;
            else if (share >= o->rejoin_above)
                r[h].benched = 0;
            if (r[h].below_since >= 0 && now - r[h].below_since >= o->after)
                act[h] = LIQ_EVACUATE;
            else
                staying++;
            if (share > best_share) {
                best_share = share;
                best = h;
            }
        } else {
            if (share < o->rejoin_above) {
                r[h].above_since = -1;
            } else if (r[h].above_since < 0) {
                r[h].above_since = now;
            }
            if (r[h].above_since >= 0 && now - r[h].above_since >= o->rejoin_after) {
                act[h] = LIQ_REJOIN;
                staying++;
            }
        }
    }
    if (staying == 0 && best >= 0)
        act[best] = 0; /* somebody computes: the host with the most left */
    int computing = 0;

    for (int h = 0; h < nhosts; h++) {
        if (act[h] == LIQ_EVACUATE) {
            r[h].evacuated = 1;
            r[h].above_since = -1;
        } else if (act[h] == LIQ_REJOIN) {
            r[h].evacuated = 0;
            r[h].below_since = -1;
        }
        if (r[h].evacuated)
            r[h].benched = 0;
        computing += count[h] > 0 && !r[h].evacuated && !r[h].benched;
        nact += act[h] != 0;
    }
    if (computing == 0 && best >= 0)
        r[best].benched = 0;
    return nact;
}
