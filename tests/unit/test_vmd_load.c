/*
 * test_vmd_load.c - daemon/vmd_load.c's parsers of /proc and cgroup text,
 * the capacity rule, and lib/wire/wire_load.c's encoding and checks of a load
 * sample.  Fixtures are real files' text (a 2-CPU Linux 5.x host, cgroup
 * v1 and v2 hosts), then the same text damaged: every parser must refuse
 * it with -EINVAL, never read past it or crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmd.h"
#include "wire_load.h"

static const char STAT[] =
    "cpu  539571 4 185808 811889 1708 0 1353 1926 0 0\n"
    "cpu0 270000 2 92000 405000 800 0 700 900 0 0\n"
    "cpu1 269571 2 93808 406889 908 0 653 1026 0 0\n"
    "intr 123456 0 0\n"
    "ctxt 987654\n"
    "btime 1700000000\n";

static void
test_vmd_load_parse_stat_sums_busy_and_counts_cpus(void **state)
{
    struct vmd_cpu_times t;
    (void)state;
    assert_int_equal(vmd_load_parse_stat(STAT, &t), 0);
    assert_int_equal(t.ncpus, 2);
    /* user nice system irq softirq steal */
    assert_true(t.busy == 539571ULL + 4 + 185808 + 0 + 1353 + 1926);
    assert_true(t.total == t.busy + 811889 + 1708);
    /* An old kernel with only four fields. */
    assert_int_equal(vmd_load_parse_stat("cpu  10 0 5 85\ncpu0 10 0 5 85\n", &t), 0);
    assert_true(t.busy == 15 && t.total == 100 && t.ncpus == 1);
}

static void
test_vmd_load_parse_stat_refuses_malformed_text(void **state)
{
    struct vmd_cpu_times t;
    (void)state;
    assert_int_equal(vmd_load_parse_stat("", &t), -EINVAL);
    assert_int_equal(vmd_load_parse_stat("intr 1 2 3\n", &t), -EINVAL);
    assert_int_equal(vmd_load_parse_stat("cpu  1 2 3\ncpu0 1 2 3 4\n", &t), -EINVAL);
    assert_int_equal(vmd_load_parse_stat("cpu  -1 2 3 4\ncpu0 1 2 3 4\n", &t), -EINVAL);
    assert_int_equal(vmd_load_parse_stat("cpu  a b c d\ncpu0 1 2 3 4\n", &t), -EINVAL);
    /* No per-CPU lines: the CPU count is unknown. */
    assert_int_equal(vmd_load_parse_stat("cpu  1 2 3 4\n", &t), -EINVAL);
    /* Cut in the middle of the aggregate line. */
    assert_int_equal(vmd_load_parse_stat("cpu  539571 4 18", &t), -EINVAL);
}

static void
test_vmd_load_parse_loadavg(void **state)
{
    double v = -1;
    (void)state;
    assert_int_equal(vmd_load_parse_loadavg("3.25 3.23 2.03 4/137 20281\n", &v), 0);
    assert_true(v == 3.25);
    assert_int_equal(vmd_load_parse_loadavg("0.00 0.01 0.05 1/80 1\n", &v), 0);
    assert_true(v == 0.0);
    assert_int_equal(vmd_load_parse_loadavg("", &v), -EINVAL);
    assert_int_equal(vmd_load_parse_loadavg("-1.0 2 3\n", &v), -EINVAL);
    assert_int_equal(vmd_load_parse_loadavg("nan 2 3\n", &v), -EINVAL);
    assert_int_equal(vmd_load_parse_loadavg("1.5x 2 3\n", &v), -EINVAL);
    assert_int_equal(vmd_load_parse_loadavg("1e300 2 3\n", &v), -EINVAL);
}

