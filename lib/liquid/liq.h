/*
 * liq.h - libliquid, the quantum runtime of stencil jobs (docs/architecture.md,
 * "The liquid runtime").
 *
 * Who may include it: launcher/vmrun/ (the job master) and tests.  The
 * geometry, field and face functions (liq_geom.c, liq_field.c) are pure;
 * the worker (liq_worker.c and the files liq_int.h lists) is a PVM task.
 *
 * The grid.  A job solves an NX x NY x NZ grid of interior points with one
 * layer of Dirichlet ghosts around it.  Axis 0 is i (fastest in memory),
 * 1 is j, 2 is k, as in kern.h; global coordinates put the ghost corner at
 * (0,0,0) and the interior at 1..N.  Every value of the initial field and of
 * the right-hand side is a hash of its global coordinates and the job's
 * seed, so any box at any offset starts from the same numbers, and every
 * decomposition, migration or host count ends with the same bits.
 *
 * Quanta.  The grid is cut into a qx x qy x qz quanta grid as cubic as
 * possible (seed 000); quantum id = x + qx*(y + qy*z), the cell index of
 * decomp.h, so decomp/ places quanta directly.  A quantum's extent along an
 * axis is [r*N/q, (r+1)*N/q) in 0-based interior coordinates.
 *
 * Directions are decomp.h's: 0 = i-, 1 = i+, 2 = j-, 3 = j+, 4 = k-, 5 = k+.
 *
 * Errors: 0 or a negative errno (-EINVAL bad argument, -ERANGE a size that
 * cannot be served, -ENOMEM).
 */
#ifndef LIQUIDVM_LIQ_H
#define LIQUIDVM_LIQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kern.h"

/* The built-in kernels, and a program's own update (liquid.h; liq_user.h)
 * of one phase per iteration or, red-black, of two. */
enum liq_kernel { LIQ_JACOBI = 0, LIQ_RBGS = 1, LIQ_USER = 2, LIQ_USER_RB = 3 };

static inline int
liq_kernel_user(enum liq_kernel k)
{
    return k == LIQ_USER || k == LIQ_USER_RB;
}

/* Largest interior extent per axis and most quanta a job may have. */
#define LIQ_MAX_EXTENT 65536
#define LIQ_MAX_QUANTA 65536

struct liq_geom {
    int n[3];           /* interior points per axis */
    int q[3];           /* quanta per axis */
    int nquanta;
    int periodic[3];    /* the axis wraps: its halos reach across the grid's end
                         * (liq_geom_make leaves 0) */
    int corners;        /* the update reads diagonal neighbours (a box stencil):
                         * halos take every patch within the depth, not only
                         * those within L1 distance */
    int reach[3];       /* points the update reads along each axis (0 taken as
                         * 1): a box at the grid's non-periodic end reaches
                         * reach - 1 points beyond it, its ghost layer the
                         * reach-th (liq_geom_make leaves 0) */
    int apart;          /* quanta that need another worker's points make
                         * regions of their own (liq_regions): a region
                         * touching a Neumann face cannot be swept in two
                         * passes around the ghosts' arrival, so the others
                         * compute while they travel (liq_geom_make leaves 0) */
};

/* The largest reach of g (at least 1): a halo of h sweeps is h times it deep. */
static inline int
liq_geom_reach(const struct liq_geom *g)
{
    int r = 1;

    for (int a = 0; a < 3; a++)
        r = g->reach[a] > r ? g->reach[a] : r;
    return r;
}

/* Cut an n[0] x n[1] x n[2] grid into exactly nquanta quanta, the quanta
 * grid factorisation whose quanta are closest to cubes (ties: fewer cut
 * faces, then the first found).  -ERANGE when no factorisation gives every
 * quantum at least one point per axis. */
int liq_geom_make(struct liq_geom *g, const int n[3], int nquanta);

/* Quantum id's interior points [lo, hi) per axis, 0-based. */
void liq_quantum_extent(const struct liq_geom *g, int id, int lo[3], int hi[3]);

/* The quantum beyond side dir of id, or -1 at the grid's boundary. */
int liq_quantum_neighbour(const struct liq_geom *g, int id, int dir);

/* The largest quantum's interior extents (for the speed probe). */
void liq_geom_max_extent(const struct liq_geom *g, int ext[3]);

/* The unit cube's spacing for the grid: h = 1/(max N + 1). */
double liq_spacing(const int n[3]);
/* Kernel coefficients for the grid: c = 1/6, c2 = h^2 with h = liq_spacing(n). */
void liq_coeffs(const int n[3], double *c, double *c2);

