/*
 * decomp.h: decompositions, the network cost model and the advisor (seed 001,
 * digest shared/notes/001-decomposition.md; ORB from seed 003).
 *
 * Who may include it: anything. The library is pure and reentrant: no I/O, no
 * logging, no global mutable state, and the same inputs always give the same
 * bytes out on every IEEE-754 host (build with -ffp-contract=off). Every
 * function that can fail returns 0 (or a length) on success and one of
 * -EINVAL (bad argument), -ENOMEM (allocation failed) or -ERANGE (the input is
 * valid but the method cannot serve it, e.g. more owners than rows for the row
 * method). On failure outputs are unspecified and nothing needs freeing.
 *
 * Ownership: every pointer passed in is borrowed for the duration of the call
 * and never kept. Arrays the caller supplies for output (owner, box, load) are
 * filled in place. Structures the library fills with memory it allocated
 * (struct decomp_counts, struct decomp_tree) are released with their _free
 * function, which accepts a zeroed structure.
 *
 * Geometry. A grid has 2 or 3 axes. Axis 0 is x (columns, fastest varying in
 * the cell index), axis 1 is y (rows), axis 2 is z (planes); a 2D m x n grid is
 * dim = {n, m, 1}. Cell (x, y, z) has index x + dim[0] * (y + dim[1] * z). An
 * axis may wrap (the thesis's torus) or not (a stencil job's boundary). A cell
 * may carry a weight: its relative cost (cells are the quanta of a stencil job,
 * weighted by measured time); without weights every cell weighs 1.
 *
 * Directions. Direction k runs along axis k / 2, toward lower coordinates when
 * k is even and higher when odd: 0 = W (x-), 1 = E (x+), 2 = N (y-), 3 = S (y+),
 * 4 = D (z-), 5 = U (z+). The 2D 5-point stencil uses directions 0..3, the 3D
 * 7-point stencil 0..5. Owner i sends one message in direction k to each other
 * owner j that holds a k-neighbour of one of i's cells; it carries every such
 * boundary cell (seed 001 requirement 7).
 *
 * Shares and rounding. Owner i's target share is W * s_i / S (W the total
 * weight, s_i its relative speed, S their sum; thesis (6.8)). Every method
 * walks its units (cells, slabs, rows) in a fixed order and puts each boundary
 * at the prefix of unit weights nearest to its target, a tie going to the
 * lower prefix. So each contiguous share is within one unit of its target: one
 * cell for point, Hilbert and scatter, one slab for row, and for the recursive
 * methods half a slab of the region per cut on the owner's path (the "one row
 * or column per cut" of the digest). An owner whose share is under half a unit
 * may receive nothing: a host that slow is better left idle (thesis ch. 8,
 * "fewer, faster processors"). Interleaved deals whole rows by count and does
 * not look at weights.
 */
#ifndef DECOMP_H
#define DECOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DECOMP_MAX_DIM 3
#define DECOMP_MAX_DIRS 6
/* Per-axis extent limit: Hilbert keys need 3 x 21 bits. */
#define DECOMP_MAX_EXTENT (1u << 21)
/* Total cells: owner arrays are indexed with 32-bit values internally. */
#define DECOMP_MAX_CELLS ((size_t)INT32_MAX)
#define DECOMP_MAX_OWNERS (1 << 20)

/* Ethernet + TCP/IP framing used by the thesis's worked figures (MTU 1500). */
#define DECOMP_ETH_PAYLOAD 1460.0
#define DECOMP_ETH_OVERHEAD 58.0

#define DECOMP_PERIODIC_ALL 7u

struct decomp_grid {
    int ndim;                   /* 2 or 3 */
    uint32_t dim[DECOMP_MAX_DIM]; /* extent per axis, >= 1; dim[2] == 1 when ndim == 2 */
    unsigned periodic;          /* bit a set: axis a wraps (torus) */
    const double *weight;       /* NULL, or one finite weight >= 0 per cell (sum > 0) */
};

