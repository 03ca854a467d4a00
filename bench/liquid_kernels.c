/*
 * liquid_kernels - vmrun stencil's Jacobi and red-black kernels run as a
 * program of its own through liquid.h (lib/liquid/liq_ukern.c), for
 * comparing with the built-in kernels (bench/liquid_kernels.sh; the test
 * test_liquid_kernels compares their bits).
 *
 *   liquid_kernels [--redblack 1] [vmrun stencil's options]   (the field of --seed 1)
 */
#include "liq_ukern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --redblack picks the description, which must be made before
 * liquid_run parses the options: read it first, as the master gets it
 * (--redblack V) and as a worker does (redblack=V). */
static int
prescan(int argc, char **argv)
{
    int v = 0;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--redblack") == 0 && i + 1 < argc)
            v = atoi(argv[i + 1]);
        else if (strncmp(argv[i], "redblack=", 9) == 0)
            v = atoi(argv[i] + 9);
    return v;
}

int
main(int argc, char **argv)
{
    struct liquid *lq = liquid_new("liquid_kernels");
    struct liq_ukern k;
    int redblack = prescan(argc, argv), rc;

    if (lq == NULL)
        return 1;
    if (liquid_option_int(lq, "redblack", &redblack, "1: red-black Gauss-Seidel, 0: Jacobi") != 0 ||
        liquid_grid(lq, 64, 64, 64) != 0 || liq_ukern_describe(lq, &k, redblack, 1) != 0) {
        fprintf(stderr, "%s\n", liquid_error(lq));
        liquid_free(lq);
        return 2;
    }
    rc = liquid_run(lq, argc, argv);
    liquid_free(lq);
    return rc;
}
