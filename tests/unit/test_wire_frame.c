/*
 * test_wire_frame.c - lib/wire/wire_frame.c and lib/wire/wire_err.c: the 32-byte frame
 * header (byte layout from the table in wire.h, every field, every refusal),
 * the bounded body codecs (round trips, exact encodings, every truncation of
 * a composite body read from an exactly sized heap copy so that the
 * sanitizer build catches any read past the end), wire_wbuf_finish, the
 * sticky allocation error, and the error table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* The realloc-failure test asks for 2^63 bytes; under ASan that must come
 * back as NULL rather than abort the process. */
const char *__asan_default_options(void);
__attribute__((used)) const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static const struct wire_hdr sample_hdr = {
    .version = WIRE_VERSION,
    .type = WIRE_T_RELAY,
    .len = 0x01020304,
    .src = 0x05060708,
    .dst = 0x090a0b0c,
    .tag = -2,
    .ctx = INT32_MIN,
    .id = 0xfedcba98,
    .flags = 0x80000001,
};

static void
assert_hdr_equal(const struct wire_hdr *a, const struct wire_hdr *b)
{
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->len, b->len);
    assert_int_equal(a->src, b->src);
    assert_int_equal(a->dst, b->dst);
    assert_int_equal(a->tag, b->tag);
    assert_int_equal(a->ctx, b->ctx);
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->flags, b->flags);
}

/* ---- header ---- */

static void
test_wire_frame_header_layout_matches_the_table(void **state)
{
    static const unsigned char want[WIRE_HDR_LEN] = {
        0x4c, 0x56, WIRE_VERSION, WIRE_T_RELAY,
        0x01, 0x02, 0x03, 0x04,         /* len */
        0x05, 0x06, 0x07, 0x08,         /* src */
        0x09, 0x0a, 0x0b, 0x0c,         /* dst */
        0xff, 0xff, 0xff, 0xfe,         /* tag -2 */
        0x80, 0x00, 0x00, 0x00,         /* ctx INT32_MIN */
        0xfe, 0xdc, 0xba, 0x98,         /* id */
        0x80, 0x00, 0x00, 0x01,         /* flags */
    };
    unsigned char out[WIRE_HDR_LEN + 4];

    (void)state;
    memset(out, 0xa5, sizeof(out));
    wire_hdr_pack(&sample_hdr, out);
    assert_memory_equal(out, want, WIRE_HDR_LEN);
    /* Nothing past the 32 bytes is written. */
    for (size_t i = WIRE_HDR_LEN; i < sizeof(out); i++)
        assert_int_equal(out[i], 0xa5);
}

static void
test_wire_frame_header_round_trips_every_field(void **state)
{
    static const int32_t signed_vals[] = { 0, 1, -1, -4006, INT32_MAX, INT32_MIN };
    static const uint32_t unsigned_vals[] = { 0, 1, 0x7fffffff, 0x80000000, UINT32_MAX };
    unsigned char buf[WIRE_HDR_LEN];
    struct wire_hdr h, got;

    (void)state;
    for (size_t i = 0; i < sizeof(signed_vals) / sizeof(signed_vals[0]); i++) {
        for (size_t j = 0; j < sizeof(unsigned_vals) / sizeof(unsigned_vals[0]); j++) {
            h = (struct wire_hdr){
                .version = WIRE_VERSION,
                .type = (uint8_t)(1 + (i * 7 + j * 13) % 255),
                .len = unsigned_vals[j],
                .src = unsigned_vals[(j + 1) % 5],
                .dst = unsigned_vals[(j + 2) % 5],
                .tag = signed_vals[i],
                .ctx = signed_vals[(i + 3) % 6],
                .id = unsigned_vals[(j + 3) % 5],
                .flags = unsigned_vals[(j + 4) % 5],
            };
            wire_hdr_pack(&h, buf);
            memset(&got, 0x5a, sizeof(got));
            assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), 0);
            assert_hdr_equal(&got, &h);
        }
    }
    /* Every type from 1 to 255 survives. */
    for (int t = 1; t <= 255; t++) {
        h = sample_hdr;
        h.type = (uint8_t)t;
        wire_hdr_pack(&h, buf);
        assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), 0);
        assert_int_equal(got.type, t);
    }
}

