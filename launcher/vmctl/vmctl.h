/*
 * vmctl.h - shared by the files of vmctl (launcher/); never installed.
 *
 * vmctl talks to one daemon over its Unix socket with the frames of
 * wire.h: one request, one reply.  Output is text for people or, with
 * --json, one JSON object per command on stdout.  Exit status: 0 success,
 * 1 failure, 2 bad usage (VMCTL_EXIT_*).
 */
#ifndef LIQUIDVM_VMCTL_H
#define LIQUIDVM_VMCTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire.h"
#include "wire_load.h"

enum { VMCTL_EXIT_OK = 0, VMCTL_EXIT_FAIL = 1, VMCTL_EXIT_USAGE = 2 };

struct vmctl {
    char home[4096];
    char host[256];             /* --host: which daemon to talk to ("" = the master) */
    char conf_file[4096];       /* -c */
    int json;
    int quiet;
    int console;                /* inside the interactive console */
    struct vmctl_session *sess; /* the console's session; NULL for one command */
};

/* A task's output frame that holds a line (not its begin or end). */
static inline int
vmctl_output_line(const struct wire_hdr *h)
{
    return h->flags == WIRE_OUT_LINE || h->flags == WIRE_OUT_PART;
}

/* The tag of the PvmTaskExit notices vmctl asks for (body: the tid). */
#define VMCTL_NOTIFY_TAG 0x7ffe
/* The tag of the PvmHostDelete notices vmctl_outsrc asks for (body: the
 * host's tid). */
#define VMCTL_HOSTDEL_TAG 0x7ffd

/* vmctl_outsrc.c: the tasks whose output a spawn -o or a console job shows,
 * each open until its EOF or its host's loss.  fd is the connection the
 * output comes on, where the first task of each host asks for that host's
 * PvmHostDelete notice, once per connection (watched: a bitmap of
 * VMCTL_HOSTS_BITS bytes that the connection's user keeps, NULL: none). */
#define VMCTL_HOSTS_BITS ((WIRE_TID_HOST_MASK + 1) / 8)
struct vmctl_outsrc {
    uint32_t *tids;
    unsigned char *closed;
    int n, cap, open;
    unsigned char *watched;     /* hosts asked about: the session's, or the spawn's */
};
void vmctl_outsrc_free(struct vmctl_outsrc *o);
/* A task whose output will come: 1 if new, 0 if known, -1 out of memory. */
int vmctl_outsrc_add(struct vmctl_outsrc *o, int fd, uint32_t tid);
/* An output frame (body: its h->len bytes) of h->src, added if unknown, or
 * an EXPECT of the task its body names: 1 if it is that task's EOF. */
int vmctl_outsrc_frame(struct vmctl_outsrc *o, int fd, const struct wire_hdr *h,
                       const unsigned char *body);
/* The host of dtid left the VM: its tasks' output will not end otherwise. */
void vmctl_outsrc_host_lost(struct vmctl_outsrc *o, uint32_t dtid);

/* vmctl_client.c */
double vmctl_now(void);         /* monotonic seconds */
int vmctl_home_init(struct vmctl *v);
/* The socket of the daemon to use; WIRE_ENOVM if none runs. */
int vmctl_socket_path(const struct vmctl *v, char *out, size_t cap);
int vmctl_connect(const struct vmctl *v);
/* Why the last vmctl_connect failed, in words (wire_sock_why), if code is
 * that failure; else NULL: the same code from a daemon's answer means
 * something else. */
const char *vmctl_connect_why(int code);
/* Send a request and wait for its reply (timeout_ms < 0: no limit).  The
 * reply body is malloc'ed into *body (caller frees); returns the reply's
 * status (0 or negative), or a negative transport error. */
int vmctl_request(int fd, int type, const struct wire_wbuf *req, int timeout_ms,
                  unsigned char **body, size_t *len, int *status);
/* Connect, request, close: the common case. */
int vmctl_call(const struct vmctl *v, int type, const struct wire_wbuf *req, int timeout_ms,
               unsigned char **body, size_t *len, int *status);
/* Enroll as a task of the daemon, as PVM's console does: *fd the
 * connection, *tid the task id. */
int vmctl_enroll(const struct vmctl *v, int *fd, uint32_t *tid);
/* Frames that are not the awaited reply (a job's output, an exit notice)
 * go to fn instead of being dropped; NULL drops them again. */
typedef void vmctl_notice_fn(void *arg, const struct wire_hdr *h, const unsigned char *body);
void vmctl_request_on_notice(vmctl_notice_fn *fn, void *arg);

