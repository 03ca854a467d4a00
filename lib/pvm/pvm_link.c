/*
 * pvm_link.c - PvmRouteDirect: the protocol that sets up links between two
 * tasks that skip the daemons (docs/architecture.md, libpvm3), what the frames on a
 * link mean, and the links' part of the one wait (pvm_poll.c).  A link's
 * bytes, TLS included, are pvm_linkio.c's.
 *
 * Setting up.  A task whose PvmRoute is PvmRouteDirect, sending to a task
 * it has no link with, asks for one: it listens (a Unix socket in the VM's
 * run directory for a task of its own host, a TCP port on its host's
 * address for the others) and sends the peer a CONREQ through the daemons,
 * with the address and a random 32-byte token.  That message, and every
 * one until the link is up, still goes through the daemons, so nobody
 * waits for a peer that may be busy computing.  When the peer next enters
 * the library it answers: under PvmDontRoute with a NAK; otherwise it
 * connects (as the TLS client between hosts) and sends HELLO with the
 * token on the link.  The asker checks the token against the one it sent
 * to that tid and, between hosts, the certificate name against the peer's
 * host, and answers ACK.  A link that cannot be made ends in a NAK, and
 * both keep routing through the daemons.  If both ask at once, the task
 * with the higher tid connects.
 *
 * Order.  A task's messages to one peer keep their order across the switch
 * from the daemons to the link: before its first message on the link, a
 * task sends MARK through the daemons, behind every message it routed
 * there before.  The receiver holds what arrives on the link from that
 * peer until the MARK arrives and queues it only then.  Either task may
 * send on a link once both have checked it (HELLO, ACK), each after its
 * own MARK.  A link that fails turns DEAD and messages go through the
 * daemons again; the one whose write on the socket failed is sent that
 * way whole (the receiver drops a partial frame; a ring's rule, below, is
 * stricter).  Only then can order break, and only for a peer that is most
 * likely dead: its daemon tells the PvmTaskExit watchers.  A host the VM
 * drops is one: our daemon says so (WIRE_DIRECT_GONE), and the links to
 * its tasks die (on_host_gone), or a write blocked on one whose peer was
 * stopped with its host would wait for ever.
 *
 * Who may connect.  Between hosts a task presents its host's certificate
 * and key, whose paths its daemon gives it (a task runs as the daemon's
 * user, who owns them): both ends must show a certificate of the cluster
 * CA, and the name in it must be the peer's host.  That keeps out anyone
 * without a key of this cluster; the token, which travels only inside the
 * daemons' TLS links and Unix sockets, binds a connection to one request,
 * so neither another VM on the same CA nor another task can take a link it
 * was not offered.  On one host the socket sits in a directory only the
 * user can enter, the peer's uid is checked, and so is the token.
 *
 * Shared memory.  On one host a link carries messages only until the
 * sender has made a ring (pvm_shm.c) for them: before its first message
 * on the link it sends WIRE_DIRECT_SHM on the link with the ring's
 * descriptors attached (SCM_RIGHTS), and every message after that goes
 * into the ring.  The link is a stream, so the receiver reads every
 * message the sender put on the link before it learns of the ring, and the
 * ring's messages go through on_message like the link's (held until the
 * MARK), so the pair's order holds across daemons, link and ring.  Under
 * the default route too (PvmAllowDirect) a task asks a peer of its own
 * host for a link, so that the ring can be made; PvmDontRoute on either
 * side, or LIQUIDVM_SHM_RING=0, keeps the daemons' route.  The socket
 * stays open: it is how each end learns of the other's end.  On EOF the
 * reader first takes every message whole in the ring (the peer wrote them
 * before it died or left) and drops a partial one, then the link dies.  A
 * write into the ring that fails goes whole through the daemons only if
 * none of it was published; otherwise pvm_send reports the error (a
 * message either arrives once and whole, or its sender is told).
 * A message from the daemon is queued only after the rings are drained
 * (links_drain), so a task's last messages come before its exit notice.
 *
 * Reading.  A frame read whole with nothing left over ends the read: no
 * extra call only to hear EAGAIN.  At most LINK_FRAMES_MAX frames, and
 * frames of LINK_BYTES_MAX bytes, are read from one link per wait, so one
 * busy peer cannot starve the others, nor a sender faster than our reads
 * keep a receive from returning the message it waits for (with a frame
 * cap alone a reader once queued 256 messages of 16 MB before it looked).
 */
#include "pvm_ext.h"
#include "pvm_int.h"
#include "pvm_shm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define LINK_ACCEPT_MAX 16          /* connections that have not said who they are */
#define LINK_FRAMES_MAX 256         /* frames read from one link per wait */
/* ... and bytes: the wait returns to its caller, whose message may be whole. */
#define LINK_BYTES_MAX (1024 * 1024)
#define LINK_MAX_FRAME (1u << 30)   /* when the VM's max_message is unknown */
#define LINK_SOCKBUF (1 << 20)      /* socket buffers: a 1 MB message in few wakeups */
#define LINK_LINGER_MS 10000        /* at the end: how long without progress we wait */

