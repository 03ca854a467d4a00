/*
 * test_liq_io.c - fields in and out (lib/liquid/liq_h5.c, liq_png.c, issue
 * 25): an HDF5 file written and read back through our reader and through
 * h5dump's own view of it (shape, attributes), its XDMF companion, datasets
 * of the wrong shape or type and missing ones refused with a message naming
 * them, and the PNG of a slice decoded back with libpng: its documented
 * size, the colour bar running through the map from the minimum (bottom) to
 * the maximum (top), a known value's colour at its pixel, constant and NaN
 * slices.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq_io.h"

static char dir[64];
static char path_buf[256];

static const char *
tmp(const char *name)
{
    snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
    return path_buf;
}

static int
setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/test_liq_io.XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A 3x4x5 field with a value per point that says where it is. */
#define NX 3
#define NY 4
#define NZ 5

static double
val(int i, int j, int k)
{
    return i + 10.0 * j + 100.0 * k + 0.25;
}

static void
meta(struct liq_io_meta *m)
{
    static const int n[3] = { NX, NY, NZ };

    memset(m, 0, sizeof(*m));
    liq_io_meta_grid(m, n);
    m->iteration = 7;
    m->time = 0.5;
    m->checksum = 0x0123456789abcdefull;
}

/* Output of a shell command, at most len-1 bytes; "" if it failed. */
static void
run(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    size_t n = p != NULL ? fread(out, 1, len - 1, p) : 0;

    out[n] = '\0';
    if (p == NULL || pclose(p) != 0)
        out[0] = '\0';
}

static const char *
write_two(double *dense, double *boxed)
{
    struct liq_io_meta m;
    /* The second field lives in a padded box: rows of 7, planes of 7*6. */
    struct liq_io_field f[2] = { { "u", dense, NX, NX * NY }, { "v", boxed + 7 * 6 + 7 + 1, 7, 42 } };
    char err[512] = "";

    meta(&m);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                dense[i + NX * (j + NY * k)] = val(i, j, k);
                boxed[(i + 1) + 7 * (j + 1) + 42 * (k + 1)] = -val(i, j, k);
            }
    assert_int_equal(liq_h5_write(tmp("f.h5"), &m, f, 2, err, sizeof(err)), 0);
    return tmp("f.h5");
}

static void
test_liq_h5_writes_and_reads_back(void **state)
{
    double dense[NX * NY * NZ], boxed[7 * 6 * 7] = { 0 }, back[NX * NY * NZ], pad[7 * 6 * 7];
    static const int n[3] = { NX, NY, NZ };
    char err[512] = "";
    const char *p;

    (void)state;
    p = write_two(dense, boxed);
    assert_int_equal(liq_h5_read(p, "u", n, back, NX, NX * NY, err, sizeof(err)), 0);
    assert_memory_equal(back, dense, sizeof(dense));
    assert_int_equal(liq_h5_read(p, "/v", n, back, NX, NX * NY, err, sizeof(err)), 0);
    for (int q = 0; q < NX * NY * NZ; q++)
        assert_true(back[q] == -dense[q]);
    /* Into a strided view: the points outside it stay as they were. */
    for (size_t q = 0; q < sizeof(pad) / sizeof(pad[0]); q++)
        pad[q] = 999;
    assert_int_equal(liq_h5_read(p, "u", n, pad + 43 + 7, 7, 42, err, sizeof(err)), 0);
    assert_true(pad[0] == 999 && pad[43 + 7 - 1] == 999);
    assert_true(pad[43 + 7 + 2 + 7 * 3 + 42 * 4] == val(2, 3, 4));
    assert_true(pad[43 + 7 + 3] == 999);
}

