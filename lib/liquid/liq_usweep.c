/*
 * liq_usweep.c - a program's own stencil on boxes: each field's levels,
 * the boundaries, a block of phases on a box whose halo shrinks one layer
 * per phase (the trapezoid of liq_sweep.c, for any update of reach one),
 * the reductions' partials, and the one-process reference that --verify
 * compares the job with.
 *
 * A box here is a kern_box: point (0,0,0) the ghost corner, interior
 * index 1..len per axis, and box index x along axis a at global 0-based
 * coordinate o[a] + x - 1.  The runtime and the reference run the same
 * code on their boxes (the boundary fills, the phase, the partials), so
 * they give the same bits.
 */
#include "liq_user.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
liq_box_len(const struct kern_box *b, int len[3], long o[3])
{
    len[0] = b->ni;
    len[1] = b->nj;
    len[2] = b->nk;
    o[0] = b->oi;
    o[1] = b->oj;
    o[2] = b->ok;
}

static int
liq_periodic(const struct liquid *lq, int a)
{
    return lq->bc[2 * a] == LIQUID_PERIODIC;
}

/* The value a point of b takes before the first phase: the initial value
 * of its (for periodic axes, wrapped) position, or on a ghost beyond the
 * grid the boundary's. */
static double
liq_start_value(const struct liquid *lq, int f, const int n[3], const long g[3],
                const double h[3], const double org[3])
{
    double x[3];
    long w[3];
    int side = -1;

    for (int a = 0; a < 3; a++) {
        w[a] = g[a];
        if (g[a] >= 0 && g[a] < n[a])
            continue;
        if (liq_periodic(lq, a)) {
            w[a] = ((g[a] % n[a]) + n[a]) % n[a];
        } else if (side < 0 || lq->bc[side] != LIQUID_DIRICHLET) {
            side = 2 * a + (g[a] >= n[a]);
        }
    }
    for (int a = 0; a < 3; a++)
        x[a] = org[a] + (double)(side >= 0 ? g[a] : w[a]) * h[a];
    if (side >= 0) {
        if (lq->bc[side] != LIQUID_DIRICHLET)
            return 0; /* Neumann: the refresh fills it */
        return lq->bcfn[side] != NULL ? lq->bcfn[side](f, x, lq->bcarg[side]) : lq->bcval[side];
    }
    if (lq->input[f] != NULL)
        return lq->input[f][w[0] + (long)n[0] * (w[1] + (long)n[1] * w[2])];
    return lq->f[f].init != NULL ? lq->f[f].init(f, x, lq->f[f].arg) : 0;
}

static void
liq_box_fill(const struct liquid *lq, int f, const int n[3], struct kern_box *b)
{
    int len[3];
    long o[3], g[3];
    double h[3], org[3];

    liq_box_len(b, len, o);
    liq_user_spacing(lq, n, h, org);
    for (int k = 0; k <= len[2] + 1; k++)
        for (int j = 0; j <= len[1] + 1; j++)
            for (int i = 0; i <= len[0] + 1; i++) {
                g[0] = o[0] + i - 1;
                g[1] = o[1] + j - 1;
                g[2] = o[2] + k - 1;
                *kern_at(b, i, j, k) = liq_start_value(lq, f, n, g, h, org);
            }
}

/* Neumann faces: the ghost layer takes the layer inside it, axis by axis
 * (x, then y, then z, each over the whole box, so edges and corners
 * compose alike everywhere). */
static void
liq_box_neumann(const struct liquid *lq, const int n[3], struct kern_box *b)
{
    int len[3];
    long o[3];

    liq_box_len(b, len, o);
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            int at, from;

            if (lq->bc[2 * a + side] != LIQUID_NEUMANN)
                continue;
            if (side == 0 ? o[a] != 0 : o[a] + len[a] != n[a])
                continue; /* this box's ghost layer there is not the grid's face */
            at = side == 0 ? 0 : len[a] + 1;
            from = side == 0 ? 1 : len[a];
            for (int k = 0; k <= len[2] + 1; k++)
                for (int j = 0; j <= len[1] + 1; j++)
                    for (int i = 0; i <= len[0] + 1; i++) {
                        int p[3] = { i, j, k }, q[3] = { i, j, k };

                        if (p[a] != at)
                            continue;
                        q[a] = from;
                        *kern_at(b, p[0], p[1], p[2]) = *kern_at(b, q[0], q[1], q[2]);
                    }
        }
}

