/*
 * heat3d - the heat equation u_t = lap u + f on the unit cube, explicit
 * in time, 7 points, Dirichlet boundaries (u = 0), with the source that
 * makes u = exp(-t) sin(pi x) sin(pi y) sin(pi z) the exact solution.
 * The reduction "error" is the largest distance to it at the end: it
 * falls as h^2 when the grid is refined (dt = 0.1 h^2 of the finest axis).
 *
 *   heat3d --grid 32x32x32 --iters 200 --hosts a,b,c --verify --output heat.h5
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <liquid.h>

struct heat {
    double dt, k[3];            /* time step, dt / h^2 per axis */
    double *s[3];               /* sin(pi x) at every point of each axis */
};

static double
exact(const double x[3], double t)
{
    return exp(-t) * sin(M_PI * x[0]) * sin(M_PI * x[1]) * sin(M_PI * x[2]);
}

static double
start(int field, const double x[3], void *arg)
{
    (void)field;
    (void)arg;
    return exact(x, 0);
}

static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    struct heat *h = arg;
    int big = n[0] > n[1] ? (n[0] > n[2] ? n[0] : n[2]) : (n[1] > n[2] ? n[1] : n[2]);

    (void)iters;
    h->dt = 0.1 / ((big + 1.0) * (big + 1.0));
    for (int a = 0; a < 3; a++) {
        h->k[a] = h->dt * (n[a] + 1.0) * (n[a] + 1.0);
        free(h->s[a]);
        if ((h->s[a] = malloc((size_t)n[a] * sizeof(double))) == NULL)
            return liquid_fail(lq, "heat3d: out of memory");
        for (int i = 0; i < n[a]; i++)
            h->s[a][i] = sin(M_PI * (i + 1) / (n[a] + 1.0));
    }
    return liquid_timestep(lq, h->dt);
}

/* One explicit step on a box: rows along i, so the inner loop vectorises. */
static int
update(const struct liquid_box *b, void *arg)
{
    const struct heat *h = arg;
    const double kx = h->k[0], ky = h->k[1], kz = h->k[2], c = 1 - 2 * (kx + ky + kz);
    const double f0 = (3 * M_PI * M_PI - 1) * exp(-b->t) * h->dt, *sx = h->s[0] + b->lo[0];
    const ptrdiff_t sj = b->sj, sk = b->sk;

    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            const double *restrict u = b->in[0] + j * sj + k * sk;
            double *restrict v = b->out[0] + j * sj + k * sk;
            const double syz = h->s[1][b->lo[1] + j] * h->s[2][b->lo[2] + k] * f0;

            for (int i = 0; i < b->n[0]; i++)
                v[i] = c * u[i] + kx * (u[i - 1] + u[i + 1]) + ky * (u[i - sj] + u[i + sj]) +
                       kz * (u[i - sk] + u[i + sk]) + syz * sx[i];
        }
    return 0;
}

/* The largest distance to the exact solution at the box's time. */
static double
error(const struct liquid_box *b, void *arg)
{
    double e = 0, x[3];

    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++)
            for (int i = 0; i < b->n[0]; i++) {
                liquid_pos(b, i, j, k, x);
                e = fmax(e, fabs(b->in[0][i + j * b->sj + k * b->sk] - exact(x, b->t)));
            }
    return e;
}

int
main(int argc, char **argv)
{
    struct heat h = { 0, { 0, 0, 0 }, { NULL, NULL, NULL } };
    struct liquid *lq = liquid_new("heat3d");
    int rc;
    double e;

    if (lq == NULL || liquid_grid(lq, 32, 32, 32) != 0 || liquid_field(lq, "u") != 0 ||
        liquid_init(lq, 0, start, NULL) != 0 || liquid_setup(lq, setup, &h) != 0 ||
        liquid_update(lq, update, &h) != 0 ||
        liquid_reduce(lq, "error", LIQUID_MAX, 0, error, NULL, 0) < 0) {
        fprintf(stderr, "heat3d: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (rc == 0 && liquid_is_master(lq) && liquid_reduction(lq, "error", &e) == 0)
        printf("heat3d: %d iterations, t = %.6g, max error %.6e\n", liquid_iterations(lq),
               liquid_iterations(lq) * h.dt, e);
    liquid_free(lq);
    for (int a = 0; a < 3; a++)
        free(h.s[a]);
    return rc;
}
