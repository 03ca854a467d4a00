/*
 * kern_tile.c - a host's plan for a box: tiles, padding and blocking.
 *
 * Seed 000 s2.3 and s3.7: tiles are chosen at run time from the cache of
 * the host that holds the box, never from the box alone, and recomputed
 * when the box moves.  The thesis's tiles come from GcdPad3D (TI x TJ with
 * 4 planes in the cache, ghost layer included, so TI-2 x TJ-2 interior
 * points are updated per tile); the fast kernels add a row blocking of their
 * own, sized from the same cache (see block_rows() and temporal_steps()).
 */
#include "kern_int.h"

#include <errno.h>
#include <string.h>

/*
 * The fused red-black kernel keeps planes k-2..k+1 of u and k-1..k of rhs
 * busy at once: six planes of block rows (full i rows, for long vector
 * loops and a prefetcher that sees long streams).  Size the block so they
 * fill the cache.
 */
static int block_rows(size_t cache_elems, int ai, int nj, int planes)
{
    size_t rows = cache_elems / ((size_t)planes * (size_t)ai);

    if (rows < 4)
        rows = 4;
    if (rows > (size_t)nj)
        rows = (size_t)nj;
    return (int)rows;
}

int kern_plan_make(struct kern_plan *p, size_t cache_bytes, int ni, int nj, int nk,
                   unsigned flags)
{
    struct kern_gcdpad g;
    size_t box_bytes;
    int rc;

    if (p == NULL || cache_bytes == 0 || ni < 1 || nj < 1 || nk < 1)
        return -EINVAL;
    if (ni > INT32_MAX - 2 || nj > INT32_MAX - 2 || nk > INT32_MAX - 2)
        return -ERANGE;
    memset(p, 0, sizeof(*p));
    p->cache_elems = kern_cache_elems(cache_bytes);
    rc = kern_gcdpad3d(p->cache_elems, ni + 2, nj + 2, &g);
    if (rc != 0)
        return rc;
    p->ti = g.ti;
    p->tj = g.tj;
    if (flags & KERN_PLAN_PAD) {
        p->bi = g.bi;
        p->bj = g.bj;
    } else {
        p->bi = ni + 2;
        p->bj = nj + 2;
    }
    p->tile_i = g.ti > 2 ? g.ti - 2 : 1;
    p->tile_j = g.tj > 2 ? g.tj - 2 : 1;

    p->rb_rows = block_rows(p->cache_elems, ni + 2, nj, 6);

    /*
     * Temporal blocking: four sweeps per pass cut the memory traffic per
     * update to about a quarter; more sweeps make the overlapped halos and
     * the scratch planes grow faster than the traffic shrinks (measured on
     * a Zen 4, bench/kernels).  The blocks are sized for 8x the cache: the
     * scratch planes of one level are read back one plane later, from the
     * next cache level, which costs far less than memory.
     */
    p->jac_steps = 4;
    p->jac_rows = block_rows(p->cache_elems * 8, ni + 2, nj, 3 + 3 * (p->jac_steps - 1)
                                                                 + p->jac_steps);

    /*
     * Non-temporal stores pay off only when the box will be evicted before
     * it is read again anyway: when the three boxes of a Jacobi sweep are
     * far larger than this cache.
     */
    box_bytes = (size_t)(ni + 2) * (size_t)(nj + 2) * (size_t)(nk + 2) * sizeof(double);
    p->flags = flags & (KERN_PLAN_PAD | KERN_PLAN_SIMD);
    if ((flags & KERN_PLAN_STREAM) && box_bytes / 32 > p->cache_elems * sizeof(double))
        p->flags |= KERN_PLAN_STREAM;
    return 0;
}
