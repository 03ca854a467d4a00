/*
 * test_pvm_pack.c - lib/pvm/pvm_pack.c: XDR bytes of every type against known
 * sequences (taken from PVM 3.4.6), round trips of every type in every
 * encoding with strides, strings, unpacking past the end, bad arguments,
 * pvm_packf/pvm_unpackf conversions, pvm_pkmesg nesting and hostile nested
 * headers, PvmDataInPlace, thousands of random pack sequences that must
 * round-trip (fixed seed), and the same bytes as PVM's own libpvm3 for
 * fixed and random sequences when it is installed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/pvm/pvm_ctx.c"
#include "../../lib/pvm/pvm_err.c"
#include "../../lib/pvm/pvm_buf.c"
#include "../../lib/pvm/pvm_pack.c"

#include <float.h>
#include <math.h>

#include "test_pvm_real.h"

static int
reset(void **state)
{
    (void)state;
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    pvm_errno = 0;
    return 0;
}

/* The active send buffer's body. */
static size_t
sbody(const unsigned char **p)
{
    size_t len;

    assert_non_null(pvm__ctx.sbuf);
    assert_int_equal(pvm__buf_flatten(pvm__ctx.sbuf, p, &len), 0);
    return len;
}

static void
assert_sbody(const void *want, size_t n)
{
    const unsigned char *p;

    assert_int_equal(sbody(&p), n);
    assert_memory_equal(p, want, n);
}

/* Make the send buffer the receive buffer. */
static void
flip(void)
{
    int b = pvm_getsbuf();

    assert_true(b > 0);
    assert_true(pvm_setrbuf(b) >= 0);
}

/* ---- XDR bytes, as PVM 3.4.6 writes them ---- */

static void
test_pvm_pack_xdr_bytes_of_every_type(void **state)
{
    char by[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    short sh[4] = { 1, -2, 0x7fff, -32768 };
    unsigned short ush[2] = { 0xffff, 1 };
    int in[3] = { 1, -2, 0x01020304 };
    unsigned int un[2] = { 0xffffffffu, 7 };
    long lo[4] = { 1, -2, 0x7fffffffL, -0x80000000L };
    unsigned long ul[2] = { 0xffffffffUL, 5 };
    float fl[2] = { 1.0f, -2.5f };
    double db[2] = { 1.0, -2.5 };
    float cx[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
    double dcx[4] = { 1.0, 2.0, 3.0, 4.0 };

    (void)state;
#define XDR_CASE(call, ...)                                                   \
    do {                                                                      \
        static const unsigned char want[] = { __VA_ARGS__ };                  \
        pvm_initsend(PvmDataDefault);                                         \
        assert_int_equal(call, PvmOk);                                        \
        assert_sbody(want, sizeof want);                                      \
    } while (0)
    XDR_CASE(pvm_pkbyte(by, 1, 1), 1, 0, 0, 0);
    XDR_CASE(pvm_pkbyte(by, 3, 2), 1, 3, 5, 0);
    XDR_CASE(pvm_pkbyte(by, 5, 1), 1, 2, 3, 4, 5, 0, 0, 0);
    XDR_CASE(pvm_pkbyte(by, 4, 1), 1, 2, 3, 4);
    XDR_CASE(pvm_pkshort(sh, 4, 1), 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0x7f, 0xff, 0xff,
             0xff, 0x80, 0);
    XDR_CASE(pvm_pkshort(sh, 2, 2), 0, 0, 0, 1, 0, 0, 0x7f, 0xff);
    XDR_CASE(pvm_pkushort(ush, 2, 1), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1);
    XDR_CASE(pvm_pkint(in, 3, 1), 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4);
    XDR_CASE(pvm_pkuint(un, 2, 1), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7);
    XDR_CASE(pvm_pklong(lo, 4, 1), 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x7f, 0xff, 0xff, 0xff,
             0x80, 0, 0, 0);
    XDR_CASE(pvm_pkulong(ul, 2, 1), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 5);
    XDR_CASE(pvm_pkfloat(fl, 2, 1), 0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0);
    XDR_CASE(pvm_pkdouble(db, 2, 1), 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x04, 0, 0, 0, 0, 0, 0);
    XDR_CASE(pvm_pkcplx(cx, 2, 1), 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0x40, 0x40, 0, 0, 0x40, 0x80,
             0, 0);
    XDR_CASE(pvm_pkcplx(cx, 1, 2), 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0);
    XDR_CASE(pvm_pkdcplx(dcx, 2, 1), 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
             0x40, 0x08, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0);
    XDR_CASE(pvm_pkdcplx(dcx, 1, 2), 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0);
    XDR_CASE(pvm_pkstr("abc"), 0, 0, 0, 4, 'a', 'b', 'c', 0);
    XDR_CASE(pvm_pkstr("abcd"), 0, 0, 0, 5, 'a', 'b', 'c', 'd', 0, 0, 0, 0);
    XDR_CASE(pvm_pkstr(""), 0, 0, 0, 1, 0, 0, 0, 0);
    XDR_CASE(pvm_packf("%d %hd %ld %c %s %f %lf", 5, 6, 7L, 'x', "hi", 1.5, 2.5), 0, 0, 0, 5, 0,
             0, 0, 6, 0, 0, 0, 7, 'x', 0, 0, 0, 0, 0, 0, 3, 'h', 'i', 0, 0, 0x3f, 0xc0, 0, 0,
             0x40, 0x04, 0, 0, 0, 0, 0, 0);
#undef XDR_CASE
}

static void
test_pvm_pack_raw_bytes_are_native(void **state)
{
    short sh[2] = { 1, -2 };
    long lo[2] = { 0x100000000L, -1 };
    int len = 0;
    const unsigned char *p;
    size_t n;

    (void)state;
    pvm_initsend(PvmDataRaw);
    assert_int_equal(pvm_pkbyte("xyz", 3, 1), PvmOk);
    assert_int_equal(pvm_pkshort(sh, 2, 1), PvmOk);
    assert_int_equal(pvm_pklong(lo, 2, 1), PvmOk);
    assert_int_equal(pvm_pkstr("ab"), PvmOk);
    n = sbody(&p);
    assert_int_equal(n, 3 + sizeof sh + sizeof lo + sizeof(int) + 3);
    assert_memory_equal(p, "xyz", 3);
    assert_memory_equal(p + 3, sh, sizeof sh);
    assert_memory_equal(p + 3 + sizeof sh, lo, sizeof lo);
    memcpy(&len, p + 3 + sizeof sh + sizeof lo, sizeof len);
    assert_int_equal(len, 3);
    assert_memory_equal(p + 3 + sizeof sh + sizeof lo + sizeof len, "ab", 3);
}

/* ---- round trips ---- */

/* Pack with one stride, unpack with another, in one encoding. */
static void
round_trip_type(int enc, int type, const void *src, int n, int pstride, int ustride)
{
    size_t sz = pvm__tsize[type].native, i;
    unsigned char *dst = calloc((size_t)n * (size_t)ustride + 1, sz);
    const unsigned char *s = src;

    assert_non_null(dst);
    pvm_initsend(enc);
    assert_int_equal(pvm__pack(pvm__ctx.sbuf, type, src, n, pstride), 0);
    flip();
    assert_int_equal(pvm__unpack(pvm__ctx.rbuf, type, dst, n, ustride), 0);
    assert_int_equal(pvm__ctx.rbuf->pos, pvm__ctx.rbuf->len);
    for (i = 0; i < (size_t)n * (size_t)ustride; i++) {
        if (i % (size_t)ustride == 0)
            assert_memory_equal(dst + i * sz, s + i / (size_t)ustride * (size_t)pstride * sz, sz);
        else
            assert_true(dst[i * sz] == 0 && memcmp(dst + i * sz, dst + i * sz + 1, sz - 1) == 0);
    }
    free(dst);
}

static void
test_pvm_pack_every_type_round_trips_with_strides(void **state)
{
    unsigned char src[64 * 16];
    int encs[] = { PvmDataDefault, PvmDataRaw }, e, type, ps, us;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 37 + 11);
    for (e = 0; e < 2; e++)
        for (type = PVM_BYTE; type <= PVM_ULONG; type++)
            for (ps = 1; ps <= 3; ps++)
                for (us = 1; us <= 3; us++) {
                    unsigned char s[sizeof src];

                    memcpy(s, src, sizeof s);
                    /* XDR longs travel as 32 bits: keep them in range. */
                    if (encs[e] == PvmDataDefault && (type == PVM_LONG || type == PVM_ULONG))
                        for (i = 0; i + sizeof(long) <= sizeof s; i += sizeof(long)) {
                            long v = (long)(int32_t)(i * 2654435761u);

                            if (type == PVM_ULONG)
                                v = (long)(uint32_t)v;
                            memcpy(s + i, &v, sizeof v);
                        }
                    round_trip_type(encs[e], type, s, 17, ps, us);
                }
}

static void
test_pvm_pack_edge_values_round_trip_exactly(void **state)
{
    short sh[] = { SHRT_MIN, -1, 0, 1, SHRT_MAX };
    unsigned short us[] = { 0, 1, 0x7fff, 0x8000, USHRT_MAX };
    int in[] = { INT_MIN, -1, 0, 1, INT_MAX };
    unsigned un[] = { 0, 1, 0x80000000u, UINT_MAX };
    long lo32[] = { INT32_MIN, -1, 0, INT32_MAX };
    unsigned long ul32[] = { 0, UINT32_MAX };
    long lo64[] = { LONG_MIN, LONG_MAX, 0x123456789L };
    unsigned long ul64[] = { ULONG_MAX, 0x100000000UL };
    float fl[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, FLT_MAX, -FLT_MIN };
    double db[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, DBL_MAX, -DBL_MIN };
    int e;

    (void)state;
    for (e = 0; e < 2; e++) {
        round_trip_type(e, PVM_SHORT, sh, 5, 1, 1);
        round_trip_type(e, PVM_USHORT, us, 5, 1, 1);
        round_trip_type(e, PVM_INT, in, 5, 1, 1);
        round_trip_type(e, PVM_UINT, un, 4, 1, 1);
        round_trip_type(e, PVM_LONG, lo32, 4, 1, 1);
        round_trip_type(e, PVM_ULONG, ul32, 2, 1, 1);
        round_trip_type(e, PVM_FLOAT, fl, 8, 1, 1);
        round_trip_type(e, PVM_DOUBLE, db, 8, 1, 1);
        round_trip_type(e, PVM_CPLX, fl, 4, 1, 1);
        round_trip_type(e, PVM_DCPLX, db, 4, 1, 1);
    }
    round_trip_type(PvmDataRaw, PVM_LONG, lo64, 3, 1, 1);
    round_trip_type(PvmDataRaw, PVM_ULONG, ul64, 2, 1, 1);
}

static void
test_pvm_pack_xdr_longs_beyond_32_bits_overflow(void **state)
{
    long big[3] = { 1, 0x100000000L, 2 }, neg = -0x80000001L;
    unsigned long ubig = 0x100000000UL;
    int len;

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pklong(big, 3, 1), PvmOverflow);
    assert_int_equal(pvm_pklong(&neg, 1, 1), PvmOverflow);
    assert_int_equal(pvm_pkulong(&ubig, 1, 1), PvmOverflow);
    /* Nothing half-packed; the items that fit still pack. */
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 0);
    assert_int_equal(pvm_pklong(big, 2, 2), PvmOk);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 8);
}

