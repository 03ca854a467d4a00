/*
 * test_liq_balance.c - the balancer's model: prefix bisection along the
 * Hilbert order by measured costs and sensed shares, the dampener, workers
 * that leave; and reclaim's thresholds and times.
 *
 * liq_balance.c is included, so its bisection and polish are tested alone
 * as well as through liq_balance_plan (which may hide a fault of either).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decomp.h"
#include "liq.h"
#include "liq_master.h"

#include "../../lib/liquid/liq_balance.c"

#define NQ 8

static uint32_t order[NQ] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static double points[NQ] = { 100, 100, 100, 100, 100, 100, 100, 100 };
static double bytes[NQ] = { 800, 800, 800, 800, 800, 800, 800, 800 };
static double cpu[2] = { 1000, 1000 };

/* What every test sets alike, for n quanta on nworkers workers. */
static void
setup_many(struct liq_balance_in *in, int n, int nworkers, const uint32_t *ord,
           const double *cost, const double *pts, const double *byt, const int32_t *owner,
           const double *speed)
{
    memset(in, 0, sizeof(*in));
    in->nquanta = n;
    in->nworkers = nworkers;
    in->order = ord;
    in->cost = cost;
    in->points = pts;
    in->bytes = byt;
    in->owner = owner;
    in->cpu_speed = speed;
    in->lambda = 1e-4;
    in->tau = 1e-9;
    in->remaining = 1000;
    in->min_gain = 0.05;
}

static void
setup_in(struct liq_balance_in *in, const double *cost, const int32_t *owner)
{
    setup_many(in, NQ, 2, order, cost, points, bytes, owner, cpu);
}

/* Worker 1's CPU runs at a third of worker 0's (the probes say so, and its
 * quanta take three times the CPU time): its quanta go to worker 0 until
 * the predicted times meet, along the curve. */
static void
test_slow_worker_loses_quanta(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3 };
    double slow[2] = { 1000, 1000.0 / 3 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.cpu_speed = slow;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(ep.moved, 2);
    assert_true(ep.bytes == 1600);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], q < 6 ? 0 : 1);
    assert_true(ep.be > 0.66 && ep.be < 0.67);     /* mean 0.8 / max 1.2 */
    assert_true(ep.before_s > 1.19 && ep.before_s < 1.21 && ep.after_s < 0.61);
}

/*
 * auto halo: the slack's choice on a fast network; deeper where the
 * latency per exchange outweighs the extra points (192^3, 32 quanta on 4
 * workers along the curve, the liquid scenario's probed speeds); never
 * deeper than the epoch, nor past the slack's choice with nothing known.
 */
static void
test_halo_deepens_with_latency(void **state)
{
    struct liq_opts o;
    struct liq_geom g;
    struct decomp_grid grid;
    int n[3] = { 192, 192, 192 }, owner[32], fast, slow, none, given;
    uint32_t curve[32];
    double speed = 1.66e9;

    (void)state;
    liq_opts_defaults(&o);
    o.iters = 1200;
    assert_int_equal(liq_geom_make(&g, n, 32), 0);
    memset(&grid, 0, sizeof(grid));
    grid.ndim = 3;
    for (int a = 0; a < 3; a++)
        grid.dim[a] = (uint32_t)g.q[a];
    assert_int_equal(decomp_hilbert_order(&grid, curve), 0);
    for (int r = 0; r < 32; r++)
        owner[curve[r]] = r / 8;
    /* Regions kept apart (a Neumann face): deeper halos cost more. */
    g.apart = 1;
    none = liq_opts_halo(&o, &g, owner, 0, 0);
    fast = liq_opts_halo(&o, &g, owner, 1e-4, speed);
    slow = liq_opts_halo(&o, &g, owner, 10e-3, speed);
    /* With the trapezoid 5 sweeps compute 10.7 % more points, 6 13.5 %, 7
     * 16.3 % (past the slack), 10 25.0 %.  6 is the slack's; the epoch of
     * 10 is then cut into two blocks, of 5, and 10 pays from 6.1 ms a
     * message. */
    assert_int_equal(liq_halo_auto(&g, o.kernel, o.epoch, owner, o.heavy), 6);
    assert_int_equal(none, 5);
    assert_int_equal(fast, none);
    assert_int_equal(slow, 10);
    assert_int_equal(liq_opts_halo(&o, &g, owner, 5e-3, speed), 5);
    /* An epoch of 11 with the slack's 6: two blocks, of 6 and 5, and the
     * halo must cover the longer. */
    o.epoch = 11;
    assert_int_equal(liq_opts_halo(&o, &g, owner, 0, 0), 6);
    o.epoch = 10;
    o.halo = 2;
    given = liq_opts_halo(&o, &g, owner, 3.5e-3, speed);
    assert_int_equal(given, 2);
    /* Each worker's quanta in as few boxes as they make: 10 sweeps compute
     * 9.7 % more points, within the slack, so the epoch is one block
     * whatever the latency. */
    g.apart = 0;
    o.halo = 0;
    assert_true(fabs(liq_halo_work(&g, o.kernel, 10, owner, o.heavy) - 1.0968) < 1e-3);
    assert_int_equal(liq_halo_auto(&g, o.kernel, o.epoch, owner, o.heavy), 10);
    assert_int_equal(liq_opts_halo(&o, &g, owner, 0, 0), 10);
    assert_int_equal(liq_opts_halo(&o, &g, owner, 1e-4, speed), 10);
}

