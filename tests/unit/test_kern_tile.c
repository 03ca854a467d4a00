/*
 * test_kern_tile.c - a host's plan: tiles and padding from its own cache
 * (seed 000 requirements 8, 9 and 14).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kern.h"

/* The thesis's 80^3 quantum (82^3 with ghosts) on its 256 KiB L2. */
static void test_kern_plan_thesis_quantum(void **state)
{
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 262144, 80, 80, 80, KERN_PLAN_PAD), 0);
    assert_int_equal(p.cache_elems, 32768);
    assert_int_equal(p.ti, 128);
    assert_int_equal(p.tj, 64);
    assert_int_equal(p.tile_i, 126);
    assert_int_equal(p.tile_j, 62);
    assert_int_equal(p.bi, 128);
    assert_int_equal(p.bj, 192);
    assert_true(p.flags & KERN_PLAN_PAD);
}

/* Requirement 8: two hosts with different caches plan the same quantum
 * differently, and each plan is what GcdPad3D gives for its cache. */
static void test_kern_plan_differs_by_host_cache(void **state)
{
    struct kern_plan a, b;
    struct kern_gcdpad g;

    (void)state;
    assert_int_equal(kern_plan_make(&a, 262144, 80, 80, 80, KERN_PLAN_PAD), 0);
    assert_int_equal(kern_plan_make(&b, 1 << 20, 80, 80, 80, KERN_PLAN_PAD), 0);
    assert_true(a.ti != b.ti || a.tj != b.tj || a.bi != b.bi || a.bj != b.bj);
    assert_int_equal(kern_gcdpad3d(131072, 82, 82, &g), 0);
    assert_int_equal(b.ti, g.ti);
    assert_int_equal(b.tj, g.tj);
    assert_int_equal(b.bi, g.bi);
    assert_int_equal(b.bj, g.bj);
    assert_int_equal(b.ti, 256);
    assert_int_equal(b.tj, 128);
}

/* pad(false): the same tiles, no padding. */
static void test_kern_plan_without_padding_keeps_tiles(void **state)
{
    struct kern_plan a, b;

    (void)state;
    assert_int_equal(kern_plan_make(&a, 262144, 150, 150, 150, KERN_PLAN_PAD), 0);
    assert_int_equal(kern_plan_make(&b, 262144, 150, 150, 150, 0), 0);
    assert_int_equal(a.bi, 384);
    assert_int_equal(a.bj, 192);
    assert_int_equal(b.bi, 152);
    assert_int_equal(b.bj, 152);
    assert_int_equal(a.tile_i, b.tile_i);
    assert_int_equal(a.tile_j, b.tile_j);
    assert_false(b.flags & KERN_PLAN_PAD);
}

/* Row tiles: whole rows, TK planes of them in the cache; line padding. */
static void test_kern_plan_row_tiles_and_line_padding(void **state)
{
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 1 << 20, 512, 512, 512, KERN_PLAN_FAST), 0);
    assert_int_equal(p.tile_i, 512);
    /* 2 * 131072 / (4 * 514) - 2 = 125 rows, balanced: 512 = 5 tiles of 103. */
    assert_int_equal(p.tile_j, 103);
    assert_int_equal(p.bi, 520);        /* 514 rounded up to a line */
    assert_int_equal(p.bj, 514);        /* no plane padding */
    assert_true(p.flags & KERN_PLAN_ALIGN);
    assert_true(p.flags & KERN_PLAN_ROWS);
    /* N = 140..200: one tile of whole planes. */
    for (int n = 140; n <= 200; n++) {
        assert_int_equal(kern_plan_make(&p, 1 << 20, n, n, n, KERN_PLAN_FAST), 0);
        assert_int_equal(p.tile_j, n);
    }
    /* A row of exactly 4 KiB would alias its neighbours: one line more. */
    assert_int_equal(kern_plan_make(&p, 1 << 20, 510, 510, 510, KERN_PLAN_ALIGN), 0);
    assert_int_equal(p.bi, 520);
    /* GcdPad3D wins over line padding. */
    assert_int_equal(kern_plan_make(&p, 262144, 150, 150, 150, KERN_PLAN_PAD | KERN_PLAN_ALIGN),
                     0);
    assert_int_equal(p.bi, 384);
    assert_false(p.flags & KERN_PLAN_ALIGN);
    /* Few rows fit: at least one. */
    assert_int_equal(kern_plan_make(&p, 4096, 2000, 9, 9, KERN_PLAN_ROWS), 0);
    assert_int_equal(p.tile_j, 1);
}

/* Blocks fit the box; streaming stores only for boxes far beyond the cache. */
static void test_kern_plan_blocking_and_streaming(void **state)
{
    struct kern_plan p;
    unsigned all = KERN_PLAN_PAD | KERN_PLAN_SIMD | KERN_PLAN_STREAM;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 1 << 20, 16, 5, 16, all), 0);
    assert_true(p.jac_rows >= 1 && p.jac_rows <= 5);
    assert_true(p.jac_steps >= 1);
    assert_false(p.flags & KERN_PLAN_STREAM);
    assert_true(p.flags & KERN_PLAN_SIMD);
    assert_int_equal(kern_plan_make(&p, 1 << 20, 512, 512, 512, all), 0);
    assert_true(p.flags & KERN_PLAN_STREAM);
    assert_true(p.jac_rows >= 4 && p.jac_rows <= 512);
}

static void test_kern_plan_rejects_bad_input(void **state)
{
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 0, 80, 80, 80, 0), -EINVAL);
    assert_int_equal(kern_plan_make(&p, 262144, 0, 80, 80, 0), -EINVAL);
    assert_int_equal(kern_plan_make(&p, 262144, 80, 80, -2, 0), -EINVAL);
    assert_int_equal(kern_plan_make(NULL, 262144, 80, 80, 80, 0), -EINVAL);
    assert_int_equal(kern_plan_make(&p, 262144, INT32_MAX, 80, 80, 0), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kern_plan_thesis_quantum),
        cmocka_unit_test(test_kern_plan_differs_by_host_cache),
        cmocka_unit_test(test_kern_plan_without_padding_keeps_tiles),
        cmocka_unit_test(test_kern_plan_row_tiles_and_line_padding),
        cmocka_unit_test(test_kern_plan_blocking_and_streaming),
        cmocka_unit_test(test_kern_plan_rejects_bad_input),
    };

    return cmocka_run_group_tests_name("kern_tile", tests, NULL, NULL);
}
