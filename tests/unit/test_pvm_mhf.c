/*
 * test_pvm_mhf.c - lib/pvm/pvm_mhf.c and the handler dispatch of
 * lib/pvm/pvm_msg.c, against a socketpair daemon (test_pvm_fakevm.h): the
 * handler table (ids, overlaps, deletion), what a handler sees (its
 * message as the receive buffer, no send buffer, the message's context),
 * what is restored and freed afterwards (the patterns of PVM's
 * mhf_server.c and of the man page), when handlers run (receives, sends,
 * not inside a daemon request), and pvmdisplaymhfinfo.
 */
#include "test_pvm_fakevm.h"

#include <fcntl.h>
#include <stdio.h>

static int hits, seen_mid, seen_rbuf, seen_sbuf, seen_ctx, seen_val, seen_tag;

static void
seen_reset(void)
{
    hits = seen_mid = seen_rbuf = seen_sbuf = seen_ctx = seen_val = seen_tag = -1;
    hits = 0;
}

/* Looks and leaves everything to the library. */
static int
h_look(int mid)
{
    hits++;
    seen_mid = mid;
    seen_rbuf = pvm_getrbuf();
    seen_sbuf = pvm_getsbuf();
    seen_ctx = pvm_getcontext();
    pvm_bufinfo(mid, NULL, &seen_tag, NULL);
    pvm_upkint(&seen_val, 1, 1);
    return 0;
}

/* mhf_server.c's string_catcher: frees its message itself. */
static int
h_mhf_server(int mid)
{
    int rbf;

    hits++;
    seen_mid = mid;
    rbf = pvm_setrbuf(mid);
    pvm_upkint(&seen_val, 1, 1);
    pvm_freebuf(pvm_setrbuf(rbf));
    return 0;
}

/* The man page's reply, leaving its send buffer for the library to free. */
static int
h_reply(int mid)
{
    int src, v;

    hits++;
    seen_mid = mid;
    pvm_bufinfo(mid, NULL, NULL, &src);
    pvm_upkint(&v, 1, 1);
    v *= 10;
    pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
    pvm_pkint(&v, 1, 1);
    pvm_send(src, 99);
    return 0;
}

/* A handler that receives (which PVM forbids): others must not nest. */
static int nested_rc;
static int
h_receives(int mid)
{
    (void)mid;
    hits++;
    nested_rc = pvm_nrecv(-1, -1);
    return 0;
}

/* Makes a buffer that takes the id of its freed message, and keeps it. */
static int kept_buf;
static int
h_keeps_a_buffer(int mid)
{
    hits++;
    pvm_freebuf(mid);
    kept_buf = pvm_mkbuf(PvmDataDefault);
    return 0;
}

/* ---- the table ---- */

static void
test_pvm_mhf_ids_are_numbered_as_pvm_numbers_them(void **state)
{
    (void)state;
    /* PVM 3.4.6's own 9 handlers hold 0-8; a freed id is reused first, last freed first. */
    assert_int_equal(pvm_addmhf(-1, 1, -1, h_look), 9);
    assert_int_equal(pvm_addmhf(-1, 2, -1, h_look), 10);
    assert_int_equal(pvm_addmhf(-1, 3, -1, h_look), 11);
    assert_int_equal(pvm_delmhf(9), PvmOk);
    assert_int_equal(pvm_delmhf(10), PvmOk);
    assert_int_equal(pvm_addmhf(-1, 4, -1, h_look), 10);
    assert_int_equal(pvm_addmhf(-1, 5, -1, h_look), 9);
    assert_int_equal(pvm_addmhf(-1, 6, -1, h_look), 12);
}

static void
test_pvm_mhf_many_handlers_grow_the_table(void **state)
{
    int i;

    (void)state;
    for (i = 0; i < 100; i++)
        assert_int_equal(pvm_addmhf(FAKE_T2, i, 0, h_look), 9 + i);
    assert_int_equal(pvm__mhf_find(FAKE_T2, 57, 0), 9 + 57);
    assert_int_equal(pvm__mhf_find(FAKE_T2, 100, 0), -1);
    for (i = 0; i < 100; i++)
        assert_int_equal(pvm_delmhf(9 + i), PvmOk);
    assert_int_equal(pvm__mhf_find(FAKE_T2, 57, 0), -1);
    /* The last one deleted comes back first. */
    assert_int_equal(pvm_addmhf(FAKE_T2, 1, 0, h_look), 9 + 99);
}

