/*
 * liq_fields.c - the job's final field in files (issue 25, "Fields in
 * and out"): --output as raw doubles or, for a .h5/.hdf5 name, as an HDF5
 * dataset with its attributes and an XDMF file beside it (liq_io.c), and
 * --png as the picture of a slice (liq_png.c); the checks that let a bad
 * slice, field name or unwritable path fail before the job runs; and the
 * report's list of the files written.
 */
#include "liq_master.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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

/*
 * 0 if path can be created or overwritten, else -1 with why set: tried,
 * not judged by its folder's permissions (root may write anywhere by them,
 * yet not into /proc or onto a read-only mount).  A file made to try is
 * removed; one that was there is opened for writing and left as it was.
 */
int
liq_writable(const char *path, const char *opt, char *why, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0644);

    if (fd >= 0) {
        close(fd);
        unlink(path);
        return 0;
    }
    if (errno == EEXIST && (fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
        close(fd);
        return 0;
    }
    snprintf(why, len, "%s %.400s: cannot write there: %s", opt, path, strerror(errno));
    return -1;
}

/* One file named by two outputs: the later would replace the earlier. */
static int
same_files(const struct liq_opts *o, const char *xmf, char *why, size_t len)
{
    const char *opt[] = { "--output", "--output's XDMF file", "--png", "--json", "--svg",
                          "--trace" };
    const char *path[] = { o->output, liq_h5_is_path(o->output) ? xmf : "", o->png,
                           strcmp(o->json, "-") == 0 ? "" : o->json, o->svg, o->trace };
    const int n = (int)(sizeof(path) / sizeof(path[0]));

    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            struct stat a, b;

            if (path[i][0] == '\0' || path[j][0] == '\0')
                continue;
            if (strcmp(path[i], path[j]) == 0 ||
                (stat(path[i], &a) == 0 && stat(path[j], &b) == 0 && a.st_dev == b.st_dev &&
                 a.st_ino == b.st_ino)) {
                snprintf(why, len, "%s and %s name the same file %.400s: one would replace "
                                   "the other", opt[i], opt[j], path[j]);
                return -1;
            }
        }
    return 0;
}

FILE *
liq_report_open(const char *who, const char *opt, const char *path)
{
    FILE *fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");

    if (fp == NULL)
        fprintf(stderr, "%s: %s %s: %s\n", who, opt, path, strerror(errno));
    return fp;
}

int
liq_report_close(const char *who, const char *opt, const char *path, FILE *fp)
{
    int rc = wire_out_close(fp);

    if (rc == 0)
        return 0;
    fprintf(stderr, "%s: %s %s: cannot write: %s\n", who, opt,
            strcmp(path, "-") == 0 ? "(standard output)" : path, strerror(-rc));
    return -1;
}

int
liq_fields_check(const struct liq_opts *o, char *why, size_t len)
{
    const struct liquid *lq = liq_opts_program(o);
    char xmf[LIQ_PATH_MAX + 8], err[1024];

    if (o->png[0] == '\0' && (o->slice_k >= 0 || o->slice_axis != LIQ_AXIS_Z || o->field[0])) {
        snprintf(why, len, "--slice and --field choose what --png draws: give --png FILE too");
        return -1;
    }
    if (o->field[0] != '\0' && lq == NULL && strcmp(o->field, LIQ_FIELD_NAME) != 0) {
        snprintf(why, len, "--field %s: no such field (the stencil job has one: %s)", o->field,
                 LIQ_FIELD_NAME);
        return -1;
    }
    if (o->field[0] != '\0' && lq != NULL && liquid_field_index(lq, o->field) < 0) {
        size_t n = (size_t)snprintf(why, len, "--field %s: no such field (%s has:", o->field,
                                    lq->name);

        for (int f = 0; f < lq->nf && n < len; f++)
            n += (size_t)snprintf(why + n, len - n, " %s", lq->f[f].name);
        if (n < len)
            snprintf(why + n, len - n, ")");
        return -1;
    }
    if (o->png[0] != '\0' && slice_k(o) >= o->n[o->slice_axis]) {
        snprintf(why, len, "--slice %c=%d: outside the %dx%dx%d grid (%c is 0..%d)",
                 "xyz"[o->slice_axis], o->slice_k, o->n[0], o->n[1], o->n[2],
                 "xyz"[o->slice_axis], o->n[o->slice_axis] - 1);
        return -1;
    }
    if (o->output[0] != '\0' && liq_writable(o->output, "--output", why, len) != 0)
        return -1;
    if (liq_h5_is_path(o->output) &&
        (liq_h5_xmf_path(o->output, xmf, sizeof(xmf)) != 0 ||
         liq_writable(xmf, "--output's XDMF file", why, len) != 0))
        return -1;
    if (o->png[0] != '\0' && liq_writable(o->png, "--png", why, len) != 0)
        return -1;
    /* The reports, written after the job: a bad path must not cost it. */
    if ((o->json[0] != '\0' && strcmp(o->json, "-") != 0 &&
         liq_writable(o->json, "--json", why, len) != 0) ||
        (o->svg[0] != '\0' && liq_writable(o->svg, "--svg", why, len) != 0) ||
        (o->trace[0] != '\0' && liq_writable(o->trace, "--trace", why, len) != 0))
        return -1;
    if (same_files(o, xmf, why, len) != 0)
        return -1;
    /* The module that writes them, loaded now: not after the job. */
    if ((liq_h5_is_path(o->output) || o->png[0] != '\0') && liq_io_ready(err, sizeof(err)) != 0) {
        snprintf(why, len, "%s: %.900s", o->png[0] != '\0' ? "--png" : "--output", err);
        return -1;
    }
    return 0;
}