static void
test_wire_frame_rejects_bad_magic(void **state)
{
    unsigned char buf[WIRE_HDR_LEN];
    struct wire_hdr got;

    (void)state;
    for (int byte = 0; byte < 2; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            wire_hdr_pack(&sample_hdr, buf);
            buf[byte] ^= (unsigned char)(1u << bit);
            assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), WIRE_EFRAME);
        }
    }
    /* Byte-swapped magic ("VL") is not the magic. */
    wire_hdr_pack(&sample_hdr, buf);
    buf[0] = 0x56;
    buf[1] = 0x4c;
    assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), WIRE_EFRAME);
}

static void
test_wire_frame_rejects_other_version(void **state)
{
    static const unsigned char versions[] = { 0, WIRE_VERSION + 1, 0x7f, 0x80, 0xff };
    unsigned char buf[WIRE_HDR_LEN];
    struct wire_hdr got;

    (void)state;
    for (size_t i = 0; i < sizeof(versions); i++) {
        wire_hdr_pack(&sample_hdr, buf);
        buf[2] = versions[i];
        assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), WIRE_EVERSION);
    }
}

static void
test_wire_frame_rejects_type_zero(void **state)
{
    unsigned char buf[WIRE_HDR_LEN];
    struct wire_hdr h = sample_hdr, got;

    (void)state;
    h.type = 0;
    h.len = 0;
    wire_hdr_pack(&h, buf);
    assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), WIRE_EFRAME);
}

static void
test_wire_frame_rejects_oversized_length(void **state)
{
    unsigned char buf[WIRE_HDR_LEN];
    struct wire_hdr h = sample_hdr, got;

    (void)state;
    /* Exactly the limit is allowed, one more is not. */
    h.len = 1000;
    wire_hdr_pack(&h, buf);
    assert_int_equal(wire_hdr_unpack(buf, 1000, &got), 0);
    assert_int_equal(got.len, 1000);
    assert_int_equal(wire_hdr_unpack(buf, 999, &got), -EMSGSIZE);
    assert_int_equal(wire_hdr_unpack(buf, 0, &got), -EMSGSIZE);

    h.len = UINT32_MAX;
    wire_hdr_pack(&h, buf);
    assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX - 1, &got), -EMSGSIZE);
    assert_int_equal(wire_hdr_unpack(buf, UINT32_MAX, &got), 0);

    /* An empty body passes a limit of 0. */
    h.len = 0;
    wire_hdr_pack(&h, buf);
    assert_int_equal(wire_hdr_unpack(buf, 0, &got), 0);
}

/* ---- body codecs ---- */

static void
test_wire_frame_puts_integers_big_endian(void **state)
{
    static const unsigned char want[] = {
        0xab,                                           /* u8 */
        0x12, 0x34, 0x56, 0x78,                         /* u32 */
        0xff, 0xff, 0xff, 0xff,                         /* i32 -1 */
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, /* u64 */
        0x3f, 0xf8, 0, 0, 0, 0, 0, 0,                   /* double 1.5 */
        0, 0, 0, 3, 'a', 'b', 'c',                      /* str, no NUL */
        0, 0, 0, 0,                                     /* empty str */
        0, 0, 0, 0,                                     /* NULL str */
        'x', 0, 'y',                                    /* bytes */
    };
    struct wire_wbuf b;

    (void)state;
    wire_wbuf_init(&b);
    wire_put_u8(&b, 0xab);
    wire_put_u32(&b, 0x12345678);
    wire_put_i32(&b, -1);
    wire_put_u64(&b, 0x0123456789abcdefULL);
    wire_put_double(&b, 1.5);
    wire_put_str(&b, "abc");
    wire_put_str(&b, "");
    wire_put_str(&b, NULL);
    wire_put_bytes(&b, "x\0y", 3);
    wire_put_bytes(&b, "ignored", 0);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.data, want, sizeof(want));
    wire_wbuf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void