/* A peer's CONREQ, answered where requests to the daemon are allowed. */
struct pvm__conreq {
    struct pvm__conreq *next;
    int tid;
    unsigned char token[WIRE_DIRECT_TOKEN];
    char upath[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char addr[64];
    uint32_t port;
};

static void link_input(struct pvm__direct *d, struct pvm__link *l);
static void ring_input(struct pvm__direct *d, struct pvm__link *l, int all);
static void direct_atexit(void);
static const struct pvm__pollsrc links_source;

/* ---- state ---- */

static struct pvm__direct *
dir(void)
{
    struct pvm__direct *d = pvm__ctx.direct;

    if (d != NULL)
        return d;
    if ((d = calloc(1, sizeof(*d))) == NULL)
        return NULL;
    d->ufd = d->tfd = -1;
    pvm__ctx.direct = d;
    pvm__poll_source(&links_source);
    if (!pvm__ctx.direct_atexit) {
        pvm__ctx.direct_atexit = 1;
        atexit(direct_atexit);
    }
    return d;
}

/* The link with a known peer tid (never an unknown accepted one). */
static struct pvm__link *
link_find(int tid)
{
    struct pvm__link *l;

    if (pvm__ctx.direct == NULL || tid == 0)
        return NULL;
    for (l = pvm__ctx.direct->links; l; l = l->next)
        if (l->tid == tid)
            return l;
    return NULL;
}

static struct pvm__link *
link_new(struct pvm__direct *d, int tid, enum pvm__link_state state)
{
    struct pvm__link *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->tid = tid;
    l->state = state;
    l->fd = -1;
    l->remote = WIRE_TID_HOST(tid) != WIRE_TID_HOST(pvm__ctx.mytid);
    l->serial = ++d->serial;
    l->next = d->links;
    d->links = l;
    return l;
}

/* Close l's rings; a ring being written into stays for its writer. */
static void
link_shm_close(struct pvm__link *l)
{
    if (l->rx != NULL) {
        pvm__shm_close(l->rx);
        l->rx = NULL;
        pvm__ctx.direct->nrx--;
    }
    if (l->tx != NULL && !l->tx_busy) {
        pvm__shm_close(l->tx);
        l->tx = NULL;
    }
}

/*
 * The link will not carry messages: the daemons route from now on.  A
 * connector that failed tells the asker (a NAK, sent later).
 */
static void
link_dead(struct pvm__link *l)
{
    if (l->state == PVM__LINK_CONNECTING || l->state == PVM__LINK_HANDSHAKE ||
        l->state == PVM__LINK_WAIT_ACK) {
        l->nak = 1;
        pvm__ctx.direct->work = 1;
    }
    l->state = PVM__LINK_DEAD;
    link_shm_close(l);
    pvm__link_close_io(l);
}

static void
link_free(struct pvm__link *l)
{
    struct pvm__msg *m, *n;

    link_shm_close(l);
    pvm__link_close_io(l);
    for (m = l->held; m; m = n) {
        n = m->next;
        pvm__msg_free(m);
    }
    free(l);
}

/* Forget unknown connections that died or were handed to their link. */
static void
sweep(struct pvm__direct *d)
{
    struct pvm__link **pp = &d->links, *l;

    while ((l = *pp) != NULL) {
        if (l->tid == 0 && l->state == PVM__LINK_DEAD) {
            *pp = l->next;
            link_free(l);
        } else {
            pp = &l->next;
        }
    }
}

/* ---- the daemon's part: addresses and credentials ---- */

/* This task's listening addresses and TLS files, and tid's host name. */
static int
get_info(struct pvm__direct *d, int tid, char *host, size_t hostcap)
{
    struct wire_wbuf req;
    struct wire_rbuf r;
    unsigned char *body = NULL;
    size_t len = 0;
    char addr[64], upath[sizeof(d->upath)];
    int rc;

    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)tid);
    rc = pvm__request(WIRE_T_TASK_DIRECT, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc == 0) {
        wire_rbuf_init(&r, body, len);
        if ((rc = wire_get_str(&r, addr, sizeof(addr))) == 0 &&
            (rc = wire_get_str(&r, upath, sizeof(upath))) == 0 &&
            (rc = wire_get_str(&r, d->ca, sizeof(d->ca))) == 0 &&
            (rc = wire_get_str(&r, d->cert, sizeof(d->cert))) == 0 &&
            (rc = wire_get_str(&r, d->key, sizeof(d->key))) == 0)
            rc = wire_get_str(&r, host, hostcap);
    }
    free(body);
    if (rc != 0)
        return rc;
    if (!d->have_info) {
        memcpy(d->addr, addr, sizeof(addr));
        memcpy(d->upath, upath, sizeof(upath));
        d->have_info = 1;
    }
    return 0;
}

/* ---- sockets ---- */

static void
sock_tune(int fd, int tcp)
{
    int one = 1, size = LINK_SOCKBUF;

    if (tcp)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

static int
listen_unix(struct pvm__direct *d)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd;

    if (d->ufd >= 0)
        return 0;
    if (d->upath[0] == '\0' || strlen(d->upath) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, d->upath, strlen(d->upath) + 1);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    /* A socket left by an earlier task that had our tid. */
    unlink(d->upath);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(d->upath, 0600) != 0 ||
        listen(fd, LINK_ACCEPT_MAX) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    d->ufd = fd;
    d->ufd_bound = 1;
    return 0;
}

static int
listen_tcp(struct pvm__direct *d)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    int fd;

    if (d->tfd >= 0)
        return 0;
    if (inet_pton(AF_INET, d->addr, &sa.sin_addr) != 1)
        return -EINVAL;
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, LINK_ACCEPT_MAX) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    d->tfd = fd;
    d->port = ntohs(sa.sin_port);
    return 0;
}

/* ---- frames that arrive on links ---- */

/* The connection is made (and TLS up, between hosts): say who we are. */
static void
say_hello(struct pvm__link *l)
{
    pvm__link_ctl_set(l, WIRE_DIRECT_HELLO, l->token);
    l->state = PVM__LINK_WAIT_ACK;
    if (pvm__link_ctl_flush(l) < 0)
        link_dead(l);
}

