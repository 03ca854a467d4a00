/*
 * pvm_direct.c - PvmRouteDirect: links between two tasks that skip the
 * daemons (DESIGN.md, Routing), and the one wait of the library that
 * polls the daemon's socket, the links and the listeners together.
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
 * daemons again; the one whose write failed is sent that way whole (the
 * receiver drops a partial frame).  Only then can order break, and only
 * for a peer that is most likely dead: its daemon tells the PvmTaskExit
 * watchers.
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
 * I/O.  Links are non-blocking.  Frames are assembled incrementally: small
 * ones are read in batches through a staging buffer, a large body straight
 * into the buffer the message keeps; over TLS, OpenSSL reads ahead what the
 * socket holds.  Writes go from the caller's bytes (writev on a Unix
 * socket; on TLS the header rides in the first full record and the rest is
 * one SSL_write of full records, gathered by the link's BIO into sends of
 * up to DIRECT_TLS_TXBUF bytes, all sent before link_write returns).  A
 * frame read whole with nothing left over ends the read: no extra call
 * only to hear EAGAIN.  A write that
 * would block reads every other socket meanwhile, so two tasks sending
 * large messages to each other both progress; handlers and frames to the
 * daemon wait until it is over (pvm__ctx.io_depth).
 */
#include "pvm_int.h"
#include "wire_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define DIRECT_STAGE (64 * 1024)    /* per link: small frames are read in batches */
#define DIRECT_ACCEPT_MAX 16        /* connections that have not said who they are */
#define DIRECT_FRAMES_MAX 256       /* frames read from one link per wait */
#define DIRECT_TLS_RECORD 16384     /* the largest TLS record's plaintext */
#define DIRECT_MAX_FRAME (1u << 30) /* when the VM's max_message is unknown */
#define DIRECT_SOCKBUF (1 << 20)    /* socket buffers: a 1 MB message in few wakeups */
/*
 * TLS output is gathered and sent in writes of up to this many bytes, not
 * one send per 16 KB record: on a veth or a NIC every send is a packet that
 * crosses the whole stack, and per packet, not per byte, is where the time
 * goes (bench/pvm_timing_floor: 1 MB round trips ~1.3 ms with a send per
 * record, ~0.9 ms with 128 KB writes).
 */
#define DIRECT_TLS_TXBUF (128 * 1024)
/* Read ahead: OpenSSL reads what the socket holds, many records at once. */
#define DIRECT_TLS_RXBUF (64 * 1024)
#define DIRECT_HOST_MAX 256
#define DIRECT_LINGER_MS 10000      /* at the end: how long without progress we wait */

#define TID_HOST(t) (((unsigned)(t) >> 18) & 0xfffu)
#define TID_IS_TASK(t) (((unsigned)(t) & 0xc0000000u) == 0 && ((t) & 0x3ffff) != 0)

enum link_state {
    LINK_ASKED,         /* we sent CONREQ: the peer is to connect */
    LINK_ACCEPTED,      /* a connection to our listener: TLS, then HELLO (tid still 0) */
    LINK_CONNECTING,    /* we connect, as asked */
    LINK_HANDSHAKE,     /* we connected: TLS handshake */
    LINK_WAIT_ACK,      /* we sent HELLO */
    LINK_READY,         /* checked both ways; our MARK is not sent yet */
    LINK_UP,            /* our MARK went: our messages to the peer take the link */
    LINK_DEAD           /* refused, failed or closed: the daemons route */
};