static int
write_raw(const struct liq_opts *o, const struct liq_field_set *set, char *why, size_t len)
{
    FILE *fp = fopen(o->output, "wb");
    int ok = fp != NULL;

    for (int f = 0; ok && f < set->nf; f++) {
        const struct kern_box *b = set->box[f];

        for (int k = 1; ok && k <= b->nk; k++)
            for (int j = 1; ok && j <= b->nj; j++)
                ok = fwrite(kern_at(b, 1, j, k), sizeof(double), (size_t)b->ni, fp) ==
                     (size_t)b->ni;
    }
    if (fp != NULL && fclose(fp) != 0)
        ok = 0;
    if (!ok) {
        snprintf(why, len, "cannot write %.400s: %s", o->output, strerror(errno));
        return -1;
    }
    return 0;
}

int
liq_fields_write_set(const struct liq_opts *o, const struct liq_field_set *set,
                     uint64_t checksum, char *why, size_t len)
{
    struct liq_io_meta m;
    struct liq_io_field f[LIQUID_MAX_FIELDS];
    const struct kern_box *b0 = set->box[0];
    int n[3] = { b0->ni, b0->nj, b0->nk }, pic = 0;

    memset(&m, 0, sizeof(m));
    liq_io_meta_grid(&m, n);
    if (set->geom) {
        memcpy(m.origin, set->origin, sizeof(m.origin));
        memcpy(m.spacing, set->spacing, sizeof(m.spacing));
    }
    m.iteration = set->iteration;
    m.time = set->time;
    m.checksum = checksum;
    for (int i = 0; i < set->nf; i++) {
        const struct kern_box *b = set->box[i];

        f[i].name = set->name[i];
        f[i].data = kern_at(b, 1, 1, 1);
        f[i].sy = b->bi;
        f[i].sz = (long)b->bi * b->bj;
        if (o->field[0] != '\0' && strcmp(o->field, set->name[i]) == 0)
            pic = i;
    }
    if (o->output[0] != '\0') {
        if (!liq_h5_is_path(o->output)) {
            if (write_raw(o, set, why, len) != 0)
                return -1;
        } else if (liq_h5_write(o->output, &m, f, set->nf, why, len) != 0) {
            return -1;
        }
    }
    if (o->png[0] != '\0' &&
        liq_png_write(o->png, &m, &f[pic], o->slice_axis, slice_k(o), why, len) != 0)
        return -1;
    return 0;
}

int
liq_fields_write(const struct liq_opts *o, const struct kern_box *field, uint64_t checksum,
                 char *why, size_t len)
{
    struct liq_field_set set;
    double h = 1.0 / ((field->ni > field->nj ? (field->ni > field->nk ? field->ni : field->nk)
                                             : (field->nj > field->nk ? field->nj : field->nk)) +
                      1);

    memset(&set, 0, sizeof(set));
    set.nf = 1;
    set.name[0] = LIQ_FIELD_NAME;
    set.box[0] = field;
    set.iteration = o->iters;
    /* A Jacobi sweep is an explicit Euler step of u_t = lap(u) - rhs with
     * dt = h^2/6 (liq_coeffs); red-black sweeps count the same. */
    set.time = o->iters * h * h / 6.0;
    return liq_fields_write_set(o, &set, checksum, why, len);
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