test_wire_frame_round_trips_every_type(void **state)
{
    static const uint8_t u8s[] = { 0, 1, 0x7f, 0x80, 0xff };
    static const uint32_t u32s[] = { 0, 1, 0xdeadbeef, 0x80000000, UINT32_MAX };
    static const int32_t i32s[] = { 0, -1, 1, INT32_MIN, INT32_MAX, -4006 };
    static const uint64_t u64s[] = { 0, 1, 0x0123456789abcdefULL, 1ULL << 63, UINT64_MAX,
                                     0xffffffffULL, 0x100000000ULL };
    const double dbls[] = { 0.0, -0.0, 1.5, -2.25, DBL_MAX, -DBL_MAX, DBL_MIN,
                            DBL_MIN / 4 /* subnormal */, INFINITY, -INFINITY, NAN, M_PI };
    char longstr[WIRE_STR_MAX];
    const char *strs[] = { "", "a", "hello world", "it's \"quoted\" $(x)", longstr };
    unsigned char blob[300];
    struct wire_wbuf b;
    struct wire_rbuf r;
    size_t i;

    (void)state;
    memset(longstr, 'L', sizeof(longstr) - 1);
    longstr[sizeof(longstr) - 1] = '\0';
    for (i = 0; i < sizeof(blob); i++)
        blob[i] = (unsigned char)(i * 37);

    wire_wbuf_init(&b);
    for (i = 0; i < sizeof(u8s) / sizeof(u8s[0]); i++)
        wire_put_u8(&b, u8s[i]);
    for (i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++)
        wire_put_u32(&b, u32s[i]);
    for (i = 0; i < sizeof(i32s) / sizeof(i32s[0]); i++)
        wire_put_i32(&b, i32s[i]);
    for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
        wire_put_u64(&b, u64s[i]);
    for (i = 0; i < sizeof(dbls) / sizeof(dbls[0]); i++)
        wire_put_double(&b, dbls[i]);
    for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        wire_put_str(&b, strs[i]);
    wire_put_bytes(&b, blob, sizeof(blob));
    assert_int_equal(b.err, 0);

    /* Read back from an exact-size heap copy. */
    unsigned char *copy = malloc(b.len);
    assert_non_null(copy);
    memcpy(copy, b.data, b.len);
    wire_rbuf_init(&r, copy, b.len);
    for (i = 0; i < sizeof(u8s) / sizeof(u8s[0]); i++) {
        uint8_t v;
        assert_int_equal(wire_get_u8(&r, &v), 0);
        assert_int_equal(v, u8s[i]);
    }
    for (i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++) {
        uint32_t v;
        assert_int_equal(wire_get_u32(&r, &v), 0);
        assert_int_equal(v, u32s[i]);
    }
    for (i = 0; i < sizeof(i32s) / sizeof(i32s[0]); i++) {
        int32_t v;
        assert_int_equal(wire_get_i32(&r, &v), 0);
        assert_int_equal(v, i32s[i]);
    }
    for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++) {
        uint64_t v;
        assert_int_equal(wire_get_u64(&r, &v), 0);
        assert_true(v == u64s[i]);
    }
    for (i = 0; i < sizeof(dbls) / sizeof(dbls[0]); i++) {
        double v;
        /* Bit-identical, so -0.0 and NaN count too. */
        assert_int_equal(wire_get_double(&r, &v), 0);
        assert_memory_equal(&v, &dbls[i], sizeof(v));
    }
    for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        char s[WIRE_STR_MAX];
        assert_int_equal(wire_get_str(&r, s, sizeof(s)), 0);
        assert_string_equal(s, strs[i]);
    }
    const void *p;
    assert_int_equal(wire_get_bytes(&r, &p, sizeof(blob)), 0);
    assert_memory_equal(p, blob, sizeof(blob));
    /* Points into the buffer, not a copy. */
    assert_ptr_equal(p, copy + b.len - sizeof(blob));
    assert_int_equal(r.pos, r.len);
    /* Zero bytes at the very end are still fine. */
    assert_int_equal(wire_get_bytes(&r, &p, 0), 0);
    uint8_t v8;
    assert_int_equal(wire_get_u8(&r, &v8), WIRE_EFRAME);
    free(copy);
    wire_wbuf_free(&b);
}

