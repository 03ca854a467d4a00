/*
 * pvm_int.h - libpvm3's internals, shared by lib/pvm/pvm_*.c only.  Never
 * installed; programs see pvm3.h alone.
 *
 * All of libpvm3's mutable state lives in one struct pvm__ctx, the task's
 * one library context (DESIGN.md, Conventions).  The only exception is
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

#include "wire.h"

/*
 * PVM conditions that have no errno: the PVM code offset into a range of
 * their own, below the WIRE_E* codes (-4001..-4100).  They never leave the
 * library (they are not wire codes); pvm__errcode() maps them back.
 */
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

    /* The link to the local daemon (pvm_task.c), once enrolled. */
    int fd;                     /* -1 until enrolled */
    uint32_t next_req;          /* request ids */
    /* Messages read from the daemon and not yet received, oldest first. */
    struct pvm__msg *inq_head, *inq_tail;

    /* Task and host management (pvm_spawn.c, pvm_host.c). */
    FILE *catchout;             /* pvm_catchout's file, or NULL */
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

    /*
     * Contexts, options, receive matching and message handlers
     * (pvm_context.c, pvm_opt.c, pvm_msg.c, pvm_mhf.c).
     */
    int msgctx;                 /* the current context; read it with pvm__context() */
    int msgctx_known;           /* msgctx was set or inherited */
    int *myctxs;                /* contexts pvm_newcontext gave us, not yet freed */
    int nmyctxs;
    int opt[32];                /* pvm_setopt values, by option number (pvm3.h) */
    int opt_ready;              /* opt holds PVM's defaults */
    int (*recvf)(int, int, int); /* pvm_recvf's match function, NULL: the default */
    struct pvm__mhf *mhf;       /* handlers, indexed by mhid; func NULL: free */
    int nmhf;                   /* slots in mhf */
    int mhf_free;               /* the free id reused next + 1; 0: none (pvm_mhf.c) */
    int mhf_depth;              /* handlers running now (they do not nest) */
    int mhf_pending;            /* queued messages waiting for their handler */

    /*
     * Direct links (pvm_direct.c), NULL until the first one is asked for
     * or offered.  io_depth counts the writes in progress that wait for
     * their socket while reading the others: handlers, and any frame to
     * the daemon but the one being written, wait until it is back to 0.
     */
    struct pvm__direct *direct;
    int io_depth;
    int direct_atexit;          /* the exit-time flush of TCP links is registered */
    int getfds[8];              /* what pvm_getfds hands out when no links exist */
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

/* The task's one library context (pvm_ctx.c). */
extern struct pvm__ctx pvm__ctx;

/* PVM's exported error variables (pvm_err.c), kept for binary compatibility. */
extern PVM_API int pvm_errno;
extern PVM_API char *const pvm_errlist[];
extern PVM_API const int pvm_nerr;

/* PVM exports these two va_list forms; binaries may call them. */
PVM_API int pvm_vpackf(const char *fmt, va_list ap);
PVM_API int pvm_vunpackf(const char *fmt, va_list ap);

/* ---- pvm_ctx.c ---- */

/* Free every buffer and return the context to its initial state. */
void pvm__ctx_reset(void);
/* malloc/realloc/calloc that honour fault_after. */
void *pvm__malloc(size_t n);
void *pvm__realloc(void *p, size_t n);
void *pvm__calloc(size_t nmemb, size_t size);
/* PVM's data signature of our native layout (0x408c41 on x86-64). */
int pvm__dsig(void);

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

/* ---- pvm_task.c ---- */
/* Enroll with the local daemon if not yet done; 0 or a negative code. */
int pvm__enroll(void);
/* A request to the daemon and its reply (messages that arrive meanwhile
 * are queued).  *body is malloc'ed; returns the reply's status or an error. */
int pvm__request(int type, const struct wire_wbuf *req, unsigned char **body, size_t *len);

/* ---- pvm_spawn.c ---- */
/* A line of a child's output (WIRE_CTX_OUTPUT) arrived: print it to the
 * pvm_catchout file as "[tXXXX] line", or drop it if none. */
void pvm__output(const struct pvm__msg *m);

/* ---- pvm_msg.c ---- */
/* Read one frame from the daemon within timeout_ms and queue it if it is a
 * message; 1 if a frame was handled, 0 on timeout, negative on error. */
