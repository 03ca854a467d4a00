/*
 * vmrun_prules.h - the rules that turn a PVM program's characteristics
 * into hints for its next run (issue 27, seed 003; vmrun_prules.c), and
 * the hints file they make (read back by lib/pvm/pvm_hints.c).
 *
 * Who may include it: launcher/vmrun/ and tests.  Pure: no I/O but the
 * FILE the caller hands vmrun_prules_write.  Tasks are named by their
 * path ("0", "0/1": the spawn calls that made them, the same in every
 * run), since tids change from run to run.
 */
#ifndef LIQUIDVM_VMRUN_PRULES_H
#define LIQUIDVM_VMRUN_PRULES_H

#include <stdio.h>

struct vmrun_ptask {
    int tid, parent;
    char path[64], program[64], host[64];
    double life, compute, wait, send;   /* seconds */
    int ncompute;                       /* compute spans (between PVM calls) */
    double grain_mean, grain_cv;        /* seconds; cv: stddev / mean */
};

/* Messages from task a to task b (indexes into task). */
struct vmrun_ppair {
    int a, b;
    double msgs, bytes;
};

struct vmrun_pprog {
    int ntask;
    struct vmrun_ptask *task;
    int npair;
    struct vmrun_ppair *pair;
    double msgs, bytes;
    double msg_p90;             /* bytes: 90 % of the messages are no larger */
    int fragsize;               /* the PvmFragSize the run had (4080: PVM's default) */
};

struct vmrun_pthresholds {
    double pair_msgs;           /* messages between two tasks (both ways) that make a
                                 * direct link, or one host, worth it */
    double wait_share;          /* placement: the pair waits at least this share of
                                 * its life (communication bound) */
};

#define VMRUN_PHINT_MAX 64
struct vmrun_phint {
    char rule[32];
    char path[64];              /* "" for the program as a whole */
    char key[16];               /* route, host, fragsize */
    char value[64];
    char why[320];
};

struct vmrun_padvice {
    int nhints;
    struct vmrun_phint hint[VMRUN_PHINT_MAX];
    int nrules;
    struct { char name[32]; int fired; char why[320]; } rule[3];
};

void vmrun_prules_defaults(struct vmrun_pthresholds *th);
/* Apply every rule; out lists the rules (fired or not, and why) and the hints. */
void vmrun_prules_apply(const struct vmrun_pprog *p, const struct vmrun_pthresholds *th,
                        struct vmrun_padvice *out);
/* The hints file (libconfig, pvm = { ... }), a comment naming each
 * hint's evidence.  0, or -1 when fp reported an error. */
int vmrun_prules_write(FILE *fp, const char *from, const struct vmrun_padvice *adv);

#endif
