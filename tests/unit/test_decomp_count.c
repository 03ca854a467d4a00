/*
 * test_decomp_count.c: message and byte counting (seed 001 requirement 7,
 * section 5.6) and Table 2 for every method, homogeneous and heterogeneous.
 */
#include "test_decomp_util.h"

enum { W, E, N, S, D, U };

static const struct decomp_link *
find_link(const struct decomp_counts *c, int from, int dir, int to)
{
    for (size_t l = 0; l < c->nlinks; l++)
        if (c->link[l].from == from && c->link[l].dir == dir && c->link[l].to == to)
            return &c->link[l];
    return NULL;
}

static void
test_decomp_count_torus_corners_wrap(void **state)
{
    (void)state;
    /* 4 x 4 torus in quadrants: 0 1 / 2 3. Cell (0,0)'s west neighbour is
     * (0,3), owned by 1; its north neighbour is (3,0), owned by 2. */
    struct decomp_grid g = td_grid2(4, 4, DECOMP_PERIODIC_ALL);
    int32_t owner[16];
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            owner[y * 4 + x] = (y >= 2) * 2 + (x >= 2);
    struct decomp_counts c;
    assert_int_equal(decomp_count(&g, owner, 4, &c), 0);
    /* Each owner: one message per direction (the wrap neighbour is the same
     * owner as the interior one but counts in its own direction). */
    assert_int_equal(c.nlinks, 16);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++) {
            assert_int_equal(c.msgs[i * 4 + k], 1);
            assert_true(c.faces[i * 4 + k] == 2);
        }
    assert_non_null(find_link(&c, 0, W, 1));
    assert_non_null(find_link(&c, 0, E, 1));
    assert_non_null(find_link(&c, 0, N, 2));
    assert_non_null(find_link(&c, 0, S, 2));
    assert_null(find_link(&c, 0, E, 3));
    /* Links are sorted by (from, dir, to). */
    for (size_t l = 1; l < c.nlinks; l++) {
        const struct decomp_link *a = &c.link[l - 1], *b = &c.link[l];
        assert_true(a->from < b->from || (a->from == b->from && a->dir <= b->dir));
    }
    decomp_counts_free(&c);

    /* Without wrap the corner has no west or north neighbour. */
    g.periodic = 0;
    assert_int_equal(decomp_count(&g, owner, 4, &c), 0);
    assert_int_equal(c.nlinks, 8);
    assert_null(find_link(&c, 0, W, 1));
    assert_non_null(find_link(&c, 0, E, 1));
    decomp_counts_free(&c);
}

static void
test_decomp_count_3d_seven_point(void **state)
{
    (void)state;
    struct decomp_grid g = td_grid3(4, 4, 4, DECOMP_PERIODIC_ALL);
    int32_t owner[64];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                owner[(z * 4 + y) * 4 + x] = (z >= 2) * 4 + (y >= 2) * 2 + (x >= 2);
    struct decomp_counts c;
    assert_int_equal(decomp_count(&g, owner, 8, &c), 0);
    assert_int_equal(c.ndirs, 6);
    assert_int_equal(c.nlinks, 48);            /* 8 octants x 6 directions */
    assert_non_null(find_link(&c, 0, D, 4));
    assert_non_null(find_link(&c, 0, U, 4));
    assert_true(find_link(&c, 0, U, 4)->faces == 4);
    decomp_counts_free(&c);
    g.periodic = 0;
    assert_int_equal(decomp_count(&g, owner, 8, &c), 0);
    assert_int_equal(c.nlinks, 24);
    decomp_counts_free(&c);
}

