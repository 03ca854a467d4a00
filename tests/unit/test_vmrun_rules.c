/*
 * test_vmrun_rules.c - Paradise's rules for stencil jobs (vmrun_rules.c):
 * the communication graph's shape, the load's class, and which rules fire
 * and which hints they give on synthetic characteristics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vmrun_rules.h"

static struct vmrun_thresholds th;

static int
setup(void **state)
{
    (void)state;
    vmrun_rules_defaults(&th);
    return 0;
}

/* A steady, uniform, balanced run with balancing on. */
static void
uniform(struct vmrun_traits *t)
{
    memset(t, 0, sizeof(*t));
    t->workers = 4;
    t->epochs = 6;
    t->balance = 1;
    t->halo = 2;
    t->epoch = 10;
    t->quanta = 8;
    t->heavy = 1;
    t->min_gain = 0.2;
    t->grain_mean_s = 1e-4;
    t->grain_cv = 0.05;
    t->heavy_ratio = 1;
    t->block_s = 0.05;
    t->latency_s = 1e-4;
    t->comm_ratio = 0.05;
    t->be_min = 0.95;
    t->be_mean = 0.97;
    t->load = VR_LOAD_STEADY;
    t->shape = VR_SHAPE_NEIGHBOUR;
}

static const char *
hint_of(const struct vmrun_advice *a, const char *key)
{
    for (int i = 0; i < a->nhints; i++)
        if (strcmp(a->hint[i].key, key) == 0)
            return a->hint[i].value;
    return NULL;
}

static int
fired(const struct vmrun_advice *a, const char *name)
{
    for (int i = 0; i < a->nrules; i++)
        if (strcmp(a->rule[i].name, name) == 0)
            return a->rule[i].fired;
    return -1;
}

/* The words a rule gave for itself, fired or not. */
static const char *
why_of(const struct vmrun_advice *a, const char *name)
{
    for (int i = 0; i < a->nrules; i++)
        if (strcmp(a->rule[i].name, name) == 0)
            return a->rule[i].why;
    return "";
}

static void
test_vmrun_rules_shapes(void **state)
{
    double ring[16] = { 0 }, star[16] = { 0 }, all[16], none[16] = { 0 };

    (void)state;
    for (int i = 0; i < 4; i++) {
        ring[i * 4 + (i + 1) % 4] = 3;
        for (int j = 0; j < 4; j++)
            all[i * 4 + j] = i != j;
    }
    for (int i = 1; i < 4; i++)
        star[i] = star[i * 4] = 1;
    assert_int_equal(vmrun_shape_of(4, ring, &th), VR_SHAPE_NEIGHBOUR);
    assert_int_equal(vmrun_shape_of(4, star, &th), VR_SHAPE_TREE);
    assert_int_equal(vmrun_shape_of(4, all, &th), VR_SHAPE_ALL_TO_ALL);
    assert_int_equal(vmrun_shape_of(4, none, &th), VR_SHAPE_NONE);
    /* Three workers that all talk are neighbours: too few to tell. */
    assert_int_equal(vmrun_shape_of(3, all, &th), VR_SHAPE_NEIGHBOUR);
}

static void
test_vmrun_rules_load_classes(void **state)
{
    double steady[8] = { 1, 1.02, 0.98, 1.01, 0.99, 1, 1.02, 0.99 };
    double drift[8] = { 1, 1.1, 1.3, 1.5, 1.7, 1.9, 2.1, 2.3 };
    double burst[8] = { 1, 2, 1, 2.1, 0.9, 2, 1, 2 };
    double d, b;

    (void)state;
    assert_int_equal(vmrun_load_class(steady, 8, &th, &d, &b), VR_LOAD_STEADY);
    assert_true(d < 0.05 && b < 0.05);
    assert_int_equal(vmrun_load_class(drift, 8, &th, &d, &b), VR_LOAD_DRIFTING);
    assert_true(d > 0.5);
    assert_int_equal(vmrun_load_class(burst, 8, &th, &d, &b), VR_LOAD_BURSTY);
    assert_true(b > 0.25);
    /* Too few points to say anything. */
    assert_int_equal(vmrun_load_class(drift, 2, &th, &d, &b), VR_LOAD_STEADY);
}

static void
test_vmrun_rules_uniform_turns_balancing_off(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "uniform-steady"), 1);
    assert_int_equal(fired(&a, "irregular-grain"), 0);
    assert_string_equal(hint_of(&a, "balance"), "false");
    assert_int_equal(a.nhints, 1);
    /* A balancer that moved quanta was needed: no hint then. */
    t.moved = 3;
    vmrun_rules_apply(&t, &th, &a);
    assert_null(hint_of(&a, "balance"));
}

