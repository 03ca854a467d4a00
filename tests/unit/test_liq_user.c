/*
 * test_liq_user.c - a program's own stencil (liquid.h) run the way the
 * workers run it, in one process: every quantum a box with its halo, the
 * halos refreshed from the other boxes through the patches before each
 * block (periodic wrap-around and diagonal patches included), blocks of
 * shrinking phases -- against the one-process reference, bit for bit.
 * Also the description's checks and the reductions' order.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "liq.h"
#include "liq_user.h"

/* ---- the updates ---- */

static int
heat(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++)
                v[i] = u[i] + 0.1 * (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] +
                                     u[i - b->sk] + u[i + b->sk] - 6 * u[i]) +
                       1e-3 * (b->lo[0] + i);
        }
    return 0;
}

static int
wave(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o, *w = b->old[0] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++)
                v[i] = 2 * u[i] - w[i] +
                       0.05 * (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] + u[i - b->sk] +
                               u[i + b->sk] - 6 * u[i]);
        }
    return 0;
}

static int
life(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int j = 0; j < b->n[1]; j++) {
        const double *u = b->in[0] + j * b->sj;
        double *v = b->out[0] + j * b->sj;

        for (int i = 0; i < b->n[0]; i++) {
            double s = u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] + u[i - b->sj - 1] +
                       u[i - b->sj + 1] + u[i + b->sj - 1] + u[i + b->sj + 1];

            v[i] = (s == 3 || (s == 2 && u[i] == 1)) ? 1 : 0;
        }
    }
    return 0;
}

/* Two fields trading values, a 27-point box stencil. */
static int
box27(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o, *p = b->in[1] + o;
            double *v = b->out[0] + o, *q = b->out[1] + o;

            for (int i = 0; i < b->n[0]; i++) {
                double s = 0;

                for (int dk = -1; dk <= 1; dk++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int di = -1; di <= 1; di++)
                            s += u[i + di + dj * b->sj + dk * b->sk];
                v[i] = s / 27 + 0.01 * p[i];
                q[i] = 0.5 * p[i] + 0.1 * u[i];
            }
        }
    return 0;
}

/* Red-black Gauss-Seidel for a Poisson problem, 7 points. */
static int
rbgs(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            double *u = b->out[0] + o;
            int i0 = (b->lo[0] + b->lo[1] + j + b->lo[2] + k + b->colour) & 1;

            for (int i = i0; i < b->n[0]; i += 2)
                u[i] = (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] + u[i - b->sk] +
                        u[i + b->sk] + 1e-2) / 6;
        }
    return 0;
}

/* A fourth-order Laplacian: radius 2 along each axis, a star. */
static int
heat4(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++) {
                double s = 0;

                for (int d = 1; d <= 2; d++) {
                    double c = d == 1 ? 16.0 / 12 : -1.0 / 12;

                    s += c * (u[i - d] + u[i + d] + u[i - d * b->sj] + u[i + d * b->sj] +
                              u[i - d * b->sk] + u[i + d * b->sk]);
                }
                v[i] = u[i] + 0.02 * (s - 15.0 * u[i]) + 1e-3 * (b->lo[1] + j);
            }
        }
    return 0;
}

/* A 5 x 5 box average in 2D: radius 2, diagonals too. */
static int
blur5(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int j = 0; j < b->n[1]; j++) {
        const double *u = b->in[0] + j * b->sj;
        double *v = b->out[0] + j * b->sj;

        for (int i = 0; i < b->n[0]; i++) {
            double s = 0;

            for (int dj = -2; dj <= 2; dj++)
                for (int di = -2; di <= 2; di++)
                    s += u[i + di + dj * b->sj];
            v[i] = s / 25;
        }
    }
    return 0;
}

static int fail_at;

static int
failing(const struct liquid_box *b, void *arg)
{
    (void)arg;
    return b->iter >= fail_at ? 7 : heat(b, NULL);
}

static double
bump(int f, const double x[3], void *arg)
{
    (void)arg;
    return sin(3.1 * x[0] + f) * cos(2.3 * x[1]) + 0.25 * x[2];
}

static double
glider(int f, const double x[3], void *arg)
{
    int i = (int)lround(x[0] * 16), j = (int)lround(x[1] * 16);

    (void)f;
    (void)arg;
    /* a glider and a blinker on a 16 x 16 torus (h = 1/16) */
    return (j == 1 && i == 2) || (j == 2 && i == 3) || (j == 3 && i >= 1 && i <= 3) ||
                   (j == 10 && i >= 9 && i <= 11)
               ? 1
               : 0;
}

