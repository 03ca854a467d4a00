/*
 * pvm_linkio.c - the bytes of one direct link: TLS on a link between hosts
 * (the only libpvm3 file that includes OpenSSL's TLS), reading frames and
 * writing them, on a Unix socket or over TLS.  What the frames mean, and
 * when a link lives or dies, is pvm_link.c's.
 *
 * Links are non-blocking.  Frames are assembled incrementally: small ones
 * are read in batches through a staging buffer, a large body straight into
 * the buffer the message keeps; over TLS, OpenSSL reads ahead what the
 * socket holds.  Writes go from the caller's bytes (writev on a Unix
 * socket; on TLS the header rides in the first full record and the rest is
 * one SSL_write of full records, gathered by the link's BIO into sends of
 * up to LINKIO_TLS_TXBUF bytes, all sent before pvm__link_write returns).
 * A write that would block reads every other socket meanwhile
 * (pvm__poll_wait), so two tasks sending large messages to each other both
 * progress; handlers and frames to the daemon wait until it is over
 * (pvm__ctx.io_depth).
 *
 * TLS follows the daemons' policy (wire_tls_ctx_new: TLS 1.3, both sides
 * show a certificate of the cluster CA, the CA file the only anchor); the
 * name check against the peer's host is pvm__link_tls_peer_is and
 * SSL_set1_host.
 */
#include "pvm_int.h"
#include "wire_tls.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define LINKIO_STAGE (64 * 1024)    /* per link: small frames are read in batches */
/*
 * TLS output is gathered and sent in writes of up to this many bytes, not
 * one send per 16 KB record: on a veth or a NIC every send is a packet that
 * crosses the whole stack, and the cost is per packet, not per byte
 * (bench/pvm_timing_floor shows it on 1 MB round trips).
 */
#define LINKIO_TLS_TXBUF (128 * 1024)
/* Read ahead: OpenSSL reads what the socket holds, many records at once. */
#define LINKIO_TLS_RXBUF (64 * 1024)

/* ---- the link's BIO ---- */

/*
 * OpenSSL's socket BIO writes with write(), which raises SIGPIPE on a peer
 * that is gone; a library may not change the program's signals, so ours
 * sends with MSG_NOSIGNAL.  It also gathers records: the records OpenSSL
 * writes go into tx, which is sent as soon as it is written to outside a
 * batch, and when full or at the end of a batch (pvm__link_write) inside
 * one.  tx belongs to the BIO, so it moves with the SSL when an accepted
 * connection becomes its link (pvm_link.c, on_hello).
 */
