/*
 * conf.h - the daemon's configuration, loaded from a libconfig file.
 *
 * Who may include it: daemon/, launcher/, tests/.  Pure loader: no global
 * state, reentrant.  conf_defaults() fills every field with its default;
 * conf_load() overlays a file on top of whatever *out already holds, so the
 * usual call is conf_defaults(&c); conf_load(path, &c, &diag).
 *
 * Errors a human made in the file are reported as "file:line: key: what was
 * expected", one line per error in diag->text, and loading continues past a
 * bad key so every error shows in one run (relayd parse.y).  conf_load
 * returns 0 on success, -ENOENT/-EACCES if the file cannot be read, and
 * WIRE_ECONF (from wire.h) if the file has errors; diag->nerrors counts them.
 *
 * Strings in struct conf are owned by it and freed by conf_free().  Paths may
 * contain "%h", replaced by the host name with conf_expand(); relative paths
 * are relative to LIQUIDVM_HOME.
 */
#ifndef LIQUIDVM_CONF_H
#define LIQUIDVM_CONF_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#define CONF_MAX_SPAWN_PATH 32
#define CONF_DIAG_MAX 4096

enum conf_log_level {
    CONF_LOG_ERR = 0,
    CONF_LOG_WARN,
    CONF_LOG_INFO,
    CONF_LOG_DEBUG
};

/*
 * One entry of the master's `hosts` list: how to start the daemon of a host
 * it adds, as a PVM hostfile line did (vmd.conf(5), hosts).  Unset fields are
 * NULL, 0 or -1; the daemon's own configuration then decides.
 */
struct conf_host {
    char *name;                 /* the host, as given to vmctl add */
    char *address;              /* where it listens (IPv4); NULL: every address */
    int port;                   /* its listen port; -1: its own listen.port */
    int speed;                  /* its relative speed; 0: its own speed */
    char *vmd;                  /* vmd's path on that host; NULL: the master's own path */
    char *home;                 /* its LIQUIDVM_HOME; NULL: see vmd.conf(5) */
    char *spawn_path[CONF_MAX_SPAWN_PATH]; /* its spawn_path; spawn_path_len 0: its own */
    int spawn_path_len;
    int send_certs;             /* 1 send, 0 provisioned by hand, -1: the top-level key */
};

#define CONF_MAX_HOSTS 4095

struct conf {
    char *listen_address;       /* "auto" by default (the interface toward the other hosts);
                                 * "0.0.0.0" every address; "127.0.0.1" for local VMs */
    int listen_port;            /* 0: an ephemeral port, printed on the READY line */
    char *tls_ca;               /* "certs/ca.pem" */
    char *tls_cert;             /* "certs/%h.pem" */
    char *tls_key;              /* "certs/%h.key" */
    double heartbeat;           /* seconds between heartbeats to each peer: 1.0 */
    double host_timeout;        /* a host silent this long is removed: 5.0 */
    double start_timeout;       /* hoststart must print its READY line within: 30.0 */
    double load_interval;       /* seconds between two samples of this host's load: 1.0 */
    double quota_interval;      /* seconds between two reads of the cgroup quota: 0.05 */
    char *spawn_path[CONF_MAX_SPAWN_PATH]; /* "$HOME/pvm3/bin/$PVM_ARCH", "$PVM_ROOT/bin/$PVM_ARCH" */
    int spawn_path_len;
    char *hoststart;            /* "ssh -o BatchMode=yes %h %v" (see vmd.conf for the escapes) */
    int log_level;              /* enum conf_log_level, "info" */
    char *log_file;             /* "logs/%h.log" once daemonised */
    int speed;                  /* relative host speed reported by conf, PVM's 1000 */
    uint64_t max_message;       /* largest message body in bytes: 64 MiB */
    uint64_t max_tasks;         /* most tasks on this host: 4096 */
    uint64_t max_peer_queue;    /* most bytes queued for one peer: 256 MiB */
    uint64_t max_handshakes;    /* TCP connections that have not finished TLS, in all: 64 */
    uint64_t max_handshakes_per_address; /* ... from one source address: 16 */
    uint64_t cache_bytes;       /* cache size for stencil tiles; 0 = detect from sysfs */
    uint64_t llc_bytes;         /* read for older files; no longer used */
    int send_certs;             /* vmctl add hands a host without one its certificate: 1 */
    struct conf_host *hosts;    /* per-host settings for vmctl add, nhosts of them */
    int nhosts;
};

struct conf_diag {
    int nerrors;
    char text[CONF_DIAG_MAX];   /* the error lines, '\n'-separated, NUL-terminated */
};

void conf_defaults(struct conf *c);
int conf_load(const char *path, struct conf *c, struct conf_diag *diag);
void conf_free(struct conf *c);

/*
 * Read and parse any libconfig file with the loader's checks: a regular
 * file of bounded size, no NUL bytes, unterminated strings and comments
 * reported, integers libconfig would silently wrap refused.  cfg is
 * initialised and destroyed by the caller; on success it holds the parse
 * and the caller walks it.  Errors as conf_load's.
 */
int conf_parse(const char *path, config_t *cfg, struct conf_diag *diag);

/* The hosts entry named name, or NULL. */
const struct conf_host *conf_host_find(const struct conf *c, const char *name);
/* Set every field of h unset (as conf_load leaves a key left out). */
void conf_host_clear(struct conf_host *h);
/* Free h's strings and clear it. */
void conf_host_free(struct conf_host *h);

/* Replace "%h" in tmpl by host; the result is malloc'ed (NULL on ENOMEM). */
char *conf_expand(const char *tmpl, const char *host);

/* Parse "err|warn|info|debug"; returns the level or -EINVAL. */
int conf_log_level_parse(const char *s);

#endif
