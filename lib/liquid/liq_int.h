/*
 * liq_int.h - the worker's internals, shared by the files of lib/liquid/
 * that make up the worker task (liq.h, "the worker", says what it does).
 *
 * Who may include it: the .c files of lib/liquid/ only; never installed.  The
 * worker is one PVM task with one thread: every function here runs on
 * that thread, and struct liq_worker is the task's only mutable state,
 * owned by liq_worker_main and lent to the rest for the task's life.
 *
 * The files and what each holds:
 *   liq_worker.c    the task: enroll, serve the master's requests
 *   liq_msg.c       waiting for a message, failing with a reason
 *   liq_probe.c     the speed probe          liq_ring.c   the ring benchmark
 *   liq_job.c       a job's setup and its loop of blocks
 *   liq_boxes.c     the worker's regions and quanta in memory
 *   liq_exchange.c  the links to other workers and the ghost exchange
 *   liq_sweep.c     a block's sweeps on the regions, overlap, each quantum's charge
 *   liq_migrate.c   taking a plan and moving quanta
 *   liq_report.c    the messages that tell the master what happened
 *   liq_ckpt.c      checkpoints to a buddy, and giving a job up for recovery
 *
 * Errors: functions that talk to the master return 0 or -1 after telling
 * it why (liq_fail); the others return 0 or a negative errno.
 */
#ifndef LIQUIDVM_LIQ_INT_H
#define LIQUIDVM_LIQ_INT_H

#include <stddef.h>
#include <time.h>

#include "kern.h"
#include "liq.h"
#include "liq_user.h"

/* A box of quanta swept as one (heap-allocated: cur and nxt point into it). */
struct liq_region {
    struct liq_region_box box;
    int ext[6];                 /* halo layers of the box beyond its points, per side */
    struct kern_box a, b, rhs;  /* the extended boxes; b is Jacobi's second */
    struct kern_box *cur, *nxt;
    struct liq_ubox u;          /* a program's own update: its fields' levels instead */
    struct kern_plan plan;
    int steps;                  /* Jacobi sweeps per pass the plan chose */
    unsigned flags;             /* the plan's flags as made */
    int repeat;                 /* phases run this many times (heavy region) */
    int stale[6];               /* -x +x -y +y -z +z: its halo there holds another
                                 * worker's points (liq_exchange_layout) */
    double wall, cpu;           /* compute time of this block */
};

/* A quantum: the unit of timing and moving, a view into its region. */
struct liq_quantum {
    int id;
    int region;                 /* local region index */
    int lo[3], n[3];            /* its own points, 0-based, and how many per axis */
    double share;               /* its points over its region's */
    double seconds;             /* compute time, whole run */
    double cpu;                 /* CPU time of this block's compute, per iteration */
    double *hist;               /* CPU time of each iteration, this epoch */
};

/* A quantum's state at a checkpoint iteration, the worker's own or a
 * buddy's (liq.h, "checkpoints"). */
struct liq_ckcopy {
    int id, iter;
    int owner;                  /* the tid whose quantum it was */
    size_t n;                   /* doubles in v: nstate boxes of its own points */
    double *v;
};

/* One message of a link's ghosts: patches [previous end, end), and their
 * points times the states each carries. */
struct liq_ghost_msg {
    int end;
    size_t points;
};

/* One direction of the exchange with one other worker: its patches (cut to
 * fit its messages), src (sending) or dst (receiving) a local region
 * index. */
struct liq_link {
    int tid;
    int npatch;
    struct liq_patch *patch;
    size_t points;              /* every message's, summed */
    int nmsg;
    struct liq_ghost_msg *msg;
    size_t most;                /* the largest message's points */
    int next, at;               /* receiving: the exchange's next message and patch */
    double *buf;                /* receiving: where a message that cannot be read in
                                 * place is unpacked, made when one first comes */
};