/* The same CPU times on equal CPUs are heavy quanta, not a slow worker: the
 * heavy half is cut so that each worker gets the same weight. */
static void
test_heavy_quanta_are_not_a_slow_worker(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    /* weights 100 x 4, 300 x 4: the cut at 800 falls between 700 and 1000 */
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], q < 5 ? 0 : 1);
    /* Worker 0 now holds a heavy quantum, worker 1 three: the same cut. */
    int32_t owner2[NQ] = { 0, 0, 0, 0, 0, 1, 1, 1 };
    double cost2[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3 };

    setup_in(&in, cost2, owner2);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
    assert_memory_equal(next, owner2, sizeof(owner2));
}

/* Balanced already: nothing moves. */
static void
test_balanced_stays(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
    assert_int_equal(ep.moved, 0);
    assert_memory_equal(next, owner, sizeof(owner));
    assert_true(ep.be == 1.0);
}

/* The dampener: the same imbalance near the end of the job, with a slow
 * network, is not worth the move. */
static void
test_move_costs_more_than_it_saves(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.remaining = 1;
    in.tau = 1e-3; /* 1.6 s to move 1600 bytes; saves 0.6 s once */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
    assert_memory_equal(next, owner, sizeof(owner));
    in.tau = 1e-9;
    in.min_gain = 0.6; /* the gain is 0.5 of the time */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
}

/* A heavy quantum weighs what it costs, wherever it goes: one quantum that
 * takes as long as the seven others together gets a worker to itself. */
static void
test_heavy_quantum_alone(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.7, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(next[0], 0);
    for (int q = 1; q < NQ; q++)
        assert_int_equal(next[q], 1);
}

/* Equal CPU costs, but worker 1's host gives it a third of a CPU (a cgroup
 * quota, its owner's processes): it keeps a quarter of the work. */
static void
test_sensed_share_slows_a_worker(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    double share[2] = { 1.0, 1.0 / 3 }, wtime[2] = { 0.4, 1.2 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.share = share;
    in.wtime = wtime;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied && !ep.forced);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], q < 6 ? 0 : 1);
    assert_true(ep.be > 0.66 && ep.be < 0.67);     /* measured: mean 0.8 / max 1.2 */
    assert_true(ep.before_s > 1.19 && ep.before_s < 1.21 && ep.after_s < 0.61);
    assert_true(ep.be_cpu > 0.66 && ep.be_cpu < 0.67); /* CPU 0.4 at 1, 0.4 at 1/3 */
    /* The same shares with no measured times: the model's BE. */
    in.wtime = NULL;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.be > 0.66 && ep.be < 0.67);
    /* Wall clocks that say balanced (a throttled worker's bursts ran at
     * full speed) do not make the CPU times at the shares balanced. */
    wtime[1] = 0.4;
    in.wtime = wtime;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.be > 0.99 && ep.be_cpu > 0.66 && ep.be_cpu < 0.67);
    /* Work in proportion to the shares: balanced by CPU. */
    for (int q = 4; q < NQ; q++)
        cost[q] = 0.1 / 3;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.be_cpu > 0.99);
}

/* The model's share: unknown (-1, no figures yet) is a whole CPU; a host
 * whose owner takes every CPU (0) computes at the floor of 0.01, and a
 * worker there gives its quanta to one with CPU to spare. */
