/*
 * vmctl_task.c - the console's task verbs, as PVM's console has them:
 * spawn, ps, kill, sig, reset, pstat, mstat (no seed idea of its own).
 * vmctl enrolls as a task of its daemon (like PVM's console) and speaks
 * the wire protocol directly.
 */
#include "vmctl.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TASK_TIMEOUT_MS 60000
#define PVM_TASK_HOST 1
#define PVM_TASK_ARCH 2

struct vtask {
    int fd;
    uint32_t tid;
    int shared;                 /* the console session's connection: left open */
    int show_output;            /* print children's output lines */
    struct vmctl_outsrc out;    /* spawn -o: whose output is still to end */
    unsigned char hostwatch[VMCTL_HOSTS_BITS];
};

/* A frame that is not the reply we wait for: a task's output, or a host's
 * loss that ends its tasks' output, kept track of rather than dropped. */
static void
task_frame(struct vmctl *v, struct vtask *t, const struct wire_hdr *h, const unsigned char *b)
{
    if (h->type != WIRE_T_MSG)
        return;
    if (h->ctx == WIRE_CTX_OUTPUT) {
        vmctl_outsrc_frame(&t->out, t->fd, h, b);
        if (t->show_output && !v->json && vmctl_output_line(h))
            printf("[t%x] %.*s\n", h->src, (int)h->len, b ? (const char *)b : "");
    } else if (h->tag == VMCTL_HOSTDEL_TAG && (h->src & WIRE_TID_LOCAL_MASK) == 0 &&
               h->len >= 4 && b != NULL) {
        vmctl_outsrc_host_lost(&t->out, wire_be32_get(b));
    }
    fflush(stdout);
}

/* vmctl_request, but frames that arrive before the reply are handled. */
static int
task_request(struct vmctl *v, struct vtask *t, int type, const struct wire_wbuf *req,
             unsigned char **body, size_t *len, int *status)
{
    static uint32_t next_id = 1u << 30;
    struct wire_hdr h = { .type = (uint8_t)type, .id = ++next_id };
    /* On the session's connection other frames belong to the session's jobs. */
    if (t->shared)
        return vmctl_request(t->fd, type, req, TASK_TIMEOUT_MS, body, len, status);
    int rc = wire_write_frame(t->fd, &h, req ? req->data : NULL, req ? req->len : 0);
    *body = NULL;
    *len = 0;
    if (rc != 0)
        return rc;
    for (;;) {
        struct wire_hdr r;
        unsigned char *b;
        rc = wire_read_frame(t->fd, 1u << 26, TASK_TIMEOUT_MS, &r, &b);
        if (rc <= 0)
            return rc == 0 ? -ETIMEDOUT : rc;
        if (r.type == WIRE_T_REPLY && r.id == h.id) {
            *body = b;
            *len = r.len;
            *status = r.tag;
            return 0;
        }
        task_frame(v, t, &r, b);
        free(b);
    }
}

static int
enroll(struct vmctl *v, struct vtask *t)
{
    return vmctl_task_open(v, &t->fd, &t->tid, &t->shared);
}

static int
fail(struct vmctl *v, int code, const char *what)
{
    return vmctl_fail(v, code, what);
}

static int
usage(const char *text)
{
    fprintf(stderr, "%s", text);
    return VMCTL_EXIT_USAGE;
}

/*
 * The options of a command that takes nothing else: --json sets JSON
 * output wherever it stands, --help prints text and answers 0 (*done set),
 * anything else is bad usage, so that a mistyped flag never runs a command
 * that kills tasks.
 */
static int
bare_options(struct vmctl *v, int argc, char **argv, const char *text, int *done)
{
    *done = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            *done = 1;
            printf("%s", text);
            return VMCTL_EXIT_OK;
        } else {
            fprintf(stderr, "vmctl: unexpected argument %s\n", argv[i]);
            return usage(text);
        }
    }
    return VMCTL_EXIT_OK;
}

