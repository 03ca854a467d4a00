/*
 * test_liq_halo.c - deep halos: the patches a quantum's halo needs, the
 * auto choice, and the whole scheme run in one process (every quantum's
 * box, halos refreshed from the others before each block) against the
 * single-process reference, bit for bit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "liq.h"

/* Taken off every halo's depth: a test that the comparison can fail. */
static int depth_cut;

struct sim_q {
    int ext[6], n[3];
    struct kern_box a, b, rhs, *cur, *nxt;
    struct kern_plan plan;
    int repeat;
};

/*
 * Run iters iterations of kernel k on grid n cut into nq quanta, halo of
 * `halo` iterations per exchange, heavy quanta repeating their phases; 1 if
 * every point equals the reference's.
 */
static int
sim_run(const int n[3], int nq, enum liq_kernel k, int iters, int halo, int heavy,
        size_t cache, unsigned flags)
{
    struct liq_geom g;
    struct sim_q *q;
    struct kern_box ref;
    double c, c2;
    int depth = liq_halo_depth(k, halo) - depth_cut, same = 1, npatch = 0;
    struct liq_patch *patch = NULL;

    assert_int_equal(liq_geom_make(&g, n, nq), 0);
    liq_coeffs(n, &c, &c2);
    q = calloc((size_t)nq, sizeof(*q));
    assert_non_null(q);
    for (int id = 0; id < nq; id++) {
        int lo[3], hi[3], e[3];
        struct liq_patch tmp[1];
        int m;

        liq_quantum_extent(&g, id, lo, hi);
        liq_quantum_halo(&g, id, depth, q[id].ext);
        for (int a = 0; a < 3; a++) {
            q[id].n[a] = hi[a] - lo[a];
            e[a] = q[id].n[a] + q[id].ext[2 * a] + q[id].ext[2 * a + 1];
        }
        assert_int_equal(kern_plan_make(&q[id].plan, cache, e[0], e[1], e[2], flags), 0);
        assert_int_equal(kern_box_alloc(&q[id].a, e[0], e[1], e[2], q[id].plan.bi,
                                        q[id].plan.bj), 0);
        assert_int_equal(kern_box_alloc(&q[id].b, e[0], e[1], e[2], q[id].plan.bi,
                                        q[id].plan.bj), 0);
        assert_int_equal(kern_box_alloc(&q[id].rhs, e[0], e[1], e[2], q[id].plan.bi,
                                        q[id].plan.bj), 0);
        q[id].a.oi = q[id].rhs.oi = lo[0] - q[id].ext[0];
        q[id].a.oj = q[id].rhs.oj = lo[1] - q[id].ext[2];
        q[id].a.ok = q[id].rhs.ok = lo[2] - q[id].ext[4];
        liq_field_init(&q[id].a, &q[id].rhs, 7);
        kern_box_copy(&q[id].b, &q[id].a);
        q[id].cur = &q[id].a;
        q[id].nxt = &q[id].b;
        q[id].repeat = heavy > 1 && liq_quantum_heavy(&g, id) ? heavy : 1;
        /* Every patch lies in its source and in dst's box, outside dst. */
        m = liq_halo_patches(&g, depth, id, tmp, 0);
        assert_true(m >= 0);
        patch = realloc(patch, (size_t)(npatch + m + 1) * sizeof(*patch));
        assert_non_null(patch);
        assert_int_equal(liq_halo_patches(&g, depth, id, patch + npatch, m), m);
        for (int x = npatch; x < npatch + m; x++) {
            int slo[3], shi[3], inside = 1;

            liq_quantum_extent(&g, patch[x].src, slo, shi);
            assert_int_not_equal(patch[x].src, id);
            for (int a = 0; a < 3; a++) {
                assert_true(patch[x].lo[a] >= slo[a] && patch[x].hi[a] <= shi[a]);
                assert_true(patch[x].lo[a] >= lo[a] - depth && patch[x].hi[a] <= hi[a] + depth);
                inside &= patch[x].lo[a] >= lo[a] && patch[x].hi[a] <= hi[a];
            }
            assert_false(inside);
        }
        npatch += m;
    }
    for (int it = 0; it < iters; it += halo) {
        int blk = halo < iters - it ? halo : iters - it;

        for (int x = 0; x < npatch; x++)
            liq_region_copy(q[patch[x].dst].cur, q[patch[x].src].cur, &patch[x]);
        for (int id = 0; id < nq; id++)
            assert_int_equal(liq_block(&q[id].cur, &q[id].nxt, &q[id].rhs, k, c, c2, blk,
                                       q[id].repeat, &q[id].plan), 0);
    }
    assert_int_equal(liq_reference(n, k, iters, 7, &ref), 0);
    for (int id = 0; id < nq; id++) {
        struct kern_box own;

        liq_quantum_view(q[id].cur, q[id].ext, q[id].n, &own);
        for (int z = 1; z <= own.nk; z++)
            for (int y = 1; y <= own.nj; y++)
                for (int x = 1; x <= own.ni; x++)
                    if (memcmp(kern_at(&own, x, y, z),
                               kern_at(&ref, (int)own.oi + x, (int)own.oj + y, (int)own.ok + z),
                               sizeof(double)) != 0)
                        same = 0;
        kern_box_free(&q[id].a);
        kern_box_free(&q[id].b);
        kern_box_free(&q[id].rhs);
    }
    kern_box_free(&ref);
    free(patch);
    free(q);
    return same;
}

