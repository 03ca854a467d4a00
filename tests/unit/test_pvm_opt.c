/*
 * test_pvm_opt.c - lib/pvm/pvm_opt.c: every option's default, the checks on
 * new values, the old value returned, PvmAutoErr driving error reports,
 * and one long script of pvm_setopt/pvm_getopt calls run against PVM
 * 3.4.6's own library too (test_pvm_real.h), whose results must be ours
 * but for the documented differences (PvmPollType and PvmPollTime).
 */
#include "test_pvm_fakevm.h"

#include "test_pvm_real.h"

/* Not enrolled and no daemon, as PVM's library is in the comparison. */
static int
plain_up(void **state)
{
    (void)state;
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    pvm_errno = 0;
    return 0;
}

static int
plain_down(void **state)
{
    (void)state;
    pvm__ctx_reset();
    return 0;
}

static void
test_pvm_opt_defaults_are_pvms(void **state)
{
    (void)state;
    pvm__ctx_reset();
    assert_int_equal(pvm_getopt(PvmRoute), PvmAllowDirect);
    assert_int_equal(pvm_getopt(PvmDebugMask), 0);
    assert_int_equal(pvm_getopt(PvmAutoErr), 1);
    assert_int_equal(pvm_getopt(PvmOutputTid), 0);
    assert_int_equal(pvm_getopt(PvmOutputCode), 0);
    assert_int_equal(pvm_getopt(PvmTraceTid), 0);
    assert_int_equal(pvm_getopt(PvmTraceOptions), 0);
    assert_int_equal(pvm_getopt(PvmFragSize), 4080);
    assert_int_equal(pvm_getopt(PvmResvTids), 0);
    assert_int_equal(pvm_getopt(PvmSelfOutputTid), 0);
    assert_int_equal(pvm_getopt(PvmShowTids), 1);
    assert_int_equal(pvm_getopt(PvmPollType), PvmPollSleep);
    assert_int_equal(pvm_getopt(PvmPollTime), 0);
    assert_int_equal(pvm_getopt(PvmOutputContext), 0);
    assert_int_equal(pvm_getopt(PvmNoReset), 0);
    pvm__ctx.autoerr = 0;
}

static void
test_pvm_opt_unknown_options_are_bad_params(void **state)
{
    static const int bad[] = { 0, -1, 26, 27, 31, 32, 1000, -2147483647 - 1 };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pvm_errno = 0;
        assert_int_equal(pvm_getopt(bad[i]), PvmBadParam);
        assert_int_equal(pvm_errno, PvmBadParam);
        assert_int_equal(pvm_setopt(bad[i], 1), PvmBadParam);
    }
}

static void
test_pvm_opt_setopt_returns_the_old_value(void **state)
{
    (void)state;
    assert_int_equal(pvm_setopt(PvmRoute, PvmRouteDirect), PvmAllowDirect);
    assert_int_equal(pvm_setopt(PvmRoute, PvmDontRoute), PvmRouteDirect);
    assert_int_equal(pvm_getopt(PvmRoute), PvmDontRoute);
    assert_int_equal(pvm_setopt(PvmFragSize, 65536), 4080);
    assert_int_equal(pvm_getopt(PvmFragSize), 65536);
    assert_int_equal(pvm_setopt(PvmShowTids, 0), 1);
    assert_int_equal(pvm_setopt(PvmDebugMask, 0x7f), 0);
    assert_int_equal(pvm_setopt(PvmDebugMask, 0), 0x7f);
    assert_int_equal(pvm_setopt(PvmTraceBuffer, 4096), 0);
    assert_int_equal(pvm_setopt(PvmSelfTraceBuffer, 512), 0);
    assert_int_equal(pvm_getopt(PvmSelfTraceBuffer), 512);
    assert_int_equal(pvm__opt(PvmFragSize), 65536);
    assert_int_equal(pvm__opt(99), 0);
}

