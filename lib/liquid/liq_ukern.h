/*
 * liq_ukern.h - vmrun stencil's Jacobi and red-black kernels as liquid.h
 * descriptions (liq_ukern.c).  Who may include it: lib/liquid/, the tools
 * and tests.
 */
#ifndef LIQUIDVM_LIQ_UKERN_H
#define LIQUIDVM_LIQ_UKERN_H

#include <stdint.h>

#include "liquid.h"

/* A kernel's state, alive as long as the description (its callbacks' arg). */
struct liq_ukern {
    uint64_t seed;
    int rhs;                    /* the right-hand side's field index */
    int n[3];                   /* the grid of the last setup */
    double c, c2;
};

/* Describe Jacobi (redblack 0) or red-black Gauss-Seidel on lq, the field
 * and right-hand side of seed.  0, or -1 with liquid_error's reason. */
int liq_ukern_describe(struct liquid *lq, struct liq_ukern *k, int redblack, uint64_t seed);

#endif