struct link {
    struct link *next;
    int tid;                    /* the peer; 0 while an accepted connection is unknown */
    enum link_state state;
    int fd;
    SSL *ssl;                   /* between hosts; NULL on a Unix socket */
    int remote;                 /* the peer is on another host */
    int want_write;             /* the TLS handshake waits for the socket to take bytes */
    int more;                   /* input left unread (frame cap): poll without waiting */
    int nak;                    /* a NAK is to go to the peer through the daemons */
    int marked;                 /* the peer's MARK arrived: its link messages are in order */
    unsigned long serial;       /* age, to drop the oldest unknown connection */
    unsigned char token[WIRE_DIRECT_TOKEN];
    char host[DIRECT_HOST_MAX]; /* the peer's host: its certificate must name it */
    struct pvm__msg *held, *held_tail;  /* link messages that came before the MARK */
    /* The frame being read. */
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

/* A peer's CONREQ, answered where requests to the daemon are allowed. */
struct conreq {
    struct conreq *next;
    int tid;
    unsigned char token[WIRE_DIRECT_TOKEN];
    char upath[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char addr[64];
    uint32_t port;
};

struct pvm__direct {
    struct link *links;
    unsigned long serial;
    int ufd, tfd;               /* listeners, -1 until a link needs them */
    int ufd_bound;              /* we created upath: unlink it at the end */
    /* From the daemon (WIRE_T_TASK_DIRECT), once. */
    int have_info;
    char addr[64];
    char upath[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char ca[WIRE_STR_MAX], cert[WIRE_STR_MAX], key[WIRE_STR_MAX];
    uint32_t port;
    SSL_CTX *tls;
    BIO_METHOD *bio;
    struct conreq *conreqs, *conreqs_tail;
    int work;                   /* conreqs or NAKs wait for pvm__direct_work */
    unsigned char scratch[DIRECT_TLS_RECORD];
    /* Scratch for waits and pvm_getfds. */
    struct pollfd *pfd;
    struct link **plink;
    size_t pcap;
    int *fds;
};

static void link_input(struct pvm__direct *d, struct link *l);
static void direct_atexit(void);

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
    if (!pvm__ctx.direct_atexit) {
        pvm__ctx.direct_atexit = 1;
        atexit(direct_atexit);
    }
    return d;
}

int
pvm__direct_active(void)
{
    const struct pvm__direct *d = pvm__ctx.direct;

    return d != NULL && (d->links != NULL || d->ufd >= 0 || d->tfd >= 0);
}

/* The link with a known peer tid (never an unknown accepted one). */
static struct link *
link_find(int tid)
{
    struct link *l;

    if (pvm__ctx.direct == NULL || tid == 0)
        return NULL;
    for (l = pvm__ctx.direct->links; l; l = l->next)
        if (l->tid == tid)
            return l;
    return NULL;
}

static struct link *
link_new(struct pvm__direct *d, int tid, enum link_state state)
{
    struct link *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    l->tid = tid;
    l->state = state;
    l->fd = -1;
    l->remote = TID_HOST(tid) != TID_HOST(pvm__ctx.mytid);
    l->serial = ++d->serial;
    l->next = d->links;
    d->links = l;
    return l;
}

static void
link_close_io(struct link *l)
{
    if (l->ssl != NULL)
        SSL_free(l->ssl);       /* no close_notify: the peer sees EOF, as from a crash */
    l->ssl = NULL;
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    free(l->stage);
    l->stage = NULL;
    free(l->body);
    l->body = NULL;
    l->in_frame = 0;
    l->st_off = l->st_len = 0;
    l->ctl_len = 0;
    l->more = 0;
}

/*
 * The link will not carry messages: the daemons route from now on.  A
 * connector that failed tells the asker (a NAK, sent later).
 */
static void
link_dead(struct link *l)
{
    if (l->state == LINK_CONNECTING || l->state == LINK_HANDSHAKE || l->state == LINK_WAIT_ACK) {
        l->nak = 1;
        pvm__ctx.direct->work = 1;
    }
    l->state = LINK_DEAD;
    link_close_io(l);
}

static void
msgs_free(struct pvm__msg *m)
{
    for (struct pvm__msg *n; m; m = n) {
        n = m->next;
        pvm__msg_free(m);
    }
}

/* Forget unknown connections that died or were handed to their link. */
static void
sweep(struct pvm__direct *d)
{
    struct link **pp = &d->links, *l;

    while ((l = *pp) != NULL) {
        if (l->tid == 0 && l->state == LINK_DEAD) {
            *pp = l->next;
            link_close_io(l);
            msgs_free(l->held);
            free(l);
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

/* ---- TLS ---- */

/*
 * The link's BIO.  OpenSSL's socket BIO writes with write(), which raises
 * SIGPIPE on a peer that is gone; a library may not change the program's
 * signals, so ours sends with MSG_NOSIGNAL.  It also gathers records: the
 * records OpenSSL writes go into tx, which is sent as soon as it is written
 * to outside a batch, and when full or at the end of a batch (link_write)
 * inside one.  tx belongs to the BIO, so it moves with the SSL when an
 * accepted connection becomes its link (on_hello).
 */
struct tx {
    int fd;
    int batch;                  /* inside link_write: send when full only */
    unsigned char *buf;
    size_t off, len;            /* unsent bytes: buf[off..len) */
};

/* Send what tx holds without waiting: 0 all sent, -EAGAIN, or -errno. */
static int
tx_flush(struct tx *t)
{
    while (t->off < t->len) {
        ssize_t k = send(t->fd, t->buf + t->off, t->len - t->off, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        t->off += (size_t)k;
    }
    t->off = t->len = 0;
    return 0;
}

static struct tx *
link_tx(const struct link *l)
{
    return l->ssl != NULL ? BIO_get_data(SSL_get_wbio(l->ssl)) : NULL;
}

static int
tx_pending(const struct link *l)
{
    const struct tx *t = link_tx(l);

    return t != NULL && t->off < t->len;
}

static int
bio_write(BIO *b, const char *buf, int len)
{
    struct tx *t = BIO_get_data(b);
    int rc;

    BIO_clear_retry_flags(b);
    if (len <= 0)
        return 0;
    if (t->buf == NULL && (t->buf = malloc(DIRECT_TLS_TXBUF)) == NULL)
        return -1;
    if (t->len + (size_t)len > DIRECT_TLS_TXBUF) {
        if ((rc = tx_flush(t)) != 0 && rc != -EAGAIN)
            return -1;
        if (t->off > 0) {
            memmove(t->buf, t->buf + t->off, t->len - t->off);
            t->len -= t->off;
            t->off = 0;
        }
        if (t->len + (size_t)len > DIRECT_TLS_TXBUF) {
            /* OpenSSL offers the same record again when we say retry. */
            BIO_set_retry_write(b);
            return -1;
        }
    }
    memcpy(t->buf + t->len, buf, (size_t)len);
    t->len += (size_t)len;
    /* Outside a batch the bytes go now; what the socket does not take
     * waits in tx for POLLOUT (pvm__direct_wait). */
    if (!t->batch && (rc = tx_flush(t)) != 0 && rc != -EAGAIN)
        return -1;
    return len;
}

static int
bio_read(BIO *b, char *buf, int len)
{
    struct tx *t = BIO_get_data(b);
    ssize_t k = recv(t->fd, buf, (size_t)len, MSG_DONTWAIT);

    BIO_clear_retry_flags(b);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    return k < 0 ? -1 : (int)k;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    struct tx *t = BIO_get_data(b);
    int rc;

    (void)num;
    (void)ptr;
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        /* The handshake flushes after each flight. */
        BIO_clear_retry_flags(b);
        if ((rc = tx_flush(t)) == 0)
            return 1;
        if (rc == -EAGAIN)
            BIO_set_retry_write(b);
        return 0;
    case BIO_CTRL_WPENDING:
        return (long)(t->len - t->off);
    default:
        return 0;
    }
}

static int
bio_create(BIO *b)
{
    struct tx *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return 0;
    t->fd = -1;
    BIO_set_data(b, t);
    BIO_set_init(b, 1);
    return 1;
}

static int
bio_destroy(BIO *b)
{
    struct tx *t = BIO_get_data(b);

    if (t != NULL) {
        free(t->buf);     /* ciphertext: nothing to wipe */
        free(t);
    }
    BIO_set_data(b, NULL);
    return 1;
}

/* The daemons' policy (vmd_tls_ctx_new): TLS 1.3, both sides show a
 * certificate of the cluster CA, the CA file the only anchor. */
static int
tls_ctx(struct pvm__direct *d)
{
    char why[256];
    SSL_CTX *c;
    int rc;

    if (d->tls != NULL)
        return 0;
    /* The daemons' policy, and the same checks of the key file. */
    if ((rc = wire_tls_ctx_new(d->ca, d->cert, d->key, &c, why, sizeof(why))) != 0)
        return rc == -ENOMEM ? -ENOMEM : WIRE_ECONF;
    d->bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pvm direct link");
    if (d->bio == NULL || BIO_meth_set_write(d->bio, bio_write) != 1 ||
        BIO_meth_set_read(d->bio, bio_read) != 1 || BIO_meth_set_ctrl(d->bio, bio_ctrl) != 1 ||
        BIO_meth_set_create(d->bio, bio_create) != 1 ||
        BIO_meth_set_destroy(d->bio, bio_destroy) != 1) {
        BIO_meth_free(d->bio);
        d->bio = NULL;
        SSL_CTX_free(c);
        return -ENOMEM;
    }
    d->tls = c;
    return 0;
}

static int
tls_attach(struct pvm__direct *d, struct link *l, int client)
{
    BIO *b;

    if ((l->ssl = SSL_new(d->tls)) == NULL || (b = BIO_new(d->bio)) == NULL) {
        SSL_free(l->ssl);
        l->ssl = NULL;
        return -ENOMEM;
    }
    ((struct tx *)BIO_get_data(b))->fd = l->fd;
    SSL_set_bio(l->ssl, b, b);
    /* Whole records are read as they come, not a header then a body. */
    SSL_set_default_read_buffer_len(l->ssl, DIRECT_TLS_RXBUF);
    SSL_set_read_ahead(l->ssl, 1);
    if (!client) {
        SSL_set_accept_state(l->ssl);
        return 0;
    }
    SSL_set_connect_state(l->ssl);
    /* The asker must hold its host's certificate. */
    return SSL_set1_host(l->ssl, l->host) == 1 ? 0 : -ENOMEM;
}

/* 1 when the handshake is done, 0 to wait for the socket, or an error. */
static int
tls_step(struct link *l)
{
    int r, e;

    ERR_clear_error();
    if ((r = SSL_do_handshake(l->ssl)) == 1) {
        l->want_write = 0;
        return 1;
    }
    e = SSL_get_error(l->ssl, r);
    l->want_write = e == SSL_ERROR_WANT_WRITE;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    ERR_clear_error();
    return WIRE_ETLS;
}

/* ---- sockets ---- */

static void
sock_tune(int fd, int tcp)
{
    int one = 1, size = DIRECT_SOCKBUF;

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
        listen(fd, DIRECT_ACCEPT_MAX) != 0) {
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
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, DIRECT_ACCEPT_MAX) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    d->tfd = fd;
    d->port = ntohs(sa.sin_port);
    return 0;
}

/* ---- reading and writing a link ---- */

/* Bytes read, 0 at EOF, -EAGAIN when none yet, or another error. */
static ssize_t
link_recv(struct link *l, void *buf, size_t n)
{
    ssize_t k;
    int e;

    if (l->ssl != NULL) {
        size_t got = 0;

        ERR_clear_error();
        if (SSL_read_ex(l->ssl, buf, n, &got) == 1)
            return (ssize_t)got;
        e = SSL_get_error(l->ssl, 0);
        ERR_clear_error();
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return -EAGAIN;
        return e == SSL_ERROR_ZERO_RETURN ? 0 : -ECONNRESET;
    }
    k = recv(l->fd, buf, n, MSG_DONTWAIT);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
    return k;
}

/*
 * Write the HELLO or ACK in ctl without waiting: 1 written, 0 not yet, or
 * an error.  TLS takes it whole or not at all, and a retry repeats it.
 */
static int
ctl_flush(struct link *l)
{
    ssize_t k;
    size_t w;
    int e;

    if (l->ctl_len == 0)
        return 1;
    if (l->ssl != NULL) {
        ERR_clear_error();
        if (SSL_write_ex(l->ssl, l->ctl, l->ctl_len, &w) == 1) {
            l->ctl_len = 0;
            return 1;
        }
        e = SSL_get_error(l->ssl, 0);
        ERR_clear_error();
        return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? 0 : -ECONNRESET;
    }
    k = send(l->fd, l->ctl, l->ctl_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
    /* A control frame is smaller than any socket buffer; a short write of
     * one moves the rest down. */
    memmove(l->ctl, l->ctl + k, l->ctl_len - (size_t)k);
    l->ctl_len -= (size_t)k;
    return l->ctl_len == 0;
}

static void
ctl_set(struct link *l, int tag, const unsigned char *token)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = tag, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)l->tid, .len = token ? WIRE_DIRECT_TOKEN : 0 };

    wire_hdr_pack(&h, l->ctl);
    if (token != NULL)
        memcpy(l->ctl + WIRE_HDR_LEN, token, WIRE_DIRECT_TOKEN);
    l->ctl_len = WIRE_HDR_LEN + h.len;
}

/* The connection is made (and TLS up, between hosts): say who we are. */
static void
say_hello(struct link *l)
{
    ctl_set(l, WIRE_DIRECT_HELLO, l->token);
    l->state = LINK_WAIT_ACK;
    if (ctl_flush(l) < 0)
        link_dead(l);
}

/*
 * Wait until l's socket takes bytes (or, want_read, gives some), reading
 * everything else meanwhile.  0, or an error if the link died meanwhile.
 */
static int
link_wait(struct link *l, int want_read)
{
    int dready = 0, wready = 0, rc;

    rc = pvm__direct_wait(-1, want_read ? -1 : l->fd, &dready, &wready);
    if (rc >= 0 && dready)
        rc = pvm__pump_daemon(NULL, NULL);
    if (rc < 0)
        return rc;
    return l->state == LINK_UP && l->fd >= 0 ? 0 : -ECONNRESET;
}

static int
tls_write_all(struct link *l, const void *p, size_t n)
{
    size_t w;
    int e, rc;

    for (;;) {
        ERR_clear_error();
        if (SSL_write_ex(l->ssl, p, n, &w) == 1)
            return 0;
        e = SSL_get_error(l->ssl, 0);
        ERR_clear_error();
        if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
            return -ECONNRESET;
        /* A retry must carry the same bytes: p and n do not change. */
        if ((rc = link_wait(l, e == SSL_ERROR_WANT_READ)) != 0)
            return rc;
    }
}

/* One frame on an UP link, from the caller's bytes.  0 or an error. */
static int
link_write(struct pvm__direct *d, struct link *l, struct wire_hdr *h, const void *body,
           size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    int rc = 0;

    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    pvm__ctx.io_depth++;
    if (l->ssl != NULL) {
        /* The header rides in the first full record, not one of its own. */
        size_t first = len < sizeof(d->scratch) - WIRE_HDR_LEN ? len
                                                               : sizeof(d->scratch) - WIRE_HDR_LEN;
        struct tx *t = link_tx(l);

        memcpy(d->scratch, hdr, WIRE_HDR_LEN);
        if (first > 0)
            memcpy(d->scratch + WIRE_HDR_LEN, body, first);
        t->batch = 1;
        rc = tls_write_all(l, d->scratch, WIRE_HDR_LEN + first);
        if (rc == 0 && len > first)
            rc = tls_write_all(l, (const unsigned char *)body + first, len - first);
        /* The link may have died (and its SSL gone) while we waited. */
        if ((t = link_tx(l)) != NULL)
            t->batch = 0;
        /* All of it on its way before we return, as without the batch. */
        while (rc == 0 && tx_pending(l)) {
            int f = tx_flush(link_tx(l));

            if (f == -EAGAIN)
                rc = link_wait(l, 0);
            else if (f != 0)
                rc = f;
        }
    } else {
        struct iovec iov[2] = { { hdr, WIRE_HDR_LEN }, { (void *)(uintptr_t)body, len } };
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };

        while (mh.msg_iovlen > 0) {
            ssize_t k = sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if ((rc = link_wait(l, 0)) != 0)
                    break;
                continue;
            }
            if (k < 0) {
                rc = -errno;
                break;
            }
            while (mh.msg_iovlen > 0 && (size_t)k >= mh.msg_iov[0].iov_len) {
                k -= (ssize_t)mh.msg_iov[0].iov_len;
                mh.msg_iov++;
                mh.msg_iovlen--;
            }
            if (mh.msg_iovlen > 0) {
                mh.msg_iov[0].iov_base = (char *)mh.msg_iov[0].iov_base + k;
                mh.msg_iov[0].iov_len -= (size_t)k;
            }
        }
    }
    pvm__ctx.io_depth--;
    return rc;
}

