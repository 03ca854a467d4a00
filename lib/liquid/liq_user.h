/*
 * liq_user.h - a program's own stencil (liquid.h) inside the runtime: the
 * description liquid_new() and its setters build (liq_user.c), and what
 * the worker and the master do with it (liq_usweep.c: boxes, boundaries,
 * sweeps, reductions, the one-process reference).
 *
 * Who may include it: lib/liquid/ only.  The description is built alike
 * in every process of a job (liquid.h says why); the worker finds it in
 * liq_user_spec, set by liquid_run before the worker starts.
 */
#ifndef LIQUIDVM_LIQ_USER_H
#define LIQUIDVM_LIQ_USER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kern.h"
#include "liquid.h"

struct liq_user_field {
    char name[LIQUID_NAME_MAX];
    liquid_value_fn init;
    void *arg;
    int konst;                  /* liquid_field_const: one level, never moved */
};

struct liq_user_red {
    char name[LIQUID_NAME_MAX];
    enum liquid_op op;
    int field;                  /* fn == NULL: the field reduced */
    liquid_reduce_fn fn;
    void *arg;
    int every;
};

#define LIQ_USER_OPTS 32

enum liq_user_opt_kind { LIQ_OPT_INT, LIQ_OPT_DOUBLE, LIQ_OPT_FLAG };

struct liq_user_opt {
    char name[LIQUID_NAME_MAX];
    enum liq_user_opt_kind kind;
    void *var;
    const char *help;
};

struct liquid {
    char name[64];
    char err[256];
    int n[3];                   /* default grid */
    double len[3];
    int nf;
    struct liq_user_field f[LIQUID_MAX_FIELDS];
    int reach[3];
    enum liquid_shape shape;
    enum liquid_levels levels;
    double dt;
    enum liquid_bc bc[6];
    double bcval[6];
    liquid_value_fn bcfn[6];
    void *bcarg[6];
    liquid_update_fn update;
    void *uarg;
    liquid_setup_fn setup;
    void *sarg;
    int nred;
    struct liq_user_red red[LIQUID_MAX_REDUCTIONS];
    int until;                  /* reduction index, -1 none */
    double tol;
    int nopt;
    struct liq_user_opt opt[LIQ_USER_OPTS];
    int keep;
    double *input[LIQUID_MAX_FIELDS];          /* the master's --input: a field's initial
                                                 * interior (i fastest), else NULL */
    char *wargv[LIQ_USER_OPTS + 2];             /* the workers' argv (liq_mu_prepare) */
    char wbuf[LIQ_USER_OPTS][LIQUID_NAME_MAX + 32];
    /* what the master learnt */
    int master;
    int iters_done;
    double redval[LIQUID_MAX_REDUCTIONS];
    int redset[LIQUID_MAX_REDUCTIONS];
    double *result[LIQUID_MAX_FIELDS];
};

/* The program's options (liq_master_user.c): is key one, set it from
 * text (0, 1 when key is none of them, -1 with err set), list them. */
int liq_user_opt_known(struct liquid *lq, const char *key);
/* 1 when KEY is one of the program's flags (no value on a command line). */
int liq_user_opt_flag(struct liquid *lq, const char *key);
int liq_user_opt_set(struct liquid *lq, const char *key, const char *value, char *err,
                     size_t len);
void liq_user_opts_usage(FILE *fp, const struct liquid *lq);

/* The description the worker serves (liquid_run sets it). */
/* The runtime's options a program's job takes (NULL-ended, '-' style). */
extern const char *const liq_user_runtime_opts[];
extern struct liquid *liq_user_spec;

/* The setup callback for grid n and iters (none: 0).  0, or -1 with
 * lq->err set. */
int liq_user_setup(struct liquid *lq, const int n[3], int iters);
/* Is the description complete and coherent?  0, or -1 with lq->err set. */
int liq_user_check(struct liquid *lq);
/* A number every process of a job computes alike from the description
 * (the master sends it, a worker compares it with its own). */
uint32_t liq_user_fingerprint(const struct liquid *lq);
/* The geometry's periodic axes and corners for this description (g's
 * extents made). */
struct liq_geom;
void liq_user_geom(const struct liquid *lq, struct liq_geom *g);
/* Along axis a of a grid of extents n: the update's radius (a 2D grid's
 * z: 0), whether halos wrap around; the largest radius, at least 1. */
int liq_user_radius(const struct liquid *lq, const int n[3], int a);
int liq_user_wraps(const struct liquid *lq, const int n[3], int a);
int liq_user_reach(const struct liquid *lq, const int n[3]);
/* Levels a field keeps (1 red-black, 2, 3) and levels a halo exchange or a
 * move carries (the current one, and for three levels the one before). */
int liq_user_nlevels(const struct liquid *lq);
int liq_user_nstate(const struct liquid *lq);
/* The boxes a quantum's state is (exchanged, moved, checkpointed):
 * nstate levels of each field that is not constant. */
