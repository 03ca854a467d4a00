/*
 * test_decomp_block.c: homogeneous block (seed 001 section 4.5,
 * requirement 14) and its generalisation to any p and to 3D.
 */
#include "test_decomp_util.h"

static void
assert_all_boxes(const struct decomp_box *box, int p, uint32_t wx, uint32_t wy, uint32_t wz)
{
    for (int i = 0; i < p; i++) {
        assert_int_equal(box[i].hi[0] - box[i].lo[0], wx);
        assert_int_equal(box[i].hi[1] - box[i].lo[1], wy);
        assert_int_equal(box[i].hi[2] - box[i].lo[2], wz);
    }
}

static void
test_decomp_block_square_p_gives_equal_squares(void **state)
{
    (void)state;
    double eq[16];
    for (int i = 0; i < 16; i++)
        eq[i] = 1;
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    struct decomp_box box[16];
    int32_t *owner = td_place(&g, DECOMP_BLOCK, eq, 16, box);
    td_check_boxes(&g, owner, box, 16);
    assert_all_boxes(box, 16, 16, 16, 1);
    /* The thesis's lookup: one div and one mod per query, which holds for
     * this layout in id order down the columns of blocks. */
    for (uint32_t y = 0; y < 64; y++)
        for (uint32_t x = 0; x < 64; x++)
            assert_int_equal(owner[y * 64 + x], (int32_t)((x / 16) * 4 + y / 16));
    free(owner);
}

static void
test_decomp_block_ignores_speeds(void **state)
{
    (void)state;
    const double het[4] = { 8, 1, 1, 1 };
    struct decomp_grid g = td_grid2(40, 40, 0);
    struct decomp_box box[4];
    int32_t *owner = td_place(&g, DECOMP_BLOCK, het, 4, box);
    assert_all_boxes(box, 4, 20, 20, 1);
    free(owner);
}

static void
test_decomp_block_factors_any_p(void **state)
{
    (void)state;
    double eq[12];
    for (int i = 0; i < 12; i++)
        eq[i] = 1;
    struct decomp_box box[12];
    /* p = 8 on a square: 4 x 2, the larger factor across x (tie). */
    struct decomp_grid g = td_grid2(64, 64, 0);
    int32_t *owner = td_place(&g, DECOMP_BLOCK, eq, 8, box);
    assert_all_boxes(box, 8, 16, 32, 1);
    free(owner);
    /* p = 6 on a tall grid: 3 along y. */
    g = td_grid2(90, 40, 0);
    owner = td_place(&g, DECOMP_BLOCK, eq, 6, box);
    assert_all_boxes(box, 6, 20, 30, 1);
    free(owner);
    /* 3D, p = 12 = 3 x 2 x 2 with the 3 along the longest axis (z). */
    g = td_grid3(10, 10, 30, 0);
    owner = td_place(&g, DECOMP_BLOCK, eq, 12, box);
    td_check_boxes(&g, owner, box, 12);
    assert_all_boxes(box, 12, 5, 5, 10);
    free(owner);
}

static void
test_decomp_block_weighted_blocks_balance_weight(void **state)
{
    (void)state;
    /* The left half of the columns weighs 3: equal weight puts the cut at
     * column 12 of 32 (36 * 3 ... 12 * 3 = 36 = 12 + 8 * 3 ... see below). */
    struct decomp_grid g = td_grid2(8, 32, 0);
    double w[256];
    for (int c = 0; c < 256; c++)
        w[c] = c % 32 < 16 ? 3 : 1;
    g.weight = w;
    const double eq[2] = { 1, 1 };
    struct decomp_box box[2];
    int32_t *owner = td_place(&g, DECOMP_BLOCK, eq, 2, box);
    /* Row weight 16 * 3 + 16 = 64; half is 32, reached after 10.67 heavy
     * columns: the nearest column line is 11. */
    assert_int_equal(box[0].hi[0], 11);
    double load[2];
    assert_int_equal(decomp_loads(&g, owner, 2, load), 0);
    assert_true(fabs(load[0] - load[1]) <= 8 * 3);
    free(owner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_block_square_p_gives_equal_squares),
        cmocka_unit_test(test_decomp_block_ignores_speeds),
        cmocka_unit_test(test_decomp_block_factors_any_p),
        cmocka_unit_test(test_decomp_block_weighted_blocks_balance_weight),
    };
    return cmocka_run_group_tests_name("decomp_block", tests, NULL, NULL);
}
