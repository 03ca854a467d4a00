/*
 * pvm_int.h - libpvm3's internals, shared by lib/pvm/pvm_*.c only.  Never
 * installed; programs see pvm3.h alone.
 *
 * All of libpvm3's mutable state lives in one struct pvm__ctx, the task's
 * one library context (docs/architecture.md, libpvm3).  The only exception is
 * pvm_errno, a variable PVM's libpvm3.so exports and that binaries built
 * against it may read; it is written where the context records an error.
 * Like PVM, the library is single-threaded: callers serialise.
 *
 * Errors inside the library are 0 or a negative code of the project
 * (-errno, the WIRE_E* codes of wire.h) or, for the conditions only PVM
 * knows (no current buffer, no such buffer...), a PVM__E* code below.
 * Only the public pvm_* entry points turn them into PVM's codes, through
 * pvm__err() and its table in pvm_err.c; an internal function never
 * returns a bare Pvm* value, because PvmBadParam (-2) and -ENOENT, and
 * their neighbours, share numbers.
 *
 * Message buffers (pvm_buf.c, pvm_pack.c) are growable, fragment-free byte
 * arrays: the body as it travels, in the buffer's encoding.  PvmDataInPlace
 * buffers hold a list of segments instead, each a reference to the caller's
 * array or a few bytes of their own, and are flattened into native bytes at
 * send time (pvm__buf_flatten).  Body layouts, all integers in the
 * buffer's encoding:
 *
 *   encoding  item                      bytes on the wire
 *   XDR       byte[n]                   n, then zero padding to a multiple of 4
 *   XDR       short, ushort, int, uint  4, big-endian, short sign-extended
 *   XDR       long, ulong               4, big-endian; values beyond 32 bits
 *                                       are refused with PvmOverflow
 *   XDR       float, double             4, 8: IEEE big-endian
 *   XDR       cplx, dcplx               2 floats, 2 doubles (re, im)
 *   XDR/Raw   string                    int length (strlen + 1), then bytes
 *                                       with the NUL, as byte[length]
 *   Raw       any                       native bytes, no padding
 *   any       nested message (pkmesg)   int len, ctx, tag, wid, enc, crc, src,
 *                                       dst, then one fragment (int length,
 *                                       byte[length]) if len > 0
 *
 * These are PVM 3.4.6's encodings byte for byte (its XDR padding bytes are
 * uninitialised; ours are zero).
 */
#ifndef LIQUIDVM_PVM_INT_H
#define LIQUIDVM_PVM_INT_H

#include "pvm3.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/un.h>

#include "wire.h"

/*
 * PVM conditions that have no errno: the PVM code offset into a range of
 * their own, below the WIRE_E* codes (-4001..-4100).  They never leave the
 * library (they are not wire codes); pvm__errcode() maps them back.
 */
/* PVM's trace mask length, pvmtev.h's TEV_MASK_LENGTH: a printable string
 * of 4 events a byte ('@' + bits), NUL-terminated. */
#define PVM__TMASK_LEN 36

#define PVM__EBASE (-4200)
#define PVM__ECODE(pvmcode) (PVM__EBASE + (pvmcode))
#define PVM__ENOBUF PVM__ECODE(PvmNoBuf)
#define PVM__ENOSUCHBUF PVM__ECODE(PvmNoSuchBuf)
#define PVM__EMISMATCH PVM__ECODE(PvmMismatch)
#define PVM__ENOTASK PVM__ECODE(PvmNoTask)
#define PVM__ENOPARENT PVM__ECODE(PvmNoParent)

/* PVM's encoding words (struct pvmminfo.enc, nested messages). */
#define PVM__ENCWORD_XDR 0x10000000
#define PVM__ENCWORD_INPLACE 0x20000000

enum pvm__enc {
    PVM__ENC_XDR = 0,           /* PvmDataDefault */
    PVM__ENC_RAW,               /* PvmDataRaw, our native layout */
    PVM__ENC_INPLACE,           /* PvmDataInPlace: segments, pack only */
    PVM__ENC_ALIEN              /* another layout: only bytes unpack */
};

/* One piece of a PvmDataInPlace body. */
struct pvm__seg {
    const void *ref;            /* the caller's array, or NULL: owned bytes */
    size_t off;                 /* owned bytes: offset in the buffer's data */
    size_t len;
};

struct pvm__buf {
    int id;                     /* the bufid programs see, >= 1 */
    enum pvm__enc enc;
    int encword;                /* PVM's word for enc; an alien's own word */
    unsigned char *data;        /* the body (InPlace: owned segment bytes) */
    size_t len;
    size_t cap;
    size_t pos;                 /* next byte to unpack */
    int unpacking;              /* set by pvm_setrbuf; cleared by pvm_setsbuf */
    struct pvm__seg *segs;      /* InPlace only, in packing order */
    size_t nsegs;
    size_t segcap;
    size_t seglen;              /* InPlace: the body length */
    unsigned char *flat;        /* InPlace: the copy pvm__buf_flatten made */
    /* The header: set by pvm_mkbuf, pvm_setminfo, or the receive path. */
    int src;
    int dst;
    int tag;
    int ctx;
    int wid;
    int crc;
    /*
     * Messages, contexts and handlers (pvm_msg.c): the queue entry or the
     * handler call that owns this received buffer, NULL once it is the
     * program's.  A new buffer is zeroed, so a freed buffer whose id and
     * address come back is never taken for the old one.
     */
    void *held;
};

