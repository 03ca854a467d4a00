/*
 * liq_halo.c - deep halos (seed 000; step 4 of the liquid runtime): a
 * quantum's box reaches `depth` points into its neighbours, so that one
 * exchange of ghosts serves several sweeps and the kernels' temporal
 * blocking can run inside the runtime.
 *
 * A 7-point sweep makes a point depend on the points one step away, so
 * after s sweeps the quantum's points depend only on points within L1
 * distance s.  With a halo of depth D refreshed before a block of sweeps,
 * the whole extended box is swept as one box (its own ghosts held fixed);
 * the outer layers go stale one per sweep, and after D sweeps (Jacobi) or
 * D/2 iterations (red-black: two half-sweeps each) the quantum's own points
 * hold exactly what the one-layer scheme gives: the same operations on the
 * same operands, so the same bits.  The points a halo computes twice are
 * the price (liq_halo_work, liq_depth.c); fewer, larger messages and
 * temporal blocking are the gain.  This file holds the halo's geometry
 * (how far a box reaches, the patches it needs), the copies of patches
 * between boxes and buffers, and the block that sweeps an extended box.
 */
#include "liq.h"

#include <errno.h>
#include <string.h>

void
liq_quantum_halo(const struct liq_geom *g, int id, int depth, int ext[6])
{
    int lo[3], hi[3];

    liq_quantum_extent(g, id, lo, hi);
    liq_box_halo(g, lo, hi, depth, ext);
}

void
liq_box_halo(const struct liq_geom *g, const int lo[3], const int hi[3], int depth, int ext[6])
{
    for (int a = 0; a < 3; a++) {
        int down = lo[a], up = g->n[a] - hi[a], d = depth > 1 ? depth - 1 : 0;

        /* Never past the grid: the box's ghost must land on the Dirichlet
         * layer (an update of reach r needs r of them: r - 1 beyond the
         * grid and the ghost).  A periodic axis has no end: its halo
         * reaches across. */
        if (g->periodic[a]) {
            down = up = d;
        } else if (g->reach[a] > 1) {
            down += g->reach[a] - 1;
            up += g->reach[a] - 1;
        }
        ext[2 * a] = d < down ? d : down;
        ext[2 * a + 1] = d < up ? d : up;
    }
}

int
liq_trapezoid_layers(int ext, int n, int s)
{
    return ext < n - s ? ext : n - s;
}

/* The quantum index along axis a that holds interior coordinate x. */
static int
liq_axis_quantum(const struct liq_geom *g, int a, int x)
{
    int r = (int)((long long)x * g->q[a] / g->n[a]);

    while (r + 1 < g->q[a] && (long long)(r + 1) * g->n[a] / g->q[a] <= x)
        r++;
    while (r > 0 && (long long)r * g->n[a] / g->q[a] > x)
        r--;
    return r;
}

int
liq_halo_patches(const struct liq_geom *g, int depth, int dst, struct liq_patch *out, int max)
{
    int lo[3], hi[3];

    if (dst < 0 || dst >= g->nquanta)
        return -EINVAL;
    liq_quantum_extent(g, dst, lo, hi);
    return liq_box_patches(g, depth, lo, hi, dst, out, max);
}

/* The patch of source quantum src, its points shifted by sh (a multiple of
 * the grid's extents), that the halo [rlo, rhi) of box [lo, hi) needs;
 * 0 when there is none. */
static int
liq_patch_of(const struct liq_geom *g, int depth, const int lo[3], const int hi[3],
             const int rlo[3], const int rhi[3], int src, const int sh[3], struct liq_patch *p)
{
    int slo[3], shi[3], gap = 0, inside = 1;

    liq_quantum_extent(g, src, slo, shi);
    for (int a = 0; a < 3; a++) {
        slo[a] += sh[a];
        shi[a] += sh[a];
        inside &= slo[a] >= lo[a] && shi[a] <= hi[a];
    }
    if (inside)
        return 0;
    for (int a = 0; a < 3; a++) {
        p->lo[a] = slo[a] > rlo[a] ? slo[a] : rlo[a];
        p->hi[a] = shi[a] < rhi[a] ? shi[a] : rhi[a];
        p->shift[a] = sh[a];
        if (p->lo[a] >= p->hi[a])
            return 0;
        /* How far the patch's nearest point is outside dst on this axis. */
        if (p->hi[a] <= lo[a])
            gap += lo[a] - p->hi[a] + 1;
        else if (p->lo[a] >= hi[a])
            gap += p->lo[a] - hi[a] + 1;
    }
    /* A 7-point sweep reaches one point further per sweep along one axis:
     * points further than depth (L1) from dst cannot reach it.  A box
     * stencil reaches diagonally: every patch of the halo counts. */
    if (!g->corners && gap > depth)
        return 0;
    p->src = src;
    p->points = (size_t)(p->hi[0] - p->lo[0]) * (size_t)(p->hi[1] - p->lo[1]) *
                (size_t)(p->hi[2] - p->lo[2]);
    return 1;
}

