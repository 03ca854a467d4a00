/*
 * test_pvm_err.c - lib/pvm/pvm_err.c: the table from our codes to PVM's (every
 * entry, every WIRE_E* code, the PVM__E* range, unknown codes), PVM's
 * texts, pvm_perror and pvm_strerror, and PvmAutoErr 0 to 3 through a
 * failing API call.  Texts and report lines are compared with PVM 3.4.6's
 * own libpvm3 when it is installed.
 *
 * The library files are included (h2o's mirror style), so the test sees
 * the context and the internal functions.
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

#include <signal.h>
#include <sys/wait.h>

#include "test_pvm_real.h"

static int
reset(void **state)
{
    (void)state;
    pvm__ctx_reset();
    pvm_errno = 0;
    return 0;
}

/* ---- stderr capture ---- */

static int saved_stderr = -1;
static FILE *capture_file;

static void
capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    assert_non_null(capture_file);
    saved_stderr = dup(2);
    assert_true(saved_stderr >= 0);
    assert_true(dup2(fileno(capture_file), 2) >= 0);
}

/* What was written to stderr since capture_begin, NUL-terminated. */
static void
capture_end(char *out, size_t cap)
{
    size_t n;

    fflush(stderr);
    assert_true(dup2(saved_stderr, 2) >= 0);
    close(saved_stderr);
    rewind(capture_file);
    n = fread(out, 1, cap - 1, capture_file);
    out[n] = '\0';
    fclose(capture_file);
}

/* ---- the table ---- */

