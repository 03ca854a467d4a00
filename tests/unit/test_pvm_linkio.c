/*
 * test_pvm_linkio.c - the bytes of a TLS direct link (lib/pvm/pvm_linkio.c):
 * two ends of one link in one process, with certificates made by
 * launcher/vmctl/vmctl_ca.c in a mkdtemp() directory, and the ciphertext
 * between them carried by the test, so that it can arrive in pieces.
 * Shown: frames of every size (empty, tiny, one byte either side of the
 * first full record, several records) written back to back arrive whole
 * and in order however the ciphertext is cut (a byte at a time
 * included), through the staging buffer, OpenSSL's read-ahead and the
 * direct read into a large body; and an error a program (or anything else
 * in the thread) left on OpenSSL's error queue neither kills a link that
 * has nothing to read yet nor a write or read that follows.
 */
#include "test_pvm_fakevm.h"
#include "vmctl_ca.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>

#include <openssl/err.h>

#define HOST "node-a"           /* both ends show this certificate */

static char root[64];

/* The link's two ends: a writes, b reads; a's socket is xa-x, b's y-yb,
 * and the test moves the ciphertext from x to y (and back, for the
 * handshake). */
struct pair {
    struct pvm__link *a, *b;
    int x, y;
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int
setup_group(void **state)
{
    char err[512] = "";

    (void)state;
    snprintf(root, sizeof(root), "/tmp/test_pvm_linkio.XXXXXX");
    if (mkdtemp(root) == NULL)
        return -1;
    if (vmctl_ca_init(root, 1, err, sizeof(err)) != 0 ||
        vmctl_cert_issue(root, HOST, 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "certificates: %s\n", err);
        return -1;
    }
    return 0;
}

static int
teardown_group(void **state)
{
    (void)state;
    return nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static int
link_up(void **state)
{
    int rc = fake_up(state);

    pvm__ctx.max_msg = 1 << 20;
    return rc;
}

static int
link_down(void **state)
{
    ERR_clear_error();
    pvm__direct_close();
    return fake_down(state);
}

static void
sockpair(int *mine, int *other)
{
    int sv[2], big = 4 << 20;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    for (int i = 0; i < 2; i++)
        setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    *mine = sv[0];
    *other = sv[1];
}

/* Move at most max bytes from one socket to the other: how many moved. */
static size_t
carry(int from, int to, size_t max)
{
    unsigned char buf[65536];
    ssize_t k;

    if (max > sizeof(buf))
        max = sizeof(buf);
    k = recv(from, buf, max, MSG_DONTWAIT);
    if (k <= 0)
        return 0;
    assert_int_equal(send(to, buf, (size_t)k, 0), k);
    return (size_t)k;
}

/* A link from FAKE_T3 (another host: TLS), handshaken, both ends UP. */
static void
pair_up(struct pair *p)
{
    struct pvm__direct *d = dir();
    int xa, yb, ra = 0, rb = 0;

    assert_non_null(d);
    snprintf(d->ca, sizeof(d->ca), "%s/ca.pem", root);
    snprintf(d->cert, sizeof(d->cert), "%s/%s.pem", root, HOST);
    snprintf(d->key, sizeof(d->key), "%s/%s.key", root, HOST);
    assert_int_equal(pvm__link_tls_ctx(d), 0);
    sockpair(&xa, &p->x);
    sockpair(&p->y, &yb);
    p->a = link_new(d, FAKE_T3, PVM__LINK_UP);
    p->b = link_new(d, FAKE_T3, PVM__LINK_UP);
    assert_non_null(p->a);
    assert_non_null(p->b);
    p->a->fd = xa;
    p->b->fd = yb;
    p->a->remote = p->b->remote = 1;
    p->b->marked = 1;
    snprintf(p->a->host, sizeof(p->a->host), "%s", HOST);
    assert_int_equal(pvm__link_tls_attach(d, p->a, 1), 0);
    assert_int_equal(pvm__link_tls_attach(d, p->b, 0), 0);
    for (int i = 0; i < 100 && (ra != 1 || rb != 1); i++) {
        if (ra != 1)
            ra = pvm__link_tls_step(p->a);
        carry(p->x, p->y, SIZE_MAX);
        if (rb != 1)
            rb = pvm__link_tls_step(p->b);
        carry(p->y, p->x, SIZE_MAX);
        assert_true(ra >= 0 && rb >= 0);
    }
    assert_int_equal(ra, 1);
    assert_int_equal(rb, 1);
    assert_true(pvm__link_tls_peer_is(p->b, HOST));
}

static unsigned char
pattern(int frame, size_t i)
{
    return (unsigned char)(frame * 31 + i * 7 + (i >> 9));
}

/* One frame of len bytes from a, numbered n (its tag). */
static void
write_frame(struct pair *p, int n, size_t len)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T3, .dst = FAKE_ME, .tag = n,
                          .flags = PVM__ENCWORD_XDR };
    unsigned char *body = malloc(len ? len : 1);

