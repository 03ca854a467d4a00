/*
 * pvm_hints.c - the hints a PVM program's next run reads (issue 27,
 * Paradise: seed 003's "runtime reads the hints"), written by `vmrun
 * analyze --hints` from the traces of an earlier run.  A libconfig file:
 *
 *   pvm = {
 *       route = "direct";          # every task's PvmRoute
 *       fragsize = 16384;          # every task's PvmFragSize
 *       tasks = ( { path = "0/0"; route = "direct"; host = "@parent"; } );
 *   };
 *
 * A task's path names it the same way in every run: "0" is the task
 * started by hand, "0/k" the tasks of its k-th pvm_spawn call, "0/k/j"
 * those of their j-th, and so on (pvm_spawn passes LIQUIDVM_TASKPATH).
 * A tasks entry's route is its tasks' own; its host is where the spawn
 * call that makes them puts them when the caller named no host
 * ("@parent": on the spawner's host).
 *
 * The file is LIQUIDVM_HINTS, else <program>.hints beside the program's
 * executable; it is read once, at enrollment.  Options the program set
 * itself with pvm_setopt (pvm__ctx.opt_set), before or after, win.  A
 * file with errors is reported ("file:line: what", every error) and not
 * used at all.  This file calls only pvm_ctx.c, so enrollment may call it.
 */
#include "pvm_int.h"

#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PVM__HINTS_MAX_BYTES (1 << 20)
#define PVM__HINTS_MAX_TASKS 4096
/* PVM's limits for PvmFragSize (pvm_opt.c). */
#define PVM__HINT_FRAG_MIN 52
#define PVM__HINT_FRAG_MAX 1048576

struct hp {
    const char *name;
    char *err;
    size_t errlen, used;
    int nerr;
};

static void hp_fail(struct hp *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One more error, "name:line: what", after those already in err. */
static void
hp_fail(struct hp *p, int line, const char *fmt, ...)
{
    va_list ap;
    int n;

    p->nerr++;
    if (p->used + 1 >= p->errlen)
        return;
    n = snprintf(p->err + p->used, p->errlen - p->used, "%s%s:%d: ", p->used ? "; " : "",
                 p->name, line);
    if (n < 0 || (size_t)n >= p->errlen - p->used) {
        p->used = p->errlen - 1;
        return;
    }
    p->used += (size_t)n;
    va_start(ap, fmt);
    n = vsnprintf(p->err + p->used, p->errlen - p->used, fmt, ap);
    va_end(ap);
    p->used = n < 0 || (size_t)n >= p->errlen - p->used ? p->errlen - 1 : p->used + (size_t)n;
}

static int
route_of(const char *s)
{
    if (strcmp(s, "direct") == 0)
        return PvmRouteDirect;
    if (strcmp(s, "allow") == 0)
        return PvmAllowDirect;
    if (strcmp(s, "dontroute") == 0)
        return PvmDontRoute;
    return -1;
}

/* A route setting: its value, or -1 (an error is counted). */
static int
hp_route(struct hp *p, const config_setting_t *s)
{
    const char *v = config_setting_get_string(s);
    int r;

    if (v == NULL || (r = route_of(v)) < 0) {
        hp_fail(p, config_setting_source_line(s),
                "route must be \"direct\", \"allow\" or \"dontroute\"");
        return -1;
    }
    return r;
}

static int
path_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= PVM__HINT_PATH || s[0] == '/' || s[n - 1] == '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] == '/' && s[i + 1] != '/'))
            return 0;
    return 1;
}

static void
hp_task(struct hp *p, const config_setting_t *g, struct pvm__hint_task *t)
{
    int line = config_setting_source_line(g);

    t->route = -1;
    if (!config_setting_is_group(g)) {
        hp_fail(p, line, "each of tasks must be a group { path = ...; }");
        return;
    }
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *k = config_setting_name(s), *v;

        line = config_setting_source_line(s);
        if (strcmp(k, "path") == 0) {
            v = config_setting_get_string(s);
            if (v == NULL || !path_ok(v))
                hp_fail(p, line, "path must be a task path such as \"0/1\"");
            else
                snprintf(t->path, sizeof(t->path), "%s", v);
        } else if (strcmp(k, "route") == 0) {
            t->route = hp_route(p, s);
        } else if (strcmp(k, "host") == 0) {
            v = config_setting_get_string(s);
            if (v == NULL || v[0] == '\0' || strlen(v) >= sizeof(t->host))
                hp_fail(p, line, "host must be a host's name or \"@parent\"");
            else
                snprintf(t->host, sizeof(t->host), "%s", v);
        } else {
            hp_fail(p, line, "unknown setting %s in a task", k);
        }
    }
    if (t->path[0] == '\0')
        hp_fail(p, config_setting_source_line(g), "a task without its path");
}

