/*
 * liq_farm.h - the parts of a farm of independent items that do not depend
 * on what an item is (issue 28): the VM session (hosts, workers spawned
 * from this executable, notifications, capacities) and the master's
 * schedule (Fractiling chunks on work requests, rates, helping with the
 * largest unfinished chunk, lost workers and hosts, reclaim, the report's
 * per-host part, the progress line).  Two masters use it: `vmrun farm`
 * (launcher/vmrun/vmrun_farm.c: an item is a command line) and
 * liquid_farm() (liq_farm.c: an item is a tile of an index space).
 *
 * Who may include it: lib/liquid/liq_farm*.c, launcher/vmrun/vmrun_farm*.c
 * and tests; never installed.  Context: one PVM task with one thread, the
 * master; nothing here is reentrant.
 *
 * The files:
 *   liq_farm_vm.c     the session (the only farm file that spawns or enrolls)
 *   liq_farm_sched.c  the master's schedule and its message loop
 *   liq_farm.c        liquid_farm(): options, the JOB, records into place
 *   liq_farm_worker.c liquid_farm()'s worker role
 *
 * The protocol between a master and its workers (PVM messages, default
 * encoding).  The tags are common; what a CHUNK carries per item and what
 * a RESULT carries after its head are each master's own:
 *   master -> worker  JOB     the job (the master's own contents)
 *                     CHUNK   chunk id, count, then each item (pack_item)
 *                     DROP    drop every item held (its host was reclaimed
 *                             past the limit)
 *                     SHRINK  chunk id, keep: drop the chunk's queued items
 *                             from the keep-th on (another worker took them)
 *                     QUIT    exit
 *   (a worker started on a host added while the farm runs gets the same JOB)
 *   worker -> master  ASK     work, please (at most one outstanding, sent
 *                             when the worker starts its last queued item)
 *                     RESULT  chunk id, item index, then the master's own
 *                     FAIL    a string: the worker cannot go on (the job fails)
 *
 * Errors: -1 with the reason in the struct's why[], as vmrun farm reports it.
 */
#ifndef LIQUIDVM_LIQ_FARM_H
#define LIQUIDVM_LIQ_FARM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "liq_fractile.h"
#include "liquid.h"

#define LIQ_FARM_TAG_JOB      0x4641
#define LIQ_FARM_TAG_CHUNK    0x4642
#define LIQ_FARM_TAG_DROP     0x4643
#define LIQ_FARM_TAG_QUIT     0x4644
#define LIQ_FARM_TAG_SHRINK   0x4645
#define LIQ_FARM_TAG_ASK      0x4650
#define LIQ_FARM_TAG_RESULT   0x4651
#define LIQ_FARM_TAG_EXITED   0x4652 /* PvmTaskExit notifications */
#define LIQ_FARM_TAG_HOSTGONE 0x4653 /* PvmHostDelete notifications */
#define LIQ_FARM_TAG_FAIL     0x4654
#define LIQ_FARM_TAG_HOSTADD  0x4655 /* PvmHostAdd notifications */

/* ---- the VM session (liq_farm_vm.c) ---- */

struct liq_farm_host {
    char name[256];
    int dtid;               /* 0 once it has left (a host added later may get its tid) */
    int first, count;       /* its workers: index range in liq_farm_vm.tids */
};

struct liq_farm_vm {
    int mytid;
    int nhosts;
    struct liq_farm_host *host;
    int nworkers;
    int *tids;              /* 0 once a worker is gone */
    int *whost;             /* host index of each worker */
    int grows;              /* every host: hosts added to the VM join the farm */
    int tasks_per_host;
    char **wargv;
    char exe[4096];
    char why[512];
    int usage;              /* the failure was a bad option (a host not in the VM) */
};

/* Enroll, take the hosts named in hosts (comma-separated; "" every host,
 * and the ones added to the VM later too), spawn tasks_per_host copies of
 * this executable (/proc/self/exe) with wargv (NULL-ended, kept) on each,
 * and ask for LIQ_FARM_TAG_EXITED, LIQ_FARM_TAG_HOSTGONE and (every host)
 * LIQ_FARM_TAG_HOSTADD notifications.  0, or -1 with why set. */
int liq_farm_vm_start(struct liq_farm_vm *vm, const char *hosts, int tasks_per_host,
                      char **wargv);
/* A host added to the VM (its daemon's tid): start its workers, as
 * liq_farm_vm_start does, and watch them.  Its host index (its workers
 * vm->host[h].first on, count of them, fewer than asked when some could
 * not start: why says why), -1 with why set when none started, -2 when
 * the host is not one to take (the farm does not grow, it is known, or it
 * has left again). */
