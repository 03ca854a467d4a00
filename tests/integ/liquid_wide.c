/*
 * liquid_wide - an update of radius 2 (a fourth-order Laplacian, 13
 * points) for test_liquid_reach.sh: two ghost layers at its Dirichlet and
 * Neumann faces, a periodic x axis, halos two points a phase.  --lie 1
 * makes it read three points along x while it declares two, for
 * --check-reach to find; --periodic 1 makes every axis periodic; --rbbox 1
 * declares red-black on a box, which the job refuses; --xwall 1 makes the
 * Dirichlet walls vary along the periodic x axis; --show 1 says whether
 * liquid_result holds the field after the job.
 */
#include <math.h>
#include <stdio.h>

#include <liquid.h>

static int lie, periodic, rbbox, xwall, show;

/* After the options: the faces and the levels they choose. */
static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    (void)n;
    (void)iters;
    (void)arg;
    if (periodic && liquid_boundary(lq, LIQUID_ALL, LIQUID_PERIODIC, 0) != 0)
        return 1;
    if (rbbox && (liquid_levels(lq, LIQUID_RED_BLACK) != 0 ||
                  liquid_reach(lq, 1, 1, 1, LIQUID_BOX) != 0))
        return 1;
    return 0;
}

static double
start(int field, const double x[3], void *arg)
{
    (void)field;
    (void)arg;
    return sin(2 * M_PI * x[0]) * sin(M_PI * x[1]) * cos(M_PI * x[2]);
}

static double
wall(int field, const double x[3], void *arg)
{
    (void)field;
    (void)arg;
    /* --xwall 1: a wall that changes along the periodic x axis, so that
     * where it is taken beyond x's ends matters. */
    return x[1] * x[2] + (xwall ? x[0] * x[0] : 0);
}

static int
update(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            ptrdiff_t o = j * b->sj + k * b->sk;
            const double *u = b->in[0] + o;
            double *v = b->out[0] + o;

            for (int i = 0; i < b->n[0]; i++) {
                double s1 = u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] + u[i - b->sk] +
                            u[i + b->sk];
                double s2 = u[i - 2] + u[i + 2] + u[i - 2 * b->sj] + u[i + 2 * b->sj] +
                            u[i - 2 * b->sk] + u[i + 2 * b->sk];

                v[i] = u[i] + 0.01 * (16 * s1 - s2 - 90 * u[i]) / 12 +
                       (lie ? 1e-9 * u[i + 3] : 0);
            }
        }
    return 0;
}

int
main(int argc, char **argv)
{
    struct liquid *lq = liquid_new("liquid_wide");
    int rc;

    if (lq == NULL || liquid_grid(lq, 24, 20, 16) != 0 || liquid_field(lq, "u") != 0 ||
        liquid_reach(lq, 2, 2, 2, LIQUID_STAR) != 0 || liquid_init(lq, 0, start, NULL) != 0 ||
        liquid_boundary_fn(lq, LIQUID_ALL, wall, NULL) != 0 ||
        liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI, LIQUID_PERIODIC, 0) != 0 ||
        liquid_boundary(lq, LIQUID_YLO | LIQUID_ZHI, LIQUID_NEUMANN, 0) != 0 ||
        liquid_update(lq, update, NULL) != 0 ||
        liquid_option_int(lq, "lie", &lie, "1: read 3 points along x (0)") != 0 ||
        liquid_option_int(lq, "periodic", &periodic, "1: every axis periodic (0)") != 0 ||
        liquid_option_int(lq, "rbbox", &rbbox, "1: red-black on a box of radius 1 (0)") != 0 ||
        liquid_option_int(lq, "xwall", &xwall, "1: walls that vary along periodic x (0)") != 0 ||
        liquid_option_int(lq, "show", &show, "1: say whether liquid_result holds u (0)") != 0 ||
        liquid_setup(lq, setup, NULL) != 0 ||
        liquid_reduce(lq, "norm", LIQUID_NORM2, 0, NULL, NULL, 5) < 0) {
        fprintf(stderr, "liquid_wide: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (show && rc == 0)
        printf("liquid_result: %s\n", liquid_result(lq, 0) != NULL ? "kept" : "none");
    liquid_free(lq);
    return rc;
}