static void
test_pvm_pack_ushort_travels_sign_extended_and_comes_back(void **state)
{
    unsigned short u = 0xfffe, back = 0;
    short s = 0;

    (void)state;
    pvm_initsend(PvmDataDefault);
    pvm_pkushort(&u, 1, 1);
    assert_sbody("\xff\xff\xff\xfe", 4);
    flip();
    assert_int_equal(pvm_upkushort(&back, 1, 1), PvmOk);
    assert_int_equal(back, 0xfffe);
    pvm__ctx.rbuf->pos = 0;
    assert_int_equal(pvm_upkshort(&s, 1, 1), PvmOk);
    assert_int_equal(s, -2);
}

static void
test_pvm_pack_stride_zero_and_negative_follow_pvm(void **state)
{
    int v[4] = { 10, 20, 30, 40 }, out[4] = { 0 };

    (void)state;
    /* PVM packs the same item nitem times for stride 0 ... */
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pkint(v, 3, 0), PvmOk);
    /* ... and walks backwards for a negative stride. */
    assert_int_equal(pvm_pkint(&v[3], 2, -2), PvmOk);
    flip();
    assert_int_equal(pvm_upkint(out, 3, 1), PvmOk);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 10);
    assert_int_equal(out[2], 10);
    assert_int_equal(pvm_upkint(out, 2, 1), PvmOk);
    assert_int_equal(out[0], 40);
    assert_int_equal(out[1], 20);
}

/* ---- strings ---- */

static void
test_pvm_pack_strings_round_trip(void **state)
{
    static const char *const strs[] = { "", "a", "ab", "abc", "abcd", "abcde",
                                        "a string with spaces, and punctuation!" };
    char big[5000], out[5000];
    int e;
    size_t i;

    (void)state;
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (e = 0; e < 2; e++) {
        pvm_initsend(e);
        for (i = 0; i < sizeof strs / sizeof strs[0]; i++)
            assert_int_equal(pvm_pkstr((char *)(uintptr_t)strs[i]), PvmOk);
        assert_int_equal(pvm_pkstr(big), PvmOk);
        flip();
        for (i = 0; i < sizeof strs / sizeof strs[0]; i++) {
            memset(out, 'X', 64);
            assert_int_equal(pvm_upkstr(out), PvmOk);
            assert_string_equal(out, strs[i]);
        }
        assert_int_equal(pvm_upkstr(out), PvmOk);
        assert_string_equal(out, big);
        assert_int_equal(pvm_upkstr(out), PvmNoData);
    }
}

static void
test_pvm_pack_hostile_string_lengths_are_refused(void **state)
{
    static const unsigned char neg[] = { 0xff, 0xff, 0xff, 0xff, 'a', 0, 0, 0 };
    static const unsigned char longer[] = { 0, 0, 0, 9, 'a', 'b', 0, 0 };
    static const unsigned char zero[] = { 0, 0, 0, 0 };
    struct pvm__buf *b;
    char out[16] = "XXXX";

    (void)state;
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)neg, 8, 8, 1, &b), 0);
    pvm_setrbuf(b->id);
    assert_int_equal(pvm_upkstr(out), PvmBadMsg);
    assert_int_equal(b->pos, 0);
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)longer, 8, 8, 1, &b),
                     0);
    pvm_setrbuf(b->id);
    assert_int_equal(pvm_upkstr(out), PvmNoData);
    assert_int_equal(b->pos, 0);
    assert_string_equal(out, "XXXX");
    /* A zero length from a foreign sender still leaves a string. */
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)zero, 4, 4, 1, &b), 0);
    pvm_setrbuf(b->id);
    assert_int_equal(pvm_upkstr(out), PvmOk);
    assert_string_equal(out, "");
}

/* A raw sender packed a length without the NUL (pvm_pkstr never does). */
static void
test_pvm_pack_unterminated_string_is_terminated_within_its_length(void **state)
{
    static const unsigned char raw[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0,
                                         0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0 };
    struct pvm__buf *b;
    char out[16];

    (void)state;
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)raw, sizeof raw,
                                    sizeof raw, 1, &b), 0);
    pvm_setrbuf(b->id);
    memset(out, 'X', sizeof out);
    assert_int_equal(pvm_upkstr(out), PvmOk);
    /* Not one byte written beyond the 3 packed, and those end in a NUL. */
    assert_string_equal(out, "ab");
    assert_int_equal(out[3], 'X');
    memset(out, 'X', sizeof out);
    assert_int_equal(pvm_upkstr(out), PvmOk);
    assert_string_equal(out, "hell");
    assert_int_equal(out[5], 'X');
}