struct pvm__ctx {
    int mytid;                  /* -1 until the task enrolls, as in PVM */
    int autoerr;                /* PvmAutoErr: 0 quiet, 1 print (default), 2 exit, 3 abort */
    /*
     * What pvm_exit() must do before PvmAutoErr 2 ends the process; the
     * enrollment code sets it once there is a daemon to leave.
     */
    void (*exit_hook)(void);
    struct pvm__buf **bufs;     /* indexed by bufid; slot 0 unused */
    int nbufs;                  /* slots in bufs */
    struct pvm__buf *sbuf;      /* the active send buffer, or NULL */
    struct pvm__buf *rbuf;      /* the active receive buffer, or NULL */
    /*
     * Fault injection for tests (SQLite's fault.c): when > 0, counts down
     * on every allocation and the one that brings it to 0 fails.
     */
    int fault_after;

    /* The link to the local daemon (pvm_task.c, pvm_daemon.c), once enrolled. */
    int fd;                     /* -1 until enrolled */
    uint32_t next_req;          /* request ids */
    /* Messages that arrived and are not yet received, oldest first (pvm_inq.c). */
    struct pvm__msg *inq_head, *inq_tail;

    /* Task and host management (pvm_spawn.c, pvm_host.c). */
    FILE *catchout;             /* pvm_catchout's file, or NULL */
    struct pvm__outsrc *outs;   /* tasks whose output comes to us (pvm_output.c) */
    int nouts, outcap;
    int output_known;           /* PvmOutputTid/Code's inherited defaults were read */
    int *sibs;                  /* pvm_siblings, once known */
    int nsibs;
    struct pvmtaskinfo *tinfo;  /* what pvm_tasks returned last */
    int ntinfo;
    struct pvmhostinfo *hinfo;  /* what pvm_config returned last */
    int nhinfo;
    struct pvmmboxinfo *mbinfo; /* what pvm_getmboxinfo returned last */
    int nmbinfo;
    int mb_lastindex;           /* the index pvm_recvinfo found last */
    uint64_t max_msg;           /* the VM's max_message, from enrollment (0: unknown) */
    int *noresets;              /* what pvm_getnoresets returned last (pvm_noreset.c) */
    int noreset_index;          /* our PvmNoReset mailbox entry + 1; 0: none */
    int noreset_tid;            /* the tid that entry was put for */
    /* Trace masks (pvm_tmask.c): PVM's TEV_MASK_LENGTH-byte strings, set once read. */
    int tmask_known;
    unsigned tmpnam_count;      /* pvmtmpnam's names (pvm_tools.c) */
    char tmpnam_buf[4200];      /* pvmtmpnam(NULL)'s answer */
    char tmask_self[PVM__TMASK_LEN];
    char tmask_child[PVM__TMASK_LEN];

    /*
     * Contexts, options, receive matching and message handlers
     * (pvm_context.c, pvm_opt.c, pvm_msg.c, pvm_mhf.c).
     */
    int msgctx;                 /* the current context; read it with pvm__context() */
    int msgctx_known;           /* msgctx was set or inherited */
    int *myctxs;                /* contexts pvm_newcontext gave us, not yet freed */
    int nmyctxs;
    int opt[32];                /* pvm_setopt values by option number, from PVM's defaults */
    int (*recvf)(int, int, int); /* pvm_recvf's match function, NULL: the default */
    struct pvm__mhf *mhf;       /* handlers, indexed by mhid; func NULL: free */
    int nmhf;                   /* slots in mhf */
    int mhf_free;               /* the free id reused next + 1; 0: none (pvm_mhf.c) */
    int mhf_depth;              /* handlers running now (they do not nest) */
    int mhf_pending;            /* queued messages waiting for their handler */

    /*
     * Direct links (pvm_link.c), NULL until the first one is asked for
     * or offered.  io_depth counts the writes in progress that wait for
     * their socket while reading the others: handlers, and any frame to
     * the daemon but the one being written, wait until it is back to 0.
     */
    struct pvm__direct *direct;
    int io_depth;
    int direct_atexit;          /* the exit-time flush of TCP links is registered */
    int getfds[8];              /* what pvm_getfds hands out when no links exist */
    /*
     * The one wait (pvm_poll.c): the descriptors it watches besides the
     * daemon's socket, NULL while there are none, and its pollfd array.
     */
    const struct pvm__pollsrc *pollsrc;
    struct pollfd *pfd;
    size_t pcap;
    unsigned spin_hits;         /* waits the spin ended without a poll */
    /*
     * Where a WIRE_T_DIRECT frame from the daemon goes (pvm_link.c's
     * pvm__direct_from_daemon, set at enrollment, which sits above both);
     * NULL drops it.  body is the handler's.
     */
    void (*on_direct)(const struct wire_hdr *h, unsigned char *body);

    /*
     * Paradise (issue 27): the task's trace (pvm_trace.c) and the hints it
     * read (pvm_hints.c).  tr_state: 0 not decided yet, 1 recording, -1
     * not tracing; tr is NULL until recording starts.  trace_exit writes
     * the trace; pvm_exit calls it through this hook (pvm_task.c sits
     * below pvm_trace.c).  opt_set has bit n set once the program gave
     * option n itself (pvm_setopt): hints never override it.
     */
    int tr_state;
    struct pvm__trace *tr;
    int (*trace_start)(void);   /* pvm__trace_decide, for enrollment (set at load) */
    void (*trace_exit)(void);
    void (*output_wait)(void);  /* pvm_exit's wait for our children's output (pvm_spawn.c) */
    int tr_atexit;              /* the exit-time write is registered */
    int hints_loaded;
    struct pvm__hints *hints;
    unsigned opt_set;
    int nspawn_calls;           /* pvm_spawn calls made: the children's task paths */
};