static double
wall(int f, const double x[3], void *arg)
{
    (void)f;
    (void)arg;
    return x[1] * x[1] - x[2];
}

/* ---- the runtime's scheme, in one process ---- */

/* Taken off every halo's depth: a test that the comparison can fail. */
static int depth_cut;
/* Run each block in the runtime's two passes: what the ghosts cannot reach
 * before they come (other quanta's patches held back), the rest after. */
static int split;

/* Before every exchange but the first, odd quanta move (sim_move). */
static int moved;
/* With split: other quanta's patches put in before pass 0, as the runtime
 * puts those that came while it sent (liq_exchange_drain), not after. */
static int early;

struct sim_q {
    int lo[3], hi[3], ext[6];
    struct liq_ubox u;
};

/* Quantum q as a move leaves it (liq_migrate.c): its boxes made anew with
 * their own points untouched, the state's own points copied in from the
 * old boxes, which go, and the rest of the boxes filled. */
static void
sim_move(const struct liquid *lq, const int n[3], struct sim_q *q)
{
    const struct kern_box *old = q->u.lv[0][0];
    struct kern_box shape, *sd[3 * LIQUID_MAX_FIELDS], *ss[3 * LIQUID_MAX_FIELDS];
    struct liq_patch p;
    struct liq_ubox fresh;
    int nb;

    memset(&shape, 0, sizeof(shape));
    shape.ni = old->ni, shape.nj = old->nj, shape.nk = old->nk;
    shape.bi = old->bi, shape.bj = old->bj;
    shape.oi = old->oi, shape.oj = old->oj, shape.ok = old->ok;
    memset(&p, 0, sizeof(p));
    memcpy(p.lo, q->lo, sizeof(p.lo));
    memcpy(p.hi, q->hi, sizeof(p.hi));
    p.points = (size_t)(q->hi[0] - q->lo[0]) * (size_t)(q->hi[1] - q->lo[1]) *
               (size_t)(q->hi[2] - q->lo[2]);
    assert_int_equal(liq_ubox_make(&fresh, lq, n, &shape, 1), 0);
    nb = liq_ubox_state(&fresh, lq, sd);
    assert_int_equal(liq_ubox_state(&q->u, lq, ss), nb);
    for (int v = 0; v < nb; v++) {
        /* untouched: its points read as zero until the move writes them */
        assert_true(*kern_at(sd[v], 1 + q->ext[0], 1 + q->ext[2], 1 + q->ext[4]) == 0.0);
        assert_true(*kern_at(sd[v], 0, 0, 0) == 0.0);
        liq_region_copy(sd[v], ss[v], &p);
    }
    liq_ubox_shell(&fresh, lq, n, q->ext);
    liq_ubox_free(&q->u);
    q->u = fresh;
}

/*
 * iters iterations of lq on grid n cut into nq quanta, each its own box,
 * halos of `halo` iterations per exchange; 1 if every field's every point
 * has the reference's bits.
 */