int
liq_box_patches(const struct liq_geom *g, int depth, const int lo[3], const int hi[3], int dst,
                struct liq_patch *out, int max)
{
    int ext[6], rlo[3], rhi[3], n = 0, wrap[3];

    if (depth < 1)
        return -EINVAL;
    for (int a = 0; a < 3; a++)
        if (lo[a] < 0 || hi[a] > g->n[a] || lo[a] >= hi[a])
            return -EINVAL;
    liq_box_halo(g, lo, hi, depth, ext);
    for (int a = 0; a < 3; a++) {
        /* The box's interior and its ghost layer, where that is in the
         * grid (a periodic axis: all of it, across the grid's end). */
        rlo[a] = lo[a] - ext[2 * a];
        rhi[a] = hi[a] + ext[2 * a + 1];
        if (g->periodic[a]) {
            rlo[a]--;
            rhi[a]++;
            if (rlo[a] < -g->n[a] || rhi[a] > 2 * g->n[a])
                return -ERANGE; /* the halo would reach across the grid more than once */
        } else {
            rlo[a] -= rlo[a] > 0;
            rhi[a] += rhi[a] < g->n[a];
        }
        wrap[a] = g->periodic[a] ? 1 : 0;
    }
    /* Sources by shift (the grid's own copy first), then by id. */
    for (int sz = 0; sz <= 2 * wrap[2]; sz++)
        for (int sy = 0; sy <= 2 * wrap[1]; sy++)
            for (int sx = 0; sx <= 2 * wrap[0]; sx++) {
                const int s3[3] = { sx, sy, sz };
                int sh[3], qlo[3], qhi[3], skip = 0;

                for (int a = 0; a < 3; a++) {
                    /* 0, then -1, then +1 extents */
                    int m = s3[a] == 0 ? 0 : s3[a] == 1 ? -1 : 1;
                    int l = rlo[a] - m * g->n[a], h = rhi[a] - m * g->n[a];

                    sh[a] = m * g->n[a];
                    l = l < 0 ? 0 : l;
                    h = h > g->n[a] ? g->n[a] : h;
                    if (l >= h) {
                        skip = 1;
                        break;
                    }
                    qlo[a] = liq_axis_quantum(g, a, l);
                    qhi[a] = liq_axis_quantum(g, a, h - 1);
                }
                if (skip)
                    continue;
                for (int z = qlo[2]; z <= qhi[2]; z++)
                    for (int y = qlo[1]; y <= qhi[1]; y++)
                        for (int x = qlo[0]; x <= qhi[0]; x++) {
                            struct liq_patch p;
                            int src = x + g->q[0] * (y + g->q[1] * z);

                            if (!liq_patch_of(g, depth, lo, hi, rlo, rhi, src, sh, &p))
                                continue;
                            p.dst = dst;
                            if (n < max)
                                out[n] = p;
                            n++;
                        }
            }
    return n;
}

/* Address in b of interior coordinate (x, y, z) (0-based, global). */
static double *
liq_region_at(const struct kern_box *b, int x, int y, int z)
{
    return kern_at(b, (int)(x + 1 - b->oi), (int)(y + 1 - b->oj), (int)(z + 1 - b->ok));
}

