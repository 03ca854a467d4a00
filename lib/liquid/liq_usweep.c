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

#define LIQ_WAVE_MAX 64 /* phases of a block run as one wavefront at most */

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
    /* A periodic axis wraps the position on a Dirichlet ghost too: the
     * ghost beyond a y face at x = -1 is the one at x = n - 1, wherever
     * the copy of it a deep halo computes from lives. */
    for (int a = 0; a < 3; a++)
        x[a] = org[a] + (double)w[a] * h[a];
    if (side >= 0) {
        if (lq->bc[side] != LIQUID_DIRICHLET)
            return 0; /* Neumann: the refresh fills it */
        return lq->bcfn[side] != NULL ? lq->bcfn[side](f, x, lq->bcarg[side]) : lq->bcval[side];
    }
    if (lq->input[f] != NULL)
        return lq->input[f][w[0] + (long)n[0] * (w[1] + (long)n[1] * w[2])];
    return lq->f[f].init != NULL ? lq->f[f].init(f, x, lq->f[f].arg) : 0;
}

/* Every point of b its start value; with own (box indices, inclusive:
 * i0, i1, j0, j1, k0, k1), every point but those. */
static void
liq_box_fill(const struct liquid *lq, int f, const int n[3], struct kern_box *b, const int *own)
{
    int len[3];
    long o[3], g[3];
    double h[3], org[3];

    liq_box_len(b, len, o);
    liq_user_spacing(lq, n, h, org);
    for (int k = 0; k <= len[2] + 1; k++)
        for (int j = 0; j <= len[1] + 1; j++) {
            int in = own != NULL && k >= own[4] && k <= own[5] && j >= own[2] && j <= own[3];

            for (int i = 0; i <= len[0] + 1; i++) {
                if (in && i == own[0])
                    i = own[1] + 1;
                if (i > len[0] + 1)
                    break;
                g[0] = o[0] + i - 1;
                g[1] = o[1] + j - 1;
                g[2] = o[2] + k - 1;
                *kern_at(b, i, j, k) = liq_start_value(lq, f, n, g, h, org);
            }
        }
}

/* Copy point q of b to point p (box indices). */
static inline void
liq_box_mirror(struct kern_box *b, const int p[3], const int q[3])
{
    *kern_at(b, p[0], p[1], p[2]) = *kern_at(b, q[0], q[1], q[2]);
}

/* Neumann faces of planes k0..k1 of b: the ghost d points out takes the
 * point d - 1 in, axis by axis (x, then y, over those planes; then the z
 * ghost planes whose source plane is among them, whole), so edges and
 * corners compose alike however the planes are taken. */
static void
liq_box_neumann_planes(const struct liquid *lq, const int n[3], struct kern_box *b, int k0,
                       int k1)
{
    int len[3];
    long o[3];

    liq_box_len(b, len, o);
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            /* the box index of the face's point, and the ghosts beyond it */
            int face = side == 0 ? (int)(1 - o[a]) : (int)(n[a] - o[a]);
            int ghosts = side == 0 ? face : len[a] + 1 - face;

            if (lq->bc[2 * a + side] != LIQUID_NEUMANN || face < 0 || face > len[a] + 1)
                continue; /* this box does not reach the grid's face there */
            for (int d = 1; d <= ghosts; d++) {
                int at = side == 0 ? face - d : face + d, from = side == 0 ? face + d - 1
                                                                           : face - d + 1;

                if (from < 1 || from > len[a] || (a == 2 && (from < k0 || from > k1)))
                    continue;
                for (int k = a == 2 ? 0 : k0; k <= (a == 2 ? 0 : k1); k++)
                    for (int y = 0; y <= (a == 1 ? 0 : len[1] + 1); y++)
                        for (int x = 0; x <= (a == 0 ? 0 : len[0] + 1); x++) {
                            /* (x, y) run over the face's other axes */
                            int p[3] = { x, y, k }, q[3];

                            if (a == 0)
                                p[0] = at, p[1] = y;
                            else if (a == 1)
                                p[1] = at;
                            else
                                p[2] = at;
                            memcpy(q, p, sizeof(q));
                            q[a] = from;
                            liq_box_mirror(b, p, q);
                        }
            }
        }
}

