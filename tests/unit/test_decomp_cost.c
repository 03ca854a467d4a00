/*
 * test_decomp_cost.c: the cost model (seed 001 sections 3.3, 5, 6; digest
 * requirements 5, 6, 8, 10, 21, 22, 25) against the digest's figures.
 */
#include "test_decomp_util.h"

static const struct decomp_net fig36 = { 2.5e-3, 1.5e-6, DECOMP_ETH_PAYLOAD,
                                         DECOMP_ETH_OVERHEAD, DECOMP_NET_SHARED };

static void
assert_near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.6f, want %.6f (tolerance %g)", got, want, tol);
}

static void
test_decomp_cost_frame_counts_extra_frames(void **state)
{
    (void)state;
    assert_true(decomp_frame(1460, &fig36) == 1518);
    assert_true(decomp_frame(1461, &fig36) == 1577);
    assert_true(decomp_frame(0, &fig36) == 0);
    assert_true(decomp_frame(8, &fig36) == 66);
    struct decomp_net raw = fig36;
    raw.payload = 0;                       /* no framing */
    assert_true(decomp_frame(1461, &raw) == 1461);
}

/* The digest's reference table (section 5.7), ms per iteration, p = 8. */
static const double ns[4] = { 64, 256, 1024, 4096 };
static const double row_ms[4] = { 18.68, 56.94, 209.96, 823.45 };
static const double point_ms[4] = { 31.45, 69.71, 222.73, 836.22 };
static const double inter_ms[4] = { 107.5, 1640.5, 26171.7, 418655 };
static const double block_ms[4] = { 21.47, 47.54, 154.59, 588.36 };
static const double brbd_ms[4] = { 33.0, 60.7, 175.3, 635.1 };
static const double fbrd_ms[4] = { 32.6, 58.8, 167.0, 603.8 };
static const double phd_ms[4] = { 32.6, 58.9, 168.4, 605.7 };

static void
test_decomp_cost_closed_forms_match_digest_table(void **state)
{
    (void)state;
    double t;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(decomp_cost_formula(DECOMP_ROW, ns[i], ns[i], 8, 8, &fig36, &t), 0);
        assert_near(t * 1e3, row_ms[i], 0.005);
        assert_int_equal(decomp_cost_formula(DECOMP_POINT, ns[i], ns[i], 8, 8, &fig36, &t), 0);
        assert_near(t * 1e3, point_ms[i], 0.005);
        assert_int_equal(decomp_cost_formula(DECOMP_INTERLEAVED, ns[i], ns[i], 8, 8, &fig36, &t),
                         0);
        assert_near(t * 1e3, inter_ms[i], i < 3 ? 0.05 : 0.5);
        assert_int_equal(decomp_cost_formula(DECOMP_BLOCK, ns[i], ns[i], 8, 8, &fig36, &t), 0);
        assert_near(t * 1e3, block_ms[i], 0.005);
    }
    assert_int_equal(decomp_cost_formula(DECOMP_BRBD, 64, 64, 8, 8, &fig36, &t), -EINVAL);
    assert_int_equal(decomp_cost_formula(DECOMP_ROW, 64, 64, 0, 8, &fig36, &t), -EINVAL);
}

static double
exact_cost_ms(enum decomp_method m, double n)
{
    const double speed[] = { 6, 4, 4, 3, 3, 3, 2, 1 };
    struct decomp_grid g = td_grid2((uint32_t)n, (uint32_t)n, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { m, 8, speed, 0, 0 };
    struct decomp_tree t;
    struct decomp_xbox xb[8];
    struct decomp_counts c;
    struct decomp_workload w = { { 8, 8, 8 }, 0, 0 };
    struct decomp_cost cost;

    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_int_equal(decomp_tree_xboxes(&t, xb), 0);
    assert_int_equal(decomp_count_xboxes(&g, xb, 8, &c), 0);
    /* 44 = 6p - 4 messages and 8 lambda of latency for all three. */
    assert_int_equal(decomp_counts_messages(&c), 44);
    assert_int_equal(decomp_counts_latency_units(&c, 0), 8);
    assert_int_equal(decomp_cost_eval(&c, NULL, NULL, &w, &fig36, &cost), 0);
    decomp_counts_free(&c);
    decomp_tree_free(&t);
    return cost.total * 1e3;
}

static void
test_decomp_cost_heterogeneous_columns_match_digest_table(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        assert_near(exact_cost_ms(DECOMP_BRBD, ns[i]), brbd_ms[i], 0.05);
        assert_near(exact_cost_ms(DECOMP_FBRD, ns[i]), fbrd_ms[i], 0.05);
        assert_near(exact_cost_ms(DECOMP_PHD, ns[i]), phd_ms[i], 0.05);
    }
}

