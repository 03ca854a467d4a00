/*
 * vmd_tls.c - the TLS 1.3 engine of the links between daemons (docs/architecture.md,
 * "Links"; STYLE.md 5.5).  OpenSSL never sees a socket.  Its BIO (one
 * BIO_METHOD of ours, as h2o's socket.c has) reads the ciphertext the glue
 * feeds straight from the glue's buffer, keeping only what a feed leaves of
 * an unfinished record, and writes OpenSSL's output straight into our own
 * output buffer, whatever call produced it (handshake records, alerts and
 * key updates can appear after any of them), where vmd_tls_take() hands it
 * to the glue.  Two BIO_s_mem would copy every byte once more each way,
 * which for a 1 MB message is a megabyte per daemon per direction.
 *
 * This is the only daemon file that includes OpenSSL.  The policy -- TLS 1.3
 * or nothing, both sides present a certificate from the cluster CA, the name
 * in it matches the host table -- is set by wire_tls_ctx_new() (lib/,
 * shared with the tasks' direct links) and checked again when a handshake
 * completes; every failure becomes one of the codes of
 * wire.h through tls_classify(), with a one-line reason for the log.
 */
#include "vmd_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "wire.h"
#include "wire_tls.h"

#define TLS_READ_CHUNK (16 * 1024)      /* one TLS record of plaintext */
/*
 * Writes that fit in one record wait in pend until take() (or a larger
 * write) seals them, so a frame's header and body, written apart, travel
 * in one record: one encryption, one decryption, 22 bytes less per frame.
 */
#define TLS_CORK TLS_READ_CHUNK
#define TLS_HOST_MAX 253

/* The first bytes of a TLS stream: a record header of one of these types,
 * major version 3.  Anything else is not TLS and is refused before OpenSSL
 * guesses at it. */
#define TLS_REC_ALERT 21
#define TLS_REC_HANDSHAKE 22

struct vmd_tls_ctx {
    SSL_CTX *ssl;
    BIO_METHOD *bio;                    /* the engines' BIO (tls_bio_*) */
    char fingerprint[EVP_MAX_MD_SIZE * 2 + 1];
};

enum tls_state {
    TLS_HANDSHAKE,
    TLS_UP,
    TLS_CLOSED,                         /* close_notify received */
    TLS_DEAD                            /* a negative code came back; see err */
};

/* A growable byte buffer: ciphertext out, or plaintext waiting to go in. */
struct tls_buf {
    char *data;
    size_t len;
    size_t cap;
};

struct vmd_tls {
    SSL *ssl;
    BIO *bio;                           /* owned by ssl: reads in/carry, writes out */
    enum tls_state state;
    int err;                            /* the code returned once DEAD */
    int sent_shutdown;
    int sniffed;                        /* bytes seen so far of the first record */
    vmd_tls_plain_cb on_plain;
    void *arg;
    struct tls_buf out;                 /* ciphertext for take() */
    int nomem;                          /* out could not grow: the engine dies */
    /* Ciphertext for OpenSSL: what an earlier feed left (carry, from
     * carry_off), then the bytes of the feed under way (in, during it). */
    struct tls_buf carry;
    size_t carry_off;
    const char *in;
    size_t in_len;
    /*
     * Plaintext accepted by write() but not yet taken by SSL_write: all of
     * it before the handshake ends, or the tail after an unfinished write.
     * The first inflight bytes are those of an SSL_write that must be
     * retried with exactly the same bytes (httpd server_tls_writecb).
     */
    struct tls_buf pend;
    size_t pend_off;
    size_t inflight;
    char *expected;                     /* the host table's name, or NULL */
    char peer_name[TLS_HOST_MAX + 1];
    char peer_fp[EVP_MAX_MD_SIZE * 2 + 1];
    char reason[256];
};

