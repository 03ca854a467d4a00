/*
 * test_decomp_grid.c: grids, specs and bad input. Every error comes back as
 * -EINVAL or -ERANGE, never a crash (issue 6 acceptance).
 */
#include "test_decomp_util.h"

static void
test_decomp_grid_check_accepts_2d_and_3d(void **state)
{
    (void)state;
    struct decomp_grid g2 = td_grid2(3, 5, DECOMP_PERIODIC_ALL);
    struct decomp_grid g3 = td_grid3(2, 3, 4, 0);
    assert_int_equal(decomp_grid_check(&g2), 0);
    assert_int_equal(decomp_grid_check(&g3), 0);
    assert_int_equal(decomp_grid_cells(&g2), 15);
    assert_int_equal(decomp_grid_cells(&g3), 24);
}

static void
test_decomp_grid_check_rejects_bad_grids(void **state)
{
    (void)state;
    struct decomp_grid g = td_grid2(0, 5, 0);          /* empty */
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    g = td_grid2(5, 5, 0);
    g.dim[2] = 2;                                      /* 2D with depth */
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    g = td_grid2(5, 5, 0);
    g.ndim = 4;
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    g.ndim = 1;
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    g = td_grid2(5, 5, 8);                             /* unknown wrap bit */
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    g = td_grid3(DECOMP_MAX_EXTENT + 1, 1, 1, 0);
    assert_int_equal(decomp_grid_check(&g), -ERANGE);
    g = td_grid3(1u << 20, 1u << 20, 4, 0);            /* too many cells */
    assert_int_equal(decomp_grid_check(&g), -ERANGE);
    assert_int_equal(decomp_grid_check(NULL), -EINVAL);

    double w[4] = { 1, 2, -1, 1 };
    g = td_grid2(2, 2, 0);
    g.weight = w;
    assert_int_equal(decomp_grid_check(&g), -EINVAL);  /* negative weight */
    w[2] = NAN;
    assert_int_equal(decomp_grid_check(&g), -EINVAL);
    w[0] = w[1] = w[2] = w[3] = 0;
    assert_int_equal(decomp_grid_check(&g), -EINVAL);  /* nothing to share */
    w[3] = 1;
    assert_int_equal(decomp_grid_check(&g), 0);
}

static void
test_decomp_grid_place_rejects_bad_speeds_and_owners(void **state)
{
    (void)state;
    struct decomp_grid g = td_grid2(4, 4, 0);
    int32_t owner[16];
    struct decomp_box box[4];
    double speed[4] = { 1, 2, 3, 4 };
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        struct decomp_spec s = { (enum decomp_method)m, 4, speed, 0, 0 };
        speed[2] = 0;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        speed[2] = -1;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        speed[2] = NAN;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        speed[2] = INFINITY;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        speed[2] = 3;
        s.nowners = 17;                                /* more owners than cells */
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        s.nowners = 0;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        s.nowners = -3;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        s.nowners = 4;
        assert_int_equal(decomp_place(&g, &s, NULL, box), -EINVAL);
        s.speed = NULL;
        assert_int_equal(decomp_place(&g, &s, owner, box), -EINVAL);
        s.speed = speed;
        assert_int_equal(decomp_place(&g, NULL, owner, box), -EINVAL);
        assert_int_equal(decomp_place(NULL, &s, owner, box), -EINVAL);
        struct decomp_grid empty = td_grid2(4, 0, 0);
        assert_int_equal(decomp_place(&empty, &s, owner, box), -EINVAL);
        assert_int_equal(decomp_place(&g, &s, owner, box), 0);
    }
    struct decomp_spec bad = { (enum decomp_method)DECOMP_NMETHODS, 4, speed, 0, 0 };
    assert_int_equal(decomp_place(&g, &bad, owner, box), -EINVAL);
}

static void
test_decomp_grid_methods_that_cannot_serve_say_erange(void **state)
{
    (void)state;
    double speed[5] = { 1, 1, 1, 1, 1 };
    int32_t owner[4 * 40];
    struct decomp_grid g = td_grid2(4, 4, 0);
    /* Five owners, four rows: row and interleaved cannot give each a row. */
    struct decomp_spec s = { DECOMP_ROW, 5, speed, 0, 0 };
    assert_int_equal(decomp_place(&g, &s, owner, NULL), -ERANGE);
    s.method = DECOMP_INTERLEAVED;
    assert_int_equal(decomp_place(&g, &s, owner, NULL), -ERANGE);
    /* Five is prime: block wants 5 x 1 strips, more than 4 columns. */
    s.method = DECOMP_BLOCK;
    assert_int_equal(decomp_place(&g, &s, owner, NULL), -ERANGE);
    /* The others manage. */
    s.method = DECOMP_BRBD;
    assert_int_equal(decomp_place(&g, &s, owner, NULL), 0);
}

static void
test_decomp_grid_method_names_round_trip(void **state)
{
    (void)state;
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        enum decomp_method back;
        assert_int_equal(decomp_method_parse(decomp_method_name((enum decomp_method)m), &back), 0);
        assert_int_equal(back, m);
    }
    enum decomp_method x;
    assert_int_equal(decomp_method_parse("gq", &x), -EINVAL);
    assert_int_equal(decomp_method_parse(NULL, &x), -EINVAL);
    assert_string_equal(decomp_method_name((enum decomp_method)99), "unknown");
    assert_true(decomp_method_has_boxes(DECOMP_BRBD));
    assert_false(decomp_method_has_boxes(DECOMP_SCATTER));
}

static void
test_decomp_grid_loads_sum_weights(void **state)
{
    (void)state;
    double w[6] = { 1, 2, 3, 4, 5, 6 };
    struct decomp_grid g = td_grid2(2, 3, 0);
    g.weight = w;
    int32_t owner[6] = { 0, 0, 1, 1, 1, 0 };
    double load[2];
    assert_int_equal(decomp_loads(&g, owner, 2, load), 0);
    assert_true(load[0] == 9 && load[1] == 12);
    owner[3] = 2;
    assert_int_equal(decomp_loads(&g, owner, 2, load), -EINVAL);
}

static void
test_decomp_grid_tree_rejects_non_tree_methods_and_weighted_exact(void **state)
{
    (void)state;
    double speed[2] = { 1, 2 }, w[4] = { 1, 1, 1, 1 };
    struct decomp_grid g = td_grid2(2, 2, 0);
    struct decomp_spec s = { DECOMP_ROW, 2, speed, 0, 0 };
    struct decomp_tree t;
    assert_int_equal(decomp_tree_build(&g, &s, 0, &t), -EINVAL);
    s.method = DECOMP_ORB;
    g.weight = w;
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), -EINVAL);
    assert_int_equal(decomp_tree_build(&g, &s, 0, &t), 0);
    decomp_tree_free(&t);
    decomp_tree_free(&t);                              /* idempotent */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_grid_check_accepts_2d_and_3d),
        cmocka_unit_test(test_decomp_grid_check_rejects_bad_grids),
        cmocka_unit_test(test_decomp_grid_place_rejects_bad_speeds_and_owners),
        cmocka_unit_test(test_decomp_grid_methods_that_cannot_serve_say_erange),
        cmocka_unit_test(test_decomp_grid_method_names_round_trip),
        cmocka_unit_test(test_decomp_grid_loads_sum_weights),
        cmocka_unit_test(test_decomp_grid_tree_rejects_non_tree_methods_and_weighted_exact),
    };
    return cmocka_run_group_tests_name("decomp_grid", tests, NULL, NULL);
}
