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
/* liq_geom.apart of sim_place's regions. */
static int sim_apart;
/* Jacobi sweeps per pass, when not the plan's (0): the worker runs both
 * (one sweep per pass where its boxes fit in the last-level cache). */
static int force_steps;

struct sim_r {
    int ext[6];
    struct kern_box a, b, rhs, *cur, *nxt;
    struct kern_plan plan;
    int repeat;
};

/*
 * Run iters iterations of kernel k on grid n cut into nq quanta placed by
 * owner (NULL: every quantum alone), each worker's quanta swept as the
 * regions liq_regions cuts, halos of `halo` iterations per exchange
 * refreshed from the other regions, heavy quanta repeating their phases;
 * 1 if every point equals the reference's.  *nregions: how many regions.
 */
static int
sim_place(const int n[3], int nq, const int *owner, enum liq_kernel k, int iters, int halo,
          int heavy, size_t cache, unsigned flags, int *nregions)
{
    struct liq_geom g;
    struct sim_r *r;
    struct liq_region_box *box;
    struct kern_box ref;
    double c, c2;
    int depth = liq_halo_depth(k, halo) - depth_cut, same = 1, npatch = 0, nr;
    int *own = malloc((size_t)nq * sizeof(int)), *of = malloc((size_t)nq * sizeof(int));
    struct liq_patch *patch = NULL;

    assert_int_equal(liq_geom_make(&g, n, nq), 0);
    g.apart = sim_apart;
    liq_coeffs(n, &c, &c2);
    assert_non_null(own);
    assert_non_null(of);
    for (int id = 0; id < nq; id++)
        own[id] = owner != NULL ? owner[id] : id;
    box = calloc((size_t)nq, sizeof(*box));
    assert_non_null(box);
    nr = liq_regions(&g, own, depth, heavy, of, box);
    assert_true(nr >= 1 && nr <= nq);
    *nregions = nr;
    r = calloc((size_t)nr, sizeof(*r));
    assert_non_null(r);
    /* Every quantum is in its region's box; the regions cover the grid once. */
    for (int id = 0; id < nq; id++) {
        int lo[3], hi[3];

        liq_quantum_extent(&g, id, lo, hi);
        assert_int_equal(box[of[id]].owner, own[id]);
        for (int a = 0; a < 3; a++)
            assert_true(lo[a] >= box[of[id]].lo[a] && hi[a] <= box[of[id]].hi[a]);
    }
    long long cover = 0;

    for (int x = 0; x < nr; x++) {
        int *lo = box[x].lo, *hi = box[x].hi, e[3], m;

        cover += (long long)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        liq_box_halo(&g, lo, hi, depth, r[x].ext);
        for (int a = 0; a < 3; a++)
            e[a] = hi[a] - lo[a] + r[x].ext[2 * a] + r[x].ext[2 * a + 1];
        assert_int_equal(kern_plan_make(&r[x].plan, cache, e[0], e[1], e[2], flags), 0);
        if (force_steps > 0)
            r[x].plan.jac_steps = force_steps;
        assert_int_equal(kern_box_alloc(&r[x].a, e[0], e[1], e[2], r[x].plan.bi, r[x].plan.bj), 0);
        assert_int_equal(kern_box_alloc(&r[x].b, e[0], e[1], e[2], r[x].plan.bi, r[x].plan.bj), 0);
        assert_int_equal(kern_box_alloc(&r[x].rhs, e[0], e[1], e[2], r[x].plan.bi, r[x].plan.bj),
                         0);
        r[x].a.oi = r[x].rhs.oi = lo[0] - r[x].ext[0];
        r[x].a.oj = r[x].rhs.oj = lo[1] - r[x].ext[2];
        r[x].a.ok = r[x].rhs.ok = lo[2] - r[x].ext[4];
        liq_field_init(&r[x].a, &r[x].rhs, 7);
        kern_box_copy(&r[x].b, &r[x].a);
        r[x].cur = &r[x].a;
        r[x].nxt = &r[x].b;
        r[x].repeat = box[x].heavy ? heavy : 1;
        /* Every patch lies in its source and in the region's box, outside it. */
        m = liq_box_patches(&g, depth, lo, hi, x, NULL, 0);
        assert_true(m >= 0);
        patch = realloc(patch, (size_t)(npatch + m + 1) * sizeof(*patch));
        assert_non_null(patch);
        assert_int_equal(liq_box_patches(&g, depth, lo, hi, x, patch + npatch, m), m);
        for (int y = npatch; y < npatch + m; y++) {
            int slo[3], shi[3], inside = 1;

            liq_quantum_extent(&g, patch[y].src, slo, shi);
            assert_int_not_equal(of[patch[y].src], x);
            assert_int_equal(patch[y].dst, x);
            for (int a = 0; a < 3; a++) {
                assert_true(patch[y].lo[a] >= slo[a] && patch[y].hi[a] <= shi[a]);
                assert_true(patch[y].lo[a] >= lo[a] - depth && patch[y].hi[a] <= hi[a] + depth);
                inside &= patch[y].lo[a] >= lo[a] && patch[y].hi[a] <= hi[a];
            }
            assert_false(inside);
            /* A region that needs no other worker's points gets none. */
            if (!box[x].remote)
                assert_int_equal(own[patch[y].src], box[x].owner);
        }
        npatch += m;
    }
    assert_true(cover == (long long)n[0] * n[1] * n[2]);
    for (int it = 0; it < iters; it += halo) {
        int blk = halo < iters - it ? halo : iters - it;

        for (int x = 0; x < npatch; x++)
            liq_region_copy(r[patch[x].dst].cur, r[of[patch[x].src]].cur, &patch[x]);
        for (int x = 0; x < nr; x++)
            assert_int_equal(liq_block(&r[x].cur, &r[x].nxt, &r[x].rhs, k, c, c2, blk,
                                       r[x].repeat, &r[x].plan), 0);
    }
    assert_int_equal(liq_reference(n, k, iters, 7, &ref), 0);
    for (int id = 0; id < nq; id++) {
        struct kern_box view;
        const struct kern_box *b = r[of[id]].cur;
        int lo[3], hi[3], cnt[3], e[6];

        liq_quantum_extent(&g, id, lo, hi);
        for (int a = 0; a < 3; a++) {
            cnt[a] = hi[a] - lo[a];
            e[2 * a + 1] = 0;
        }
        e[0] = lo[0] - (int)b->oi;
        e[2] = lo[1] - (int)b->oj;
        e[4] = lo[2] - (int)b->ok;
        liq_quantum_view(b, e, cnt, &view);
        for (int z = 1; z <= view.nk; z++)
            for (int y = 1; y <= view.nj; y++)
                for (int x = 1; x <= view.ni; x++)
                    if (memcmp(kern_at(&view, x, y, z),
                               kern_at(&ref, (int)view.oi + x, (int)view.oj + y, (int)view.ok + z),
                               sizeof(double)) != 0)
                        same = 0;
    }
    for (int x = 0; x < nr; x++) {
        kern_box_free(&r[x].a);
        kern_box_free(&r[x].b);
        kern_box_free(&r[x].rhs);
    }
    kern_box_free(&ref);
    free(patch);
    free(r);
    free(box);
    free(own);
    free(of);
    return same;
}

