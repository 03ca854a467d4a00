/*
 * liq_fractile.h - Fractiling for farms of independent items (issue 28,
 * seed 002 section 3): chunk sizes by weighted Factoring, chunk shapes as
 * contiguous runs of a Morton (Z-order) walk of the index space, one tile
 * per worker first and the largest unfinished tile after (the paper's rules
 * (i) and (ii)), and work handed back to the pool when a worker is lost or
 * its host is reclaimed.
 *
 * Who may include it: launcher/vmrun/ (vmrun farm's master), lib/liquid/
 * and tests.  Pure and reentrant: no I/O, no PVM, no clock; the caller
 * brings the weights and the times.  Every struct liq_fractile is used by
 * one thread at a time.
 *
 * Positions.  The scheduler hands out positions 0..n-1 of a walk of the
 * index space; the caller maps a position to its item (the identity for a
 * range or a file of items, liq_fractile_morton()'s table for a 2D or 3D
 * grid, so a run of positions is a compact tile).  A chunk is one run
 * [lo, hi) of positions.
 *
 * Errors: 0 or a negative errno (-EINVAL bad argument, -ENOMEM).
 */
#ifndef LIQUIDVM_LIQ_FRACTILE_H
#define LIQUIDVM_LIQ_FRACTILE_H

#include <stddef.h>
#include <stdint.h>

/* How chunks are sized: Fractiling (the default), one equal block per
 * worker and nothing else (static; a lost worker's block goes to the pool
 * and is then taken by whoever asks, whole), or one item at a time from one
 * pool (self-scheduling).  The last two are there for comparison. */
enum liq_fractile_mode {
    LIQ_FRACTILE_FACTORING = 0,
    LIQ_FRACTILE_STATIC = 1,
    LIQ_FRACTILE_SELF = 2,
};

struct liq_fractile_opts {
    enum liq_fractile_mode mode;
    double fraction;        /* each batch hands out this share of what is left; (0, 1], 0.5 */
    uint64_t min_chunk;     /* smallest chunk, in items (a run may be shorter at its end); 1 */
};

/* A run of positions still to hand out.  owner: the worker whose tile it
 * is, or -1 for work any worker may take (given back, or an orphaned
 * tile). */
struct liq_fractile_seg {
    uint64_t lo, hi;
    int owner;
};

struct liq_fractile_chunk {
    uint64_t lo, hi;        /* positions [lo, hi) */
    int from;               /* the tile it came from: the worker's own, another's, or -1 */
    uint64_t batch;         /* the Factoring batch it belongs to (0-based) */
};

struct liq_fractile {
    struct liq_fractile_opts o;
    uint64_t n;             /* positions in all */
    int nworkers;
    double *weight;         /* each worker's weight (its measured rate); 0 = takes no chunks */
    struct liq_fractile_seg *seg;
    size_t nseg, segcap;
    uint64_t left;          /* positions not handed out */
    /* The current Factoring batch: what was left when it began, and how
     * much of the active workers' total weight has had its chunk of it. */
    uint64_t batch, batch_left;
    double batch_weight;    /* the active workers' total weight when it began */
    double batch_spent;     /* the weight of the chunks handed out in it */
};

/* Defaults: Factoring, fraction 1/2, min_chunk 1. */
void liq_fractile_defaults(struct liq_fractile_opts *o);

/*
 * Schedule n positions on nworkers workers of the given weights (NULL: all
 * 1; a weight <= 0 means the worker takes nothing yet).  The positions are
 * cut into one tile per worker of weight > 0, in worker order, sized by
 * weight; each worker takes from its own tile first.  0, -EINVAL (n or
 * nworkers 0, fraction outside (0, 1], no worker of positive weight), or
 * -ENOMEM.
 */
int liq_fractile_init(struct liq_fractile *f, uint64_t n, int nworkers, const double *weight,
                      const struct liq_fractile_opts *o);
void liq_fractile_free(struct liq_fractile *f);

/*
 * Worker w's weight from now on (its measured items per second, say).  A
 * weight <= 0 takes it out: it gets no chunk, and its tile becomes work any
 * other worker may take.  A worker that comes back (weight > 0 again) gets
 * no tile back; it takes what is left, largest run first.
 */
void liq_fractile_weight(struct liq_fractile *f, int w, double weight);

/*
 * The next chunk for worker w: 1 with *c set, 0 when there is nothing to
 * hand out now (or w's weight is <= 0).  The size is Factoring's: in each
 * batch every active worker gets fraction x (what was left when the batch
 * began) x (its weight / the active workers' total weight), at least
 * min_chunk, at most what its run holds; a batch ends when chunks for the
 * batch's whole weight have gone out (a fast worker may take two of one
 * batch, as in Factoring's shared queue of chunks).  Own tile first (from its front), then the
 * largest run any may take or that another worker owns (from its back, so
 * the owner's next chunk stays next to its last).
 */
int liq_fractile_next(struct liq_fractile *f, int w, struct liq_fractile_chunk *c);

/* A worker joins (a host added while the farm runs): it has no tile, and
 * takes what is left as a worker that comes back does.  Its index, or
 * -ENOMEM. */
int liq_fractile_add(struct liq_fractile *f, double weight);

/* Positions [lo, hi) go back to the pool, for any worker (a lost worker's
 * unfinished items, a reclaimed host's chunk past its limit); the next
 * chunk opens a new Factoring batch.  0, -EINVAL for an empty or
 * out-of-range run, -ENOMEM. */
int liq_fractile_giveback(struct liq_fractile *f, uint64_t lo, uint64_t hi);

/* Positions not handed out yet. */
static inline uint64_t
liq_fractile_left(const struct liq_fractile *f)
{
    return f->left;
}

/*
 * The Morton (Z-order) walk of an n[0] x n[1] x n[2] grid (n[2] = 1 for
 * 2D): order[k] = the linear index x + n[0] * (y + n[1] * z) of the k-th
 * point; order holds n[0] * n[1] * n[2] entries.  Points are visited by
 * their interleaved bits in the smallest power-of-two cube holding the
 * grid, those outside skipped, so every run of the walk is compact and a
 * run of 4^k (2D) or 8^k (3D) aligned positions of a power-of-two grid is
 * a square or cube.  0, or -EINVAL (an extent < 1 or above 2^21).
 */
int liq_fractile_morton(const int n[3], uint64_t *order);

#endif