/* ---- frames that arrive on links ---- */

/* An accepted connection said HELLO: it becomes the link of its request. */
static void
on_hello(struct pvm__direct *d, struct link *c, const struct wire_hdr *h, unsigned char *body)
{
    struct link *a = link_find((int)h->src);
    X509 *cert;

    if (h->type != WIRE_T_DIRECT || h->tag != WIRE_DIRECT_HELLO || h->len != WIRE_DIRECT_TOKEN ||
        a == NULL || a->state != LINK_ASKED || a->remote != (c->ssl != NULL) ||
        CRYPTO_memcmp(a->token, body, WIRE_DIRECT_TOKEN) != 0) {
        link_dead(c);
        return;
    }
    if (c->ssl != NULL &&
        ((cert = SSL_get0_peer_certificate(c->ssl)) == NULL ||
         X509_check_host(cert, a->host, strlen(a->host), 0, NULL) != 1)) {
        link_dead(c);
        return;
    }
    a->fd = c->fd;
    a->ssl = c->ssl;
    a->stage = c->stage;
    a->st_off = c->st_off;
    a->st_len = c->st_len;
    c->fd = -1;
    c->ssl = NULL;
    c->stage = NULL;
    c->state = LINK_DEAD;       /* swept */
    a->state = LINK_READY;
    ctl_set(a, WIRE_DIRECT_ACK, NULL);
    if (ctl_flush(a) < 0) {
        link_dead(a);
        return;
    }
    link_input(d, a);           /* bytes that came behind the HELLO */
}

