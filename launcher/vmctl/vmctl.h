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
};

/* vmctl_client.c */
int vmctl_home_init(struct vmctl *v);
/* The socket of the daemon to use; WIRE_ENOVM if none runs. */
int vmctl_socket_path(const struct vmctl *v, char *out, size_t cap);
int vmctl_connect(const struct vmctl *v);
/* Send a request and wait for its reply (timeout_ms < 0: no limit).  The
 * reply body is malloc'ed into *body (caller frees); returns the reply's
 * status (0 or negative), or a negative transport error. */
int vmctl_request(int fd, int type, const struct wire_wbuf *req, int timeout_ms,
                  unsigned char **body, size_t *len, int *status);
/* Connect, request, close: the common case. */
int vmctl_call(const struct vmctl *v, int type, const struct wire_wbuf *req, int timeout_ms,
               unsigned char **body, size_t *len, int *status);

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
/* Issue HOST's certificate if it is missing and the CA key is at hand. */
int vmctl_ensure_cert(struct vmctl *v, const char *host, int init_ca);

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


#endif