static void
test_decomp_count_rejects_bad_owner_values(void **state)
{
    (void)state;
    struct decomp_grid g = td_grid2(2, 2, 0);
    int32_t owner[4] = { 0, 1, 2, 0 };
    struct decomp_counts c;
    assert_int_equal(decomp_count(&g, owner, 2, &c), -EINVAL);
    owner[2] = -1;
    assert_int_equal(decomp_count(&g, owner, 2, &c), -EINVAL);
    assert_int_equal(decomp_count(&g, NULL, 2, &c), -EINVAL);
    struct decomp_box box[2] = { { { 0, 0, 0 }, { 3, 2, 1 } }, { { 0, 0, 0 }, { 0, 0, 0 } } };
    assert_int_equal(decomp_count_boxes(&g, box, 2, &c), -EINVAL);
    decomp_counts_free(&c);   /* zeroed by the failed call: safe */
}

/* The two counters must agree link for link. */
static void
assert_same_counts(const struct decomp_counts *a, const struct decomp_counts *b)
{
    assert_int_equal(a->nlinks, b->nlinks);
    for (size_t l = 0; l < a->nlinks; l++) {
        assert_int_equal(a->link[l].from, b->link[l].from);
        assert_int_equal(a->link[l].to, b->link[l].to);
        assert_int_equal(a->link[l].dir, b->link[l].dir);
        assert_true(a->link[l].faces == b->link[l].faces);
    }
}

static void
test_decomp_count_boxes_agree_with_cells(void **state)
{
    (void)state;
    uint64_t rng = 0xc0de0001;
    const enum decomp_method ms[] = { DECOMP_ROW, DECOMP_BLOCK, DECOMP_BRBD, DECOMP_FBRD,
                                      DECOMP_PHD, DECOMP_ORB };
    for (int trial = 0; trial < 240; trial++) {
        enum decomp_method m = ms[trial % 6];
        bool three = td_rand(&rng) & 1;
        struct decomp_grid g = three ? td_grid3((uint32_t)td_range(&rng, 1, 14),
                                                (uint32_t)td_range(&rng, 1, 14),
                                                (uint32_t)td_range(&rng, 1, 14), 0)
                                     : td_grid2((uint32_t)td_range(&rng, 1, 40),
                                                (uint32_t)td_range(&rng, 1, 40), 0);
        g.periodic = (unsigned)(td_rand(&rng) & 7) & (three ? 7u : 3u);
        int p = td_range(&rng, 1, 12);
        if ((size_t)p > td_cells(&g))
            p = (int)td_cells(&g);
        double speed[12];
        for (int i = 0; i < p; i++)
            speed[i] = td_range(&rng, 1, 9);
        struct decomp_spec s = { m, p, speed, 0, 0 };
        int32_t *owner = malloc(td_cells(&g) * sizeof *owner);
        struct decomp_box box[12];
        int rc = decomp_place(&g, &s, owner, box);
        if (rc == -ERANGE) {     /* row or block on a grid too thin */
            free(owner);
            continue;
        }
        assert_int_equal(rc, 0);
        struct decomp_counts a, b;
        assert_int_equal(decomp_count(&g, owner, p, &a), 0);
        assert_int_equal(decomp_count_boxes(&g, box, p, &b), 0);
        assert_same_counts(&a, &b);
        decomp_counts_free(&a);
        decomp_counts_free(&b);
        free(owner);
    }
}

/* Table 2: messages per iteration for the 5-point stencil on the torus. */
static uint64_t
msgs(enum decomp_method m, uint32_t rows, uint32_t cols, const double *speed, int p)
{
    struct decomp_grid g = td_grid2(rows, cols, DECOMP_PERIODIC_ALL);
    int32_t *owner = td_place(&g, m, speed, p, NULL);
    uint64_t n = td_messages(&g, owner, p);
    free(owner);
    return n;
}

