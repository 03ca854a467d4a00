/*
 * test_kern_rbgs.c - red-black Gauss-Seidel: tiled and fused variants
 * bit-identical to the reference on random boxes (odd and even sizes,
 * offsets, tiles, layouts, scalar and SIMD rows); colours by global parity;
 * every point of a colour updated once per sweep and nothing else written.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kern.h"

#define CASES 80

static const double C = 1.0 / 6.0, C2 = 0.37;

static uint64_t next(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int pick(uint64_t *s, int lo, int hi)
{
    return lo + (int)(next(s) % (uint64_t)(hi - lo + 1));
}

static void alloc_any(struct kern_box *b, int ni, int nj, int nk, uint64_t *s)
{
    int bi = 0, bj = 0;

    switch (pick(s, 0, 2)) {
    case 1:
        bi = ni + 2 + pick(s, 0, 9);
        bj = nj + 2 + pick(s, 0, 5);
        break;
    case 2: {
        struct kern_gcdpad g;

        assert_int_equal(kern_gcdpad3d((size_t)1 << pick(s, 2, 16), ni + 2, nj + 2, &g), 0);
        bi = g.bi;
        bj = g.bj;
        break;
    }
    default:
        break;
    }
    assert_int_equal(kern_box_alloc(b, ni, nj, nk, bi, bj), 0);
}

struct rcase {
    int ni, nj, nk;
    struct kern_box u0, rhs;
};

static void make_case(struct rcase *rc, uint64_t *s, int big)
{
    rc->ni = big ? pick(s, 60, 140) : pick(s, 1, 24);
    rc->nj = big ? pick(s, 20, 50) : pick(s, 1, 24);
    rc->nk = big ? pick(s, 3, 12) : pick(s, 1, 20);
    alloc_any(&rc->u0, rc->ni, rc->nj, rc->nk, s);
    alloc_any(&rc->rhs, rc->ni, rc->nj, rc->nk, s);
    kern_box_fill(&rc->u0, next(s));
    kern_box_fill(&rc->rhs, next(s));
    rc->u0.oi = pick(s, -40, 40);
    rc->u0.oj = pick(s, -40, 40);
    rc->u0.ok = pick(s, -40, 40);
}

static void free_case(struct rcase *rc)
{
    kern_box_free(&rc->u0);
    kern_box_free(&rc->rhs);
}

static void reference(const struct rcase *rc, int iters, struct kern_box *out)
{
    assert_int_equal(kern_box_alloc(out, rc->ni, rc->nj, rc->nk, 0, 0), 0);
    assert_int_equal(kern_box_copy(out, &rc->u0), 0);
    for (int it = 0; it < iters; it++) {
        assert_int_equal(kern_rbgs_ref(out, &rc->rhs, C, C2, KERN_RED), 0);
        assert_int_equal(kern_rbgs_ref(out, &rc->rhs, C, C2, KERN_BLACK), 0);
    }
}

static void test_kern_rbgs_sweep_matches_reference(void **state)
{
    uint64_t s = 11;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct rcase rc;
        struct kern_box ref, u;
        struct kern_plan p;
        int iters = pick(&s, 1, 4);

        make_case(&rc, &s, n % 10 == 0);
        reference(&rc, iters, &ref);
        alloc_any(&u, rc.ni, rc.nj, rc.nk, &s);
        assert_int_equal(kern_box_copy(&u, &rc.u0), 0);
        memset(&p, 0, sizeof(p));
        p.tile_i = pick(&s, 1, rc.ni + 3);
        p.tile_j = pick(&s, 1, rc.nj + 3);
        p.flags = n % 2 ? KERN_PLAN_SIMD : 0;
        for (int it = 0; it < iters; it++) {
            assert_int_equal(kern_rbgs_sweep(&u, &rc.rhs, C, C2, KERN_RED, &p), 0);
            assert_int_equal(kern_rbgs_sweep(&u, &rc.rhs, C, C2, KERN_BLACK, &p), 0);
        }
        assert_int_equal(kern_box_equal(&u, &ref), 1);
        kern_box_free(&u);
        kern_box_free(&ref);
        free_case(&rc);
    }
}

static void test_kern_rbgs_run_matches_reference(void **state)
{
    uint64_t s = 12;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct rcase rc;
        struct kern_box ref, u;
        struct kern_plan p;
        int iters = pick(&s, 0, 5);

        make_case(&rc, &s, n % 8 == 0);
        reference(&rc, iters, &ref);
        alloc_any(&u, rc.ni, rc.nj, rc.nk, &s);
        assert_int_equal(kern_box_copy(&u, &rc.u0), 0);
        memset(&p, 0, sizeof(p));
        p.tile_i = pick(&s, 1, rc.ni + 2);
        p.tile_j = pick(&s, 1, rc.nj + 2);
        p.rb_steps = pick(&s, 0, 4);
        p.flags = n % 2 ? KERN_PLAN_SIMD : 0;
        assert_int_equal(kern_rbgs_run(&u, &rc.rhs, C, C2, iters, &p), 0);
        assert_int_equal(kern_box_equal(&u, &ref), 1);
        kern_box_free(&u);
        kern_box_free(&ref);
        free_case(&rc);
    }
}

static void test_kern_rbgs_run_with_made_plans(void **state)
{
    static const size_t caches[] = { 4096, 32768, 262144, 1048576 };
    uint64_t s = 13;

    (void)state;
    for (size_t x = 0; x < sizeof(caches) / sizeof(caches[0]); x++) {
        for (unsigned f = 0; f < 32; f++) {
            struct rcase rc;
            struct kern_box ref, u;
            struct kern_plan p;

            make_case(&rc, &s, 1);
            reference(&rc, 3, &ref);
            assert_int_equal(kern_plan_make(&p, caches[x], rc.ni, rc.nj, rc.nk, f), 0);
            assert_int_equal(kern_box_alloc(&u, rc.ni, rc.nj, rc.nk, p.bi, p.bj), 0);
            assert_int_equal(kern_box_copy(&u, &rc.u0), 0);
            assert_int_equal(kern_rbgs_run(&u, &rc.rhs, C, C2, 3, &p), 0);
            assert_int_equal(kern_box_equal(&u, &ref), 1);
            /* The same plan's tiles, one colour at a time. */
            assert_int_equal(kern_box_copy(&u, &rc.u0), 0);
            for (int it = 0; it < 3; it++) {
                assert_int_equal(kern_rbgs_sweep(&u, &rc.rhs, C, C2, KERN_RED, &p), 0);
                assert_int_equal(kern_rbgs_sweep(&u, &rc.rhs, C, C2, KERN_BLACK, &p), 0);
            }
            assert_int_equal(kern_box_equal(&u, &ref), 1);
            kern_box_free(&u);
            kern_box_free(&ref);
            free_case(&rc);
        }
    }
}