static void
test_pvm_mhf_overlapping_handlers_are_refused(void **state)
{
    (void)state;
    assert_int_equal(pvm_addmhf(FAKE_T2, 5, 0, h_look), 9);
    /* Equal, or a wildcard on either side, in all three fields. */
    assert_int_equal(pvm_addmhf(FAKE_T2, 5, 0, h_look), PvmExists);
    assert_int_equal(pvm_errno, PvmExists);
    assert_int_equal(pvm_addmhf(-1, 5, 0, h_look), PvmExists);
    assert_int_equal(pvm_addmhf(FAKE_T2, -1, -1, h_look), PvmExists);
    assert_int_equal(pvm_addmhf(-1, -1, -1, h_look), PvmExists);
    /* One field that differs is enough. */
    assert_int_equal(pvm_addmhf(FAKE_T3, 5, 0, h_look), 10);
    assert_int_equal(pvm_addmhf(FAKE_T2, 6, 0, h_look), 11);
    assert_int_equal(pvm_addmhf(FAKE_T2, 5, 1, h_look), 12);
    assert_int_equal(pvm_addmhf(-1, 7, -1, h_look), 13);
    assert_int_equal(pvm_addmhf(FAKE_T2, 7, 3, h_look), PvmExists);
}

static void
test_pvm_mhf_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(pvm_addmhf(-1, 1, -1, NULL), PvmBadParam);
    assert_int_equal(pvm_delmhf(-1), PvmBadParam);
    assert_int_equal(pvm_delmhf(0), PvmNotFound);
    assert_int_equal(pvm_delmhf(1 << 30), PvmNotFound);
    assert_int_equal(pvm_addmhf(-1, 1, -1, h_look), 9);
    /* PVM's own ids are not a program's to delete. */
    assert_int_equal(pvm_delmhf(0), PvmNotFound);
    assert_int_equal(pvm_delmhf(8), PvmNotFound);
    assert_int_equal(pvm_delmhf(9), PvmOk);
    assert_int_equal(pvm_delmhf(9), PvmNotFound);
    assert_int_equal(pvm_errno, PvmNotFound);
}

static void
test_pvm_mhf_out_of_memory(void **state)
{
    (void)state;
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_addmhf(-1, 1, -1, h_look), PvmNoMem);
    pvm__ctx.fault_after = 0;
    assert_int_equal(pvm_addmhf(-1, 1, -1, h_look), 9);
}

/* ---- calling them ---- */

static void
test_pvm_mhf_handler_gets_the_message_instead_of_the_queue(void **state)
{
    int sbuf, rbuf;

    (void)state;
    seen_reset();
    sbuf = pvm_initsend(PvmDataRaw);
    rbuf = pvm_mkbuf(PvmDataDefault);
    pvm_setrbuf(rbuf);
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_look), 9);
    pvm_setcontext(0x40005);
    fake_deliver_int(FAKE_T3, 9, 0x80002, 44);
    /* A probe reads it: the handler runs and the queue stays empty. */
    assert_int_equal(pvm_probe(-1, -1), 0);
    assert_int_equal(hits, 1);
    assert_int_equal(seen_val, 44);
    assert_int_equal(seen_tag, 9);
    assert_int_equal(seen_rbuf, seen_mid);
    assert_int_equal(seen_sbuf, 0);
    assert_int_equal(seen_ctx, 0x80002);
    /* Everything is as it was, and the message is gone. */
    assert_int_equal(pvm_getcontext(), 0x40005);
    assert_int_equal(pvm_getsbuf(), sbuf);
    assert_int_equal(pvm_getrbuf(), rbuf);
    assert_int_equal(pvm_bufinfo(seen_mid, NULL, NULL, NULL), PvmNoSuchBuf);
    assert_null(pvm__ctx.inq_head);
    /* Other messages are received as usual. */
    fake_deliver_int(FAKE_T3, 8, 0x40005, 55);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 55);
    assert_int_equal(hits, 1);
    pvm_setcontext(-1);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
}

