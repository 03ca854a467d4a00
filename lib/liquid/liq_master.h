/*
 * liq_master.h - the job master of a liquid stencil job: the program that
 * benchmarks the hosts and the ring, chooses a decomposition, spawns and
 * drives the workers (liq.h, "the worker"), balances, reclaims, gathers
 * and reports.  `vmrun stencil` and `vmrun bench` are thin callers of
 * liq_stencil_main and liq_bench_main; a user's own program becomes the
 * master of its job the same way, with the same options.
 *
 * Who may include it: lib/liquid/'s master files (liq_master*.c, liq_vm.c,
 * liq_opts.c, liq_fields.c, liq_plot.c), launcher/vmrun/ and the tests.
 * It is not installed; libliquid.so exports its liq_ names for vmrun and
 * for the public liquid.h to come (issue 25).
 *
 * Context: one PVM task with one thread; the master enrolls in the VM of
 * LIQUIDVM_HOME and leaves it before liq_stencil_main returns.  Every
 * entry point returns the process exit status: LIQ_EXIT_OK, LIQ_EXIT_FAIL
 * (the job or the VM failed, or --verify found a difference) or
 * LIQ_EXIT_USAGE (bad options or job file), after saying why on stderr.
 *
 * The files and what each holds:
 *   liq_master.c          a job: decompose, run, gather, verify, report
 *   liq_master_bench.c    the benchmarks alone (vmrun bench) and their report
 *   liq_master_job.c      the JOB message
 *   liq_master_balance.c  balancing and reclaim during the run
 *   liq_vm.c              the VM session: hosts, workers, probe, ring, failures
 *   liq_opts.c            options from the command line and job files
 *   liq_fields.c          the final field in files (raw, HDF5, PNG)
 *   liq_plot.c            the SVG plot of the balancing
 *   liq_master_trace.c    --trace: the clocks, the workers' traces, the JSON file
 *   liq_master_ckpt.c     checkpoints confirmed, and a job's recovery from a lost worker
 *   liq_master_disk.c     checkpoints on disk (--checkpoint DIR) and --resume
 */
#ifndef LIQUIDVM_LIQ_MASTER_H
#define LIQUIDVM_LIQ_MASTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decomp.h"
#include "kern.h"
#include "liq.h"
#include "liq_ckfile.h"
#include "liq_io.h"
#include "liq_user.h"

#define LIQ_EXIT_OK 0
#define LIQ_EXIT_FAIL 1
#define LIQ_EXIT_USAGE 2

/* ---- the program that is the master ---- */

/* The argument a program's own workers are spawned with when it gives no
 * worker_argv: liq_stencil_main sees it and runs the worker instead. */
#define LIQ_WORKER_ARG "--liquid-worker"

/*
 * What the master needs to know of the program it runs in.  The program
 * owns the struct and every string; they must outlive the call.
 */
struct liq_program {
    /* The command as the user types it ("vmrun stencil", "heat3d"): the
     * usage line, the prefix of error messages and the plot's title.  Its
     * first word prefixes progress lines ("vmrun: probing ..."). */
    const char *name;
    /* The executable the workers run.  NULL: this process's own
     * (/proc/self/exe), by its absolute path, for hosts that share it (one
     * machine, or the same path everywhere).  A name without a '/' is
     * looked up along each host's spawn_path, as PVM spawns its tasks; a
     * path with one is used as it is. */
    const char *exe;
    /* The arguments the workers are spawned with, NULL-ended; the program
     * must then run liq_worker_main() when it sees them.  NULL:
     * { LIQ_WORKER_ARG, NULL }, which liq_stencil_main handles itself.
     * vmrun's is { "worker", NULL } (vmrun_main.c dispatches it).  Only
     * the first is used when the job is a description's
     * (liq_mu_prepare adds its options). */
    const char *const *worker_argv;
    /* The program's own kernels and fields (liquid.h); NULL for vmrun
     * stencil, whose --kernel and --seed make the description
     * (liq_mu_builtin). */
    const void *user;
};

/*
 * A stencil job's master: parse argv (argv[0] is the program or
 * subcommand; the options of vmrun(1)'s `stencil`, job files included),
 * enroll, spawn the workers, run, report.  For a program without
 * worker_argv, argv[1] LIQ_WORKER_ARG means this process is one of the
 * job's workers: it runs liq_builtin_worker on the rest instead.
 * Returns the exit status (LIQ_EXIT_*).
 */
int liq_stencil_main(const struct liq_program *prog, int argc, char **argv);
/* vmrun stencil's worker, spawned as the first of its worker_argv, then
 * kernel=jacobi|rbgs and seed=N (liq_mu_prepare): runs liq_worker_main on
 * that description (liq_ukern.c); with no arguments (vmrun bench's probe)
 * on the built-in kernels.  argv[0] is the first; who prefixes errors.
 * Returns the exit status (LIQ_EXIT_*). */