/* A message that arrived and waits for pvm_recv (pvm_msg.c). */
struct pvm__msg {
    struct pvm__msg *next;
    int src, dst, tag, ctx;
    int encword;
    unsigned char *data;        /* malloc'ed, len bytes; NULL if empty */
    size_t len;
    /*
     * Once a program has seen the message's bufid (pvm_probe, a pvm_recvf
     * match function), the message lives in that buffer (data is NULL):
     * buf->held points back here until the message is received.
     */
    struct pvm__buf *buf;
    int bufid;
    int mhf;                    /* a handler takes it (pvm__mhf_run_pending) */
};

/* The task's one library context (pvm_ctx.c), and its initial state. */
extern struct pvm__ctx pvm__ctx;
extern const struct pvm__ctx pvm__ctx_init;

/* PVM's exported error variables (pvm_err.c), kept for binary compatibility. */
extern PVM_API int pvm_errno;
extern PVM_API char *const pvm_errlist[];
extern PVM_API const int pvm_nerr;

/* PVM exports these two va_list forms; binaries may call them. */
PVM_API int pvm_vpackf(const char *fmt, va_list ap);
PVM_API int pvm_vunpackf(const char *fmt, va_list ap);

/* ---- pvm_ctx.c ---- */

/* malloc/realloc/calloc that honour fault_after. */
void *pvm__malloc(size_t n);
void *pvm__realloc(void *p, size_t n);
void *pvm__calloc(size_t nmemb, size_t size);
/* PVM's data signature of our native layout (0x408c41 on x86-64). */
int pvm__dsig(void);
/*
 * The current context: what pvm_setcontext set, else the one inherited
 * from the parent (LIQUIDVM_CTX in the environment, set by the spawning
 * daemon to the parent's context at pvm_spawn time), else 0.
 */
int pvm__context(void);
/* An option's value (pvm_getopt without the checks); 0 for unknown ones. */
int pvm__opt(int what);

/* ---- pvm_err.c ---- */

/* The PVM code for one of our codes; 0 and positive values pass through. */
int pvm__errcode(int code);
/* PVM's text for a PVM code ("Bad parameter"), "Unknown Error" if none. */
const char *pvm__errtext(int pvmcode);
/*
 * The exit path of every pvm_* function: a code >= 0 is returned as is;
 * a negative one is mapped to PVM's code, recorded in pvm_errno, reported
 * as PvmAutoErr says ("libpvm [t40001]: fn(): Bad parameter"), and
 * returned.  fn is the public function's name.
 */
int pvm__err(int code, const char *fn);

/* ---- pvm_buf.c ---- */

/* Free every buffer and return the context to its initial state. */
void pvm__ctx_reset(void);
/* The buffer with that id, or NULL. */
struct pvm__buf *pvm__buf_get(int id);
/* A new, registered buffer: encoding is PvmDataDefault/Raw/InPlace. */
int pvm__buf_new(int encoding, struct pvm__buf **out);
/* Unregister and free b; it stops being the send or receive buffer. */
void pvm__buf_free(struct pvm__buf *b);
/*
 * A new buffer of received bytes for the receive path: encword is the
 * sender's PVM encoding word (pvm__buf_encword at the sender).  With
 * copy != 0 the bytes are copied; otherwise the buffer takes data, which
 * must come from malloc, pvm__malloc or pvm__realloc with room for cap
 * bytes, and frees it with the buffer.  On error nothing was taken.  The
 * buffer is not made the receive buffer.
 */
int pvm__buf_adopt(int encword, unsigned char *data, size_t len, size_t cap, int copy,
                   struct pvm__buf **out);
/* Set the header fields a receive fills: src, dst, tag, ctx, wid, crc. */
void pvm__buf_set_info(struct pvm__buf *b, const struct pvmminfo *mi);
/* The PVM encoding word a receiver needs for b's flattened bytes. */
int pvm__buf_encword(const struct pvm__buf *b);
/* The body length (bufinfo's bytes). */
size_t pvm__buf_len(const struct pvm__buf *b);
/*
 * The body as bytes, for the send path: a pointer into b, valid until b
 * changes or is freed.  An InPlace buffer is copied from the caller's
 * arrays now, which is the "copy at send time" of PvmDataInPlace.
 * Returns 0 or -ENOMEM.
 */
int pvm__buf_flatten(struct pvm__buf *b, const unsigned char **p, size_t *len);
/* Room for n more bytes at the end of b's data; *p points at them. */
int pvm__buf_grow(struct pvm__buf *b, size_t n, unsigned char **p);
/* Append an InPlace segment: ref != NULL refers, else n owned bytes at *owned. */
int pvm__buf_add_seg(struct pvm__buf *b, const void *ref, size_t n, unsigned char **owned);
/* Which encoding a PVM word names. */
enum pvm__enc pvm__enc_of_word(int encword);