struct liq_worker {
    int mytid, master;
    size_t cache;
    /* the job */
    struct liq_geom g;
    enum liq_kernel kernel;
    const struct liquid *user;  /* a program's own update (liq_user_spec), else NULL */
    int nstate;                 /* boxes per region a halo or a move carries */
    int it;                     /* iterations done before the block being swept */
    int span;                   /* blocks never cross a multiple of it: the epoch,
                                 * or the reductions' stride */
    int iters, gather, nworkers, me, epoch, heavy;
    unsigned input;             /* the fields whose initial values the master sends (--input) */
    int halo, depth;            /* iterations per exchange, halo depth */
    int start;                  /* the iteration this worker joined at */
    uint64_t seed;
    int *tids;
    int *owner;
    double c, c2;
    int nq;
    struct liq_quantum *q;      /* by id */
    int nrg;
    struct liq_region **rg;     /* this worker's regions, in the cut's order */
    int nall;
    struct liq_region_box *all; /* every worker's regions (liq_regions) */
    int *region_of;             /* quantum id -> index in all */
    int *rlocal;                /* index in all -> local region index, or -1 */
    int nsend, nrecv;
    struct liq_link *send, *recv;
    double *sendbuf;            /* the send links' staging, as large as the largest:
                                 * a send of it in place writes it out before it returns */
    int ncopy;
    struct liq_patch *copy;     /* halo patches between local regions (local indices) */
    int nscratch;
    struct liq_patch *scratch;  /* one region's patches, while links are built */
    double *ctime;              /* compute seconds of each iteration, this epoch */
    double last_move;           /* seconds the last move took */
    double compute_all, comm_all;
    double compute_cpu;         /* CPU seconds in the kernels, this job */
    double overlap_cpu;         /* ... of them while ghosts were on the way (liq_ubox_split) */
    double ghost_wait;          /* wall s blocked for ghosts (liq_exchange_finish) */
    double ghost_bytes;         /* bytes of ghosts received from other workers */
    double held_peak;           /* the most bytes the regions' boxes have held at once
                                 * (liq_held_bytes at every layout), this process */
    double plan_wait;           /* wall s blocked for the master's plan (liq_migrate_plan) */
    int kerr;                   /* a kernel's error (-errno), 0 while there is none */
    double cpu0;                /* the process's CPU seconds when the job came */
    double ep_t, ep_cpu, ep_kcpu; /* wall, process CPU, kernel CPU at the last report */
    struct liq_trace tr;        /* this job's events (--trace; cap 0 when off) */
    /* checkpoints (liq_ckpt.c): they outlive a job given up for recovery */
    int ckpt;                   /* iterations between checkpoints, 0 none */
    int ckmul;                  /* ... times this (LIQ_JOB_CKMUL, then the plans') */
    int ck_taken;               /* checkpoints this worker made copies at */
    int gen;                    /* the job's generation (liq_gtag) */
    int restore;                /* this JOB is a recovery: quanta come from copies */
    int *whost;                 /* host of every slot, for the buddy */
    struct liq_ckcopy *ck;      /* copies held, own and buddies' */
    int nck, capck;
    double ck_seconds;          /* wall s spent making, sending and keeping copies */
    double ck_bytes;            /* bytes of copies sent to buddies */
    int rec_gen, rec_iter;      /* a RECOVER came (rec_gen > 0): its generation, iteration */
    int orphan;                 /* the master exited: stop (liq_job) */
};

/* ---- clocks: inline, since the block loop reads them per region ---- */

