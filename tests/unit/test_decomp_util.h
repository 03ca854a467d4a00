/*
 * test_decomp_util.h: helpers shared by the decomp/ unit tests (header only,
 * so each test stays one binary): a fixed-seed PRNG for property tests and
 * layout checks used by several files.
 */
#ifndef TEST_DECOMP_UTIL_H
#define TEST_DECOMP_UTIL_H

#include "decomp.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

/* xorshift64*: deterministic across runs and hosts. */
static inline uint64_t
td_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static inline int
td_range(uint64_t *s, int lo, int hi)
{
    return lo + (int)(td_rand(s) % (uint64_t)(hi - lo + 1));
}

static inline struct decomp_grid
td_grid2(uint32_t rows, uint32_t cols, unsigned periodic)
{
    struct decomp_grid g = { 2, { cols, rows, 1 }, periodic, NULL };
    return g;
}

static inline struct decomp_grid
td_grid3(uint32_t nx, uint32_t ny, uint32_t nz, unsigned periodic)
{
    struct decomp_grid g = { 3, { nx, ny, nz }, periodic, NULL };
    return g;
}

static inline size_t
td_cells(const struct decomp_grid *g)
{
    return (size_t)g->dim[0] * g->dim[1] * g->dim[2];
}

/* Place and return a malloc'd owner array (asserts success). */
static inline int32_t *
td_place(const struct decomp_grid *g, enum decomp_method m, const double *speed, int p,
         struct decomp_box *box)
{
    struct decomp_spec s = { m, p, speed, 1, 0 };
    int32_t *owner = malloc(td_cells(g) * sizeof *owner);
    assert_non_null(owner);
    assert_int_equal(decomp_place(g, &s, owner, box), 0);
    return owner;
}

static inline uint64_t
td_messages(const struct decomp_grid *g, const int32_t *owner, int p)
{
    struct decomp_counts c;
    assert_int_equal(decomp_count(g, owner, p, &c), 0);
    uint64_t n = decomp_counts_messages(&c);
    decomp_counts_free(&c);
    return n;
}

/* Messages of a recursive method in exact (fractional) mode on an n x n torus. */
static inline uint64_t
td_exact_messages(enum decomp_method m, const double *speed, int p, double *items_per_n)
{
    struct decomp_grid g = td_grid2(60, 60, DECOMP_PERIODIC_ALL);
    struct decomp_spec s = { m, p, speed, 0, 0 };
    struct decomp_tree t;
    struct decomp_xbox *xb = calloc((size_t)p, sizeof *xb);
    struct decomp_counts c;

    assert_non_null(xb);
    assert_int_equal(decomp_tree_build(&g, &s, DECOMP_EXACT, &t), 0);
    assert_int_equal(decomp_tree_xboxes(&t, xb), 0);
    assert_int_equal(decomp_count_xboxes(&g, xb, p, &c), 0);
    uint64_t n = decomp_counts_messages(&c);
    if (items_per_n) {
        double items = 0;
        for (size_t l = 0; l < c.nlinks; l++)
            items += c.link[l].faces;
        *items_per_n = items / 60.0;
    }
    decomp_counts_free(&c);
    decomp_tree_free(&t);
    free(xb);
    return n;
}

/* Boxes are pairwise disjoint, cover the grid, and agree with owner[]. */
static inline void
td_check_boxes(const struct decomp_grid *g, const int32_t *owner, const struct decomp_box *box,
               int p)
{
    size_t vol = 0;
    for (int i = 0; i < p; i++) {
        size_t v = 1;
        for (int a = 0; a < 3; a++) {
            assert_true(box[i].lo[a] <= box[i].hi[a]);
            assert_true(box[i].hi[a] <= g->dim[a]);
            v *= box[i].hi[a] - box[i].lo[a];
        }
        vol += v;
    }
    /* Disjoint and covering together: volumes add up to the grid and every
     * cell lies in its owner's box. */
    assert_int_equal(vol, td_cells(g));
    for (uint32_t z = 0; z < g->dim[2]; z++)
        for (uint32_t y = 0; y < g->dim[1]; y++)
            for (uint32_t x = 0; x < g->dim[0]; x++) {
                size_t c = x + (size_t)g->dim[0] * (y + (size_t)g->dim[1] * z);
                const struct decomp_box *b = &box[owner[c]];
                assert_true(x >= b->lo[0] && x < b->hi[0]);
                assert_true(y >= b->lo[1] && y < b->hi[1]);
                assert_true(z >= b->lo[2] && z < b->hi[2]);
            }
}

#endif /* TEST_DECOMP_UTIL_H */