/* 0 to read on, 1 when the link changed under the reader. */
static int
link_frame(struct pvm__direct *d, struct link *l, unsigned char *body)
{
    const struct wire_hdr *h = &l->h;
    struct pvm__msg *m;

    switch (l->state) {
    case LINK_ACCEPTED:
        on_hello(d, l, h, body);
        free(body);
        return 1;
    case LINK_WAIT_ACK:
        free(body);
        if (h->type != WIRE_T_DIRECT || h->tag != WIRE_DIRECT_ACK || h->len != 0 ||
            (int)h->src != l->tid) {
            link_dead(l);
            return 1;
        }
        l->state = LINK_READY;
        return 0;
    case LINK_READY:
    case LINK_UP:
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
    default:
        free(body);
        link_dead(l);
        return 1;
    }
}

static void
link_input(struct pvm__direct *d, struct link *l)
{
    uint32_t max = pvm__ctx.max_msg && pvm__ctx.max_msg < DIRECT_MAX_FRAME
                       ? (uint32_t)pvm__ctx.max_msg : DIRECT_MAX_FRAME;
    int frames = 0;
    ssize_t k;

    l->more = 0;
    if (l->stage == NULL && (l->stage = malloc(DIRECT_STAGE)) == NULL) {
        link_dead(l);
        return;
    }
    while (l->fd >= 0) {
        if (!l->in_frame) {
            size_t avail = l->st_len - l->st_off;

            if (frames >= DIRECT_FRAMES_MAX) {
                l->more = 1;
                return;
            }
            if (avail < WIRE_HDR_LEN) {
                memmove(l->stage, l->stage + l->st_off, avail);
                l->st_off = 0;
                l->st_len = avail;
                k = link_recv(l, l->stage + avail, DIRECT_STAGE - avail);
                if (k == -EAGAIN)
                    return;
                if (k <= 0) {
                    link_dead(l);
                    return;
                }
                l->st_len += (size_t)k;
                continue;
            }
            /* Until the peer has shown its token, only HELLO's size is
             * believed: nobody unknown makes us reserve max_message. */
            if (wire_hdr_unpack(l->stage + l->st_off,
                                l->state == LINK_ACCEPTED ? WIRE_DIRECT_TOKEN : max, &l->h) != 0 ||
                (l->h.type != WIRE_T_MSG && l->h.type != WIRE_T_DIRECT)) {
                link_dead(l);
                return;
            }
            l->st_off += WIRE_HDR_LEN;
            l->got = 0;
            l->body = NULL;
            if (l->h.len > 0 && (l->body = malloc(l->h.len)) == NULL) {
                link_dead(l);
                return;
            }
            l->in_frame = 1;
        }
        while (l->got < l->h.len) {
            size_t need = l->h.len - l->got, avail = l->st_len - l->st_off;

            if (avail > 0) {
                size_t n = avail < need ? avail : need;
                memcpy(l->body + l->got, l->stage + l->st_off, n);
                l->st_off += n;
                l->got += n;
                continue;
            }
            if (need >= DIRECT_STAGE / 4) {
                /* Straight into the message's own buffer. */
                k = link_recv(l, l->body + l->got, need);
                if (k > 0)
                    l->got += (size_t)k;
            } else {
                l->st_off = l->st_len = 0;
                k = link_recv(l, l->stage, DIRECT_STAGE);
                if (k > 0)
                    l->st_len = (size_t)k;
            }
            if (k == -EAGAIN)
                return;
            if (k <= 0) {
                link_dead(l);   /* a partial frame is dropped with the link */
                return;
            }
        }
        unsigned char *body = l->body;
        l->body = NULL;
        l->in_frame = 0;
        frames++;
        if (link_frame(d, l, body) != 0)
            return;
        /*
         * Nothing read is left over: stop here rather than ask the socket
         * once more only to hear EAGAIN.  A request and its reply cost one
         * read each; whatever came meanwhile makes the next poll return.
         */
        if (l->st_off == l->st_len && (l->ssl == NULL || !SSL_has_pending(l->ssl)))
            return;
    }
}

