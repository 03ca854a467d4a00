/*
 * test_pvm_buf.c - lib/pvm/pvm_buf.c: buffer ids, the active send and receive
 * buffers and switching between them, freeing the active ones,
 * pvm_initsend, pvm_bufinfo, pvm_[gs]etminfo, the receive and send path
 * primitives (adopt, set_info, flatten), the data signature (against
 * PVM's own), allocation failures, and every error code the man pages
 * list for these calls.
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

#include "test_pvm_real.h"

static int
reset(void **state)
{
    (void)state;
    pvm__ctx_reset();
    /* The error paths are the point here; their reports are test_pvm_err's. */
    pvm__ctx.autoerr = 0;
    pvm_errno = 0;
    return 0;
}

static void
test_pvm_buf_mkbuf_accepts_the_three_encodings(void **state)
{
    int a, b, c;

    (void)state;
    a = pvm_mkbuf(PvmDataDefault);
    b = pvm_mkbuf(PvmDataRaw);
    c = pvm_mkbuf(PvmDataInPlace);
    assert_true(a > 0 && b > 0 && c > 0);
    assert_true(a != b && b != c && a != c);
    assert_int_equal(pvm__buf_get(a)->enc, PVM__ENC_XDR);
    assert_int_equal(pvm__buf_get(b)->enc, PVM__ENC_RAW);
    assert_int_equal(pvm__buf_get(c)->enc, PVM__ENC_INPLACE);
    /* Making a buffer does not make it active. */
    assert_int_equal(pvm_getsbuf(), 0);
    assert_int_equal(pvm_getrbuf(), 0);
}

static void
test_pvm_buf_mkbuf_refuses_bad_encodings(void **state)
{
    (void)state;
    assert_int_equal(pvm_mkbuf(-1), PvmBadParam);
    assert_int_equal(pvm_mkbuf(3), PvmBadParam);
    assert_int_equal(pvm_mkbuf(99), PvmBadParam);
    assert_int_equal(pvm_mkbuf(PvmDataTrace), PvmNotImpl);
    assert_int_equal(pvm_errno, PvmNotImpl);
    assert_null(pvm__ctx.bufs);
}

static void
test_pvm_buf_ids_are_reused_lowest_first(void **state)
{
    int ids[40], i;

    (void)state;
    for (i = 0; i < 40; i++) {
        ids[i] = pvm_mkbuf(PvmDataRaw);
        assert_int_equal(ids[i], i + 1);
    }
    assert_int_equal(pvm_freebuf(ids[5]), PvmOk);
    assert_int_equal(pvm_freebuf(ids[20]), PvmOk);
    assert_int_equal(pvm_mkbuf(PvmDataDefault), ids[5]);
    assert_int_equal(pvm_mkbuf(PvmDataDefault), ids[20]);
    assert_int_equal(pvm_mkbuf(PvmDataDefault), 41);
}

static void
test_pvm_buf_freebuf_codes(void **state)
{
    int b;

    (void)state;
    /* Freeing buffer 0 is quietly fine, as 3.3 programs expect. */
    assert_int_equal(pvm_freebuf(0), PvmOk);
    assert_int_equal(pvm_freebuf(-1), PvmBadParam);
    assert_int_equal(pvm_freebuf(1), PvmNoSuchBuf);
    assert_int_equal(pvm_freebuf(INT32_MAX), PvmNoSuchBuf);
    b = pvm_mkbuf(PvmDataDefault);
    assert_int_equal(pvm_freebuf(b), PvmOk);
    assert_int_equal(pvm_freebuf(b), PvmNoSuchBuf);
    assert_int_equal(pvm_bufinfo(b, NULL, NULL, NULL), PvmNoSuchBuf);
}

static void
test_pvm_buf_freeing_the_active_buffers_leaves_none(void **state)
{
    int s, r, x = 1;

    (void)state;
    s = pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_getsbuf(), s);
    assert_int_equal(pvm_freebuf(s), PvmOk);
    assert_int_equal(pvm_getsbuf(), 0);
    assert_int_equal(pvm_pkint(&x, 1, 1), PvmNoBuf);

    r = pvm_mkbuf(PvmDataDefault);
    assert_int_equal(pvm_setrbuf(r), 0);
    assert_int_equal(pvm_getrbuf(), r);
    assert_int_equal(pvm_freebuf(r), PvmOk);
    assert_int_equal(pvm_getrbuf(), 0);
    assert_int_equal(pvm_upkint(&x, 1, 1), PvmNoBuf);
    assert_int_equal(pvm_errno, PvmNoBuf);
}

