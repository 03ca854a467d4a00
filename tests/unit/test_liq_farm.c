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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_farm_tiles_cover_1d),
        cmocka_unit_test(test_liq_farm_tiles_cover_2d),
        cmocka_unit_test(test_liq_farm_tiles_cover_3d),
    };

    return cmocka_run_group_tests_name("liq_farm", tests, NULL, NULL);
}
