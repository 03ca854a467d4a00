/*
 * liq_io.h - fields in and out: HDF5 datasets with an XDMF companion
 * (liq_io.c) and PNG pictures of a slice (liq_png.c), issue 25's "Fields in
 * and out".  The calls into HDF5 and libpng live in a module of their own,
 * liquid_io.so (io/liq_iomod.c), that liq_io.c loads the first time a file
 * is read or written, so that programs that never do (the workers) start
 * without those libraries.
 *
 * Who may include it: lib/liquid/, launcher/vmrun/ and the tests.  Context:
 * the job's master, outside any event loop; every call is synchronous and
 * blocks on file I/O.  The calls keep no state between them and may be made
 * from one thread at a time (the HDF5 library is built without thread
 * safety; the module turns HDF5's automatic error printing off for the
 * calling thread).
 *
 * A global field is nx*ny*nz doubles, x fastest, then y, then z (C order
 * [z][y][x]), the grid's interior points only: no ghosts.  A struct
 * liq_io_field describes where they are in memory with element strides, so
 * that both a dense array (sy = nx, sz = nx*ny) and the interior of a
 * kern_box (data = kern_at(b,1,1,1), sy = bi, sz = bi*bj) are described
 * without a copy.  The caller owns every pointer; nothing is kept.
 *
 * Errors: 0 or a negative code, with err (when non-NULL) holding a sentence
 * that names the file and, for a dataset, the dataset:
 *   -EINVAL  bad arguments (extents < 1, strides too small, a bad name,
 *            slice out of range), or a dataset whose shape or type differs
 *   -ENOENT  the file or the dataset is missing
 *   -EIO     the HDF5 or PNG library failed (its innermost message is in err)
 *   -ENOMEM  out of memory
 *   -ENOSYS  the HDF5 and PNG module could not be loaded (err says where
 *            it was looked for and why; LIQUIDVM_IO_MODULE names it)
 *   -errno   a file could not be created (-EACCES, -ENOENT for a missing
 *            directory, ...)
 */
#ifndef LIQUIDVM_LIQ_IO_H
#define LIQUIDVM_LIQ_IO_H

#include <stddef.h>
#include <stdint.h>

/* The longest dataset (field) name. */
#define LIQ_IO_NAME_MAX 64

/* What goes with every field: the grid, where its points are, and when. */
struct liq_io_meta {
    int n[3];              /* nx, ny, nz: interior points per axis, each >= 1 */
    double origin[3];      /* coordinates of point (0,0,0) of the field */
    double spacing[3];     /* distance between neighbouring points per axis */
    long iteration;        /* iterations done */
    double time;           /* simulated time */
    uint64_t checksum;     /* the job's checksum (vmrun's report: 16 hex digits) */
};

/* One named field: point (i,j,k) is data[i + sy*j + sz*k]. */
struct liq_io_field {
    const char *name;      /* [A-Za-z0-9_.-], 1..LIQ_IO_NAME_MAX-1 characters */
    const double *data;
    long sy, sz;           /* sy >= nx, sz >= sy*ny and a multiple of sy */
};

/* The unit-cube placement vmrun's job uses (liq_coeffs: h = 1/(max n + 1),
 * interior point (0,0,0) at (h,h,h)): fills origin and spacing. */
void liq_io_meta_grid(struct liq_io_meta *m, const int n[3]);

/* ---- HDF5 and XDMF (liq_io.c, the module) ---- */

/* 1 if path names an HDF5 file by its extension (.h5 or .hdf5), else 0. */
int liq_h5_is_path(const char *path);

/* The XDMF file beside an HDF5 file: FILE.h5 -> FILE.xmf (any other name
 * gets .xmf appended).  0, or -ENAMETOOLONG. */
int liq_h5_xmf_path(const char *h5path, char *out, size_t len);

/*
 * Write nf fields (1..16) to path (created or truncated) as datasets
 * /NAME of shape [nz][ny][nx], IEEE 64-bit little-endian doubles, each with
 * the attributes
 *   grid       int32[3]  nx, ny, nz
 *   origin     double[3] x, y, z of point (0,0,0)
 *   spacing    double[3]
 *   iteration  int64
 *   time       double
 *   checksum   string    16 hex digits, as the job reports it
 * and the XDMF file liq_h5_xmf_path(path) beside it: one Uniform grid with
 * 3DCoRectMesh topology (Dimensions "nz ny nx"), ORIGIN_DXDYDZ geometry
 * (z y x order), the time, and one cell-less Node Attribute per field whose
 * DataItem names FILE.h5:/NAME (FILE.h5 without its directory, so the pair
 * moves together).
 */
int liq_h5_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f,
                 int nf, char *err, size_t errlen);

