/*
 * vmrun_rules.c - Paradise's decision procedure for stencil jobs (issue
 * 27; seed 003 §7-9): the characteristics a trace shows -- grain and its
 * dispersion, load over time, the weight of communication, the shape of
 * the communication graph -- choose the liquid runtime's settings for the
 * next run.  Seed 003 picks a balancing scheme; here the schemes are the
 * runtime's knobs: balancing on or off (its epochs cost reports and waits
 * for plans), the epoch (how fast it follows change), the dampener
 * (min-gain: noise or real imbalance) and the halo (fewer exchanges where
 * latency dominates).  Thresholds are vmrun_rules_defaults'.
 */
#include "vmrun_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
vmrun_rules_defaults(struct vmrun_thresholds *th)
{
    th->uniform_cv = 0.10;
    th->irregular_cv = 0.25;
    th->heavy_ratio = 1.5;
    th->be_good = 0.90;
    th->comm_ratio = 0.15;
    th->late_messages = 0.5;
    th->small_grain = 10;
    th->drift = 0.25;
    th->burst = 0.25;
    th->all_to_all = 0.9;
    th->window_s = 0.25;
}

const char *
vmrun_shape_name(enum vmrun_shape s)
{
    static const char *const name[] = { "none", "neighbour", "tree", "all-to-all" };

    return name[s];
}

const char *
vmrun_load_name(enum vmrun_load l)
{
    static const char *const name[] = { "steady", "drifting", "bursty" };

    return name[l];
}

enum vmrun_shape
vmrun_shape_of(int n, const double *msgs, const struct vmrun_thresholds *th)
{
    int pairs = 0, hub = -1;

    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            pairs += msgs[a * n + b] + msgs[b * n + a] > 0;
    if (pairs == 0)
        return VR_SHAPE_NONE;
    /* A tree (seed 003: creator and child only) here is a star: one task
     * in every pair that talks, as many pairs as other tasks. */
    for (int c = 0; c < n && hub < 0; c++) {
        int with = 0;

        for (int o = 0; o < n; o++)
            with += o != c && msgs[c * n + o] + msgs[o * n + c] > 0;
        if (with == pairs && n >= 3 && pairs == n - 1)
            hub = c;
    }
    if (hub >= 0 && n >= 4)
        return VR_SHAPE_TREE;
    if (n >= 4 && pairs >= th->all_to_all * n * (n - 1) / 2)
        return VR_SHAPE_ALL_TO_ALL;
    return VR_SHAPE_NEIGHBOUR;
}

enum vmrun_load
vmrun_load_class(const double *v, int n, const struct vmrun_thresholds *th, double *drift,
                 double *burst)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0, slope, res = 0;

    *drift = *burst = 0;
    if (n < 3)
        return VR_LOAD_STEADY;
    for (int i = 0; i < n; i++) {
        mx += i;
        my += v[i];
    }
    mx /= n;
    my /= n;
    if (!(my > 0))
        return VR_LOAD_STEADY;
    for (int i = 0; i < n; i++) {
        sxx += (i - mx) * (i - mx);
        sxy += (i - mx) * (v[i] - my);
    }
    slope = sxy / sxx;
    for (int i = 0; i < n; i++) {
        double r = v[i] - (my + slope * (i - mx));

        res += r * r;
    }
    *drift = fabs(slope * (n - 1)) / my;
    *burst = sqrt(res / (n - 1)) / my;
    if (*drift >= th->drift && *drift >= *burst)
        return VR_LOAD_DRIFTING;
    if (*burst >= th->burst)
        return VR_LOAD_BURSTY;
    return VR_LOAD_STEADY;
}