/* Evaluate a real layout with the cost model, communication only. */
static double
layout_cost(const struct decomp_grid *g, enum decomp_method m, const double *speed, int p,
            const struct decomp_net *net, unsigned dirs)
{
    int32_t *owner = td_place(g, m, speed, p, NULL);
    struct decomp_counts c;
    struct decomp_workload w = { { 8, 8, 8 }, 0, dirs };
    struct decomp_cost cost;
    assert_int_equal(decomp_count(g, owner, p, &c), 0);
    assert_int_equal(decomp_cost_eval(&c, NULL, NULL, &w, net, &cost), 0);
    decomp_counts_free(&c);
    free(owner);
    return cost.total;
}

static void
test_decomp_cost_evaluator_agrees_with_closed_forms(void **state)
{
    (void)state;
    double eq[16], t;
    for (int i = 0; i < 16; i++)
        eq[i] = 1;
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    /* Row and homogeneous interleaved: 18.68 ms and 107.48 ms at n = 64. */
    assert_near(layout_cost(&g, DECOMP_ROW, eq, 8, &fig36, 0) * 1e3, 18.68, 0.005);
    decomp_cost_formula(DECOMP_INTERLEAVED, 64, 64, 8, 8, &fig36, &t);
    assert_near(layout_cost(&g, DECOMP_INTERLEAVED, eq, 8, &fig36, 0), t, 1e-12);
    /* Point needs every range to split a row: 65 rows of 64 do that (rows
     * stay the slowest axis since there are at least as many as columns). */
    struct decomp_grid g65 = td_grid2(65, 64, DECOMP_PERIODIC_ALL);
    assert_near(layout_cost(&g65, DECOMP_POINT, eq, 8, &fig36, 0) * 1e3, 31.45, 0.005);
    struct decomp_grid g1024 = td_grid2(1025, 1024, DECOMP_PERIODIC_ALL);
    assert_near(layout_cost(&g1024, DECOMP_POINT, eq, 8, &fig36, 0) * 1e3, 222.73, 0.005);
    /* Block where sqrt(p) divides n: p = 16 and p = 9. */
    decomp_cost_formula(DECOMP_BLOCK, 64, 64, 16, 8, &fig36, &t);
    assert_near(layout_cost(&g, DECOMP_BLOCK, eq, 16, &fig36, 0), t, 1e-12);
    struct decomp_grid g99 = td_grid2(99, 99, DECOMP_PERIODIC_ALL);
    decomp_cost_formula(DECOMP_BLOCK, 99, 99, 9, 8, &fig36, &t);
    assert_near(layout_cost(&g99, DECOMP_BLOCK, eq, 9, &fig36, 0), t, 1e-12);
    decomp_cost_formula(DECOMP_ROW, 1024, 1024, 8, 8, &fig36, &t);
    assert_near(t * 1e3, 209.96, 0.005);
}

static void
test_decomp_cost_switched_charges_busiest_receiver(void **state)
{
    (void)state;
    const double eq[4] = { 1, 1, 1, 1 };
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    struct decomp_net sw = fig36;
    sw.kind = DECOMP_NET_SWITCHED;
    /* Row, p = 4: 8 messages of 512 bytes; each host receives one per
     * direction, so the switch carries two frames' time, the bus eight. */
    double shared = layout_cost(&g, DECOMP_ROW, eq, 4, &fig36, 0);
    double switched = layout_cost(&g, DECOMP_ROW, eq, 4, &sw, 0);
    assert_near(shared, 2 * 2.5e-3 + 1.5e-6 * 8 * 570, 1e-12);
    assert_near(switched, 2 * 2.5e-3 + 1.5e-6 * 2 * 570, 1e-12);
}

static void
test_decomp_cost_compute_term_uses_slowest_owner(void **state)
{
    (void)state;
    struct decomp_counts c;
    const double speed[2] = { 2e6, 1e6 };          /* work units per second */
    const double load[2] = { 600, 400 };
    struct decomp_workload w = { { 8, 8, 8 }, 10, 0 };
    struct decomp_cost cost;
    struct decomp_grid g = td_grid2(10, 100, 0);
    int32_t *owner = td_place(&g, DECOMP_ROW, speed, 2, NULL);

    assert_int_equal(decomp_count(&g, owner, 2, &c), 0);
    assert_int_equal(decomp_cost_eval(&c, load, speed, &w, &fig36, &cost), 0);
    /* t = (3 ms, 4 ms): the slower sets the pace; BE = 3.5 / 4. */
    assert_near(cost.compute, 4e-3, 1e-15);
    assert_near(cost.balance, 0.875, 1e-12);
    assert_near(cost.total, cost.compute + cost.latency + cost.transfer, 1e-15);
    const double bad[2] = { 1, 0 };
    assert_int_equal(decomp_cost_eval(&c, load, bad, &w, &fig36, &cost), -EINVAL);
    assert_int_equal(decomp_cost_eval(&c, load, NULL, &w, &fig36, &cost), -EINVAL);
    struct decomp_net nn = fig36;
    nn.lambda = -1;
    assert_int_equal(decomp_cost_eval(&c, NULL, NULL, &w, &nn, &cost), -EINVAL);
    decomp_counts_free(&c);
    free(owner);
}