/* Every quantum a box of its own. */
static int
sim_run(const int n[3], int nq, enum liq_kernel k, int iters, int halo, int heavy,
        size_t cache, unsigned flags)
{
    int nr;

    return sim_place(n, nq, NULL, k, iters, halo, heavy, cache, flags, &nr);
}

static void
test_jacobi_deep_halos_bit_identical(void **state)
{
    int n[3] = { 23, 18, 15 };

    int thin[3] = { 40, 9, 8 };
    int steps[3] = { 0, 1, KERN_JAC_STEPS };

    (void)state;
    /* The plan's passes, one sweep per pass, and the temporal kernel. */
    for (int s = 0; s < 3; s++) {
        force_steps = steps[s];
        for (int h = 1; h <= 6; h++)
            assert_true(sim_run(n, 12, LIQ_JACOBI, 13, h, 1, 32768, KERN_PLAN_FAST));
        /* Thin quanta: a halo deeper than its neighbour reaches the next one. */
        assert_true(sim_run(thin, 16, LIQ_JACOBI, 9, 5, 1, 32768, KERN_PLAN_FAST));
        assert_true(sim_run(n, 8, LIQ_JACOBI, 11, 4, 3, 32768, KERN_PLAN_FAST)); /* heavy */
        assert_true(sim_run(n, 6, LIQ_JACOBI, 7, 3, 1, 1 << 20, KERN_PLAN_PAD));
    }
    force_steps = 0;
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
    for (force_steps = 1; force_steps <= KERN_JAC_STEPS; force_steps += KERN_JAC_STEPS - 1)
        assert_false(sim_run(n, 8, LIQ_JACOBI, 6, 3, 1, 32768, KERN_PLAN_FAST));
    force_steps = 0;
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
    assert_true(liq_halo_work(&g, LIQ_JACOBI, 8, NULL, 1) == 1.0);
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 8, NULL, 1), 8);
    /* 2x2x2 quanta of 80: depth 3 adds 2 layers on three sides, and
     * Jacobi's three sweeps compute 2, 1 and 0 of them (the trapezoid):
     * (82^3 + 81^3 + 80^3) / 3 / 80^3; red-black's 2 sweeps reach 4 deep and
     * sweep 3 layers every time: 83^3 / 80^3. */
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    assert_true(liq_halo_work(&g, LIQ_JACOBI, 3, NULL, 1) > 1.03828 && liq_halo_work(&g, LIQ_JACOBI, 3, NULL, 1) < 1.03829);
    assert_true(liq_halo_work(&g, LIQ_RBGS, 2, NULL, 1) > 1.11676 && liq_halo_work(&g, LIQ_RBGS, 2, NULL, 1) < 1.11678);
    assert_true(liq_halo_work(&g, LIQ_RBGS, 2, NULL, 1) > liq_halo_work(&g, LIQ_JACOBI, 2, NULL, 1));
    /* A description of reach 1 with levels (vmrun stencil's Jacobi,
     * liq_ukern.c) is priced as Jacobi; in place, as red-black. */
    assert_true(liq_halo_work(&g, LIQ_USER, 3, NULL, 1) ==
                liq_halo_work(&g, LIQ_JACOBI, 3, NULL, 1));
    assert_true(liq_halo_work(&g, LIQ_USER_RB, 2, NULL, 1) ==
                liq_halo_work(&g, LIQ_RBGS, 2, NULL, 1));
    assert_int_equal(liq_halo_auto(&g, LIQ_USER, 16, NULL, 1), 8);
    /* 8 sweeps: 1.1396; 9: 1.1609, past the slack. */
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 16, NULL, 1), 8);
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 3, NULL, 1), 3);
    /* Small quanta: no halo pays. */
    assert_int_equal(liq_geom_make(&g, small, 64), 0);
    assert_int_equal(liq_halo_auto(&g, LIQ_RBGS, 8, NULL, 1), 1);
}

