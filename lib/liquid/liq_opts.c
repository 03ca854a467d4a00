/*
 * liq_opts.c - the options of a job master (vmrun's job commands and users'
 * programs alike), from the command line
 * and from libconfig job files that use the same names (grid, iters,
 * kernel, quanta, hosts, tasks_per_host, decomp, verify, json, output, seed,
 * network, probe_seconds, quiet, balance, epoch, heavy, min_gain, reclaim,
 * reclaim_below, reclaim_after, rejoin_above, rejoin_after, svg, halo, png,
 * slice, field, trace, checkpoint_every, checkpoint, checkpoint_interval,
 * checkpoint_share, resume).  One setter validates both.  A hints file (--hints,
 * written by vmrun analyze; issue 27, seed 003) is read like a job file,
 * but only for the settings that neither the command line nor --job give.
 */
#include "liq_master.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

void
liq_opts_defaults(struct liq_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->n[0] = o->n[1] = o->n[2] = 64;
    o->iters = 20;
    o->kernel = LIQ_JACOBI;
    o->quanta = 8;
    o->tasks_per_host = 1;
    o->decomp = -1;
    o->seed = 1;
    o->net = DECOMP_NET_SWITCHED;
    o->probe_seconds = 0.25;
    o->balance = 1;
    o->epoch = 10;
    o->heavy = 1;
    /* Equal quanta measured 10-30 % apart between workers time-sliced on a
     * shared machine: a uniform job moved quanta in 7 of 18 runs at 0.1
     * (with shares less each worker's message CPU, since dropped: 0 of 10
     * without) and in 1 of 18 at 0.2; with both changes, 0 of 10 and no
     * reading above 0.11. */
    o->min_gain = 0.2;
    o->reclaim = 1;
    o->reclaim_below = 0.125;
    o->reclaim_after = 3.0;
    o->rejoin_above = 0.25;
    /* Coming back is cheap where leaving is not: a worker back on a host
     * gets quanta only when the dampener finds the move worth its bytes,
     * and an owner who returns has them taken off in an epoch.  Waiting
     * 3 s as for leaving left the host unused for most of a 5 s
     * restore in bench/liquid.sh. */
    o->rejoin_after = 1.0;
    /* A minute of a job is what a lost master may cost, and a write a
     * minute keeps even a gigabyte's state a small share of the run. */
    o->ck_interval = 60;
    o->ck_share = LIQ_CK_SHARE;
    o->slice_axis = LIQ_AXIS_Z;
    o->slice_k = -1;
}

static int opt_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
opt_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* A whole decimal integer in lo..hi. */
static int
opt_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* N, or NXxNYxNZ. */
static int
opt_grid(const char *s, int n[3])
{
    char buf[128], *p, *save = NULL;
    int count = 0;
    long long v;

    if (s == NULL || strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    for (p = strtok_r(buf, "x", &save); p != NULL; p = strtok_r(NULL, "x", &save)) {
        if (count == 3 || opt_int(p, 1, LIQ_MAX_EXTENT, &v) != 0)
            return -1;
        n[count++] = (int)v;
    }
    if (count == 1)
        n[1] = n[2] = n[0];
    else if (count != 3)
        return -1;
    /* "8xx8" and trailing x's slip through strtok. */
    for (const char *q = s; *q; q++)
        if (*q == 'x' && (q == s || q[1] == '\0' || q[1] == 'x'))
            return -1;
    return 0;
}

/* A finite decimal number in lo..hi. */
static int
opt_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    double d;

    if (s == NULL)
        return -1;
    errno = 0;
    d = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(d) || d < lo || d > hi)
        return -1;
    *out = d;
    return 0;
}

