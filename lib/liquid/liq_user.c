/*
 * liq_user.c - the description of a program's own stencil (liquid.h):
 * liquid_new and its setters, each checking what it is given, and the
 * figures the runtime derives from a description.
 */
#include "liq_user.h"
#include "liq.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct liquid *liq_user_spec;

int
liquid_fail(struct liquid *lq, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(lq->err, sizeof(lq->err), fmt, ap);
    va_end(ap);
    return -1;
}

int
liquid_setup(struct liquid *lq, liquid_setup_fn fn, void *arg)
{
    lq->setup = fn;
    lq->sarg = arg;
    return 0;
}

int
liq_user_setup(struct liquid *lq, const int n[3], int iters)
{
    if (lq->setup == NULL)
        return 0;
    lq->err[0] = '\0';
    if (lq->setup(lq, n, iters, lq->sarg) != 0) {
        if (lq->err[0] == '\0')
            liquid_fail(lq, "%s: its setup failed for a %dx%dx%d grid", lq->name, n[0], n[1], n[2]);
        return -1;
    }
    return 0;
}

static int
liq_name_ok(const char *s)
{
    size_t n;

    if (s == NULL || (!isalpha((unsigned char)s[0]) && s[0] != '_'))
        return 0;
    for (n = 0; s[n] != '\0'; n++)
        if (!isalnum((unsigned char)s[n]) && s[n] != '_')
            return 0;
    return n < LIQUID_NAME_MAX;
}

struct liquid *
liquid_new(const char *name)
{
    struct liquid *lq = calloc(1, sizeof(*lq));

    if (lq == NULL)
        return NULL;
    snprintf(lq->name, sizeof(lq->name), "%s", name != NULL ? name : "liquid");
    for (int a = 0; a < 3; a++) {
        lq->n[a] = 32;
        lq->len[a] = 1;
        lq->reach[a] = 1;
    }
    lq->dt = 1;
    lq->until = -1;
    return lq;
}

void
liquid_free(struct liquid *lq)
{
    if (lq == NULL)
        return;
    for (int f = 0; f < LIQUID_MAX_FIELDS; f++) {
        free(lq->result[f]);
        free(lq->input[f]);
    }
    if (liq_user_spec == lq)
        liq_user_spec = NULL;
    free(lq);
}

const char *
liquid_error(const struct liquid *lq)
{
    return lq == NULL ? "no job description (out of memory)" : lq->err;
}

int
liquid_grid(struct liquid *lq, int nx, int ny, int nz)
{
    const int n[3] = { nx, ny, nz };

    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || n[a] > 65536)
            return liquid_fail(lq, "grid: extent %d along %c is not in 1..65536", n[a], "xyz"[a]);
    memcpy(lq->n, n, sizeof(n));
    return 0;
}

int
liquid_domain(struct liquid *lq, double lx, double ly, double lz)
{
    const double l[3] = { lx, ly, lz };

    for (int a = 0; a < 3; a++)
        if (!(l[a] > 0) || !isfinite(l[a]))
            return liquid_fail(lq, "domain: length %g along %c is not a positive number", l[a],
                           "xyz"[a]);
    memcpy(lq->len, l, sizeof(l));
    return 0;
}

int
liquid_field(struct liquid *lq, const char *name)
{
    if (!liq_name_ok(name))
        return liquid_fail(lq, "field: \"%s\" is not a name ([A-Za-z_][A-Za-z0-9_]*, under %d "
                           "characters)", name ? name : "(null)", LIQUID_NAME_MAX);
    if (liquid_field_index(lq, name) >= 0)
        return liquid_fail(lq, "field: \"%s\" is declared twice", name);
    if (lq->nf == LIQUID_MAX_FIELDS)
        return liquid_fail(lq, "field: more than %d fields", LIQUID_MAX_FIELDS);
    snprintf(lq->f[lq->nf].name, LIQUID_NAME_MAX, "%s", name);
    return lq->nf++;
}

int
liquid_field_const(struct liquid *lq, int field)
{
    if (field < 0 || field >= lq->nf)
        return liquid_fail(lq, "field_const: no field %d (there are %d)", field, lq->nf);
    lq->f[field].konst = 1;
    return 0;
}

int
liquid_field_index(const struct liquid *lq, const char *name)
{
    for (int f = 0; name != NULL && f < lq->nf; f++)
        if (strcmp(lq->f[f].name, name) == 0)
            return f;
    return -1;
}