int liq_builtin_worker(const char *who, int argc, char **argv);
/* Only the benchmarks of a job (`vmrun bench`): the speed probe on every
 * worker and the ring, printed or as JSON.  Returns LIQ_EXIT_*. */
int liq_bench_main(const struct liq_program *prog, int argc, char **argv);

/* ---- options and job files (liq_opts.c) ---- */

#define LIQ_PATH_MAX 1024

struct liq_opts {
    int n[3];                   /* grid interior points per axis */
    int iters;
    enum liq_kernel kernel;
    struct liquid *user;        /* a program's own update (liquid.h): its options are
                                 * the job's too; vmrun stencil's is liq_ukern.c's */
    int builtin;                /* vmrun stencil: user is --kernel's (bkernel) and --seed's
                                 * description, reported and verified as that kernel */
    enum liq_kernel bkernel;    /* LIQ_JACOBI or LIQ_RBGS */
    int check_reach;            /* --check-reach: look for reads beyond the reach first */
    char input[LIQUID_MAX_FIELDS][LIQ_PATH_MAX]; /* --input FILE:DATASET: a field's initial
                                                  * values, one per field */
    int ninput;
    int quanta;                 /* quanta per host */
    char hosts[LIQ_PATH_MAX];   /* comma-separated host names; "" = every host */
    int tasks_per_host;
    int decomp;                 /* enum decomp_method, or -1 for the advisor's best */
    int verify;
    char json[LIQ_PATH_MAX];    /* report file; "-" = stdout; "" = none */
    char output[LIQ_PATH_MAX];  /* final field file (.h5/.hdf5: HDF5 + XDMF; else raw); "" = none */
    char png[LIQ_PATH_MAX];     /* picture of a slice of the final field; "" = none */
    int slice_axis, slice_k;    /* its slice (LIQ_AXIS_*, index); slice_k -1 = the middle */
    char field[LIQ_IO_NAME_MAX];/* the field pictured; "" = the job's only one */
    uint64_t seed;
    enum decomp_netkind net;
    double probe_seconds;
    int quiet;
    int halo;                   /* iterations per ghost exchange (deep halos); 0 = auto */
    /* liquid balancing (issue 8) */
    int balance;                /* re-place quanta every epoch */
    int epoch;                  /* iterations per epoch */
    int heavy;                  /* work factor of the heavy region (1: uniform) */
    double min_gain;            /* smallest predicted relative gain that moves quanta */
    /* reclaim: a host's workers leave while the CPU share each could get
     * (its daemon's capacity over its workers, at most 1) stays below
     * reclaim_below for reclaim_after seconds, and come back once it
     * stays at rejoin_above or more for rejoin_after seconds */
    int reclaim;
    double reclaim_below, reclaim_after, rejoin_above, rejoin_after;
    char svg[LIQ_PATH_MAX];     /* plot of BE and each host's share per epoch */
    char trace[LIQ_PATH_MAX];   /* --trace: Chrome Trace Event JSON of the run; "" = none */
    char hints[LIQ_PATH_MAX];   /* --hints: the file the settings below came from; "" none */
    int ckpt_every;             /* --checkpoint-every: epochs between checkpoints, 0 none,
                                 * -1 auto (ck_share of the run, liq_master_ckpt.c) */
    char ckdir[LIQ_PATH_MAX];   /* --checkpoint DIR: checkpoints on disk there; "" none */
    double ck_interval;         /* --checkpoint-interval: seconds at least between writes */
    double ck_share;            /* --checkpoint-share: auto's budget, a share of the run */
    char resume[LIQ_PATH_MAX];  /* --resume DIR: go on from its checkpoint; "" start */
    double worker_timeout;      /* --worker-timeout: a running worker silent this long (s)
                                 * is lost (checkpoints on); 0 auto (liq_vm_watch) */
    char hinted[512];           /* the settings it gave (comma-separated keys, '-' style)
                                 * that no option given explicitly overrode */
    char given[2048];           /* the keys the command line and the job file gave */
};

/* The program's own description, or NULL for vmrun stencil's kernels,
 * which run as a description (o->user) but are reported, written and
 * verified as the kernel. */
static inline const struct liquid *
liq_opts_program(const struct liq_opts *o)
{
    return o->builtin ? NULL : o->user;
}

void liq_opts_defaults(struct liq_opts *o);
/* Set one option by its long name (no dashes; '_' and '-' alike) from text.
 * Flags take "true"/"false" (or NULL for true).  0, or -1 with err set. */
int liq_opt_set(struct liq_opts *o, const char *name, const char *value, char *err,
                size_t errlen);
/* Apply a libconfig job file whose keys are the option names.  0, or -1
 * with every error in err ("file:line: key: what"). */
