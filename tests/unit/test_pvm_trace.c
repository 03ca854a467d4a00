/*
 * test_pvm_trace.c - a PVM task's trace file (lib/pvm/pvm_trace.c,
 * pvm__trace_json): every event has the fields its phase needs, a
 * message's two ends written by two tasks get one flow id, names are
 * escaped, a write error is reported; and two tasks' files read back
 * together (vmrun_tload_pvm_dir) pair their message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pvm_int.h"
#include "vmrun_json.h"
#include "vmrun_trace.h"

static void
info(struct pvm__tinfo *ti, int tid, const char *program)
{
    memset(ti, 0, sizeof(*ti));
    ti->tid = tid;
    ti->host = (tid >> 18) & 0xfff;
    ti->program = program;
    ti->hostname = "node1";
    ti->path = "0";
    ti->why = "LIQUIDVM_TRACE";
    ti->root_host = ti->host;
    ti->t_start = 1000000;
    ti->t_end = 2000000;
    ti->route = PvmAllowDirect;
    ti->fragsize = 4080;
}

/* The JSON text of one trace (malloc'ed). */
static char *
encode(const struct pvm__tinfo *ti, const struct pvm__tev *ev, int n, size_t *len)
{
    char *text = NULL;
    FILE *fp = open_memstream(&text, len);

    assert_non_null(fp);
    assert_int_equal(pvm__trace_json(fp, ti, ev, n), 0);
    assert_int_equal(fclose(fp), 0);
    return text;
}

static const struct vmrun_json *
event_named(const struct vmrun_json *ev, const char *ph, const char *name)
{
    for (int i = 0; i < ev->n; i++)
        if (strcmp(vmrun_json_str(&ev->v[i], "ph"), ph) == 0 &&
            (name == NULL || strcmp(vmrun_json_str(&ev->v[i], "name"), name) == 0))
            return &ev->v[i];
    return NULL;
}

static void
test_pvm_trace_json_gives_every_phase_its_fields(void **state)
{
    static char *const files[] = { "slave1" };
    static char *const applied[] = { "route=direct" };
    struct pvm__tev ev[] = {
        { .t0 = 1000000, .t1 = 1000100, .kind = PVM__TEV_COMPUTE },
        { .t0 = 1000100, .t1 = 1000200, .kind = PVM__TEV_SPAWN, .call = PVM__TC_SPAWN,
          .tag = 0, .seq = 1, .bytes = 1 },
        { .t0 = 1000200, .t1 = 1000200, .kind = PVM__TEV_CHILD, .call = PVM__TC_SPAWN,
          .peer = 0x40002, .tag = 0, .seq = 0 },
        { .t0 = 1000300, .t1 = 1000310, .kind = PVM__TEV_SEND, .call = PVM__TC_SEND,
          .peer = 0x40002, .tag = 5, .bytes = 444, .seq = 0 },
        { .t0 = 1000400, .t1 = 1000900, .kind = PVM__TEV_RECV, .call = PVM__TC_RECV,
          .peer = 0x40002, .tag = 6, .bytes = 8, .seq = 0 },
        { .t0 = 1001000, .t1 = 1001000, .kind = PVM__TEV_EXIT, .call = PVM__TC_EXIT },
    };
    static const char *const need[][8] = {
        { "X", "name", "cat", "pid", "tid", "ts", "dur", NULL },
        { "s", "name", "cat", "pid", "tid", "ts", "id", NULL },
        { "f", "name", "cat", "pid", "tid", "ts", "id", "bp" },
        { "i", "name", "pid", "tid", "ts", "s", NULL, NULL },
        { "M", "name", "pid", "tid", "args", NULL, NULL, NULL },
    };
    struct pvm__tinfo ti;
    struct vmrun_json root;
    const struct vmrun_json *evs, *o, *e;
    char err[256];
    size_t len;
    char *text;

    (void)state;
    info(&ti, 0x40001, "master1");
    ti.nspawn = 1;
    ti.spawn_file = files;
    ti.hints_file = "/x/master1.hints";
    ti.napplied = 1;
    ti.applied = applied;
    text = encode(&ti, ev, 6, &len);
    assert_int_equal(vmrun_json_parse(text, len, &root, err, sizeof(err)), 0);
    evs = vmrun_json_get(&root, "traceEvents");
    assert_non_null(evs);
    /* 3 names, 6 events and the send's flow start and the receipt's finish. */
    assert_int_equal(evs->n, 3 + 6 + 2);
    for (int i = 0; i < evs->n; i++) {
        const char *ph = vmrun_json_str(&evs->v[i], "ph");
        int known = 0;

        assert_non_null(ph);
        for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
            if (strcmp(ph, need[k][0]) != 0)
                continue;
            known = 1;
            for (int f = 1; f < 8 && need[k][f] != NULL; f++)
                assert_non_null(vmrun_json_get(&evs->v[i], need[k][f]));
        }
        assert_true(known);
        assert_int_equal(vmrun_json_int(&evs->v[i], "tid", 0), 0x40001);
        assert_int_equal(vmrun_json_int(&evs->v[i], "pid", 0), 1);
    }
    e = event_named(evs, "X", "pvm_recv");
    assert_non_null(e);
    assert_string_equal(vmrun_json_str(e, "cat"), "wait");
    assert_int_equal(vmrun_json_int(e, "dur", 0), 500);
    assert_int_equal(vmrun_json_int(vmrun_json_get(e, "args"), "peer", 0), 0x40002);
    assert_int_equal(vmrun_json_int(vmrun_json_get(e, "args"), "bytes", 0), 8);
    e = event_named(evs, "f", NULL);
    assert_int_equal(vmrun_json_int(e, "ts", 0), 1000900);    /* when the message came */
    e = event_named(evs, "X", "pvm_spawn");
    assert_string_equal(vmrun_json_str(vmrun_json_get(e, "args"), "file"), "slave1");
    assert_string_equal(vmrun_json_str(vmrun_json_get(e, "args"), "children"), "0/0");
    o = vmrun_json_get(&root, "otherData");
    assert_string_equal(vmrun_json_str(o, "format"), "liquidvm-pvm-trace 1");
    assert_int_equal(vmrun_json_int(o, "events", 0), 6);
    assert_int_equal(vmrun_json_int(vmrun_json_get(o, "clock"), "residual_us", -5), 0);
    assert_string_equal(vmrun_json_str(vmrun_json_get(o, "settings"), "route"), "allow");
    o = vmrun_json_get(vmrun_json_get(o, "hints"), "applied");
    assert_non_null(o);
    assert_int_equal(o->n, 1);
    assert_string_equal(o->v[0].str, "route=direct");
    vmrun_json_free(&root);
    free(text);
}

