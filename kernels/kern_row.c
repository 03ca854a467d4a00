/*
 * kern_row.c - the row kernels: the stencil on one i-row, scalar and AVX2.
 *
 * Every fast kernel spends its time here, so this is the only file with
 * vector intrinsics.  The AVX2 paths are compiled with a target attribute
 * and chosen at run time (__builtin_cpu_supports), so one binary runs on
 * every x86-64 host of an office, old or new, and other architectures get
 * the portable loops.  AVX-512 is not used: the kernels are bound by memory,
 * so wider vectors run the row no faster (docs/decisions.md, Kernels).
 *
 * Bit-identity: each lane performs kern__point()'s operations in the same
 * order, with separate multiplies and adds (never FMA; the build passes
 * -ffp-contract=off and the target list leaves out "fma").
 */
#include "kern_int.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERN_HAVE_AVX2 1
#include <immintrin.h>
#else
#define KERN_HAVE_AVX2 0
#endif

static void jrow_scalar(double *restrict o, const double *restrict c,
                        const struct kern__nbr *nb, int i0, int i1, double cc, double c2)
{
    const double *restrict jm = nb->jm, *restrict jp = nb->jp;
    const double *restrict km = nb->km, *restrict kp = nb->kp, *restrict r = nb->r;

    for (int i = i0; i <= i1; i++)
        o[i] = kern__point(c[i - 1], c[i + 1], jm[i], jp[i], km[i], kp[i], r[i], cc, c2);
}

static void rbrow_scalar(double *a, const struct kern__nbr *nb, int first, int i1, double cc,
                         double c2)
{
    for (int i = first; i <= i1; i += 2)
        a[i] = kern__point(a[i - 1], a[i + 1], nb->jm[i], nb->jp[i], nb->km[i], nb->kp[i],
                           nb->r[i], cc, c2);
}

#if KERN_HAVE_AVX2

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}

#define KERN_AVX2 __attribute__((target("avx2")))

/*
 * The neighbour pointers travel as a struct of locals: the vector stores
 * below may alias anything (their types carry may_alias), so pointers read
 * through a struct in memory would be reloaded after every store.
 */
struct rows {
    const double *jm, *jp, *km, *kp, *r;
};

/*
 * The row itself is read once, four points at a time, and its i-1 and i+1
 * neighbours are shuffled out of registers: two unaligned loads per vector
 * fewer, and, for red-black in place, no load that overlaps the store just
 * made (a partly overlapping load cannot be forwarded from the store
 * buffer and stalls for the store to retire, which makes the naive
 * load-after-store form slower than the plain scalar loop).
 *
 * lo = c[i-1..i+2] from (prev, cur) = c[i-4..i-1], c[i..i+3];
 * hi = c[i+1..i+4] from (cur, next) = c[i..i+3], c[i+4..i+7].
 */
KERN_AVX2 static inline __m256d shift_down(__m256d prev, __m256d cur)
{
    return _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, cur, 0x21), cur, 0x5);
}

KERN_AVX2 static inline __m256d shift_up(__m256d cur, __m256d next)
{
    return _mm256_shuffle_pd(cur, _mm256_permute2f128_pd(cur, next, 0x21), 0x5);
}

/* kern__point() on four lanes, with the same operations in the same order. */
KERN_AVX2 static inline __m256d point4(__m256d lo, __m256d hi, struct rows n, int i,
                                       __m256d vc, __m256d vc2)
{
    __m256d x = _mm256_add_pd(lo, hi);
    __m256d y = _mm256_add_pd(_mm256_loadu_pd(n.jm + i), _mm256_loadu_pd(n.jp + i));
    __m256d z = _mm256_add_pd(_mm256_loadu_pd(n.kp + i), _mm256_loadu_pd(n.km + i));

    z = _mm256_sub_pd(z, _mm256_mul_pd(vc2, _mm256_loadu_pd(n.r + i)));
    return _mm256_mul_pd(vc, _mm256_add_pd(_mm256_add_pd(x, y), z));
}

/*
 * Walk c[i..i1] four points at a time, calling BODY with lo, hi, cur (the
 * old c[i..i+3]) and i.  Reads never go past c[i1+1], the last neighbour,
 * so nothing beyond the row (padding, or the end of the mapping) is read.
 * Leaves i at the first point not done.
 */