/* pvm_unpackf("%Ns") tells the buffer's size: a longer string is PvmNoData. */
static void
test_pvm_pack_unpackf_sized_string_refuses_what_does_not_fit(void **state)
{
    static const unsigned char raw[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0 };
    struct pvm__buf *b;
    char out[16];

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pkstr("hello"), PvmOk);
    flip();
    memset(out, 'X', sizeof out);
    assert_int_equal(pvm_unpackf("%5s", out), PvmNoData);
    assert_string_equal(out, "");
    assert_int_equal(out[1], 'X');
    memset(out, 'X', sizeof out);
    assert_int_equal(pvm_unpackf("%*s", 6, out), PvmOk);
    assert_string_equal(out, "hello");
    /* Unterminated from a raw sender: the NUL follows when it fits. */
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)raw, sizeof raw,
                                    sizeof raw, 1, &b), 0);
    pvm_setrbuf(b->id);
    assert_int_equal(pvm_unpackf("%3s", out), PvmNoData);
    assert_string_equal(out, "");
    assert_int_equal(pvm_unpackf("%4s", out), PvmOk);
    assert_string_equal(out, "abc");
}

/* ---- pvm__upk_view, libliquid's ghosts without a copy ---- */

static void
test_pvm_pack_view_of_a_raw_body(void **state)
{
    double d[4] = { 1.5, -2, 3.25, 4 };
    int one = 7;
    const double *v;
    struct pvm__buf *b;

    (void)state;
    assert_null(pvm__upk_view(8)); /* no receive buffer */
    assert_int_equal(pvm__buf_adopt(pvm__dsig(), (unsigned char *)d, sizeof(d), sizeof(d), 1, &b),
                     0);
    pvm_setrbuf(b->id);
    /* The bytes where they lie, the cursor past them. */
    assert_non_null(v = pvm__upk_view(2 * sizeof(double)));
    assert_ptr_equal(v, b->data);
    assert_true(v[0] == 1.5 && v[1] == -2);
    assert_int_equal(b->pos, 2 * sizeof(double));
    /* More than is left: nothing, and the cursor stays for pvm_upk*. */
    assert_null(pvm__upk_view(3 * sizeof(double)));
    assert_int_equal(b->pos, 2 * sizeof(double));
    assert_non_null(v = pvm__upk_view(2 * sizeof(double)));
    assert_true(v[0] == 3.25 && v[1] == 4);
    /* An int unpacked first leaves the doubles unaligned: copied instead. */
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&one, 1, 1);
    pvm_pkdouble(d, 4, 1);
    flip();
    assert_int_equal(pvm_upkint(&one, 1, 1), PvmOk);
    assert_null(pvm__upk_view(sizeof(double)));
    assert_int_equal(pvm__ctx.rbuf->pos, sizeof(int));
    /* XDR bytes are not this host's doubles. */
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(d, 4, 1);
    flip();
    assert_null(pvm__upk_view(sizeof(double)));
    assert_int_equal(pvm__ctx.rbuf->pos, 0);
}

/* ---- the end of the buffer, bad arguments ---- */

static void
test_pvm_pack_unpacking_past_the_end_is_no_data_and_atomic(void **state)
{
    int v[3] = { 1, 2, 3 }, out[4] = { 0 };
    double d;
    char c[8];
    int e;

    (void)state;
    for (e = 0; e < 2; e++) {
        memset(out, 0, sizeof out);
        pvm_initsend(e);
        pvm_pkint(v, 3, 1);
        flip();
        assert_int_equal(pvm_upkint(out, 4, 1), PvmNoData);
        assert_int_equal(pvm_errno, PvmNoData);
        /* Nothing was consumed or written: the three ints are still there. */
        assert_int_equal(out[0], 0);
        assert_int_equal(pvm_upkdouble(&d, 2, 1), PvmNoData);
        assert_int_equal(pvm_upkint(out, 3, 1), PvmOk);
        assert_int_equal(out[2], 3);
        assert_int_equal(pvm_upkint(out, 1, 1), PvmNoData);
        assert_int_equal(pvm_upkbyte(c, 1, 1), PvmNoData);
        /* Zero items at the end are fine. */
        assert_int_equal(pvm_upkint(out, 0, 1), PvmOk);
    }
}

static void
test_pvm_pack_bad_arguments_are_bad_param(void **state)
{
    int v[2] = { 1, 2 };
    char s[8];

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pkint(v, -1, 1), PvmBadParam);
    assert_int_equal(pvm_pkint(NULL, 2, 1), PvmBadParam);
    assert_int_equal(pvm_pkdouble(NULL, 1, 1), PvmBadParam);
    assert_int_equal(pvm_pkstr(NULL), PvmBadParam);
    /* The span of a huge stride cannot be addressed. */
    assert_int_equal(pvm_pkdcplx((double *)v, INT_MAX, INT_MAX), PvmBadParam);
    /* This span fits, but not the message: refused before reading anything. */
    assert_int_equal(pvm_pkbyte((char *)v, INT_MAX, INT_MIN), PvmOverflow);
    /* Nothing and NULL is fine. */
    assert_int_equal(pvm_pkint(NULL, 0, 1), PvmOk);
    assert_int_equal(pvm_pkint(v, 0, 0), PvmOk);
    assert_int_equal(pvm__pack(pvm__ctx.sbuf, PVM_STR, v, 1, 1), -EINVAL);
    assert_int_equal(pvm__pack(pvm__ctx.sbuf, 12, v, 1, 1), -EINVAL);
    assert_int_equal(pvm__pack(pvm__ctx.sbuf, -1, v, 1, 1), -EINVAL);
    pvm_pkint(v, 2, 1);
    flip();
    assert_int_equal(pvm_upkint(v, -3, 1), PvmBadParam);
    assert_int_equal(pvm_upkint(NULL, 1, 1), PvmBadParam);
    assert_int_equal(pvm_upkstr(NULL), PvmBadParam);
    assert_int_equal(pvm_upklong((long *)v, 1, INT_MAX), PvmOk);
    assert_int_equal(pvm_upkfloat((float *)v, 2, INT_MIN / 2), PvmNoData);
    assert_int_equal(pvm_upkfloat((float *)v, INT_MAX, INT_MAX), PvmBadParam);
    /* A negative count is checked before the buffer, as in PVM. */
    pvm_setrbuf(0);
    pvm_setsbuf(0);
    assert_int_equal(pvm_upkint(v, -1, 1), PvmBadParam);
    assert_int_equal(pvm_upkint(v, 1, 1), PvmNoBuf);
    assert_int_equal(pvm_pkint(v, 1, 1), PvmNoBuf);
    assert_int_equal(pvm_pkstr("x"), PvmNoBuf);
    assert_int_equal(pvm_upkstr(s), PvmNoBuf);
}

static void
test_pvm_pack_wrong_type_reads_the_same_bits(void **state)
{
    int i = 0x3f800000;
    float f = 0;
    unsigned u = 0;

    (void)state;
    /* No types travel: ints read as floats are the same 32 bits, as in PVM. */
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&i, 1, 1);
    pvm_pkint(&i, 1, 1);
    flip();
    assert_int_equal(pvm_upkfloat(&f, 1, 1), PvmOk);
    assert_true(f == 1.0f);
    assert_int_equal(pvm_upkuint(&u, 1, 1), PvmOk);
    assert_int_equal(u, 0x3f800000u);
}

static void
test_pvm_pack_allocation_failure_packs_nothing(void **state)
{
    char big[300];
    int len;

    (void)state;
    memset(big, 'b', sizeof big);
    pvm_initsend(PvmDataDefault);
    pvm_pkbyte(big, 10, 1);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_pkbyte(big, 300, 1), PvmNoMem);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 12);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_pkstr("a string that needs to grow the buffer past its first 64 bytes "
                               "of room, or more"),
                     PvmNoMem);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 12);
    assert_int_equal(pvm_pkbyte(big, 300, 1), PvmOk);
}

/* ---- PvmDataInPlace ---- */