static void
test_pvm_buf_setsbuf_and_setrbuf_return_the_old_buffer(void **state)
{
    int a, b;

    (void)state;
    a = pvm_mkbuf(PvmDataDefault);
    b = pvm_mkbuf(PvmDataRaw);
    assert_int_equal(pvm_setsbuf(a), 0);
    assert_int_equal(pvm_setsbuf(b), a);
    assert_int_equal(pvm_getsbuf(), b);
    assert_int_equal(pvm_setsbuf(0), b);
    assert_int_equal(pvm_getsbuf(), 0);

    assert_int_equal(pvm_setrbuf(a), 0);
    assert_int_equal(pvm_setrbuf(b), a);
    assert_int_equal(pvm_setrbuf(0), b);
    assert_int_equal(pvm_getrbuf(), 0);
}

static void
test_pvm_buf_switching_refuses_bad_ids_and_keeps_the_active_one(void **state)
{
    int a;

    (void)state;
    a = pvm_mkbuf(PvmDataDefault);
    pvm_setsbuf(a);
    pvm_setrbuf(pvm_mkbuf(PvmDataDefault));
    assert_int_equal(pvm_setsbuf(-1), PvmBadParam);
    assert_int_equal(pvm_setsbuf(999), PvmNoSuchBuf);
    assert_int_equal(pvm_setrbuf(-5), PvmBadParam);
    assert_int_equal(pvm_setrbuf(999), PvmNoSuchBuf);
    assert_int_equal(pvm_getsbuf(), a);
    assert_int_equal(pvm_getrbuf(), a + 1);
}

static void
test_pvm_buf_a_buffer_is_never_both_active(void **state)
{
    int a;

    (void)state;
    a = pvm_mkbuf(PvmDataDefault);
    pvm_setsbuf(a);
    assert_int_equal(pvm_setrbuf(a), 0);
    assert_int_equal(pvm_getsbuf(), 0);
    assert_int_equal(pvm_getrbuf(), a);
    assert_int_equal(pvm_setsbuf(a), 0);
    assert_int_equal(pvm_getrbuf(), 0);
    assert_int_equal(pvm_getsbuf(), a);
}

/* Receive rewinds when a buffer becomes the receive buffer, not after. */
static void
test_pvm_buf_switching_rewinds_once_and_packing_appends(void **state)
{
    int a, v[3] = { 10, 20, 30 }, w = 0;

    (void)state;
    a = pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_pkint(v, 2, 1), PvmOk);
    pvm_setrbuf(a);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmOk);
    assert_int_equal(w, 10);
    /* Setting it again keeps the position. */
    pvm_setrbuf(a);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmOk);
    assert_int_equal(w, 20);
    /* Back to packing: append at the end, then read from the start again. */
    pvm_setsbuf(a);
    assert_int_equal(pvm_pkint(&v[2], 1, 1), PvmOk);
    pvm_setrbuf(a);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmOk);
    assert_int_equal(w, 10);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmOk);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmOk);
    assert_int_equal(w, 30);
    assert_int_equal(pvm_upkint(&w, 1, 1), PvmNoData);
}

static void
test_pvm_buf_initsend_replaces_the_send_buffer(void **state)
{
    int a, b, x = 7, len;

    (void)state;
    a = pvm_initsend(PvmDataDefault);
    assert_true(a > 0);
    pvm_pkint(&x, 1, 1);
    b = pvm_initsend(PvmDataRaw);
    assert_true(b > 0);
    assert_int_equal(pvm_getsbuf(), b);
    assert_int_equal(pvm_bufinfo(b, &len, NULL, NULL), PvmOk);
    assert_int_equal(len, 0);
    /* The old one is gone, unless initsend failed. */
    if (a != b)
        assert_int_equal(pvm_bufinfo(a, NULL, NULL, NULL), PvmNoSuchBuf);
    assert_int_equal(pvm_initsend(42), PvmBadParam);
    assert_int_equal(pvm_getsbuf(), b);
}

