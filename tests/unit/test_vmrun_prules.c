/*
 * test_vmrun_prules.c - Paradise's rules for PVM programs
 * (launcher/vmrun/vmrun_prules.c) on synthetic runs: direct routes for
 * chatty pairs (per task path, or for the program when every task has
 * one), placement of a waiting child beside its parent, the fragment
 * size; and the hints file they write reads back in libpvm3's parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pvm_int.h"
#include "vmrun_prules.h"

static struct vmrun_pthresholds th;

static int
setup(void **state)
{
    (void)state;
    vmrun_prules_defaults(&th);
    return 0;
}

/* A master (0) and three workers (0/0) on hosts a, a, b, b; the master
 * sends each worker one message and gets one back. */
static struct vmrun_ptask tasks[4];
static struct vmrun_ppair pairs[16];

static void
run(struct vmrun_pprog *p)
{
    static const char *const host[] = { "a", "a", "b", "b" };

    memset(p, 0, sizeof(*p));
    memset(tasks, 0, sizeof(tasks));
    for (int i = 0; i < 4; i++) {
        tasks[i].tid = i == 0 ? 0x40001 : 0x40001 + i;
        tasks[i].parent = i == 0 ? 0 : 0x40001;
        snprintf(tasks[i].path, sizeof(tasks[i].path), "%s", i == 0 ? "0" : "0/0");
        snprintf(tasks[i].host, sizeof(tasks[i].host), "%s", host[i]);
        tasks[i].life = 1.0;
        tasks[i].compute = 0.9;
        tasks[i].wait = 0.05;
    }
    p->ntask = 4;
    p->task = tasks;
    p->pair = pairs;
    for (int i = 1; i < 4; i++) {
        pairs[p->npair++] = (struct vmrun_ppair){ 0, i, 1, 100 };
        pairs[p->npair++] = (struct vmrun_ppair){ i, 0, 1, 8 };
    }
    p->msgs = 6;
    p->bytes = 324;
    p->msg_p90 = 100;
    p->fragsize = 4080;
}

static int
fired(const struct vmrun_padvice *a, const char *name)
{
    for (int i = 0; i < a->nrules; i++)
        if (strcmp(a->rule[i].name, name) == 0)
            return a->rule[i].fired;
    return -1;
}

static const struct vmrun_phint *
hint_of(const struct vmrun_padvice *a, const char *path, const char *key)
{
    for (int i = 0; i < a->nhints; i++)
        if (strcmp(a->hint[i].path, path) == 0 && strcmp(a->hint[i].key, key) == 0)
            return &a->hint[i];
    return NULL;
}

static void
test_vmrun_prules_quiet_run_gives_no_hints(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;

    (void)state;
    run(&p);
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(a.nrules, 3);
    assert_int_equal(fired(&a, "route-direct"), 0);
    assert_int_equal(fired(&a, "placement"), 0);
    assert_int_equal(fired(&a, "fragsize"), 0);
    assert_int_equal(a.nhints, 0);
    assert_non_null(strstr(a.rule[0].why, "the most: 2"));
}

static void
test_vmrun_prules_chatty_pair_routes_its_tasks_direct(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;
    const struct vmrun_phint *h;

    (void)state;
    run(&p);
    pairs[0].msgs = 300;        /* master -> worker 1 */
    pairs[1].msgs = 300;
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(fired(&a, "route-direct"), 1);
    assert_non_null(h = hint_of(&a, "0", "route"));
    assert_string_equal(h->value, "direct");
    assert_non_null(strstr(h->why, "t40001 (0) and t40002 (0/0) exchanged 600 messages"));
    assert_non_null(hint_of(&a, "0/0", "route"));
    assert_null(hint_of(&a, "", "route"));  /* workers 2 and 3 have no such partner */
}

static void
test_vmrun_prules_every_task_chatty_routes_the_program(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;

    (void)state;
    run(&p);
    for (int i = 0; i < p.npair; i++)
        pairs[i].msgs = 200;
    vmrun_prules_apply(&p, &th, &a);
    assert_non_null(hint_of(&a, "", "route"));
    assert_null(hint_of(&a, "0", "route"));
    assert_null(hint_of(&a, "0/0", "route"));
}

