/*
 * poisson27 - Poisson's equation -lap u = f on the unit cube with the
 * 27-point (box) Laplacian, u = 0 on the faces, f = 3 pi^2 sin sin sin,
 * solved by Jacobi iteration until the residual's norm falls below --tol
 * (checked every 10 iterations; --iters is the most it may take).
 *
 *   poisson27 --grid 32x32x32 --iters 20000 --tol 1e-3 --hosts a,b,c --verify
 */
#include <math.h>
#include <stdio.h>

#include <liquid.h>

/* The 27-point operator's weights (times 1/(30 h^2)): centre, face, edge, corner. */
static const double W[4] = { -128, 14, 3, 1 };

static double
source(const struct liquid_box *b, int i, int j, int k)
{
    double x[3];

    liquid_pos(b, i, j, k, x);
    return 3 * M_PI * M_PI * sin(M_PI * x[0]) * sin(M_PI * x[1]) * sin(M_PI * x[2]);
}

/* Sum of the 26 neighbours, each by its weight. */
static double
ring(const struct liquid_box *b, const double *u)
{
    double s = 0;

    for (int dk = -1; dk <= 1; dk++)
        for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
                int far = (di != 0) + (dj != 0) + (dk != 0);

                if (far > 0)
                    s += W[far] * u[di + dj * b->sj + dk * b->sk];
            }
    return s;
}

static int
update(const struct liquid_box *b, void *arg)
{
    double h2 = b->h[0] * b->h[0];

    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++)
            for (int i = 0; i < b->n[0]; i++) {
                ptrdiff_t o = i + j * b->sj + k * b->sk;

                b->out[0][o] = (ring(b, b->in[0] + o) + 30 * h2 * source(b, i, j, k)) / -W[0];
            }
    return 0;
}

/* Squares of the residual f + lap u. */
static double
residual(const struct liquid_box *b, void *arg)
{
    double h2 = b->h[0] * b->h[0], s = 0;

    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++)
            for (int i = 0; i < b->n[0]; i++) {
                ptrdiff_t o = i + j * b->sj + k * b->sk;
                double r = source(b, i, j, k) +
                           (ring(b, b->in[0] + o) + W[0] * b->in[0][o]) / (30 * h2);

                s += r * r * b->h[0] * b->h[1] * b->h[2];
            }
    return s;
}

/* The tolerance comes with the options: the rule is set once they are read. */
static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    (void)n;
    (void)iters;
    return liquid_until(lq, "residual", *(double *)arg);
}

int
main(int argc, char **argv)
{
    double tol = 1e-3, r;
    struct liquid *lq = liquid_new("poisson27");
    int rc;

    if (lq == NULL || liquid_grid(lq, 32, 32, 32) != 0 || liquid_field(lq, "u") != 0 ||
        liquid_reach(lq, 1, 1, 1, LIQUID_BOX) != 0 || liquid_update(lq, update, NULL) != 0 ||
        liquid_option_double(lq, "tol", &tol, "stop below this residual norm (1e-3)") != 0 ||
        liquid_reduce(lq, "residual", LIQUID_NORM2, 0, residual, NULL, 10) < 0 ||
        liquid_setup(lq, setup, &tol) != 0) {
        fprintf(stderr, "poisson27: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (rc == 0 && liquid_is_master(lq) && liquid_reduction(lq, "residual", &r) == 0)
        printf("poisson27: %d iterations, residual %.6e (tolerance %g)\n", liquid_iterations(lq),
               r, tol);
    liquid_free(lq);
    return rc;
}