/*
 * The transport, in layers: each file calls only those listed before it
 * (and pvm_ctx.c, pvm_err.c, pvm_buf.c, pvm_mhf.c, which call none of
 * these); the pvm_* API files sit above them all.
 *
 *   pvm_inq.c      the queue of arrived messages; handlers run from it
 *   pvm_poll.c     the one wait over the daemon's socket and the links
 *   pvm_daemon.c   frames to and from the daemon
 *   pvm_request.c  a request to the daemon and its reply
 *   pvm_linkio.c   bytes and frames on one direct link (Unix or TLS)
 *   pvm_link.c     the direct-link protocol (PvmRouteDirect)
 *   pvm_task.c     enrollment, which wires pvm_link.c into the wait
 *
 * The wait reaches the links, and the daemon's frames reach the link
 * protocol, only through the hooks in struct pvm__ctx (pollsrc,
 * on_direct), so no lower file names a higher one.
 */

/* ---- pvm_inq.c ---- */

/*
 * Queue a message that arrived (from the daemon or a direct link) after
 * those already queued; its handler is marked, and run when allowed.
 * Returns 1 if a handler takes it, else 0.
 */
/* ---- spawned tasks' output (pvm_output.c) ---- */

/* The output code pvm_catchout gives its children: their lines are
 * printed, not queued (negative: no program's tag). */
#define PVM__OUT_CATCH (-0x7fff0010)
/* A WIRE_CTX_OUTPUT frame (body: h->len bytes): printed, or a message to
 * queue (malloc'ed), or NULL. */
struct pvm__msg *pvm__output_frame(const struct wire_hdr *h, const unsigned char *body);
/* tid's output comes to us, with that code, from now until its EOF. */
void pvm__output_expect(int tid, int code);
/* How many caught tasks' output (pvm_catchout's code) is still to end;
 * the first cap tids into tids. */
int pvm__output_open(int *tids, int cap);
/* tid is gone: its EOF will not come. */
void pvm__output_drop(int tid);
void pvm__output_free(void);
/* Read the options' inherited defaults once (pvm_ctx.c). */
void pvm__opt_load(void);

int pvm__inq_push(struct pvm__msg *m);
/* Unlink and return the oldest queued message from src with tag in
 * exactly context ctx (-1 for src or tag: any), or NULL.  For the
 * library's own messages; the caller frees it with pvm__msg_free. */
struct pvm__msg *pvm__inq_take(int src, int tag, int ctx);
/* Free every queued message (pvm_exit). */
void pvm__inq_free(void);
void pvm__msg_free(struct pvm__msg *m);
/*
 * Give m a bufid: its bytes move into a registered buffer, which stays
 * the message's (held) until it is received.  0 or -ENOMEM.
 */
int pvm__msg_wrap(struct pvm__msg *m);
/* Run the handlers of queued messages that arrived when they could not
 * run (during a daemon request); 0 or a negative code. */
int pvm__mhf_run_pending(void);

/* Take m, whose predecessor is prev (NULL: the head), off the queue. */
static inline void
pvm__inq_unlink(struct pvm__msg *prev, struct pvm__msg *m)
{
    if (prev)
        prev->next = m->next;
    else
        pvm__ctx.inq_head = m->next;
    if (pvm__ctx.inq_tail == m)
        pvm__ctx.inq_tail = prev;
    m->next = NULL;
}

/* 1 if m's buffer is still the one it put there (the program may free it). */
static inline int
pvm__msg_owns_buf(const struct pvm__msg *m)
{
    return pvm__buf_get(m->bufid) == m->buf && m->buf->held == m;
}

/* A message whose buffer the program freed is gone, as in PVM. */
static inline int
pvm__msg_dead(const struct pvm__msg *m)
{
    return m->buf != NULL && !pvm__msg_owns_buf(m);
}

/* ---- pvm_poll.c ---- */

struct pollfd;

/*
 * What the wait watches besides the daemon's socket (the direct links and
 * their listeners), registered with pvm__poll_source.  The wait calls
 * size, then fill, polls, then ready, each once; nothing else runs between
 * them.
 */
struct pvm__pollsrc {
    /* 1 if there is anything to watch now. */
    int (*active)(void);
    /* The most descriptors fill adds, in *n; 0 or -ENOMEM. */
    int (*size)(size_t *n);
    /*
     * Fill pfd with the descriptors to watch and return how many.  wfd
     * is the socket a blocked write waits on (it wants POLLOUT), or -1.
     * *busy = 1 when input waits already, so the poll must not block.
     * sleep = 0 when the poll will not block anyway (a timeout of 0).
     */
    size_t (*fill)(struct pollfd *pfd, int wfd, int sleep, int *busy);
    /* The poll's result for the n entries fill made: service them. */
    void (*ready)(const struct pollfd *pfd, size_t n);
    /*
     * Optional.  spin: before a wait that may sleep, look for input in
     * shared memory for a short bounded time; 1 if some came (ready is
     * then called with no entries).  drain: take in every message whole
     * in shared memory now, before a message from the daemon is queued,
     * so that a task's last messages come before the daemon's word of its
     * exit.
     */
    int (*spin)(void);
    void (*drain)(void);
};

/* Set the wait's other source (pvm_link.c), or clear it (NULL). */
void pvm__poll_source(const struct pvm__pollsrc *src);
/*
 * Wait up to timeout_ms (-1: for ever) until the daemon's socket is
 * readable (*dready = 1) or the other source had something; the source
 * is serviced here.  wfd >= 0 adds a socket to watch for output
 * (*wready = 1 when writable).  1 if anything happened, 0 on timeout, or
 * a negative code.
 */
int pvm__poll_wait(int timeout_ms, int wfd, int *dready, int *wready);

/* ---- pvm_daemon.c ---- */

/*
 * Write one frame to the daemon.  While the socket is full, whatever
 * arrives on it or on links is read and queued, so that two tasks
 * sending to each other never wait on each other (the daemon pauses a
 * task whose messages pile up for a slow peer).  0 or a negative code.
 */
