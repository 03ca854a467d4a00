/*
 * wave3d - the wave equation u_tt = c^2 lap u on the unit cube with three
 * time levels (leapfrog), fixed ends (u = 0), starting at rest from the
 * standing mode sin(pi x) sin(pi y) sin(pi z).  The reduction "norm"
 * (the 2-norm of u, every 10 iterations) shows it oscillate.
 *
 *   wave3d --grid 48x48x48 --iters 300 --courant 0.5 --hosts a,b,c --verify
 */
#include <math.h>
#include <stdio.h>

#include <liquid.h>

struct wave {
    double courant;             /* c dt / h, at most 1/sqrt(3) */
    double r2;                  /* courant^2 */
};

static double
mode(int field, const double x[3], void *arg)
{
    (void)field;
    (void)arg;
    return sin(M_PI * x[0]) * sin(M_PI * x[1]) * sin(M_PI * x[2]);
}

static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    struct wave *w = arg;
    double h = 1.0 / (fmax(n[0], fmax(n[1], n[2])) + 1);

    (void)iters;
    if (!(w->courant > 0) || w->courant > 1 / sqrt(3.0))
        return liquid_fail(lq, "wave3d: --courant %g is not in (0, 0.577]", w->courant);
    w->r2 = w->courant * w->courant;
    return liquid_timestep(lq, w->courant * h);
}

static int
update(const struct liquid_box *b, void *arg)
{
    const struct wave *w = arg;

    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o, *old = b->old[0] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++)
                v[i] = 2 * u[i] - old[i] +
                       w->r2 * (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] +
                                u[i - b->sk] + u[i + b->sk] - 6 * u[i]);
        }
    return 0;
}

int
main(int argc, char **argv)
{
    struct wave w = { 0.5, 0 };
    struct liquid *lq = liquid_new("wave3d");
    int rc;
    double e;

    if (lq == NULL || liquid_grid(lq, 48, 48, 48) != 0 || liquid_field(lq, "u") != 0 ||
        liquid_levels(lq, LIQUID_THREE_LEVEL) != 0 || liquid_init(lq, 0, mode, NULL) != 0 ||
        liquid_option_double(lq, "courant", &w.courant, "c dt / h (default 0.5)") != 0 ||
        liquid_setup(lq, setup, &w) != 0 || liquid_update(lq, update, &w) != 0 ||
        liquid_reduce(lq, "norm", LIQUID_NORM2, 0, NULL, NULL, 10) < 0) {
        fprintf(stderr, "wave3d: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (rc == 0 && liquid_is_master(lq) && liquid_reduction(lq, "norm", &e) == 0)
        printf("wave3d: %d iterations, norm of u at the end %.6e\n", liquid_iterations(lq), e);
    liquid_free(lq);
    return rc;
}
