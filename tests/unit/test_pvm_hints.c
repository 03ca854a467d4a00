/*
 * test_pvm_hints.c - the hints file libpvm3 reads (lib/pvm/pvm_hints.c,
 * pvm__hints_parse): a whole file, every error with its line in one
 * report, syntax errors, what libconfig must not see (a NUL, @include),
 * task paths, and a file without the pvm group.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pvm_int.h"

static int
parse(const char *text, struct pvm__hints *h, char *err, size_t errlen)
{
    return pvm__hints_parse(text, strlen(text), "h.hints", h, err, errlen);
}

static void
test_pvm_hints_reads_a_whole_file(void **state)
{
    struct pvm__hints h;
    char err[512];

    (void)state;
    assert_int_equal(parse("# from vmrun analyze\n"
                           "pvm = {\n"
                           "    route = \"direct\";\n"
                           "    fragsize = 16384;\n"
                           "    tasks = (\n"
                           "        { path = \"0/0\"; route = \"dontroute\";\n"
                           "          host = \"@parent\"; },\n"
                           "        { path = \"0/1/2\"; host = \"node3\"; }\n"
                           "    );\n"
                           "};\n"
                           "stencil = { balance = false; };\n",
                           &h, err, sizeof(err)),
                     0);
    assert_string_equal(h.file, "h.hints");
    assert_int_equal(h.route, PvmRouteDirect);
    assert_int_equal(h.fragsize, 16384);
    assert_int_equal(h.ntask, 2);
    assert_string_equal(h.task[0].path, "0/0");
    assert_int_equal(h.task[0].route, PvmDontRoute);
    assert_string_equal(h.task[0].host, "@parent");
    assert_string_equal(h.task[1].path, "0/1/2");
    assert_int_equal(h.task[1].route, -1);
    assert_string_equal(h.task[1].host, "node3");
    pvm__hints_free(&h);
}

static void
test_pvm_hints_empty_group_sets_nothing(void **state)
{
    struct pvm__hints h;
    char err[256];

    (void)state;
    assert_int_equal(parse("pvm = { tasks = (); };", &h, err, sizeof(err)), 0);
    assert_int_equal(h.route, -1);
    assert_int_equal(h.fragsize, 0);
    assert_int_equal(h.ntask, 0);
    pvm__hints_free(&h);
}

static void
test_pvm_hints_reports_every_error_with_its_line(void **state)
{
    struct pvm__hints h;
    char err[1024];

    (void)state;
    assert_int_equal(parse("pvm = {\n"
                           "  route = \"sideways\";\n"
                           "  fragsize = 7;\n"
                           "  colour = 1;\n"
                           "  tasks = (\n"
                           "    { path = \"0//1\"; },\n"
                           "    { route = \"direct\"; },\n"
                           "    { path = \"0\"; host = 3; when = 1; }\n"
                           "  );\n"
                           "};\n",
                           &h, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "h.hints:2: route must be"));
    assert_non_null(strstr(err, "h.hints:3: fragsize must be an integer from 52 to 1048576"));
    assert_non_null(strstr(err, "h.hints:4: unknown setting pvm.colour"));
    assert_non_null(strstr(err, "h.hints:6: path must be a task path"));
    assert_non_null(strstr(err, "h.hints:7: a task without its path"));
    assert_non_null(strstr(err, "h.hints:8: host must be"));
    assert_non_null(strstr(err, "h.hints:8: unknown setting when in a task"));
    assert_null(h.task);    /* nothing is kept from a bad file */
}

static void
test_pvm_hints_names_the_line_of_a_syntax_error(void **state)
{
    struct pvm__hints h;
    char err[256];

    (void)state;
    /* (libconfig lets a setting end without its ';'.) */
    assert_int_equal(parse("pvm = {\n  route = \"direct\"\n  fragsize = ;\n};\n", &h, err,
                           sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "h.hints:3: "));
}

static void
test_pvm_hints_refuses_nul_and_include(void **state)
{
    struct pvm__hints h;
    char err[256];
    static const char nul[] = "pvm = { route = \"direct\"; };\0pvm = { colour = 1; };";

    (void)state;
    assert_int_equal(pvm__hints_parse(nul, sizeof(nul) - 1, "h.hints", &h, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "NUL"));
    assert_int_equal(parse("@include \"/etc/passwd\"\npvm = { };\n", &h, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "@include"));
}

static void
test_pvm_hints_wants_the_pvm_group(void **state)
{
    struct pvm__hints h;
    char err[256];

    (void)state;
    assert_int_equal(parse("route = \"direct\";\n", &h, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "no group pvm"));
    assert_int_equal(parse("pvm = 3;\n", &h, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "h.hints:1: no group pvm"));
}

static void
test_pvm_hints_checks_task_paths(void **state)
{
    static const char *const bad[] = {
        "", "/0", "0/", "a", "0/x", "0//1",
        /* 64 characters: one too many */
        "0/1/2/3/4/5/6/7/8/9/0/1/2/3/4/5/6/7/8/9/0/1/2/3/4/5/6/7/8/9/10/1",
    };
    struct pvm__hints h;
    char text[256], err[512];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), "pvm = { tasks = ( { path = \"%s\"; } ); };", bad[i]);
        assert_int_equal(parse(text, &h, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "path must be"));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_hints_reads_a_whole_file),
        cmocka_unit_test(test_pvm_hints_empty_group_sets_nothing),
        cmocka_unit_test(test_pvm_hints_reports_every_error_with_its_line),
        cmocka_unit_test(test_pvm_hints_names_the_line_of_a_syntax_error),
        cmocka_unit_test(test_pvm_hints_refuses_nul_and_include),
        cmocka_unit_test(test_pvm_hints_wants_the_pvm_group),
        cmocka_unit_test(test_pvm_hints_checks_task_paths),
    };

    return cmocka_run_group_tests_name("pvm_hints", tests, NULL, NULL);
}