#define KERN_ROW_WALK(c, i1, i, BODY)                                                  \
    do {                                                                               \
        __m256d lo_ = _mm256_loadu_pd((c) + (i)-1), cur_ = _mm256_loadu_pd((c) + (i)); \
        for (; (i) + 3 <= (i1); (i) += 4) {                                            \
            __m256d next_, hi_, lo, hi, cur;                                           \
            if ((i) + 7 <= (i1) + 1) {                                                 \
                next_ = _mm256_loadu_pd((c) + (i) + 4);                                \
                hi_ = shift_up(cur_, next_);                                           \
            } else {                                                                   \
                next_ = cur_;                                                          \
                hi_ = _mm256_loadu_pd((c) + (i) + 1);                                  \
            }                                                                          \
            lo = lo_;                                                                  \
            hi = hi_;                                                                  \
            cur = cur_;                                                                \
            BODY;                                                                      \
            lo_ = shift_down(cur_, next_);                                             \
            cur_ = next_;                                                              \
        }                                                                              \
    } while (0)

KERN_AVX2 static void jrow_avx2(double *o, const double *c, const struct kern__nbr *nb, int i0,
                                int i1, double cc, double c2, int stream)
{
    const struct rows n = { nb->jm, nb->jp, nb->km, nb->kp, nb->r };
    __m256d vc = _mm256_set1_pd(cc), vc2 = _mm256_set1_pd(c2);
    int i = i0;

    if (stream) {
        /* _mm256_stream_pd needs 32-byte alignment; peel up to it. */
        while (i <= i1 && ((uintptr_t)(o + i) & 31u) != 0) {
            o[i] = kern__point(c[i - 1], c[i + 1], n.jm[i], n.jp[i], n.km[i], n.kp[i], n.r[i],
                               cc, c2);
            i++;
        }
        if (i + 3 <= i1)
            KERN_ROW_WALK(c, i1, i, (void)cur;
                          _mm256_stream_pd(o + i, point4(lo, hi, n, i, vc, vc2)));
    } else if (i + 3 <= i1) {
        KERN_ROW_WALK(c, i1, i, (void)cur;
                      _mm256_storeu_pd(o + i, point4(lo, hi, n, i, vc, vc2)));
    }
    for (; i <= i1; i++)
        o[i] = kern__point(c[i - 1], c[i + 1], n.jm[i], n.jp[i], n.km[i], n.kp[i], n.r[i], cc,
                           c2);
}

/*
 * All four lanes are computed and the lanes of the other colour are blended
 * back to their old bits.  This is safe in place: a point of one colour
 * reads only points of the other, which this sweep never changes, so the
 * lanes kept see exactly the values the scalar stride-2 loop sees, whether
 * they come from memory or from registers loaded before a store.
 */
KERN_AVX2 static void rbrow_avx2(double *a, const struct kern__nbr *nb, int i0, int i1,
                                 int first, double cc, double c2)
{
    const struct rows n = { nb->jm, nb->jp, nb->km, nb->kp, nb->r };
    __m256d vc = _mm256_set1_pd(cc), vc2 = _mm256_set1_pd(c2);
    /* Lane l holds i0 + l; it is updated when i0 + l - first is even. */
    __m256d keep = first == i0 ? _mm256_castsi256_pd(_mm256_set_epi64x(0, -1, 0, -1))
                               : _mm256_castsi256_pd(_mm256_set_epi64x(-1, 0, -1, 0));
    int i = i0;

    if (i + 3 <= i1)
        KERN_ROW_WALK(a, i1, i,
                      _mm256_storeu_pd(a + i, _mm256_blendv_pd(cur, point4(lo, hi, n, i, vc, vc2),
                                                               keep)));
    if (i <= i1)
        rbrow_scalar(a, nb, ((i - first) & 1) ? i + 1 : i, i1, cc, c2);
}

#endif

void kern__jrow(double *o, const double *c, const struct kern__nbr *nb, int i0, int i1,
                double cc, double c2, unsigned flags)
{
#if KERN_HAVE_AVX2
    if ((flags & KERN_PLAN_SIMD) && have_avx2()) {
        jrow_avx2(o, c, nb, i0, i1, cc, c2, (flags & KERN_PLAN_STREAM) != 0);
        return;
    }
#endif
    jrow_scalar(o, c, nb, i0, i1, cc, c2);
}

void kern__rbrow(double *a, const struct kern__nbr *nb, int i0, int i1, int first, double cc,
                 double c2, unsigned flags)
{
#if KERN_HAVE_AVX2
    if ((flags & KERN_PLAN_SIMD) && have_avx2()) {
        rbrow_avx2(a, nb, i0, i1, first, cc, c2);
        return;
    }
#endif
    rbrow_scalar(a, nb, first, i1, cc, c2);
}

void kern__fence(unsigned flags)
{
#if KERN_HAVE_AVX2
    if ((flags & KERN_PLAN_STREAM) && (flags & KERN_PLAN_SIMD) && have_avx2())
        _mm_sfence();
#else
    (void)flags;
#endif
}