static int
parse_tid(const char *s, uint32_t *tid)
{
    char *end;
    if (s[0] == 't')
        s++;
    unsigned long v = strtoul(s, &end, 16);
    if (*s == '\0' || *end != '\0' || v == 0 || v > 0x3fffffff)
        return -EINVAL;
    *tid = (uint32_t)v;
    return 0;
}

/* Tasks of where (0: all), printed or as JSON; returns an exit status. */
static int
list_tasks(struct vmctl *v, struct vtask *t, uint32_t where, int quiet, int *count)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status;
    wire_wbuf_init(&req);
    wire_put_u32(&req, where);
    int rc = vmctl_request(t->fd, WIRE_T_TASK_LIST, &req, TASK_TIMEOUT_MS, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = status;
    if (rc != 0) {
        free(body);
        return rc;
    }
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &n) != 0) {
        free(body);
        return WIRE_EFRAME;
    }
    /* Group memberships, as PVM's ps showed them; none if the table is out of reach. */
    struct vmctl_group *groups = NULL;
    int ngroups = 0;
    char gbuf[1024];
    if (!quiet && vmctl_groups_fetch(t->fd, &groups, &ngroups) != 0)
        ngroups = 0;
    if (!quiet && v->json)
        printf("{\"tasks\":[");
    else if (!quiet)
        printf("%8s %8s %8s %6s %s\n", "HOST", "TID", "PTID", "PID", "COMMAND [GROUP:INST...]");
    int shown = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t tid, ptid, host, flag, pid;
        char name[256];
        if (wire_get_u32(&r, &tid) || wire_get_u32(&r, &ptid) || wire_get_u32(&r, &host) ||
            wire_get_u32(&r, &flag) || wire_get_str(&r, name, sizeof(name)) ||
            wire_get_u32(&r, &pid))
            break;
        if (tid == t->tid)
            continue;       /* not ourselves */
        if (!quiet && v->json) {
            printf("%s{\"tid\":%u,\"ptid\":%u,\"host\":%u,\"flag\":%u,\"pid\":%u,\"command\":",
                   shown ? "," : "", tid, ptid, host, flag, pid);
            wire_json_str(stdout, name);
            printf(",\"groups\":[");
            int k = 0;
            for (int gi = 0; gi < ngroups; gi++)
                for (int m = 0; m < groups[gi].size; m++)
                    if (groups[gi].members[m].tid == tid) {
                        printf("%s{\"name\":", k++ ? "," : "");
                        wire_json_str(stdout, groups[gi].name);
                        printf(",\"inst\":%d}", groups[gi].members[m].inst);
                    }
            printf("]}");
        } else if (!quiet) {
            vmctl_groups_of(groups, ngroups, tid, gbuf, sizeof(gbuf));
            printf("%8x %8x %8x %6u %s%s%s\n", host, tid, ptid, pid, name, gbuf[0] ? " " : "",
                   gbuf);
        }
        shown++;
    }
    if (!quiet && v->json)
        printf("]}\n");
    vmctl_groups_free(groups, ngroups);
    free(body);
    if (count)
        *count = shown;
    return 0;
}

static int
kill_one(struct vtask *t, uint32_t tid, int sig)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status;
    wire_wbuf_init(&req);
    wire_put_u32(&req, tid);
    wire_put_u32(&req, (uint32_t)sig);
    int rc = vmctl_request(t->fd, WIRE_T_TASK_KILL, &req, TASK_TIMEOUT_MS, &body, &len, &status);
    wire_wbuf_free(&req);
    free(body);
    return rc ? rc : status;
}