int
liquid_reach(struct liquid *lq, int rx, int ry, int rz, enum liquid_shape shape)
{
    const int r[3] = { rx, ry, rz };

    if (shape != LIQUID_STAR && shape != LIQUID_BOX)
        return liquid_fail(lq, "reach: unknown shape %d", (int)shape);
    for (int a = 0; a < 3; a++)
        if (r[a] < 0 || r[a] > LIQUID_MAX_RADIUS)
            return liquid_fail(lq, "reach: radius %d along %c: the runtime serves radii 0 to %d",
                               r[a], "xyz"[a], LIQUID_MAX_RADIUS);
    memcpy(lq->reach, r, sizeof(r));
    lq->shape = shape;
    return 0;
}

int
liquid_levels(struct liquid *lq, enum liquid_levels levels)
{
    if (levels != LIQUID_TWO_LEVEL && levels != LIQUID_THREE_LEVEL && levels != LIQUID_RED_BLACK)
        return liquid_fail(lq, "levels: unknown scheme %d", (int)levels);
    lq->levels = levels;
    return 0;
}

int
liquid_timestep(struct liquid *lq, double dt)
{
    if (!(dt > 0) || !isfinite(dt))
        return liquid_fail(lq, "timestep: %g is not a positive number", dt);
    lq->dt = dt;
    return 0;
}

static int
liq_faces_ok(struct liquid *lq, int faces)
{
    if (faces <= 0 || (faces & ~LIQUID_ALL) != 0)
        return liquid_fail(lq, "boundary: face mask 0x%x is not a set of LIQUID_XLO..LIQUID_ZHI",
                       (unsigned)faces);
    return 0;
}

int
liquid_boundary(struct liquid *lq, int faces, enum liquid_bc bc, double value)
{
    if (liq_faces_ok(lq, faces) != 0)
        return -1;
    if (bc != LIQUID_DIRICHLET && bc != LIQUID_NEUMANN && bc != LIQUID_PERIODIC)
        return liquid_fail(lq, "boundary: unknown condition %d", (int)bc);
    if (!isfinite(value))
        return liquid_fail(lq, "boundary: value %g is not finite", value);
    for (int s = 0; s < 6; s++)
        if (faces & (1 << s)) {
            lq->bc[s] = bc;
            lq->bcval[s] = value;
            lq->bcfn[s] = NULL;
        }
    return 0;
}

int
liquid_boundary_fn(struct liquid *lq, int faces, liquid_value_fn fn, void *arg)
{
    if (liq_faces_ok(lq, faces) != 0)
        return -1;
    if (fn == NULL)
        return liquid_fail(lq, "boundary: no function");
    for (int s = 0; s < 6; s++)
        if (faces & (1 << s)) {
            lq->bc[s] = LIQUID_DIRICHLET;
            lq->bcfn[s] = fn;
            lq->bcarg[s] = arg;
        }
    return 0;
}

int
liquid_init(struct liquid *lq, int field, liquid_value_fn fn, void *arg)
{
    if (field < 0 || field >= lq->nf)
        return liquid_fail(lq, "init: no field %d (the job has %d)", field, lq->nf);
    lq->f[field].init = fn;
    lq->f[field].arg = arg;
    return 0;
}

int
liquid_update(struct liquid *lq, liquid_update_fn fn, void *arg)
{
    if (fn == NULL)
        return liquid_fail(lq, "update: no function");
    lq->update = fn;
    lq->uarg = arg;
    return 0;
}

int
liquid_reduce(struct liquid *lq, const char *name, enum liquid_op op, int field,
              liquid_reduce_fn fn, void *arg, int every)
{
    struct liq_user_red *r;

    if (!liq_name_ok(name))
        return liquid_fail(lq, "reduce: \"%s\" is not a name", name ? name : "(null)");
    for (int i = 0; i < lq->nred; i++)
        if (strcmp(lq->red[i].name, name) == 0)
            return liquid_fail(lq, "reduce: \"%s\" is declared twice", name);
    if (lq->nred == LIQUID_MAX_REDUCTIONS)
        return liquid_fail(lq, "reduce: more than %d reductions", LIQUID_MAX_REDUCTIONS);
    if (op != LIQUID_SUM && op != LIQUID_MAX && op != LIQUID_MIN && op != LIQUID_NORM2)
        return liquid_fail(lq, "reduce %s: unknown operation %d", name, (int)op);
    if (fn == NULL && (field < 0 || field >= lq->nf))
        return liquid_fail(lq, "reduce %s: no field %d (the job has %d)", name, field, lq->nf);
    if (every < 0)
        return liquid_fail(lq, "reduce %s: every %d is not a number of iterations >= 0", name,
                       every);
    r = &lq->red[lq->nred];
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->op = op;
    r->field = field;
    r->fn = fn;
    r->arg = arg;
    r->every = every;
    return lq->nred++;
}

