/*
 * test_decomp_brbd.c: BRBD against the digest (seed 001 section 4.7,
 * requirements 15, 18, 19, 20).
 */
#include "test_decomp_util.h"

/* The speeds of a node's owner list, in tree order. */
static void
node_speeds(const struct decomp_tree *t, int ni, const double *speed, double *out, int *n)
{
    const struct decomp_node *nd = &t->node[ni];
    for (int i = 0; i < nd->count; i++)
        out[i] = speed[t->order[nd->first + i]];
    *n = nd->count;
}

static void
assert_list(const struct decomp_tree *t, int ni, const double *speed, const double *want, int nw)
{
    double got[16];
    int n;
    node_speeds(t, ni, speed, got, &n);
    assert_int_equal(n, nw);
    for (int i = 0; i < n; i++)
        assert_true(got[i] == want[i]);
}

static void
test_decomp_brbd_fig17_cut_fractions_and_lists(void **state)
{
    (void)state;
    /* Owner ids deliberately not in speed order: BRBD sorts. */
    const double speed[] = { 3, 5, 2, 4, 4 };
    struct decomp_grid g = td_grid2(90, 90, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { DECOMP_BRBD, 5, speed, 0, 0 };
    struct decomp_tree t;

    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_int_equal(t.nnodes, 9);
    const struct decomp_node *root = &t.node[0];
    /* 13/18, vertical: the cut crosses x, dividing the columns. */
    assert_int_equal(root->axis, 0);
    assert_true(fabs(root->frac - 13.0 / 18) < 1e-15);
    assert_true(fabs(root->cut - 90 * 13.0 / 18) < 1e-9);
    assert_list(&t, root->left, speed, (const double[]){ 5, 4, 4 }, 3);
    assert_list(&t, root->right, speed, (const double[]){ 3, 2 }, 2);

    const struct decomp_node *l = &t.node[root->left];
    assert_int_equal(l->axis, 1);                      /* horizontal */
    assert_true(fabs(l->frac - 9.0 / 13) < 1e-15);
    assert_list(&t, l->left, speed, (const double[]){ 5, 4 }, 2);
    assert_list(&t, l->right, speed, (const double[]){ 4 }, 1);

    const struct decomp_node *ll = &t.node[l->left];
    assert_int_equal(ll->axis, 0);                     /* vertical again */
    assert_true(fabs(ll->frac - 5.0 / 9) < 1e-15);
    assert_list(&t, ll->left, speed, (const double[]){ 5 }, 1);
    assert_list(&t, ll->right, speed, (const double[]){ 4 }, 1);

    const struct decomp_node *r = &t.node[root->right];
    assert_int_equal(r->axis, 1);
    assert_true(fabs(r->frac - 3.0 / 5) < 1e-15);
    assert_list(&t, r->left, speed, (const double[]){ 3 }, 1);
    assert_list(&t, r->right, speed, (const double[]){ 2 }, 1);
    decomp_tree_free(&t);
}

static void
test_decomp_brbd_cell_mode_rounds_cuts_to_nearest_line(void **state)
{
    (void)state;
    const double speed[] = { 5, 4, 4, 3, 2 };
    struct decomp_grid g = td_grid2(90, 90, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { DECOMP_BRBD, 5, speed, 0, 0 };
    struct decomp_tree t;

    assert_int_equal(decomp_tree_build(&g, &s, 0, &t), 0);
    /* 90 * 13/18 = 65 exactly. */
    assert_true(t.node[0].cut == 65);
    /* Height 90 * 9/13 = 62.3 -> 62 rows. */
    assert_true(t.node[t.node[0].left].cut == 62);
    decomp_tree_free(&t);
}

static void
test_decomp_brbd_fig28_message_count(void **state)
{
    (void)state;
    const double speed[] = { 4, 4, 4, 3, 3, 3 };
    double items;
    assert_int_equal(td_exact_messages(DECOMP_BRBD, speed, 6, &items), 28);
    assert_true(fabs(items - 32.0 / 3) < 1e-6);  /* 10.67n, digest [D] */
}

static void
test_decomp_brbd_never_exceeds_6p_minus_4(void **state)
{
    (void)state;
    uint64_t rng = 0x5eed0001;
    int reached = 0;
    for (int trial = 0; trial < 300; trial++) {
        int p = td_range(&rng, 4, 14);
        double speed[14];
        for (int i = 0; i < p; i++)
            speed[i] = td_range(&rng, 1, 8);
        uint64_t exact = td_exact_messages(DECOMP_BRBD, speed, p, NULL);
        assert_true(exact <= (uint64_t)(6 * p - 4));
        reached += exact == (uint64_t)(6 * p - 4);
        /* And on a real grid, where rounding can merge or split cuts. */
        struct decomp_grid g = td_grid2((uint32_t)td_range(&rng, 16, 80),
                                        (uint32_t)td_range(&rng, 16, 80), DECOMP_PERIODIC_ALL);
        int32_t *owner = td_place(&g, DECOMP_BRBD, speed, p, NULL);
        assert_true(td_messages(&g, owner, p) <= (uint64_t)(6 * p - 4));
        free(owner);
    }
    /* The bound is tight: some layouts meet it (digest [D]). */
    assert_true(reached > 0);
}

static void
test_decomp_brbd_3d_cycles_axes(void **state)
{
    (void)state;
    const double speed[] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    struct decomp_grid g = td_grid3(16, 16, 16, 0);
    struct decomp_spec s = { DECOMP_BRBD, 8, speed, 0, 0 };
    struct decomp_tree t;

    assert_int_equal(decomp_tree_build(&g, &s, 0, &t), 0);
    assert_int_equal(t.node[0].axis, 0);
    assert_int_equal(t.node[t.node[0].left].axis, 1);
    assert_int_equal(t.node[t.node[t.node[0].left].left].axis, 2);
    decomp_tree_free(&t);
    /* Eight equal owners on a cube: eight 8x8x8 octants. */
    struct decomp_box box[8];
    int32_t *owner = td_place(&g, DECOMP_BRBD, speed, 8, box);
    td_check_boxes(&g, owner, box, 8);
    for (int i = 0; i < 8; i++)
        for (int a = 0; a < 3; a++)
            assert_int_equal(box[i].hi[a] - box[i].lo[a], 8);
    free(owner);
}

static void
test_decomp_brbd_skips_axis_one_cell_thick(void **state)
{
    (void)state;
    const double speed[] = { 1, 1, 1, 1 };
    /* One row: the horizontal cuts BRBD wants are impossible. */
    struct decomp_grid g = td_grid2(1, 40, 0);
    struct decomp_box box[4];
    int32_t *owner = td_place(&g, DECOMP_BRBD, speed, 4, box);
    td_check_boxes(&g, owner, box, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(box[i].hi[0] - box[i].lo[0], 10);
    free(owner);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_brbd_fig17_cut_fractions_and_lists),
        cmocka_unit_test(test_decomp_brbd_cell_mode_rounds_cuts_to_nearest_line),
        cmocka_unit_test(test_decomp_brbd_fig28_message_count),
        cmocka_unit_test(test_decomp_brbd_never_exceeds_6p_minus_4),
        cmocka_unit_test(test_decomp_brbd_3d_cycles_axes),
        cmocka_unit_test(test_decomp_brbd_skips_axis_one_cell_thick),
    };
    return cmocka_run_group_tests_name("decomp_brbd", tests, NULL, NULL);
}