static int
sim(struct liquid *lq, const int n[3], int nq, int iters, int halo)
{
    enum liq_kernel k = lq->levels == LIQUID_RED_BLACK ? LIQ_USER_RB : LIQ_USER;
    int depth, same = 1, done, redset[LIQUID_MAX_REDUCTIONS];
    struct kern_box ref[LIQUID_MAX_FIELDS];
    double red[LIQUID_MAX_REDUCTIONS];
    struct liq_geom g;
    struct sim_q *q;

    assert_int_equal(liq_user_check(lq), 0);
    assert_int_equal(liq_geom_make(&g, n, nq), 0);
    liq_user_geom(lq, &g);
    depth = liq_halo_depth(k, halo) * liq_geom_reach(&g) - depth_cut;
    q = calloc((size_t)nq, sizeof(*q));
    assert_non_null(q);
    for (int id = 0; id < nq; id++) {
        struct kern_box shape;

        liq_quantum_extent(&g, id, q[id].lo, q[id].hi);
        liq_box_halo(&g, q[id].lo, q[id].hi, depth, q[id].ext);
        memset(&shape, 0, sizeof(shape));
        shape.ni = q[id].hi[0] - q[id].lo[0] + q[id].ext[0] + q[id].ext[1];
        shape.nj = q[id].hi[1] - q[id].lo[1] + q[id].ext[2] + q[id].ext[3];
        shape.nk = q[id].hi[2] - q[id].lo[2] + q[id].ext[4] + q[id].ext[5];
        shape.bi = shape.ni + 2 + (id % 3);   /* padded rows, as a plan makes them */
        shape.bj = shape.nj + 2;
        shape.oi = q[id].lo[0] - q[id].ext[0];
        shape.oj = q[id].lo[1] - q[id].ext[2];
        shape.ok = q[id].lo[2] - q[id].ext[4];
        assert_int_equal(liq_ubox_make(&q[id].u, lq, n, &shape, 0), 0);
    }
    for (int it = 0; it < iters; it += halo) {
        int blk = halo < iters - it ? halo : iters - it;
        struct liq_patch *pp = calloc((size_t)nq * 512, sizeof(*pp));
        int *np = calloc((size_t)nq, sizeof(int));
        double **held = calloc((size_t)nq * 512, sizeof(double *));

        for (int id = 1; moved && it > 0 && id < nq; id += 2)
            sim_move(lq, n, &q[id]);
        assert_non_null(pp);
        assert_non_null(np);
        assert_non_null(held);
        for (int id = 0; id < nq; id++) {
            struct liq_patch *p = pp + (size_t)id * 512;
            int m = liq_box_patches(&g, depth, q[id].lo, q[id].hi, id, p, 512);

            assert_true(m >= 0 && m <= 512);
            np[id] = m;
            for (int x = 0; x < m; x++) {
                /* another quantum's points: sent now, put in after pass 0 */
                /* the state only, as the runtime sends it (constant fields stay) */
                struct kern_box *sd[3 * LIQUID_MAX_FIELDS], *ss[3 * LIQUID_MAX_FIELDS];
                int nb = liq_ubox_state(&q[id].u, lq, sd);

                assert_int_equal(liq_ubox_state(&q[p[x].src].u, lq, ss), nb);
                assert_int_equal(nb, liq_user_nboxes(lq));
                if (split && p[x].src != id) {
                    double *b = malloc(p[x].points * (size_t)nb * sizeof(double));

                    assert_non_null(b);
                    for (int v = 0; v < nb; v++)
                        liq_region_get(ss[v], &p[x], b + v * p[x].points);
                    held[(size_t)id * 512 + x] = b;
                    continue;
                }
                for (int v = 0; v < nb; v++)
                    liq_region_copy(sd[v], ss[v], &p[x]);
            }
        }
        for (int id = 0; !split && id < nq; id++)
            assert_int_equal(liq_ubox_block(&q[id].u, lq, n, q[id].ext, it, blk, 1, 0), 0);
        for (int pass = 0; split && pass < 2; pass++)
            for (int id = 0; id < nq; id++) {
                int stale[6] = { 0 }, whole = !liq_ubox_can_split(&q[id].u, lq, n, blk);
                const struct liq_patch *p = pp + (size_t)id * 512;

                for (int x = 0; x < np[id]; x++) {
                    double *b = held[(size_t)id * 512 + x];

                    if (p[x].src == id)
                        continue;
                    for (int a = 0; a < 3; a++) {
                        stale[2 * a] |= p[x].hi[a] <= q[id].lo[a];
                        stale[2 * a + 1] |= p[x].lo[a] >= q[id].hi[a];
                    }
                    if (pass == (early ? 0 : 1) && b != NULL) {
                        struct kern_box *sd[3 * LIQUID_MAX_FIELDS];
                        int nb = liq_ubox_state(&q[id].u, lq, sd);

                        for (int v = 0; v < nb; v++)
                            liq_region_put(sd[v], &p[x], b + v * p[x].points);
                    }
                }
                if (whole && pass == 1)
                    assert_int_equal(liq_ubox_block(&q[id].u, lq, n, q[id].ext, it, blk, 1, 0), 0);
                else if (!whole)
                    assert_int_equal(liq_ubox_split(&q[id].u, lq, n, q[id].ext, stale, it, blk, 1,
                                                    pass), 0);
            }
        for (int x = 0; x < nq * 512; x++)
            free(held[x]);
        free(held);
        free(np);
        free(pp);
    }
    assert_int_equal(liq_user_reference(lq, &g, iters, ref, &done, red, redset), 0);
    assert_int_equal(done, iters);
    for (int id = 0; id < nq; id++) {
        for (int f = 0; f < lq->nf; f++)
            for (int z = q[id].lo[2]; z < q[id].hi[2]; z++)
                for (int y = q[id].lo[1]; y < q[id].hi[1]; y++)
                    for (int x = q[id].lo[0]; x < q[id].hi[0]; x++) {
                        const struct kern_box *b = q[id].u.lv[0][f];
                        double v = *kern_at(b, (int)(x + 1 - b->oi), (int)(y + 1 - b->oj),
                                            (int)(z + 1 - b->ok));
                        double r = *kern_at(&ref[f], x + 1, y + 1, z + 1);

                        if (memcmp(&v, &r, sizeof(v)) != 0)
                            same = 0;
                    }
        liq_ubox_free(&q[id].u);
    }
    for (int f = 0; f < lq->nf; f++)
        kern_box_free(&ref[f]);
    free(q);
    return same;
}