static void
test_vmd_load_parse_meminfo_uses_available_or_falls_back(void **state)
{
    uint64_t t = 0, a = 0;
    (void)state;
    assert_int_equal(vmd_load_parse_meminfo("MemTotal:       24684092 kB\n"
                                            "MemFree:         1000000 kB\n"
                                            "MemAvailable:   23512196 kB\n"
                                            "Buffers:          200000 kB\n"
                                            "Cached:          3000000 kB\n", &t, &a), 0);
    assert_true(t == 24684092ULL * 1024 && a == 23512196ULL * 1024);
    /* Before Linux 3.14 there is no MemAvailable. */
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\n"
                                            "Buffers: 10 kB\nCached: 200 kB\n", &t, &a), 0);
    assert_true(t == 1000 * 1024 && a == 310 * 1024);
}

static void
test_vmd_load_parse_meminfo_refuses_malformed_text(void **state)
{
    uint64_t t = 7, a = 7;
    (void)state;
    assert_int_equal(vmd_load_parse_meminfo("", &t, &a), -EINVAL);
    assert_int_equal(vmd_load_parse_meminfo("MemAvailable: 10 kB\n", &t, &a), -EINVAL);
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: lots kB\nMemAvailable: 1 kB\n", &t, &a),
                     -EINVAL);
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: 0 kB\nMemAvailable: 0 kB\n", &t, &a),
                     -EINVAL);
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: 100 kB\nMemAvailable: 1 MB\n", &t, &a),
                     -EINVAL);
    /* Would overflow 64 bits once in bytes. */
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: 18446744073709551 kB\n"
                                            "MemAvailable: 1 kB\n", &t, &a), -EINVAL);
    /* Neither MemAvailable nor the old fields. */
    assert_int_equal(vmd_load_parse_meminfo("MemTotal: 100 kB\nMemFree: 1 kB\n", &t, &a),
                     -EINVAL);
    assert_true(t == 7 && a == 7);
}

static void
test_vmd_load_parse_procstat_survives_odd_command_names(void **state)
{
    struct vmd_proc_times p;
    (void)state;
    assert_int_equal(vmd_load_parse_procstat(
        "4242 (vmd) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 50 7 3 20 0 1 0 123456 "
        "1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", &p), 0);
    assert_true(p.pid == 4242 && p.ppid == 1);
    assert_true(p.cpu == 150 + 50 + 7 + 3);
    assert_true(p.start == 123456);
    /* A name holding ") S 9 " must not shift the fields. */
    assert_int_equal(vmd_load_parse_procstat(
        "77 (a) S 9 (b) R 5 77 77 0 -1 0 0 0 0 0 11 22 0 0 20 -5 1 0 999 0 0\n", &p), 0);
    assert_true(p.pid == 77 && p.ppid == 5 && p.cpu == 33 && p.start == 999);
}

static void
test_vmd_load_parse_procstat_refuses_malformed_text(void **state)
{
    struct vmd_proc_times p;
    (void)state;
    assert_int_equal(vmd_load_parse_procstat("", &p), -EINVAL);
    assert_int_equal(vmd_load_parse_procstat("abc (x) S 1", &p), -EINVAL);
    assert_int_equal(vmd_load_parse_procstat("12 x S 1 2 3", &p), -EINVAL);
    assert_int_equal(vmd_load_parse_procstat("12 (x", &p), -EINVAL);
    assert_int_equal(vmd_load_parse_procstat("12 (x)", &p), -EINVAL);
    /* Cut before starttime. */
    assert_int_equal(vmd_load_parse_procstat("12 (x) S 1 12 12 0 -1 0 0 0 0 0 1 2 0 0 20 0 1",
                                             &p), -EINVAL);
    /* Negative CPU time. */
    assert_int_equal(vmd_load_parse_procstat(
        "12 (x) S 1 12 12 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 5\n", &p), -EINVAL);
}