/* An accepted connection said HELLO: it becomes the link of its request. */
static void
on_hello(struct pvm__direct *d, struct pvm__link *c, const struct wire_hdr *h,
         unsigned char *body)
{
    struct pvm__link *a = link_find((int)h->src);

    if (h->type != WIRE_T_DIRECT || h->tag != WIRE_DIRECT_HELLO || h->len != WIRE_DIRECT_TOKEN ||
        a == NULL || a->state != PVM__LINK_ASKED || a->remote != (c->ssl != NULL) ||
        CRYPTO_memcmp(a->token, body, WIRE_DIRECT_TOKEN) != 0) {
        link_dead(c);
        return;
    }
    if (c->ssl != NULL && !pvm__link_tls_peer_is(c, a->host)) {
        link_dead(c);
        return;
    }
    a->fd = c->fd;
    a->ssl = c->ssl;
    a->stage = c->stage;
    a->st_off = c->st_off;
    a->st_len = c->st_len;
    a->nrfds = pvm__link_take_fds(c, a->rfds);
    c->fd = -1;
    c->ssl = NULL;
    c->stage = NULL;
    c->state = PVM__LINK_DEAD;  /* swept */
    a->state = PVM__LINK_READY;
    pvm__link_ctl_set(a, WIRE_DIRECT_ACK, NULL);
    if (pvm__link_ctl_flush(a) < 0) {
        link_dead(a);
        return;
    }
    link_input(d, a);           /* bytes that came behind the HELLO */
}

/* The process at the other end of a Unix link, as the kernel says; 0 if unknown. */
static pid_t
peer_pid(int fd)
{
    struct ucred cred;
    socklen_t clen = sizeof(cred);

    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 ? cred.pid : 0;
}

/* A message on a checked link: queued, or held until the peer's MARK. */
static int
on_message(struct pvm__link *l, const struct wire_hdr *h, unsigned char *body)
{
    struct pvm__msg *m;

    /* The peer speaks for itself only, to us only, never in a daemon context. */
    if (h->type != WIRE_T_MSG || (int)h->src != l->tid || (int)h->dst != pvm__ctx.mytid ||
        PVM__CTX_DAEMON(h->ctx) || (m = calloc(1, sizeof(*m))) == NULL) {
        free(body);
        link_dead(l);
        return 1;
    }
    m->src = l->tid;
    m->dst = pvm__ctx.mytid;
    m->tag = h->tag;
    m->ctx = h->ctx;
    m->encword = (int)h->flags;
    m->data = body;
    m->len = h->len;
    if (l->marked) {
        pvm__inq_push(m);
    } else if (l->held_tail) {
        l->held_tail->next = m;
        l->held_tail = m;
    } else {
        l->held = l->held_tail = m;
    }
    return 0;
}

/*
 * The peer's WIRE_DIRECT_SHM: its ring, whose descriptors came with the
 * frame, carries its messages from now on.  0, or 1 if the link died.
 */
static int
on_shm(struct pvm__direct *d, struct pvm__link *l, const struct wire_hdr *h)
{
    int fds[PVM__LINK_RFDS], n = pvm__link_take_fds(l, fds);

    if (l->remote || l->ssl != NULL || h->len != 0 || (int)h->src != l->tid ||
        n != PVM__SHM_NFD) {
        while (n > 0)
            close(fds[--n]);
        link_dead(l);
        return 1;
    }
    if (l->rx != NULL) {
        /*
         * A larger ring in place of the old one (shm_grow): the peer wrote
         * its last frame there before it sent this, so the old ring holds
         * only whole frames; they come first.
         */
        ring_input(d, l, 1);
        if (l->state == PVM__LINK_DEAD || pvm__shm_partial(l->rx) || pvm__shm_readable(l->rx)) {
            while (n > 0)
                close(fds[--n]);
            if (l->state != PVM__LINK_DEAD)
                link_dead(l);
            return 1;
        }
        pvm__shm_close(l->rx);
        l->rx = NULL;
        d->nrx--;
    }
    if (pvm__shm_attach(fds, &l->rx) != 0) {
        l->rx = NULL;
        link_dead(l);
        return 1;
    }
    (void)pvm__shm_ref_accept(l->rx, peer_pid(l->fd));
    d->nrx++;
    if (d->sticky)
        pvm__shm_sticky(l->rx);
    return 0;
}

/* One whole frame read from l: 0 to read on, 1 when the link changed
 * under the reader.  body is taken. */
static int
link_frame(struct pvm__direct *d, struct pvm__link *l, unsigned char *body)
{
    const struct wire_hdr *h = &l->h;

    switch (l->state) {
    case PVM__LINK_ACCEPTED:
        on_hello(d, l, h, body);
        free(body);
        return 1;
    case PVM__LINK_WAIT_ACK:
        free(body);
        if (h->type != WIRE_T_DIRECT || h->tag != WIRE_DIRECT_ACK || h->len != 0 ||
            (int)h->src != l->tid) {
            link_dead(l);
            return 1;
        }
        l->state = PVM__LINK_READY;
        return 0;
    case PVM__LINK_READY:
    case PVM__LINK_UP:
        if (h->type == WIRE_T_DIRECT && h->tag == WIRE_DIRECT_SHM) {
            free(body);
            return on_shm(d, l, h);
        }
        return on_message(l, h, body);
    default:
        free(body);
        link_dead(l);
        return 1;
    }
}

static void
link_input(struct pvm__direct *d, struct pvm__link *l)
{
    uint32_t max = pvm__ctx.max_msg && pvm__ctx.max_msg < LINK_MAX_FRAME
                       ? (uint32_t)pvm__ctx.max_msg : LINK_MAX_FRAME;
    unsigned char *body = NULL;
    size_t bytes = 0;
    int frames, rc;

    l->more = 0;
    for (frames = 0;; frames++) {
        if (frames >= LINK_FRAMES_MAX || bytes >= LINK_BYTES_MAX) {
            l->more = 1;
            return;
        }
        /* Until the peer has shown its token, only HELLO's size is
         * believed: nobody unknown makes us reserve max_message. */
        rc = pvm__link_read_frame(l, l->state == PVM__LINK_ACCEPTED ? WIRE_DIRECT_TOKEN : max,
                                  &body);
        if (rc == 0)
            return;
        if (rc < 0) {
            /* The peer wrote what its ring holds before it went. */
            ring_input(d, l, 1);
            link_dead(l);       /* a partial frame is dropped with the link */
            return;
        }
        bytes += WIRE_HDR_LEN + (size_t)l->h.len;
        if (link_frame(d, l, body) != 0)
            return;
        /*
         * Nothing read is left over: stop here rather than ask the socket
         * once more only to hear EAGAIN.  A request and its reply cost one
         * read each; whatever came meanwhile makes the next poll return.
         */
        if (pvm__link_rx_idle(l))
            return;
    }
}

