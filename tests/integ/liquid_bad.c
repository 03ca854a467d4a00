/*
 * liquid_bad - a program written against liquid.h alone that goes wrong on
 * purpose, for test_liquid_errors.sh.  Two fields, a and b, a 7-point star
 * of reach one, two levels; --mode picks the fault:
 *
 *   0  none: a plain diffusion of a and b (the control)
 *   1  the update returns an error at iteration --fail-at
 *   2  the update reads b at offset (1, 1, 0), a diagonal its star does not
 *      declare (still inside the memory a box of reach one holds)
 *   3  the reduction "bad" returns NaN from iteration --fail-at on
 *   4  a description without an update
 *   5  a periodic face on one side only (x low)
 *
 * Modes 4 and 5 are description errors, made before liquid_run parses the
 * options, so main looks for --mode itself; the other modes act in the
 * callbacks, whose processes all got --mode through liquid_run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liquid.h>

struct bad {
    int mode, fail_at;
};

static double
start(int field, const double x[3], void *arg)
{
    (void)arg;
    return (field + 1) * sin(M_PI * x[0]) * sin(M_PI * x[1]) * sin(M_PI * x[2]);
}

static int
update(const struct liquid_box *b, void *arg)
{
    const struct bad *g = arg;

    if (g->mode == 1 && b->iter == g->fail_at)
        return 7;
    for (int f = 0; f < b->nfields; f++)
        for (int k = 0; k < b->n[2]; k++)
            for (int j = 0; j < b->n[1]; j++) {
                ptrdiff_t o = j * b->sj + k * b->sk;
                const double *u = b->in[f] + o, *w = b->in[1] + o;
                double *v = b->out[f] + o;

                for (int i = 0; i < b->n[0]; i++) {
                    v[i] = u[i] + 0.1 * (u[i - 1] + u[i + 1] + u[i - b->sj] + u[i + b->sj] +
                                         u[i - b->sk] + u[i + b->sk] - 6 * u[i]);
                    if (g->mode == 2)
                        v[i] += 1e-3 * w[i + 1 + b->sj];
                }
            }
    return 0;
}

static double
reduce(const struct liquid_box *b, void *arg)
{
    const struct bad *g = arg;
    double s = 0;

    if (g->mode == 3 && b->iter >= g->fail_at)
        return NAN;
    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++)
            for (int i = 0; i < b->n[0]; i++)
                s += b->in[0][i + j * b->sj + k * b->sk];
    return s;
}

int
main(int argc, char **argv)
{
    struct bad g = { 0, 5 };
    struct liquid *lq = liquid_new("liquid_bad");
    int rc;

    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--mode") == 0)
            g.mode = atoi(argv[i + 1]);
    if (lq == NULL || liquid_grid(lq, 16, 16, 16) != 0 || liquid_field(lq, "a") != 0 ||
        liquid_field(lq, "b") != 1 || liquid_init(lq, 0, start, NULL) != 0 ||
        liquid_init(lq, 1, start, NULL) != 0 ||
        liquid_option_int(lq, "mode", &g.mode, "the fault (0 none)") != 0 ||
        liquid_option_int(lq, "fail-at", &g.fail_at, "the iteration it starts at (5)") != 0 ||
        liquid_reduce(lq, "bad", LIQUID_SUM, 0, reduce, &g, 5) < 0 ||
        (g.mode != 4 && liquid_update(lq, update, &g) != 0) ||
        (g.mode == 5 && liquid_boundary(lq, LIQUID_XLO, LIQUID_PERIODIC, 0) != 0)) {
        fprintf(stderr, "liquid_bad: %s\n", liquid_error(lq));
        liquid_free(lq);
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    liquid_free(lq);
    return rc;
}
