/*
 * vmctl_env.c - the console verbs that act on the console itself, as in
 * PVM 3.4's console: alias, unalias, echo, and the environment that spawn
 * passes to tasks: export, unexport, setenv.  No seed idea.
 *
 * As in PVM, the export list is the variable PVM_EXPORT (names joined by
 * ':'), and spawn sends each variable it names with its value, the way
 * libpvm3's pvm_spawn does (lib/pvm/pvm_spawn.c); the daemon adds them to
 * the task's environment (daemon/vmd_spawn.c).  export and setenv change
 * vmctl's own environment, so they last for a console session.  Outside
 * the console there is no session to change: their changing forms print
 * what would apply and exit 1, and `vmctl spawn` takes PVM_EXPORT and the
 * variables from the shell's environment instead.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Outside the console a change cannot last: say so and fail.  shown: what
 * it would have been, for the text output. */
static int
no_session(const struct vmctl *v, const char *verb, const char *shown, const char *instead)
{
    char msg[1024];

    snprintf(msg, sizeof(msg), "%s: this changes a console session only; nothing was changed%s%s",
             verb, instead[0] ? "; " : "", instead);
    if (v->json) {
        vmctl_json_fail(v, msg, "ENOTSUP");
    } else {
        if (shown != NULL)
            printf("%s\n", shown);
        fprintf(stderr, "vmctl: %s\n", msg);
    }
    return VMCTL_EXIT_FAIL;
}

static void
alias_print(const struct vmctl *v, const struct vmctl_alias *a, int first)
{
    if (v->json) {
        printf("%s{\"name\":", first ? "" : ",");
        wire_json_str(stdout, a->name);
        printf(",\"command\":");
        wire_json_str(stdout, a->text);
        printf("}");
    } else {
        printf("%s\t%s\n", a->name, a->text);
    }
}

/* The words from argv[from] joined by blanks into buf. */
static int
join(char *buf, size_t cap, int argc, char **argv, int from)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = from; i < argc; i++) {
        int k = snprintf(buf + n, cap - n, "%s%s", i > from ? " " : "", argv[i]);
        if (k < 0 || (size_t)k >= cap - n)
            return -ENAMETOOLONG;
        n += (size_t)k;
    }
    return 0;
}