static void
test_share_unknown_and_none(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    double share[2] = { 1.0, 0.0 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    assert_true(liq_balance_share(-1) == 1 && liq_balance_share(0) == 0.01);
    assert_true(liq_balance_share(0.004) == 0.01 && liq_balance_share(0.5) == 0.5);
    setup_in(&in, cost, owner);
    in.share = share;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], 0);
    share[1] = -1;      /* unknown: both whole CPUs, nothing to move */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(!ep.applied);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], q < 4 ? 0 : 1);
}

/* The liquid scenario's cut: 32 equal quanta on workers of 60, 30 and 15 %.
 * Bisection rounds twice (18 | 14, then 9 | 5: the last worker 11 % over
 * its share); the polish passes a quantum from it to the middle one and
 * one from there to the first: 19/9/4, the slowest 5 % faster by the same
 * model. */
static void
test_polish_rounds_the_cuts_better(void **state)
{
    enum { N = 32 };
    uint32_t ord[N];
    int32_t owner[N], next[N];
    double cost[N], pts[N], byt[N], speed[3] = { 1000, 1000, 1000 };
    double share[3] = { 0.6, 0.3, 0.15 };
    int count[3] = { 0, 0, 0 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    for (int q = 0; q < N; q++) {
        ord[q] = (uint32_t)q;
        owner[q] = q < 11 ? 0 : q < 22 ? 1 : 2; /* as far from right as can be */
        cost[q] = 0.001;
        pts[q] = 100;
        byt[q] = 800;
    }
    setup_many(&in, N, 3, ord, cost, pts, byt, owner, speed);
    in.share = share;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    for (int q = 0; q < N; q++) {
        count[next[q]]++;
        if (q > 0)
            assert_true(next[q] >= next[q - 1]); /* still segments of the curve */
    }
    assert_int_equal(count[0], 19);
    assert_int_equal(count[1], 9);
    assert_int_equal(count[2], 4);
    /* The model's slowest: 19 quanta at 0.6 of a CPU, 31.7 ms. */
    assert_true(ep.after_s > 0.0316 && ep.after_s < 0.0317);
}

/* The plan made after the epoch before moved quanta the workers hold only
 * from the end of this one: the epoch's BE is of the placement it ran, the
 * plan starts from the one held next. */
static void
test_measured_placement_is_not_the_next(void **state)
{
    int32_t ran[NQ] = { 0, 0, 0, 0, 0, 0, 1, 1 }, held[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, held);
    in.measured = ran;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.be_cpu > 0.66 && ep.be_cpu < 0.67); /* 0.6 and 0.2 s ran */
    assert_true(ep.be > 0.66 && ep.be < 0.67);
    assert_true(ep.before_s > 0.399 && ep.before_s < 0.401); /* 0.4 and 0.4 held */
    assert_false(ep.applied);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], held[q]);
}

/* A modest gain (between min_gain and twice it) moves quanta only when the
 * epoch before wanted a move too; a large one at once. */
static void
test_modest_gain_must_be_seen_twice(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 0, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.min_gain = 0.15; /* 0.5 s -> 0.4 s is a gain of 0.2 */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.wanted && !ep.applied);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], owner[q]);
    in.wanted = 1;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.wanted && ep.applied && ep.moved == 1);
    in.wanted = 0;
    in.min_gain = 0.05; /* over twice min_gain: at once */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied && ep.moved == 1);
    in.min_gain = 0.25; /* under min_gain: never */
    in.wanted = 1;
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(!ep.wanted && !ep.applied);
}

/* A worker that is going holds nothing in the plan, whatever the dampener
 * says; with nothing else to go by, the remaining worker takes all. */
static void
test_inactive_worker_is_emptied(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    char active[2] = { 1, 0 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.active = active;
    in.remaining = 0; /* no gain could pay for a move */
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied && ep.forced);
    assert_int_equal(ep.moved, 4);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], 0);
    /* A new worker (nothing measured, nothing held) gets quanta by its
     * CPU's speed: here equal, so half. */
    int32_t all0[NQ] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    double cost0[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };

    setup_in(&in, cost0, all0);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(ep.moved, 4);
    /* No worker may hold quanta: an error, not a placement. */
    active[0] = 0;
    setup_in(&in, cost, owner);
    in.active = active;
    assert_int_equal(liq_balance_plan(&in, next, &ep), -EINVAL);
}

