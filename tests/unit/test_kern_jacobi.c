/*
 * test_kern_jacobi.c - every Jacobi variant against the reference, bit for
 * bit, on random boxes: odd and even sizes, offsets, tile sizes, padded and
 * unpadded layouts, scalar and SIMD rows, streaming stores, temporal
 * blocking depths and row blocks.
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

/* A box in one of three layouts: unpadded, padded by a random amount, or
 * padded by GcdPad3D for a random cache. */
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

struct jcase {
    int ni, nj, nk;
    long oi, oj, ok;
    struct kern_box u0, rhs;
};

static void make_case(struct jcase *jc, uint64_t *s, int big)
{
    jc->ni = big ? pick(s, 60, 140) : pick(s, 1, 24);
    jc->nj = big ? pick(s, 20, 50) : pick(s, 1, 24);
    jc->nk = big ? pick(s, 3, 12) : pick(s, 1, 20);
    jc->oi = pick(s, -40, 40);
    jc->oj = pick(s, -40, 40);
    jc->ok = pick(s, -40, 40);
    alloc_any(&jc->u0, jc->ni, jc->nj, jc->nk, s);
    alloc_any(&jc->rhs, jc->ni, jc->nj, jc->nk, s);
    kern_box_fill(&jc->u0, next(s));
    kern_box_fill(&jc->rhs, next(s));
    jc->u0.oi = jc->oi;
    jc->u0.oj = jc->oj;
    jc->u0.ok = jc->ok;
}

static void free_case(struct jcase *jc)
{
    kern_box_free(&jc->u0);
    kern_box_free(&jc->rhs);
}

/* The reference: iters plain sweeps alternating two unpadded boxes. */
static void reference(const struct jcase *jc, int iters, struct kern_box *out)
{
    struct kern_box a, b;

    assert_int_equal(kern_box_alloc(&a, jc->ni, jc->nj, jc->nk, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&b, jc->ni, jc->nj, jc->nk, 0, 0), 0);
    assert_int_equal(kern_box_copy(&a, &jc->u0), 0);
    assert_int_equal(kern_box_copy(&b, &jc->u0), 0);
    for (int it = 0; it < iters; it++) {
        struct kern_box t;

        assert_int_equal(kern_jacobi_ref(&b, &a, &jc->rhs, C, C2), 0);
        t = a;
        a = b;
        b = t;
    }
    kern_box_free(&b);
    *out = a;
}

static void test_kern_jacobi_sweep_matches_reference(void **state)
{
    uint64_t s = 1;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct jcase jc;
        struct kern_box ref, a, b;
        struct kern_plan p;
        int iters = pick(&s, 1, 3);

        make_case(&jc, &s, n % 10 == 0);
        reference(&jc, iters, &ref);
        alloc_any(&a, jc.ni, jc.nj, jc.nk, &s);
        alloc_any(&b, jc.ni, jc.nj, jc.nk, &s);
        assert_int_equal(kern_box_copy(&a, &jc.u0), 0);
        assert_int_equal(kern_box_copy(&b, &jc.u0), 0);
        memset(&p, 0, sizeof(p));
        p.tile_i = pick(&s, 1, jc.ni + 3);
        p.tile_j = pick(&s, 1, jc.nj + 3);
        p.flags = n % 2 ? KERN_PLAN_SIMD : 0;
        for (int it = 0; it < iters; it++) {
            struct kern_box t;

            assert_int_equal(kern_jacobi_sweep(&b, &a, &jc.rhs, C, C2, &p), 0);
            t = a;
            a = b;
            b = t;
        }
        assert_int_equal(kern_box_equal(&a, &ref), 1);
        kern_box_free(&a);
        kern_box_free(&b);
        kern_box_free(&ref);
        free_case(&jc);
    }
}

/* A fast plan with random blocking, rows and paths. */
static void random_plan(struct kern_plan *p, uint64_t *s, int nj)
{
    memset(p, 0, sizeof(*p));
    p->jac_steps = pick(s, 1, 6);
    p->jac_rows = pick(s, 1, nj + 2);
    p->flags = (unsigned)pick(s, 0, 1) * KERN_PLAN_SIMD
               | (unsigned)pick(s, 0, 1) * KERN_PLAN_STREAM;
}

