/*
 * liq_io.c - fields in and out (liq_io.h), the part every program holds:
 * checking the arguments, file names, the XDMF file, and loading the HDF5
 * and PNG module (liquid_io.so, io/liq_iomod.c) the first time a job
 * reads or writes a file.  Workers never do, and start without HDF5,
 * libpng and the thirty libraries HDF5 names (the memory and start time
 * this saves: docs/performance.md).
 *
 * The module is looked for, in order: $LIQUIDVM_IO_MODULE; beside the
 * file that holds this code (liquid/liquid_io.so next to libliquid.so.0,
 * ../lib/liquid/liquid_io.so from a program's bin/ or examples/); from
 * the running program's own directory likewise; and in the installed
 * LIQ_IO_LIBDIR.  A program that links the module's objects itself (the
 * unit tests) uses them and loads nothing.
 */
#include "liq_io.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq.h"

#ifndef LIQ_IO_LIBDIR
#define LIQ_IO_LIBDIR "/usr/local/lib/liquid"
#endif
#define LIQ_IO_SO "liquid_io.so"
#define H5_MAX_FIELDS 16

/* Linked in by a program that carries the module itself; else NULL. */
extern const struct liq_io_mod liquid_io_module_v1 __attribute__((weak));

int
liq_io_error(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- the module ---- */

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct liq_io_mod *mod;
static char mod_why[512], mod_tried[1024];

/* Note path among those looked at (as far as the list has room). */
static void
mod_tried_add(const char *path)
{
    size_t used = strlen(mod_tried), n = strlen(path);

    if (used + n + 3 >= sizeof(mod_tried))
        return;
    if (used > 0) {
        memcpy(mod_tried + used, ", ", 2);
        used += 2;
    }
    memcpy(mod_tried + used, path, n + 1);
}

/* Try dir/rel; 1 if the module is now loaded. */
static int
mod_try(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    const struct liq_io_mod *m;
    void *h;

    if (snprintf(path, sizeof(path), "%s%s%s", dir, rel[0] != '\0' ? "/" : "", rel) >=
        (int)sizeof(path))
        return 0;
    mod_tried_add(path);
    if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        /* A module that is there but does not load says the most. */
        if (access(path, F_OK) == 0)
            snprintf(mod_why, sizeof(mod_why), ": %s", dlerror());
        return 0;
    }
    m = dlsym(h, "liquid_io_module_v1");
    if (m == NULL || m->abi != LIQ_IO_ABI) {
        snprintf(mod_why, sizeof(mod_why), ": %.400s is not this version's module", path);
        dlclose(h);
        return 0;
    }
    mod = m;
    return 1;
}

/* Try rel beside the directory of file (a path with a slash). */
static int
mod_beside(const char *file, const char *rel)
{
    char real[PATH_MAX], *slash;

    if (file == NULL || strchr(file, '/') == NULL || realpath(file, real) == NULL ||
        (slash = strrchr(real, '/')) == NULL)
        return 0;
    *slash = '\0';
    return mod_try(real, rel);
}

static const struct liq_io_mod *
mod_load(char *err, size_t errlen)
{
    const char *env = getenv("LIQUIDVM_IO_MODULE");
    const struct liq_io_mod *m;
    Dl_info self;

    if (&liquid_io_module_v1 != NULL)
        return &liquid_io_module_v1;
    pthread_mutex_lock(&mod_lock);
    if (mod == NULL) {
        mod_why[0] = mod_tried[0] = '\0';
        if (env != NULL && env[0] != '\0') {
            mod_try(env, "");
        } else {
            const char *code = dladdr((void *)mod_load, &self) != 0 ? self.dli_fname : NULL;
            char a[PATH_MAX], b[PATH_MAX];
            /* This code is in the program itself (vmrun, the examples). */
            int in_exe = code != NULL && realpath(code, a) != NULL &&
                         realpath("/proc/self/exe", b) != NULL && strcmp(a, b) == 0;

            if (!mod_beside(code, "liquid/" LIQ_IO_SO) &&
                !mod_beside(code, "../lib/liquid/" LIQ_IO_SO) &&
                (in_exe || !mod_beside("/proc/self/exe", "../lib/liquid/" LIQ_IO_SO)))
                mod_try(LIQ_IO_LIBDIR, LIQ_IO_SO);
        }
    }
    if ((m = mod) == NULL)
        liq_io_error(0, err, errlen, "the HDF5 and PNG module (" LIQ_IO_SO ") could not be "
                     "loaded (looked for %.600s%.300s); set LIQUIDVM_IO_MODULE to its path",
                     mod_tried, mod_why);
    pthread_mutex_unlock(&mod_lock);
    return m;
}