static void
test_pvm_buf_bufinfo_reports_length_tag_and_source(void **state)
{
    struct pvmminfo mi = { 0 };
    int b, len = -1, tag = -1, tid = 0, v[3] = { 1, 2, 3 };
    char c = 'x';

    (void)state;
    b = pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_bufinfo(b, &len, &tag, &tid), PvmOk);
    assert_int_equal(len, 0);
    assert_int_equal(tag, 0);
    /* A new buffer's source is the task, -1 before it enrolls (as PVM). */
    assert_int_equal(tid, -1);
    pvm_pkint(v, 3, 1);
    pvm_pkbyte(&c, 1, 1);
    assert_int_equal(pvm_bufinfo(b, &len, NULL, NULL), PvmOk);
    assert_int_equal(len, 16);
    mi.src = 0x40005;
    mi.tag = 77;
    pvm__buf_set_info(pvm__buf_get(b), &mi);
    assert_int_equal(pvm_bufinfo(b, NULL, &tag, &tid), PvmOk);
    assert_int_equal(tag, 77);
    assert_int_equal(tid, 0x40005);
    assert_int_equal(pvm_bufinfo(0, &len, &tag, &tid), PvmBadParam);
    assert_int_equal(pvm_bufinfo(-3, &len, &tag, &tid), PvmBadParam);
    assert_int_equal(pvm_bufinfo(b + 1, &len, &tag, &tid), PvmNoSuchBuf);

    pvm__ctx.mytid = 0x80001;
    b = pvm_mkbuf(PvmDataRaw);
    pvm_bufinfo(b, NULL, NULL, &tid);
    assert_int_equal(tid, 0x80001);
}

static void
test_pvm_buf_minfo_fields_and_encoding_words(void **state)
{
    struct pvmminfo mi, set = { .len = 99, .ctx = 5, .tag = 6, .wid = 7, .enc = 8,
                                .crc = 9, .src = 10, .dst = 11 };
    int x = 3, b;

    (void)state;
    b = pvm_initsend(PvmDataDefault);
    pvm_pkint(&x, 1, 1);
    assert_int_equal(pvm_getminfo(b, &mi), PvmOk);
    assert_int_equal(mi.len, 4);
    assert_int_equal(mi.enc, 0x10000000);
    assert_int_equal(pvm_setminfo(b, &set), PvmOk);
    assert_int_equal(pvm_getminfo(b, &mi), PvmOk);
    /* len, enc and crc stay the body's. */
    assert_int_equal(mi.len, 4);
    assert_int_equal(mi.enc, 0x10000000);
    assert_int_equal(mi.crc, 0);
    assert_int_equal(mi.ctx, 5);
    assert_int_equal(mi.tag, 6);
    assert_int_equal(mi.wid, 7);
    assert_int_equal(mi.src, 10);
    assert_int_equal(mi.dst, 11);

    pvm_getminfo(pvm_mkbuf(PvmDataRaw), &mi);
    assert_int_equal(mi.enc, pvm__dsig());
    pvm_getminfo(pvm_mkbuf(PvmDataInPlace), &mi);
    assert_int_equal(mi.enc, 0x20000000);

    assert_int_equal(pvm_getminfo(b, NULL), PvmBadParam);
    assert_int_equal(pvm_setminfo(b, NULL), PvmBadParam);
    assert_int_equal(pvm_getminfo(0, &mi), PvmBadParam);
    assert_int_equal(pvm_setminfo(500, &set), PvmNoSuchBuf);
    assert_int_equal(pvm_getminfo(500, &mi), PvmNoSuchBuf);
}