enum decomp_method {
    DECOMP_ROW,         /* contiguous row (2D) or slab (3D), across the longest axis */
    DECOMP_POINT,       /* contiguous point, row-major */
    DECOMP_HILBERT,     /* contiguous point along a Hilbert curve */
    DECOMP_INTERLEAVED, /* rows dealt round-robin in a speed pattern */
    DECOMP_SCATTER,     /* cells to random owners, counts by speed */
    DECOMP_BLOCK,       /* homogeneous block: p factored into a near-square grid */
    DECOMP_BRBD,        /* binary recursive block decomposition (Fig. 20) */
    DECOMP_FBRD,        /* fair binary recursive decomposition (Fig. 22) */
    DECOMP_PHD,         /* partial homogeneous decomposition (Figs. 24-26) */
    DECOMP_ORB,         /* weighted orthogonal recursive bisection (seed 003) */
    DECOMP_NMETHODS
};

/* A half-open box [lo, hi) of cells; empty when lo[a] == hi[a] on some axis. */
struct decomp_box {
    uint32_t lo[DECOMP_MAX_DIM];
    uint32_t hi[DECOMP_MAX_DIM];
};

/* A box with fractional corners: the thesis's continuous analysis. */
struct decomp_xbox {
    double lo[DECOMP_MAX_DIM];
    double hi[DECOMP_MAX_DIM];
};

struct decomp_spec {
    enum decomp_method method;
    int nowners;                /* 1 .. DECOMP_MAX_OWNERS, at most the cell count */
    const double *speed;        /* nowners relative speeds, finite and > 0 */
    uint64_t seed;              /* scatter's random stream; same seed, same layout */
    double group_tol;           /* PHD: speeds within this relative distance of a
                                 * group's fastest member join it; 0 = equal only */
};

/* Method names as used on command lines and in reports ("row", "brbd", ...). */
const char *decomp_method_name(enum decomp_method m);
int decomp_method_parse(const char *name, enum decomp_method *out);
/* 1 when the method gives every owner one box (row, block, brbd, fbrd, phd, orb). */
int decomp_method_has_boxes(enum decomp_method m);

int decomp_grid_check(const struct decomp_grid *g);
size_t decomp_grid_cells(const struct decomp_grid *g);

/*
 * Place every cell: owner[c] receives the owner of cell c (ncells entries).
 * When box is not NULL and the method has boxes, box[i] receives owner i's
 * box (nowners entries); otherwise box is not touched.
 */
int decomp_place(const struct decomp_grid *g, const struct decomp_spec *s,
                 int32_t *owner, struct decomp_box *box);

/* load[i] = sum of the weights of owner i's cells (nowners entries). */
int decomp_loads(const struct decomp_grid *g, const int32_t *owner, int nowners,
                 double *load);

/* The order along which DECOMP_HILBERT cuts: order[r] is the r-th cell. */
int decomp_hilbert_order(const struct decomp_grid *g, uint32_t *order);

/*
 * The cut tree of the recursive methods (block, brbd, fbrd, phd, orb). Node 0
 * is the root; a node owns order[first .. first + count) and its left child
 * the first n1 of them, which the method arranges before the rest. With exact
 * set, cuts stay fractions of the extents (no rounding; weights must be NULL),
 * the evaluation mode the digest uses for Fig. 28 and the cost table.
 */
struct decomp_node {
    int32_t first, count;       /* owners of this subtree, in tree->order */
    int32_t left, right;        /* child nodes, -1 for a leaf */
    int axis;                   /* axis the cut crosses; -1 for a leaf */
    double frac;                /* speed share of the left child: S(left) / S(node) */
    double cut;                 /* cut coordinate along axis */
    double granule;             /* weight of the heaviest slab at this cut: a
                                 * share moves at most half of it (0 when exact) */
    double lo[DECOMP_MAX_DIM];  /* the node's region */
    double hi[DECOMP_MAX_DIM];
};

struct decomp_tree {
    int nowners;
    int nnodes;                 /* 2 * nowners - 1 */
    int32_t *order;             /* owner ids; a subtree's owners are contiguous */
    struct decomp_node *node;
};