/*
 * Messages whole in l's ring from the peer, at most LINK_FRAMES_MAX (and
 * LINK_BYTES_MAX) unless all; a partial one stays in the ring's reader
 * until the rest comes.
 */
static void
ring_input(struct pvm__direct *d, struct pvm__link *l, int all)
{
    uint32_t max = pvm__ctx.max_msg && pvm__ctx.max_msg < LINK_MAX_FRAME
                       ? (uint32_t)pvm__ctx.max_msg : LINK_MAX_FRAME;
    struct wire_hdr h;
    unsigned char *body;
    size_t bytes = 0;
    int frames, rc;

    (void)d;
    for (frames = 0; l->rx != NULL && (all || (frames < LINK_FRAMES_MAX && bytes < LINK_BYTES_MAX));
         frames++) {
        if ((rc = pvm__shm_read(l->rx, max, &h, &body)) == 0)
            return;
        bytes += WIRE_HDR_LEN + (size_t)h.len;
        if (rc < 0 || on_message(l, &h, body) != 0) {
            link_dead(l);
            return;
        }
    }
}

/* Every ring's whole messages, now (the daemon's message waits). */
static void
links_drain(void)
{
    struct pvm__direct *d = pvm__ctx.direct;

    if (d == NULL || d->nrx == 0)
        return;
    for (struct pvm__link *l = d->links; l; l = l->next)
        if (l->rx != NULL && pvm__shm_readable(l->rx))
            ring_input(d, l, 1);
}

/*
 * Tell our rings' writers that we wait for a message, from the spin that
 * opens a wait to links_ready that ends it; not in a wait inside a send
 * (io_depth), where a peer's large message by reference would hold it
 * until we next read, as both may be sending.
 */
static int recv_marked;

static void
recv_mark(struct pvm__direct *d, int on)
{
    for (struct pvm__link *l = d->links; l; l = l->next)
        if (l->rx != NULL)
            pvm__shm_receiving(l->rx, on);
    recv_marked = on;
}

/*
 * Before a wait that may sleep: look at the rings for a few microseconds,
 * so that a peer that answers at once is heard without a system call on
 * either side.  1 if a ring has bytes.
 */
static int
links_spin(void)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct timespec t0, t;
    long budget_ns;

    if (d == NULL || d->nrx == 0)
        return 0;
    budget_ns = pvm__shm_spin_budget_ns();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pvm__ctx.io_depth == 0)
        recv_mark(d, 1);
    for (unsigned i = 0;; i++) {
        for (struct pvm__link *l = d->links; l; l = l->next) {
            if (l->rx != NULL && pvm__shm_readable(l->rx)) {
                if (i > 0)
                    pvm__shm_spin_result(1);
                return 1;
            }
            if (l->more)
                return 0;       /* the poll will not wait anyway */
        }
        if ((i & 31) == 31) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= budget_ns) {
                pvm__shm_spin_result(0);
                return 0;
            }
            /* The peer may share our CPU: let it run, or we only wait longer. */
            sched_yield();
        }
        pvm__shm_relax();
    }
}

/* ---- the links' part of the wait ---- */

/* A connection of ours is made: TLS between hosts, then HELLO. */
static void
connected(struct pvm__direct *d, struct pvm__link *l)
{
    if (!l->remote) {
        say_hello(l);
        return;
    }
    if (pvm__link_tls_attach(d, l, 1) != 0) {
        link_dead(l);
        return;
    }
    l->state = PVM__LINK_HANDSHAKE;
}

/* 1 once a non-blocking connect of l is over (0 to wait); l may be dead. */
static int
connect_done(struct pvm__direct *d, struct pvm__link *l, short revents)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
        return 0;
    if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        link_dead(l);
        return 1;
    }
    connected(d, l);
    return 1;
}

static void
link_service(struct pvm__direct *d, struct pvm__link *l, short revents)
{
    int rc;

    if (l->state == PVM__LINK_CONNECTING && !connect_done(d, l, revents))
        return;
    if (l->fd >= 0 && pvm__link_tls_handshaking(l)) {
        if ((rc = pvm__link_tls_step(l)) < 0) {
            link_dead(l);
            return;
        }
        if (rc == 0)
            return;
        if (l->state == PVM__LINK_HANDSHAKE)
            say_hello(l);
    }
    if (l->fd >= 0 && l->ctl_len > 0 && pvm__link_ctl_flush(l) < 0) {
        link_dead(l);
        return;
    }
    if (l->fd >= 0 && pvm__link_tx_pending(l) && (rc = pvm__link_tx_flush(l)) != 0 &&
        rc != -EAGAIN) {
        link_dead(l);
        return;
    }
    if (l->fd >= 0)
        link_input(d, l);
}

/* 1 if fd, accepted on the Unix listener, belongs to our own user. */
static int
same_user(int fd)
{
    struct ucred cred;
    socklen_t clen = sizeof(cred);

    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == getuid();
}

/* Connections that never say who they are do not pile up. */
static void
limit_unknown(struct pvm__direct *d)
{
    struct pvm__link *l, *oldest = NULL;
    int unknown = 0;

    for (l = d->links; l; l = l->next) {
        if (l->state != PVM__LINK_ACCEPTED)
            continue;
        unknown++;
        if (oldest == NULL || l->serial < oldest->serial)
            oldest = l;
    }
    if (unknown >= LINK_ACCEPT_MAX)
        link_dead(oldest);
}