static void
test_pvm_opt_values_are_checked(void **state)
{
    (void)state;
    assert_int_equal(pvm_setopt(PvmRoute, 0), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmRoute, 4), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmFragSize, 51), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmFragSize, 1048577), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmFragSize, -1), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmFragSize, 52), 4080);
    assert_int_equal(pvm_setopt(PvmFragSize, 1048576), 52);
    assert_int_equal(pvm_setopt(PvmTraceOptions, 0), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmTraceOptions, PvmTraceCount + 1), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmTraceOptions, PvmTraceTime), 0);
    assert_int_equal(pvm_setopt(PvmSelfTraceOptions, 9), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmPollType, 0), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmPollType, PvmPollConstant), PvmPollSleep);
    assert_int_equal(pvm_setopt(PvmPollTime, -1), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmPollTime, 1000), 0);
    assert_int_equal(pvm_getopt(PvmPollTime), 1000);
    /* Not settable in PVM either. */
    assert_int_equal(pvm_setopt(PvmSelfOutputContext, 1), PvmNotImpl);
    assert_int_equal(pvm_setopt(PvmSelfTraceContext, 1), PvmNotImpl);
    /* The values did not change on the refusals. */
    assert_int_equal(pvm_getopt(PvmRoute), PvmAllowDirect);
    assert_int_equal(pvm_getopt(PvmFragSize), 1048576);
    assert_int_equal(pvm_getopt(PvmTraceOptions), PvmTraceTime);
}

static void
test_pvm_opt_children_output_goes_to_us_nobody_or_our_own(void **state)
{
    (void)state;
    pvm__ctx.mytid = FAKE_ME;
    assert_int_equal(pvm_setopt(PvmOutputTid, FAKE_T2), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmOutputTid, FAKE_ME), 0);
    assert_int_equal(pvm_setopt(PvmOutputCode, 77), 0);
    assert_int_equal(pvm_setopt(PvmOutputContext, 5), 0);
    assert_int_equal(pvm_setopt(PvmOutputTid, 0), FAKE_ME);
    assert_int_equal(pvm_setopt(PvmTraceTid, FAKE_T3), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmTraceTid, FAKE_ME), 0);
    assert_int_equal(pvm_setopt(PvmTraceCode, 3), 0);
    assert_int_equal(pvm_setopt(PvmTraceContext, 4), 0);
    assert_int_equal(pvm_getopt(PvmTraceCode), 3);
}