static struct liquid *
spec(liquid_update_fn fn, enum liquid_levels lv, enum liquid_shape shape, int nf)
{
    struct liquid *lq = liquid_new("test");
    char name[8];

    assert_non_null(lq);
    for (int f = 0; f < nf; f++) {
        snprintf(name, sizeof(name), "f%d", f);
        assert_int_equal(liquid_field(lq, name), f);
        assert_int_equal(liquid_init(lq, f, bump, NULL), 0);
    }
    assert_int_equal(liquid_levels(lq, lv), 0);
    assert_int_equal(liquid_reach(lq, 1, 1, 1, shape), 0);
    assert_int_equal(liquid_update(lq, fn, NULL), 0);
    return lq;
}

static void
test_heat_dirichlet_fn(void **state)
{
    struct liquid *lq = spec(heat, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 13, 11, 9 };

    (void)state;
    assert_int_equal(liquid_boundary_fn(lq, LIQUID_ALL, wall, NULL), 0);
    for (int halo = 1; halo <= 3; halo++) {
        assert_true(sim(lq, n, 8, 7, halo));
        assert_true(sim(lq, n, 12, 5, halo));
    }
    liquid_free(lq);
}

static void
test_wave_three_levels(void **state)
{
    struct liquid *lq = spec(wave, LIQUID_THREE_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 12, 10, 8 };

    (void)state;
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 9, halo));
    liquid_free(lq);
}

static void
test_life_periodic(void **state)
{
    struct liquid *lq = spec(life, LIQUID_TWO_LEVEL, LIQUID_BOX, 1);
    const int n[3] = { 16, 16, 1 };

    (void)state;
    assert_int_equal(liquid_init(lq, 0, glider, NULL), 0);
    assert_int_equal(liquid_reach(lq, 1, 1, 0, LIQUID_BOX), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_ALL, LIQUID_PERIODIC, 0), 0);
    for (int halo = 1; halo <= 3; halo++) {
        assert_true(sim(lq, n, 4, 10, halo));
        assert_true(sim(lq, n, 1, 6, halo));  /* one quantum: its halo is its own far side */
        assert_true(sim(lq, n, 6, 8, halo));
    }
    liquid_free(lq);
}

static void
test_box27_two_fields_mixed(void **state)
{
    struct liquid *lq = spec(box27, LIQUID_TWO_LEVEL, LIQUID_BOX, 2);
    const int n[3] = { 10, 9, 8 };

    (void)state;
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI, LIQUID_PERIODIC, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO, LIQUID_NEUMANN, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_ZHI, LIQUID_DIRICHLET, 2.5), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 6, halo));
    liquid_free(lq);
}

/* A constant field (liquid_field_const): a coefficient the update reads
 * with its neighbours, never sent; out[] is NULL for it. */
static int
coef(const struct liquid_box *b, void *arg)
{
    (void)arg;
    if (b->out[1] != NULL)
        return 5;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o, *a = b->in[1] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++)
                v[i] = u[i] + 0.02 * ((a[i - 1] + a[i]) * (u[i - 1] - u[i]) +
                                      (a[i + 1] + a[i]) * (u[i + 1] - u[i]) +
                                      (a[i - b->sj] + a[i]) * (u[i - b->sj] - u[i]) +
                                      (a[i + b->sj] + a[i]) * (u[i + b->sj] - u[i]) +
                                      (a[i - b->sk] + a[i]) * (u[i - b->sk] - u[i]) +
                                      (a[i + b->sk] + a[i]) * (u[i + b->sk] - u[i]));
        }
    return 0;
}