static int
ctx_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int tls_bio_read(BIO *b, char *buf, int len);
static int tls_bio_write(BIO *b, const char *buf, int len);
static long tls_bio_ctrl(BIO *b, int cmd, long num, void *ptr);
static int tls_bio_create(BIO *b);
static int
tls_fail(struct vmd_tls *tls, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
ctx_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    wire_tls_clear_errors();
    return code;
}

static const char *
err_text(unsigned long e)
{
    const char *why = e != 0 ? ERR_reason_error_string(e) : NULL;

    return why != NULL ? why : "unknown OpenSSL error";
}

/* The reason of OpenSSL's newest queued error, for a message. */
static const char *
ssl_reason(void)
{
    return err_text(ERR_peek_last_error());
}

static void
hex(const unsigned char *md, unsigned int n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    unsigned int i;

    for (i = 0; i < n; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[2 * n] = '\0';
}

static int
fingerprint(X509 *x, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (X509_digest(x, EVP_sha256(), md, &n) != 1)
        return -1;
    hex(md, n, out);
    return 0;
}

int
vmd_tls_ctx_new(const char *ca_path, const char *cert_path, const char *key_path,
                struct vmd_tls_ctx **out, char *err, size_t errlen)
{
    struct vmd_tls_ctx *ctx;
    int rc = 0;

    *out = NULL;
    if (ca_path == NULL || cert_path == NULL || key_path == NULL)
        return ctx_fail(err, errlen, -EINVAL, "TLS: CA, certificate and key paths are required");
    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return ctx_fail(err, errlen, -ENOMEM, "TLS: out of memory");
    if ((rc = wire_tls_ctx_new(ca_path, cert_path, key_path, &ctx->ssl, err, errlen)) != 0)
        goto bad;
    /* A retried write carries the same bytes, but our queue may have moved
     * them when it grew. */
    SSL_CTX_set_mode(ctx->ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    ctx->bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "vmd tls");
    if (ctx->bio == NULL || BIO_meth_set_read(ctx->bio, tls_bio_read) != 1 ||
        BIO_meth_set_write(ctx->bio, tls_bio_write) != 1 ||
        BIO_meth_set_ctrl(ctx->bio, tls_bio_ctrl) != 1 ||
        BIO_meth_set_create(ctx->bio, tls_bio_create) != 1) {
        rc = ctx_fail(err, errlen, -ENOMEM, "TLS: out of memory");
        goto bad;
    }
    if (fingerprint(SSL_CTX_get0_certificate(ctx->ssl), ctx->fingerprint) < 0) {
        rc = ctx_fail(err, errlen, -ENOMEM, "%s: cannot hash the certificate", cert_path);
        goto bad;
    }
    *out = ctx;
    return 0;
bad:
    vmd_tls_ctx_free(ctx);
    return rc;
}

void
vmd_tls_ctx_free(struct vmd_tls_ctx *ctx)
{
    if (ctx == NULL)
        return;
    SSL_CTX_free(ctx->ssl);
    BIO_meth_free(ctx->bio);
    free(ctx);
}

const char *
vmd_tls_ctx_fingerprint(const struct vmd_tls_ctx *ctx)
{
    return ctx->fingerprint;
}

/* Room for n more bytes, doubling so appends stay amortised O(1). */
static int
buf_reserve(struct tls_buf *b, size_t n)
{
    size_t cap = b->cap != 0 ? b->cap : 4096;
    char *d;

    if (n <= b->cap - b->len)
        return 0;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2)
            return -ENOMEM;
        cap *= 2;
    }
    d = realloc(b->data, cap);
    if (d == NULL)
        return -ENOMEM;
    b->data = d;
    b->cap = cap;
    return 0;
}

