/*
 * test_pvm_env.c - lib/pvm/pvm_env.c (PVM_EXPORT's list: pvm_export,
 * pvm_unexport), lib/pvm/pvm_noreset.c (pvm_getnoresets against a fake
 * daemon's MBOX_LIST reply) and lib/pvm/pvm_tmask.c (the trace masks).
 */
#include "test_pvm_fakevm.h"

#include "../../lib/pvm/pvm_env.c"
#include "../../lib/pvm/pvm_noreset.c"
#include "../../lib/pvm/pvm_tmask.c"

static char *
add(const char *list, const char *name)
{
    char *s = NULL;
    assert_int_equal(pvm__list_add(list, name, &s), 0);
    return s;
}

static char *
del(const char *list, const char *name)
{
    char *s = NULL;
    assert_int_equal(pvm__list_del(list, name, &s), 0);
    return s;
}

#define ASSERT_LIST(expr, want)                                               \
    do {                                                                      \
        char *got_ = (expr);                                                  \
        assert_non_null(got_);                                                \
        assert_string_equal(got_, want);                                      \
        free(got_);                                                           \
    } while (0)

static void
test_pvm_env_list_add(void **state)
{
    char *s;
    (void)state;
    ASSERT_LIST(add(NULL, "DISPLAY"), "DISPLAY");
    ASSERT_LIST(add("", "DISPLAY"), "DISPLAY");
    ASSERT_LIST(add("SHELL:HOME", "DISPLAY"), "SHELL:HOME:DISPLAY");
    assert_null(add("SHELL:HOME", "HOME"));
    assert_null(add("SHELL:HOME", "SHELL"));
    ASSERT_LIST(add("SHELL:HOMEDIR", "HOME"), "SHELL:HOMEDIR:HOME");
    assert_int_equal(pvm__list_add("A", "B:C", &s), -EINVAL);
    assert_int_equal(pvm__list_add("A", "B=C", &s), -EINVAL);
}

static void
test_pvm_env_list_del(void **state)
{
    (void)state;
    /* The man page's example: SHELL:HOME, +DISPLAY, +TERM, -HOME. */
    ASSERT_LIST(del("SHELL:HOME:DISPLAY:TERM", "HOME"), "SHELL:DISPLAY:TERM");
    ASSERT_LIST(del("SHELL:HOME", "SHELL"), "HOME");
    ASSERT_LIST(del("SHELL:HOME", "HOME"), "SHELL");
    ASSERT_LIST(del("HOME", "HOME"), "");
    ASSERT_LIST(del("A:B:A", "A"), "B");
    assert_null(del("SHELL:HOMEDIR", "HOME"));
    assert_null(del(NULL, "HOME"));
    assert_null(del("A", ""));
}

static void
test_pvm_env_export_edits_the_environment(void **state)
{
    (void)state;
    unsetenv("PVM_EXPORT");
    assert_int_equal(pvm_export("SHELL"), PvmOk);
    assert_int_equal(pvm_export("HOME"), PvmOk);
    assert_string_equal(getenv("PVM_EXPORT"), "SHELL:HOME");
    assert_int_equal(pvm_export("DISPLAY"), PvmOk);
    assert_int_equal(pvm_export("TERM"), PvmOk);
    assert_int_equal(pvm_export("TERM"), PvmOk);
    assert_int_equal(pvm_unexport("HOME"), PvmOk);
    assert_int_equal(pvm_unexport("NOTLISTED"), PvmOk);
    assert_string_equal(getenv("PVM_EXPORT"), "SHELL:DISPLAY:TERM");
    assert_int_equal(pvm_export(""), PvmOk);
    assert_int_equal(pvm_export(NULL), PvmBadParam);
    assert_int_equal(pvm_errno, PvmBadParam);
    unsetenv("PVM_EXPORT");
}

static size_t
put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return 4;
}

static size_t
put_class(unsigned char *p, const char *name, const uint32_t *owners, uint32_t n)
{
    size_t o = put_u32(p, (uint32_t)strlen(name));
    memcpy(p + o, name, strlen(name));
    o += strlen(name);
    o += put_u32(p + o, n);
    for (uint32_t i = 0; i < n; i++) {
        o += put_u32(p + o, i);                 /* index */
        o += put_u32(p + o, owners[i]);
        o += put_u32(p + o, PvmMboxMultiInstance);
    }
    return o;
}