int pvm__pump(int timeout_ms, struct wire_hdr *reply, unsigned char **reply_body);
void pvm__inq_free(void);

/* Queue a message that arrived (from the daemon or a direct link) after
 * those already queued; its handler is marked, and run when allowed. */
int pvm__inq_push(struct pvm__msg *m);
/* A frame from the daemon that is ready to be read: read and handle it as
 * pvm__pump does (returns what it returns). */
int pvm__pump_daemon(struct wire_hdr *reply, unsigned char **reply_body);

/* ---- pvm_direct.c ---- */

/*
 * PvmRouteDirect: links between two tasks that skip the daemons, a Unix
 * socket on one host and TLS 1.3 between hosts.  See pvm_direct.c for the
 * protocol and why message order survives the switch.
 */
/* 1 if links or listeners exist, so waits must poll them as well. */
int pvm__direct_active(void);
/*
 * Send one message frame (header h, body) to tid over its link if the link
 * is up: 1 when it went that way, 0 when the caller routes it through the
 * daemon, or a negative code.  Under PvmRouteDirect a link is asked for
 * here, the first time a task is sent to.
 */
int pvm__direct_send(int tid, struct wire_hdr *h, const void *body, size_t len);
/* A WIRE_T_DIRECT frame the daemon delivered; body is taken. */
void pvm__direct_from_daemon(const struct wire_hdr *h, unsigned char *body);
/*
 * Wait up to timeout_ms (-1: for ever) until the daemon's socket is
 * readable (*dready = 1) or a link or listener had something; links and
 * listeners are serviced here.  wfd >= 0 adds a socket to watch for
 * output (*wready = 1 when writable).  1 if anything happened, 0 on
 * timeout, or a negative code.
 */
int pvm__direct_wait(int timeout_ms, int wfd, int *dready, int *wready);
/* What needs requests to the daemon (answering a link request, refusals):
 * done where the library may make requests, never inside a wait. */
int pvm__direct_work(void);
/* Close every link and listener (pvm_exit). */
void pvm__direct_close(void);
/* The sockets a program should watch (pvm_getfds): daemon first. */
int pvm__direct_fds(int **fds);
/*
 * Write one frame to the daemon.  While the socket is full, whatever
 * arrives on it or on links is read and queued, so that two tasks
 * sending to each other never wait on each other (the daemon pauses a
 * task whose messages pile up for a slow peer).  0 or a negative code.
 */
int pvm__daemon_write(struct wire_hdr *h, const void *body, size_t len);

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

/* ---- contexts, options, handlers, matching (pvm_context.c, pvm_opt.c,
 * pvm_mhf.c, pvm_msg.c, pvm_mcast.c) ---- */

/* Contexts with all the bits of WIRE_CTX_SYSTEM set belong to the daemons
 * (vmd_task_route refuses them from tasks): a task may not send in them,
 * and no user receive, wildcard or handler sees them. */
#define PVM__CTX_DAEMON(c)                                                    \
    (((unsigned)(c) & (unsigned)WIRE_CTX_SYSTEM) == (unsigned)WIRE_CTX_SYSTEM)
/*
 * The current context: what pvm_setcontext set, else the one inherited
 * from the parent (LIQUIDVM_CTX in the environment, set by the spawning
 * daemon to the parent's context at pvm_spawn time), else 0.
 */
int pvm__context(void);
/* An option's value (pvm_getopt without the checks); 0 for unknown ones. */
int pvm__opt(int what);
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
/* Run the handlers of queued messages that arrived when they could not
 * run (during a daemon request); 0 or a negative code. */
int pvm__mhf_run_pending(void);
/* Frames already readable are read and their handlers run: the send
 * calls do it when handlers exist, as PVM's sends read the socket. */
int pvm__poll_input(void);
/* 1 if a task may send to tid: a task id, or anything with PvmResvTids. */
int pvm__tid_ok(int tid);
/* Write one message frame in the current context: 0 or a negative code. */
int pvm__send_frame(int tid, int tag, const void *body, size_t len, int encword);
/* Unlink and return the oldest queued message from src with tag in
 * exactly context ctx (-1 for src or tag: any), or NULL.  For the
 * library's own messages; the caller frees it with pvm__msg_free. */
struct pvm__msg *pvm__inq_take(int src, int tag, int ctx);
void pvm__msg_free(struct pvm__msg *m);

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