/* A connection of ours is made: TLS between hosts, then HELLO. */
static void
connected(struct pvm__direct *d, struct link *l)
{
    if (!l->remote) {
        say_hello(l);
        return;
    }
    if (tls_attach(d, l, 1) != 0) {
        link_dead(l);
        return;
    }
    l->state = LINK_HANDSHAKE;
}

static void
link_service(struct pvm__direct *d, struct link *l, short revents)
{
    int rc;

    if (l->state == LINK_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);

        if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
            return;
        if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            link_dead(l);
            return;
        }
        connected(d, l);
    }
    if (l->fd >= 0 && l->ssl != NULL && !SSL_is_init_finished(l->ssl)) {
        if ((rc = tls_step(l)) < 0) {
            link_dead(l);
            return;
        }
        if (rc == 0)
            return;
        if (l->state == LINK_HANDSHAKE)
            say_hello(l);
    }
    if (l->fd >= 0 && l->ctl_len > 0 && ctl_flush(l) < 0) {
        link_dead(l);
        return;
    }
    if (l->fd >= 0 && tx_pending(l) && (rc = tx_flush(link_tx(l))) != 0 && rc != -EAGAIN) {
        link_dead(l);
        return;
    }
    if (l->fd >= 0)
        link_input(d, l);
}