static void
liq_box_neumann(const struct liquid *lq, const int n[3], struct kern_box *b)
{
    liq_box_neumann_planes(lq, n, b, 0, b->nk + 1);
}

void
liq_box_wrap(const struct liquid *lq, const int n[3], struct kern_box *b)
{
    int len[3];
    long o[3];

    liq_box_len(b, len, o);
    for (int a = 0; a < 3; a++) {
        int first = (int)(1 - o[a]), last = (int)(n[a] - o[a]); /* global 0 and n - 1 */

        if (!liq_user_wraps(lq, n, a) || first < 1 || last > len[a])
            continue;
        for (int i = 0; i <= len[a] + 1; i++) {
            int src = i < first ? i + n[a] : i > last ? i - n[a] : i;

            if (src == i || src < 0 || src > len[a] + 1)
                continue;
            for (int k = 0; k <= (a == 2 ? 0 : len[2] + 1); k++)
                for (int y = 0; y <= (a == 1 ? 0 : len[1] + 1); y++)
                    for (int x = 0; x <= (a == 0 ? 0 : len[0] + 1); x++) {
                        int p[3] = { x, y, k }, q[3];

                        if (a == 0)
                            p[0] = i, p[1] = y;
                        else if (a == 1)
                            p[1] = i;
                        else
                            p[2] = i, p[0] = x, p[1] = y;
                        memcpy(q, p, sizeof(q));
                        q[a] = src;
                        liq_box_mirror(b, p, q);
                    }
        }
    }
}

int
liq_ubox_make(struct liq_ubox *u, const struct liquid *lq, const int n[3],
              const struct kern_box *proto, int unfilled)
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
            int rc;

            if (l > 0 && lq->f[f].konst) {
                u->lv[l][f] = u->lv[0][f]; /* one level, every level */
                continue;
            }
            rc = kern_box_alloc(b, proto->ni, proto->nj, proto->nk, proto->bi, proto->bj);

            if (rc != 0)
                return rc;
            b->oi = proto->oi;
            b->oj = proto->oj;
            b->ok = proto->ok;
            u->lv[l][f] = b;
            if (unfilled)
                continue; /* untouched until the move and liq_ubox_shell */
            if (l == 0)
                liq_box_fill(lq, f, n, b, NULL);
            else
                kern_box_copy(b, &u->box[f]);
            liq_box_neumann(lq, n, b);
        }
    return 0;
}

void
liq_ubox_shell(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6])
{
    for (int l = 0; l < u->nlev; l++)
        for (int f = 0; f < u->nf; f++) {
            struct kern_box *b = &u->box[l * u->nf + f];
            const int len[3] = { b->ni, b->nj, b->nk };
            int own[6];

            if (b->map == NULL)
                continue; /* a constant field's other levels: its first */
            for (int a = 0; a < 3; a++) {
                own[2 * a] = 1 + ext[2 * a];
                own[2 * a + 1] = len[a] - ext[2 * a + 1];
            }
            /* a constant field, which nothing carries: every point */
            liq_box_fill(lq, f, n, b, lq->f[f].konst ? NULL : own);
            liq_box_neumann(lq, n, b);
        }
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
            if (!lq->f[f].konst)
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
        b->out[f] = lq->f[f].konst ? NULL : kern_at(u->lv[u->nlev - 1][f], lo[0], lo[1], lo[2]);
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
            if (lq->f[f].konst)
                continue; /* made whole, ghosts included (liq_box_fill) */
            if (wrap)
                liq_box_wrap(lq, n, u->lv[l][f]);
            liq_box_neumann(lq, n, u->lv[l][f]);
        }
}

/* The box indices phase p (1-based) of P computes: the interior, and on
 * each side the halo layers the later phases still read (reach R each),
 * never a point beyond a non-periodic end of the grid. */
