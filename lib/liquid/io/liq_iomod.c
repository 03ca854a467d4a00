/*
 * liq_iomod.c - the HDF5 and PNG module (liquid_io.so, liq_io.h): the only
 * code of the runtime that calls the HDF5 library and libpng.  It is loaded
 * by the job's master the first time a job reads or writes a file
 * (liq_io.c), so that a worker, which never does, and a master that does
 * not, start without the two libraries and the thirty that HDF5 brings
 * (its curl, TLS and Kerberos among them).  Its callers have checked the
 * arguments: paths, names, grids and strides are valid here.
 *
 * HDF5's own error printing is turned off and its innermost message goes
 * into ours.  Exports one name, liquid_io_module_v1 (liquid_io.map).
 */
#include "liq_io.h"

#include <errno.h>
#include <hdf5.h>
#include <inttypes.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The innermost (first pushed) message of HDF5's error stack. */
static herr_t
h5_first(unsigned n, const H5E_error2_t *e, void *arg)
{
    char *buf = arg;

    if (n == 0 && e->desc != NULL)
        snprintf(buf, 160, "%s", e->desc);
    return 0;
}

/* err = the formatted text, then HDF5's innermost message if any; rc back. */
static int h5_error(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int
h5_error(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    char lib[160] = "";
    va_list ap;
    size_t used;

    if (err == NULL || errlen == 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (rc == -EIO) {
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_first, lib);
        used = strlen(err);
        if (lib[0] != '\0' && used < errlen)
            snprintf(err + used, errlen - used, " (HDF5: %s)", lib);
    }
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

/* The memory space of a strided view: [nz][sz/sy][sy], the field selected. */
static hid_t
mem_space(const int n[3], long sy, long sz)
{
    hsize_t dims[3] = { (hsize_t)n[2], (hsize_t)(sz / sy), (hsize_t)sy };
    hsize_t start[3] = { 0, 0, 0 }, count[3] = { (hsize_t)n[2], (hsize_t)n[1], (hsize_t)n[0] };
    hid_t s = H5Screate_simple(3, dims, NULL);

    if (s >= 0 && H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, NULL) < 0) {
        H5Sclose(s);
        return -1;
    }
    return s;
}

static int
put_attr(hid_t obj, const char *name, hid_t type, int len, const void *val)
{
    hsize_t d = (hsize_t)len;
    hid_t sp = len > 0 ? H5Screate_simple(1, &d, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = sp >= 0 ? H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
    int ok = a >= 0 && H5Awrite(a, type, val) >= 0;

    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? 0 : -1;
}

static int
put_attrs(hid_t d, const struct liq_io_meta *m)
{
    char cs[17];
    int64_t it = m->iteration;
    hid_t str = H5Tcopy(H5T_C_S1);
    int rc;

    snprintf(cs, sizeof(cs), "%016" PRIx64, m->checksum);
    rc = str >= 0 && H5Tset_size(str, sizeof(cs)) >= 0 ? 0 : -1;
    if (rc == 0)
        rc = put_attr(d, "grid", H5T_STD_I32LE, 3, m->n) |
             put_attr(d, "origin", H5T_IEEE_F64LE, 3, m->origin) |
             put_attr(d, "spacing", H5T_IEEE_F64LE, 3, m->spacing) |
             put_attr(d, "iteration", H5T_STD_I64LE, 0, &it) |
             put_attr(d, "time", H5T_IEEE_F64LE, 0, &m->time) | put_attr(d, "checksum", str, 0, cs);
    if (str >= 0)
        H5Tclose(str);
    return rc;
}

static int
put_field(hid_t file, const struct liq_io_meta *m, const struct liq_io_field *f)
{
    hsize_t dims[3] = { (hsize_t)m->n[2], (hsize_t)m->n[1], (hsize_t)m->n[0] };
    hid_t fs = H5Screate_simple(3, dims, NULL), ms = mem_space(m->n, f->sy, f->sz), d = -1;
    int rc = -1;

    if (fs >= 0 && ms >= 0)
        d = H5Dcreate2(file, f->name, H5T_IEEE_F64LE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, f->data) >= 0)
        rc = put_attrs(d, m);
    if (d >= 0)
        H5Dclose(d);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}

static int
mod_h5_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
             char *err, size_t errlen)
{
    FILE *probe;
    hid_t file;
    int rc = 0;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* The system's reason (no directory, no permission), which HDF5 hides. */
    if ((probe = fopen(path, "wb")) == NULL)
        return h5_error(-errno, err, errlen, "cannot write %.400s: %s", path, strerror(errno));
    fclose(probe);
    if ((file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return h5_error(-EIO, err, errlen, "cannot create the HDF5 file %.400s", path);
    for (int i = 0; i < nf && rc == 0; i++)
        if (put_field(file, m, &f[i]) != 0)
            rc = h5_error(-EIO, err, errlen, "%.400s: cannot write dataset /%s", path, f[i].name);
    if (H5Fclose(file) < 0 && rc == 0)
        rc = h5_error(-EIO, err, errlen, "%.400s: cannot close the HDF5 file", path);
    return rc;
}

/* 0 if dataset d holds doubles of shape n, else -EINVAL with err naming both. */
static int
check_shape(hid_t d, const char *path, const char *name, const int n[3], char *err, size_t errlen)
{
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    hsize_t dims[8] = { 0 };
    int nd = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1, rc = 0;
    int isf = t >= 0 && H5Tget_class(t) == H5T_FLOAT;
    size_t size = t >= 0 ? H5Tget_size(t) : 0;

    if (nd >= 0 && nd <= 8)
        H5Sget_simple_extent_dims(s, dims, NULL);
    if (t < 0 || s < 0 || nd < 0 || nd > 8) {
        rc = h5_error(-EIO, err, errlen, "%.400s: cannot inspect dataset %s", path, name);
    } else if (!isf || size != sizeof(double)) {
        rc = h5_error(-EINVAL, err, errlen, "%.400s: dataset %s holds %s of %zu bytes, not doubles "
                      "(8-byte floats)", path, name, isf ? "floats" : "non-floating-point values", size);
    } else if (!((nd == 3 && dims[0] == (hsize_t)n[2] && dims[1] == (hsize_t)n[1] &&
                  dims[2] == (hsize_t)n[0]) ||
                 (nd == 2 && n[2] == 1 && dims[0] == (hsize_t)n[1] && dims[1] == (hsize_t)n[0]))) {
        char got[96] = "";
        size_t used = 0;

        for (int i = 0; i < nd && used < sizeof(got); i++)
            used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%llu", i ? "x" : "",
                                     (unsigned long long)dims[i]);
        rc = h5_error(-EINVAL, err, errlen, "%.400s: dataset %s has shape [%s] (%dD), the grid "
                      "needs [%dx%dx%d] (nz x ny x nx)", path, name,
                      nd ? got : H5Sget_simple_extent_type(s) == H5S_NULL ? "empty: no data" : "scalar",
                      nd, n[2], n[1], n[0]);
    }
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    return rc;
}

static int
mod_h5_read(const char *path, const char *name, const int n[3], double *data, long sy, long sz,
            char *err, size_t errlen)
{
    hid_t file, d = -1, ms = -1;
    int rc = 0;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    struct stat st;

    if (access(path, R_OK) != 0)
        return h5_error(-errno, err, errlen, "cannot read %.400s: %s", path, strerror(errno));
    /* HDF5 would wait on a fifo for a writer. */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return h5_error(-EINVAL, err, errlen, "%.400s is not a regular file", path);
    if (H5Fis_hdf5(path) <= 0)
        return h5_error(-EINVAL, err, errlen, "%.400s is not an HDF5 file", path);
    if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return h5_error(-EIO, err, errlen, "cannot open the HDF5 file %.400s", path);
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0 ||
        (d = H5Dopen2(file, name, H5P_DEFAULT)) < 0) {
        H5Eclear2(H5E_DEFAULT);
        rc = h5_error(-ENOENT, err, errlen, "%.400s: no dataset %.200s", path, name);
    }
    if (rc == 0)
        rc = check_shape(d, path, name, n, err, errlen);
    if (rc == 0 && (ms = mem_space(n, sy, sz)) < 0)
        rc = h5_error(-EIO, err, errlen, "%.400s: dataset %s: no memory space", path, name);
    if (rc == 0 && H5Dread(d, H5T_NATIVE_DOUBLE, ms, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = h5_error(-EIO, err, errlen, "%.400s: cannot read dataset %s", path, name);
    if (ms >= 0)
        H5Sclose(ms);
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(file);
    return rc;
}

/* Pixels to a PNG file: channels 1 (grey) or 3 (RGB), 8 bits each, rows
 * top to bottom without padding. */
static int
mod_png_save(const char *path, int w, int h, int channels, const unsigned char *px, char *err,
             size_t errlen)
{
    png_image img;

    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    img.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
    /* Through our own FILE: png_image_write_to_file removes the path when
     * a write fails, whatever it was (a device, a file of the user's). */
    FILE *fp = fopen(path, "wb");
    int e = 0;

    if (fp == NULL) {
        e = errno;
    } else {
        errno = 0;
        if (!png_image_write_to_stdio(&img, fp, 0, px, channels * w, NULL))
            e = errno != 0 ? errno : EIO;
        if ((fflush(fp) != 0 || ferror(fp)) && e == 0)
            e = errno != 0 ? errno : EIO;
        if (fclose(fp) != 0 && e == 0)
            e = errno;
    }
    if (e != 0) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "cannot write %.400s: %s", path,
                     e != EIO || img.message[0] == '\0' ? strerror(e) : img.message);
        png_image_free(&img);
        return -e;
    }
    return 0;
}

__attribute__((visibility("default"))) const struct liq_io_mod liquid_io_module_v1 = {
    LIQ_IO_ABI, mod_h5_write, mod_h5_read, mod_png_save,
};
