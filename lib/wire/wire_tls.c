/*
 * wire_tls.c - the cluster's TLS policy (wire_tls.h): one context builder
 * for the daemons' links and the tasks' direct links.
 */
#include "wire_tls.h"

#include <errno.h>
#include <fcntl.h>
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
#include <openssl/x509.h>

#include "wire.h"


static int ctx_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
ctx_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    ERR_clear_error();
    return code;
}

void
wire_tls_clear_errors(void)
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
}

/* The reason of OpenSSL's newest queued error, for a message. */
static const char *
ssl_reason(void)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e != 0 ? ERR_reason_error_string(e) : NULL;

    return why != NULL ? why : "unknown OpenSSL error";
}

/* A daemon or a task has nobody to ask: an encrypted key fails instead of
 * waiting for OpenSSL's default prompt on a terminal that is not there. */
static int
no_passphrase(char *buf, int size, int rwflag, void *arg)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)arg;
    return -1;
}

/*
 * Read the key file, refusing one that group or others may read (relayd's
 * check_file_secrecy), and load it from memory so the PEM bytes can be wiped
 * (httpd server_tls_init).  The mode is checked on the open descriptor, so a
 * file swapped in after the check cannot slip through.
 */
int
wire_key_read(int fd, char **out, size_t *len)
{
    char *buf = malloc(WIRE_KEY_FILE_MAX);

    *len = 0;
    if (buf == NULL)
        return -ENOMEM;
    for (;;) {
        ssize_t r = read(fd, buf + *len, WIRE_KEY_FILE_MAX - *len);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (r > 0 && *len + (size_t)r == WIRE_KEY_FILE_MAX)) {
            int rc = r < 0 ? -errno : -EFBIG;

            OPENSSL_cleanse(buf, WIRE_KEY_FILE_MAX);
            free(buf);
            *len = 0;
            return rc;
        }
        if (r == 0)
            break;
        *len += (size_t)r;
    }
    *out = buf;
    return 0;
}

static int
load_key(SSL_CTX *ssl, const char *path, char *err, size_t errlen)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    BIO *b = NULL;
    EVP_PKEY *key = NULL;
    int fd, rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ctx_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        rc = ctx_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: not a regular file", path);
        goto done;
    }
    if (st.st_mode & 077) {
        rc = ctx_fail(err, errlen, -EACCES,
                      "%s: private key readable by group or others (mode %04o); "
                      "chmod 600 it",
                      path, (unsigned)(st.st_mode & 07777));
        goto done;
    }
    if (st.st_size >= WIRE_KEY_FILE_MAX) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: too large for a private key", path);
        goto done;
    }
    if ((rc = wire_key_read(fd, &buf, &len)) != 0) {
        rc = rc == -EFBIG ? ctx_fail(err, errlen, WIRE_ECONF, "%s: too large for a private key", path)
                          : ctx_fail(err, errlen, rc, "%s: %s", path, strerror(-rc));
        goto done;
    }
    b = BIO_new_mem_buf(buf, (int)len);
    if (b == NULL) {
        rc = ctx_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto done;
    }
    key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
    if (key == NULL) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: not an unencrypted PEM private key", path);
        goto done;
    }
    if (SSL_CTX_use_PrivateKey(ssl, key) != 1) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: %s", path, ssl_reason());
        goto done;
    }
    if (SSL_CTX_check_private_key(ssl) != 1)
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: does not match the certificate", path);
done:
    EVP_PKEY_free(key);
    BIO_free(b);
    if (buf != NULL) {
        OPENSSL_cleanse(buf, WIRE_KEY_FILE_MAX);
        free(buf);
    }
    close(fd);
    return rc;
}

/* Our own certificate must chain to the CA we demand of peers; saying so at
 * start-up beats every peer refusing us later. */