static void
test_vmrun_prules_places_a_waiting_child_beside_its_parent(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;
    const struct vmrun_phint *h;

    (void)state;
    run(&p);
    pairs[4].msgs = pairs[5].msgs = 150;    /* master <-> worker 3, on host b */
    tasks[3].wait = tasks[0].wait = 0.6;
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(fired(&a, "placement"), 1);
    assert_non_null(h = hint_of(&a, "0/0", "host"));
    assert_string_equal(h->value, "@parent");
    assert_non_null(strstr(h->why, "t40004 (0/0) on b exchanged 300 messages with its parent"));
    /* The same pair busy computing, not waiting: left where it is. */
    tasks[3].wait = tasks[0].wait = 0.05;
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(fired(&a, "placement"), 0);
    /* On one host: nothing to move. */
    tasks[3].wait = tasks[0].wait = 0.6;
    snprintf(tasks[3].host, sizeof(tasks[3].host), "a");
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(fired(&a, "placement"), 0);
}

static void
test_vmrun_prules_fragsize_holds_most_messages(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;
    const struct vmrun_phint *h;

    (void)state;
    run(&p);
    p.msg_p90 = 40000;
    vmrun_prules_apply(&p, &th, &a);
    assert_int_equal(fired(&a, "fragsize"), 1);
    assert_non_null(h = hint_of(&a, "", "fragsize"));
    assert_string_equal(h->value, "65536");
    p.msg_p90 = 5e9;            /* capped at PVM's largest */
    vmrun_prules_apply(&p, &th, &a);
    assert_string_equal(hint_of(&a, "", "fragsize")->value, "1048576");
}

/* What vmrun analyze writes, libpvm3 reads: the same settings. */
static void
test_vmrun_prules_file_reads_back_in_libpvm3(void **state)
{
    struct vmrun_pprog p;
    struct vmrun_padvice a;
    struct pvm__hints h;
    char *text = NULL, err[512];
    size_t len;
    FILE *fp;

    (void)state;
    run(&p);
    pairs[0].msgs = pairs[1].msgs = 300;
    pairs[4].msgs = pairs[5].msgs = 150;
    tasks[3].wait = tasks[0].wait = 0.6;
    p.msg_p90 = 9000;
    vmrun_prules_apply(&p, &th, &a);
    assert_non_null(fp = open_memstream(&text, &len));
    assert_int_equal(vmrun_prules_write(fp, "DIR", &a), 0);
    fclose(fp);
    assert_int_equal(pvm__hints_parse(text, len, "out.hints", &h, err, sizeof(err)), 0);
    assert_int_equal(h.route, -1);
    assert_int_equal(h.fragsize, 16384);
    assert_int_equal(h.ntask, 2);
    /* One group per path, with its route and its host. */
    for (int i = 0; i < h.ntask; i++) {
        assert_int_equal(h.task[i].route, PvmRouteDirect);
        if (strcmp(h.task[i].path, "0/0") == 0)
            assert_string_equal(h.task[i].host, "@parent");
        else
            assert_string_equal(h.task[i].path, "0");
    }
    /* Each setting follows a comment naming its rule. */
    assert_non_null(strstr(text, "# fragsize: 90 % of the 6 messages are at most 9000 bytes"));
    assert_non_null(strstr(text, "        # placement: t40004 (0/0) on b"));
    pvm__hints_free(&h);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmrun_prules_quiet_run_gives_no_hints),
        cmocka_unit_test(test_vmrun_prules_chatty_pair_routes_its_tasks_direct),
        cmocka_unit_test(test_vmrun_prules_every_task_chatty_routes_the_program),
        cmocka_unit_test(test_vmrun_prules_places_a_waiting_child_beside_its_parent),
        cmocka_unit_test(test_vmrun_prules_fragsize_holds_most_messages),
        cmocka_unit_test(test_vmrun_prules_file_reads_back_in_libpvm3),
    };

    return cmocka_run_group_tests_name("vmrun_prules", tests, setup, NULL);
}