int liq_opts_file(struct liq_opts *o, const char *path, char *err, size_t errlen);
/* Parse argv (argv[0] is the command, not read): --job first, then the
 * rest, which override it.  allowed: the option names this command takes,
 * NULL-ended; name: the command, which prefixes the messages ("vmrun
 * stencil").  Returns 0, LIQ_EXIT_USAGE after printing why, or -1 when
 * --help was given (the caller prints its usage). */
int liq_opts_parse(struct liq_opts *o, const char *name, int argc, char **argv,
                   const char *const *allowed);
/* Usage: "usage: NAME " and synopsis[0], the other lines of the synopsis
 * (NULL-ended) indented under it, then text. */
/* 1 if the command line or the job file gave key ('-' style), not a default or a hint. */
int liq_opts_given(const struct liq_opts *o, const char *key);
void liq_opts_usage(FILE *fp, const char *name, const char *const *synopsis, const char *text);

/* The master gathers the final field (verify, output or picture). */
static inline int
liq_opts_gathers(const struct liq_opts *o)
{
    return o->verify || o->output[0] != '\0' || o->png[0] != '\0' ||
           (o->user != NULL && o->user->keep);
}

/* ---- the final field in files (liq_fields.c) ---- */

/* The job's field as it is named in files. */
#define LIQ_FIELD_NAME "u"

/* Before the job runs: the slice inside the grid, the field known, every
 * file to be written writable (its directory exists and lets us in).  0, or
 * -1 with why set. */
int liq_fields_check(const struct liq_opts *o, char *why, size_t len);
/* The fields of a job as files see them. */
struct liq_field_set {
    int nf;
    const char *name[LIQUID_MAX_FIELDS];
    const struct kern_box *box[LIQUID_MAX_FIELDS]; /* ghosts included, interior at 1..n */
    long iteration;
    double time;
    int geom;                   /* origin and spacing below, else the unit cube's */
    double origin[3], spacing[3];
};
/* The same for several named fields (raw output: one after the other). */
int liq_fields_write_set(const struct liq_opts *o, const struct liq_field_set *set,
                         uint64_t checksum, char *why, size_t len);
/* Write --output (raw doubles, or HDF5 with its XDMF file) and --png from
 * the gathered field (ghosts included, interior at 1..n).  0, or -1 with
 * why set. */
int liq_fields_write(const struct liq_opts *o, const struct kern_box *field,
                     uint64_t checksum, char *why, size_t len);
/* The JSON report's "files":[{"path":...,"kind":...},...], (with the comma). */
void liq_fields_json(FILE *fp, const struct liq_opts *o);

/* ---- the VM session: workers, benchmarks, failures (liq_vm.c) ---- */

struct liq_vm_host {
    char name[256];
    int dtid;                   /* the host's daemon tid; 0 while it is out of the VM
                                 * (lost with its workers: the tid may go to another) */
    int first, count;           /* its workers: index range in struct liq_vm's tids */
    double speed;               /* updates/s of all its workers together */
    double cache;               /* bytes the kernels tile for */
};

#define LIQ_RING_SIZES 5

struct liq_vm {
    const struct liq_program *prog; /* the program the master runs in */
    char who[64];               /* the first word of prog->name: progress lines' prefix */
    int mytid;
    int nhosts;
    struct liq_vm_host *host;
    int nworkers;
    int *tids;
    int *whost;                 /* host index of each worker */
    double *wspeed;             /* updates/s of each worker, probed */
    double *wcpu;               /* updates per CPU-second of each worker, probed */
    char *leaving;              /* the worker was evacuated: its LEFT is due */
    int *was;                   /* per slot: the last worker it had, for the report */
    char *gone;                 /* per slot: why it has none now ('l' lost, 'e' evacuated) */
    int done;                   /* bit set when workers may exit: no failure then */
    int ringn;                  /* ring members (0: no ring) */
    int ring_bytes[LIQ_RING_SIZES];
    double ring_s[LIQ_RING_SIZES]; /* median round time per size */
    double lambda, tau, r2;
    int fit_ok;                 /* 0: the fit was not physical; two-point estimate */
    enum decomp_netkind net;
    char why[512];              /* what failed */
    int usage;                  /* the failure was a bad option (a host not in the VM) */
    int progress;               /* print progress on stderr */
    /* recovery (liq_master_ckpt.c) */
    int ckpt;                   /* a lost worker or host starts a recovery, not a failure */
    int gen;                    /* the job's generation: one more per recovery */
    char *lost;                 /* per slot: its worker is lost (liq_vm_next said
                                 * LIQ_VM_LOST), not yet recovered from */
    /* hung workers (liq_vm.c, liq_vm_watch): with a timeout, a slot that
     * runs the job and sends nothing for that long is lost */
    double timeout;             /* seconds; 0: silence is never a loss */
    double timeout_fixed;       /* --worker-timeout, 0 auto */
    double epoch_s;             /* the slowest epoch: modelled, then the longest seen */
    double *heard;              /* per slot: when its last message came (liq_vm_now) */
    double *epoch_t;            /* per slot: when its last epoch report came, 0 none yet */
    char *quiet;                /* per slot: done with the job, its silence expected */
};

