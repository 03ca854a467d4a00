/*
 * test_decomp_fbrd.c: FBRD against the digest (seed 001 section 4.8,
 * requirements 16, 18, 19, 20).
 */
#include "test_decomp_util.h"

static void
assert_list(const struct decomp_tree *t, int ni, const double *speed, const double *want, int nw)
{
    const struct decomp_node *nd = &t->node[ni];
    assert_int_equal(nd->count, nw);
    for (int i = 0; i < nw; i++)
        assert_true(speed[t->order[nd->first + i]] == want[i]);
}

static void
test_decomp_fbrd_fig21_fair_split(void **state)
{
    (void)state;
    const double speed[] = { 2, 3, 3, 2, 3 };
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { DECOMP_FBRD, 5, speed, 0, 0 };
    struct decomp_tree t;

    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    const struct decomp_node *root = &t.node[0];
    /* (3,3,3,2,2) -> (3,3) | (3,2,2): alternation stops before 8 > 6.5. */
    assert_list(&t, root->left, speed, (const double[]){ 3, 3 }, 2);
    assert_list(&t, root->right, speed, (const double[]){ 3, 2, 2 }, 3);
    assert_true(fabs(root->frac - 6.0 / 13) < 1e-15);
    assert_int_equal(root->axis, 0);     /* square grid: vertical first */
    /* (3,2,2) -> (3) | (2,2). */
    const struct decomp_node *r = &t.node[root->right];
    assert_list(&t, r->left, speed, (const double[]){ 3 }, 1);
    assert_list(&t, r->right, speed, (const double[]){ 2, 2 }, 2);
    /* The right region is 7/13 wide and full height: the cut crosses y. */
    assert_int_equal(r->axis, 1);
    decomp_tree_free(&t);
}

static void
test_decomp_fbrd_cuts_across_longest_side(void **state)
{
    (void)state;
    const double speed[] = { 1, 1 };
    struct decomp_grid g = td_grid2(100, 10, 0);   /* tall: 100 rows, 10 columns */
    struct decomp_box box[2];
    int32_t *owner = td_place(&g, DECOMP_FBRD, speed, 2, box);
    assert_int_equal(box[0].hi[1] - box[0].lo[1], 50);
    assert_int_equal(box[0].hi[0] - box[0].lo[0], 10);
    free(owner);
}

static void
test_decomp_fbrd_fig28_message_count(void **state)
{
    (void)state;
    const double speed[] = { 4, 4, 4, 3, 3, 3 };
    double items;
    assert_int_equal(td_exact_messages(DECOMP_FBRD, speed, 6, &items), 32);
    assert_true(fabs(items - 10.0) < 1e-6);
}

static void
test_decomp_fbrd_never_exceeds_6p_minus_4(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0002;
    for (int trial = 0; trial < 300; trial++) {
        int p = td_range(&rng, 4, 14);
        double speed[14];
        for (int i = 0; i < p; i++)
            speed[i] = td_range(&rng, 1, 8);
        assert_true(td_exact_messages(DECOMP_FBRD, speed, p, NULL) <= (uint64_t)(6 * p - 4));
        struct decomp_grid g = td_grid2((uint32_t)td_range(&rng, 16, 80),
                                        (uint32_t)td_range(&rng, 16, 80), DECOMP_PERIODIC_ALL);
        int32_t *owner = td_place(&g, DECOMP_FBRD, speed, p, NULL);
        assert_true(td_messages(&g, owner, p) <= (uint64_t)(6 * p - 4));
        free(owner);
    }
}

static void
test_decomp_fbrd_dominant_owner_still_splits(void **state)
{
    (void)state;
    /* 100 > half of 103: alternation stops at once, the rest by totals. */
    const double speed[] = { 1, 100, 1, 1 };
    struct decomp_grid g = td_grid2(64, 64, 0);
    struct decomp_spec s = { DECOMP_FBRD, 4, speed, 0, 0 };
    struct decomp_tree t;
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_list(&t, t.node[0].left, speed, (const double[]){ 100 }, 1);
    assert_list(&t, t.node[0].right, speed, (const double[]){ 1, 1, 1 }, 3);
    decomp_tree_free(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_fbrd_fig21_fair_split),
        cmocka_unit_test(test_decomp_fbrd_cuts_across_longest_side),
        cmocka_unit_test(test_decomp_fbrd_fig28_message_count),
        cmocka_unit_test(test_decomp_fbrd_never_exceeds_6p_minus_4),
        cmocka_unit_test(test_decomp_fbrd_dominant_owner_still_splits),
    };
    return cmocka_run_group_tests_name("decomp_fbrd", tests, NULL, NULL);
}