static void
test_vmrun_rules_irregular_grain_balances(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    t.heavy_ratio = 3.8;
    t.be_min = 0.5;
    t.balance = 0;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "irregular-grain"), 1);
    assert_int_equal(fired(&a, "imbalanced"), 1);
    assert_int_equal(fired(&a, "uniform-steady"), 0);
    assert_string_equal(hint_of(&a, "balance"), "true");
    assert_string_equal(hint_of(&a, "min_gain"), "0.1");
    /* The first rule's evidence is the hint's. */
    assert_non_null(strstr(a.hint[0].why, "3.80x"));
}

static void
test_vmrun_rules_drift_shortens_the_epoch(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    t.load = VR_LOAD_DRIFTING;
    t.drift = 0.6;
    t.epoch = 20;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "load-changes"), 1);
    assert_string_equal(hint_of(&a, "epoch"), "10");
    assert_string_equal(hint_of(&a, "balance"), "true");
    /* Bursts: a higher dampener, the epoch kept. */
    t.load = VR_LOAD_BURSTY;
    vmrun_rules_apply(&t, &th, &a);
    assert_null(hint_of(&a, "epoch"));
    assert_string_equal(hint_of(&a, "min_gain"), "0.3");
}

static void
test_vmrun_rules_latency_deepens_the_halo(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    t.comm_ratio = 0.5;
    t.block_s = 5e-4; /* 5 latencies */
    t.ghost_wait_s = 8e-5; /* most ghosts late by most of a latency */
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-bound"), 1);
    assert_string_equal(hint_of(&a, "halo"), "4");
    /* Most ghosts there when asked for, the waiting a few long waits: for
     * neighbours that compute later, not for the messages (seen with
     * three workers on two shared cores). */
    t.ghost_wait_s = 5e-6;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-bound"), 0);
    assert_null(hint_of(&a, "halo"));
    t.ghost_wait_s = 8e-5;
    /* A halo the runtime chose from the ring's lambda is left to it. */
    t.halo_auto = 1;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-bound"), 0);
    t.halo_auto = 0;
    /* Large grain: the waits are not latency's. */
    t.block_s = 0.05;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-bound"), 0);
    /* At the deepest halo there is nothing to give. */
    t.block_s = 5e-4;
    t.halo = 16;
    vmrun_rules_apply(&t, &th, &a);
    assert_null(hint_of(&a, "halo"));
}

/* The runtime went past its slack's halo for latency, and the ghosts were
 * on time: back to the slack's halo. */
static void
test_vmrun_rules_hidden_latency_takes_the_slack(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    t.halo_auto = 1;
    t.halo = 10;
    t.halo_slack = 5;
    t.comm_ratio = 0.9;
    t.ghost_wait_s = 3e-6; /* 0.03 latencies */
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-hidden"), 1);
    assert_string_equal(hint_of(&a, "halo"), "5");
    /* The ghosts were late: the deeper halo may pay. */
    t.ghost_wait_s = 8e-5;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-hidden"), 0);
    assert_null(hint_of(&a, "halo"));
    t.ghost_wait_s = 3e-6;
    /* The slack's own halo, a halo given, or a trace that does not say. */
    t.halo = 5;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-hidden"), 0);
    t.halo = 10;
    t.halo_auto = 0;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-hidden"), 0);
    /* Its words say who chose the halo, as latency-bound's do. */
    assert_non_null(strstr(why_of(&a, "latency-hidden"), "halo 10 given, past the 5"));
    assert_null(strstr(why_of(&a, "latency-hidden"), "chosen by the runtime"));
    t.halo_auto = 1;
    t.halo_slack = 0;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "latency-hidden"), 0);
}

static void
test_vmrun_rules_all_to_all_asks_the_advisor(void **state)
{
    struct vmrun_traits t;
    struct vmrun_advice a;

    (void)state;
    uniform(&t);
    t.shape = VR_SHAPE_ALL_TO_ALL;
    vmrun_rules_apply(&t, &th, &a);
    assert_int_equal(fired(&a, "no-locality"), 1);
    assert_string_equal(hint_of(&a, "decomp"), "\"auto\"");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmrun_rules_shapes),
        cmocka_unit_test(test_vmrun_rules_load_classes),
        cmocka_unit_test(test_vmrun_rules_uniform_turns_balancing_off),
        cmocka_unit_test(test_vmrun_rules_irregular_grain_balances),
        cmocka_unit_test(test_vmrun_rules_drift_shortens_the_epoch),
        cmocka_unit_test(test_vmrun_rules_latency_deepens_the_halo),
        cmocka_unit_test(test_vmrun_rules_hidden_latency_takes_the_slack),
        cmocka_unit_test(test_vmrun_rules_all_to_all_asks_the_advisor),
    };

    return cmocka_run_group_tests_name("vmrun_rules", tests, setup, NULL);
}