int pvm__daemon_write(struct wire_hdr *h, const void *body, size_t len);
/* Read one frame from the daemon within timeout_ms and queue it if it is a
 * message; 1 if a frame was handled, 2 if it was the reply (in *reply and
 * *reply_body), 0 on timeout, negative on error. */
int pvm__pump(int timeout_ms, struct wire_hdr *reply, unsigned char **reply_body);
/* A frame from the daemon that is ready to be read: read and handle it as
 * pvm__pump does (returns what it returns). */
int pvm__pump_daemon(struct wire_hdr *reply, unsigned char **reply_body);

/* ---- pvm_request.c ---- */

/* A request to the daemon and its reply (messages that arrive meanwhile
 * are queued).  *body is malloc'ed; returns the reply's status or an error. */
int pvm__request(int type, const struct wire_wbuf *req, unsigned char **body, size_t *len);

/* ---- pvm_link.c: direct links ---- */

/*
 * PvmRouteDirect: links between two tasks that skip the daemons, a Unix
 * socket on one host and TLS 1.3 between hosts.  See pvm_link.c for the
 * protocol and why message order survives the switch.
 */
/*
 * Send one message frame (header h, body) to tid over its link if the link
 * is up: 1 when it went that way, 0 when the caller routes it through the
 * daemon, or a negative code.  Under PvmRouteDirect a link is asked for
 * here, the first time a task is sent to.
 */
int pvm__direct_send(int tid, struct wire_hdr *h, const void *body, size_t len);
/* A WIRE_T_DIRECT frame the daemon delivered; body is taken. */
void pvm__direct_from_daemon(const struct wire_hdr *h, unsigned char *body);
/* What needs requests to the daemon (answering a link request, refusals):
 * done where the library may make requests, never inside a wait. */
int pvm__direct_work(void);
/* 1 if our messages to tid take a link (or its ring) now, not the daemons. */
int pvm__direct_linked(int tid);
/* Close every link and listener (pvm_exit). */
void pvm__direct_close(void);
/* The sockets a program should watch (pvm_getfds): daemon first. */
int pvm__direct_fds(int **fds);

#define PVM__DIRECT_HOST_MAX 256
#define PVM__LINK_RFDS 3        /* a ring's descriptors (pvm_shm.h, PVM__SHM_NFD) */
#define PVM__DIRECT_TLS_RECORD 16384    /* the largest TLS record's plaintext */

struct ssl_st;
struct ssl_ctx_st;
struct pvm__shm;
struct bio_method_st;

enum pvm__link_state {
    PVM__LINK_ASKED,        /* we sent CONREQ: the peer is to connect */
    PVM__LINK_ACCEPTED,     /* a connection to our listener: TLS, then HELLO (tid still 0) */
    PVM__LINK_CONNECTING,   /* we connect, as asked */
    PVM__LINK_HANDSHAKE,    /* we connected: TLS handshake */
    PVM__LINK_WAIT_ACK,     /* we sent HELLO */
    PVM__LINK_READY,        /* checked both ways; our MARK is not sent yet */
    PVM__LINK_UP,           /* our MARK went: our messages to the peer take the link */
    PVM__LINK_DEAD          /* refused, failed or closed: the daemons route */
};

/* One direct link, or a connection to a listener that has not said HELLO. */
struct pvm__link {
    struct pvm__link *next;
    int tid;                    /* the peer; 0 while an accepted connection is unknown */
    enum pvm__link_state state;
    int fd;
    struct ssl_st *ssl;         /* between hosts; NULL on a Unix socket */
    int remote;                 /* the peer is on another host */
    int want_write;             /* the TLS handshake waits for the socket to take bytes */
    int more;                   /* input left unread (frame cap): poll without waiting */
    int nak;                    /* a NAK is to go to the peer through the daemons */
    int marked;                 /* the peer's MARK arrived: its link messages are in order */
    unsigned long serial;       /* age, to drop the oldest unknown connection */
    unsigned char token[WIRE_DIRECT_TOKEN];
    char host[PVM__DIRECT_HOST_MAX];    /* the peer's host: its certificate must name it */
    struct pvm__msg *held, *held_tail;  /* link messages that came before the MARK */
    /*
     * Shared memory (pvm_shm.c), on a Unix link only: tx, our ring to the
     * peer, once we sent it (WIRE_DIRECT_SHM); rx, the peer's to us.
     */
    struct pvm__shm *tx, *rx;
    int shm_off;                /* no ring to this peer (off, or it could not be made) */
    size_t burst;               /* pvm__link_burst: the bytes tx should hold at once,
                                 * headers included */
    int tx_busy;                /* a write into tx is under way: tx outlives link_dead */
    int tx_wait;                /* that write sleeps on tx's space eventfd */
    int rfds[PVM__LINK_RFDS];   /* descriptors that came with the link's bytes */
    int nrfds;
    /* The frame being read (pvm_linkio.c). */
    int in_frame;
    struct wire_hdr h;
    unsigned char *body;
    size_t got;
    unsigned char *stage;
    size_t st_off, st_len;
    /* HELLO or ACK not yet written whole (a TLS retry needs the same bytes). */
    unsigned char ctl[WIRE_HDR_LEN + WIRE_DIRECT_TOKEN];
    size_t ctl_len;
};

