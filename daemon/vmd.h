/*
 * vmd.h - the daemon's one header (relayd.h style): every struct, enum and
 * prototype shared by the files of daemon/.  Internal: never installed.
 *
 * One struct vmd holds all mutable state; it lives in main() and every
 * handle reaches it through its owning object.  Everything runs on the one
 * libuv loop thread.
 *
 * The files are layered, and a file calls only the files below it (make
 * check fails on any call circle): the helpers and
 * the hooks; the local socket, the host table and the halt; the links
 * between daemons; answers and relays; the tasks and the routing of their
 * messages; the modules that handle frames (watches, multicast, spawn,
 * requests across hosts, the mailbox, the groups, the host table's
 * protocol, vmctl's requests, the load); then the dispatch table and the
 * registry of hooks, which only start-up names.  A frame reaches a handler
 * through vmd->on_frame, an event a module through its hooks, so the
 * lower files never name the modules above them.  The prototypes below
 * follow that order.
 */
#ifndef LIQUIDVM_VMD_H
#define LIQUIDVM_VMD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "conf.h"
#include "vmd_tls.h"
#include "wire.h"
#include "wire_load.h"

#define VMD_MAX_HOSTS WIRE_TID_MAX_HOSTS  /* the tid layout: lib/wire/wire_tid.h */
#define VMD_NAME_MAX 256
#define VMD_ADDR_MAX 64
#define VMD_HOST_TID(index) WIRE_HOST_TID(index)
#define VMD_TID_HOST(tid) WIRE_TID_HOST(tid)
#define VMD_TID_LOCAL_MASK WIRE_TID_LOCAL_MASK
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
struct vmd_from;
struct vmd_hooks;

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
    /* Its latest load sample (WIRE_T_LOAD), and uv_now() when it came. */
    struct wire_load load;
    uint64_t load_at;
    int has_load;
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
    int stranger;               /* inbound and not yet through TLS: counted in vmd->nstrangers */
    uint64_t born;              /* uv_now() when accepted: the oldest stranger of an address
                                 * makes way for a new one */
    char ip[VMD_ADDR_MAX];      /* the source address a stranger is counted under */
    /* Ciphertext from the socket: VMD_PEER_INBUF bytes, allocated once TLS
     * is up (the certificate accepted).  Until then reads land in the
     * daemon's one vmd->hs_inbuf: what the engine does not consume it
     * copies (vmd_tls_feed), so nothing of a stranger stays there. */
    char *inbuf;
};

#define VMD_PEER_INBUF 65536
#define VMD_HS_INBUF 16384

/* At most one log line a second for an event that a stranger can repeat. */
struct vmd_ratelimit {
    uint64_t last_ms;
    unsigned suppressed;        /* events not logged since the last line */
};

struct vmd_client {
    struct vmd *vmd;
    struct vmd_list link;       /* in vmd->clients */
    uv_pipe_t pipe;
    uint32_t id;                /* for relayed replies */
    long pid;                   /* the peer process, from the kernel (SO_PEERCRED) at accept:
                                 * never from what the client says */
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

/* pvm_notify's flag that cancels a request (PvmNotifyCancel). */
#define VMD_NOTIFY_CANCEL 256u

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
    int noparent;               /* spawned with PvmNoSpawnParent: pvm_parent says
                                 * PvmParentNotSet (ptid is still its spawner) */
    uint32_t out_tid;           /* where its output goes; 0: our log */
    int32_t out_code;           /* ... with this tag (PvmOutputCode) */
    int out_open;               /* its stdout and stderr not yet closed */
    long pid;                   /* from the kernel: the process we spawned, or the peer
                                 * credentials of its connection; only ever > 1 */
    char name[256];
    struct vmd_client *client;  /* its connection, once enrolled */
    int spawned;                /* we started the process */
    uint64_t token;             /* spawned: the one-time secret in its LIQUIDVM_TOKEN that its
                                 * enroll must carry; 0 once claimed */
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
    uv_pipe_t in, out, err;     /* its stdin (certificates), stdout (READY line), stderr */
    uv_write_t in_req;
    char *bundle;               /* certificates and key being written to in; wiped after */
    size_t bundle_len;
    int send_certs;             /* answer "vmd need-certs" */
    char vmd_path[1024];        /* vmd on that host, for the error messages */
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
    char master_address[VMD_ADDR_MAX]; /* --master-address: a joiner's route to the master */
    int take_certs;             /* --take-certs: missing TLS files may come on stdin */
    int listen_given;           /* --listen or --port: the master chose our address */
    int index;                  /* our host index, 0 until known */
    int is_master;
    char master_name[VMD_NAME_MAX];
    char master_fingerprint[65]; /* joining: the master's certificate, from its hoststart */
    int master_index;
    struct vmd_host *hosts[VMD_MAX_HOSTS + 1];
    uint32_t table_serial;
    struct vmd_tls_ctx *tls;
    char fingerprint[65];
    /* The TLS files, as loaded; tasks use them for direct links (vmd_task.c). */
    char tls_ca[4096], tls_cert[4096], tls_key[4096];