/* New connections to a listener; each must say HELLO before it counts. */
static void
accept_on(struct pvm__direct *d, int lfd, int remote)
{
    int i, fd;

    for (i = 0; i < DIRECT_ACCEPT_MAX && (fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
                                                       SOCK_CLOEXEC)) >= 0; i++) {
        struct link *l, *oldest = NULL;
        int unknown = 0;

        if (!remote) {
            struct ucred cred;
            socklen_t clen = sizeof(cred);

            if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
                cred.uid != getuid()) {
                close(fd);
                continue;
            }
        }
        sock_tune(fd, remote);
        /* Connections that never say who they are do not pile up. */
        for (l = d->links; l; l = l->next) {
            if (l->state != LINK_ACCEPTED)
                continue;
            unknown++;
            if (oldest == NULL || l->serial < oldest->serial)
                oldest = l;
        }
        if (unknown >= DIRECT_ACCEPT_MAX)
            link_dead(oldest);
        if ((l = link_new(d, 0, LINK_ACCEPTED)) == NULL) {
            close(fd);
            continue;
        }
        l->fd = fd;
        l->remote = remote;
        if (remote && (d->tls == NULL || tls_attach(d, l, 0) != 0))
            link_dead(l);
    }
}

/* ---- the wait ---- */

static int
pcap_reserve(struct pvm__direct *d, size_t n)
{
    struct pollfd *p;
    struct link **k;

    if (n <= d->pcap)
        return 0;
    if ((p = realloc(d->pfd, n * sizeof(*p))) == NULL)
        return -ENOMEM;
    d->pfd = p;
    if ((k = realloc(d->plink, n * sizeof(*k))) == NULL)
        return -ENOMEM;
    d->plink = k;
    d->pcap = n;
    return 0;
}

int
pvm__direct_wait(int timeout_ms, int wfd, int *dready, int *wready)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct pollfd one[2], *pfd = one;
    struct link **plink = NULL, *l;
    size_t n = 0, nlinks = 0, i;
    int r, busy = 0, rc;

    *dready = 0;
    if (wready)
        *wready = 0;
    if (d != NULL) {
        for (l = d->links; l; l = l->next)
            nlinks++;
        if ((rc = pcap_reserve(d, nlinks + 3)) != 0)
            return rc;
        pfd = d->pfd;
        plink = d->plink;
    }
    if (pvm__ctx.fd >= 0) {
        pfd[n] = (struct pollfd){ .fd = pvm__ctx.fd,
                                  .events = POLLIN | (wfd == pvm__ctx.fd ? POLLOUT : 0) };
        if (plink)
            plink[n] = NULL;
        n++;
    }
    if (d != NULL) {
        if (d->ufd >= 0) {
            pfd[n] = (struct pollfd){ .fd = d->ufd, .events = POLLIN };
            plink[n++] = NULL;
        }
        if (d->tfd >= 0) {
            pfd[n] = (struct pollfd){ .fd = d->tfd, .events = POLLIN };
            plink[n++] = NULL;
        }
        for (l = d->links; l; l = l->next) {
            if (l->fd < 0)
                continue;
            short ev = POLLIN;
            if (l->state == LINK_CONNECTING || l->want_write || l->ctl_len > 0 || l->fd == wfd ||
                tx_pending(l))
                ev |= POLLOUT;
            /*
             * Input left unread (the frame cap) or plaintext OpenSSL holds:
             * look without waiting.  Not SSL_has_pending: with read-ahead
             * it is true for part of a record, which only the socket can
             * complete; link_input reads until OpenSSL wants the socket.
             */
            if (l->more || (l->ssl != NULL && SSL_pending(l->ssl) > 0))
                busy = 1;
            pfd[n] = (struct pollfd){ .fd = l->fd, .events = ev };
            plink[n++] = l;
        }
    }
    r = poll(pfd, (nfds_t)n, busy ? 0 : timeout_ms);
    if (r < 0 && errno != EINTR)
        return -errno;
    if (r < 0)
        return 1;       /* a signal: the caller looks at its clock and comes back */
    for (i = 0; i < n; i++) {
        short re = pfd[i].revents;

        if (pfd[i].fd == wfd && wready && (re & (POLLOUT | POLLERR | POLLHUP)))
            *wready = 1;
        if (pfd[i].fd == pvm__ctx.fd && (plink == NULL || plink[i] == NULL)) {
            if (re & (POLLIN | POLLERR | POLLHUP))
                *dready = 1;
            continue;
        }
        if (d == NULL)
            continue;
        if (plink[i] == NULL) {
            if (re & POLLIN)
                accept_on(d, pfd[i].fd, pfd[i].fd == d->tfd);
            continue;
        }
        l = plink[i];
        /* A link handed to another (HELLO) or closed by now is skipped. */
        if (l->fd != pfd[i].fd)
            continue;
        if (re != 0 || l->more || (l->ssl != NULL && SSL_pending(l->ssl) > 0))
            link_service(d, l, re);
    }
    if (d != NULL)
        sweep(d);
    return r > 0 || busy;
}