/* One host of `conf`. */
struct vmctl_hostrow {
    uint32_t tid, port, speed;
    char name[256], addr[64], arch[16], state[16];
    /* The host's latest load sample, when the daemon sent one. */
    int has_load;
    uint64_t load_age_ms;
    struct wire_load load;
};

/* The host table from the daemon: *rows malloc'ed (caller frees). */
int vmctl_conf_fetch(struct vmctl *v, struct vmctl_hostrow **rows, int *nrows, char *master,
                     size_t mcap);

/* vmctl_cmd.c: the commands; each returns a VMCTL_EXIT_* status */
int vmctl_cmd_start(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_add(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_delete(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_conf(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_halt(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_status(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_ca(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_cert(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_version(struct vmctl *v, int argc, char **argv);
/* vmctl_task.c: the console's task verbs */
int vmctl_cmd_spawn(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_ps(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_kill(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_sig(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_reset(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_pstat(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_mstat(struct vmctl *v, int argc, char **argv);
/* PVM's FLAG column of ps: the TF_* bits in hex, then the letters of those
 * it names ("6/c,f", "0"), into buf; returns buf. */
const char *vmctl_task_flags(uint32_t flag, char *buf, size_t cap);
/* Why a spawn's slots failed with code, in words, into buf: prog and the
 * hosts they were placed on (names joined by ", "; "" if unknown), or the
 * host or architecture -h or -a named (flags 1, 2: PvmTaskHost, PvmTaskArch)
 * that none could take.  console: inside the console, whose verbs need no
 * "vmctl ".  Returns what snprintf does. */
int vmctl_spawn_why(char *buf, size_t cap, int code, const char *prog, int flags,
                    const char *where, const char *hosts, int console);
/* Issue HOST's certificate if it is missing and the CA key is at hand
 * (errors name verb, the command that needs it). */
int vmctl_ensure_cert(struct vmctl *v, const char *verb, const char *host, int init_ca);

/* vmctl_group.c: dynamic groups, from the master's table */
struct vmctl_group {
    char name[256];
    int frozen, size;
    struct vmctl_member {
        int32_t inst;
        uint32_t tid;
    } *members;
};
/* Every group over an open connection to a daemon: *out malloc'ed. */
int vmctl_groups_fetch(int fd, struct vmctl_group **out, int *n);
void vmctl_groups_free(struct vmctl_group *g, int n);
/* tid's memberships as "name:inst,..." in buf ("" if none). */
const char *vmctl_groups_of(const struct vmctl_group *g, int n, uint32_t tid, char *buf,
                            size_t cap);
int vmctl_cmd_groups(struct vmctl *v, int argc, char **argv);

/* vmctl_dispatch.c: the command table, below both the shell and the console */
struct vmctl_command {
    const char *name;
    int (*fn)(struct vmctl *v, int argc, char **argv);
    int shell_only;             /* acts on this machine, not the VM: not a console verb */
};
/* The command called name, or NULL. */
const struct vmctl_command *vmctl_command_find(const char *name);
/* Run one command line's words: argv[0] names the command.  An unknown
 * name is reported on stderr and gives VMCTL_EXIT_USAGE. */
int vmctl_dispatch(struct vmctl *v, int argc, char **argv);

/* vmctl_console.c */
int vmctl_console(struct vmctl *v);

/* vmctl_session.c: what lasts for one console session (docs in its
 * opening comment): the console's task connection, aliases, jobs and the
 * console's PVM options.  Outside the console v->sess is NULL and the
 * verbs say what they would do. */
#define VMCTL_NOPTS 23
struct vmctl_option {
    const char *name;           /* PVM's name, e.g. "PvmRoute" */
    int value;                  /* PVM 3.4.6's console default */
};
extern const struct vmctl_option vmctl_options[VMCTL_NOPTS];
enum { VMCTL_OPT_SHOWTIDS = 17 };
struct vmctl_alias {
    char name[64];
    char text[1024];
};
struct vmctl_job {
    int id;
    char command[256];
    int n, running;             /* tasks spawned; those not yet exited */
    uint32_t *tids;
    unsigned char *alive;       /* one flag per tid */
    struct vmctl_outsrc out;    /* whose output is still to end */
    int started;                /* its spawn has answered */
    int finished;
};
/* PVM's Pvmtmask: TEV_MASK_LENGTH bytes with the NUL. */
#define VMCTL_TMASK_LEN 36
/* A "NAME=value" of a spawn request. */
#define VMCTL_TRACE_ENV WIRE_STR_MAX

struct vmctl_session {
    int fd;                     /* the console's task connection, or -1 */
    uint32_t tid;
    int interactive;            /* on a terminal: spawn -o runs in the background */
    struct vmctl_alias *aliases;
    int naliases;
    struct vmctl_job *jobs;
    int njobs, next_job;
    int opts[VMCTL_NOPTS];
    char tmask[VMCTL_TMASK_LEN]; /* trace's mask, for spawn -@ (vmctl_trace.c) */
    unsigned char hostwatch[VMCTL_HOSTS_BITS]; /* hosts whose loss the jobs hear of */
    /* Called once before the console prints something that arrived
     * while a line was being typed (to clear the prompt). */
    void (*before_print)(void);
    int printed;                /* lines printed by the last poll */
};
struct vmctl_session *vmctl_session_new(int interactive);
void vmctl_session_free(struct vmctl_session *s);
/* A task connection: the session's (*shared set: leave it open) or a new
 * one.  vmctl_task_close closes only what is not shared. */
int vmctl_task_open(struct vmctl *v, int *fd, uint32_t *tid, int *shared);
void vmctl_task_close(int fd, int shared);
/* Handle the frames already waiting on the session's connection (up to
 * timeout_ms for the first); returns how many. */
int vmctl_session_poll(struct vmctl_session *s, int timeout_ms);
/* A new job, before its spawn request, so that no output it sends
 * before the reply is lost; returns its number, its tasks' output code
 * (0: out of memory). */
int vmctl_session_job_new(struct vmctl_session *s, const char *command);
/* The spawn's answer: the job's tasks are tids > 0, and their exits are
 * asked for (jobs lists those running).  A job of no task is dropped. */
void vmctl_session_job_start(struct vmctl_session *s, int id, const int32_t *tids, uint32_t n);
const struct vmctl_alias *vmctl_alias_find(const struct vmctl_session *s, const char *name);
int vmctl_alias_set(struct vmctl_session *s, const char *name, const char *text);
int vmctl_alias_del(struct vmctl_session *s, const char *name);

/* vmctl_help.c: one line and the syntax of every verb, for `help VERB`
 * and each new verb's --help. */
void vmctl_help_list(FILE *fp);
/* -ENOENT if name is no verb. */
int vmctl_help_verb(FILE *fp, const char *name);
/* A verb's usage as the answer to --help (exit 0) or to bad usage (2). */
int vmctl_help_usage(const char *name, int bad);
/* Bad usage of verb: "vmctl: VERB: why" on stderr, then the verb's syntax
 * (or, for the shell's own verbs, where to find it); VMCTL_EXIT_USAGE.
 * Every verb's error starts with "vmctl: VERB: ". */
int vmctl_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* With v->json, a failure as {"ok":false,"error":msg,"code":code} on
 * stdout, noted for vmctl_json_failed.  vmctl_usage_for: the command now
 * run (vmctl_dispatch), whose --json a usage error follows. */
void vmctl_json_fail(const struct vmctl *v, const char *msg, const char *code);
void vmctl_usage_for(const struct vmctl *v);
int vmctl_json_failed(void);
/* Take --json (sets v->json) and --help (answers it) out of argv, from
 * anywhere or, with leading, only before the first other word.  Returns
 * -1 to go on with *argc words left, or the exit status of --help. */
int vmctl_verb_options(struct vmctl *v, int *argc, char **argv, int leading);

/* vmctl_env.c: alias, unalias, echo, export, unexport, setenv */
int vmctl_cmd_alias(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_unalias(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_echo(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_export(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_unexport(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_setenv(struct vmctl *v, int argc, char **argv);
/* The variables PVM_EXPORT names, then the n strings of extra, as a spawn
 * request's u32 count and "NAME=value" strings (what libpvm3's pvm_spawn
 * sends). */
void vmctl_env_put_exports(struct wire_wbuf *b, char (*extra)[VMCTL_TRACE_ENV], int n);
/* vmctl_mbox.c: names and put */
int vmctl_cmd_names(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_put(struct vmctl *v, int argc, char **argv);
/* vmctl_opt.c: getopt, setopt, id, jobs */
int vmctl_cmd_getopt(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_setopt(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_id(struct vmctl *v, int argc, char **argv);
int vmctl_cmd_jobs(struct vmctl *v, int argc, char **argv);
/* The failure every new verb reports: text on stderr, or JSON on stdout. */
int vmctl_fail(const struct vmctl *v, int code, const char *what);

/* vmctl_trace.c: the trace mask, and spawn -@'s environment */
int vmctl_cmd_trace(struct vmctl *v, int argc, char **argv);
void vmctl_tmask_default(char *mask);
int vmctl_tmask_any(const char *mask);
int vmctl_trace_env(const struct vmctl *v, const char *arg, const char *program,
                    char env[3][VMCTL_TRACE_ENV], char *dir, size_t cap);

#endif