static void
test_jacobi_deep_halos_bit_identical(void **state)
{
    int n[3] = { 23, 18, 15 };

    (void)state;
    for (int h = 1; h <= 6; h++)
        assert_true(sim_run(n, 12, LIQ_JACOBI, 13, h, 1, 32768, KERN_PLAN_FAST));
    /* Thin quanta: a halo deeper than its neighbour reaches the next one. */
    int thin[3] = { 40, 9, 8 };

    assert_true(sim_run(thin, 16, LIQ_JACOBI, 9, 5, 1, 32768, KERN_PLAN_FAST));
    assert_true(sim_run(n, 8, LIQ_JACOBI, 11, 4, 3, 32768, KERN_PLAN_FAST)); /* heavy */
    assert_true(sim_run(n, 6, LIQ_JACOBI, 7, 3, 1, 1 << 20, KERN_PLAN_PAD));
}

static void
test_rbgs_deep_halos_bit_identical(void **state)
{
    int n[3] = { 21, 17, 19 };

    (void)state;
    for (int h = 1; h <= 4; h++)
        assert_true(sim_run(n, 12, LIQ_RBGS, 9, h, 1, 32768, KERN_PLAN_FAST));
    int thin[3] = { 33, 10, 7 };

    assert_true(sim_run(thin, 16, LIQ_RBGS, 7, 3, 1, 32768, KERN_PLAN_FAST));
    assert_true(sim_run(n, 8, LIQ_RBGS, 6, 2, 4, 32768, KERN_PLAN_FAST)); /* heavy */
}

/* A halo one point too shallow must be caught: the check can fail. */
static void
test_shallow_halo_differs(void **state)
{
    int n[3] = { 20, 20, 20 };
    struct liq_geom g;
    struct liq_patch p[64];

    (void)state;
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    /* Depth 1: the three faces of a corner quantum, no edges. */
    assert_int_equal(liq_halo_patches(&g, 1, 0, p, 64), 3);
    /* Depth 2: faces and the three edges; depth 3: the corner too. */
    assert_int_equal(liq_halo_patches(&g, 2, 0, p, 64), 6);
    assert_int_equal(liq_halo_patches(&g, 3, 0, p, 64), 7);
    for (int i = 0; i < 7; i++)
        assert_true(p[i].src > 0 && p[i].dst == 0);
    assert_int_equal(liq_halo_patches(&g, 0, 0, p, 64), -EINVAL);
    int ext[6];

    liq_quantum_halo(&g, 0, 3, ext);
    assert_int_equal(ext[0], 0);
    assert_int_equal(ext[1], 2);
    /* A block of 3 Jacobi sweeps (or 2 red-black iterations) with a halo
     * one point too shallow loses bits. */
    depth_cut = 1;
    assert_false(sim_run(n, 8, LIQ_JACOBI, 6, 3, 1, 32768, KERN_PLAN_FAST));
    assert_false(sim_run(n, 8, LIQ_RBGS, 4, 2, 1, 32768, KERN_PLAN_FAST));
    depth_cut = 0;
    assert_true(sim_run(n, 8, LIQ_JACOBI, 6, 3, 1, 32768, KERN_PLAN_FAST));
}

static void
test_halo_work_and_auto(void **state)
{
    int n[3] = { 160, 160, 160 }, small[3] = { 48, 48, 48 };
    struct liq_geom g;

    (void)state;
    /* One quantum: no neighbour, no extra points, the deepest halo. */
    assert_int_equal(liq_geom_make(&g, n, 1), 0);
    assert_true(liq_halo_work(&g, LIQ_JACOBI, 8) == 1.0);
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 8), 8);
    /* 2x2x2 quanta of 80: depth 3 adds 2 layers on three sides: 82^3/80^3. */
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    assert_true(liq_halo_work(&g, LIQ_JACOBI, 3) > 1.0768 && liq_halo_work(&g, LIQ_JACOBI, 3) < 1.0770);
    assert_true(liq_halo_work(&g, LIQ_RBGS, 2) > liq_halo_work(&g, LIQ_JACOBI, 2));
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 8), 4); /* 83^3/80^3 = 1.117; 84^3: 1.158 */
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 3), 3);
    /* Small quanta: no halo pays. */
    assert_int_equal(liq_geom_make(&g, small, 64), 0);
    assert_int_equal(liq_halo_auto(&g, LIQ_RBGS, 8), 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jacobi_deep_halos_bit_identical),
        cmocka_unit_test(test_rbgs_deep_halos_bit_identical),
        cmocka_unit_test(test_shallow_halo_differs),
        cmocka_unit_test(test_halo_work_and_auto),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