int
vmctl_cmd_ps(struct vmctl *v, int argc, char **argv)
{
    struct vtask t = { .fd = -1 };
    int all = 0, rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-a") == 0)
            all = 1;
        else if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return printf("usage: vmctl ps [-a] [--json]\n  The tasks of this daemon's host, "
                          "or of every host with -a.\n"), VMCTL_EXIT_OK;
        else
            return usage("usage: vmctl ps [-a] [--json]\n");
    }
    if ((rc = enroll(v, &t)) != 0)
        return fail(v, rc, "ps");
    rc = list_tasks(v, &t, all ? 0 : (t.tid & ~WIRE_TID_LOCAL_MASK), 0, NULL);
    vmctl_task_close(t.fd, t.shared);
    return rc ? fail(v, rc, "ps") : VMCTL_EXIT_OK;
}

static int
signal_cmd(struct vmctl *v, int argc, char **argv, int sig, const char *what)
{
    struct vtask t = { .fd = -1 };
    uint32_t tids[256];
    int n = 0, rc, failed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
            continue;
        }
        if (n >= 256 || parse_tid(argv[i], &tids[n]) != 0)
            return usage("expected task ids such as t40001\n");
        n++;
    }
    if (n == 0)
        return usage("name at least one task id\n");
    if ((rc = enroll(v, &t)) != 0)
        return fail(v, rc, what);
    if (v->json)
        printf("{\"results\":[");
    for (int i = 0; i < n; i++) {
        rc = kill_one(&t, tids[i], sig);
        failed += rc != 0;
        if (v->json)
            printf("%s{\"tid\":%u,\"status\":\"%s\"}", i ? "," : "", tids[i],
                   rc ? wire_errname(rc) : "ok");
        else if (rc)
            fprintf(stderr, "vmctl: %s t%x: %s\n", what, tids[i], wire_strerror(rc));
    }
    if (v->json)
        printf("],\"ok\":%s}\n", failed ? "false" : "true");
    vmctl_task_close(t.fd, t.shared);
    return failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

int
vmctl_cmd_kill(struct vmctl *v, int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
        return printf("usage: vmctl kill TID... [--json]\n"), VMCTL_EXIT_OK;
    return signal_cmd(v, argc, argv, 0, "kill");
}

int
vmctl_cmd_sig(struct vmctl *v, int argc, char **argv)
{
    char *end;
    if (argc < 3 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
        return argc < 3 ? usage("usage: vmctl sig SIGNUM TID... [--json]\n")
                        : (printf("usage: vmctl sig SIGNUM TID... [--json]\n"), VMCTL_EXIT_OK);
    long sig = strtol(argv[1], &end, 10);
    if (*end || sig < 1 || sig > 64)
        return usage("sig: expected a signal number 1..64\n");
    return signal_cmd(v, argc - 1, argv + 1, (int)sig, "sig");
}

int
vmctl_cmd_pstat(struct vmctl *v, int argc, char **argv)
{
    struct vtask t = { .fd = -1 };
    int rc, failed = 0, n = 0;
    uint32_t tids[256];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else if (n < 256 && parse_tid(argv[i], &tids[n]) == 0)
            n++;
        else
            return usage("usage: vmctl pstat TID... [--json]\n");
    }
    if (n == 0)
        return usage("usage: vmctl pstat TID... [--json]\n");
    if ((rc = enroll(v, &t)) != 0)
        return fail(v, rc, "pstat");
    if (v->json)
        printf("{\"tasks\":[");
    for (int i = 0; i < n; i++) {
        int count = 0;
        rc = list_tasks(v, &t, tids[i], 1, &count);
        int alive = rc == 0 && count > 0;
        failed += !alive;
        if (v->json)
            printf("%s{\"tid\":%u,\"status\":\"%s\"}", i ? "," : "", tids[i],
                   alive ? "running" : "gone");
        else
            printf("t%x: %s\n", tids[i], alive ? "running" : "no such task");
    }
    if (v->json)
        printf("]}\n");
    vmctl_task_close(t.fd, t.shared);
    return failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

/* PVM's mailbox class of the tasks that set PvmNoReset (pvm3.h's
 * PVMNORESETCLASS; lib/pvm/pvm_noreset.c puts them there). */
#define NORESET_CLASS "###_PVM_NO_RESET_###"
#define NORESET_MAX 4096

/* The tids in NORESET_CLASS into tids[] (at most NORESET_MAX); their number. */
static int
noresets(struct vtask *t, uint32_t *tids)
{
    struct wire_wbuf req;
    struct wire_rbuf r;
    unsigned char *body = NULL;
    size_t len;
    uint32_t nclass;
    int status, n = 0;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);      /* the owner: our daemon fills it in */
    wire_put_str(&req, NORESET_CLASS);
    int rc = vmctl_request(t->fd, WIRE_T_MBOX_LIST, &req, TASK_TIMEOUT_MS, &body, &len, &status);
    wire_wbuf_free(&req);
    wire_rbuf_init(&r, body, rc == 0 && status == 0 ? len : 0);
    if (wire_get_u32(&r, &nclass) == 0)
        for (uint32_t i = 0; i < nclass; i++) {
            char name[256];
            uint32_t ne, owner, flags;
            int32_t index;
            if (wire_get_str(&r, name, sizeof(name)) || wire_get_u32(&r, &ne))
                break;
            for (uint32_t k = 0; k < ne; k++) {
                if (wire_get_i32(&r, &index) || wire_get_u32(&r, &owner) ||
                    wire_get_u32(&r, &flags))
                    break;
                if (strcmp(name, NORESET_CLASS) == 0 && owner != 0 && n < NORESET_MAX)
                    tids[n++] = owner;
            }
        }
    free(body);
    return n;
}