/*
 * A composite body: u8, u32, i32, u64, double, str, bytes[5].  For every
 * length short of the whole, the fields that fit read back right, the first
 * that does not returns WIRE_EFRAME, pos never passes len, and reads come
 * from an exactly sized malloc so any overread is a sanitizer error.
 */
static void
test_wire_frame_every_truncation_fails_cleanly(void **state)
{
    enum { F_U8, F_U32, F_I32, F_U64, F_DBL, F_STR, F_BYTES, F_N };
    static const size_t end[F_N] = { 1, 5, 9, 17, 25, 25 + 4 + 7, 25 + 4 + 7 + 5 };
    struct wire_wbuf b;

    (void)state;
    wire_wbuf_init(&b);
    wire_put_u8(&b, 0x9c);
    wire_put_u32(&b, 0xcafef00d);
    wire_put_i32(&b, -12345);
    wire_put_u64(&b, 0x1122334455667788ULL);
    wire_put_double(&b, -3.75);
    wire_put_str(&b, "payload");
    wire_put_bytes(&b, "\x01\x02\x03\x04\x05", 5);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.len, end[F_N - 1]);

    for (size_t len = 0; len <= b.len; len++) {
        unsigned char *copy = malloc(len ? len : 1);
        struct wire_rbuf r;
        int rc[F_N];
        uint8_t u8 = 0;
        uint32_t u32 = 0;
        int32_t i32 = 0;
        uint64_t u64 = 0;
        double dbl = 0;
        char str[64] = "";
        const void *bytes = NULL;

        assert_non_null(copy);
        memcpy(copy, b.data, len);
        wire_rbuf_init(&r, copy, len);
        rc[F_U8] = wire_get_u8(&r, &u8);
        assert_true(r.pos <= r.len);
        rc[F_U32] = wire_get_u32(&r, &u32);
        assert_true(r.pos <= r.len);
        rc[F_I32] = wire_get_i32(&r, &i32);
        assert_true(r.pos <= r.len);
        rc[F_U64] = wire_get_u64(&r, &u64);
        assert_true(r.pos <= r.len);
        rc[F_DBL] = wire_get_double(&r, &dbl);
        assert_true(r.pos <= r.len);
        rc[F_STR] = wire_get_str(&r, str, sizeof(str));
        assert_true(r.pos <= r.len);
        rc[F_BYTES] = wire_get_bytes(&r, &bytes, 5);
        assert_true(r.pos <= r.len);

        /* Fields are read in order, so stop at the first that failed. */
        for (int f = 0; f < F_N; f++) {
            if (end[f] > len) {
                assert_int_equal(rc[f], WIRE_EFRAME);
                break;
            }
            assert_int_equal(rc[f], 0);
            switch (f) {
            case F_U8: assert_int_equal(u8, 0x9c); break;
            case F_U32: assert_int_equal(u32, 0xcafef00d); break;
            case F_I32: assert_int_equal(i32, -12345); break;
            case F_U64: assert_true(u64 == 0x1122334455667788ULL); break;
            case F_DBL: assert_true(dbl == -3.75); break;
            case F_STR: assert_string_equal(str, "payload"); break;
            case F_BYTES: assert_memory_equal(bytes, "\x01\x02\x03\x04\x05", 5); break;
            }
        }
        free(copy);
    }
    wire_wbuf_free(&b);
}

static void
test_wire_frame_getters_on_empty_input_fail(void **state)
{
    static const unsigned char one = 0;
    struct wire_rbuf r;
    uint8_t u8;
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    double d;
    char s[8];
    const void *p;

    (void)state;
    wire_rbuf_init(&r, &one, 0);
    assert_int_equal(wire_get_u8(&r, &u8), WIRE_EFRAME);
    assert_int_equal(wire_get_u32(&r, &u32), WIRE_EFRAME);
    assert_int_equal(wire_get_i32(&r, &i32), WIRE_EFRAME);
    assert_int_equal(wire_get_u64(&r, &u64), WIRE_EFRAME);
    assert_int_equal(wire_get_double(&r, &d), WIRE_EFRAME);
    assert_int_equal(wire_get_str(&r, s, sizeof(s)), WIRE_EFRAME);
    assert_int_equal(wire_get_bytes(&r, &p, 1), WIRE_EFRAME);
    assert_int_equal(wire_get_bytes(&r, &p, SIZE_MAX), WIRE_EFRAME);
    assert_int_equal(r.pos, 0);

    /* A length that would wrap pos around is refused, not added. */
    wire_rbuf_init(&r, &one, 1);
    assert_int_equal(wire_get_u8(&r, &u8), 0);
    assert_int_equal(wire_get_bytes(&r, &p, SIZE_MAX), WIRE_EFRAME);
    assert_int_equal(r.pos, 1);
}