/* New connections to a listener; each must say HELLO before it counts. */
static void
accept_on(struct pvm__direct *d, int lfd, int remote)
{
    struct pvm__link *l;
    int i, fd;

    for (i = 0; i < LINK_ACCEPT_MAX && (fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
                                                     SOCK_CLOEXEC)) >= 0; i++) {
        if (!remote && !same_user(fd)) {
            close(fd);
            continue;
        }
        sock_tune(fd, remote);
        limit_unknown(d);
        if ((l = link_new(d, 0, PVM__LINK_ACCEPTED)) == NULL) {
            close(fd);
            continue;
        }
        l->fd = fd;
        l->remote = remote;
        if (remote && (d->tls == NULL || pvm__link_tls_attach(d, l, 0) != 0))
            link_dead(l);
    }
}

static int
links_active(void)
{
    const struct pvm__direct *d = pvm__ctx.direct;

    return d != NULL && (d->links != NULL || d->ufd >= 0 || d->tfd >= 0);
}

/* Room in d->plink for every link and both listeners. */
static int
links_size(size_t *n)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__link **k, *l;
    size_t want = 2;

    /* The socket, and the eventfds of both rings. */
    for (l = d->links; l; l = l->next)
        want += 3;
    if (want > d->plink_cap) {
        if ((k = realloc(d->plink, want * sizeof(*k))) == NULL)
            return -ENOMEM;
        d->plink = k;
        d->plink_cap = want;
    }
    *n = want;
    return 0;
}

/* What links_fill puts in plink for a ring's eventfd. */
static struct pvm__link ring_entry;

static size_t
links_fill(struct pollfd *pfd, int wfd, int sleep, int *busy)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__link *l;
    size_t n = 0;

    if (d->ufd >= 0) {
        pfd[n] = (struct pollfd){ .fd = d->ufd, .events = POLLIN };
        d->plink[n++] = NULL;
    }
    if (d->tfd >= 0) {
        pfd[n] = (struct pollfd){ .fd = d->tfd, .events = POLLIN };
        d->plink[n++] = NULL;
    }
    for (l = d->links; l; l = l->next) {
        if (l->fd < 0)
            continue;
        short ev = POLLIN;
        if (l->state == PVM__LINK_CONNECTING || l->want_write || l->ctl_len > 0 ||
            l->fd == wfd || pvm__link_tx_pending(l))
            ev |= POLLOUT;
        /*
         * Input left unread (the frame cap) or plaintext OpenSSL holds:
         * look without waiting.  link_input reads until OpenSSL wants the
         * socket.
         */
        if (l->more || pvm__link_tls_pending(l))
            *busy = 1;
        pfd[n] = (struct pollfd){ .fd = l->fd, .events = ev };
        d->plink[n++] = l;
        if (l->rx != NULL) {
            /* The writer rings only if we said we sleep, after a last look. */
            if (sleep ? pvm__shm_arm(l->rx) : pvm__shm_readable(l->rx))
                *busy = 1;
            pfd[n] = (struct pollfd){ .fd = pvm__shm_data_fd(l->rx), .events = POLLIN };
            d->plink[n++] = &ring_entry;
        }
        if (l->tx != NULL && l->tx_wait) {
            pfd[n] = (struct pollfd){ .fd = pvm__shm_space_fd(l->tx), .events = POLLIN };
            d->plink[n++] = &ring_entry;
        }
    }
    return n;
}

static void
links_ready(const struct pollfd *pfd, size_t n)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__link *l;
    size_t i;

    if (recv_marked)
        recv_mark(d, 0);
    for (i = 0; i < n; i++) {
        short re = pfd[i].revents;

        if ((l = d->plink[i]) == NULL) {
            if (re & POLLIN)
                accept_on(d, pfd[i].fd, pfd[i].fd == d->tfd);
            continue;
        }
        if (l == &ring_entry)
            continue;   /* the rings are looked at below, woken or not */
        /* A link handed to another (HELLO) or closed by now is skipped. */
        if (l->fd != pfd[i].fd)
            continue;
        if (re != 0 || l->more || pvm__link_tls_pending(l))
            link_service(d, l, re);
    }
    if (d->nrx > 0) {
        for (l = d->links; l; l = l->next) {
            if (l->rx == NULL)
                continue;
            pvm__shm_disarm(l->rx);
            if (pvm__shm_readable(l->rx))
                ring_input(d, l, 0);
        }
    }
    sweep(d);
}

static const struct pvm__pollsrc links_source = {
    .active = links_active,
    .size = links_size,
    .fill = links_fill,
    .ready = links_ready,
    .spin = links_spin,
    .drain = links_drain,
};

/* ---- what the daemons bring ---- */

static void
send_ctl_routed(int tid, int tag, const unsigned char *token)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = tag, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)tid };

    (void)pvm__daemon_write(&h, token, token ? WIRE_DIRECT_TOKEN : 0);
}

/* The peer's MARK: what it sent on the link so far is in order now. */
static void
on_mark(struct pvm__link *l)
{
    struct pvm__msg *m, *next;

    if (l == NULL || l->marked)
        return;
    m = l->held;
    l->marked = 1;
    l->held = l->held_tail = NULL;
    for (; m; m = next) {
        next = m->next;
        m->next = NULL;
        pvm__inq_push(m);
    }
}

/* A peer asks for a link: queued for pvm__direct_work. */
static void
on_conreq(const struct wire_hdr *h, const unsigned char *body)
{
    struct pvm__direct *d;
    struct pvm__conreq *c;
    struct wire_rbuf r;
    const void *tok;

    if ((d = dir()) == NULL || !WIRE_TID_IS_TASK(h->src) || (c = calloc(1, sizeof(*c))) == NULL)
        return;
    wire_rbuf_init(&r, body, h->len);
    if (wire_get_bytes(&r, &tok, WIRE_DIRECT_TOKEN) != 0 ||
        wire_get_str(&r, c->upath, sizeof(c->upath)) != 0 ||
        wire_get_str(&r, c->addr, sizeof(c->addr)) != 0 || wire_get_u32(&r, &c->port) != 0 ||
        c->port > 65535) {
        free(c);
        return;
    }
    memcpy(c->token, tok, WIRE_DIRECT_TOKEN);
    c->tid = (int)h->src;
    if (d->conreqs_tail)
        d->conreqs_tail->next = c;
    else
        d->conreqs = c;
    d->conreqs_tail = c;
    d->work = 1;
}

