/*
 * conf_load.c - the libconfig loader behind conf.h: defaults, reading and
 * checking vmd.conf, and the "%h" expansion of paths.
 *
 * Every key the file may hold is listed once in the tables below, with its
 * kind, the field it fills and the "expected ..." text of its error; the
 * walker rejects anything not in a table, so a typo is an error, never a
 * silently ignored line.  Errors are "file:line: key: what was expected",
 * and checking goes on past a bad key so every error shows in one run
 * (relayd parse.y, STYLE.md 5.3).  A syntax error is the exception: libconfig
 * stops at the first one and gives no tree, so it is reported alone.
 *
 * The file is read here, not by libconfig, because of libconfig 1.5 defects:
 * its flex scanner calls exit() when asked to read a directory; it stops
 * silently at a NUL byte; an unterminated string or comment where a key is
 * expected makes it drop the rest of the file without an error; and it
 * parses an integer literal with atoi(), so 5000000000 without an "L"
 * suffix wraps to 705032704.  conf_fix_source() therefore rescans the text
 * first: it reports unterminated strings and comments, gives every integer
 * that does not fit in 32 bits its "L" suffix, turns one that does not fit
 * in 64 bits into a float (which every integer key then rejects with the
 * number in its message), and refuses @include, whose target libconfig
 * would open on its own.  Its errors come first in diag, then the others in
 * file order, then those of the rules between keys.  One defect remains:
 * when a syntax error falls on a string token ('a "x";'), libconfig leaks
 * that string (its grammar has no %destructor), so a test of such an error
 * under LeakSanitizer needs a suppression for libconfig.
 *
 * conf_load works on a copy of *c and only swaps it in when the whole file
 * is correct, so a daemon that re-reads its configuration keeps the old one
 * on any error.
 */
#include "conf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire.h"

/* A configuration file is a page or two; anything this large is a mistake. */
#define CONF_FILE_MAX (1024 * 1024)
/* Longest string value: it must fit a wire string (WIRE_T_REQ_CONF). */
#define CONF_STR_MAX (WIRE_STR_MAX - 1)
/* Longest error line, and how much of a bad string value it quotes. */
#define CONF_LINE_MAX 512
#define CONF_QUOTE_MAX 40
/* Room kept at the end of diag->text for the "N more errors omitted" line. */
#define CONF_DIAG_RESERVE 48
/* Timers run in milliseconds; 1 ms is the shortest period that is not 0. */
#define CONF_SECONDS_MIN 0.001
#define CONF_SECONDS_MAX 86400.0
/* The local part of a PVM task id has 18 bits (docs/architecture.md, Processes). */
#define CONF_TASKS_MAX WIRE_TID_LOCAL_MASK
#define CONF_GIB (1024LL * 1024 * 1024)

enum conf_kind {
    CONF_K_GROUP,       /* a group of further keys: members */
    CONF_K_ADDRESS,     /* char *: a numeric IPv4 address (vmd listens on IPv4) */
    CONF_K_INT,         /* int in min..max */
    CONF_K_U64,         /* uint64_t in min..max */
    CONF_K_SECONDS,     /* double: seconds */
    CONF_K_PATH,        /* char *: a file name; escapes %h and %% */
    CONF_K_COMMAND,     /* char *: a command line; escapes %h %v %m %% */
    CONF_K_LEVEL,       /* int: enum conf_log_level */
    CONF_K_DIRS,        /* spawn_path: a list of directories */
    CONF_K_BOOL,        /* int: true or false */
    CONF_K_HOSTS        /* hosts: a list of groups, one struct conf_host each */
};

struct conf_key {
    const char *name;
    enum conf_kind kind;
    size_t off;                         /* the field of struct conf it fills */
    long long min, max;                 /* CONF_K_INT, CONF_K_U64 */
    const char *expect;                 /* the error's "expected ..." text */
    const struct conf_key *members;     /* CONF_K_GROUP, ended by a NULL name */
};

#define F(field) offsetof(struct conf, field)
#define HF(field) offsetof(struct conf_host, field)

