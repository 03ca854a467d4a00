/*
 * test_decomp_hilbert.c: the Hilbert order (2D and 3D) and contiguous point
 * along it (seed 000's quanta order).
 */
#include "test_decomp_util.h"
#include "decomp_int.h"

static void
assert_permutation(const uint32_t *order, size_t n)
{
    char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t r = 0; r < n; r++) {
        assert_true(order[r] < n);
        assert_false(seen[order[r]]);
        seen[order[r]] = 1;
    }
    free(seen);
}

static void
assert_unit_steps(const struct decomp_grid *g, const uint32_t *order)
{
    size_t n = td_cells(g);
    for (size_t r = 1; r < n; r++) {
        long a = order[r - 1], b = order[r];
        long ax = a % g->dim[0], bx = b % g->dim[0];
        long ay = a / g->dim[0] % g->dim[1], by = b / g->dim[0] % g->dim[1];
        long az = a / g->dim[0] / g->dim[1], bz = b / g->dim[0] / g->dim[1];
        assert_int_equal(labs(ax - bx) + labs(ay - by) + labs(az - bz), 1);
    }
}

static void
test_decomp_hilbert_power_of_two_curves_take_unit_steps(void **state)
{
    (void)state;
    struct decomp_grid grids[] = { td_grid2(8, 8, 0), td_grid2(32, 32, 0),
                                   td_grid3(4, 4, 4, 0), td_grid3(16, 16, 16, 0) };
    for (int i = 0; i < 4; i++) {
        size_t n = td_cells(&grids[i]);
        uint32_t *order = malloc(n * sizeof *order);
        assert_int_equal(decomp_hilbert_order(&grids[i], order), 0);
        assert_permutation(order, n);
        assert_unit_steps(&grids[i], order);
        assert_int_equal(order[0], 0);      /* the curve starts at the origin */
        free(order);
    }
}

static void
test_decomp_hilbert_walk_and_sort_agree(void **state)
{
    (void)state;
    struct decomp_grid grids[] = { td_grid2(5, 7, 0), td_grid2(33, 2, 0),
                                   td_grid3(3, 5, 9, 0), td_grid3(17, 2, 2, 0) };
    for (int i = 0; i < 4; i++) {
        size_t n = td_cells(&grids[i]);
        uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        assert_int_equal(decomp__hilbert_order_mode(&grids[i], a, 1), 0);
        assert_int_equal(decomp__hilbert_order_mode(&grids[i], b, 0), 0);
        assert_permutation(a, n);
        assert_memory_equal(a, b, n * sizeof *a);
        free(a);
        free(b);
    }
}

static void
test_decomp_hilbert_ranges_follow_the_curve(void **state)
{
    (void)state;
    const double speed[4] = { 1, 2, 3, 2 };
    struct decomp_grid g = td_grid3(8, 8, 8, 0);
    size_t n = td_cells(&g);
    uint32_t *order = malloc(n * sizeof *order);
    assert_int_equal(decomp_hilbert_order(&g, order), 0);
    int32_t *owner = td_place(&g, DECOMP_HILBERT, speed, 4, NULL);
    size_t count[4] = { 0 };
    for (size_t r = 0; r < n; r++) {
        if (r > 0)
            assert_true(owner[order[r]] >= owner[order[r - 1]]);
        count[owner[order[r]]]++;
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(count[i], 512 * speed[i] / 8);
    /* Curve pieces are compact: 4 owners on a non-periodic cube stay well
     * below the all-pairs count. */
    assert_true(td_messages(&g, owner, 4) <= 4 * 3 * 2);
    free(owner);
    free(order);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_hilbert_power_of_two_curves_take_unit_steps),
        cmocka_unit_test(test_decomp_hilbert_walk_and_sort_agree),
        cmocka_unit_test(test_decomp_hilbert_ranges_follow_the_curve),
    };
    return cmocka_run_group_tests_name("decomp_hilbert", tests, NULL, NULL);
}