/*
 * Host `host` left the VM (our daemon says so): its tasks are gone, and a
 * link to one of them will carry nothing more.  What it already brought is
 * read first; then the link dies, and a write waiting on it (the peer
 * stopped, its buffers full) goes the daemons' way, which drop it.
 */
static void
on_host_gone(const struct wire_hdr *h, const unsigned char *body)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct wire_rbuf r;
    uint32_t host;

    /* Only a daemon's word: a task's src has a local part. */
    wire_rbuf_init(&r, body, h->len);
    if (d == NULL || h->len != 4 || WIRE_TID_IS_TASK(h->src) || WIRE_TID_HOST(h->src) == 0 ||
        wire_get_u32(&r, &host) != 0)
        return;
    for (struct pvm__link *l = d->links; l; l = l->next) {
        if (l->tid == 0 || WIRE_TID_HOST(l->tid) != (int)host || l->state == PVM__LINK_DEAD)
            continue;
        if ((l->state == PVM__LINK_READY || l->state == PVM__LINK_UP) && l->fd >= 0)
            link_input(d, l);
        if (l->state != PVM__LINK_DEAD)
            link_dead(l);
    }
}

void
pvm__direct_from_daemon(const struct wire_hdr *h, unsigned char *body)
{
    struct pvm__link *l = link_find((int)h->src);

    switch (h->tag) {
    case WIRE_DIRECT_GONE:
        on_host_gone(h, body);
        break;
    case WIRE_DIRECT_MARK:
        on_mark(l);
        break;
    case WIRE_DIRECT_NAK:
        if (l != NULL && l->state == PVM__LINK_ASKED && h->len == WIRE_DIRECT_TOKEN &&
            CRYPTO_memcmp(l->token, body, WIRE_DIRECT_TOKEN) == 0)
            link_dead(l);
        break;
    case WIRE_DIRECT_CONREQ:
        on_conreq(h, body);
        break;
    default:
        break;          /* a later version's: nothing to do */
    }
    free(body);
}

/* Start connecting l to the asker at c's address: 0, or an error. */
static int
link_connect(struct pvm__link *l, const struct pvm__conreq *c)
{
    struct sockaddr_un su = { .sun_family = AF_UNIX };
    struct sockaddr_in si = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->port) };
    int fd;

    if (!l->remote) {
        if (c->upath[0] == '\0' || strlen(c->upath) >= sizeof(su.sun_path) ||
            (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
            return -EINVAL;
        memcpy(su.sun_path, c->upath, strlen(c->upath) + 1);
        l->fd = fd;
        sock_tune(fd, 0);
        return connect(fd, (struct sockaddr *)&su, sizeof(su)) == 0 ? 0 : -errno;
    }
    if (inet_pton(AF_INET, c->addr, &si.sin_addr) != 1 || c->port == 0 ||
        (fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return -EINVAL;
    l->fd = fd;
    sock_tune(fd, 1);
    return connect(fd, (struct sockaddr *)&si, sizeof(si)) == 0 ? 0 : -errno;
}

/* Connect to the asker, as its CONREQ says. */
static void
answer(struct pvm__direct *d, const struct pvm__conreq *c)
{
    struct pvm__link *l = link_find(c->tid);
    int rc;

    if (pvm__opt(PvmRoute) == PvmDontRoute) {
        if (l != NULL && l->state != PVM__LINK_DEAD)
            link_dead(l);
        send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
        return;
    }
    if (l != NULL) {
        /* Both asked: the higher tid connects, the lower waits for it. */
        if (l->state != PVM__LINK_ASKED || pvm__ctx.mytid < c->tid) {
            if (l->state == PVM__LINK_DEAD)
                send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
            return;
        }
        l->state = PVM__LINK_CONNECTING;
    } else if ((l = link_new(d, c->tid, PVM__LINK_CONNECTING)) == NULL) {
        send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
        return;
    }
    memcpy(l->token, c->token, WIRE_DIRECT_TOKEN);
    if (get_info(d, c->tid, l->host, sizeof(l->host)) != 0 ||
        (l->remote && pvm__link_tls_ctx(d) != 0)) {
        link_dead(l);
        return;
    }
    rc = link_connect(l, c);
    if (rc == 0)
        connected(d, l);
    else if (rc != -EINPROGRESS)
        link_dead(l);   /* a Unix listener's full backlog (EAGAIN) included */
}

int
pvm__direct_work(void)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__conreq *c;
    struct pvm__link *l;

    if (d == NULL || !d->work || pvm__ctx.io_depth > 0)
        return 0;
    d->work = 0;
    while ((c = d->conreqs) != NULL) {
        d->conreqs = c->next;
        if (d->conreqs == NULL)
            d->conreqs_tail = NULL;
        answer(d, c);
        free(c);
    }
    for (l = d->links; l; l = l->next) {
        if (l->nak && l->tid != 0) {
            l->nak = 0;
            send_ctl_routed(l->tid, WIRE_DIRECT_NAK, l->token);
        }
    }
    return 0;
}

/* ---- sending ---- */

/* Ask tid for a link: listen, and send it a CONREQ through the daemons. */
static void
ask(int tid)
{
    struct pvm__direct *d = dir();
    struct pvm__link *l;
    struct wire_wbuf b;
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_CONREQ,
                          .src = (uint32_t)pvm__ctx.mytid, .dst = (uint32_t)tid };

    if (d == NULL || (l = link_new(d, tid, PVM__LINK_ASKED)) == NULL)
        return;
    if (get_info(d, tid, l->host, sizeof(l->host)) != 0 ||
        (l->remote ? pvm__link_tls_ctx(d) != 0 || listen_tcp(d) != 0 : listen_unix(d) != 0) ||
        getrandom(l->token, WIRE_DIRECT_TOKEN, 0) != (ssize_t)WIRE_DIRECT_TOKEN) {
        link_dead(l);
        return;
    }
    wire_wbuf_init(&b);
    wire_put_bytes(&b, l->token, WIRE_DIRECT_TOKEN);
    wire_put_str(&b, l->remote ? "" : d->upath);
    wire_put_str(&b, l->remote ? d->addr : "");
    wire_put_u32(&b, l->remote ? d->port : 0);
    if (b.err != 0 || pvm__daemon_write(&h, b.data, b.len) != 0)
        link_dead(l);
    wire_wbuf_free(&b);
}

/* A ring is wanted with tid: a task of our host, and neither rings nor
 * routing through the daemons forced. */
static int
shm_wanted(int tid)
{
    return WIRE_TID_HOST(tid) == WIRE_TID_HOST(pvm__ctx.mytid) &&
           pvm__opt(PvmRoute) != PvmDontRoute && pvm__shm_ring_size() > 0;
}

/*
 * Make our ring of size bytes to l's peer and send it the descriptors on
 * the link; it takes the place of the ring we had, if any, which holds
 * only whole frames (the peer reads them first).  0, or -1 with no ring
 * made (the old one goes on) or the link dead.
 */
static int
shm_offer(struct pvm__link *l, size_t size)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_SHM,
                          .src = (uint32_t)pvm__ctx.mytid, .dst = (uint32_t)l->tid };
    struct pvm__shm *r;
    int fds[PVM__SHM_NFD], rc;

    if (size == 0 || pvm__shm_create(size, &r, fds) != 0) {
        if (l->tx == NULL)
            l->shm_off = 1;     /* the link carries the messages */
        return -1;
    }
    (void)pvm__shm_ref_offer(r, peer_pid(l->fd));
    rc = pvm__link_write_fds(l, &h, fds, PVM__SHM_NFD);
    close(fds[0]);
    if (rc != 0 || l->state != PVM__LINK_UP) {
        pvm__shm_close(r);
        if (l->state != PVM__LINK_DEAD)
            link_dead(l);
        return -1;
    }
    pvm__shm_close(l->tx);
    l->tx = r;
    return 0;
}

