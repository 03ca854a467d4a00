/*
 * kern_int.h - shared by the files of kernels/ only; never installed.
 *
 * The row kernels are the one place the stencil arithmetic is written for
 * the fast paths: every blocked, fused or temporal kernel walks its rows
 * and hands each one to kern__jrow() or kern__rbrow().  A row is passed as
 * pointers to element i = 0 of the row itself and of its four neighbour
 * rows (j-1, j+1, k-1, k+1) and of the rhs row, so a row may live in a box
 * or in a scratch plane with another stride.
 */
#ifndef LIQUIDVM_KERN_INT_H
#define LIQUIDVM_KERN_INT_H

#include "kern.h"

#include <stddef.h>

/*
 * The update of one point.  Every scalar path calls this and the vector
 * paths perform the same operations lane by lane: changing the grouping
 * here breaks the bit-identity of the variants (kern.h).
 */
static inline double kern__point(double im, double ip, double jm, double jp, double km,
                                 double kp, double r, double c, double c2)
{
    return c * (((im + ip) + (jm + jp)) + ((kp + km) - c2 * r));
}

/* Neighbour rows of a row, each pointing at its element i = 0. */
struct kern__nbr {
    const double *jm, *jp, *km, *kp;
    const double *r;
};

/* Fill nb for row (j,k) of box u, with the rhs row of box rhs. */
static inline void kern__nbr_box(struct kern__nbr *nb, const struct kern_box *u,
                                 const struct kern_box *rhs, int j, int k)
{
    nb->jm = kern_at(u, 0, j - 1, k);
    nb->jp = kern_at(u, 0, j + 1, k);
    nb->km = kern_at(u, 0, j, k - 1);
    nb->kp = kern_at(u, 0, j, k + 1);
    nb->r = kern_at(rhs, 0, j, k);
}

/*
 * Jacobi: o[i] for i0 <= i <= i1 from row c and its neighbours.  flags:
 * KERN_PLAN_SIMD (AVX2 when the CPU has it), KERN_PLAN_STREAM (non-temporal
 * stores; call kern__fence() before the data is read by another thread).
 */
void kern__jrow(double *o, const double *c, const struct kern__nbr *nb, int i0, int i1,
                double cc, double c2, unsigned flags);

/*
 * Red-black, in place: a[i] for i in [i0, i1] with i - first even (first is
 * i0 or i0+1, the first point of the colour).  Points of the other colour
 * are rewritten with their own bits by the vector path, never changed.
 */
void kern__rbrow(double *a, const struct kern__nbr *nb, int i0, int i1, int first, double cc,
                 double c2, unsigned flags);

/* Order non-temporal stores before whatever follows. */
void kern__fence(unsigned flags);

/* First i >= i0 of the given colour in row (j,k) of box b. */
static inline int kern__first(const struct kern_box *b, int i0, int j, int k, int colour)
{
    unsigned long s = (unsigned long)b->oi + (unsigned long)b->oj + (unsigned long)b->ok
                      + (unsigned long)i0 + (unsigned long)j + (unsigned long)k;
    return i0 + (int)((s ^ (unsigned long)colour) & 1u);
}

/* 0 if the box is well formed (data, sizes, strides), else -EINVAL. */
int kern__box_ok(const struct kern_box *b);

/* 0 if a and b are well formed and have the same interior shape. */
int kern__same_shape(const struct kern_box *a, const struct kern_box *b);

#endif
