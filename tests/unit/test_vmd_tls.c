/*
 * test_vmd_tls.c - the TLS 1.3 engine of daemon/vmd_tls.c, two engines wired
 * back to back in memory (no sockets, no loop), with certificates made by
 * launcher/vmctl/vmctl_ca.c in a mkdtemp() directory.  Peers the engine must
 * refuse -- no certificate, TLS 1.2 only -- are raw OpenSSL endpoints over
 * memory BIOs, built here so the engine's header exposes nothing for tests.
 * vmd_tls.c itself is included so that one test can reach an engine's SSL
 * and take the name check out of the handshake, to see the second check,
 * after it, still refuse the wrong name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "vmctl_ca.h"
#include "vmd_tls.h"
#include "wire.h"

/* The engine's own pump() is static there; the tests have theirs. */
#define pump vmd_tls_engine_pump
#include "../../daemon/vmd_tls.c"
#undef pump

#define BIG_LEN (6 * 1024 * 1024 + 12345)

/* Certificates and contexts shared by every test (group fixture). */
struct fixture {
    char root[PATH_MAX];
    char ca1[PATH_MAX];                 /* the cluster: node-a, node-b */
    char ca2[PATH_MAX];                 /* another cluster: node-b */
    struct vmd_tls_ctx *a;              /* node-a of ca1 */
    struct vmd_tls_ctx *b;              /* node-b of ca1 */
    struct vmd_tls_ctx *other;          /* node-b of ca2, trusting ca2 */
};

/* One end of a connection and everything it received. */
struct end {
    struct vmd_tls *tls;
    unsigned char *got;
    size_t len;
    size_t cap;
    int rc;                             /* last non-zero return of feed */
    int echo;                           /* write back whatever arrives */
};

/* A raw OpenSSL endpoint over memory BIOs. */
struct raw {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *rbio;
    BIO *wbio;
    int failed;                         /* its handshake ended in an error */
};

static char *
path_in(char *out, const char *dir, const char *file)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, file);

    assert_true(n > 0 && n < PATH_MAX);
    return out;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static struct vmd_tls_ctx *
ctx_for(const char *dir, const char *host)
{
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], name[300], err[512] = "";
    struct vmd_tls_ctx *ctx = NULL;
    int rc;

    snprintf(name, sizeof(name), "%s.pem", host);
    path_in(cert, dir, name);
    snprintf(name, sizeof(name), "%s.key", host);
    path_in(key, dir, name);
    rc = vmd_tls_ctx_new(path_in(ca, dir, "ca.pem"), cert, key, &ctx, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "vmd_tls_ctx_new: %d %s\n", rc, err);
    return ctx;
}

static int
setup_group(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char err[512] = "";

    if (f == NULL)
        return -1;
    snprintf(f->root, sizeof(f->root), "/tmp/test_vmd_tls.XXXXXX");
    if (mkdtemp(f->root) == NULL)
        return -1;
    path_in(f->ca1, f->root, "ca1");
    path_in(f->ca2, f->root, "ca2");
    if (vmctl_ca_init(f->ca1, 0, err, sizeof(err)) != 0 ||
        vmctl_cert_issue(f->ca1, "node-a", 0, err, sizeof(err)) != 0 ||
        vmctl_cert_issue(f->ca1, "node-b", 0, err, sizeof(err)) != 0 ||
        vmctl_ca_init(f->ca2, 0, err, sizeof(err)) != 0 ||
        vmctl_cert_issue(f->ca2, "node-b", 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "certificates: %s\n", err);
        return -1;
    }
    f->a = ctx_for(f->ca1, "node-a");
    f->b = ctx_for(f->ca1, "node-b");
    f->other = ctx_for(f->ca2, "node-b");
    *state = f;
    return f->a != NULL && f->b != NULL && f->other != NULL ? 0 : -1;
}

