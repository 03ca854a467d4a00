/*
 * vmd.h - the daemon's one header (relayd.h style): every struct, enum and
 * prototype shared by the files of daemon/.  Internal: never installed.
 *
 * One struct vmd holds all mutable state; it lives in main() and every
 * handle reaches it through its owning object.  Everything runs on the one
 * libuv loop thread.
 */
#ifndef LIQUIDVM_VMD_H
#define LIQUIDVM_VMD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "conf.h"
#include "vmd_tls.h"
#include "wire.h"

#define VMD_MAX_HOSTS 4095          /* host index fits bits 18-29 of a tid */
#define VMD_NAME_MAX 256
#define VMD_ADDR_MAX 64
#define VMD_TID_HOST_SHIFT 18
#define VMD_HOST_TID(index) ((uint32_t)(index) << VMD_TID_HOST_SHIFT)
#define VMD_TID_HOST(tid) ((int)(((tid) >> VMD_TID_HOST_SHIFT) & 0xfff))
#define VMD_TID_LOCAL_MASK 0x3ffffu
#define VMD_HANDSHAKE_TIMEOUT_MS 10000
#define VMD_HALT_WAIT_MS 3000

#define vmd_container_of(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* A doubly linked list node (embedded). */
struct vmd_list {
    struct vmd_list *prev, *next;
};

void vmd_list_init(struct vmd_list *l);
void vmd_list_insert(struct vmd_list *head, struct vmd_list *n);
void vmd_list_remove(struct vmd_list *n);
int vmd_list_empty(const struct vmd_list *l);

enum vmd_host_state {
    VMD_HOST_STARTING,          /* hoststart running, or TLS not yet up */
    VMD_HOST_UP,
};

struct vmd_qmsg;

struct vmd_host {
    int index;                  /* 1..VMD_MAX_HOSTS; its daemon's tid is index << 18 */
    char name[VMD_NAME_MAX];
    char address[VMD_ADDR_MAX];
    int port;
    char arch[16];
    int speed;
    char fingerprint[65];       /* of its certificate, pinned from its READY line */
    enum vmd_host_state state;
    struct vmd_peer *peer;      /* our link to it; NULL for ourselves */
    /* Task messages for it while its link is (re)connecting, oldest first. */
    struct vmd_qmsg *qhead, *qtail;
    size_t qbytes;
};

enum vmd_peer_state {
    VMD_PEER_CONNECTING,        /* outbound TCP connect under way */
    VMD_PEER_HANDSHAKE,         /* TLS handshake */
    VMD_PEER_HELLO,             /* TLS up, waiting for the peer's HELLO */
    VMD_PEER_UP,
    VMD_PEER_CLOSING,
};

struct vmd_peer {
    struct vmd *vmd;
    struct vmd_list link;       /* in vmd->peers */
    uv_tcp_t tcp;
    uv_timer_t timer;           /* handshake deadline */
    uv_connect_t connect_req;
    enum vmd_peer_state state;
    int outbound;
    int handles;                /* open handles; freed when it reaches 0 */
    struct vmd_tls *tls;
    char name[VMD_NAME_MAX];    /* expected (outbound) or from the certificate */
    char addr[VMD_ADDR_MAX + 8];/* "ip:port" for the log */
    struct vmd_host *host;      /* once UP */
    struct wire_rx rx;          /* plaintext frames */
    uint64_t last_rx;           /* uv_now() of the last frame */
    size_t queued;              /* ciphertext bytes handed to uv_write, not yet written */
    int err;                    /* why it closes */
    char inbuf[65536];          /* ciphertext from the socket */
};

struct vmd_client {
    struct vmd *vmd;
    struct vmd_list link;       /* in vmd->clients */
    uv_pipe_t pipe;
    uint32_t id;                /* for relayed replies */
    struct vmd_task *task;      /* once it enrolled as a PVM task */
    int closing;
    /* Flow control: reading stopped while the host its messages go to
     * holds max_peer_queue bytes or more, or the local task they go to has
     * that much unread (vmd_client_flow_check). */
    int paused;
    int paused_host;
    uint32_t paused_tid;        /* a local task, or 0: the host */
    struct wire_rx rx;
};

