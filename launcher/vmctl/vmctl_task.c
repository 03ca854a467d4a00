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
    FILE *jout;                 /* spawn -o --json: the lines so far, as JSON */
    char *jbuf;
    size_t jlen;
    int jlines;
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
        if (t->show_output && t->jout != NULL && vmctl_output_line(h)) {
            fprintf(t->jout, "%s{\"tid\":%u,\"line\":", t->jlines++ ? "," : "", h->src);
            wire_json_bytes(t->jout, b ? (const char *)b : "", b ? h->len : 0);
            fputc('}', t->jout);
        } else if (t->show_output && !v->json && vmctl_output_line(h)) {
            printf("[t%x] %.*s\n", h->src, (int)h->len, b ? (const char *)b : "");
        }
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
            return vmctl_usage_error(argv[0], "unexpected argument %s", argv[i]);
        }
    }
    return VMCTL_EXIT_OK;
}

/*
 * The words of a verb that takes task ids (kill, sig, pstat): --json taken
 * out wherever it stands, and *help set if -h or --help is among them
 * (none of these verbs has an option of that name).  Returns the words left.
 */
static int
tid_verb_words(struct vmctl *v, int argc, char **argv, int *help)
{
    int n = 1;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            *help = 1;
        else
            argv[n++] = argv[i];
    }
    argv[n] = NULL;
    return n;
}

/* The host table, to name hosts by their daemon's tid; empty if it is out
 * of reach (a host is then its dtid in hex, as PVM's console shows one it
 * does not know). */
struct hostnames {
    struct vmctl_hostrow *rows;
    int n;
};

static void
hostnames_fetch(struct vmctl *v, struct hostnames *h)
{
    char master[256];
    if (vmctl_conf_fetch(v, &h->rows, &h->n, master, sizeof(master)) != 0) {
        h->rows = NULL;
        h->n = 0;
    }
}

/* dtid's name, or NULL. */
static const char *
hostname_of(const struct hostnames *h, uint32_t dtid)
{
    for (int i = 0; i < h->n; i++)
        if (h->rows[i].tid == dtid)
            return h->rows[i].name;
    return NULL;
}