static void
test_decomp_count_table2_homogeneous(void **state)
{
    (void)state;
    double eq[16];
    for (int i = 0; i < 16; i++)
        eq[i] = 1;
    for (int p = 4; p <= 16; p += 4) {
        /* Scatter: everyone talks to everyone in every direction. */
        assert_int_equal(msgs(DECOMP_SCATTER, 64, 64, eq, p), 4 * p * (p - 1));
        /* Interleaved (p divides m: 96 rows) and row: 2p. */
        assert_int_equal(msgs(DECOMP_INTERLEAVED, 96, 64, eq, p), 2 * p);
        assert_int_equal(msgs(DECOMP_ROW, 64, 64, eq, p), 2 * p);
        /* Point: 6p - 4 once every range splits a row (65 rows of 64). */
        assert_int_equal(msgs(DECOMP_POINT, 65, 64, eq, p), 6 * p - 4);
    }
    /* Block (p a perfect square): 4p. */
    assert_int_equal(msgs(DECOMP_BLOCK, 64, 64, eq, 4), 16);
    assert_int_equal(msgs(DECOMP_BLOCK, 63, 63, eq, 9), 36);
    assert_int_equal(msgs(DECOMP_BLOCK, 64, 64, eq, 16), 64);
    /* Point reduces to row when p divides m. */
    assert_int_equal(msgs(DECOMP_POINT, 64, 64, eq, 8), 16);
}

static void
test_decomp_count_table2_heterogeneous(void **state)
{
    (void)state;
    const double het[8] = { 6, 4, 4, 3, 3, 3, 2, 1 };
    int p = 8;
    assert_int_equal(msgs(DECOMP_SCATTER, 64, 64, het, p), 4 * p * (p - 1));
    assert_int_equal(msgs(DECOMP_ROW, 64, 64, het, p), 2 * p);
    assert_int_equal(msgs(DECOMP_POINT, 64, 64, het, p), 6 * p - 4);
    assert_true(msgs(DECOMP_INTERLEAVED, 64, 64, het, p) <= (uint64_t)(4 * (p - 1)));
    assert_true(msgs(DECOMP_BRBD, 64, 64, het, p) <= (uint64_t)(6 * p - 4));
    assert_true(msgs(DECOMP_FBRD, 64, 64, het, p) <= (uint64_t)(6 * p - 4));
    assert_true(msgs(DECOMP_PHD, 64, 64, het, p) <= (uint64_t)(6 * p - 4));
    assert_true(msgs(DECOMP_ORB, 64, 64, het, p) <= (uint64_t)(6 * p - 4));
    /* The thesis's interleaving example (4,2,2,1) over whole periods: the
     * fastest talks north to two others, 10 messages <= 4(p - 1) = 12. */
    const double four[4] = { 4, 2, 2, 1 };
    assert_int_equal(msgs(DECOMP_INTERLEAVED, 72, 64, four, 4), 10);
    /* Over random speed sets the worst cases hold. Interleaved's 4(p - 1)
     * is the thesis's setting, a whole number of periods; a partial last
     * period adds at most the seams around it (4 more messages). */
    uint64_t rng = 0xc0de0002;
    for (int trial = 0; trial < 200; trial++) {
        int q = td_range(&rng, 2, 10), period = 0;
        double sp[10];
        for (int i = 0; i < q; i++) {
            sp[i] = td_range(&rng, 1, 8);
            period += (int)sp[i];
        }
        uint32_t rows = (uint32_t)(period * 3);
        assert_true(msgs(DECOMP_INTERLEAVED, rows, rows < 40 ? rows : 40, sp, q) <=
                    (uint64_t)(4 * (q - 1)));
        assert_true(msgs(DECOMP_INTERLEAVED, 90, 40, sp, q) <= (uint64_t)(4 * (q - 1) + 4));
        assert_true(msgs(DECOMP_SCATTER, 20, 20, sp, q) <= (uint64_t)(4 * q * (q - 1)));
        assert_true(msgs(DECOMP_ROW, 90, 40, sp, q) <= (uint64_t)(2 * q));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decomp_count_torus_corners_wrap),
        cmocka_unit_test(test_decomp_count_3d_seven_point),
        cmocka_unit_test(test_decomp_count_rejects_bad_owner_values),
        cmocka_unit_test(test_decomp_count_boxes_agree_with_cells),
        cmocka_unit_test(test_decomp_count_table2_homogeneous),
        cmocka_unit_test(test_decomp_count_table2_heterogeneous),
    };
    return cmocka_run_group_tests_name("decomp_count", tests, NULL, NULL);
}