/* Encode a string body by hand: u32 n, then n bytes. */
static size_t
raw_str(unsigned char *out, uint32_t n, const void *bytes, size_t have)
{
    out[0] = (unsigned char)(n >> 24);
    out[1] = (unsigned char)(n >> 16);
    out[2] = (unsigned char)(n >> 8);
    out[3] = (unsigned char)n;
    memcpy(out + 4, bytes, have);
    return 4 + have;
}

static void
test_wire_frame_get_str_refuses_string_longer_than_buffer(void **state)
{
    unsigned char body[64];
    char out[16];
    struct wire_rbuf r;
    size_t n;

    (void)state;
    /* cap 8 takes 7 characters and its NUL ... */
    n = raw_str(body, 7, "1234567", 7);
    wire_rbuf_init(&r, body, n);
    memset(out, '#', sizeof(out));
    assert_int_equal(wire_get_str(&r, out, 8), 0);
    assert_string_equal(out, "1234567");
    assert_int_equal(out[8], '#');

    /* ... but not 8: no silent truncation, nothing past cap written. */
    n = raw_str(body, 8, "12345678", 8);
    wire_rbuf_init(&r, body, n);
    memset(out, '#', sizeof(out));
    assert_int_equal(wire_get_str(&r, out, 8), WIRE_EFRAME);
    for (size_t i = 8; i < sizeof(out); i++)
        assert_int_equal(out[i], '#');

    /* cap 0 and cap 1. */
    n = raw_str(body, 0, "", 0);
    wire_rbuf_init(&r, body, n);
    assert_int_equal(wire_get_str(&r, out, 0), WIRE_EFRAME);
    wire_rbuf_init(&r, body, n);
    assert_int_equal(wire_get_str(&r, out, 1), 0);
    assert_string_equal(out, "");
    n = raw_str(body, 1, "x", 1);
    wire_rbuf_init(&r, body, n);
    assert_int_equal(wire_get_str(&r, out, 1), WIRE_EFRAME);

    /* A huge announced length with a huge cap still cannot read past the end. */
    n = raw_str(body, UINT32_MAX, "abc", 3);
    wire_rbuf_init(&r, body, n);
    assert_int_equal(wire_get_str(&r, out, SIZE_MAX), WIRE_EFRAME);
    wire_rbuf_init(&r, body, n);
    assert_int_equal(wire_get_str(&r, out, sizeof(out)), WIRE_EFRAME);
}

static void
test_wire_frame_get_str_refuses_embedded_nul(void **state)
{
    static const struct {
        const char *bytes;
        uint32_t n;
    } cases[] = {
        { "ab\0cd", 5 },
        { "abc\0", 4 },     /* a trailing NUL is not a terminator on the wire */
        { "\0abc", 4 },
        { "\0", 1 },
    };
    unsigned char body[64];
    char out[32];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct wire_rbuf r;
        size_t n = raw_str(body, cases[i].n, cases[i].bytes, cases[i].n);
        wire_rbuf_init(&r, body, n);
        assert_int_equal(wire_get_str(&r, out, sizeof(out)), WIRE_EFRAME);
    }
}