/* Slot w's worker, or the last one it had: a report names a lost or
 * evacuated worker by its tid, not 0. */
static inline int
liq_vm_tid(const struct liq_vm *vm, int w)
{
    return vm->tids[w] != 0 || vm->was == NULL ? vm->tids[w] : vm->was[w];
}

/* The worker of slot w leaves it: how = 'l' lost, 'e' evacuated. */
static inline void
liq_vm_slot_empty(struct liq_vm *vm, int w, char how)
{
    if (vm->was != NULL && vm->tids[w] != 0) {
        vm->was[w] = vm->tids[w];
        vm->gone[w] = how;
    }
    vm->tids[w] = 0;
}

/* liq_vm_next: a worker exited or its host left, and vm->ckpt is set:
 * vm->lost marks the slots, vm->why says what happened. */
#define LIQ_VM_LOST (-2)

/* Enroll, choose the hosts (o->hosts) and spawn o->tasks_per_host workers
 * on each, as prog says.  0, or -1 with vm->why set (vm->usage for a host
 * not in the VM); liq_vm_stop and liq_vm_free clean up either way. */
int liq_vm_start(struct liq_vm *vm, const struct liq_opts *o, const struct liq_program *prog);
/* The speed probe on every worker at once, then the ring.  ext: box shape. */
int liq_vm_bench(struct liq_vm *vm, const int ext[3], enum liq_kernel k, double seconds,
                 int halo);
/* The halo a job runs with: o->halo, or for 0 the deepest that sweeps at most
 * LIQ_HALO_SLACK more points (liq_halo_auto) with the workers' regions of
 * placement owner (NULL: before there is one, each quantum alone), within
 * LIQ_MAX_HALO and the epoch (the job, without balancing); deeper where
 * the network's lambda (s per message) against the workers' summed speed
 * (updates/s) makes fewer exchanges faster (both > 0, else not); and no
 * deeper than the epoch's blocks (as few as it allows, lengths within one
 * of each other: liq_block_at) need. */
int liq_opts_halo(const struct liq_opts *o, const struct liq_geom *g, const int *owner,
                  double lambda, double speed);
/* The next message from a worker: its buffer id, with tag and source; -1
 * when a worker failed, died or lost its host (vm->why says which), or
 * with vm->ckpt set LIQ_VM_LOST for a death or a lost host. */
int liq_vm_next(struct liq_vm *vm, int *tag, int *src);
/* Watch the workers for silence from now on (checkpoints on): a running
 * worker that sends nothing (no report, no heartbeat of a waiting worker)
 * for `fixed` seconds, or for 0 max(LIQ_HUNG_MIN_S, LIQ_HUNG_EPOCHS times
 * the slowest epoch; epoch_s models it until epochs are seen), is lost.
 * Every slot counts as heard now; 0, or -1 with vm->why set. */
int liq_vm_watch(struct liq_vm *vm, double fixed, double epoch_s);
/* Every slot heard now, none done: a job (re)starts. */
void liq_vm_rewatch(struct liq_vm *vm);
/* The next message of any tag and source, with the workers watched: its
 * buffer id; LIQ_VM_LOST when a running worker stayed silent past the
 * timeout (vm->lost marks it and those of its host silent as long, which
 * are told to quit and killed; vm->why says it); or a PVM error.
 * Heartbeats (LIQ_TAG_ALIVE) count as heard and are not returned. */
int liq_vm_recv(struct liq_vm *vm);
/* The worker index of a tid, or -1. */
int liq_vm_worker(const struct liq_vm *vm, int tid);
/* Start a new worker in slot w (its tid is 0) on the slot's host. */
int liq_vm_respawn(struct liq_vm *vm, int w);
/* The CPUs each host's daemon says the VM may use now (lvm_hostload's
 * capacity; -1 unknown), into cap[nhosts]; with kernel non-NULL, which
 * machine each host is (0 unknown).  0, or -1 with vm->why set. */
int liq_vm_capacity(struct liq_vm *vm, double *cap, unsigned long long *kernel);
/* Wait, at most limit seconds, until every host's daemon has CPU figures
 * (two samples); see liq_vm.c. */
void liq_vm_await_load(struct liq_vm *vm, double limit);
/* Tell the workers to quit (kill them after a failure) and leave the VM. */
void liq_vm_stop(struct liq_vm *vm, int failed);
void liq_vm_free(struct liq_vm *vm);
double liq_vm_now(void);
double liq_vm_unix_now(void);   /* wall clock (CLOCK_REALTIME) seconds */

/* liq_master_bench.c: the benchmarks' figures, as text and as the JSON
 * report's "hosts":[...],"ring":{...} (no braces around). */
