/*
 * test_kern_pad.c - GcdPad3D and EucPad against the numbers of seed 000
 * (shared/notes/000-sacerdoti.md s3.3-3.4 and requirement 9).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kern.h"

static unsigned long long gcd(unsigned long long a, unsigned long long b)
{
    while (b != 0) {
        unsigned long long t = a % b;

        a = b;
        b = t;
    }
    return a;
}

static void test_kern_gcdpad3d_thesis_vectors(void **state)
{
    struct kern_gcdpad g;

    (void)state;
    assert_int_equal(kern_gcdpad3d(32768, 142, 142, &g), 0);
    assert_int_equal(g.ti, 128);
    assert_int_equal(g.tj, 64);
    assert_int_equal(g.bi, 384);
    assert_int_equal(g.bj, 192);

    assert_int_equal(kern_gcdpad3d(32768, 142, 193, &g), 0);
    assert_int_equal(g.bj, 320);

    assert_int_equal(kern_gcdpad3d(32768, 82, 82, &g), 0);
    assert_int_equal(g.bi, 128);
    assert_int_equal(g.bj, 192);
}

/* Appendix A: N = 140..190 gives (384, 192), N = 191..200 gives (384, 320),
 * always with the tile (126, 62) reported without ghosts. */
static void test_kern_gcdpad3d_appendix_table(void **state)
{
    (void)state;
    for (int n = 140; n <= 200; n++) {
        struct kern_gcdpad g;

        assert_int_equal(kern_gcdpad3d(32768, n + 2, n + 2, &g), 0);
        assert_int_equal(g.ti - 2, 126);
        assert_int_equal(g.tj - 2, 62);
        assert_int_equal(g.bi, 384);
        assert_int_equal(g.bj, n <= 190 ? 192 : 320);
    }
}

/* Requirement 9 for all inputs: the gcd conditions (the thesis's eqs. 1 and
 * 2 on the padded array), the pad bounds, and 4 planes of tile filling C. */
static void test_kern_gcdpad3d_gcd_properties(void **state)
{
    (void)state;
    for (size_t c = 4; c <= ((size_t)1 << 24); c *= 2) {
        for (int ai = 1; ai <= 1200; ai += (ai < 300 ? 1 : 7)) {
            for (int aj = 1; aj <= 1200; aj += 97) {
                struct kern_gcdpad g;
                unsigned long long bi, bj;

                assert_int_equal(kern_gcdpad3d(c, ai, aj, &g), 0);
                bi = (unsigned long long)g.bi;
                bj = (unsigned long long)g.bj;
                assert_true((size_t)g.ti * (size_t)g.tj * KERN_TK == c);
                assert_true((size_t)g.ti * (size_t)g.ti * KERN_TK >= c);
                assert_true(g.ti == 1 || (size_t)g.ti * (size_t)g.ti < c); /* smallest */
                assert_int_equal(gcd(c, bi), (unsigned long long)g.ti);
                assert_int_equal(gcd(c, bj), (unsigned long long)g.tj);
                assert_int_equal(gcd(c, bi * bj), (unsigned long long)g.ti * g.tj);
                assert_true(g.bi >= ai && g.bi - ai <= 2 * g.ti - 1);
                assert_true(g.bj >= aj && g.bj - aj <= 2 * g.tj - 1);
                assert_int_equal((g.bi / g.ti) % 2, 1);
                assert_int_equal(g.bi % g.ti, 0);
            }
        }
    }
}

static void test_kern_gcdpad3d_rejects_bad_input(void **state)
{
    struct kern_gcdpad g;

    (void)state;
    assert_int_equal(kern_gcdpad3d(32000, 82, 82, &g), -EINVAL); /* not a power of two */
    assert_int_equal(kern_gcdpad3d(0, 82, 82, &g), -EINVAL);
    assert_int_equal(kern_gcdpad3d(2, 82, 82, &g), -EINVAL);
    assert_int_equal(kern_gcdpad3d(32768, 0, 82, &g), -EINVAL);
    assert_int_equal(kern_gcdpad3d(32768, 82, -1, &g), -EINVAL);
    assert_int_equal(kern_gcdpad3d(32768, 82, 82, NULL), -EINVAL);
    assert_int_equal(kern_gcdpad3d(KERN_CACHE_MAX_ELEMS * 2, 82, 82, &g), -ERANGE);
    assert_int_equal(kern_gcdpad3d(32768, INT32_MAX - 3, 82, &g), -ERANGE);
}