static void
test_vmd_load_parse_cgroup_finds_v1_cpu_and_v2(void **state)
{
    char v1[64], v2[64];
    (void)state;
    assert_int_equal(vmd_load_parse_cgroup("9:name=systemd:/\n8:pids:/\n"
                                           "4:memory:/process_api/0e59\n3:cpuset:/\n"
                                           "2:cpuacct:/\n1:cpu:/lvm/host1\n0::/\n",
                                           v1, sizeof(v1), v2, sizeof(v2)), 0);
    assert_string_equal(v1, "/lvm/host1");
    assert_string_equal(v2, "/");
    /* cpu shares a hierarchy with cpuacct; "cpuacct" alone is not cpu. */
    assert_int_equal(vmd_load_parse_cgroup("3:cpuacct:/a\n2:cpu,cpuacct:/user.slice\n",
                                           v1, sizeof(v1), v2, sizeof(v2)), 0);
    assert_string_equal(v1, "/user.slice");
    assert_string_equal(v2, "");
    /* A pure v2 host. */
    assert_int_equal(vmd_load_parse_cgroup("0::/user.slice/user-0.slice/session-1.scope\n",
                                           v1, sizeof(v1), v2, sizeof(v2)), 0);
    assert_string_equal(v1, "");
    assert_string_equal(v2, "/user.slice/user-0.slice/session-1.scope");
}

static void
test_vmd_load_parse_cgroup_refuses_malformed_text(void **state)
{
    char v1[8], v2[8];
    (void)state;
    assert_int_equal(vmd_load_parse_cgroup("", v1, sizeof(v1), v2, sizeof(v2)), -EINVAL);
    assert_int_equal(vmd_load_parse_cgroup("garbage\n1:cpu\n:cpu:/x\n", v1, sizeof(v1), v2,
                                           sizeof(v2)), -EINVAL);
    assert_int_equal(vmd_load_parse_cgroup("1:cpuacct:/x\n", v1, sizeof(v1), v2, sizeof(v2)),
                     -EINVAL);
    /* A path longer than the caller's buffer is refused, not cut. */
    assert_int_equal(vmd_load_parse_cgroup("1:cpu:/a/very/long/path\n", v1, sizeof(v1), v2,
                                           sizeof(v2)), -EINVAL);
}

static const char MOUNTINFO[] =
    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "41 31 0:38 /docker/abc /sys/fs/cgroup/my\\040unified rw,relatime - cgroup2 cgroup2 rw\n";