static void
test_liq_h5_h5dump_sees_shape_and_attributes(void **state)
{
    double dense[NX * NY * NZ], boxed[7 * 6 * 7] = { 0 };
    char cmd[512], out[16384];
    const char *p;

    (void)state;
    if (system("h5dump --version >/dev/null 2>&1") != 0)
        skip();
    p = write_two(dense, boxed);
    snprintf(cmd, sizeof(cmd), "h5dump -H %s", p);
    run(cmd, out, sizeof(out));
    assert_non_null(strstr(out, "DATASET \"u\""));
    assert_non_null(strstr(out, "DATASET \"v\""));
    assert_non_null(strstr(out, "H5T_IEEE_F64LE"));
    assert_non_null(strstr(out, "DATASPACE  SIMPLE { ( 5, 4, 3 ) / ( 5, 4, 3 ) }"));
    for (int i = 0; i < 6; i++) {
        static const char *const names[] = { "grid", "origin", "spacing", "iteration", "time",
                                             "checksum" };
        char want[64];

        snprintf(want, sizeof(want), "ATTRIBUTE \"%s\"", names[i]);
        assert_non_null(strstr(out, want));
    }
    snprintf(cmd, sizeof(cmd), "h5dump -a /u/checksum -a /u/grid -a /u/iteration -a /v/time %s", p);
    run(cmd, out, sizeof(out));
    assert_non_null(strstr(out, "\"0123456789abcdef\""));
    assert_non_null(strstr(out, "(0): 3, 4, 5"));
    assert_non_null(strstr(out, "(0): 7"));
    assert_non_null(strstr(out, "(0): 0.5"));
    /* The data as h5dump prints it: point (2,3,4) is the last. */
    snprintf(cmd, sizeof(cmd), "h5dump -d /u -s 4,3,2 -c 1,1,1 %s", p);
    run(cmd, out, sizeof(out));
    assert_non_null(strstr(out, "432.25"));
}

static void
test_liq_h5_xmf_names_the_datasets(void **state)
{
    double dense[NX * NY * NZ], boxed[7 * 6 * 7] = { 0 };
    char xmf[256], text[8192];
    FILE *fp;
    size_t n;

    (void)state;
    write_two(dense, boxed);
    assert_int_equal(liq_h5_xmf_path(tmp("f.h5"), xmf, sizeof(xmf)), 0);
    assert_string_equal(xmf + strlen(xmf) - 6, "/f.xmf");
    assert_non_null(fp = fopen(xmf, "r"));
    n = fread(text, 1, sizeof(text) - 1, fp);
    text[n] = '\0';
    fclose(fp);
    assert_non_null(strstr(text, "TopologyType=\"3DCoRectMesh\" Dimensions=\"5 4 3\""));
    assert_non_null(strstr(text, "GeometryType=\"ORIGIN_DXDYDZ\""));
    assert_non_null(strstr(text, "Format=\"HDF\">f.h5:/u</DataItem>"));
    assert_non_null(strstr(text, "Format=\"HDF\">f.h5:/v</DataItem>"));
    assert_non_null(strstr(text, "<Attribute Name=\"v\""));
    assert_non_null(strstr(text, "</Xdmf>"));
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "xmllint --noout %s", xmf);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(liq_h5_xmf_path("a/b.hdf5", xmf, sizeof(xmf)), 0);
    assert_string_equal(xmf, "a/b.xmf");
    assert_int_equal(liq_h5_xmf_path("a/b.dat", xmf, sizeof(xmf)), 0);
    assert_string_equal(xmf, "a/b.dat.xmf");
    assert_int_equal(liq_h5_xmf_path("a/b.h5", xmf, 4), -ENAMETOOLONG);
    assert_true(liq_h5_is_path("x.h5") && liq_h5_is_path("x.hdf5"));
    assert_false(liq_h5_is_path("x.raw") || liq_h5_is_path(".h") || liq_h5_is_path("h5"));
}