void liq_bench_print(FILE *fp, const struct liq_vm *vm);
void liq_bench_json(FILE *fp, const struct liq_vm *vm);

/* ---- a running job (liq_master*.c, liq_plot.c) ---- */

/* --trace on the master (liq_master_trace.c): its own events, each worker's
 * trace as it came, the hosts' clock offsets. */
struct liq_mtrace_worker {
    int tid, host;
    int done;                   /* its last chunk came */
    int dropped0;               /* dropped by the traces it sent before a recovery */
    struct liq_trace tr;        /* cap: room allocated; n: events in */
};

struct liq_mtrace {
    int on;
    double t0;                  /* the trace's origin (liq_vm_now) */
    int mtid, mhost;            /* the master's tid and host (the file is written after
                                 * it left the VM) */
    struct liq_trace mine;      /* the master's events */
    double *offset;             /* per host: its clock minus the master's, seconds */
    double *residual;           /* per host: half the best round trip (-1: not measured) */
    struct liq_mtrace_worker *w;
    int nw, capw;
    int due;                    /* traced workers whose last chunk has not come */
};

/* A host's workers left (evacuate) or came back (rejoin). */
struct liq_event {
    int epoch;                  /* at the end of this epoch */
    double t_s;                 /* seconds since the iterations started */
    int host;
    int rejoin;                 /* 0 evacuate, 1 rejoin */
};

/* An epoch report that came before the last of the epoch before (liq_mb_epoch). */
struct liq_kept {
    int buf;                    /* its receive buffer, 0 for none */
    int count;                  /* its quanta count (its header is read) */
    double t;                   /* when it came (liq_vm_now()) */
};

/* A lost worker or host, and the recovery from it (liq_master_ckpt.c). */
struct liq_failure {
    double t_s;                 /* seconds since the iterations started */
    int tid, host;              /* the worker lost and its host */
    char what[200];             /* what happened, as the master saw it */
    int reached;                /* the furthest iteration a worker had reported */
    int back_to;                /* the checkpoint the job went on from */
    int replaced;               /* quanta placed on another worker than at back_to */
    int during;                 /* it came while recovering from the one before */
    double recovery_s;          /* from its notice to the job sent again */
    double resumed_s;           /* from its notice to a survivor's first block done
                                 * after the recovery; -1 none yet */
};

/* Checkpoints not yet complete: every quantum's copy acknowledged. */
#define LIQ_CK_PENDING 4

/* --checkpoint-share's default: with --checkpoint-every auto the copies'
 * cost stays within this share of the run. */
#define LIQ_CK_SHARE 0.03

struct liq_ckpt {
    int on;
    int every;                  /* epochs between checkpoints (auto: as chosen) */
    int iters;                  /* iterations between checkpoints */
    int mul;                    /* ... times this from the last plan on (auto: by their cost) */
    double *wcks;               /* per slot, from its epoch reports: checkpoint seconds */
    int *wckn;                  /* ... and the checkpoints they were spent on */
    int iter;                   /* the last confirmed checkpoint, 0 none */
    int *otid, *btid;           /* per quantum, at iter: its owner and the buddy with
                                 * its copy */
    struct {
        int iter, got;          /* 0: free; quanta acknowledged */
        int *otid, *btid;
    } pend[LIQ_CK_PENDING];
    int count;                  /* checkpoints confirmed */
    double bytes;               /* bytes of copies acknowledged */
    struct liq_ckhand {         /* copies a leaving worker handed over: quantum id's of
                                 * iteration iter, from tid `from` to tid `to` */
        int iter, id, from, to;
    } *hand;
    int nhand, caphand;
    double *wsec, *wbytes;      /* per slot, from DONE: wall s and bytes of its copies */
    struct liq_failure *fail;
    int nfail, capfail;
};

struct liq_mdwrite;

/* --checkpoint DIR (liq_master_disk.c): the copies of a confirmed
 * checkpoint gathered from their owners, written to DIR; --resume. */
struct liq_disk {
    int on;
    int want;                   /* the checkpoint being gathered, 0 none */
    int wgen;                   /* its generation */
    int wleft;                  /* st->left_all when it was asked for */
    int got;                    /* quanta in */
    int wconf;                  /* checkpoints confirmed since it was asked for */
    int patience;               /* how many it may wait: doubled at each give-up */
    int given_up;               /* gathers given up as incomplete */
    char *have;                 /* per quantum: its copy came */
    double *v;                  /* the grid's state: nstate boxes of nx*ny*nz */
    int nstate;
    double interval_s;          /* --checkpoint-interval */
    double last_t;              /* when the last write ended (liq_vm_now) */
    int writes, failed;         /* files written; writes that failed */
    int iter;                   /* the iteration of the last file written, 0 none */
    double bytes, bytes_all;    /* the last file's bytes; all files' */
    double sec, sec_max;        /* seconds writing (hash, write, fsync, rename): all, most */
    struct liq_mdwrite *wr;     /* the write in flight on its thread, NULL none */
    double gather_s;            /* seconds from the request to the last copy, summed */
    double t_req;               /* when the copies were asked for */
    char err[512];              /* the last write's failure */
    /* resuming: from --resume, or a recovery that fell back on the file */
    int resumed_from;           /* --resume's iteration, 0 none */
    double read_s;              /* seconds reading and checking it */
    int fallbacks;              /* recoveries that went on from the file */
    int fb_iter;                /* the iteration the last of them went on from */
    struct liq_ckfile file;     /* the file read, until its quanta are sent */
};

