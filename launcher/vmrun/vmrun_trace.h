/*
 * vmrun_trace.h - a trace read back (issue 27): a stencil job's (the file
 * is liq_master_trace.c's Chrome Trace Event JSON), or a PVM program's,
 * one file per task (lib/pvm/pvm_trace.c), merged: lanes, spans, messages
 * and marks, for `vmrun trace view` (vmrun_trace.c) and `vmrun analyze`
 * (vmrun_analyze.c, and vmrun_panalyze.c for PVM programs).
 *
 * Who may include it: launcher/vmrun/ and tests.  Pure: vmrun_tload reads
 * a file and fills a struct vmrun_trace that owns its arrays (freed by
 * vmrun_tfree).  Times are seconds from the trace's origin.  Errors: 0, or
 * -1 with "FILE: what" in err (unreadable, not JSON, or an event without
 * the fields its phase needs).
 */
#ifndef LIQUIDVM_VMRUN_TRACE_H
#define LIQUIDVM_VMRUN_TRACE_H

#include <stddef.h>

enum vmrun_tkind {
    VT_COMPUTE, VT_WAIT_GHOST, VT_WAIT_MOVE, VT_WAIT_PLAN, VT_WAIT_VERDICT, VT_SEND,
    VT_MIGRATE, VT_PLAN, VT_SYNC, VT_OTHER,
    VT_PVM_WAIT,                /* a PVM call that waits: a receive until its message
                                 * came, a barrier or another collective */
    VT_PVM_SPAWN,
    VT_RECOVERY                 /* the master: a lost worker noticed to the job sent again */
};

struct vmrun_tlane {
    int pid, tid;
    int host;                   /* index in hosts */
    int master;
    char name[64];
    /* PVM traces (otherData): the task's path ("0/1", see pvm_hints.c),
     * its program and its parent's tid. */
    char path[64];
    char program[64];
    int parent;
};

struct vmrun_thost {
    int pid;
    char name[64];
};

struct vmrun_tspan {
    int lane;
    enum vmrun_tkind kind;
    double t, dur;
    int first, quanta, iters, heavy; /* VT_COMPUTE: the region (first quantum, how many);
                                      * heavy: the phases' repeat */
    int part;                   /* 0 whole, 1 inner, 2 outer */
    int arg;                    /* VT_PLAN: quanta moved; VT_MIGRATE: the change held */
    int peer, tag;              /* VT_SEND, VT_PVM_WAIT: the other task's tid, the tag */
    double bytes;
};

struct vmrun_tflow {
    int from, to;               /* lanes */
    double t0, t1;
    double bytes;
    int tag;
};

struct vmrun_tmark {
    int lane;
    double t;
    int epoch;                  /* "epoch" marks; -1 others */
    char name[16];              /* epoch, evacuate, rejoin, verdict, lost */
};

/* The job's settings as the trace's otherData gives them. */
struct vmrun_tjob {
    int grid[3], iters, quanta, tasks_per_host, hosts, workers, nquanta;
    int halo, halo_auto, balance, epoch, heavy, reclaim, decomp_asked;
    int halo_slack;             /* auto's depth before its latency term; 0 unknown */
    double min_gain, reclaim_below;
    char kernel[32], decomp[32], program[64];
};

struct vmrun_trace {
    int nhosts, nlanes, nspans, nflows, nmarks;
    struct vmrun_thost *hosts;
    struct vmrun_tlane *lanes;
    struct vmrun_tspan *spans;
    struct vmrun_tflow *flows;
    struct vmrun_tmark *marks;
    double t_end;               /* the last event's end */
    double residual_us;         /* the clocks' worst residual */
    long dropped;               /* events the workers' arrays had no room for */
    int unpaired;               /* flow starts or finishes without their other end */
    struct vmrun_tjob job;
    int pvm;                    /* PVM task traces read (times then start at 0) */
    char hints[512];            /* PVM: the settings the run took from hints, "" none */
    double origin_us;           /* PVM: the wall-clock time (µs) of time 0 */
};

int vmrun_tload(const char *path, struct vmrun_trace *t, char *err, size_t errlen);
/*
 * Every PVM task trace in dir (*.json whose otherData.format is
 * "liquidvm-pvm-trace 1"), merged into one trace; other files are passed
 * over.  0, or -1 with "DIR: what" or "FILE: what" in err (also when dir
 * holds no PVM trace).
 */
int vmrun_tload_pvm_dir(const char *dir, struct vmrun_trace *t, char *err, size_t errlen);
/* 1 if path is a PVM task trace (its text names the format), else 0. */
int vmrun_tis_pvm(const char *path);
void vmrun_tfree(struct vmrun_trace *t);

/* vmrun_trace.c: `vmrun trace view FILE --svg OUT`. */
int vmrun_trace_main(int argc, char **argv);
/* vmrun_analyze.c: `vmrun analyze FILE|DIR [--hints OUT] [--json]`. */
int vmrun_analyze_main(int argc, char **argv);
/* vmrun_panalyze.c: the same for PVM task traces (a file, or a directory
 * merged); th is vmrun_prules.h's.  The exit status. */
struct vmrun_pthresholds;
int vmrun_panalyze(const char *in, int dir, const char *hints, int json,
                   const struct vmrun_pthresholds *th);

#endif
