/*
 * wire.h - the frame format shared by vmd, vmctl and libpvm3, and the
 * project's error codes.
 *
 * Who may include it: everything but decomp/ and kernels/.  Pure functions,
 * no global state, reentrant.
 *
 * Every message between two daemons (inside TLS), between a daemon and a
 * local client (over its Unix socket) or between two tasks is one frame:
 *
 *   offset size  field
 *   0      2     magic 0x4c56 ("LV")
 *   2      1     version, WIRE_VERSION; another version closes the link
 *   3      1     type, enum wire_type
 *   4      4     length of the body that follows the header, in bytes
 *   8      4     source tid (PVM layout: host index in bits 18-29)
 *   12     4     destination tid
 *   16     4     tag: the PVM message tag, or the request's status in replies
 *   20     4     ctx: the PVM message context
 *   24     4     id: a request id that a reply carries back
 *   28     4     flags: the body's encoding (WIRE_ENC_*) and WIRE_F_* bits
 *   32     ...   body
 *
 * All integers are big-endian.  A receiver checks magic, version and length
 * against its own limit before it allocates or copies anything; a frame that
 * fails is a protocol error that closes that one link (WIRE_EFRAME).
 *
 * Bodies of control frames are built with struct wire_wbuf and read with
 * struct wire_rbuf: u8/u32/u64 big-endian, strings as u32 length + bytes.
 * Readers never run past the end: every get returns WIRE_EFRAME instead.
 *
 * Errors: 0 or a negative code.  -errno values where they fit; the conditions
 * errno lacks are the WIRE_E* codes below -4000, listed once in WIRE_ERRNO_MAP.
 */
#ifndef LIQUIDVM_WIRE_H
#define LIQUIDVM_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire_tid.h"
#include <stdio.h>

/* The release, set by the Makefile from its VERSION. */
#ifndef LIQUIDVM_VERSION
#define LIQUIDVM_VERSION "unknown"
#endif

#define WIRE_MAGIC 0x4c56
#define WIRE_VERSION 1
#define WIRE_HDR_LEN 32
#define WIRE_STR_MAX 4096       /* longest string in a control body */

/* name, value, message */
#define WIRE_ERRNO_MAP(X)                                                     \
    X(ECONF, -4001, "bad configuration")                                      \
    X(EBADCERT, -4002, "peer certificate not issued by the cluster CA")       \
    X(ENOCERT, -4003, "peer sent no certificate")                             \
    X(ENAME, -4004, "certificate name does not match the host table")         \
    X(ENOTLS, -4005, "peer does not speak TLS 1.3")                           \
    X(EFRAME, -4006, "malformed frame")                                       \
    X(EVERSION, -4007, "protocol version mismatch")                           \
    X(ENOHOST, -4008, "no such host")                                         \
    X(EDUPHOST, -4009, "host already in the virtual machine")                 \
    X(ECANTSTART, -4010, "cannot start a daemon on that host")                \
    X(EHOSTFAIL, -4011, "host failed")                                        \
    X(ENOVM, -4012, "no virtual machine is running")                          \
    X(EMASTER, -4013, "operation not allowed on the master host")             \
    X(ETLS, -4014, "TLS failure")                                             \
    X(EBUSY, -4015, "another operation is in progress")                       \
    X(EHALTED, -4016, "the virtual machine is halting")                      \
    X(ENOTASK, -4017, "no such task")                                        \
    X(ENOTFOUND, -4018, "not found")                                          \
    X(EDENIED, -4019, "permission denied")                                    \
    X(ENOGROUP, -4020, "no such group")                                       \
    X(ENOTINGROUP, -4021, "not in group")                                     \
    X(EDUPGROUP, -4022, "already in group")                                   \
    X(ENOINST, -4023, "no such instance")                                     \
    X(ENULLGROUP, -4024, "null group name")                                   \
    X(ESTRANGER, -4025, "the daemon there runs as another user")                \
    X(EPINNED, -4026, "peer certificate is not the one its host announced")

enum wire_err {
#define WIRE_ERR_ENUM(name, val, msg) WIRE_##name = (val),
    WIRE_ERRNO_MAP(WIRE_ERR_ENUM)
#undef WIRE_ERR_ENUM
    WIRE_ERR_MIN = -4100
};

/* The text for a 0/negative code: ours, or strerror(-code).  Never NULL. */
const char *wire_strerror(int code);
/* The symbolic name ("WIRE_ENAME", "ENOMEM") for scripts and --json. */
const char *wire_errname(int code);
/* Say why in err (printf style; nothing when err is NULL or errlen 0) and
 * return code: `return wire_errf(err, len, -EIO, "%s: ...", path);`. */