static void
test_pvm_opt_self_output_sets_the_childrens_too(void **state)
{
    int sv[2];

    (void)state;
    /* With no destination PVM ignores the tag and returns 0. */
    assert_int_equal(pvm_setopt(PvmSelfOutputCode, 9), 0);
    assert_int_equal(pvm_getopt(PvmSelfOutputCode), 0);
    /* A destination means the daemon must know: here there is none. */
    assert_int_equal(pvm_setopt(PvmSelfOutputTid, FAKE_T2), PvmSysErr);
    assert_int_equal(pvm_getopt(PvmSelfOutputTid), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pvm__ctx.fd = sv[0];
    pvm__ctx.mytid = FAKE_ME;
    assert_int_equal(pvm_setopt(PvmSelfOutputTid, FAKE_T2), 0);
    assert_int_equal(pvm_setopt(PvmSelfOutputCode, 9), 0);
    assert_int_equal(pvm_getopt(PvmOutputTid), FAKE_T2);
    assert_int_equal(pvm_getopt(PvmOutputCode), 9);
    /* Now the children's may also be our own destination, with our tag. */
    assert_int_equal(pvm_setopt(PvmOutputTid, 0), FAKE_T2);
    assert_int_equal(pvm_setopt(PvmOutputTid, FAKE_T2), 0);
    assert_int_equal(pvm_setopt(PvmOutputCode, 10), PvmBadParam);
    assert_int_equal(pvm_setopt(PvmSelfTraceTid, FAKE_T3), 0);
    assert_int_equal(pvm_setopt(PvmSelfTraceCode, 4), 0);
    assert_int_equal(pvm_getopt(PvmTraceTid), FAKE_T3);
    assert_int_equal(pvm_getopt(PvmTraceCode), 4);
    assert_int_equal(pvm_setopt(PvmSelfTraceTid, 0), FAKE_T3);
    assert_int_equal(pvm_getopt(PvmTraceTid), 0);
    close(sv[0]);
    close(sv[1]);
    pvm__ctx.fd = -1;
}

static void
test_pvm_opt_noreset_needs_a_task(void **state)
{
    (void)state;
    assert_int_equal(pvm_setopt(PvmNoReset, 1), PvmBadParam);
    assert_int_equal(pvm_getopt(PvmNoReset), 0);
}

/* An enrolled task: the option puts its tid into PVMNORESETCLASS, once,
 * and clearing it deletes that entry (tests/unit/test_pvm_env.c reads it). */
static void
test_pvm_opt_noreset_puts_a_mailbox_entry(void **state)
{
    (void)state;
    fake_set_reply_u32(0, 3);   /* the entry's index */
    assert_int_equal(pvm_setopt(PvmNoReset, 1), 0);
    assert_int_equal(fake_req_type, WIRE_T_MBOX_PUT);
    assert_int_equal(pvm_getopt(PvmNoReset), 1);
    int reqs = fake_reqs;
    assert_int_equal(pvm_setopt(PvmNoReset, 1), 1);
    assert_int_equal(fake_reqs, reqs);
    fake_reply_len = 0;
    assert_int_equal(pvm_setopt(PvmNoReset, 0), 1);
    assert_int_equal(fake_req_type, WIRE_T_MBOX_DEL);
    assert_int_equal(pvm__ctx.noreset_index, 0);
    /* After pvm_exit and a new enrollment the old entry is gone: put anew. */
    fake_set_reply_u32(0, 5);
    assert_int_equal(pvm_setopt(PvmNoReset, 1), 0);
    pvm__ctx.mytid = FAKE_T2;
    assert_int_equal(pvm_setopt(PvmNoReset, 0), 1);
    reqs = fake_reqs;
    fake_set_reply_u32(0, 6);
    assert_int_equal(pvm_setopt(PvmNoReset, 1), 0);
    assert_int_equal(fake_reqs, reqs + 1);
    assert_int_equal(pvm__ctx.noreset_index, 7);
    fake_reply_len = 0;
    assert_int_equal(pvm_setopt(PvmNoReset, 0), 1);
    /* A failed put leaves the option as it was. */
    fake_reply_status = WIRE_ENOVM;
    assert_true(pvm_setopt(PvmNoReset, 1) < 0);
    assert_int_equal(pvm_getopt(PvmNoReset), 0);
}

static void
test_pvm_opt_autoerr_drives_the_reports(void **state)
{
    char out[512] = { 0 };
    int fds[2], saved;
    ssize_t n;

    (void)state;
    assert_int_equal(pvm_setopt(PvmAutoErr, 1), 0);
    assert_int_equal(pvm__ctx.autoerr, 1);
    assert_int_equal(pipe(fds), 0);
    fflush(stderr);
    saved = dup(2);
    dup2(fds[1], 2);
    pvm_getopt(-7);
    assert_int_equal(pvm_setopt(PvmAutoErr, 0), 1);
    pvm_getopt(-8);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    assert_true(n > 0);
    assert_non_null(strstr(out, "pvm_getopt(): Bad parameter"));
    /* Once, for the first call only. */
    assert_null(strstr(strstr(out, "Bad parameter") + 1, "Bad parameter"));
}

/* ---- the same script against PVM 3.4.6 ---- */

struct opt_op {
    int set;                    /* 1 setopt, 0 getopt */
    int what;
    int val;
};

/* Everything but PvmPollType/PvmPollTime, where we differ on purpose. */
static const struct opt_op script[] = {
    { 1, PvmAutoErr, 0 },
    { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 }, { 0, 4, 0 }, { 0, 5, 0 },
    { 0, 6, 0 }, { 0, 7, 0 }, { 0, 8, 0 }, { 0, 9, 0 }, { 0, 10, 0 }, { 0, 11, 0 },
    { 0, 12, 0 }, { 0, 13, 0 }, { 0, 14, 0 }, { 0, 15, 0 }, { 0, 16, 0 }, { 0, 17, 0 },
    { 0, 18, 0 }, { 0, 21, 0 }, { 0, 22, 0 }, { 0, 23, 0 }, { 0, 24, 0 }, { 0, 25, 0 },
    { 0, 26, 0 }, { 0, 27, 0 }, { 0, -1, 0 },
    { 1, PvmRoute, 0 }, { 1, PvmRoute, 4 }, { 1, PvmRoute, PvmRouteDirect },
    { 1, PvmRoute, PvmDontRoute }, { 1, PvmRoute, PvmAllowDirect },
    { 1, PvmDebugMask, 5 }, { 1, PvmDebugMask, 0 },
    { 1, PvmOutputTid, 5 }, { 1, PvmOutputTid, -1 }, { 1, PvmOutputTid, 0 },
    { 1, PvmOutputCode, 7 }, { 1, PvmOutputContext, 9 }, { 1, PvmOutputCode, 8 },
    { 1, PvmTraceTid, 5 }, { 1, PvmTraceCode, 3 }, { 1, PvmTraceContext, 4 },
    { 1, PvmTraceBuffer, 100 }, { 1, PvmTraceOptions, 0 }, { 1, PvmTraceOptions, 4 },
    { 1, PvmTraceOptions, 2 }, { 1, PvmTraceOptions, 3 },
    { 1, PvmFragSize, 51 }, { 1, PvmFragSize, 52 }, { 1, PvmFragSize, 1048576 },
    { 1, PvmFragSize, 1048577 }, { 1, PvmFragSize, 0 }, { 1, PvmFragSize, -1 },
    { 1, PvmFragSize, 4080 },
    { 1, PvmResvTids, 1 }, { 1, PvmResvTids, 0 },
    { 1, PvmSelfOutputTid, 0 }, { 1, PvmSelfOutputCode, 3 }, { 1, PvmSelfOutputContext, 1 },
    { 1, PvmSelfOutputTid, 5 },
    { 1, PvmSelfTraceTid, 0 }, { 1, PvmSelfTraceCode, 2 }, { 1, PvmSelfTraceContext, 1 },
    { 1, PvmSelfTraceTid, 6 },
    { 1, PvmSelfTraceBuffer, 64 }, { 1, PvmSelfTraceOptions, 9 },
    { 1, PvmSelfTraceOptions, 1 },
    { 1, PvmShowTids, 0 }, { 1, PvmShowTids, 5 },
    { 1, PvmNoReset, 1 },
    { 1, 0, 1 }, { 1, 26, 1 }, { 1, -1, 1 }, { 1, 99, 1 },
    { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 }, { 0, 4, 0 }, { 0, 5, 0 }, { 0, 6, 0 },
    { 0, 7, 0 }, { 0, 8, 0 }, { 0, 9, 0 }, { 0, 10, 0 }, { 0, 11, 0 }, { 0, 12, 0 },
    { 0, 13, 0 }, { 0, 14, 0 }, { 0, 15, 0 }, { 0, 16, 0 }, { 0, 17, 0 }, { 0, 18, 0 },
    { 0, 21, 0 }, { 0, 22, 0 }, { 0, 23, 0 }, { 0, 24, 0 }, { 0, 25, 0 },
};
#define NSCRIPT (sizeof script / sizeof script[0])

static void
run_script(int (*setopt)(int, int), int (*getopt)(int), int *res)
{
    size_t i;

    for (i = 0; i < NSCRIPT; i++)
        res[i] = script[i].set ? setopt(script[i].what, script[i].val) : getopt(script[i].what);
}

static void
real_script(void *lib, int out, void *arg)
{
    int res[NSCRIPT];

    (void)arg;
    run_script((int (*)(int, int))real_pvm_sym(lib, "pvm_setopt"),
               (int (*)(int))real_pvm_sym(lib, "pvm_getopt"), res);
    real_pvm_write(out, res, sizeof res);
}

static void
test_pvm_opt_script_gives_what_pvm_gives(void **state)
{
    int ours[NSCRIPT], real[NSCRIPT];
    size_t i;
    ssize_t n;

    (void)state;
    if (real_pvm_lib() == NULL) {
        skip();
        return;
    }
    /* As a fresh program starts: the script's first step turns reports off. */
    pvm__ctx.autoerr = 1;
    run_script(pvm_setopt, pvm_getopt, ours);
    n = real_pvm_run(real_script, NULL, 0, real, sizeof real);
    assert_int_equal(n, (ssize_t)sizeof real);
    for (i = 0; i < NSCRIPT; i++) {
        if (ours[i] != real[i])
            fprintf(stderr, "script step %zu: %s(%d, %d): ours %d, PVM's %d\n", i,
                    script[i].set ? "setopt" : "getopt", script[i].what, script[i].val,
                    ours[i], real[i]);
    }
    assert_memory_equal(ours, real, sizeof ours);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, plain_up, plain_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_opt_defaults_are_pvms),
        T(test_pvm_opt_unknown_options_are_bad_params),
        T(test_pvm_opt_setopt_returns_the_old_value),
        T(test_pvm_opt_values_are_checked),
        T(test_pvm_opt_children_output_goes_to_us_nobody_or_our_own),
        T(test_pvm_opt_self_output_sets_the_childrens_too),
        T(test_pvm_opt_noreset_needs_a_task),
        cmocka_unit_test_setup_teardown(test_pvm_opt_noreset_puts_a_mailbox_entry, fake_up,
                                        fake_down),
        T(test_pvm_opt_autoerr_drives_the_reports),
        T(test_pvm_opt_script_gives_what_pvm_gives),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_opt", tests, NULL, NULL);
}
