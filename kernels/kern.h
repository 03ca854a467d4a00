/*
 * kern.h - 3D 7-point stencil kernels, cache tiling and padding (seed 000).
 *
 * Who may include it: lib/ (libliquid), the tools and tests.  kernels/ is a
 * leaf: it knows nothing of sockets, processes or logging.  Every function
 * is pure and reentrant apart from three that touch the system, each named
 * for it: kern_box_alloc()/kern_box_free() map and unmap memory, and
 * kern_cache_detect() reads the cache size from sysfs.  No global mutable
 * state: two threads may run kernels on different boxes at once.
 *
 * Errors: 0 on success or a negative code, and only these three:
 *   -EINVAL  a bad argument (sizes < 1, boxes that do not match, a cache
 *            size that is not a power of two where one is required, no cache
 *            information in sysfs);
 *   -ENOMEM  an allocation failed (a box, or the scratch planes of a fast
 *            kernel); nothing was changed;
 *   -ERANGE  a size whose element count or byte count overflows.
 *
 * The box.  A box is an NI x NJ x NK block of interior points plus one ghost
 * layer on every side, so its storage spans AI = NI+2, AJ = NJ+2, AK = NK+2
 * points, indexed from 0 (the ghost corner).  Storage is i-fastest (Fortran
 * column-major, as the thesis's kernels) with padded leading dimensions
 * BI >= AI and BJ >= AJ: point (i,j,k) lives at data[i + BI*(j + BJ*k)].
 * K is never padded.  The padding (BI-AI per column, (BJ-AJ)*BI per plane)
 * is never read or written by anything here, so the pages that hold only
 * padding are never faulted in (seed 000 s3.6): a padded box costs about
 * BI*AJ*AK*8 bytes of RAM, not BI*BJ*AK*8.
 *
 * Global coordinates.  (oi, oj, ok) are the global coordinates of the ghost
 * corner; the box's point (i,j,k) is global point (oi+i, oj+j, ok+k).  The
 * red-black colour of a point is the parity of its *global* coordinate sum
 * (KERN_RED = even, KERN_BLACK = odd), so boxes and tiles at any offset
 * agree (docs/architecture.md, the invariant).
 *
 * The update (seed 000 Figure 4, with c2 scaling the right-hand side):
 *
 *   u'(i,j,k) = c * ( ((u(i-1)+u(i+1)) + (u(j-1)+u(j+1)))
 *                     + ((u(k+1)+u(k-1)) - c2*rhs(i,j,k)) )
 *
 * evaluated in exactly this order in every variant (scalar, SIMD, tiled,
 * fused, temporally blocked), with no FMA contraction, so every variant
 * gives bit-identical results to the reference kernels.  Jacobi writes u'
 * into a second box; red-black Gauss-Seidel writes it in place, first every
 * red interior point, then every black one (one iteration).  Ghost points
 * are never written: they hold the Dirichlet values (or a neighbour's copy,
 * refreshed by the caller before each sweep).
 *
 * Ownership.  A struct kern_box owns its mapping; kern_box_free() releases
 * it.  Kernels borrow boxes for the duration of the call.  Scratch memory of
 * the fast kernels is allocated and freed inside the call.
 */
#ifndef LIQUIDVM_KERN_H
#define LIQUIDVM_KERN_H

#include <stddef.h>
#include <stdint.h>

#define KERN_RED 0
#define KERN_BLACK 1

/* Planes that must fit in the cache together (3 of u and 1 of rhs). */
#define KERN_TK 4

/* Jacobi sweeps per pass of the temporally blocked kernel (kern_plan_make). */
#define KERN_JAC_STEPS 6

/* Cache size used when sysfs says nothing: the thesis's 256 KiB L2. */
#define KERN_CACHE_DEFAULT ((size_t)256 * 1024)

/* The largest cache, in doubles, the tile and pad functions accept. */
#define KERN_CACHE_MAX_ELEMS ((size_t)1 << 30)

