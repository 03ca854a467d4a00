/*
 * test_liq_farm.c - liquid_farm's tiles (liq_farm.h): for 1D, 2D and 3D
 * index spaces, odd and power-of-two extents, the tiles cover every point
 * exactly once, there are at most LIQ_FARM_TILES_MAX of them, their side
 * is the smallest power of two that allows it, and each tile's box lies
 * inside the space.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "liq_farm.h"

static void
cover_once(int nx, int ny, int nz)
{
    int n[3] = { nx, ny, nz }, b, t[3], lo[3], cnt[3];
    uint64_t ntiles;
    size_t npts = (size_t)nx * ny * nz;
    unsigned char *seen = calloc(npts, 1);

    assert_non_null(seen);
    liq_farm_tiles(n, &b, t);
    ntiles = (uint64_t)t[0] * t[1] * t[2];
    assert_true(ntiles >= 1 && ntiles <= LIQ_FARM_TILES_MAX);
    assert_true(b >= 1 && (b & (b - 1)) == 0);
    /* The smallest such side: half of it would make too many tiles. */
    if (b > 1) {
        uint64_t k = 1;

        for (int a = 0; a < 3; a++)
            k *= (uint64_t)(n[a] > 1 ? (n[a] + b / 2 - 1) / (b / 2) : 1);
        assert_true(k > LIQ_FARM_TILES_MAX);
    }
    for (uint64_t i = 0; i < ntiles; i++) {
        liq_farm_tile_box(n, b, t, i, lo, cnt);
        for (int a = 0; a < 3; a++) {
            assert_true(lo[a] >= 0 && cnt[a] >= 1 && lo[a] + cnt[a] <= n[a]);
            assert_true(cnt[a] <= (n[a] > 1 ? b : 1));
        }
        for (int z = lo[2]; z < lo[2] + cnt[2]; z++)
            for (int y = lo[1]; y < lo[1] + cnt[1]; y++)
                for (int x = lo[0]; x < lo[0] + cnt[0]; x++) {
                    size_t p = (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * z);

                    assert_int_equal(seen[p], 0);
                    seen[p] = 1;
                }
    }
    for (size_t p = 0; p < npts; p++)
        assert_int_equal(seen[p], 1);
    free(seen);
}

static void
test_liq_farm_tiles_cover_1d(void **state)
{
    (void)state;
    cover_once(1, 1, 1);
    cover_once(7, 1, 1);
    cover_once(4096, 1, 1);
    cover_once(100003, 1, 1);
}

static void
test_liq_farm_tiles_cover_2d(void **state)
{
    (void)state;
    cover_once(512, 384, 1);
    cover_once(300, 200, 1);
    cover_once(3000, 2, 1);
    cover_once(1, 999, 1);
}

static void
test_liq_farm_tiles_cover_3d(void **state)
{
    (void)state;
    cover_once(64, 64, 64);
    cover_once(33, 17, 9);
    cover_once(5, 1, 130);
}

/* A worker's queue: items keep their order through growth and moves to
 * the front; SHRINK drops exactly its chunk's items from place keep on. */
struct qitem {
    struct liq_farm_key k;
    int idx;
    char pad[13];
};

static void
test_liq_farm_queue(void **state)
{
    struct liq_farm_queue fq = { .size = sizeof(struct qitem) };
    struct qitem it = { .pad = "x" }, got;
    int next = 0, popped = 0;

    (void)state;
    assert_int_equal(liq_farm_pop(&fq, &got), -1);
    /* Chunks of 10 items, two pushed for every one popped: the queue
     * grows past 64 and moves to its front on the way. */
    for (int c = 0; c < 30; c++) {
        for (int i = 0; i < 10; i++) {
            it.k.chunk = c;
            it.k.ord = i;
            it.idx = next++;
            assert_int_equal(liq_farm_push(&fq, &it), 0);
        }
        for (int i = 0; i < 5; i++, popped++) {
            assert_int_equal(liq_farm_pop(&fq, &got), 0);
            assert_int_equal(got.idx, popped);
            assert_int_equal(got.k.chunk, popped / 10);
            assert_int_equal(got.k.ord, popped % 10);
        }
    }
    assert_true(fq.cap > 64);
    for (int i = 0; i < 3; i++, popped++)
        assert_int_equal(liq_farm_pop(&fq, &got), 0);
    /* Chunk 15 is partly taken (150..152 popped), chunk 25 whole: drop
     * 25's items from place 4 on, 15's from 7 on. */
    liq_farm_shrink(&fq, 25, 4);
    liq_farm_shrink(&fq, 15, 7);
    liq_farm_shrink(&fq, 99, 0);        /* a chunk not held: nothing */
    for (int want = popped; want < next; want++) {
        int c = want / 10, o = want % 10;

        if ((c == 25 && o >= 4) || (c == 15 && o >= 7))
            continue;
        assert_int_equal(liq_farm_pop(&fq, &got), 0);
        assert_int_equal(got.idx, want);
        assert_int_equal(got.k.chunk, c);
        assert_int_equal(got.k.ord, o);
        assert_string_equal(got.pad, "x");
    }
    assert_int_equal(liq_farm_pop(&fq, &got), -1);
    free(fq.q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_farm_tiles_cover_1d),
        cmocka_unit_test(test_liq_farm_tiles_cover_2d),
        cmocka_unit_test(test_liq_farm_tiles_cover_3d),
        cmocka_unit_test(test_liq_farm_queue),
    };

    return cmocka_run_group_tests_name("liq_farm", tests, NULL, NULL);
}
