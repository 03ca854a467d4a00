/*
 * life2d - Conway's game of life on a torus: 2D, a 9-point box stencil,
 * periodic boundaries, from a random soup.  With --check-serial the
 * master also runs the game the plain serial way and compares the boards:
 *   life2d --grid 256x256x1 --iters 500 --hosts a,b,c --check-serial --png life.png
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liquid.h>

struct life { int n[2]; double density; int check; }; /* the board, the soup, --check-serial */

/* Alive or not, from a hash of the cell's indices. */
static double
soup_at(const struct life *g, int i, int j)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull ^ (uint64_t)j * 0xc2b2ae3d27d4eb4full;

    x = (x ^ x >> 29) * 0xbf58476d1ce4e5b9ull;
    return (double)((x ^ x >> 32) >> 11) * 0x1p-53 < g->density ? 1 : 0;
}

static double
soup(int field, const double x[3], void *arg) /* on a torus x = i h, h = 1/n */
{
    const struct life *g = arg;

    return (void)field, soup_at(g, (int)(x[0] * g->n[0] + 0.5), (int)(x[1] * g->n[1] + 0.5));
}

static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    struct life *g = arg;

    g->n[0] = n[0];
    g->n[1] = n[1];
    return (void)iters, n[2] == 1 ? 0 : liquid_fail(lq, "life2d: the grid is 2D (NXxNYx1)");
}

static int
update(const struct liquid_box *b, void *arg)
{
    (void)arg;
    for (int j = 0; j < b->n[1]; j++) {
        const double *u = b->in[0] + j * b->sj;
        double *v = b->out[0] + j * b->sj;

        for (int i = 0; i < b->n[0]; i++) {
            double s = u[i - b->sj - 1] + u[i - b->sj] + u[i - b->sj + 1] + u[i - 1] + u[i + 1] +
                       u[i + b->sj - 1] + u[i + b->sj] + u[i + b->sj + 1];

            v[i] = s == 3 || (s == 2 && u[i] == 1) ? 1 : 0;
        }
    }
    return 0;
}

/* The game the plain way: a board, its wrapped neighbours, generation by generation. */
static int
serial_matches(const struct life *g, int gens, const double *got)
{
    int nx = g->n[0], ny = g->n[1], same = 0;
    double *a = calloc((size_t)nx * ny, sizeof(*a)), *b = calloc((size_t)nx * ny, sizeof(*b));

    for (int t = -1; a != NULL && b != NULL && t < gens; t++) {
        for (int j = 0; j < ny; j++)
            for (int i = 0, s = 0; i < nx; i++, s = 0) {
                for (int d = 0; d < 9; d++) /* the 8 around (i, j), wrapped */
                    s += d != 4 &&
                         a[(i + d % 3 - 1 + nx) % nx + nx * ((j + d / 3 - 1 + ny) % ny)] == 1;
                b[i + nx * j] = t < 0 ? soup_at(g, i, j) : s == 3 || (s == 2 && a[i + nx * j] == 1);
            }
        double *x = a;

        a = b;
        b = x;
    }
    same = a != NULL && b != NULL && memcmp(a, got, (size_t)nx * ny * sizeof(double)) == 0;
    free(a);
    free(b);
    return same;
}

int
main(int argc, char **argv)
{
    struct life g = { { 0, 0 }, 0.3, 0 };
    struct liquid *lq = liquid_new("life2d");
    int rc;

    if (lq == NULL || liquid_grid(lq, 128, 128, 1) != 0 || liquid_field(lq, "alive") != 0 ||
        liquid_reach(lq, 1, 1, 0, LIQUID_BOX) != 0 ||
        liquid_boundary(lq, LIQUID_ALL, LIQUID_PERIODIC, 0) != 0 ||
        liquid_init(lq, 0, soup, &g) != 0 || liquid_setup(lq, setup, &g) != 0 ||
        liquid_update(lq, update, NULL) != 0 || liquid_keep(lq) != 0 ||
        liquid_option_double(lq, "density", &g.density, "share of cells alive at first (0.3)") ||
        liquid_option_flag(lq, "check-serial", &g.check, "compare with a serial run") ||
        liquid_reduce(lq, "population", LIQUID_SUM, 0, NULL, NULL, 0) < 0) {
        fprintf(stderr, "life2d: %s\n", liquid_error(lq));
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    if (rc == 0 && liquid_is_master(lq)) {
        double pop = 0;
        int same = g.check && serial_matches(&g, liquid_iterations(lq), liquid_result(lq, 0));

        liquid_reduction(lq, "population", &pop);
        printf("life2d: %d generations, %.0f cells alive\n", liquid_iterations(lq), pop);
        if (g.check)
            printf("life2d: the board %s the serial game's\n", same ? "is" : "DIFFERS from");
        rc = g.check && !same;
    }
    liquid_free(lq);
    return rc;
}