    uv_tcp_t listener;
    uv_timer_t accept_timer;    /* resumes accepting after a turn's share (vmd_peer.c) */
    uint64_t accept_ms;         /* uv_now() of the accepts counted in accept_count */
    int accept_count;
    int nstrangers;             /* inbound links not yet through TLS */
    int stranger_cap;           /* limits.max_handshakes, lowered to half the descriptors
                                 * free at start-up (vmd_peer_listen) */
    struct vmd_ratelimit rl_refused, rl_accept, rl_local_accept;
    char hs_inbuf[VMD_HS_INBUF];/* every stranger's reads, one at a time (struct vmd_peer) */
    char address[VMD_ADDR_MAX]; /* what we listen on, as others reach us */
    int port;
    uv_pipe_t local;
    char sock_path[4096 + 64];
    uv_timer_t hb_timer;
    uv_signal_t sig_term, sig_int, sig_hup;
    uv_timer_t halt_timer;
    struct vmd_load_sampler *sampler;   /* vmd_load.c; NULL until started */

    struct vmd_list peers, clients, ops, starts;
    struct vmd_list tasks, hostwatch, fwds;
    struct vmd_list rwatch;     /* struct vmd_rwatch: watches kept on other hosts */
    struct vmd_list mbox, mbox_waits;   /* the master's message mailbox (vmd_mbox.c) */
    struct vmd_list groups;     /* master: the group table (vmd_group.c) */
    struct vmd_list clocks;     /* pvm_hostsync requests waiting for a host (vmd_clock.c) */
    struct vmd_list lgroups;    /* every daemon: groups with members or barriers here */
    uint32_t group_gen;         /* master: the last group generation given out */
    uv_timer_t group_timer;     /* flushes barrier arrivals held for more local members */
    int group_timer_init;
    uint32_t spawn_rr;          /* host index default placement starts at; 0: the next one */
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
    /* Where the receiving paths hand every frame (vmd_dispatch_frame, set
     * at start-up): the transport files never name the handlers. */
    int (*on_frame)(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                    const unsigned char *body);
    /* The modules' lifecycle hooks, NULL-terminated, in the order they run. */
    const struct vmd_hooks *const *hooks;
    uint64_t started_ms;
    int exit_code;
};

/* vmd_util.c: lists, strings, held messages */
int vmd_shell_quote(const char *s, char *out, size_t cap);
int vmd_strlcpy(char *dst, const char *src, size_t cap);
void vmd_init_lists(struct vmd *vmd);
void vmd_qmsg_free_all(struct vmd_qmsg *q);
/* 1 if an event may be logged at now_ms (at most once a second), with
 * *suppressed the events kept quiet since the last line; else 0. */
int vmd_ratelimit_ok(struct vmd_ratelimit *rl, uint64_t now_ms, unsigned *suppressed);

/*
 * vmd_hooks.c: lifecycle hooks.  A module defines one const struct
 * vmd_hooks (vmd_<module>_hooks) with what it does on each event; the
 * registry in vmd_modules.c lists them in order.  The code that detects an
 * event calls vmd_hooks_<event>, which runs each module's hook in turn.
 * Every hook runs on the loop thread and may be NULL.
 */