/* A message held for a spawned task that has not connected yet. */
struct vmd_qmsg {
    struct vmd_qmsg *next;
    struct wire_hdr h;
    unsigned char *body;
};

/* Who wants a message when a task exits (pvm_notify PvmTaskExit). */
struct vmd_watch {
    struct vmd_watch *next;
    uint32_t tid;               /* the task to tell */
    int32_t tag, ctx;
};

/* A local task's PvmTaskExit watch of a task on another host (vmd_task.c). */
struct vmd_rwatch {
    struct vmd_list link;       /* in vmd->rwatch */
    uint32_t watcher, tid;
    int32_t tag, ctx;
};

/* pvm_notify PvmHostDelete / PvmHostAdd of a local task. */
struct vmd_hostwatch {
    struct vmd_list link;       /* in vmd->hostwatch */
    int what;                   /* PvmHostDelete (2) or PvmHostAdd (3) */
    uint32_t tid;
    int32_t tag, ctx;
    uint32_t dtid;              /* HostDelete: the host watched */
    int count;                  /* HostAdd: notifications left, -1 for ever */
};

/* A PVM task of this host (vmd_task.c). */
struct vmd_task {
    struct vmd *vmd;
    struct vmd_list link;       /* in vmd->tasks */
    uint32_t tid, ptid;
    uint32_t out_tid;           /* where its output goes; 0: our log */
    long pid;
    char name[256];
    struct vmd_client *client;  /* its connection, once enrolled */
    int spawned;                /* we started the process */
    int ended;                  /* left the VM (pvm_exit, death, kill): tid no longer valid */
    int proc_exited;
    int handles;                /* open handles of a spawned task (process, 2 pipes) */
    uv_process_t proc;
    uv_pipe_t out[2];           /* its stdout, stderr */
    char line[2][1024];
    size_t linelen[2];
    struct vmd_qmsg *qhead, *qtail;
    size_t qbytes;
    struct vmd_watch *watch;
};

/* A request that waits for something (hoststart, the master, peers). */
struct vmd_op {
    struct vmd_list link;       /* in vmd->ops */
    uint32_t id;                /* for relays from other hosts */
    int type;                   /* enum wire_type of the request */
    /* Who asked: a local client, or a client on another host through RELAY. */
    uint32_t client_id;
    uint32_t req_id;
    int origin_host;            /* 0: local */
    int pending;                /* hosts still starting */
    int nitems;
    struct vmd_op_item {
        char name[VMD_NAME_MAX];
        int status;
        uint32_t dtid;
        char msg[256];
    } *items;
};

/* One hoststart in flight for an add. */
struct vmd_start {
    struct vmd *vmd;
    struct vmd_list link;       /* in vmd->starts */
    struct vmd_op *op;
    int item;
    struct vmd_host *host;
    uv_process_t proc;
    uv_pipe_t out, err;         /* the command's stdout (READY line) and stderr */
    uv_timer_t timer;           /* start_timeout */
    int handles;
    int done;                   /* the add item is settled */
    int exited, exit_status, exit_signal;
    int out_eof;                /* stdout reached EOF */
    int got_line;
    char line[1024];
    size_t linelen;
    char errtail[256], errlast[256];  /* the last stderr line, for the error */
    size_t errlen, errlen_last;
};

struct vmd {
    uv_loop_t *loop;
    struct conf conf;
    char conf_path[4096];       /* absolute, passed on to joined daemons ("" = none) */
    char home[4096];
    char name[VMD_NAME_MAX];
    char exe[4096];             /* our own executable, for %v */
    char listen_override[VMD_ADDR_MAX]; /* --listen given on the command line */
    char hoststart_override[1024];
    int index;                  /* our host index, 0 until known */
    int is_master;
    char master_name[VMD_NAME_MAX];
    int master_index;
    struct vmd_host *hosts[VMD_MAX_HOSTS + 1];
    uint32_t table_serial;
    struct vmd_tls_ctx *tls;
    char fingerprint[65];
    /* The TLS files, as loaded; tasks use them for direct links (vmd_task.c). */
    char tls_ca[4096], tls_cert[4096], tls_key[4096];

