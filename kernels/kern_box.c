/*
 * kern_box.c - boxes: padded storage that never faults its padding in.
 *
 * Seed 000 s3.6: with demand paging, the padding between planes costs
 * virtual address space only, as long as nothing touches it.  So a box is an
 * anonymous mapping (zero-filled on first touch, nothing resident before),
 * nothing here memsets the whole extent, and every loop below walks the
 * ai x aj x ak points row by row.  A huge page would map 2 MiB around the
 * first touched byte, padding included, so padded boxes refuse them.
 */
#include "kern_int.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int kern__box_ok(const struct kern_box *b)
{
    if (b == NULL || b->data == NULL || b->ni < 1 || b->nj < 1 || b->nk < 1)
        return -EINVAL;
    if (b->bi < b->ni + 2 || b->bj < b->nj + 2)
        return -EINVAL;
    return 0;
}

int kern__same_shape(const struct kern_box *a, const struct kern_box *b)
{
    if (kern__box_ok(a) != 0 || kern__box_ok(b) != 0)
        return -EINVAL;
    if (a->ni != b->ni || a->nj != b->nj || a->nk != b->nk)
        return -EINVAL;
    return 0;
}

int kern_box_alloc(struct kern_box *b, int ni, int nj, int nk, int bi, int bj)
{
    size_t pts, len;
    void *map;

    if (b == NULL || ni < 1 || nj < 1 || nk < 1 || bi < 0 || bj < 0)
        return -EINVAL;
    /* ni + 2 must not overflow an int, nor must the strides. */
    if (ni > INT32_MAX - 2 || nj > INT32_MAX - 2 || nk > INT32_MAX - 2)
        return -ERANGE;
    if (bi == 0)
        bi = ni + 2;
    if (bj == 0)
        bj = nj + 2;
    if (bi < ni + 2 || bj < nj + 2)
        return -EINVAL;
    pts = (size_t)bi;
    if (pts > SIZE_MAX / (size_t)bj)
        return -ERANGE;
    pts *= (size_t)bj;
    if (pts > SIZE_MAX / (size_t)(nk + 2))
        return -ERANGE;
    pts *= (size_t)(nk + 2);
    if (pts > (size_t)PTRDIFF_MAX / sizeof(double))
        return -ERANGE;
    len = pts * sizeof(double);

    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return -ENOMEM;
#ifdef MADV_NOHUGEPAGE
    /* Advice only: a kernel without THP has nothing to refuse. */
    if (bi > ni + 2 || bj > nj + 2)
        (void)madvise(map, len, MADV_NOHUGEPAGE);
#endif
    memset(b, 0, sizeof(*b));
    b->data = map;
    b->ni = ni;
    b->nj = nj;
    b->nk = nk;
    b->bi = bi;
    b->bj = bj;
    b->map = map;
    b->map_len = len;
    return 0;
}

void kern_box_free(struct kern_box *b)
{
    if (b == NULL || b->map == NULL)
        return;
    (void)munmap(b->map, b->map_len);
    memset(b, 0, sizeof(*b));
}

int kern_box_copy(struct kern_box *dst, const struct kern_box *src)
{
    size_t row;

    if (kern__same_shape(dst, src) != 0)
        return -EINVAL;
    row = (size_t)(src->ni + 2) * sizeof(double);
    for (int k = 0; k < src->nk + 2; k++)
        for (int j = 0; j < src->nj + 2; j++)
            memmove(kern_at(dst, 0, j, k), kern_at(src, 0, j, k), row);
    dst->oi = src->oi;
    dst->oj = src->oj;
    dst->ok = src->ok;
    return 0;
}

int kern_box_repad(struct kern_box *b, int bi, int bj)
{
    struct kern_box nb;
    int rc;

    if (kern__box_ok(b) != 0)
        return -EINVAL;
    rc = kern_box_alloc(&nb, b->ni, b->nj, b->nk, bi, bj);
    if (rc != 0)
        return rc;
    (void)kern_box_copy(&nb, b);
    kern_box_free(b);
    *b = nb;
    return 0;
}

int kern_box_equal(const struct kern_box *a, const struct kern_box *b)
{
    size_t row;

    if (kern__same_shape(a, b) != 0)
        return -EINVAL;
    row = (size_t)(a->ni + 2) * sizeof(double);
    for (int k = 0; k < a->nk + 2; k++)
        for (int j = 0; j < a->nj + 2; j++)
            if (memcmp(kern_at(a, 0, j, k), kern_at(b, 0, j, k), row) != 0)
                return 0;
    return 1;
}

size_t kern_box_points(const struct kern_box *b)
{
    return (size_t)(b->ni + 2) * (size_t)(b->nj + 2) * (size_t)(b->nk + 2);
}

void kern_box_pack(const struct kern_box *b, double *buf)
{
    size_t ai = (size_t)b->ni + 2;

    for (int k = 0; k < b->nk + 2; k++)
        for (int j = 0; j < b->nj + 2; j++, buf += ai)
            memcpy(buf, kern_at(b, 0, j, k), ai * sizeof(double));
}

void kern_box_unpack(struct kern_box *b, const double *buf)
{
    size_t ai = (size_t)b->ni + 2;

    for (int k = 0; k < b->nk + 2; k++)
        for (int j = 0; j < b->nj + 2; j++, buf += ai)
            memcpy(kern_at(b, 0, j, k), buf, ai * sizeof(double));
}

/* splitmix64: a good 64-bit mix in a few operations, no state to carry. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void kern_box_fill(struct kern_box *b, uint64_t seed)
{
    uint64_t ai = (uint64_t)b->ni + 2, aj = (uint64_t)b->nj + 2;

    seed = mix64(seed);
    for (int k = 0; k < b->nk + 2; k++) {
        for (int j = 0; j < b->nj + 2; j++) {
            double *row = kern_at(b, 0, j, k);
            uint64_t base = ((uint64_t)k * aj + (uint64_t)j) * ai;

            /* 53 random bits scaled to [0, 2), shifted to [-1, 1). */
            for (int i = 0; i < b->ni + 2; i++)
                row[i] = (double)(mix64(seed ^ (base + (uint64_t)i)) >> 11) * 0x1p-52 - 1.0;
        }
    }
}
