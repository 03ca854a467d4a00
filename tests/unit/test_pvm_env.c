/*
 * test_pvm_env.c - lib/pvm/pvm_env.c (PVM_EXPORT's list: pvm_export,
 * pvm_unexport), lib/pvm/pvm_noreset.c (pvm_getnoresets against a fake
 * daemon's MBOX_LIST reply) and lib/pvm/pvm_tmask.c (the trace masks).
 */
#include "test_pvm_fakevm.h"

#include "test_pvm_real.h"

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

/*
 * One script of pvm_export/pvm_unexport and trace mask calls, run on ours
 * and on PVM 3.4.6's library (test_pvm_real.h): what PVM_EXPORT becomes
 * after each step, and the codes, must be the same.
 */
struct script_fns {
    int (*exp)(char *);
    int (*unexp)(char *);
    int (*gettm)(int, char *);
    int (*settm)(int, char *);
};

static void
run_script(const struct script_fns *f, char *out, size_t cap)
{
    static const struct {
        int add;
        char *name;
    } steps[] = {
        { 1, "DISPLAY" }, { 1, "TERM" }, { 0, "HOME" }, { 1, "TERM" }, { 0, "SHELL" },
        { 1, "SHELL" }, { 0, "NOTTHERE" }, { 0, "DISPLAY" }, { 0, "TERM" }, { 0, "SHELL" },
        { 1, "A" },
    };
    char m[PVM__TMASK_LEN], c[PVM__TMASK_LEN];
    size_t o = 0;
    setenv("PVM_EXPORT", "SHELL:HOME", 1);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        int rc = steps[i].add ? f->exp(steps[i].name) : f->unexp(steps[i].name);
        const char *e = getenv("PVM_EXPORT");
        o += (size_t)snprintf(out + o, cap - o, "%d [%s]\n", rc, e ? e : "(unset)");
    }
    unsetenv("PVM_EXPORT");
    /* The codes only: PVM fills its masks in when it enrolls, which it
     * cannot here (test_pvm_env_tmask_defaults_and_inheritance has ours). */
    memset(m, '@', sizeof(m) - 1);
    m[sizeof(m) - 1] = '\0';
    int r1 = f->gettm(PvmTaskSelf, c);
    int r2 = f->settm(PvmTaskChild, m);
    int r3 = f->gettm(PvmTaskChild, c);
    o += (size_t)snprintf(out + o, cap - o, "%d %d %d %d %d %d\n", r1, r2, r3,
                          f->settm(2, m), f->gettm(-1, c), f->settm(PvmTaskSelf, m));
}

static void
real_script(void *lib, int out, void *arg)
{
    char buf[2048];
    struct script_fns f = {
        (int (*)(char *))real_pvm_sym(lib, "pvm_export"),
        (int (*)(char *))real_pvm_sym(lib, "pvm_unexport"),
        (int (*)(int, char *))real_pvm_sym(lib, "pvm_gettmask"),
        (int (*)(int, char *))real_pvm_sym(lib, "pvm_settmask"),
    };
    (void)arg;
    ((int (*)(int, int))real_pvm_sym(lib, "pvm_setopt"))(PvmAutoErr, 0);
    run_script(&f, buf, sizeof(buf));
    real_pvm_write(out, buf, strlen(buf));
}

static void
test_pvm_env_script_gives_what_pvm_gives(void **state)
{
    char ours[2048], real[2048];
    struct script_fns f = { pvm_export, pvm_unexport, pvm_gettmask, pvm_settmask };
    (void)state;
    if (real_pvm_lib() == NULL) {
        skip();
        return;
    }
    unsetenv("PVMTMASK");
    run_script(&f, ours, sizeof(ours));
    ssize_t n = real_pvm_run(real_script, NULL, 0, real, sizeof(real) - 1);
    assert_true(n > 0);
    real[n] = '\0';
    if (strcmp(ours, real) != 0)
        fprintf(stderr, "ours:\n%s\nPVM's:\n%s\n", ours, real);
    assert_string_equal(ours, real);
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
        cmocka_unit_test_setup_teardown(test_pvm_env_script_gives_what_pvm_gives, fake_up,
                                        fake_down),
    };
    return cmocka_run_group_tests_name("pvm_env", tests, NULL, NULL);
}