/* The median of v[0..n) (the upper one for even n), sorting v in place. */
double liq_median(double *v, size_t n);

/* ---- the field (liq_field.c) ---- */

/* Fill u (ghosts included) with the initial field and rhs with the
 * right-hand side at the boxes' global offsets.  u and rhs have one shape. */
void liq_field_init(struct kern_box *u, struct kern_box *rhs, uint64_t seed);
/* One point of them: the field's (rhs 0) or the right-hand side's value
 * at box coordinates (gi, gj, gk) of the whole grid (ghost corner 0). */
double liq_field_value(uint64_t seed, int rhs, long gi, long gj, long gk);

/* A checksum of the interior that does not depend on how the grid is cut:
 * the sum, modulo 2^64, of a hash of every point's global coordinates and
 * bits.  The checksums of disjoint boxes add up to the whole grid's. */
uint64_t liq_field_checksum(const struct kern_box *b);

/* The single-process reference: the whole grid as one unpadded box, iters
 * iterations of the plain reference kernel.  *out is allocated here. */
int liq_reference(const int n[3], enum liq_kernel kernel, int iters, uint64_t seed,
                  struct kern_box *out);


/* ---- deep halos (liq_halo.c; the choice of depth, liq_depth.c) ----
 *
 * A job exchanges ghosts once per block of `sweeps` iterations (the halo
 * option, LIQ_JOB_HALO).  Each quantum's box then reaches `depth` points
 * into its neighbours (liq_halo_depth: the sweeps for Jacobi, twice them for
 * red-black, whose two half-sweeps each reach one point further), its
 * ghosts and the layers under them refreshed together; the block is one
 * call of the fast kernel on the extended box, with the kernels' temporal
 * blocking inside, or for Jacobi at one sweep per pass, sweep by sweep on
 * a box that shrinks towards the points owned (liq_sweep.c, the
 * trapezoid).  Sweeps = 1 is the one-layer exchange of seed 000.
 */
#define LIQ_MAX_HALO 16
/* auto picks the deepest halo whose redundant points stay within this share. */
#define LIQ_HALO_SLACK 0.15
int liq_halo_depth(enum liq_kernel k, int sweeps);
/* Layers the box of quantum id reaches beyond it on each side (decomp.h's
 * directions): depth-1, or fewer where the grid ends, so that the box's
 * ghost layer is the halo's outermost layer or the Dirichlet boundary. */
void liq_quantum_halo(const struct liq_geom *g, int id, int depth, int ext[6]);
/* The same for a box of interior points [lo, hi) (a region). */
void liq_box_halo(const struct liq_geom *g, const int lo[3], const int hi[3], int depth,
                  int ext[6]);
/* Of a face's ext halo layers, those Jacobi's sweep s of a block of n
 * computes: the n - s that the later sweeps read (the trapezoid). */
int liq_trapezoid_layers(int ext, int n, int s);
/* Points swept per point owned, over the whole grid, with this halo: each
 * quantum a box of its own (owner NULL), or the regions of this placement
 * (liq_regions).  Jacobi's sweep s of a block of n sweeps only the n - s
 * halo layers the later sweeps read (the worker's trapezoid, at one sweep
 * per pass; a worker that blocks its sweeps in time sweeps the whole box).
 * -1 when out of memory. */
double liq_halo_work(const struct liq_geom *g, enum liq_kernel k, int sweeps, const int *owner,
                     int heavy);
/* The deepest halo, 1..max, whose work stays within 1 + LIQ_HALO_SLACK. */
int liq_halo_auto(const struct liq_geom *g, enum liq_kernel k, int max, const int *owner,
                  int heavy);
/* A block of points of quantum src that quantum dst's halo holds: interior
 * coordinates [lo, hi), 0-based and global, i fastest. */
struct liq_patch {
    int src, dst;
    int lo[3], hi[3];
    size_t points;
    int shift[3];       /* dst's coordinates of the points minus src's: a
                         * multiple of the grid's extent across a periodic
                         * axis's end, else 0 (lo, hi are dst's) */
};
/* The patches dst's halo of this depth needs, sources by increasing id
 * (only those within L1 distance depth of dst: a 7-point sweep reaches one
 * point per sweep, so corners and far edges are left out).  Writes at most
 * max; returns how many there are, or -EINVAL. */
int liq_halo_patches(const struct liq_geom *g, int depth, int dst, struct liq_patch *out,
                     int max);
/* The same for a box of whole quanta [lo, hi) (a region): the patches of
 * the quanta outside it that its halo needs, each marked dst.  -EINVAL for
 * a box outside the grid or a depth below 1. */