static void
test_regions_cut(void **state)
{
    int n[3] = { 40, 40, 40 }, own[64], of[64], nr;
    struct liq_geom g;
    struct liq_region_box b[64];

    (void)state;
    /* One owner: the whole grid is one region, needing nobody. */
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    for (int i = 0; i < 8; i++)
        own[i] = 0;
    assert_int_equal(liq_regions(&g, own, 3, 1, of, b), 1);
    assert_int_equal(b[0].remote, 0);
    for (int a = 0; a < 3; a++) {
        assert_int_equal(b[0].lo[a], 0);
        assert_int_equal(b[0].hi[a], 40);
    }
    assert_true(liq_halo_work(&g, LIQ_JACOBI, 8, own, 1) == 1.0);
    assert_int_equal(liq_halo_auto(&g, LIQ_JACOBI, 16, own, 1), 16);
    /* Two owners, lower and upper k half: two slabs, both needing the other. */
    for (int i = 0; i < 8; i++)
        own[i] = i >= 4;
    assert_int_equal(liq_regions(&g, own, 1, 1, of, b), 2);
    assert_int_equal(b[0].remote + b[1].remote, 2);
    assert_int_equal(b[1].lo[2], 20);
    /* The heavy octant stays apart from the light quanta of its owner. */
    for (int i = 0; i < 8; i++)
        own[i] = 0;
    /* Greedy from the lowest id: {0}, {1,3,5,7}, {2,6}, {4}. */
    assert_int_equal(liq_regions(&g, own, 1, 3, of, b), 4);
    assert_int_equal(of[7], 1);
    assert_int_equal(of[6], 2);
    assert_int_equal(of[0], 0);
    assert_int_equal(b[0].heavy, 1);
    assert_int_equal(b[1].heavy + b[2].heavy + b[3].heavy, 0);
    /* 4x4x4 quanta, owner 1 the layer at k = 0, owner 0 the rest: owner 0's
     * quanta make one box, which needs owner 1's points (its inner boxes
     * compute while the ghosts travel). */
    assert_int_equal(liq_geom_make(&g, n, 64), 0);
    for (int i = 0; i < 64; i++)
        own[i] = i < 16 ? 1 : 0;
    nr = liq_regions(&g, own, 1, 1, of, b);
    assert_int_equal(nr, 2);
    assert_int_equal(of[16], of[63]);
    assert_int_equal(b[of[63]].remote, 1);
    assert_int_equal(b[of[63]].lo[2], 10);
    assert_int_equal(b[of[0]].remote, 1);
    /* Kept apart (a Neumann face): the quanta away from the foreign face
     * make a region that computes while the ghosts travel. */
    g.apart = 1;
    nr = liq_regions(&g, own, 1, 1, of, b);
    assert_int_equal(nr, 3); /* owner 1's slab; owner 0's slab next to it; the rest */
    assert_int_equal(b[of[63]].remote, 0);
    assert_int_equal(b[of[16]].remote, 1);
    assert_int_equal(b[of[0]].remote, 1);
    assert_int_equal(b[of[63]].lo[2], 20);
    /* Depth 11 reaches past the next slab (10 points thick) into the third. */
    nr = liq_regions(&g, own, 11, 1, of, b);
    assert_int_equal(nr, 3);
    assert_int_equal(b[of[32]].remote, 1);
    assert_int_equal(b[of[63]].remote, 0);
    assert_int_equal(b[of[63]].lo[2], 30);
}