static void test_kern_eucpad2d_candidates_follow_euclid(void **state)
{
    struct kern_euctile t[64];
    int n;

    (void)state;
    /* EucPad2D(8000, 102, 0, 1): 8000 = 78*102 + 44, 102 = 2*44 + 14, ... */
    n = kern_eucpad2d(8000, 102, t, 64);
    assert_true(n >= 4 && n <= 64);
    assert_int_equal(t[0].h, 8000);
    assert_int_equal(t[0].w, 1);
    assert_int_equal(t[1].h, 102);
    assert_int_equal(t[1].w, 78);
    assert_int_equal(t[2].h, 44);
    assert_int_equal(t[2].w, 2 * 78 + 1);
    assert_int_equal(t[3].h, 14);
    for (int x = 0; x < n; x++)
        assert_true((long long)t[x].h * t[x].w <= 8000);
    assert_int_equal(t[n - 1].h, (int)gcd(8000, 102)); /* Euclid ends at the gcd */
    /* max = 0 only counts. */
    assert_int_equal(kern_eucpad2d(8000, 102, NULL, 0), n);
    assert_int_equal(kern_eucpad2d(8000, 0, t, 64), -EINVAL);
}

/* All 15 rows of the Appendix A EucPad3D table: a 256,000-byte cache
 * (C = 32000 doubles, so C' = 8000), column N+2+pad with pad 0..8. */
static void test_kern_eucpad3d_appendix_table(void **state)
{
    static const struct {
        int n, ti, tj, pad;
    } rows[] = {
        { 100, 100, 76, 0 }, { 110, 110, 69, 0 }, { 120, 121, 63, 1 }, { 130, 131, 58, 1 },
        { 140, 62, 109, 2 }, { 150, 151, 50, 1 }, { 160, 78, 95, 3 },  { 170, 82, 91, 0 },
        { 180, 86, 85, 2 },  { 190, 85, 81, 1 },  { 200, 94, 75, 6 },  { 210, 101, 71, 7 },
        { 220, 98, 69, 3 },  { 230, 78, 98, 8 },  { 240, 73, 96, 3 },
    };

    (void)state;
    for (size_t x = 0; x < sizeof(rows) / sizeof(rows[0]); x++) {
        struct kern_eucpad e;

        assert_int_equal(kern_eucpad3d(32000, rows[x].n + 2, 8, &e), 0);
        assert_int_equal(e.h - 2, rows[x].ti);
        assert_int_equal(e.w - 2, rows[x].tj);
        assert_int_equal(e.pad, rows[x].pad);
        assert_int_equal(e.bi, rows[x].n + 2 + rows[x].pad);
    }
}

static void test_kern_eucpad3d_rejects_bad_input(void **state)
{
    struct kern_eucpad e;

    (void)state;
    assert_int_equal(kern_eucpad3d(32000, 0, 8, &e), -EINVAL);
    assert_int_equal(kern_eucpad3d(32000, 102, -1, &e), -EINVAL);
    assert_int_equal(kern_eucpad3d(2, 102, 8, &e), -EINVAL);
    assert_int_equal(kern_eucpad3d(32000, 102, 8, NULL), -EINVAL);
    assert_int_equal(kern_eucpad3d(32000, INT32_MAX, 8, &e), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kern_gcdpad3d_thesis_vectors),
        cmocka_unit_test(test_kern_gcdpad3d_appendix_table),
        cmocka_unit_test(test_kern_gcdpad3d_gcd_properties),
        cmocka_unit_test(test_kern_gcdpad3d_rejects_bad_input),
        cmocka_unit_test(test_kern_eucpad2d_candidates_follow_euclid),
        cmocka_unit_test(test_kern_eucpad3d_appendix_table),
        cmocka_unit_test(test_kern_eucpad3d_rejects_bad_input),
    };

    return cmocka_run_group_tests_name("kern_pad", tests, NULL, NULL);
}