static void
test_pvm_buf_data_signature_is_the_native_layout(void **state)
{
    (void)state;
#if defined(__x86_64__) && defined(__linux__)
    /* What PVM 3.4.6's pvmgetdsig() returns on x86-64 Linux. */
    assert_int_equal(pvm__dsig(), 0x408c41);
#endif
    assert_int_equal(pvm__dsig() & 0x1f, ((__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? 3 << 3 : 0) | 1);
}

static void
real_dsig(void *lib, int out, void *arg)
{
    int (*getdsig)(void) = real_pvm_sym(lib, "pvmgetdsig");
    int d = getdsig();

    (void)arg;
    real_pvm_write(out, &d, sizeof d);
}

static void
test_pvm_buf_data_signature_matches_pvm(void **state)
{
    int d = 0;

    (void)state;
    if (real_pvm_lib() == NULL) {
        print_message("PVM's libpvm3 is missing; apt-get install libpvm3 to compare\n");
        skip();
    }
    assert_int_equal(real_pvm_run(real_dsig, NULL, 0, &d, sizeof d), sizeof d);
    assert_int_equal(pvm__dsig(), d);
}

static void
test_pvm_buf_adopt_makes_received_buffers(void **state)
{
    static const unsigned char xdr[] = { 0, 0, 0, 42, 0xff, 0xff, 0xff, 0xfe };
    struct pvmminfo mi = { .src = 0x40002, .dst = 0x40001, .tag = 9, .ctx = 3, .wid = 4,
                           .crc = 5 };
    struct pvm__buf *b;
    unsigned char *mine;
    int v[2], len, tag, tid;

    (void)state;
    assert_int_equal(pvm__buf_adopt(0x10000000, (unsigned char *)(uintptr_t)xdr, sizeof xdr,
                                    sizeof xdr, 1, &b),
                     0);
    pvm__buf_set_info(b, &mi);
    assert_int_equal(pvm_bufinfo(b->id, &len, &tag, &tid), PvmOk);
    assert_int_equal(len, 8);
    assert_int_equal(tag, 9);
    assert_int_equal(tid, 0x40002);
    assert_int_equal(pvm_setrbuf(b->id), 0);
    assert_int_equal(pvm_upkint(v, 2, 1), PvmOk);
    assert_int_equal(v[0], 42);
    assert_int_equal(v[1], -2);

    /* Taking ownership: the buffer frees the bytes. */
    mine = pvm__malloc(16);
    assert_non_null(mine);
    v[0] = 1234;
    v[1] = -1;
    memcpy(mine, v, sizeof v);
    assert_int_equal(pvm__buf_adopt(pvm__dsig(), mine, sizeof v, 16, 0, &b), 0);
    assert_int_equal(b->enc, PVM__ENC_RAW);
    pvm_setrbuf(b->id);
    v[0] = v[1] = 0;
    assert_int_equal(pvm_upkint(v, 2, 1), PvmOk);
    assert_int_equal(v[0], 1234);
    assert_int_equal(v[1], -1);

    /* An empty body, and refusals. */
    assert_int_equal(pvm__buf_adopt(0x10000000, NULL, 0, 0, 1, &b), 0);
    assert_int_equal(pvm__buf_len(b), 0);
    assert_int_equal(pvm__buf_adopt(0x10000000, NULL, 4, 4, 1, &b), -EINVAL);
    assert_int_equal(pvm__buf_adopt(0x10000000, mine, (size_t)INT32_MAX + 1, SIZE_MAX, 0, &b),
                     -EMSGSIZE);
}

static void
test_pvm_buf_alien_encodings_unpack_only_bytes(void **state)
{
    static const unsigned char body[] = { 'a', 'b', 'c', 'd' };
    struct pvm__buf *b;
    char c[4];
    int n;

    (void)state;
    assert_int_equal(pvm__buf_adopt(0x12345, (unsigned char *)(uintptr_t)body, 4, 4, 1, &b), 0);
    assert_int_equal(b->enc, PVM__ENC_ALIEN);
    pvm_setrbuf(b->id);
    assert_int_equal(pvm_upkint(&n, 1, 1), PvmBadMsg);
    assert_int_equal(pvm_upkbyte(c, 4, 1), PvmOk);
    assert_memory_equal(c, body, 4);
    /* Nor can anything be packed into it. */
    pvm_setsbuf(b->id);
    assert_int_equal(pvm_pkbyte(c, 1, 1), PvmBadMsg);
}

static void
test_pvm_buf_flatten_copies_inplace_data_at_send_time(void **state)
{
    const unsigned char *p;
    struct pvm__buf *b;
    size_t len;
    int v[3] = { 1, 2, 3 }, n = 0, out[4];
    short h = 5;

    (void)state;
    pvm_initsend(PvmDataInPlace);
    b = pvm__ctx.sbuf;
    assert_int_equal(pvm_pkint(v, 3, 1), PvmOk);
    assert_int_equal(pvm_pkshort(&h, 1, 1), PvmOk);
    pvm_bufinfo(b->id, &n, NULL, NULL);
    assert_int_equal(n, 3 * (int)sizeof(int) + (int)sizeof(short));
    /* The caller's array changes before the send: the message has the change. */
    v[1] = 200;
    assert_int_equal(pvm__buf_flatten(b, &p, &len), 0);
    assert_int_equal(len, 14);
    memcpy(out, p, 12);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 200);
    assert_int_equal(out[2], 3);
    assert_int_equal(pvm__buf_encword(b), pvm__dsig());

    /* XDR and Raw bodies are their own bytes. */
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 1, 1);
    assert_int_equal(pvm__buf_flatten(pvm__ctx.sbuf, &p, &len), 0);
    assert_int_equal(len, 4);
    assert_int_equal(p[3], 1);
    assert_int_equal(pvm__buf_encword(pvm__ctx.sbuf), 0x10000000);
}

