/*
 * vmrun_farm_items.c - what `vmrun farm` runs: the items (--range as seq(1)
 * counts, --items one per line, --grid points in Morton order), the
 * command's check before anything starts, the placeholders {} {x} {y} {z},
 * and JSON text of arbitrary bytes.  No PVM: the master and the workers
 * both use it.
 */
#include "vmrun_farm.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liq_fractile.h"
#include "wire.h"

/* Most file errors reported in one run; after them, "and N more". */
#define FARM_ERRS_MAX 8

static void
errf(char *err, size_t errlen, const char *fmt, ...)
{
    size_t used = strlen(err);
    va_list ap;

    if (used + 2 >= errlen)
        return;
    if (used > 0)
        err[used++] = '\n', err[used] = '\0';
    va_start(ap, fmt);
    vsnprintf(err + used, errlen - used, fmt, ap);
    va_end(ap);
}

/* A decimal number; *decimals: digits after its point. */
static int
parse_num(const char *s, size_t len, double *v, int *decimals)
{
    char buf[64], *end;
    const char *dot;

    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (!strchr("+-.0123456789", buf[i]))
            return -1;
    errno = 0;
    *v = strtod(buf, &end);
    if (*end != '\0' || errno != 0 || !isfinite(*v))
        return -1;
    dot = strchr(buf, '.');
    *decimals = dot ? (int)strlen(dot + 1) : 0;
    return 0;
}

int
farm_items_range(struct farm_items *it, const char *spec, char *err, size_t errlen)
{
    const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    double a, b, step = 1;
    int da, db, ds = 0;

    memset(it, 0, sizeof(*it));
    err[0] = '\0';
    if (c1 == NULL || (c2 && strchr(c2 + 1, ':')) ||
        parse_num(spec, (size_t)(c1 - spec), &a, &da) != 0 ||
        parse_num(c1 + 1, c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1), &b, &db) != 0 ||
        (c2 && parse_num(c2 + 1, strlen(c2 + 1), &step, &ds) != 0)) {
        errf(err, errlen, "--range %s: not A:B or A:B:STEP (numbers, as seq counts)", spec);
        return -1;
    }
    (void)db;
    if (step == 0) {
        errf(err, errlen, "--range %s: the step is 0", spec);
        return -1;
    }
    /* Items are doubles: past 2^53 neighbours would be the same item. */
    if (fabs(a) >= FARM_EXACT_MAX || fabs(b) >= FARM_EXACT_MAX || fabs(step) >= FARM_EXACT_MAX) {
        errf(err, errlen, "--range %s: numbers from 2^53 (9007199254740992) on are not exact "
                          "as items", spec);
        return -1;
    }
    /* seq(1): A, A+STEP, ... while not past B, counted exactly in units of
     * the decimals written (0:1:0.1 ends at 1 despite binary fractions,
     * 0:0.99999999999:0.1 at 0.9); else within a few ulps. */
    int dec = da > db ? da : db;
    double count, scale = pow(10, dec > ds ? dec : ds);

    if (fmax(fmax(fabs(a), fabs(b)), fabs(step)) * scale < 0x1p62) {
        long long ia = llround(a * scale), ib = llround(b * scale), is = llround(step * scale);

        if (is == 0)
            count = 0;
        else if ((is > 0 && ib < ia) || (is < 0 && ib > ia))
            count = 0;
        else
            count = (double)((ib - ia) / is) + 1;
    } else {
        double q = (b - a) / step;

        count = floor(q + 1e-12 * fmax(1, fabs(q))) + 1;
    }

    if (count < 1) {
        errf(err, errlen, "--range %s: empty (%s)", spec,
             step > 0 ? "A is above B" : "A is below B and the step is negative");
        return -1;
    }
    if (count > 1e9) {
        errf(err, errlen, "--range %s: %.0f items; at most 1000000000", spec, count);
        return -1;
    }
    it->kind = FARM_RANGE;
    it->n = (uint64_t)count;
    it->a = a;
    it->step = step;
    it->decimals = da > ds ? da : ds;
    return 0;
}

/* The next line of fp into buf (at most cap - 1 bytes kept, the rest of a
 * longer line read and dropped, *len its whole length): 1, or 0 at the
 * end.  *total counts the bytes read. */
static int
next_line(FILE *fp, char *buf, size_t cap, size_t *len, uint64_t *total)
{
    size_t n = 0;
    int c;

    while ((c = getc(fp)) != EOF) {
        ++*total;
        if (c == '\n')
            break;
        if (n + 1 < cap)
            buf[n] = (char)c;
        n++;
        if (*total > FARM_ITEMS_BYTES_MAX)
            break;
    }
    if (c == EOF && n == 0)
        return 0;
    buf[n + 1 < cap ? n : cap - 1] = '\0';
    *len = n;
    return 1;
}

