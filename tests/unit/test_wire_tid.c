/*
 * test_wire_tid.c - lib/wire/wire_tid.h, the tid layout the daemon and
 * libpvm3 share, at its edges: host index 4095 (the last of 12 bits), local
 * part 262143 (the last of 18), through the header's macros, the daemon
 * (vmd.h's names for them, vmd_task_new) and the library (pvm_tidtohost,
 * pvm__tid_ok).  Every expected tid below is written out in hex from the
 * layout in docs/architecture.md (host in bits 18-29, local part in 0-17),
 * not computed with the macros under test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "log.h"
#include "pvm_int.h"
#include "vmd.h"
#include "wire.h"

/* 4095 << 18 = 0xfff * 0x40000 = 0x3ffc0000; 2048 << 18 = 0x20000000. */
static void
test_wire_tid_host_4095_and_local_262143_round_trip(void **state)
{
    (void)state;
    assert_int_equal(WIRE_TID_MAX_HOSTS, 4095);
    assert_int_equal(WIRE_HOST_TID(4095), 0x3ffc0000u);
    assert_int_equal(WIRE_HOST_TID(2048), 0x20000000u);
    assert_int_equal(WIRE_HOST_TID(1), 0x40000u);
    assert_int_equal(WIRE_TID_HOST(0x3ffc0000u | 0x3ffffu), 4095);
    assert_int_equal(WIRE_TID_HOST(0x20000001u), 2048);
    assert_int_equal(WIRE_TID_HOST(0x7ffffu), 1);
    /* The local part never reaches the host bits, nor the host bits the local part. */
    assert_int_equal(WIRE_TID_HOST(0x3ffffu), 0);
    assert_int_equal(0x3ffc0000u & WIRE_TID_LOCAL_MASK, 0);
    assert_int_equal(0x3fffffffu & WIRE_TID_LOCAL_MASK, 0x3ffffu);
    /* Bits 30-31 are PVM's special ids: not a host. */
    assert_int_equal(WIRE_TID_HOST(0xc0000000u), 0);
}

static void
test_wire_tid_is_task_at_the_edges(void **state)
{
    (void)state;
    assert_true(WIRE_TID_IS_TASK(0x3ffc0001u));         /* host 4095, task 1 */
    assert_true(WIRE_TID_IS_TASK(0x3fffffffu));         /* host 4095, task 262143 */
    assert_false(WIRE_TID_IS_TASK(0x3ffc0000u));        /* host 4095's daemon */
    assert_false(WIRE_TID_IS_TASK(0x40000000u | 1));    /* a special id */
    assert_false(WIRE_TID_IS_TASK(0x80000000u | 1));
}

/* The daemon's names are the header's. */
static void
test_wire_tid_daemon_macros_agree(void **state)
{
    (void)state;
    assert_int_equal(VMD_MAX_HOSTS, 4095);
    assert_int_equal(VMD_HOST_TID(4095), 0x3ffc0000u);
    assert_int_equal(VMD_TID_HOST(0x3fffffffu), 4095);
    assert_int_equal(VMD_TID_LOCAL_MASK, 0x3ffffu);
}

/* A daemon at host index 4095 hands out tids that say so. */
static void
test_wire_tid_daemon_at_host_4095_makes_tasks_of_host_4095(void **state)
{
    struct vmd *vmd = calloc(1, sizeof(*vmd));
    struct vmd_task *t1, *t2;

    (void)state;
    assert_non_null(vmd);
    conf_defaults(&vmd->conf);
    vmd_init_lists(vmd);
    vmd->index = 4095;
    t1 = vmd_task_new(vmd, 0, "one");
    t2 = vmd_task_new(vmd, 0x3ffc0001u, "two");
    assert_non_null(t1);
    assert_non_null(t2);
    assert_int_equal(t1->tid, 0x3ffc0001u);
    assert_int_equal(t2->tid, 0x3ffc0002u);
    assert_int_equal(VMD_TID_HOST(t2->tid), 4095);
    assert_ptr_equal(vmd_task_by_tid(vmd, 0x3ffc0002u), t2);
    assert_null(vmd_task_by_tid(vmd, 0x3ffc0003u));
    /* Host 4095's task 2 is not host 2047's (an 11-bit mask would say so). */
    assert_null(vmd_task_by_tid(vmd, 0x1ffc0002u));
    vmd_list_remove(&t1->link);
    vmd_list_remove(&t2->link);
    free(t1);
    free(t2);
    conf_free(&vmd->conf);
    free(vmd);
}

/* The library reads the same layout. */
static void
test_wire_tid_library_at_host_4095(void **state)
{
    (void)state;
    assert_int_equal(pvm_tidtohost(0x3ffc0005), 0x3ffc0000);
    assert_int_equal(pvm_tidtohost(0x3fffffff), 0x3ffc0000);
    assert_int_equal(pvm_tidtohost(0x20000007), 0x20000000);
    assert_int_equal(pvm_tidtohost(0x7ffff), 0x40000);
    assert_true(pvm__tid_ok(0x3ffc0001));
    assert_true(pvm__tid_ok(0x3fffffff));
    assert_false(pvm__tid_ok(0x3ffc0000));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_tid_host_4095_and_local_262143_round_trip),
        cmocka_unit_test(test_wire_tid_is_task_at_the_edges),
        cmocka_unit_test(test_wire_tid_daemon_macros_agree),
        cmocka_unit_test(test_wire_tid_daemon_at_host_4095_makes_tasks_of_host_4095),
        cmocka_unit_test(test_wire_tid_library_at_host_4095),
    };

    log_init("test", LOG_LVL_ERR);
    return cmocka_run_group_tests_name("wire_tid", tests, NULL, NULL);
}