int liq_user_nboxes(const struct liquid *lq);
/* Phases per iteration: 2 for red-black, else 1. */
int liq_user_phases(const struct liquid *lq);
/* Iterations between reduction points (the gcd of the reductions' every), 0 none. */
int liq_user_stride(const struct liquid *lq);
/* Is reduction r due at iteration it of a job of iters? */
int liq_user_due(const struct liquid *lq, int r, int it, int iters);
/* The grid spacing and the position of point (0,0,0) for extents n. */
void liq_user_spacing(const struct liquid *lq, const int n[3], double h[3], double origin[3]);

/* ---- a field's levels in boxes (liq_usweep.c) ---- */

/* A region's boxes: lv[l][f] is field f at level l, level 0 the current,
 * 1 the one before it (three levels), the last the one written next. */
struct liq_ubox {
    int nlev, nf;
    struct kern_box *box;       /* nlev * nf boxes */
    struct kern_box *lv[3][LIQUID_MAX_FIELDS];
};

/* Allocate the boxes like proto (its shape and global offsets), every level
 * filled with the initial values and boundaries.  unfilled: every box is
 * left untouched (no page resident), for a move to write the carried
 * fields' own points and then liq_ubox_shell the rest.  0 or -ENOMEM. */
int liq_ubox_make(struct liq_ubox *u, const struct liquid *lq, const int n[3],
                  const struct kern_box *proto, int unfilled);
/* The rest of an unfilled box set: every point of its levels but its own
 * (those inside its ext[] halo layers, -x +x -y +y -z +z), and every point
 * of a constant field: their start values and boundaries.  The own points
 * of the levels a move does not carry stay zero, not their start values:
 * every phase writes all own points of the level it writes before any
 * phase reads them. */
void liq_ubox_shell(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6]);
void liq_ubox_free(struct liq_ubox *u);
/* The boxes that carry the state (exchanged and moved): nstate * nf of them. */
int liq_ubox_state(const struct liq_ubox *u, const struct liquid *lq, struct kern_box **out);
/*
 * A block of `iters` iterations from iteration it0 + 1 on box set u, its
 * boxes' ext[] halo layers shrinking one per phase (the trapezoid, from
 * the box's first point inward), each phase's update run repeat times.
 * 0, or the update's error (-EIO) or -EINVAL.
 */
int liq_ubox_block(struct liq_ubox *u, const struct liquid *lq, const int n[3],
                   const int ext[6], int it0, int iters, int repeat, int wrap);
/* Fresh ghost layers of the levels a phase reads: Neumann faces, and with
 * wrap (a box of the whole grid) the periodic ones from the far side. */
void liq_ubox_bounds(struct liq_ubox *u, const struct liquid *lq, const int n[3], int wrap);
void liq_box_wrap(const struct liquid *lq, const int n[3], struct kern_box *b);
/*
 * A block in two passes, so that ghosts travel while the box computes:
 * pass 0, before they come, every phase on what the faces whose halos
 * wait for them (stale[], liq_exchange_stale's) cannot reach yet, R more
 * layers off them a phase; pass 1, after, the rest of each phase.  Phase p
 * of pass 1 reads phase p - 1 only within (p + 1)R of a stale face, where
 * pass 0's later phases never wrote, so every point gets the operands of
 * the phase-by-phase sweep.  Boxes with a Neumann face do not split
 * (liq_ubox_can_split).  0, the update's error (> 0) or -EINVAL.
 */
int liq_ubox_can_split(const struct liq_ubox *u, const struct liquid *lq, const int n[3],
                       int iters);
int liq_ubox_split(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6],
                   const int stale[6], int it0, int iters, int repeat, int pass);
/* Points a block of iters computes on a box with these halo layers. */
double liq_ubox_points(const struct liquid *lq, const int n[3], const struct kern_box *b,
                       const int ext[6], int iters);
/* Each due reduction's partial over the points of view boxes v[f] (the
 * current level of every field, halos current), into part[nred] (0 for
 * those not due).  0, or -EDOM when a partial is not a number. */
int liq_ubox_reduce(const struct liquid *lq, const int n[3], struct kern_box *const *v,
                    int it, const int *due, double *part);
/* Combine partials (in quantum order) into the value of reduction r. */
double liq_user_combine(const struct liquid *lq, int r, const double *part, int nparts,
                        int stride);
/* The one-process reference (liq_uref.c): iters iterations on the whole
 * grid of g, the current level of every field into out[f] (allocated
 * here, with one ghost layer), each reduction's last value into red[r]
 * (redset[r] 1 when it ran), the partials per quantum as the runtime
 * computes them; *done gets the iterations done (fewer with an `until`).
 * 0, a negative errno, or the update's error (> 0). */
int liq_user_reference(const struct liquid *lq, const struct liq_geom *g, int iters,
                       struct kern_box *out, int *done, double *red, int *redset);
/* Stop here?  The until reduction's value at a point where it ran. */
int liq_user_stop(const struct liquid *lq, const double *red, const int *ran);

#endif