static void
test_pvm_mhf_handler_that_frees_its_message(void **state)
{
    int rbuf;

    (void)state;
    seen_reset();
    rbuf = pvm_mkbuf(PvmDataDefault);
    pvm_setrbuf(rbuf);
    assert_int_equal(pvm_addmhf(FAKE_T2, -1, 0, h_mhf_server), 9);
    fake_deliver_int(FAKE_T2, 3, 0, 33);
    fake_deliver_int(FAKE_T2, 4, 0, 34);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(hits, 2);
    assert_int_equal(seen_val, 34);
    /* nrecv freed the receive buffer it found, as PVM's does. */
    assert_int_equal(pvm_getrbuf(), 0);
    assert_int_equal(pvm_bufinfo(rbuf, NULL, NULL, NULL), PvmNoSuchBuf);
    assert_null(pvm__ctx.inq_head);
}

static void
test_pvm_mhf_handler_replies_and_its_send_buffer_is_freed(void **state)
{
    int sbuf, n, i;

    (void)state;
    seen_reset();
    sbuf = pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_reply), 9);
    fake_deliver_int(FAKE_T3, 9, 0x80002, 4);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(hits, 1);
    /* The reply went in the message's context. */
    assert_int_equal(fake_expect_int(FAKE_T3, 99, 0x80002), 40);
    assert_int_equal(pvm_getsbuf(), sbuf);
    /* Only ours and the library's... nothing of the handler's is left. */
    for (i = 1, n = 0; i < pvm__ctx.nbufs; i++)
        n += pvm__ctx.bufs[i] != NULL;
    assert_int_equal(n, 1);
}

static void
test_pvm_mhf_handler_keeping_a_buffer_with_its_message_id(void **state)
{
    (void)state;
    seen_reset();
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_keeps_a_buffer), 9);
    fake_deliver_int(FAKE_T3, 9, 0, 1);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(hits, 1);
    /* It got the freed message's id, and it is still the handler's. */
    assert_true(kept_buf > 0);
    assert_non_null(pvm__buf_get(kept_buf));
    assert_int_equal(pvm_freebuf(kept_buf), PvmOk);
}

static void
test_pvm_mhf_context_of_a_handler_selects(void **state)
{
    struct pvm__msg *m;

    (void)state;
    seen_reset();
    assert_int_equal(pvm_addmhf(-1, 9, 0x40005, h_look), 9);
    fake_deliver_int(FAKE_T2, 9, 0, 1);
    fake_deliver_int(FAKE_T2, 9, 0x40005, 2);
    fake_deliver_int(FAKE_T2, 9, 0x7fff0000, 3);    /* the daemon's: never a wildcard's */
    assert_int_equal(pvm_probe(-1, 12345), 0);
    assert_true(pvm_recv(-1, 9) > 0);
    assert_int_equal(fake_upk_int(), 1);
    assert_int_equal(hits, 1);
    assert_int_equal(seen_val, 2);
    assert_int_equal(pvm_delmhf(9), PvmOk);
    assert_int_equal(pvm_addmhf(-1, -1, -1, h_look), 9);
    fake_deliver_int(FAKE_T2, 8, 0x40006, 4);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(hits, 2);
    assert_int_equal(seen_val, 4);
    /* The daemon's message waits for the library's own reader. */
    m = pvm__inq_take(-1, 9, 0x7fff0000);
    assert_non_null(m);
    pvm__msg_free(m);
}

static void
test_pvm_mhf_handlers_wait_while_a_request_is_in_progress(void **state)
{
    (void)state;
    seen_reset();
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_look), 9);
    fake_deliver_int(FAKE_T2, 9, 0, 1);
    fake_deliver_int(FAKE_T2, 9, 0, 2);
    fake_set_reply_u32(0, 0x40003);
    /* The stub reads both while "waiting for the reply". */
    assert_int_equal(pvm_newcontext(), 0x40003);
    assert_int_equal(hits, 0);
    assert_int_equal(pvm__ctx.mhf_pending, 2);
    /* No receive takes them meanwhile. */
    pvm_recvf(NULL);
    assert_int_equal(pvm__inq_take(-1, -1, 0), NULL);
    /* The next call that reads runs them, in order. */
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(hits, 2);
    assert_int_equal(seen_val, 2);
    assert_int_equal(pvm__ctx.mhf_pending, 0);
}