int
vmctl_cmd_alias(struct vmctl *v, int argc, char **argv)
{
    struct vmctl_session *s = v->sess;
    int rc = vmctl_verb_options(v, &argc, argv, 1);
    if (rc >= 0)
        return rc;
    if (argc <= 2) {
        /* List every alias, or the one named. */
        const struct vmctl_alias *one = argc == 2 ? vmctl_alias_find(s, argv[1]) : NULL;
        if (argc == 2 && one == NULL) {
            fprintf(stderr, "vmctl: alias: %s is no alias\n", argv[1]);
            return v->json ? (printf("{\"aliases\":[]}\n"), VMCTL_EXIT_FAIL) : VMCTL_EXIT_FAIL;
        }
        if (v->json)
            printf("{\"aliases\":[");
        for (int i = 0; s && i < s->naliases; i++)
            if (one == NULL || one == &s->aliases[i])
                alias_print(v, &s->aliases[i], one != NULL || i == 0);
        if (v->json)
            printf("]}\n");
        return VMCTL_EXIT_OK;
    }
    char text[1024];
    if (join(text, sizeof(text), argc, argv, 2) != 0 || strlen(argv[1]) >= 64) {
        fprintf(stderr, "vmctl: alias: name or command too long\n");
        return VMCTL_EXIT_USAGE;
    }
    if (s == NULL) {
        char shown[1100];

        snprintf(shown, sizeof(shown), "%s\t%s", argv[1], text);
        return no_session(v, "alias", shown, "");
    }
    if ((rc = vmctl_alias_set(s, argv[1], text)) != 0)
        return vmctl_fail(v, rc, "alias");
    if (v->json)
        printf("{\"ok\":true}\n");
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_unalias(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 1), failed = 0;
    if (rc >= 0)
        return rc;
    if (argc < 2)
        return vmctl_usage_error("unalias", "name at least one alias");
    if (v->sess == NULL)
        return no_session(v, "unalias", NULL, "");
    for (int i = 1; i < argc; i++)
        if (vmctl_alias_del(v->sess, argv[i]) != 0) {
            fprintf(stderr, "vmctl: unalias: %s is no alias\n", argv[i]);
            failed++;
        }
    if (v->json)
        printf("{\"ok\":%s}\n", failed ? "false" : "true");
    return failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

int
vmctl_cmd_echo(struct vmctl *v, int argc, char **argv)
{
    char text[8192];
    int rc = vmctl_verb_options(v, &argc, argv, 1);
    if (rc >= 0)
        return rc;
    if (join(text, sizeof(text), argc, argv, 1) != 0)
        return vmctl_usage_error("echo", "the words are too long");
    if (v->json) {
        printf("{\"text\":");
        wire_json_str(stdout, text);
        printf("}\n");
    } else {
        printf("%s\n", text);
    }
    return VMCTL_EXIT_OK;
}

/* Does the ':'-list have name? */
static int
list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* list with names added (add) or taken out into out. */
static int
list_edit(const char *list, int add, int argc, char **argv, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ':');
        int len = e ? (int)(e - p) : (int)strlen(p);
        char name[256];
        snprintf(name, sizeof(name), "%.*s", len, p);
        int drop = 0;
        for (int i = 1; !add && i < argc; i++)
            drop |= strcmp(argv[i], name) == 0;
        if (len > 0 && !drop) {
            int k = snprintf(out + n, cap - n, "%s%s", n ? ":" : "", name);
            if (k < 0 || (size_t)k >= cap - n)
                return -ENAMETOOLONG;
            n += (size_t)k;
        }
        p = e ? e + 1 : NULL;
    }
    for (int i = 1; add && i < argc; i++) {
        if (list_has(out, argv[i]))
            continue;
        int k = snprintf(out + n, cap - n, "%s%s", n ? ":" : "", argv[i]);
        if (k < 0 || (size_t)k >= cap - n)
            return -ENAMETOOLONG;
        n += (size_t)k;
    }
    return 0;
}

static void
export_print(const struct vmctl *v, const char *list)
{
    if (!v->json) {
        printf("PVM_EXPORT=%s\n", list);
        return;
    }
    printf("{\"PVM_EXPORT\":");
    wire_json_str(stdout, list);
    printf(",\"names\":[");
    int first = 1;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ':');
        char name[256];
        snprintf(name, sizeof(name), "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
        if (name[0]) {
            printf("%s", first ? "" : ",");
            wire_json_str(stdout, name);
            first = 0;
        }
        p = e ? e + 1 : p + strlen(p);
    }
    printf("]}\n");
}

static int
export_cmd(struct vmctl *v, int argc, char **argv, int add)
{
    const char *verb = add ? "export" : "unexport";
    int rc = vmctl_verb_options(v, &argc, argv, 1);
    if (rc >= 0)
        return rc;
    const char *list = getenv("PVM_EXPORT");
    char out[4096];
    if (argc == 1 && add) {
        export_print(v, list ? list : "");
        return VMCTL_EXIT_OK;
    }
    if (argc == 1)
        return vmctl_usage_error(verb, "name at least one variable");
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '\0' || strchr(argv[i], ':') || strchr(argv[i], '=')) {
            return vmctl_usage_error(verb, "%s is no variable name", argv[i]);
        }
    if (list_edit(list, add, argc, argv, out, sizeof(out)) != 0)
        return vmctl_fail(v, -ENAMETOOLONG, verb);
    if (v->sess == NULL) {
        if (!v->json)
            export_print(v, out);
        return no_session(v, verb, NULL, "set PVM_EXPORT in the shell: vmctl spawn passes the "
                                         "variables it names");
    }
    if (setenv("PVM_EXPORT", out, 1) != 0)
        return vmctl_fail(v, -errno, verb);
    if (v->json)
        export_print(v, out);
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_export(struct vmctl *v, int argc, char **argv)
{
    return export_cmd(v, argc, argv, 1);
}

