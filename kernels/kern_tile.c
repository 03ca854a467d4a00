/*
 * kern_tile.c - a host's plan for a box: tiles, padding and blocking.
 *
 * Seed 000 s2.3 and s3.7: tiles are chosen at run time from the cache of
 * the host that holds the box, never from the box alone, and recomputed
 * when the box moves.  The thesis's tiles come from GcdPad3D (TI x TJ with
 * 4 planes in the cache, ghost layer included, so TI-2 x TJ-2 interior
 * points are updated per tile), and so does its padding.
 *
 * Current CPUs (8-way L1 and L2 caches, hardware prefetchers that follow
 * long runs of memory) change two choices for the fast kernels, offered as
 * flags beside the thesis's scheme (docs/decisions.md, Kernels):
 *  - tiles narrower than a row cut each plane into short runs of memory
 *    that the hardware prefetchers stream badly, so KERN_PLAN_ROWS keeps
 *    whole rows and spends the same cache budget on more of them;
 *  - GcdPad3D pads each column to an odd multiple of TI (384 for N = 200,
 *    768 for N = 512 with TI = 256), and the gaps cost bandwidth, while
 *    8-way caches rarely see the conflicts padding cures; KERN_PLAN_ALIGN
 *    only rounds rows up to whole cache lines.
 */
#include "kern_int.h"

#include <errno.h>
#include <string.h>

#define KERN_LINE_ELEMS 8       /* doubles per 64-byte cache line */

/* Line padding: rows start on a cache line, and never a multiple of 4 KiB
 * apart (rows that far apart share L1 sets and alias in the load/store
 * disambiguation of many CPUs). */
static int align_row(int ai)
{
    int bi = (ai + KERN_LINE_ELEMS - 1) / KERN_LINE_ELEMS * KERN_LINE_ELEMS;

    if (bi % 512 == 0)
        bi += KERN_LINE_ELEMS;
    return bi;
}

/* Split n into pieces of at most want, all about equal: no sliver of a
 * last block that pays the per-block overhead for a few rows. */
static int balance(int n, int want)
{
    int pieces = (n + want - 1) / want;

    return (n + pieces - 1) / pieces;
}

static int clamp(size_t v, int lo, int hi)
{
    if (v < (size_t)lo)
        return lo;
    if (v > (size_t)hi)
        return hi;
    return (int)v;
}

int kern_plan_make(struct kern_plan *p, size_t cache_bytes, int ni, int nj, int nk,
                   unsigned flags)
{
    struct kern_gcdpad g;
    size_t box_bytes;
    int rc;

    if (p == NULL || cache_bytes == 0 || ni < 1 || nj < 1 || nk < 1)
        return -EINVAL;
    if (ni > INT32_MAX - 2 * KERN_LINE_ELEMS || nj > INT32_MAX - 2 || nk > INT32_MAX - 2)
        return -ERANGE;
    memset(p, 0, sizeof(*p));
    p->cache_elems = kern_cache_elems(cache_bytes);
    rc = kern_gcdpad3d(p->cache_elems, ni + 2, nj + 2, &g);
    if (rc != 0)
        return rc;
    p->ti = g.ti;
    p->tj = g.tj;
    p->flags = flags & (KERN_PLAN_PAD | KERN_PLAN_SIMD | KERN_PLAN_ROWS);
    if (flags & KERN_PLAN_PAD) {
        p->bi = g.bi;
        p->bj = g.bj;
    } else if (flags & KERN_PLAN_ALIGN) {
        p->bi = align_row(ni + 2);
        p->bj = nj + 2;
        p->flags |= KERN_PLAN_ALIGN;
    } else {
        p->bi = ni + 2;
        p->bj = nj + 2;
    }

    if (flags & KERN_PLAN_ROWS) {
        /*
         * The thesis's budget, TK planes of the tile in the cache, spent on
         * whole rows, and doubled: the fused kernel reads its planes back
         * from the next level well enough that fewer, larger tiles win,
         * short of whole planes on the largest grids.  Larger tiles
         * also keep the tile count constant over wide ranges of N, so the
         * grind time has no steps where it changes.
         */
        p->tile_i = ni;
        p->tile_j = balance(nj, clamp(2 * p->cache_elems / ((size_t)KERN_TK * (size_t)(ni + 2)),
                                      3, nj + 2) - 2);
    } else {
        p->tile_i = g.ti > 2 ? g.ti - 2 : 1;
        p->tile_j = g.tj > 2 ? g.tj - 2 : 1;
    }

    /*
     * Temporal blocking: six sweeps per pass cut the memory traffic per
     * update to a sixth, and the kernel becomes bound by the cache levels
     * instead; more sweeps make the overlapped halos and the scratch planes
     * grow faster than that gains (docs/decisions.md, Kernels, has the
     * sweep counts tried).  A block's scratch planes
     * (3 per sweep in flight) then overflow L2 into L3, which costs far less
     * than memory.
     */
    /* Red-black: one iteration per pass.  More are correct (the wavefront
     * of kern_rbgs.c) but no faster: the fused kernel is bound by the
     * latency of its two streams from memory, not by their bandwidth. */
    p->rb_steps = 1;

    box_bytes = (size_t)(ni + 2) * (size_t)(nj + 2) * (size_t)(nk + 2) * sizeof(double);
    p->jac_steps = KERN_JAC_STEPS;
    p->jac_rows = balance(nj, clamp(p->cache_elems / (5 * (size_t)(ni + 2)), 4, nj));
    /* Boxes small enough to stay in the last cache level gain nothing from
     * fewer passes and pay for the halos; a few times this cache is a fair
     * guess at L3. */
    if (3 * box_bytes <= 16 * p->cache_elems * sizeof(double))
        p->jac_steps = 1;

    /*
     * Non-temporal stores pay off only when the box will be evicted before
     * it is read again anyway: when it is far larger than this cache.
     */
    if ((flags & KERN_PLAN_STREAM) && box_bytes / 32 > p->cache_elems * sizeof(double))
        p->flags |= KERN_PLAN_STREAM;
    return 0;
}
