/*
 * test_liq_mdgather.c - when the master asks the workers for a disk
 * checkpoint's copies (liq_md_due): one gather at a time; an incomplete
 * one is kept while newer checkpoints are confirmed, up to its patience
 * (4, then twice as many at each give-up); a recovery or a worker's leave
 * starts a new one at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "liq_master.h"

#define NQ 6

static struct liq_vm vm;
static struct liq_stats st;
static char have[NQ];

static void
setup(void)
{
    memset(&vm, 0, sizeof(vm));
    memset(&st, 0, sizeof(st));
    vm.gen = 1;
    st.g.nquanta = NQ;
    st.dk.on = 1;
    st.dk.patience = 4;
    st.dk.have = have;
}

/* Confirm n more checkpoints from *it on (every 2); how many asked. */
static int
confirm(int n, int *it)
{
    int asked = 0;
    for (int i = 0; i < n; i++, *it += 2)
        asked += liq_md_due(&vm, &st, *it);
    return asked;
}

static void
test_a_gather_waits_out_its_patience(void **state)
{
    int it = 10;
    (void)state;
    setup();
    assert_int_equal(liq_md_due(&vm, &st, it), 1);
    assert_int_equal(st.dk.want, 10);
    it += 2;
    /* 3 newer checkpoints: the gather of 10 goes on. */
    assert_int_equal(confirm(3, &it), 0);
    assert_int_equal(st.dk.want, 10);
    assert_int_equal(st.dk.given_up, 0);
    /* The 4th: given up for the newest, with twice the patience. */
    assert_int_equal(liq_md_due(&vm, &st, it), 1);
    assert_int_equal(st.dk.want, it);
    assert_int_equal(st.dk.given_up, 1);
    assert_int_equal(st.dk.patience, 8);
    it += 2;
    assert_int_equal(confirm(7, &it), 0);
    assert_int_equal(liq_md_due(&vm, &st, it), 1);
    assert_int_equal(st.dk.given_up, 2);
    assert_int_equal(st.dk.patience, 16);
}

static void
test_a_completed_gather_lets_the_next_start(void **state)
{
    (void)state;
    setup();
    assert_int_equal(liq_md_due(&vm, &st, 10), 1);
    st.dk.want = 0;             /* every copy came (liq_md_take) */
    assert_int_equal(liq_md_due(&vm, &st, 12), 1);
    assert_int_equal(st.dk.want, 12);
    assert_int_equal(st.dk.given_up, 0);
    assert_int_equal(st.dk.got, 0);
}

static void
test_a_recovery_or_a_leave_starts_a_new_one(void **state)
{
    (void)state;
    setup();
    assert_int_equal(liq_md_due(&vm, &st, 10), 1);
    vm.gen = 2;
    assert_int_equal(liq_md_due(&vm, &st, 12), 1);
    assert_int_equal(st.dk.wgen, 2);
    st.left_all = 1;
    assert_int_equal(liq_md_due(&vm, &st, 14), 1);
    assert_int_equal(st.dk.want, 14);
    assert_int_equal(st.dk.given_up, 0);
}

static void
test_none_while_off_or_too_soon(void **state)
{
    (void)state;
    setup();
    st.dk.on = 0;
    assert_int_equal(liq_md_due(&vm, &st, 10), 0);
    setup();
    st.dk.interval_s = 1e9;     /* the last write ended just now */
    st.dk.last_t = liq_vm_now();
    assert_int_equal(liq_md_due(&vm, &st, 10), 0);
    assert_int_equal(st.dk.want, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_gather_waits_out_its_patience),
        cmocka_unit_test(test_a_completed_gather_lets_the_next_start),
        cmocka_unit_test(test_a_recovery_or_a_leave_starts_a_new_one),
        cmocka_unit_test(test_none_while_off_or_too_soon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