static void
test_wire_frame_finish_fills_header_length(void **state)
{
    struct wire_wbuf b;
    struct wire_hdr h = sample_hdr, got;

    (void)state;
    wire_wbuf_init(&b);
    wire_wbuf_begin_frame(&b);
    assert_int_equal(b.len, WIRE_HDR_LEN);
    wire_put_str(&b, "node3");
    wire_put_u32(&b, 42);
    h.len = 12345;                      /* overwritten by finish */
    assert_int_equal(wire_wbuf_finish(&b, &h), 0);
    assert_int_equal(h.len, 4 + 5 + 4);
    assert_int_equal(b.len, WIRE_HDR_LEN + 13);
    assert_int_equal(wire_hdr_unpack(b.data, 13, &got), 0);
    assert_hdr_equal(&got, &h);
    assert_int_equal(wire_hdr_unpack(b.data, 12, &got), -EMSGSIZE);
    wire_wbuf_free(&b);

    /* An empty body. */
    wire_wbuf_init(&b);
    wire_wbuf_begin_frame(&b);
    h = sample_hdr;
    assert_int_equal(wire_wbuf_finish(&b, &h), 0);
    assert_int_equal(h.len, 0);
    assert_int_equal(wire_hdr_unpack(b.data, 0, &got), 0);
    assert_int_equal(got.len, 0);
    wire_wbuf_free(&b);

    /* finish without begin_frame has no room for a header. */
    wire_wbuf_init(&b);
    wire_put_u8(&b, 1);
    assert_int_equal(wire_wbuf_finish(&b, &h), -EMSGSIZE);
    wire_wbuf_free(&b);
}

static void
test_wire_frame_wbuf_grows_past_its_first_block(void **state)
{
    struct wire_wbuf b;

    (void)state;
    wire_wbuf_init(&b);
    for (uint32_t i = 0; i < 10000; i++)
        wire_put_u32(&b, i * 2654435761u);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.len, 40000);
    assert_true(b.cap >= b.len);
    struct wire_rbuf r;
    wire_rbuf_init(&r, b.data, b.len);
    for (uint32_t i = 0; i < 10000; i++) {
        uint32_t v;
        assert_int_equal(wire_get_u32(&r, &v), 0);
        assert_int_equal(v, i * 2654435761u);
    }
    wire_wbuf_free(&b);
}

static void
test_wire_frame_size_overflow_is_sticky(void **state)
{
    struct wire_wbuf b;
    static const char dummy[1];

    (void)state;
    wire_wbuf_init(&b);
    wire_wbuf_begin_frame(&b);
    wire_put_u32(&b, 7);
    size_t len = b.len;
    unsigned char *data = b.data;

    /* len + SIZE_MAX overflows: refused before any allocation. */
    wire_put_bytes(&b, dummy, SIZE_MAX);
    assert_int_equal(b.err, -ENOMEM);
    assert_int_equal(b.len, len);
    assert_ptr_equal(b.data, data);

    /* Every later put is a no-op and finish reports the error. */
    wire_put_u8(&b, 1);
    wire_put_u32(&b, 2);
    wire_put_u64(&b, 3);
    wire_put_str(&b, "x");
    wire_put_bytes(&b, "y", 1);
    wire_wbuf_begin_frame(&b);
    assert_int_equal(b.len, len);
    assert_int_equal(b.err, -ENOMEM);
    struct wire_hdr h = sample_hdr;
    assert_int_equal(wire_wbuf_finish(&b, &h), -ENOMEM);
    wire_wbuf_free(&b);
    assert_int_equal(b.err, 0);
}

static void
test_wire_frame_allocation_failure_is_sticky(void **state)
{
    struct wire_wbuf b;
    static const char dummy[1];

    (void)state;
    wire_wbuf_init(&b);
    wire_put_str(&b, "kept");
    size_t len = b.len;

    /* 2^63 bytes: realloc fails (glibc refuses more than PTRDIFF_MAX, ASan
     * returns NULL with allocator_may_return_null=1).  The source is never
     * read because the put fails first. */
    volatile size_t huge = SIZE_MAX / 2;
    void *probe = malloc(huge);
    if (probe != NULL) {
        free(probe);
        skip();
    }
    wire_put_bytes(&b, dummy, huge);
    assert_int_equal(b.err, -ENOMEM);
    assert_int_equal(b.len, len);
    /* The bytes already written survive. */
    struct wire_rbuf r;
    char s[8];
    wire_rbuf_init(&r, b.data, b.len);
    assert_int_equal(wire_get_str(&r, s, sizeof(s)), 0);
    assert_string_equal(s, "kept");

    wire_put_u8(&b, 1);
    assert_int_equal(b.len, len);
    assert_int_equal(b.err, -ENOMEM);
    wire_wbuf_free(&b);
}

