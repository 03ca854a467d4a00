/*
 * test_pvm_mcast.c - lib/pvm/pvm_mcast.c against a socketpair daemon
 * (test_pvm_fakevm.h): one copy per distinct task, never to ourselves,
 * the same body, tag and context in each, and PVM's error codes.
 */
#include "test_pvm_fakevm.h"

static void
test_pvm_mcast_one_copy_per_task_but_not_to_us(void **state)
{
    int tids[] = { FAKE_T3, FAKE_ME, FAKE_T2, FAKE_T3, FAKE_T2, FAKE_ME };
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    pvm_initsend(PvmDataDefault);
    pvm_pkint((int[]){ 66 }, 1, 1);
    pvm_setcontext(0x40005);
    assert_int_equal(pvm_mcast(tids, 6, 20), PvmOk);
    /* In tid order, as PVM sorts them. */
    assert_int_equal(fake_expect_int(FAKE_T2, 20, 0x40005), 66);
    assert_int_equal(fake_expect_int(FAKE_T3, 20, 0x40005), 66);
    assert_int_equal(fake_sent(&h, &b), 0);
    /* The caller's array is left as it was. */
    assert_int_equal(tids[0], FAKE_T3);
    assert_int_equal(tids[5], FAKE_ME);
}

static void
test_pvm_mcast_inplace_buffers_are_copied_for_each(void **state)
{
    double d[100];
    int tids[] = { FAKE_T2, FAKE_T3 };
    struct wire_hdr h;
    unsigned char *b = NULL;
    int i, k;

    (void)state;
    for (i = 0; i < 100; i++)
        d[i] = i * 0.5;
    pvm_initsend(PvmDataInPlace);
    pvm_pkdouble(d, 100, 1);
    assert_int_equal(pvm_mcast(tids, 2, 3), PvmOk);
    for (k = 0; k < 2; k++) {
        assert_int_equal(fake_sent(&h, &b), 1);
        assert_int_equal((int)h.dst, tids[k]);
        assert_int_equal(h.len, sizeof d);
        assert_memory_equal(b, d, sizeof d);
        free(b);
    }
}

static void
test_pvm_mcast_to_nobody_or_only_us_sends_nothing(void **state)
{
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_mcast(NULL, 0, 1), PvmOk);
    assert_int_equal(pvm_mcast((int[]){ FAKE_ME, FAKE_ME }, 2, 1), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 0);
}

static void
test_pvm_mcast_errors_are_pvms(void **state)
{
    int good[] = { FAKE_T2 };
    int bad[] = { FAKE_T2, 0x40000 };
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    assert_int_equal(pvm_mcast(good, 1, 1), PvmNoBuf);
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_mcast(good, -1, 1), PvmBadParam);
    assert_int_equal(pvm_mcast(good, 1, -1), PvmBadParam);
    assert_int_equal(pvm_mcast(NULL, 1, 1), PvmBadParam);
    /* One bad tid and nobody gets it. */
    assert_int_equal(pvm_mcast(bad, 2, 1), PvmBadParam);
    assert_int_equal(pvm_mcast((int[]){ 0 }, 1, 1), PvmBadParam);
    assert_int_equal(pvm_errno, PvmBadParam);
    assert_int_equal(fake_sent(&h, &b), 0);
    /* PvmResvTids allows the reserved ones. */
    pvm_setopt(PvmResvTids, 1);
    assert_int_equal(pvm_mcast(bad, 2, -3), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal((int)h.dst, 0x40000);
    assert_int_equal(h.tag, -3);
    free(b);
    assert_int_equal(fake_sent(&h, &b), 1);
    free(b);
    pvm_setopt(PvmResvTids, 0);
}

static void
test_pvm_mcast_not_in_a_daemon_context(void **state)
{
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    pvm_initsend(PvmDataDefault);
    pvm_setcontext(0x7fff0000);
    assert_int_equal(pvm_mcast((int[]){ FAKE_T2 }, 1, 1), PvmBadParam);
    assert_int_equal(fake_sent(&h, &b), 0);
}

static void
test_pvm_mcast_without_a_vm_or_memory(void **state)
{
    (void)state;
    pvm_initsend(PvmDataDefault);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_mcast((int[]){ FAKE_T2 }, 1, 1), PvmNoMem);
    pvm__ctx.fault_after = 0;
    close(fake_fd);
    fake_fd = -1;
    assert_int_equal(pvm_mcast((int[]){ FAKE_T2 }, 1, 1), PvmSysErr);
    close(pvm__ctx.fd);
    pvm__ctx.fd = -1;
    assert_int_equal(pvm_mcast((int[]){ FAKE_T2 }, 1, 1), PvmSysErr);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fake_up, fake_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_mcast_one_copy_per_task_but_not_to_us),
        T(test_pvm_mcast_inplace_buffers_are_copied_for_each),
        T(test_pvm_mcast_to_nobody_or_only_us_sends_nothing),
        T(test_pvm_mcast_errors_are_pvms),
        T(test_pvm_mcast_not_in_a_daemon_context),
        T(test_pvm_mcast_without_a_vm_or_memory),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_mcast", tests, NULL, NULL);
}