/* Regions of several placements, swept as one box each, against the reference. */
static void
test_regions_bit_identical(void **state)
{
    int n[3] = { 26, 21, 17 }, own[64], nr;
    unsigned seed = 12345;

    (void)state;
    for (int trial = 0; trial < 12; trial++) {
        enum liq_kernel k = trial % 2 ? LIQ_RBGS : LIQ_JACOBI;

        sim_apart = trial >= 6; /* regions by class, and kept apart */
        /* Blocks of a few owners, then some quanta given away at random. */
        for (int i = 0; i < 27; i++) {
            seed = seed * 1103515245u + 12345u;
            own[i] = (i % 3 >= 1) + 2 * (i / 9 >= 2);
            if ((seed >> 16) % 5 == 0)
                own[i] = (int)((seed >> 8) % 4);
        }
        assert_true(sim_place(n, 27, own, k, 11, 1 + trial % 4, 1, 32768, KERN_PLAN_FAST, &nr));
        assert_true(nr < 27);
    }
    sim_apart = 0;
    /* Heavy quanta of one owner, and a padded layout. */
    for (int i = 0; i < 27; i++)
        own[i] = i / 14;
    assert_true(sim_place(n, 27, own, LIQ_JACOBI, 9, 3, 3, 32768, KERN_PLAN_FAST, &nr));
    assert_true(sim_place(n, 27, own, LIQ_RBGS, 6, 2, 2, 1 << 20, KERN_PLAN_PAD, &nr));
    /* One owner: the whole grid in one box. */
    for (int i = 0; i < 27; i++)
        own[i] = 0;
    assert_true(sim_place(n, 27, own, LIQ_JACOBI, 10, 5, 1, 32768, KERN_PLAN_FAST, &nr));
    assert_int_equal(nr, 1);
    /* And the check can fail: regions whose halo is one point too shallow. */
    for (int i = 0; i < 27; i++)
        own[i] = i % 2;
    depth_cut = 1;
    assert_false(sim_place(n, 27, own, LIQ_JACOBI, 6, 3, 1, 32768, KERN_PLAN_FAST, &nr));
    assert_false(sim_place(n, 27, own, LIQ_RBGS, 4, 2, 1, 32768, KERN_PLAN_FAST, &nr));
    depth_cut = 0;
}

/* Pieces of p cut to `most` points; each its points, p's rows unbroken,
 * none above most but a single row; together p's points in p's order (the
 * gets of the pieces one after the other equal p's get), and put back
 * piece by piece they fill p.  Returns how many pieces. */