struct kern_box {
    double *data;       /* point (0,0,0), the ghost corner */
    int ni, nj, nk;     /* interior points per axis, each >= 1 */
    int bi, bj;         /* leading dimensions: bi >= ni+2, bj >= nj+2 */
    long oi, oj, ok;    /* global coordinates of point (0,0,0) */
    void *map;          /* the mapping that holds data, owned by the box */
    size_t map_len;
};

/* Address of point (i,j,k), 0 <= i < ni+2 and so on; no checks. */
static inline double *kern_at(const struct kern_box *b, int i, int j, int k)
{
    return b->data + (i + (ptrdiff_t)b->bi * (j + (ptrdiff_t)b->bj * k));
}

/*
 * A host's plan for one box shape: tiles and padding from its cache, and
 * the blocking of the fast kernels.  kern_plan_make() fills it; it is plain
 * data, so a test may set any field by hand afterwards.  A plan is
 * recomputed when a box moves to a host with another cache: the receiver
 * makes its own plan and copies the box into a fresh layout (kern_box_alloc
 * + kern_box_copy, or kern_box_repad).
 *
 * Two layouts and two tile shapes:
 *   KERN_PLAN_PAD    the thesis's: GcdPad3D leading dimensions for the cache;
 *   KERN_PLAN_ALIGN  line padding: rows start on 64-byte lines (and never
 *                    4 KiB apart), no plane padding;
 *   (neither)        unpadded, bi = ni+2 and bj = nj+2 (the thesis's pad(false));
 *   tiles            TI-2 x TJ-2 from GcdPad3D (the thesis's Autoblocker), or
 *   KERN_PLAN_ROWS   whole rows, as many as fill twice the cache 4 planes
 *                    deep: one plane of a tile is one contiguous run of memory.
 * GcdPad3D assumes a direct-mapped cache.  On an 8-way 1 MiB L2 (sets repeat
 * every 128 KiB) its planes, BI*BJ = odd * TI*TJ apart, all land in the same
 * sets, and its padded rows (up to 2 TI - 1 more per row) break the streams
 * the hardware prefetchers follow, so the fast kernels use line padding
 * instead (docs/decisions.md, Kernels).
 * KERN_PLAN_FAST is what runs fastest on current x86 CPUs.
 */
#define KERN_PLAN_PAD    0x01u  /* GcdPad3D leading dimensions */
#define KERN_PLAN_SIMD   0x02u  /* vector instructions when the CPU has them */
#define KERN_PLAN_STREAM 0x04u  /* non-temporal stores for the last Jacobi sweep of a pass */
#define KERN_PLAN_ALIGN  0x08u  /* line padding (ignored with KERN_PLAN_PAD) */
#define KERN_PLAN_ROWS   0x10u  /* tiles of whole rows */
#define KERN_PLAN_FAST \
    (KERN_PLAN_ALIGN | KERN_PLAN_ROWS | KERN_PLAN_SIMD | KERN_PLAN_STREAM)

struct kern_plan {
    size_t cache_elems; /* C: the cache in doubles, a power of two */
    int ti, tj;         /* GcdPad3D tile, ghost layer included (TI, TJ) */
    int bi, bj;         /* leading dimensions for the box */
    int tile_i, tile_j; /* interior points per tile, at least 1 */
    int jac_rows;       /* rows per block of the temporal Jacobi kernel */
    int jac_steps;      /* Jacobi sweeps per pass over memory (1: no temporal blocking) */
    int rb_steps;       /* red-black iterations per pass over memory */
    unsigned flags;     /* KERN_PLAN_* */
};

/*
 * Choose tiles, padding and blocking for an ni x nj x nk box on a host whose
 * cache holds cache_bytes (configuration or kern_cache_detect()).  The
 * GcdPad3D fields (ti, tj) are always filled; flags choose the layout and
 * tile shape as above.  KERN_PLAN_STREAM is kept only if the box is too
 * large to stay in cache between passes.
 */
int kern_plan_make(struct kern_plan *p, size_t cache_bytes, int ni, int nj, int nk,
                   unsigned flags);

/* ---- cache size (kern_cache.c, the only file that reads the system) ---- */

