/*
 * test_kern_box.c - boxes: the padding is never faulted in (seed 000 s3.6,
 * requirement 13), layouts convert without changing a bit, and bad sizes
 * are refused.
 *
 * Residency is read two ways: mincore() page by page, compared exactly
 * with the pages that hold data, and the process's resident set from
 * /proc/self/statm, compared with the padded and the touched extents.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "kern.h"

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t npages(const struct kern_box *b)
{
    return (b->map_len + page_size() - 1) / page_size();
}

/* Resident flags of every page of the box's mapping. */
static unsigned char *resident(const struct kern_box *b)
{
    unsigned char *vec = calloc(npages(b), 1);

    assert_non_null(vec);
    assert_int_equal(mincore(b->map, b->map_len, vec), 0);
    return vec;
}

/* Pages that hold at least one of the ai x aj x ak points. */
static unsigned char *data_pages(const struct kern_box *b)
{
    unsigned char *vec = calloc(npages(b), 1);
    size_t ps = page_size();

    assert_non_null(vec);
    for (int k = 0; k < b->nk + 2; k++) {
        for (int j = 0; j < b->nj + 2; j++) {
            size_t lo = (size_t)((char *)kern_at(b, 0, j, k) - (char *)b->map);
            size_t hi = lo + (size_t)(b->ni + 2) * sizeof(double) - 1;

            for (size_t p = lo / ps; p <= hi / ps; p++)
                vec[p] = 1;
        }
    }
    return vec;
}

static size_t count(const unsigned char *vec, size_t n)
{
    size_t c = 0;

    for (size_t x = 0; x < n; x++)
        c += vec[x] & 1;
    return c;
}

/* Resident pages of the whole process. */
static long rss_pages(void)
{
    long size = 0, res = -1;
    FILE *f = fopen("/proc/self/statm", "r");

    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld %ld", &size, &res), 2);
    fclose(f);
    return res;
}

/* Every page resident iff it holds data: the padding between planes was
 * never touched. */
static void assert_only_data_resident(const struct kern_box *b)
{
    unsigned char *res = resident(b), *dat = data_pages(b);

    for (size_t p = 0; p < npages(b); p++)
        assert_int_equal(res[p] & 1, dat[p]);
    free(res);
    free(dat);
}

static void test_kern_box_alloc_faults_nothing_in(void **state)
{
    struct kern_box b;
    unsigned char *res;

    (void)state;
    assert_int_equal(kern_box_alloc(&b, 200, 200, 200, 384, 320), 0);
    res = resident(&b);
    assert_int_equal(count(res, npages(&b)), 0);
    assert_true(*kern_at(&b, 5, 6, 7) == 0.0); /* anonymous memory reads as zero */
    free(res);
    kern_box_free(&b);
}

/*
 * A 130^3 box padded by GcdPad3D for a 256 KiB cache (AI = AJ = 132 ->
 * BI = 384, BJ = 192): the padded extent is 384*192*132 doubles (74 MiB) and
 * the touched part about 384*132*132 (51 MiB).  After filling the points,
 * exactly the pages holding points are resident, and the process grew by
 * the touched part, not the padded extent.
 */
static void test_kern_box_padding_pages_stay_unmapped(void **state)
{
    struct kern_box b;
    struct kern_plan p;
    unsigned char *dat;
    size_t want, extent;
    long before, grown;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 262144, 130, 130, 130, KERN_PLAN_PAD), 0);
    assert_int_equal(p.bi, 384);
    assert_int_equal(p.bj, 192);
    assert_int_equal(kern_box_alloc(&b, 130, 130, 130, p.bi, p.bj), 0);
    before = rss_pages();
    kern_box_fill(&b, 1);
    grown = rss_pages() - before;

    dat = data_pages(&b);
    want = count(dat, npages(&b));
    extent = npages(&b);
    print_message("padded extent %zu pages, data pages %zu, process grew %ld pages\n", extent,
                  want, grown);
    assert_true(want < extent * 3 / 4);
    /* The resident set grew by the data pages (plus a little for the test
     * itself), far below the padded extent. */
    assert_true((size_t)grown >= want - want / 100);
    assert_true((size_t)grown <= want + 512);
    assert_only_data_resident(&b);
    free(dat);
    kern_box_free(&b);
}

/* Every kernel walks only the points: after running them all on padded
 * boxes, padding-only pages are still not resident. */