struct vmd_hooks {
    const char *module;
    /* The daemon stops (vmd_halt): answer what waits, close what is open. */
    void (*halt)(struct vmd *vmd);
    /* Our link to h closed (h is still in the table). */
    void (*link_lost)(struct vmd *vmd, struct vmd_host *h, int err);
    /* h joined the VM. */
    void (*host_added)(struct vmd *vmd, struct vmd_host *h);
    /* h leaves the VM; it is freed after the hooks ran. */
    void (*host_gone)(struct vmd *vmd, struct vmd_host *h);
    /* Task t of this host ended (t->ended is set; t is freed later). */
    void (*task_gone)(struct vmd *vmd, struct vmd_task *t);
    /* A local client's connection is closing (c is freed after). */
    void (*client_gone)(struct vmd *vmd, struct vmd_client *c);
};

void vmd_hooks_halt(struct vmd *vmd);
void vmd_hooks_link_lost(struct vmd *vmd, struct vmd_host *h, int err);
void vmd_hooks_host_added(struct vmd *vmd, struct vmd_host *h);
void vmd_hooks_host_gone(struct vmd *vmd, struct vmd_host *h);
void vmd_hooks_task_gone(struct vmd *vmd, struct vmd_task *t);
void vmd_hooks_client_gone(struct vmd *vmd, struct vmd_client *c);

extern const struct vmd_hooks vmd_client_hooks, vmd_peer_hooks, vmd_task_hooks;
extern const struct vmd_hooks vmd_watch_hooks, vmd_watch_remote_hooks, vmd_hostwatch_hooks;
extern const struct vmd_hooks vmd_spawn_hooks, vmd_fwd_hooks, vmd_mbox_hooks, vmd_group_hooks;
extern const struct vmd_hooks vmd_proto_hooks, vmd_op_hooks, vmd_hoststart_hooks;
extern const struct vmd_hooks vmd_load_hooks, vmd_clock_hooks;

/* vmd_modules.c: vmd->on_frame and vmd->hooks, for start-up and tests */
void vmd_modules_install(struct vmd *vmd);

/* A frame handler: the frame came from `from` and passed its row's checks
 * (vmd_dispatch.c).  Returns 0, or a negative code that closes the
 * sender's client or link (or drops a relayed request). */
typedef int vmd_frame_fn(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                         const unsigned char *body);

/*
 * vmd_dispatch.c: who may send what.  Every frame names its origin, one bit
 * of these; a row of the table holds the set that may send its type.
 */
enum vmd_from_kind {
    VMD_FROM_CLIENT = 1 << 0,   /* a local client on the Unix socket: vmctl or a task */
    VMD_FROM_RELAY = 1 << 1,    /* a client of another host, its request relayed by its
                                 * daemon to us, the master */
    VMD_FROM_STRANGER = 1 << 2, /* a daemon whose link passed TLS but that has not said
                                 * HELLO yet */
    VMD_FROM_PEER = 1 << 3,     /* a daemon, to us, neither being the master */
    VMD_FROM_MEMBER = 1 << 4,   /* a daemon, to us, the master */
    VMD_FROM_MASTER = 1 << 5,   /* the master, to us */
};
#define VMD_FROM_DAEMON (VMD_FROM_PEER | VMD_FROM_MEMBER | VMD_FROM_MASTER)

struct vmd_from {
    unsigned kind;              /* one enum vmd_from_kind */
    struct vmd_client *client;  /* VMD_FROM_CLIENT: its connection */
    struct vmd_peer *peer;      /* every other kind: the link it came on */
    int host;                   /* where answers go: 0 here, else the relaying host */
    uint32_t client_id;         /* the client to answer, here or on that host */
};

/* What must hold of the sender, beyond its origin. */
enum vmd_frame_flag {
    VMD_F_TASK = 1 << 0,        /* a client: enrolled as a task */
    VMD_F_STAMP_SRC = 1 << 1,   /* a client: the header's src becomes its tid */
    VMD_F_STAMP_BODY = 1 << 2,  /* the body's first word is the sender's tid: stamped for a
                                 * client (0 before it enrolls), for a relay 0 or a tid of
                                 * the relaying host */
    VMD_F_TASK_CTX = 1 << 3,    /* a client: not in one of the daemons' own contexts */
    VMD_F_MASTER = 1 << 4,      /* the master handles it; another daemon relays its
                                 * client's request to the master */
    VMD_F_BOUND = 1 << 5,       /* a daemon: its link is bound to a host of our table */
    VMD_F_OWN_SRC = 1 << 6,     /* a daemon: the header's src is a task of its host */
};

