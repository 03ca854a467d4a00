/*
 * liq_png.c - the picture of a field's slice (liq_io.h): one plane of a
 * global field painted through the viridis colour map (a perceptual map,
 * interpolated from eleven of its colours), each point a square block of
 * pixels, with a colour bar on the right whose ends carry the slice's
 * minimum and maximum in a built-in 5x7 bitmap font, written as an RGB PNG
 * through the HDF5 and PNG module (liq_io.c loads it; libpng's simplified
 * API).
 */
#include "liq_io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liquid.h"

/* viridis (matplotlib) at t = 0, 0.1, ..., 1. */
static const uint32_t viridis[11] = {
    0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
    0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725,
};

uint32_t
liq_png_viridis(double t)
{
    double x;
    int i;
    uint32_t a, b, c = 0;

    if (isnan(t))
        return LIQ_PNG_NAN;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    x = t * 10;
    i = (int)x;
    if (i >= 10)
        return viridis[10];
    x -= i;
    a = viridis[i];
    b = viridis[i + 1];
    for (int s = 16; s >= 0; s -= 8) {
        double ca = (a >> s) & 0xff, cb = (b >> s) & 0xff;

        c |= (uint32_t)lround(ca + (cb - ca) * x) << s;
    }
    return c;
}

/* ---- the font: 5x7, rows top to bottom, bit 4 the leftmost column ---- */

static const char glyph_chars[] = "0123456789-+.enaif";
static const unsigned char glyphs[][7] = {
    { 0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E }, { 0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E },
    { 0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F }, { 0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E },
    { 0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02 }, { 0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E },
    { 0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E }, { 0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 },
    { 0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E }, { 0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C },
    { 0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00 }, { 0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00 },
    { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C }, { 0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E },
    { 0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11 }, { 0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F },
    { 0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E }, { 0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08 },
};

#define FONT_SCALE 2
#define FONT_ADV (6 * FONT_SCALE)
#define FONT_H (7 * FONT_SCALE)

struct canvas {
    unsigned char *rgb;
    int w, h;
};

static void
put_px(struct canvas *c, int x, int y, uint32_t rgb)
{
    unsigned char *p;

    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    p = c->rgb + 3 * ((size_t)y * c->w + x);
    p[0] = (unsigned char)(rgb >> 16);
    p[1] = (unsigned char)(rgb >> 8);
    p[2] = (unsigned char)rgb;
}

/* Text with its top-left corner at (x, y); characters without a glyph skip. */
static void
put_text(struct canvas *c, int x, int y, const char *s)
{
    for (; *s != '\0'; s++, x += FONT_ADV) {
        const char *g = strchr(glyph_chars, *s);

        if (g == NULL || *s == '\0')
            continue;
        for (int r = 0; r < 7 * FONT_SCALE; r++)
            for (int q = 0; q < 5 * FONT_SCALE; q++)
                if (glyphs[g - glyph_chars][r / FONT_SCALE] & (0x10 >> (q / FONT_SCALE)))
                    put_px(c, x + q, y + r, 0x000000);
    }
}

/* ---- the slice ---- */

struct slice {
    const double *base;      /* point (0,0) of the slice */
    long su, sv;             /* strides of its horizontal and vertical axes */
    int a, b;                /* points across and up */
};

static int
slice_of(const struct liq_io_meta *m, const struct liq_io_field *f, int axis, int k,
         struct slice *s)
{
    long sx[3] = { 1, f->sy, f->sz };
    int u = axis == LIQ_AXIS_X ? 1 : 0, v = axis == LIQ_AXIS_Z ? 1 : 2;

    if (axis < 0 || axis > 2 || k < 0 || k >= m->n[axis])
        return -EINVAL;
    s->base = f->data + sx[axis] * k;
    s->su = sx[u];
    s->sv = sx[v];
    s->a = m->n[u];
    s->b = m->n[v];
    return 0;
}

static double
slice_at(const struct slice *s, int i, int j)
{
    return s->base[s->su * i + s->sv * j];
}

/* The finite minimum and maximum; 0 if there is none. */
static int
slice_range(const struct slice *s, double *lo, double *hi)
{
    int any = 0;

    for (int j = 0; j < s->b; j++)
        for (int i = 0; i < s->a; i++) {
            double v = slice_at(s, i, j);

            if (!isfinite(v))
                continue;
            if (!any || v < *lo)
                *lo = v;
            if (!any || v > *hi)
                *hi = v;
            any = 1;
        }
    return any;
}

static uint32_t
value_colour(double v, double lo, double hi)
{
    if (isnan(v))
        return LIQ_PNG_NAN;
    if (isinf(v))
        return liq_png_viridis(v > 0 ? 1 : 0);
    return liq_png_viridis(hi > lo ? (v - lo) / (hi - lo) : 0.5);
}

int
liq_png_size(const int n[3], int axis, int *width, int *height)
{
    int a, b, big, s;

    if (n == NULL || axis < 0 || axis > 2 || n[0] < 1 || n[1] < 1 || n[2] < 1)
        return -EINVAL;
    a = n[axis == LIQ_AXIS_X ? 1 : 0];
    b = n[axis == LIQ_AXIS_Z ? 1 : 2];
    big = a > b ? a : b;
    if (big > 65536)
        return -EINVAL;
    s = big >= LIQ_PNG_TARGET ? 1 : LIQ_PNG_TARGET / big;
    *width = LIQ_PNG_MARGIN + s * a + LIQ_PNG_MARGIN + LIQ_PNG_BAR + LIQ_PNG_LABEL;
    *height = LIQ_PNG_MARGIN + (s * b > LIQ_PNG_MIN_H ? s * b : LIQ_PNG_MIN_H) + LIQ_PNG_MARGIN;
    return 0;
}