static inline double
liq_clock(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double
liq_now(void)
{
    return liq_clock(CLOCK_MONOTONIC);
}

/* CPU time of this thread: what a quantum costs, whatever share of a CPU
 * the worker gets (preemption, a cgroup's throttling). */
static inline double
liq_cpu_now(void)
{
    return liq_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* CPU time of the whole process, every thread. */
static inline double
liq_process_cpu(void)
{
    return liq_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* ---- liq_msg.c ---- */

/* Tell the master why this worker gives up (and say it on stderr). */
void liq_fail(struct liq_worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Receive a message from tid with tag (-1: any), giving up when the master
 * says QUIT or exits.  Returns the buffer id, 0 when told to stop, or a PVM
 * error. */
int liq_wait(struct liq_worker *w, int tid, int tag);

/* ---- liq_probe.c, liq_ring.c, liq_job.c: the master's requests ---- */

/* Each unpacks its request from the current receive buffer and answers
 * the master (or tells it why not). */
void liq_probe(struct liq_worker *w);
void liq_ring(struct liq_worker *w);
/* Returns 1 when this worker was evacuated and must exit. */
int liq_job(struct liq_worker *w);
/* liq_job's first part: read the JOB message (the current receive
 * buffer) and build the regions, quanta and links.  0, or a negative
 * errno after telling the master why. */
int liq_job_setup(struct liq_worker *w);
/* Free what a job's setup and run hold (the trace too, unless a recovery
 * keeps it); w can take the next JOB. */
void liq_job_free(struct liq_worker *w);

/* ---- liq_boxes.c ---- */

/* Allocate and fill a region's boxes for this host's cache: its points
 * [lo, hi) with ext[] halo layers around them.  many: the worker sweeps
 * more than this box in turn.  unfilled: the fields a move carries are
 * left untouched, for a move to write their own points and then
 * liq_region_shell the rest (liq_ubox_make).  On failure r may hold
 * boxes: clear it. */
int liq_region_make(struct liq_worker *w, struct liq_region *r, const int lo[3], const int hi[3],
                    const int ext[6], int repeat, int many, int unfilled);
void liq_region_clear(struct liq_region *r);
void liq_region_shell(const struct liq_worker *w, struct liq_region *r);
/* A new region of the job for box (heap-allocated), or NULL with *rc set. */
struct liq_region *liq_region_new(struct liq_worker *w, const struct liq_region_box *box,
                                  int many, int unfilled, int *rc);
void liq_regions_free(struct liq_region **rg, int n);
/* The cut of placement owner into regions: *all and *of allocated here.
 * Returns how many, or -ENOMEM. */
int liq_cut(struct liq_worker *w, const int *owner, struct liq_region_box **all, int **of);
/* A quantum of the job in local region `region`, whose box is b. */
int liq_quantum_init(struct liq_worker *w, struct liq_quantum *q, int id, int region,
                     const struct liq_region_box *b);
/* The quantum's own points as a patch (a move's body). */
void liq_quantum_patch(const struct liq_quantum *q, struct liq_patch *p);
/* The quantum's own points, as a box of their own inside its region's. */
void liq_quantum_own(const struct liq_worker *w, const struct liq_quantum *q,
                     struct kern_box *view);
void liq_quanta_free(struct liq_quantum *q, int n);

/* The boxes of region r that hold the state a halo or a move carries
 * (w->nstate of them): every field's current level (and the one before,
 * three levels).  A job's worker always has its description (w->user;
 * liq_job_user), vmrun stencil's kernels too. */
int liq_region_state(const struct liq_worker *w, struct liq_region *r, struct kern_box **out);
/* A patch of every state box, one after the other in buf (nstate * points). */
void liq_state_get(const struct liq_worker *w, struct liq_region *r, const struct liq_patch *p,
                   double *buf);
void liq_state_put(const struct liq_worker *w, struct liq_region *r, const struct liq_patch *p,
                   const double *buf);
void liq_state_copy(const struct liq_worker *w, struct liq_region *dst, struct liq_region *src,
                    const struct liq_patch *p);
/* Give back to the system the pages of r's state boxes that hold only
 * planes of global z in [zlo, zhi), halo planes included (INT_MIN and
 * INT_MAX reach the box's ends): r is being replaced by a move and those
 * points have been copied out or are not needed.  Their values read as
 * zero afterwards. */
void liq_region_release(const struct liq_worker *w, struct liq_region *r, int zlo, int zhi);
/* The same for every box of r a move does not carry, whole: the levels
 * beyond the state and the constant fields. */
void liq_region_release_rest(const struct liq_worker *w, struct liq_region *r);
/* Quantum q's own points of field f's current level, as a box inside its
 * region's. */
void liq_quantum_field(const struct liq_worker *w, const struct liq_quantum *q, int f,
                       struct kern_box *view);

/* ---- liq_exchange.c ---- */

/* A message of ghosts or of a moving quantum's points carries at most
 * LIQ_MSG_BYTES of them (more only for one row of a patch, which is never
 * cut): a worker stages one such message, not a link's every ghost or a
 * whole quantum, and the patches go in pieces (liq_patch_cut) that both
 * ends cut alike. */
#define LIQ_MSG_BYTES ((size_t)1 << 20)
static inline size_t
liq_msg_points(const struct liq_worker *w)
{
    size_t n = LIQ_MSG_BYTES / (sizeof(double) * (size_t)w->nstate);

    return n > 0 ? n : 1;
}

/* From w->owner, the cut (w->all, w->region_of) and this worker's regions
 * (w->rg, in the cut's order): local region indices, the patches copied
 * between local regions, the links to the other workers and each
 * region's stale faces.  0, or -ENOMEM after telling the master. */
int liq_exchange_layout(struct liq_worker *w);
void liq_exchange_free(struct liq_worker *w);
/* Send every remote patch, copy every local one, and put into the halos
 * the remote patches already come.  Returns 0 or -1. */
int liq_exchange_start(struct liq_worker *w, int tag);
/* Receive the remote patches still to come into the halos.  Returns 0, or
 * -1 to stop. */
int liq_exchange_finish(struct liq_worker *w, int tag);

/* ---- liq_sweep.c ---- */

/* One block of iters iterations on one region, whole boxes. */
void liq_sweep_region(struct liq_worker *w, struct liq_region *r, int iters);
/* A block of iters iterations on the regions that do (remote = 1) or do
 * not need another worker's points; inner = 1: only the parts the ghosts
 * cannot reach.  Returns the wall seconds. */
double liq_sweep(struct liq_worker *w, int remote, int inner, int iters);
/* Charge each quantum its part of its region's block of iters. */
void liq_sweep_charge(struct liq_worker *w, int iters);

/* ---- liq_migrate.c ---- */

/* ---- liq_ckpt.c ---- */

/* Iteration it is done (the epoch's report, plan and reduction too): at a
 * multiple of w->ckpt, copy every quantum held and send its buddy one;
 * at every call, liq_ckpt_poll.  0, or -1 after telling the master. */
int liq_ckpt_take(struct liq_worker *w, int it);
/* Keep the buddies' copies that came (acknowledging each to the master)
 * and take the master's confirmations.  0, or -1 after telling it, or
 * silently when a RECOVER came (w->rec_gen set). */
int liq_ckpt_poll(struct liq_worker *w);
/* Leaving by reclaim: every copy held goes to a worker that stays (liq.h,
 * "checkpoints"), after those sent to us are kept.  Best effort: 0, or -1
 * when a copy could not be sent (the rest are not). */
int liq_ckpt_handover(struct liq_worker *w);
/* A recovery's JOB: fill every quantum held from its copy of w->start.
 * 0, or -1 after telling the master. */
int liq_ckpt_restore(struct liq_worker *w);
/* A RECOVER came (w->rec_gen): drop what belongs to the generations before
 * it, keep only the copies of w->rec_iter, answer RECOVERED. */
void liq_ckpt_recovered(struct liq_worker *w);
/* A LIQ_TAG_CKLOAD from the master (the current buffer): kept as this
 * worker's own copy of the quantum, which a restoring JOB then fills it
 * from.  0, or -1 after telling the master. */
int liq_ckpt_load(struct liq_worker *w);
/* Every copy dropped (a new job, or the worker's exit). */
void liq_ckpt_free(struct liq_worker *w);

/* Take the plan of an epoch boundary and move.  Returns 0, 1 when this
 * worker's slot is given up (it has handed its quanta over), or -1. */
int liq_migrate_plan(struct liq_worker *w, int epoch);

/* ---- liq_report.c: each returns 0, or -1 when the message could not
 * be sent (all but liq_report_done tell the master why) ---- */

int liq_report_progress(struct liq_worker *w, int iter, double compute, double comm);
/* The end of epoch `epoch`: the median of each quantum's times, the
 * worker's speed now and its CPU outside the kernels. */
int liq_report_epoch(struct liq_worker *w, int epoch);
/* The job is done (t_start: when the JOB came, t_setup: its setup's
 * seconds): the figures, the checksum, each quantum's seconds. */
int liq_report_done(struct liq_worker *w, double t_start, double t_setup);
/* The final fields, quantum by quantum and field by field, in slabs of
 * planes (LIQ_TAG_FIELD: quantum id, first and last plane, field, values). */
int liq_report_field(struct liq_worker *w);
/* The bytes the regions' boxes map now: fields, their levels and halo layers. */
double liq_held_bytes(const struct liq_worker *w);
/* A quantum's checksum: its fields' (liq_field_checksum), field f weighed
 * by 2f + 1. */
uint64_t liq_quantum_checksum(const struct liq_worker *w, const struct liq_quantum *q);
/* The trace (--trace) to the master in LIQ_TAG_TRACE chunks, and freed.
 * 0, or -1 when a chunk could not be sent. */
int liq_report_trace(struct liq_worker *w);
/* Evacuated: the totals, then this worker leaves. */
void liq_report_left(struct liq_worker *w, int iters_done);

#endif
