/*
 * laplace2d - Laplace's equation on the unit square by Jacobi iteration:
 * u = 1 on the left edge and 0 on the right (Dirichlet), insulated top and
 * bottom (zero-gradient Neumann), so the solution is u = 1 - x.  It stops
 * when the largest change of an iteration falls below --tol; "error" is
 * the largest distance to 1 - x.
 *
 *   laplace2d --grid 128x128x1 --iters 100000 --tol 1e-7 --hosts a,b,c --png plate.png
 */
#include <math.h>
#include <stdio.h>

#include <liquid.h>

static int
update(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int j = 0; j < b->n[1]; j++) {
        const double *u = b->in[0] + j * b->sj;
        double *v = b->out[0] + j * b->sj, *d = b->out[1] + j * b->sj;

        for (int i = 0; i < b->n[0]; i++) {
            v[i] = 0.25 * (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj]);
            d[i] = fabs(v[i] - u[i]);
        }
    }
    return 0;
}

static double
error(const struct liquid_box *b, void *arg)
{
    double e = 0, x[3];

    (void)arg;
    for (int j = 0; j < b->n[1]; j++)
        for (int i = 0; i < b->n[0]; i++) {
            liquid_pos(b, i, j, 0, x);
            e = fmax(e, fabs(b->in[0][i + j * b->sj] - (1 - x[0])));
        }
    return e;
}

static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    (void)iters;
    if (n[2] != 1)
        return liquid_fail(lq, "laplace2d: the grid is 2D (NXxNYx1)");
    return liquid_until(lq, "change", *(double *)arg);
}

int
main(int argc, char **argv)
{
    double tol = 1e-6, e, c;
    struct liquid *lq = liquid_new("laplace2d");
    int rc;

    if (lq == NULL || liquid_grid(lq, 64, 64, 1) != 0 || liquid_field(lq, "u") != 0 ||
        liquid_field(lq, "change") != 1 || liquid_reach(lq, 1, 1, 0, LIQUID_STAR) != 0 ||
        liquid_boundary(lq, LIQUID_XLO, LIQUID_DIRICHLET, 1) != 0 ||
        liquid_boundary(lq, LIQUID_YLO | LIQUID_YHI, LIQUID_NEUMANN, 0) != 0 ||
        liquid_update(lq, update, NULL) != 0 || liquid_setup(lq, setup, &tol) != 0 ||
        liquid_option_double(lq, "tol", &tol, "stop below this largest change (1e-6)") != 0 ||
        liquid_reduce(lq, "change", LIQUID_MAX, 1, NULL, NULL, 50) < 0 ||
        liquid_reduce(lq, "error", LIQUID_MAX, 0, error, NULL, 0) < 0) {
        fprintf(stderr, "laplace2d: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (rc == 0 && liquid_is_master(lq) && liquid_reduction(lq, "change", &c) == 0 &&
        liquid_reduction(lq, "error", &e) == 0)
        printf("laplace2d: %d iterations, largest change %.3e, max error %.6e\n",
               liquid_iterations(lq), c, e);
    liquid_free(lq);
    return rc;
}
