/*
 * test_vmrun_balance.c - the balancer's decision: prefix bisection along the
 * Hilbert order by measured speeds, and the dampener.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vmrun.h"

#define NQ 8

static uint32_t order[NQ] = { 0, 1, 2, 3, 4, 5, 6, 7 };
static double points[NQ] = { 100, 100, 100, 100, 100, 100, 100, 100 };
static double bytes[NQ] = { 800, 800, 800, 800, 800, 800, 800, 800 };
static double fallback[2] = { 1000, 1000 };

static void
setup_in(struct vmrun_balance_in *in, const double *cost, const int32_t *owner)
{
    memset(in, 0, sizeof(*in));
    in->nquanta = NQ;
    in->nworkers = 2;
    in->order = order;
    in->cost = cost;
    in->points = points;
    in->bytes = bytes;
    in->owner = owner;
    in->fallback_speed = fallback;
    in->lambda = 1e-4;
    in->tau = 1e-9;
    in->remaining = 1000;
    in->min_gain = 0.05;
}

/* Worker 1 runs at a third of worker 0's speed: its quanta go to worker 0
 * until the predicted times meet, along the curve. */
static void
test_slow_worker_loses_quanta(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.3 };
    struct vmrun_balance_in in;
    struct vmrun_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(vmrun_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(ep.moved, 2);
    assert_true(ep.bytes == 1600);
    for (int q = 0; q < NQ; q++)
        assert_int_equal(next[q], q < 6 ? 0 : 1);
    assert_true(ep.be > 0.66 && ep.be < 0.67);     /* mean 0.8 / max 1.2 */
    assert_true(ep.before_s == 1.2 && ep.after_s < 0.61);
}

/* Balanced already: nothing moves. */
static void
test_balanced_stays(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct vmrun_balance_in in;
    struct vmrun_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(vmrun_balance_plan(&in, next, &ep), 0);
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
    struct vmrun_balance_in in;
    struct vmrun_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    in.remaining = 1;
    in.tau = 1e-3; /* 1.6 s to move 1600 bytes; saves 0.6 s once */
    assert_int_equal(vmrun_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
    assert_memory_equal(next, owner, sizeof(owner));
    in.tau = 1e-9;
    in.min_gain = 0.6; /* the gain is 0.5 of the time */
    assert_int_equal(vmrun_balance_plan(&in, next, &ep), 0);
    assert_false(ep.applied);
}

/* A heavy quantum weighs what it costs, wherever it goes: one quantum that
 * takes as long as the seven others together gets a worker to itself. */
static void
test_heavy_quantum_alone(void **state)
{
    int32_t owner[NQ] = { 0, 0, 0, 0, 1, 1, 1, 1 }, next[NQ];
    double cost[NQ] = { 0.7, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };
    struct vmrun_balance_in in;
    struct vmrun_epoch ep;

    (void)state;
    setup_in(&in, cost, owner);
    assert_int_equal(vmrun_balance_plan(&in, next, &ep), 0);
    assert_true(ep.applied);
    assert_int_equal(next[0], 0);
    for (int q = 1; q < NQ; q++)
        assert_int_equal(next[q], 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_worker_loses_quanta),
        cmocka_unit_test(test_balanced_stays),
        cmocka_unit_test(test_move_costs_more_than_it_saves),
        cmocka_unit_test(test_heavy_quantum_alone),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
