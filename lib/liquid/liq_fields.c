/*
 * liq_fields.c - the job's final field in files (issue 25, "Fields in
 * and out"): --output as raw doubles or, for a .h5/.hdf5 name, as an HDF5
 * dataset with its attributes and an XDMF file beside it (liq_h5.c), and
 * --png as the picture of a slice (liq_png.c); the checks that let a bad
 * slice, field name or unwritable path fail before the job runs; and the
 * report's list of the files written.
 */
#include "liq_master.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kern.h"
#include "wire.h"

/* The slice asked for, with -1 resolved to the middle of its axis. */
static int
slice_k(const struct liq_opts *o)
{
    return o->slice_k >= 0 ? o->slice_k : o->n[o->slice_axis] / 2;
}

/* 0 if path can be created or overwritten, else -1 with why set. */
static int
writable(const char *path, const char *opt, char *why, size_t len)
{
    char d[LIQ_PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);

    if (n >= sizeof(d)) {
        snprintf(why, len, "%s %.400s: name too long", opt, path);
        return -1;
    }
    memcpy(d, n ? path : ".", n ? n : 1);
    d[n ? n : 1] = '\0';
    if (access(path, F_OK) == 0 ? access(path, W_OK) != 0 : access(d, W_OK | X_OK) != 0) {
        snprintf(why, len, "%s %.400s: cannot write there: %s", opt, path, strerror(errno));
        return -1;
    }
    return 0;
}

int
liq_fields_check(const struct liq_opts *o, char *why, size_t len)
{
    char xmf[LIQ_PATH_MAX + 8];

    if (o->png[0] == '\0' && (o->slice_k >= 0 || o->slice_axis != LIQ_AXIS_Z || o->field[0])) {
        snprintf(why, len, "--slice and --field choose what --png draws: give --png FILE too");
        return -1;
    }
    if (o->field[0] != '\0' && strcmp(o->field, LIQ_FIELD_NAME) != 0) {
        snprintf(why, len, "--field %s: no such field (the stencil job has one: %s)", o->field,
                 LIQ_FIELD_NAME);
        return -1;
    }
    if (o->png[0] != '\0' && slice_k(o) >= o->n[o->slice_axis]) {
        snprintf(why, len, "--slice %c=%d: outside the %dx%dx%d grid (%c is 0..%d)",
                 "xyz"[o->slice_axis], o->slice_k, o->n[0], o->n[1], o->n[2],
                 "xyz"[o->slice_axis], o->n[o->slice_axis] - 1);
        return -1;
    }
    if (o->output[0] != '\0' && writable(o->output, "--output", why, len) != 0)
        return -1;
    if (liq_h5_is_path(o->output) &&
        (liq_h5_xmf_path(o->output, xmf, sizeof(xmf)) != 0 ||
         writable(xmf, "--output's XDMF file", why, len) != 0))
        return -1;
    if (o->png[0] != '\0' && writable(o->png, "--png", why, len) != 0)
        return -1;
    return 0;
}

static int
write_raw(const struct liq_opts *o, const struct kern_box *b, char *why, size_t len)
{
    FILE *fp = fopen(o->output, "wb");
    int ok = fp != NULL;

    for (int k = 1; ok && k <= b->nk; k++)
        for (int j = 1; ok && j <= b->nj; j++)
            ok = fwrite(kern_at(b, 1, j, k), sizeof(double), (size_t)b->ni, fp) == (size_t)b->ni;
    if (fp != NULL && fclose(fp) != 0)
        ok = 0;
    if (!ok) {
        snprintf(why, len, "cannot write %.400s: %s", o->output, strerror(errno));
        return -1;
    }
    return 0;
}

int
liq_fields_write(const struct liq_opts *o, const struct kern_box *field, uint64_t checksum,
                 char *why, size_t len)
{
    struct liq_io_meta m;
    struct liq_io_field f = { LIQ_FIELD_NAME, kern_at(field, 1, 1, 1), field->bi,
                              (long)field->bi * field->bj };
    int n[3] = { field->ni, field->nj, field->nk };

    memset(&m, 0, sizeof(m));
    liq_io_meta_grid(&m, n);
    m.iteration = o->iters;
    /* A Jacobi sweep is an explicit Euler step of u_t = lap(u) - rhs with
     * dt = h^2/6 (liq_coeffs); red-black sweeps count the same. */
    m.time = o->iters * m.spacing[0] * m.spacing[0] / 6.0;
    m.checksum = checksum;
    if (o->output[0] != '\0') {
        if (!liq_h5_is_path(o->output)) {
            if (write_raw(o, field, why, len) != 0)
                return -1;
        } else if (liq_h5_write(o->output, &m, &f, 1, why, len) != 0) {
            return -1;
        }
    }
    if (o->png[0] != '\0' && liq_png_write(o->png, &m, &f, o->slice_axis, slice_k(o), why, len) != 0)
        return -1;
    return 0;
}

static void
json_file(FILE *fp, int *first, const char *path, const char *kind)
{
    fputs(*first ? "" : ",", fp);
    *first = 0;
    fputs("{\"path\":", fp);
    wire_json_str(fp, path);
    fprintf(fp, ",\"kind\":\"%s\"}", kind);
}

void
liq_fields_json(FILE *fp, const struct liq_opts *o)
{
    char xmf[LIQ_PATH_MAX + 8];
    int first = 1;

    fputs("\"files\":[", fp);
    if (o->output[0] != '\0' && !liq_h5_is_path(o->output))
        json_file(fp, &first, o->output, "raw");
    if (liq_h5_is_path(o->output)) {
        json_file(fp, &first, o->output, "hdf5");
        if (liq_h5_xmf_path(o->output, xmf, sizeof(xmf)) == 0)
            json_file(fp, &first, xmf, "xdmf");
    }
    if (o->png[0] != '\0')
        json_file(fp, &first, o->png, "png");
    if (o->png[0] != '\0')
        fprintf(fp, "],\"slice\":{\"axis\":\"%c\",\"index\":%d,\"field\":\"%s\"},",
                "xyz"[o->slice_axis], slice_k(o), LIQ_FIELD_NAME);
    else
        fputs("],", fp);
}