int
liq_io_ready(char *err, size_t errlen)
{
    return mod_load(err, errlen) != NULL ? 0 : -ENOSYS;
}

/* ---- HDF5 and XDMF ---- */

void
liq_io_meta_grid(struct liq_io_meta *m, const int n[3])
{
    double h = liq_spacing(n);

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
        return liq_io_error(-ENAMETOOLONG, err, errlen, "%.400s: name too long", h5path);
    if ((fp = fopen(xmf, "w")) == NULL)
        return liq_io_error(-errno, err, errlen, "cannot write %.400s: %s", xmf, strerror(errno));
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
        return liq_io_error(-EIO, err, errlen, "cannot write %.400s: %s", xmf, strerror(errno));
    return 0;
}

static int
write_args(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
           char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0' || m == NULL || f == NULL || nf < 1 || nf > H5_MAX_FIELDS)
        return liq_io_error(-EINVAL, err, errlen, "HDF5 output: no file or no fields (1 to %d)",
                        H5_MAX_FIELDS);
    for (int i = 0; i < nf; i++) {
        if (!name_ok(f[i].name))
            return liq_io_error(-EINVAL, err, errlen, "%.400s: bad field name \"%.80s\"", path,
                            f[i].name != NULL ? f[i].name : "");
        if (f[i].data == NULL || !view_ok(m->n, f[i].sy, f[i].sz))
            return liq_io_error(-EINVAL, err, errlen, "%.400s: field %s: bad grid %dx%dx%d or strides",
                            path, f[i].name, m->n[0], m->n[1], m->n[2]);
        for (int j = 0; j < i; j++)
            if (strcmp(f[i].name, f[j].name) == 0)
                return liq_io_error(-EINVAL, err, errlen, "%.400s: field %s named twice", path,
                                f[i].name);
    }
    return 0;
}

int
liq_h5_write(const char *path, const struct liq_io_meta *m, const struct liq_io_field *f, int nf,
             char *err, size_t errlen)
{
    const struct liq_io_mod *io;
    int rc;

    if ((rc = write_args(path, m, f, nf, err, errlen)) != 0)
        return rc;
    if ((io = mod_load(err, errlen)) == NULL)
        return -ENOSYS;
    if ((rc = io->h5_write(path, m, f, nf, err, errlen)) != 0)
        return rc;
    return put_xmf(path, m, f, nf, err, errlen);
}

int
liq_h5_read(const char *path, const char *name, const int n[3], double *data, long sy, long sz,
            char *err, size_t errlen)
{
    const struct liq_io_mod *io;

    if (path == NULL || name == NULL || name[0] == '\0' || n == NULL || data == NULL ||
        !view_ok(n, sy, sz))
        return liq_io_error(-EINVAL, err, errlen, "HDF5 input: bad file, dataset or grid");
    if ((io = mod_load(err, errlen)) == NULL)
        return -ENOSYS;
    return io->h5_read(path, name, n, data, sy, sz, err, errlen);
}

int
liq_h5_split_input(const char *spec, char *file, size_t flen, char *dataset, size_t dlen,
                   char *err, size_t errlen)
{
    const char *colon = spec != NULL ? strrchr(spec, ':') : NULL;
    size_t fl = colon != NULL ? (size_t)(colon - spec) : 0;

    if (colon == NULL || fl == 0 || colon[1] == '\0' || (colon[1] == '/' && colon[2] == '\0'))
        return liq_io_error(-EINVAL, err, errlen, "--input %.400s: expected FILE:DATASET",
                        spec != NULL ? spec : "");
    if (fl >= flen || strlen(colon + 1) >= dlen)
        return liq_io_error(-EINVAL, err, errlen, "--input %.400s: name too long", spec);
    memcpy(file, spec, fl);
    file[fl] = '\0';
    strcpy(dataset, colon + 1);
    return 0;
}

/* ---- PNG ---- */

int
liq_io_png_save(const char *path, int w, int h, int channels, const unsigned char *px, char *err,
                size_t errlen)
{
    const struct liq_io_mod *io;

    if (path == NULL || px == NULL || w < 1 || h < 1 || (channels != 1 && channels != 3))
        return liq_io_error(-EINVAL, err, errlen, "PNG output: bad file or picture");
    if ((io = mod_load(err, errlen)) == NULL)
        return -ENOSYS;
    return io->png_save(path, w, h, channels, px, err, errlen);
}
