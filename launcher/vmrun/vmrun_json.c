/*
 * vmrun_json.c - a recursive-descent JSON reader (vmrun_json.h): enough
 * of RFC 8259 for the traces vmrun writes and tools may rewrite -- every
 * value type, escapes (\uXXXX kept as '?' outside ASCII), nesting capped
 * so that a hostile file cannot exhaust the stack.
 */
#include "vmrun_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VJ_DEPTH 64

struct vj_in {
    const char *s, *end;
    int line;
    char *err;
    size_t errlen;
    int rc;
};

static int
vj_fail(struct vj_in *in, const char *what)
{
    if (in->rc == 0) {
        snprintf(in->err, in->errlen, "line %d: %s", in->line, what);
        in->rc = -EINVAL;
    }
    return in->rc;
}

static void
vj_space(struct vj_in *in)
{
    while (in->s < in->end && (*in->s == ' ' || *in->s == '\t' || *in->s == '\n' ||
                               *in->s == '\r')) {
        in->line += *in->s == '\n';
        in->s++;
    }
}

static int
vj_string(struct vj_in *in, char **out)
{
    const char *p = ++in->s;
    size_t n = 0;
    char *d;

    while (p < in->end && *p != '"') {
        if (*p == '\\')
            p++;
        p++;
    }
    if (p >= in->end)
        return vj_fail(in, "unterminated string");
    if ((d = malloc((size_t)(p - in->s) + 1)) == NULL)
        return in->rc = -ENOMEM;
    while (in->s < p) {
        char c = *in->s++;

        if (c == '\\') {
            c = *in->s++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned u = 0;

                if (p - in->s < 4 || sscanf(in->s, "%4x", &u) != 1) {
                    free(d);
                    return vj_fail(in, "bad \\u escape");
                }
                in->s += 4;
                c = u < 0x80 ? (char)u : '?';
                break;
            }
            default: break; /* \" \\ \/ */
            }
        }
        d[n++] = c;
    }
    d[n] = '\0';
    in->s = p + 1;
    *out = d;
    return 0;
}

static int vj_value(struct vj_in *in, struct vmrun_json *out, int depth);

