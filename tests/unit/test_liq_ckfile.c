/*
 * test_liq_ckfile.c - the checkpoint file (lib/liquid/liq_ckfile.c, issue
 * 26): XXH64 against xxHash's own values (from libxxhash), a file encoded
 * and decoded back bit for bit, written atomically and read back, every
 * kind of damage refused with its message (a bit flipped in the field or
 * the header, truncated, too long, another magic, version or byte order,
 * absurd lengths) and never a crash for any prefix, a failed write leaving
 * the old file whole, and descriptions compared key by key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liq_ckfile.h"

static char dir[64];

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_liq_ckfile.XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A small checkpoint with values that show any misplaced byte. */
static void
make(struct liq_ckfile *f, int nstate)
{
    size_t n;

    memset(f, 0, sizeof(*f));
    f->iter = 40;
    f->ck_iters = 20;
    f->nstate = nstate;
    f->n[0] = 5;
    f->n[1] = 4;
    f->n[2] = 3;
    snprintf(f->desc, sizeof(f->desc), "program stencil\nkernel jacobi\ngrid 5x4x3\n");
    n = liq_ckfile_points(f) * (size_t)nstate;
    f->v = malloc(n * sizeof(double));
    assert_non_null(f->v);
    for (size_t i = 0; i < n; i++)
        f->v[i] = (double)i * 1.25 - 7.0 / 3.0;
}

/* The whole file's bytes (header, then the data) in a fresh buffer. */
static unsigned char *
encode(const struct liq_ckfile *f, size_t *len)
{
    unsigned char *buf = malloc(LIQ_CKF_HDR + LIQ_CKF_DESC_MAX + 8);
    long h = liq_ckfile_header(f, buf, LIQ_CKF_HDR + LIQ_CKF_DESC_MAX + 8);
    size_t data = liq_ckfile_points(f) * (size_t)f->nstate * sizeof(double);

    assert_true(h > 0);
    assert_int_equal(h % 8, 0);
    buf = realloc(buf, (size_t)h + data);
    memcpy(buf + h, f->v, data);
    *len = (size_t)h + data;
    return buf;
}

static void
test_liq_xxh64_matches_xxhash(void **state)
{
    unsigned char a[100], b[1000], c[35];

    (void)state;
    for (int i = 0; i < 100; i++)
        a[i] = (unsigned char)i;
    for (int i = 0; i < 1000; i++)
        b[i] = (unsigned char)(i * 37);
    for (int i = 0; i < 35; i++)
        c[i] = (unsigned char)i;
    /* The values of libxxhash 0.8.3's XXH64 for the same bytes. */
    assert_true(liq_xxh64("", 0, 0) == 0xef46db3751d8e999ULL);
    assert_true(liq_xxh64("abc", 3, 0) == 0x44bc2cf5ad770999ULL);
    assert_true(liq_xxh64(a, sizeof(a), 7) == 0x80653e7e9b887cddULL);
    assert_true(liq_xxh64(b, sizeof(b), 0) == 0xbfba0b19df72611cULL);
    assert_true(liq_xxh64(c, sizeof(c), 0) == 0xf8c4b2dacbdcba83ULL);
}

static void
test_liq_ckfile_decodes_what_it_encodes(void **state)
{
    struct liq_ckfile f, g;
    size_t len;
    unsigned char *buf;
    char why[256];

    (void)state;
    make(&f, 3);
    buf = encode(&f, &len);
    assert_int_equal(liq_ckfile_decode(buf, len, "x", &g, why, sizeof(why)), 0);
    assert_int_equal(g.iter, 40);
    assert_int_equal(g.ck_iters, 20);
    assert_int_equal(g.nstate, 3);
    assert_memory_equal(g.n, f.n, sizeof(f.n));
    assert_string_equal(g.desc, f.desc);
    assert_memory_equal(g.v, f.v, liq_ckfile_points(&f) * 3 * sizeof(double));
    /* The layout liq_ckfile.h documents: magic, version, lengths. */
    assert_memory_equal(buf, "LIQCKPT", 8);
    assert_int_equal(buf[8], LIQ_CKF_VERSION);
    assert_int_equal(buf[16], 40);
    assert_int_equal(buf[28], 5);
    assert_int_equal(buf[32], 4);
    assert_int_equal(buf[36], 3);
    liq_ckfile_free(&g);
    liq_ckfile_free(&f);
    free(buf);
}