static void
test_const_field(void **state)
{
    struct liquid *lq = spec(coef, LIQUID_TWO_LEVEL, LIQUID_STAR, 2);
    const int n[3] = { 12, 10, 9 };
    struct liq_ubox u;
    struct kern_box shape, *st[3 * LIQUID_MAX_FIELDS];

    (void)state;
    assert_int_equal(liquid_field_const(lq, 1), 0);
    assert_int_equal(liquid_field_const(lq, 2), -1);
    assert_int_equal(liq_user_nboxes(lq), 1);
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI, LIQUID_PERIODIC, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO, LIQUID_NEUMANN, 0), 0);
    for (int halo = 1; halo <= 3; halo++) {
        assert_true(sim(lq, n, 8, 7, halo));
        split = 1;
        assert_true(sim(lq, n, 6, 5, halo));
        split = 0;
    }
    /* one box for the constant field at every level; the state leaves it out */
    memset(&shape, 0, sizeof(shape));
    shape.ni = n[0], shape.nj = n[1], shape.nk = n[2], shape.bi = n[0] + 2, shape.bj = n[1] + 2;
    assert_int_equal(liq_ubox_make(&u, lq, n, &shape, 0), 0);
    assert_ptr_equal(u.lv[0][1], u.lv[1][1]);
    assert_ptr_not_equal(u.lv[0][0], u.lv[1][0]);
    assert_int_equal(liq_ubox_state(&u, lq, st), 1);
    assert_ptr_equal(st[0], u.lv[0][0]);
    liq_ubox_free(&u);
    /* every field constant: nothing to write */
    assert_int_equal(liquid_field_const(lq, 0), 0);
    assert_int_equal(liq_user_check(lq), -1);
    assert_non_null(strstr(liquid_error(lq), "every field is constant"));
    liquid_free(lq);
}

static void
test_rbgs_neumann(void **state)
{
    struct liquid *lq = spec(rbgs, LIQUID_RED_BLACK, LIQUID_STAR, 1);
    const int n[3] = { 11, 10, 9 };

    (void)state;
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO | LIQUID_YHI, LIQUID_NEUMANN, 0), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 5, halo));
    liquid_free(lq);
}

/* Radius 2: two ghost layers at Dirichlet and Neumann faces, halos two
 * points a phase, across a periodic axis too. */
static void
test_radius_two(void **state)
{
    struct liquid *lq = spec(heat4, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 14, 12, 10 };

    (void)state;
    assert_int_equal(liquid_reach(lq, 2, 2, 2, LIQUID_STAR), 0);
    assert_int_equal(liquid_boundary_fn(lq, LIQUID_ALL, wall, NULL), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO | LIQUID_ZHI, LIQUID_NEUMANN, 0), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 7, halo));
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI, LIQUID_PERIODIC, 0), 0);
    for (int halo = 1; halo <= 2; halo++)
        assert_true(sim(lq, n, 12, 5, halo));
    liquid_free(lq);

    const int m[3] = { 20, 16, 1 };

    lq = spec(blur5, LIQUID_TWO_LEVEL, LIQUID_BOX, 1);
    assert_int_equal(liquid_reach(lq, 2, 2, 0, LIQUID_BOX), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO | LIQUID_YHI, LIQUID_PERIODIC, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_XHI, LIQUID_NEUMANN, 0), 0);
    for (int halo = 1; halo <= 3; halo++) {
        assert_true(sim(lq, m, 4, 6, halo));
        assert_true(sim(lq, m, 1, 4, halo));
    }
    liquid_free(lq);
}

static double
by_index(int f, const double x[3], void *arg)
{
    (void)f;
    (void)arg;
    return 1000 * x[0] + 10 * x[1] + x[2]; /* distinct per point */
}

/* Neumann ghosts mirror the face: the ghost d out is the point d - 1 in;
 * periodic ghosts of a whole-grid box are the far side's points. */
