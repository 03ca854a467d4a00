/*
 * test_kern_cache.c - the cache size from sysfs (a fake tree in a temporary
 * directory, laid out as /sys/devices/system/cpu/cpu0/cache), the
 * configuration override, and the conversion to GcdPad3D's C.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kern.h"

struct tree {
    char dir[64];
};

static void put(const char *dir, int n, const char *name, const char *value)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/index%d", dir, n);
    (void)mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/index%d/%s", dir, n, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", value);
    fclose(f);
}

static void cache(const char *dir, int n, const char *level, const char *type, const char *size)
{
    put(dir, n, "level", level);
    put(dir, n, "type", type);
    put(dir, n, "size", size);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return -1;
    strcpy(t->dir, "/tmp/test_kern_cache.XXXXXX");
    if (mkdtemp(t->dir) == NULL) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
    if (system(cmd) != 0)
        return -1;
    free(t);
    return 0;
}

/* This machine's layout: L1d 32K, L1i 32K, L2 1024K, L3 32768K: take L2. */
static void test_kern_cache_detect_takes_level_2(void **state)
{
    struct tree *t = *state;
    size_t bytes = 0;

    cache(t->dir, 0, "1", "Data", "32K");
    cache(t->dir, 1, "1", "Instruction", "32K");
    cache(t->dir, 2, "2", "Unified", "1024K");
    cache(t->dir, 3, "3", "Unified", "32768K");
    assert_int_equal(kern_cache_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 1024 * 1024);
}

static void test_kern_cache_detect_falls_back_to_level_1_data(void **state)
{
    struct tree *t = *state;
    size_t bytes = 0;

    cache(t->dir, 0, "1", "Instruction", "64K");
    cache(t->dir, 1, "1", "Data", "48K");
    cache(t->dir, 2, "3", "Unified", "2M");
    assert_int_equal(kern_cache_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 48 * 1024);
}

static void test_kern_cache_detect_reads_megabytes(void **state)
{
    struct tree *t = *state;
    size_t bytes = 0;

    cache(t->dir, 0, "2", "Unified", "2M");
    assert_int_equal(kern_cache_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 2 * 1024 * 1024);
}

static void test_kern_cache_detect_refuses_missing_or_garbled(void **state)
{
    struct tree *t = *state;
    size_t bytes = 7;

    assert_int_equal(kern_cache_detect_at(t->dir, &bytes), -EINVAL); /* empty */
    cache(t->dir, 0, "1", "Instruction", "32K");
    cache(t->dir, 1, "2", "Unified", "lots");
    cache(t->dir, 2, "1", "Data", "");
    assert_int_equal(kern_cache_detect_at(t->dir, &bytes), -EINVAL);
    assert_int_equal(bytes, 7);
    assert_int_equal(kern_cache_detect_at("/nonexistent/kern", &bytes), -EINVAL);
    assert_int_equal(kern_cache_detect_at(NULL, &bytes), -EINVAL);
}

static void test_kern_cache_bytes_prefers_configuration(void **state)
{
    size_t detected;

    (void)state;
    assert_int_equal(kern_cache_bytes(262144), 262144);
    assert_int_equal(kern_cache_bytes(3 << 20), 3 << 20);
    /* 0 = detect: whatever this host has, else the thesis's 256 KiB. */
    if (kern_cache_detect(&detected) == 0)
        assert_int_equal(kern_cache_bytes(0), detected);
    else
        assert_int_equal(kern_cache_bytes(0), KERN_CACHE_DEFAULT);
}

/* The last level, per CPU that shares it: 480 MB over "0-1" is 240 MB. */
static void test_kern_llc_detect_divides_by_the_sharing_cpus(void **state)
{
    struct tree *t = *state;
    size_t bytes = 0;

    cache(t->dir, 0, "1", "Data", "48K");
    cache(t->dir, 1, "1", "Instruction", "32K");
    cache(t->dir, 2, "2", "Unified", "2048K");
    cache(t->dir, 3, "3", "Unified", "491520K");
    put(t->dir, 2, "shared_cpu_list", "0");
    put(t->dir, 3, "shared_cpu_list", "0-1");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 491520 * 1024 / 2);
    put(t->dir, 3, "shared_cpu_list", "0-3,8,10-11");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 491520 * 1024 / 7);
    /* the highest level wins even where a lower one is larger */
    cache(t->dir, 3, "3", "Unified", "1024K");
    put(t->dir, 3, "shared_cpu_list", "0");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 1024 * 1024);
}

/* No list, or one that does not parse, counts as one CPU; no cache is an error. */
static void test_kern_llc_detect_without_a_usable_list(void **state)
{
    struct tree *t = *state;
    size_t bytes = 0;

    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), -EINVAL);
    cache(t->dir, 0, "2", "Unified", "1M");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 1 << 20);
    put(t->dir, 0, "shared_cpu_list", "0-x");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 1 << 20);
    put(t->dir, 0, "shared_cpu_list", "3-1");
    assert_int_equal(kern_llc_detect_at(t->dir, &bytes), 0);
    assert_int_equal(bytes, 1 << 20);
    assert_int_equal(kern_llc_detect_at(NULL, &bytes), -EINVAL);
    assert_int_equal(kern_llc_bytes(12345), 12345);
}

static void test_kern_cache_elems_is_a_power_of_two(void **state)
{
    (void)state;
    assert_int_equal(kern_cache_elems(262144), 32768);
    assert_int_equal(kern_cache_elems(256000), 16384); /* 32000 doubles -> 2^14 */
    assert_int_equal(kern_cache_elems(1 << 20), 131072);
    assert_int_equal(kern_cache_elems(3 << 20), 262144);
    assert_int_equal(kern_cache_elems(0), KERN_TK);
    assert_int_equal(kern_cache_elems(SIZE_MAX), KERN_CACHE_MAX_ELEMS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kern_cache_detect_takes_level_2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kern_cache_detect_falls_back_to_level_1_data, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_kern_cache_detect_reads_megabytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kern_cache_detect_refuses_missing_or_garbled, setup,
                                        teardown),
        cmocka_unit_test(test_kern_cache_bytes_prefers_configuration),
        cmocka_unit_test_setup_teardown(test_kern_llc_detect_divides_by_the_sharing_cpus, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_kern_llc_detect_without_a_usable_list, setup,
                                        teardown),
        cmocka_unit_test(test_kern_cache_elems_is_a_power_of_two),
    };

    return cmocka_run_group_tests_name("kern_cache", tests, NULL, NULL);
}