int
pvm__hints_parse(const char *text, size_t len, const char *name, struct pvm__hints *h,
                 char *err, size_t errlen)
{
    struct hp p = { name, err, errlen, 0, 0 };
    config_t cf;
    const config_setting_t *pvm, *s;
    char *copy;

    memset(h, 0, sizeof(*h));
    h->route = -1;
    snprintf(h->file, sizeof(h->file), "%s", name);
    if (errlen > 0)
        err[0] = '\0';
    /* libconfig stops at a NUL and reads @include from wherever it points. */
    if (memchr(text, '\0', len) != NULL) {
        hp_fail(&p, 1, "a NUL byte: not a hints file");
        return -EINVAL;
    }
    if ((copy = malloc(len + 1)) == NULL)
        return -ENOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (strstr(copy, "@include") != NULL) {
        hp_fail(&p, 1, "@include is not allowed in a hints file");
        free(copy);
        return -EINVAL;
    }
    config_init(&cf);
    if (config_read_string(&cf, copy) != CONFIG_TRUE) {
        hp_fail(&p, config_error_line(&cf), "%s", config_error_text(&cf));
        config_destroy(&cf);
        free(copy);
        return -EINVAL;
    }
    free(copy);
    if ((pvm = config_lookup(&cf, "pvm")) == NULL || !config_setting_is_group(pvm)) {
        hp_fail(&p, pvm ? config_setting_source_line(pvm) : 1,
                "no group pvm = { ... }; (vmrun analyze --hints writes one)");
        config_destroy(&cf);
        return -EINVAL;
    }
    for (int i = 0; i < config_setting_length(pvm); i++) {
        const char *k;
        int line;

        s = config_setting_get_elem(pvm, (unsigned)i);
        k = config_setting_name(s);
        line = config_setting_source_line(s);
        if (strcmp(k, "route") == 0) {
            h->route = hp_route(&p, s);
        } else if (strcmp(k, "fragsize") == 0) {
            int v = config_setting_get_int(s);

            if (config_setting_type(s) != CONFIG_TYPE_INT || v < PVM__HINT_FRAG_MIN ||
                v > PVM__HINT_FRAG_MAX)
                hp_fail(&p, line, "fragsize must be an integer from %d to %d",
                        PVM__HINT_FRAG_MIN, PVM__HINT_FRAG_MAX);
            else
                h->fragsize = v;
        } else if (strcmp(k, "tasks") == 0) {
            int n = config_setting_length(s);

            if (!config_setting_is_list(s) && !(config_setting_is_array(s) && n == 0)) {
                hp_fail(&p, line, "tasks must be a list ( { path = ...; }, ... )");
                continue;
            }
            if (n > PVM__HINTS_MAX_TASKS) {
                hp_fail(&p, line, "more than %d tasks", PVM__HINTS_MAX_TASKS);
                continue;
            }
            free(h->task);
            h->ntask = 0;
            if (n > 0 && (h->task = calloc((size_t)n, sizeof(*h->task))) == NULL) {
                config_destroy(&cf);
                return -ENOMEM;
            }
            for (int j = 0; j < n; j++)
                hp_task(&p, config_setting_get_elem(s, (unsigned)j), &h->task[h->ntask++]);
        } else {
            hp_fail(&p, line, "unknown setting pvm.%s", k);
        }
    }
    config_destroy(&cf);
    if (p.nerr > 0) {
        pvm__hints_free(h);
        return -EINVAL;
    }
    return 0;
}

void
pvm__hints_free(struct pvm__hints *h)
{
    free(h->task);
    h->task = NULL;
    h->ntask = 0;
    for (int i = 0; i < h->napplied; i++)
        free(h->applied[i]);
    h->napplied = 0;
}

const char *
pvm__task_path(void)
{
    const char *s = getenv("LIQUIDVM_TASKPATH");

    return s != NULL && path_ok(s) ? s : "0";
}