    uv_tcp_t listener;
    char address[VMD_ADDR_MAX]; /* what we listen on, as others reach us */
    int port;
    uv_pipe_t local;
    char sock_path[4096 + 64];
    uv_timer_t hb_timer;
    uv_signal_t sig_term, sig_int, sig_hup;
    uv_timer_t halt_timer;

    struct vmd_list peers, clients, ops, starts;
    struct vmd_list tasks, hostwatch, fwds;
    struct vmd_list rwatch;     /* struct vmd_rwatch: watches kept on other hosts */
    struct vmd_list mbox, mbox_waits;   /* the master's message mailbox (vmd_mbox.c) */
    uint32_t spawn_rr;          /* round-robin start for default placement */
    uint32_t next_client_id, next_op_id;
    uint32_t next_task;         /* the local part of the last tid given out */
    uint32_t next_ctx;          /* the local part of the last context id given out */
    /* Context ids in use (local parts), so pvm_freecontext recycles them
     * and a wrapped counter never hands out one that is still held. */
    unsigned char ctx_used[(VMD_TID_LOCAL_MASK + 1) / 8];
    int ntasks;
    int npaused;                /* clients paused by flow control */
    int halting;                /* closing everything; the loop ends when all is closed */
    int halting_vm;             /* master: HALT sent, waiting for the peers to go */
    struct vmd_op *halt_op;     /* the halt request to answer when done */
    int ready_fd;               /* where the READY line goes; -1 after */
    uint64_t started_ms;
    int exit_code;
};

/* vmd_main.c */
void vmd_ready(struct vmd *vmd);

/* vmd_hosts.c: the host table */
struct vmd_host *vmd_host_by_name(struct vmd *vmd, const char *name);
struct vmd_host *vmd_host_new(struct vmd *vmd, const char *name, int index);
void vmd_host_free(struct vmd *vmd, struct vmd_host *h);
int vmd_host_count(const struct vmd *vmd, int up_only);
void vmd_hosts_pack(const struct vmd *vmd, struct wire_wbuf *b, const struct vmd_host *extra);
int vmd_hosts_apply(struct vmd *vmd, const void *body, size_t len);
void vmd_hosts_broadcast(struct vmd *vmd, struct vmd_host *first);
void vmd_host_remove(struct vmd *vmd, struct vmd_host *h, const char *why);
const char *vmd_host_state_name(enum vmd_host_state s);

/* vmd_peer.c: TLS links between daemons */
int vmd_peer_listen(struct vmd *vmd);
int vmd_peer_connect(struct vmd *vmd, struct vmd_host *h);
int vmd_peer_send(struct vmd_peer *p, struct wire_hdr *h, const void *body, size_t len);
void vmd_peer_close(struct vmd_peer *p, int err, const char *why);
void vmd_peer_check_liveness(struct vmd *vmd);
void vmd_peer_heartbeat_all(struct vmd *vmd);

/* vmd_proto.c: what daemons say to each other */
void vmd_proto_send_hello(struct vmd_peer *p);
int vmd_proto_dispatch(struct vmd_peer *p, const struct wire_hdr *h, const unsigned char *body);
void vmd_proto_peer_up(struct vmd_peer *p);
void vmd_proto_peer_lost(struct vmd *vmd, struct vmd_host *h, int err);

/* vmd_client.c: the local Unix socket */
int vmd_client_listen(struct vmd *vmd);
int vmd_client_reply(struct vmd *vmd, uint32_t client_id, uint32_t req_id, int status,
                     const struct wire_wbuf *body);
void vmd_client_close_all(struct vmd *vmd);
/* Flow control: pause c while host's queue is full; resume the clients whose
 * host drained below half of max_peer_queue or left the VM. */
void vmd_client_pause(struct vmd_client *c, int host, uint32_t tid);
void vmd_client_flow_check(struct vmd *vmd);
/* Bytes waiting to go to host index (held while its link is made, plus
 * queued on the link); 0 for ourselves or an unknown host. */
size_t vmd_host_backlog(struct vmd *vmd, int host);
/* Bytes written to a local task's socket that it has not read yet. */
size_t vmd_task_backlog(struct vmd *vmd, uint32_t tid);

/* vmd_task.c: PVM tasks of this host, their messages, exits and output */
int vmd_task_enroll(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h,
                    const unsigned char *body);
int vmd_task_route(struct vmd *vmd, struct vmd_client *from, const struct wire_hdr *h,
                   const unsigned char *body);