int liq_box_patches(const struct liq_geom *g, int depth, const int lo[3], const int hi[3], int dst,
                    struct liq_patch *out, int max);
/* Patch p cut into pieces of at most `most` points where it is larger:
 * slabs of whole planes (z), or, where one plane is larger, runs of whole
 * rows (y) of a plane; a row is never cut.  The pieces, in order, hold p's
 * points in p's order.  Writes at most max; returns how many there are. */
int liq_patch_cut(const struct liq_patch *p, size_t most, struct liq_patch *out, int max);
/* Copy a patch between a box that holds it and a buffer, or box to box.
 * The boxes' offsets place the patch. */
void liq_region_get(const struct kern_box *b, const struct liq_patch *p, double *buf);
void liq_region_put(struct kern_box *b, const struct liq_patch *p, const double *buf);
void liq_region_copy(struct kern_box *dst, const struct kern_box *src, const struct liq_patch *p);
/* The quantum's own points (n[] of them per axis) inside an extended box as
 * a box of their own, its ghost layer the box's first halo layer: a view
 * that borrows box's memory (never freed). */
void liq_quantum_view(const struct kern_box *box, const int ext[6], const int n[3],
                      struct kern_box *view);
/* One block: sweeps iterations of kernel k on *cur (Jacobi uses *nxt as
 * its second box and may swap the two), each phase run `repeat` times
 * (the heavy region).  Bit-identical to sweeps reference iterations on the
 * box with its ghosts held fixed. */
int liq_block(struct kern_box **cur, struct kern_box **nxt, const struct kern_box *rhs,
              enum liq_kernel k, double c, double c2, int sweeps, int repeat,
              const struct kern_plan *plan);

/* ---- regions (liq_region.c) ----
 *
 * A worker sweeps adjacent quanta it owns as one box, a region, so that
 * its quanta cost what the part of the grid they make up costs: no point
 * of one is swept again as another's halo, and one kernel call blocks them
 * in time together.  Quanta stay the unit of measuring and moving; they
 * are views into their region's box.  Regions follow from the placement
 * alone, so every worker knows every other's.  Quanta share a region only
 * with quanta of the same class: heavy or not (a heavy region repeats its
 * phases), and with g->apart, those that need another worker's points at
 * this depth or not (the latter compute while the ghosts travel; without,
 * a region sweeps its inner boxes meanwhile).
 */
struct liq_region_box {
    int owner;
    int q0[3], q1[3];   /* its quanta [q0, q1) per axis of the quanta grid */
    int lo[3], hi[3];   /* their interior points [lo, hi), 0-based */
    int remote;         /* some of its quanta need points of another owner */
    int heavy;          /* its quanta reach into the heavy region */
};
/* Cut a placement (owner[id] for every quantum; heavy as in the JOB) into
 * regions, each grown greedily from the lowest free id along i, then j,
 * then k.  region[id] gets each quantum's region index, out (room for
 * nquanta) the regions in the order of their lowest id.  Returns how many,
 * or -ENOMEM. */
int liq_regions(const struct liq_geom *g, const int *owner, int depth, int heavy, int *region,
                struct liq_region_box *out);