/* An integer dataset "ints" and a 2D double dataset "flat" beside the others. */
static void
add_foreign(const char *p)
{
    hsize_t d3[3] = { NZ, NY, NX }, d2[2] = { NY, NX };
    int ints[NX * NY * NZ] = { 0 };
    double flat[NX * NY] = { 0 };
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT), s, d;

    assert_true(f >= 0);
    s = H5Screate_simple(3, d3, NULL);
    d = H5Dcreate2(f, "ints", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    s = H5Screate_simple(2, d2, NULL);
    d = H5Dcreate2(f, "flat", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
}

static void
test_liq_h5_refuses_wrong_shape_type_and_missing(void **state)
{
    double dense[NX * NY * NZ], boxed[7 * 6 * 7] = { 0 }, back[NX * NY * NZ];
    static const int n[3] = { NX, NY, NZ }, other[3] = { NX, NY, NZ + 1 }, flat2d[3] = { NX, NY, 1 };
    char err[512] = "";
    const char *p;

    (void)state;
    p = write_two(dense, boxed);
    add_foreign(p);
    assert_int_equal(liq_h5_read(p, "u", other, back, NX, NX * NY, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "f.h5"));
    assert_non_null(strstr(err, "dataset u has shape [5x4x3]"));
    assert_non_null(strstr(err, "[6x4x3]"));
    assert_int_equal(liq_h5_read(p, "ints", n, back, NX, NX * NY, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "dataset ints holds non-floating-point values"));
    assert_int_equal(liq_h5_read(p, "flat", n, back, NX, NX * NY, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "dataset flat has shape [4x3] (2D)"));
    /* A 2D dataset is a grid with one plane. */
    assert_int_equal(liq_h5_read(p, "flat", flat2d, back, NX, NX * NY, err, sizeof(err)), 0);
    assert_int_equal(liq_h5_read(p, "w", n, back, NX, NX * NY, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "no dataset w"));
    assert_non_null(strstr(err, "f.h5"));
    assert_int_equal(liq_h5_read(tmp("none.h5"), "u", n, back, NX, NX * NY, err, sizeof(err)),
                     -ENOENT);
    assert_non_null(strstr(err, "none.h5"));
    assert_non_null(strstr(tmp("f.xmf"), "f.xmf"));
    assert_int_equal(liq_h5_read(tmp("f.xmf"), "u", n, back, NX, NX * NY, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "is not an HDF5 file"));
    /* Bad strides and no message buffer: refused, no crash. */
    assert_int_equal(liq_h5_read(p, "u", n, back, NX - 1, NX * NY, NULL, 0), -EINVAL);
}

static void
test_liq_h5_write_errors(void **state)
{
    double d[8] = { 0 };
    struct liq_io_meta m;
    struct liq_io_field f[2] = { { "u", d, 2, 4 }, { "u", d, 2, 4 } };
    static const int n[3] = { 2, 2, 2 };
    char err[512] = "", file[1100], ds[64];

    (void)state;
    memset(&m, 0, sizeof(m));
    liq_io_meta_grid(&m, n);
    assert_true(m.spacing[0] == 1.0 / 3 && m.origin[2] == 1.0 / 3);
    assert_int_equal(liq_h5_write("/nonexistent/dir/f.h5", &m, f, 1, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "cannot write /nonexistent/dir/f.h5"));
    assert_int_equal(liq_h5_write(tmp("g.h5"), &m, f, 2, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "field u named twice"));
    f[0].name = "a/b";
    assert_int_equal(liq_h5_write(tmp("g.h5"), &m, f, 1, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "bad field name"));
    f[0].name = "u";
    f[0].sz = 3;
    assert_int_equal(liq_h5_write(tmp("g.h5"), &m, f, 1, NULL, 0), -EINVAL);
    assert_int_equal(liq_h5_split_input("in/a.h5:/u", file, sizeof(file), ds, sizeof(ds), err,
                                        sizeof(err)), 0);
    assert_string_equal(file, "in/a.h5");
    assert_string_equal(ds, "/u");
    assert_int_equal(liq_h5_split_input("a.h5", file, sizeof(file), ds, sizeof(ds), err,
                                        sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "expected FILE:DATASET"));
    assert_int_equal(liq_h5_split_input("a.h5:", file, sizeof(file), ds, sizeof(ds), err,
                                        sizeof(err)), -EINVAL);
}

/* ---- PNG ---- */

struct picture {
    png_image img;
    unsigned char *rgb;
};

static void
decode(const char *p, struct picture *pic)
{
    memset(&pic->img, 0, sizeof(pic->img));
    pic->img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&pic->img, p));
    pic->img.format = PNG_FORMAT_RGB;
    pic->rgb = malloc(PNG_IMAGE_SIZE(pic->img));
    assert_non_null(pic->rgb);
    assert_true(png_image_finish_read(&pic->img, NULL, pic->rgb, 0, NULL));
}