void
liq_box_wrap(const struct liquid *lq, const int n[3], struct kern_box *b)
{
    int len[3];
    long o[3];

    liq_box_len(b, len, o);
    for (int a = 0; a < 3; a++) {
        if (!liq_periodic(lq, a) || o[a] != 0 || len[a] != n[a])
            continue;
        for (int k = 0; k <= len[2] + 1; k++)
            for (int j = 0; j <= len[1] + 1; j++)
                for (int i = 0; i <= len[0] + 1; i++) {
                    int p[3] = { i, j, k }, q[3] = { i, j, k };

                    if (p[a] == 0)
                        q[a] = len[a];
                    else if (p[a] == len[a] + 1)
                        q[a] = 1;
                    else
                        continue;
                    *kern_at(b, p[0], p[1], p[2]) = *kern_at(b, q[0], q[1], q[2]);
                }
    }
}

int
liq_ubox_make(struct liq_ubox *u, const struct liquid *lq, const int n[3],
              const struct kern_box *proto)
{
    int nb;

    memset(u, 0, sizeof(*u));
    u->nlev = liq_user_nlevels(lq);
    u->nf = lq->nf;
    nb = u->nlev * u->nf;
    if ((u->box = calloc((size_t)nb, sizeof(*u->box))) == NULL)
        return -ENOMEM;
    for (int l = 0; l < u->nlev; l++)
        for (int f = 0; f < u->nf; f++) {
            struct kern_box *b = &u->box[l * u->nf + f];
            int rc = kern_box_alloc(b, proto->ni, proto->nj, proto->nk, proto->bi, proto->bj);

            if (rc != 0)
                return rc;
            b->oi = proto->oi;
            b->oj = proto->oj;
            b->ok = proto->ok;
            if (l == 0)
                liq_box_fill(lq, f, n, b);
            else
                kern_box_copy(b, &u->box[f]);
            liq_box_neumann(lq, n, b);
            u->lv[l][f] = b;
        }
    return 0;
}

void
liq_ubox_free(struct liq_ubox *u)
{
    if (u->box != NULL)
        for (int i = 0; i < u->nlev * u->nf; i++)
            kern_box_free(&u->box[i]);
    free(u->box);
    memset(u, 0, sizeof(*u));
}

int
liq_ubox_state(const struct liq_ubox *u, const struct liquid *lq, struct kern_box **out)
{
    int ns = liq_user_nstate(lq), k = 0;

    for (int l = 0; l < ns; l++)
        for (int f = 0; f < u->nf; f++)
            out[k++] = u->lv[l][f];
    return k;
}

/* The levels move on after a phase: the one written becomes the current. */
static void
liq_ubox_rotate(struct liq_ubox *u)
{
    for (int f = 0; f < u->nf; f++) {
        if (u->nlev == 2) {
            struct kern_box *x = u->lv[0][f];

            u->lv[0][f] = u->lv[1][f];
            u->lv[1][f] = x;
        } else if (u->nlev == 3) {
            struct kern_box *x = u->lv[1][f];

            u->lv[1][f] = u->lv[0][f];
            u->lv[0][f] = u->lv[2][f];
            u->lv[2][f] = x;
        }
    }
}

/* The liquid_box of box indices [lo, hi] (inclusive) of u's levels. */
static void
liq_ubox_view(const struct liq_ubox *u, const struct liquid *lq, const int n[3], const int lo[3],
              const int hi[3], struct liquid_box *b)
{
    const struct kern_box *c = u->lv[0][0];
    const long o[3] = { c->oi, c->oj, c->ok };

    memset(b, 0, sizeof(*b));
    for (int a = 0; a < 3; a++) {
        b->lo[a] = (int)(o[a] + lo[a] - 1);
        b->n[a] = hi[a] - lo[a] + 1;
    }
    b->sj = c->bi;
    b->sk = (ptrdiff_t)c->bi * c->bj;
    b->nfields = u->nf;
    for (int f = 0; f < u->nf; f++) {
        b->in[f] = kern_at(u->lv[0][f], lo[0], lo[1], lo[2]);
        b->out[f] = kern_at(u->lv[u->nlev - 1][f], lo[0], lo[1], lo[2]);
        if (u->nlev == 3)
            b->old[f] = kern_at(u->lv[1][f], lo[0], lo[1], lo[2]);
    }
    b->dt = lq->dt;
    liq_user_spacing(lq, n, b->h, b->origin);
}

void
liq_ubox_bounds(struct liq_ubox *u, const struct liquid *lq, const int n[3], int wrap)
{
    int read = u->nlev == 3 ? 2 : 1;

    for (int l = 0; l < read; l++)
        for (int f = 0; f < u->nf; f++) {
            if (wrap)
                liq_box_wrap(lq, n, u->lv[l][f]);
            liq_box_neumann(lq, n, u->lv[l][f]);
        }
}