struct vmd_frame {
    vmd_frame_fn *fn;           /* NULL: nobody may send this type */
    unsigned from;              /* the enum vmd_from_kind bits that may send it */
    uint32_t min_len;           /* bytes of body at least */
    unsigned flags;             /* enum vmd_frame_flag */
    const char *name;           /* for the log */
};

/* RELAY's answer (VMD_RELAY_REPLY in the header's flags) travels in the
 * type of its request but is another frame: its own row, after the types. */
#define VMD_RELAY_REPLY 1u
#define VMD_FRAME_RELAY_REPLY (WIRE_T_MAX + 1)
#define VMD_FRAME_ROWS (WIRE_T_MAX + 2)
/* A load sample's length (wire_load.h: i32 cpus, 7 doubles, 3 u64). */
#define VMD_LOAD_SAMPLE_LEN (4 + 7 * 8 + 3 * 8)

extern const struct vmd_frame vmd_frames[VMD_FRAME_ROWS];
/* The row of h's type in a table. */
int vmd_frame_row(const struct wire_hdr *h);
const char *vmd_from_name(unsigned kind);
/* Check h against its row of table and run the row's handler.  Returns the
 * handler's code, or without running it -EPERM (not from this sender) or
 * WIRE_EFRAME (an unknown type, a short body). */
int vmd_dispatch(struct vmd *vmd, const struct vmd_frame *table, const struct vmd_from *from,
                 const struct wire_hdr *h, const unsigned char *body);
/* vmd_dispatch with vmd_frames: what vmd->on_frame points to. */
int vmd_dispatch_frame(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                       const unsigned char *body);

/* vmd_client.c: the local Unix socket */
int vmd_client_listen(struct vmd *vmd);
int vmd_client_send(struct vmd_client *c, const struct wire_hdr *h, const void *body,
                    size_t len);
int vmd_client_reply(struct vmd *vmd, uint32_t client_id, uint32_t req_id, int status,
                     const struct wire_wbuf *body);
/* Flow control: pause c while host's queue is full; resume the clients whose
 * host drained below half of max_peer_queue or left the VM. */
void vmd_client_pause(struct vmd_client *c, int host, uint32_t tid);
void vmd_client_flow_check(struct vmd *vmd);
/* Bytes waiting to go to host index (held while its link is made, plus
 * queued on the link); 0 for ourselves or an unknown host. */
size_t vmd_host_backlog(struct vmd *vmd, int host);
/* Bytes written to a local task's socket that it has not read yet. */
size_t vmd_task_backlog(struct vmd *vmd, uint32_t tid);

/* vmd_hosts.c: the host table */
struct vmd_host *vmd_host_by_name(struct vmd *vmd, const char *name);
struct vmd_host *vmd_host_new(struct vmd *vmd, const char *name, int index);
void vmd_host_free(struct vmd *vmd, struct vmd_host *h);
int vmd_host_count(const struct vmd *vmd, int up_only);
void vmd_hosts_pack(const struct vmd *vmd, struct wire_wbuf *b, const struct vmd_host *extra);
const char *vmd_host_state_name(enum vmd_host_state s);

/* vmd_halt.c: stopping this daemon; the master's wait for the others */
void vmd_halt(struct vmd *vmd, const char *why);
/* Links still open (daemons that have not gone yet). */
int vmd_halt_open_links(const struct vmd *vmd);
/* The master halts the VM: stop once every link closed, or after
 * VMD_HALT_WAIT_MS; vmd_halt_check looks again when a link closes. */
void vmd_halt_wait(struct vmd *vmd);
void vmd_halt_check(struct vmd *vmd);

/* vmd_peer.c: TLS links between daemons */
int vmd_peer_listen(struct vmd *vmd);
int vmd_peer_connect(struct vmd *vmd, struct vmd_host *h);
int vmd_peer_send(struct vmd_peer *p, struct wire_hdr *h, const void *body, size_t len);
int vmd_peer_send2(struct vmd_peer *p, struct wire_hdr *h, const void *a, size_t alen,
                   const void *b, size_t blen);
