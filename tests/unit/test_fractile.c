/*
 * test_fractile.c - Fractiling's scheduler for farms (liq_fractile.c):
 * Factoring's decreasing chunks weighted by rate, the minimum chunk, own
 * tile first and the largest run after, workers that leave and come back,
 * work given back, static blocks and self-scheduling, and the Morton walk.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "liq_fractile.h"

/* Ask round-robin until nothing is left; every position still to hand out
 * is handed out exactly once. */
static void
drain_all(struct liq_fractile *f, uint64_t n, int nworkers)
{
    char *seen = calloc((size_t)n, 1);
    uint64_t got = 0, want = liq_fractile_left(f);
    int idle = 0;

    assert_non_null(seen);
    for (int w = 0; idle < nworkers; w = (w + 1) % nworkers) {
        struct liq_fractile_chunk c;

        if (!liq_fractile_next(f, w, &c)) {
            idle++;
            continue;
        }
        idle = 0;
        assert_true(c.lo < c.hi && c.hi <= n);
        for (uint64_t p = c.lo; p < c.hi; p++) {
            assert_int_equal(seen[p], 0);
            seen[p] = 1;
        }
        got += c.hi - c.lo;
    }
    assert_int_equal(got, want);
    assert_int_equal(liq_fractile_left(f), 0);
    free(seen);
}

static void
test_defaults_and_bad_args(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    double zero[2] = { 0, 0 };

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(o.mode, LIQ_FRACTILE_FACTORING);
    assert_true(o.fraction == 0.5);
    assert_int_equal(o.min_chunk, 1);
    assert_int_equal(liq_fractile_init(&f, 0, 2, NULL, &o), -EINVAL);
    assert_int_equal(liq_fractile_init(&f, 10, 0, NULL, &o), -EINVAL);
    assert_int_equal(liq_fractile_init(&f, 10, 2, zero, &o), -EINVAL);
    o.fraction = 0;
    assert_int_equal(liq_fractile_init(&f, 10, 2, NULL, &o), -EINVAL);
    o.fraction = 1.5;
    assert_int_equal(liq_fractile_init(&f, 10, 2, NULL, &o), -EINVAL);
}

/* Two equal workers, 1000 items: batches of half what is left, split in two. */
static void
test_factoring_halves(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;
    static const uint64_t want[] = { 250, 250, 125, 125, 63, 63 };

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(liq_fractile_init(&f, 1000, 2, NULL, &o), 0);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(liq_fractile_next(&f, (int)(i % 2), &c), 1);
        assert_int_equal(c.hi - c.lo, want[i]);
        assert_int_equal(c.batch, i / 2);
        assert_int_equal(c.from, (int)(i % 2)); /* own tile */
    }
    /* Worker 0's chunks are contiguous from the front of its tile [0, 500). */
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 250 + 125 + 63);
    drain_all(&f, 1000, 2);
    liq_fractile_free(&f);
}

/* The minimum chunk floors the sizes; the last run may be shorter. */
static void
test_min_chunk(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;
    uint64_t last = 0;

    (void)state;
    liq_fractile_defaults(&o);
    o.min_chunk = 8;
    assert_int_equal(liq_fractile_init(&f, 100, 1, NULL, &o), 0);
    while (liq_fractile_next(&f, 0, &c)) {
        uint64_t size = c.hi - c.lo;

        assert_true(size >= 8 || liq_fractile_left(&f) == 0);
        if (last)
            assert_true(size <= last);
        last = size;
    }
    assert_int_equal(liq_fractile_left(&f), 0);
    liq_fractile_free(&f);
}

/* Weights 3:1: tiles 750/250 and first chunks 375/125. */
static void
test_weighted(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;
    double w[2] = { 3, 1 };

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(liq_fractile_init(&f, 1000, 2, w, &o), 0);
    assert_int_equal(f.nseg, 2);
    assert_int_equal(f.seg[0].hi, 750);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.hi - c.lo, 375);
    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_int_equal(c.hi - c.lo, 125);
    assert_int_equal(c.lo, 750);
    /* The slow worker becomes fast: its next chunk grows with its weight. */
    liq_fractile_weight(&f, 1, 9);
    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_true(c.hi - c.lo > 125 / 2);
    drain_all(&f, 1000, 2);
    liq_fractile_free(&f);
}

/* Own tile first; then the largest run, taken from its back. */
static void
test_own_then_largest(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(liq_fractile_init(&f, 300, 3, NULL, &o), 0);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 0);
    assert_int_equal(c.hi, 50);
    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_int_equal(c.lo, 100);
    assert_int_equal(c.hi, 150);
    /* A fast worker takes the batch's third chunk: its own tile's rest. */
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 50);
    assert_int_equal(c.hi, 100);
    assert_int_equal(c.batch, 0);
    /* Its tile done, worker 0 helps: worker 2's untouched tile is the
     * largest run; a new batch's share (half of 150, a third each) from
     * its back. */
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.from, 2);
    assert_int_equal(c.batch, 1);
    assert_int_equal(c.lo, 275);
    assert_int_equal(c.hi, 300);
    /* Worker 2 still starts at the front of its tile. */
    assert_int_equal(liq_fractile_next(&f, 2, &c), 1);
    assert_int_equal(c.lo, 200);
    assert_int_equal(c.from, 2);
    drain_all(&f, 300, 3);
    liq_fractile_free(&f);
}

/* A worker taken out (reclaimed, lost) gets nothing; its tile is anyone's. */
static void
test_worker_out_and_back(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(liq_fractile_init(&f, 400, 2, NULL, &o), 0);
    liq_fractile_weight(&f, 1, 0);
    assert_int_equal(liq_fractile_next(&f, 1, &c), 0);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 0);
    /* All for worker 0 alone: half of what is left per batch. */
    assert_int_equal(c.hi - c.lo, 200);
    liq_fractile_weight(&f, 1, 1);
    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_int_equal(c.from, -1); /* its old tile, now nobody's */
    drain_all(&f, 400, 2);
    liq_fractile_free(&f);
}