/* The flow id of the first "s" or "f" event of a trace (malloc'ed). */
static char *
flow_id(const struct pvm__tinfo *ti, const struct pvm__tev *e, const char *ph)
{
    struct vmrun_json root;
    char err[256], *id;
    size_t len;
    char *text = encode(ti, e, 1, &len);

    assert_int_equal(vmrun_json_parse(text, len, &root, err, sizeof(err)), 0);
    id = strdup(vmrun_json_str(event_named(vmrun_json_get(&root, "traceEvents"), ph, NULL), "id"));
    vmrun_json_free(&root);
    free(text);
    return id;
}

static void
test_pvm_trace_json_one_flow_id_for_both_ends(void **state)
{
    struct pvm__tinfo a, b;
    struct pvm__tev send = { .t0 = 5, .t1 = 6, .kind = PVM__TEV_SEND, .call = PVM__TC_SEND,
                             .peer = 0x80001, .tag = 5, .ctx = 3, .bytes = 10, .seq = 7 };
    struct pvm__tev recv = { .t0 = 4, .t1 = 9, .kind = PVM__TEV_RECV, .call = PVM__TC_TRECV,
                             .peer = 0x40001, .tag = 5, .ctx = 3, .bytes = 10, .seq = 7 };
    char *s, *f, *g;

    (void)state;
    info(&a, 0x40001, "a");
    info(&b, 0x80001, "b");
    s = flow_id(&a, &send, "s");
    f = flow_id(&b, &recv, "f");
    assert_string_equal(s, f);
    recv.seq = 6;           /* another message of the pair */
    g = flow_id(&b, &recv, "f");
    assert_string_not_equal(s, g);
    free(s);
    free(f);
    free(g);
}

/* A task on another host writes its times on the first task's host's
 * clock: its own plus the offset measured, which the metadata gives with
 * its residual. */
static void
test_pvm_trace_json_shifts_times_by_the_clock_offset(void **state)
{
    struct pvm__tev e = { .t0 = 1000, .t1 = 1600, .kind = PVM__TEV_COMPUTE };
    struct pvm__tinfo ti;
    struct vmrun_json root;
    const struct vmrun_json *c;
    char err[256];
    size_t len;
    char *text;

    (void)state;
    info(&ti, 0x80001, "b");
    ti.root_host = 1;
    ti.clock_offset = -250;
    ti.clock_residual = 40;
    text = encode(&ti, &e, 1, &len);
    assert_int_equal(vmrun_json_parse(text, len, &root, err, sizeof(err)), 0);
    c = event_named(vmrun_json_get(&root, "traceEvents"), "X", "compute");
    assert_int_equal(vmrun_json_int(c, "ts", 0), 750);
    assert_int_equal(vmrun_json_int(c, "dur", 0), 600);
    c = vmrun_json_get(vmrun_json_get(&root, "otherData"), "clock");
    assert_int_equal(vmrun_json_int(c, "offset_us", 0), -250);
    assert_int_equal(vmrun_json_int(c, "residual_us", 0), 40);
    vmrun_json_free(&root);
    free(text);
}

