/*
 * test_decomp_props.c: properties every method keeps over random inputs
 * (hundreds of fixed-seed cases, 2D and 3D, with and without wrap and
 * weights): every cell owned exactly once, shares within the method's
 * granularity of W * s_i / S, boxes disjoint and covering, and the same
 * output for the same input.
 */
#include "test_decomp_util.h"

struct tcase {
    struct decomp_grid g;
    double *weight;
    double speed[16];
    int p;
};

static void
make_case(uint64_t *rng, struct tcase *tc, bool weighted)
{
    bool three = td_rand(rng) & 1;
    tc->g = three ? td_grid3((uint32_t)td_range(rng, 1, 12), (uint32_t)td_range(rng, 1, 12),
                             (uint32_t)td_range(rng, 1, 12), 0)
                  : td_grid2((uint32_t)td_range(rng, 1, 40), (uint32_t)td_range(rng, 1, 40), 0);
    tc->g.periodic = (unsigned)(td_rand(rng) & (three ? 7u : 3u));
    size_t n = td_cells(&tc->g);
    tc->p = td_range(rng, 1, 16);
    if ((size_t)tc->p > n)
        tc->p = (int)n;
    /* Integral speeds half the time (the thesis's examples), measured-like
     * reals the other half. */
    bool integral = td_rand(rng) & 1;
    for (int i = 0; i < tc->p; i++)
        tc->speed[i] = integral ? td_range(rng, 1, 8)
                                : 0.25 + (double)(td_rand(rng) % 10000) / 1000.0;
    tc->weight = NULL;
    if (weighted) {
        tc->weight = malloc(n * sizeof *tc->weight);
        assert_non_null(tc->weight);
        for (size_t c = 0; c < n; c++)
            /* Some empty quanta, most between 0.5 and 3. */
            tc->weight[c] = td_rand(rng) % 8 == 0 ? 0 : 0.5 + (double)(td_rand(rng) % 2500) / 1000;
        tc->weight[0] = 1;
    }
    tc->g.weight = tc->weight;
}

static double
cell_w(const struct decomp_grid *g, size_t c)
{
    return g->weight ? g->weight[c] : 1.0;
}

/* Weight of the heaviest slab across axis a of the box [lo, hi). */
static double
max_slab(const struct decomp_grid *g, const double *lo, const double *hi, int a)
{
    double best = 0;
    for (uint32_t k = (uint32_t)lo[a]; k < (uint32_t)hi[a]; k++) {
        double sum = 0;
        uint32_t l[3], h[3];
        for (int b = 0; b < 3; b++) {
            l[b] = (uint32_t)lo[b];
            h[b] = (uint32_t)hi[b];
        }
        l[a] = k;
        h[a] = k + 1;
        for (uint32_t z = l[2]; z < h[2]; z++)
            for (uint32_t y = l[1]; y < h[1]; y++)
                for (uint32_t x = l[0]; x < h[0]; x++)
                    sum += cell_w(g, x + (size_t)g->dim[0] * (y + (size_t)g->dim[1] * z));
        if (sum > best)
            best = sum;
    }
    return best;
}

/* Tolerance of each owner in a recursive method: half the heaviest slab of
 * every cut on its path ("one row or column per cut"), recomputed here from
 * the regions rather than trusted from the library. */
static void
tree_tolerance(const struct decomp_grid *g, const struct decomp_tree *t, double *tol)
{
    double *acc = calloc((size_t)t->nnodes, sizeof *acc);
    assert_non_null(acc);
    for (int i = 0; i < t->nnodes; i++) {
        const struct decomp_node *nd = &t->node[i];
        if (nd->left < 0) {
            tol[t->order[nd->first]] = acc[i];
            continue;
        }
        double gw = max_slab(g, nd->lo, nd->hi, nd->axis);
        /* The library reports the same granule. */
        assert_true(fabs(gw - nd->granule) <= 1e-9 * (1 + gw));
        acc[nd->left] = acc[nd->right] = acc[i] + gw / 2;
    }
    free(acc);
}

