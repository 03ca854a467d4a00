/*
 * test_pvm_hostsync.c - lib/pvm/pvm_hostsync.c: the man page's normalised
 * timevals, the clock a fake daemon answers and delta against the
 * midpoint of our own clock, and the daemon's errors as PVM's codes.
 */
#include "test_pvm_fakevm.h"

#include <sys/time.h>

#include "../../lib/pvm/pvm_hostsync.c"

static void
split_is(int64_t us, long sec, long usec)
{
    struct timeval tv;
    pvm__tv_split(us, &tv);
    assert_int_equal(tv.tv_sec, sec);
    assert_int_equal(tv.tv_usec, usec);
}

static void
test_pvm_hostsync_timevals_are_normalised(void **state)
{
    (void)state;
    /* pvm_hostsync(3PVM)'s table (its -1.1 s row says -2,999000: -2,900000 is -1.1 s). */
    split_is(3250000, 3, 250000);
    split_is(0, 0, 0);
    split_is(-1, -1, 999999);
    split_is(-1000000, -1, 0);
    split_is(-1100000, -2, 900000);
    split_is(999999, 0, 999999);
}

static size_t
put_clock(unsigned char *p, int64_t sec, uint32_t usec)
{
    uint64_t s = (uint64_t)sec;
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(s >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        p[8 + i] = (unsigned char)(usec >> (24 - 8 * i));
    return 12;
}

static void
test_pvm_hostsync_delta_is_remote_minus_our_midpoint(void **state)
{
    struct timeval before, clk, delta;
    (void)state;
    gettimeofday(&before, NULL);
    /* A host whose clock is 100 s ahead of ours. */
    fake_reply_len = put_clock(fake_reply_body, before.tv_sec + 100, (uint32_t)before.tv_usec);
    assert_int_equal(pvm_hostsync(0x80000, &clk, &delta), PvmOk);
    assert_int_equal(fake_req_type, WIRE_T_REQ_CLOCK);
    assert_int_equal(fake_req_len, 4);
    assert_int_equal(clk.tv_sec, before.tv_sec + 100);
    assert_int_equal(clk.tv_usec, before.tv_usec);
    /* delta: 100 s minus the little time since "before". */
    assert_true(delta.tv_sec == 99 || delta.tv_sec == 100);
    /* Either may be NULL. */
    assert_int_equal(pvm_hostsync(0x80000, NULL, NULL), PvmOk);
    /* One behind: negative seconds, microseconds still positive. */
    fake_reply_len = put_clock(fake_reply_body, before.tv_sec - 100, (uint32_t)before.tv_usec);
    assert_int_equal(pvm_hostsync(0x80000, NULL, &delta), PvmOk);
    assert_true(delta.tv_sec == -101 || delta.tv_sec == -100);
    assert_true(delta.tv_usec >= 0 && delta.tv_usec <= 999999);
}

static void
test_pvm_hostsync_errors_are_pvms(void **state)
{
    struct timeval clk;
    (void)state;
    fake_reply_status = WIRE_ENOHOST;
    assert_int_equal(pvm_hostsync(0x7ff40000, &clk, NULL), PvmNoHost);
    assert_int_equal(pvm_errno, PvmNoHost);
    fake_reply_status = WIRE_EHOSTFAIL;
    assert_int_equal(pvm_hostsync(0x80000, &clk, NULL), PvmHostFail);
    fake_reply_status = WIRE_ENOVM;
    assert_int_equal(pvm_hostsync(0x80000, &clk, NULL), PvmSysErr);
    /* A malformed answer: microseconds out of range, or short. */
    fake_reply_status = 0;
    fake_reply_len = put_clock(fake_reply_body, 1, 1000000);
    assert_true(pvm_hostsync(0x80000, &clk, NULL) < 0);
    fake_reply_len = 8;
    assert_true(pvm_hostsync(0x80000, &clk, NULL) < 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_hostsync_timevals_are_normalised),
        cmocka_unit_test_setup_teardown(test_pvm_hostsync_delta_is_remote_minus_our_midpoint,
                                        fake_up, fake_down),
        cmocka_unit_test_setup_teardown(test_pvm_hostsync_errors_are_pvms, fake_up, fake_down),
    };
    return cmocka_run_group_tests_name("pvm_hostsync", tests, NULL, NULL);
}
