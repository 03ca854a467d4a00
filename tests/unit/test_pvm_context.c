/*
 * test_pvm_context.c - lib/pvm/pvm_context.c and the context rules of the
 * message path: pvm_newcontext asks the daemon, set/get/free, every sent
 * frame carries the current context, receives and probes see only their
 * own context (-1 sees all but the daemons'), the daemons' contexts cannot
 * be sent in, and a spawned task inherits its parent's context.  The
 * daemon is a socketpair (test_pvm_fakevm.h).
 */
#include "test_pvm_fakevm.h"

static void
test_pvm_context_starts_in_the_base_context(void **state)
{
    (void)state;
    assert_int_equal(pvm_getcontext(), PvmBaseContext);
    assert_int_equal(pvm_getcontext(), 0);
}

static void
test_pvm_context_setcontext_returns_the_old_one(void **state)
{
    (void)state;
    assert_int_equal(pvm_setcontext(0x40007), 0);
    assert_int_equal(pvm_getcontext(), 0x40007);
    assert_int_equal(pvm_setcontext(-1), 0x40007);
    assert_int_equal(pvm_setcontext(0), -1);
    assert_int_equal(pvm_getcontext(), 0);
}

static void
test_pvm_context_newcontext_asks_the_daemon_and_is_not_active(void **state)
{
    (void)state;
    fake_set_reply_u32(0, 0x40003);
    assert_int_equal(pvm_newcontext(), 0x40003);
    assert_int_equal(fake_req_type, WIRE_T_TASK_NEWCTX);
    assert_int_equal(fake_req_len, 0);
    /* "this new context is not yet active" */
    assert_int_equal(pvm_getcontext(), 0);
    fake_set_reply_u32(0, 0x40004);
    assert_int_equal(pvm_newcontext(), 0x40004);
    assert_int_equal(fake_reqs, 2);
}

static void
test_pvm_context_newcontext_refuses_bad_replies(void **state)
{
    (void)state;
    /* The base context and the daemons' own are never handed out. */
    fake_set_reply_u32(0, 0);
    assert_int_equal(pvm_newcontext(), PvmBadMsg);
    fake_set_reply_u32(0, 0x7fff0001);
    assert_int_equal(pvm_newcontext(), PvmBadMsg);
    fake_set_reply_u32(0, 0x80000001u);
    assert_int_equal(pvm_newcontext(), PvmBadMsg);
    /* A short body. */
    fake_set_reply_u32(0, 0x40003);
    fake_reply_len = 3;
    assert_int_equal(pvm_newcontext(), PvmBadMsg);
    /* The daemon's error comes back as PVM's. */
    fake_set_reply_u32(WIRE_EHALTED, 0);
    assert_int_equal(pvm_newcontext(), PvmSysErr);
    assert_int_equal(pvm_errno, PvmSysErr);
    assert_int_equal(pvm_getcontext(), 0);
}

static void
test_pvm_context_newcontext_without_a_vm_is_pvmsyserr(void **state)
{
    (void)state;
    close(pvm__ctx.fd);
    pvm__ctx.fd = -1;
    assert_int_equal(pvm_newcontext(), PvmSysErr);
    assert_int_equal(pvm_freecontext(5), PvmSysErr);
    assert_int_equal(fake_reqs, 0);
}

static void
test_pvm_context_newcontext_out_of_memory(void **state)
{
    (void)state;
    fake_set_reply_u32(0, 0x40003);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_newcontext(), PvmNoMem);
    pvm__ctx.fault_after = 0;
}

static void
test_pvm_context_freecontext_frees_ours_once(void **state)
{
    int c;

    (void)state;
    fake_set_reply_u32(0, 0x40009);
    c = pvm_newcontext();
    assert_int_equal(c, 0x40009);
    assert_int_equal(pvm_freecontext(12345), PvmNotFound);
    assert_int_equal(pvm_freecontext(0), PvmNotFound);
    assert_int_equal(pvm_freecontext(-1), PvmNotFound);
    /* The daemon that handed it out is told, so it can give it again. */
    fake_reqs = 0;
    assert_int_equal(pvm_freecontext(c), PvmOk);
    assert_int_equal(fake_reqs, 1);
    assert_int_equal(fake_req_type, WIRE_T_TASK_FREECTX);
    assert_int_equal(fake_req_len, 4);
    assert_int_equal(pvm_freecontext(c), PvmNotFound);
    assert_int_equal(fake_reqs, 1);
    assert_int_equal(pvm_errno, PvmNotFound);
}

static void
test_pvm_context_frames_carry_the_current_context(void **state)
{
    struct pvmminfo mi;

    (void)state;
    assert_int_equal(fake_send_int(FAKE_T2, 1, 10), PvmOk);
    assert_int_equal(fake_expect_int(FAKE_T2, 1, 0), 10);
    pvm_setcontext(0x40005);
    assert_int_equal(fake_send_int(FAKE_T2, 2, 20), PvmOk);
    assert_int_equal(fake_expect_int(FAKE_T2, 2, 0x40005), 20);
    /* The send buffer records the context it went in, as PVM's does. */
    assert_int_equal(pvm_getminfo(pvm_getsbuf(), &mi), PvmOk);
    assert_int_equal(mi.ctx, 0x40005);
    pvm_setcontext(0);
}

