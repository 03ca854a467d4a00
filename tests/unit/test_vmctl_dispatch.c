/*
 * test_vmctl_dispatch.c - the command table of launcher/vmctl/vmctl_dispatch.c:
 * every verb vmctl --help lists is in it, exactly start, ca and cert are the
 * shell's alone (the console refuses them), and an unknown word is bad usage
 * without reaching any command.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "vmctl.h"

static const char *const verbs[] = {
    "start", "add", "delete", "conf", "halt", "status", "ca", "cert", "version",
    "spawn", "ps", "kill", "sig", "reset", "pstat", "mstat", "groups",
};

static void
test_vmctl_dispatch_finds_every_listed_verb(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        const struct vmctl_command *c = vmctl_command_find(verbs[i]);
        assert_non_null(c);
        assert_string_equal(c->name, verbs[i]);
        assert_non_null(c->fn);
    }
}

static void
test_vmctl_dispatch_only_start_ca_cert_are_shell_only(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        int shell = strcmp(verbs[i], "start") == 0 || strcmp(verbs[i], "ca") == 0 ||
                    strcmp(verbs[i], "cert") == 0;
        assert_int_equal(vmctl_command_find(verbs[i])->shell_only, shell);
    }
}

static void
test_vmctl_dispatch_unknown_word_is_bad_usage(void **state)
{
    struct vmctl v;
    char word[] = "frobnicate", *argv[] = { word, NULL };

    (void)state;
    memset(&v, 0, sizeof(v));
    assert_null(vmctl_command_find("frobnicate"));
    /* Console words that are not commands are the console's own. */
    assert_null(vmctl_command_find("help"));
    assert_null(vmctl_command_find("quit"));
    assert_null(vmctl_command_find(""));
    assert_int_equal(vmctl_dispatch(&v, 1, argv), VMCTL_EXIT_USAGE);
}

static void
test_vmctl_dispatch_runs_the_named_command(void **state)
{
    struct vmctl v;
    char word[] = "version", *argv[] = { word, NULL };

    (void)state;
    memset(&v, 0, sizeof(v));
    assert_int_equal(vmctl_dispatch(&v, 1, argv), VMCTL_EXIT_OK);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmctl_dispatch_finds_every_listed_verb),
        cmocka_unit_test(test_vmctl_dispatch_only_start_ca_cert_are_shell_only),
        cmocka_unit_test(test_vmctl_dispatch_unknown_word_is_bad_usage),
        cmocka_unit_test(test_vmctl_dispatch_runs_the_named_command),
    };
    return cmocka_run_group_tests_name("vmctl_dispatch", tests, NULL, NULL);
}