static void test_kern_jacobi_run_matches_reference(void **state)
{
    uint64_t s = 2;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct jcase jc;
        struct kern_box ref, u, tmp;
        struct kern_plan p;
        int iters = pick(&s, 0, 9);

        make_case(&jc, &s, n % 8 == 0);
        reference(&jc, iters, &ref);
        alloc_any(&u, jc.ni, jc.nj, jc.nk, &s);
        alloc_any(&tmp, jc.ni, jc.nj, jc.nk, &s);
        assert_int_equal(kern_box_copy(&u, &jc.u0), 0);
        kern_box_fill(&tmp, next(&s)); /* garbage, ghosts included */
        random_plan(&p, &s, jc.nj);
        assert_int_equal(kern_jacobi_run(&u, &tmp, &jc.rhs, C, C2, iters, &p), 0);
        assert_int_equal(kern_box_equal(&u, &ref), 1);
        kern_box_free(&u);
        kern_box_free(&tmp);
        kern_box_free(&ref);
        free_case(&jc);
    }
}

/* kern_jacobi_run_swap: the result in *u whichever box it ended in; an odd
 * number of passes leaves it in the other box, which the pointers follow. */
static void test_kern_jacobi_run_swap_matches_reference(void **state)
{
    uint64_t s = 3;
    int swapped = 0, kept = 0;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct jcase jc;
        struct kern_box ref, a, b, *u = &a, *tmp = &b;
        struct kern_plan p;
        int iters = pick(&s, 0, 13);

        make_case(&jc, &s, n % 8 == 0);
        reference(&jc, iters, &ref);
        alloc_any(&a, jc.ni, jc.nj, jc.nk, &s);
        alloc_any(&b, jc.ni, jc.nj, jc.nk, &s);
        assert_int_equal(kern_box_copy(&a, &jc.u0), 0);
        kern_box_fill(&b, next(&s));
        random_plan(&p, &s, jc.nj);
        assert_int_equal(kern_jacobi_run_swap(&u, &tmp, &jc.rhs, C, C2, iters, &p), 0);
        assert_int_equal(kern_box_equal(u, &ref), 1);
        assert_true(u != tmp && (u == &a || u == &b) && (tmp == &a || tmp == &b));
        swapped += u == &b;
        kept += u == &a;
        kern_box_free(&a);
        kern_box_free(&b);
        kern_box_free(&ref);
        free_case(&jc);
    }
    assert_true(swapped > 0 && kept > 0);
    assert_int_equal(kern_jacobi_run_swap(NULL, NULL, NULL, C, C2, 1, NULL), -EINVAL);
}

/* kern_jacobi_step, swapping the boxes between steps as a runtime does. */
static void test_kern_jacobi_step_matches_reference(void **state)
{
    uint64_t s = 4;

    (void)state;
    for (int n = 0; n < CASES; n++) {
        struct jcase jc;
        struct kern_box ref, a, b, *u = &a, *v = &b, *x;
        struct kern_plan p;
        int iters = pick(&s, 1, 6);

        make_case(&jc, &s, n % 8 == 0);
        reference(&jc, iters, &ref);
        alloc_any(&a, jc.ni, jc.nj, jc.nk, &s);
        alloc_any(&b, jc.ni, jc.nj, jc.nk, &s);
        assert_int_equal(kern_box_copy(&a, &jc.u0), 0);
        assert_int_equal(kern_box_copy(&b, &jc.u0), 0); /* the ghosts */
        random_plan(&p, &s, jc.nj); /* jac_steps is ignored by a step */
        for (int t = 0; t < iters; t++) {
            assert_int_equal(kern_jacobi_step(v, u, &jc.rhs, C, C2, &p), 0);
            x = u;
            u = v;
            v = x;
        }
        assert_int_equal(kern_box_equal(u, &ref), 1);
        kern_box_free(&a);
        kern_box_free(&b);
        kern_box_free(&ref);
        free_case(&jc);
    }
}

/* The plan a host makes for itself must also give the reference's bits. */
static void test_kern_jacobi_run_with_made_plans(void **state)
{
    static const size_t caches[] = { 4096, 32768, 262144, 1048576 };
    uint64_t s = 3;

    (void)state;
    for (size_t x = 0; x < sizeof(caches) / sizeof(caches[0]); x++) {
        for (unsigned f = 0; f < 32; f++) {
            struct jcase jc;
            struct kern_box ref, u, tmp;
            struct kern_plan p;

            make_case(&jc, &s, 1);
            reference(&jc, 5, &ref);
            assert_int_equal(kern_plan_make(&p, caches[x], jc.ni, jc.nj, jc.nk, f), 0);
            assert_int_equal(kern_box_alloc(&u, jc.ni, jc.nj, jc.nk, p.bi, p.bj), 0);
            assert_int_equal(kern_box_alloc(&tmp, jc.ni, jc.nj, jc.nk, p.bi, p.bj), 0);
            assert_int_equal(kern_box_copy(&u, &jc.u0), 0);
            assert_int_equal(kern_jacobi_run(&u, &tmp, &jc.rhs, C, C2, 5, &p), 0);
            assert_int_equal(kern_box_equal(&u, &ref), 1);
            kern_box_free(&u);
            kern_box_free(&tmp);
            kern_box_free(&ref);
            free_case(&jc);
        }
    }
}