int liq_farm_vm_add(struct liq_farm_vm *vm, int dtid);
/* The worker index of a tid, or -1. */
int liq_farm_vm_worker(const struct liq_farm_vm *vm, int tid);
/* The host index of a daemon tid, or -1. */
int liq_farm_vm_host(const struct liq_farm_vm *vm, int dtid);
/* The CPUs each host's daemon says the VM may use now (lvm_hostload's
 * capacity), into cap[nhosts]; -1 unknown.  0, or -1 with why set. */
int liq_farm_vm_capacity(struct liq_farm_vm *vm, double *cap);
/* Tell the workers to quit (kill them after a failure) and leave the VM. */
void liq_farm_vm_stop(struct liq_farm_vm *vm, int failed);

/* A worker's queue of the items of its chunks, q[head..tail), each of size
 * bytes and beginning with its key: both workers' (liq_farm_worker.c,
 * vmrun_farm_worker.c). */
struct liq_farm_key {
    int chunk, ord;         /* ord: the item's place in its chunk */
};
struct liq_farm_queue {
    char *q;
    size_t size, head, tail, cap;
};
/* Append item, moving the queue to its start or growing it as needed.
 * 0 or -1 (out of memory). */
int liq_farm_push(struct liq_farm_queue *fq, const void *item);
/* Copy the front item to item and take it off.  0, or -1 when empty. */
int liq_farm_pop(struct liq_farm_queue *fq, void *item);
/* SHRINK: another worker took chunk's items from place keep on. */
void liq_farm_shrink(struct liq_farm_queue *fq, int chunk, int keep);
void liq_farm_vm_free(struct liq_farm_vm *vm);
/* Seconds on the monotonic clock. */
double liq_farm_now(void);

/* ---- the master's schedule (liq_farm_sched.c) ---- */

/* Item times kept per worker for its rate. */
#define LIQ_FARM_RATE_WINDOW 16
/* How often the master reads capacities and redraws the progress line. */
#define LIQ_FARM_TICK_S 0.5

struct liq_farm_opts {
    const char *hosts;      /* "" every host */
    int tasks_per_host;
    int quiet;
    struct liq_fractile_opts fo;
    int reclaim;
    double reclaim_below, reclaim_after, rejoin_above, rejoin_after, reclaim_limit;
};

struct liq_farm_chunk {
    int w;
    uint64_t lo, hi;        /* positions */
    uint64_t got;           /* results from its worker */
    uint64_t batch;
    double t;               /* when it was sent, since the start */
    int open;               /* its worker may still be running it */
};

struct liq_farm_worker {
    int alive, pending;     /* pending: it asked and got nothing yet */
    double dur[LIQ_FARM_RATE_WINDOW];
    int ndur;
    double share0;          /* its host's CPU share at the start (weight before any result) */
};

struct liq_farm_hstate {
    int benched, lost, dropped;
    double below_since, above_since, benched_at;
    uint64_t items;
    double busy;
};

struct liq_farm_event {
    double t;
    int host;
    const char *what;
};

struct liq_farm_master;

/* Pack item idx of a CHUNK into the active send buffer. */
typedef void (*liq_farm_pack_fn)(struct liq_farm_master *m, uint64_t idx, void *arg);
/* A message the loop does not handle itself (RESULT, FAIL, ...) from
 * worker w (-1: not a current worker), in the active receive buffer.  0,
 * or -1 to end the loop with m->why set. */
typedef int (*liq_farm_msg_fn)(struct liq_farm_master *m, int w, int tag, int src, void *arg);

struct liq_farm_master {
    const char *name;       /* message prefix: "vmrun farm", the program's name */
    const char *unit;       /* what an item is called in the progress line: "items", "tiles" */
    const struct liq_farm_opts *o;
    uint64_t n;             /* items */
    const uint64_t *order;  /* scheduling position -> item index; NULL: the identity */
    liq_farm_pack_fn pack;
    void *arg;
    struct liq_farm_vm vm;
    struct liq_fractile f;
    char *done;             /* done[idx]: its result is in */
    uint64_t ndone, reruns, dups, steals;
    struct liq_farm_chunk *chunk;
    size_t nchunk, chunkcap;
    struct liq_farm_worker *w;
    struct liq_farm_hstate *h;
    struct liq_farm_event *ev;
    size_t nev, evcap;
    int nlive;
    int jobbuf;             /* the JOB, kept for workers that join (0: none yet) */
    double t0;
    int progress;           /* a progress line on stderr (a terminal, not --quiet) */
    char why[512];
};