/* dtid's name, or its hex, in buf (24 bytes at least). */
static const char *
hostname_or_tid(const struct hostnames *h, uint32_t dtid, char *buf, size_t cap)
{
    const char *name = hostname_of(h, dtid);
    if (name != NULL)
        return name;
    snprintf(buf, cap, "%x", dtid);
    return buf;
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

/* The task ids of argv[first..argc) into tids (at most max): their number,
 * or -1 after saying which word is wrong (bad usage). */
static int
parse_tids(const char *verb, int argc, char **argv, int first, uint32_t *tids, int max)
{
    int n = 0;
    for (int i = first; i < argc; i++) {
        if (n == max) {
            vmctl_usage_error(verb, "at most %d task ids at once", max);
            return -1;
        }
        if (parse_tid(argv[i], &tids[n]) != 0) {
            vmctl_usage_error(verb, "%s: expected a task id such as t40001", argv[i]);
            return -1;
        }
        n++;
    }
    if (n == 0) {
        vmctl_usage_error(verb, "name at least one task id");
        return -1;
    }
    return n;
}

const char *
vmctl_task_flags(uint32_t flag, char *buf, size_t cap)
{
    /* PVM's TF_* bits from bit 0, named as its console's task_flags names them. */
    static const char *const names[] = { NULL, "f", "c", "a", "o", "s", NULL, NULL, "R", "H", "T" };
    int n = snprintf(buf, cap, "%x", flag);
    char sep = '/';

    for (int i = (int)(sizeof(names) / sizeof(names[0])) - 1; i >= 0; i--)
        if ((flag & (1u << i)) && names[i] != NULL && n >= 0 && (size_t)n < cap) {
            n += snprintf(buf + n, cap - (size_t)n, "%c%s", sep, names[i]);
            sep = ',';
        }
    return buf;
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
    struct hostnames hosts = { NULL, 0 };
    int ngroups = 0;
    char gbuf[1024], hbuf[24], pbuf[16], fbuf[64];
    if (!quiet && vmctl_groups_fetch(t->fd, &groups, &ngroups) != 0)
        ngroups = 0;
    if (!quiet)
        hostnames_fetch(v, &hosts);
    /* The columns of PVM's ps -l: the host's name (its dtid in hex if it
     * is unknown), tids in hex without the t, "-" for no parent. */
    if (!quiet && v->json)
        printf("{\"tasks\":[");
    else if (!quiet)
        printf("%24s %8s %8s %6s %9s %s\n", "HOST", "TID", "PTID", "PID", "FLAG 0x",
               "COMMAND [GROUP:INST...]");
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
        const char *hname = hostname_of(&hosts, host);
        if (!quiet && v->json) {
            printf("%s{\"tid\":%u,\"ptid\":%u,\"host\":", shown ? "," : "", tid, ptid);
            if (hname != NULL)
                wire_json_str(stdout, hname);
            else
                printf("null");
            printf(",\"dtid\":%u,\"flag\":%u,\"pid\":%u,\"command\":", host, flag, pid);
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
            if (ptid == 0)
                snprintf(pbuf, sizeof(pbuf), "-");
            else if (ptid == t->tid)
                snprintf(pbuf, sizeof(pbuf), "(cons)");
            else
                snprintf(pbuf, sizeof(pbuf), "%x", ptid);
            printf("%24s %8x %8s %6u %9s %s%s%s\n",
                   hostname_or_tid(&hosts, host, hbuf, sizeof(hbuf)), tid, pbuf, pid,
                   vmctl_task_flags(flag, fbuf, sizeof(fbuf)), name, gbuf[0] ? " " : "", gbuf);
        }
        shown++;
    }
    if (!quiet && v->json)
        printf("]}\n");
    vmctl_groups_free(groups, ngroups);
    free(hosts.rows);
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
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            v->json = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("usage: vmctl ps [-a] [-l] [--json]\n"
                   "  The tasks of this daemon's host, or of every host with -a, in the columns\n"
                   "  of PVM's ps -l: the host's name, TID, PTID (- for none, (cons) for this\n"
                   "  console), PID, FLAG (c: connected to its daemon) and the command, then\n"
                   "  its groups as GROUP:INST.  Tids are hexadecimal, as PVM prints them.  -l\n"
                   "  is taken for PVM's sake: the listing is always the long one.\n");
            return VMCTL_EXIT_OK;
        } else if (a[0] == '-' && a[1] != '\0' && strspn(a + 1, "al") == strlen(a + 1)) {
            all |= strchr(a, 'a') != NULL;
        } else if (a[0] == '-') {
            return vmctl_usage_error("ps", "unknown option %s", a);
        } else {
            return vmctl_usage_error("ps", "unexpected argument %s", a);
        }
    }
    if ((rc = enroll(v, &t)) != 0)
        return fail(v, rc, "ps");
    rc = list_tasks(v, &t, all ? 0 : (t.tid & ~WIRE_TID_LOCAL_MASK), 0, NULL);
    vmctl_task_close(t.fd, t.shared);
    return rc ? fail(v, rc, "ps") : VMCTL_EXIT_OK;
}

/* Signal sig (0: kill) to the n tasks of tids, each failure said. */
static int
signal_cmd(struct vmctl *v, const uint32_t *tids, int n, int sig, const char *what)
{
    struct vtask t = { .fd = -1 };
    int rc, failed = 0;

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
            fprintf(stderr, "vmctl: %s: t%x: %s\n", what, tids[i], wire_strerror(rc));
    }
    if (v->json)
        printf("],\"ok\":%s}\n", failed ? "false" : "true");
    vmctl_task_close(t.fd, t.shared);
    return failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

int
vmctl_cmd_kill(struct vmctl *v, int argc, char **argv)
{
    uint32_t tids[256];
    int help, n;

    argc = tid_verb_words(v, argc, argv, &help);
    if (help) {
        printf("usage: vmctl kill TID... [--json]\n"
               "  Kill tasks, as PVM's console does.  A TID is hexadecimal, with or without\n"
               "  the t (t40002 or 40002).  Each failure (a task that is gone) is said on\n"
               "  standard error, and the exit status is then 1.\n");
        return VMCTL_EXIT_OK;
    }
    if ((n = parse_tids("kill", argc, argv, 1, tids, 256)) < 0)
        return VMCTL_EXIT_USAGE;
    return signal_cmd(v, tids, n, 0, "kill");
}