static void
refused(const unsigned char *buf, size_t len, const char *what)
{
    struct liq_ckfile g;
    char why[256] = "";

    assert_int_equal(liq_ckfile_decode(buf, len, "ck", &g, why, sizeof(why)), -EPROTO);
    assert_null(g.v);
    if (strstr(why, what) == NULL)
        fail_msg("expected '%s' in '%s'", what, why);
}

static void
test_liq_ckfile_refuses_any_damage(void **state)
{
    struct liq_ckfile f;
    size_t len;
    unsigned char *buf, *bad;

    (void)state;
    make(&f, 2);
    buf = encode(&f, &len);
    bad = malloc(len + 8);
    /* One bit of the field. */
    memcpy(bad, buf, len);
    bad[len - 3] ^= 0x10;
    refused(bad, len, "checksum of its 960 bytes of field is wrong");
    /* One bit of the header, the description or its checksum. */
    for (size_t at = 16; at < 80 + 16; at += 4) {
        if (at >= 44 && at < 48)
            continue; /* the order mark says another thing */
        memcpy(bad, buf, len);
        bad[at] ^= 0x02;
        refused(bad, len, at >= 12 && at < 16 ? "damaged" : "damaged");
    }
    memcpy(bad, buf, len);
    bad[44] ^= 0xff;
    refused(bad, len, "another byte order");
    memcpy(bad, buf, len);
    bad[0] = 'X';
    refused(bad, len, "no LIQCKPT magic");
    memcpy(bad, buf, len);
    bad[8] = 9;
    refused(bad, len, "checkpoint version 9");
    /* Truncated and lengthened. */
    refused(buf, len - 1, "truncated");
    refused(buf, 100, "truncated");
    refused(buf, 10, "shorter than its header");
    memcpy(bad, buf, len);
    memset(bad + len, 0, 8);
    refused(bad, len + 8, "bytes after its end");
    free(bad);
    free(buf);
    liq_ckfile_free(&f);
}

/* Every prefix and every single-byte change of a small file: refused or,
 * for no change at all, read; never a crash (ASan's build runs this too). */
static void
test_liq_ckfile_never_trusts_lengths(void **state)
{
    struct liq_ckfile f, g;
    size_t len;
    unsigned char *buf, *bad;
    char why[256];

    (void)state;
    make(&f, 1);
    buf = encode(&f, &len);
    for (size_t n = 0; n < len; n++) {
        bad = malloc(n + 1);
        memcpy(bad, buf, n);
        assert_int_equal(liq_ckfile_decode(bad, n, "ck", &g, why, sizeof(why)), -EPROTO);
        free(bad);
    }
    bad = malloc(len);
    for (size_t at = 0; at < len; at++) {
        memcpy(bad, buf, len);
        bad[at] = (unsigned char)(bad[at] + 0x81);
        assert_int_equal(liq_ckfile_decode(bad, len, "ck", &g, why, sizeof(why)), -EPROTO);
    }
    /* Header lengths that point past the file: grid axes of 2^20 each. */
    memcpy(bad, buf, len);
    for (int a = 0; a < 3; a++)
        memcpy(bad + 28 + 4 * a, "\x00\x00\x10\x00", 4);
    assert_int_equal(liq_ckfile_decode(bad, len, "ck", &g, why, sizeof(why)), -EPROTO);
    free(bad);
    free(buf);
    liq_ckfile_free(&f);
}

static void
test_liq_ckfile_header_refuses_bad_checkpoints(void **state)
{
    struct liq_ckfile f;
    unsigned char buf[LIQ_CKF_HDR + 256];

    (void)state;
    make(&f, 1);
    f.iter = 0;
    assert_int_equal(liq_ckfile_header(&f, buf, sizeof(buf)), -EINVAL);
    f.iter = 10;
    f.nstate = LIQ_CKF_STATE_MAX + 1;
    assert_int_equal(liq_ckfile_header(&f, buf, sizeof(buf)), -EINVAL);
    f.nstate = 1;
    f.n[1] = 0;
    assert_int_equal(liq_ckfile_header(&f, buf, sizeof(buf)), -EINVAL);
    f.n[1] = 4;
    assert_int_equal(liq_ckfile_header(&f, buf, 40), -EINVAL);
    liq_ckfile_free(&f);
}