static uint32_t
pixel(const struct picture *pic, int x, int y)
{
    const unsigned char *q = pic->rgb + 3 * ((size_t)y * pic->img.width + x);

    return (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
}

/* The z=2 slice of an 8x6x4 field whose value is i + 8j (0..47). */
static void
test_liq_png_slice_size_bar_and_colours(void **state)
{
    static const int n[3] = { 8, 6, 4 };
    double d[8 * 6 * 4];
    struct liq_io_meta m;
    struct liq_io_field f = { "u", d, 8, 48 };
    struct picture pic;
    char err[512] = "";
    int w, h, s = LIQ_PNG_TARGET / 8, bx, ph, dark = 0;

    (void)state;
    memset(&m, 0, sizeof(m));
    liq_io_meta_grid(&m, n);
    for (int q = 0; q < 8 * 6 * 4; q++)
        d[q] = q % 48 + (q / 48 == 2 ? 0 : 1000);   /* other planes out of range */
    assert_int_equal(liq_png_write(tmp("s.png"), &m, &f, LIQ_AXIS_Z, 2, err, sizeof(err)), 0);
    assert_int_equal(liq_png_size(n, LIQ_AXIS_Z, &w, &h), 0);
    assert_int_equal(w, LIQ_PNG_MARGIN * 2 + 8 * s + LIQ_PNG_BAR + LIQ_PNG_LABEL);
    assert_int_equal(h, LIQ_PNG_MARGIN * 2 + 6 * s);
    decode(tmp("s.png"), &pic);
    assert_int_equal(pic.img.width, w);
    assert_int_equal(pic.img.height, h);
    /* Point (i,j) = (5,1), value 13, at the centre of its block (y up). */
    assert_int_equal(pixel(&pic, LIQ_PNG_MARGIN + 5 * s + s / 2, LIQ_PNG_MARGIN + (6 - 1 - 1) * s + s / 2),
                     liq_png_viridis(13.0 / 47));
    assert_int_equal(pixel(&pic, LIQ_PNG_MARGIN, h - LIQ_PNG_MARGIN - 1), liq_png_viridis(0));
    assert_int_equal(pixel(&pic, LIQ_PNG_MARGIN + 8 * s - 1, LIQ_PNG_MARGIN), liq_png_viridis(1));
    /* The bar's middle column runs from the maximum's colour down to the minimum's. */
    bx = LIQ_PNG_MARGIN * 2 + 8 * s + LIQ_PNG_BAR / 2;
    ph = h - 2 * LIQ_PNG_MARGIN;
    for (int r = 0; r < ph; r++)
        assert_int_equal(pixel(&pic, bx, LIQ_PNG_MARGIN + r), liq_png_viridis(1.0 - (double)r / (ph - 1)));
    assert_int_equal(pixel(&pic, bx, LIQ_PNG_MARGIN), 0xfde725);
    assert_int_equal(pixel(&pic, bx, LIQ_PNG_MARGIN + ph - 1), 0x440154);
    assert_int_equal(pixel(&pic, bx, LIQ_PNG_MARGIN - 1), 0xffffff);
    /* Labels: black pixels beside the bar's top ("47") and bottom ("0"). */
    for (int y = LIQ_PNG_MARGIN; y < LIQ_PNG_MARGIN + 14; y++)
        for (int x = bx + LIQ_PNG_BAR; x < w; x++)
            dark += pixel(&pic, x, y) == 0;
    assert_true(dark > 20);
    dark = 0;
    for (int y = h - LIQ_PNG_MARGIN - 14; y < h - LIQ_PNG_MARGIN; y++)
        for (int x = bx + LIQ_PNG_BAR; x < w; x++)
            dark += pixel(&pic, x, y) == 0;
    assert_true(dark > 10);
    free(pic.rgb);
}

static void
test_liq_png_constant_nan_and_bad_slices(void **state)
{
    static const int n[3] = { 4, 4, 4 };
    double d[64];
    struct liq_io_meta m;
    struct liq_io_field f = { "u", d, 4, 16 };
    struct picture pic;
    char err[512] = "";
    int w, h, s = LIQ_PNG_TARGET / 4, axis, k;

    (void)state;
    memset(&m, 0, sizeof(m));
    liq_io_meta_grid(&m, n);
    for (int q = 0; q < 64; q++)
        d[q] = 3.5;
    d[0 + 4 * 1 + 16 * 3] = NAN;   /* (0,1,3): on slice y=1 at i=0, k=3 */
    assert_int_equal(liq_png_write(tmp("c.png"), &m, &f, LIQ_AXIS_Y, 1, err, sizeof(err)), 0);
    decode(tmp("c.png"), &pic);
    assert_int_equal(liq_png_size(n, LIQ_AXIS_Y, &w, &h), 0);
    assert_int_equal(pic.img.width, w);
    assert_int_equal(pixel(&pic, LIQ_PNG_MARGIN + s + 1, LIQ_PNG_MARGIN + 1), liq_png_viridis(0.5));
    assert_int_equal(pixel(&pic, LIQ_PNG_MARGIN + 1, LIQ_PNG_MARGIN + 1), LIQ_PNG_NAN);
    free(pic.rgb);
    for (int q = 0; q < 64; q++)
        d[q] = NAN;
    assert_int_equal(liq_png_write(tmp("n.png"), &m, &f, LIQ_AXIS_X, 0, err, sizeof(err)), 0);
    assert_int_equal(liq_png_write(tmp("n.png"), &m, &f, LIQ_AXIS_X, 4, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "slice x=4 is outside the grid (0..3)"));
    assert_true(liq_png_write("/nonexistent/s.png", &m, &f, LIQ_AXIS_Z, 0, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "/nonexistent/s.png"));
    assert_int_equal(liq_png_parse_slice("Y=12", &axis, &k), 0);
    assert_true(axis == LIQ_AXIS_Y && k == 12);
    assert_int_equal(liq_png_parse_slice("z=0", &axis, &k), 0);
    assert_true(axis == LIQ_AXIS_Z && k == 0);
    assert_int_equal(liq_png_parse_slice("w=1", &axis, &k), -EINVAL);
    assert_int_equal(liq_png_parse_slice("x=", &axis, &k), -EINVAL);
    assert_int_equal(liq_png_parse_slice("x=-1", &axis, &k), -EINVAL);
    assert_int_equal(liq_png_parse_slice("x=1a", &axis, &k), -EINVAL);
    assert_int_equal(liq_png_viridis(NAN), LIQ_PNG_NAN);
    assert_int_equal(liq_png_viridis(-1), 0x440154);
    assert_int_equal(liq_png_viridis(0.5), 0x21918c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_h5_writes_and_reads_back),
        cmocka_unit_test(test_liq_h5_h5dump_sees_shape_and_attributes),
        cmocka_unit_test(test_liq_h5_xmf_names_the_datasets),
        cmocka_unit_test(test_liq_h5_refuses_wrong_shape_type_and_missing),
        cmocka_unit_test(test_liq_h5_write_errors),
        cmocka_unit_test(test_liq_png_slice_size_bar_and_colours),
        cmocka_unit_test(test_liq_png_constant_nan_and_bad_slices),
    };

    return cmocka_run_group_tests_name("liq_io", tests, setup, teardown);
}
