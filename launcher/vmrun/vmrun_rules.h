/*
 * vmrun_rules.h - Paradise's rules for stencil jobs (issue 27; seed 003,
 * §7-9, mapped onto the liquid runtime's settings): from a run's
 * characteristics, which rules fire, why, and the hints they give the
 * next run (the keys of a job file).
 *
 * Who may include it: launcher/vmrun/ and tests.  Pure and reentrant: no
 * I/O, no allocation.  Every threshold is a named field of struct
 * vmrun_thresholds with its default in vmrun_rules_defaults (seed 003
 * gives none; requirement 24).
 */
#ifndef LIQUIDVM_VMRUN_RULES_H
#define LIQUIDVM_VMRUN_RULES_H

enum vmrun_shape { VR_SHAPE_NONE, VR_SHAPE_NEIGHBOUR, VR_SHAPE_TREE, VR_SHAPE_ALL_TO_ALL };
enum vmrun_load { VR_LOAD_STEADY, VR_LOAD_DRIFTING, VR_LOAD_BURSTY };

struct vmrun_thresholds {
    double uniform_cv;          /* grain CV at or below this: uniform (0.10) */
    double irregular_cv;        /* grain CV above this: irregular (0.25) */
    double heavy_ratio;         /* heavy over light grain above this: irregular (1.5) */
    double be_good;             /* per-epoch balance efficiency at or above: balanced (0.90) */
    double comm_ratio;          /* waiting over computing above this: significant (0.15) */
    double late_messages;       /* a wait for ghosts, at the median, at or above this many
                                 * message latencies: the messages are late, not the
                                 * neighbours (0.5) */
    double small_grain;         /* a block's compute under this many message latencies is
                                 * small grain (10) */
    double drift;               /* relative change of a worker's speed over the run at or
                                 * above this: drifting (0.25) */
    double burst;               /* CV of a worker's speed across epochs, trend removed, at
                                 * or above this: bursty (0.25) */
    double window_s;            /* the load series' windows: epochs enough for this many
                                 * seconds, 3 windows at least (0.25) */
    double all_to_all;          /* share of the pairs that talk at or above this, with 4
                                 * workers or more: all-to-all (0.9) */
};

/* What the analyser measured (vmrun_analyze.c) and the run's settings. */
struct vmrun_traits {
    int workers, epochs;        /* epochs: the load series' windows */
    int balance, halo, halo_auto, epoch, quanta, heavy;
    int halo_slack;             /* --halo auto's depth before its latency term; 0 unknown */
    double min_gain;
    double grain_mean_s;        /* compute s per quantum-iteration, mean over blocks */
    double grain_cv;            /* ... its coefficient of variation */
    double heavy_ratio;         /* mean grain of heavy regions over light ones (1: none) */
    double block_s;             /* mean compute s of a region's block */
    double latency_s;           /* a message's send-to-receipt time (10th percentile) */
    double ghost_wait_s;        /* a wait for ghosts, median */
    double comm_ratio;          /* wait s over compute s, all workers */
    double plan_wait_share;     /* wait for plans over compute */
    double be_min, be_mean;     /* per-epoch balance efficiency */
    double drift, burst;        /* vmrun_load_class's figures */
    enum vmrun_load load;
    enum vmrun_shape shape;
    int moved;                  /* quanta the balancer moved */
};

#define VR_MAX 12

struct vmrun_rule {
    const char *name;
    int fired;
    char why[256];              /* the evidence, with numbers */
};

struct vmrun_hint {
    const char *key;            /* a job file's key */
    char value[32];             /* as libconfig text */
    char why[256];
};

struct vmrun_advice {
    int nrules, nhints;
    struct vmrun_rule rule[VR_MAX];
    struct vmrun_hint hint[VR_MAX];
};

void vmrun_rules_defaults(struct vmrun_thresholds *th);
/* Apply the rules in their order; a later rule does not undo an earlier
 * one's hint for the same key (the first to set a key keeps it). */
void vmrun_rules_apply(const struct vmrun_traits *t, const struct vmrun_thresholds *th,
                       struct vmrun_advice *out);
/* The shape of an n x n matrix of message counts (row: sender). */
enum vmrun_shape vmrun_shape_of(int n, const double *msgs, const struct vmrun_thresholds *th);
/* A worker's speed over the epochs, v[0..n): steady, drifting or bursty,
 * with the figures in *drift (the fitted line's change over the run over
 * the mean) and *burst (the residuals' CV). */
enum vmrun_load vmrun_load_class(const double *v, int n, const struct vmrun_thresholds *th,
                                 double *drift, double *burst);
const char *vmrun_shape_name(enum vmrun_shape s);
const char *vmrun_load_name(enum vmrun_load l);

#endif