static void
liq_ubox_span(const struct liquid *lq, const int n[3], const struct kern_box *c,
              const int ext[6], int p, int P, int lo[3], int hi[3])
{
    const int len[3] = { c->ni, c->nj, c->nk };
    const long o[3] = { c->oi, c->oj, c->ok };
    int need = (P - p) * liq_user_reach(lq, n);

    for (int a = 0; a < 3; a++) {
        int l0 = ext[2 * a] < need ? ext[2 * a] : need;
        int l1 = ext[2 * a + 1] < need ? ext[2 * a + 1] : need;

        lo[a] = 1 + ext[2 * a] - l0;
        hi[a] = len[a] - (ext[2 * a + 1] - l1);
        if (!liq_user_wraps(lq, n, a)) {
            lo[a] = lo[a] > 1 - o[a] ? lo[a] : (int)(1 - o[a]);
            hi[a] = hi[a] < n[a] - o[a] ? hi[a] : (int)(n[a] - o[a]);
        }
    }
}

/* The levels by phase: S[q % nl] holds phase q's state (phase 0 the
 * current level, -1 the one before with three levels, 1 the one written
 * next); red-black, one level, in place. */
static void
liq_ubox_stages(const struct liq_ubox *u, struct kern_box *S[3][LIQUID_MAX_FIELDS])
{
    for (int f = 0; f < u->nf; f++) {
        S[0][f] = u->lv[0][f];
        if (u->nlev == 2)
            S[1][f] = u->lv[1][f];
        if (u->nlev == 3) {
            S[1][f] = u->lv[2][f];
            S[2][f] = u->lv[1][f];
        }
    }
}

/* The levels as P phases one after the other leave them. */
static void
liq_ubox_settle(struct liq_ubox *u, struct kern_box *S[3][LIQUID_MAX_FIELDS], int P)
{
    for (int f = 0; f < u->nf; f++) {
        if (u->nlev == 2) {
            u->lv[0][f] = S[P % 2][f];
            u->lv[1][f] = S[(P + 1) % 2][f];
        } else if (u->nlev == 3) {
            u->lv[0][f] = S[P % 3][f];
            u->lv[1][f] = S[(P + 2) % 3][f];
            u->lv[2][f] = S[(P + 1) % 3][f];
        }
    }
}

/* Phase p of a block from iteration it0 on box indices [l, e] (inclusive,
 * none when empty), the levels by phase S; Neumann ghosts of the planes
 * written refreshed (neumann).  0 or the update's error (> 0). */
static int
liq_ubox_phase(const struct liq_ubox *u, const struct liquid *lq, const int n[3],
               struct kern_box *S[3][LIQUID_MAX_FIELDS], int p, int it0, int repeat,
               const int l[3], const int e[3], int neumann)
{
    int per = liq_user_phases(lq), nl = u->nlev;
    int w = nl == 1 ? 0 : p % nl, r = nl == 1 ? 0 : (p - 1) % nl;
    const struct kern_box *c = S[0][0];
    struct liquid_box b;
    ptrdiff_t off;

    if (l[0] > e[0] || l[1] > e[1] || l[2] > e[2])
        return 0;
    memset(&b, 0, sizeof(b));
    b.lo[0] = (int)(c->oi + l[0] - 1);
    b.lo[1] = (int)(c->oj + l[1] - 1);
    b.lo[2] = (int)(c->ok + l[2] - 1);
    for (int a = 0; a < 3; a++)
        b.n[a] = e[a] - l[a] + 1;
    b.sj = c->bi;
    b.sk = (ptrdiff_t)c->bi * c->bj;
    b.nfields = u->nf;
    off = l[0] + b.sj * l[1] + b.sk * l[2];
    for (int f = 0; f < u->nf; f++) {
        b.in[f] = S[r][f]->data + off;
        b.out[f] = lq->f[f].konst ? NULL : S[w][f]->data + off;
        if (nl == 3)
            b.old[f] = S[((p - 2) % 3 + 3) % 3][f]->data + off;
    }
    b.iter = it0 + (p - 1) / per + 1;
    b.colour = (p - 1) % per;
    b.t = (b.iter - 1) * lq->dt;
    b.dt = lq->dt;
    liq_user_spacing(lq, n, b.h, b.origin);
    for (int x = 0; x < repeat; x++) {
        int rc = lq->update(&b, lq->uarg);

        if (rc != 0)
            return rc < 0 ? -rc : rc;
    }
    for (int f = 0; neumann && f < u->nf; f++)
        if (!lq->f[f].konst)
            liq_box_neumann_planes(lq, n, S[w][f], l[2], e[2]);
    return 0;
}