static void
test_pvm_pack_inplace_refers_until_send_and_refuses_what_pvm_does(void **state)
{
    const unsigned char *p;
    struct pvm__buf *r;
    double d[3] = { 1.5, 2.5, 3.5 }, back[3];
    size_t n;
    int x, len;

    (void)state;
    pvm_initsend(PvmDataInPlace);
    assert_int_equal(pvm_pkdouble(d, 3, 1), PvmOk);
    assert_int_equal(pvm_pkdouble(d, 2, 2), PvmNotImpl);
    assert_int_equal(pvm_pkstr("s"), PvmNotImpl);
    assert_int_equal(pvm_packf("%s", "s"), PvmNotImpl);
    /* Values packed by packf are the caller's temporaries: copied. */
    assert_int_equal(pvm_packf("%d", 77), PvmOk);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 3 * 8 + 4);
    d[2] = 9.5;
    n = sbody(&p);
    assert_int_equal(pvm__buf_adopt(pvm__buf_encword(pvm__ctx.sbuf), (unsigned char *)(uintptr_t)p,
                                    n, n, 1, &r),
                     0);
    pvm_setrbuf(r->id);
    assert_int_equal(pvm_upkdouble(back, 3, 1), PvmOk);
    assert_true(back[0] == 1.5 && back[1] == 2.5 && back[2] == 9.5);
    assert_int_equal(pvm_upkint(&x, 1, 1), PvmOk);
    assert_int_equal(x, 77);
    /* An InPlace buffer itself cannot be unpacked, as in PVM. */
    pvm_setrbuf(pvm_getsbuf());
    assert_int_equal(pvm_upkdouble(back, 1, 1), PvmBadMsg);
}

/* One array packed in place is sent from the array itself, as it is at
 * send time; two are gathered into one copy. */
static void
test_pvm_pack_inplace_one_array_is_not_copied(void **state)
{
    const unsigned char *p;
    double d[4] = { 1, 2, 3, 4 }, e[2] = { 5, 6 };
    size_t n;

    (void)state;
    pvm_initsend(PvmDataInPlace);
    assert_int_equal(pvm_pkdouble(d, 4, 1), PvmOk);
    d[3] = 8;
    n = sbody(&p);
    assert_int_equal(n, sizeof(d));
    assert_ptr_equal(p, (const unsigned char *)d);
    assert_int_equal(pvm_pkdouble(e, 2, 1), PvmOk);
    n = sbody(&p);
    assert_int_equal(n, sizeof(d) + sizeof(e));
    assert_ptr_not_equal(p, (const unsigned char *)d);
    assert_memory_equal(p, d, sizeof(d));
    assert_memory_equal(p + sizeof(d), e, sizeof(e));
}

/* ---- pvm_packf and pvm_unpackf ---- */

static void
test_pvm_pack_packf_equals_the_typed_calls(void **state)
{
    int in[6] = { 1, 2, 3, 4, 5, 6 };
    short sh[4] = { -1, 2, -3, 4 };
    long lo[2] = { -5, 6 };
    float fl[4] = { 1, 2, 3, 4 };
    double db[4] = { 5, 6, 7, 8 };
    char by[6] = "hello";
    unsigned char a[512], b[512];
    const unsigned char *p;
    size_t na, nb;

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_packf("%+ %3d %*d %2.2d %2.*hd %2ld %c %5c %3.2c %s %f %2f %lf %2.2lf "
                               "%x %lx %ud %lud %hud",
                               PvmDataDefault, in, 2, in, in, 2, sh, lo, 'z', by, by, "str",
                               2.25, fl, -1.0, db, fl, db, 9u, 10ul, 11),
                     PvmOk);
    na = sbody(&p);
    memcpy(a, p, na);

    pvm_initsend(PvmDataDefault);
    {
        int i9 = 9;
        unsigned long u10 = 10;
        unsigned short u11 = 11;
        float f = 2.25f;
        double m1 = -1.0;
        char z = 'z';

        pvm_pkint(in, 3, 1);
        pvm_pkint(in, 2, 1);
        pvm_pkint(in, 2, 2);
        pvm_pkshort(sh, 2, 2);
        pvm_pklong(lo, 2, 1);
        pvm_pkbyte(&z, 1, 1);
        pvm_pkbyte(by, 5, 1);
        pvm_pkbyte(by, 3, 2);
        pvm_pkstr("str");
        pvm_pkfloat(&f, 1, 1);
        pvm_pkfloat(fl, 2, 1);
        pvm_pkdouble(&m1, 1, 1);
        pvm_pkdouble(db, 2, 2);
        pvm_pkcplx(fl, 1, 1);
        pvm_pkdcplx(db, 1, 1);
        pvm_pkuint((unsigned *)&i9, 1, 1);
        pvm_pkulong(&u10, 1, 1);
        pvm_pkushort(&u11, 1, 1);
    }
    nb = sbody(&p);
    memcpy(b, p, nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
}

static void
test_pvm_pack_unpackf_reads_what_packf_wrote(void **state)
{
    int in[3] = { 7, 8, 9 }, i1 = 0, i3[3] = { 0 }, i4[4] = { 0 };
    short h = 0;
    long l = 0;
    unsigned long ul = 0;
    unsigned short uh = 0;
    unsigned u = 0;
    char c = 0, s[16], cc[4] = { 0 };
    float f = 0, cx[2] = { 0 };
    double d = 0, dcx[2] = { 0 };
    float fin[2] = { 1.5f, -1.5f };
    double din[2] = { 2.5, -2.5 };

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_packf("%d %hd %ld %lud %hud %ud %c %s %f %lf %3d %*d %3c %x %lx", -4,
                               -5, -6L, 7ul, 8, 9u, 'q', "hey", 0.5, 0.25, in, 2, in, "abc", fin,
                               din),
                     PvmOk);
    flip();
    assert_int_equal(pvm_unpackf("%d %hd %ld %lud %hud %ud %c %s %f %lf %3d %2.2d %*c %x %lx",
                                 &i1, &h, &l, &ul, &uh, &u, &c, s, &f, &d, i3, i4, 3, cc, cx,
                                 dcx),
                     PvmOk);
    assert_int_equal(i1, -4);
    assert_int_equal(h, -5);
    assert_int_equal(l, -6);
    assert_int_equal(ul, 7);
    assert_int_equal(uh, 8);
    assert_int_equal(u, 9);
    assert_int_equal(c, 'q');
    assert_string_equal(s, "hey");
    assert_true(f == 0.5f && d == 0.25);
    assert_int_equal(i3[0], 7);
    assert_int_equal(i3[2], 9);
    assert_int_equal(i4[0], 7);
    assert_int_equal(i4[1], 0);
    assert_int_equal(i4[2], 8);
    assert_memory_equal(cc, "abc", 3);
    assert_true(cx[0] == 1.5f && cx[1] == -1.5f && dcx[0] == 2.5 && dcx[1] == -2.5);
    assert_int_equal(pvm_unpackf("%d", &i1), PvmNoData);
}

static void
test_pvm_pack_packf_errors_undo_the_whole_call(void **state)
{
    int len, x = 1;

    (void)state;
    assert_int_equal(pvm_packf("%d", 1), PvmNoBuf);
    assert_int_equal(pvm_packf(NULL), PvmBadParam);
    assert_int_equal(pvm_packf("%+ %d", 99, 1), PvmBadParam);
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_packf("%d %d %q", 1, 2, 3), PvmBadParam);
    assert_int_equal(pvm_packf("%d %", 1), PvmBadParam);
    assert_int_equal(pvm_packf("%d %99999999999d", 1, &x), PvmBadParam);
    assert_int_equal(pvm_packf("%d %*d", 1, -2, &x), PvmBadParam);
    assert_int_equal(pvm_packf("%d %s", 1, NULL), PvmBadParam);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 0);
    /* Text between conversions is ignored. */
    assert_int_equal(pvm_packf("x=%d, y=%d;", 1, 2), PvmOk);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 8);

    flip();
    assert_int_equal(pvm_unpackf(NULL), PvmBadParam);
    /* unpackf has no "%+", as in PVM. */
    assert_int_equal(pvm_unpackf("%+", &x), PvmBadParam);
    assert_int_equal(pvm_unpackf("%d %d %d", &x, &x, &x), PvmNoData);
    assert_int_equal(pvm__ctx.rbuf->pos, 0);
    assert_int_equal(pvm_unpackf("%d %y", &x, &x), PvmBadParam);
    assert_int_equal(pvm__ctx.rbuf->pos, 0);
    pvm_setrbuf(0);
    assert_int_equal(pvm_unpackf("%d", &x), PvmNoBuf);
}