static int
check_cut(const struct kern_box *b, const struct liq_patch *p, size_t most)
{
    int n = liq_patch_cut(p, most, NULL, 0);
    struct liq_patch *v = calloc((size_t)n, sizeof(*v));
    double *whole = malloc(p->points * sizeof(double)), *cut = malloc(p->points * sizeof(double));
    size_t at = 0;
    struct kern_box c;

    assert_true(n >= 1 && v != NULL && whole != NULL && cut != NULL);
    assert_int_equal(liq_patch_cut(p, most, v, n), n);
    liq_region_get(b, p, whole);
    for (int i = 0; i < n; i++) {
        size_t rows = (size_t)(v[i].hi[1] - v[i].lo[1]) * (size_t)(v[i].hi[2] - v[i].lo[2]);

        assert_int_equal(v[i].lo[0], p->lo[0]);
        assert_int_equal(v[i].hi[0], p->hi[0]);
        assert_true(v[i].points == rows * (size_t)(p->hi[0] - p->lo[0]));
        assert_true(v[i].points <= most || rows == 1 || n == 1);
        assert_true(at + v[i].points <= p->points);
        liq_region_get(b, &v[i], cut + at);
        at += v[i].points;
    }
    assert_true(at == p->points);
    assert_memory_equal(cut, whole, p->points * sizeof(double));
    assert_int_equal(kern_box_alloc(&c, b->ni, b->nj, b->nk, 0, 0), 0);
    at = 0;
    for (int i = 0; i < n; i++) {
        liq_region_put(&c, &v[i], whole + at);
        at += v[i].points;
    }
    liq_region_get(&c, p, cut);
    assert_memory_equal(cut, whole, p->points * sizeof(double));
    kern_box_free(&c);
    free(v);
    free(whole);
    free(cut);
    return n;
}

/* A ghost patch cut into the pieces its messages carry (liq_exchange.c). */
static void
test_patch_cut(void **state)
{
    struct kern_box b;
    struct liq_patch p = { .lo = { 2, 1, 3 }, .hi = { 21, 18, 16 } };
    const size_t row = 19, plane = 19 * 17;

    (void)state;
    p.points = plane * 13;
    assert_int_equal(kern_box_alloc(&b, 23, 19, 17, 0, 0), 0);
    kern_box_fill(&b, 9);
    assert_int_equal(check_cut(&b, &p, p.points), 1);          /* fits: as it is */
    assert_int_equal(check_cut(&b, &p, 1u << 30), 1);
    assert_int_equal(check_cut(&b, &p, p.points - 1), 2);      /* slabs of 12 planes and 1 */
    assert_int_equal(check_cut(&b, &p, plane * 5), 3);         /* 5, 5, 3 planes */
    assert_int_equal(check_cut(&b, &p, plane * 5 + 7), 3);
    assert_int_equal(check_cut(&b, &p, plane), 13);            /* a plane each */
    assert_int_equal(check_cut(&b, &p, plane - 1), 13 * 2);    /* 16 rows and 1, per plane */
    assert_int_equal(check_cut(&b, &p, row * 4), 13 * 5);      /* 4, 4, 4, 4, 1 rows */
    assert_int_equal(check_cut(&b, &p, row), 13 * 17);         /* a row each */
    assert_int_equal(check_cut(&b, &p, 5), 13 * 17);           /* a row is never cut */
    assert_int_equal(check_cut(&b, &p, 0), 13 * 17);
    /* Across a periodic end: the pieces keep the patch's shift. */
    p.shift[2] = 17;
    p.lo[2] += 17;
    p.hi[2] += 17;
    for (size_t m = 1; m < p.points + 2; m += 97) {
        struct liq_patch v[300];
        int n = liq_patch_cut(&p, m, v, 300);

        assert_true(n <= 300);
        for (int i = 0; i < n; i++)
            assert_int_equal(v[i].shift[2], 17);
    }
    kern_box_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jacobi_deep_halos_bit_identical),
        cmocka_unit_test(test_rbgs_deep_halos_bit_identical),
        cmocka_unit_test(test_shallow_halo_differs),
        cmocka_unit_test(test_halo_work_and_auto),
        cmocka_unit_test(test_regions_cut),
        cmocka_unit_test(test_regions_bit_identical),
        cmocka_unit_test(test_patch_cut),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