/* ---- the worker (liq_worker.c; liq_int.h lists its files) ----
 *
 * vmrun spawns itself as `vmrun worker` on every task slot; the worker
 * enrolls and serves the master's requests until told to quit, the master
 * exits, or a request fails.  Messages (all in PVM's default context):
 *
 *   master -> worker   LIQ_TAG_PROBE   run the kernel on a quantum-sized box
 *                      LIQ_TAG_RING    pass messages around a ring of workers
 *                      LIQ_TAG_JOB     run the job with this placement
 *                      LIQ_TAG_QUIT    exit
 *   worker -> master   LIQ_TAG_PROBED (updates/s, cache bytes, updates per
 *                      CPU-second), LIQ_TAG_RINGED, LIQ_TAG_PROGRESS
 *                      (one per iteration), LIQ_TAG_DONE, LIQ_TAG_FIELD
 *                      (the final field, when asked), LIQ_TAG_FAIL (text)
 *   worker <-> worker  LIQ_TAG_GHOST + block parity (the halo patches one
 *                      worker sends another: the receiver's regions in
 *                      liq_regions order, each its liq_box_patches from
 *                      the sender's quanta by id), LIQ_TAG_RINGMSG
 *
 * Balancing (issue 8): every `epoch` iterations each worker sends the
 * median of each of its quanta's iteration CPU times -- what the quantum
 * costs, whatever share of a CPU the worker got: its region's CPU time per
 * point swept (halo layers included) times its own points, so that what a
 * quantum weighs does not change with the region a move puts it in
 * (LIQ_TAG_EPOCH: epoch,
 * count, then id and seconds per quantum, then the worker's mean wall-clock
 * compute seconds per iteration over the epoch -- what the epoch's balance
 * efficiency is made of, preemption and throttling included --, the
 * seconds its last move took, the share of a CPU it spent outside its
 * kernels since its last report, then the seconds its checkpoints took so
 * far and their count) and goes on: the master decides from
 * epoch e's reports the placement from boundary e + 1 on, while the
 * workers compute epoch e + 1, and at that boundary each worker, its
 * report of e + 1 sent, takes the plan (LIQ_TAG_PLAN: the boundary, the
 * owner of every quantum, then the worker count and every worker's tid, 0
 * for a slot with no worker, then the checkpoints' multiple M).  Nobody
 * waits for the slowest worker's report and the master's answer at every
 * boundary (a barrier whose every wait is idle CPU); a worker that
 * reaches a boundary early reports an epoch ahead of the others, and the
 * master keeps that report until the epoch before is complete.  The
 * first epoch's plan alone is taken at the end of that epoch, everyone
 * waiting for it (seed 000: the placement of non-uniform work is right
 * from the first epoch on); so the second
 * boundary takes none (liq_plan_at).
 *
 * Reclaim: a worker whose slot in the plan no longer holds its tid hands
 * all its quanta over, sends LIQ_TAG_LEFT (compute and communication
 * seconds, iterations done) and exits (its report of the epoch that ended
 * there went first).  A worker spawned later into a slot gets a JOB whose
 * LIQ_JOB_START is the epoch boundary it joins at (a multiple of the
 * epoch; 0 for the job's own workers) and the owners until then, holds no
 * quanta, takes that boundary's plan with the others and reports from the
 * epoch after it.
 * A quantum whose
 * owner changes goes as one LIQ_TAG_MOVE message (id, then its own points
 * without padding; the halo is refreshed before the next block) and is
 * laid out again for the receiver's cache: both sides cut the new
 * placement into regions, keep a region whose box is unchanged and fill
 * new ones from the old regions and the arrivals.  Ghosts of the old
 * placement may still be on their way to a slower worker when a faster one
 * sends those of the new: a worker receives each block's ghosts by sender
 * and tag (the block's parity), messages between two tasks keep their
 * order, and every worker builds its links for a block from the same
 * placement, so the two ends agree.
 *
 * Non-uniform work: with `heavy` = k > 1 every quantum that reaches into
 * the grid's lower octant (lo < n/2 on every axis longer than one point,
 * so a 2D grid's lower quadrant) runs each phase k times.
 * A Jacobi sweep and a red or black half-sweep are idempotent (they read
 * only what they do not write), so the result keeps its bits.
 *
 * A worker is at most one exchange ahead of a neighbour (it cannot finish
 * block b+1 without the neighbour's block b+1 patches), so the parity of
 * the block's number (counted from each epoch's start, which every worker
 * agrees on) tells two consecutive exchanges apart.
 */
#define LIQ_TAG_PROBE    0x4c510
#define LIQ_TAG_RING     0x4c511
#define LIQ_TAG_JOB      0x4c512
#define LIQ_TAG_QUIT     0x4c513
#define LIQ_TAG_PROBED   0x4c520
#define LIQ_TAG_RINGED   0x4c521
#define LIQ_TAG_PROGRESS 0x4c522
#define LIQ_TAG_DONE     0x4c523
#define LIQ_TAG_FIELD    0x4c524
#define LIQ_TAG_FAIL     0x4c525
#define LIQ_TAG_EXITED   0x4c526 /* PvmTaskExit notifications (master and workers) */
#define LIQ_TAG_HOSTGONE 0x4c527 /* PvmHostDelete notifications (master) */
#define LIQ_TAG_EPOCH    0x4c528 /* worker -> master: median time per quantum */
#define LIQ_TAG_PLAN     0x4c514 /* master -> worker: the owners for the next epoch */
#define LIQ_TAG_MOVE     0x4c531 /* worker -> worker: one quantum's points */
#define LIQ_TAG_LEFT     0x4c529 /* worker -> master: evacuated, leaving (its totals) */
#define LIQ_TAG_RINGMSG  0x4c530
#define LIQ_TAG_GHOST    0x4c540 /* and 0x4c541 */
#define LIQ_TAG_RGHOST   0x4c542 /* the ghosts a reduction reads */
#define LIQ_TAG_REDUCE   0x4c52a /* worker -> master: iteration, count, then per quantum
                                  * its id and its partial of every reduction */