static void
test_pvm_pack_packf_plus_starts_a_new_message(void **state)
{
    int old, len, x;

    (void)state;
    old = pvm_initsend(PvmDataDefault);
    pvm_pkint(&old, 1, 1);
    assert_int_equal(pvm_packf("%+%d", PvmDataRaw, 5), PvmOk);
    assert_int_not_equal(pvm_getsbuf(), old);
    assert_int_equal(pvm_bufinfo(old, NULL, NULL, NULL), PvmNoSuchBuf);
    assert_int_equal(pvm__ctx.sbuf->enc, PVM__ENC_RAW);
    pvm_bufinfo(pvm_getsbuf(), &len, NULL, NULL);
    assert_int_equal(len, 4);
    flip();
    assert_int_equal(pvm_unpackf("%d", &x), PvmOk);
    assert_int_equal(x, 5);
}

static int
call_vpackf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm_vpackf(fmt, ap);
    va_end(ap);
    return rc;
}

static int
call_vunpackf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm_vunpackf(fmt, ap);
    va_end(ap);
    return rc;
}

static void
test_pvm_pack_va_list_forms(void **state)
{
    int a = 0;
    char s[8];

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(call_vpackf("%d %s", 31, "va"), PvmOk);
    flip();
    assert_int_equal(call_vunpackf("%d %s", &a, s), PvmOk);
    assert_int_equal(a, 31);
    assert_string_equal(s, "va");
}

/* ---- messages inside messages ---- */

static int
make_inner(int enc, int tag, int depth)
{
    struct pvmminfo mi = { 0 };
    int saved = pvm_setsbuf(0), b, v = depth * 100;

    b = pvm_mkbuf(enc);
    pvm_setsbuf(b);
    pvm_pkint(&v, 1, 1);
    pvm_pkstr("inner");
    if (depth > 0) {
        int inner = make_inner(enc == PvmDataDefault ? PvmDataRaw : PvmDataDefault, tag + 1,
                               depth - 1);

        pvm_setsbuf(b);
        assert_int_equal(pvm_pkmesg(inner), PvmOk);
        pvm_freebuf(inner);
    }
    pvm_getminfo(b, &mi);
    mi.tag = tag;
    mi.ctx = 3;
    mi.wid = 4;
    mi.src = 0x40000 + depth;
    mi.dst = 0x80000;
    pvm_setminfo(b, &mi);
    pvm_setsbuf(saved);
    return b;
}

/* Check a buffer made by make_inner, recursively. */
static void
check_inner(int b, int tag, int depth)
{
    struct pvmminfo mi;
    char s[16];
    int v, old, nested;

    assert_int_equal(pvm_getminfo(b, &mi), PvmOk);
    assert_int_equal(mi.tag, tag);
    assert_int_equal(mi.ctx, 3);
    assert_int_equal(mi.wid, 4);
    assert_int_equal(mi.src, 0x40000 + depth);
    assert_int_equal(mi.dst, 0x80000);
    old = pvm_setrbuf(b);
    assert_int_equal(pvm_upkint(&v, 1, 1), PvmOk);
    assert_int_equal(v, depth * 100);
    assert_int_equal(pvm_upkstr(s), PvmOk);
    assert_string_equal(s, "inner");
    if (depth > 0) {
        nested = pvm_upkmesg();
        assert_true(nested > 0);
        check_inner(nested, tag + 1, depth - 1);
        pvm_freebuf(nested);
    }
    assert_int_equal(pvm_upkint(&v, 1, 1), PvmNoData);
    pvm_setrbuf(old);
}

static void
test_pvm_pack_pkmesg_nests_messages_with_their_headers(void **state)
{
    int e, inner, got, v = 5;
    char s[16];

    (void)state;
    for (e = 0; e < 2; e++) {
        inner = make_inner(PvmDataDefault, 20, 3);
        pvm_initsend(e);
        pvm_pkstr("before");
        assert_int_equal(pvm_pkmesg(inner), PvmOk);
        pvm_pkint(&v, 1, 1);
        flip();
        assert_int_equal(pvm_upkstr(s), PvmOk);
        assert_string_equal(s, "before");
        got = pvm_upkmesg();
        assert_true(got > 0 && got != inner);
        check_inner(got, 20, 3);
        /* The outer message goes on after the nested one. */
        assert_int_equal(pvm_getrbuf(), pvm_getrbuf());
        assert_int_equal(pvm_upkint(&v, 1, 1), PvmOk);
        assert_int_equal(v, 5);
        pvm_freebuf(inner);
        pvm_freebuf(got);
    }
}

static void
test_pvm_pack_pkmesg_codes(void **state)
{
    int inner, s;

    (void)state;
    inner = pvm_mkbuf(PvmDataDefault);
    assert_int_equal(pvm_pkmesg(inner), PvmNoBuf);
    s = pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pkmesg(0), PvmBadParam);
    assert_int_equal(pvm_pkmesg(-1), PvmBadParam);
    assert_int_equal(pvm_pkmesg(s), PvmBadParam);
    assert_int_equal(pvm_pkmesg(999), PvmNoSuchBuf);
    assert_int_equal(pvm_pkmesgbody(s), PvmBadParam);
    assert_int_equal(pvm_upkmesg(), PvmNoBuf);
    /* An empty message nests as a header alone. */
    assert_int_equal(pvm_pkmesg(inner), PvmOk);
    flip();
    s = pvm_upkmesg();
    assert_true(s > 0);
    assert_int_equal(pvm__buf_len(pvm__buf_get(s)), 0);
}

static void
test_pvm_pack_inplace_messages_nest_as_native_bytes(void **state)
{
    int v[2] = { 3, 4 }, in, got, back[2];

    (void)state;
    in = pvm_mkbuf(PvmDataInPlace);
    pvm_setsbuf(in);
    pvm_pkint(v, 2, 1);
    pvm_setsbuf(0);
    pvm_initsend(PvmDataInPlace);
    /* Into an InPlace message, too: the header is copied, the body flattened. */
    assert_int_equal(pvm_pkmesg(in), PvmOk);
    v[1] = 40;
    {
        const unsigned char *p;
        size_t n = sbody(&p);
        struct pvm__buf *r;

        assert_int_equal(pvm__buf_adopt(pvm__dsig(), (unsigned char *)(uintptr_t)p, n, n, 1, &r),
                         0);
        pvm_setrbuf(r->id);
    }
    got = pvm_upkmesg();
    assert_true(got > 0);
    assert_int_equal(pvm__buf_get(got)->enc, PVM__ENC_RAW);
    pvm_setrbuf(got);
    assert_int_equal(pvm_upkint(back, 2, 1), PvmOk);
    /* The reference was read when the outer message was packed. */
    assert_int_equal(back[0], 3);
    assert_int_equal(back[1], 4);
}