/* A worker back from reclaim (slot 0, holding nothing) takes its segment
 * where the fewest bytes move.  Workers 1-3 hold 6, 5, 5 quanta along the
 * curve; 4 each is the balance.  In the slots' order worker 0 would take
 * the curve's start and every holder would pass quanta on to the next: 9
 * moves.  Between workers 1 and 2 it takes quanta 4-7 and worker 2 takes
 * 11 from worker 3: 5 moves, the fewest (at the end: 9 again). */
static void
test_returning_worker_moves_least(void **state)
{
    enum { N = 16 };
    uint32_t ord[N];
    int32_t owner[N], next[N];
    double cost[N], pts[N], by[N], speed[4] = { 1000, 1000, 1000, 1000 };
    const int seg[4] = { 1, 0, 2, 3 };
    struct liq_balance_in in;
    struct liq_epoch ep;

    (void)state;
    for (int q = 0; q < N; q++) {
        ord[q] = (uint32_t)q;
        owner[q] = 1 + q * 3 / N; /* 6, 5, 5 quanta on workers 1, 2, 3 */
        cost[q] = 0.1;
        pts[q] = 100;
        by[q] = 800;
    }
    setup_many(&in, N, 4, ord, cost, pts, by, owner, speed);
    assert_int_equal(liq_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(ep.moved, 5);
    assert_true(ep.bytes == 5 * 800);
    for (int q = 0; q < N; q++)
        assert_int_equal(next[q], seg[q / 4]);
}

static struct liq_reclaim_opts reclaim_opts;

static void
reclaim_setup(struct liq_reclaim *r, int n)
{
    reclaim_opts.below = 0.25;
    reclaim_opts.after = 3;
    reclaim_opts.rejoin_above = 0.5;
    reclaim_opts.rejoin_after = 2;
    for (int h = 0; h < n; h++) {
        r[h].evacuated = 0;
        r[h].benched = 0;
        r[h].below_since = r[h].above_since = -1;
    }
}

/* Below the threshold for the configured time: evacuate; a blip above
 * restarts the clock; unknown capacity neither starts nor stops it; back
 * above rejoin_above for its time: rejoin. */
static void
test_reclaim_thresholds_and_times(void **state)
{
    struct liq_reclaim r[2];
    int count[2] = { 1, 2 }, act[2];
    double cap[2];

    (void)state;
    reclaim_setup(r, 2);
    cap[0] = 1.0, cap[1] = 0.4; /* host1: 0.2 CPU for each of its 2 workers */
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 10.0, &reclaim_opts, act), 0);
    /* Below reclaim_below: it holds no quanta at once, its workers stay. */
    assert_true(r[1].benched);
    assert_false(r[0].benched);
    assert_false(r[1].evacuated);
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 12.9, &reclaim_opts, act), 0);
    cap[1] = 0.6; /* a blip to 0.3 each: not back to rejoin_above, still benched */
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 13.0, &reclaim_opts, act), 0);
    assert_true(r[1].benched);
    cap[1] = 0.4;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 14.0, &reclaim_opts, act), 0);
    cap[1] = -1; /* unknown: the clock runs on from 14.0 */
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 16.0, &reclaim_opts, act), 0);
    cap[1] = 0.4;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 17.0, &reclaim_opts, act), 1);
    assert_int_equal(act[0], 0);
    assert_int_equal(act[1], LIQ_EVACUATE);
    assert_true(r[1].evacuated);
    assert_false(r[1].benched);
    /* Evacuated; 0.9 each is not yet 2 s long, then it is. */
    cap[1] = 1.8;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 18.0, &reclaim_opts, act), 0);
    cap[1] = 0.8; /* 0.4 each: under rejoin_above, the clock stops */
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 19.0, &reclaim_opts, act), 0);
    cap[1] = 1.8;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 20.0, &reclaim_opts, act), 0);
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 22.0, &reclaim_opts, act), 1);
    assert_int_equal(act[1], LIQ_REJOIN);
    assert_false(r[1].evacuated);
    assert_false(r[1].benched);
}

/* A host benched below reclaim_below gets quanta again once its share is
 * back at rejoin_above, before reclaim_after would have evacuated it. */