/* A tile writes exactly its interior points: everything else in out, the
 * ghosts above all, keeps its bits. */
static void test_kern_jacobi_tile_writes_only_its_points(void **state)
{
    struct kern_box u, rhs, out, before, ref;
    int i0 = 3, i1 = 9, j0 = 2, j1 = 5;

    (void)state;
    assert_int_equal(kern_box_alloc(&u, 11, 7, 5, 16, 0), 0);
    assert_int_equal(kern_box_alloc(&rhs, 11, 7, 5, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&out, 11, 7, 5, 0, 12), 0);
    assert_int_equal(kern_box_alloc(&before, 11, 7, 5, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&ref, 11, 7, 5, 0, 0), 0);
    kern_box_fill(&u, 10);
    kern_box_fill(&rhs, 11);
    kern_box_fill(&out, 12);
    assert_int_equal(kern_box_copy(&before, &out), 0);
    assert_int_equal(kern_box_copy(&ref, &out), 0);
    assert_int_equal(kern_jacobi_ref(&ref, &u, &rhs, C, C2), 0);
    assert_int_equal(kern_jacobi_tile(&out, &u, &rhs, C, C2, i0, i1, j0, j1, KERN_PLAN_SIMD), 0);
    for (int k = 0; k < 7; k++) {
        for (int j = 0; j < 9; j++) {
            for (int i = 0; i < 13; i++) {
                int in = i >= i0 && i <= i1 && j >= j0 && j <= j1 && k >= 1 && k <= 5;
                const double *want = in ? kern_at(&ref, i, j, k) : kern_at(&before, i, j, k);

                assert_memory_equal(kern_at(&out, i, j, k), want, sizeof(double));
            }
        }
    }
    kern_box_free(&u);
    kern_box_free(&rhs);
    kern_box_free(&out);
    kern_box_free(&before);
    kern_box_free(&ref);
}

static void test_kern_jacobi_rejects_bad_input(void **state)
{
    struct kern_box a, b, r, small;
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_box_alloc(&a, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&b, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&r, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&small, 4, 3, 4, 0, 0), 0);
    assert_int_equal(kern_plan_make(&p, 32768, 4, 4, 4, KERN_PLAN_PAD), 0);
    assert_int_equal(kern_jacobi_ref(&a, &a, &r, C, C2), -EINVAL);
    assert_int_equal(kern_jacobi_ref(&a, &b, &small, C, C2), -EINVAL);
    assert_int_equal(kern_jacobi_ref(&small, &b, &r, C, C2), -EINVAL);
    assert_int_equal(kern_jacobi_tile(&a, &b, &r, C, C2, 0, 4, 1, 4, 0), -EINVAL);
    assert_int_equal(kern_jacobi_tile(&a, &b, &r, C, C2, 1, 5, 1, 4, 0), -EINVAL);
    assert_int_equal(kern_jacobi_tile(&a, &b, &r, C, C2, 3, 2, 1, 4, 0), -EINVAL);
    assert_int_equal(kern_jacobi_sweep(&a, &b, &r, C, C2, NULL), -EINVAL);
    assert_int_equal(kern_jacobi_run(&a, &b, &r, C, C2, -1, &p), -EINVAL);
    assert_int_equal(kern_jacobi_run(&a, &a, &r, C, C2, 1, &p), -EINVAL);
    assert_int_equal(kern_jacobi_run(&a, &small, &r, C, C2, 1, &p), -EINVAL);
    kern_box_free(&a);
    kern_box_free(&b);
    kern_box_free(&r);
    kern_box_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kern_jacobi_sweep_matches_reference),
        cmocka_unit_test(test_kern_jacobi_run_matches_reference),
        cmocka_unit_test(test_kern_jacobi_run_with_made_plans),
        cmocka_unit_test(test_kern_jacobi_run_swap_matches_reference),
        cmocka_unit_test(test_kern_jacobi_step_matches_reference),
        cmocka_unit_test(test_kern_jacobi_tile_writes_only_its_points),
        cmocka_unit_test(test_kern_jacobi_rejects_bad_input),
    };

    return cmocka_run_group_tests_name("kern_jacobi", tests, NULL, NULL);
}