static void
test_pvm_pack_hostile_nested_headers_are_refused(void **state)
{
    static const struct {
        int words[11];
        int nwords;
        int want;
    } cases[] = {
        /* negative length */
        { { -1, 0, 0, 0, 0x10000000, 0, 0, 0 }, 8, PvmBadMsg },
        /* a fragment of zero bytes would never end */
        { { 8, 0, 0, 0, 0x10000000, 0, 0, 0, 0 }, 9, PvmBadMsg },
        /* a fragment longer than the message */
        { { 4, 0, 0, 0, 0x10000000, 0, 0, 0, 8, 1, 2 }, 11, PvmBadMsg },
        /* a fragment longer than what is left: nothing is allocated for it */
        { { 0x7fffff00, 0, 0, 0, 0x10000000, 0, 0, 0, 0x7fffff00 }, 9, PvmNoData },
        /* a header cut short */
        { { 4, 0, 0 }, 3, PvmNoData },
        /* the body cut short */
        { { 8, 0, 0, 0, 0x10000000, 0, 0, 0, 8, 1 }, 10, PvmNoData },
    };
    size_t i;
    int j;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint((int *)(uintptr_t)cases[i].words, cases[i].nwords, 1);
        flip();
        assert_int_equal(pvm_getrbuf(), 1);
        assert_int_equal(pvm_upkmesg(), cases[i].want);
        assert_int_equal(pvm__ctx.rbuf->pos, 0);
        /* No buffer was left behind. */
        for (j = 2; j < pvm__ctx.nbufs; j++)
            assert_null(pvm__ctx.bufs[j]);
        pvm_freebuf(1);
    }
}

static void
test_pvm_pack_pkmesgbody_splices_matching_encodings(void **state)
{
    int a, b, v[2] = { 1, 2 }, w[3];
    char s[8];

    (void)state;
    a = pvm_mkbuf(PvmDataDefault);
    pvm_setsbuf(a);
    pvm_pkint(v, 2, 1);
    pvm_pkstr("x");
    pvm_setsbuf(0);
    b = pvm_initsend(PvmDataDefault);
    pvm_pkint(&v[1], 1, 1);
    assert_int_equal(pvm_pkmesgbody(a), PvmOk);
    flip();
    assert_int_equal(pvm_upkint(w, 3, 1), PvmOk);
    assert_int_equal(w[0], 2);
    assert_int_equal(w[1], 1);
    assert_int_equal(w[2], 2);
    assert_int_equal(pvm_upkstr(s), PvmOk);
    assert_string_equal(s, "x");
    pvm_initsend(PvmDataRaw);
    assert_int_equal(pvm_pkmesgbody(a), PvmMismatch);
    assert_int_equal(pvm_pkmesgbody(b), PvmMismatch);
    assert_int_equal(pvm_pkmesgbody(999), PvmNoSuchBuf);
    assert_int_equal(pvm_pkmesgbody(0), PvmBadParam);
}

/* ---- random sequences ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static int
rnd_below(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

#define OP_STR 12
#define OP_MESG 13
#define MAX_INNER 4

struct op {
    int kind;                   /* PVM_BYTE..PVM_ULONG, OP_STR, OP_MESG */
    int n;
    int stride;
    unsigned char *src;         /* the array the items come from */
    const unsigned char *base;  /* the first item */
    char str[24];
    int ninner;
    struct op *inner;
};

/* A random op for encoding enc; xdr longs stay in range, InPlace stays dense. */
static void
gen_op(struct op *o, int enc, int depth)
{
    static const int strides[] = { 1, 1, 2, 3, 0, -2 };
    size_t sz, count, i;
    int kinds = depth > 0 ? OP_MESG : OP_STR;

    memset(o, 0, sizeof *o);
    o->kind = 1 + rnd_below(kinds);
    if (enc == PvmDataInPlace && o->kind == OP_STR)
        o->kind = PVM_INT;
    if (o->kind == OP_STR) {
        int len = rnd_below(20);

        for (i = 0; i < (size_t)len; i++)
            o->str[i] = (char)('a' + rnd_below(26));
        return;
    }
    if (o->kind == OP_MESG) {
        o->ninner = rnd_below(MAX_INNER + 1);
        o->inner = calloc(MAX_INNER, sizeof *o->inner);
        assert_non_null(o->inner);
        for (i = 0; i < (size_t)o->ninner; i++)
            gen_op(&o->inner[i], PvmDataDefault, 0);
        return;
    }
    o->n = rnd_below(21);
    o->stride = enc == PvmDataInPlace ? 1 : strides[rnd_below(6)];
    sz = pvm__tsize[o->kind].native;
    count = (size_t)o->n * (size_t)abs(o->stride) + 1;
    o->src = malloc(count * sz);
    assert_non_null(o->src);
    for (i = 0; i < count * sz; i++)
        o->src[i] = (unsigned char)rnd();
    if (enc == PvmDataDefault && (o->kind == PVM_LONG || o->kind == PVM_ULONG))
        for (i = 0; i < count; i++) {
            long v = o->kind == PVM_LONG ? (long)(int32_t)rnd() : (long)(uint32_t)rnd();

            memcpy(o->src + i * sz, &v, sz);
        }
    o->base = o->src;
    if (o->stride < 0 && o->n > 0)
        o->base += (size_t)(o->n - 1) * (size_t)-o->stride * sz;
}

static void
free_op(struct op *o)
{
    int i;

    for (i = 0; i < o->ninner; i++)
        free_op(&o->inner[i]);
    free(o->inner);
    free(o->src);
}

static const unsigned char *
op_item(const struct op *o, int i)
{
    return o->base + (ptrdiff_t)i * o->stride * (ptrdiff_t)pvm__tsize[o->kind].native;
}

static void
pack_ops(const struct op *ops, int nops)
{
    int i, inner, outer;

    for (i = 0; i < nops; i++) {
        const struct op *o = &ops[i];

        if (o->kind == OP_STR) {
            assert_int_equal(pvm_pkstr((char *)(uintptr_t)o->str), PvmOk);
        } else if (o->kind == OP_MESG) {
            outer = pvm_getsbuf();
            inner = pvm_mkbuf(PvmDataDefault);
            pvm_setsbuf(inner);
            pack_ops(o->inner, o->ninner);
            pvm_setsbuf(outer);
            assert_int_equal(pvm_pkmesg(inner), PvmOk);
            pvm_freebuf(inner);
        } else {
            assert_int_equal(pvm__pack(pvm__ctx.sbuf, o->kind, o->base, o->n, o->stride), 0);
        }
    }
}

static void
check_ops(const struct op *ops, int nops)
{
    unsigned char dst[21 * 3 * 16 + 16];
    char s[32];
    int i, j, us, got, outer;

    for (i = 0; i < nops; i++) {
        const struct op *o = &ops[i];

        if (o->kind == OP_STR) {
            assert_int_equal(pvm_upkstr(s), PvmOk);
            assert_string_equal(s, o->str);
            continue;
        }
        if (o->kind == OP_MESG) {
            got = pvm_upkmesg();
            assert_true(got > 0);
            outer = pvm_setrbuf(got);
            check_ops(o->inner, o->ninner);
            assert_int_equal(pvm_upkbyte(s, 1, 1), PvmNoData);
            pvm_setrbuf(outer);
            pvm_freebuf(got);
            continue;
        }
        us = 1 + rnd_below(3);
        memset(dst, 0, sizeof dst);
        assert_int_equal(pvm__unpack(pvm__ctx.rbuf, o->kind, dst, o->n, us), 0);
        for (j = 0; j < o->n; j++)
            assert_memory_equal(dst + (size_t)j * (size_t)us * pvm__tsize[o->kind].native,
                                op_item(o, j), pvm__tsize[o->kind].native);
    }
}

static void
test_pvm_pack_random_sequences_round_trip(void **state)
{
    static const int encs[] = { PvmDataDefault, PvmDataRaw, PvmDataInPlace };
    struct op ops[12];
    int round, e, i, nops;
    char c;

    (void)state;
    rng = 0x2545f4914f6cdd1dull;
    for (round = 0; round < 3000; round++) {
        e = encs[round % 3];
        nops = rnd_below(13);
        for (i = 0; i < nops; i++)
            gen_op(&ops[i], e, 1);
        pvm_initsend(e);
        pack_ops(ops, nops);
        if (e == PvmDataInPlace) {
            const unsigned char *p;
            size_t n = sbody(&p);
            struct pvm__buf *r;

            assert_int_equal(pvm__buf_adopt(pvm__buf_encword(pvm__ctx.sbuf),
                                            (unsigned char *)(uintptr_t)p, n, n, 1, &r),
                             0);
            pvm_setrbuf(r->id);
        } else {
            flip();
        }
        check_ops(ops, nops);
        assert_int_equal(pvm_upkbyte(&c, 1, 1), PvmNoData);
        for (i = 0; i < nops; i++)
            free_op(&ops[i]);
        pvm_freebuf(pvm_getrbuf());
    }
}