static void
test_reclaim_bench_and_back(void **state)
{
    struct liq_reclaim r[2];
    int count[2] = { 1, 1 }, act[2];
    double cap[2] = { 1.0, 0.1 };

    (void)state;
    reclaim_setup(r, 2);
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 0.0, &reclaim_opts, act), 0);
    assert_true(r[1].benched);
    cap[1] = 0.4; /* over reclaim_below, under rejoin_above */
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 1.0, &reclaim_opts, act), 0);
    assert_true(r[1].benched);
    assert_true(r[1].below_since < 0);
    cap[1] = 0.5;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 2.0, &reclaim_opts, act), 0);
    assert_false(r[1].benched);
    assert_false(r[1].evacuated);
    /* Unknown: as it was. */
    cap[1] = 0.1;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 3.0, &reclaim_opts, act), 0);
    cap[1] = -1;
    assert_int_equal(liq_reclaim_step(r, 2, cap, count, 4.0, &reclaim_opts, act), 0);
    assert_true(r[1].benched);
}

/* A host whose workers were lost (count 0) is not the one that computes:
 * with the others below the threshold, one of them stays unbenched, and
 * the lost host never acts (bench/liquid_failures.sh found every survivor
 * benched after a recovery on a loaded machine: "the balancer found no
 * worker to place the quanta on"). */
static void
test_reclaim_ignores_a_lost_host(void **state)
{
    struct liq_reclaim r[3];
    int count[3] = { 1, 1, 0 }, act[3];
    double cap[3] = { 0.1, 0.05, -1 };

    (void)state;
    reclaim_setup(r, 3);
    assert_int_equal(liq_reclaim_step(r, 3, cap, count, 0.0, &reclaim_opts, act), 0);
    assert_false(r[0].benched);
    assert_true(r[1].benched);
    assert_int_equal(act[2], 0);
    /* Long below: one of them is evacuated, the one with more left stays. */
    assert_int_equal(liq_reclaim_step(r, 3, cap, count, 10.0, &reclaim_opts, act), 1);
    assert_int_equal(act[0], 0);
    assert_int_equal(act[1], LIQ_EVACUATE);
    assert_int_equal(act[2], 0);
    assert_false(r[0].benched);
    assert_false(r[0].evacuated);
}

/* Every host below the threshold: the one with the most left stays. */
static void
test_reclaim_keeps_the_last_host(void **state)
{
    struct liq_reclaim r[3];
    int count[3] = { 1, 1, 1 }, act[3];
    double cap[3] = { 0.1, 0.2, 0.05 };

    (void)state;
    reclaim_setup(r, 3);
    assert_int_equal(liq_reclaim_step(r, 3, cap, count, 0.0, &reclaim_opts, act), 0);
    /* All below: the one with the most left keeps its quanta. */
    assert_true(r[0].benched && r[2].benched);
    assert_false(r[1].benched);
    assert_int_equal(liq_reclaim_step(r, 3, cap, count, 5.0, &reclaim_opts, act), 2);
    assert_int_equal(act[0], LIQ_EVACUATE);
    assert_int_equal(act[1], 0);
    assert_int_equal(act[2], LIQ_EVACUATE);
    assert_false(r[1].evacuated);
    assert_false(r[1].benched); /* the one left computes */
    /* Still low later: host1, the last one computing, never leaves. */
    assert_int_equal(liq_reclaim_step(r, 3, cap, count, 50.0, &reclaim_opts, act), 0);
    assert_false(r[1].evacuated);
}

/* ---- the bisection and the polish alone ---- */

/* Owners of n quanta of weight 1 along order, bisected at speeds sp. */
static void
bisect_unit(int n, const uint32_t *ord, int count, const double *sp, int32_t *own)
{
    double prefix[32];

    assert_true(n < 32);
    for (int r = 0; r <= n; r++)
        prefix[r] = r;
    bisect(ord, prefix, 0, (size_t)n, 0, count, sp, own);
}

/* How many of n quanta each of 3 owners holds. */
static void
count3(const int32_t *own, int n, int out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (int q = 0; q < n; q++) {
        assert_in_range(own[q], 0, 2);
        out[own[q]]++;
    }
}

/*
 * Speeds 1:2:4 and 7 equal quanta.  The first cut gives worker 0 a share
 * 1/7 of 7 = 1 quantum; the rest, 6, split 2:4 at 1 + 6 * 2/6 = 3.  So
 * 1, 2 and 4 quanta, each worker 1 time unit -- in curve order, whatever
 * the quanta's ids.  A bisection that ignored speeds would cut 7 at 3.5.
 */