static int
check_own_chain(SSL_CTX *ssl, const char *cert_path, const char *ca_path, char *err,
                size_t errlen)
{
    X509_STORE_CTX *sc = X509_STORE_CTX_new();
    STACK_OF(X509) *chain = NULL;
    int rc = 0;

    if (sc == NULL)
        return ctx_fail(err, errlen, -ENOMEM, "%s: out of memory", cert_path);
    SSL_CTX_get0_chain_certs(ssl, &chain);
    if (X509_STORE_CTX_init(sc, SSL_CTX_get_cert_store(ssl), SSL_CTX_get0_certificate(ssl),
                            chain) != 1) {
        rc = ctx_fail(err, errlen, -ENOMEM, "%s: out of memory", cert_path);
    } else if (X509_verify_cert(sc) != 1) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: not valid under %s: %s", cert_path, ca_path,
                      X509_verify_cert_error_string(X509_STORE_CTX_get_error(sc)));
    }
    X509_STORE_CTX_free(sc);
    return rc;
}

int
wire_tls_ctx_new(const char *ca_path, const char *cert_path, const char *key_path,
                 SSL_CTX **out, char *err, size_t errlen)
{
    SSL_CTX *c;
    int rc = 0;

    *out = NULL;
    ERR_clear_error();
    if ((c = SSL_CTX_new(TLS_method())) == NULL)
        return ctx_fail(err, errlen, -ENOMEM, "TLS: cannot make a context: %s", ssl_reason());
    if (SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1) {
        rc = ctx_fail(err, errlen, WIRE_ETLS, "TLS: this OpenSSL lacks TLS 1.3");
        goto fail;
    }
    /* AES-128-GCM first, and the server's order wins: the ghost points of
     * a stencil job cross these links by the gigabyte, and with AES-NI it
     * runs 1.2x AES-256-GCM (6.7 against 5.5 GB/s on 16 KB records, openssl
     * speed here); all three are TLS 1.3's, none is weak. */
    if (SSL_CTX_set_ciphersuites(c, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                    "TLS_CHACHA20_POLY1305_SHA256") != 1) {
        rc = ctx_fail(err, errlen, WIRE_ETLS, "TLS: cannot set the cipher suites: %s",
                      ssl_reason());
        goto fail;
    }
    SSL_CTX_set_options(c, SSL_OP_CIPHER_SERVER_PREFERENCE);
    /* Both roles demand a certificate; the CA file is the only anchor (no
     * system store), so only certificates of this cluster pass. */
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (access(ca_path, R_OK) < 0) {
        rc = ctx_fail(err, errlen, -errno, "%s: %s", ca_path, strerror(errno));
        goto fail;
    }
    if (SSL_CTX_load_verify_locations(c, ca_path, NULL) != 1) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: not a PEM CA certificate: %s", ca_path,
                      ssl_reason());
        goto fail;
    }
    if (access(cert_path, R_OK) < 0) {
        rc = ctx_fail(err, errlen, -errno, "%s: %s", cert_path, strerror(errno));
        goto fail;
    }
    if (SSL_CTX_use_certificate_chain_file(c, cert_path) != 1) {
        rc = ctx_fail(err, errlen, WIRE_ECONF, "%s: not a PEM certificate: %s", cert_path,
                      ssl_reason());
        goto fail;
    }
    rc = load_key(c, key_path, err, errlen);
    if (rc == 0)
        rc = check_own_chain(c, cert_path, ca_path, err, errlen);
    if (rc < 0)
        goto fail;
    /* Nobody resumes: every link authenticates in full, and no tickets are
     * sent that a client would have to swallow. */
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(c, 0);
    SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
    /* Send only the chain in cert_path: every peer holds the CA already, and
     * a root in the chain turns "not our CA" into "self-signed in chain". */
    SSL_CTX_set_mode(c, SSL_MODE_NO_AUTO_CHAIN);
    *out = c;
    return 0;
fail:
    SSL_CTX_free(c);
    return rc;
}