static int
spared(uint32_t tid, const uint32_t *tids, int n)
{
    for (int i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

int
vmctl_cmd_reset(struct vmctl *v, int argc, char **argv)
{
    struct vtask t = { .fd = -1 };
    int rc, done;

    rc = bare_options(v, argc, argv,
                      "usage: vmctl reset [--json]\n  Kill every task of the VM but vmctl and those that set "
                      "PvmNoReset.\n", &done);
    if (rc != VMCTL_EXIT_OK || done)
        return rc;
    if ((rc = enroll(v, &t)) != 0)
        return fail(v, rc, "reset");
    /* Every task of the VM but ourselves and those that set PvmNoReset,
     * as PVM's console reset. */
    uint32_t keep[NORESET_MAX];
    int nkeep = noresets(&t, keep);
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status, killed = 0;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);
    rc = vmctl_request(t.fd, WIRE_T_TASK_LIST, &req, TASK_TIMEOUT_MS, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0 && status == 0) {
        struct wire_rbuf r;
        uint32_t n;
        wire_rbuf_init(&r, body, len);
        if (wire_get_u32(&r, &n) == 0)
            for (uint32_t i = 0; i < n; i++) {
                uint32_t tid, ptid, host, flag, pid;
                char name[256];
                if (wire_get_u32(&r, &tid) || wire_get_u32(&r, &ptid) ||
                    wire_get_u32(&r, &host) || wire_get_u32(&r, &flag) ||
                    wire_get_str(&r, name, sizeof(name)) || wire_get_u32(&r, &pid))
                    break;
                if (tid != t.tid && !spared(tid, keep, nkeep) && kill_one(&t, tid, 0) == 0)
                    killed++;
            }
    }
    free(body);
    vmctl_task_close(t.fd, t.shared);
    if (rc || status)
        return fail(v, rc ? rc : status, "reset");
    if (v->json)
        printf("{\"ok\":true,\"killed\":%d}\n", killed);
    else
        printf("%d task%s killed\n", killed, killed == 1 ? "" : "s");
    return VMCTL_EXIT_OK;
}

/* One line (or JSON entry) per task asked for: its tid or why it failed;
 * where a traced job's files go. */
static void
spawn_print(const struct vmctl *v, const int32_t *tids, uint32_t cnt, int ok, int n, int job,
            const char *trace)
{
    if (v->json) {
        printf("{\"ok\":%s,\"started\":%d,", ok == n ? "true" : "false", ok);
        if (job > 0)
            printf("\"job\":%d,", job);
        if (trace[0] != '\0') {
            printf("\"trace_dir\":");
            wire_json_str(stdout, trace);
            printf(",");
        }
        printf("\"tasks\":[");
        for (uint32_t k = 0; k < cnt; k++)
            if (tids[k] > 0)
                printf("%s{\"tid\":%d}", k ? "," : "", tids[k]);
            else
                printf("%s{\"error\":\"%s\"}", k ? "," : "", wire_errname(tids[k]));
        printf("]}\n");
    } else {
        if (job > 0)
            printf("[%d]\n", job);
        printf("%d successful\n", ok);
        for (uint32_t k = 0; k < cnt; k++)
            if (tids[k] > 0)
                printf("t%x\n", (unsigned)tids[k]);
            else
                printf("%s\n", wire_strerror(tids[k]));
        if (trace[0] != '\0' && ok > 0)
            printf("traced into %s\n", trace);
    }
    fflush(stdout);
}

/* spawn -o: show the output of the tasks and of every task they start,
 * until each one's has ended (PVM's EOF) or its host has left. */
static void
spawn_watch(struct vmctl *v, struct vtask *t, const int32_t *tids, uint32_t cnt)
{
    for (uint32_t k = 0; k < cnt; k++)
        if (tids[k] > 0)
            vmctl_outsrc_add(&t->out, t->fd, (uint32_t)tids[k]);
    while (t->out.open > 0) {
        struct wire_hdr h;
        unsigned char *b;
        if (wire_read_frame(t->fd, 1u << 26, -1, &h, &b) != 1)
            break;
        task_frame(v, t, &h, b);
        free(b);
    }
}

int
vmctl_cmd_spawn(struct vmctl *v, int argc, char **argv)
{
    static const char help[] =
        "usage: vmctl spawn [-N | -n N] [-h HOST | -a ARCH] [-o] [-@[DIR]] [--json]\n"
        "                   PROGRAM [ARGS...]\n"
        "  Start N copies of PROGRAM as PVM tasks (found along spawn_path).  With -o\n"
        "  their output is shown here, as \"[tXXXX] line\", until it ends (theirs and\n"
        "  their children's); in the interactive console they run as a job instead\n"
        "  (see jobs) and the prompt returns at once.  With -@ they and the tasks they\n"
        "  spawn are traced, each into DIR/PROGRAM-tTID.json on its host (default\n"
        "  LIQUIDVM_HOME/trace; see trace, and vmrun analyze).  The variables\n"
        "  PVM_EXPORT names go to the tasks.\n";
    int n = 1, flags = 0, out = 0, i, rc, ntrace = 0;
    const char *where = "";
    char tenv[2][VMCTL_TRACE_ENV], tdir[4096] = "";
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0)
            return printf("%s", help), VMCTL_EXIT_OK;
        if (strcmp(a, "--json") == 0)
            v->json = 1;
        else if (strcmp(a, "-o") == 0 || strcmp(a, "->") == 0)
            out = 1;
        else if (strncmp(a, "-@", 2) == 0) {
            if ((rc = vmctl_trace_env(v, a + 2, tenv, tdir, sizeof(tdir))) != 0)
                return rc;
            ntrace = 2;
        }
        else if ((strcmp(a, "-n") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "-a") == 0) &&
                 i + 1 < argc) {
            if (a[1] == 'n')
                n = atoi(argv[++i]);
            else {
                flags = a[1] == 'h' ? PVM_TASK_HOST : PVM_TASK_ARCH;
                where = argv[++i];
            }
        } else if (a[1] >= '0' && a[1] <= '9')
            n = atoi(a + 1);
        else
            return usage(help);
    }
    if (i >= argc || n < 1 || n > 4096)
        return usage(help);
    /* In the interactive console spawn -o starts a job on the session's
     * connection; elsewhere it waits for the tasks on a connection of its own. */
    struct vtask t = { .fd = -1 };
    t.out.watched = t.hostwatch;
    int background = out && v->sess != NULL && v->sess->interactive;
    rc = out && !background ? vmctl_enroll(v, &t.fd, &t.tid) : enroll(v, &t);
    if (rc != 0)
        return fail(v, rc, "spawn");
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status;
    wire_wbuf_init(&req);
    wire_put_str(&req, argv[i]);
    wire_put_u32(&req, (uint32_t)flags);
    wire_put_str(&req, where);
    wire_put_u32(&req, (uint32_t)n);
    wire_put_u32(&req, out ? t.tid : 0);
    /* The output code: as PVM's console, the job's number, which the
     * tasks' own children inherit, so that their lines show as the job's. */
    int job = background ? vmctl_session_job_new(v->sess, argv[i]) : 0;
    wire_put_i32(&req, job);
    wire_put_u32(&req, (uint32_t)(argc - i - 1));
    for (int k = i + 1; k < argc; k++)
        wire_put_str(&req, argv[k]);
    vmctl_env_put_exports(&req, tenv, ntrace);
    t.show_output = out;
    rc = task_request(v, &t, WIRE_T_TASK_SPAWN, &req, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = status;
    if (rc != 0) {
        free(body);
        if (job > 0)
            vmctl_session_job_start(v->sess, job, NULL, 0);
        vmctl_outsrc_free(&t.out);
        vmctl_task_close(t.fd, t.shared);
        return fail(v, rc, "spawn");
    }
    struct wire_rbuf r;
    uint32_t cnt;
    int32_t tids[4096];
    int ok = 0;
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &cnt) != 0 || cnt != (uint32_t)n)
        cnt = 0;
    for (uint32_t k = 0; k < cnt; k++) {
        if (wire_get_i32(&r, &tids[k]) != 0)
            tids[k] = WIRE_EFRAME;
        ok += tids[k] > 0;
    }
    free(body);
    spawn_print(v, tids, cnt, ok, n, ok > 0 ? job : 0, tdir);
    if (job > 0)
        vmctl_session_job_start(v->sess, job, tids, cnt);
    if (out && !background && ok > 0)
        spawn_watch(v, &t, tids, cnt);
    vmctl_outsrc_free(&t.out);
    vmctl_task_close(t.fd, t.shared);
    return ok == n ? VMCTL_EXIT_OK : VMCTL_EXIT_FAIL;
}