/* on/off (or true/false). */
static int
opt_onoff(const char *s, int *out)
{
    if (strcmp(s, "on") == 0 || strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "off") == 0 || strcmp(s, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

static int
opt_bool(const char *s, int *out)
{
    if (s == NULL || strcmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcmp(s, "yes") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcmp(s, "no") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

static int
opt_path(char *dst, const char *s)
{
    if (s == NULL || *s == '\0' || strlen(s) >= LIQ_PATH_MAX)
        return -1;
    strcpy(dst, s);
    return 0;
}

/* Host names: letters, digits, '-', '_', '.', separated by commas. */
static int
opt_hosts(char *dst, const char *s)
{
    if (!liq_hosts_valid(s))
        return -1;
    strcpy(dst, s);
    return 0;
}

int
liq_hosts_valid(const char *s)
{
    if (s == NULL || *s == '\0' || strlen(s) >= LIQ_PATH_MAX || *s == ',' ||
        s[strlen(s) - 1] == ',' || strstr(s, ",,") != NULL)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.' || *p == ','))
            return 0;
    return 1;
}

/* The job: grid, kernel, iterations, placement.  Returns 0 when set, -1
 * with err when the value is bad, 1 when key is none of them. */
static int
set_job_option(struct liq_opts *o, const char *key, const char *value, char *err,
               size_t errlen)
{
    long long v;

    if (strcmp(key, "grid") == 0) {
        if (opt_grid(value, o->n) != 0)
            return opt_error(err, errlen, "--grid: expected N or NXxNYxNZ with each 1..%d, got '%s'",
                             LIQ_MAX_EXTENT, value);
    } else if (strcmp(key, "iters") == 0) {
        if (opt_int(value, 0, 10000000, &v) != 0)
            return opt_error(err, errlen, "--iters: expected an integer 0..10000000, got '%s'",
                             value);
        o->iters = (int)v;
    } else if (strcmp(key, "kernel") == 0) {
        if (strcmp(value, "jacobi") == 0)
            o->kernel = LIQ_JACOBI;
        else if (strcmp(value, "rbgs") == 0)
            o->kernel = LIQ_RBGS;
        else
            return opt_error(err, errlen, "--kernel: expected jacobi or rbgs, got '%s'", value);
    } else if (strcmp(key, "quanta") == 0) {
        if (opt_int(value, 1, 4096, &v) != 0)
            return opt_error(err, errlen, "--quanta: expected an integer 1..4096, got '%s'", value);
        o->quanta = (int)v;
    } else if (strcmp(key, "tasks-per-host") == 0) {
        if (opt_int(value, 1, 256, &v) != 0)
            return opt_error(err, errlen, "--tasks-per-host: expected an integer 1..256, got '%s'",
                             value);
        o->tasks_per_host = (int)v;
    } else if (strcmp(key, "hosts") == 0) {
        if (opt_hosts(o->hosts, value) != 0)
            return opt_error(err, errlen, "--hosts: expected NAME,NAME,..., got '%s'", value);
    } else if (strcmp(key, "decomp") == 0) {
        enum decomp_method m;

        if (strcmp(value, "auto") == 0)
            o->decomp = -1;
        else if (decomp_method_parse(value, &m) == 0)
            o->decomp = (int)m;
        else
            return opt_error(err, errlen,
                             "--decomp: expected auto or one of row, point, hilbert, "
                             "interleaved, scatter, block, brbd, fbrd, phd, orb; got '%s'",
                             value);
    } else {
        return 1;
    }
    return 0;
}

/* What the run prints and writes.  Returns 0 when set, -1 with err when the value is
 * bad, 1 when key is none of them. */
static int
set_output_option(struct liq_opts *o, const char *key, const char *value, char *err,
                  size_t errlen)
{
    long long v;

    if (strcmp(key, "verify") == 0) {
        if (opt_bool(value, &o->verify) != 0)
            return opt_error(err, errlen, "verify: expected true or false, got '%s'", value);
    } else if (strcmp(key, "quiet") == 0) {
        if (opt_bool(value, &o->quiet) != 0)
            return opt_error(err, errlen, "quiet: expected true or false, got '%s'", value);
    } else if (strcmp(key, "json") == 0) {
        if (opt_path(o->json, value) != 0)
            return opt_error(err, errlen, "--json: expected a file name (or -)");
    } else if (strcmp(key, "trace") == 0) {
        if (opt_path(o->trace, value) != 0 || strcmp(value, "-") == 0)
            return opt_error(err, errlen, "--trace: expected a file name");
    } else if (strcmp(key, "output") == 0) {
        if (opt_path(o->output, value) != 0 || strcmp(value, "-") == 0)
            return opt_error(err, errlen, "--output: expected a file name");
    } else if (strcmp(key, "seed") == 0) {
        if (opt_int(value, 0, INT64_MAX, &v) != 0)
            return opt_error(err, errlen, "--seed: expected an integer >= 0, got '%s'", value);
        o->seed = (uint64_t)v;
    } else if (strcmp(key, "network") == 0) {
        if (strcmp(value, "switched") == 0)
            o->net = DECOMP_NET_SWITCHED;
        else if (strcmp(value, "shared") == 0)
            o->net = DECOMP_NET_SHARED;
        else
            return opt_error(err, errlen, "--network: expected shared or switched, got '%s'",
                             value);
    } else {
        return 1;
    }
    return 0;
}

/* The picture of the final field (liq_png.c); its range against the grid is
 * liq_fields_check's.  Returns 0 when set, -1 with err when the value is
 * bad, 1 when key is none of them. */
static int
set_field_option(struct liq_opts *o, const char *key, const char *value, char *err,
                 size_t errlen)
{
    if (strcmp(key, "png") == 0) {
        if (opt_path(o->png, value) != 0 || strcmp(value, "-") == 0)
            return opt_error(err, errlen, "--png: expected a file name");
    } else if (strcmp(key, "slice") == 0) {
        if (liq_png_parse_slice(value, &o->slice_axis, &o->slice_k) != 0)
            return opt_error(err, errlen, "--slice: expected x=K, y=K or z=K with K >= 0, got '%s'",
                             value);
    } else if (strcmp(key, "field") == 0) {
        if (strlen(value) == 0 || strlen(value) >= sizeof(o->field))
            return opt_error(err, errlen, "--field: expected a field name, got '%s'", value);
        strcpy(o->field, value);
    } else if (strcmp(key, "input") == 0 && o->user != NULL) {
        if (o->ninput == LIQUID_MAX_FIELDS)
            return opt_error(err, errlen, "--input: at most %d, one per field", LIQUID_MAX_FIELDS);
        if (opt_path(o->input[o->ninput], value) != 0 || strchr(value, ':') == NULL)
            return opt_error(err, errlen, "--input: expected FILE:DATASET, got '%s'", value);
        o->ninput++;
    } else {
        return 1;
    }
    return 0;
}

/* Balancing and reclaim.  Returns 0 when set, -1 with err when the value is
 * bad, 1 when key is none of them. */
static int
set_balance_option(struct liq_opts *o, const char *key, const char *value, char *err,
                   size_t errlen)
{
    long long v;

    if (strcmp(key, "balance") == 0) {
        if (opt_onoff(value, &o->balance) != 0)
            return opt_error(err, errlen, "--balance: expected on or off, got '%s'", value);
    } else if (strcmp(key, "reclaim") == 0) {
        if (opt_onoff(value, &o->reclaim) != 0)
            return opt_error(err, errlen, "--reclaim: expected on or off, got '%s'", value);
    } else if (strcmp(key, "reclaim-below") == 0 || strcmp(key, "rejoin-above") == 0) {
        if (opt_double(value, 0, 1,
                       strcmp(key, "reclaim-below") == 0 ? &o->reclaim_below : &o->rejoin_above) != 0)
            return opt_error(err, errlen, "--%s: expected a share of one CPU 0..1, got '%s'", key,
                             value);
    } else if (strcmp(key, "reclaim-after") == 0 || strcmp(key, "rejoin-after") == 0) {
        if (opt_double(value, 0, 86400,
                       strcmp(key, "reclaim-after") == 0 ? &o->reclaim_after : &o->rejoin_after) != 0)
            return opt_error(err, errlen, "--%s: expected seconds 0..86400, got '%s'", key, value);
    } else if (strcmp(key, "svg") == 0) {
        if (opt_path(o->svg, value) != 0 || strcmp(value, "-") == 0)
            return opt_error(err, errlen, "--svg: expected a file name");
    } else if (strcmp(key, "checkpoint-every") == 0) {
        if (strcmp(value, "auto") == 0)
            o->ckpt_every = -1;
        else if (opt_int(value, 0, 100000, &v) == 0)
            o->ckpt_every = (int)v;
        else
            return opt_error(err, errlen,
                             "--checkpoint-every: expected auto or epochs 0..100000 (0: none), "
                             "got '%s'", value);
    } else if (strcmp(key, "checkpoint") == 0 || strcmp(key, "resume") == 0) {
        if (opt_path(key[0] == 'c' ? o->ckdir : o->resume, value) != 0 ||
            strcmp(value, "-") == 0)
            return opt_error(err, errlen, "--%s: expected a directory", key);
    } else if (strcmp(key, "checkpoint-share") == 0) {
        if (opt_double(value, 1e-6, 1, &o->ck_share) != 0)
            return opt_error(err, errlen, "--checkpoint-share: expected a share of the run "
                             "0.000001..1, got '%s'", value);
    } else if (strcmp(key, "checkpoint-interval") == 0) {
        if (opt_double(value, 0, 86400 * 365, &o->ck_interval) != 0)
            return opt_error(err, errlen, "--checkpoint-interval: expected seconds >= 0, got "
                             "'%s'", value);
    } else if (strcmp(key, "worker-timeout") == 0) {
        if (strcmp(value, "auto") == 0)
            o->worker_timeout = 0;
        else if (opt_double(value, LIQ_HUNG_FLOOR_S, 86400, &o->worker_timeout) != 0)
            return opt_error(err, errlen,
                             "--worker-timeout: expected auto or seconds %g..86400, got '%s'",
                             LIQ_HUNG_FLOOR_S, value);
    } else if (strcmp(key, "epoch") == 0) {
        if (opt_int(value, 1, 100000, &v) != 0)
            return opt_error(err, errlen, "--epoch: expected an integer 1..100000, got '%s'", value);
        o->epoch = (int)v;
    } else if (strcmp(key, "halo") == 0) {
        if (strcmp(value, "auto") == 0)
            o->halo = 0;
        else if (opt_int(value, 1, LIQ_MAX_HALO, &v) == 0)
            o->halo = (int)v;
        else
            return opt_error(err, errlen, "--halo: expected auto or an integer 1..%d, got '%s'",
                             LIQ_MAX_HALO, value);
    } else if (strcmp(key, "heavy") == 0) {
        if (opt_int(value, 1, 1000, &v) != 0)
            return opt_error(err, errlen, "--heavy: expected an integer 1..1000, got '%s'", value);
        o->heavy = (int)v;
    } else if (strcmp(key, "min-gain") == 0) {
        if (opt_double(value, 0, 1, &o->min_gain) != 0 || o->min_gain >= 1)
            return opt_error(err, errlen, "--min-gain: expected a fraction 0..1, got '%s'", value);
    } else if (strcmp(key, "probe-seconds") == 0) {
        if (opt_double(value, 0.01, 60, &o->probe_seconds) != 0)
            return opt_error(err, errlen, "--probe-seconds: expected 0.01..60, got '%s'", value);
    } else {
        return 1;
    }
    return 0;
}

int
liq_opt_set(struct liq_opts *o, const char *name, const char *value, char *err,
            size_t errlen)
{
    char key[64];
    size_t i;
    int rc;

    if (strlen(name) >= sizeof(key))
        return opt_error(err, errlen, "unknown option '%.60s...'", name);
    for (i = 0; name[i]; i++)
        key[i] = name[i] == '_' ? '-' : name[i];
    key[i] = '\0';
    if (o->user != NULL && strcmp(key, "check-reach") == 0) {
        if (value != NULL && strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
            return opt_error(err, errlen, "--check-reach: expected true or false, got '%s'",
                             value);
        o->check_reach = value == NULL || strcmp(value, "true") == 0;
        return 0;
    }
    if (value == NULL && strcmp(key, "verify") != 0 && strcmp(key, "quiet") != 0 &&
        (o->user == NULL || !liq_user_opt_known(o->user, key)))
        return opt_error(err, errlen, "--%s needs a value", key);
    if ((rc = set_job_option(o, key, value, err, errlen)) != 1 ||
        (rc = set_output_option(o, key, value, err, errlen)) != 1 ||
        (rc = set_balance_option(o, key, value, err, errlen)) != 1 ||
        (rc = set_field_option(o, key, value, err, errlen)) != 1)
        return rc;
    if (o->user != NULL && (rc = liq_user_opt_set(o->user, key, value, err, errlen)) != 1)
        return rc;
    return opt_error(err, errlen, "unknown option '--%s'", key);
}

static int
allowed_has(const char *const *allowed, const char *name)
{
    for (; *allowed; allowed++)
        if (strcmp(*allowed, name) == 0)
            return 1;
    return 0;
}

/* A setting's value as the text the command line would carry. */
static int
job_value(const config_setting_t *s, char *buf, size_t len)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        snprintf(buf, len, "%lld", config_setting_get_int64(s));
        return 0;
    case CONFIG_TYPE_FLOAT:
        snprintf(buf, len, "%.17g", config_setting_get_float(s));
        return 0;
    case CONFIG_TYPE_BOOL:
        snprintf(buf, len, "%s", config_setting_get_bool(s) ? "true" : "false");
        return 0;
    case CONFIG_TYPE_STRING:
        if (strlen(config_setting_get_string(s)) >= len)
            return -1;
        snprintf(buf, len, "%s", config_setting_get_string(s));
        return 0;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST: {
        /* A list of host names, or of 3 grid extents. */
        size_t o = 0;

        buf[0] = '\0';
        for (int i = 0; i < config_setting_length(s); i++) {
            const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
            char part[256];
            int n;

            if (config_setting_type(e) == CONFIG_TYPE_STRING)
                n = snprintf(part, sizeof(part), "%s", config_setting_get_string(e));
            else if (config_setting_type(e) == CONFIG_TYPE_INT ||
                     config_setting_type(e) == CONFIG_TYPE_INT64)
                n = snprintf(part, sizeof(part), "%lld", config_setting_get_int64(e));
            else
                return -1;
            if (n < 0 || (size_t)n >= sizeof(part) || o + (size_t)n + 2 > len)
                return -1;
            o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", part);
        }
        return 0;
    }
    default:
        return -1;
    }
}

/* Append name to a comma-separated list (dropped when it does not fit). */
static void
names_add(char *list, size_t len, const char *name)
{
    size_t used = strlen(list);

    if (used + strlen(name) + 2 <= len)
        snprintf(list + used, len - used, "%s%s", used ? "," : "", name);
}

/* Is name in the comma-separated list? */
static int
names_have(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; p != NULL && *p != '\0'; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* An option's name as the command line spells it ('_' as '-'). */
static void
names_key(char *key, size_t len, const char *name)
{
    size_t i;

    for (i = 0; name[i] != '\0' && i + 1 < len; i++)
        key[i] = name[i] == '_' ? '-' : name[i];
    key[i] = '\0';
}

/*
 * A libconfig file of options.  skip: keys given otherwise, left alone
 * (NULL: none); names: the keys set are appended to it (NULL: not kept);
 * allowed: the keys this command takes (NULL: any).
 */
static int
opts_file(struct liq_opts *o, const char *path, const char *skip, char *names, size_t nlen,
          const char *const *allowed, char *err, size_t errlen)
{
    struct conf_diag diag;
    config_t cfg;
    config_setting_t *root;
    size_t used = 0;
    int nerr = 0;
    char seen[4096] = "";       /* the keys so far, '_' as '-' */

    err[0] = '\0';
    config_init(&cfg);
    if (conf_parse(path, &cfg, &diag) != 0) {
        snprintf(err, errlen, "%s", diag.text[0] ? diag.text : "cannot read the job file\n");
        config_destroy(&cfg);
        return -1;
    }
    root = config_root_setting(&cfg);
    for (int i = 0; i < config_setting_length(root); i++) {
        config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(s);
        char value[LIQ_PATH_MAX], why[512], key[64];
        int line = (int)config_setting_source_line(s), n;

        names_key(key, sizeof(key), name);
        /* tasks_per_host and tasks-per-host are one key: the second would
         * silently win. */
        if (names_have(seen, key)) {
            snprintf(why, sizeof(why), "%s: set twice ('_' and '-' spell one key)", name);
            goto bad;
        }
        names_add(seen, sizeof(seen), key);
        if (skip != NULL && names_have(skip, key))
            continue;
        if (names != NULL)
            names_add(names, nlen, key);
        if (allowed != NULL && !allowed_has(allowed, key) &&
            (o->user == NULL || !liq_user_opt_known(o->user, key)))
            snprintf(why, sizeof(why), "%s: not an option of this command", name);
        else if (job_value(s, value, sizeof(value)) != 0)
            snprintf(why, sizeof(why), "%s: expected a number, string, boolean or list%s", name,
                     config_setting_type(s) == CONFIG_TYPE_STRING ||
                             config_setting_is_aggregate(s)
                         ? " of at most 1023 characters"
                         : "");
        else if (strcmp(name, "grid") == 0 && strchr(value, ',') != NULL) {
            /* grid = [NX, NY, NZ] */
            for (char *c = value; *c; c++)
                if (*c == ',')
                    *c = 'x';
            if (liq_opt_set(o, name, value, why, sizeof(why)) == 0)
                continue;
        } else if (liq_opt_set(o, name, value, why, sizeof(why)) == 0) {
            continue;
        }
bad:
        nerr++;
        n = snprintf(err + used, errlen - used, "%s:%d: %s\n", path, line, why);
        if (n > 0 && used + (size_t)n < errlen)
            used += (size_t)n;
    }
    config_destroy(&cfg);
    return nerr > 0 ? -1 : 0;
}

int
liq_opts_file(struct liq_opts *o, const char *path, char *err, size_t errlen)
{
    return opts_file(o, path, NULL, NULL, 0, NULL, err, errlen);
}


int
liq_opts_given(const struct liq_opts *o, const char *key)
{
    return names_have(o->given, key);
}

void
liq_opts_usage(FILE *fp, const char *name, const char *const *synopsis, const char *text)
{
    int indent = (int)strlen("usage: ") + (int)strlen(name) + 1;

    fprintf(fp, "usage: %s %s\n", name, synopsis[0]);
    for (int i = 1; synopsis[i] != NULL; i++)
        fprintf(fp, "%*s%s\n", indent, "", synopsis[i]);
    fputs(text, fp);
}

int
liq_opts_parse(struct liq_opts *o, const char *cmd, int argc, char **argv,
               const char *const *allowed)
{
    char err[4096], given[2048] = "";

    /* The options given explicitly: on the command line ... */
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--", 2) == 0 && strlen(argv[i]) < 66) {
            char key[64];

            names_key(key, sizeof(key), argv[i] + 2);
            if (strchr(key, '=') != NULL)
                *strchr(key, '=') = '\0';
            names_add(given, sizeof(given), key);
        }
    /* ... and in the job file, read first, so the command line overrides it. */
    for (int i = 1; i < argc; i++) {
        int job = strcmp(argv[i], "--job") == 0 || strncmp(argv[i], "--job=", 6) == 0;
        int hints = strcmp(argv[i], "--hints") == 0 || strncmp(argv[i], "--hints=", 8) == 0;
        const char *eq = strchr(argv[i], '=');
        const char *path = eq != NULL ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);

        if (!job && !hints)
            continue;
        i += eq == NULL;
        if (path == NULL || *path == '\0') {
            fprintf(stderr, "%s: --%s needs a file name\n", cmd, job ? "job" : "hints");
            return LIQ_EXIT_USAGE;
        }
        if (hints) {
            if (!allowed_has(allowed, "hints")) {
                fprintf(stderr, "%s: unknown option '--hints' (%s --help)\n", cmd, cmd);
                return LIQ_EXIT_USAGE;
            }
            if (opt_path(o->hints, path) != 0) {
                fprintf(stderr, "%s: --hints: a file name of at most %d characters\n", cmd,
                        LIQ_PATH_MAX - 1);
                return LIQ_EXIT_USAGE;
            }
            continue;
        }
        if (opts_file(o, path, NULL, given, sizeof(given), NULL, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s", err);
            return LIQ_EXIT_USAGE;
        }
    }
    snprintf(o->given, sizeof(o->given), "%s", given);
    /* The hints, for what neither gives (vmrun analyze writes them). */
    if (o->hints[0] != '\0' &&
        opts_file(o, o->hints, given, o->hinted, sizeof(o->hinted), allowed, err,
                  sizeof(err)) != 0) {
        fprintf(stderr, "%s", err);
        return LIQ_EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *eq, *value = NULL;
        size_t len;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return -1;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument '%s' (%s --help)\n", cmd, a, cmd);
            return LIQ_EXIT_USAGE;
        }
        a += 2;
        eq = strchr(a, '=');
        len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof(name) || len == 0) {
            fprintf(stderr, "%s: unknown option '%s'\n", cmd, argv[i]);
            return LIQ_EXIT_USAGE;
        }
        memcpy(name, a, len);
        name[len] = '\0';
        if (strcmp(name, "job") == 0 || strcmp(name, "hints") == 0) {
            i += eq == NULL;
            continue;
        }
        if (!allowed_has(allowed, name) &&
            (o->user == NULL || !liq_user_opt_known(o->user, name))) {
            fprintf(stderr, "%s: unknown option '--%s' (%s --help)\n", cmd, name, cmd);
            return LIQ_EXIT_USAGE;
        }
        if (eq != NULL)
            value = eq + 1;
        else if (strcmp(name, "json") == 0 && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0))
            value = "-"; /* a bare --json: the report on stdout */
        else if (strcmp(name, "verify") != 0 && strcmp(name, "quiet") != 0 &&
                 strcmp(name, "check-reach") != 0 &&
                 (o->user == NULL || !liq_user_opt_flag(o->user, name)))
            value = i + 1 < argc ? argv[++i] : NULL;
        if (liq_opt_set(o, name, value, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s: %s\n", cmd, err);
            return LIQ_EXIT_USAGE;
        }
    }
    return 0;
}

/*
 * Deeper than the slack allows where the network makes it pay: the time
 * of an iteration is modelled as the points swept at the workers' probed
 * speed, plus the message latency once per block, and the halo that
 * minimizes it from h up is taken.  On CPU-limited workstations a message
 * waits for its sender's and receiver's slices of the CPU (the ring's
 * lambda was 2-5 ms under 60/60/30/15 % quotas, 0.1-0.3 ms without), and
 * each exchange couples neighbours whose slices fall apart: there halo 5
 * ran the liquid scenario in 19.9 and 20.0 s where the slack's 3 took
 * 20.2-22.9 s (10 took 22.5 s).  On an idle LAN the latency term is a few
 * per cent of an iteration of a job worth spreading, and h stays.  A
 * deeper halo must model 5 % faster than the best shallower one: the
 * ring's lambda under quotas wanders (3-5.5 ms between runs of the liquid
 * scenario), and with Jacobi's trapezoid 5 and 10 modelled within 1 % of
 * each other there, so runs took either (10 ran 20.2 s, 5 18.4 s).
 */
static int
halo_for_latency(const struct liq_opts *o, const struct liq_geom *g, const int *owner,
                 int h, int max, int span, double lambda, double speed)
{
    double points = (double)g->n[0] * g->n[1] * g->n[2], best_t = -1;
    int best = h;

    if (!(lambda > 0) || !(speed > 0))
        return h;
    for (int d = h; d <= max; d++) {
        /* The depth used: the epoch in as many equal blocks as d needs. */
        int blocks = (span + d - 1) / d;
        double work = liq_halo_work(g, o->kernel, (span + blocks - 1) / blocks, owner, o->heavy), t;

        if (work < 0)
            break; /* out of memory: the depths so far */
        t = work * points / speed + (double)blocks / span * lambda;
        if (best_t < 0 || t < best_t * 0.95) {
            best_t = t;
            best = d;
        }
    }
    return best;
}

int
liq_opts_halo(const struct liq_opts *o, const struct liq_geom *g, const int *owner, double lambda,
              double speed)
{
    int span = o->balance && o->epoch < o->iters ? o->epoch : o->iters, h, blocks, max;

    if (o->halo > 0)
        return o->halo;
    /* A block never spans an epoch's end, so a deeper halo would go unused. */
    if (span < 1)
        span = 1;
    max = span < LIQ_MAX_HALO ? span : LIQ_MAX_HALO;
    h = liq_halo_auto(g, o->kernel, max, owner, o->heavy);
    h = halo_for_latency(o, g, owner, h, max, span, lambda, speed);
    /* As many exchanges per epoch as h needs; the workers cut the epoch
     * into blocks whose lengths differ by at most one (liq_block_at), so
     * the halo need be no deeper than the longest. */
    blocks = (span + h - 1) / h;
    return (span + blocks - 1) / blocks;
}
