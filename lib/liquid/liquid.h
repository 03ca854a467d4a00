/*
 * liquid.h - your own stencil on LiquidVM's liquid runtime (liquid(3)).
 *
 * A program describes its computation -- a grid, named fields, the reach
 * of its update, time levels, boundaries, initial values, the update
 * itself and the reductions it watches -- and calls liquid_run().  Started
 * from a shell on a VM host, it is the job's master: it takes the options
 * of `vmrun stencil` (--grid, --iters, --hosts, --balance, --verify,
 * --output, --png, ...), spawns itself as the workers, and the runtime
 * cuts the grid into quanta, places them, exchanges halos, balances and
 * reclaims as it does for the built-in kernels.  Spawned as a worker, the
 * same call serves the job and returns when it ends.  So everything a
 * program describes before liquid_run() is described alike in every
 * process of the job: describe it from the program's code and options,
 * never from anything that differs between processes.
 *
 * Coordinates.  A grid has NX x NY x NZ interior points (a 2D grid has
 * NZ = 1); point (i, j, k) has global indices 0 <= i < NX and so on, i
 * fastest in memory.  Along an axis of length L (1 unless liquid_domain
 * says otherwise) with Dirichlet or Neumann faces the points sit at
 * x = (i + 1) h with h = L / (N + 1), the faces at 0 and L; along a
 * periodic axis at x = i h with h = L / N.
 *
 * Errors: functions return 0 (or an index) on success, -1 on a bad
 * argument, with the reason in liquid_error().  liquid_run returns the
 * process exit status: 0, 1 (the job failed or --verify found a
 * difference), 2 (bad options).
 */
#ifndef LIQUID_H
#define LIQUID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIQUID_VERSION 1
#define LIQUID_MAX_FIELDS 16
#define LIQUID_MAX_REDUCTIONS 8
#define LIQUID_NAME_MAX 32
#define LIQUID_MAX_RADIUS 4

struct liquid;

enum liquid_shape { LIQUID_STAR = 0, LIQUID_BOX = 1 };

enum liquid_levels {
    LIQUID_TWO_LEVEL = 0,       /* out = f(in): Jacobi style */
    LIQUID_THREE_LEVEL = 1,     /* out = f(in, old): the wave equation */
    LIQUID_RED_BLACK = 2        /* in place, red points ((i+j+k) even) then black */
};

/* Faces, as a bit mask.  Neumann faces mirror the points inside them: the
 * ghost d points out takes the point d - 1 in. */
#define LIQUID_XLO 0x01
#define LIQUID_XHI 0x02
#define LIQUID_YLO 0x04
#define LIQUID_YHI 0x08
#define LIQUID_ZLO 0x10
#define LIQUID_ZHI 0x20
#define LIQUID_ALL 0x3f

enum liquid_bc { LIQUID_DIRICHLET = 0, LIQUID_NEUMANN = 1, LIQUID_PERIODIC = 2 };

enum liquid_op {
    LIQUID_SUM = 0,             /* sum of the partials */
    LIQUID_MAX = 1,             /* largest partial */
    LIQUID_MIN = 2,             /* smallest partial */
    LIQUID_NORM2 = 3            /* square root of the sum of the partials (sums of squares) */
};

/*
 * What an update sweeps: a box of n[0] x n[1] x n[2] points whose first
 * point has global indices lo[].  Point (a, b, c) of the box is element
 * a + b*sj + c*sk of every array below; i is contiguous, so a row is a
 * plain loop that vectorises, and in[f][a - 1] or in[f][a + sj] are the
 * neighbours.  The runtime calls an update once per box and phase, never
 * once per point.
 */
struct liquid_box {
    int lo[3], n[3];
    ptrdiff_t sj, sk;           /* strides of j and k, in doubles */
    int nfields;
    double *out[LIQUID_MAX_FIELDS];        /* the level written (red-black: == in) */
    const double *in[LIQUID_MAX_FIELDS];   /* the current level */
    const double *old[LIQUID_MAX_FIELDS];  /* three levels: the one before in; else NULL */
    int colour;                 /* red-black: update only the points with
                                 * (lo[0]+a + lo[1]+b + lo[2]+c) % 2 == colour */
    int iter;                   /* the iteration computed, 1 for the first */
    double t;                   /* simulated time of in: (iter - 1) dt */
    double dt;
    double h[3];                /* grid spacing per axis */
    double origin[3];           /* position of global point (0, 0, 0) */
};

/* The position of a box's point (a, b, c). */
static inline void
liquid_pos(const struct liquid_box *b, int a, int bb, int c, double x[3])
{
    x[0] = b->origin[0] + (b->lo[0] + a) * b->h[0];
    x[1] = b->origin[1] + (b->lo[1] + bb) * b->h[1];
    x[2] = b->origin[2] + (b->lo[2] + c) * b->h[2];
}