struct tx {
    int fd;
    int batch;                  /* inside pvm__link_write: send when full only */
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
link_tx(const struct pvm__link *l)
{
    return l->ssl != NULL ? BIO_get_data(SSL_get_wbio(l->ssl)) : NULL;
}

int
pvm__link_tx_pending(const struct pvm__link *l)
{
    const struct tx *t = link_tx(l);

    return t != NULL && t->off < t->len;
}

int
pvm__link_tx_flush(struct pvm__link *l)
{
    struct tx *t = link_tx(l);

    return t != NULL ? tx_flush(t) : 0;
}

static int
bio_write(BIO *b, const char *buf, int len)
{
    struct tx *t = BIO_get_data(b);
    int rc;

    BIO_clear_retry_flags(b);
    if (len <= 0)
        return 0;
    if (t->buf == NULL && (t->buf = malloc(LINKIO_TLS_TXBUF)) == NULL)
        return -1;
    if (t->len + (size_t)len > LINKIO_TLS_TXBUF) {
        if ((rc = tx_flush(t)) != 0 && rc != -EAGAIN)
            return -1;
        if (t->off > 0) {
            memmove(t->buf, t->buf + t->off, t->len - t->off);
            t->len -= t->off;
            t->off = 0;
        }
        if (t->len + (size_t)len > LINKIO_TLS_TXBUF) {
            /* OpenSSL offers the same record again when we say retry. */
            BIO_set_retry_write(b);
            return -1;
        }
    }
    memcpy(t->buf + t->len, buf, (size_t)len);
    t->len += (size_t)len;
    /* Outside a batch the bytes go now; what the socket does not take
     * waits in tx for POLLOUT (pvm__poll_wait). */
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

/* ---- TLS ---- */

int
pvm__link_tls_ctx(struct pvm__direct *d)
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

void
pvm__link_tls_free(struct pvm__direct *d)
{
    SSL_CTX_free(d->tls);
    BIO_meth_free(d->bio);
    d->tls = NULL;
    d->bio = NULL;
}

int
pvm__link_tls_attach(struct pvm__direct *d, struct pvm__link *l, int client)
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
    SSL_set_default_read_buffer_len(l->ssl, LINKIO_TLS_RXBUF);
    SSL_set_read_ahead(l->ssl, 1);
    if (!client) {
        SSL_set_accept_state(l->ssl);
        return 0;
    }
    SSL_set_connect_state(l->ssl);
    /* The asker must hold its host's certificate. */
    return SSL_set1_host(l->ssl, l->host) == 1 ? 0 : -ENOMEM;
}

int
pvm__link_tls_handshaking(const struct pvm__link *l)
{
    return l->ssl != NULL && !SSL_is_init_finished(l->ssl);
}

int
pvm__link_tls_step(struct pvm__link *l)
{
    int r, e;

    wire_tls_clear_errors();
    if ((r = SSL_do_handshake(l->ssl)) == 1) {
        l->want_write = 0;
        return 1;
    }
    e = SSL_get_error(l->ssl, r);
    l->want_write = e == SSL_ERROR_WANT_WRITE;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    wire_tls_clear_errors();
    return WIRE_ETLS;
}

int
pvm__link_tls_peer_is(const struct pvm__link *l, const char *host)
{
    X509 *cert = SSL_get0_peer_certificate(l->ssl);

    return cert != NULL && X509_check_host(cert, host, strlen(host), 0, NULL) == 1;
}

int
pvm__link_tls_pending(const struct pvm__link *l)
{
    /*
     * Not SSL_has_pending: with read-ahead it is true for part of a
     * record, which only the socket can complete.
     */
    return l->ssl != NULL && SSL_pending(l->ssl) > 0;
}

/* ---- reading frames ---- */

/* Keep the descriptors a Unix link's bytes brought (a ring's, pvm_shm.c);
 * any beyond PVM__LINK_RFDS are closed. */
static void
keep_fds(struct pvm__link *l, struct msghdr *mh)
{
    struct cmsghdr *c;

    for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;

            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (l->nrfds < PVM__LINK_RFDS)
                l->rfds[l->nrfds++] = fd;
            else
                close(fd);
        }
    }
}

/* recv on a Unix link, keeping descriptors that come along. */
static ssize_t
unix_recv(struct pvm__link *l, void *buf, size_t n)
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * PVM__LINK_RFDS)];
    } cm;
    struct iovec iov = { buf, n };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
                         .msg_controllen = sizeof(cm.b) };
    ssize_t k = recvmsg(l->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

    if (k >= 0 && mh.msg_controllen > 0)
        keep_fds(l, &mh);
    return k;
}

int
pvm__link_take_fds(struct pvm__link *l, int *fds)
{
    int n = l->nrfds;

    memcpy(fds, l->rfds, (size_t)n * sizeof(int));
    l->nrfds = 0;
    return n;
}

/* Bytes read, 0 at EOF, -EAGAIN when none yet, or another error. */
static ssize_t
link_recv(struct pvm__link *l, void *buf, size_t n)
{
    ssize_t k;
    int e;

    if (l->ssl != NULL) {
        size_t got = 0;

        wire_tls_clear_errors();
        if (SSL_read_ex(l->ssl, buf, n, &got) == 1)
            return (ssize_t)got;
        e = SSL_get_error(l->ssl, 0);
        wire_tls_clear_errors();
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return -EAGAIN;
        return e == SSL_ERROR_ZERO_RETURN ? 0 : -ECONNRESET;
    }
    k = unix_recv(l, buf, n);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
    return k;
}