/* The box indices phase p (1-based) of P computes: the interior, and on
 * each side the halo layers the later phases still read. */
static void
liq_ubox_span(const struct kern_box *c, const int ext[6], int p, int P, int lo[3], int hi[3])
{
    const int len[3] = { c->ni, c->nj, c->nk };

    for (int a = 0; a < 3; a++) {
        int l0 = ext[2 * a] < P - p ? ext[2 * a] : P - p;
        int l1 = ext[2 * a + 1] < P - p ? ext[2 * a + 1] : P - p;

        lo[a] = 1 + ext[2 * a] - l0;
        hi[a] = len[a] - (ext[2 * a + 1] - l1);
    }
}

int
liq_ubox_block(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6],
               int it0, int iters, int repeat, int wrap)
{
    int per = liq_user_phases(lq), P = per * iters;

    for (int p = 1; p <= P; p++) {
        struct liquid_box b;
        int lo[3], hi[3];

        liq_ubox_bounds(u, lq, n, wrap);
        liq_ubox_span(u->lv[0][0], ext, p, P, lo, hi);
        liq_ubox_view(u, lq, n, lo, hi, &b);
        b.iter = it0 + (p - 1) / per + 1;
        b.colour = (p - 1) % per;
        b.t = (b.iter - 1) * lq->dt;
        for (int r = 0; r < repeat; r++) {
            int rc = lq->update(&b, lq->uarg);

            if (rc != 0)
                return rc < 0 ? -rc : rc;
        }
        liq_ubox_rotate(u);
    }
    liq_ubox_bounds(u, lq, n, wrap);
    return 0;
}

double
liq_ubox_points(const struct liquid *lq, const struct kern_box *b, const int ext[6], int iters)
{
    int per = liq_user_phases(lq), P = per * iters;
    double all = 0;

    for (int p = 1; p <= P; p++) {
        int lo[3], hi[3];

        liq_ubox_span(b, ext, p, P, lo, hi);
        all += (double)(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1) / per;
    }
    return all;
}

/* op over the values of one field in the view's interior. */
static double
liq_field_reduce(enum liquid_op op, const struct liquid_box *b, int f)
{
    double acc = op == LIQUID_MAX ? -INFINITY : op == LIQUID_MIN ? INFINITY : 0;

    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            const double *row = b->in[f] + j * b->sj + k * b->sk;

            for (int i = 0; i < b->n[0]; i++) {
                double v = row[i];

                if (op == LIQUID_SUM)
                    acc += v;
                else if (op == LIQUID_NORM2)
                    acc += v * v;
                else if (op == LIQUID_MAX)
                    acc = v > acc ? v : acc;
                else
                    acc = v < acc ? v : acc;
            }
        }
    return acc;
}

int
liq_ubox_reduce(const struct liquid *lq, const int n[3], struct kern_box *const *v, int it,
                const int *due, double *part)
{
    struct liquid_box b;
    const struct kern_box *c = v[0];

    memset(&b, 0, sizeof(b));
    b.lo[0] = (int)c->oi;
    b.lo[1] = (int)c->oj;
    b.lo[2] = (int)c->ok;
    b.n[0] = c->ni;
    b.n[1] = c->nj;
    b.n[2] = c->nk;
    b.sj = c->bi;
    b.sk = (ptrdiff_t)c->bi * c->bj;
    b.nfields = lq->nf;
    for (int f = 0; f < lq->nf; f++)
        b.in[f] = kern_at(v[f], 1, 1, 1);
    b.iter = it;
    b.dt = lq->dt;
    b.t = it * lq->dt;
    liq_user_spacing(lq, n, b.h, b.origin);
    for (int r = 0; r < lq->nred; r++) {
        const struct liq_user_red *x = &lq->red[r];

        part[r] = 0;
        if (!due[r])
            continue;
        part[r] = x->fn != NULL ? x->fn(&b, x->arg) : liq_field_reduce(x->op, &b, x->field);
        if (isnan(part[r]))
            return -EDOM;
    }
    return 0;
}

double
liq_user_combine(const struct liquid *lq, int r, const double *part, int nparts, int stride)
{
    enum liquid_op op = lq->red[r].op;
    double acc = op == LIQUID_MAX ? -INFINITY : op == LIQUID_MIN ? INFINITY : 0;

    for (int i = 0; i < nparts; i++) {
        double v = part[(size_t)i * stride + r];

        if (op == LIQUID_SUM || op == LIQUID_NORM2)
            acc += v;
        else if (op == LIQUID_MAX)
            acc = v > acc ? v : acc;
        else
            acc = v < acc ? v : acc;
    }
    return op == LIQUID_NORM2 ? sqrt(acc) : acc;
}