static void
test_ghost_values(void **state)
{
    struct liquid *lq = spec(heat4, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 6, 5, 4 };
    struct kern_box shape;
    struct liq_ubox u;

    (void)state;
    assert_int_equal(liquid_reach(lq, 2, 2, 2, LIQUID_STAR), 0);
    assert_int_equal(liquid_init(lq, 0, by_index, NULL), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO, LIQUID_NEUMANN, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO | LIQUID_YHI, LIQUID_PERIODIC, 0), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_XHI, LIQUID_DIRICHLET, 7.5), 0);
    memset(&shape, 0, sizeof(shape));
    shape.ni = n[0] + 2, shape.nj = n[1] + 2, shape.nk = n[2] + 2; /* one layer more a side */
    shape.bi = shape.ni + 2, shape.bj = shape.nj + 2;
    shape.oi = shape.oj = shape.ok = -1;
    assert_int_equal(liq_ubox_make(&u, lq, n, &shape, 0), 0);
    liq_ubox_bounds(&u, lq, n, 1);
    /* box index of global g is g + 2 */
    const struct kern_box *b = u.lv[0][0];

    for (int k = 2; k < 2 + n[2]; k++)
        for (int j = 2; j < 2 + n[1]; j++) {
            assert_true(*kern_at(b, 1, j, k) == *kern_at(b, 2, j, k)); /* -1 <- 0 */
            assert_true(*kern_at(b, 0, j, k) == *kern_at(b, 3, j, k)); /* -2 <- 1 */
            assert_true(*kern_at(b, 2 + n[0], j, k) == 7.5);           /* n, n + 1: Dirichlet */
            assert_true(*kern_at(b, 3 + n[0], j, k) == 7.5);
        }
    for (int k = 2; k < 2 + n[2]; k++)
        for (int i = 2; i < 2 + n[0]; i++) {
            assert_true(*kern_at(b, i, 1, k) == *kern_at(b, i, 1 + n[1], k)); /* -1 <- n - 1 */
            assert_true(*kern_at(b, i, 0, k) == *kern_at(b, i, n[1], k));     /* -2 <- n - 2 */
            assert_true(*kern_at(b, i, 2 + n[1], k) == *kern_at(b, i, 2, k)); /* n <- 0 */
            assert_true(*kern_at(b, i, 3 + n[1], k) == *kern_at(b, i, 3, k)); /* n + 1 <- 1 */
        }
    liq_ubox_free(&u);
    liquid_free(lq);
}

/* Every scheme on the runtime's scheme in one process, against the reference. */
static void
schemes(void)
{
    const int n[3] = { 13, 11, 9 }, m[3] = { 16, 16, 1 };
    struct liquid *lq;

    lq = spec(heat, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    assert_int_equal(liquid_boundary_fn(lq, LIQUID_ALL, wall, NULL), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 7, halo));
    liquid_free(lq);
    lq = spec(wave, LIQUID_THREE_LEVEL, LIQUID_STAR, 1);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 9, halo));
    liquid_free(lq);
    lq = spec(box27, LIQUID_TWO_LEVEL, LIQUID_BOX, 2);
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI, LIQUID_PERIODIC, 0), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 6, halo));
    liquid_free(lq);
    lq = spec(rbgs, LIQUID_RED_BLACK, LIQUID_STAR, 1);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 5, halo));
    liquid_free(lq);
    lq = spec(heat4, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    assert_int_equal(liquid_reach(lq, 2, 2, 2, LIQUID_STAR), 0);
    for (int halo = 1; halo <= 2; halo++)
        assert_true(sim(lq, n, 8, 5, halo));
    liquid_free(lq);
    lq = spec(life, LIQUID_TWO_LEVEL, LIQUID_BOX, 1);
    assert_int_equal(liquid_init(lq, 0, glider, NULL), 0);
    assert_int_equal(liquid_reach(lq, 1, 1, 0, LIQUID_BOX), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_ALL, LIQUID_PERIODIC, 0), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, m, 4, 10, halo));
    liquid_free(lq);
    /* a constant coefficient field beside the one written */
    lq = spec(coef, LIQUID_TWO_LEVEL, LIQUID_STAR, 2);
    assert_int_equal(liquid_field_const(lq, 1), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_YLO, LIQUID_NEUMANN, 0), 0);
    for (int halo = 1; halo <= 3; halo++)
        assert_true(sim(lq, n, 8, 7, halo));
    liquid_free(lq);
}

/* The same schemes in the runtime's two passes (ghosts on their way while
 * the box computes): the same bits, with the ghosts put in after the first
 * pass or before it. */
static void
test_split_passes(void **state)
{
    (void)state;
    split = 1;
    schemes();
    early = 1;
    schemes();
    split = early = 0;
}

/* The same schemes with quanta moved between blocks, into boxes whose own
 * points a move fills (liq_ubox_make unfilled, then liq_ubox_shell): the
 * same bits, in one pass and in two. */
static void
test_moved_quanta(void **state)
{
    (void)state;
    moved = 1;
    schemes();
    split = 1;
    schemes();
    split = moved = 0;
}