int
vmctl_cmd_unexport(struct vmctl *v, int argc, char **argv)
{
    return export_cmd(v, argc, argv, 0);
}

/* One variable as JSON ("NAME":"value") or as PVM prints it. */
static void
env_print(const struct vmctl *v, const char *kv, int first)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL)
        return;
    if (!v->json) {
        printf("%s\n", kv);
        return;
    }
    char name[1024];
    snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
    printf("%s", first ? "" : ",");
    wire_json_str(stdout, name);
    printf(":");
    wire_json_str(stdout, eq + 1);
}

int
vmctl_cmd_setenv(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 1);
    if (rc >= 0)
        return rc;
    if (argc == 1) {
        if (v->json)
            printf("{\"env\":{");
        for (int i = 0; environ[i]; i++)
            env_print(v, environ[i], i == 0);
        if (v->json)
            printf("}}\n");
        return VMCTL_EXIT_OK;
    }
    if (argv[1][0] == '\0' || strchr(argv[1], '=')) {
        fprintf(stderr, "vmctl: setenv: %s is no variable name\n", argv[1]);
        return VMCTL_EXIT_USAGE;
    }
    if (argc == 2) {
        const char *val = getenv(argv[1]);
        if (v->json) {
            printf("{\"name\":");
            wire_json_str(stdout, argv[1]);
            printf(",\"value\":");
            if (val)
                wire_json_str(stdout, val);
            else
                printf("null");
            printf("}\n");
        } else if (val) {
            printf("%s\n", val);
        }
        return val ? VMCTL_EXIT_OK : VMCTL_EXIT_FAIL;
    }
    char value[8192];
    if (join(value, sizeof(value), argc, argv, 2) != 0)
        return vmctl_usage_error("setenv", "the value is too long");
    if (v->sess == NULL) {
        size_t n = strlen(argv[1]) + strlen(value) + 2;
        char *shown = malloc(n);

        if (shown != NULL)
            snprintf(shown, n, "%s=%s", argv[1], value);
        rc = no_session(v, "setenv", shown, "set the variable in the shell instead");
        free(shown);
        return rc;
    }
    if (setenv(argv[1], value, 1) != 0)
        return vmctl_fail(v, -errno, "setenv");
    if (v->json)
        printf("{\"ok\":true}\n");
    return VMCTL_EXIT_OK;
}

static int
set_by(const char *name, char (*extra)[VMCTL_TRACE_ENV], int n)
{
    size_t len = strlen(name);

    for (int i = 0; i < n; i++)
        if (strncmp(extra[i], name, len) == 0 && extra[i][len] == '=')
            return 1;
    return 0;
}

void
vmctl_env_put_exports(struct wire_wbuf *b, char (*extra)[VMCTL_TRACE_ENV], int nextra)
{
    const char *list = getenv("PVM_EXPORT");
    struct wire_wbuf tmp;
    uint32_t n = 0;

    wire_wbuf_init(&tmp);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ':');
        char name[256], kv[8192];
        snprintf(name, sizeof(name), "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
        p = e ? e + 1 : NULL;
        const char *val = name[0] ? getenv(name) : NULL;
        /* LIQUIDVM_* are the daemon's to set; it refuses them from us.
         * What the extras set (spawn -@'s PVMTMASK) is theirs. */
        if (val == NULL || strncmp(name, "LIQUIDVM_", 9) == 0 || set_by(name, extra, nextra) ||
            n >= 256 - (uint32_t)nextra ||
            (size_t)snprintf(kv, sizeof(kv), "%s=%s", name, val) >= sizeof(kv))
            continue;
        wire_put_str(&tmp, kv);
        n++;
    }
    for (int i = 0; i < nextra; i++, n++)
        wire_put_str(&tmp, extra[i]);
    wire_put_u32(b, n);
    if (tmp.len)
        wire_put_bytes(b, tmp.data, tmp.len);
    wire_wbuf_free(&tmp);
}
