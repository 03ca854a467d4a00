/*
 * test_decomp_point.c: contiguous point (seed 001 section 4.2, requirement 11).
 */
#include "test_decomp_util.h"

static void
test_decomp_point_ranges_are_contiguous_row_major(void **state)
{
    (void)state;
    const double speed[5] = { 5, 1, 3, 2, 4 };
    struct decomp_grid g = td_grid2(37, 23, DECOMP_PERIODIC_ALL);
    int32_t *owner = td_place(&g, DECOMP_POINT, speed, 5, NULL);
    size_t n = td_cells(&g), start[6] = { 0 };
    int i = 0;
    for (size_t c = 1; c < n; c++) {
        assert_true(owner[c] >= owner[c - 1]);       /* one range each, in order */
        if (owner[c] != owner[c - 1])
            start[++i] = c;
    }
    assert_int_equal(i, 4);
    /* The thesis's lookup: owner(start_i) = i, owner(start_i - 1) = i - 1,
     * and each range within one cell of its share. */
    start[5] = n;
    for (i = 0; i < 5; i++) {
        assert_int_equal(owner[start[i]], i);
        if (i > 0)
            assert_int_equal(owner[start[i] - 1], i - 1);
        assert_true(fabs((double)(start[i + 1] - start[i]) - n * speed[i] / 15) < 1);
    }
    free(owner);
}

static void
test_decomp_point_6p_minus_4_messages(void **state)
{
    (void)state;
    const double speed[6] = { 3, 2, 2, 5, 1, 4 };
    struct decomp_grid g = td_grid2(61, 40, DECOMP_PERIODIC_ALL);
    int32_t *owner = td_place(&g, DECOMP_POINT, speed, 6, NULL);
    struct decomp_counts c;
    assert_int_equal(decomp_count(&g, owner, 6, &c), 0);
    assert_int_equal(c.nlinks, 6 * 6 - 4);
    /* N and S: one message of n items per owner; E and W: at most two. */
    assert_int_equal(decomp_counts_latency_units(&c, 0), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(c.msgs[i * 4 + 2], 1);
        assert_true(c.faces[i * 4 + 2] == 40);
    }
    decomp_counts_free(&c);
    free(owner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_point_ranges_are_contiguous_row_major),
        cmocka_unit_test(test_decomp_point_6p_minus_4_messages),
    };
    return cmocka_run_group_tests_name("decomp_point", tests, NULL, NULL);
}