static void
test_pvm_trace_json_escapes_names(void **state)
{
    struct pvm__tinfo ti;
    struct vmrun_json root;
    char err[256];
    size_t len;
    char *text;

    (void)state;
    info(&ti, 0x40001, "my \"prog\"\\1");
    ti.hostname = "h\n";
    text = encode(&ti, NULL, 0, &len);
    assert_int_equal(vmrun_json_parse(text, len, &root, err, sizeof(err)), 0);
    assert_string_equal(vmrun_json_str(vmrun_json_get(&root, "otherData"), "program"),
                        "my \"prog\"\\1");
    vmrun_json_free(&root);
    free(text);
}

static void
test_pvm_trace_json_reports_a_write_error(void **state)
{
    struct pvm__tinfo ti;
    FILE *fp = fopen("/dev/null", "r");

    (void)state;
    assert_non_null(fp);
    info(&ti, 0x40001, "p");
    assert_int_equal(pvm__trace_json(fp, &ti, NULL, 0), -EIO);
    fclose(fp);
}

static void
write_file(const char *dir, const struct pvm__tinfo *ti, const struct pvm__tev *ev, int n)
{
    char path[512];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s-t%x.json", dir, ti->program, (unsigned)ti->tid);
    assert_non_null(fp = fopen(path, "w"));
    assert_int_equal(pvm__trace_json(fp, ti, ev, n), 0);
    assert_int_equal(fclose(fp), 0);
}

/* Two tasks' traces read back together: one message, its two ends paired,
 * times from 0, one lane each on two hosts; an unpaired end is counted. */
static void
test_pvm_trace_files_merge_and_pair(void **state)
{
    char dir[] = "/tmp/test_pvm_trace.XXXXXX", err[512], cmd[600];
    struct pvm__tinfo a, b;
    struct pvm__tev ea[] = {
        { .t0 = 1000000, .t1 = 1000050, .kind = PVM__TEV_COMPUTE },
        { .t0 = 1000050, .t1 = 1000060, .kind = PVM__TEV_SEND, .call = PVM__TC_SEND,
          .peer = 0x80001, .tag = 1, .bytes = 100, .seq = 0 },
        { .t0 = 1000070, .t1 = 1000080, .kind = PVM__TEV_SEND, .call = PVM__TC_SEND,
          .peer = 0x80001, .tag = 1, .bytes = 50, .seq = 1 },
    };
    struct pvm__tev eb[] = {
        { .t0 = 1000020, .t1 = 1000200, .kind = PVM__TEV_RECV, .call = PVM__TC_RECV,
          .peer = 0x40001, .tag = 1, .bytes = 100, .seq = 0 },
    };
    struct vmrun_trace t;
    FILE *junk;

    (void)state;
    assert_non_null(mkdtemp(dir));
    info(&a, 0x40001, "a");
    info(&b, 0x80001, "b");
    b.path = "0/0";
    b.parent = 0x40001;
    b.root_host = a.host;       /* a started the run, on another host */
    b.clock_residual = -1;      /* and b's clock could not be measured */
    write_file(dir, &a, ea, 3);
    write_file(dir, &b, eb, 1);
    /* Another kind of file beside them is passed over. */
    snprintf(cmd, sizeof(cmd), "%s/report.json", dir);
    assert_non_null(junk = fopen(cmd, "w"));
    fputs("{\"not\":\"a trace\"}", junk);
    fclose(junk);
    assert_int_equal(vmrun_tload_pvm_dir(dir, &t, err, sizeof(err)), 0);
    assert_int_equal(t.pvm, 2);
    assert_int_equal(t.nlanes, 2);
    assert_int_equal(t.nhosts, 2);
    assert_int_equal(t.nflows, 1);
    assert_int_equal(t.unpaired, 1);
    assert_true(t.flows[0].bytes == 100);
    assert_true(t.flows[0].t0 >= 0 && t.flows[0].t1 > t.flows[0].t0);
    assert_true(t.origin_us == 1000000);
    assert_true(t.residual_us == -1);   /* two hosts, one root: the other not measured */
    for (int l = 0; l < t.nlanes; l++)
        if (t.lanes[l].tid == 0x80001) {
            assert_string_equal(t.lanes[l].path, "0/0");
            assert_int_equal(t.lanes[l].parent, 0x40001);
        }
    vmrun_tfree(&t);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    /* A directory without PVM traces says so. */
    assert_int_equal(vmrun_tload_pvm_dir("/", &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no PVM task trace"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_trace_json_gives_every_phase_its_fields),
        cmocka_unit_test(test_pvm_trace_json_one_flow_id_for_both_ends),
        cmocka_unit_test(test_pvm_trace_json_shifts_times_by_the_clock_offset),
        cmocka_unit_test(test_pvm_trace_json_escapes_names),
        cmocka_unit_test(test_pvm_trace_json_reports_a_write_error),
        cmocka_unit_test(test_pvm_trace_files_merge_and_pair),
    };

    return cmocka_run_group_tests_name("pvm_trace", tests, NULL, NULL);
}