/*
 * One colour sweep changes exactly the interior points of that colour (by
 * global parity), each to its reference value, and writes nothing else:
 * with rhs = -1, c = 1, c2 = 1 and u = 0 the new value is exactly 1.
 */
static void test_kern_rbgs_sweep_updates_each_colour_point_once(void **state)
{
    (void)state;
    for (int colour = KERN_RED; colour <= KERN_BLACK; colour++) {
        for (unsigned simd = 0; simd <= KERN_PLAN_SIMD; simd += KERN_PLAN_SIMD) {
            struct kern_box u, rhs;
            struct kern_plan p;

            assert_int_equal(kern_box_alloc(&u, 13, 6, 5, 20, 9), 0);
            assert_int_equal(kern_box_alloc(&rhs, 13, 6, 5, 0, 0), 0);
            u.oi = 3;
            u.oj = -2;
            u.ok = 7;
            for (int k = 0; k < 7; k++)
                for (int j = 0; j < 8; j++)
                    for (int i = 0; i < 15; i++)
                        *kern_at(&rhs, i, j, k) = -1.0;
            memset(&p, 0, sizeof(p));
            p.tile_i = 4;
            p.tile_j = 3;
            p.flags = simd;
            assert_int_equal(kern_rbgs_sweep(&u, &rhs, 1.0, 1.0, colour, &p), 0);
            for (int k = 0; k < 7; k++) {
                for (int j = 0; j < 8; j++) {
                    for (int i = 0; i < 15; i++) {
                        int interior = i >= 1 && i <= 13 && j >= 1 && j <= 6 && k >= 1 && k <= 5;
                        long g = u.oi + i + u.oj + j + u.ok + k;
                        double want = interior && (g & 1) == colour ? 1.0 : 0.0;

                        assert_true(*kern_at(&u, i, j, k) == want);
                    }
                }
            }
            kern_box_free(&u);
            kern_box_free(&rhs);
        }
    }
}

