/*
 * test_decomp_interleaved.c: interleaved rows (seed 001 section 4.4,
 * requirement 13).
 */
#include "test_decomp_util.h"

static void
row_owners(const struct decomp_grid *g, const int32_t *owner, int32_t *rows)
{
    for (uint32_t y = 0; y < g->dim[1]; y++)
        rows[y] = owner[(size_t)y * g->dim[0]];
}

static void
test_decomp_interleaved_thesis_pattern_4221(void **state)
{
    (void)state;
    const double speed[4] = { 4, 2, 2, 1 };
    const int32_t want[9] = { 0, 1, 2, 3, 0, 1, 2, 0, 0 };
    struct decomp_grid g = td_grid2(18, 10, DECOMP_PERIODIC_ALL);
    int32_t *owner = td_place(&g, DECOMP_INTERLEAVED, speed, 4, NULL);
    int32_t rows[18];
    row_owners(&g, owner, rows);
    for (int r = 0; r < 18; r++)
        assert_int_equal(rows[r], want[r % 9]);
    /* Whole rows: every cell of a row has the row's owner. */
    for (size_t c = 0; c < td_cells(&g); c++)
        assert_int_equal(owner[c], rows[c / 10]);
    free(owner);
}

static void
test_decomp_interleaved_pattern_deals_in_speed_order(void **state)
{
    (void)state;
    /* The same speeds given in another owner order: the fastest still
     * leads each cycle. */
    const double speed[4] = { 1, 2, 4, 2 };
    const int32_t want[9] = { 2, 1, 3, 0, 2, 1, 3, 2, 2 };
    struct decomp_grid g = td_grid2(9, 9, 0);
    int32_t *owner = td_place(&g, DECOMP_INTERLEAVED, speed, 4, NULL);
    int32_t rows[9];
    row_owners(&g, owner, rows);
    assert_memory_equal(rows, want, sizeof want);
    free(owner);
}

static void
test_decomp_interleaved_homogeneous_is_r_mod_p(void **state)
{
    (void)state;
    const double speed[3] = { 2.5, 2.5, 2.5 };
    struct decomp_grid g = td_grid2(30, 7, 0);
    int32_t *owner = td_place(&g, DECOMP_INTERLEAVED, speed, 3, NULL);
    int32_t rows[30];
    row_owners(&g, owner, rows);
    for (int r = 0; r < 30; r++)
        assert_int_equal(rows[r], r % 3);
    free(owner);
}

static void
test_decomp_interleaved_partial_period_stays_within_one_row(void **state)
{
    (void)state;
    /* 4096 rows = 455 periods of 9 and one row: the extra row goes to the
     * owner the caps allow, every count within one row of its share. */
    const double speed[4] = { 4, 2, 2, 1 };
    struct decomp_grid g = td_grid2(4096, 1, 0);
    int32_t *owner = td_place(&g, DECOMP_INTERLEAVED, speed, 4, NULL);
    int count[4] = { 0 };
    for (int r = 0; r < 4096; r++)
        count[owner[r]]++;
    for (int i = 0; i < 4; i++)
        assert_true(fabs(count[i] - 4096 * speed[i] / 9) < 1);
    free(owner);
    /* Non-integral speeds: the pattern spans the grid, shares still hold. */
    const double real[3] = { 1.7, 0.9, 3.1 };
    g = td_grid2(57, 3, 0);
    owner = td_place(&g, DECOMP_INTERLEAVED, real, 3, NULL);
    int c3[3] = { 0 };
    for (int r = 0; r < 57; r++)
        c3[owner[r * 3]]++;
    for (int i = 0; i < 3; i++)
        assert_true(fabs(c3[i] - 57 * real[i] / 5.7) < 1);
    free(owner);
}

/*
 * 17 rows at speeds (4,2,2,1): the caps are the shares of 17 rows, and the
 * second period runs out of room for owner 1 at row 14 and for owner 2 at
 * row 15.  A row whose pattern owner is full goes to the NEXT owner in the
 * pattern with room: row 14 (pattern 1, full) takes the pattern's next
 * entry, 2; row 15 (pattern 2, now full) the next, 0.  Skipping an entry
 * instead would give row 14 to owner 0.
 */
static void
test_decomp_interleaved_full_owner_passes_to_the_next_in_pattern(void **state)
{
    (void)state;
    const double speed[4] = { 4, 2, 2, 1 };
    const int32_t want[17] = { 0, 1, 2, 3, 0, 1, 2, 0, 0, 0, 1, 2, 3, 0, 2, 0, 0 };
    struct decomp_grid g = td_grid2(17, 3, 0);
    int32_t *owner = td_place(&g, DECOMP_INTERLEAVED, speed, 4, NULL);
    int32_t rows[17];
    row_owners(&g, owner, rows);
    assert_memory_equal(rows, want, sizeof want);
    free(owner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_interleaved_thesis_pattern_4221),
        cmocka_unit_test(test_decomp_interleaved_pattern_deals_in_speed_order),
        cmocka_unit_test(test_decomp_interleaved_homogeneous_is_r_mod_p),
        cmocka_unit_test(test_decomp_interleaved_partial_period_stays_within_one_row),
        cmocka_unit_test(test_decomp_interleaved_full_owner_passes_to_the_next_in_pattern),
    };
    return cmocka_run_group_tests_name("decomp_interleaved", tests, NULL, NULL);
}