/* One entry of hosts; its offsets are into struct conf_host. */
static const struct conf_key conf_host_keys[] = {
    { "name", CONF_K_PATH, HF(name), 0, 0, "expected a host name", NULL },
    { "address", CONF_K_ADDRESS, HF(address), 0, 0,
      "expected an IPv4 address such as \"10.0.0.2\"", NULL },
    { "port", CONF_K_INT, HF(port), 0, 65535, "expected an integer 0..65535", NULL },
    { "speed", CONF_K_INT, HF(speed), 1, 1000000, "expected an integer 1..1000000", NULL },
    { "vmd", CONF_K_PATH, HF(vmd), 0, 0, "expected the path of vmd on that host", NULL },
    { "home", CONF_K_PATH, HF(home), 0, 0, "expected a directory", NULL },
    { "spawn_path", CONF_K_DIRS, 0, 0, 0,
      "expected a list of 1..32 directories [ \"...\", ... ]", NULL },
    { "send_certs", CONF_K_BOOL, HF(send_certs), 0, 0, "expected true or false", NULL },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct conf_key conf_listen_keys[] = {
    { "address", CONF_K_ADDRESS, F(listen_address), 0, 0,
      "expected \"auto\" or an IPv4 address such as \"0.0.0.0\"", NULL },
    { "port", CONF_K_INT, F(listen_port), 0, 65535, "expected an integer 0..65535", NULL },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct conf_key conf_tls_keys[] = {
    { "ca", CONF_K_PATH, F(tls_ca), 0, 0, "expected a file name", NULL },
    { "cert", CONF_K_PATH, F(tls_cert), 0, 0, "expected a file name", NULL },
    { "key", CONF_K_PATH, F(tls_key), 0, 0, "expected a file name", NULL },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct conf_key conf_log_keys[] = {
    { "level", CONF_K_LEVEL, F(log_level), 0, 0,
      "expected one of err, warn, info, debug", NULL },
    { "file", CONF_K_PATH, F(log_file), 0, 0, "expected a file name", NULL },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct conf_key conf_limits_keys[] = {
    /* Not under 1 MiB: the daemons' own frames (a task list, the host
     * table) must fit, or nothing can enroll. */
    { "max_message", CONF_K_U64, F(max_message), 1 << 20, CONF_GIB,
      "expected an integer 1048576 (1 MiB)..1073741824 (1 GiB)", NULL },
    { "max_tasks", CONF_K_U64, F(max_tasks), 1, CONF_TASKS_MAX,
      "expected an integer 1..262143", NULL },
    { "max_peer_queue", CONF_K_U64, F(max_peer_queue), 1, LLONG_MAX,
      "expected an integer > 0", NULL },
    { "max_handshakes", CONF_K_U64, F(max_handshakes), 1, 65536,
      "expected an integer 1..65536", NULL },
    { "max_handshakes_per_address", CONF_K_U64, F(max_handshakes_per_address), 1, 65536,
      "expected an integer 1..65536", NULL },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct conf_key conf_top_keys[] = {
    { "listen", CONF_K_GROUP, 0, 0, 0, "expected a group { address = ...; port = ...; }",
      conf_listen_keys },
    { "tls", CONF_K_GROUP, 0, 0, 0, "expected a group { ca = ...; cert = ...; key = ...; }",
      conf_tls_keys },
    { "heartbeat", CONF_K_SECONDS, F(heartbeat), 0, 0,
      "expected a number of seconds > 0", NULL },
    { "host_timeout", CONF_K_SECONDS, F(host_timeout), 0, 0,
      "expected a number of seconds > 0", NULL },
    { "start_timeout", CONF_K_SECONDS, F(start_timeout), 0, 0,
      "expected a number of seconds > 0", NULL },
    { "load_interval", CONF_K_SECONDS, F(load_interval), 0, 0,
      "expected a number of seconds > 0", NULL },
    { "quota_interval", CONF_K_SECONDS, F(quota_interval), 0, 0,
      "expected a number of seconds > 0", NULL },
    { "spawn_path", CONF_K_DIRS, 0, 0, 0,
      "expected a list of 1..32 directories [ \"...\", ... ]", NULL },
    { "hoststart", CONF_K_COMMAND, F(hoststart), 0, 0, "expected a command line", NULL },
    { "log", CONF_K_GROUP, 0, 0, 0, "expected a group { level = ...; file = ...; }",
      conf_log_keys },
    { "speed", CONF_K_INT, F(speed), 1, 1000000, "expected an integer 1..1000000", NULL },
    { "limits", CONF_K_GROUP, 0, 0, 0,
      "expected a group { max_message = ...; max_tasks = ...; max_peer_queue = ...; }",
      conf_limits_keys },
    { "cache_bytes", CONF_K_U64, F(cache_bytes), 0, LLONG_MAX, "expected an integer >= 0",
      NULL },
    { "llc_bytes", CONF_K_U64, F(llc_bytes), 0, LLONG_MAX, "expected an integer >= 0", NULL },
    { "send_certs", CONF_K_BOOL, F(send_certs), 0, 0, "expected true or false", NULL },
    { "hosts", CONF_K_HOSTS, 0, 0, 0,
      "expected a list of groups ( { name = \"...\"; ... }, ... )", conf_host_keys },
    { NULL, 0, 0, 0, 0, NULL, NULL }
};

#undef F
#undef HF

/* One conf_load call. */
struct conf_ctx {
    const char *path;           /* the file name errors are reported against */
    struct conf *c;             /* the copy being filled */
    char *base;                 /* what the keys' offsets point into: c, or host */
    struct conf_host *host;     /* the hosts entry being read, or NULL */
    struct conf_diag *diag;
    size_t len;                 /* bytes used in diag->text */
    int omitted;                /* errors counted but not written: no room */
    bool nomem;
    bool cut;                   /* conf_fix_source dropped the end of the file */
    /* Fields whose key was present but wrong: the cross-checks skip them. */
    size_t bad[16];
    int nbad;
};

static const char *const conf_level_names[] = { "err", "warn", "info", "debug" };

static void
conf_error(struct conf_ctx *x, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Add one error line.  A line that would not fit is counted but dropped,
 * keeping CONF_DIAG_RESERVE bytes free for the line that says so.
 */
static void
conf_error(struct conf_ctx *x, unsigned line, const char *fmt, ...)
{
    char buf[CONF_LINE_MAX];
    va_list ap;
    int n;
    size_t len = 0;

    x->diag->nerrors++;
    if (line > 0)
        n = snprintf(buf, sizeof(buf), "%s:%u: ", x->path, line);
    else
        n = snprintf(buf, sizeof(buf), "%s: ", x->path);
    if (n < 0)
        n = 0;
    len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    va_start(ap, fmt);
    n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= sizeof(buf) - len) {
        /* A huge key name or path: keep the line, mark where it was cut. */
        memcpy(buf + sizeof(buf) - 4, "...", 4);
    }
    len = strlen(buf);

    if (x->omitted > 0 || x->len + len + 1 > CONF_DIAG_MAX - CONF_DIAG_RESERVE - 1) {
        x->omitted++;
        return;
    }
    memcpy(x->diag->text + x->len, buf, len);
    x->len += len;
    x->diag->text[x->len++] = '\n';
    x->diag->text[x->len] = '\0';
}

static void
conf_diag_finish(struct conf_ctx *x)
{
    if (x->omitted == 0)
        return;
    snprintf(x->diag->text + x->len, CONF_DIAG_MAX - x->len, "%d more errors omitted\n",
             x->omitted);
    x->len += strlen(x->diag->text + x->len);
}

/* Quote a string for an error line: escaped, and cut to CONF_QUOTE_MAX. */
static void
conf_quote(char *out, size_t cap, const char *s)
{
    size_t o = 0, i;

    out[o++] = '"';
    for (i = 0; s[i] != '\0'; i++) {
        unsigned char ch = (unsigned char)s[i];

        /* Room for the longest escape, a closing "...", quote and NUL. */
        if (i >= CONF_QUOTE_MAX || o + 4 + 5 > cap) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (ch == '\t') {
            out[o++] = '\\';
            out[o++] = 't';
        } else if (ch < 0x20 || ch == 0x7f) {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

/* What the file held, for the "got ..." part of an error line. */
static const char *
conf_describe(const config_setting_t *s, char *buf, size_t cap)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        snprintf(buf, cap, "%lld", config_setting_get_int64(s));
        break;
    case CONFIG_TYPE_FLOAT:
        /* Keep a float looking like one: speed = 1000.0 is not an integer. */
        snprintf(buf, cap, "%.6g", config_setting_get_float(s));
        if (strpbrk(buf, ".eni") == NULL && strlen(buf) + 3 <= cap)
            strcat(buf, ".0");
        break;
    case CONFIG_TYPE_STRING:
        conf_quote(buf, cap, config_setting_get_string(s));
        break;
    case CONFIG_TYPE_BOOL:
        snprintf(buf, cap, "%s", config_setting_get_bool(s) ? "true" : "false");
        break;
    case CONFIG_TYPE_GROUP:
        snprintf(buf, cap, "a group");
        break;
    case CONFIG_TYPE_ARRAY:
        snprintf(buf, cap, "an array");
        break;
    case CONFIG_TYPE_LIST:
        snprintf(buf, cap, "a list");
        break;
    default:
        snprintf(buf, cap, "nothing");
        break;
    }
    return buf;
}

/* libconfig keeps lines in an unsigned short: past 65535 they wrap. */
static unsigned
conf_line(const config_setting_t *s)
{
    return config_setting_source_line(s);
}

/* Remember that k's field keeps its old value, for conf_cross_check. */
static void
conf_mark_bad(struct conf_ctx *x, const struct conf_key *k)
{
    /* Only struct conf's own fields take part in the cross-checks. */
    if (k->kind == CONF_K_GROUP || k->kind == CONF_K_DIRS || x->host != NULL)
        return;
    if (x->nbad < (int)(sizeof(x->bad) / sizeof(x->bad[0])))
        x->bad[x->nbad++] = k->off;
}

static void
conf_bad(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *s,
         const char *key)
{
    char got[CONF_LINE_MAX / 4];

    conf_error(x, conf_line(s), "%s: %s, got %s", key, k->expect,
               conf_describe(s, got, sizeof(got)));
    conf_mark_bad(x, k);
}

static bool
conf_is_bad(const struct conf_ctx *x, size_t off)
{
    int i;

    for (i = 0; i < x->nbad; i++)
        if (x->bad[i] == off)
            return true;
    return false;
}

/* Replace *field by a copy of s; the old string is freed once the copy exists. */
static void
conf_set_str(struct conf_ctx *x, char **field, const char *s)
{
    char *copy = strdup(s);

    if (copy == NULL) {
        x->nomem = true;
        return;
    }
    free(*field);
    *field = copy;
}

/*
 * A string value: present, not empty, not longer than a wire string, and
 * using only the escapes in allowed (the letters after '%'; "%%" always),
 * which the error message lists as escapes.  allowed NULL: '%' is plain.
 * Returns the string, or NULL after reporting what is wrong.
 */
static const char *
conf_get_str(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *s,
             const char *key, const char *allowed, const char *escapes)
{
    const char *v, *p;

    if (config_setting_type(s) != CONFIG_TYPE_STRING ||
        *(v = config_setting_get_string(s)) == '\0') {
        conf_bad(x, k, s, key);
        return NULL;
    }
    if (strlen(v) > CONF_STR_MAX) {
        conf_error(x, conf_line(s), "%s: expected at most %d bytes, got a string of %zu", key,
                   CONF_STR_MAX, strlen(v));
        return NULL;
    }
    if (allowed == NULL)
        return v;
    for (p = v; (p = strchr(p, '%')) != NULL; p += 2) {
        if (p[1] == '%' || (p[1] != '\0' && strchr(allowed, p[1]) != NULL))
            continue;
        if (p[1] == '\0')
            conf_error(x, conf_line(s), "%s: a lone %% ends the string; write %%%% for a %%",
                       key);
        else if (p[1] > ' ' && p[1] < 0x7f)
            conf_error(x, conf_line(s), "%s: unknown escape %%%c; expected %s", key, p[1],
                       escapes);
        else
            conf_error(x, conf_line(s), "%s: unknown escape after %%; expected %s", key,
                       escapes);
        return NULL;
    }
    return v;
}

static void
conf_get_dirs(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *s,
              const char *key)
{
    char *dirs[CONF_MAX_SPAWN_PATH];
    char ekey[CONF_LINE_MAX / 2 + 16];
    int n, i, ok = 1;

    if (config_setting_type(s) != CONFIG_TYPE_LIST &&
        config_setting_type(s) != CONFIG_TYPE_ARRAY) {
        conf_bad(x, k, s, key);
        return;
    }
    n = config_setting_length(s);
    if (n < 1 || n > CONF_MAX_SPAWN_PATH) {
        conf_error(x, conf_line(s), "%s: %s, got %d", key, k->expect, n);
        return;
    }
    for (i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        static const struct conf_key elem = { NULL, CONF_K_DIRS, 0, 0, 0,
                                              "expected a directory", NULL };

        snprintf(ekey, sizeof(ekey), "%s[%d]", key, i);
        if (conf_get_str(x, &elem, e, ekey, NULL, NULL) == NULL)
            ok = 0;
    }
    if (!ok)
        return;
    for (i = 0; i < n; i++) {
        dirs[i] = strdup(config_setting_get_string_elem(s, (unsigned)i));
        if (dirs[i] == NULL) {
            while (i-- > 0)
                free(dirs[i]);
            x->nomem = true;
            return;
        }
    }
    char **to = x->host ? x->host->spawn_path : x->c->spawn_path;
    int *to_len = x->host ? &x->host->spawn_path_len : &x->c->spawn_path_len;
    for (i = 0; i < *to_len; i++) {
        free(to[i]);
        to[i] = NULL;
    }
    memcpy(to, dirs, (size_t)n * sizeof(dirs[0]));
    *to_len = n;
}

static void conf_get_hosts(struct conf_ctx *x, const struct conf_key *k,
                           const config_setting_t *s, const char *key);

static void conf_walk(struct conf_ctx *x, const struct conf_key *keys,
                      const config_setting_t *group, const char *prefix);

static void
conf_get(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *s,
         const char *key)
{
    char *field = x->base + k->off;
    const char *v;
    long long n;
    double d;
    int level;
    struct in_addr addr;

    switch (k->kind) {
    case CONF_K_GROUP:
        if (config_setting_type(s) != CONFIG_TYPE_GROUP)
            conf_bad(x, k, s, key);
        else
            conf_walk(x, k->members, s, key);
        break;
    case CONF_K_ADDRESS:
        if (config_setting_type(s) != CONFIG_TYPE_STRING ||
            (strcmp(config_setting_get_string(s), "auto") != 0 &&
             inet_pton(AF_INET, config_setting_get_string(s), &addr) != 1))
            conf_bad(x, k, s, key);
        else
            conf_set_str(x, (char **)(void *)field, config_setting_get_string(s));
        break;
    case CONF_K_INT:
    case CONF_K_U64:
        if (config_setting_type(s) != CONFIG_TYPE_INT &&
            config_setting_type(s) != CONFIG_TYPE_INT64) {
            conf_bad(x, k, s, key);
            break;
        }
        n = config_setting_get_int64(s);
        if (n < k->min || n > k->max)
            conf_bad(x, k, s, key);
        else if (k->kind == CONF_K_INT)
            *(int *)(void *)field = (int)n;
        else
            *(uint64_t *)(void *)field = (uint64_t)n;
        break;
    case CONF_K_SECONDS:
        if (!config_setting_is_number(s)) {
            conf_bad(x, k, s, key);
            break;
        }
        d = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                         : (double)config_setting_get_int64(s);
        if (!(d > 0)) {
            conf_bad(x, k, s, key);
        } else if (d < CONF_SECONDS_MIN || d > CONF_SECONDS_MAX) {
            char got[64];

            conf_error(x, conf_line(s), "%s: expected a number of seconds from 0.001 to 86400, "
                       "got %s", key, conf_describe(s, got, sizeof(got)));
            conf_mark_bad(x, k);
        } else {
            *(double *)(void *)field = d;
        }
        break;
    case CONF_K_PATH:
        if ((v = conf_get_str(x, k, s, key, "h", "%h or %%")) != NULL)
            conf_set_str(x, (char **)(void *)field, v);
        break;
    case CONF_K_COMMAND:
        if ((v = conf_get_str(x, k, s, key, "hvm", "%h, %v, %m or %%")) != NULL)
            conf_set_str(x, (char **)(void *)field, v);
        break;
    case CONF_K_LEVEL:
        if (config_setting_type(s) != CONFIG_TYPE_STRING ||
            (level = conf_log_level_parse(config_setting_get_string(s))) < 0)
            conf_bad(x, k, s, key);
        else
            *(int *)(void *)field = level;
        break;
    case CONF_K_DIRS:
        conf_get_dirs(x, k, s, key);
        break;
    case CONF_K_BOOL:
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
            conf_bad(x, k, s, key);
        else
            *(int *)(void *)field = config_setting_get_bool(s);
        break;
    case CONF_K_HOSTS:
        conf_get_hosts(x, k, s, key);
        break;
    }
}

/* A host name as vmctl add takes it: letters, digits, '-', '.', '_'. */
static bool
conf_host_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253 || s[0] == '-' || s[0] == '.')
        return false;
    for (; *s != '\0'; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '.' && *s != '_')
            return false;
    return true;
}

/* One entry of hosts into h; false if it has an error (already reported). */
static bool
conf_get_host(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *e,
              const char *ekey, struct conf_host *h)
{
    int before = x->diag->nerrors;

    if (config_setting_type(e) != CONFIG_TYPE_GROUP) {
        conf_bad(x, k, e, ekey);
        return false;
    }
    x->host = h;
    x->base = (char *)h;
    conf_walk(x, k->members, e, ekey);
    x->host = NULL;
    x->base = (char *)x->c;
    if (x->diag->nerrors != before)
        return false;
    if (h->name == NULL) {
        conf_error(x, conf_line(e), "%s: expected a name = \"HOST\"; in the entry", ekey);
        return false;
    }
    if (!conf_host_name_ok(h->name)) {
        conf_error(x, conf_line(e), "%s.name: expected a host name (letters, digits, - . _), "
                   "got \"%.40s\"", ekey, h->name);
        return false;
    }
    return true;
}

/* hosts = ( { name = "ws2"; ... }, ... ): the list replaces any earlier one. */
static void
conf_get_hosts(struct conf_ctx *x, const struct conf_key *k, const config_setting_t *s,
               const char *key)
{
    char ekey[CONF_LINE_MAX / 2 + 16];
    int n, i, j, ok = 1;
    struct conf_host *hosts;

    if (config_setting_type(s) != CONFIG_TYPE_LIST) {
        conf_bad(x, k, s, key);
        return;
    }
    n = config_setting_length(s);
    if (n > CONF_MAX_HOSTS) {
        conf_error(x, conf_line(s), "%s: expected at most %d hosts, got %d", key,
                   CONF_MAX_HOSTS, n);
        return;
    }
    if ((hosts = calloc((size_t)n + 1, sizeof(*hosts))) == NULL) {
        x->nomem = true;
        return;
    }
    for (i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

        conf_host_clear(&hosts[i]);
        snprintf(ekey, sizeof(ekey), "%s[%d]", key, i);
        if (!conf_get_host(x, k, e, ekey, &hosts[i])) {
            ok = 0;
            continue;
        }
        for (j = 0; j < i; j++)
            if (hosts[j].name != NULL && strcmp(hosts[j].name, hosts[i].name) == 0) {
                conf_error(x, conf_line(e), "%s.name: %s is already in hosts[%d]", ekey,
                           hosts[i].name, j);
                ok = 0;
            }
    }
    if (!ok) {
        for (i = 0; i < n; i++)
            conf_host_free(&hosts[i]);
        free(hosts);
        return;
    }
    for (i = 0; i < x->c->nhosts; i++)
        conf_host_free(&x->c->hosts[i]);
    free(x->c->hosts);
    x->c->hosts = hosts;
    x->c->nhosts = n;
}

/* Check every member of group against keys; prefix is the group's key path. */
static void
conf_walk(struct conf_ctx *x, const struct conf_key *keys, const config_setting_t *group,
          const char *prefix)
{
    char key[CONF_LINE_MAX / 2];
    int i, n = config_setting_length(group);

    for (i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(s);
        const struct conf_key *k;

        if (name == NULL)
            continue;
        if (snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix != '\0' ? "." : "", name) >=
            (int)sizeof(key))
            memcpy(key + sizeof(key) - 4, "...", 4);
        for (k = keys; k->name != NULL && strcmp(k->name, name) != 0; k++)
            ;
        if (k->name == NULL)
            conf_error(x, conf_line(s), "%s: unknown key", key);
        else
            conf_get(x, k, s, key);
    }
}

/*
 * Rules between keys.  Each is checked only when both keys are valid, and
 * reported at the key this file set (the second one if it set both), so
 * the line points at what the user just wrote.
 */
static void
conf_cross_check(struct conf_ctx *x, const config_t *cfg)
{
    const struct conf *c = x->c;
    const config_setting_t *hb, *ht, *mm, *pq;

    hb = config_lookup(cfg, "heartbeat");
    ht = config_lookup(cfg, "host_timeout");
    if ((hb != NULL || ht != NULL) && !conf_is_bad(x, offsetof(struct conf, heartbeat)) &&
        !conf_is_bad(x, offsetof(struct conf, host_timeout)) &&
        !(c->host_timeout > c->heartbeat)) {
        if (ht != NULL)
            conf_error(x, conf_line(ht), "host_timeout: expected more than heartbeat (%g s), "
                       "got %g", c->heartbeat, c->host_timeout);
        else
            conf_error(x, conf_line(hb), "heartbeat: expected less than host_timeout (%g s), "
                       "got %g", c->host_timeout, c->heartbeat);
    }

    mm = config_lookup(cfg, "limits.max_message");
    pq = config_lookup(cfg, "limits.max_peer_queue");
    if ((mm != NULL || pq != NULL) && !conf_is_bad(x, offsetof(struct conf, max_message)) &&
        !conf_is_bad(x, offsetof(struct conf, max_peer_queue)) &&
        c->max_peer_queue < c->max_message) {
        if (pq != NULL)
            conf_error(x, conf_line(pq), "limits.max_peer_queue: expected at least "
                       "limits.max_message (%llu), got %llu",
                       (unsigned long long)c->max_message, (unsigned long long)c->max_peer_queue);
        else
            conf_error(x, conf_line(mm), "limits.max_message: expected at most "
                       "limits.max_peer_queue (%llu), got %llu",
                       (unsigned long long)c->max_peer_queue, (unsigned long long)c->max_message);
    }
}

/* Growable output of conf_fix_source. */
struct conf_buf {
    char *p;
    size_t len, cap;
};

static void
conf_buf_put(struct conf_ctx *x, struct conf_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);

        if (p == NULL) {
            x->nomem = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static bool
conf_is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static bool
conf_is_xdigit(char ch)
{
    return conf_is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static bool
conf_is_name_start(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '*';
}

static bool
conf_is_name_char(char ch)
{
    return conf_is_name_start(ch) || conf_is_digit(ch) || ch == '-' || ch == '_';
}

/*
 * Copy the integer literal src[0..n) (decimal with an optional sign, or hex
 * with its "0x") in the form libconfig 1.5 reads right: unchanged if it fits
 * in 32 bits, with an "L" if it fits in 64, else as a float.
 */
static void
conf_fix_int(struct conf_ctx *x, struct conf_buf *b, const char *src, size_t n, bool hex)
{
    char lit[80], out[96];
    bool fits64;
    long long v;

    if (n >= sizeof(lit)) {
        /* Longer than any 64-bit integer: any float beyond the range will do. */
        snprintf(out, sizeof(out), "%s1e%zu", src[0] == '-' ? "-" : "", n);
        conf_buf_put(x, b, out, strlen(out));
        return;
    }
    memcpy(lit, src, n);
    lit[n] = '\0';
    errno = 0;
    if (hex) {
        unsigned long long u = strtoull(lit, NULL, 16);

        fits64 = errno == 0 && u <= LLONG_MAX;
        v = (long long)u;
    } else {
        v = strtoll(lit, NULL, 10);
        fits64 = errno == 0;
    }
    if (fits64 && v >= INT_MIN && v <= INT_MAX) {
        conf_buf_put(x, b, lit, n);
    } else if (fits64) {
        conf_buf_put(x, b, lit, n);
        conf_buf_put(x, b, "L", 1);
    } else {
        /* strtod reads "0x..." too. */
        snprintf(out, sizeof(out), "%.17g", strtod(lit, NULL));
        if (strpbrk(out, ".e") == NULL)
            strcat(out, ".0");
        conf_buf_put(x, b, out, strlen(out));
    }
}

/*
 * If a number starts at src[i], copy it (fixed by conf_fix_int if it is an
 * integer) and return the index after it, "L" suffix included; else return i.
 * The token rules are those of libconfig's scanner.l.
 */
static size_t
conf_fix_number(struct conf_ctx *x, struct conf_buf *b, const char *src, size_t len, size_t i)
{
    size_t j = i, k;
    bool isfloat = false, hex = false;

    if (src[i] == '0' && i + 2 < len && (src[i + 1] == 'x' || src[i + 1] == 'X') &&
        conf_is_xdigit(src[i + 2])) {
        hex = true;
        for (j = i + 2; j < len && conf_is_xdigit(src[j]); j++)
            ;
    } else {
        if (src[j] == '-' || src[j] == '+')
            j++;
        if (!(j < len && (conf_is_digit(src[j]) ||
                          (src[j] == '.' && j + 1 < len && conf_is_digit(src[j + 1])))))
            return i;
        while (j < len && conf_is_digit(src[j]))
            j++;
        if (j < len && src[j] == '.') {
            isfloat = true;
            for (j++; j < len && conf_is_digit(src[j]); j++)
                ;
        }
        k = j;
        if (k < len && (src[k] == 'e' || src[k] == 'E')) {
            k++;
            if (k < len && (src[k] == '-' || src[k] == '+'))
                k++;
            if (k < len && conf_is_digit(src[k])) {
                while (k < len && conf_is_digit(src[k]))
                    k++;
                isfloat = true;
                j = k;
            }
        }
    }
    if (isfloat) {
        conf_buf_put(x, b, src + i, j - i);
        return j;
    }
    conf_fix_int(x, b, src + i, j - i, hex);
    /* conf_fix_int decided the suffix; drop the one written. */
    if (j < len && src[j] == 'L')
        j++;
    if (j < len && src[j] == 'L')
        j++;
    return j;
}

/*
 * Where libconfig expects a key, an unterminated string or comment makes it
 * drop the rest of the file without a word; so it is reported here, and the
 * text handed to libconfig ends before it.
 */
static void
conf_unterminated(struct conf_ctx *x, unsigned line, const char *what)
{
    conf_error(x, line, "syntax error: unterminated %s", what);
    x->cut = true;
}

/*
 * Rescan the file as libconfig's scanner would, and return a copy fixed for
 * its defects (see the top of this file).  Line breaks stay where they are,
 * so libconfig's line numbers stay right.  NULL only on ENOMEM.
 */
static char *
conf_fix_source(struct conf_ctx *x, const char *src, size_t len)
{
    struct conf_buf b = { NULL, 0, 0 };
    unsigned line = 1;
    bool line_start = true;     /* only blanks so far on this line */
    size_t i = 0, j;

    conf_buf_put(x, &b, "", 0);
    while (i < len && !x->nomem) {
        char ch = src[i];

        if (ch == '\n' || ch == ' ' || ch == '\t' || ch == '\r') {
            if (ch == '\n') {
                line++;
                line_start = true;
            }
            conf_buf_put(x, &b, src + i++, 1);
            continue;
        }
        if (ch == '@' && line_start) {
            /* Drop the directive but keep the line, and go on checking. */
            if (len - i >= 8 && strncmp(src + i, "@include", 8) == 0)
                conf_error(x, line, "@include is not supported; put every key in one file");
            else
                conf_error(x, line, "syntax error");
            while (i < len && src[i] != '\n')
                i++;
            continue;
        }
        line_start = false;
        j = i + 1;
        if (ch == '#' || (ch == '/' && j < len && src[j] == '/')) {
            while (j < len && src[j] != '\n')
                j++;
        } else if (ch == '/' && j < len && src[j] == '*') {
            unsigned first = line;

            for (j = i + 2; j < len && !(src[j] == '*' && j + 1 < len && src[j + 1] == '/');
                 j++)
                line += src[j] == '\n';
            if (j >= len) {
                conf_unterminated(x, first, "comment");
                break;
            }
            j += 2;
        } else if (ch == '"') {
            unsigned first = line;

            for (; j < len && src[j] != '"'; j++) {
                if (src[j] == '\\' && j + 1 < len)
                    j++;
                line += src[j] == '\n';
            }
            if (j >= len) {
                conf_unterminated(x, first, "string");
                break;
            }
            j++;
        } else if (conf_is_name_start(ch)) {
            while (j < len && conf_is_name_char(src[j]))
                j++;
        } else if ((j = conf_fix_number(x, &b, src, len, i)) != i) {
            i = j;
            continue;
        } else {
            j = i + 1;
        }
        conf_buf_put(x, &b, src + i, j - i);
        i = j;
    }
    if (x->nomem) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/*
 * Read the whole file.  Returns 0 with *out (NUL-terminated, *outlen bytes),
 * or -errno after writing the reason into diag.
 */
static int
conf_read_file(struct conf_ctx *x, char **out, size_t *outlen)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    ssize_t n;
    int fd, rc;

    /* O_NONBLOCK: a fifo with no writer is refused, not waited on. */
    fd = open(x->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        conf_error(x, 0, "cannot open: %s", strerror(-rc));
        return rc;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = -EISDIR;
        conf_error(x, 0, "cannot read: %s", strerror(EISDIR));
        goto bad;
    }
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
        rc = -EINVAL;
        conf_error(x, 0, "cannot read: not a regular file");
        goto bad;
    }
    for (;;) {
        if (len + 1 >= cap) {
            char *p;

            if (cap > CONF_FILE_MAX) {
                rc = WIRE_ECONF;
                conf_error(x, 0, "file is larger than %d bytes", CONF_FILE_MAX);
                goto bad;
            }
            cap = cap == 0 ? 4096 : cap * 2;
            if ((p = realloc(buf, cap)) == NULL) {
                rc = -ENOMEM;
                conf_error(x, 0, "out of memory");
                goto bad;
            }
            buf = p;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            conf_error(x, 0, "cannot read: %s", strerror(-rc));
            goto bad;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return 0;

bad:
    free(buf);
    close(fd);
    return rc;
}

static int
conf_copy(struct conf *dst, const struct conf *src)
{
    int i;

    *dst = *src;
    dst->listen_address = NULL;
    dst->tls_ca = dst->tls_cert = dst->tls_key = NULL;
    dst->hoststart = dst->log_file = NULL;
    for (i = 0; i < CONF_MAX_SPAWN_PATH; i++)
        dst->spawn_path[i] = NULL;
    dst->hosts = NULL;
    dst->nhosts = 0;

#define CONF_DUP(f)                                                                        \
    if (src->f != NULL && (dst->f = strdup(src->f)) == NULL)                               \
        goto nomem;
    CONF_DUP(listen_address)
    CONF_DUP(tls_ca)
    CONF_DUP(tls_cert)
    CONF_DUP(tls_key)
    CONF_DUP(hoststart)
    CONF_DUP(log_file)
    for (i = 0; i < src->spawn_path_len && i < CONF_MAX_SPAWN_PATH; i++)
        CONF_DUP(spawn_path[i])
    if (src->nhosts > 0) {
        if ((dst->hosts = calloc((size_t)src->nhosts, sizeof(*dst->hosts))) == NULL)
            goto nomem;
        for (dst->nhosts = 0; dst->nhosts < src->nhosts; dst->nhosts++) {
            const struct conf_host *sh = &src->hosts[dst->nhosts];
            struct conf_host *dh = &dst->hosts[dst->nhosts];

            *dh = *sh;
            dh->name = dh->address = dh->vmd = dh->home = NULL;
            for (i = 0; i < CONF_MAX_SPAWN_PATH; i++)
                dh->spawn_path[i] = NULL;
            CONF_DUP(hosts[dst->nhosts].name)
            CONF_DUP(hosts[dst->nhosts].address)
            CONF_DUP(hosts[dst->nhosts].vmd)
            CONF_DUP(hosts[dst->nhosts].home)
            for (i = 0; i < sh->spawn_path_len; i++)
                CONF_DUP(hosts[dst->nhosts].spawn_path[i])
        }
    }
#undef CONF_DUP
    return 0;

nomem:
    conf_free(dst);
    return -ENOMEM;
}

void
conf_defaults(struct conf *c)
{
    memset(c, 0, sizeof(*c));
    /* Allocation failure leaves a field NULL; conf_load then reports -ENOMEM. */
    c->listen_address = strdup("auto");
    c->listen_port = 0;
    c->tls_ca = strdup("certs/ca.pem");
    c->tls_cert = strdup("certs/%h.pem");
    c->tls_key = strdup("certs/%h.key");
    c->heartbeat = 1.0;
    c->host_timeout = 5.0;
    c->start_timeout = 30.0;
    c->load_interval = 1.0;
    c->quota_interval = 0.05;
    c->spawn_path[0] = strdup("$HOME/pvm3/bin/$PVM_ARCH");
    c->spawn_path[1] = strdup("$PVM_ROOT/bin/$PVM_ARCH");
    c->spawn_path_len = 2;
    c->hoststart = strdup("ssh -o BatchMode=yes %h %v");
    c->log_level = CONF_LOG_INFO;
    c->log_file = strdup("logs/%h.log");
    c->speed = 1000;
    c->max_message = 64ULL * 1024 * 1024;
    c->max_tasks = 4096;
    c->max_peer_queue = 256ULL * 1024 * 1024;
    c->max_handshakes = 64;
    c->max_handshakes_per_address = 16;
    c->cache_bytes = 0;
    c->llc_bytes = 0;
    c->send_certs = 1;
}

void
conf_free(struct conf *c)
{
    int i;

    free(c->listen_address);
    free(c->tls_ca);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->hoststart);
    free(c->log_file);
    c->listen_address = c->tls_ca = c->tls_cert = c->tls_key = NULL;
    c->hoststart = c->log_file = NULL;
    for (i = 0; i < CONF_MAX_SPAWN_PATH; i++) {
        free(c->spawn_path[i]);
        c->spawn_path[i] = NULL;
    }
    c->spawn_path_len = 0;
    for (i = 0; i < c->nhosts; i++)
        conf_host_free(&c->hosts[i]);
    free(c->hosts);
    c->hosts = NULL;
    c->nhosts = 0;
}

void
conf_host_clear(struct conf_host *h)
{
    memset(h, 0, sizeof(*h));
    h->port = -1;
    h->send_certs = -1;
}

void
conf_host_free(struct conf_host *h)
{
    free(h->name);
    free(h->address);
    free(h->vmd);
    free(h->home);
    for (int i = 0; i < CONF_MAX_SPAWN_PATH; i++)
        free(h->spawn_path[i]);
    conf_host_clear(h);
}

const struct conf_host *
conf_host_find(const struct conf *c, const char *name)
{
    for (int i = 0; i < c->nhosts; i++)
        if (c->hosts[i].name != NULL && strcmp(c->hosts[i].name, name) == 0)
            return &c->hosts[i];
    return NULL;
}

/* Every string a daemon will use is there (conf_defaults may have run out of memory). */
static bool
conf_complete(const struct conf *c)
{
    int i;

    if (c->listen_address == NULL || c->tls_ca == NULL || c->tls_cert == NULL ||
        c->tls_key == NULL || c->hoststart == NULL || c->log_file == NULL)
        return false;
    for (i = 0; i < c->spawn_path_len; i++)
        if (c->spawn_path[i] == NULL)
            return false;
    return true;
}

/*
 * Read, check and parse path into cfg (which the caller has initialised and
 * destroys).  Errors go into x's diag.  0 when libconfig could parse the
 * text, even if the checks found errors (so the caller walks it and reports
 * everything in one run); else -errno, -ENOMEM or WIRE_ECONF.
 */
static int
conf_parse_ctx(struct conf_ctx *x, config_t *cfg)
{
    char *text = NULL, *fixed = NULL;
    const char *nul;
    size_t len = 0;
    int rc;

    if ((rc = conf_read_file(x, &text, &len)) < 0)
        return rc;
    if ((nul = memchr(text, '\0', len)) != NULL) {
        unsigned line = 1;
        const char *p;

        for (p = text; p < nul; p++)
            line += *p == '\n';
        conf_error(x, line, "syntax error: NUL byte");
        free(text);
        return WIRE_ECONF;
    }
    fixed = conf_fix_source(x, text, len);
    free(text);
    if (fixed == NULL || x->nomem) {
        free(fixed);
        conf_error(x, 0, "out of memory");
        return -ENOMEM;
    }
    if (config_read_string(cfg, fixed) != CONFIG_TRUE) {
        const char *what = config_error_text(cfg);

        /* After a cut, libconfig's error is only the echo of the one reported. */
        if (!x->cut)
            conf_error(x, (unsigned)config_error_line(cfg), "%s",
                       what != NULL ? what : "syntax error");
        free(fixed);
        return WIRE_ECONF;
    }
    free(fixed);
    return 0;
}

static void
conf_ctx_init(struct conf_ctx *x, const char *path, struct conf_diag *diag)
{
    diag->nerrors = 0;
    diag->text[0] = '\0';
    memset(x, 0, sizeof(*x));
    x->path = path;
    x->diag = diag;
}

int
conf_parse(const char *path, config_t *cfg, struct conf_diag *diag)
{
    struct conf_ctx x;
    int rc;

    conf_ctx_init(&x, path, diag);
    rc = conf_parse_ctx(&x, cfg);
    conf_diag_finish(&x);
    return rc == 0 && diag->nerrors > 0 ? WIRE_ECONF : rc;
}

int
conf_load(const char *path, struct conf *c, struct conf_diag *diag)
{
    struct conf_diag scratch;
    struct conf_ctx x;
    struct conf tmp;
    config_t cfg;
    int rc;

    if (diag == NULL)
        diag = &scratch;
    conf_ctx_init(&x, path, diag);
    config_init(&cfg);
    if ((rc = conf_parse_ctx(&x, &cfg)) != 0) {
        config_destroy(&cfg);
        conf_diag_finish(&x);
        return rc;
    }
    if (conf_copy(&tmp, c) < 0) {
        config_destroy(&cfg);
        conf_error(&x, 0, "out of memory");
        return -ENOMEM;
    }
    x.c = &tmp;
    x.base = (char *)&tmp;
    conf_walk(&x, conf_top_keys, config_root_setting(&cfg), "");
    conf_cross_check(&x, &cfg);
    config_destroy(&cfg);

    if (x.nomem || !conf_complete(&tmp)) {
        rc = -ENOMEM;
        conf_error(&x, 0, "out of memory");
    } else if (diag->nerrors > 0) {
        rc = WIRE_ECONF;
    } else {
        conf_free(c);
        *c = tmp;
        return 0;
    }
    conf_diag_finish(&x);
    conf_free(&tmp);
    return rc;
}

char *
conf_expand(const char *tmpl, const char *host)
{
    size_t hlen, n = 0, o = 0;
    const char *p;
    char *out;

    if (tmpl == NULL)
        return NULL;
    if (host == NULL)
        host = "";
    hlen = strlen(host);
    for (p = tmpl; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'h') {
            if (n > SIZE_MAX - hlen - 1)
                return NULL;
            n += hlen;
            p++;
        } else {
            if (p[0] == '%' && p[1] == '%')
                p++;
            n++;
        }
    }
    if ((out = malloc(n + 1)) == NULL)
        return NULL;
    /* Other escapes (%v, %m in hoststart) pass through for the caller. */
    for (p = tmpl; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'h') {
            memcpy(out + o, host, hlen);
            o += hlen;
            p++;
        } else {
            if (p[0] == '%' && p[1] == '%')
                p++;
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return out;
}

int
conf_log_level_parse(const char *s)
{
    int i;

    if (s == NULL)
        return -EINVAL;
    for (i = 0; i < (int)(sizeof(conf_level_names) / sizeof(conf_level_names[0])); i++)
        if (strcmp(s, conf_level_names[i]) == 0)
            return i;
    return -EINVAL;
}