/* ---- error table ---- */

static const struct {
    int code;
    const char *name;
    const char *msg;
} err_table[] = {
#define ERR_ROW(name, val, msg) { val, "WIRE_" #name, msg },
    WIRE_ERRNO_MAP(ERR_ROW)
#undef ERR_ROW
};

static void
test_wire_err_names_and_texts_every_code(void **state)
{
    size_t n = sizeof(err_table) / sizeof(err_table[0]);

    (void)state;
    assert_true(n >= 16);
    for (size_t i = 0; i < n; i++) {
        /* Below -4000 and above WIRE_ERR_MIN, so never an errno. */
        assert_true(err_table[i].code < -4000);
        assert_true(err_table[i].code > WIRE_ERR_MIN);
        assert_string_equal(wire_errname(err_table[i].code), err_table[i].name);
        assert_string_equal(wire_strerror(err_table[i].code), err_table[i].msg);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(err_table[i].code, err_table[j].code);
            assert_string_not_equal(err_table[i].msg, err_table[j].msg);
        }
    }
    assert_string_equal(wire_errname(WIRE_EFRAME), "WIRE_EFRAME");
    assert_string_equal(wire_strerror(WIRE_EFRAME), "malformed frame");
}

static void
test_wire_err_maps_errno_codes(void **state)
{
    static const struct {
        int code;
        const char *name;
    } errnos[] = {
        { -ENOMEM, "ENOMEM" },       { -EINVAL, "EINVAL" },         { -ENOENT, "ENOENT" },
        { -EACCES, "EACCES" },       { -EEXIST, "EEXIST" },         { -EPROTO, "EPROTO" },
        { -EMSGSIZE, "EMSGSIZE" },   { -ETIMEDOUT, "ETIMEDOUT" },   { -ECONNREFUSED, "ECONNREFUSED" },
        { -ECONNRESET, "ECONNRESET" }, { -EPIPE, "EPIPE" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
        assert_string_equal(wire_errname(errnos[i].code), errnos[i].name);
        assert_string_equal(wire_strerror(errnos[i].code), strerror(-errnos[i].code));
    }
    /* An errno without a symbolic name still has its text. */
    assert_string_equal(wire_strerror(-ENOSPC), strerror(ENOSPC));
    assert_string_equal(wire_errname(-ENOSPC), "EUNKNOWN");
}

static void
test_wire_err_zero_and_unknown_codes_are_never_null(void **state)
{
    static const int unknown[] = { 1, 4006, 12345, INT_MAX, -4000, -4030, -4050,
                                   WIRE_ERR_MIN, -4101, -100000, INT_MIN };

    (void)state;
    assert_string_equal(wire_strerror(0), "success");
    assert_string_equal(wire_errname(0), "OK");
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        const char *s = wire_strerror(unknown[i]);
        const char *n = wire_errname(unknown[i]);
        assert_non_null(s);
        assert_non_null(n);
        assert_true(strlen(s) > 0);
        assert_string_equal(n, "EUNKNOWN");
        /* Never confused with one of ours. */
        for (size_t j = 0; j < sizeof(err_table) / sizeof(err_table[0]); j++)
            assert_string_not_equal(s, err_table[j].msg);
    }
    assert_string_equal(wire_strerror(-4050), "unknown error");
    assert_string_equal(wire_strerror(INT_MIN), "unknown error");
    assert_string_equal(wire_strerror(42), "unknown error");
}

/* What a spawn request may put in its task's environment: not our own
 * names (the token, the tid, the socket: the daemon's), but the context
 * and the shared memory's tuning. */