/* ---- what the daemons bring ---- */

static void
send_ctl_routed(int tid, int tag, const unsigned char *token)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = tag, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)tid };

    (void)pvm__daemon_write(&h, token, token ? WIRE_DIRECT_TOKEN : 0);
}

void
pvm__direct_from_daemon(const struct wire_hdr *h, unsigned char *body)
{
    struct pvm__direct *d;
    struct link *l = link_find((int)h->src);
    struct wire_rbuf r;
    struct conreq *c;
    const void *tok;

    switch (h->tag) {
    case WIRE_DIRECT_MARK:
        /* What the peer sent on the link so far is in order now. */
        if (l != NULL && !l->marked) {
            struct pvm__msg *m = l->held, *next;

            l->marked = 1;
            l->held = l->held_tail = NULL;
            for (; m; m = next) {
                next = m->next;
                m->next = NULL;
                pvm__inq_push(m);
            }
        }
        break;
    case WIRE_DIRECT_NAK:
        if (l != NULL && l->state == LINK_ASKED && h->len == WIRE_DIRECT_TOKEN &&
            CRYPTO_memcmp(l->token, body, WIRE_DIRECT_TOKEN) == 0)
            link_dead(l);
        break;
    case WIRE_DIRECT_CONREQ:
        if ((d = dir()) == NULL || !TID_IS_TASK(h->src) || (c = calloc(1, sizeof(*c))) == NULL)
            break;
        wire_rbuf_init(&r, body, h->len);
        if (wire_get_bytes(&r, &tok, WIRE_DIRECT_TOKEN) != 0 ||
            wire_get_str(&r, c->upath, sizeof(c->upath)) != 0 ||
            wire_get_str(&r, c->addr, sizeof(c->addr)) != 0 || wire_get_u32(&r, &c->port) != 0 ||
            c->port > 65535) {
            free(c);
            break;
        }
        memcpy(c->token, tok, WIRE_DIRECT_TOKEN);
        c->tid = (int)h->src;
        if (d->conreqs_tail)
            d->conreqs_tail->next = c;
        else
            d->conreqs = c;
        d->conreqs_tail = c;
        d->work = 1;
        break;
    default:
        break;          /* a later version's: nothing to do */
    }
    free(body);
}

/* Connect to the asker, as its CONREQ says. */
static void
answer(struct pvm__direct *d, const struct conreq *c)
{
    struct link *l = link_find(c->tid);
    int fd, rc;

    if (pvm__opt(PvmRoute) == PvmDontRoute) {
        if (l != NULL && l->state != LINK_DEAD)
            link_dead(l);
        send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
        return;
    }
    if (l != NULL) {
        /* Both asked: the higher tid connects, the lower waits for it. */
        if (l->state != LINK_ASKED || pvm__ctx.mytid < c->tid) {
            if (l->state == LINK_DEAD)
                send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
            return;
        }
        l->state = LINK_CONNECTING;
    } else if ((l = link_new(d, c->tid, LINK_CONNECTING)) == NULL) {
        send_ctl_routed(c->tid, WIRE_DIRECT_NAK, c->token);
        return;
    }
    memcpy(l->token, c->token, WIRE_DIRECT_TOKEN);
    if (get_info(d, c->tid, l->host, sizeof(l->host)) != 0 || (l->remote && tls_ctx(d) != 0)) {
        link_dead(l);
        return;
    }
    if (!l->remote) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (c->upath[0] == '\0' || strlen(c->upath) >= sizeof(sa.sun_path) ||
            (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
            link_dead(l);
            return;
        }
        memcpy(sa.sun_path, c->upath, strlen(c->upath) + 1);
        l->fd = fd;
        sock_tune(fd, 0);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    } else {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->port) };

        if (inet_pton(AF_INET, c->addr, &sa.sin_addr) != 1 || c->port == 0 ||
            (fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
            link_dead(l);
            return;
        }
        l->fd = fd;
        sock_tune(fd, 1);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    }
    if (rc == 0)
        connected(d, l);
    else if (errno != EINPROGRESS)
        link_dead(l);   /* a Unix listener's full backlog (EAGAIN) included */
}