static void
test_pvm_err_maps_errno_codes(void **state)
{
    static const int map[][2] = {
        { -ENOMEM, PvmNoMem },      { -EINVAL, PvmBadParam },    { -EMSGSIZE, PvmOverflow },
        { -ERANGE, PvmOverflow },   { -ENODATA, PvmNoData },     { -EBADMSG, PvmBadMsg },
        { -EPROTO, PvmBadMsg },     { -ENOENT, PvmNoFile },      { -EACCES, PvmDenied },
        { -EPERM, PvmDenied },      { -EEXIST, PvmExists },      { -ESRCH, PvmNoTask },
        { -ENOTSUP, PvmNotImpl },   { -ENOSYS, PvmNotImpl },     { -EALREADY, PvmAlready },
        { -EAGAIN, PvmOutOfRes },   { -EMFILE, PvmOutOfRes },    { -ECONNREFUSED, PvmSysErr },
        { -ECONNRESET, PvmSysErr }, { -EPIPE, PvmSysErr },       { -ETIMEDOUT, PvmSysErr },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        assert_int_equal(pvm__errcode(map[i][0]), map[i][1]);
}

static void
test_pvm_err_maps_wire_codes(void **state)
{
    static const int map[][2] = {
        { WIRE_ENOVM, PvmSysErr },        { WIRE_EHOSTFAIL, PvmHostFail },
        { WIRE_ENOHOST, PvmNoHost },      { WIRE_EDUPHOST, PvmDupHost },
        { WIRE_ECANTSTART, PvmCantStart }, { WIRE_EVERSION, PvmBadVersion },
        { WIRE_EFRAME, PvmBadMsg },       { WIRE_EBUSY, PvmAlready },
        { WIRE_EMASTER, PvmDenied },      { WIRE_EHALTED, PvmSysErr },
        { WIRE_ETLS, PvmSysErr },         { WIRE_EBADCERT, PvmSysErr },
    };
    size_t i;
    int code;

    (void)state;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        assert_int_equal(pvm__errcode(map[i][0]), map[i][1]);
    /* Every project code has an entry with a real PVM code. */
#define CHECK_WIRE(name, val, msg)                                            \
    code = pvm__errcode(val);                                                 \
    assert_true(code < 0 && code > -37);                                      \
    assert_string_not_equal(pvm__errtext(code), "Unknown Error");
    WIRE_ERRNO_MAP(CHECK_WIRE)
#undef CHECK_WIRE
}

static void
test_pvm_err_pvm_only_codes_map_back(void **state)
{
    int c;

    (void)state;
    for (c = -1; c > -37; c--)
        assert_int_equal(pvm__errcode(PVM__ECODE(c)), c);
    assert_int_equal(pvm__errcode(PVM__ENOBUF), PvmNoBuf);
    assert_int_equal(pvm__errcode(PVM__ENOSUCHBUF), PvmNoSuchBuf);
    assert_int_equal(pvm__errcode(PVM__EMISMATCH), PvmMismatch);
    /* The range never overlaps errno or the wire codes. */
    assert_true(PVM__ECODE(-36) > WIRE_ERR_MIN - 200 && PVM__ECODE(-1) < WIRE_ERR_MIN);
}

static void
test_pvm_err_unknown_codes_are_sys_err_and_results_pass(void **state)
{
    (void)state;
    assert_int_equal(pvm__errcode(-9999), PvmSysErr);
    assert_int_equal(pvm__errcode(-EXDEV), PvmSysErr);
    assert_int_equal(pvm__errcode(PVM__EBASE), PvmSysErr);
    assert_int_equal(pvm__errcode(0), 0);
    assert_int_equal(pvm__errcode(7), 7);
    assert_int_equal(pvm__err(5, "pvm_x"), 5);
    assert_int_equal(pvm_errno, 0);
}

static void
test_pvm_err_texts_are_pvms(void **state)
{
    (void)state;
    assert_int_equal(pvm_nerr, 37);
    assert_string_equal(pvm__errtext(PvmOk), "Error 0");
    assert_string_equal(pvm__errtext(PvmBadParam), "Bad parameter");
    assert_string_equal(pvm__errtext(PvmNoData), "End of buffer");
    assert_string_equal(pvm__errtext(PvmNoMem), "Malloc failed");
    assert_string_equal(pvm__errtext(PvmSysErr), "Can't contact local daemon");
    assert_string_equal(pvm__errtext(PvmNoBuf), "No current buffer");
    assert_string_equal(pvm__errtext(PvmNoSuchBuf), "No such buffer");
    assert_string_equal(pvm__errtext(PvmNotImpl), "Not implemented");
    assert_string_equal(pvm__errtext(PvmNoTask), "No such task");
    assert_string_equal(pvm__errtext(PvmIPLoopback),
                        "Master Host IP Address is Loopback! (See pvm3/Readme)");
    assert_string_equal(pvm__errtext(-37), "Unknown Error");
    assert_string_equal(pvm__errtext(1), "Unknown Error");
    assert_string_equal(pvm__errtext(INT32_MIN), "Unknown Error");
}

/* ---- reporting ---- */

static void
test_pvm_err_autoerr_0_is_quiet_but_sets_pvm_errno(void **state)
{
    char out[256];

    (void)state;
    pvm__ctx.autoerr = 0;
    capture_begin();
    assert_int_equal(pvm_freebuf(-1), PvmBadParam);
    capture_end(out, sizeof out);
    assert_string_equal(out, "");
    assert_int_equal(pvm_errno, PvmBadParam);
    assert_string_equal(pvm_strerror(), "Bad parameter");
}

static void
test_pvm_err_autoerr_1_prints_pvms_line(void **state)
{
    char out[256], want[256];

    (void)state;
    assert_int_equal(pvm__ctx.autoerr, 1);
    capture_begin();
    assert_int_equal(pvm_setsbuf(999), PvmNoSuchBuf);
    capture_end(out, sizeof out);
    snprintf(want, sizeof want, "libpvm [pid%d]: pvm_setsbuf(): No such buffer\n",
             (int)getpid());
    assert_string_equal(out, want);

    pvm__ctx.mytid = 0x40001;
    capture_begin();
    assert_int_equal(pvm_pkint(NULL, 1, 1), PvmNoBuf);
    capture_end(out, sizeof out);
    assert_string_equal(out, "libpvm [t40001]: pvm_pkint(): No current buffer\n");
    assert_int_equal(pvm_errno, PvmNoBuf);
}

static void
test_pvm_err_perror_and_strerror(void **state)
{
    char out[256];

    (void)state;
    pvm__ctx.mytid = 0x80003;
    pvm_errno = PvmNoMem;
    capture_begin();
    assert_int_equal(pvm_perror("step 6"), PvmOk);
    assert_int_equal(pvm_perror(NULL), PvmOk);
    pvm_errno = -99;
    pvm_perror("odd");
    capture_end(out, sizeof out);
    assert_string_equal(out, "libpvm [t80003]: step 6: Malloc failed\n"
                             "libpvm [t80003]: (null): Malloc failed\n"
                             "libpvm [t80003]: odd: Unknown Error\n");
    assert_string_equal(pvm_strerror(), "Unknown Error");
    pvm_errno = PvmDupHost;
    assert_string_equal(pvm_strerror(), "Duplicate host");
}

static int hook_fd = -1;

static void
exit_hook(void)
{
    /* PvmAutoErr 2 must not recurse into reports while leaving. */
    if (pvm__ctx.autoerr == 1 && write(hook_fd, "left", 4) != 4)
        _exit(9);
}

/* Run a failing call with autoerr in a child; its wait status and stderr. */
static int
run_autoerr_child(int autoerr, char *hook_out, size_t cap)
{
    int fds[2], status;
    ssize_t n;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        close(fds[0]);
        dup2(null, 2);
        hook_fd = fds[1];
        pvm__ctx.autoerr = autoerr;
        pvm__ctx.exit_hook = exit_hook;
        pvm_freebuf(-1);
        _exit(0);
    }
    close(fds[1]);
    n = read(fds[0], hook_out, cap - 1);
    hook_out[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void
test_pvm_err_autoerr_2_leaves_and_exits_with_the_code(void **state)
{
    char hook[16];
    int status;

    (void)state;
    status = run_autoerr_child(2, hook, sizeof hook);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), PvmBadParam & 0xff);
    assert_string_equal(hook, "left");
}

static void
test_pvm_err_autoerr_3_aborts(void **state)
{
    char hook[16];
    int status;

    (void)state;
    status = run_autoerr_child(3, hook, sizeof hook);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_string_equal(hook, "");
}

