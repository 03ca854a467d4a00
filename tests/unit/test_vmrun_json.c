/*
 * test_vmrun_json.c - the trace reader's JSON (vmrun_json.c) and its
 * loader (vmrun_tload.c) on the inputs fuzz_trace_json found or that were
 * fixed beside them: numbers beyond an int, a NUL byte where a value
 * belongs, a trace without messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vmrun_json.h"
#include "vmrun_trace.h"

static void
test_vmrun_json_int_holds_huge_numbers_to_int(void **state)
{
    const char *text = "{\"a\":1e300,\"b\":-1e300,\"c\":-7.9,\"d\":\"x\",\"e\":true}";
    struct vmrun_json j;
    char err[128];

    (void)state;
    assert_int_equal(vmrun_json_parse(text, strlen(text), &j, err, sizeof(err)), 0);
    assert_int_equal(vmrun_json_int(&j, "a", 0), INT_MAX);
    assert_int_equal(vmrun_json_int(&j, "b", 0), INT_MIN);
    assert_int_equal(vmrun_json_int(&j, "c", 0), -7);
    assert_int_equal(vmrun_json_int(&j, "d", 5), 5);
    assert_int_equal(vmrun_json_int(&j, "e", 0), 1);
    assert_int_equal(vmrun_json_int(&j, "absent", -1), -1);
    vmrun_json_free(&j);
}

static void
test_vmrun_json_rejects_a_nul_byte_as_a_value(void **state)
{
    static const char text[] = { '[', '1', ',', '\0', ']' };
    struct vmrun_json j;
    char err[128];

    (void)state;
    /* strchr("+-0123456789.eE", 0) finds the terminator: it read as 0. */
    assert_int_equal(vmrun_json_parse(text, sizeof(text), &j, err, sizeof(err)), -22);
    assert_non_null(strstr(err, "expected a value"));
}

static const char *
scratch(const char *text)
{
    static char path[64];
    FILE *fp;

    snprintf(path, sizeof(path), "/tmp/test_vmrun_json.%ld.json", (long)getpid());
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

static void
test_vmrun_tload_reads_a_trace_without_messages(void **state)
{
    struct vmrun_trace t;
    char err[256];
    const char *p = scratch("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"compute\",\"pid\":0,"
                            "\"tid\":1,\"ts\":0,\"dur\":5,\"args\":{\"quanta\":2,\"iters\":3}}]}");

    (void)state;
    assert_int_equal(vmrun_tload(p, &t, err, sizeof(err)), 0);
    assert_int_equal(t.nspans, 1);
    assert_int_equal(t.nflows, 0);
    assert_int_equal(t.unpaired, 0);
    vmrun_tfree(&t);
    unlink(p);
}

static void
test_vmrun_tload_refuses_times_beyond_a_double(void **state)
{
    struct vmrun_trace t;
    char err[256];
    const char *p = scratch("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"compute\",\"pid\":1e300,"
                            "\"tid\":-1e300,\"ts\":1,\"dur\":1e999}]}");

    (void)state;
    /* pid and tid held to int (and -1e300 is no tid); dur is infinite. */
    assert_int_equal(vmrun_tload(p, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "lacks a field"));
    p = scratch("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"compute\",\"pid\":1e300,"
                "\"tid\":2,\"ts\":1,\"dur\":1e999}]}");
    assert_int_equal(vmrun_tload(p, &t, err, sizeof(err)), -1);
    unlink(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmrun_json_int_holds_huge_numbers_to_int),
        cmocka_unit_test(test_vmrun_json_rejects_a_nul_byte_as_a_value),
        cmocka_unit_test(test_vmrun_tload_reads_a_trace_without_messages),
        cmocka_unit_test(test_vmrun_tload_refuses_times_beyond_a_double),
    };

    return cmocka_run_group_tests_name("vmrun_json", tests, NULL, NULL);
}