/* The task's links, listeners and TLS context (pvm__ctx.direct). */
struct pvm__direct {
    struct pvm__link *links;
    unsigned long serial;
    int ufd, tfd;               /* listeners, -1 until a link needs them */
    int ufd_bound;              /* we created upath: unlink it at the end */
    /* From the daemon (WIRE_T_TASK_DIRECT), once. */
    int have_info;
    char addr[64];
    char upath[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char ca[WIRE_STR_MAX], cert[WIRE_STR_MAX], key[WIRE_STR_MAX];
    uint32_t port;
    struct ssl_ctx_st *tls;
    struct bio_method_st *bio;
    struct pvm__conreq *conreqs, *conreqs_tail;
    int work;                   /* conreqs or NAKs wait for pvm__direct_work */
    int nrx;                    /* links with a ring from their peer */
    int sticky;                 /* pvm_getfds handed out the rings' eventfds */
    unsigned char scratch[PVM__DIRECT_TLS_RECORD];
    /* Scratch for waits (the link of each entry fill made) and pvm_getfds. */
    struct pvm__link **plink;
    size_t plink_cap;
    int *fds;
};

/* ---- pvm_linkio.c: one link's bytes ---- */

/* The TLS context and BIO method of d's links, made once; 0 or an error. */
int pvm__link_tls_ctx(struct pvm__direct *d);
/* Free what pvm__link_tls_ctx made. */
void pvm__link_tls_free(struct pvm__direct *d);
/* Put TLS on l's socket, as the client (which checks l->host) or server. */
int pvm__link_tls_attach(struct pvm__direct *d, struct pvm__link *l, int client);
/* 1 while l's TLS handshake is not over. */
int pvm__link_tls_handshaking(const struct pvm__link *l);
/* One handshake step: 1 done, 0 to wait for the socket, or an error. */
int pvm__link_tls_step(struct pvm__link *l);
/* 1 if l's peer showed a certificate that names host. */
int pvm__link_tls_peer_is(const struct pvm__link *l, const char *host);
/* 1 if OpenSSL holds plaintext of l that was not read yet. */
int pvm__link_tls_pending(const struct pvm__link *l);
/* 1 if TLS output of l waits for the socket; flush it: 0, -EAGAIN or an error. */
int pvm__link_tx_pending(const struct pvm__link *l);
int pvm__link_tx_flush(struct pvm__link *l);
/*
 * Read on l without waiting until a frame is whole: 1 with its header in
 * l->h and its body in *body (malloc'ed, the caller's; NULL if empty), 0
 * when the socket has no more yet, or an error (the link is lost; a
 * partial frame is dropped with it).  A header announcing more than max
 * bytes, or a type other than WIRE_T_MSG and WIRE_T_DIRECT, is an error.
 */
int pvm__link_read_frame(struct pvm__link *l, uint32_t max, unsigned char **body);
/* 1 if nothing read from l is left over, so another read would only
 * hear EAGAIN. */
int pvm__link_rx_idle(const struct pvm__link *l);
/* Make HELLO (with token) or ACK l's control frame. */
void pvm__link_ctl_set(struct pvm__link *l, int tag, const unsigned char *token);
/*
 * Write the control frame without waiting: 1 written, 0 not yet, or an
 * error.  TLS takes it whole or not at all, and a retry repeats it.
 */
int pvm__link_ctl_flush(struct pvm__link *l);
/*
 * One frame on an UP link, from the caller's bytes, all of it on its way
 * before this returns: while the socket is full, everything else is read
 * (pvm__poll_wait).  0 or an error.
 */
int pvm__link_write(struct pvm__direct *d, struct pvm__link *l, struct wire_hdr *h,
                    const void *body, size_t len);
/* A frame without a body on a Unix link, with n descriptors attached
 * (SCM_RIGHTS), written as pvm__link_write writes.  0 or an error. */
int pvm__link_write_fds(struct pvm__link *l, struct wire_hdr *h, const int *fds, int n);
/* Take the descriptors that came with l's bytes (at most PVM__LINK_RFDS):
 * their number; they are the caller's. */
int pvm__link_take_fds(struct pvm__link *l, int *fds);
/* Close l's socket and TLS and drop a frame being read. */
void pvm__link_close_io(struct pvm__link *l);

/* ---- pvm_env.c, pvm_noreset.c, pvm_tmask.c ---- */

/* PVM_EXPORT's list with name added or removed, in a new string (NULL:
 * no change); 0, -EINVAL (add: name holds ':' or '=') or -ENOMEM. */
int pvm__list_add(const char *list, const char *name, char **out);
int pvm__list_del(const char *list, const char *name, char **out);
/* PvmNoReset set (on) or cleared: our mailbox entry is put or deleted;
 * 0 or a PVM code (already reported). */
int pvm__noreset_set(int on);
/* The trace mask spawned children inherit (PVMTMASK), NUL-terminated. */
const char *pvm__tmask_child(void);
/* 1 if any event is set in the task's own mask (tracing is on), or in
 * the children's (child = 1). */
int pvm__tmask_on(int child);

/* ---- pvm_host.c ---- */

/* The VM's name of the host whose daemon is dtid, into name (cap bytes),
 * without touching what pvm_config handed the program.  0 or a code. */
int pvm__host_name(int dtid, char *name, size_t cap);

/* ---- pvm_trace.c, pvm_hints.c: Paradise (issue 27) ---- */

/*
 * One event of a task's trace, as recorded: a few stores, formatted only
 * when the trace is written.  Times are CLOCK_REALTIME microseconds.
 */
enum pvm__tev_kind {
    PVM__TEV_COMPUTE,           /* the task's own work between two traced calls */
    PVM__TEV_SEND,              /* peer: the receiver; seq: its number per (peer, tag, ctx) */
    PVM__TEV_RECV,              /* peer: the sender; t0..t1 is the wait */
    PVM__TEV_SPAWN,             /* tag: the call's number; seq: started; bytes: asked */
    PVM__TEV_CHILD,             /* peer: a child's tid; tag: the call; seq: its instance */
    PVM__TEV_EXIT,
    PVM__TEV_COLL               /* a collective (barrier, reduce...): the time in it */
};

/* Which call made an event (its name in the trace). */
enum pvm__tcall {
    PVM__TC_NONE, PVM__TC_SEND, PVM__TC_PSEND, PVM__TC_MCAST, PVM__TC_RECV, PVM__TC_NRECV,
    PVM__TC_TRECV, PVM__TC_PRECV, PVM__TC_SPAWN, PVM__TC_EXIT, PVM__TC_BCAST,
    PVM__TC_BARRIER, PVM__TC_REDUCE, PVM__TC_GATHER, PVM__TC_SCATTER
};

struct pvm__tev {
    int64_t t0, t1;
    uint64_t bytes;
    int kind, call;
    int peer, tag, ctx, seq;
};

/* What a trace file says about its task besides the events. */
struct pvm__tinfo {
    int tid, parent, host;      /* host: the host number in the tid, the file's pid */
    const char *program, *hostname, *path;
    const char *why;            /* what turned tracing on */
    const char *run;            /* the run it is of (LIQUIDVM_TRACE_RUN) */
    int root_host;              /* the first traced task's host: clocks align there */
    int64_t clock_offset;       /* added to every time: the root host's clock minus ours */
    int64_t clock_residual;     /* the offset's error bound, µs; -1 not measured */
    long dropped;
    int64_t t_start, t_end;
    int tracer_tid, tracer_code, tracer_ctx;
    int nspawn;                 /* spawn_file: the file of each spawn call */
    char *const *spawn_file;
    int route, fragsize;        /* the options in force at the end */
    const char *hints_file;     /* NULL: no hints were read */
    int napplied;
    char *const *applied;       /* "route=direct", ...: what came from the hints */
};

/*
 * Write one task's trace as Chrome Trace Event JSON (pure: the caller
 * opened fp).  A message's two ends get one flow id, made of the sender,
 * the receiver, the tag, the context and the message's number among
 * theirs, so that traces written apart pair up when read together.
 * 0, or -EIO when fp reported an error.
 */
int pvm__trace_json(FILE *fp, const struct pvm__tinfo *ti, const struct pvm__tev *ev, int n);

/* Decide whether this task traces (LIQUIDVM_TRACE, the trace mask,
 * PvmSelfTraceTid): 1 recording, 0 not (yet). */
int pvm__trace_decide(void);
static inline int
pvm__tracing(void)
{
    return pvm__ctx.tr_state > 0 || (pvm__ctx.tr_state == 0 && pvm__trace_decide() > 0);
}
/* Now, in CLOCK_REALTIME microseconds. */
int64_t pvm__trace_now(void);
/* A traced call starts: the compute span since the last one ends here.
 * Returns now (t0 of the call's event). */
int64_t pvm__trace_begin(void);
/* A message's end: kind SEND or RECV, t0 from pvm__trace_begin. */
void pvm__trace_msg(int kind, int call, int64_t t0, int peer, int tag, int ctx, size_t bytes);
/* A collective call (its messages are the library's own, not traced). */
void pvm__trace_coll(int call, int64_t t0);
/* A spawn call: its number, the file, what was asked and what started. */
void pvm__trace_spawn(int64_t t0, int callno, const char *file, int ntask, const int *tids,
                      int started);
/* The events recorded so far and how many (benchmarks, tests). */
const struct pvm__tev *pvm__trace_events(long *dropped);
int pvm__trace_nevents(void);
/* The directory children are to trace into (spawn with PvmTaskTrace,
 * or PvmTraceTid set): ours, else the default one; 0 or a code. */
int pvm__trace_dir(char *out, size_t cap);
/* The run this task's trace is of, for its children: LIQUIDVM_TRACE_RUN,
 * else its own when it traces (the first traced task of a run names it);
 * NULL: neither. */
const char *pvm__trace_run(void);
/* A run name one may pass on: 1 to 63 of [A-Za-z0-9-_.:@]. */
#define PVM__TRACE_RUN_MAX 64
int pvm__trace_run_ok(const char *s);

/* The hints (pvm_hints.c), a libconfig file: see man/libpvm3.3, HINTS. */
#define PVM__HINT_PATH 64
struct pvm__hint_task {
    char path[PVM__HINT_PATH];  /* a task path: "0", "0/1", "0/1/0" */
    int route;                  /* -1: none */
    char host[256];             /* for the spawn that makes them; "" none; "@parent" */
};

struct pvm__hints {
    char file[4096];
    int route;                  /* every task's, -1: none */
    int fragsize;               /* 0: none */
    int ntask;
    struct pvm__hint_task *task;
    int napplied;
    char *applied[16];          /* what was applied, for the trace's metadata */
};

/*
 * Parse a hints file's text (pure).  0 with h filled (free with
 * pvm__hints_free), or -EINVAL with "name:line: what" in err.
 */
int pvm__hints_parse(const char *text, size_t len, const char *name, struct pvm__hints *h,
                     char *err, size_t errlen);
void pvm__hints_free(struct pvm__hints *h);
/* Read the hints (LIQUIDVM_HINTS, else <program>.hints beside the
 * program) once and apply the options the program did not set. */
void pvm__hints_load(void);
/* This task's path (LIQUIDVM_TASKPATH, "0" for a task started by hand). */
const char *pvm__task_path(void);
/* The host the hints give the children of path, or NULL; "@parent". */
const char *pvm__hints_host(const char *path);
/* Note a setting that came from the hints (for the trace's metadata). */
void pvm__hints_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- pvm_hostsync.c ---- */

struct timeval;
/* us microseconds as PVM's normalised timeval: tv_usec in 0..999999, the
 * sign in tv_sec. */
void pvm__tv_split(int64_t us, struct timeval *tv);
/*
 * Host dtid's clock against ours, as pvm_hostsync measures it, the best
 * of tries: *offset_us is its clock minus ours, *residual_us half the
 * shortest round trip (the offset's error bound).  0 or a code.
 */
int pvm__clock_offset(int dtid, int tries, int64_t *offset_us, int64_t *residual_us);

/* ---- pvm_start.c ---- */

/* The hosts a PVM hostfile's text names (pointers into text, cut in
 * place), at most max; their number. */
int pvm__hostfile_names(char *text, char **names, int max);

/* ---- pvm_task.c ---- */

/* Enroll with the local daemon if not yet done; 0 or a negative code. */
int pvm__enroll(void);

/* ---- pvm_pack.c ---- */

/*
 * Pack or unpack nitem items of a PVM_* data type (PVM_STR excepted)
 * taken every stride-th one of p, in b's encoding.  Both are atomic: on
 * error nothing was packed, or the unpack position has not moved.  Used by
 * the pvm_pk and pvm_upk functions and by pvm_psend/pvm_precv.
 */
int pvm__pack(struct pvm__buf *b, int type, const void *p, int nitem, int stride);
int pvm__unpack(struct pvm__buf *b, int type, void *p, int nitem, int stride);
/* A NUL-terminated string, as pvm_pkstr/pvm_upkstr. */
int pvm__pack_str(struct pvm__buf *b, const char *s);
int pvm__unpack_str(struct pvm__buf *b, char *s);
/* The same into a buffer of cap bytes (-1: unknown); -ENODATA if it does not fit. */
int pvm__unpack_str_cap(struct pvm__buf *b, char *s, int cap);

/* ---- contexts, options, handlers, matching (pvm_context.c, pvm_opt.c,
 * pvm_mhf.c, pvm_msg.c, pvm_mcast.c) ---- */

/* Contexts with all the bits of WIRE_CTX_SYSTEM set belong to the daemons
 * (vmd_msg_route refuses them from tasks): a task may not send in them,
 * and no user receive, wildcard or handler sees them. */
#define PVM__CTX_DAEMON(c)                                                    \
    (((unsigned)(c) & (unsigned)WIRE_CTX_SYSTEM) == (unsigned)WIRE_CTX_SYSTEM)
/* The handler index for a message, or -1: at most one matches (addmhf
 * refuses overlapping ones).  Daemon contexts only match a handler
 * installed for that exact context. */
int pvm__mhf_find(int src, int tag, int ctx);
/*
 * Call handler idx for the received message in b, as PVM does: the send
 * buffer is none and the receive buffer b while it runs, the context is
 * the message's; afterwards both are restored, and b and any buffer the
 * handler left active are freed.  b is the handler's from here on.
 */
void pvm__mhf_call(int idx, struct pvm__buf *b);
/* Forget every handler (pvm_exit, tests). */
void pvm__mhf_reset(void);
/* Frames already readable are read and their handlers run: the send
 * calls do it when handlers exist, as PVM's sends read the socket. */
int pvm__poll_input(void);
/* 1 if a task may send to tid: a task id, or anything with PvmResvTids. */
int pvm__tid_ok(int tid);
/* Write one message frame in the current context: 0 or a negative code. */
int pvm__send_frame(int tid, int tag, const void *body, size_t len, int encword);

/* One message to n tasks (distinct, not the sender) in one frame that the
 * daemons fan out per host; 0 or a negative code (pvm_mcast.c). */
int pvm__mcast_frame(const int *tids, int n, int tag, const void *body, size_t len, int encword);

/* ---- groups (pvm_group.c) ---- */
/*
 * The members of group: *tids is malloc'ed, indexed by instance (0 for a
 * free instance), *ninst long; *frozen says whether the group is static.
 * 0 or a negative code (WIRE_ENOGROUP...).
 */
int pvm__group_members(const char *group, int **tids, int *ninst, int *frozen);
/* The same with what a collective needs to tell a slow member from a lost
 * one: the generation (it changes when a member dies) and the latest
 * members that died, newest first, with how long ago. */
#define PVM__GVIEW_DEAD 8
struct pvm__gview {
    int *tids;                  /* malloc'ed, by instance (0: free), ninst long */
    int ninst;
    int frozen;
    unsigned gen;
    int ndead;
    int dead[PVM__GVIEW_DEAD];          /* tid */
    int dead_inst[PVM__GVIEW_DEAD];     /* the instance it had */
    unsigned dead_ago_ms[PVM__GVIEW_DEAD];
};
int pvm__group_view(const char *group, struct pvm__gview *v);
/* A group name a request may carry: 0, or WIRE_ENULLGROUP / -EINVAL. */
int pvm__group_name_ok(const char *group);

/* PVM exports it and its example programs call it (mhf_server.c). */
PVM_API void pvmdisplaymhfinfo(char *who, char *msg, int tid);

#endif