static void
check_method(const struct tcase *tc, enum decomp_method m)
{
    const struct decomp_grid *g = &tc->g;
    int p = tc->p;
    size_t n = td_cells(g);
    struct decomp_spec s = { m, p, tc->speed, 42, 0 };
    int32_t *owner = malloc(n * sizeof *owner), *again = malloc(n * sizeof *again);
    struct decomp_box box[16], box2[16];
    assert_non_null(owner);
    assert_non_null(again);
    for (size_t c = 0; c < n; c++)
        owner[c] = again[c] = -1;

    int rc = decomp_place(g, &s, owner, box);
    if (rc == -ERANGE) {
        /* Only methods with a structural minimum may refuse. */
        assert_true(m == DECOMP_ROW || m == DECOMP_INTERLEAVED || m == DECOMP_BLOCK);
        free(owner);
        free(again);
        return;
    }
    assert_int_equal(rc, 0);

    /* Every cell owned exactly once, by a valid owner. */
    for (size_t c = 0; c < n; c++)
        assert_true(owner[c] >= 0 && owner[c] < p);
    /* Deterministic. */
    assert_int_equal(decomp_place(g, &s, again, box2), 0);
    assert_memory_equal(owner, again, n * sizeof *owner);
    if (decomp_method_has_boxes(m)) {
        assert_memory_equal(box, box2, (size_t)p * sizeof *box);
        td_check_boxes(g, owner, box, p);
    }

    /* Shares. */
    double load[16], target[16], tol[16], W = 0, S = 0, wmax = 0;
    assert_int_equal(decomp_loads(g, owner, p, load), 0);
    for (size_t c = 0; c < n; c++) {
        W += cell_w(g, c);
        if (cell_w(g, c) > wmax)
            wmax = cell_w(g, c);
    }
    for (int i = 0; i < p; i++)
        S += tc->speed[i];
    for (int i = 0; i < p; i++)
        target[i] = m == DECOMP_BLOCK ? W / p : W * tc->speed[i] / S;

    switch (m) {
    case DECOMP_POINT:
    case DECOMP_HILBERT:
    case DECOMP_SCATTER:
        for (int i = 0; i < p; i++)
            tol[i] = wmax;
        break;
    case DECOMP_ROW: {
        double lo[3] = { 0, 0, 0 }, hi[3] = { g->dim[0], g->dim[1], g->dim[2] }, sl = 0;
        for (int a = 0; a < g->ndim; a++)
            sl = fmax(sl, max_slab(g, lo, hi, a));
        for (int i = 0; i < p; i++)
            tol[i] = sl;
        break;
    }
    case DECOMP_INTERLEAVED: {
        /* Whole rows by count, weights aside: within one row. */
        int a = g->ndim - 1;
        for (int b = g->ndim - 2; b >= 0; b--)
            if (g->dim[b] > g->dim[a])
                a = b;
        double cross = (double)n / g->dim[a];
        for (int i = 0; i < p; i++) {
            double cells = 0;
            for (size_t c = 0; c < n; c++)
                cells += owner[c] == i;
            assert_true(fabs(cells / cross - g->dim[a] * tc->speed[i] / S) < 1);
        }
        free(owner);
        free(again);
        return;
    }
    default: {
        struct decomp_tree t;
        assert_int_equal(decomp_tree_build(g, &s, 0, &t), 0);
        tree_tolerance(g, &t, tol);
        decomp_tree_free(&t);
        break;
    }
    }
    for (int i = 0; i < p; i++)
        if (fabs(load[i] - target[i]) > tol[i] + 1e-9 * W)
            fail_msg("%s: owner %d load %g target %g tolerance %g", decomp_method_name(m), i,
                     load[i], target[i], tol[i]);
    free(owner);
    free(again);
}

static void
run_cases(uint64_t seed, bool weighted, int ncases)
{
    uint64_t rng = seed;
    for (int k = 0; k < ncases; k++) {
        struct tcase tc;
        make_case(&rng, &tc, weighted);
        for (int m = 0; m < DECOMP_NMETHODS; m++)
            check_method(&tc, (enum decomp_method)m);
        free(tc.weight);
    }
}

static void
test_decomp_props_unweighted_random_layouts(void **state)
{
    (void)state;
    run_cases(0xfeed0001, false, 300);
}

static void
test_decomp_props_weighted_random_layouts(void **state)
{
    (void)state;
    run_cases(0xfeed0002, true, 300);
}

static void
test_decomp_props_one_owner_takes_everything(void **state)
{
    (void)state;
    const double one = 3.5;
    struct decomp_grid g = td_grid3(5, 6, 7, DECOMP_PERIODIC_ALL);
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        struct decomp_box box;
        int32_t *owner = td_place(&g, (enum decomp_method)m, &one, 1, &box);
        for (size_t c = 0; c < td_cells(&g); c++)
            assert_int_equal(owner[c], 0);
        assert_int_equal(td_messages(&g, owner, 1), 0);
        free(owner);
    }
}

static void
test_decomp_props_owners_equal_to_cells(void **state)
{
    (void)state;
    /* As many owners as cells: every method still owns each cell once. */
    double speed[12];
    for (int i = 0; i < 12; i++)
        speed[i] = 1;
    struct decomp_grid g = td_grid2(3, 4, 0);
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        struct decomp_spec s = { (enum decomp_method)m, 12, speed, 7, 0 };
        int32_t owner[12];
        int rc = decomp_place(&g, &s, owner, NULL);
        if (rc == -ERANGE)
            continue;
        assert_int_equal(rc, 0);
        int seen[12] = { 0 };
        for (int c = 0; c < 12; c++) {
            assert_true(owner[c] >= 0 && owner[c] < 12);
            seen[owner[c]]++;
        }
        /* Methods that cut cell by cell give one each; recursive cuts round
         * by half a slab and may leave an owner empty (documented). */
        if (m == DECOMP_POINT || m == DECOMP_HILBERT || m == DECOMP_SCATTER)
            for (int i = 0; i < 12; i++)
                assert_int_equal(seen[i], 1);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_props_unweighted_random_layouts),
        cmocka_unit_test(test_decomp_props_weighted_random_layouts),
        cmocka_unit_test(test_decomp_props_one_owner_takes_everything),
        cmocka_unit_test(test_decomp_props_owners_equal_to_cells),
    };
    return cmocka_run_group_tests_name("decomp_props", tests, NULL, NULL);
}