static void
test_pvm_mhf_deleted_before_it_ran_the_message_is_ordinary(void **state)
{
    int id;

    (void)state;
    seen_reset();
    id = pvm_addmhf(-1, 9, -1, h_look);
    fake_deliver_int(FAKE_T2, 9, 0, 7);
    fake_set_reply_u32(0, 0x40003);
    pvm_newcontext();
    assert_int_equal(pvm_delmhf(id), PvmOk);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 7);
    assert_int_equal(hits, 0);
}

static void
test_pvm_mhf_handlers_run_during_sends(void **state)
{
    int v = 1;

    (void)state;
    seen_reset();
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_look), 9);
    fake_deliver_int(FAKE_T2, 9, 0, 5);
    assert_int_equal(fake_send_int(FAKE_T2, 1, 0), PvmOk);
    assert_int_equal(hits, 1);
    fake_deliver_int(FAKE_T2, 9, 0, 6);
    assert_int_equal(pvm_psend(FAKE_T2, 1, &v, 1, PVM_INT), PvmOk);
    assert_int_equal(hits, 2);
    fake_deliver_int(FAKE_T2, 9, 0, 7);
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_mcast((int[]){ FAKE_T2 }, 1, 1), PvmOk);
    assert_int_equal(hits, 3);
    assert_int_equal(seen_val, 7);
}

static void
test_pvm_mhf_handlers_do_not_nest(void **state)
{
    (void)state;
    seen_reset();
    assert_int_equal(pvm_addmhf(-1, 9, -1, h_receives), 9);
    assert_int_equal(pvm_addmhf(-1, 10, -1, h_look), 10);
    fake_deliver_int(FAKE_T2, 9, 0, 1);
    fake_deliver_int(FAKE_T2, 10, 0, 2);
    fake_deliver_int(FAKE_T2, 11, 0, 3);
    assert_int_equal(pvm_probe(-1, 11), 0);
    /* The first handler's nrecv read the rest, ran no handler and took
     * the ordinary message; the second handler ran after the first. */
    assert_int_equal(hits, 2);
    assert_true(nested_rc > 0);
    assert_int_equal(seen_val, 2);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
}

static void
test_pvm_mhf_display_lists_the_handlers(void **state)
{
    char out[2048] = { 0 };
    int fds[2], saved;
    ssize_t n;

    (void)state;
    pvm_addmhf(FAKE_T2, 7, 0x40005, h_look);
    pvm_addmhf(-1, 8, -1, h_look);
    pvm_delmhf(9);
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    saved = dup(1);
    dup2(fds[1], 1);
    pvmdisplaymhfinfo("me", "after delete", FAKE_ME);
    pvmdisplaymhfinfo(NULL, NULL, FAKE_ME);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(fds[1]);
    n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    assert_true(n > 0);
    assert_non_null(strstr(out, "me t40001: after delete"));
    assert_non_null(strstr(out, "1 handler"));
    assert_non_null(strstr(out, "mhid = 10"));
    assert_null(strstr(out, "mhid =  9"));
}

static void
test_pvm_mhf_reset_forgets_all(void **state)
{
    (void)state;
    pvm_addmhf(-1, 8, -1, h_look);
    pvm__mhf_reset();
    assert_int_equal(pvm_delmhf(9), PvmNotFound);
    assert_int_equal(pvm_addmhf(-1, 8, -1, h_look), 9);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fake_up, fake_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_mhf_ids_are_numbered_as_pvm_numbers_them),
        T(test_pvm_mhf_many_handlers_grow_the_table),
        T(test_pvm_mhf_overlapping_handlers_are_refused),
        T(test_pvm_mhf_bad_arguments),
        T(test_pvm_mhf_out_of_memory),
        T(test_pvm_mhf_handler_gets_the_message_instead_of_the_queue),
        T(test_pvm_mhf_handler_that_frees_its_message),
        T(test_pvm_mhf_handler_replies_and_its_send_buffer_is_freed),
        T(test_pvm_mhf_handler_keeping_a_buffer_with_its_message_id),
        T(test_pvm_mhf_context_of_a_handler_selects),
        T(test_pvm_mhf_handlers_wait_while_a_request_is_in_progress),
        T(test_pvm_mhf_deleted_before_it_ran_the_message_is_ordinary),
        T(test_pvm_mhf_handlers_run_during_sends),
        T(test_pvm_mhf_handlers_do_not_nest),
        T(test_pvm_mhf_display_lists_the_handlers),
        T(test_pvm_mhf_reset_forgets_all),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_mhf", tests, NULL, NULL);
}