int wire_errf(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* wire_json.c: s as a quoted JSON string, every control character escaped
 * and every byte outside valid UTF-8 as U+FFFD (names come from the
 * network); wire_json_bytes for len bytes that may hold NULs. */
void wire_json_str(FILE *fp, const char *s);
void wire_json_bytes(FILE *fp, const char *s, size_t len);
/* 1 if len bytes at s are valid UTF-8. */
int wire_utf8_ok(const unsigned char *s, size_t len);

/* wire_out.c: flush fp and close it (not stdout or stderr): 0, or -errno
 * when anything written to it was lost.  wire_stdout_check: the exit
 * status a tool ends with: status, or 1 for 0 when its standard output
 * could not be written (said once: "who: cannot write standard output"). */
int wire_out_close(FILE *fp);
/* A regular file opened for reading, or NULL with errno set (EINVAL for a
 * directory, a fifo or a device: never waited on, never sized by ftell). */
FILE *wire_fopen_regular(const char *path);
int wire_stdout_check(const char *who, int status);

enum wire_type {
    /* daemon <-> daemon */
    WIRE_T_HELLO = 1,       /* name, index, version, arch, speed: first frame on a link */
    WIRE_T_HOSTTABLE = 2,   /* master -> all: the full host table */
    WIRE_T_HEARTBEAT = 3,
    WIRE_T_HALT = 4,        /* stop this daemon (and its tasks) */
    WIRE_T_RELAY = 5,       /* a client request forwarded to the master, or its reply */
    WIRE_T_FWD = 6,         /* a task request for the host that owns its object:
                             * u32 op id, u32 origin tid, u32 type, the request */
    WIRE_T_FWD_REPLY = 7,   /* u32 op id, then the reply body; tag = status */
    /* Dynamic groups (daemon/vmd_group.c). */
    WIRE_T_GROUP_SYNC = 8,  /* master -> daemon: u32 op, str group, u32 tid, u32 gen, i32 code */
    WIRE_T_BARRIER_ARRIVE = 9,  /* daemon -> master: str group, i32 count, u32 gen, u32 n */
    WIRE_T_BARRIER_DONE = 10,   /* master -> daemon: str group, u32 n, i32 status */
    /* A message for several tasks of the receiving host (vmd_mcast.c):
     * u32 n, u32 tids[n], then the message body; tag, ctx, flags, src as a MSG. */
    WIRE_T_MCAST = 11,
    WIRE_T_LOAD = 12,       /* the sender's latest load sample (wire_load.h), every
                             * load_interval to every peer */
    /* pvm_hostsync (daemon/vmd_clock.c): (empty) asks for the receiver's
     * clock; the answer has WIRE_CLOCK_ANSWER in flags, the ask's id and
     * u64 seconds, u32 microseconds of gettimeofday. */
    WIRE_T_CLOCK = 13,

    /* client (vmctl, task) <-> local daemon; replies carry the request's id,
     * the status in tag (0 or a negative code) and a body */
    WIRE_T_REQ_CONF = 32,
    WIRE_T_REQ_ADD = 33,
    WIRE_T_REQ_DELETE = 34,
    WIRE_T_REQ_HALT = 35,
    WIRE_T_REQ_STATUS = 36,
    WIRE_T_REQ_LOAD = 37,       /* (empty); reply: every host's latest load (wire_load.h) */
    WIRE_T_REQ_CLOCK = 38,      /* task: u32 a host's daemon tid; reply: u64 seconds,
                                 * u32 microseconds of that host's clock (pvm_hostsync) */
    /* task -> daemon: u32 pid (unused: the daemon asks the kernel), u32 parent tid,
     * str name, [u32 claimed tid, [u64 token]]: a spawned task claims its tid with
     * LIQUIDVM_TID and LIQUIDVM_TOKEN.  Reply: u32 tid, u32 parent, u64 max message. */
    WIRE_T_TASK_ENROLL = 40,
    WIRE_T_TASK_NEWCTX = 41,    /* task -> daemon: (empty); reply: u32 a VM-unique context id */
    WIRE_T_TASK_SPAWN = 42,     /* request and reply: see vmd_fwd.c */
    WIRE_T_TASK_KILL = 43,      /* u32 tid, u32 signal (0: kill the task) */
    WIRE_T_TASK_LIST = 44,      /* u32 where (0 all, a host's dtid, a tid); reply: tasks */
    /* u32 what (PvmTaskExit 1, PvmHostDelete 2, PvmHostAdd 3; | 256 cancels),
     * i32 tag, u32 n, u32 tids[n] (PvmHostAdd: n is the count, no tids) */
    WIRE_T_TASK_NOTIFY = 45,
    /* PvmRouteDirect (lib/pvm/pvm_link.c): u32 peer tid; reply: str address
     * to listen on for other hosts, str the task's Unix socket path, str CA,
     * str certificate, str key (this host's), str the peer's host name. */
    WIRE_T_TASK_DIRECT = 46,
    WIRE_T_TASK_FREECTX = 47,   /* u32 context: pvm_freecontext */
    /* The message mailbox, kept by the master (daemon/vmd_mbox.c).  Each
     * body starts with u32 owner, which the task's own daemon fills in. */
    WIRE_T_MBOX_PUT = 48,       /* str name, u32 flags, u32 encword, bytes; reply i32 index */
    WIRE_T_MBOX_GET = 49,       /* str name, i32 index, u32 flags; reply u32 owner, u32 enc, bytes */
    WIRE_T_MBOX_DEL = 50,       /* str name, i32 index, u32 flags */
    WIRE_T_MBOX_LIST = 51,      /* str pattern; reply: classes */
    WIRE_T_MBOX_GONE = 52,      /* a task left the VM (daemon -> master, via RELAY) */
    /* Dynamic groups, kept by the master (daemon/vmd_group.c).  Each body
     * starts with u32 tid, which the task's own daemon fills in (0 for
     * vmctl); then str group. */
    WIRE_T_GROUP_JOIN = 53,     /* reply: i32 instance */
    WIRE_T_GROUP_LEAVE = 54,
    WIRE_T_GROUP_TID = 55,      /* i32 instance; reply: u32 tid */
    WIRE_T_GROUP_INST = 56,     /* u32 tid; reply: i32 instance */
    WIRE_T_GROUP_SIZE = 57,     /* reply: u32 size */
    WIRE_T_GROUP_FREEZE = 58,   /* i32 size; reply (once frozen): i32 size */
    WIRE_T_GROUP_INFO = 59,     /* reply: u32 frozen, u32 n, n x (i32 inst, u32 tid),
                                 * u32 gen, u32 nd, nd x (u32 tid, i32 inst, u32 ms ago): members
                                 * that died, newest first */
    WIRE_T_GROUP_LIST = 60,     /* (group ignored); reply: u32 ngroups, per group: str name,
                                 * u32 frozen, u32 n, n x (i32 inst, u32 tid) */
    WIRE_T_GROUP_GONE = 61,     /* a task left the VM (daemon -> master) */
    WIRE_T_GROUP_BARRIER = 62,  /* i32 count; handled by the task's daemon first */
    WIRE_T_REPLY = 63,

    /* A PVM message: src and dst tids, tag, ctx; flags = the PVM encoding
     * word of the body.  Routed task -> daemon [-> daemon] -> task; the
     * first daemon stamps src with the sending task's tid. */
    WIRE_T_MSG = 64,
    /* task -> daemon: the same message for several tasks, body as
     * WIRE_T_MCAST between daemons; the daemon sends one copy per host. */
    WIRE_T_TASK_MCAST = 65,
    /* Setting up a direct link between two tasks (lib/pvm/pvm_link.c); tag
     * is one of WIRE_DIRECT_*.  CONREQ, NAK and MARK are routed through
     * the daemons exactly like WIRE_T_MSG (src stamped, same order); HELLO
     * and ACK travel on the direct link itself. */
    WIRE_T_DIRECT = 66,

    WIRE_T_MAX = 255
};

/*
 * Message contexts the daemons use for their own messages to tasks; PVM
 * programs get contexts from pvm_newcontext, which never yields these.
 * WIRE_CTX_OUTPUT carries a spawned task's output (src: the task; tag:
 * the output code its spawner gave, PvmOutputCode; flags: a WIRE_OUT_*
 * kind; body: a line's bytes without its newline, or for SPAWNED and
 * BEGIN the task's parent's tid, u32) to the task that catches it
 * (PvmOutputTid, pvm_catchout);
 * WIRE_CTX_SYSTEM carries the sibling list (tag WIRE_TAG_SIBLINGS, body:
 * u32 n, u32 tids[n]) to each task of one pvm_spawn.
 */
#define WIRE_CTX_SYSTEM 0x7fff0000
#define WIRE_CTX_OUTPUT 0x7fff0001
/* Kinds of WIRE_CTX_OUTPUT messages, in the order a task's come: it was
 * spawned, its output begins, lines (ended by a newline, or cut: a line
 * longer than the daemon's buffer, or the last one without a newline),
 * and its output's end (both its stdout and stderr closed).  EXPECT comes
 * from the spawner's daemon (src: the spawner; body: u32 the tid of a task
 * it started on another host) before the spawner has its reply, so before
 * the spawner's own EOF: the catcher counts that task's output as open
 * from then, though its SPAWNED frame, from its own host, may come later. */
#define WIRE_OUT_LINE 0
#define WIRE_OUT_PART 1
#define WIRE_OUT_SPAWNED 2
#define WIRE_OUT_BEGIN 3
#define WIRE_OUT_EOF 4
#define WIRE_OUT_EXPECT 5
#define WIRE_TAG_SIBLINGS 1
/* Tags of WIRE_T_DIRECT frames. */
#define WIRE_DIRECT_CONREQ 1    /* token[32], str Unix path, str address, u32 port */
#define WIRE_DIRECT_NAK 2       /* token[32]: the link asked for will not be made */
#define WIRE_DIRECT_MARK 3      /* (empty) my messages to you now take the link */
#define WIRE_DIRECT_HELLO 4     /* token[32]: on the link, from the task that connected */
#define WIRE_DIRECT_ACK 5       /* (empty) on the link: the HELLO was right */
#define WIRE_DIRECT_SHM 6       /* (empty) on a Unix link, with a ring's descriptors
                                   (SCM_RIGHTS): my messages now take the ring
                                   (lib/pvm/pvm_shm.h) */
#define WIRE_DIRECT_GONE 7   /* u32 host index, from a task's own daemon: that host left
                                   the VM, and links to its tasks are dead */
#define WIRE_DIRECT_REF 8     /* only inside a ring: a message's header and the address
                                   of its body in the writer's memory (lib/pvm/pvm_shm.h) */
#define WIRE_DIRECT_TOKEN 32

/* WIRE_T_CLOCK's flags: this one is the answer. */
#define WIRE_CLOCK_ANSWER 1u

/* PVM's encoding word of an XDR body (notify messages are XDR ints). */
#define WIRE_ENC_XDR 0x10000000

/* A big-endian word in place: the header's fields, a tid in a notice's or
 * an output frame's body. */
static inline uint32_t
wire_be32_get(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
wire_be32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

struct wire_hdr {
    uint8_t version;
    uint8_t type;
    uint32_t len;
    uint32_t src;
    uint32_t dst;
    int32_t tag;
    int32_t ctx;
    uint32_t id;
    uint32_t flags;
};

/* Write h into out[WIRE_HDR_LEN]. */
void wire_hdr_pack(const struct wire_hdr *h, unsigned char *out);
/*
 * Parse a header from the first WIRE_HDR_LEN bytes of in.  Returns 0, or
 * WIRE_EFRAME (bad magic), WIRE_EVERSION, or -EMSGSIZE if the body is longer
 * than max_body.  Nothing is allocated; callers check before buffering.
 */
int wire_hdr_unpack(const unsigned char *in, uint32_t max_body, struct wire_hdr *h);

/* A growable body being written.  Allocation failure is sticky: err. */
struct wire_wbuf {
    unsigned char *data;
    size_t len;
    size_t cap;
    int err;                /* 0, or -ENOMEM once any put failed */
};

void wire_wbuf_init(struct wire_wbuf *b);
void wire_wbuf_free(struct wire_wbuf *b);
/* Reserve WIRE_HDR_LEN bytes at the start, for wire_wbuf_finish(). */
void wire_wbuf_begin_frame(struct wire_wbuf *b);
/* Fill in the header reserved by begin_frame, with len = body length. */
int wire_wbuf_finish(struct wire_wbuf *b, struct wire_hdr *h);
void wire_put_u8(struct wire_wbuf *b, uint8_t v);
void wire_put_u32(struct wire_wbuf *b, uint32_t v);
void wire_put_i32(struct wire_wbuf *b, int32_t v);
void wire_put_u64(struct wire_wbuf *b, uint64_t v);
void wire_put_double(struct wire_wbuf *b, double v);
void wire_put_str(struct wire_wbuf *b, const char *s);
void wire_put_bytes(struct wire_wbuf *b, const void *p, size_t n);

/* A body being read; pos never passes len. */
struct wire_rbuf {
    const unsigned char *data;
    size_t len;
    size_t pos;
};

void wire_rbuf_init(struct wire_rbuf *r, const void *data, size_t len);
int wire_get_u8(struct wire_rbuf *r, uint8_t *v);
int wire_get_u32(struct wire_rbuf *r, uint32_t *v);
int wire_get_i32(struct wire_rbuf *r, int32_t *v);
int wire_get_u64(struct wire_rbuf *r, uint64_t *v);
int wire_get_double(struct wire_rbuf *r, double *v);
/* Copies a string of at most cap-1 bytes into out; longer or containing NUL
 * is WIRE_EFRAME (never silent truncation). */
int wire_get_str(struct wire_rbuf *r, char *out, size_t cap);
/* Points *p into the buffer; the caller copies what it keeps. */
int wire_get_bytes(struct wire_rbuf *r, const void **p, size_t n);

/*
 * A receive buffer that assembles frames from a byte stream.  Bytes go in
 * with wire_rx_append() (or wire_rx_reserve() + wire_rx_commit() to read
 * straight into it, as a libuv alloc_cb does); wire_rx_next() hands out
 * complete frames.  A header announcing a body above max_body is refused as
 * soon as its 32 bytes are present, before any space is reserved for it.
 */
struct wire_rx {
    unsigned char *buf;
    size_t off;             /* start of unconsumed bytes */
    size_t len;             /* end of valid bytes */
    size_t cap;
    uint32_t max_body;
};

void wire_rx_init(struct wire_rx *rx, uint32_t max_body);
void wire_rx_free(struct wire_rx *rx);
/* Space for at least want bytes (more if already there); -ENOMEM. */
int wire_rx_reserve(struct wire_rx *rx, size_t want, void **p, size_t *avail);
void wire_rx_commit(struct wire_rx *rx, size_t n);
/*
 * Bytes still missing from the frame being assembled (the rest of its
 * header, else of its body), 0 if a whole frame is there or its header is
 * bad: a reader can ask for the rest of a large frame in one read.
 */
size_t wire_rx_want(const struct wire_rx *rx);
int wire_rx_append(struct wire_rx *rx, const void *data, size_t n);
/*
 * The next complete frame: returns 1 and sets *h and *body (valid until the
 * next call on rx), 0 if more bytes are needed, or a negative code for a bad
 * header (the stream is then unusable).
 */
int wire_rx_next(struct wire_rx *rx, struct wire_hdr *h, const unsigned char **body);

/*
 * Blocking I/O for the clients of a daemon (vmctl, libpvm3): finding the
 * daemon's socket in LIQUIDVM_HOME and moving whole frames.
 *
 * wire_sock_find: host names a daemon of that home ("" or NULL: the master
 * named by run/master, else the only daemon there).  Returns 0 with its
 * socket path in out, or what kept us from it: -EACCES (the socket or its
 * directory is not ours to use), -ECONNREFUSED (a socket file that no
 * daemon listens on: one that died left it), WIRE_ENOVM (no socket at all).
 * wire_sock_connect returns a connected fd or the same codes (-ENOENT for
 * no such socket, -errno for the rest).  wire_sock_why gives one of those
 * codes in words for a person, naming the cause; never NULL.
 */
int wire_sock_find(const char *home, const char *host, char *out, size_t cap);
int wire_sock_connect(const char *path);
const char *wire_sock_why(int code);
/* The send buffer of a local socket, either end (the daemon sets its own). */
#define WIRE_SOCK_SNDBUF (1 << 20)
/* LIQUIDVM_HOME, else ~/.liquidvm. */
int wire_home(char *out, size_t cap);
/* May a spawn request give its task environment variable kv ("NAME=VALUE",
 * or a bare NAME)?  Anything but our own LIQUIDVM_ names, which the daemon
 * sets (the tid, the token, the socket); of those only the parent's context
 * (LIQUIDVM_CTX), the shared memory's tuning (LIQUIDVM_SHM_RING,
 * LIQUIDVM_SHM_SPIN_US, LIQUIDVM_SHM_REF, LIQUIDVM_SHM_RING_MAX) and Paradise's trace, task path and hints
 * (LIQUIDVM_TRACE, _TRACE_ROOT, _TASKPATH, _HINTS, _HINTS_VERBOSE). */
int wire_env_spawnable(const char *kv);
/* Write all n bytes; 0 or -errno. */
int wire_write_full(int fd, const void *buf, size_t n);
/* Write one frame: header h (len filled in) and body. */
int wire_write_frame(int fd, struct wire_hdr *h, const void *body, size_t len);
/*
 * Read one frame within timeout_ms (< 0: wait for ever; 0: only if bytes
 * are there).  Returns 1 with *body malloc'ed (caller frees; NULL if empty),
 * 0 on timeout before any byte of it, or a negative code (-ECONNRESET at
 * EOF, a header error).  A frame once begun is read to its end.
 */
int wire_read_frame(int fd, uint32_t max_body, int timeout_ms, struct wire_hdr *h,
                    unsigned char **body);

#endif
