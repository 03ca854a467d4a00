/*
 * vmctl_trace.c - the console's trace event mask (trace) and what spawn -@
 * gives the tasks it starts, as in PVM 3.4's console.
 *
 * A mask is PVM's Pvmtmask: TEV_MASK_LENGTH (36) bytes with the NUL, four
 * events to a character ('@' + bits), event k at character k / 4, bit
 * k % 4.  The events and their numbers are pvmtev.h's TEV_* (PVM 3.4.6);
 * the console names them in lower case without the prefix and lists all
 * but the daemon's own (newtask, endtask, spntask) and timing/profiling.
 * A session starts with the mask PVM's console gives XPVM.
 *
 * spawn -@[DIR] passes the mask on as PVMTMASK, which libpvm3 reads as
 * the task's own and its children's (pvm_tmask.c), and LIQUIDVM_TRACE, the
 * directory every task of the job writes its trace file into.  A traced
 * LiquidVM task records every kind of event, not the mask's alone: the
 * mask says whether a task traces, as a mask with no event set turns
 * tracing off.
 */
#include "vmctl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEV_COUNT 109

/* TEV_* numbers 0..108; NULL for those the console does not list. */
static const char *const tev_names[TEV_COUNT] = {
    "addhosts", "barrier", "bcast", "bufinfo", "config", "delete", "delhosts", "exit",
    "freebuf", "getfds", "getinst", "getopt", "getrbuf", "getsbuf", "gettid", "gsize",
    "halt", "initsend", "insert", "joingroup", "kill", "lookup", "lvgroup", "mcast",
    "mkbuf", "mstat", "mytid", "notify", "nrecv", "parent", "perror", "pkbyte",
    "pkcplx", "pkdcplx", "pkdouble", "pkfloat", "pkint", "pkuint", "pklong", "pkulong",
    "pkshort", "pkushort", "pkstr", "probe", "pstat", "recv", "recvf", "send",
    "sendsig", "setopt", "setrbuf", "setsbuf", "spawn", "start_pvmd", "tasks", "tickle",
    "tidtohost", "trecv", "upkbyte", "upkcplx", "upkdcplx", "upkdouble", "upkfloat", "upkint",
    "upkuint", "upklong", "upkulong", "upkshort", "upkushort", "upkstr", "version",
    "reg_hoster", "reg_rm", "reg_tasker", "reg_tracer", NULL /* newtask */,
    NULL /* endtask */, NULL /* spntask */, "archcode", "catchout", "getmwid", "gettmask",
    "hostsync", "packf", "precv", "psend", "reduce", "setmwid", "settmask", "unpackf",
    "gather", "scatter", "putinfo", "getinfo", "delinfo", "getmboxinfo", "newcontext",
    "freecontext", "setcontext", "getcontext", "siblings", "getminfo", "setminfo", "addmhf",
    "delmhf", "mhf_invoke", NULL /* timing */, NULL /* profiling */, "user_defined",
};

/* What PVM's console sets for XPVM: messages, groups, tasks' lives. */
static const char *const tev_xpvm[] = {
    "addmhf", "barrier", "bcast", "delmhf", "exit", "joingroup", "kill", "lvgroup",
    "mcast", "mhf_invoke", "mytid", "nrecv", "parent", "precv", "probe", "psend",
    "recv", "recvf", "send", "sendsig", "siblings", "spawn", "trecv", "user_defined",
};

/* A failure: text on stderr, or JSON on stdout with --json. */
static int __attribute__((format(printf, 4, 5)))
trace_fail(const struct vmctl *v, int status, const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (v->json) {
        vmctl_json_fail(v, msg, code);
    } else {
        fprintf(stderr, "vmctl: %s\n", msg);
    }
    return status;
}

/* An event's number by name, with or without PVM's "pvm_"; -1 if none. */
static int
tev_index(const char *name)
{
    if (strncmp(name, "pvm_", 4) == 0)
        name += 4;
    for (int k = 0; k < TEV_COUNT; k++)
        if (tev_names[k] != NULL && strcmp(tev_names[k], name) == 0)
            return k;
    return -1;
}

static void
mask_set(char *m, int k, int on)
{
    int bits = m[k / 4] - '@';

    bits = on ? bits | (1 << (k % 4)) : bits & ~(1 << (k % 4));
    m[k / 4] = (char)('@' + bits);
}

