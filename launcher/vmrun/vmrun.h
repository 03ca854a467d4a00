/*
 * vmrun.h - the stencil job launcher: benchmark the hosts and the ring,
 * choose a decomposition, run a job on the VM, report.
 *
 * Who may include it: launcher/vmrun/vmrun_*.c and tests.  Every subcommand is a
 * function taking its own argc/argv (argv[0] is the subcommand's name) and
 * returning the process exit status: VMRUN_EXIT_OK, VMRUN_EXIT_FAIL (the job
 * or the VM failed, or --verify found a difference), VMRUN_EXIT_USAGE (bad
 * options or job file).
 */
#ifndef LIQUIDVM_VMRUN_H
#define LIQUIDVM_VMRUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decomp.h"
#include "liq.h"
#include "liq_io.h"

#define VMRUN_EXIT_OK 0
#define VMRUN_EXIT_FAIL 1
#define VMRUN_EXIT_USAGE 2

/* vmrun_advise.c: the offline advisor (seed 001 chapter 7). */
int vmrun_advise_main(int argc, char **argv);

/* ---- options and job files (vmrun_opts.c) ---- */

#define VMRUN_PATH_MAX 1024

struct vmrun_opts {
    int n[3];                   /* grid interior points per axis */
    int iters;
    enum liq_kernel kernel;
    int quanta;                 /* quanta per host */
    char hosts[VMRUN_PATH_MAX]; /* comma-separated host names; "" = every host */
    int tasks_per_host;
    int decomp;                 /* enum decomp_method, or -1 for the advisor's best */
    int verify;
    char json[VMRUN_PATH_MAX];  /* report file; "-" = stdout; "" = none */
    char output[VMRUN_PATH_MAX];/* final field file (.h5/.hdf5: HDF5 + XDMF; else raw); "" = none */
    char png[VMRUN_PATH_MAX];   /* picture of a slice of the final field; "" = none */
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
    char svg[VMRUN_PATH_MAX];   /* plot of BE and each host's share per epoch */
};

void vmrun_opts_defaults(struct vmrun_opts *o);
/* Set one option by its long name (no dashes; '_' and '-' alike) from text.
 * Flags take "true"/"false" (or NULL for true).  0, or -1 with err set. */
int vmrun_opt_set(struct vmrun_opts *o, const char *name, const char *value, char *err,
                  size_t errlen);
/* Apply a libconfig job file whose keys are the option names.  0, or -1
 * with every error in err ("file:line: key: what"). */
int vmrun_job_file(struct vmrun_opts *o, const char *path, char *err, size_t errlen);
/* Parse argv (argv[0] is the command): --job first, then the rest, which
 * override it.  allowed: the option names this command takes, NULL-ended.
 * Returns 0, VMRUN_EXIT_USAGE after printing why, or -1 when --help was
 * given (the caller prints its usage). */
int vmrun_parse_args(struct vmrun_opts *o, int argc, char **argv, const char *const *allowed);

/* The master gathers the final field (verify, output or picture). */
static inline int
vmrun_gathers(const struct vmrun_opts *o)
{
    return o->verify || o->output[0] != '\0' || o->png[0] != '\0';
}

/* ---- the final field in files (vmrun_fields.c) ---- */

/* The job's field as it is named in files. */
#define VMRUN_FIELD_NAME "u"

/* Before the job runs: the slice inside the grid, the field known, every
 * file to be written writable (its directory exists and lets us in).  0, or
 * -1 with why set. */
int vmrun_fields_check(const struct vmrun_opts *o, char *why, size_t len);
/* Write --output (raw doubles, or HDF5 with its XDMF file) and --png from
 * the gathered field (ghosts included, interior at 1..n).  0, or -1 with
 * why set. */
int vmrun_fields_write(const struct vmrun_opts *o, const struct kern_box *field,
                       uint64_t checksum, char *why, size_t len);
/* The JSON report's "files":[{"path":...,"kind":...},...], (with the comma). */
void vmrun_fields_json(FILE *fp, const struct vmrun_opts *o);

/* ---- the VM session: workers, benchmarks, failures (vmrun_vm.c) ---- */

struct vmrun_host {
    char name[256];
    int dtid;                   /* the host's daemon tid */
    int first, count;           /* its workers: index range in vmrun_vm.tids */
    double speed;               /* updates/s of all its workers together */
    double cache;               /* bytes the kernels tile for */
};

#define VMRUN_RING_SIZES 5

struct vmrun_vm {
    int mytid;
    int nhosts;
    struct vmrun_host *host;
    int nworkers;
    int *tids;
    int *whost;                 /* host index of each worker */
    double *wspeed;             /* updates/s of each worker, probed */
    double *wcpu;               /* updates per CPU-second of each worker, probed */
    char *leaving;              /* the worker was evacuated: its LEFT is due */
    int done;                   /* bit set when workers may exit: no failure then */
    int ringn;                  /* ring members (0: no ring) */
    int ring_bytes[VMRUN_RING_SIZES];
    double ring_s[VMRUN_RING_SIZES]; /* median round time per size */
    double lambda, tau, r2;
    int fit_ok;                 /* 0: the fit was not physical; two-point estimate */
    enum decomp_netkind net;
    char why[512];              /* what failed */
    int usage;                  /* the failure was a bad option (a host not in the VM) */
    int progress;               /* print progress on stderr */
};

int vmrun_vm_start(struct vmrun_vm *vm, const struct vmrun_opts *o);
/* The speed probe on every worker at once, then the ring.  ext: box shape. */
int vmrun_vm_bench(struct vmrun_vm *vm, const int ext[3], enum liq_kernel k, double seconds,
                   int halo);
/* The halo a job runs with: o->halo, or for 0 the deepest that sweeps at most
 * LIQ_HALO_SLACK more points (liq_halo_auto) with the workers' regions of
 * placement owner (NULL: before there is one, each quantum alone), within
 * LIQ_MAX_HALO and the epoch (the job, without balancing); deeper where
 * the network's lambda (s per message) against the workers' summed speed
 * (updates/s) makes fewer exchanges faster (both > 0, else not); and no
 * deeper than the epoch's blocks (as few as it allows, lengths within one
 * of each other: liq_block_at) need. */
int vmrun_halo(const struct vmrun_opts *o, const struct liq_geom *g, const int *owner,
               double lambda, double speed);
/* The next message from a worker: its buffer id, with tag and source; -1
 * when a worker failed, died or lost its host (vm->why says which). */
int vmrun_vm_next(struct vmrun_vm *vm, int *tag, int *src);
/* The worker index of a tid, or -1. */
int vmrun_vm_worker(const struct vmrun_vm *vm, int tid);
/* Start a new worker in slot w (its tid is 0) on the slot's host. */
int vmrun_vm_respawn(struct vmrun_vm *vm, int w);
/* The CPUs each host's daemon says the VM may use now (lvm_hostload's
 * capacity; -1 unknown), into cap[nhosts]; with kernel non-NULL, which
 * machine each host is (0 unknown).  0, or -1 with vm->why set. */
int vmrun_vm_capacity(struct vmrun_vm *vm, double *cap, unsigned long long *kernel);
/* Tell the workers to quit (kill them after a failure) and leave the VM. */
void vmrun_vm_stop(struct vmrun_vm *vm, int failed);
void vmrun_vm_free(struct vmrun_vm *vm);
double vmrun_now(void);
double vmrun_unix_now(void);   /* wall clock (CLOCK_REALTIME) seconds */

/* ---- subcommands ---- */
int vmrun_stencil_main(int argc, char **argv);
int vmrun_bench_main(int argc, char **argv);

#endif