static void
test_pvm_env_getnoresets_lists_the_owners(void **state)
{
    static const uint32_t owners[] = { FAKE_T2, 0, FAKE_T3 };
    static const uint32_t other[] = { FAKE_ME };
    int *tids = NULL, n = -1;
    (void)state;
    size_t o = put_u32(fake_reply_body, 2);
    o += put_class(fake_reply_body + o, "not" PVMNORESETCLASS, other, 1);
    o += put_class(fake_reply_body + o, PVMNORESETCLASS, owners, 3);
    assert_true(o <= sizeof(fake_reply_body));
    fake_reply_len = o;
    assert_int_equal(pvm_getnoresets(&tids, &n), PvmOk);
    assert_int_equal(fake_req_type, WIRE_T_MBOX_LIST);
    assert_int_equal(n, 2);
    assert_int_equal(tids[0], FAKE_T2);
    assert_int_equal(tids[1], FAKE_T3);
    /* None. */
    fake_reply_len = put_u32(fake_reply_body, 0);
    assert_int_equal(pvm_getnoresets(&tids, &n), PvmOk);
    assert_int_equal(n, 0);
    /* A short reply is the daemon's fault, reported. */
    fake_reply_len = put_u32(fake_reply_body, 1);
    assert_true(pvm_getnoresets(&tids, &n) < 0);
    /* No daemon. */
    fake_reply_status = WIRE_ENOVM;
    assert_int_equal(pvm_getnoresets(&tids, &n), PvmSysErr);
}

static void
test_pvm_env_tmask_defaults_and_inheritance(void **state)
{
    char m[PVM__TMASK_LEN], c[PVM__TMASK_LEN];
    (void)state;
    unsetenv("PVMTMASK");
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    assert_int_equal(pvm_gettmask(PvmTaskSelf, m), PvmOk);
    assert_int_equal(strlen(m), PVM__TMASK_LEN - 1);
    assert_int_equal(strspn(m, "@"), PVM__TMASK_LEN - 1);
    /* TEV_MASK_SET(m, 5): byte 1, bit 1. */
    m[1] |= 1 << 1;
    assert_int_equal(pvm_settmask(PvmTaskChild, m), PvmOk);
    assert_int_equal(pvm_gettmask(PvmTaskChild, c), PvmOk);
    assert_string_equal(c, m);
    assert_string_equal(pvm__tmask_child(), m);
    assert_int_equal(pvm_gettmask(PvmTaskSelf, c), PvmOk);
    assert_int_equal(c[1], '@');
    assert_int_equal(pvm_settmask(2, m), PvmBadParam);
    assert_int_equal(pvm_gettmask(-1, m), PvmBadParam);
    assert_int_equal(pvm_gettmask(PvmTaskSelf, NULL), PvmBadParam);
    /* A spawned task starts from PVMTMASK, and passes it on. */
    setenv("PVMTMASK", "@B@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@O", 1);
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    assert_int_equal(pvm_gettmask(PvmTaskSelf, c), PvmOk);
    assert_string_equal(c, "@B@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@O");
    assert_string_equal(pvm__tmask_child(), c);
    /* One of another length is ignored. */
    setenv("PVMTMASK", "@B", 1);
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    assert_int_equal(pvm_gettmask(PvmTaskSelf, c), PvmOk);
    assert_int_equal(strspn(c, "@"), PVM__TMASK_LEN - 1);
    unsetenv("PVMTMASK");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_env_list_add),
        cmocka_unit_test(test_pvm_env_list_del),
        cmocka_unit_test_setup_teardown(test_pvm_env_export_edits_the_environment, fake_up,
                                        fake_down),
        cmocka_unit_test_setup_teardown(test_pvm_env_getnoresets_lists_the_owners, fake_up,
                                        fake_down),
        cmocka_unit_test_setup_teardown(test_pvm_env_tmask_defaults_and_inheritance, fake_up,
                                        fake_down),
    };
    return cmocka_run_group_tests_name("pvm_env", tests, NULL, NULL);
}