static int
teardown_group(void **state)
{
    struct fixture *f = *state;

    vmd_tls_ctx_free(f->a);
    vmd_tls_ctx_free(f->b);
    vmd_tls_ctx_free(f->other);
    nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void
on_plain(void *arg, const void *buf, size_t len)
{
    struct end *e = arg;

    if (e->len + len > e->cap) {
        size_t cap = e->cap != 0 ? e->cap : 4096;

        while (cap < e->len + len)
            cap *= 2;
        e->got = realloc(e->got, cap);
        assert_non_null(e->got);
        e->cap = cap;
    }
    memcpy(e->got + e->len, buf, len);
    e->len += len;
    if (e->echo)
        assert_int_equal(vmd_tls_write(e->tls, buf, len), 0);
}

static void
end_open(struct end *e, struct vmd_tls_ctx *ctx, enum vmd_tls_role role, const char *expect)
{
    memset(e, 0, sizeof(*e));
    e->tls = vmd_tls_new(ctx, role, expect, on_plain, e);
    assert_non_null(e->tls);
}

static void
end_close(struct end *e)
{
    vmd_tls_free(e->tls);
    free(e->got);
}

/* Feed bytes to an end, step at a time (0: all at once). */
static void
feed(struct end *e, const char *p, size_t n, size_t step)
{
    while (n > 0) {
        size_t k = step == 0 || step > n ? n : step;
        int rc = vmd_tls_feed(e->tls, p, k);

        if (rc != 0) {
            e->rc = rc;
            return;
        }
        p += k;
        n -= k;
    }
}

/* Move ciphertext from one end to the other; 1 if anything moved. */
static int
move(struct end *from, struct end *to, size_t step)
{
    char *buf = NULL;
    ssize_t n = vmd_tls_take(from->tls, &buf);

    assert_true(n >= 0);
    if (n == 0) {
        assert_null(buf);
        return 0;
    }
    feed(to, buf, (size_t)n, step);
    free(buf);
    return 1;
}

/* Shuttle bytes both ways until neither end has anything to say. */
static void
pump(struct end *a, struct end *b, size_t step)
{
    int moved;

    do {
        moved = move(a, b, step);
        moved |= move(b, a, step);
    } while (moved);
}

/* A client and server of the same cluster, connected. */
static void
connect_pair(struct fixture *f, struct end *c, struct end *s, size_t step)
{
    end_open(c, f->a, VMD_TLS_CLIENT, "node-b");
    end_open(s, f->b, VMD_TLS_SERVER, NULL);
    assert_int_equal(vmd_tls_start(c->tls), 0);
    pump(c, s, step);
    assert_int_equal(c->rc, 0);
    assert_int_equal(s->rc, 0);
    assert_true(vmd_tls_handshake_done(c->tls));
    assert_true(vmd_tls_handshake_done(s->tls));
}

static SSL_CTX *
raw_ctx(int server, int max_version, const char *dir, const char *host)
{
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    char cert[PATH_MAX], key[PATH_MAX], name[300];

    assert_non_null(ctx);
    if (max_version != 0)
        assert_int_equal(SSL_CTX_set_max_proto_version(ctx, max_version), 1);
    else
        assert_int_equal(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION), 1);
    /* The raw peer trusts whatever it is shown, so only our engine's
     * judgement is tested. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    if (host != NULL) {
        snprintf(name, sizeof(name), "%s.pem", host);
        path_in(cert, dir, name);
        snprintf(name, sizeof(name), "%s.key", host);
        path_in(key, dir, name);
        assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, cert), 1);
        assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM), 1);
    }
    return ctx;
}

static void
raw_open(struct raw *r, SSL_CTX *ctx, int server)
{
    memset(r, 0, sizeof(*r));
    r->ctx = ctx;
    r->ssl = SSL_new(ctx);
    r->rbio = BIO_new(BIO_s_mem());
    r->wbio = BIO_new(BIO_s_mem());
    assert_non_null(r->ssl);
    assert_non_null(r->rbio);
    assert_non_null(r->wbio);
    BIO_set_mem_eof_return(r->rbio, -1);
    SSL_set_bio(r->ssl, r->rbio, r->wbio);
    if (server)
        SSL_set_accept_state(r->ssl);
    else
        SSL_set_connect_state(r->ssl);
}

static void
raw_close(struct raw *r)
{
    SSL_free(r->ssl);
    SSL_CTX_free(r->ctx);
    ERR_clear_error();
}

/* Run the raw side's handshake (and reads, to hear alerts) against an end. */
static void
raw_pump(struct raw *r, struct end *e)
{
    char buf[4096];
    int moved;

    do {
        int n;
        char *out = NULL;
        ssize_t k;

        moved = 0;
        ERR_clear_error();
        if (!SSL_is_init_finished(r->ssl)) {
            if (SSL_do_handshake(r->ssl) <= 0 &&
                SSL_get_error(r->ssl, -1) == SSL_ERROR_SSL)
                r->failed = 1;
        } else if (SSL_read(r->ssl, buf, sizeof(buf)) <= 0 &&
                   SSL_get_error(r->ssl, -1) == SSL_ERROR_SSL) {
            r->failed = 1;
        }
        while ((n = BIO_read(r->wbio, buf, sizeof(buf))) > 0) {
            feed(e, buf, (size_t)n, 0);
            moved = 1;
        }
        k = vmd_tls_take(e->tls, &out);
        assert_true(k >= 0);
        if (k > 0) {
            assert_int_equal(BIO_write(r->rbio, out, (int)k), (int)k);
            moved = 1;
        }
        free(out);
    } while (moved && !r->failed);
}

static void
fill_pattern(unsigned char *p, size_t n, uint32_t seed)
{
    size_t i;

    for (i = 0; i < n; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        p[i] = (unsigned char)seed;
    }
}

static void
test_vmd_tls_handshake_and_plaintext_both_ways(void **state)
{
    struct fixture *f = *state;
    struct end c, s;
    const char *fp;

    connect_pair(f, &c, &s, 0);
    assert_string_equal(vmd_tls_peer_name(c.tls), "node-b");
    assert_string_equal(vmd_tls_peer_name(s.tls), "node-a");
    assert_string_equal(vmd_tls_peer_fingerprint(c.tls), vmd_tls_ctx_fingerprint(f->b));
    assert_string_equal(vmd_tls_peer_fingerprint(s.tls), vmd_tls_ctx_fingerprint(f->a));
    fp = vmd_tls_ctx_fingerprint(f->a);
    assert_int_equal(strlen(fp), 64);
    assert_int_equal(strspn(fp, "0123456789abcdef"), 64);
    assert_string_not_equal(fp, vmd_tls_ctx_fingerprint(f->b));

    assert_int_equal(vmd_tls_write(c.tls, "ping", 4), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.len, 4);
    assert_memory_equal(s.got, "ping", 4);
    assert_int_equal(vmd_tls_write(s.tls, "pong!", 5), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.len, 5);
    assert_memory_equal(c.got, "pong!", 5);
    assert_int_equal(c.rc, 0);
    assert_int_equal(s.rc, 0);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_delivers_a_large_message_both_ways(void **state)
{
    struct fixture *f = *state;
    unsigned char *big = malloc(BIG_LEN), *big2 = malloc(BIG_LEN);
    struct end c, s;

    assert_non_null(big);
    assert_non_null(big2);
    fill_pattern(big, BIG_LEN, 12345);
    fill_pattern(big2, BIG_LEN, 777);
    connect_pair(f, &c, &s, 0);
    assert_int_equal(vmd_tls_write(c.tls, big, BIG_LEN), 0);
    assert_int_equal(vmd_tls_write(s.tls, big2, BIG_LEN), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.len, BIG_LEN);
    assert_int_equal(c.len, BIG_LEN);
    assert_memory_equal(s.got, big, BIG_LEN);
    assert_memory_equal(c.got, big2, BIG_LEN);
    end_close(&c);
    end_close(&s);
    free(big);
    free(big2);
}

/* A frame's header and body, written apart, are sealed into one record:
 * 5 bytes of record header, the 36 bytes, the content type and the tag. */
static void
test_vmd_tls_small_writes_share_one_record(void **state)
{
    struct fixture *f = *state;
    unsigned char hdr[32], body[4] = { 1, 2, 3, 4 };
    char *buf = NULL;
    struct end c, s;
    ssize_t n;

    fill_pattern(hdr, sizeof(hdr), 99);
    connect_pair(f, &c, &s, 0);
    assert_int_equal(vmd_tls_write(c.tls, hdr, sizeof(hdr)), 0);
    assert_int_equal(vmd_tls_write(c.tls, body, sizeof(body)), 0);
    n = vmd_tls_take(c.tls, &buf);
    assert_int_equal(n, 5 + 36 + 1 + 16);
    feed(&s, buf, (size_t)n, 0);
    free(buf);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.len, 36);
    assert_memory_equal(s.got, hdr, sizeof(hdr));
    assert_memory_equal(s.got + 32, body, sizeof(body));
    end_close(&c);
    end_close(&s);
}

/* Small writes gathered, then a large one: every byte arrives, in order. */
static void
test_vmd_tls_gathered_bytes_lead_a_large_write(void **state)
{
    struct fixture *f = *state;
    unsigned char *big = malloc(BIG_LEN), *want = malloc(BIG_LEN + 40);
    struct end c, s;

    assert_non_null(big);
    assert_non_null(want);
    fill_pattern(big, BIG_LEN, 4242);
    memcpy(want, "header-1", 8);
    memcpy(want + 8, big, BIG_LEN);
    memcpy(want + 8 + BIG_LEN, "header-2", 8);
    memcpy(want + 16 + BIG_LEN, "tail", 4);
    connect_pair(f, &c, &s, 0);
    assert_int_equal(vmd_tls_write(c.tls, "header-1", 8), 0);
    assert_int_equal(vmd_tls_write(c.tls, big, BIG_LEN), 0);
    assert_int_equal(vmd_tls_write(c.tls, "header-2", 8), 0);
    assert_int_equal(vmd_tls_write(c.tls, "tail", 4), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.len, BIG_LEN + 20);
    assert_memory_equal(s.got, want, BIG_LEN + 20);
    end_close(&c);
    end_close(&s);
    free(big);
    free(want);
}

static void
test_vmd_tls_works_fed_one_byte_at_a_time(void **state)
{
    struct fixture *f = *state;
    unsigned char msg[40000];
    struct end c, s;

    fill_pattern(msg, sizeof(msg), 99);
    connect_pair(f, &c, &s, 1);
    assert_int_equal(vmd_tls_write(c.tls, msg, sizeof(msg)), 0);
    assert_int_equal(vmd_tls_write(s.tls, "reply", 5), 0);
    pump(&c, &s, 1);
    assert_int_equal(s.len, sizeof(msg));
    assert_memory_equal(s.got, msg, sizeof(msg));
    assert_int_equal(c.len, 5);
    assert_memory_equal(c.got, "reply", 5);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_sends_plaintext_written_before_the_handshake(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    end_open(&c, f->a, VMD_TLS_CLIENT, "node-b");
    end_open(&s, f->b, VMD_TLS_SERVER, "node-a");
    assert_int_equal(vmd_tls_write(c.tls, "first ", 6), 0);
    assert_int_equal(vmd_tls_write(c.tls, "second", 6), 0);
    assert_int_equal(vmd_tls_write(s.tls, "early", 5), 0);
    assert_false(vmd_tls_handshake_done(c.tls));
    assert_int_equal(vmd_tls_start(c.tls), 0);
    /* Nothing but the ClientHello may leave before the handshake. */
    assert_int_equal(s.len, 0);
    pump(&c, &s, 0);
    assert_true(vmd_tls_handshake_done(c.tls));
    assert_true(vmd_tls_handshake_done(s.tls));
    assert_int_equal(s.len, 12);
    assert_memory_equal(s.got, "first second", 12);
    assert_int_equal(c.len, 5);
    assert_memory_equal(c.got, "early", 5);
    /* Writes after the handshake come after the queued ones. */
    assert_int_equal(vmd_tls_write(c.tls, " third", 6), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.len, 18);
    assert_memory_equal(s.got, "first second third", 18);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_on_plain_may_write_back(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    connect_pair(f, &c, &s, 0);
    s.echo = 1;
    assert_int_equal(vmd_tls_write(c.tls, "echo me", 7), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.len, 7);
    assert_memory_equal(c.got, "echo me", 7);
    end_close(&c);
    end_close(&s);
}

/* A client that would rather have AES-256 (OpenSSL's own order) gets
 * the server's first choice, AES-128-GCM: the cheaper of the strong ones. */
static void
test_vmd_tls_server_picks_aes128_gcm(void **state)
{
    struct fixture *f = *state;
    struct raw r;
    struct end s;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    raw_open(&r, raw_ctx(0, 0, f->ca1, "node-a"), 0);
    assert_int_equal(SSL_set_ciphersuites(r.ssl, "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256"),
                     1);
    raw_pump(&r, &s);
    assert_int_equal(s.rc, 0);
    assert_true(vmd_tls_handshake_done(s.tls));
    assert_false(r.failed);
    assert_string_equal(SSL_get_cipher_name(r.ssl), "TLS_AES_128_GCM_SHA256");
    raw_close(&r);
    end_close(&s);
}

static void
test_vmd_tls_refuses_client_without_certificate(void **state)
{
    struct fixture *f = *state;
    struct raw r;
    struct end s;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    raw_open(&r, raw_ctx(0, 0, NULL, NULL), 0);
    raw_pump(&r, &s);
    assert_int_equal(s.rc, WIRE_ENOCERT);
    assert_false(vmd_tls_handshake_done(s.tls));
    assert_null(vmd_tls_peer_name(s.tls));
    assert_non_null(strstr(vmd_tls_error(s.tls), "no certificate"));
    /* The raw client learns it through the certificate_required alert. */
    assert_true(r.failed);
    raw_close(&r);
    end_close(&s);
}

static void
test_vmd_tls_refuses_cert_from_other_ca(void **state)
{
    struct fixture *f = *state;
    struct raw r;
    struct end s;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    raw_open(&r, raw_ctx(0, 0, f->ca2, "node-b"), 0);
    raw_pump(&r, &s);
    assert_int_equal(s.rc, WIRE_EBADCERT);
    assert_false(vmd_tls_handshake_done(s.tls));
    assert_non_null(strstr(vmd_tls_error(s.tls), "issuer"));
    assert_true(r.failed);
    raw_close(&r);
    end_close(&s);
}

static void
test_vmd_tls_client_refuses_server_from_other_ca(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    end_open(&c, f->other, VMD_TLS_CLIENT, "node-a");
    end_open(&s, f->a, VMD_TLS_SERVER, NULL);
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.rc, WIRE_EBADCERT);
    /* The server hears the client's alert and reports the refusal. */
    assert_int_equal(s.rc, WIRE_EBADCERT);
    assert_non_null(strstr(vmd_tls_error(s.tls), "refused our certificate"));
    assert_int_equal(s.len, 0);
    /* A dead engine stays dead. */
    assert_int_equal(vmd_tls_feed(c.tls, "x", 1), WIRE_EBADCERT);
    assert_int_equal(vmd_tls_write(c.tls, "x", 1), WIRE_EBADCERT);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_server_refuses_cert_naming_another_host(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    /* node-b's certificate is good, but the host table expects node-c. */
    end_open(&c, f->b, VMD_TLS_CLIENT, "node-a");
    end_open(&s, f->a, VMD_TLS_SERVER, "node-c");
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.rc, WIRE_ENAME);
    assert_non_null(strstr(vmd_tls_error(s.tls), "node-c"));
    assert_int_equal(s.len, 0);
    assert_true(c.rc < 0);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_client_refuses_cert_naming_another_host(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    end_open(&c, f->b, VMD_TLS_CLIENT, "node-c");
    end_open(&s, f->a, VMD_TLS_SERVER, NULL);
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.rc, WIRE_ENAME);
    assert_non_null(strstr(vmd_tls_error(c.tls), "node-c"));
    assert_true(s.rc < 0);
    assert_int_equal(s.len, 0);
    end_close(&c);
    end_close(&s);
}

/*
 * The name is checked twice: inside the handshake (SSL_set1_host, so the
 * peer hears why through an alert) and after it (handshake_done's
 * X509_check_host), so that a change of the context's or session's
 * verification settings cannot let a wrong name in.  Here the first check
 * is taken out, as such a change would, and the second must still refuse.
 */
static void
test_vmd_tls_name_rechecked_after_handshake(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    end_open(&c, f->b, VMD_TLS_CLIENT, "node-a");
    end_open(&s, f->a, VMD_TLS_SERVER, "node-c");
    assert_int_equal(SSL_set1_host(s.tls->ssl, NULL), 1);
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(s.rc, WIRE_ENAME);
    assert_non_null(strstr(vmd_tls_error(s.tls), "does not name node-c"));
    assert_int_equal(s.len, 0);
    end_close(&c);
    end_close(&s);

    end_open(&c, f->b, VMD_TLS_CLIENT, "node-c");
    end_open(&s, f->a, VMD_TLS_SERVER, NULL);
    assert_int_equal(SSL_set1_host(c.tls->ssl, NULL), 1);
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.rc, WIRE_ENAME);
    assert_non_null(strstr(vmd_tls_error(c.tls), "does not name node-c"));
    assert_int_equal(s.len, 0);
    end_close(&c);
    end_close(&s);
}

/*
 * The same for the protocol: the context allows TLS 1.3 only, and
 * handshake_done checks the version again.  Both sessions are opened to
 * TLS 1.2 here, as a change of settings would; the handshake succeeds in
 * OpenSSL's eyes and the engine must still refuse.
 */
static void
test_vmd_tls_version_rechecked_after_handshake(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    end_open(&c, f->b, VMD_TLS_CLIENT, "node-a");
    end_open(&s, f->a, VMD_TLS_SERVER, "node-b");
    assert_int_equal(SSL_set_min_proto_version(c.tls->ssl, TLS1_2_VERSION), 1);
    assert_int_equal(SSL_set_max_proto_version(c.tls->ssl, TLS1_2_VERSION), 1);
    assert_int_equal(SSL_set_min_proto_version(s.tls->ssl, TLS1_2_VERSION), 1);
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    pump(&c, &s, 0);
    assert_int_equal(c.rc, WIRE_ENOTLS);
    assert_non_null(strstr(vmd_tls_error(c.tls), "not TLS 1.3"));
    assert_int_equal(s.len, 0);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_refuses_plain_http_request(void **state)
{
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    struct fixture *f = *state;
    struct end s, c;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    assert_int_equal(vmd_tls_feed(s.tls, req, strlen(req)), WIRE_ENOTLS);
    assert_non_null(strstr(vmd_tls_error(s.tls), "not TLS"));
    assert_int_equal(s.len, 0);
    end_close(&s);

    /* A client that reaches a web server instead of a daemon. */
    end_open(&c, f->a, VMD_TLS_CLIENT, "node-b");
    assert_int_equal(vmd_tls_write(c.tls, "secret", 6), 0);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    assert_int_equal(vmd_tls_feed(c.tls, "HTTP/1.0 400 Bad Request\r\n\r\n", 28),
                     WIRE_ENOTLS);
    end_close(&c);
}

static void
test_vmd_tls_refuses_random_bytes(void **state)
{
    struct fixture *f = *state;
    unsigned char noise[4096];
    uint32_t seed;

    for (seed = 1; seed <= 8; seed++) {
        struct end s;
        size_t i;

        fill_pattern(noise, sizeof(noise), seed);
        /* The first byte of noise is what makes it noise. */
        if (noise[0] == 22 || noise[0] == 21)
            noise[0] ^= 0x80;
        end_open(&s, f->b, VMD_TLS_SERVER, NULL);
        for (i = 0; i < sizeof(noise) && s.rc == 0; i++)
            feed(&s, (const char *)noise + i, 1, 1);
        assert_int_equal(s.rc, WIRE_ENOTLS);
        assert_int_equal(i, 1);
        end_close(&s);
    }
}

static void
test_vmd_tls_refuses_record_with_bad_version(void **state)
{
    /* A handshake record header, but version 2.0: not TLS. */
    static const unsigned char rec[] = { 22, 2, 0, 0, 5, 1, 0, 0, 1, 0 };
    struct fixture *f = *state;
    struct end s;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    assert_int_equal(vmd_tls_feed(s.tls, rec, sizeof(rec)), WIRE_ENOTLS);
    end_close(&s);
}

static void
test_vmd_tls_refuses_tls12_only_client(void **state)
{
    struct fixture *f = *state;
    struct raw r;
    struct end s;

    end_open(&s, f->b, VMD_TLS_SERVER, NULL);
    raw_open(&r, raw_ctx(0, TLS1_2_VERSION, f->ca1, "node-a"), 0);
    raw_pump(&r, &s);
    assert_int_equal(s.rc, WIRE_ENOTLS);
    assert_non_null(strstr(vmd_tls_error(s.tls), "TLS 1.3"));
    assert_true(r.failed);
    raw_close(&r);
    end_close(&s);
}

static void
test_vmd_tls_refuses_tls12_only_server(void **state)
{
    struct fixture *f = *state;
    struct raw r;
    struct end c;

    end_open(&c, f->a, VMD_TLS_CLIENT, "node-b");
    raw_open(&r, raw_ctx(1, TLS1_2_VERSION, f->ca1, "node-b"), 1);
    assert_int_equal(vmd_tls_start(c.tls), 0);
    raw_pump(&r, &c);
    assert_int_equal(c.rc, WIRE_ENOTLS);
    raw_close(&r);
    end_close(&c);
}

static void
test_vmd_tls_close_notify_returns_one(void **state)
{
    struct fixture *f = *state;
    struct end c, s;

    connect_pair(f, &c, &s, 0);
    assert_int_equal(vmd_tls_write(c.tls, "bye", 3), 0);
    vmd_tls_shutdown(c.tls);
    assert_int_equal(vmd_tls_write(c.tls, "late", 4), -EPIPE);
    assert_true(move(&c, &s, 0));
    assert_int_equal(s.rc, 1);
    /* Data sent before close_notify arrived whole. */
    assert_int_equal(s.len, 3);
    assert_memory_equal(s.got, "bye", 3);
    assert_int_equal(vmd_tls_feed(s.tls, NULL, 0), 1);
    vmd_tls_shutdown(s.tls);
    assert_true(move(&s, &c, 0));
    assert_int_equal(c.rc, 1);
    end_close(&c);
    end_close(&s);
}

static void
test_vmd_tls_ctx_refuses_key_readable_by_others(void **state)
{
    struct fixture *f = *state;
    static const mode_t modes[] = { 0644, 0640, 0604 };
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], err[512];
    struct vmd_tls_ctx *ctx = (struct vmd_tls_ctx *)1;
    size_t i;

    path_in(ca, f->ca1, "ca.pem");
    path_in(cert, f->ca1, "node-a.pem");
    path_in(key, f->ca1, "node-a.key");
    for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        err[0] = '\0';
        assert_int_equal(chmod(key, modes[i]), 0);
        assert_int_equal(vmd_tls_ctx_new(ca, cert, key, &ctx, err, sizeof(err)), -EACCES);
        assert_null(ctx);
        assert_non_null(strstr(err, key));
        assert_non_null(strstr(err, "group or others"));
    }
    assert_int_equal(chmod(key, 0600), 0);
    assert_int_equal(vmd_tls_ctx_new(ca, cert, key, &ctx, err, sizeof(err)), 0);
    vmd_tls_ctx_free(ctx);
    /* Owner read-only is fine too. */
    assert_int_equal(chmod(key, 0400), 0);
    assert_int_equal(vmd_tls_ctx_new(ca, cert, key, &ctx, err, sizeof(err)), 0);
    vmd_tls_ctx_free(ctx);
    assert_int_equal(chmod(key, 0600), 0);
}