void vmd_peer_close(struct vmd_peer *p, int err, const char *why);
void vmd_peer_check_liveness(struct vmd *vmd);
void vmd_peer_heartbeat_all(struct vmd *vmd);

/* vmd_relay.c: answers, wherever the client is; requests for the master */
void vmd_reply(struct vmd *vmd, int host, uint32_t client_id, uint32_t req_id, int status,
               const struct wire_wbuf *body);
void vmd_answer(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                int status, const struct wire_wbuf *body);
/* A client's request, to the master (a daemon that is not the master). */
int vmd_relay_request(struct vmd *vmd, uint32_t client_id, const struct wire_hdr *h,
                      const unsigned char *body);
/* A request of this daemon's own (no client waits), to the master. */
void vmd_relay_own(struct vmd *vmd, int type, const void *body, size_t len);
vmd_frame_fn vmd_relay_on_reply;

/* vmd_task.c: PVM tasks of this host */
struct vmd_task *vmd_task_by_tid(struct vmd *vmd, uint32_t tid);
struct vmd_task *vmd_task_new(struct vmd *vmd, uint32_t ptid, const char *name);
void vmd_task_end(struct vmd_task *t, const char *why);
void vmd_task_release(struct vmd_task *t);
int vmd_task_kill(struct vmd *vmd, uint32_t tid, int sig);
/* Whether a pid may be signalled: the one guard in front of kill(), so that
 * 0, 1, negative (a process group, or -1: every process) and our own pid
 * never are.  Pure, for tests. */
int vmd_task_pid_ok(long pid, long self);
/* Whether client c may claim spawned task t (NULL: no such task): c's process is
 * the one we spawned for t and it sent t's one-time token.  Pure, for tests. */
int vmd_task_claim_ok(const struct vmd_task *t, const struct vmd_client *c, int has_token,
                      uint64_t token);
int vmd_task_list(struct vmd *vmd, uint32_t where, struct wire_wbuf *b);
vmd_frame_fn vmd_task_enroll, vmd_task_newctx, vmd_task_freectx, vmd_task_direct_info;

/* vmd_route.c: a message to any task of the VM, held while it cannot go */
void vmd_route_deliver(struct vmd *vmd, struct wire_hdr *h, const void *body);
void vmd_route_ints(struct vmd *vmd, uint32_t to, int32_t tag, int32_t ctx, const uint32_t *v,
                    int n);
/* The link to h is up: send what waited for it. */
void vmd_route_flush_host(struct vmd *vmd, struct vmd_host *h);
/* A frame for host dh (h->len bytes of body): sent, or held in order, as a
 * task's message is, while its link is being made.  0, or an error. */
int vmd_route_to_host(struct vmd *vmd, struct vmd_host *dh, struct wire_hdr *h,
                      const void *body);

/* vmd_msg.c: task messages as frames */
vmd_frame_fn vmd_msg_route;

/* vmd_watch.c: pvm_notify(PvmTaskExit) */
int vmd_watch_exit(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid);
int vmd_watch_remote_add(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx,
                         uint32_t tid);
/* PvmNotifyCancel: drop a watch (vmd_watch.c says who is told). */
void vmd_watch_cancel(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid,
                      int tell);
int vmd_watch_remote_cancel(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx,
                            uint32_t tid);
/* A message from a peer: the exit notice a remote copy stands for ends it. */
void vmd_watch_noticed(struct vmd *vmd, const struct wire_hdr *h, const unsigned char *body);

/* vmd_hostwatch.c: pvm_notify(PvmHostDelete, PvmHostAdd) */
int vmd_hostwatch_request(struct vmd *vmd, uint32_t from, const struct wire_hdr *h,
                          const unsigned char *body);

/* vmd_clock.c: pvm_hostsync, a host's clock */
vmd_frame_fn vmd_clock_request, vmd_clock_on_peer;

/* vmd_mcast.c: one message for several tasks, one copy per host */
vmd_frame_fn vmd_mcast_client, vmd_mcast_on_peer;

/* vmd_spawn.c: starting a task's process on this host, and its output */
/* wd: the working directory pvm_spawn's where gave after a ':' (absolute,
 * or under $HOME), "" for $HOME; one that cannot be entered is passed
 * over for $HOME, as PVM does.  flags: VMD_SPAWN_NOPARENT or 0. */