int
farm_items_file(struct farm_items *it, const char *path, char *err, size_t errlen)
{
    FILE *fp;
    struct stat st;
    char *line;
    size_t n = 0, alloc = 0, len;
    uint64_t total = 0;
    int lineno = 0, nerr = 0;

    memset(it, 0, sizeof(*it));
    err[0] = '\0';
    it->kind = FARM_ITEMS;
    if ((fp = fopen(path, "r")) == NULL) {
        errf(err, errlen, "--items %s: %s", path, strerror(errno));
        return -1;
    }
    /* A file or a pipe (<(ls *.dat)); a device has no end. */
    if (fstat(fileno(fp), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
        errf(err, errlen, "--items %s: not a file of items (a %s)", path,
             S_ISDIR(st.st_mode) ? "directory" : "device or socket");
        fclose(fp);
        return -1;
    }
    if ((line = malloc(FARM_ITEM_MAX + 1)) == NULL)
        goto nomem;
    while (next_line(fp, line, FARM_ITEM_MAX + 1, &len, &total)) {
        const char *what = NULL;

        lineno++;
        if (total > FARM_ITEMS_BYTES_MAX) {
            errf(err, errlen, "%s: more than %d MiB of items", path, FARM_ITEMS_BYTES_MAX >> 20);
            nerr = FARM_ERRS_MAX + 1;
            break;
        }
        if (len > 0 && len < FARM_ITEM_MAX && line[len - 1] == '\r')
            line[--len] = '\0';
        if (len == 0)
            continue; /* blank lines are no items */
        if (len >= FARM_ITEM_MAX)
            what = "longer than 4095 bytes";
        else if (memchr(line, '\0', len) != NULL)
            what = "holds a NUL byte (not a text file?)";
        else if (!wire_utf8_ok((const unsigned char *)line, len))
            what = "is not UTF-8 text";
        if (what != NULL) {
            if (++nerr <= FARM_ERRS_MAX)
                errf(err, errlen, "%s:%d: the item %s", path, lineno, what);
            continue;
        }
        if (nerr > 0)
            continue;
        if (n == alloc) {
            size_t na = alloc ? 2 * alloc : 64;
            char **t = realloc(it->text, na * sizeof(*t));

            if (t == NULL)
                goto nomem;
            it->text = t;
            alloc = na;
        }
        if ((it->text[n] = strdup(line)) == NULL)
            goto nomem;
        it->n = ++n;
    }
    if (ferror(fp))
        errf(err, errlen, "%s: read error: %s", path, strerror(errno)), nerr++;
    free(line);
    fclose(fp);
    if (nerr > FARM_ERRS_MAX && total <= FARM_ITEMS_BYTES_MAX)
        errf(err, errlen, "%s: and %d more errors", path, nerr - FARM_ERRS_MAX);
    if (nerr == 0 && n == 0)
        errf(err, errlen, "%s: no items (every line is empty)", path), nerr++;
    if (nerr > 0) {
        farm_items_free(it);
        return -1;
    }
    return 0;
nomem:
    free(line);
    fclose(fp);
    farm_items_free(it);
    errf(err, errlen, "%s: out of memory", path);
    return -1;
}

int
farm_items_grid(struct farm_items *it, const char *spec, char *err, size_t errlen)
{
    const char *p = spec;
    uint64_t n = 1;

    memset(it, 0, sizeof(*it));
    err[0] = '\0';
    it->kind = FARM_GRID;
    it->g[0] = it->g[1] = it->g[2] = 1;
    for (;;) {
        char *end;
        long v;

        errno = 0;
        v = strtol(p, &end, 10);
        if (it->dims == 3 || end == p || *p == '-' || *p == '+' || errno != 0 || v < 1 ||
            v > (1 << 21) || (*end != '\0' && *end != 'x')) {
            it->dims = 0;
            break;
        }
        it->g[it->dims++] = (int)v;
        n *= (uint64_t)v;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    if (it->dims < 2) {
        errf(err, errlen, "--grid %s: not NXxNY or NXxNYxNZ (each 1..2097152)", spec);
        return -1;
    }
    if (n > 100000000) {
        errf(err, errlen, "--grid %s: %llu points; at most 100000000", spec,
             (unsigned long long)n);
        return -1;
    }
    it->n = n;
    if ((it->order = malloc(n * sizeof(uint64_t))) == NULL) {
        errf(err, errlen, "--grid %s: out of memory", spec);
        return -1;
    }
    liq_fractile_morton(it->g, it->order);
    return 0;
}

void
farm_items_free(struct farm_items *it)
{
    if (it->text != NULL)
        for (uint64_t i = 0; i < it->n; i++)
            free(it->text[i]);
    free(it->text);
    free(it->order);
    it->text = NULL;
    it->order = NULL;
}

uint64_t
farm_items_at(const struct farm_items *it, uint64_t p)
{
    return it->kind == FARM_GRID ? it->order[p] : p;
}

void
farm_items_text(const struct farm_items *it, uint64_t idx, char *buf, size_t len, int xyz[3])
{
    xyz[0] = xyz[1] = xyz[2] = 0;
    switch (it->kind) {
    case FARM_RANGE: {
        double v = it->a + (double)idx * it->step;

        if (it->decimals == 0 && fabs(v) < 9e15)
            snprintf(buf, len, "%lld", (long long)llround(v));
        else
            snprintf(buf, len, "%.*f", it->decimals, v);
        break;
    }
    case FARM_ITEMS:
        snprintf(buf, len, "%s", it->text[idx]);
        break;
    case FARM_GRID:
        xyz[0] = (int)(idx % (uint64_t)it->g[0]);
        xyz[1] = (int)(idx / (uint64_t)it->g[0] % (uint64_t)it->g[1]);
        xyz[2] = (int)(idx / ((uint64_t)it->g[0] * (uint64_t)it->g[1]));
        if (it->dims == 3)
            snprintf(buf, len, "%d,%d,%d", xyz[0], xyz[1], xyz[2]);
        else
            snprintf(buf, len, "%d,%d", xyz[0], xyz[1]);
        break;
    }
}

void
farm_items_json(FILE *fp, const struct farm_items *it, uint64_t idx)
{
    char buf[FARM_ITEM_MAX];
    int xyz[3];

    farm_items_text(it, idx, buf, sizeof(buf), xyz);
    switch (it->kind) {
    case FARM_RANGE:
        fputs(buf, fp);
        break;
    case FARM_ITEMS:
        wire_json_bytes(fp, buf, strlen(buf));
        break;
    case FARM_GRID:
        fprintf(fp, "[%s]", buf);
        break;
    }
}

/* Is name an executable regular file? */
static int
executable(const char *name)
{
    struct stat st;

    return stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0;
}

int
farm_command_has_placeholder(char *const *argv, int argc)
{
    for (int i = 0; i < argc; i++)
        if (strstr(argv[i], "{}") || strstr(argv[i], "{x}") || strstr(argv[i], "{y}") ||
            strstr(argv[i], "{z}"))
            return 1;
    return 0;
}

int
farm_command_check(char *const *argv, int argc, enum farm_kind kind, int dims, char *why,
                   size_t len)
{
    const char *cmd = argv[0];

    for (int i = 0; i < argc; i++) {
        const char *bad = NULL;

        if (kind != FARM_GRID && (strstr(argv[i], "{x}") || strstr(argv[i], "{y}")))
            bad = "{x} and {y} need --grid";
        else if (strstr(argv[i], "{z}") && !(kind == FARM_GRID && dims == 3))
            bad = "{z} needs a 3D --grid (NXxNYxNZ)";
        if (bad != NULL) {
            snprintf(why, len, "argument '%s': %s", argv[i], bad);
            return -1;
        }
    }
    if (strchr(cmd, '/') != NULL) {
        if (!executable(cmd)) {
            snprintf(why, len, "%s: %s", cmd,
                     access(cmd, F_OK) != 0 ? "command not found" : "not an executable file");
            return -1;
        }
        return 0;
    }
    const char *path = getenv("PATH");

    if (path == NULL || *path == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t dl = e ? (size_t)(e - p) : strlen(p);
        char full[4096];

        snprintf(full, sizeof(full), "%.*s/%s", (int)(dl ? dl : 1), dl ? p : ".", cmd);
        if (executable(full))
            return 0;
        p += dl + (e != NULL);
    }
    snprintf(why, len, "%s: command not found on PATH", cmd);
    return -1;
}

int
farm_expand(const char *arg, const char *item, const int xyz[3], char *out, size_t len)
{
    size_t o = 0;

    for (const char *p = arg; *p;) {
        char num[16];
        const char *put = NULL;
        size_t skip = 1;

        if (strncmp(p, "{}", 2) == 0)
            put = item, skip = 2;
        else if (p[0] == '{' && p[1] >= 'x' && p[1] <= 'z' && p[2] == '}') {
            snprintf(num, sizeof(num), "%d", xyz[p[1] - 'x']);
            put = num, skip = 3;
        }
        if (put != NULL) {
            size_t l = strlen(put);

            if (o + l >= len)
                return -1;
            memcpy(out + o, put, l);
            o += l;
        } else {
            if (o + 1 >= len)
                return -1;
            out[o++] = *p;
        }
        p += skip;
    }
    out[o] = '\0';
    return 0;
}