/* An update: 0, or non-zero to stop the job with that error. */
typedef int (*liquid_update_fn)(const struct liquid_box *b, void *arg);
/* A value at a position: initial values (field f) and Dirichlet faces. */
typedef double (*liquid_value_fn)(int field, const double x[3], void *arg);
/* A reduction's partial over the box's points, read from in[] (the halo
 * is current: neighbours may be read as in an update). */
typedef double (*liquid_reduce_fn)(const struct liquid_box *b, void *arg);

/* Called in every process once the grid and the iterations are known
 * (after the options, before the job starts): where the description
 * depends on them, e.g. a time step from the spacing.  A worker calls it
 * again for each grid it runs the update on (the speed probe's box is one
 * of its own first), so it replaces what an earlier call made.  0, or
 * non-zero to stop with liquid_error's message (set it with liquid_fail). */
typedef int (*liquid_setup_fn)(struct liquid *lq, const int n[3], int iters, void *arg);

/* A job description; name is the program's name in messages and usage. */
struct liquid *liquid_new(const char *name);
void liquid_free(struct liquid *lq);
const char *liquid_error(const struct liquid *lq);

/* The grid's default extents (--grid overrides them); nz = 1 for 2D. */
int liquid_grid(struct liquid *lq, int nx, int ny, int nz);
/* The physical lengths of the axes (default 1, 1, 1). */
int liquid_domain(struct liquid *lq, double lx, double ly, double lz);
/* A field; returns its index (0, 1, ...).  Names: [A-Za-z_][A-Za-z0-9_]*. */
int liquid_field(struct liquid *lq, const char *name);
/*
 * A field that keeps its initial values (coefficients, a right-hand side,
 * a material map): the update reads it through in[f] (and old[f]), ghosts
 * included, and never writes it (out[f] is NULL).  It is neither exchanged
 * nor moved nor checkpointed: every process computes it from liquid_init's
 * function (or 0) wherever it needs it, so it costs no traffic, one level
 * of memory, and --input cannot fill it.
 */
int liquid_field_const(struct liquid *lq, int field);
/* The index of a field by name, or -1. */
int liquid_field_index(const struct liquid *lq, const char *name);
/* How far an update reads: radius per axis (0 to LIQUID_MAX_RADIUS) and shape
 * (default 1, 1, 1, star; a 2D grid's z radius is taken as 0).  Boundaries
 * have as many ghost layers as the radius. */
int liquid_reach(struct liquid *lq, int rx, int ry, int rz, enum liquid_shape shape);
int liquid_levels(struct liquid *lq, enum liquid_levels levels);
/* The time step (default 1): box.t and box.dt, the simulated time in files. */
int liquid_timestep(struct liquid *lq, double dt);
/* Boundaries on the faces of the mask (default: Dirichlet 0 everywhere).
 * Periodic faces come in pairs (both faces of an axis). */