/* Members of an array or object, until close. */
static int
vj_members(struct vj_in *in, struct vmrun_json *out, int obj, int depth)
{
    int cap = 0;
    char close = obj ? '}' : ']';

    in->s++;
    vj_space(in);
    if (in->s < in->end && *in->s == close) {
        in->s++;
        return 0;
    }
    for (;;) {
        char *key = NULL;

        vj_space(in);
        if (obj) {
            if (in->s >= in->end || *in->s != '"')
                return vj_fail(in, "expected a key");
            if (vj_string(in, &key) != 0)
                return in->rc;
            vj_space(in);
            if (in->s >= in->end || *in->s != ':') {
                free(key);
                return vj_fail(in, "expected ':'");
            }
            in->s++;
        }
        if (out->n == cap) {
            int c = cap ? 2 * cap : 8;
            struct vmrun_json *v = realloc(out->v, (size_t)c * sizeof(*v));
            char **k = obj ? realloc(out->k, (size_t)c * sizeof(*k)) : NULL;

            if (v != NULL)
                out->v = v;
            if (k != NULL)
                out->k = k;
            if (v == NULL || (obj && k == NULL)) {
                free(key);
                return in->rc = -ENOMEM;
            }
            cap = c;
        }
        memset(&out->v[out->n], 0, sizeof(out->v[0]));
        if (obj)
            out->k[out->n] = key;
        out->n++;
        if (vj_value(in, &out->v[out->n - 1], depth + 1) != 0)
            return in->rc;
        vj_space(in);
        if (in->s < in->end && *in->s == ',') {
            in->s++;
            continue;
        }
        if (in->s < in->end && *in->s == close) {
            in->s++;
            return 0;
        }
        return vj_fail(in, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int
vj_value(struct vj_in *in, struct vmrun_json *out, int depth)
{
    vj_space(in);
    if (depth > VJ_DEPTH)
        return vj_fail(in, "nested too deeply");
    if (in->s >= in->end)
        return vj_fail(in, "unexpected end");
    switch (*in->s) {
    case '{':
        out->type = VJ_OBJ;
        return vj_members(in, out, 1, depth);
    case '[':
        out->type = VJ_ARR;
        return vj_members(in, out, 0, depth);
    case '"':
        out->type = VJ_STR;
        return vj_string(in, &out->str);
    case 't':
    case 'f':
    case 'n': {
        static const char *const word[] = { "true", "false", "null" };

        for (int i = 0; i < 3; i++)
            if ((size_t)(in->end - in->s) >= strlen(word[i]) &&
                memcmp(in->s, word[i], strlen(word[i])) == 0) {
                out->type = i < 2 ? VJ_BOOL : VJ_NULL;
                out->num = i == 0;
                in->s += strlen(word[i]);
                return 0;
            }
        return vj_fail(in, "unexpected word");
    }
    default: {
        char buf[64], *e;
        size_t n = 0;

        /* strchr finds a NUL byte too: it is no part of a number. */
        while (in->s + n < in->end && n < sizeof(buf) - 1 && in->s[n] != '\0' &&
               strchr("+-0123456789.eE", in->s[n]))
            n++;
        memcpy(buf, in->s, n);
        buf[n] = '\0';
        out->num = strtod(buf, &e);
        if (n == 0 || *e != '\0')
            return vj_fail(in, "expected a value");
        out->type = VJ_NUM;
        in->s += n;
        return 0;
    }
    }
}

int
vmrun_json_parse(const char *text, size_t len, struct vmrun_json *out, char *err, size_t errlen)
{
    struct vj_in in = { text, text + len, 1, err, errlen, 0 };

    memset(out, 0, sizeof(*out));
    if (vj_value(&in, out, 0) == 0) {
        vj_space(&in);
        if (in.s != in.end)
            vj_fail(&in, "text after the value");
    }
    if (in.rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    if (in.rc != 0)
        vmrun_json_free(out);
    return in.rc;
}

void
vmrun_json_free(struct vmrun_json *j)
{
    for (int i = 0; i < j->n; i++) {
        vmrun_json_free(&j->v[i]);
        if (j->k != NULL)
            free(j->k[i]);
    }
    free(j->v);
    free(j->k);
    free(j->str);
    memset(j, 0, sizeof(*j));
}

const struct vmrun_json *
vmrun_json_get(const struct vmrun_json *j, const char *key)
{
    if (j == NULL || j->type != VJ_OBJ)
        return NULL;
    for (int i = 0; i < j->n; i++)
        if (strcmp(j->k[i], key) == 0)
            return &j->v[i];
    return NULL;
}

double
vmrun_json_num(const struct vmrun_json *j, const char *key, double dflt)
{
    const struct vmrun_json *v = vmrun_json_get(j, key);

    return v != NULL && (v->type == VJ_NUM || v->type == VJ_BOOL) ? v->num : dflt;
}

const char *
vmrun_json_str(const struct vmrun_json *j, const char *key)
{
    const struct vmrun_json *v = vmrun_json_get(j, key);

    return v != NULL && v->type == VJ_STR ? v->str : NULL;
}

int
vmrun_json_clamp(double v, int dflt)
{
    if (isnan(v))
        return dflt;
    return v <= INT_MIN ? INT_MIN : v >= INT_MAX ? INT_MAX : (int)v;
}

int
vmrun_json_int(const struct vmrun_json *j, const char *key, int dflt)
{
    const struct vmrun_json *v = vmrun_json_get(j, key);

    return v != NULL && (v->type == VJ_NUM || v->type == VJ_BOOL) ? vmrun_json_clamp(v->num, dflt)
                                                                    : dflt;
}
