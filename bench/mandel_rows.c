/*
 * mandel_rows - rows J0 to J1-1 of examples/mandelbrot's image (the same
 * pixels, mandelbrot.h), each pixel's count as a native int on standard
 * output: bench/farm.sh's GNU parallel row runs one band per job.
 *
 *   mandel_rows W H MAXITER J0 J1 > band.bin
 */
#include <stdio.h>
#include <stdlib.h>

#include "../examples/mandelbrot.h"

/* A whole decimal argument, else -1. */
static int
num(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    return end != s && *end == '\0' && v >= 0 && v <= 1 << 24 ? (int)v : -1;
}

int
main(int argc, char **argv)
{
    struct view v;
    int j0, j1;

    if (argc != 6) {
        fprintf(stderr, "usage: mandel_rows W H MAXITER J0 J1\n");
        return 2;
    }
    v.w = num(argv[1]);
    v.h = num(argv[2]);
    v.maxiter = num(argv[3]);
    j0 = num(argv[4]);
    j1 = num(argv[5]);
    if (v.w < 1 || v.h < 1 || v.maxiter < 1 || j0 < 0 || j1 > v.h || j0 >= j1) {
        fprintf(stderr, "mandel_rows: W, H and MAXITER positive, 0 <= J0 < J1 <= H\n");
        return 2;
    }
    int *row = malloc((size_t)v.w * sizeof(int));

    if (row == NULL)
        return 1;
    for (int j = j0; j < j1; j++) {
        for (int i = 0; i < v.w; i++)
            row[i] = mandel_count(&v, i, j);
        if (fwrite(row, sizeof(int), (size_t)v.w, stdout) != (size_t)v.w) {
            perror("mandel_rows");
            return 1;
        }
    }
    free(row);
    return fflush(stdout) == 0 ? 0 : 1;
}
