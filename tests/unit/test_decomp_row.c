/*
 * test_decomp_row.c: contiguous row / slab (seed 001 section 4.3,
 * requirement 12).
 */
#include "test_decomp_util.h"

static void
test_decomp_row_heterogeneous_rows_within_one(void **state)
{
    (void)state;
    const double speed[8] = { 6, 4, 4, 3, 3, 3, 2, 1 };
    struct decomp_grid g = td_grid2(64, 50, DECOMP_PERIODIC_ALL);
    struct decomp_box box[8];
    int32_t *owner = td_place(&g, DECOMP_ROW, speed, 8, box);
    td_check_boxes(&g, owner, box, 8);
    uint32_t next = 0;
    for (int i = 0; i < 8; i++) {
        /* Whole rows, in owner order: the start-row table of the thesis. */
        assert_int_equal(box[i].lo[1], next);
        assert_int_equal(box[i].lo[0], 0);
        assert_int_equal(box[i].hi[0], 50);
        uint32_t rows = box[i].hi[1] - box[i].lo[1];
        assert_true(fabs(rows - 64 * speed[i] / 26) < 1);
        assert_true(rows >= 1);
        next = box[i].hi[1];
    }
    assert_int_equal(next, 64);
    free(owner);
}

static void
test_decomp_row_cuts_across_longest_axis(void **state)
{
    (void)state;
    const double speed[3] = { 1, 1, 1 };
    struct decomp_box box[3];
    /* Wide 2D grid: columns. */
    struct decomp_grid g = td_grid2(10, 30, 0);
    int32_t *owner = td_place(&g, DECOMP_ROW, speed, 3, box);
    assert_int_equal(box[1].lo[0], 10);
    assert_int_equal(box[1].hi[0], 20);
    assert_int_equal(box[1].hi[1], 10);
    free(owner);
    /* 3D: slabs across y, the longest. */
    struct decomp_grid g3 = td_grid3(8, 21, 5, 0);
    owner = td_place(&g3, DECOMP_ROW, speed, 3, box);
    td_check_boxes(&g3, owner, box, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(box[i].hi[1] - box[i].lo[1], 7);
        assert_int_equal(box[i].hi[0] - box[i].lo[0], 8);
        assert_int_equal(box[i].hi[2] - box[i].lo[2], 5);
    }
    free(owner);
}

static void
test_decomp_row_weighted_slabs_balance_weight(void **state)
{
    (void)state;
    /* The first 10 of 40 rows weigh 4 each, the rest 1: two equal owners
     * split the weight 70 at 35, i.e. after 8.75 heavy rows -> 9. */
    struct decomp_grid g = td_grid2(40, 5, 0);
    double w[200];
    for (int c = 0; c < 200; c++)
        w[c] = c / 5 < 10 ? 4 : 1;
    g.weight = w;
    const double speed[2] = { 1, 1 };
    struct decomp_box box[2];
    int32_t *owner = td_place(&g, DECOMP_ROW, speed, 2, box);
    assert_int_equal(box[0].hi[1], 9);
    free(owner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_row_heterogeneous_rows_within_one),
        cmocka_unit_test(test_decomp_row_cuts_across_longest_axis),
        cmocka_unit_test(test_decomp_row_weighted_slabs_balance_weight),
    };
    return cmocka_run_group_tests_name("decomp_row", tests, NULL, NULL);
}