int
liquid_until(struct liquid *lq, const char *name, double tol)
{
    for (int i = 0; i < lq->nred; i++)
        if (strcmp(lq->red[i].name, name) == 0) {
            if (!(tol >= 0) || !isfinite(tol))
                return liquid_fail(lq, "until %s: tolerance %g is not a number >= 0", name, tol);
            lq->until = i;
            lq->tol = tol;
            return 0;
        }
    return liquid_fail(lq, "until: no reduction \"%s\"", name ? name : "(null)");
}

/* A program's own job takes these of the runtime's options (liq_master.c
 * parses them); a program may not declare an option under one of them. */
const char *const liq_user_runtime_opts[] = {
    "grid", "iters", "quanta", "hosts", "tasks-per-host", "decomp", "verify", "json",
    "output", "seed", "network", "probe-seconds", "quiet", "balance", "epoch", "heavy",
    "min-gain", "reclaim", "reclaim-below", "reclaim-after", "rejoin-above", "rejoin-after",
    "svg", "halo", "png", "slice", "field", "check-reach", "input", "trace", "hints",
    "checkpoint-every", "checkpoint", "checkpoint-interval", "checkpoint-share", "resume",
    "worker-timeout", NULL
};

/* 1 if name ('_' or '-' style) is one of them, or job or help. */
static int
runtime_key(const char *name)
{
    char key[64];

    snprintf(key, sizeof(key), "%s", name);
    for (char *c = key; *c; c++)
        if (*c == '_')
            *c = '-';
    if (strcmp(key, "job") == 0 || strcmp(key, "help") == 0)
        return 1;
    for (const char *const *k = liq_user_runtime_opts; *k != NULL; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

static int
liq_option(struct liquid *lq, const char *name, void *var, enum liq_user_opt_kind kind,
           const char *help)
{
    struct liq_user_opt *o;
    char plain[LIQUID_NAME_MAX];

    /* Options may say-it-with-dashes too. */
    snprintf(plain, sizeof(plain), "%s", name != NULL ? name : "");
    for (char *c = plain; *c; c++)
        if (*c == '-')
            *c = '_';
    if (!liq_name_ok(plain) || strlen(name) >= LIQUID_NAME_MAX - 1)
        return liquid_fail(lq, "option: \"%s\" is not a name", name ? name : "(null)");
    if (var == NULL)
        return liquid_fail(lq, "option: --%s has no variable to set", name);
    if (runtime_key(name))
        return liquid_fail(lq, "option: --%s is the runtime's own (liquid(3), OPTIONS): "
                               "name the program's another way", name);
    for (int i = 0; i < lq->nopt; i++)
        if (strcmp(lq->opt[i].name, name) == 0)
            return liquid_fail(lq, "option: --%s is declared twice", name);
    if (lq->nopt == LIQ_USER_OPTS)
        return liquid_fail(lq, "option: more than %d options", LIQ_USER_OPTS);
    o = &lq->opt[lq->nopt++];
    snprintf(o->name, sizeof(o->name), "%s", name);
    o->var = var;
    o->kind = kind;
    o->help = help != NULL ? help : "";
    return 0;
}

int
liquid_option_int(struct liquid *lq, const char *name, int *var, const char *help)
{
    return liq_option(lq, name, var, LIQ_OPT_INT, help);
}

int
liquid_option_double(struct liquid *lq, const char *name, double *var, const char *help)
{
    return liq_option(lq, name, var, LIQ_OPT_DOUBLE, help);
}

int
liquid_option_flag(struct liquid *lq, const char *name, int *var, const char *help)
{
    return liq_option(lq, name, var, LIQ_OPT_FLAG, help);
}

int
liquid_keep(struct liquid *lq)
{
    lq->keep = 1;
    return 0;
}

int
liquid_iterations(const struct liquid *lq)
{
    return lq->iters_done;
}

int
liquid_reduction(const struct liquid *lq, const char *name, double *value)
{
    for (int i = 0; i < lq->nred; i++)
        if (strcmp(lq->red[i].name, name) == 0 && lq->redset[i]) {
            *value = lq->redval[i];
            return 0;
        }
    return -1;
}

const double *
liquid_result(const struct liquid *lq, int field)
{
    return field >= 0 && field < lq->nf ? lq->result[field] : NULL;
}

int
liquid_is_master(const struct liquid *lq)
{
    return lq->master;
}

/* ---- what the runtime derives ---- */

int
liq_user_check(struct liquid *lq)
{
    if (lq->nf == 0)
        return liquid_fail(lq, "%s: no field (liquid_field)", lq->name);
    if (lq->update == NULL)
        return liquid_fail(lq, "%s: no update (liquid_update)", lq->name);
    /* A rule checked only after the last iteration never stops the job. */
    if (lq->until >= 0 && lq->red[lq->until].every == 0)
        return liquid_fail(lq, "%s: liquid_until on reduction %s, which is computed only after "
                               "the last iteration (every 0): it could not stop the job; give "
                               "it an every", lq->name, lq->red[lq->until].name);
    if (liq_user_nboxes(lq) == 0)
        return liquid_fail(lq, "%s: every field is constant (liquid_field_const): the update "
                           "has nothing to write", lq->name);
    for (int a = 0; a < 3; a++) {
        int lo = lq->bc[2 * a] == LIQUID_PERIODIC, hi = lq->bc[2 * a + 1] == LIQUID_PERIODIC;

        if (lo != hi)
            return liquid_fail(lq, "%s: periodic boundary on one face of %c only: periodic faces "
                               "come in pairs", lq->name, "xyz"[a]);
    }
    return 0;
}

/* FNV-1a over the parts of a description every process must agree on. */
static uint32_t
liq_fnv(uint32_t h, const void *p, size_t n)
{
    const unsigned char *c = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 16777619u;
    return h;
}

uint32_t
liq_user_fingerprint(const struct liquid *lq)
{
    uint32_t h = 2166136261u;
    int v[8] = { lq->nf, lq->reach[0], lq->reach[1], lq->reach[2], (int)lq->shape,
                 (int)lq->levels, lq->nred, lq->until };

    h = liq_fnv(h, v, sizeof(v));
    for (int f = 0; f < lq->nf; f++) {
        h = liq_fnv(h, lq->f[f].name, strlen(lq->f[f].name));
        h = liq_fnv(h, &lq->f[f].konst, sizeof(int));
    }
    for (int s = 0; s < 6; s++) {
        int bc = (int)lq->bc[s];

        h = liq_fnv(h, &bc, sizeof(bc));
        h = liq_fnv(h, &lq->bcval[s], sizeof(double));
    }
    for (int r = 0; r < lq->nred; r++) {
        h = liq_fnv(h, lq->red[r].name, strlen(lq->red[r].name));
        h = liq_fnv(h, &lq->red[r].every, sizeof(int));
    }
    h = liq_fnv(h, &lq->dt, sizeof(double));
    return liq_fnv(h, lq->len, sizeof(lq->len));
}

void
liq_user_geom(const struct liquid *lq, struct liq_geom *g)
{
    g->corners = lq->shape == LIQUID_BOX;
    g->apart = 0;
    for (int s = 0; s < 6; s++)
        g->apart |= lq->bc[s] == LIQUID_NEUMANN;
    /* A 2D grid's z axis is never read across: no halo wraps there. */
    for (int a = 0; a < 3; a++) {
        g->periodic[a] = liq_user_wraps(lq, g->n, a);
        g->reach[a] = liq_user_radius(lq, g->n, a);
    }
}

int
liq_user_radius(const struct liquid *lq, const int n[3], int a)
{
    return a == 2 && n[2] == 1 ? 0 : lq->reach[a];
}

int
liq_user_reach(const struct liquid *lq, const int n[3])
{
    int r = 1;

    for (int a = 0; a < 3; a++)
        r = liq_user_radius(lq, n, a) > r ? liq_user_radius(lq, n, a) : r;
    return r;
}

int
liq_user_wraps(const struct liquid *lq, const int n[3], int a)
{
    return lq->bc[2 * a] == LIQUID_PERIODIC && !(a == 2 && n[2] == 1);
}

int
liq_user_nlevels(const struct liquid *lq)
{
    return lq->levels == LIQUID_RED_BLACK ? 1 : lq->levels == LIQUID_THREE_LEVEL ? 3 : 2;
}

int
liq_user_nstate(const struct liquid *lq)
{
    return lq->levels == LIQUID_THREE_LEVEL ? 2 : 1;
}

int
liq_user_nboxes(const struct liquid *lq)
{
    int n = 0;

    for (int f = 0; f < lq->nf; f++)
        n += !lq->f[f].konst;
    return n * liq_user_nstate(lq);
}

int
liq_user_phases(const struct liquid *lq)
{
    return lq->levels == LIQUID_RED_BLACK ? 2 : 1;
}

static int
liq_gcd(int a, int b)
{
    while (b != 0) {
        int t = a % b;

        a = b;
        b = t;
    }
    return a;
}

int
liq_user_stride(const struct liquid *lq)
{
    int g = 0;

    for (int r = 0; r < lq->nred; r++)
        if (lq->red[r].every > 0)
            g = liq_gcd(g, lq->red[r].every);
    return g;
}

int
liq_user_due(const struct liquid *lq, int r, int it, int iters)
{
    int every = lq->red[r].every, u = lq->until;

    if (it <= 0)
        return 0;
    /* "After the last" is also wherever the until rule may stop the job. */
    if (every == 0 && u >= 0 && lq->red[u].every > 0)
        every = lq->red[u].every;
    return (every > 0 && it % every == 0) || it == iters;
}

void
liq_user_spacing(const struct liquid *lq, const int n[3], double h[3], double origin[3])
{
    for (int a = 0; a < 3; a++) {
        if (lq->bc[2 * a] == LIQUID_PERIODIC) {
            h[a] = lq->len[a] / n[a];
            origin[a] = 0;
        } else {
            h[a] = lq->len[a] / (n[a] + 1);
            origin[a] = h[a];
        }
    }
}

/* ---- the program's options on a command line ---- */

static struct liq_user_opt *
opt_find(struct liquid *lq, const char *key)
{
    for (int i = 0; i < lq->nopt; i++) {
        const char *a = lq->opt[i].name, *b = key;

        /* '_' and '-' alike, as the job's own options */
        while (*a && *b && (*a == *b || ((*a == '_' || *a == '-') && (*b == '_' || *b == '-')))) {
            a++;
            b++;
        }
        if (*a == '\0' && *b == '\0')
            return &lq->opt[i];
    }
    return NULL;
}

int
liq_user_opt_known(struct liquid *lq, const char *key)
{
    return opt_find(lq, key) != NULL;
}

int
liq_user_opt_flag(struct liquid *lq, const char *key)
{
    const struct liq_user_opt *o = opt_find(lq, key);

    return o != NULL && o->kind == LIQ_OPT_FLAG;
}

int
liq_user_opt_set(struct liquid *lq, const char *key, const char *value, char *err, size_t len)
{
    struct liq_user_opt *o = opt_find(lq, key);
    char *end;

    if (o == NULL)
        return 1;
    if (o->kind == LIQ_OPT_FLAG) {
        /* --NAME alone, or a job file's NAME = true; (the workers get 1 or 0). */
        if (value == NULL || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            *(int *)o->var = 1;
        else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
            *(int *)o->var = 0;
        else {
            snprintf(err, len, "--%s: a flag is given alone, or as true or false; got '%s'", key,
                     value);
            return -1;
        }
        return 0;
    }
    if (value == NULL || *value == '\0') {
        snprintf(err, len, "--%s needs a value", key);
        return -1;
    }
    errno = 0;
    if (o->kind == LIQ_OPT_INT) {
        long v = strtol(value, &end, 10);

        if (errno != 0 || *end != '\0' || v < -2147483647L || v > 2147483647L) {
            snprintf(err, len, "--%s: expected an integer, got '%s'", key, value);
            return -1;
        }
        *(int *)o->var = (int)v;
    } else {
        double v = strtod(value, &end);

        if (errno != 0 || *end != '\0' || !isfinite(v)) {
            snprintf(err, len, "--%s: expected a number, got '%s'", key, value);
            return -1;
        }
        *(double *)o->var = v;
    }
    return 0;
}

void
liq_user_opts_usage(FILE *fp, const struct liquid *lq)
{
    for (int i = 0; i < lq->nopt; i++) {
        const struct liq_user_opt *p = &lq->opt[i];
        char lhs[LIQUID_NAME_MAX + 8];

        snprintf(lhs, sizeof(lhs), "%s%s", p->name, p->kind == LIQ_OPT_INT ? " N"
                                                    : p->kind == LIQ_OPT_DOUBLE ? " X" : "");
        fprintf(fp, "  --%-18s %s\n", lhs, p->help);
    }
}