/*
 * The size in bytes of the cache that tiles are sized for: the level-2 data
 * or unified cache of cpu0 (the thesis sized tiles for its 256 KB L2; L3 is
 * shared between cores), else the level-1 data cache.  Reads
 * /sys/devices/system/cpu/cpu0/cache; -EINVAL if nothing usable is there.
 * kern_cache_detect_at() reads another directory of the same layout.
 */
int kern_cache_detect(size_t *bytes);
int kern_cache_detect_at(const char *dir, size_t *bytes);

/* configured != 0: configured; else the detected size; else KERN_CACHE_DEFAULT. */
size_t kern_cache_bytes(uint64_t configured);

/*
 * Each CPU's share of the last-level cache: the size of cpu0's data or
 * unified cache of the highest level, divided by the CPUs its
 * shared_cpu_list names (1 when that file is missing).  Whether a
 * worker's boxes stay there between sweeps decides whether Jacobi's
 * temporal blocking pays (lib/liquid/liq_sweep.c).  -EINVAL if nothing usable.
 */
int kern_llc_detect(size_t *bytes);
int kern_llc_detect_at(const char *dir, size_t *bytes);

/* configured != 0: configured; else the detected share; else 0 (unknown). */
size_t kern_llc_bytes(uint64_t configured);

/* The cache in doubles as GcdPad3D wants it: the largest power of two
 * <= bytes/8, clamped to [4, KERN_CACHE_MAX_ELEMS]. */
size_t kern_cache_elems(size_t bytes);

/* ---- padding (kern_pad.c) ---- */

/*
 * GcdPad3D (Rivera and Tseng, seed 000 s3.4), with the digest's corrected
 * precedence: TI = 2^ceil(log2 sqrt(C/4)), TJ = C/(4 TI); BI is the
 * smallest odd multiple of TI that is >= ai, BJ likewise of TJ.  C is the
 * cache in doubles and must be a power of two >= 4; ai, aj include the
 * ghost layer.  O(1).
 */
struct kern_gcdpad {
    int ti, tj;
    int bi, bj;
};
int kern_gcdpad3d(size_t cache_elems, int ai, int aj, struct kern_gcdpad *out);

/*
 * EucPad2D candidate tiles (Coleman-McKinley, Rivera-Tseng; seed 000 s3.3):
 * the Euclid recursion EucPad2D(C, col, 0, 1), giving (height, width) pairs
 * with height*width <= C.  Writes at most max pairs; returns how many it
 * generated (which may exceed max) or a negative code.
 */
struct kern_euctile {
    int h, w;
};
int kern_eucpad2d(size_t cache_elems, int col, struct kern_euctile *out, int max);

/*
 * EucPad3D: EucPad2D told the cache is a quarter of its size (4 planes must
 * fit), trying column pads 0..maxpad, keeping candidates with h <= column
 * length and taking the one of least cost 1/h + 1/w (ties: the smaller pad,
 * then the earlier candidate).  ai includes the ghosts; the tile (h, w)
 * includes them too (the thesis reports h-2, w-2).  K and J are not padded.
 */
struct kern_eucpad {
    int h, w;           /* tile, ghost layer included */
    int pad;            /* elements added to the column */
    int bi;             /* ai + pad */
};
int kern_eucpad3d(size_t cache_elems, int ai, int maxpad, struct kern_eucpad *out);

/* ---- boxes (kern_box.c) ---- */

/*
 * Map an ni x nj x nk box with leading dimensions bi, bj (0 for ni+2, nj+2).
 * The mapping is anonymous and untouched: every value reads as 0.0 and no
 * page is resident until written, so fill only the ai x aj x ak points.
 * Offsets start at 0.  Huge pages are refused for padded boxes, since one
 * huge page would fault in the padding around the data.
 */
int kern_box_alloc(struct kern_box *b, int ni, int nj, int nk, int bi, int bj);
void kern_box_free(struct kern_box *b);

/* Copy every point, ghosts included, between boxes of the same shape and
 * any layouts; offsets are copied too. */
int kern_box_copy(struct kern_box *dst, const struct kern_box *src);

/* Move b into a new layout with leading dimensions bi, bj (a box arriving
 * on a host with another cache).  On error b is unchanged. */
int kern_box_repad(struct kern_box *b, int bi, int bj);