/* Paint the plot, the bar and its labels on a white canvas. */
static void
paint(struct canvas *c, const struct slice *s, int scale)
{
    double lo = 0, hi = 0;
    int any = slice_range(s, &lo, &hi), ph = c->h - 2 * LIQ_PNG_MARGIN;
    int bx = LIQ_PNG_MARGIN + scale * s->a + LIQ_PNG_MARGIN;
    char text[32];

    memset(c->rgb, 0xff, (size_t)c->w * c->h * 3);
    for (int j = 0; j < s->b; j++)
        for (int i = 0; i < s->a; i++) {
            uint32_t rgb = value_colour(slice_at(s, i, j), lo, hi);
            int y0 = LIQ_PNG_MARGIN + scale * (s->b - 1 - j), x0 = LIQ_PNG_MARGIN + scale * i;

            for (int y = 0; y < scale; y++)
                for (int x = 0; x < scale; x++)
                    put_px(c, x0 + x, y0 + y, rgb);
        }
    /* The bar: its top row is the maximum's colour, its bottom row the minimum's. */
    for (int r = 0; r < ph; r++) {
        uint32_t rgb = liq_png_viridis(ph > 1 ? 1.0 - (double)r / (ph - 1) : 0.5);

        for (int x = 0; x < LIQ_PNG_BAR; x++)
            put_px(c, bx + x, LIQ_PNG_MARGIN + r, rgb);
    }
    bx += LIQ_PNG_BAR + 6;
    if (any)
        snprintf(text, sizeof(text), "%.4g", hi);
    else
        snprintf(text, sizeof(text), "nan");
    put_text(c, bx, LIQ_PNG_MARGIN, text);
    if (any)
        snprintf(text, sizeof(text), "%.4g", lo);
    put_text(c, bx, LIQ_PNG_MARGIN + ph - FONT_H, text);
}

int
liq_png_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f,
              int axis, int k, char *err, size_t errlen)
{
    struct canvas c = { NULL, 0, 0 };
    struct slice s;
    int big, rc;

    if (path == NULL || m == NULL || f == NULL || f->data == NULL ||
        liq_png_size(m->n, axis, &c.w, &c.h) != 0 || f->sy < m->n[0] || f->sz < f->sy * m->n[1]) {
        return liq_io_error(-EINVAL, err, errlen, "PNG output: bad file, grid or field");
    }
    if (slice_of(m, f, axis, k, &s) != 0) {
        return liq_io_error(-EINVAL, err, errlen, "%.400s: slice %c=%d is outside the grid (0..%d)",
                            path, "xyz"[axis], k, m->n[axis] - 1);
    }
    big = s.a > s.b ? s.a : s.b;
    if ((c.rgb = malloc((size_t)c.w * c.h * 3)) == NULL) {
        return liq_io_error(-ENOMEM, err, errlen, "%.400s: out of memory for a %dx%d picture",
                            path, c.w, c.h);
    }
    paint(&c, &s, big >= LIQ_PNG_TARGET ? 1 : LIQ_PNG_TARGET / big);
    rc = liq_io_png_save(path, c.w, c.h, 3, c.rgb, err, errlen);
    free(c.rgb);
    return rc;
}

int
liq_png_parse_slice(const char *text, int *axis, int *k)
{
    const char *axes = "xyzXYZ", *p;
    char *end;
    long v;

    if (text == NULL || text[0] == '\0' || (p = strchr(axes, text[0])) == NULL || text[1] != '=')
        return -EINVAL;
    errno = 0;
    v = strtol(text + 2, &end, 10);
    if (end == text + 2 || *end != '\0' || errno != 0 || v < 0 || v > 1000000000)
        return -EINVAL;
    *axis = (int)((p - axes) % 3);
    *k = (int)v;
    return 0;
}

/* liquid.h's helper for programs that draw their own results (a farm's
 * image): one grey pixel per value, no scale bar. */
int
liquid_png_gray(const char *path, int w, int h, const double *v)
{
    double lo = INFINITY, hi = -INFINITY;
    char err[1024];
    unsigned char *px;
    size_t n;
    int rc;

    if (path == NULL || v == NULL || w < 1 || h < 1 || w > 65536 || h > 65536) {
        fprintf(stderr, "liquid_png_gray: bad arguments\n");
        return -1;
    }
    n = (size_t)w * (size_t)h;
    if ((px = malloc(n)) == NULL) {
        fprintf(stderr, "liquid_png_gray: %s: out of memory for %dx%d pixels\n", path, w, h);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    for (size_t i = 0; i < n; i++)
        px[i] = !isfinite(v[i]) || !(hi > lo) ? 0 : (unsigned char)lround(255 * (v[i] - lo) / (hi - lo));
    if ((rc = liq_io_png_save(path, w, h, 1, px, err, sizeof(err))) != 0)
        fprintf(stderr, "liquid_png_gray: %s\n", err);
    free(px);
    return rc != 0 ? -1 : 0;
}