    assert_non_null(body);
    for (size_t i = 0; i < len; i++)
        body[i] = pattern(n, i);
    assert_int_equal(pvm__link_write(pvm__ctx.direct, p->a, &h, body, len), 0);
    free(body);
}

/* Every frame b can assemble now, checked against the next expected. */
static void
read_frames(struct pair *p, int *next, const size_t *sizes, int nsizes)
{
    unsigned char *body = NULL;
    int rc;

    while ((rc = pvm__link_read_frame(p->b, 1u << 20, &body)) == 1) {
        size_t want = sizes[*next % nsizes];

        assert_int_equal(p->b->h.tag, *next);
        assert_int_equal(p->b->h.len, want);
        for (size_t i = 0; i < want; i++)
            if (body[i] != pattern(*next, i))
                fail_msg("frame %d byte %zu differs", *next, i);
        free(body);
        body = NULL;
        ++*next;
    }
    assert_int_equal(rc, 0);
}

static void
test_pvm_linkio_frames_of_every_size_arrive_whole_in_any_cut(void **state)
{
    /* Around the first record: the header and 16352 bytes fill it. */
    static const size_t sizes[] = { 0, 4, 100, 16352, 16353, 16351, 70000, 7, 1, 40000, 3 };
    static const size_t cuts[] = { 1, 13, 4096, 5, 20000, 100000 };
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    struct pair p;
    int next = 0, n = 0;

    (void)state;
    pair_up(&p);
    for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
        /* Two rounds of every size, back to back, then the ciphertext in
         * pieces of cuts[c] bytes, with a read after each piece. */
        for (int i = 0; i < 2 * nsizes; i++, n++)
            write_frame(&p, n, sizes[n % nsizes]);
        while (carry(p.x, p.y, cuts[c]) > 0)
            read_frames(&p, &next, sizes, nsizes);
        read_frames(&p, &next, sizes, nsizes);
        assert_int_equal(next, n);
    }
    assert_int_equal(p.b->state, PVM__LINK_UP);
    assert_true(pvm__link_rx_idle(p.b));
}

static void
test_pvm_linkio_stale_openssl_error_does_not_break_the_link(void **state)
{
    static const size_t sizes[] = { 4 };
    unsigned char *body = NULL;
    struct pair p;
    int next = 0;

    (void)state;
    pair_up(&p);
    /* Something else in the thread failed and left its error queued. */
    ERR_raise(ERR_LIB_USER, 1);
    assert_int_not_equal(ERR_peek_error(), 0);
    /* Nothing to read yet: wait, not a dead link. */
    assert_int_equal(pvm__link_read_frame(p.b, 1u << 20, &body), 0);
    ERR_raise(ERR_LIB_USER, 2);
    write_frame(&p, 0, 4);
    ERR_raise(ERR_LIB_USER, 3);
    carry(p.x, p.y, SIZE_MAX);
    read_frames(&p, &next, sizes, 1);
    assert_int_equal(next, 1);
    ERR_raise(ERR_LIB_USER, 4);
    assert_int_equal(pvm__link_read_frame(p.b, 1u << 20, &body), 0);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, link_up, link_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_linkio_frames_of_every_size_arrive_whole_in_any_cut),
        T(test_pvm_linkio_stale_openssl_error_does_not_break_the_link),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_linkio", tests, setup_group, teardown_group);
}
