/*
 * liq_h5.c - fields in HDF5 files (liq_io.h): write a global grid's named
 * fields as datasets [nz][ny][nx] with their attributes (grid, origin,
 * spacing, iteration, time, checksum) and an XDMF file beside them so that
 * ParaView opens the pair as it is; read one dataset back into a global
 * array, refusing one of another shape or type with a message naming the
 * file and the dataset.  The only file that includes the HDF5 library:
 * HDF5's own error printing is turned off and its innermost message goes
 * into ours.
 */
#include "liq_io.h"

#include <errno.h>
#include <hdf5.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define H5_MAX_FIELDS 16

void
liq_io_meta_grid(struct liq_io_meta *m, const int n[3])
{
    int big = n[0];
    double h;

    if (n[1] > big)
        big = n[1];
    if (n[2] > big)
        big = n[2];
    h = 1.0 / (big + 1);
    for (int a = 0; a < 3; a++) {
        m->n[a] = n[a];
        m->origin[a] = h;
        m->spacing[a] = h;
    }
}

int
liq_h5_is_path(const char *path)
{
    size_t len = path != NULL ? strlen(path) : 0;

    return (len > 3 && strcmp(path + len - 3, ".h5") == 0) ||
           (len > 5 && strcmp(path + len - 5, ".hdf5") == 0);
}

int
liq_h5_xmf_path(const char *h5path, char *out, size_t len)
{
    size_t n = strlen(h5path);

    if (n > 3 && strcmp(h5path + n - 3, ".h5") == 0)
        n -= 3;
    else if (n > 5 && strcmp(h5path + n - 5, ".hdf5") == 0)
        n -= 5;
    if (n + 5 > len)
        return -ENAMETOOLONG;
    memcpy(out, h5path, n);
    memcpy(out + n, ".xmf", 5);
    return 0;
}

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

static int
name_ok(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n >= LIQ_IO_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == '-'))
            return 0;
    return 1;
}

static int
view_ok(const int n[3], long sy, long sz)
{
    return n[0] >= 1 && n[1] >= 1 && n[2] >= 1 && sy >= n[0] && sz >= sy * n[1] && sz % sy == 0;
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

static void
xml_escaped(FILE *fp, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '&')
            fputs("&amp;", fp);
        else if (*s == '<')
            fputs("&lt;", fp);
        else if (*s == '>')
            fputs("&gt;", fp);
        else if (*s == '"')
            fputs("&quot;", fp);
        else
            fputc(*s, fp);
    }
}

/* The XDMF file: XDMF orders every triple z, y, x. */
static int
put_xmf(const char *h5path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
        char *err, size_t errlen)
{
    char xmf[4096];
    const char *base = strrchr(h5path, '/');
    FILE *fp;
    int rc;

    base = base != NULL ? base + 1 : h5path;
    if (liq_h5_xmf_path(h5path, xmf, sizeof(xmf)) != 0)
        return h5_error(-ENAMETOOLONG, err, errlen, "%.400s: name too long", h5path);
    if ((fp = fopen(xmf, "w")) == NULL)
        return h5_error(-errno, err, errlen, "cannot write %.400s: %s", xmf, strerror(errno));
    fprintf(fp, "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
                "<Xdmf Version=\"3.0\">\n  <Domain>\n    <Grid Name=\"grid\" GridType=\"Uniform\">\n"
                "      <Time Value=\"%.17g\"/>\n"
                "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%d %d %d\"/>\n"
                "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n",
            m->time, m->n[2], m->n[1], m->n[0]);
    fprintf(fp, "        <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" "
                "Precision=\"8\" Format=\"XML\">%.17g %.17g %.17g</DataItem>\n"
                "        <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" "
                "Precision=\"8\" Format=\"XML\">%.17g %.17g %.17g</DataItem>\n      </Geometry>\n",
            m->origin[2], m->origin[1], m->origin[0], m->spacing[2], m->spacing[1], m->spacing[0]);
    for (int i = 0; i < nf; i++) {
        fprintf(fp, "      <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
                    "        <DataItem Dimensions=\"%d %d %d\" NumberType=\"Float\" Precision=\"8\" "
                    "Format=\"HDF\">",
                f[i].name, m->n[2], m->n[1], m->n[0]);
        xml_escaped(fp, base);
        fprintf(fp, ":/%s</DataItem>\n      </Attribute>\n", f[i].name);
    }
    fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", fp);
    rc = ferror(fp) ? -EIO : 0;
    if (fclose(fp) != 0 || rc != 0)
        return h5_error(-EIO, err, errlen, "cannot write %.400s: %s", xmf, strerror(errno));
    return 0;
}

static int
write_args(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
           char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0' || m == NULL || f == NULL || nf < 1 || nf > H5_MAX_FIELDS)
        return h5_error(-EINVAL, err, errlen, "HDF5 output: no file or no fields (1 to %d)",
                        H5_MAX_FIELDS);
    for (int i = 0; i < nf; i++) {
        if (!name_ok(f[i].name))
            return h5_error(-EINVAL, err, errlen, "%.400s: bad field name \"%.80s\"", path,
                            f[i].name != NULL ? f[i].name : "");
        if (f[i].data == NULL || !view_ok(m->n, f[i].sy, f[i].sz))
            return h5_error(-EINVAL, err, errlen, "%.400s: field %s: bad grid %dx%dx%d or strides",
                            path, f[i].name, m->n[0], m->n[1], m->n[2]);
        for (int j = 0; j < i; j++)
            if (strcmp(f[i].name, f[j].name) == 0)
                return h5_error(-EINVAL, err, errlen, "%.400s: field %s named twice", path,
                                f[i].name);
    }
    return 0;
}

int
liq_h5_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
             char *err, size_t errlen)
{
    FILE *probe;
    hid_t file;
    int rc;

    if ((rc = write_args(path, m, f, nf, err, errlen)) != 0)
        return rc;
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
    if (rc == 0)
        rc = put_xmf(path, m, f, nf, err, errlen);
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
                      "needs [%dx%dx%d] (nz x ny x nx)", path, name, nd ? got : "scalar", nd,
                      n[2], n[1], n[0]);
    }
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    return rc;
}

int
liq_h5_read(const char *path, const char *name, const int n[3], double *data, long sy, long sz,
            char *err, size_t errlen)
{
    hid_t file, d = -1, ms = -1;
    int rc = 0;

    if (path == NULL || name == NULL || name[0] == '\0' || n == NULL || data == NULL ||
        !view_ok(n, sy, sz))
        return h5_error(-EINVAL, err, errlen, "HDF5 input: bad file, dataset or grid");
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (access(path, R_OK) != 0)
        return h5_error(-errno, err, errlen, "cannot read %.400s: %s", path, strerror(errno));
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

int
liq_h5_split_input(const char *spec, char *file, size_t flen, char *dataset, size_t dlen,
                   char *err, size_t errlen)
{
    const char *colon = spec != NULL ? strrchr(spec, ':') : NULL;
    size_t fl = colon != NULL ? (size_t)(colon - spec) : 0;

    if (colon == NULL || fl == 0 || colon[1] == '\0' || (colon[1] == '/' && colon[2] == '\0'))
        return h5_error(-EINVAL, err, errlen, "--input %.400s: expected FILE:DATASET",
                        spec != NULL ? spec : "");
    if (fl >= flen || strlen(colon + 1) >= dlen)
        return h5_error(-EINVAL, err, errlen, "--input %.400s: name too long", spec);
    memcpy(file, spec, fl);
    file[fl] = '\0';
    strcpy(dataset, colon + 1);
    return 0;
}