/*
 * Temporal blocking as far as the reach allows: the block's phases, each
 * on its box [lo[p-1], hi[p-1]], as a wavefront along k.  At step t phase
 * p runs on plane t - pR (reach R), the phases in increasing order, so when
 * it does, phase p - 1 has done planes k - R..k + R (the last of them just
 * before, in the same step) and every phase that reads what phase p
 * overwrites on plane k (phase p - 2, with three levels p - 3: read by
 * phases p - 1 and p - 2 on planes up to k + R) has read it; red-black in
 * place alike (phase p + 1 on plane k - 1 comes after phase p on plane k).
 * So the planes in flight, PR + 3 of them per level, stay in the cache
 * while the box does not, and every point is computed from the operands of
 * the phase-by-phase sweep: the same bits.  Neumann ghosts of a plane are
 * refreshed as it is written.
 */
static int
liq_ubox_wave(const struct liq_ubox *u, const struct liquid *lq, const int n[3],
              struct kern_box *S[3][LIQUID_MAX_FIELDS], int P, int it0, int repeat,
              int lo[][3], int hi[][3])
{
    int kmax = 0, R = liq_user_reach(lq, n);

    for (int p = 1; p <= P; p++)
        if (hi[p - 1][2] + p * R > kmax)
            kmax = hi[p - 1][2] + p * R;
    for (int t = 0; t <= kmax; t++)
        for (int p = 1; p <= P; p++) {
            int k = t - p * R, l[3], e[3], rc;

            if (k < lo[p - 1][2] || k > hi[p - 1][2])
                continue;
            memcpy(l, lo[p - 1], sizeof(l));
            memcpy(e, hi[p - 1], sizeof(e));
            l[2] = e[2] = k;
            if ((rc = liq_ubox_phase(u, lq, n, S, p, it0, repeat, l, e, 1)) != 0)
                return rc;
        }
    return 0;
}

/* The box indices of phase p's span that phase p can compute before the
 * ghosts of the stale faces come: R more layers off each of them a phase. */
static void
liq_ubox_inner(const struct liquid *lq, const int n[3], const struct kern_box *c,
               const int ext[6], const int stale[6], int p, int P, int lo[3], int hi[3])
{
    const int len[3] = { c->ni, c->nj, c->nk };
    int R = liq_user_reach(lq, n);

    liq_ubox_span(lq, n, c, ext, p, P, lo, hi);
    for (int a = 0; a < 3; a++) {
        if (stale[2 * a] && lo[a] < 1 + ext[2 * a] + p * R)
            lo[a] = 1 + ext[2 * a] + p * R;
        if (stale[2 * a + 1] && hi[a] > len[a] - ext[2 * a + 1] - p * R)
            hi[a] = len[a] - ext[2 * a + 1] - p * R;
    }
}

int
liq_ubox_can_split(const struct liq_ubox *u, const struct liquid *lq, const int n[3], int iters)
{
    const struct kern_box *c = u->lv[0][0];
    const long o[3] = { c->oi, c->oj, c->ok };
    const int len[3] = { c->ni, c->nj, c->nk };

    /* A Neumann ghost is refreshed from its whole face before a phase,
     * which the two passes would see half done. */
    for (int a = 0; a < 3; a++)
        if ((lq->bc[2 * a] == LIQUID_NEUMANN && o[a] <= 0) ||
            (lq->bc[2 * a + 1] == LIQUID_NEUMANN && o[a] + len[a] >= n[a]))
            return 0;
    return liq_user_phases(lq) * iters <= LIQ_WAVE_MAX;
}