static void
test_liq_ckfile_writes_atomically_and_reads_back(void **state)
{
    struct liq_ckfile f, g;
    size_t bytes = 0;
    char why[256], path[128], tmp[128];
    struct stat sb;

    (void)state;
    make(&f, 2);
    assert_int_equal(liq_ckfile_write(dir, &f, &bytes, why, sizeof(why)), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, LIQ_CKF_NAME);
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, LIQ_CKF_NAME);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal((size_t)sb.st_size, bytes);
    assert_int_not_equal(stat(tmp, &sb), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), 0);
    assert_memory_equal(g.v, f.v, liq_ckfile_points(&f) * 2 * sizeof(double));
    liq_ckfile_free(&g);
    /* A write that cannot be made (its temporary name is a directory)
     * fails and leaves the file before it whole. */
    assert_int_equal(mkdir(tmp, 0755), 0);
    f.iter = 60;
    f.v[0] = 99;
    assert_true(liq_ckfile_write(dir, &f, &bytes, why, sizeof(why)) < 0);
    assert_non_null(strstr(why, "cannot write"));
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), 0);
    assert_int_equal(g.iter, 40);
    liq_ckfile_free(&g);
    assert_int_equal(rmdir(tmp), 0);
    assert_int_equal(liq_ckfile_write(dir, &f, &bytes, why, sizeof(why)), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), 0);
    assert_int_equal(g.iter, 60);
    assert_true(g.v[0] == 99);
    liq_ckfile_free(&g);
    /* Cut short on the disk, or lengthened: refused from the header. */
    assert_int_equal(truncate(path, (off_t)bytes - 8), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), -EPROTO);
    assert_non_null(strstr(why, "truncated"));
    assert_null(g.v);
    assert_int_equal(truncate(path, 100), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), -EPROTO);
    assert_non_null(strstr(why, "truncated: 100 bytes"));
    assert_int_equal(liq_ckfile_write(dir, &f, &bytes, why, sizeof(why)), 0);
    assert_int_equal(truncate(path, (off_t)bytes + 1000000), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), -EPROTO);
    assert_non_null(strstr(why, "bytes after its end"));
    assert_int_equal(truncate(path, 3), 0);
    assert_int_equal(liq_ckfile_read(dir, &g, why, sizeof(why)), -EPROTO);
    assert_non_null(strstr(why, "not a liquid checkpoint"));
    assert_null(g.v);
    liq_ckfile_free(&f);
}

static void
test_liq_ckfile_read_names_a_missing_file(void **state)
{
    struct liq_ckfile g;
    char why[256], sub[128];

    (void)state;
    snprintf(sub, sizeof(sub), "%s/empty", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(liq_ckfile_read(sub, &g, why, sizeof(why)), -ENOENT);
    assert_non_null(strstr(why, "no checkpoint there"));
    assert_null(g.v);
}

static void
test_liq_ckfile_same_job_names_the_key(void **state)
{
    char why[256];

    (void)state;
    assert_int_equal(liq_ckfile_same_job("a 1\nb 2\n", "a 1\nb 2\n", why, sizeof(why)), 0);
    assert_int_equal(liq_ckfile_same_job("a 1\nb 2\n", "a 1\nb 3\n", why, sizeof(why)), -1);
    assert_string_equal(why, "the checkpoint is of another job: b 2 there, 3 here");
    assert_int_equal(liq_ckfile_same_job("a 1\n", "a 1\nc x\n", why, sizeof(why)), -1);
    assert_string_equal(why, "the checkpoint is of another job: c (none) there, x here");
    assert_int_equal(liq_ckfile_same_job("a 1\nd 4\n", "a 1\n", why, sizeof(why)), -1);
    assert_string_equal(why, "the checkpoint is of another job: d 4 there, (none) here");
    /* A value that is a prefix of the other's is another value. */
    assert_int_equal(liq_ckfile_same_job("grid 48x48x4\n", "grid 48x48x48\n", why, sizeof(why)),
                     -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_xxh64_matches_xxhash),
        cmocka_unit_test(test_liq_ckfile_decodes_what_it_encodes),
        cmocka_unit_test(test_liq_ckfile_refuses_any_damage),
        cmocka_unit_test(test_liq_ckfile_never_trusts_lengths),
        cmocka_unit_test(test_liq_ckfile_header_refuses_bad_checkpoints),
        cmocka_unit_test(test_liq_ckfile_writes_atomically_and_reads_back),
        cmocka_unit_test(test_liq_ckfile_read_names_a_missing_file),
        cmocka_unit_test(test_liq_ckfile_same_job_names_the_key),
    };

    return cmocka_run_group_tests_name("liq_ckfile", tests, setup, teardown);
}