/* The figures each worker's DONE message ends with (liq_stats.wcpu). */
#define LIQ_WCPU 9

/* What a job measured, for the summary and the report. */
struct liq_stats {
    struct liq_geom g;
    int32_t *owner;
    double *qweight;            /* points per quantum */
    struct decomp_advice adv;
    char advname[64];           /* the advice's application name */
    int advised;
    enum decomp_method method;
    int *wquanta;               /* quanta per worker */
    int *witer;                 /* iterations each worker reported */
    double *wcompute, *wcomm;   /* per worker, summed over the run */
    double *wsetup, *wrun;
    double *wcpu;               /* per worker, LIQ_WCPU each: CPU s in the kernels, in
                                 * the process, in the kernels while ghosts were on the
                                 * way; wall s blocked for ghosts, for the master's plans;
                                 * bytes of ghosts received from other workers; its
                                 * peak resident bytes (VmHWM) and the bytes its
                                 * regions' boxes hold */
    uint64_t checksum;
    int halo;                   /* iterations per ghost exchange */
    int halo_slack;             /* --halo auto's depth before its latency term (the
                                 * deepest within LIQ_HALO_SLACK more points); a
                                 * halo given: that halo */
    double halo_work;           /* points swept per point owned, initial placement */
    int ndone;
    double t_bench, t_decomp, t_run, t_gather, t_verify, t_total;
    double t_iter;              /* the slowest worker's iteration loop (no setup) */
    /* balancing */
    uint32_t *order;            /* quanta along the Hilbert curve */
    double *cost, *qbytes;      /* median time per quantum this epoch; bytes of a move */
    int reported;               /* workers heard this epoch */
    int32_t *owner_prev;        /* the placement during the epoch being reported
                                 * (owner: after the plan decided last) */
    int *rep_from, *rep_until;  /* per slot: the first and last epoch its worker reports */
    struct liq_kept *kept;      /* per slot: a report of the next epoch, kept */
    int nkept;                  /* slots in kept */
    int plan_due;               /* an epoch whose plan waits for a verdict, 0 none */
    int red_done;               /* the iteration of the last verdict given */
    struct liq_epoch *ep;
    int nep;
    int *hquanta;               /* quanta per host after each epoch's plan: nep x nhosts */
    double *hmodel, *hwall;     /* per epoch and host, its slowest worker's kernel CPU s
                                 * per iteration at its share (the balancer's model) and
                                 * compute wall s per iteration: nep x nhosts */
    double *hshare;             /* ... and the CPU share the plan gave its workers
                                 * (-1 unknown: the model took a whole CPU) */
    double *wnow;               /* each worker's recent compute s per iteration */
    double *wother;             /* each worker's CPU share outside its kernels, last epoch */
    double *wfull;              /* each worker's updates per CPU-second (the probe's) */
    double *wshare;             /* the CPU share the model uses per worker (-1 unknown) */
    double t_first;             /* when this epoch's first report came */
    double run_t0;              /* liq_vm_now() when the job was sent */
    double run_unix;            /* the same moment, wall clock */
    /* reclaim */
    struct liq_reclaim *rec;    /* per host */
    int nlive;                  /* slots whose worker computes (not 0, not leaving) */
    int left_due;               /* evacuated workers whose LEFT has not come */
    int left_all;               /* LEFTs that came, in all */
    struct liq_event *ev;
    int nev;
    int moved_total;
    double bytes_total;
    int verified;               /* 1 identical, 0 differs, -1 not checked */
    size_t diffs;
    struct kern_box field;      /* the gathered field, when asked */
    size_t field_points;
    /* a program's own update (liq_master_user.c) */
    int nfields;                /* fields gathered: 1 for the built-in kernels */
    struct kern_box more[LIQUID_MAX_FIELDS]; /* fields 1.. (field 0 is `field`) */
    int iters_done;             /* iterations the job ran: an until may stop it early */
    int red_it, red_got;        /* the reduction point being gathered; quanta in */
    double *red_part;           /* nquanta x nred partials, by quantum id */
    char *red_have;             /* per quantum: its partials came */
    int stopped;                /* the until rule stopped the job there */
    struct liq_mtrace tr;       /* --trace */
    struct liq_ckpt ck;         /* --checkpoint-every */
    struct liq_disk dk;         /* --checkpoint DIR, --resume DIR */
};