int
liq_ubox_split(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6],
               const int stale[6], int it0, int iters, int repeat, int pass)
{
    int P = liq_user_phases(lq) * iters;
    struct kern_box *S[3][LIQUID_MAX_FIELDS];
    int lo[LIQ_WAVE_MAX][3], hi[LIQ_WAVE_MAX][3], rc = 0;

    if (P > LIQ_WAVE_MAX)
        return -EINVAL;
    liq_ubox_stages(u, S);
    for (int p = 1; p <= P; p++)
        liq_ubox_inner(lq, n, u->lv[0][0], ext, stale, p, P, lo[p - 1], hi[p - 1]);
    if (pass == 0)
        return liq_ubox_wave(u, lq, n, S, P, it0, repeat, lo, hi);
    /* The skirts: each phase's span less its inner box, as slabs. */
    for (int p = 1; rc == 0 && p <= P; p++) {
        int c0[3], c1[3], *l0 = lo[p - 1], *h0 = hi[p - 1];
        int empty = l0[0] > h0[0] || l0[1] > h0[1] || l0[2] > h0[2];

        liq_ubox_span(lq, n, u->lv[0][0], ext, p, P, c0, c1);
        for (int a = 0; rc == 0 && !empty && a < 3; a++) {
            int l[3], e[3];

            memcpy(l, c0, sizeof(l));
            memcpy(e, c1, sizeof(e));
            if (l0[a] > c0[a]) {
                e[a] = l0[a] - 1;
                rc = liq_ubox_phase(u, lq, n, S, p, it0, repeat, l, e, 0);
                c0[a] = l0[a];
            }
            memcpy(l, c0, sizeof(l));
            memcpy(e, c1, sizeof(e));
            if (rc == 0 && h0[a] < c1[a]) {
                l[a] = h0[a] + 1;
                rc = liq_ubox_phase(u, lq, n, S, p, it0, repeat, l, e, 0);
                c1[a] = h0[a];
            }
        }
        /* no inner box: the whole span is skirt */
        if (rc == 0 && empty)
            rc = liq_ubox_phase(u, lq, n, S, p, it0, repeat, c0, c1, 0);
    }
    if (rc == 0)
        liq_ubox_settle(u, S, P);
    return rc;
}

int
liq_ubox_block(struct liq_ubox *u, const struct liquid *lq, const int n[3], const int ext[6],
               int it0, int iters, int repeat, int wrap)
{
    int per = liq_user_phases(lq), P = per * iters;

    /* A box of a few planes gains nothing from the wavefront. */
    if (!wrap && P >= 2 && P <= LIQ_WAVE_MAX && u->lv[0][0]->nk >= 4) {
        struct kern_box *S[3][LIQUID_MAX_FIELDS];
        int lo[LIQ_WAVE_MAX][3], hi[LIQ_WAVE_MAX][3], rc;

        liq_ubox_bounds(u, lq, n, 0);
        liq_ubox_stages(u, S);
        for (int p = 1; p <= P; p++)
            liq_ubox_span(lq, n, u->lv[0][0], ext, p, P, lo[p - 1], hi[p - 1]);
        if ((rc = liq_ubox_wave(u, lq, n, S, P, it0, repeat, lo, hi)) != 0)
            return rc;
        liq_ubox_settle(u, S, P);
        liq_ubox_bounds(u, lq, n, 0);
        return 0;
    }

    for (int p = 1; p <= P; p++) {
        struct liquid_box b;
        int lo[3], hi[3];

        liq_ubox_bounds(u, lq, n, wrap);
        liq_ubox_span(lq, n, u->lv[0][0], ext, p, P, lo, hi);
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
liq_ubox_points(const struct liquid *lq, const int n[3], const struct kern_box *b,
                const int ext[6], int iters)
{
    int per = liq_user_phases(lq), P = per * iters;
    double all = 0;

    for (int p = 1; p <= P; p++) {
        int lo[3], hi[3];

        liq_ubox_span(lq, n, b, ext, p, P, lo, hi);
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