/* The comparison can fail: a halo one layer short leaves wrong points. */
static void
test_short_halo_differs(void **state)
{
    struct liquid *lq = spec(heat, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 12, 12, 12 };
    struct liq_geom g;
    int lo[3], hi[3];
    struct liq_patch p[64];

    (void)state;
    /* one quantum's patches with a wrapped axis all lie outside it */
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    g.periodic[0] = 1;
    liq_quantum_extent(&g, 0, lo, hi);
    int m = liq_box_patches(&g, 2, lo, hi, 0, p, 64);

    assert_true(m > 0);
    for (int x = 0; x < m; x++) {
        int in = 1;

        for (int a = 0; a < 3; a++)
            in &= p[x].lo[a] >= lo[a] && p[x].hi[a] <= hi[a];
        assert_false(in);
        assert_true(p[x].shift[0] == 0 || p[x].shift[0] == -12 || p[x].shift[0] == 12);
    }
    /* a halo deeper than a periodic axis is refused */
    assert_int_equal(liq_box_patches(&g, 14, lo, hi, 0, p, 64), -ERANGE);
    /* the runtime with a halo one short of the block gives other bits */
    depth_cut = 1;
    assert_false(sim(lq, n, 8, 4, 2));
    depth_cut = 0;
    assert_true(sim(lq, n, 8, 4, 2));
    liquid_free(lq);
}

static void
test_update_error(void **state)
{
    struct liquid *lq = spec(failing, LIQUID_TWO_LEVEL, LIQUID_STAR, 1);
    const int n[3] = { 6, 6, 6 };
    struct liq_geom g;
    struct kern_box ref[1];
    double red[1];
    int done, set[1];

    (void)state;
    fail_at = 3;
    assert_int_equal(liq_geom_make(&g, n, 1), 0);
    assert_int_equal(liq_user_reference(lq, &g, 5, ref, &done, red, set), 7);
    liquid_free(lq);
}

/* A reduction's value does not depend on how many quanta there are? It
 * does (the order of its sums); the runtime fixes the order by quantum id,
 * which the reference follows: its value at a tolerance stops it. */
static void
test_until(void **state)
{
    struct liquid *lq = spec(rbgs, LIQUID_RED_BLACK, LIQUID_STAR, 1);
    const int n[3] = { 8, 8, 8 };
    struct liq_geom g;
    struct kern_box ref[1];
    double red[1], v;
    int done, set[1];

    (void)state;
    assert_int_equal(liquid_reduce(lq, "norm", LIQUID_NORM2, 0, NULL, NULL, 5), 0);
    assert_int_equal(liquid_until(lq, "norm", 0.9), 0);
    assert_int_equal(liq_geom_make(&g, n, 8), 0);
    assert_int_equal(liq_user_reference(lq, &g, 1000, ref, &done, red, set), 0);
    assert_true(set[0]);
    assert_true(red[0] < 0.9);
    assert_true(done > 0 && done < 1000 && done % 5 == 0);
    kern_box_free(&ref[0]);
    /* combine: by quantum order, sqrt for NORM2 */
    double part[3] = { 1, 4, 4 };

    v = liq_user_combine(lq, 0, part, 3, 1);
    assert_true(v == 3);
    liquid_free(lq);
    /* A rule on a reduction computed only after the last iteration could
     * never stop the job: refused, naming it. */
    lq = spec(rbgs, LIQUID_RED_BLACK, LIQUID_STAR, 1);
    assert_int_equal(liquid_reduce(lq, "late", LIQUID_NORM2, 0, NULL, NULL, 0), 0);
    assert_int_equal(liquid_until(lq, "late", 0.9), 0);
    assert_int_equal(liq_user_check(lq), -1);
    assert_non_null(strstr(liquid_error(lq), "liquid_until on reduction late"));
    liquid_free(lq);
}

static void
test_bad_descriptions(void **state)
{
    struct liquid *lq = liquid_new("bad");

    (void)state;
    assert_int_equal(liq_user_check(lq), -1);
    assert_non_null(strstr(liquid_error(lq), "no field"));
    assert_int_equal(liquid_field(lq, "9x"), -1);
    assert_int_equal(liquid_field(lq, "u"), 0);
    assert_int_equal(liquid_field(lq, "u"), -1);
    assert_non_null(strstr(liquid_error(lq), "twice"));
    assert_int_equal(liquid_reach(lq, LIQUID_MAX_RADIUS + 1, 1, 1, LIQUID_STAR), -1);
    assert_non_null(strstr(liquid_error(lq), "radius 5"));
    assert_int_equal(liquid_grid(lq, 0, 4, 4), -1);
    assert_int_equal(liquid_boundary(lq, 0x40, LIQUID_NEUMANN, 0), -1);
    assert_int_equal(liquid_init(lq, 3, bump, NULL), -1);
    assert_int_equal(liquid_until(lq, "nope", 1), -1);
    /* A program's option may not take one of the runtime's names (its
     * variable was never set), nor come without a variable. */
    int mine = 0;
    assert_int_equal(liquid_option_int(lq, "iters", &mine, "mine"), -1);
    assert_non_null(strstr(liquid_error(lq), "--iters is the runtime's own"));
    assert_int_equal(liquid_option_int(lq, "tasks_per_host", &mine, "mine"), -1);
    assert_int_equal(liquid_option_int(lq, "foo", NULL, "mine"), -1);
    assert_non_null(strstr(liquid_error(lq), "--foo has no variable"));
    assert_int_equal(liquid_option_int(lq, "foo", &mine, "mine"), 0);
    assert_int_equal(liquid_reduce(lq, "r", LIQUID_SUM, 5, NULL, NULL, 1), -1);
    assert_int_equal(liquid_reduce(lq, "r", LIQUID_SUM, 0, NULL, NULL, -1), -1);
    assert_int_equal(liq_user_check(lq), -1);
    assert_non_null(strstr(liquid_error(lq), "no update"));
    assert_int_equal(liquid_update(lq, heat, NULL), 0);
    assert_int_equal(liquid_boundary(lq, LIQUID_XLO, LIQUID_PERIODIC, 0), 0);
    assert_int_equal(liq_user_check(lq), -1);
    assert_non_null(strstr(liquid_error(lq), "pairs"));
    liquid_free(lq);
}

