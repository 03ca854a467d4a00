/*
 * test_vmctl_task.c - the words of launcher/vmctl/vmctl_task.c that scripts
 * and people read: ps's FLAG column as PVM 3.4.6's console prints it
 * (task_flags: the bits in hex, then the letters of those it names), and
 * why a spawn's tasks failed, naming the program and the hosts it was
 * placed on, or the host -h named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "vmctl.h"

static void
test_vmctl_task_flags_as_pvm_prints_them(void **state)
{
    char buf[64];

    (void)state;
    /* No letter: the bits alone, without PVM's trailing '/'. */
    assert_string_equal(vmctl_task_flags(0, buf, sizeof(buf)), "0");
    assert_string_equal(vmctl_task_flags(4, buf, sizeof(buf)), "4/c");
    /* From the highest bit down, as PVM's console lists them. */
    assert_string_equal(vmctl_task_flags(6, buf, sizeof(buf)), "6/c,f");
    assert_string_equal(vmctl_task_flags(0x104, buf, sizeof(buf)), "104/R,c");
    /* Bits it has no letter for show in the hex only. */
    assert_string_equal(vmctl_task_flags(0x40, buf, sizeof(buf)), "40");
    /* A short buffer is cut, never overrun. */
    char small[4];
    assert_string_equal(vmctl_task_flags(6, small, sizeof(small)), "6/c");
}

static void
test_vmctl_spawn_why_names_program_and_hosts(void **state)
{
    char buf[256];

    (void)state;
    vmctl_spawn_why(buf, sizeof(buf), -ENOENT, "nosuchprog", 0, "", "host1, host2", 0);
    assert_string_equal(buf, "nosuchprog: not found along spawn_path on host1, host2");
    /* A name with a '/' is not looked up along spawn_path. */
    vmctl_spawn_why(buf, sizeof(buf), -ENOENT, "/opt/x", 0, "", "host0", 0);
    assert_string_equal(buf, "/opt/x: no such executable file on host0");
    /* A daemon that does not say where (older than the hosts' list). */
    vmctl_spawn_why(buf, sizeof(buf), -ENOENT, "nosuchprog", 0, "", "", 0);
    assert_string_equal(buf, "nosuchprog: not found along spawn_path");
    vmctl_spawn_why(buf, sizeof(buf), WIRE_EHOSTFAIL, "prog", 0, "", "host2", 0);
    assert_string_equal(buf, "prog on host2: host failed");
}

static void
test_vmctl_spawn_why_names_the_host_asked_for(void **state)
{
    char buf[256];

    (void)state;
    /* -h host7 (PvmTaskHost): the host, and where the hosts are listed,
     * from the shell or inside the console. */
    vmctl_spawn_why(buf, sizeof(buf), WIRE_ENOHOST, "hello", 1, "host7", "", 0);
    assert_string_equal(buf, "host7: no such host in the virtual machine, or it is not up "
                             "(vmctl conf lists the hosts)");
    vmctl_spawn_why(buf, sizeof(buf), WIRE_ENOHOST, "hello", 1, "host7", "", 1);
    assert_non_null(strstr(buf, "(conf lists the hosts)"));
    /* -a ARCH (PvmTaskArch), and no host up at all. */
    vmctl_spawn_why(buf, sizeof(buf), WIRE_ENOHOST, "hello", 2, "SUN4", "", 0);
    assert_string_equal(buf, "no host of architecture SUN4 is up to run hello");
    vmctl_spawn_why(buf, sizeof(buf), WIRE_ENOHOST, "hello", 0, "", "", 0);
    assert_string_equal(buf, "no host is up to run hello");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmctl_task_flags_as_pvm_prints_them),
        cmocka_unit_test(test_vmctl_spawn_why_names_program_and_hosts),
        cmocka_unit_test(test_vmctl_spawn_why_names_the_host_asked_for),
    };
    return cmocka_run_group_tests_name("vmctl_task", tests, NULL, NULL);
}