#define DECOMP_EXACT 1
int decomp_tree_build(const struct decomp_grid *g, const struct decomp_spec *s, int exact,
                      struct decomp_tree *out);
/* box[i] = owner i's region as a leaf of the tree (nowners entries). */
int decomp_tree_xboxes(const struct decomp_tree *t, struct decomp_xbox *box);
void decomp_tree_free(struct decomp_tree *t);

/*
 * Counting (seed 001 section 5.6 and requirement 7). One link per message:
 * owner `from` sends to owner `to` in direction `dir` every cell face it shares
 * with it on that side. Links are sorted by (from, dir, to).
 */
struct decomp_link {
    int32_t from, to;
    int dir;
    double faces;               /* cell faces carried: an integer count for cell
                                 * layouts, a length or area for fractional boxes */
};

struct decomp_counts {
    int nowners;
    int ndirs;                  /* 2 * ndim */
    uint32_t *msgs;             /* [i * ndirs + k] = C_ik, distinct owners i sends to */
    double *faces;              /* [i * ndirs + k] = faces i sends in direction k */
    size_t nlinks;              /* total messages per iteration */
    struct decomp_link *link;
};

/* From any owner array (every value in 0 .. nowners-1). */
int decomp_count(const struct decomp_grid *g, const int32_t *owner, int nowners,
                 struct decomp_counts *out);
/* From disjoint boxes that tile the grid (empty boxes allowed). */
int decomp_count_boxes(const struct decomp_grid *g, const struct decomp_box *box, int nowners,
                       struct decomp_counts *out);
/* From disjoint fractional boxes tiling [0, dim) (coordinates compared with a
 * relative tolerance of 1e-9, so cuts computed along different paths meet). */
int decomp_count_xboxes(const struct decomp_grid *g, const struct decomp_xbox *box, int nowners,
                        struct decomp_counts *out);
void decomp_counts_free(struct decomp_counts *c);
/* Sum of all C_ik, and sum over directions of max_i C_ik. */
uint64_t decomp_counts_messages(const struct decomp_counts *c);
uint64_t decomp_counts_latency_units(const struct decomp_counts *c, unsigned dirs);

/*
 * The cost model of seed 001 (6.9)-(6.11), (6.34), chapter 7:
 *   T = max_i t_i + sum_k lambda * max_i C_ik + tau * X
 * with t_i = load_i * work_per_cell / speed_i and, on a shared medium (one
 * message on the wire at a time), X = sum_k sum_i sum_j frame(D_ijk); on a
 * switched network every host receives in parallel, so X = sum_k max_j
 * sum_i frame(D_ijk). frame(D) = D + F * ceil(D / M). The worst case of
 * Fig. 30 is charged: no overlap of preparation and transmission.
 */
enum decomp_netkind { DECOMP_NET_SHARED, DECOMP_NET_SWITCHED };

struct decomp_net {
    double lambda;              /* seconds per message (preparation latency) */
    double tau;                 /* seconds per byte on the wire */
    double payload;             /* M: data bytes per frame; 0 = no framing */
    double overhead;            /* F: header + trailer bytes per frame */
    enum decomp_netkind kind;
};

struct decomp_workload {
    double face_bytes[DECOMP_MAX_DIM]; /* bytes one cell face normal to axis a
                                        * carries: d for a point grid, d times
                                        * the face's points for quanta */
    double work_per_cell;       /* work units per cell of weight 1 (flops, updates) */
    unsigned dirs;              /* directions that carry data (bit k); 0 = all,
                                 * the stencil; {E,S} a wavefront, {E} systolic */
};

struct decomp_cost {
    double total;               /* seconds per iteration */
    double compute;             /* max_i t_i */
    double latency;             /* sum_k lambda * max_i C_ik */
    double transfer;            /* tau * X */
    double balance;             /* mean_i t_i / max_i t_i (1 when no compute) */
    uint64_t messages;          /* messages per iteration (directions in dirs) */
    double bytes;               /* payload bytes per iteration */
    double wire_bytes;          /* bytes including framing */
};

double decomp_frame(double bytes, const struct decomp_net *net);
int decomp_net_check(const struct decomp_net *net);
/* load: nowners weights (decomp_loads) or NULL for no compute term; speed:
 * nowners work units per second (needed when load is given). */