static void
test_vmd_tls_ctx_refuses_missing_and_mismatched_files(void **state)
{
    struct fixture *f = *state;
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], other_key[PATH_MAX], missing[PATH_MAX];
    char other_cert[PATH_MAX], err[512];
    struct vmd_tls_ctx *ctx = NULL;

    path_in(ca, f->ca1, "ca.pem");
    path_in(cert, f->ca1, "node-a.pem");
    path_in(key, f->ca1, "node-a.key");
    path_in(other_key, f->ca1, "node-b.key");
    path_in(other_cert, f->ca2, "node-b.pem");
    path_in(missing, f->ca1, "nope.key");
    assert_int_equal(vmd_tls_ctx_new(ca, cert, missing, &ctx, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, missing));
    assert_int_equal(vmd_tls_ctx_new(ca, cert, other_key, &ctx, err, sizeof(err)), WIRE_ECONF);
    assert_non_null(strstr(err, other_key));
    /* A certificate of another cluster is caught at start-up. */
    path_in(other_key, f->ca2, "node-b.key");
    assert_int_equal(vmd_tls_ctx_new(ca, other_cert, other_key, &ctx, err, sizeof(err)),
                     WIRE_ECONF);
    assert_non_null(strstr(err, other_cert));
    /* A key is not a certificate. */
    assert_int_equal(vmd_tls_ctx_new(key, cert, key, &ctx, err, sizeof(err)), WIRE_ECONF);
    assert_null(ctx);
}

