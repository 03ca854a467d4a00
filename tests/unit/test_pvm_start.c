/*
 * test_pvm_start.c - lib/pvm/pvm_start.c's pure part: the hosts a PVM
 * hostfile names (comments, '*' defaults and '&' hosts skipped, options
 * after the name dropped); and lib/pvm/pvm_tools.c's helpers.
 */
#include "test_pvm_fakevm.h"

/* pvm3.h came without NOTMPNAM (test_pvm_fakevm.h). */
char *pvmtmpnam(char *buf);
#include "../../lib/pvm/pvm_start.c"
#include "../../lib/pvm/pvm_tools.c"

static void
test_pvm_start_hostfile_names(void **state)
{
    char text[] = "# a comment\n"
                  "* ep=$HOME/bin\n"
                  "alpha sp=1000\n"
                  "\n"
                  "  beta\t# the second\n"
                  "&gamma lo=me\n"
                  "delta\r\n"
                  "   \n";
    char *names[8];
    (void)state;
    int n = pvm__hostfile_names(text, names, 8);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "alpha");
    assert_string_equal(names[1], "beta");
    assert_string_equal(names[2], "delta");
    char two[] = "a\nb\nc\n";
    assert_int_equal(pvm__hostfile_names(two, names, 2), 2);
    char none[] = "";
    assert_int_equal(pvm__hostfile_names(none, names, 8), 0);
}

static void
test_pvm_start_tools(void **state)
{
    char buf[128];
    (void)state;
    unsetenv("PVM_TMP");
    unsetenv("PVM_RSH");
    assert_string_equal(pvmgettmp(), "/tmp");
    assert_string_equal(pvmgetrsh(), "ssh");
    setenv("PVM_TMP", "/var/tmp", 1);
    setenv("PVM_RSH", "/usr/bin/rsh", 1);
    assert_string_equal(pvmgettmp(), "/var/tmp");
    assert_string_equal(pvmgetrsh(), "/usr/bin/rsh");
    assert_ptr_equal(pvmtmpnam(buf), buf);
    assert_int_equal(strncmp(buf, "/var/tmp/pvmtmp", 15), 0);
    char *a = pvmtmpnam(NULL);
    assert_string_not_equal(a, buf);
    unsetenv("PVM_TMP");
    unsetenv("PVM_RSH");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_start_hostfile_names),
        cmocka_unit_test(test_pvm_start_tools),
    };
    return cmocka_run_group_tests_name("pvm_start", tests, NULL, NULL);
}