int decomp_cost_eval(const struct decomp_counts *c, const double *load, const double *speed,
                     const struct decomp_workload *w, const struct decomp_net *net,
                     struct decomp_cost *out);

/* Closed forms for homogeneous owners on an m x n torus, items of d bytes:
 * row (6.30), point (6.29), interleaved (6.31) and block (6.33, sqrt(p) taken
 * literally). Other methods: -EINVAL. Communication only. */
int decomp_cost_formula(enum decomp_method m, double rows, double cols, int p, double d,
                        const struct decomp_net *net, double *seconds);
/* Broadcast (6.12) and reduction (6.13) of one d-byte item among p owners. */
int decomp_cost_broadcast(int p, double d, const struct decomp_net *net, double *seconds);
int decomp_cost_reduction(int p, double d, const struct decomp_net *net, double *seconds);
/* Theorem 3: block beats row on an n x n grid iff lambda < p d n tau (1 - 2/sqrt p).
 * decomp_block_beats_row returns 1 or 0; decomp_block_min_n gives the n where
 * it starts to, or -ERANGE when block never wins (p <= 4). */
int decomp_block_beats_row(double lambda, double tau, double d, double n, int p);
int decomp_block_min_n(double lambda, double tau, double d, int p, double *n_min);

/*
 * Least-squares fit of lambda and tau from the ring benchmark (section 3.4),
 * weighted by relative error (1 / seconds^2):
 * each sample is the time of one round in which each of `hosts` hosts sends
 * one message of `bytes` to its right neighbour. Under the model a round costs
 * lambda + tau * hosts * frame(bytes) on a shared medium and lambda + tau *
 * frame(bytes) on a switched one, so that is the regressor. net gives the
 * framing and kind (its lambda and tau are ignored). -ERANGE when the fit is
 * not physical (tau <= 0 or lambda < 0); r2 (weighted, as the fit) may be
 * NULL.
 */
struct decomp_sample {
    double bytes;
    double seconds;
};
int decomp_fit_ring(const struct decomp_sample *s, size_t n, int hosts,
                    const struct decomp_net *net, double *lambda, double *tau, double *r2);

/*
 * The advisor (chapter 7): place the job by every candidate method, count,
 * predict, and rank by predicted time per iteration; rating = time / best, so
 * the best is exactly 1.00 (Fig. 42). Methods that cannot serve the job are
 * listed after the ranked ones with their status.
 */
struct decomp_job {
    const char *name;           /* application name for reports, may be NULL */
    const char *cells;          /* what a cell of the grid is, for reports ("quanta"), or NULL */
    struct decomp_grid grid;
    int nowners;
    const double *speed;        /* measured speeds, work units per second */
    struct decomp_workload work;
    struct decomp_net net;
    unsigned methods;           /* bit per enum decomp_method; 0 = all */
    uint64_t seed;              /* for scatter */
    double group_tol;           /* for PHD */
};

struct decomp_rank {
    enum decomp_method method;
    int status;                 /* 0, or -ERANGE when the method cannot place the job */
    double rating;              /* total / best total (0 when status != 0) */
    struct decomp_cost cost;
};

struct decomp_advice {
    const char *name;           /* borrowed from the job */
    const char *cells;          /* borrowed from the job */
    struct decomp_grid grid;    /* weight pointer cleared */
    int nowners;
    struct decomp_net net;
    int nranked;                /* ranks [0, nranked) ranked ascending, then the rest */
    int nranks;
    struct decomp_rank rank[DECOMP_NMETHODS];
};

int decomp_advise(const struct decomp_job *job, struct decomp_advice *out);
/* Format into buf (snprintf rules: returns the length the whole text needs,
 * writes at most len bytes including the NUL; buf may be NULL when len is 0). */
ssize_t decomp_advice_table(const struct decomp_advice *a, char *buf, size_t len);
ssize_t decomp_advice_json(const struct decomp_advice *a, char *buf, size_t len);

#endif /* DECOMP_H */