/*
 * A frame of more than half the ring: a larger ring, so that a message
 * and the next fit while the peer computes (a sender would otherwise wait
 * for it; the liquid runtime's ghosts at 128^3 were 1.3x slower through
 * 512 KB rings than through Unix sockets).  Up to pvm__shm_ring_max.  The
 * caller passes half a burst (pvm__link_burst) where that is larger, so
 * that the ring holds a burst of messages as it would one message.
 */
static void
shm_grow(struct pvm__link *l, size_t len)
{
    size_t size = pvm__shm_size(l->tx), max = pvm__shm_ring_max();

    if (len + WIRE_HDR_LEN <= size / 2 || size >= max || pvm__shm_torn(l->tx))
        return;
    while (size < 2 * (len + WIRE_HDR_LEN) && size < max)
        size <<= 1;
    (void)shm_offer(l, size);
}

/* The writer's wait for room in l's ring: the one wait, its eventfd in it. */
static int
shm_wait(struct pvm__shm *r, void *arg)
{
    struct pvm__link *l = arg;
    int dready = 0, rc;

    (void)r;
    l->tx_wait = 1;
    rc = pvm__poll_wait(-1, -1, &dready, NULL);
    if (rc >= 0 && dready)
        rc = pvm__pump_daemon(NULL, NULL);
    l->tx_wait = 0;
    if (rc < 0)
        return rc;
    return l->state == PVM__LINK_UP ? 0 : -ECONNRESET;
}

/*
 * One message into l's ring, as pvm__direct_send answers: 1 when it is
 * whole in the ring; 0 when the ring failed before any of it was
 * published (the daemons take it whole); or the error, when the ring
 * failed with part of it published.  The link is dead after a failure.
 */
static int
shm_send(struct pvm__link *l, struct wire_hdr *h, const void *body, size_t len)
{
    int rc, torn;

    l->tx_busy = 1;
    pvm__ctx.io_depth++;
    rc = pvm__shm_write(l->tx, h, body, len, shm_wait, l);
    pvm__ctx.io_depth--;
    l->tx_busy = 0;
    if (rc == 0 && l->state == PVM__LINK_UP)
        return 1;
    /*
     * A frame whole in the ring is the reader's, even if the link died
     * meanwhile (it takes whole frames before it closes the ring): never a
     * second copy.  Part of a frame is dropped by the reader, and the
     * sender hears of the loss (pvm_shm.c says why it is not resent).
     */
    torn = pvm__shm_torn(l->tx);
    if (l->state != PVM__LINK_DEAD)
        link_dead(l);
    pvm__shm_close(l->tx);
    l->tx = NULL;
    if (rc == 0)
        return 1;
    return torn ? rc : 0;
}

void
pvm__link_burst(int tid, size_t bytes, int count)
{
    struct pvm__link *l = link_find(tid);

    if (l != NULL)
        l->burst = bytes + (size_t)(count > 0 ? count : 0) * WIRE_HDR_LEN;
}

int
pvm__link_settled(int tid)
{
    struct pvm__link *l = link_find(tid);

    if (l == NULL)
        return !(pvm__opt(PvmRoute) == PvmRouteDirect || shm_wanted(tid)) ||
               tid == pvm__ctx.mytid || !WIRE_TID_IS_TASK(tid);
    return l->state == PVM__LINK_UP || l->state == PVM__LINK_DEAD;
}