#define VMD_SPAWN_NOPARENT 64   /* PVM's PvmNoSpawnParent */
int vmd_spawn_local(struct vmd *vmd, uint32_t ptid, uint32_t out_tid, int32_t out_code,
                    const char *file, const char *wd, uint32_t flags, char **argv, int argc,
                    char **env, int envc, uint32_t *tid_out);

/* vmd_fwd.c: task requests that span hosts (spawn, kill, notify, tasks) */
vmd_frame_fn vmd_fwd_spawn, vmd_fwd_kill, vmd_fwd_list, vmd_fwd_notify;
vmd_frame_fn vmd_fwd_on_request, vmd_fwd_on_reply;
/* Answer requests whose hosts did not in time (or all, halting). */
void vmd_fwd_sweep(struct vmd *vmd);

/* vmd_mbox.c: the message mailbox, on the master */
vmd_frame_fn vmd_mbox_put, vmd_mbox_get, vmd_mbox_del, vmd_mbox_list, vmd_mbox_gone;

/* vmd_group.c: dynamic groups; the master owns the table, each daemon
 * gathers its own tasks' barrier arrivals before they go to the master */
void vmd_group_init(struct vmd *vmd);
vmd_frame_fn vmd_group_join, vmd_group_leave, vmd_group_tid, vmd_group_inst, vmd_group_size;
vmd_frame_fn vmd_group_freeze, vmd_group_info, vmd_group_list, vmd_group_gone;
vmd_frame_fn vmd_group_barrier, vmd_group_on_sync, vmd_group_on_arrive, vmd_group_on_done;

/* vmd_hostsync.c: every daemon's table in step with the master's */
int vmd_hosts_apply(struct vmd *vmd, const void *body, size_t len);
void vmd_hosts_broadcast(struct vmd *vmd, struct vmd_host *first);
/* Forget a host (its host_gone hooks run) and close our link to it. */
void vmd_host_remove(struct vmd *vmd, struct vmd_host *h, const char *why);

/* vmd_proto.c: what daemons say to each other */
vmd_frame_fn vmd_proto_hello, vmd_proto_hosttable, vmd_proto_heartbeat, vmd_proto_halt;

/* vmd_op.c: requests that wait */
struct vmd_op *vmd_op_new(struct vmd *vmd, int type, int origin_host, uint32_t client_id,
                          uint32_t req_id, int n);
void vmd_op_free(struct vmd_op *op);
/* Drop one reason to wait; the last one sends the answer. */
void vmd_op_release(struct vmd *vmd, struct vmd_op *op);
void vmd_op_item_done(struct vmd *vmd, struct vmd_op *op, int item, int status, const char *msg);

/* vmd_ops.c: vmctl's requests (conf, status, add, delete, halt) */
vmd_frame_fn vmd_ops_conf, vmd_ops_status, vmd_ops_add, vmd_ops_delete, vmd_ops_halt;
void vmd_halt_vm(struct vmd *vmd);

/* vmd_certs.c: a joining daemon's certificates, from the master on stdin */
int vmd_certs_take(struct vmd *vmd, const char *ca, const char *cert, const char *key, char *err,
                   size_t errcap);

/* vmd_hostcerts.c: the master's side: "vmd certs ..." and the three files,
 * malloc'ed into *out; vmd_hostcerts_wipe() wipes and frees it. */
int vmd_hostcerts_bundle(struct vmd *vmd, const char *host, char **out, size_t *outlen, char *err,
                         size_t errcap);
void vmd_hostcerts_wipe(char *bundle, size_t len);

/* vmd_hosterr.c: an add's failure in words, naming the host and the step */
void vmd_hosterr_exit(const char *host, const char *vmd_path, int status, const char *last,
                      char *msg, size_t cap);
void vmd_hosterr_daemon(const char *host, const char *what, char *msg, size_t cap);
void vmd_hosterr_link(const struct vmd_host *h, int status, const char *why, char *msg,
                      size_t cap);

/* vmd_hoststart.c: starting a daemon on a new host */
/* set: vmctl add's options for this add (NULL: none), over the hosts entry. */
/* why: the reason in words when the command could not be made (a path
 * the other host's shell would read again), else left empty. */