#define LIQ_TAG_INIT     0x4c516 /* master -> worker: a quantum's initial values of a
                                  * field (--input): id, field, its own points */
#define LIQ_TAG_VERDICT  0x4c515 /* master -> worker: iteration, 1 stop / 0 go on */
#define LIQ_TAG_TSYNC    0x4c517 /* master -> worker: a clock ping (--trace) */
#define LIQ_TAG_TSYNCED  0x4c52b /* worker -> master: its clock (CLOCK_MONOTONIC s) */
#define LIQ_TAG_TRACE    0x4c52c /* worker -> master: its trace, in chunks (liq_trace.c) */
/* Checkpoints and recovery (liq_ckpt.c, liq_master_ckpt.c; "checkpoints" below). */
#define LIQ_TAG_CKDATA   0x4c532 /* worker -> buddy: a quantum's copy (generation-tagged) */
#define LIQ_TAG_CKHAND   0x4c533 /* leaving worker -> one that stays: a copy it held
                                  * (generation-tagged) */
#define LIQ_TAG_CKHANDED 0x4c534 /* that worker -> master: it holds it now */
#define LIQ_TAG_CKACK    0x4c52d /* buddy -> master: a copy is held */
#define LIQ_TAG_CKCONFIRM 0x4c518 /* master -> worker: every copy of an iteration is held */
#define LIQ_TAG_RECOVER  0x4c519 /* master -> worker: abandon the job, keep iteration c's
                                  * copies */
#define LIQ_TAG_RECOVERED 0x4c52e /* worker -> master: done so; nothing older follows */
#define LIQ_TAG_CKSAVE   0x4c53d /* worker -> master: its own copy of a quantum, for the disk */
#define LIQ_TAG_CKLOAD   0x4c51d /* master -> worker: a quantum's state from the disk */
#define LIQ_TAG_ALIVE    0x4c52f /* worker -> master: waiting, not hung (empty; every
                                  * LIQ_ALIVE_S of a wait, checkpoints on) */

/* The most LIQ_JOB_CKMUL may be. */
#define LIQ_MAX_CKMUL (1 << 20)

/* A waiting worker's heartbeat, and the least --worker-timeout there is. */
#define LIQ_ALIVE_S 1.0
#define LIQ_HUNG_FLOOR_S 3.0
/* --worker-timeout auto: max(LIQ_HUNG_MIN_S, LIQ_HUNG_EPOCHS x the slowest epoch). */
#define LIQ_HUNG_MIN_S 5.0
#define LIQ_HUNG_EPOCHS 10
/* A host whose load sample is older than this has a silent daemon. */
#define LIQ_HOST_QUIET_S 3.0

/* The JOB message's header: ints in this order. */
enum {
    LIQ_JOB_NX, LIQ_JOB_NY, LIQ_JOB_NZ, LIQ_JOB_NQUANTA, LIQ_JOB_KERNEL, LIQ_JOB_ITERS,
    LIQ_JOB_GATHER, LIQ_JOB_EPOCH, LIQ_JOB_HEAVY, LIQ_JOB_START, LIQ_JOB_HALO,
    LIQ_JOB_SPEC,       /* a program's own update: its description's fingerprint */
    LIQ_JOB_TRACE,      /* events a worker's trace holds (--trace), 0 none */
    LIQ_JOB_CKPT,       /* iterations between checkpoints (--checkpoint-every), 0 none */
    LIQ_JOB_GEN,        /* the job's generation: 0, then one more per recovery */
    LIQ_JOB_RESTORE,    /* 1: a recovery; START is the checkpoint the quanta come from */
    LIQ_JOB_CKMUL,      /* checkpoints at multiples of CKPT x CKMUL (a plan may change it) */
    LIQ_JOB_HDR
};