/* ---- against PVM 3.4.6's own libpvm3 ---- */

/* PVM's functions, found in its library by the child. */
struct real_api {
    int (*mkbuf)(int);
    int (*freebuf)(int);
    int (*setsbuf)(int);
    int (*setrbuf)(int);
    int (*bufinfo)(int, int *, int *, int *);
    int (*upkbyte)(char *, int, int);
    int (*pkstr)(char *);
    int (*pkmesg)(int);
    int (*packf)(const char *, ...);
    int (*pk[PVM_ULONG + 1])(void *, int, int);
};

static void
real_api_load(void *lib, struct real_api *api)
{
    static const char *const pk[] = {
        [PVM_BYTE] = "pvm_pkbyte",     [PVM_SHORT] = "pvm_pkshort", [PVM_INT] = "pvm_pkint",
        [PVM_FLOAT] = "pvm_pkfloat",   [PVM_CPLX] = "pvm_pkcplx",   [PVM_DOUBLE] = "pvm_pkdouble",
        [PVM_DCPLX] = "pvm_pkdcplx",   [PVM_LONG] = "pvm_pklong",   [PVM_USHORT] = "pvm_pkushort",
        [PVM_UINT] = "pvm_pkuint",     [PVM_ULONG] = "pvm_pkulong",
    };
    int t;

    api->mkbuf = real_pvm_sym(lib, "pvm_mkbuf");
    api->freebuf = real_pvm_sym(lib, "pvm_freebuf");
    api->setsbuf = real_pvm_sym(lib, "pvm_setsbuf");
    api->setrbuf = real_pvm_sym(lib, "pvm_setrbuf");
    api->bufinfo = real_pvm_sym(lib, "pvm_bufinfo");
    api->upkbyte = real_pvm_sym(lib, "pvm_upkbyte");
    api->pkstr = real_pvm_sym(lib, "pvm_pkstr");
    api->pkmesg = real_pvm_sym(lib, "pvm_pkmesg");
    api->packf = real_pvm_sym(lib, "pvm_packf");
    for (t = PVM_BYTE; t <= PVM_ULONG; t++)
        api->pk[t] = real_pvm_sym(lib, pk[t]);
}

static void
real_pack_ops(const struct real_api *api, const struct op *ops, int nops)
{
    int i, inner, outer;

    for (i = 0; i < nops; i++) {
        const struct op *o = &ops[i];

        if (o->kind == OP_STR) {
            api->pkstr((char *)(uintptr_t)o->str);
        } else if (o->kind == OP_MESG) {
            outer = api->setsbuf(0);
            inner = api->mkbuf(PvmDataDefault);
            api->setsbuf(inner);
            real_pack_ops(api, o->inner, o->ninner);
            api->setsbuf(outer);
            api->pkmesg(inner);
            api->freebuf(inner);
        } else {
            api->pk[o->kind]((void *)(uintptr_t)o->base, o->n, o->stride);
        }
    }
}

/* Write the active send buffer's body as int length + bytes. */
static void
real_emit(const struct real_api *api, int out)
{
    int b = api->setsbuf(0), len = 0;
    char *bytes;

    api->bufinfo(b, &len, NULL, NULL);
    bytes = malloc((size_t)len + 1);
    if (bytes == NULL)
        _exit(6);
    api->setrbuf(b);
    if (len > 0 && api->upkbyte(bytes, len, 1) != 0)
        _exit(7);
    real_pvm_write(out, &len, sizeof len);
    real_pvm_write(out, bytes, (size_t)len);
    free(bytes);
    api->setrbuf(0);
    api->freebuf(b);
}

struct compat_job {
    int enc;
    int nseq;
    struct op (*seqs)[12];
    int *nops;
};

/* The packf calls compared; either side's packf is passed in. */
#define NPACKF 4
static int
packf_case(int (*packf)(const char *, ...), int which)
{
    static int in[6] = { 1, -2, 3, -4, 5, -6 };
    static short sh[4] = { -7, 8, -9, 10 };
    static float fl[8] = { 0.5f, -0.25f, 8.0f, 1e10f, -3.0f, 7.5f, 1e-10f, 2.0f };
    static double db[8] = { 1e-300, -2.0, 3.5, 1e300, 0.125, -6.0, 1e10, -1e-10 };
    static char by[] = "bytes!";

    switch (which) {
    case 0:
        return packf("%d %hd %ld %c %s %f %lf", 5, 6, 7L, 'x', "hi", 1.5, 2.5);
    case 1:
        return packf("%3d %*d %2.2d %3.*hd", in, 2, in, in, 1, sh);
    case 2:
        return packf("%ud %lud %hud %x %lx %2.2x %*.2lx", 5u, 6ul, 7, fl, db, fl, 1, db);
    default:
        return packf("%5c %3.2c %c %s %4f %2.2lf %s", by, by, 'q', "", fl, db, "four");
    }
}

static void
real_compat(void *lib, int out, void *arg)
{
    const struct compat_job *job = arg;
    struct real_api api;
    int i;

    real_api_load(lib, &api);
    for (i = 0; i < job->nseq; i++) {
        api.setsbuf(api.mkbuf(job->enc));
        real_pack_ops(&api, job->seqs[i], job->nops[i]);
        real_emit(&api, out);
    }
    for (i = 0; i < NPACKF; i++) {
        api.setsbuf(api.mkbuf(job->enc));
        packf_case(api.packf, i);
        real_emit(&api, out);
    }
}

/*
 * Which bytes of ops' body are data (1) and which XDR padding (0): PVM
 * leaves its padding uninitialised, so only data bytes are compared.
 */
static size_t
data_mask(int enc, const struct op *ops, int nops, unsigned char *mask)
{
    size_t at = 0, k, n;
    int i, xdr = enc == PvmDataDefault;

    for (i = 0; i < nops; i++) {
        const struct op *o = &ops[i];

        if (o->kind == OP_STR) {
            n = strlen(o->str) + 1;
            memset(mask + at, 1, 4 + n);
            at += 4 + n;
            k = xdr ? -n & 3 : 0;
        } else if (o->kind == OP_MESG) {
            memset(mask + at, 1, 32);
            at += 32;
            n = data_mask(PvmDataDefault, o->inner, o->ninner, mask + at + 4);
            if (n > 0) {
                memset(mask + at, 1, 4);
                at += 4 + n;
            }
            k = 0;
        } else if (xdr) {
            n = (size_t)o->n * pvm__tsize[o->kind].xdr;
            memset(mask + at, 1, n);
            at += n;
            k = o->kind == PVM_BYTE ? -n & 3 : 0;
        } else {
            n = (size_t)o->n * pvm__tsize[o->kind].native;
            memset(mask + at, 1, n);
            at += n;
            k = 0;
        }
        memset(mask + at, 0, k);
        at += k;
    }
    return at;
}

static int
ours_packf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm_vpackf(fmt, ap);
    va_end(ap);
    return rc;
}

/* The op lists the packf cases are equivalent to, for their masks. */
static size_t
packf_mask(int enc, int which, unsigned char *mask)
{
    struct op ops[8];
    int kinds[4][8] = {
        { PVM_INT, PVM_SHORT, PVM_LONG, PVM_BYTE, OP_STR, PVM_FLOAT, PVM_DOUBLE, 0 },
        { PVM_INT, PVM_INT, PVM_INT, PVM_SHORT, 0 },
        { PVM_UINT, PVM_ULONG, PVM_USHORT, PVM_CPLX, PVM_DCPLX, PVM_CPLX, PVM_DCPLX, 0 },
        { PVM_BYTE, PVM_BYTE, PVM_BYTE, OP_STR, PVM_FLOAT, PVM_DOUBLE, OP_STR, 0 },
    };
    int counts[4][8] = {
        { 1, 1, 1, 1, 0, 1, 1 }, { 3, 2, 2, 3 }, { 1, 1, 1, 1, 1, 2, 1 }, { 5, 3, 1, 0, 4, 2, 0 },
    };
    const char *strs[4][8] = { { [4] = "hi" }, { 0 }, { 0 }, { [3] = "", [6] = "four" } };
    int n;

    memset(ops, 0, sizeof ops);
    for (n = 0; kinds[which][n] != 0; n++) {
        ops[n].kind = kinds[which][n];
        ops[n].n = counts[which][n];
        if (strs[which][n] != NULL)
            strcpy(ops[n].str, strs[which][n]);
    }
    return data_mask(enc, ops, n, mask);
}