int vmd_hoststart(struct vmd *vmd, struct vmd_op *op, int item, struct vmd_host *h,
                  const struct conf_host *set, char *why, size_t whylen);
/* The hosts entry for host with set over it, pointers borrowed from both. */
void vmd_hoststart_settings(struct vmd *vmd, const char *host, const struct conf_host *set,
                            struct conf_host *out);
int vmd_hoststart_expand_for(struct vmd *vmd, const char *tmpl, const char *host,
                             const struct conf_host *set, char *out, size_t cap);
int vmd_hoststart_expand(struct vmd *vmd, const char *tmpl, const char *host, char *out,
                         size_t cap);
void vmd_hoststart_peer_ready(struct vmd *vmd, struct vmd_host *h, int status, const char *msg);
void vmd_hoststart_cancel_all(struct vmd *vmd);

/* vmd_load.c: sampling this host's load, sharing it with the peers */
struct vmd_load_sampler;
int vmd_load_start(struct vmd *vmd);
void vmd_load_stop(struct vmd *vmd);
vmd_frame_fn vmd_load_on_peer, vmd_load_request;
/* Every host's latest sample as a table (wire_load.h). */
void vmd_load_pack_all(struct vmd *vmd, struct wire_wbuf *b);

/*
 * The pure parsers behind the sampler, on the text of one file each; unit
 * tested on fixtures (tests/unit/test_vmd_load.c).  Each returns 0, or
 * -EINVAL when the text does not hold what it should (fields then unset).
 */
struct vmd_cpu_times {
    uint64_t busy;              /* user+nice+system+irq+softirq+steal, in USER_HZ ticks */
    uint64_t total;             /* busy + idle + iowait */
    int ncpus;                  /* "cpuN" lines */
};
struct vmd_proc_times {
    long pid, ppid;
    uint64_t cpu;               /* utime+stime+cutime+cstime, in ticks */
    uint64_t start;             /* starttime: tells a reused pid apart */
};
struct vmd_cg_stat {
    uint64_t nr_periods, nr_throttled;
};
/* /proc/stat */
int vmd_load_parse_stat(const char *text, struct vmd_cpu_times *out);
/* /proc/loadavg */
int vmd_load_parse_loadavg(const char *text, double *load1);
/* /proc/meminfo: bytes; MemAvailable, or MemFree+Buffers+Cached on old kernels. */
int vmd_load_parse_meminfo(const char *text, uint64_t *total, uint64_t *avail);
/* /proc/PID/stat (the command name may hold spaces and parentheses). */
int vmd_load_parse_procstat(const char *text, struct vmd_proc_times *out);
/* /proc/self/cgroup: the path in the v1 hierarchy that has the cpu
 * controller and the v2 path ("" when absent); -EINVAL if neither. */
int vmd_load_parse_cgroup(const char *text, char *v1, size_t v1cap, char *v2, size_t v2cap);
/* /proc/self/mountinfo: where the v1 cpu hierarchy and cgroup2 are mounted
 * and which cgroup each mount shows as its root ("" when absent). */
struct vmd_cg_mounts {
    char v1_dir[512], v1_root[512];
    char v2_dir[512], v2_root[512];
};
int vmd_load_parse_mountinfo(const char *text, struct vmd_cg_mounts *out);
/* cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: *cpus = quota/period,
 * 0 when the quota is -1 (no limit). */
int vmd_load_parse_cfs(const char *quota, const char *period, double *cpus);
/* cgroup v2 cpu.max ("max 100000" or "30000 100000"): as above. */
int vmd_load_parse_cpumax(const char *text, double *cpus);
/* cpu.stat of either version: nr_periods, nr_throttled. */
int vmd_load_parse_cgstat(const char *text, struct vmd_cg_stat *out);
/* min(quota, cpus - ext_busy) clamped at 0; -1 if cpus or ext_busy is unknown. */
double vmd_load_capacity(int cpus, double ext_busy, double quota);
/* The kernel identity of a sample from /proc/sys/kernel/random/boot_id's
 * text: a hash, never 0. */
uint64_t vmd_load_kernel_id(const char *boot_id);

/* vmd_main.c */
void vmd_ready(struct vmd *vmd);

#endif