static int
buf_append(struct tls_buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return -ENOMEM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static void
buf_wipe(struct tls_buf *b)
{
    if (b->data != NULL)
        OPENSSL_cleanse(b->data, b->cap);
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/*
 * The engine's BIO.  Reading never reports end of stream: no bytes means
 * "wait for more" (a retry).  A failed write (no memory for out) is an
 * error that kills the engine.
 */
static int
tls_bio_read(BIO *b, char *buf, int len)
{
    struct vmd_tls *tls = BIO_get_data(b);
    size_t want = len > 0 ? (size_t)len : 0, got = 0, k;

    BIO_clear_retry_flags(b);
    if (tls->carry_off < tls->carry.len) {
        k = tls->carry.len - tls->carry_off;
        k = k < want ? k : want;
        memcpy(buf, tls->carry.data + tls->carry_off, k);
        tls->carry_off += k;
        got = k;
        if (tls->carry_off == tls->carry.len)
            tls->carry_off = tls->carry.len = 0;
    }
    if (got < want && tls->in_len > 0) {
        k = tls->in_len < want - got ? tls->in_len : want - got;
        memcpy(buf + got, tls->in, k);
        tls->in += k;
        tls->in_len -= k;
        got += k;
    }
    if (got == 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    return (int)got;
}

static int
tls_bio_write(BIO *b, const char *buf, int len)
{
    struct vmd_tls *tls = BIO_get_data(b);

    BIO_clear_retry_flags(b);
    if (len <= 0)
        return 0;
    if (buf_append(&tls->out, buf, (size_t)len) < 0) {
        tls->nomem = 1;
        return -1;
    }
    return len;
}

static long
tls_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    struct vmd_tls *tls = BIO_get_data(b);

    (void)num;
    (void)ptr;
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1;
    case BIO_CTRL_PENDING:
        return (long)(tls->carry.len - tls->carry_off + tls->in_len);
    default:
        return 0;
    }
}

static int
tls_bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

/* Room in out for the records of n bytes of plaintext, so a large write
 * does not grow it by doubling (and copying) as the records come. */
static void
out_reserve(struct vmd_tls *tls, size_t n)
{
    (void)buf_reserve(&tls->out, n + (n / TLS_READ_CHUNK + 1) * 32);
}

static int
tls_fail(struct vmd_tls *tls, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(tls->reason, sizeof(tls->reason), fmt, ap);
    va_end(ap);
    tls->state = TLS_DEAD;
    tls->err = code;
    wire_tls_clear_errors();
    return code;
}

/* The OpenSSL reasons that say the peer does not speak TLS 1.3. */
static int
reason_is_not_tls13(int reason)
{
    switch (reason) {
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_BAD_PROTOCOL_VERSION_NUMBER:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_WRONG_SSL_VERSION:
        return 1;
    default:
        return 0;
    }
}

/* The alerts by which a peer refuses the certificate we sent. */
static int
reason_is_peer_refusal(int reason)
{
    switch (reason) {
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
        return 1;
    default:
        return 0;
    }
}

/*
 * The one place that reads SSL_get_error() after a failed call (Redis
 * tls.c).  Returns 0 when OpenSSL waits for more bytes, 1 on an orderly
 * close_notify, or a negative code after which the engine is dead.
 */
static int
tls_classify(struct vmd_tls *tls, int ret, const char *op)
{
    unsigned long e, first_ssl = 0, last = 0;
    int lib, reason;
    long vr;

    switch (SSL_get_error(tls->ssl, ret)) {
    case SSL_ERROR_NONE:
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        wire_tls_clear_errors();
        return 0;
    case SSL_ERROR_ZERO_RETURN:
        tls->state = TLS_CLOSED;
        wire_tls_clear_errors();
        return 1;
    case SSL_ERROR_SSL:
        break;
    default:
        if (tls->nomem)
            return tls_fail(tls, -ENOMEM, "%s: out of memory for outgoing bytes", op);
        /* Our BIO never says end of stream, so a bare SYSCALL error means
         * something other than a short read: report it as a TLS failure. */
        return tls_fail(tls, WIRE_ETLS, "%s: %s", op,
                        ERR_peek_last_error() != 0 ? ssl_reason() : "unexpected end of stream");
    }

    /* The first error from the SSL library names the failure; others in the
     * queue are its consequences. */
    while ((e = ERR_get_error()) != 0) {
        if (first_ssl == 0 && ERR_GET_LIB(e) == ERR_LIB_SSL)
            first_ssl = e;
        last = e;
    }
    e = first_ssl != 0 ? first_ssl : last;
    lib = ERR_GET_LIB(e);
    reason = ERR_GET_REASON(e);
    vr = SSL_get_verify_result(tls->ssl);

    /* Absent versus bad: with no certificate there was nothing to verify,
     * so the verify result is still X509_V_OK; a certificate that failed
     * leaves its reason there. */
    if (vr == X509_V_OK && SSL_get0_peer_certificate(tls->ssl) == NULL && lib == ERR_LIB_SSL &&
        reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
        return tls_fail(tls, WIRE_ENOCERT, "%s: peer sent no certificate", op);
    if (lib == ERR_LIB_SSL && reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED)
        return tls_fail(tls, WIRE_ENOCERT, "%s: peer says we sent no certificate", op);
    if (vr == X509_V_ERR_HOSTNAME_MISMATCH)
        return tls_fail(tls, WIRE_ENAME, "%s: peer certificate does not name %s", op,
                        tls->expected != NULL ? tls->expected : "the expected host");
    if (vr != X509_V_OK || (lib == ERR_LIB_SSL && reason == SSL_R_CERTIFICATE_VERIFY_FAILED))
        return tls_fail(tls, WIRE_EBADCERT, "%s: peer certificate refused: %s", op,
                        X509_verify_cert_error_string(vr));
    if (lib == ERR_LIB_SSL && reason_is_peer_refusal(reason))
        return tls_fail(tls, WIRE_EBADCERT, "%s: peer refused our certificate (%s)", op,
                        err_text(e));
    if (lib == ERR_LIB_SSL && reason_is_not_tls13(reason))
        return tls_fail(tls, WIRE_ENOTLS, "%s: peer does not speak TLS 1.3 (%s)", op,
                        err_text(e));
    return tls_fail(tls, WIRE_ETLS, "%s: %s", op, err_text(e));
}

/*
 * Look at the first bytes the peer sends, before OpenSSL does: a TLS peer
 * opens with a handshake record (or an alert), version 3.x.  Plain text, an
 * HTTP request or noise stops here with WIRE_ENOTLS, whatever OpenSSL would
 * have guessed it to be.
 */
static int
sniff(struct vmd_tls *tls, const unsigned char *p, size_t len)
{
    for (; tls->sniffed < 2 && len > 0; tls->sniffed++, p++, len--) {
        if (tls->sniffed == 0 && *p != TLS_REC_HANDSHAKE && *p != TLS_REC_ALERT)
            return tls_fail(tls, WIRE_ENOTLS,
                            "handshake: peer sent bytes that are not TLS (first byte 0x%02x)",
                            *p);
        if (tls->sniffed == 1 && *p != 3)
            return tls_fail(tls, WIRE_ENOTLS,
                            "handshake: peer sent bytes that are not TLS (record version "
                            "%u.x)",
                            *p);
    }
    return 0;
}

/* The peer certificate's CN, if it is a host name we could put in a table. */
static int
copy_peer_name(X509 *peer, char *out, size_t cap)
{
    X509_NAME *name = X509_get_subject_name(peer);
    int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
    const ASN1_STRING *s;
    const unsigned char *d;
    int n, j;

    if (i < 0)
        return -1;
    s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    d = ASN1_STRING_get0_data(s);
    n = ASN1_STRING_length(s);
    if (n <= 0 || (size_t)n >= cap)
        return -1;
    for (j = 0; j < n; j++) {
        unsigned char c = d[j];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.'))
            return -1;
    }
    memcpy(out, d, (size_t)n);
    out[n] = '\0';
    return 0;
}

static int flush_pending(struct vmd_tls *tls);

/*
 * The handshake finished in OpenSSL's eyes; hold it to our policy once more
 * before any plaintext moves, so a change of context settings cannot open
 * the door unnoticed.
 */
static int
handshake_done(struct vmd_tls *tls)
{
    X509 *peer = SSL_get0_peer_certificate(tls->ssl);
    long vr = SSL_get_verify_result(tls->ssl);

    if (SSL_version(tls->ssl) != TLS1_3_VERSION)
        return tls_fail(tls, WIRE_ENOTLS, "handshake: peer negotiated %s, not TLS 1.3",
                        SSL_get_version(tls->ssl));
    if (peer == NULL)
        return tls_fail(tls, WIRE_ENOCERT, "handshake: peer sent no certificate");
    if (vr != X509_V_OK)
        return tls_fail(tls, WIRE_EBADCERT, "handshake: peer certificate refused: %s",
                        X509_verify_cert_error_string(vr));
    if (tls->expected != NULL &&
        X509_check_host(peer, tls->expected, strlen(tls->expected),
                        X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL) != 1)
        return tls_fail(tls, WIRE_ENAME, "handshake: peer certificate does not name %s",
                        tls->expected);
    if (copy_peer_name(peer, tls->peer_name, sizeof(tls->peer_name)) < 0)
        return tls_fail(tls, WIRE_ENAME, "handshake: peer certificate carries no host name");
    if (fingerprint(peer, tls->peer_fp) < 0)
        return tls_fail(tls, -ENOMEM, "handshake: cannot hash the peer certificate");
    tls->state = TLS_UP;
    return flush_pending(tls);
}

/*
 * Hand queued plaintext to SSL_write.  An unfinished write is retried with
 * the same bytes; the rest waits behind it.
 */
static int
flush_pending(struct vmd_tls *tls)
{
    while (tls->pend_off < tls->pend.len) {
        size_t n = tls->inflight != 0 ? tls->inflight : tls->pend.len - tls->pend_off;
        size_t done = 0;
        int ok, rc;

        wire_tls_clear_errors();
        out_reserve(tls, n);
        ok = SSL_write_ex(tls->ssl, tls->pend.data + tls->pend_off, n, &done);
        if (!ok) {
            rc = tls_classify(tls, 0, "write");
            if (rc == 0) {
                tls->inflight = n;
                return 0;
            }
            return rc < 0 ? rc : tls_fail(tls, -EPIPE, "write: peer closed the connection");
        }
        tls->inflight = 0;
        tls->pend_off += done;
    }
    tls->pend.len = 0;
    tls->pend_off = 0;
    return 0;
}

/* Drive the handshake, then read every record the BIO holds. */
static int
pump(struct vmd_tls *tls)
{
    char buf[TLS_READ_CHUNK];
    size_t n, used = 0;
    int ok, rc;

    if (tls->state == TLS_HANDSHAKE) {
        wire_tls_clear_errors();
        ok = SSL_do_handshake(tls->ssl);
        if (ok != 1)
            return tls_classify(tls, ok, "handshake");
        rc = handshake_done(tls);
        if (rc < 0)
            return rc;
    }
    while (tls->state == TLS_UP) {
        wire_tls_clear_errors();
        n = 0;
        ok = SSL_read_ex(tls->ssl, buf, sizeof(buf), &n);
        if (!ok) {
            /* Waiting, closed or dead: the state says which. */
            tls_classify(tls, 0, "read");
            break;
        }
        /* The callback may write, but never frees the engine under us. */
        tls->on_plain(tls->arg, buf, n);
        if (n > used)
            used = n;
    }
    /* Only what held plaintext: a 4-byte message does not pay for 16 KB. */
    OPENSSL_cleanse(buf, used);
    /* A write that OpenSSL left unfinished for want of input goes on now
     * that input came. */
    if (tls->state != TLS_DEAD && tls->inflight != 0)
        flush_pending(tls);
    if (tls->state == TLS_DEAD)
        return tls->err;
    return tls->state == TLS_CLOSED ? 1 : 0;
}

struct vmd_tls *
vmd_tls_new(struct vmd_tls_ctx *ctx, enum vmd_tls_role role, const char *expected_name,
            vmd_tls_plain_cb on_plain, void *arg)
{
    struct vmd_tls *tls;

    if (ctx == NULL || on_plain == NULL ||
        (expected_name != NULL && (expected_name[0] == '\0' ||
                                   strlen(expected_name) > TLS_HOST_MAX)))
        return NULL;
    tls = calloc(1, sizeof(*tls));
    if (tls == NULL)
        return NULL;
    tls->on_plain = on_plain;
    tls->arg = arg;
    tls->state = TLS_HANDSHAKE;
    snprintf(tls->reason, sizeof(tls->reason), "no error");
    if (expected_name != NULL && (tls->expected = strdup(expected_name)) == NULL)
        goto bad;
    tls->ssl = SSL_new(ctx->ssl);
    tls->bio = BIO_new(ctx->bio);
    if (tls->ssl == NULL || tls->bio == NULL) {
        BIO_free(tls->bio);
        goto bad;
    }
    BIO_set_data(tls->bio, tls);
    SSL_set_bio(tls->ssl, tls->bio, tls->bio);
    /* The name is checked inside the handshake as well, so the peer hears
     * why through an alert; handshake_done() checks it again. */
    if (tls->expected != NULL) {
        SSL_set_hostflags(tls->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set1_host(tls->ssl, tls->expected) != 1)
            goto bad;
    }
    if (role == VMD_TLS_CLIENT)
        SSL_set_connect_state(tls->ssl);
    else
        SSL_set_accept_state(tls->ssl);
    return tls;
bad:
    wire_tls_clear_errors();
    vmd_tls_free(tls);
    return NULL;
}

void
vmd_tls_free(struct vmd_tls *tls)
{
    if (tls == NULL)
        return;
    SSL_free(tls->ssl);
    buf_wipe(&tls->pend);
    free(tls->out.data);
    free(tls->carry.data);
    free(tls->expected);
    free(tls);
}

int
vmd_tls_feed(struct vmd_tls *tls, const void *cipher, size_t len)
{
    int rc;

    if (tls->state == TLS_DEAD)
        return tls->err;
    if (tls->state == TLS_CLOSED)
        return 1;
    if (len > 0 && (rc = sniff(tls, cipher, len)) < 0)
        return rc;
    /* OpenSSL reads these bytes in place; what it leaves (part of a record)
     * is kept, since they are the caller's again once we return. */
    tls->in = cipher;
    tls->in_len = len;
    rc = pump(tls);
    if (tls->in_len > 0 && rc == 0) {
        if (tls->carry_off > 0) {
            memmove(tls->carry.data, tls->carry.data + tls->carry_off,
                    tls->carry.len - tls->carry_off);
            tls->carry.len -= tls->carry_off;
            tls->carry_off = 0;
        }
        if (buf_append(&tls->carry, tls->in, tls->in_len) < 0)
            rc = tls_fail(tls, -ENOMEM, "read: out of memory for incoming bytes");
    }
    tls->in = NULL;
    tls->in_len = 0;
    return rc;
}

int
vmd_tls_start(struct vmd_tls *tls)
{
    return vmd_tls_feed(tls, NULL, 0);
}

/* SSL_write from the caller's bytes; the unfinished rest is kept in pend. */
static int
write_direct(struct vmd_tls *tls, const void *plain, size_t len)
{
    size_t done = 0;
    int ok, rc;

    wire_tls_clear_errors();
    out_reserve(tls, len);
    ok = SSL_write_ex(tls->ssl, plain, len, &done);
    if (ok)
        return 0;
    rc = tls_classify(tls, 0, "write");
    if (rc < 0)
        return rc;
    if (rc == 1)
        return tls_fail(tls, -EPIPE, "write: peer closed the connection");
    /* Unfinished: keep the bytes so the retry offers the same ones. */
    if (buf_append(&tls->pend, plain, len) < 0)
        return tls_fail(tls, -ENOMEM, "write: out of memory");
    tls->inflight = len;
    return 0;
}

int
vmd_tls_write(struct vmd_tls *tls, const void *plain, size_t len)
{
    size_t corked = tls->pend.len - tls->pend_off, top;
    int rc;

    if (tls->state == TLS_DEAD)
        return tls->err;
    if (tls->sent_shutdown)
        return -EPIPE;
    if (len == 0)
        return 0;
    if (tls->state != TLS_HANDSHAKE && tls->inflight == 0) {
        /* Small: gather it with what went before, for take() to seal. */
        if (corked + len <= TLS_CORK) {
            if (buf_append(&tls->pend, plain, len) < 0)
                return tls_fail(tls, -ENOMEM, "write: out of memory");
            return 0;
        }
        /* Large: the gathered bytes lead the first record, topped up from
         * this write; the rest goes straight to OpenSSL, so a large message
         * is not copied twice. */
        top = corked == 0 ? 0 : corked < TLS_CORK ? TLS_CORK - corked : 0;
        if (top > len)
            top = len;
        if (top > 0 && buf_append(&tls->pend, plain, top) < 0)
            return tls_fail(tls, -ENOMEM, "write: out of memory");
        if (corked > 0 && (rc = flush_pending(tls)) != 0)
            return rc;
        plain = (const char *)plain + top;
        len -= top;
        if (len == 0)
            return 0;
        if (tls->pend_off == tls->pend.len)
            return write_direct(tls, plain, len);
    }
    if (buf_append(&tls->pend, plain, len) < 0)
        return -ENOMEM;
    if (tls->state == TLS_HANDSHAKE)
        return 0;
    return flush_pending(tls);
}

void
vmd_tls_shutdown(struct vmd_tls *tls)
{
    if (tls->sent_shutdown || tls->state == TLS_DEAD)
        return;
    tls->sent_shutdown = 1;
    /* Before the handshake ends there is no session to close in order;
     * the caller simply closes the connection. */
    if (tls->state == TLS_HANDSHAKE)
        return;
    /* What was written before goes before close_notify. */
    if (flush_pending(tls) != 0)
        return;
    wire_tls_clear_errors();
    SSL_shutdown(tls->ssl);
    wire_tls_clear_errors();
}

ssize_t
vmd_tls_take(struct vmd_tls *tls, char **out)
{
    ssize_t n;

    *out = NULL;
    /* Seal what write() gathered. */
    if ((tls->state == TLS_UP || tls->state == TLS_CLOSED) && tls->inflight == 0 &&
        tls->pend_off < tls->pend.len &&
        (n = flush_pending(tls)) < 0 && tls->out.len == 0)
        return n;
    if (tls->out.len == 0)
        return 0;
    *out = tls->out.data;
    n = (ssize_t)tls->out.len;
    tls->out.data = NULL;
    tls->out.len = tls->out.cap = 0;
    return n;
}

int
vmd_tls_handshake_done(const struct vmd_tls *tls)
{
    return tls->state == TLS_UP || (tls->state == TLS_CLOSED && tls->peer_name[0] != '\0');
}

const char *
vmd_tls_peer_name(const struct vmd_tls *tls)
{
    return tls->peer_name[0] != '\0' ? tls->peer_name : NULL;
}

const char *
vmd_tls_peer_fingerprint(const struct vmd_tls *tls)
{
    return tls->peer_fp[0] != '\0' ? tls->peer_fp : NULL;
}

const char *
vmd_tls_error(const struct vmd_tls *tls)
{
    return tls->reason;
}
