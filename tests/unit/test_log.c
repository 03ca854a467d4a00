/*
 * test_log.c - lib/wire/log.c: one event is one line, whatever bytes a task
 * or a peer put in it (a newline, a carriage return, an escape sequence);
 * a tab stays; a line longer than the buffer is cut and says so; the level
 * filters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAG "test"
#include "log.h"

static char path[] = "/tmp/test_log.XXXXXX";

/* The whole log file, NUL-terminated, in buf. */
static size_t
slurp(char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

static int
setup(void **state)
{
    int fd = mkstemp(path);

    (void)state;
    if (fd < 0)
        return -1;
    close(fd);
    log_init("hostX", LOG_LVL_INFO);
    return log_open_file(path);
}

static int
teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

static size_t
count(const char *s, char c)
{
    size_t n = 0;

    for (; *s; s++)
        n += *s == c;
    return n;
}

static void
test_log_control_bytes_stay_on_one_line(void **state)
{
    static const char text[] = "a\nhostX err forged: b\rc\x1b[31md\te\x7f";
    char buf[4096];

    (void)state;
    assert_int_equal(truncate(path, 0), 0);
    log_info("t4000b: %.*s", (int)(sizeof(text) - 1), text);
    slurp(buf, sizeof(buf));
    assert_int_equal(count(buf, '\n'), 1);
    assert_null(strchr(buf, '\r'));
    assert_null(strchr(buf, '\x1b'));
    assert_non_null(strstr(buf, " hostX info test: t4000b: a?hostX err forged: b?c?[31md\te?\n"));
}

static void
test_log_long_line_is_cut_and_says_so(void **state)
{
    char big[5000], buf[8192];
    size_t n;

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(truncate(path, 0), 0);
    log_warn("%s", big);
    n = slurp(buf, sizeof(buf));
    assert_int_equal(count(buf, '\n'), 1);
    assert_true(n <= 2048);
    assert_memory_equal(buf + n - 4, "...\n", 4);
}

static void
test_log_level_filters(void **state)
{
    char buf[4096];

    (void)state;
    assert_int_equal(truncate(path, 0), 0);
    log_debug("not shown");
    log_err("shown");
    slurp(buf, sizeof(buf));
    assert_null(strstr(buf, "not shown"));
    assert_non_null(strstr(buf, " hostX error test: shown\n"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_control_bytes_stay_on_one_line),
        cmocka_unit_test(test_log_long_line_is_cut_and_says_so),
        cmocka_unit_test(test_log_level_filters),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