/*
 * Checkpoints (issue 26).  With LIQ_JOB_CKPT = C > 0, at every iteration
 * c that is a multiple of C x M (an epoch boundary, its plan and reduction
 * done; M is LIQ_JOB_CKMUL, and from a plan's boundary on the M that plan
 * carries: the master spaces checkpoints out by their measured cost) each
 * worker keeps a copy of the state of every quantum it holds
 * (liq_region_state: what a move carries) in plain heap buffers and sends
 * one to its buddy (LIQ_TAG_CKDATA: ints c, quantum id, owner tid, then the
 * values): the first worker of the next host that has one, or with one
 * host the next worker.  The buddy keeps it and tells the master
 * (LIQ_TAG_CKACK: ints generation, c, owner tid, id, bytes).  Once every
 * quantum's copy of c is acknowledged the master confirms c
 * (LIQ_TAG_CKCONFIRM: generation, c, save) and the workers drop older
 * copies: a checkpoint replaces the last only when complete.
 *
 * On disk (--checkpoint DIR).  With save = 1 each worker also sends the
 * master its own copy of every quantum of c (LIQ_TAG_CKSAVE: ints
 * generation, c, id, then the values), and the master writes the grid's
 * state to DIR (liq_ckfile.h).  To go on from that file (--resume, or a
 * recovery with quanta no survivor holds) the master sends each quantum's
 * state to its new owner (LIQ_TAG_CKLOAD: ints c, id, then the values;
 * the worker keeps it as its own copy of c) before a JOB with
 * LIQ_JOB_RESTORE and START = c.  A worker whose master exits stops at its
 * next block's end (the master's PvmTaskExit notice, liq_job).
 *
 * A worker that leaves by reclaim hands every copy it holds to a worker
 * that stays (LIQ_TAG_CKHAND: ints c, quantum id, owner tid, its own tid,
 * then the values): the quantum's new owner, unless that one holds the
 * other copy already, else the next worker.  That worker keeps it and
 * tells the master (LIQ_TAG_CKHANDED: ints generation, c, id, the leaver's
 * tid), which records it as the holder in the leaver's place, so that a
 * loss before the next checkpoint still finds two copies.
 *
 * Recovery.  When a worker exits or its host leaves the VM, the master
 * places every quantum on the survivor that holds its copy of the last
 * confirmed checkpoint c (its owner then, else its buddy; neither: the
 * job ends naming the quanta lost) and sends every survivor
 * LIQ_TAG_RECOVER (generation g, c).  A survivor abandons its job (a wait
 * returns, the job's memory is freed, its copies are kept), drops the
 * master's older messages (they came before RECOVER) and every copy but
 * c's, and answers LIQ_TAG_RECOVERED (g): messages between two tasks keep
 * their order, so the master drops whatever a survivor sent before it.
 * Then a JOB with LIQ_JOB_RESTORE, START = c and generation g: each
 * survivor restores its quanta from its copies and goes on from c.
 * Messages between workers (ghosts, moves, copies) carry the generation in
 * their tag (liq_gtag), so those of a generation given up, still on their
 * way, are never taken for the new one's; they are drained at each
 * recovery and each confirmed checkpoint.
 */
#define LIQ_GEN_SHIFT 20
#define LIQ_MAX_GEN 1000

static inline int
liq_gtag(int tag, int gen)
{
    return tag + (gen << LIQ_GEN_SHIFT);
}

/* The buddy of worker slot me among n slots (tids[s] 0: no worker; whost[s]
 * its host): the first live slot of the next host that has one, else the
 * next live slot of any host; -1 for none. */
int liq_ckpt_buddy(const int *tids, const int *whost, int n, int me);

/* Does quantum id reach into the lower octant (the heavy region)? */
int liq_quantum_heavy(const struct liq_geom *g, int id);

/* Largest body of a LIQ_TAG_FIELD message: the field goes in slabs of planes. */
#define LIQ_FIELD_CHUNK ((size_t)8 << 20)

/* Would boxes of `bytes` sweep Jacobi once per pass rather than temporally
 * blocked, given one CPU's share of the last-level cache (0: unknown,
 * never)?  At most half of it: a sweep's three streams do not keep a cache
 * full (bench/liquid_bound's model of the built-in kernel). */
int liq_one_sweep_fits(size_t bytes, size_t llc);
/* The epoch boundary (1, 2, ...) at which the plan made from epoch e's
 * reports is taken: the first epoch's at its end, everyone waiting for it,
 * the others' one epoch later.  So the workers take a plan at the first
 * boundary and from the third on (liq_plan_at). */
int liq_plan_boundary(int epoch);
int liq_plan_at(int boundary);

/* ---- traces (liq_trace.c; issue 27, seed 003) ----
 *
 * With --trace every worker records its events into a bounded array of
 * fixed records: a store of a few words per event on the block loop, no
 * formatting, no allocation.  When the array is full, later events are
 * dropped and counted (the trace's metadata says how many; a message whose
 * one end was dropped has no flow arrow).  At the job's end (before LEFT
 * for an evacuated worker) the worker sends the array to the master in
 * LIQ_TAG_TRACE chunks of at most LIQ_FIELD_CHUNK bytes: ints count, last
 * (1 on the final chunk), dropped, then per event 2 doubles (t0, t1: the
 * worker's CLOCK_MONOTONIC seconds) and 6 ints (kind, a..e).  The master
 * records its own in the same records and writes one Chrome Trace Event
 * JSON file (liq_master_trace.c).  A worker's trace outlives a recovery:
 * the job given up keeps it, the restore records on, and a survivor that
 * had sent its trace sends the rest after the restore.
 */