static void
test_vmd_load_parse_mountinfo_finds_the_hierarchies(void **state)
{
    struct vmd_cg_mounts m;
    (void)state;
    assert_int_equal(vmd_load_parse_mountinfo(MOUNTINFO, &m), 0);
    assert_string_equal(m.v1_dir, "/sys/fs/cgroup/cpu");
    assert_string_equal(m.v1_root, "/");
    assert_string_equal(m.v2_dir, "/sys/fs/cgroup/my unified");
    assert_string_equal(m.v2_root, "/docker/abc");
    /* cpu mounted together with cpuacct (the systemd layout). */
    assert_int_equal(vmd_load_parse_mountinfo(
        "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n", &m), 0);
    assert_string_equal(m.v1_dir, "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(m.v2_dir, "");
}

static void
test_vmd_load_parse_mountinfo_refuses_malformed_text(void **state)
{
    struct vmd_cg_mounts m;
    (void)state;
    assert_int_equal(vmd_load_parse_mountinfo("", &m), -EINVAL);
    assert_int_equal(vmd_load_parse_mountinfo("22 1 0:21 / /proc rw - proc proc rw\n", &m),
                     -EINVAL);
    /* No separator, or nothing after it. */
    assert_int_equal(vmd_load_parse_mountinfo("32 31 0:29 / /x rw cgroup cgroup rw,cpu\n", &m),
                     -EINVAL);
    assert_int_equal(vmd_load_parse_mountinfo("32 31 0:29 / /x rw -\n", &m), -EINVAL);
    /* An escape that decodes to NUL. */
    assert_int_equal(vmd_load_parse_mountinfo(
        "32 31 0:29 / /x\\000y rw - cgroup cgroup rw,cpu\n", &m), -EINVAL);
}

static void
test_vmd_load_parse_quota_files(void **state)
{
    double q = -5;
    (void)state;
    assert_int_equal(vmd_load_parse_cfs("30000\n", "100000\n", &q), 0);
    assert_true(fabs(q - 0.3) < 1e-12);
    assert_int_equal(vmd_load_parse_cfs("-1\n", "100000\n", &q), 0);
    assert_true(q == 0.0);
    assert_int_equal(vmd_load_parse_cfs("250000\n", "100000\n", &q), 0);
    assert_true(q == 2.5);
    assert_int_equal(vmd_load_parse_cfs("", "100000\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cfs("30000\n", "0\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cfs("-2\n", "100000\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cfs("3e4\n", "100000\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cfs("99999999999999999999\n", "100000\n", &q), -EINVAL);

    assert_int_equal(vmd_load_parse_cpumax("30000 100000\n", &q), 0);
    assert_true(fabs(q - 0.3) < 1e-12);
    assert_int_equal(vmd_load_parse_cpumax("max 100000\n", &q), 0);
    assert_true(q == 0.0);
    assert_int_equal(vmd_load_parse_cpumax("", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cpumax("max\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cpumax("30000 0\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cpumax("x 100000\n", &q), -EINVAL);
    assert_int_equal(vmd_load_parse_cpumax("0 100000\n", &q), -EINVAL);
}

static void
test_vmd_load_parse_cgstat_of_both_versions(void **state)
{
    struct vmd_cg_stat s;
    (void)state;
    assert_int_equal(vmd_load_parse_cgstat("nr_periods 120\nnr_throttled 30\n"
                                           "throttled_time 2500000000\n", &s), 0);
    assert_true(s.nr_periods == 120 && s.nr_throttled == 30);
    assert_int_equal(vmd_load_parse_cgstat("usage_usec 1\nuser_usec 1\nsystem_usec 0\n"
                                           "nr_periods 7\nnr_throttled 0\n"
                                           "throttled_usec 0\n", &s), 0);
    assert_true(s.nr_periods == 7 && s.nr_throttled == 0);
    assert_int_equal(vmd_load_parse_cgstat("", &s), -EINVAL);
    assert_int_equal(vmd_load_parse_cgstat("nr_periods 7\n", &s), -EINVAL);
    assert_int_equal(vmd_load_parse_cgstat("nr_periods x\nnr_throttled 0\n", &s), -EINVAL);
}

static void
test_vmd_load_capacity_is_the_tighter_limit(void **state)
{
    (void)state;
    assert_true(vmd_load_capacity(2, 0.0, 0.0) == 2.0);
    assert_true(vmd_load_capacity(2, 0.5, 0.0) == 1.5);
    assert_true(vmd_load_capacity(2, 0.5, 0.3) == 0.3);
    assert_true(vmd_load_capacity(2, 1.9, 0.3) > 0.099 && vmd_load_capacity(2, 1.9, 0.3) < 0.101);
    assert_true(vmd_load_capacity(2, 2.5, 0.0) == 0.0);
    assert_true(vmd_load_capacity(-1, 0.5, 0.3) == -1.0);
    assert_true(vmd_load_capacity(2, -1.0, 0.3) == -1.0);
}

static void
sample_fixture(struct wire_load *l)
{
    l->cpus = 2;
    l->load1 = 1.25;
    l->ext_busy = 0.75;
    l->vm_busy = 0.25;
    l->quota = 0.3;
    l->throttled = 0.5;
    l->capacity = 0.3;
    l->interval = 1.0;
    l->mem_total = 1ULL << 34;
    l->mem_avail = 1ULL << 33;
    l->kernel = 0x0123456789abcdefULL;
}

static void
test_wire_load_round_trips_and_refuses_truncation(void **state)
{
    struct wire_load in, out;
    struct wire_wbuf b;
    struct wire_rbuf r;
    (void)state;
    sample_fixture(&in);
    wire_wbuf_init(&b);
    wire_load_put(&b, &in);
    assert_int_equal(b.err, 0);
    wire_rbuf_init(&r, b.data, b.len);
    assert_int_equal(wire_load_get(&r, &out), 0);
    assert_true(r.pos == b.len);
    assert_memory_equal(&in.load1, &out.load1, sizeof(double));
    assert_true(out.cpus == 2 && out.quota == 0.3 && out.mem_avail == 1ULL << 33);
    assert_true(out.kernel == 0x0123456789abcdefULL);
    for (size_t n = 0; n < b.len; n++) {
        wire_rbuf_init(&r, b.data, n);
        assert_int_equal(wire_load_get(&r, &out), WIRE_EFRAME);
    }
    /* All unknown is a valid sample. */
    wire_load_unknown(&in);
    b.len = 0;
    wire_load_put(&b, &in);
    wire_rbuf_init(&r, b.data, b.len);
    assert_int_equal(wire_load_get(&r, &out), 0);
    assert_true(out.cpus == -1 && out.capacity == -1.0);
    wire_wbuf_free(&b);
}

static void
test_wire_load_refuses_implausible_values(void **state)
{
    struct wire_load in, out;
    struct wire_rbuf r;
    (void)state;
    for (int k = 0; k < 11; k++) {
        struct wire_wbuf b;
        sample_fixture(&in);
        switch (k) {
        case 0: in.cpus = 0; break;
        case 1: in.cpus = WIRE_LOAD_MAX_CPUS + 1; break;
        case 2: in.load1 = NAN; break;
        case 3: in.ext_busy = -0.5; break;
        case 4: in.vm_busy = INFINITY; break;
        case 5: in.quota = -2.0; break;
        case 6: in.throttled = 1.5; break;
        case 7: in.capacity = 1e9; break;
        case 8: in.interval = -1.0; break;
        case 9: in.mem_avail = in.mem_total + 1; break;
        case 10: in.cpus = -7; break;
        }
        wire_wbuf_init(&b);
        wire_load_put(&b, &in);
        wire_rbuf_init(&r, b.data, b.len);
        assert_int_equal(wire_load_get(&r, &out), WIRE_EFRAME);
        wire_wbuf_free(&b);
    }
}

/* One machine, one identity; another boot or machine, another; never 0. */
static void
test_vmd_load_kernel_id_tells_machines_apart(void **state)
{
    (void)state;
    uint64_t a = vmd_load_kernel_id("6f1c2b9e-0d5a-4c1e-9a7b-3e2f1d0c9b8a\n");
    assert_true(a == vmd_load_kernel_id("6f1c2b9e-0d5a-4c1e-9a7b-3e2f1d0c9b8a"));
    assert_true(a != vmd_load_kernel_id("6f1c2b9e-0d5a-4c1e-9a7b-3e2f1d0c9b8b\n"));
    assert_true(a != 0 && vmd_load_kernel_id("") != 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmd_load_parse_stat_sums_busy_and_counts_cpus),
        cmocka_unit_test(test_vmd_load_parse_stat_refuses_malformed_text),
        cmocka_unit_test(test_vmd_load_parse_loadavg),
        cmocka_unit_test(test_vmd_load_parse_meminfo_uses_available_or_falls_back),
        cmocka_unit_test(test_vmd_load_parse_meminfo_refuses_malformed_text),
        cmocka_unit_test(test_vmd_load_parse_procstat_survives_odd_command_names),
        cmocka_unit_test(test_vmd_load_parse_procstat_refuses_malformed_text),
        cmocka_unit_test(test_vmd_load_parse_cgroup_finds_v1_cpu_and_v2),
        cmocka_unit_test(test_vmd_load_parse_cgroup_refuses_malformed_text),
        cmocka_unit_test(test_vmd_load_parse_mountinfo_finds_the_hierarchies),
        cmocka_unit_test(test_vmd_load_parse_mountinfo_refuses_malformed_text),
        cmocka_unit_test(test_vmd_load_parse_quota_files),
        cmocka_unit_test(test_vmd_load_parse_cgstat_of_both_versions),
        cmocka_unit_test(test_vmd_load_capacity_is_the_tighter_limit),
        cmocka_unit_test(test_vmd_load_kernel_id_tells_machines_apart),
        cmocka_unit_test(test_wire_load_round_trips_and_refuses_truncation),
        cmocka_unit_test(test_wire_load_refuses_implausible_values),
    };
    return cmocka_run_group_tests_name("vmd_load", tests, NULL, NULL);
}