int
pvm__direct_work(void)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct conreq *c;
    struct link *l;

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
    struct link *l;
    struct wire_wbuf b;
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_CONREQ,
                          .src = (uint32_t)pvm__ctx.mytid, .dst = (uint32_t)tid };

    if (d == NULL || (l = link_new(d, tid, LINK_ASKED)) == NULL)
        return;
    if (get_info(d, tid, l->host, sizeof(l->host)) != 0 ||
        (l->remote ? tls_ctx(d) != 0 || listen_tcp(d) != 0 : listen_unix(d) != 0) ||
        RAND_bytes(l->token, WIRE_DIRECT_TOKEN) != 1) {
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

int
pvm__direct_send(int tid, struct wire_hdr *h, const void *body, size_t len)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct link *l;
    struct wire_hdr mark = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_MARK,
                             .src = (uint32_t)pvm__ctx.mytid, .dst = (uint32_t)tid };

    /* Nothing may come between the parts of a frame being written. */
    if (tid == pvm__ctx.mytid || !TID_IS_TASK(tid) || pvm__ctx.io_depth > 0)
        return 0;
    if ((l = link_find(tid)) == NULL) {
        if (pvm__opt(PvmRoute) == PvmRouteDirect)
            ask(tid);
        return 0;
    }
    if (l->state == LINK_READY && l->ctl_len == 0) {
        /* Behind everything routed to tid so far; the link from now on. */
        if (pvm__daemon_write(&mark, NULL, 0) != 0)
            return 0;
        l->state = LINK_UP;
    }
    if (l->state != LINK_UP)
        return 0;
    if (link_write(d, l, h, body, len) == 0)
        return 1;
    if (l->state != LINK_DEAD)
        link_dead(l);
    return 0;
}

/* ---- the daemon's socket ---- */

int
pvm__daemon_write(struct wire_hdr *h, const void *body, size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    struct iovec iov[2] = { { hdr, WIRE_HDR_LEN }, { (void *)(uintptr_t)body, len } };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };
    int rc = 0, dready, wready;

    if (len > UINT32_MAX)
        return -EMSGSIZE;
    if (pvm__ctx.fd < 0)
        return WIRE_ENOVM;
    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    pvm__ctx.io_depth++;
    while (mh.msg_iovlen > 0) {
        ssize_t k = sendmsg(pvm__ctx.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The daemon is slow to take it, or has paused us: read meanwhile. */
            if ((rc = pvm__direct_wait(-1, pvm__ctx.fd, &dready, &wready)) < 0)
                break;
            if (dready && !wready && (rc = pvm__pump_daemon(NULL, NULL)) < 0)
                break;
            rc = 0;
            continue;
        }
        if (k < 0) {
            rc = -errno;
            break;
        }
        while (mh.msg_iovlen > 0 && (size_t)k >= mh.msg_iov[0].iov_len) {
            k -= (ssize_t)mh.msg_iov[0].iov_len;
            mh.msg_iov++;
            mh.msg_iovlen--;
        }
        if (mh.msg_iovlen > 0) {
            mh.msg_iov[0].iov_base = (char *)mh.msg_iov[0].iov_base + k;
            mh.msg_iov[0].iov_len -= (size_t)k;
        }
    }
    pvm__ctx.io_depth--;
    return rc;
}

/* ---- the end ---- */

static long long
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Before TCP links close: a socket closed with unread bytes in it sends a
 * reset, and Linux then throws away what it had not sent yet, which would
 * cut our last message short.  So the links stop sending (FIN after our
 * bytes), what still comes in is read and dropped, and we wait until the
 * peers' kernels have every byte we wrote, giving up after
 * DIRECT_LINGER_MS without progress (a peer host gone).  A Unix socket
 * hands its bytes over at write time and needs none of this.
 */
static void
linger(struct pvm__direct *d)
{
    long long last = now_ms();
    int best = -1;

    for (struct link *l = d->links; l; l = l->next)
        if (l->fd >= 0 && l->remote)
            shutdown(l->fd, SHUT_WR);
    for (;;) {
        struct pollfd p[64];
        int n = 0, left = 0, out;

        for (struct link *l = d->links; l && n < 64; l = l->next) {
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
        } else if (now_ms() - last > DIRECT_LINGER_MS) {
            return;
        }
        if (poll(p, (nfds_t)n, 100) <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLERR | POLLHUP)))
                continue;
            ssize_t k = recv(p[i].fd, d->scratch, sizeof(d->scratch), MSG_DONTWAIT);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                /* The peer closed: nothing more can reach it. */
                for (struct link *l = d->links; l; l = l->next)
                    if (l->fd == p[i].fd)
                        link_close_io(l);
            }
        }
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
    struct conreq *c;
    struct link *l;

    if (d == NULL)
        return;
    linger(d);
    while ((l = d->links) != NULL) {
        d->links = l->next;
        link_close_io(l);
        msgs_free(l->held);
        free(l);
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
    SSL_CTX_free(d->tls);
    BIO_meth_free(d->bio);
    OPENSSL_cleanse(d->key, sizeof(d->key));
    free(d->pfd);
    free(d->plink);
    free(d->fds);
    free(d);
    pvm__ctx.direct = NULL;
}

int
pvm__direct_fds(int **fds)
{
    struct pvm__direct *d = pvm__ctx.direct;
    struct link *l;
    size_t n = 3;
    int k = 0, *f;

    if (d == NULL) {
        pvm__ctx.getfds[0] = pvm__ctx.fd;
        *fds = pvm__ctx.getfds;
        return 1;
    }
    for (l = d->links; l; l = l->next)
        n++;
    if ((f = realloc(d->fds, n * sizeof(*f))) == NULL)
        return -ENOMEM;
    d->fds = f;
    f[k++] = pvm__ctx.fd;
    if (d->ufd >= 0)
        f[k++] = d->ufd;
    if (d->tfd >= 0)
        f[k++] = d->tfd;
    for (l = d->links; l; l = l->next)
        if (l->fd >= 0)
            f[k++] = l->fd;
    *fds = f;
    return k;
}