enum liq_tev_kind {
    LIQ_TEV_COMPUTE = 1,  /* span: a region's sweep; a first quantum, b quanta, c iterations,
                           * d part (LIQ_TEV_WHOLE...), e the heavy repeat (1: light) */
    LIQ_TEV_SEND,         /* at t0: a peer tid, b tag, c bytes, d quantum moved or -1 */
    LIQ_TEV_RECV,         /* span: the wait for a message and its receipt at t1; as SEND */
    LIQ_TEV_WAIT,         /* span: waiting for the master; b tag (PLAN, VERDICT), c epoch
                           * boundary or iteration */
    LIQ_TEV_EPOCH,        /* at t0: a worker's report of epoch a at iteration c */
    LIQ_TEV_MIGRATE,      /* span: taking plan a (boundary) and moving; c the change in
                           * quanta held */
    LIQ_TEV_PLAN,         /* master, span: deciding epoch a's plan; b applied, c quanta moved,
                           * d BE x 1000, e forced */
    LIQ_TEV_RECLAIM,      /* master, at t0: host a, b 1 rejoin / 0 evacuate, c epoch */
    LIQ_TEV_REDUCE,       /* master, at t0: the verdict of iteration a, b 1 stop */
    LIQ_TEV_SYNC,         /* master, span: the clocks' ping-pongs */
    LIQ_TEV_LOST,         /* master, at t0: worker tid a on host b lost, c the iteration
                           * reached, d 1 during a recovery */
    LIQ_TEV_RECOVER       /* master, span: a loss noticed to the job sent again; a the
                           * checkpoint's iteration, b the generation, c quanta re-placed */
};
enum { LIQ_TEV_WHOLE = 0, LIQ_TEV_INNER = 1, LIQ_TEV_OUTER = 2 };

struct liq_tev {
    double t0, t1;
    int32_t kind, a, b, c, d, e;
};

/* A trace being recorded; cap 0: tracing is off and nothing is stored. */
struct liq_trace {
    struct liq_tev *ev;
    int n, cap;
    int dropped;                /* events that found the array full */
};

/* Events a worker's array holds by default (40 bytes each): some 130
 * thousand, 5 MB, a few blocks' worth per region for a long job. */
#define LIQ_TRACE_EVENTS 131072

static inline void
liq_trace_rec(struct liq_trace *t, int kind, double t0, double t1, int a, int b, int c, int d,
              int e)
{
    struct liq_tev *v;

    if (t->cap == 0)
        return;
    if (t->n == t->cap) {
        t->dropped++;
        return;
    }
    v = &t->ev[t->n++];
    v->t0 = t0;
    v->t1 = t1;
    v->kind = kind;
    v->a = a;
    v->b = b;
    v->c = c;
    v->d = d;
    v->e = e;
}

/* Start recording into an array of cap events (0: off).  0 or -ENOMEM. */
int liq_trace_init(struct liq_trace *t, int cap);
void liq_trace_free(struct liq_trace *t);

/* The end of a job's PVM tasks (liq_vm.c), for the stencil master and the
 * farm's: kill tids[0..n) (after a failure) or tell them to quit (tag),
 * then leave the VM.  Zero tids are skipped. */
void liq_tasks_end(const int *tids, int n, int failed, int quit_tag);
/* After pvm_spawn of count workers on host into tids, which returned got:
 * when not all started, why says so (with the first one's error) and the
 * tids of those that did not are 0.  How many started. */
int liq_spawned(int got, int count, int *tids, const char *host, char *why, size_t len);

/* The worker's main: returns its exit status.  who: its name in messages
 * ("vmrun worker", "heat3d --liquid-worker"). */
int liq_worker_main(const char *who);

/* ---- the balancer's model (liq_balance.c) and reclaim (liq_reclaim.c): pure ---- */

struct liq_balance_in {
    int nquanta, nworkers;
    const uint32_t *order;      /* quanta along the Hilbert curve */
    const double *cost;         /* median CPU seconds per iteration of each quantum */
    const double *points;       /* points of each quantum */
    const double *bytes;        /* bytes a move of each quantum sends */
    const int32_t *owner;       /* the owners the workers hold next: the plan's start */
    const int32_t *measured;    /* the owners in the epoch the costs and wtime are of
                                 * (NULL: owner) -- the plan decided before it may
                                 * have changed them since */
    const double *cpu_speed;    /* points per CPU-second of each worker's CPU (the probe's) */
    const double *share;        /* the CPU share each worker may get now (its host's
                                 * capacity from Sense); NULL or < 0: a whole CPU */
    const double *wtime;        /* each worker's measured compute s per iteration, for
                                 * the epoch's BE (NULL: the model's) */
    const char *active;         /* workers that may hold quanta (NULL: all); quanta on
                                 * the others must leave whatever the gain */
    double lambda, tau;         /* the network: s/message, s/byte */
    int remaining;              /* iterations left */
    double min_gain;            /* smallest relative gain worth a move */
    int wanted;                 /* the plan before wanted to move (liq_epoch.wanted) */
};

