/*
 * test_vmd_group.c - daemon/vmd_group.c, the master's group table: what
 * happens to a group when the host of its members leaves the VM.
 *
 * The daemon is a bare struct vmd as in test_vmd_dispatch.c, with a real
 * loop (never run until teardown), its modules and a host table of three;
 * it is the master.  Requests come relayed from host 3, as a member's
 * daemon would send them; with no link to host 3 the answers go nowhere.
 * The first test is the unit form of a crash fuzz_vmd_peer found
 * (tests/fuzz/corpus/vmd_peer/crash-group-host-gone-uaf): a group whose
 * last member's host left was freed, then read (ASan: heap-use-after-free
 * in group_host_gone), so it fails before the fix in the sanitizer build.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vmd.h"

#define H3 (3u << 18)

struct fixture {
    uv_loop_t loop;
    struct vmd *vmd;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->vmd = calloc(1, sizeof(*f->vmd))) == NULL ||
        uv_loop_init(&f->loop) != 0)
        return -1;
    struct vmd *vmd = f->vmd;
    log_init("test", LOG_LVL_ERR);
    vmd->loop = &f->loop;
    conf_defaults(&vmd->conf);
    vmd_init_lists(vmd);
    vmd_modules_install(vmd);
    vmd_group_init(vmd);
    vmd->ready_fd = -1;
    snprintf(vmd->name, sizeof(vmd->name), "host1");
    snprintf(vmd->master_name, sizeof(vmd->master_name), "host1");
    vmd->index = vmd->master_index = 1;
    vmd->is_master = 1;
    for (int i = 1; i <= 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "host%d", i);
        if (vmd_host_new(vmd, name, i) == NULL)
            return -1;
        vmd->hosts[i]->state = VMD_HOST_UP;
    }
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    vmd_halt(f->vmd, "test over");
    while (uv_run(&f->loop, UV_RUN_NOWAIT) != 0)
        ;
    for (int i = 0; i <= VMD_MAX_HOSTS; i++)
        if (f->vmd->hosts[i])
            vmd_host_free(f->vmd, f->vmd->hosts[i]);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    conf_free(&f->vmd->conf);
    free(f->vmd);
    free(f);
    return 0;
}

/* A group request of task tid of host 3, relayed by its daemon. */
static int
relayed(struct fixture *f, int type, uint32_t tid, const char *group)
{
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, tid);
    wire_put_str(&b, group);
    struct wire_hdr h = { .type = (uint8_t)type, .len = (uint32_t)b.len, .id = 1 };
    struct vmd_from from = { .kind = VMD_FROM_RELAY, .host = 3, .client_id = 9 };
    int rc = vmd_dispatch_frame(f->vmd, &from, &h, b.data);
    wire_wbuf_free(&b);
    return rc;
}

static int
ngroups(const struct vmd *vmd)
{
    int n = 0;
    for (const struct vmd_list *l = vmd->groups.next; l != &vmd->groups; l = l->next)
        n++;
    return n;
}

static void
test_vmd_group_last_members_host_leaving_frees_the_group_once(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(relayed(f, WIRE_T_GROUP_JOIN, H3 | 5, "alone"), 0);
    assert_int_equal(relayed(f, WIRE_T_GROUP_JOIN, H3 | 6, "pair"), 0);
    assert_int_equal(relayed(f, WIRE_T_GROUP_JOIN, H3 | 7, "pair"), 0);
    assert_int_equal(ngroups(f->vmd), 2);
    vmd_host_remove(f->vmd, f->vmd->hosts[3], "test: host 3 died");
    assert_int_equal(ngroups(f->vmd), 0);
}

static void
test_vmd_group_other_hosts_members_stay_when_a_host_leaves(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(relayed(f, WIRE_T_GROUP_JOIN, H3 | 5, "mixed"), 0);
    /* A member of host 2, relayed through host 3's link as host 2 would not
     * be: the dispatch refuses a tid of another host. */
    assert_int_not_equal(relayed(f, WIRE_T_GROUP_JOIN, (2u << 18) | 5, "mixed"), 0);
    assert_int_equal(ngroups(f->vmd), 1);
    vmd_host_remove(f->vmd, f->vmd->hosts[2], "test: host 2 died");
    assert_int_equal(ngroups(f->vmd), 1);
    vmd_host_remove(f->vmd, f->vmd->hosts[3], "test: host 3 died");
    assert_int_equal(ngroups(f->vmd), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_vmd_group_last_members_host_leaving_frees_the_group_once, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_vmd_group_other_hosts_members_stay_when_a_host_leaves, setup, teardown),
    };
    return cmocka_run_group_tests_name("vmd_group", tests, NULL, NULL);
}