int
vmctl_cmd_sig(struct vmctl *v, int argc, char **argv)
{
    uint32_t tids[256];
    char *end;
    int help, n;

    argc = tid_verb_words(v, argc, argv, &help);
    if (help) {
        printf("usage: vmctl sig SIGNUM TID... [--json]\n"
               "  Send signal SIGNUM (1..64) to tasks, as pvm_sendsig.  A TID is hexadecimal,\n"
               "  with or without the t (t40002 or 40002).  Each failure (a task that is\n"
               "  gone) is said on standard error, and the exit status is then 1.\n");
        return VMCTL_EXIT_OK;
    }
    if (argc < 2)
        return vmctl_usage_error("sig", "name a signal number and at least one task id");
    long sig = strtol(argv[1], &end, 10);
    if (argv[1][0] == '\0' || *end || sig < 1 || sig > 64)
        return vmctl_usage_error("sig", "%s: expected a signal number 1..64", argv[1]);
    if ((n = parse_tids("sig", argc, argv, 2, tids, 256)) < 0)
        return VMCTL_EXIT_USAGE;
    return signal_cmd(v, tids, n, (int)sig, "sig");
}

int
vmctl_cmd_pstat(struct vmctl *v, int argc, char **argv)
{
    struct vtask t = { .fd = -1 };
    int rc, failed = 0, n, help;
    uint32_t tids[256];

    argc = tid_verb_words(v, argc, argv, &help);
    if (help) {
        printf("usage: vmctl pstat TID... [--json]\n"
               "  Whether each task runs: \"tTID: running\" or \"tTID: no such task\" (then\n"
               "  exit status 1).  A TID is hexadecimal, with or without the t.\n");
        return VMCTL_EXIT_OK;
    }
    if ((n = parse_tids("pstat", argc, argv, 1, tids, 256)) < 0)
        return VMCTL_EXIT_USAGE;
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

/* A spawn's answer: per slot a tid or a negative code, and the dtid of
 * the host it was placed on (0: none; a daemon older than the hosts' list
 * sends none). */
struct spawn_result {
    const char *prog;
    int flags;                  /* PVM_TASK_HOST, PVM_TASK_ARCH */
    const char *where;
    uint32_t cnt;
    int ok;
    int32_t tids[4096];
    uint32_t hosts[4096];
    struct hostnames names;     /* fetched only when a slot failed */
};

/*
 * The text PVM's console prints for a slot that failed: pvm_errlist's for
 * the code (lib/pvm/pvm_err.c maps every code; these are those a spawn's
 * slot carries).
 */
static const char *
spawn_pvm_text(int code)
{
    switch (code) {
    case -ENOENT:
        return "No such file";
    case WIRE_ENOHOST:
        return "No such host";
    case WIRE_EHOSTFAIL:
        return "Host failed";
    case -EACCES:
    case -EPERM:
        return "Permission denied";
    case -EINVAL:
        return "Bad parameter";
    case -E2BIG:
        return "Value too large";
    case -ENOMEM:
        return "Malloc failed";
    case -EAGAIN:
    case -EMFILE:
    case -ENFILE:
        return "Out of resources";
    case WIRE_ECANTSTART:
        return "Can't start pvmd";
    case WIRE_EFRAME:
        return "Can't decode message";
    default:
        return "Pvmd system error";
    }
}

int
vmctl_spawn_why(char *buf, size_t cap, int code, const char *prog, int flags, const char *where,
                const char *hosts, int console)
{
    const char *on = hosts[0] ? " on " : "";
    if (code == -ENOENT && strchr(prog, '/'))
        return snprintf(buf, cap, "%s: no such executable file%s%s", prog, on, hosts);
    if (code == -ENOENT)
        return snprintf(buf, cap, "%s: not found along spawn_path%s%s", prog, on, hosts);
    if (code == WIRE_ENOHOST && (flags & PVM_TASK_HOST))
        return snprintf(buf, cap, "%s: no such host in the virtual machine, or it is not up "
                        "(%sconf lists the hosts)", where, console ? "" : "vmctl ");
    if (code == WIRE_ENOHOST && (flags & PVM_TASK_ARCH))
        return snprintf(buf, cap, "no host of architecture %s is up to run %s", where, prog);
    if (code == WIRE_ENOHOST)
        return snprintf(buf, cap, "no host is up to run %s", prog);
    return snprintf(buf, cap, "%s%s%s: %s", prog, on, hosts, wire_strerror(code));
}

/* The distinct hosts of the slots that failed with code, joined by ", ". */
static void
spawn_failed_hosts(const struct spawn_result *sr, int code, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < sr->cnt; k++) {
        int seen = sr->tids[k] != code || sr->hosts[k] == 0;
        for (uint32_t j = 0; j < k && !seen; j++)
            seen = sr->tids[j] == code && sr->hosts[j] == sr->hosts[k];
        if (seen || n >= cap)
            continue;
        char hbuf[24];
        const char *name = hostname_or_tid(&sr->names, sr->hosts[k], hbuf, sizeof(hbuf));
        int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
        n = w < 0 ? cap : n + (size_t)w;
    }
}