static const struct pvm__hint_task *
hint_task(const char *path)
{
    const struct pvm__hints *h = pvm__ctx.hints;

    for (int i = 0; h != NULL && i < h->ntask; i++)
        if (strcmp(h->task[i].path, path) == 0)
            return &h->task[i];
    return NULL;
}

const char *
pvm__hints_host(const char *path)
{
    const struct pvm__hint_task *t = hint_task(path);

    return t != NULL && t->host[0] != '\0' ? t->host : NULL;
}

void
pvm__hints_note(const char *fmt, ...)
{
    struct pvm__hints *h = pvm__ctx.hints;
    char line[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (getenv("LIQUIDVM_HINTS_VERBOSE") != NULL)
        fprintf(stderr, "libpvm [t%x]: hints %s: %s\n", (unsigned)pvm__ctx.mytid,
                h ? h->file : "?", line);
    if (h == NULL || h->napplied >= (int)(sizeof(h->applied) / sizeof(h->applied[0])))
        return;
    if ((h->applied[h->napplied] = strdup(line)) != NULL)
        h->napplied++;
}

/* The file's text: 0 with *text malloc'ed, or -errno. */
static int
read_file(const char *path, char **text, size_t *len)
{
    struct stat st;
    /* A directory or a fifo is no hints file (libconfig's scanner would exit). */
    FILE *fp = wire_fopen_regular(path);
    int rc = 0;

    *text = NULL;
    if (fp == NULL)
        return -errno;
    if (fstat(fileno(fp), &st) != 0)
        rc = -errno;
    else if (st.st_size > PVM__HINTS_MAX_BYTES)
        rc = -EFBIG;
    else if ((*text = malloc((size_t)st.st_size + 1)) == NULL)
        rc = -ENOMEM;
    else if ((*len = fread(*text, 1, (size_t)st.st_size, fp)) != (size_t)st.st_size)
        rc = -EIO;
    fclose(fp);
    if (rc != 0) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

/* Apply one option unless the program gave it itself. */
static void
apply_opt(int what, int val, const char *name, const char *shown)
{
    if (pvm__ctx.opt_set & (1u << what)) {
        pvm__hints_note("%s: the program's own setting kept", name);
        return;
    }
    pvm__ctx.opt[what] = val;
    pvm__hints_note("%s=%s", name, shown);
}

void
pvm__hints_load(void)
{
    const char *env = getenv("LIQUIDVM_HINTS");
    char path[4200], err[1024], exe[4096], num[16];
    struct pvm__hints *h;
    char *text;
    size_t len = 0;
    ssize_t n;
    int rc, route;

    if (pvm__ctx.hints_loaded)
        return;
    pvm__ctx.hints_loaded = 1;
    if (env != NULL && env[0] != '\0') {
        snprintf(path, sizeof(path), "%s", env);
    } else {
        if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
            return;
        exe[n] = '\0';
        snprintf(path, sizeof(path), "%s.hints", exe);
        if (access(path, F_OK) != 0)
            return;             /* no hints beside the program: nothing to say */
    }
    if ((rc = read_file(path, &text, &len)) != 0) {
        fprintf(stderr, "libpvm [t%x]: hints %s: %s; no hints used\n", (unsigned)pvm__ctx.mytid,
                path, rc == -EINVAL ? "not a regular file" : strerror(-rc));
        return;
    }
    if ((h = calloc(1, sizeof(*h))) == NULL) {
        free(text);
        return;
    }
    rc = pvm__hints_parse(text, len, path, h, err, sizeof(err));
    free(text);
    if (rc != 0) {
        fprintf(stderr, "libpvm [t%x]: %s; no hints used\n", (unsigned)pvm__ctx.mytid,
                rc == -EINVAL ? err : strerror(-rc));
        free(h);
        return;
    }
    pvm__ctx.hints = h;
    const struct pvm__hint_task *t = hint_task(pvm__task_path());
    route = t != NULL && t->route >= 0 ? t->route : h->route;
    if (route >= 0)
        apply_opt(PvmRoute, route, "route",
                  route == PvmRouteDirect ? "direct"
                  : route == PvmDontRoute ? "dontroute" : "allow");
    if (h->fragsize > 0) {
        snprintf(num, sizeof(num), "%d", h->fragsize);
        apply_opt(PvmFragSize, h->fragsize, "fragsize", num);
    }
}