void vmd_task_deliver(struct vmd *vmd, struct wire_hdr *h, const void *body);
void vmd_task_flush_host(struct vmd *vmd, struct vmd_host *h);
void vmd_qmsg_free_all(struct vmd_qmsg *q);
void vmd_task_client_gone(struct vmd *vmd, struct vmd_client *c);
int vmd_task_newctx(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h);
int vmd_task_freectx(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h,
                     const unsigned char *body);
int vmd_task_direct_info(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h,
                         const unsigned char *body);
struct vmd_task *vmd_task_by_tid(struct vmd *vmd, uint32_t tid);
struct vmd_task *vmd_task_new(struct vmd *vmd, uint32_t ptid, const char *name);
void vmd_task_end(struct vmd_task *t, const char *why);
void vmd_task_release(struct vmd_task *t);
int vmd_task_kill(struct vmd *vmd, uint32_t tid, int sig);
int vmd_task_watch_exit(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid);
int vmd_task_rwatch_add(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx,
                        uint32_t tid);
void vmd_task_host_gone(struct vmd *vmd, int index);
int vmd_task_list(struct vmd *vmd, uint32_t where, struct wire_wbuf *b);
void vmd_task_host_event(struct vmd *vmd, int what, uint32_t dtid);
int vmd_task_notify_req(struct vmd *vmd, uint32_t from, const struct wire_hdr *h,
                        const unsigned char *body);
void vmd_task_kill_all(struct vmd *vmd);
int vmd_client_send(struct vmd_client *c, const struct wire_hdr *h, const void *body,
                    size_t len);

/* vmd_spawn.c: pvm_spawn: placement, starting processes, their output */
int vmd_spawn_local(struct vmd *vmd, uint32_t ptid, uint32_t out_tid, const char *file,
                    char **argv, int argc, char **env, int envc, uint32_t *tid_out);
void vmd_spawn_close_all(struct vmd *vmd);

/* vmd_fwd.c: task requests that span hosts (spawn, kill, notify, tasks) */
int vmd_fwd_request(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h,
                    const unsigned char *body);
int vmd_fwd_on_peer(struct vmd_peer *p, const struct wire_hdr *h, const unsigned char *body);
void vmd_fwd_sweep(struct vmd *vmd);

/* vmd_ops.c: requests (conf, add, delete, halt, status) */
int vmd_ops_request(struct vmd *vmd, int origin_host, uint32_t client_id,
                    const struct wire_hdr *h, const unsigned char *body);
void vmd_ops_relay_reply(struct vmd *vmd, const struct wire_hdr *h, const unsigned char *body);
void vmd_op_item_done(struct vmd *vmd, struct vmd_op *op, int item, int status, const char *msg);
void vmd_ops_halt_done(struct vmd *vmd, int stragglers);
void vmd_ops_answer(struct vmd *vmd, int origin_host, uint32_t client_id, uint32_t req_id,
                    int status, struct wire_wbuf *body);
void vmd_ops_mbox_gone(struct vmd *vmd, uint32_t tid);

/* vmd_mbox.c: the message mailbox, on the master */
int vmd_mbox_request(struct vmd *vmd, int origin, uint32_t client_id, const struct wire_hdr *h,
                     const unsigned char *body);
void vmd_mbox_clear(struct vmd *vmd);

/* vmd_hoststart.c: starting a daemon on a new host */
int vmd_hoststart(struct vmd *vmd, struct vmd_op *op, int item, struct vmd_host *h);
int vmd_hoststart_expand(struct vmd *vmd, const char *tmpl, const char *host, char *out,
                         size_t cap);
void vmd_hoststart_peer_ready(struct vmd *vmd, struct vmd_host *h, int status, const char *msg);
void vmd_hoststart_cancel_all(struct vmd *vmd);
int vmd_shell_quote(const char *s, char *out, size_t cap);
int vmd_strlcpy(char *dst, const char *src, size_t cap);
void vmd_init_lists(struct vmd *vmd);

/* vmd_halt.c */
void vmd_halt(struct vmd *vmd, const char *why);
void vmd_halt_vm(struct vmd *vmd);
void vmd_halt_check(struct vmd *vmd);

#endif