/*
 * One line (or JSON entry) per task asked for: its tid, or why it failed
 * in PVM's words (stdout, which scripts of PVM's console parse); then, on
 * stderr, each kind of failure once with the program and the hosts; where
 * a traced job's files go.
 */
static void
spawn_print(const struct vmctl *v, const struct spawn_result *sr, int n, int job,
            const char *trace, const char *output)
{
    char why[1024], hosts[512];
    if (v->json) {
        printf("{\"ok\":%s,\"started\":%d,", sr->ok == n ? "true" : "false", sr->ok);
        if (job > 0)
            printf("\"job\":%d,", job);
        if (trace[0] != '\0') {
            printf("\"trace_dir\":");
            wire_json_str(stdout, trace);
            printf(",");
        }
        printf("\"tasks\":[");
        for (uint32_t k = 0; k < sr->cnt; k++) {
            const char *hname = hostname_of(&sr->names, sr->hosts[k]);
            if (sr->tids[k] > 0) {
                printf("%s{\"tid\":%d}", k ? "," : "", sr->tids[k]);
                continue;
            }
            vmctl_spawn_why(why, sizeof(why), sr->tids[k], sr->prog, sr->flags, sr->where,
                            hname ? hname : "", v->console);
            printf("%s{\"error\":\"%s\",\"message\":", k ? "," : "",
                   wire_errname(sr->tids[k]));
            wire_json_str(stdout, why);
            printf(",\"host\":");
            if (hname != NULL)
                wire_json_str(stdout, hname);
            else
                printf("null");
            printf(",\"dtid\":%u}", sr->hosts[k]);
        }
        printf("]");
        if (output != NULL)
            printf(",\"output\":[%s]", output);
        printf("}\n");
    } else {
        if (job > 0)
            printf("[%d]\n", job);
        printf("%d successful\n", sr->ok);
        for (uint32_t k = 0; k < sr->cnt; k++)
            if (sr->tids[k] > 0)
                printf("t%x\n", (unsigned)sr->tids[k]);
            else
                printf("%s\n", spawn_pvm_text(sr->tids[k]));
        if (trace[0] != '\0' && sr->ok > 0)
            printf("traced into %s\n", trace);
        fflush(stdout);
        for (uint32_t k = 0; k < sr->cnt; k++) {
            int code = sr->tids[k], first = code < 0;
            for (uint32_t j = 0; j < k && first; j++)
                first = sr->tids[j] != code;
            if (!first)
                continue;
            spawn_failed_hosts(sr, code, hosts, sizeof(hosts));
            vmctl_spawn_why(why, sizeof(why), code, sr->prog, sr->flags, sr->where, hosts,
                            v->console);
            fprintf(stderr, "vmctl: spawn: %s\n", why);
        }
    }
    fflush(stdout);
}