int
pvm__direct_linked(int tid)
{
    struct pvm__link *l = link_find(tid);

    return l != NULL && l->state == PVM__LINK_UP;
}

int
pvm__direct_send(int tid, struct wire_hdr *h, const void *body, size_t len)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__link *l;
    struct wire_hdr mark = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_MARK,
                             .src = (uint32_t)pvm__ctx.mytid, .dst = (uint32_t)tid };

    /* Nothing may come between the parts of a frame being written. */
    if (tid == pvm__ctx.mytid || !WIRE_TID_IS_TASK(tid) || pvm__ctx.io_depth > 0)
        return 0;
    if ((l = link_find(tid)) == NULL) {
        if (pvm__opt(PvmRoute) == PvmRouteDirect || shm_wanted(tid))
            ask(tid);
        return 0;
    }
    if (l->state == PVM__LINK_READY && l->ctl_len == 0) {
        /* Behind everything routed to tid so far; the link from now on. */
        if (pvm__daemon_write(&mark, NULL, 0) != 0)
            return 0;
        l->state = PVM__LINK_UP;
    }
    if (l->state != PVM__LINK_UP)
        return 0;
    if (!l->remote && l->tx == NULL && !l->shm_off)
        (void)shm_offer(l, pvm__shm_ring_size());
    if (l->tx != NULL && l->state == PVM__LINK_UP)
        shm_grow(l, len < l->burst / 2 ? l->burst / 2 : len);
    if (l->tx != NULL && l->state == PVM__LINK_UP)
        return shm_send(l, h, body, len);
    if (l->state != PVM__LINK_UP)
        return 0;
    if (pvm__link_write(d, l, h, body, len) == 0)
        return 1;
    if (l->state != PVM__LINK_DEAD)
        link_dead(l);
    return 0;
}

/* ---- the end ---- */

static long long
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read and drop what the peers in p sent; close the links whose peer closed. */
static void
linger_drain(struct pvm__direct *d, const struct pollfd *p, int n)
{
    for (int i = 0; i < n; i++) {
        if (!(p[i].revents & (POLLIN | POLLERR | POLLHUP)))
            continue;
        ssize_t k = recv(p[i].fd, d->scratch, sizeof(d->scratch), MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
            /* The peer closed: nothing more can reach it. */
            for (struct pvm__link *l = d->links; l; l = l->next)
                if (l->fd == p[i].fd)
                    pvm__link_close_io(l);
        }
    }
}

/*
 * Before TCP links close: a socket closed with unread bytes in it sends a
 * reset, and Linux then throws away what it had not sent yet, which would
 * cut our last message short.  So the links stop sending (FIN after our
 * bytes), what still comes in is read and dropped, and we wait until the
 * peers' kernels have every byte we wrote, giving up after
 * LINK_LINGER_MS without progress (a peer host gone).  A Unix socket
 * hands its bytes over at write time and needs none of this.
 */
static void
linger(struct pvm__direct *d)
{
    long long last = now_ms();
    int best = -1;

    for (struct pvm__link *l = d->links; l; l = l->next)
        if (l->fd >= 0 && l->remote)
            shutdown(l->fd, SHUT_WR);
    for (;;) {
        struct pollfd p[64];
        int n = 0, left = 0, out;

        for (struct pvm__link *l = d->links; l && n < 64; l = l->next) {
            if (l->fd < 0 || !l->remote || ioctl(l->fd, TIOCOUTQ, &out) != 0 || out == 0)
                continue;
            left += out;
            p[n++] = (struct pollfd){ .fd = l->fd, .events = POLLIN };
        }
        if (n == 0)
            return;
        if (best < 0 || left < best) {
            best = left;
            last = now_ms();
        } else if (now_ms() - last > LINK_LINGER_MS) {
            return;
        }
        if (poll(p, (nfds_t)n, 100) > 0)
            linger_drain(d, p, n);
    }
}

/* A program that returns from main without pvm_exit loses no message either. */
static void
direct_atexit(void)
{
    if (pvm__ctx.direct != NULL)
        linger(pvm__ctx.direct);
}

void
pvm__direct_close(void)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__conreq *c;
    struct pvm__link *l;

    if (d == NULL)
        return;
    linger(d);
    while ((l = d->links) != NULL) {
        d->links = l->next;
        link_free(l);
    }
    while ((c = d->conreqs) != NULL) {
        d->conreqs = c->next;
        free(c);
    }
    if (d->ufd >= 0)
        close(d->ufd);
    if (d->ufd_bound)
        unlink(d->upath);
    if (d->tfd >= 0)
        close(d->tfd);
    pvm__link_tls_free(d);
    OPENSSL_cleanse(d->key, sizeof(d->key));
    free(d->plink);
    free(d->fds);
    free(d);
    pvm__ctx.direct = NULL;
    pvm__poll_source(NULL);
}

int
pvm__direct_fds(int **fds)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pvm__link *l;
    size_t n = 3;
    int k = 0, *f;

    if (d == NULL) {
        pvm__ctx.getfds[0] = pvm__ctx.fd;
        *fds = pvm__ctx.getfds;
        return 1;
    }
    for (l = d->links; l; l = l->next)
        n += 2;
    if ((f = realloc(d->fds, n * sizeof(*f))) == NULL)
        return -ENOMEM;
    /* A program that waits on these outside the library must be woken by
     * the rings too: their writers ring every time from now on. */
    d->sticky = 1;
    d->fds = f;
    f[k++] = pvm__ctx.fd;
    if (d->ufd >= 0)
        f[k++] = d->ufd;
    if (d->tfd >= 0)
        f[k++] = d->tfd;
    for (l = d->links; l; l = l->next) {
        if (l->fd >= 0)
            f[k++] = l->fd;
        if (l->rx != NULL) {
            pvm__shm_sticky(l->rx);
            f[k++] = pvm__shm_data_fd(l->rx);
        }
    }
    *fds = f;
    return k;
}