int
liq_patch_cut(const struct liq_patch *p, size_t most, struct liq_patch *out, int max)
{
    size_t row = (size_t)(p->hi[0] - p->lo[0]), plane = row * (size_t)(p->hi[1] - p->lo[1]);
    struct liq_patch q = *p;
    int dz, dy, n = 0;

    if (p->points <= most || plane == 0) {
        if (max > 0)
            out[0] = *p;
        return 1;
    }
    if (plane <= most) {
        dz = (int)(most / plane);
        dy = p->hi[1] - p->lo[1];
    } else {
        dz = 1;
        dy = most / row > 0 ? (int)(most / row) : 1;
    }
    for (int z = p->lo[2]; z < p->hi[2]; z += dz)
        for (int y = p->lo[1]; y < p->hi[1]; y += dy) {
            q.lo[2] = z;
            q.hi[2] = z + dz < p->hi[2] ? z + dz : p->hi[2];
            q.lo[1] = y;
            q.hi[1] = y + dy < p->hi[1] ? y + dy : p->hi[1];
            q.points = row * (size_t)(q.hi[1] - q.lo[1]) * (size_t)(q.hi[2] - q.lo[2]);
            if (n < max)
                out[n] = q;
            n++;
        }
    return n;
}

void
liq_region_get(const struct kern_box *b, const struct liq_patch *p, double *buf)
{
    size_t row = (size_t)(p->hi[0] - p->lo[0]);
    const int *s = p->shift;

    for (int z = p->lo[2]; z < p->hi[2]; z++)
        for (int y = p->lo[1]; y < p->hi[1]; y++, buf += row)
            memcpy(buf, liq_region_at(b, p->lo[0] - s[0], y - s[1], z - s[2]),
                   row * sizeof(double));
}

void
liq_region_put(struct kern_box *b, const struct liq_patch *p, const double *buf)
{
    size_t row = (size_t)(p->hi[0] - p->lo[0]);

    for (int z = p->lo[2]; z < p->hi[2]; z++)
        for (int y = p->lo[1]; y < p->hi[1]; y++, buf += row)
            memcpy(liq_region_at(b, p->lo[0], y, z), buf, row * sizeof(double));
}

void
liq_region_copy(struct kern_box *dst, const struct kern_box *src, const struct liq_patch *p)
{
    size_t row = (size_t)(p->hi[0] - p->lo[0]) * sizeof(double);

    for (int z = p->lo[2]; z < p->hi[2]; z++)
        for (int y = p->lo[1]; y < p->hi[1]; y++)
            memcpy(liq_region_at(dst, p->lo[0], y, z),
                   liq_region_at(src, p->lo[0] - p->shift[0], y - p->shift[1], z - p->shift[2]),
                   row);
}

void
liq_quantum_view(const struct kern_box *box, const int ext[6], const int n[3],
                 struct kern_box *view)
{
    *view = *box;
    view->map = NULL;
    view->map_len = 0;
    view->data = kern_at(box, ext[0], ext[2], ext[4]);
    view->ni = n[0];
    view->nj = n[1];
    view->nk = n[2];
    view->oi = box->oi + ext[0];
    view->oj = box->oj + ext[2];
    view->ok = box->ok + ext[4];
}

int
liq_block(struct kern_box **cur, struct kern_box **nxt, const struct kern_box *rhs,
          enum liq_kernel k, double c, double c2, int sweeps, int repeat,
          const struct kern_plan *plan)
{
    struct kern_box *x;
    int rc = 0;

    if (sweeps < 1 || repeat < 1)
        return -EINVAL;
    if (k == LIQ_RBGS) {
        if (repeat == 1)
            return kern_rbgs_run(*cur, rhs, c, c2, sweeps, plan);
        /* Heavy: every half-sweep k times (each is idempotent). */
        for (int s = 0; s < sweeps && rc == 0; s++)
            for (int colour = KERN_RED; colour <= KERN_BLACK; colour++)
                for (int r = 0; r < repeat && rc == 0; r++)
                    rc = kern_rbgs_sweep(*cur, rhs, c, c2, colour, plan);
        return rc;
    }
    if (repeat == 1)
        return kern_jacobi_run_swap(cur, nxt, rhs, c, c2, sweeps, plan);
    for (int s = 0; s < sweeps && rc == 0; s++) {
        for (int r = 0; r < repeat && rc == 0; r++)
            rc = kern_jacobi_step(*nxt, *cur, rhs, c, c2, plan);
        x = *cur;
        *cur = *nxt;
        *nxt = x;
    }
    return rc;
}
