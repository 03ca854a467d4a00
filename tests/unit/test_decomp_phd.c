/*
 * test_decomp_phd.c: PHD against the digest (seed 001 section 4.9,
 * requirements 17, 18, 19, 20).
 */
#include "test_decomp_util.h"

/* Group totals (sum of equal speeds) of a node's owner list, in list order. */
static int
group_sums(const struct decomp_tree *t, int ni, const double *speed, double *sums)
{
    const struct decomp_node *nd = &t->node[ni];
    int ng = 0;
    for (int i = 0; i < nd->count; i++) {
        double v = speed[t->order[nd->first + i]];
        if (i == 0 || v != speed[t->order[nd->first + i - 1]])
            sums[ng++] = 0;
        sums[ng - 1] += v;
    }
    return ng;
}

static void
assert_sets(const struct decomp_tree *t, int ni, const double *speed, const double *want, int nw)
{
    double got[16];
    int n = group_sums(t, ni, speed, got);
    assert_int_equal(n, nw);
    for (int i = 0; i < n; i++)
        assert_true(got[i] == want[i]);
}

static void
test_decomp_phd_fig23_groups_and_sets(void **state)
{
    (void)state;
    const double speed[] = { 4, 4, 3, 3, 3, 2, 2, 1, 1 };
    struct decomp_grid g = td_grid2(64, 64, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { DECOMP_PHD, 9, speed, 0, 0 };
    struct decomp_tree t;

    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    /* Groups 9 (3x3), 8 (2x4), 4 (2x2), 2 (2x1): sets {9,2} | {8,4}. */
    const struct decomp_node *root = &t.node[0];
    /* The root's list is left as its children use it: set 1, then set 2. */
    assert_sets(&t, 0, speed, (const double[]){ 9, 2, 8, 4 }, 4);
    assert_sets(&t, root->left, speed, (const double[]){ 9, 2 }, 2);
    assert_sets(&t, root->right, speed, (const double[]){ 8, 4 }, 2);
    assert_true(fabs(root->frac - 11.0 / 23) < 1e-15);
    const struct decomp_node *l = &t.node[root->left], *r = &t.node[root->right];
    assert_sets(&t, l->left, speed, (const double[]){ 9 }, 1);
    assert_sets(&t, l->right, speed, (const double[]){ 2 }, 1);
    assert_sets(&t, r->left, speed, (const double[]){ 8 }, 1);
    assert_sets(&t, r->right, speed, (const double[]){ 4 }, 1);
    /* The speed-3 group (k = 3, prime) splits 1 | 2. */
    const struct decomp_node *g3 = &t.node[l->left];
    assert_int_equal(t.node[g3->left].count, 1);
    assert_int_equal(t.node[g3->right].count, 2);
    decomp_tree_free(&t);
}

static void
test_decomp_phd_fig28_messages_and_items(void **state)
{
    (void)state;
    const double speed[] = { 4, 4, 4, 3, 3, 3 };
    double items;
    assert_int_equal(td_exact_messages(DECOMP_PHD, speed, 6, &items), 24);
    assert_true(fabs(items - 10.0) < 1e-6);   /* 10n data items */
}

static void
test_decomp_phd_composite_group_becomes_grid(void **state)
{
    (void)state;
    /* One group of 6 on a 120 x 60 grid (wider than tall): 3 x 2 blocks,
     * the factor 3 along the longer side. */
    const double speed[] = { 2, 2, 2, 2, 2, 2 };
    struct decomp_grid g = td_grid2(60, 120, 0);
    struct decomp_box box[6];
    int32_t *owner = td_place(&g, DECOMP_PHD, speed, 6, box);
    td_check_boxes(&g, owner, box, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(box[i].hi[0] - box[i].lo[0], 40);
        assert_int_equal(box[i].hi[1] - box[i].lo[1], 30);
    }
    free(owner);
}

static void
test_decomp_phd_3d_group_is_near_cubic(void **state)
{
    (void)state;
    double speed[12];
    for (int i = 0; i < 12; i++)
        speed[i] = 1;
    struct decomp_grid g = td_grid3(30, 20, 20, 0);
    struct decomp_box box[12];
    int32_t *owner = td_place(&g, DECOMP_PHD, speed, 12, box);
    td_check_boxes(&g, owner, box, 12);
    /* 12 = 3 x 2 x 2, the 3 along x (longest): 10 x 10 x 10 blocks. */
    for (int i = 0; i < 12; i++)
        for (int a = 0; a < 3; a++)
            assert_int_equal(box[i].hi[a] - box[i].lo[a], 10);
    free(owner);
}

static void
test_decomp_phd_never_exceeds_6p_minus_4(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0003;
    for (int trial = 0; trial < 300; trial++) {
        int p = td_range(&rng, 4, 14);
        double speed[14];
        for (int i = 0; i < p; i++)
            speed[i] = td_range(&rng, 1, 8);
        assert_true(td_exact_messages(DECOMP_PHD, speed, p, NULL) <= (uint64_t)(6 * p - 4));
        struct decomp_grid g = td_grid2((uint32_t)td_range(&rng, 16, 80),
                                        (uint32_t)td_range(&rng, 16, 80), DECOMP_PERIODIC_ALL);
        int32_t *owner = td_place(&g, DECOMP_PHD, speed, p, NULL);
        assert_true(td_messages(&g, owner, p) <= (uint64_t)(6 * p - 4));
        free(owner);
    }
}

static void
test_decomp_phd_group_tol_merges_near_speeds(void **state)
{
    (void)state;
    const double speed[] = { 10.0, 9.8, 9.7, 10.1 };
    struct decomp_grid g = td_grid2(64, 64, 0);
    struct decomp_spec s = { DECOMP_PHD, 4, speed, 0, 0.05 };
    struct decomp_tree t;

    /* Within 5 %: one group of 4, a 2 x 2 grid whose first cut peels a
     * column of two blocks. */
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_int_equal(t.node[t.node[0].left].count, 2);
    assert_int_equal(t.node[t.node[0].right].count, 2);
    decomp_tree_free(&t);
    /* Without the tolerance: four groups of one, split into sets. */
    s.group_tol = 0;
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_int_equal(t.nnodes, 7);
    decomp_tree_free(&t);
    s.group_tol = -0.1;
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), -EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_phd_fig23_groups_and_sets),
        cmocka_unit_test(test_decomp_phd_fig28_messages_and_items),
        cmocka_unit_test(test_decomp_phd_composite_group_becomes_grid),
        cmocka_unit_test(test_decomp_phd_3d_group_is_near_cubic),
        cmocka_unit_test(test_decomp_phd_never_exceeds_6p_minus_4),
        cmocka_unit_test(test_decomp_phd_group_tol_merges_near_speeds),
    };
    return cmocka_run_group_tests_name("decomp_phd", tests, NULL, NULL);
}
