/*
 * test_vmd_task.c - daemon/vmd_task.c: who a task is comes from the kernel.
 *
 * The one guard in front of kill() (vmd_task_pid_ok) and the rule for a
 * spawned task's claim (vmd_task_claim_ok), on plain structs: no loop, no
 * socket.  The integration side, with a forger on a real daemon's socket,
 * is tests/integ/test_identity.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "vmd.h"

static void
test_vmd_task_pid_ok_refuses_groups_init_and_self(void **state)
{
    (void)state;
    assert_false(vmd_task_pid_ok(0, 500));
    assert_false(vmd_task_pid_ok(-1, 500));         /* every process of the user */
    assert_false(vmd_task_pid_ok(-4242, 500));      /* a process group */
    assert_false(vmd_task_pid_ok(1, 500));          /* init */
    assert_false(vmd_task_pid_ok(500, 500));        /* the daemon itself */
    assert_false(vmd_task_pid_ok((long)INT_MAX + 1, 500));  /* (int) would wrap */
    assert_false(vmd_task_pid_ok(4294967295L, 500));        /* a forged 0xFFFFFFFF */
    assert_true(vmd_task_pid_ok(2, 500));
    assert_true(vmd_task_pid_ok(4242, 500));
    assert_true(vmd_task_pid_ok(INT_MAX, 500));
}

static void
test_vmd_task_claim_needs_spawned_pid_and_token(void **state)
{
    struct vmd_task t;
    struct vmd_client c, other;
    (void)state;
    memset(&t, 0, sizeof(t));
    memset(&c, 0, sizeof(c));
    memset(&other, 0, sizeof(other));
    t.spawned = 1;
    t.pid = 4242;
    t.token = 0x0123456789abcdefULL;
    c.pid = 4242;
    other.pid = 4343;

    assert_true(vmd_task_claim_ok(&t, &c, 1, 0x0123456789abcdefULL));
    assert_false(vmd_task_claim_ok(NULL, &c, 1, 0x0123456789abcdefULL));
    /* Another process, even with the right token. */
    assert_false(vmd_task_claim_ok(&t, &other, 1, 0x0123456789abcdefULL));
    /* The right process without the token, or with a wrong one (pid reuse). */
    assert_false(vmd_task_claim_ok(&t, &c, 0, 0));
    assert_false(vmd_task_claim_ok(&t, &c, 1, 0x0123456789abcdeeULL));
    /* Once claimed (token spent, client set), never again. */
    t.token = 0;
    assert_false(vmd_task_claim_ok(&t, &c, 1, 0));
    t.token = 0x0123456789abcdefULL;
    t.client = &other;
    assert_false(vmd_task_claim_ok(&t, &c, 1, 0x0123456789abcdefULL));
    /* A task that enrolled from the shell is not claimable. */
    t.client = NULL;
    t.spawned = 0;
    assert_false(vmd_task_claim_ok(&t, &c, 1, 0x0123456789abcdefULL));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmd_task_pid_ok_refuses_groups_init_and_self),
        cmocka_unit_test(test_vmd_task_claim_needs_spawned_pid_and_token),
    };
    return cmocka_run_group_tests_name("vmd_task", tests, NULL, NULL);
}