/*
 * Colours follow global parity, so a sub-box at an odd offset, given its
 * ghosts from the big box, computes exactly the big box's values.
 */
static void test_kern_rbgs_sub_box_at_offset_agrees(void **state)
{
    struct kern_box big, bigr, sub, subr;
    int si = 3, sj = 2, sk = 1; /* sub interior starts at big's (si+1, sj+1, sk+1) */
    int ni = 7, nj = 5, nk = 6;

    (void)state;
    assert_int_equal(kern_box_alloc(&big, 15, 10, 9, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&bigr, 15, 10, 9, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&sub, ni, nj, nk, 12, 0), 0);
    assert_int_equal(kern_box_alloc(&subr, ni, nj, nk, 0, 0), 0);
    kern_box_fill(&big, 21);
    kern_box_fill(&bigr, 22);
    big.oi = 101;
    big.oj = -6;
    big.ok = 40;
    sub.oi = big.oi + si;
    sub.oj = big.oj + sj;
    sub.ok = big.ok + sk;
    for (int colour = KERN_RED; colour <= KERN_BLACK; colour++) {
        for (int k = 0; k < nk + 2; k++) {
            for (int j = 0; j < nj + 2; j++) {
                for (int i = 0; i < ni + 2; i++) {
                    *kern_at(&sub, i, j, k) = *kern_at(&big, si + i, sj + j, sk + k);
                    *kern_at(&subr, i, j, k) = *kern_at(&bigr, si + i, sj + j, sk + k);
                }
            }
        }
        assert_int_equal(kern_rbgs_ref(&big, &bigr, C, C2, colour), 0);
        assert_int_equal(kern_rbgs_tile(&sub, &subr, C, C2, colour, 1, ni, 1, nj, KERN_PLAN_SIMD),
                         0);
        for (int k = 1; k <= nk; k++)
            for (int j = 1; j <= nj; j++)
                for (int i = 1; i <= ni; i++)
                    assert_memory_equal(kern_at(&sub, i, j, k),
                                        kern_at(&big, si + i, sj + j, sk + k), sizeof(double));
    }
    kern_box_free(&big);
    kern_box_free(&bigr);
    kern_box_free(&sub);
    kern_box_free(&subr);
}

static void test_kern_rbgs_rejects_bad_input(void **state)
{
    struct kern_box a, r, small;
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_box_alloc(&a, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&r, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&small, 4, 4, 3, 0, 0), 0);
    assert_int_equal(kern_plan_make(&p, 32768, 4, 4, 4, 0), 0);
    assert_int_equal(kern_rbgs_ref(&a, &r, C, C2, 2), -EINVAL);
    assert_int_equal(kern_rbgs_ref(&a, &small, C, C2, KERN_RED), -EINVAL);
    assert_int_equal(kern_rbgs_tile(&a, &r, C, C2, KERN_RED, 1, 4, 0, 4, 0), -EINVAL);
    assert_int_equal(kern_rbgs_tile(&a, &r, C, C2, KERN_RED, 1, 4, 2, 5, 0), -EINVAL);
    assert_int_equal(kern_rbgs_sweep(&a, &r, C, C2, -1, &p), -EINVAL);
    assert_int_equal(kern_rbgs_sweep(&a, &r, C, C2, KERN_RED, NULL), -EINVAL);
    assert_int_equal(kern_rbgs_run(&a, &r, C, C2, -1, &p), -EINVAL);
    assert_int_equal(kern_rbgs_run(&small, &r, C, C2, 1, &p), -EINVAL);
    kern_box_free(&a);
    kern_box_free(&r);
    kern_box_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kern_rbgs_sweep_matches_reference),
        cmocka_unit_test(test_kern_rbgs_run_matches_reference),
        cmocka_unit_test(test_kern_rbgs_run_with_made_plans),
        cmocka_unit_test(test_kern_rbgs_sweep_updates_each_colour_point_once),
        cmocka_unit_test(test_kern_rbgs_sub_box_at_offset_agrees),
        cmocka_unit_test(test_kern_rbgs_rejects_bad_input),
    };

    return cmocka_run_group_tests_name("kern_rbgs", tests, NULL, NULL);
}