int liquid_boundary(struct liquid *lq, int faces, enum liquid_bc bc, double value);
/* Dirichlet values from a function of position (its field argument says which). */
int liquid_boundary_fn(struct liquid *lq, int faces, liquid_value_fn fn, void *arg);
/* Initial values of a field (default 0); every level starts from them. */
int liquid_init(struct liquid *lq, int field, liquid_value_fn fn, void *arg);
int liquid_setup(struct liquid *lq, liquid_setup_fn fn, void *arg);
/* Set liquid_error's message (printf style); returns -1. */
int liquid_fail(struct liquid *lq, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The update, called with arg. */
int liquid_update(struct liquid *lq, liquid_update_fn fn, void *arg);
/*
 * A reduction, computed every `every` iterations and after the last
 * (every 0: after the last only, which with an until rule on another
 * reduction is wherever that may stop the job; the until rule's own needs
 * an every):
 * with fn NULL, op over the values of field (NORM2: sqrt of the sum of
 * squares); with fn, op over its partials.  The partials combine in an
 * order that does not depend on the placement, so every run gives the
 * same bits.  Returns its index.
 */
int liquid_reduce(struct liquid *lq, const char *name, enum liquid_op op, int field,
                  liquid_reduce_fn fn, void *arg, int every);
/* Stop once reduction `name` falls below tol (checked where it is computed);
 * --iters stays the maximum. */
int liquid_until(struct liquid *lq, const char *name, double tol);

/* Options of the program's own ([A-Za-z_][A-Za-z0-9_-]*), parsed with the
 * job's: --NAME VALUE, also
 * as `NAME = VALUE;` in a --job file.  *var keeps its value when the option
 * is not given.  A flag takes no value: --NAME sets *var to 1 (--NAME=false,
 * or `NAME = false;` in a job file, to 0). */
int liquid_option_int(struct liquid *lq, const char *name, int *var, const char *help);
int liquid_option_double(struct liquid *lq, const char *name, double *var, const char *help);
int liquid_option_flag(struct liquid *lq, const char *name, int *var, const char *help);

/* Run: the job's master or, spawned by it, a worker.  Returns the exit status. */
int liquid_run(struct liquid *lq, int argc, char **argv);

/* After liquid_run on the master: the iterations done, a reduction's last
 * value (-1 when it never ran), and a field's final interior values
 * (NX*NY*NZ doubles, i fastest; gathered when --verify, --output, --png
 * or liquid_keep asked for it).  0 or -1. */
int liquid_iterations(const struct liquid *lq);
int liquid_reduction(const struct liquid *lq, const char *name, double *value);
/* Ask for the final fields to be gathered to the master (before liquid_run). */
int liquid_keep(struct liquid *lq);
const double *liquid_result(const struct liquid *lq, int field);
/* Is this process the master of a job (after liquid_run; 0 after --help)? */
int liquid_is_master(const struct liquid *lq);

/* ======================================================================
 * Farms: a loop over a 1D, 2D or 3D index space (liquid_farm, issue 28).
 *
 * liquid_farm() calls fn on every point of an n[0] x n[1] x n[2] index
 * space (n[2] = 1 for 2D, n[1] = n[2] = 1 for 1D), on the VM's hosts, and
 * gathers what fn wrote into the master's result array.  The points are
 * independent items of any cost; the space is cut into square (cubic)
 * tiles of a power-of-two side, at most 4096 of them, which are scheduled
 * by Fractiling: chunks of Morton-ordered tiles sized by Factoring and
 * weighted by each worker's measured rate, asked for one chunk ahead.  A
 * host whose owner needs it (its daemon's capacity gone) stops taking
 * chunks; a host or worker that is lost has its unfinished tiles run
 * again elsewhere.  A tile may thus run twice, but only its first result
 * is kept: every point's record is placed exactly once, so the result
 * does not depend on the hosts, the schedule or failures.
 *
 * Records are per item: fn(lo, n, out, arg) is called for the box of
 * n[0] x n[1] x n[2] points whose first point is lo[], and writes one
 * record of `record` bytes per point into out, point (a, b, c) of the box
 * at out + record * (a + n[0] * (b + n[1] * c)) (i fastest).  It returns 0,
 * or non-zero to fail the job.  fn runs in the workers, never in the
 * master; it must not rely on memory the master wrote.  The master places
 * point (i, j, k)'s record at result + record * (i + n[0] * (j + n[1] * k)).
 *
 * Roles.  Started from a shell, the program is the master: liquid_farm
 * parses argv (the options below; anything else is a usage error), spawns
 * this executable (/proc/self/exe) on the hosts with the first argument
 * LIQUID_FARM_WORKER_ARG followed by the program's own command line, and
 * returns once every record is in result.  Spawned that way, the same call
 * serves as a worker and returns when the master is done (result is not
 * touched).  So main() reads its own options the same way in both roles,
 * passes LIQUID_FARM_WORKER_ARG on (a program that takes its own options
 * out of argv leaves the others, that one included, to liquid_farm), and
 * calls liquid_farm with the same n, record and fn; liquid_farm_master()
 * tells the roles apart.  A worker whose n or record differ from the
 * master's fails the job.
 *
 * Options: --hosts h1,h2 (default every host), --tasks-per-host T (1),
 * --json FILE (per host: tiles, busy time; every chunk's size and time),
 * --quiet, --help, and for comparison --schedule fractiling|static|self,
 * --fraction F, --min-chunk N, --reclaim on|off.  A progress line is drawn
 * on a terminal.  Returns the exit status: 0 (every record in), 1 (the job
 * or the VM failed), 2 (bad options, or bad arguments to liquid_farm);
 * --help prints the options and returns 0 with nothing computed.
 */
#define LIQUID_FARM_WORKER_ARG "--liquid-farm-worker"

typedef int (*liquid_tile_fn)(const int lo[3], const int n[3], void *out, void *arg);

int liquid_farm(int argc, char **argv, const char *name, const int n[3], size_t record,
                liquid_tile_fn fn, void *arg, void *result);
/* 1 when liquid_farm called with these arguments fills result here (the
 * master, not --help), 0 in a worker or for --help. */
int liquid_farm_master(int argc, char **argv);

/* A w x h grey PNG of v (w * h values, row 0 at the top, i fastest): the
 * smallest finite value black, the largest white, linearly; NaN black.
 * 0, or -1 with the reason on stderr. */
int liquid_png_gray(const char *path, int w, int h, const double *v);

#ifdef __cplusplus
}
#endif

#endif