static int
mask_has(const char *m, int k)
{
    return ((m[k / 4] - '@') >> (k % 4)) & 1;
}

static void
mask_clear(char *m)
{
    memset(m, '@', VMCTL_TMASK_LEN - 1);
    m[VMCTL_TMASK_LEN - 1] = '\0';
}

void
vmctl_tmask_default(char *m)
{
    mask_clear(m);
    for (size_t i = 0; i < sizeof(tev_xpvm) / sizeof(tev_xpvm[0]); i++)
        mask_set(m, tev_index(tev_xpvm[i]), 1);
}

int
vmctl_tmask_any(const char *m)
{
    for (int i = 0; i < VMCTL_TMASK_LEN - 1; i++)
        if (m[i] != '@')
            return 1;
    return 0;
}

/* The listed events in name order, as the console prints them. */
static int
sorted_events(int *out)
{
    int n = 0;

    for (int k = 0; k < TEV_COUNT; k++) {
        int at = n;

        if (tev_names[k] == NULL)
            continue;
        while (at > 0 && strcmp(tev_names[out[at - 1]], tev_names[k]) > 0) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = k;
        n++;
    }
    return n;
}

static void
mask_print(const struct vmctl *v, const char *m)
{
    int ev[TEV_COUNT], n = sorted_events(ev), rows = (n + 3) / 4;

    if (v->json) {
        printf("{\"mask\":\"%s\",\"events\":[", m);
        for (int i = 0, first = 1; i < n; i++)
            if (mask_has(m, ev[i])) {
                printf("%s\"%s\"", first ? "" : ",", tev_names[ev[i]]);
                first = 0;
            }
        printf("]}\n");
        return;
    }
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < 4 && c * rows + r < n; c++) {
            int k = ev[c * rows + r];

            printf(" %c %-16s", mask_has(m, k) ? '*' : ' ', tev_names[k]);
        }
        printf("\n");
    }
}

int
vmctl_cmd_trace(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 0);
    char one[VMCTL_TMASK_LEN], *m;
    int on = 1, i = 1;

    if (rc >= 0)
        return rc;
    if (v->sess != NULL) {
        m = v->sess->tmask;
    } else {
        vmctl_tmask_default(one);
        m = one;
    }
    if (argc == 1) {
        mask_print(v, m);
        return VMCTL_EXIT_OK;
    }
    if (strcmp(argv[1], "buf") == 0 || strcmp(argv[1], "opt") == 0)
        return trace_fail(v, VMCTL_EXIT_FAIL, "ENOTSUP",
                          "trace: %s: a LiquidVM task keeps its events in memory and writes "
                          "them, every kind and with times, when it exits; there is nothing "
                          "to set", argv[1]);
    if (strcmp(argv[1], "+") == 0 || strcmp(argv[1], "-") == 0) {
        on = argv[1][0] == '+';
        i = 2;
    }
    if (i >= argc)
        return vmctl_usage_error("trace", "name the events after %s", argv[1]);
    /* Every name is checked before the mask changes. */
    for (int k = i; k < argc; k++)
        if (strcmp(argv[k], "*") != 0 && tev_index(argv[k]) < 0 &&
            !(argc == 2 && strcmp(argv[k], "xpvm") == 0))
            return trace_fail(v, VMCTL_EXIT_USAGE, "EINVAL", "trace: no such event \"%s\"",
                              argv[k]);
    if (v->sess == NULL)
        return trace_fail(v, VMCTL_EXIT_FAIL, "ENOTSUP",
                          "trace: the mask belongs to a console session (and its spawn -@); "
                          "from the shell, spawn -@ uses PVM's default");
    if (argc == 2 && strcmp(argv[1], "xpvm") == 0) {
        vmctl_tmask_default(m);
        return VMCTL_EXIT_OK;
    }
    for (; i < argc; i++)
        if (strcmp(argv[i], "*") == 0) {
            for (int k = 0; k < TEV_COUNT; k++)
                mask_set(m, k, on);
        } else {
            mask_set(m, tev_index(argv[i]), on);
        }
    return VMCTL_EXIT_OK;
}

/* mkdir -p of dir's parents, then dir itself: 0, or -1 with errno (EEXIST
 * when dir was there). */