/*
 * Start a farm of n items: spawn the workers (this executable with wargv)
 * on the hosts of o and set the schedule up, each worker weighing its
 * host's CPU share until rates are measured.  The caller then packs the
 * JOB, sends it with liq_farm_send_job and runs liq_farm_loop.  0, or -1
 * with m->why set (m->vm.usage: a bad --hosts).  liq_farm_end in any case.
 */
int liq_farm_start(struct liq_farm_master *m, const char *name, const char *unit,
                   const struct liq_farm_opts *o, uint64_t n, const uint64_t *order,
                   char **wargv, liq_farm_pack_fn pack, void *arg);
/* Send the JOB packed in the active send buffer to every worker, and keep
 * it for the workers of hosts that join later (the next pvm_initsend
 * makes a new buffer).  0, or -1 with m->why set. */
int liq_farm_send_job(struct liq_farm_master *m);
/*
 * Serve until every item's result is in: ASK, lost workers and hosts,
 * hosts added to the VM (when the farm runs on every host: workers start
 * there, get the JOB and ask), reclaim and the progress line here, every
 * other message to on_msg
 * (whose RESULTs call liq_farm_result).  0, or -1 with m->why set (the VM
 * failed, every worker was lost, or on_msg said so).
 */
int liq_farm_loop(struct liq_farm_master *m, liq_farm_msg_fn on_msg, void *arg);
/*
 * A result from worker w for item idx of chunk id, taking `seconds`
 * (its attempts, for the rate).  1: the item's first result, to record;
 * 0: a duplicate (its first result counts); -1: id or idx out of range
 * (a malformed message).
 */
int liq_farm_result(struct liq_farm_master *m, int w, int id, uint64_t idx, double seconds,
                    int attempts);
/* The report's common members: "makespan_s" ... "chunks":[...] (no braces). */
void liq_farm_report(const struct liq_farm_master *m, FILE *fp, double makespan);
/* The summary's per-host lines. */
void liq_farm_summary_hosts(const struct liq_farm_master *m, FILE *fp);
void liq_farm_progress(const struct liq_farm_master *m, int final);
/* Leave the VM (killing the workers if failed) and free everything. */
void liq_farm_end(struct liq_farm_master *m, int failed);

/* The defaults of vmrun farm's options: Fractiling, one worker per host,
 * reclaim on with the stencil's thresholds. */
void liq_farm_opts_defaults(struct liq_farm_opts *o);

/* ---- liquid_farm (liq_farm.c the master, liq_farm_worker.c the worker) ----
 *
 * An item is a tile: the index space is cut into tiles of side b (a power
 * of two, the same on every axis longer than 1) and the tiles are numbered
 * t = x + T0 * (y + T1 * z) on their grid T[3]; the master schedules them
 * in the Morton order of that grid.  JOB is n[3], record, b; a CHUNK item
 * is the tile's number; a RESULT is chunk id, tile number, seconds, and
 * the tile's records (points x record bytes). */
#define LIQ_FARM_TILES_MAX 4096
#define LIQ_FARM_RECORD_MAX (1 << 20)

/* The tile side and the tile grid of an index space: the smallest side
 * that makes at most LIQ_FARM_TILES_MAX tiles. */
static inline void
liq_farm_tiles(const int n[3], int *b, int t[3])
{
    for (*b = 1;; *b *= 2) {
        uint64_t k = 1;

        for (int a = 0; a < 3; a++) {
            t[a] = n[a] > 1 ? (n[a] + *b - 1) / *b : 1;
            k *= (uint64_t)t[a];
        }
        if (k <= LIQ_FARM_TILES_MAX)
            return;
    }
}

/* Tile number idx's box: its first point lo[] and extents cnt[]. */
static inline void
liq_farm_tile_box(const int n[3], int b, const int t[3], uint64_t idx, int lo[3], int cnt[3])
{
    int c[3] = { (int)(idx % (uint64_t)t[0]), (int)(idx / (uint64_t)t[0] % (uint64_t)t[1]),
                 (int)(idx / ((uint64_t)t[0] * (uint64_t)t[1])) };

    for (int a = 0; a < 3; a++) {
        int side = n[a] > 1 ? b : 1;

        lo[a] = c[a] * side;
        cnt[a] = lo[a] + side <= n[a] ? side : n[a] - lo[a];
    }
}

/* liquid_farm's worker role (argv[1] is LIQUID_FARM_WORKER_ARG): serve the
 * master that spawned this process until it says QUIT or is gone.  The
 * exit status. */
int liq_farm_worker_main(const char *name, const int n[3], size_t record, liquid_tile_fn fn,
                         void *arg);

#endif