/* A read's result as read_header and read_body return it: 1 got bytes,
 * 0 none yet, or an error (EOF included). */
static int
got_bytes(ssize_t k)
{
    if (k == -EAGAIN)
        return 0;
    return k > 0 ? 1 : k == 0 ? -ECONNRESET : (int)k;
}

/* The next frame's header into l->h and its body allocated: 1, 0 to wait,
 * or an error. */
static int
read_header(struct pvm__link *l, uint32_t max)
{
    size_t avail;
    ssize_t k;
    int rc;

    while ((avail = l->st_len - l->st_off) < WIRE_HDR_LEN) {
        memmove(l->stage, l->stage + l->st_off, avail);
        l->st_off = 0;
        l->st_len = avail;
        k = link_recv(l, l->stage + avail, LINKIO_STAGE - avail);
        if ((rc = got_bytes(k)) <= 0)
            return rc;
        l->st_len += (size_t)k;
    }
    if (wire_hdr_unpack(l->stage + l->st_off, max, &l->h) != 0 ||
        (l->h.type != WIRE_T_MSG && l->h.type != WIRE_T_DIRECT))
        return -EPROTO;
    l->st_off += WIRE_HDR_LEN;
    l->got = 0;
    l->body = NULL;
    if (l->h.len > 0 && (l->body = malloc(l->h.len)) == NULL)
        return -ENOMEM;
    l->in_frame = 1;
    return 1;
}

/* The rest of the frame's body: 1 whole, 0 to wait, or an error. */
static int
read_body(struct pvm__link *l)
{
    ssize_t k;
    int rc;

    while (l->got < l->h.len) {
        size_t need = l->h.len - l->got, avail = l->st_len - l->st_off;

        if (avail > 0) {
            size_t n = avail < need ? avail : need;
            memcpy(l->body + l->got, l->stage + l->st_off, n);
            l->st_off += n;
            l->got += n;
            continue;
        }
        if (need >= LINKIO_STAGE / 4) {
            /* Straight into the message's own buffer. */
            k = link_recv(l, l->body + l->got, need);
            if (k > 0)
                l->got += (size_t)k;
        } else {
            l->st_off = l->st_len = 0;
            k = link_recv(l, l->stage, LINKIO_STAGE);
            if (k > 0)
                l->st_len = (size_t)k;
        }
        if ((rc = got_bytes(k)) <= 0)
            return rc;
    }
    return 1;
}

int
pvm__link_read_frame(struct pvm__link *l, uint32_t max, unsigned char **body)
{
    int rc;

    if (l->fd < 0)
        return 0;
    if (l->stage == NULL && (l->stage = malloc(LINKIO_STAGE)) == NULL)
        return -ENOMEM;
    if (!l->in_frame && (rc = read_header(l, max)) <= 0)
        return rc;
    if ((rc = read_body(l)) <= 0)
        return rc;
    *body = l->body;
    l->body = NULL;
    l->in_frame = 0;
    return 1;
}

int
pvm__link_rx_idle(const struct pvm__link *l)
{
    return l->st_off == l->st_len && (l->ssl == NULL || !SSL_has_pending(l->ssl));
}

/* ---- writing ---- */

void
pvm__link_ctl_set(struct pvm__link *l, int tag, const unsigned char *token)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = tag, .src = (uint32_t)pvm__ctx.mytid,
                          .dst = (uint32_t)l->tid, .len = token ? WIRE_DIRECT_TOKEN : 0 };

    wire_hdr_pack(&h, l->ctl);
    if (token != NULL)
        memcpy(l->ctl + WIRE_HDR_LEN, token, WIRE_DIRECT_TOKEN);
    l->ctl_len = WIRE_HDR_LEN + h.len;
}