static void
test_wire_env_spawnable(void **state)
{
    (void)state;
    assert_true(wire_env_spawnable("PATH=/bin"));
    assert_true(wire_env_spawnable("LIQUIDVM"));
    assert_true(wire_env_spawnable("LIQUIDVM_CTX=3"));
    assert_true(wire_env_spawnable("LIQUIDVM_SHM_RING=0"));
    assert_true(wire_env_spawnable("LIQUIDVM_SHM_SPIN_US"));
    assert_true(wire_env_spawnable("LIQUIDVM_TRACE=/tmp/t"));
    assert_true(wire_env_spawnable("LIQUIDVM_TRACE_RUN=vmctl12-3"));
    assert_false(wire_env_spawnable("LIQUIDVM_TRACE_RUNX=1"));
    assert_true(wire_env_spawnable("LIQUIDVM_TASKPATH=0/1"));
    assert_true(wire_env_spawnable("LIQUIDVM_HINTS=h.conf"));
    assert_false(wire_env_spawnable("LIQUIDVM_TOKEN=0123456789abcdef"));
    assert_false(wire_env_spawnable("LIQUIDVM_TID=0x40001"));
    assert_false(wire_env_spawnable("LIQUIDVM_SOCK=/tmp/x"));
    assert_false(wire_env_spawnable("LIQUIDVM_SHM_RINGX=1"));
    assert_false(wire_env_spawnable("LIQUIDVM_SHM=1"));
    assert_false(wire_env_spawnable("LIQUIDVM_CTXX=1"));
    assert_false(wire_env_spawnable("LIQUIDVM_HOME=/tmp"));
    assert_false(wire_env_spawnable("LIQUIDVM_PARENT=0x40001"));
}

/* wire_json_bytes: quotes, backslashes and controls escaped; valid UTF-8
 * kept; a stray continuation byte, a lead byte cut short and 0xff become
 * U+FFFD; a NUL inside len is escaped, not an end. */
static void
test_wire_json_bytes_is_always_json(void **state)
{
    static const char in[] = "a\"b\\c\n\x01\xc3\xa9\x80\xff\xe2\x82\0z\xf0\x9f";
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);

    (void)state;
    assert_non_null(fp);
    wire_json_bytes(fp, in, sizeof(in) - 1);
    fputc(' ', fp);
    wire_json_str(fp, "t\tx");
    fclose(fp);
    assert_string_equal(out, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd"
                             "\\u0000z\\ufffd\\ufffd\" \"t\\tx\"");
    assert_true(wire_utf8_ok((const unsigned char *)"\xc3\xa9x", 3));
    assert_false(wire_utf8_ok((const unsigned char *)"\xc3", 1));
    assert_false(wire_utf8_ok((const unsigned char *)"\x80", 1));
    free(out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_frame_header_layout_matches_the_table),
        cmocka_unit_test(test_wire_frame_header_round_trips_every_field),
        cmocka_unit_test(test_wire_frame_rejects_bad_magic),
        cmocka_unit_test(test_wire_frame_rejects_other_version),
        cmocka_unit_test(test_wire_frame_rejects_type_zero),
        cmocka_unit_test(test_wire_frame_rejects_oversized_length),
        cmocka_unit_test(test_wire_frame_puts_integers_big_endian),
        cmocka_unit_test(test_wire_frame_round_trips_every_type),
        cmocka_unit_test(test_wire_frame_every_truncation_fails_cleanly),
        cmocka_unit_test(test_wire_frame_getters_on_empty_input_fail),
        cmocka_unit_test(test_wire_frame_get_str_refuses_string_longer_than_buffer),
        cmocka_unit_test(test_wire_frame_get_str_refuses_embedded_nul),
        cmocka_unit_test(test_wire_frame_finish_fills_header_length),
        cmocka_unit_test(test_wire_frame_wbuf_grows_past_its_first_block),
        cmocka_unit_test(test_wire_frame_size_overflow_is_sticky),
        cmocka_unit_test(test_wire_frame_allocation_failure_is_sticky),
        cmocka_unit_test(test_wire_err_names_and_texts_every_code),
        cmocka_unit_test(test_wire_err_maps_errno_codes),
        cmocka_unit_test(test_wire_err_zero_and_unknown_codes_are_never_null),
        cmocka_unit_test(test_wire_env_spawnable),
        cmocka_unit_test(test_wire_json_bytes_is_always_json),
    };
    return cmocka_run_group_tests_name("wire_frame", tests, NULL, NULL);
}