static struct vmrun_rule *
rule(struct vmrun_advice *out, const char *name, int fired, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static struct vmrun_rule *
rule(struct vmrun_advice *out, const char *name, int fired, const char *fmt, ...)
{
    struct vmrun_rule *r = &out->rule[out->nrules++];
    va_list ap;

    r->name = name;
    r->fired = fired;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    return r;
}

/* A hint, unless an earlier rule set the key. */
static void hint(struct vmrun_advice *out, const char *key, const char *why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
hint(struct vmrun_advice *out, const char *key, const char *why, const char *fmt, ...)
{
    struct vmrun_hint *h;
    va_list ap;

    for (int i = 0; i < out->nhints; i++)
        if (strcmp(out->hint[i].key, key) == 0)
            return;
    if (out->nhints == VR_MAX)
        return;
    h = &out->hint[out->nhints++];
    h->key = key;
    va_start(ap, fmt);
    vsnprintf(h->value, sizeof(h->value), fmt, ap);
    va_end(ap);
    snprintf(h->why, sizeof(h->why), "%s", why);
}

void
vmrun_rules_apply(const struct vmrun_traits *t, const struct vmrun_thresholds *th,
                  struct vmrun_advice *out)
{
    struct vmrun_rule *r;
    int irregular = t->grain_cv > th->irregular_cv || t->heavy_ratio > th->heavy_ratio;
    int uniform = t->grain_cv <= th->uniform_cv && t->heavy_ratio <= 1 + th->uniform_cv;
    int small = t->latency_s > 0 && t->block_s < th->small_grain * t->latency_s;

    memset(out, 0, sizeof(*out));
    /* R1, seed 003 §9.2: grain sizes that vary are irregular work, which
     * a balancer must follow; the imbalance is real, not noise, so a
     * smaller predicted gain is worth a move. */
    r = rule(out, "irregular-grain", irregular,
             "grain CV %.2f (irregular above %.2f), heavy regions' grain %.2fx the light ones' "
             "(above %.2f)", t->grain_cv, th->irregular_cv, t->heavy_ratio, th->heavy_ratio);
    if (r->fired) {
        hint(out, "balance", r->why, "true");
        if (t->load == VR_LOAD_STEADY && t->min_gain > 0.1)
            hint(out, "min_gain", r->why, "0.1");
    }
    /* R2: a load that changes while the job runs (a host's owner comes
     * back, seed 002) wants a balancer that looks more often; bursts it
     * should not chase. */
    r = rule(out, "load-changes", t->load != VR_LOAD_STEADY,
             "load over %d windows is %s: speed drifts %.0f%% over the run (drifting from "
             "%.0f%%), varies %.0f%% around its trend (bursty from %.0f%%)",
             t->epochs, vmrun_load_name(t->load), 100 * t->drift, 100 * th->drift,
             100 * t->burst, 100 * th->burst);
    if (r->fired) {
        hint(out, "balance", r->why, "true");
        if (t->load == VR_LOAD_DRIFTING && t->epoch > 4)
            hint(out, "epoch", r->why, "%d", t->epoch / 2 > 4 ? t->epoch / 2 : 4);
        if (t->load == VR_LOAD_BURSTY && t->min_gain < 0.3)
            hint(out, "min_gain", r->why, "0.3");
    }
    /* R3: imbalance without a balancer. */
    r = rule(out, "imbalanced", !t->balance && t->be_min < th->be_good,
             "balancing %s, balance efficiency %.2f at worst (balanced from %.2f)",
             t->balance ? "on" : "off", t->be_min, th->be_good);
    if (r->fired)
        hint(out, "balance", r->why, "true");
    /* R4, seed 003 rule R1's uniform case: uniform, steady, balanced work
     * gains nothing from a balancer, whose epochs cost reports and waits
     * for plans. */
    r = rule(out, "uniform-steady",
             t->balance && uniform && t->load == VR_LOAD_STEADY && t->be_min >= th->be_good &&
                 t->moved == 0,
             "grain CV %.2f (uniform up to %.2f), load %s, balance efficiency %.2f at worst, "
             "%d quanta moved, waits for plans %.1f%% of compute",
             t->grain_cv, th->uniform_cv, vmrun_load_name(t->load), t->be_min, t->moved,
             100 * t->plan_wait_share);
    if (r->fired)
        hint(out, "balance", r->why, "false");
    /* R5, seed 003's small-grain flag: a block's compute comparable to a
     * message's latency -- fewer, deeper exchanges.  Only when the waits are
     * the messages' own: if most ghosts are there when asked for (the median
     * wait well under a latency) and the waiting is a few long waits, it is
     * for neighbours that compute later (imbalance, a preempted worker),
     * which a deeper halo does not cure but pays for in redundant points.
     * Nor when the runtime chose the halo (--halo auto): it weighed the
     * exchanges against the redundant points with the ring's lambda, a
     * message's fixed cost, while a trace's send-to-receipt time is mostly
     * the ghosts' bytes, which a deeper halo does not save (bench/paradise.sh:
     * doubling an automatic halo of 5 cost 22-34 % in all three scenarios). */
    int late = t->ghost_wait_s >= th->late_messages * t->latency_s;

    r = rule(out, "latency-bound",
             t->comm_ratio > th->comm_ratio && small && late && !t->halo_auto && t->halo < 16,
             "waiting is %.0f%% of computing (significant above %.0f%%), a block computes "
             "%.3g ms against %.3g ms per message (small under %.0fx), a wait for ghosts "
             "%.3g ms at the median (the messages' own from %.2f latencies), halo %d %s",
             100 * t->comm_ratio, 100 * th->comm_ratio, 1e3 * t->block_s, 1e3 * t->latency_s,
             th->small_grain, 1e3 * t->ghost_wait_s, th->late_messages, t->halo,
             t->halo_auto ? "chosen by the runtime" : "given");
    if (r->fired)
        hint(out, "halo", r->why, "%d", t->halo * 2 < 16 ? t->halo * 2 : 16);
    /* R5b, its converse: the runtime went deeper than its redundant
     * points allow (LIQ_HALO_SLACK) because the ring's lambda priced each
     * exchange high, yet the ghosts were there when asked for: the
     * exchanges' latency was hidden behind the inner boxes, and the deeper
     * halo only swept more points.  Under CPU quotas the ring's lambda
     * wanders (1 to 5 ms and more, bench/paradise.sh); runs at the deeper
     * halo took 12-60 % longer there. */
    r = rule(out, "latency-hidden",
             t->halo_auto && t->halo_slack > 0 && t->halo > t->halo_slack && !late,
             "halo %d %s, %s the %d its redundant points allow; a wait for ghosts %.3g ms at "
             "the median against %.3g ms per message (late from %.2f latencies)",
             t->halo, t->halo_auto ? "chosen by the runtime" : "given",
             t->halo > t->halo_slack ? "past" : "within", t->halo_slack,
             1e3 * t->ghost_wait_s, 1e3 * t->latency_s, th->late_messages);
    if (r->fired)
        hint(out, "halo", r->why, "%d", t->halo_slack);
    /* R6, seed 003 §7: the communication graph's shape.  A stencil's is
     * its neighbours'; another says the placement keeps no locality. */
    r = rule(out, "no-locality", t->shape == VR_SHAPE_ALL_TO_ALL,
             "the communication graph is %s", vmrun_shape_name(t->shape));
    if (r->fired)
        hint(out, "decomp", r->why, "\"auto\"");
}