int
pvm__link_ctl_flush(struct pvm__link *l)
{
    ssize_t k;
    size_t w;
    int e;

    if (l->ctl_len == 0)
        return 1;
    if (l->ssl != NULL) {
        wire_tls_clear_errors();
        if (SSL_write_ex(l->ssl, l->ctl, l->ctl_len, &w) == 1) {
            l->ctl_len = 0;
            return 1;
        }
        e = SSL_get_error(l->ssl, 0);
        wire_tls_clear_errors();
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

/*
 * Wait until l's socket takes bytes (or, want_read, gives some), reading
 * everything else meanwhile.  0, or an error if the link died meanwhile.
 */
static int
link_wait(struct pvm__link *l, int want_read)
{
    int dready = 0, wready = 0, rc;

    rc = pvm__poll_wait(-1, want_read ? -1 : l->fd, &dready, &wready);
    if (rc >= 0 && dready)
        rc = pvm__pump_daemon(NULL, NULL);
    if (rc < 0)
        return rc;
    return l->state == PVM__LINK_UP && l->fd >= 0 ? 0 : -ECONNRESET;
}

static int
tls_write_all(struct pvm__link *l, const void *p, size_t n)
{
    size_t w;
    int e, rc;

    for (;;) {
        wire_tls_clear_errors();
        if (SSL_write_ex(l->ssl, p, n, &w) == 1)
            return 0;
        e = SSL_get_error(l->ssl, 0);
        wire_tls_clear_errors();
        if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
            return -ECONNRESET;
        /* A retry must carry the same bytes: p and n do not change. */
        if ((rc = link_wait(l, e == SSL_ERROR_WANT_READ)) != 0)
            return rc;
    }
}

static int
write_tls(struct pvm__direct *d, struct pvm__link *l, const unsigned char *hdr,
          const void *body, size_t len)
{
    /* The header rides in the first full record, not one of its own. */
    size_t room = sizeof(d->scratch) - WIRE_HDR_LEN, first = len < room ? len : room;
    struct tx *t = link_tx(l);
    int rc;

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
    while (rc == 0 && pvm__link_tx_pending(l)) {
        int f = tx_flush(link_tx(l));

        if (f == -EAGAIN)
            rc = link_wait(l, 0);
        else if (f != 0)
            rc = f;
    }
    return rc;
}

/* nfd descriptors ride with the first bytes the socket takes. */
static int
write_unix(struct pvm__link *l, unsigned char *hdr, const void *body, size_t len,
           const int *fds, int nfd)
{
    struct iovec iov[2] = { { hdr, WIRE_HDR_LEN }, { (void *)(uintptr_t)body, len } };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * PVM__LINK_RFDS)];
    } cm;
    int rc;

    if (nfd > 0) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.b;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
        CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
        CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
        CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
        memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * (size_t)nfd);
    }
    while (mh.msg_iovlen > 0) {
        ssize_t k = sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

        /* Taken with the first byte: not again. */
        if (k > 0) {
            mh.msg_control = NULL;
            mh.msg_controllen = 0;
        }

        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if ((rc = link_wait(l, 0)) != 0)
                return rc;
            continue;
        }
        if (k < 0)
            return -errno;
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
    return 0;
}

int
pvm__link_write(struct pvm__direct *d, struct pvm__link *l, struct wire_hdr *h,
                const void *body, size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    int rc;

    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    pvm__ctx.io_depth++;
    if (l->ssl != NULL)
        rc = write_tls(d, l, hdr, body, len);
    else
        rc = write_unix(l, hdr, body, len, NULL, 0);
    pvm__ctx.io_depth--;
    return rc;
}

int
pvm__link_write_fds(struct pvm__link *l, struct wire_hdr *h, const int *fds, int n)
{
    unsigned char hdr[WIRE_HDR_LEN];
    int rc;

    if (l->ssl != NULL || n < 0 || n > PVM__LINK_RFDS)
        return -EINVAL;
    h->len = 0;
    wire_hdr_pack(h, hdr);
    pvm__ctx.io_depth++;
    rc = write_unix(l, hdr, NULL, 0, fds, n);
    pvm__ctx.io_depth--;
    return rc;
}

void
pvm__link_close_io(struct pvm__link *l)
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
    while (l->nrfds > 0)
        close(l->rfds[--l->nrfds]);
}