static void
compare_masked(const char *what, int i, const unsigned char *real, const unsigned char *ours,
               const unsigned char *mask, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++)
        if (mask[k] && real[k] != ours[k]) {
            print_error("%s %d: byte %zu is %02x, PVM's is %02x\n", what, i, k, ours[k], real[k]);
            fail();
        }
}

static void
compat_with_pvm(int enc)
{
    enum { NSEQ = 400, CAP = 1 << 22 };
    static struct op seqs[NSEQ][12];
    static int nops[NSEQ];
    struct compat_job job = { enc, NSEQ, seqs, nops };
    unsigned char *real = malloc(CAP), mask[8192];
    const unsigned char *p;
    ssize_t got;
    size_t at = 0, n, m;
    int i, j, len;

    assert_non_null(real);
    rng = 0x5851f42d4c957f2dull + (uint64_t)enc;
    /* Fixed sequences: each type alone, at several strides; then random ones. */
    for (i = 0; i < NSEQ; i++) {
        nops[i] = i < 66 ? 1 : rnd_below(9);
        for (j = 0; j < nops[i]; j++) {
            gen_op(&seqs[i][j], enc, enc == PvmDataDefault ? 1 : 0);
            /*
             * PVM writes an empty fragment for an empty nested message that
             * its own pvm_upkmesg never reads back (the next unpack is off
             * by 4 bytes); we write none, so only non-empty ones compare.
             */
            while (seqs[i][j].kind == OP_MESG &&
                   data_mask(PvmDataDefault, seqs[i][j].inner, seqs[i][j].ninner, mask) == 0) {
                free_op(&seqs[i][j]);
                gen_op(&seqs[i][j], enc, 1);
            }
        }
        if (i < 66) {
            free_op(&seqs[i][0]);
            gen_op(&seqs[i][0], enc, 0);
            while (seqs[i][0].kind != 1 + i % 11 || seqs[i][0].n == 0) {
                free_op(&seqs[i][0]);
                gen_op(&seqs[i][0], enc, 0);
            }
        }
    }
    got = real_pvm_run(real_compat, &job, 0, real, CAP);
    assert_true(got > 0);
    for (i = 0; i < NSEQ + NPACKF; i++) {
        assert_true(at + sizeof len <= (size_t)got);
        memcpy(&len, real + at, sizeof len);
        at += sizeof len;
        pvm_initsend(enc);
        if (i < NSEQ) {
            pack_ops(seqs[i], nops[i]);
            m = data_mask(enc, seqs[i], nops[i], mask);
        } else {
            assert_int_equal(packf_case(ours_packf, i - NSEQ), PvmOk);
            m = packf_mask(enc, i - NSEQ, mask);
        }
        n = sbody(&p);
        if (m != n || len != (int)n)
            print_error("%s %d: ours %zu bytes, expected %zu, PVM's %d\n",
                        i < NSEQ ? "sequence" : "packf case", i < NSEQ ? i : i - NSEQ, n, m, len);
        assert_int_equal(m, n);
        assert_int_equal(len, (int)n);
        compare_masked(i < NSEQ ? "sequence" : "packf case", i < NSEQ ? i : i - NSEQ, real + at,
                       p, mask, n);
        at += n;
    }
    assert_int_equal(at, (size_t)got);
    for (i = 0; i < NSEQ; i++)
        for (j = 0; j < nops[i]; j++)
            free_op(&seqs[i][j]);
    free(real);
}

static void
test_pvm_pack_xdr_bytes_match_pvm(void **state)
{
    (void)state;
    if (real_pvm_pack_unusable(1) != NULL) {
        print_message("%s\n", real_pvm_pack_unusable(1));
        skip();
    }
    compat_with_pvm(PvmDataDefault);
}

static void
test_pvm_pack_raw_bytes_match_pvm(void **state)
{
    (void)state;
    if (real_pvm_pack_unusable(0) != NULL) {
        print_message("%s\n", real_pvm_pack_unusable(0));
        skip();
    }
    compat_with_pvm(PvmDataRaw);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pvm_pack_xdr_bytes_of_every_type, reset),
        cmocka_unit_test_setup(test_pvm_pack_raw_bytes_are_native, reset),
        cmocka_unit_test_setup(test_pvm_pack_every_type_round_trips_with_strides, reset),
        cmocka_unit_test_setup(test_pvm_pack_edge_values_round_trip_exactly, reset),
        cmocka_unit_test_setup(test_pvm_pack_xdr_longs_beyond_32_bits_overflow, reset),
        cmocka_unit_test_setup(test_pvm_pack_ushort_travels_sign_extended_and_comes_back, reset),
        cmocka_unit_test_setup(test_pvm_pack_stride_zero_and_negative_follow_pvm, reset),
        cmocka_unit_test_setup(test_pvm_pack_strings_round_trip, reset),
        cmocka_unit_test_setup(test_pvm_pack_hostile_string_lengths_are_refused, reset),
        cmocka_unit_test_setup(test_pvm_pack_unterminated_string_is_terminated_within_its_length,
                               reset),
        cmocka_unit_test_setup(test_pvm_pack_unpackf_sized_string_refuses_what_does_not_fit,
                               reset),
        cmocka_unit_test_setup(test_pvm_pack_unpacking_past_the_end_is_no_data_and_atomic, reset),
        cmocka_unit_test_setup(test_pvm_pack_bad_arguments_are_bad_param, reset),
        cmocka_unit_test_setup(test_pvm_pack_wrong_type_reads_the_same_bits, reset),
        cmocka_unit_test_setup(test_pvm_pack_allocation_failure_packs_nothing, reset),
        cmocka_unit_test_setup(test_pvm_pack_inplace_refers_until_send_and_refuses_what_pvm_does,
                               reset),
        cmocka_unit_test_setup(test_pvm_pack_inplace_one_array_is_not_copied, reset),
        cmocka_unit_test_setup(test_pvm_pack_packf_equals_the_typed_calls, reset),
        cmocka_unit_test_setup(test_pvm_pack_unpackf_reads_what_packf_wrote, reset),
        cmocka_unit_test_setup(test_pvm_pack_packf_errors_undo_the_whole_call, reset),
        cmocka_unit_test_setup(test_pvm_pack_packf_plus_starts_a_new_message, reset),
        cmocka_unit_test_setup(test_pvm_pack_va_list_forms, reset),
        cmocka_unit_test_setup(test_pvm_pack_pkmesg_nests_messages_with_their_headers, reset),
        cmocka_unit_test_setup(test_pvm_pack_pkmesg_codes, reset),
        cmocka_unit_test_setup(test_pvm_pack_inplace_messages_nest_as_native_bytes, reset),
        cmocka_unit_test_setup(test_pvm_pack_hostile_nested_headers_are_refused, reset),
        cmocka_unit_test_setup(test_pvm_pack_pkmesgbody_splices_matching_encodings, reset),
        cmocka_unit_test_setup(test_pvm_pack_random_sequences_round_trip, reset),
        cmocka_unit_test_setup(test_pvm_pack_xdr_bytes_match_pvm, reset),
        cmocka_unit_test_setup(test_pvm_pack_raw_bytes_match_pvm, reset),
        cmocka_unit_test_setup(test_pvm_pack_view_of_a_raw_body, reset),
    };

    return cmocka_run_group_tests_name("pvm_pack", tests, NULL, reset);
}