static void
test_vmd_tls_ctx_refuses_encrypted_key_without_prompting(void **state)
{
    struct fixture *f = *state;
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], enc[PATH_MAX], err[512];
    struct vmd_tls_ctx *ctx = NULL;
    EVP_PKEY *k;
    FILE *fp;

    path_in(ca, f->ca1, "ca.pem");
    path_in(cert, f->ca1, "node-a.pem");
    path_in(key, f->ca1, "node-a.key");
    path_in(enc, f->root, "encrypted.key");
    fp = fopen(key, "r");
    assert_non_null(fp);
    k = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
    fclose(fp);
    assert_non_null(k);
    fp = fopen(enc, "w");
    assert_non_null(fp);
    assert_int_equal(chmod(enc, 0600), 0);
    assert_int_equal(PEM_write_PKCS8PrivateKey(fp, k, EVP_aes_256_cbc(), NULL, 0, NULL,
                                               (void *)"secret"), 1);
    fclose(fp);
    EVP_PKEY_free(k);
    assert_int_equal(vmd_tls_ctx_new(ca, cert, enc, &ctx, err, sizeof(err)), WIRE_ECONF);
    assert_non_null(strstr(err, "unencrypted"));
    assert_null(ctx);
}

static void
test_vmd_tls_refuses_tampered_record(void **state)
{
    struct fixture *f = *state;
    struct end c, s;
    char *buf = NULL;
    ssize_t n;

    connect_pair(f, &c, &s, 0);
    assert_int_equal(vmd_tls_write(c.tls, "pay me 100", 10), 0);
    n = vmd_tls_take(c.tls, &buf);
    assert_true(n > 5 + 10);
    buf[n - 1] ^= 1;                    /* the last byte of the AEAD tag */
    assert_int_equal(vmd_tls_feed(s.tls, buf, (size_t)n), WIRE_ETLS);
    assert_int_equal(s.len, 0);
    assert_true(strlen(vmd_tls_error(s.tls)) > 0);
    free(buf);
    end_close(&c);
    end_close(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmd_tls_handshake_and_plaintext_both_ways),
        cmocka_unit_test(test_vmd_tls_delivers_a_large_message_both_ways),
        cmocka_unit_test(test_vmd_tls_small_writes_share_one_record),
        cmocka_unit_test(test_vmd_tls_gathered_bytes_lead_a_large_write),
        cmocka_unit_test(test_vmd_tls_works_fed_one_byte_at_a_time),
        cmocka_unit_test(test_vmd_tls_sends_plaintext_written_before_the_handshake),
        cmocka_unit_test(test_vmd_tls_on_plain_may_write_back),
        cmocka_unit_test(test_vmd_tls_server_picks_aes128_gcm),
        cmocka_unit_test(test_vmd_tls_refuses_client_without_certificate),
        cmocka_unit_test(test_vmd_tls_refuses_cert_from_other_ca),
        cmocka_unit_test(test_vmd_tls_client_refuses_server_from_other_ca),
        cmocka_unit_test(test_vmd_tls_server_refuses_cert_naming_another_host),
        cmocka_unit_test(test_vmd_tls_client_refuses_cert_naming_another_host),
        cmocka_unit_test(test_vmd_tls_name_rechecked_after_handshake),
        cmocka_unit_test(test_vmd_tls_version_rechecked_after_handshake),
        cmocka_unit_test(test_vmd_tls_refuses_plain_http_request),
        cmocka_unit_test(test_vmd_tls_refuses_random_bytes),
        cmocka_unit_test(test_vmd_tls_refuses_record_with_bad_version),
        cmocka_unit_test(test_vmd_tls_refuses_tls12_only_client),
        cmocka_unit_test(test_vmd_tls_refuses_tls12_only_server),
        cmocka_unit_test(test_vmd_tls_refuses_tampered_record),
        cmocka_unit_test(test_vmd_tls_close_notify_returns_one),
        cmocka_unit_test(test_vmd_tls_ctx_refuses_key_readable_by_others),
        cmocka_unit_test(test_vmd_tls_ctx_refuses_missing_and_mismatched_files),
        cmocka_unit_test(test_vmd_tls_ctx_refuses_encrypted_key_without_prompting),
    };

    return cmocka_run_group_tests_name("vmd_tls", tests, setup_group, teardown_group);
}