static void
test_pvm_context_receive_sees_only_its_context(void **state)
{
    (void)state;
    fake_deliver_int(FAKE_T2, 5, 0x40005, 11);
    fake_deliver_int(FAKE_T2, 5, 0, 22);
    fake_deliver_int(FAKE_T2, 5, 0x40005, 33);
    /* The base context skips the first one. */
    assert_true(pvm_recv(FAKE_T2, 5) > 0);
    assert_int_equal(fake_upk_int(), 22);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm_probe(-1, -1), 0);
    /* In the other context both come, in order. */
    pvm_setcontext(0x40005);
    assert_true(pvm_probe(-1, -1) > 0);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 11);
    assert_true(pvm_recv(-1, 5) > 0);
    assert_int_equal(fake_upk_int(), 33);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
}

static void
test_pvm_context_trecv_times_out_on_other_contexts(void **state)
{
    struct timeval tv = { 0, 20000 };
    int bufid, bytes, tag, tid;
    struct pvmminfo mi;

    (void)state;
    fake_deliver_int(FAKE_T3, 7, 0x80002, 1);
    assert_int_equal(pvm_trecv(-1, -1, &tv), 0);
    pvm_setcontext(0x80002);
    bufid = pvm_trecv(-1, -1, &tv);
    assert_true(bufid > 0);
    assert_int_equal(pvm_bufinfo(bufid, &bytes, &tag, &tid), PvmOk);
    assert_int_equal(tid, FAKE_T3);
    assert_int_equal(tag, 7);
    assert_int_equal(pvm_getminfo(bufid, &mi), PvmOk);
    assert_int_equal(mi.ctx, 0x80002);
}

static void
test_pvm_context_minus_one_receives_every_context_but_the_daemons(void **state)
{
    struct pvm__msg *m;

    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0x7fff0000, 1);    /* the daemon's (siblings) */
    fake_deliver_int(FAKE_T2, 2, 0x40005, 2);
    fake_deliver_int(FAKE_T2, 3, 0, 3);
    pvm_setcontext(-1);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 2);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 3);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    /* The library's own reader still finds it. */
    m = pvm__inq_take(-1, 1, 0x7fff0000);
    assert_non_null(m);
    assert_int_equal(m->src, FAKE_T2);
    pvm__msg_free(m);
    assert_null(pvm__inq_take(-1, -1, 0x7fff0000));
}

static void
test_pvm_context_daemon_contexts_cannot_be_sent_in(void **state)
{
    struct wire_hdr h;
    unsigned char *b = NULL;
    int v = 1;

    (void)state;
    assert_int_equal(pvm_setcontext(0x7fff0001), 0);
    assert_int_equal(fake_send_int(FAKE_T2, 1, 1), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, 1, &v, 1, PVM_INT), PvmBadParam);
    pvm_setcontext(-1);
    assert_int_equal(fake_send_int(FAKE_T2, 1, 1), PvmBadParam);
    assert_int_equal(fake_sent(&h, &b), 0);
    /* Small negative ones have those bits too; the others are anyone's. */
    pvm_setcontext(-5);
    assert_int_equal(fake_send_int(FAKE_T2, 1, 1), PvmBadParam);
    assert_int_equal(fake_sent(&h, &b), 0);
    pvm_setcontext(INT_MIN + 5);
    assert_int_equal(fake_send_int(FAKE_T2, 1, 1), PvmOk);
    assert_int_equal(fake_expect_int(FAKE_T2, 1, INT_MIN + 5), 1);
}

static void
test_pvm_context_is_inherited_from_the_environment(void **state)
{
    (void)state;
    setenv("LIQUIDVM_CTX", "0x40011", 1);
    assert_int_equal(pvm_getcontext(), 0x40011);
    /* Read once: later changes of the environment do not count. */
    setenv("LIQUIDVM_CTX", "7", 1);
    assert_int_equal(pvm_getcontext(), 0x40011);
    unsetenv("LIQUIDVM_CTX");
}

static void
test_pvm_context_inheritance_ignores_bad_values(void **state)
{
    static const char *const bad[] = { "", "12x", "0x7fff0001", "99999999999", "junk" };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pvm__ctx.msgctx_known = 0;
        pvm__ctx.msgctx = 0;
        setenv("LIQUIDVM_CTX", bad[i], 1);
        assert_int_equal(pvm_getcontext(), 0);
    }
    unsetenv("LIQUIDVM_CTX");
}

static void
test_pvm_context_setcontext_wins_over_inheritance(void **state)
{
    (void)state;
    setenv("LIQUIDVM_CTX", "0x40011", 1);
    assert_int_equal(pvm_setcontext(3), 0x40011);
    assert_int_equal(pvm_getcontext(), 3);
    unsetenv("LIQUIDVM_CTX");
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fake_up, fake_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_context_starts_in_the_base_context),
        T(test_pvm_context_setcontext_returns_the_old_one),
        T(test_pvm_context_newcontext_asks_the_daemon_and_is_not_active),
        T(test_pvm_context_newcontext_refuses_bad_replies),
        T(test_pvm_context_newcontext_without_a_vm_is_pvmsyserr),
        T(test_pvm_context_newcontext_out_of_memory),
        T(test_pvm_context_freecontext_frees_ours_once),
        T(test_pvm_context_frames_carry_the_current_context),
        T(test_pvm_context_receive_sees_only_its_context),
        T(test_pvm_context_trecv_times_out_on_other_contexts),
        T(test_pvm_context_minus_one_receives_every_context_but_the_daemons),
        T(test_pvm_context_daemon_contexts_cannot_be_sent_in),
        T(test_pvm_context_is_inherited_from_the_environment),
        T(test_pvm_context_inheritance_ignores_bad_values),
        T(test_pvm_context_setcontext_wins_over_inheritance),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_context", tests, NULL, NULL);
}