/* 1 if every point (ghosts included) has the same bits in both boxes,
 * 0 if not, -EINVAL if the shapes differ. */
int kern_box_equal(const struct kern_box *a, const struct kern_box *b);

/* Fill every point, ghosts included, with pseudo-random values in [-1, 1)
 * that depend only on seed and (i,j,k): the same box in any layout gets the
 * same values.  For tests and benchmarks. */
void kern_box_fill(struct kern_box *b, uint64_t seed);

/* Pack all ai*aj*ak points, i-fastest with no padding, into buf (a message
 * body), and back. */
size_t kern_box_points(const struct kern_box *b);
void kern_box_pack(const struct kern_box *b, double *buf);
void kern_box_unpack(struct kern_box *b, const double *buf);

/* ---- Jacobi (kern_jacobi.c) ---- */

/* Reference: one sweep out <- u over the whole interior, plain loops. */
int kern_jacobi_ref(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                    double c, double c2);

/* One tile: interior points i0..i1, j0..j1 and the full k range (the
 * thesis's auto-blocked kernel, Figure 5).  flags: KERN_PLAN_SIMD. */
int kern_jacobi_tile(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                     double c, double c2, int i0, int i1, int j0, int j1, unsigned flags);

/* One sweep through the plan's tiles: j tiles outermost, then i tiles,
 * then k (the Autoblocker); edge tiles clipped to the interior. */
int kern_jacobi_sweep(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                      double c, double c2, const struct kern_plan *p);

/*
 * The fast kernel: iters sweeps u <- J(u), using tmp as the other buffer;
 * on return u holds what iters reference sweeps would give.  Blocks of
 * plan->jac_rows rows run plan->jac_steps sweeps per pass over memory
 * (temporal blocking with overlapped halos: points near a block's edge are
 * computed by both neighbours, identically).  tmp must have u's shape and
 * its contents are overwritten (its ghosts with u's).
 */
int kern_jacobi_run(struct kern_box *u, struct kern_box *tmp, const struct kern_box *rhs,
                    double c, double c2, int iters, const struct kern_plan *p);

/*
 * kern_jacobi_run for a caller that keeps two boxes and can swap them:
 * the sweeps go in as few passes as the plan allows (none forced to make
 * their number even), and when the result ends in *tmp the two pointers
 * are swapped, so *u holds it either way, with no copy.
 */
int kern_jacobi_run_swap(struct kern_box **u, struct kern_box **tmp, const struct kern_box *rhs,
                         double c, double c2, int iters, const struct kern_plan *p);

/*
 * One sweep out <- J(u) through the fast kernel's path (blocks of
 * plan->jac_rows whole rows, SIMD, streaming stores when planned), without
 * temporal blocking and without copying back: the step a runtime takes when
 * it must refresh ghosts between sweeps, swapping u and out itself.  out's
 * ghosts are not written.
 */
int kern_jacobi_step(struct kern_box *out, const struct kern_box *u, const struct kern_box *rhs,
                     double c, double c2, const struct kern_plan *p);

/* ---- red-black Gauss-Seidel (kern_rbgs.c) ---- */

/* Reference: one colour sweep over the whole interior, untiled (Figure 2). */
int kern_rbgs_ref(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                  int colour);

/* One colour over one tile: i0..i1, j0..j1, full k (Figure 5).
 * flags: KERN_PLAN_SIMD. */
int kern_rbgs_tile(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                   int colour, int i0, int i1, int j0, int j1, unsigned flags);

/* One colour through the plan's tiles (one call per tile per colour). */
int kern_rbgs_sweep(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                    int colour, const struct kern_plan *p);

/*
 * The fast kernel: iters full iterations (red then black), one call per
 * plan tile per plan->rb_steps iterations.  In a tile the half-sweeps
 * (red, black, red, ...) run as a wavefront in one pass over memory, each
 * one plane, one row and one column behind the one before it, so a pass
 * moves the box through the cache once for rb_steps iterations.  flags:
 * KERN_PLAN_SIMD.
 */
int kern_rbgs_run(struct kern_box *u, const struct kern_box *rhs, double c, double c2,
                  int iters, const struct kern_plan *p);

#endif
