/*
 * mandelbrot.h - the pixels of the Mandelbrot image, shared by
 * examples/mandelbrot (liquid_farm) and bench/mandel_rows (the same image
 * in row bands, for GNU parallel in bench/farm.sh), so both compute the
 * same bits.
 */
#ifndef MANDELBROT_H
#define MANDELBROT_H

#include <math.h>

struct view {
    int w, h, maxiter;
};

/* Pixel (i, j) of the image (row 0 at the top) is the point
 * c = -0.7 + (i + 1/2 - w/2) s + i (h/2 - (j + 1/2)) s, with s keeping the
 * pixels square; its count is the iterations before |z| > 2, at most maxiter. */
static inline int
mandel_count(const struct view *v, int i, int j)
{
    double s = fmax(3.0 / v->w, 2.4 / v->h);
    double cx = -0.7 + (i + 0.5 - v->w / 2.0) * s;
    double cy = (v->h / 2.0 - (j + 0.5)) * s, x = 0, y = 0;
    int k = 0;

    while (k < v->maxiter && x * x + y * y <= 4) {
        double t = x * x - y * y + cx;

        y = 2 * x * y + cy;
        x = t;
        k++;
    }
    return k;
}

#endif