/* ---- a program's own update on the master (liq_master_user.c) ---- */

/* --help of a program's own stencil: vmrun stencil's synopsis and text
 * (without what does not apply to it), its fields, --input and
 * --check-reach, and its own options. */
void liq_mu_usage(FILE *fp, const struct liquid *lq, const char *const *synopsis,
                  const char *text);
/* The kernel's name in reports: jacobi, rbgs, or the program's. */
const char *liq_kernel_name(const struct liq_opts *o);
/* Once the options are read: the setup callback, the kernel, an epoch a
 * multiple of the reductions' stride, --check-reach, and *up: prog with
 * the workers' argv (the program's options as NAME=VALUE).  0, or -1
 * after printing why. */
int liq_mu_prepare(struct liquid *lq, struct liq_opts *o, const struct liq_program *prog,
                   struct liq_program *up);
/* vmrun stencil: o->user becomes the description of o->kernel on
 * o->seed's field (liq_ukern.c), o->builtin 1.  0, or -1 out of memory. */
int liq_mu_builtin(struct liq_opts *o);
/* --input: every quantum's initial values of the field, to its first
 * owner (LIQ_TAG_INIT), after the JOB.  0, or -1 with vm->why set. */
int liq_mu_send_input(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
/* The geometry of the job's own update, and the halo no deeper than a
 * periodic axis allows. */
void liq_mu_geom(const struct liq_opts *o, struct liq_stats *st);
int liq_mu_halo(const struct liq_opts *o, const struct liq_stats *st, int halo);
/* The gathered fields' boxes, before the job; 0 or -1 (vm->why). */
int liq_mu_gather_alloc(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
/* Field f's gathered box, or NULL. */
struct kern_box *liq_mu_field(struct liq_stats *st, int f);
/* A LIQ_TAG_REDUCE message from worker w: once every quantum's partials
 * of the point are in, the values, the until rule and the verdict to
 * every worker.  1 when the verdict of point st->red_it went out, 0 when
 * partials are still due, -1 with vm->why set. */
int liq_mu_reduce(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w);
/* --verify for a program's own update: every field's bits, the
 * iterations, the reductions.  0, or -1 with vm->why set. */
int liq_mu_verify(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
/* The files and the program's results (liquid_result, liquid_iterations). */
int liq_mu_finish(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
void liq_mu_free(struct liq_stats *st);
/* The report's "program":{...}, (with the comma): fields, reductions, the stop. */
void liq_mu_json(FILE *fp, const struct liq_opts *o, const struct liq_stats *st);

/* liq_master_job.c: the JOB message for the workers in to[nto] (all of the
 * job's slots; 0 for none), starting at iteration start; restore: a
 * recovery's, whose quanta come from the checkpoint of start.  0, or -1
 * with vm->why set. */
int liq_master_job_send(struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st,
                        int *to, int nto, int start, int restore);

/* liq_master_ckpt.c: checkpoints and recovery (liq.h, "checkpoints").
 * liq_mc_init: before the JOB (0, or -1 with vm->why).  liq_mc_ack: a
 * LIQ_TAG_CKACK from slot w; the last copy of a checkpoint confirms it to
 * every worker.  liq_mc_recover: after LIQ_VM_LOST, every survivor rolls
 * back to the last confirmed checkpoint and the job goes on; -1 with
 * vm->why naming the quanta lost when some have no copy left.
 * liq_mc_handed: a LIQ_TAG_CKHANDED from slot w (0, or -1 with vm->why).
 * liq_mc_done: the checkpoint figures that end worker w's DONE.
 * liq_mc_progress: a progress report came (the first after a recovery
 * times it).
 * liq_mc_json: the report's "checkpoints":{...},"failures":[...], (with
 * the comma); liq_mc_summary: its lines of the summary. */
int liq_mc_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
int liq_mc_ack(struct liq_vm *vm, struct liq_stats *st, int w);
int liq_mc_handed(struct liq_vm *vm, struct liq_stats *st, int w);
int liq_mc_recover(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
void liq_mc_done(struct liq_stats *st, int w);
/* A worker's progress report came: the job runs again after a recovery. */
void liq_mc_progress(struct liq_stats *st);
void liq_mc_json(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o,
                 const struct liq_stats *st);
void liq_mc_summary(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o,
                    const struct liq_stats *st);
void liq_mc_free(struct liq_stats *st);
/* liq_master_disk.c: checkpoints on disk (liq_ckfile.h has the file).
 * liq_md_describe: this job's description as the file holds it (what
 * makes its bits: kernel, grid, iterations, seed, fields, the program's
 * options).  liq_md_open: before the VM, --resume's file read, checked
 * and compared with this job: 0, or LIQ_EXIT_USAGE after saying why.
 * liq_md_init: after liq_mc_init (0, or -1 with vm->why); a resumed job
 * checkpoints as often as the one that wrote the file.  liq_md_due: ck_confirm's
 * question, is a write due at checkpoint it (1: the workers are asked for
 * their copies in its CONFIRM).  liq_md_take: a LIQ_TAG_CKSAVE from slot
 * w; the last copy writes the file (a failed write is reported, the job
 * goes on).  liq_md_fallback: a recovery with quanta lost reads the file
 * instead and sets *c to its iteration (0, or -1 with vm->why unchanged
 * when there is no file to go on from).  liq_md_load: the file's state
 * of every quantum to its owner (st->owner; LIQ_TAG_CKLOAD), before a
 * restoring JOB; it becomes the confirmed checkpoint (ck->iter).
 * liq_md_json: the report's "disk_checkpoints":{...}, (with the comma). */
void liq_md_describe(const struct liq_opts *o, char *buf, size_t len);
int liq_md_open(const struct liq_opts *o, struct liq_stats *st, const char *name);
int liq_md_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
int liq_md_due(struct liq_vm *vm, struct liq_stats *st, int it);
int liq_md_take(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w);
int liq_md_fallback(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int *c);
int liq_md_load(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int c);
void liq_md_json(FILE *fp, const struct liq_opts *o, const struct liq_stats *st);
void liq_md_summary(FILE *fp, const struct liq_opts *o, const struct liq_stats *st);
/* Wait for the write in flight, and count it.  After the job's loop. */
void liq_md_settle(struct liq_vm *vm, struct liq_stats *st);
void liq_md_free(struct liq_stats *st);

/* liq_master_balance.c: the balancer's state back at checkpoint iteration
 * c with the placement st->owner (the workers' slots in vm->tids), and
 * the plan of the next boundary that takes one sent again (the workers
 * take none at c).  0, or -1 with vm->why set. */
int liq_mb_rollback(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int c);

/* liq_master_balance.c: liquid balancing and reclaim on the master's side. */
int liq_mb_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
/* The model's speed of every worker now (CPU speed times sensed share),
 * after liq_mb_init: the first placement of a balanced job uses it, so
 * the first plan does not undo it.  0, or -1 when a speed is unknown. */
int liq_mb_speeds(const struct liq_vm *vm, const struct liq_stats *st, double *speed);
/* One worker's epoch report; with the last one, reclaim, decide, send the plan. */
int liq_mb_epoch(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w);
/* The verdict of the reduction at iteration `it` went out (st->stopped
 * set if it stopped the job): a plan that waited for it is made now. */
int liq_mb_verdict(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int it);
/* An evacuated worker's LEFT. */
int liq_mb_left(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w);
/* The index in st->ep of the plan taken at an epoch boundary, or -1 for none. */
int liq_mb_plan_record(int boundary);
void liq_mb_free(struct liq_stats *st);

/* liq_master_trace.c: --trace.  liq_mt_start measures every host's clock
 * against the master's (LIQ_MT_PINGS ping-pongs per worker, the smallest
 * round trip kept per host) before the JOB goes; 0, or -1 with vm->why.
 * liq_mt_expect: worker slot w was sent a JOB with tracing on (its trace
 * is due).  liq_mt_take: a LIQ_TAG_TRACE chunk from tid src (0 or -1 with
 * vm->why).  liq_mt_reopen: survivor tid goes on after a recovery; if its
 * trace came whole, the rest of it is due too.  liq_mt_write: the Chrome
 * Trace Event JSON file (0, or -1 with errno). */
#define LIQ_MT_PINGS 5
int liq_mt_start(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st);
int liq_mt_expect(struct liq_vm *vm, struct liq_stats *st, int w);
int liq_mt_take(struct liq_vm *vm, struct liq_stats *st, int src);
void liq_mt_reopen(struct liq_stats *st, int tid);
int liq_mt_write(const char *path, const struct liq_vm *vm, const struct liq_opts *o,
                 const struct liq_stats *st);
void liq_mt_free(struct liq_stats *st);

/* The first epoch this run took: 0, or a resumed job's first after the
 * checkpoint (st->ep[] is indexed by the job's epochs; those before it
 * ran in the run that wrote the checkpoint). */
static inline int
liq_epoch_first(const struct liq_opts *o, const struct liq_stats *st)
{
    int first = st->dk.resumed_from > 0 && o->epoch > 0 ? st->dk.resumed_from / o->epoch : 0;

    return first < st->nep ? first : st->nep;
}

/* liq_plot.c: BE and each host's share of the quanta per epoch, as SVG. */
int liq_plot_svg(const char *path, const struct liq_vm *vm, const struct liq_opts *o,
                 const struct liq_stats *st);

#endif /* LIQUIDVM_LIQ_MASTER_H */
