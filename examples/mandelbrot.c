/*
 * mandelbrot - the Mandelbrot set as a farm (liquid_farm): every pixel is
 * an item whose cost is its iteration count, up to --maxiter inside the
 * set, so the cost is very irregular; the record of a pixel is that count.
 * The picture goes to a grey PNG (log of the count; the set black).  With
 * --check-serial the master computes the image again by itself and
 * compares the two bit for bit and says the serial CPU time (bench/farm.sh's
 * measure of the work).
 *
 *   mandelbrot --size 1024x768 --maxiter 5000 --png m.png --hosts a,b,c --json report.json
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <liquid.h>

#include "mandelbrot.h"

/* A whole number 1..max at s, ending at *end; -1 if there is none. */
static long
number(const char *s, char **end, long max)
{
    long v = strtol(s, end, 10);

    return *end == s || v < 1 || v > max ? -1 : v;
}

/* A tile of the image: each pixel's count (mandelbrot.h). */
static int
tile(const int lo[3], const int n[3], void *out, void *arg)
{
    int *count = out;

    for (int b = 0; b < n[1]; b++)
        for (int a = 0; a < n[0]; a++)
            count[a + n[0] * b] = mandel_count(arg, lo[0] + a, lo[1] + b);
    return 0;
}

int
main(int argc, char **argv)
{
    struct view v = { 512, 384, 2000 };
    const char *png = "mandelbrot.png";
    int check = 0, k = 1, rc, bad = 0;

    /* Our own options out of argv; the rest (the farm's, and the workers'
     * first argument) stay for liquid_farm. */
    for (int i = 1; i < argc; i++) {
        char *e = "";

        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            v.w = (int)number(argv[++i], &e, 1 << 20);
            v.h = *e == 'x' ? (int)number(e + 1, &e, 1 << 20) : -1;
            bad |= v.w < 1 || v.h < 1 || *e != '\0';
        } else if (strcmp(argv[i], "--maxiter") == 0 && i + 1 < argc) {
            v.maxiter = (int)number(argv[++i], &e, 1 << 30);
            bad |= v.maxiter < 1 || *e != '\0';
        } else if (strcmp(argv[i], "--png") == 0 && i + 1 < argc) {
            png = argv[++i];
        } else if (strcmp(argv[i], "--check-serial") == 0) {
            check = 1;
        } else {
            argv[k++] = argv[i];
        }
    }
    argc = k;
    argv[argc] = NULL;
    if (bad) {
        fprintf(stderr, "mandelbrot: --size WxH (each 1..1048576) and --maxiter N (1..2^30) "
                        "take whole numbers\n");
        return 2;
    }
    if (argc > 1 && strcmp(argv[1], "--help") == 0)
        printf("mandelbrot [--size WxH] [--maxiter N] [--png FILE] [--check-serial] "
               "[farm options]\n");

    int n[3] = { v.w, v.h, 1 };
    int *count = calloc((size_t)v.w * v.h, sizeof(int));
    double *img = malloc((size_t)v.w * v.h * sizeof(double));

    if (count == NULL || img == NULL) {
        fprintf(stderr, "mandelbrot: out of memory\n");
        return 1;
    }
    rc = liquid_farm(argc, argv, "mandelbrot", n, sizeof(int), tile, &v, count);
    if (rc == 0 && liquid_farm_master(argc, argv)) {
        for (size_t i = 0; i < (size_t)v.w * v.h; i++)
            img[i] = count[i] >= v.maxiter ? 0 : log(1.0 + count[i]);
        if (liquid_png_gray(png, v.w, v.h, img) != 0)
            rc = 1;
        if (check) {
            int *serial = malloc((size_t)v.w * v.h * sizeof(int)), lo[3] = { 0, 0, 0 };
            clock_t c0 = clock();

            if (serial == NULL || tile(lo, n, serial, &v) != 0)
                rc = 1;
            else if (memcmp(serial, count, (size_t)v.w * v.h * sizeof(int)) != 0) {
                fprintf(stderr, "mandelbrot: the farm's image differs from the serial one\n");
                rc = 1;
            } else
                printf("mandelbrot: %dx%d, the farm's counts equal the serial ones bit for bit"
                       " (serial: %.3f s CPU)\n", v.w, v.h,
                       (double)(clock() - c0) / CLOCKS_PER_SEC);
            free(serial);
        }
    }
    free(count);
    free(img);
    return rc;
}