static int
mkdir_new(char *dir)
{
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        int rc = mkdir(dir, 0777);
        *s = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(dir, 0777);
}

/*
 * The default folder of a traced spawn: a new one per run,
 * LIQUIDVM_HOME/trace/PROGRAM-YYYYmmdd-HHMMSS (-2, -3, ... when that one
 * is there), made here, so that runs do not mix and tids that repeat
 * between runs overwrite nothing.  0, or -1 with errno.
 */
static int
run_dir(const char *home, const char *program, char *dir, size_t cap)
{
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;

    if (localtime_r(&now, &tm) == NULL || strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm) == 0)
        snprintf(stamp, sizeof(stamp), "%lld", (long long)now);
    for (int k = 1; k < 1000; k++) {
        int n = k == 1 ? snprintf(dir, cap, "%s/trace/%s-%s", home, base, stamp)
                       : snprintf(dir, cap, "%s/trace/%s-%s-%d", home, base, stamp, k);

        if (n < 0 || (size_t)n >= cap)
            return errno = ENAMETOOLONG, -1;
        if (mkdir_new(dir) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return errno = EEXIST, -1;
}

/*
 * spawn -@[DIR] PROGRAM: the tasks' environment entries for a traced job
 * into env[0..3) (each of cap bytes) and the directory into dir: DIR made
 * absolute, or a new folder of LIQUIDVM_HOME/trace for this run (run_dir).
 * The run's name (LIQUIDVM_TRACE_RUN) is the same for every task spawned
 * here, and for theirs.  0, or VMCTL_EXIT_* with the reason said.
 */
int
vmctl_trace_env(const struct vmctl *v, const char *arg, const char *program,
                char env[3][VMCTL_TRACE_ENV], char *dir, size_t cap)
{
    char tmask[VMCTL_TMASK_LEN], cwd[PATH_MAX], home[PATH_MAX];
    const char *m = v->sess != NULL ? v->sess->tmask : NULL;
    struct timespec ts;
    int n;

    if (m == NULL) {
        vmctl_tmask_default(tmask);
        m = tmask;
    }
    if (!vmctl_tmask_any(m))
        return trace_fail(v, VMCTL_EXIT_USAGE, "EINVAL",
                          "spawn: -@: the trace mask has no event set, so nothing would be "
                          "traced (trace xpvm sets PVM's default)");
    /* Tasks start in their home directory: a relative name is made
     * absolute here, the VM's home too (--home or LIQUIDVM_HOME). */
    const char *name = arg[0] != '\0' ? arg : v->home;

    if (name[0] == '/')
        n = snprintf(home, sizeof(home), "%s", name);
    else if (getcwd(cwd, sizeof(cwd)) != NULL)
        n = snprintf(home, sizeof(home), "%s/%s", cwd, name);
    else
        return trace_fail(v, VMCTL_EXIT_FAIL, "EIO", "spawn: -@: %s", strerror(errno));
    if (n < 0 || (size_t)n >= sizeof(home))
        return trace_fail(v, VMCTL_EXIT_USAGE, "ENAMETOOLONG",
                          "spawn: -@: the trace directory's name is too long");
    if (arg[0] != '\0')
        n = snprintf(dir, cap, "%s", home);
    else if (run_dir(home, program, dir, cap) != 0)
        return trace_fail(v, errno == ENAMETOOLONG ? VMCTL_EXIT_USAGE : VMCTL_EXIT_FAIL,
                          errno == ENAMETOOLONG ? "ENAMETOOLONG" : "EIO",
                          "spawn: -@: cannot make a trace folder in %s/trace: %s", home,
                          strerror(errno));
    if (n < 0 || (size_t)n >= cap ||
        snprintf(env[0], VMCTL_TRACE_ENV, "LIQUIDVM_TRACE=%s", dir) >= VMCTL_TRACE_ENV)
        return trace_fail(v, VMCTL_EXIT_USAGE, "ENAMETOOLONG",
                          "spawn: -@: the trace directory's name is too long");
    snprintf(env[1], VMCTL_TRACE_ENV, "PVMTMASK=%s", m);
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(env[2], VMCTL_TRACE_ENV, "LIQUIDVM_TRACE_RUN=vmctl%d-%lld", (int)getpid(),
             (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
    return 0;
}