static void
test_bisect_follows_speed_shares_1_2_4(void **state)
{
    const double sp[3] = { 1, 2, 4 };
    const uint32_t ident[7] = { 0, 1, 2, 3, 4, 5, 6 }, rev[7] = { 6, 5, 4, 3, 2, 1, 0 };
    int32_t own[7];
    int c[3];

    (void)state;
    bisect_unit(7, ident, 3, sp, own);
    count3(own, 7, c);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 2);
    assert_int_equal(c[2], 4);
    assert_int_equal(own[0], 0);
    assert_int_equal(own[2], 1);
    assert_int_equal(own[3], 2);
    bisect_unit(7, rev, 3, sp, own);
    assert_int_equal(own[6], 0);        /* first along the curve */
    assert_int_equal(own[5], 1);
    assert_int_equal(own[4], 1);
    assert_int_equal(own[0], 2);
}

/*
 * Speeds 1:2:4 and 12 equal quanta: the bisection rounds at each level --
 * 12/7 = 1.71 rounds to 2, then 2 + 10 * 2/6 = 5.33 to 5 -- so 2/3/7, whose
 * slowest worker takes 2 (times 2, 1.5, 1.75).  The polish keeps the max
 * at 2 (no split does better: 1.75 would allow 1 + 3 + 7 = 11 quanta) and
 * lowers the sum of squares: 1/4/7 (1 + 4 + 3.06), then 1/3/8 (1 + 2.25 +
 * 4 = 7.25), where no single shift helps.
 */
static void
test_polish_after_bisect_1_2_4(void **state)
{
    const double sp[3] = { 1, 2, 4 };
    uint32_t ord[12];
    int32_t own[12];
    double prefix[13];
    int c[3];

    (void)state;
    for (int r = 0; r < 12; r++)
        ord[r] = (uint32_t)r;
    for (int r = 0; r <= 12; r++)
        prefix[r] = r;
    bisect(ord, prefix, 0, 12, 0, 3, sp, own);
    count3(own, 12, c);
    assert_int_equal(c[0], 2);
    assert_int_equal(c[1], 3);
    assert_int_equal(c[2], 7);
    polish(ord, prefix, 12, 3, sp, own);
    count3(own, 12, c);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 3);
    assert_int_equal(c[2], 8);
    assert_int_equal(own[0], 0);
    assert_int_equal(own[1], 1);
    assert_int_equal(own[4], 2);
}

/*
 * A tie: 3 equal quanta, 2 equal workers; the target 1.5 is as near prefix
 * 1 as prefix 2, and the tie goes to the lower prefix: 1 and 2 quanta.  The
 * polish keeps it (the other cut has the same max and the same squares).
 */
static void
test_bisect_tie_goes_to_the_lower_prefix(void **state)
{
    const double sp[2] = { 1, 1 };
    const uint32_t ord[3] = { 0, 1, 2 };
    double prefix[4] = { 0, 1, 2, 3 };
    int32_t own[3];

    (void)state;
    bisect(ord, prefix, 0, 3, 0, 2, sp, own);
    assert_int_equal(own[0], 0);
    assert_int_equal(own[1], 1);
    assert_int_equal(own[2], 1);
    polish(ord, prefix, 3, 2, sp, own);
    assert_int_equal(own[0], 0);
    assert_int_equal(own[1], 1);
    assert_int_equal(own[2], 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bisect_follows_speed_shares_1_2_4),
        cmocka_unit_test(test_polish_after_bisect_1_2_4),
        cmocka_unit_test(test_bisect_tie_goes_to_the_lower_prefix),
        cmocka_unit_test(test_slow_worker_loses_quanta),
        cmocka_unit_test(test_halo_deepens_with_latency),
        cmocka_unit_test(test_heavy_quanta_are_not_a_slow_worker),
        cmocka_unit_test(test_balanced_stays),
        cmocka_unit_test(test_move_costs_more_than_it_saves),
        cmocka_unit_test(test_heavy_quantum_alone),
        cmocka_unit_test(test_sensed_share_slows_a_worker),
        cmocka_unit_test(test_share_unknown_and_none),
        cmocka_unit_test(test_polish_rounds_the_cuts_better),
        cmocka_unit_test(test_measured_placement_is_not_the_next),
        cmocka_unit_test(test_modest_gain_must_be_seen_twice),
        cmocka_unit_test(test_inactive_worker_is_emptied),
        cmocka_unit_test(test_returning_worker_moves_least),
        cmocka_unit_test(test_reclaim_thresholds_and_times),
        cmocka_unit_test(test_reclaim_keeps_the_last_host),
        cmocka_unit_test(test_reclaim_ignores_a_lost_host),
        cmocka_unit_test(test_reclaim_bench_and_back),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