static void
test_decomp_cost_broadcast_and_reduction(void **state)
{
    (void)state;
    double t;
    assert_int_equal(decomp_cost_broadcast(8, 8, &fig36, &t), 0);
    assert_near(t, 7 * 2.5e-3 + 7 * 1.5e-6 * 66, 1e-15);
    assert_int_equal(decomp_cost_reduction(8, 8, &fig36, &t), 0);
    assert_near(t, 2.5e-3 + 7 * 1.5e-6 * 66, 1e-15);
    assert_int_equal(decomp_cost_broadcast(0, 8, &fig36, &t), -EINVAL);
}

static void
test_decomp_cost_theorem3_minimum_grid_sizes(void **state)
{
    (void)state;
    const int p[] = { 5, 6, 8, 9, 12, 16, 25, 32, 64 };
    const double eth[] = { 355, 170, 80, 62.5, 37, 23.4, 12.5, 9.1, 3.9 };
    const double fddi[] = { 3552, 1703, 800, 625, 370, 234, 125, 91, 39 };
    double n;
    for (int i = 0; i < 9; i++) {
        assert_int_equal(decomp_block_min_n(1.5e-3, 1e-6, 8, p[i], &n), 0);
        assert_near(n, eth[i], 0.006 * eth[i]);
        assert_int_equal(decomp_block_min_n(1.5e-3, 0.1e-6, 8, p[i], &n), 0);
        assert_near(n, fddi[i], 0.006 * fddi[i]);
    }
    /* p <= 4: block never wins. */
    for (int q = 1; q <= 4; q++) {
        assert_int_equal(decomp_block_min_n(1.5e-3, 1e-6, 8, q, &n), -ERANGE);
        assert_int_equal(decomp_block_beats_row(1.5e-3, 1e-6, 8, 1e9, q), 0);
    }
    assert_int_equal(decomp_block_beats_row(1.5e-3, 1e-6, 8, 62, 9), 0);
    assert_int_equal(decomp_block_beats_row(1.5e-3, 1e-6, 8, 63, 9), 1);
    assert_int_equal(decomp_block_beats_row(1.5e-3, 1e-6, 8, 80, 8), 0);
    assert_int_equal(decomp_block_beats_row(1.5e-3, 1e-6, 8, 81, 8), 1);
    /* Fig. 36 parameters: n_min ~ 89. */
    assert_int_equal(decomp_block_min_n(2.5e-3, 1.5e-6, 8, 8, &n), 0);
    assert_near(n, 89, 0.5);
    assert_int_equal(decomp_block_min_n(1.5e-3, 0, 8, 8, &n), -EINVAL);
}

static void
test_decomp_cost_wavefront_and_systolic_patterns(void **state)
{
    (void)state;
    double eq[16];
    for (int i = 0; i < 16; i++)
        eq[i] = 1;
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    const unsigned E = 1u << 1, S = 1u << 3;
    /* Wavefront, contiguous row: p messages of n items, (6.22). */
    assert_near(layout_cost(&g, DECOMP_ROW, eq, 8, &fig36, E | S),
                2.5e-3 + 1.5e-6 * 8 * decomp_frame(8 * 64, &fig36), 1e-12);
    /* Systolic east: rows keep the flow inside; block sends p messages
     * of n / sqrt(p) items, (6.17). */
    assert_near(layout_cost(&g, DECOMP_ROW, eq, 8, &fig36, E), 0, 0);
    assert_near(layout_cost(&g, DECOMP_BLOCK, eq, 16, &fig36, E),
                2.5e-3 + 1.5e-6 * 16 * decomp_frame(8 * 16, &fig36), 1e-12);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_cost_frame_counts_extra_frames),
        cmocka_unit_test(test_decomp_cost_closed_forms_match_digest_table),
        cmocka_unit_test(test_decomp_cost_heterogeneous_columns_match_digest_table),
        cmocka_unit_test(test_decomp_cost_evaluator_agrees_with_closed_forms),
        cmocka_unit_test(test_decomp_cost_switched_charges_busiest_receiver),
        cmocka_unit_test(test_decomp_cost_compute_term_uses_slowest_owner),
        cmocka_unit_test(test_decomp_cost_broadcast_and_reduction),
        cmocka_unit_test(test_decomp_cost_theorem3_minimum_grid_sizes),
        cmocka_unit_test(test_decomp_cost_wavefront_and_systolic_patterns),
    };
    return cmocka_run_group_tests_name("decomp_cost", tests, NULL, NULL);
}