/* A worker that joins while the farm runs has no tile: it takes from the
 * back of the largest run (another's tile), and everything goes out once. */
static void
test_worker_joins(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;

    (void)state;
    liq_fractile_defaults(&o);
    assert_int_equal(liq_fractile_init(&f, 400, 2, NULL, &o), 0);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 0);
    assert_int_equal(liq_fractile_add(&f, 0), 2);
    assert_int_equal(liq_fractile_next(&f, 2, &c), 0); /* weight 0: nothing yet */
    liq_fractile_weight(&f, 2, 1);
    assert_int_equal(liq_fractile_next(&f, 2, &c), 1);
    assert_int_equal(c.from, 1); /* worker 1's untouched tile, the largest run */
    assert_int_equal(c.hi, 400); /* from its back */
    assert_int_equal(liq_fractile_add(&f, 2), 3);
    drain_all(&f, 400, 4);
    liq_fractile_free(&f);
}

/* Work given back is handed out again, to whoever asks. */
static void
test_giveback(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    struct liq_fractile_chunk c;

    (void)state;
    liq_fractile_defaults(&o);
    o.mode = LIQ_FRACTILE_STATIC;
    assert_int_equal(liq_fractile_init(&f, 64, 2, NULL, &o), 0);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.hi - c.lo, 32); /* static: the whole block */
    assert_int_equal(liq_fractile_next(&f, 0, &c), 0); /* and no stealing */
    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_int_equal(c.lo, 32);
    assert_int_equal(liq_fractile_left(&f), 0);
    assert_int_equal(liq_fractile_giveback(&f, 40, 40), -EINVAL);
    assert_int_equal(liq_fractile_giveback(&f, 40, 65), -EINVAL);
    /* Worker 1 is lost with [40, 64) undone. */
    assert_int_equal(liq_fractile_giveback(&f, 40, 64), 0);
    liq_fractile_weight(&f, 1, 0);
    assert_int_equal(liq_fractile_left(&f), 24);
    assert_int_equal(liq_fractile_next(&f, 0, &c), 1);
    assert_int_equal(c.lo, 40);
    assert_int_equal(c.hi, 64);
    assert_int_equal(liq_fractile_left(&f), 0);
    liq_fractile_free(&f);
}

static void
test_modes_cover(void **state)
{
    struct liq_fractile f;
    struct liq_fractile_opts o;
    double w[5] = { 1, 0.1, 7, 2.5, 1 };

    (void)state;
    for (int m = 0; m < 3; m++)
        for (uint64_t n = 1; n < 200; n += 37) {
            liq_fractile_defaults(&o);
            o.mode = (enum liq_fractile_mode)m;
            o.min_chunk = n % 3 + 1;
            assert_int_equal(liq_fractile_init(&f, n, 5, w, &o), 0);
            drain_all(&f, n, 5);
            liq_fractile_free(&f);
        }
    /* Self-scheduling: chunks of one. */
    liq_fractile_defaults(&o);
    o.mode = LIQ_FRACTILE_SELF;
    assert_int_equal(liq_fractile_init(&f, 10, 2, NULL, &o), 0);
    struct liq_fractile_chunk c;

    assert_int_equal(liq_fractile_next(&f, 1, &c), 1);
    assert_int_equal(c.hi - c.lo, 1);
    assert_int_equal(c.lo, 0);
    liq_fractile_free(&f);
}

/* The Morton walk: the classic 4x4 order, a permutation of any grid, and
 * aligned runs of 4 on a power-of-two grid are 2x2 squares. */
static void
test_morton(void **state)
{
    static const uint64_t z4[16] = { 0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15 };
    uint64_t order[8 * 8];
    int n[3] = { 4, 4, 1 };

    (void)state;
    assert_int_equal(liq_fractile_morton(n, order), 0);
    assert_memory_equal(order, z4, sizeof(z4));

    n[0] = 8, n[1] = 8;
    assert_int_equal(liq_fractile_morton(n, order), 0);
    for (int k = 0; k < 64; k += 4) {
        int x0 = (int)(order[k] % 8), y0 = (int)(order[k] / 8);

        for (int i = 1; i < 4; i++) {
            int x = (int)(order[k + i] % 8), y = (int)(order[k + i] / 8);

            assert_true(x >= x0 && x <= x0 + 1 && y >= y0 && y <= y0 + 1);
        }
    }

    int m[3] = { 5, 3, 7 };
    uint64_t *o3 = malloc(5 * 3 * 7 * sizeof(uint64_t));
    char seen[5 * 3 * 7] = { 0 };

    assert_non_null(o3);
    assert_int_equal(liq_fractile_morton(m, o3), 0);
    for (int k = 0; k < 5 * 3 * 7; k++) {
        assert_true(o3[k] < 5 * 3 * 7);
        assert_int_equal(seen[o3[k]], 0);
        seen[o3[k]] = 1;
    }
    free(o3);

    int bad[3] = { 0, 3, 1 };

    assert_int_equal(liq_fractile_morton(bad, order), -EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_bad_args),
        cmocka_unit_test(test_factoring_halves),
        cmocka_unit_test(test_min_chunk),
        cmocka_unit_test(test_weighted),
        cmocka_unit_test(test_own_then_largest),
        cmocka_unit_test(test_worker_out_and_back),
        cmocka_unit_test(test_worker_joins),
        cmocka_unit_test(test_giveback),
        cmocka_unit_test(test_modes_cover),
        cmocka_unit_test(test_morton),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