static void
json_out_free(struct vtask *t)
{
    if (t->jout != NULL)
        fclose(t->jout);
    t->jout = NULL;
    free(t->jbuf);
    t->jbuf = NULL;
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
        "  spawn are traced, each into DIR/PROGRAM-tTID.json on its host (default: a\n"
        "  new folder per run, LIQUIDVM_HOME/trace/PROGRAM-YYYYmmdd-HHMMSS; see trace,\n"
        "  and vmrun analyze).  The variables PVM_EXPORT names go to the tasks.\n";
    int n = 1, flags = 0, out = 0, i, rc, ntrace = 0;
    const char *where = "", *count = "1", *traced = NULL;
    char tenv[3][VMCTL_TRACE_ENV], tdir[4096] = "", *end;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0)
            return printf("%s", help), VMCTL_EXIT_OK;
        if (strcmp(a, "--json") == 0) {
            v->json = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "->") == 0) {
            out = 1;
        } else if (strncmp(a, "-@", 2) == 0) {
            traced = a + 2;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "-a") == 0) {
            if (i + 1 == argc)
                return vmctl_usage_error("spawn", "%s needs a value", a);
            if (a[1] == 'n') {
                count = argv[++i];
            } else {
                flags = a[1] == 'h' ? PVM_TASK_HOST : PVM_TASK_ARCH;
                where = argv[++i];
            }
        } else if (a[1] >= '0' && a[1] <= '9') {
            count = a + 1;
        } else {
            return vmctl_usage_error("spawn", "unknown option %s", a);
        }
    }
    if (i >= argc)
        return vmctl_usage_error("spawn", "name the program to spawn");
    long nl = strtol(count, &end, 10);
    if (*end != '\0' || nl < 1 || nl > 4096)
        return vmctl_usage_error("spawn", "%s: expected a number of tasks 1..4096", count);
    n = (int)nl;
    if (traced != NULL) {
        if ((rc = vmctl_trace_env(v, traced, argv[i], tenv, tdir, sizeof(tdir))) != 0)
            return rc;
        ntrace = 3;
    }
    /* In the interactive console spawn -o starts a job on the session's
     * connection; elsewhere it waits for the tasks on a connection of its own. */
    struct vtask t = { .fd = -1 };
    t.out.watched = t.hostwatch;
    int background = out && v->sess != NULL && v->sess->interactive;
    rc = out && !background ? vmctl_enroll(v, &t.fd, &t.tid) : enroll(v, &t);
    if (rc != 0) {
        if (traced != NULL && traced[0] == '\0')
            rmdir(tdir);
        return fail(v, rc, "spawn");
    }
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
    if (out && !background && v->json && (t.jout = open_memstream(&t.jbuf, &t.jlen)) == NULL) {
        wire_wbuf_free(&req);
        vmctl_task_close(t.fd, t.shared);
        return fail(v, -ENOMEM, "spawn");
    }
    rc = task_request(v, &t, WIRE_T_TASK_SPAWN, &req, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = status;
    if (rc != 0) {
        free(body);
        if (job > 0)
            vmctl_session_job_start(v->sess, job, NULL, 0);
        vmctl_outsrc_free(&t.out);
        json_out_free(&t);
        vmctl_task_close(t.fd, t.shared);
        if (traced != NULL && traced[0] == '\0')
            rmdir(tdir);
        return fail(v, rc, "spawn");
    }
    struct wire_rbuf r;
    struct spawn_result *sr = calloc(1, sizeof(*sr));
    if (sr == NULL) {
        free(body);
        if (job > 0)
            vmctl_session_job_start(v->sess, job, NULL, 0);
        vmctl_outsrc_free(&t.out);
        json_out_free(&t);
        vmctl_task_close(t.fd, t.shared);
        return fail(v, -ENOMEM, "spawn");
    }
    sr->prog = argv[i];
    sr->flags = flags;
    sr->where = where;
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &sr->cnt) != 0 || sr->cnt != (uint32_t)n)
        sr->cnt = 0;
    for (uint32_t k = 0; k < sr->cnt; k++) {
        if (wire_get_i32(&r, &sr->tids[k]) != 0)
            sr->tids[k] = WIRE_EFRAME;
        sr->ok += sr->tids[k] > 0;
    }
    for (uint32_t k = 0; k < sr->cnt; k++)
        if (wire_get_u32(&r, &sr->hosts[k]) != 0)
            sr->hosts[k] = 0;
    free(body);
    if (sr->ok < n)
        hostnames_fetch(v, &sr->names);
    /* The run's own folder, made for it: gone again if nothing started. */
    if (sr->ok == 0 && traced != NULL && traced[0] == '\0')
        rmdir(tdir);
    /* With --json the object ends with the tasks' output lines, so it
     * is printed once they have ended. */
    if (t.jout == NULL)
        spawn_print(v, sr, n, sr->ok > 0 ? job : 0, tdir, NULL);
    if (job > 0)
        vmctl_session_job_start(v->sess, job, sr->tids, sr->cnt);
    if (out && !background && sr->ok > 0)
        spawn_watch(v, &t, sr->tids, sr->cnt);
    if (t.jout != NULL) {
        fclose(t.jout);
        t.jout = NULL;
        spawn_print(v, sr, n, sr->ok > 0 ? job : 0, tdir, t.jbuf ? t.jbuf : "");
    }
    rc = sr->ok == n ? VMCTL_EXIT_OK : VMCTL_EXIT_FAIL;
    free(sr->names.rows);
    free(sr);
    vmctl_outsrc_free(&t.out);
    json_out_free(&t);
    vmctl_task_close(t.fd, t.shared);
    return rc;
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
        return vmctl_usage_error("mstat", "name at least one host");
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