struct liq_epoch {
    int epoch;
    double be;                  /* balance efficiency measured in the epoch (wall clock) */
    double be_cpu;              /* ... of the kernels' CPU times at the workers' shares:
                                 * under a CPU quota a worker's wall clock also says
                                 * where its bursts fell in the quota's periods */
    double before_s, after_s;   /* the model's time per iteration now and re-placed */
    int applied;                /* the new placement is taken */
    int wanted;                 /* ... or would be, but for a gain seen once only */
    int forced;                 /* ... because quanta had to leave inactive workers */
    int moved;                  /* quanta moved */
    double bytes;               /* bytes they carry */
    double t_s;                 /* seconds since the iterations started, at the plan */
    double publish_s;           /* from the epoch's first report to its last */
    double decide_s, move_s;    /* time to decide; the slowest worker's move */
};

/* The CPU share the model gives a worker whose host's share is s: s, a
 * whole CPU when s is unknown (< 0), never below 0.01 (a host whose every
 * CPU its owner uses computes, slowly, until reclaim takes it out). */
double liq_balance_share(double s);

/* Fill owner (nquanta) with the next placement and out with the figures. */
int liq_balance_plan(const struct liq_balance_in *in, int32_t *owner, struct liq_epoch *out);

/* Reclaim's thresholds: a host leaves once its workers' share stays below
 * below for after seconds, and comes back once it stays at rejoin_above or
 * more for rejoin_after seconds. */
struct liq_reclaim_opts {
    double below, after, rejoin_above, rejoin_after;
};
/* Thresholds a user gave: below and rejoin_above are shares of one CPU
 * (0..1), and with reclaim on rejoin_above must be above below, or a host
 * would leave and come back in turn -- unless both are 0: no host leaves
 * for its owner's load, and one that returns is taken back after
 * rejoin_after whatever its share.  0, or -1 with why (no program name). */
int liq_reclaim_check(double below, double rejoin_above, int reclaim, char *why, size_t len);

/* liq_opts.c: 1 if s is host names (letters, digits, '-', '_', '.')
 * separated by single commas, as --hosts takes them. */
int liq_hosts_valid(const char *s);


/* liq_fields.c: 0 if path can be created or overwritten (tried, a file
 * made to try removed), else -1 with why ("OPT PATH: cannot write there:
 * ..."): output paths are checked before a job runs. */
int liq_writable(const char *path, const char *opt, char *why, size_t len);
/* A report's file: stdout for "-", else path opened for writing; NULL
 * after saying "who: opt path: why" on stderr. */
FILE *liq_report_open(const char *who, const char *opt, const char *path);
/* Close it (stdout is only flushed): 0, or -1 after saying that what was
 * written was lost. */
int liq_report_close(const char *who, const char *opt, const char *path, FILE *fp);

/* Reclaim (seed 002's coarse layer), per host. */
struct liq_reclaim {
    int evacuated;              /* its workers have left */
    double below_since;         /* when its share fell below below; < 0 not below */
    double above_since;         /* evacuated: when it rose to rejoin_above; < 0 not above */
    int benched;                /* not evacuated, but its workers hold no quanta: its share
                                 * fell below below and has not since come back
                                 * to rejoin_above */
};

#define LIQ_EVACUATE (-1)
#define LIQ_REJOIN 1

/*
 * One look at the hosts at time now (seconds, any origin): cap[h] the CPUs
 * its daemon says the VM may use (< 0 unknown: the host's clocks stand),
 * count[h] its workers (0: none, its workers lost, not evacuated: the host
 * is left out, never counted as the one that computes); a worker's share
 * is min(1, cap / count).  Sets act[h] to LIQ_EVACUATE, LIQ_REJOIN or 0
 * and updates r (evacuated as decided, benched as the shares are now);
 * returns how many hosts act.  The last host with workers that is not
 * evacuated never is, nor benched.
 */
int liq_reclaim_step(struct liq_reclaim *r, int nhosts, const double *cap, const int *count,
                       double now, const struct liq_reclaim_opts *o, int *act);

#endif
