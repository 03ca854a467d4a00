/*
 * vmrun_job.h - what `vmrun stencil` knows of a running job, shared by its
 * files: the run and the reports (vmrun_stencil.c), the JOB message
 * (vmrun_job.c), liquid balancing and reclaim (vmrun_liquid.c) and the
 * plot (vmrun_plot.c).
 *
 * Who may include it: launcher/vmrun/vmrun_*.c only.
 */
#ifndef LIQUIDVM_VMRUN_JOB_H
#define LIQUIDVM_VMRUN_JOB_H

#include <stdint.h>

#include "kern.h"
#include "vmrun.h"

/* A host's workers left (evacuate) or came back (rejoin). */
struct job_event {
    int epoch;                  /* at the end of this epoch */
    double t_s;                 /* seconds since the iterations started */
    int host;
    int rejoin;                 /* 0 evacuate, 1 rejoin */
};

/* What a job measured, for the summary and the report. */
/* An epoch report that came before the last of the epoch before (vmrun_liquid_epoch). */
struct job_kept {
    int buf;                    /* its receive buffer, 0 for none */
    int count;                  /* its quanta count (its header is read) */
    double t;                   /* when it came (vmrun_now()) */
};

/* The figures each worker's DONE message ends with (job_stats.wcpu). */
#define JOB_WCPU 6

struct job_stats {
    struct liq_geom g;
    int32_t *owner;
    double *qweight;            /* points per quantum */
    struct decomp_advice adv;
    int advised;
    enum decomp_method method;
    int *wquanta;               /* quanta per worker */
    int *witer;                 /* iterations each worker reported */
    double *wcompute, *wcomm;   /* per worker, summed over the run */
    double *wsetup, *wrun;
    int *wpass;                 /* Jacobi sweeps per pass each worker chose (0: none) */
    double *wcpu;               /* per worker, JOB_WCPU each: CPU s in the kernels, in
                                 * the process, in the kernels while ghosts were on the
                                 * way; wall s blocked for ghosts, for the master's plans;
                                 * bytes of ghosts received from other workers */
    uint64_t checksum;
    int halo;                   /* iterations per ghost exchange */
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
    struct job_kept *kept;      /* per slot: a report of the next epoch, kept */
    int nkept;                  /* slots in kept */
    struct liq_epoch *ep;
    int nep;
    int *hquanta;               /* quanta per host after each epoch's plan: nep x nhosts */
    double *hmodel, *hwall;     /* per epoch and host, its slowest worker's kernel CPU s
                                 * per iteration at its share (the balancer's model) and
                                 * compute wall s per iteration: nep x nhosts */
    double *wnow;               /* each worker's recent compute s per iteration */
    double *wother;             /* each worker's CPU share outside its kernels, last epoch */
    double *wfull;              /* each worker's updates per CPU-second (the probe's) */
    double *wshare;             /* the CPU share the model uses per worker (-1 unknown) */
    double t_first;             /* when this epoch's first report came */
    double run_t0;              /* vmrun_now() when the job was sent */
    double run_unix;            /* the same moment, wall clock */
    /* reclaim */
    struct liq_reclaim *rec;  /* per host */
    int nlive;                  /* slots whose worker computes (not 0, not leaving) */
    int left_due;               /* evacuated workers whose LEFT has not come */
    struct job_event *ev;
    int nev;
    int moved_total;
    double bytes_total;
    int verified;               /* 1 identical, 0 differs, -1 not checked */
    size_t diffs;
    struct kern_box field;      /* the gathered field, when asked */
    size_t field_points;
};


/* vmrun_job.c: the JOB message for the workers in to[nto] (all of the
 * job's slots; 0 for none), starting at iteration start.  0, or -1 with
 * vm->why set. */
int job_send(struct vmrun_vm *vm, const struct vmrun_opts *o, const struct job_stats *st,
             int *to, int nto, int start);

/* vmrun_liquid.c */
int vmrun_liquid_init(struct vmrun_vm *vm, const struct vmrun_opts *o, struct job_stats *st);
/* The model's speed of every worker now (CPU speed times sensed share),
 * after vmrun_liquid_init: the first placement of a balanced job uses it, so
 * the first plan does not undo it.  0, or -1 when a speed is unknown. */
int vmrun_liquid_speeds(const struct vmrun_vm *vm, const struct job_stats *st, double *speed);
/* One worker's epoch report; with the last one, reclaim, decide, send the plan. */
int vmrun_liquid_epoch(struct vmrun_vm *vm, const struct vmrun_opts *o, struct job_stats *st, int w);
/* An evacuated worker's LEFT. */
int vmrun_liquid_left(struct vmrun_vm *vm, const struct vmrun_opts *o, struct job_stats *st, int w);
/* The index in st->ep of the plan taken at an epoch boundary, or -1 for none. */
int vmrun_liquid_plan_record(int boundary);
void vmrun_liquid_free(struct job_stats *st);

/* vmrun_plot.c: BE and each host's share of the quanta per epoch, as SVG. */
int vmrun_plot_svg(const char *path, const struct vmrun_vm *vm, const struct vmrun_opts *o,
                   const struct job_stats *st);

#endif