static void
test_pvm_buf_many_buffers_grow_the_table(void **state)
{
    int i, id;

    (void)state;
    for (i = 1; i <= 3000; i++) {
        id = pvm_mkbuf(i % 3);
        assert_int_equal(id, i);
    }
    for (i = 1; i <= 3000; i += 2)
        assert_int_equal(pvm_freebuf(i), PvmOk);
    for (i = 1; i <= 3000; i += 2)
        assert_int_equal(pvm_mkbuf(PvmDataRaw), i);
    /* Freed by reset, which the sanitizer build checks for leaks. */
}

static void
test_pvm_buf_allocation_failures_are_no_mem(void **state)
{
    int i, x = 1;

    (void)state;
    /* The table, then the buffer itself. */
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_mkbuf(PvmDataDefault), PvmNoMem);
    pvm__ctx.fault_after = 2;
    assert_int_equal(pvm_initsend(PvmDataDefault), PvmNoMem);
    assert_int_equal(pvm_errno, PvmNoMem);
    /* Nothing half-made stays behind, and the next calls work. */
    for (i = 1; i < pvm__ctx.nbufs; i++)
        assert_null(pvm__ctx.bufs[i]);
    assert_true(pvm_initsend(PvmDataDefault) > 0);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_pkint(&x, 1, 1), PvmNoMem);
    assert_int_equal(pvm_pkint(&x, 1, 1), PvmOk);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pvm_buf_mkbuf_accepts_the_three_encodings, reset),
        cmocka_unit_test_setup(test_pvm_buf_mkbuf_refuses_bad_encodings, reset),
        cmocka_unit_test_setup(test_pvm_buf_ids_are_reused_lowest_first, reset),
        cmocka_unit_test_setup(test_pvm_buf_freebuf_codes, reset),
        cmocka_unit_test_setup(test_pvm_buf_freeing_the_active_buffers_leaves_none, reset),
        cmocka_unit_test_setup(test_pvm_buf_setsbuf_and_setrbuf_return_the_old_buffer, reset),
        cmocka_unit_test_setup(test_pvm_buf_switching_refuses_bad_ids_and_keeps_the_active_one,
                               reset),
        cmocka_unit_test_setup(test_pvm_buf_a_buffer_is_never_both_active, reset),
        cmocka_unit_test_setup(test_pvm_buf_switching_rewinds_once_and_packing_appends, reset),
        cmocka_unit_test_setup(test_pvm_buf_initsend_replaces_the_send_buffer, reset),
        cmocka_unit_test_setup(test_pvm_buf_bufinfo_reports_length_tag_and_source, reset),
        cmocka_unit_test_setup(test_pvm_buf_minfo_fields_and_encoding_words, reset),
        cmocka_unit_test_setup(test_pvm_buf_data_signature_is_the_native_layout, reset),
        cmocka_unit_test_setup(test_pvm_buf_data_signature_matches_pvm, reset),
        cmocka_unit_test_setup(test_pvm_buf_adopt_makes_received_buffers, reset),
        cmocka_unit_test_setup(test_pvm_buf_alien_encodings_unpack_only_bytes, reset),
        cmocka_unit_test_setup(test_pvm_buf_flatten_copies_inplace_data_at_send_time, reset),
        cmocka_unit_test_setup(test_pvm_buf_many_buffers_grow_the_table, reset),
        cmocka_unit_test_setup(test_pvm_buf_allocation_failures_are_no_mem, reset),
    };

    return cmocka_run_group_tests_name("pvm_buf", tests, NULL, reset);
}