/* A program's own options: values by type; a flag alone, true or false. */
static void
test_options(void **state)
{
    struct liquid *lq = liquid_new("opts");
    int n = 3, f = 0;
    double x = 0.5;
    char err[256];

    (void)state;
    assert_int_equal(liquid_option_int(lq, "n", &n, "count"), 0);
    assert_int_equal(liquid_option_double(lq, "x", &x, "size"), 0);
    assert_int_equal(liquid_option_flag(lq, "check-it", &f, "check"), 0);
    assert_int_equal(liquid_option_flag(lq, "check-it", &f, "again"), -1);
    assert_non_null(strstr(liquid_error(lq), "twice"));
    assert_int_equal(liquid_option_flag(lq, "9x", &f, ""), -1);

    assert_int_equal(liq_user_opt_flag(lq, "check_it"), 1);
    assert_int_equal(liq_user_opt_flag(lq, "n"), 0);
    assert_int_equal(liq_user_opt_flag(lq, "nope"), 0);
    assert_int_equal(liq_user_opt_set(lq, "nope", "1", err, sizeof(err)), 1);

    assert_int_equal(liq_user_opt_set(lq, "check-it", NULL, err, sizeof(err)), 0);
    assert_int_equal(f, 1);
    assert_int_equal(liq_user_opt_set(lq, "check_it", "false", err, sizeof(err)), 0);
    assert_int_equal(f, 0);
    assert_int_equal(liq_user_opt_set(lq, "check-it", "1", err, sizeof(err)), 0);
    assert_int_equal(f, 1);
    assert_int_equal(liq_user_opt_set(lq, "check-it", "0", err, sizeof(err)), 0);
    assert_int_equal(f, 0);
    assert_int_equal(liq_user_opt_set(lq, "check-it", "yes", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "a flag is given alone"));
    assert_int_equal(f, 0);

    assert_int_equal(liq_user_opt_set(lq, "n", NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "needs a value"));
    assert_int_equal(liq_user_opt_set(lq, "n", "12", err, sizeof(err)), 0);
    assert_int_equal(n, 12);
    assert_int_equal(liq_user_opt_set(lq, "n", "1.5", err, sizeof(err)), -1);
    assert_int_equal(liq_user_opt_set(lq, "n", "99999999999", err, sizeof(err)), -1);
    assert_int_equal(n, 12);
    assert_int_equal(liq_user_opt_set(lq, "x", "2.5e-3", err, sizeof(err)), 0);
    assert_true(x == 2.5e-3);
    assert_int_equal(liq_user_opt_set(lq, "x", "nan", err, sizeof(err)), -1);
    liquid_free(lq);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heat_dirichlet_fn),
        cmocka_unit_test(test_wave_three_levels),
        cmocka_unit_test(test_life_periodic),
        cmocka_unit_test(test_box27_two_fields_mixed),
        cmocka_unit_test(test_const_field),
        cmocka_unit_test(test_rbgs_neumann),
        cmocka_unit_test(test_radius_two),
        cmocka_unit_test(test_ghost_values),
        cmocka_unit_test(test_split_passes),
        cmocka_unit_test(test_moved_quanta),
        cmocka_unit_test(test_short_halo_differs),
        cmocka_unit_test(test_update_error),
        cmocka_unit_test(test_until),
        cmocka_unit_test(test_bad_descriptions),
        cmocka_unit_test(test_options),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