int
vmctl_cmd_mstat(struct vmctl *v, int argc, char **argv)
{
    struct vmctl_hostrow *rows;
    char master[256];
    int n, rc, failed = 0, first = 1, hosts = 0;
    const char *text = "usage: vmctl mstat HOST... [--json]\n"
                       "  Whether each host is in the VM and up.\n";

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return printf("%s", text), VMCTL_EXIT_OK;
        if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else
            hosts++;
    }
    if (hosts == 0)
        return usage(text);
    if ((rc = vmctl_conf_fetch(v, &rows, &n, master, sizeof(master))) != 0)
        return fail(v, rc, "mstat");
    if (v->json)
        printf("{\"hosts\":[");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            continue;
        int found = 0;
        for (int k = 0; k < n; k++)
            found |= strcmp(rows[k].name, argv[i]) == 0 && strcmp(rows[k].state, "up") == 0;
        failed += !found;
        if (v->json) {
            printf("%s{\"name\":", first ? "" : ",");
            wire_json_str(stdout, argv[i]);
            printf(",\"status\":\"%s\"}", found ? "ok" : "no such host");
        } else {
            printf("%s: %s\n", argv[i], found ? "ok" : "no such host");
        }
        first = 0;
    }
    if (v->json)
        printf("]}\n");
    free(rows);
    return failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}