/* ---- against PVM 3.4.6 ---- */

static void
real_errlist(void *lib, int out, void *arg)
{
    char *const *list = real_pvm_sym(lib, "pvm_errlist");
    const int *n = real_pvm_sym(lib, "pvm_nerr");
    int i;

    (void)arg;
    for (i = 0; i < *n; i++)
        dprintf(out, "%s\n", list[i]);
}

static void
test_pvm_err_texts_match_pvm(void **state)
{
    char real[4096], ours[4096];
    ssize_t n;
    size_t at = 0;
    int i;

    (void)state;
    if (real_pvm_lib() == NULL) {
        print_message("PVM's libpvm3 is missing; apt-get install libpvm3 to compare\n");
        skip();
    }
    n = real_pvm_run(real_errlist, NULL, 0, real, sizeof real - 1);
    assert_true(n > 0);
    real[n] = '\0';
    for (i = 0; i < pvm_nerr; i++)
        at += (size_t)snprintf(ours + at, sizeof ours - at, "%s\n", pvm_errlist[i]);
    assert_string_equal(ours, real);
}

/* Failing calls whose reports are compared; PVM prints its own on stderr. */
static void
real_failures(void *lib, int out, void *arg)
{
    int (*freebuf)(int) = real_pvm_sym(lib, "pvm_freebuf");
    int (*setsbuf)(int) = real_pvm_sym(lib, "pvm_setsbuf");
    int (*pkint)(int *, int, int) = real_pvm_sym(lib, "pvm_pkint");
    int (*mkbuf)(int) = real_pvm_sym(lib, "pvm_mkbuf");

    (void)out;
    (void)arg;
    freebuf(-3);
    setsbuf(4242);
    pkint(NULL, 1, 1);
    mkbuf(77);
}

/* Keep the lines that report a pvm_ call, with "[pidN]" made "[pid]". */
static void
report_lines(const char *in, char *out, size_t cap)
{
    size_t at = 0;

    while (*in != '\0') {
        const char *nl = strchr(in, '\n'), *p, *end = nl ? nl : in + strlen(in);

        if ((p = strstr(in, "(): ")) != NULL && p < end &&
            strncmp(in, "libpvm [pid", 11) == 0) {
            const char *close = strchr(in, ']');

            at += (size_t)snprintf(out + at, cap - at, "libpvm [pid%.*s\n", (int)(end - close),
                                   close);
        }
        in = nl ? nl + 1 : end;
    }
    out[at < cap ? at : cap - 1] = '\0';
}

static void
test_pvm_err_reports_match_pvm(void **state)
{
    char raw[8192], real[4096], ours[4096], mine[4096];
    ssize_t n;

    (void)state;
    if (real_pvm_lib() == NULL) {
        print_message("PVM's libpvm3 is missing; apt-get install libpvm3 to compare\n");
        skip();
    }
    n = real_pvm_run(real_failures, NULL, 1, raw, sizeof raw - 1);
    assert_true(n > 0);
    raw[n] = '\0';
    report_lines(raw, real, sizeof real);

    capture_begin();
    pvm_freebuf(-3);
    pvm_setsbuf(4242);
    pvm_pkint(NULL, 1, 1);
    pvm_mkbuf(77);
    capture_end(mine, sizeof mine);
    report_lines(mine, ours, sizeof ours);
    assert_string_equal(ours, "libpvm [pid]: pvm_freebuf(): Bad parameter\n"
                              "libpvm [pid]: pvm_setsbuf(): No such buffer\n"
                              "libpvm [pid]: pvm_pkint(): No current buffer\n"
                              "libpvm [pid]: pvm_mkbuf(): Bad parameter\n");
    assert_string_equal(ours, real);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pvm_err_maps_errno_codes, reset),
        cmocka_unit_test_setup(test_pvm_err_maps_wire_codes, reset),
        cmocka_unit_test_setup(test_pvm_err_pvm_only_codes_map_back, reset),
        cmocka_unit_test_setup(test_pvm_err_unknown_codes_are_sys_err_and_results_pass, reset),
        cmocka_unit_test_setup(test_pvm_err_texts_are_pvms, reset),
        cmocka_unit_test_setup(test_pvm_err_autoerr_0_is_quiet_but_sets_pvm_errno, reset),
        cmocka_unit_test_setup(test_pvm_err_autoerr_1_prints_pvms_line, reset),
        cmocka_unit_test_setup(test_pvm_err_perror_and_strerror, reset),
        cmocka_unit_test_setup(test_pvm_err_autoerr_2_leaves_and_exits_with_the_code, reset),
        cmocka_unit_test_setup(test_pvm_err_autoerr_3_aborts, reset),
        cmocka_unit_test_setup(test_pvm_err_texts_match_pvm, reset),
        cmocka_unit_test_setup(test_pvm_err_reports_match_pvm, reset),
    };

    return cmocka_run_group_tests_name("pvm_err", tests, NULL, reset);
}