static void test_kern_box_kernels_never_touch_padding(void **state)
{
    struct kern_box u, tmp, rhs;
    struct kern_plan p;

    (void)state;
    assert_int_equal(kern_plan_make(&p, 65536, 70, 45, 20,
                                     KERN_PLAN_PAD | KERN_PLAN_SIMD | KERN_PLAN_STREAM), 0);
    p.flags |= KERN_PLAN_STREAM;
    p.rb_steps = 2;
    assert_true(p.bj > 47 && p.bi > 72);
    assert_int_equal(kern_box_alloc(&u, 70, 45, 20, p.bi, p.bj), 0);
    assert_int_equal(kern_box_alloc(&tmp, 70, 45, 20, p.bi, p.bj), 0);
    assert_int_equal(kern_box_alloc(&rhs, 70, 45, 20, p.bi, p.bj), 0);
    kern_box_fill(&u, 2);
    kern_box_fill(&rhs, 3);
    assert_int_equal(kern_jacobi_ref(&tmp, &u, &rhs, 0.1, 0.2), 0);
    assert_int_equal(kern_jacobi_sweep(&tmp, &u, &rhs, 0.1, 0.2, &p), 0);
    assert_int_equal(kern_jacobi_run(&u, &tmp, &rhs, 0.1, 0.2, 5, &p), 0);
    assert_int_equal(kern_rbgs_ref(&u, &rhs, 0.1, 0.2, KERN_RED), 0);
    assert_int_equal(kern_rbgs_sweep(&u, &rhs, 0.1, 0.2, KERN_BLACK, &p), 0);
    assert_int_equal(kern_rbgs_run(&u, &rhs, 0.1, 0.2, 3, &p), 0);
    assert_only_data_resident(&u);
    assert_only_data_resident(&tmp);
    assert_only_data_resident(&rhs);
    kern_box_free(&u);
    kern_box_free(&tmp);
    kern_box_free(&rhs);
}

static void test_kern_box_repad_keeps_every_bit(void **state)
{
    struct kern_box a, b;
    double *buf;

    (void)state;
    assert_int_equal(kern_box_alloc(&a, 9, 8, 7, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&b, 9, 8, 7, 0, 0), 0);
    kern_box_fill(&a, 5);
    a.oi = -3;
    a.oj = 8;
    a.ok = 1;
    assert_int_equal(kern_box_copy(&b, &a), 0);
    assert_int_equal(b.ok, 1);
    /* Moving to a host with another cache: new layout, same values. */
    assert_int_equal(kern_box_repad(&b, 32, 17), 0);
    assert_int_equal(b.bi, 32);
    assert_int_equal(b.bj, 17);
    assert_int_equal(b.oi, -3);
    assert_int_equal(kern_box_equal(&a, &b), 1);
    assert_int_equal(kern_box_repad(&b, 10, 17), -EINVAL); /* bi < ai */
    assert_int_equal(b.bi, 32);

    /* A message body: packed without padding, unpacked anywhere. */
    assert_int_equal(kern_box_points(&a), 11u * 10u * 9u);
    buf = malloc(kern_box_points(&a) * sizeof(double));
    assert_non_null(buf);
    kern_box_pack(&b, buf);
    assert_memory_equal(buf, kern_at(&a, 0, 0, 0), 11 * sizeof(double));
    kern_box_fill(&b, 6);
    assert_int_equal(kern_box_equal(&a, &b), 0);
    kern_box_unpack(&b, buf);
    assert_int_equal(kern_box_equal(&a, &b), 1);

    /* One flipped bit is a difference. */
    *kern_at(&b, 10, 9, 8) = -*kern_at(&b, 10, 9, 8);
    assert_int_equal(kern_box_equal(&a, &b), 0);
    free(buf);
    kern_box_free(&a);
    kern_box_free(&b);
}

static void test_kern_box_rejects_bad_sizes(void **state)
{
    struct kern_box b, c;

    (void)state;
    assert_int_equal(kern_box_alloc(NULL, 4, 4, 4, 0, 0), -EINVAL);
    assert_int_equal(kern_box_alloc(&b, 0, 4, 4, 0, 0), -EINVAL);
    assert_int_equal(kern_box_alloc(&b, 4, 4, -1, 0, 0), -EINVAL);
    assert_int_equal(kern_box_alloc(&b, 4, 4, 4, 5, 0), -EINVAL);  /* bi < ni+2 */
    assert_int_equal(kern_box_alloc(&b, 4, 4, 4, 0, -6), -EINVAL);
    assert_int_equal(kern_box_alloc(&b, INT32_MAX, 4, 4, 0, 0), -ERANGE);
    assert_int_equal(kern_box_alloc(&b, 1 << 30, 1 << 30, 1 << 30, 0, 0), -ERANGE);
    /* 2^47 bytes: more than a 47-bit user address space can map. */
    assert_int_equal(kern_box_alloc(&b, (1 << 15) - 2, (1 << 15) - 2, (1 << 14) - 2, 0, 0),
                     -ENOMEM);

    assert_int_equal(kern_box_alloc(&b, 4, 4, 4, 0, 0), 0);
    assert_int_equal(kern_box_alloc(&c, 4, 5, 4, 0, 0), 0);
    assert_int_equal(kern_box_copy(&b, &c), -EINVAL);
    assert_int_equal(kern_box_equal(&b, &c), -EINVAL);
    kern_box_free(&b);
    kern_box_free(&c);
    kern_box_free(&b); /* a freed box is empty; freeing again is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kern_box_alloc_faults_nothing_in),
        cmocka_unit_test(test_kern_box_padding_pages_stay_unmapped),
        cmocka_unit_test(test_kern_box_kernels_never_touch_padding),
        cmocka_unit_test(test_kern_box_repad_keeps_every_bit),
        cmocka_unit_test(test_kern_box_rejects_bad_sizes),
    };

    return cmocka_run_group_tests_name("kern_box", tests, NULL, NULL);
}