/*
 * Read dataset name of path into the field dst (its name is ignored; data
 * is written through).  The dataset must be a 3D (or, with n[2] == 1, 2D
 * [ny][nx]) floating-point dataset of 8-byte doubles of exactly n's shape;
 * anything else is refused with -EINVAL and a message naming the file, the
 * dataset, the shape or type found and the one wanted.
 */
int liq_h5_read(const char *path, const char *name, const int n[3], double *data, long sy,
                long sz, char *err, size_t errlen);

/* Split "FILE:DATASET" (the last ':' separates; DATASET may start with '/')
 * into file and dataset.  0, or -EINVAL with err set. */
int liq_h5_split_input(const char *spec, char *file, size_t flen, char *dataset, size_t dlen,
                       char *err, size_t errlen);

/* ---- PNG (liq_png.c) ---- */

/* Axes of a slice. */
#define LIQ_AXIS_X 0
#define LIQ_AXIS_Y 1
#define LIQ_AXIS_Z 2

/*
 * The picture of a slice.  Slice axis = k (0-based, 0 <= k < n[axis]) is
 * the plane of points whose coordinate on axis is k; its two other axes,
 * in x, y, z order, are the picture's horizontal (left to right) and
 * vertical (bottom to top) axes: z=K shows x across and y up, y=K shows x
 * and z, x=K shows y and z.
 *
 * Size: each point is an S x S block of pixels with S = max(1, 512 / the
 * longer of the slice's two extents) (no resampling: the picture is exact),
 * so the plot is W = S*a by H = S*b pixels; around it a margin of
 * LIQ_PNG_MARGIN pixels, and on the right a colour bar LIQ_PNG_BAR wide,
 * its label column of LIQ_PNG_LABEL pixels:
 *   width  = LIQ_PNG_MARGIN + W + LIQ_PNG_MARGIN + LIQ_PNG_BAR + LIQ_PNG_LABEL
 *   height = LIQ_PNG_MARGIN + max(H, LIQ_PNG_MIN_H) + LIQ_PNG_MARGIN
 * (liq_png_size gives both).  The bar runs from the slice's minimum (bottom)
 * to its maximum (top) through the viridis colour map, each labelled beside
 * the bar's end with %.4g in a 5x7 bitmap font drawn twice its size.  A
 * constant slice is drawn in the map's middle colour and its bar's labels
 * both read that value; NaN points are drawn grey (LIQ_PNG_NAN) and
 * infinities in the map's end colours, both left out of the minimum and
 * maximum (a slice with no finite value labels "nan").
 * RGB, 8 bits per channel, white background.  A slice more than 65536
 * points a side is refused (-EINVAL).
 */
#define LIQ_PNG_TARGET 512
#define LIQ_PNG_MARGIN 16
#define LIQ_PNG_BAR 24
#define LIQ_PNG_LABEL 136
#define LIQ_PNG_MIN_H 160
#define LIQ_PNG_NAN 0x808080

int liq_png_size(const int n[3], int axis, int *width, int *height);

/* The RGB (0xRRGGBB) of viridis at t in [0,1] (clamped; NaN -> LIQ_PNG_NAN). */
uint32_t liq_png_viridis(double t);

int liq_png_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f,
                  int axis, int k, char *err, size_t errlen);

/* Parse "x=K", "y=K" or "z=K" (upper case too) into axis and k; k is not
 * checked against a grid.  0, or -EINVAL. */
int liq_png_parse_slice(const char *text, int *axis, int *k);

/* ---- between liq_io.c, liq_png.c and the module ---- */

/* Load the HDF5 and PNG module now (a job checks before it runs that it
 * will be able to write its files).  0, or -ENOSYS with err set. */
int liq_io_ready(char *err, size_t errlen);

/* err = the formatted text (when err is non-NULL); rc back. */
int liq_io_error(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Write w x h pixels of channels 1 (grey) or 3 (RGB) bytes, rows top to
 * bottom, to a PNG file, through the module.  0 or a negative code. */
int liq_io_png_save(const char *path, int w, int h, int channels, const unsigned char *px,
                    char *err, size_t errlen);

/*
 * The module's one exported name is liquid_io_module_v1, of this type.  Its
 * calls take arguments liq_io.c has checked, and answer as the calls above.
 * abi is LIQ_IO_ABI: a module of another version is refused.
 */
#define LIQ_IO_ABI 1

struct liq_io_mod {
    unsigned abi;
    int (*h5_write)(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f,
                    int nf, char *err, size_t errlen);
    int (*h5_read)(const char *path, const char *name, const int n[3], double *data, long sy,
                   long sz, char *err, size_t errlen);
    int (*png_save)(const char *path, int w, int h, int channels, const unsigned char *px,
                    char *err, size_t errlen);
};

#endif
