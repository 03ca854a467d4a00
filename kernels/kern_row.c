/*
 * kern_row.c - the row kernels: the stencil on one i-row, scalar and AVX2.
 *
 * Every fast kernel spends its time here, so this is the only file with
 * vector intrinsics.  The AVX2 paths are compiled with a target attribute
 * and chosen at run time (__builtin_cpu_supports), so one binary runs on
 * every x86-64 host of an office, old or new, and other architectures get
 * the portable loops.  AVX-512 is not used: on the Zen 4 we measured it ran
 * the row no faster than AVX2, and the kernels are bound by memory anyway.
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

KERN_AVX2 static inline __m256d point4(const double *c, const struct kern__nbr *nb, int i,
                                       __m256d vc, __m256d vc2)
{
    __m256d x = _mm256_add_pd(_mm256_loadu_pd(c + i - 1), _mm256_loadu_pd(c + i + 1));
    __m256d y = _mm256_add_pd(_mm256_loadu_pd(nb->jm + i), _mm256_loadu_pd(nb->jp + i));
    __m256d z = _mm256_add_pd(_mm256_loadu_pd(nb->kp + i), _mm256_loadu_pd(nb->km + i));

    z = _mm256_sub_pd(z, _mm256_mul_pd(vc2, _mm256_loadu_pd(nb->r + i)));
    return _mm256_mul_pd(vc, _mm256_add_pd(_mm256_add_pd(x, y), z));
}

KERN_AVX2 static void jrow_avx2(double *o, const double *c, const struct kern__nbr *nb, int i0,
                                int i1, double cc, double c2, int stream)
{
    __m256d vc = _mm256_set1_pd(cc), vc2 = _mm256_set1_pd(c2);
    int i = i0;

    if (stream) {
        /* _mm256_stream_pd needs 32-byte alignment; peel up to it. */
        while (i <= i1 && ((uintptr_t)(o + i) & 31u) != 0) {
            o[i] = kern__point(c[i - 1], c[i + 1], nb->jm[i], nb->jp[i], nb->km[i], nb->kp[i],
                               nb->r[i], cc, c2);
            i++;
        }
        for (; i + 3 <= i1; i += 4)
            _mm256_stream_pd(o + i, point4(c, nb, i, vc, vc2));
    } else {
        for (; i + 3 <= i1; i += 4)
            _mm256_storeu_pd(o + i, point4(c, nb, i, vc, vc2));
    }
    for (; i <= i1; i++)
        o[i] = kern__point(c[i - 1], c[i + 1], nb->jm[i], nb->jp[i], nb->km[i], nb->kp[i],
                           nb->r[i], cc, c2);
}

/*
 * All four lanes are computed and the lanes of the other colour are blended
 * back to their old bits.  This is safe in place: a point of one colour
 * reads only points of the other, which this sweep never changes, so the
 * lanes kept see exactly the values the scalar stride-2 loop sees.
 */
KERN_AVX2 static void rbrow_avx2(double *a, const struct kern__nbr *nb, int i0, int i1,
                                 int first, double cc, double c2)
{
    __m256d vc = _mm256_set1_pd(cc), vc2 = _mm256_set1_pd(c2);
    /* Lane l holds i0 + l; it is updated when i0 + l - first is even. */
    __m256d keep = first == i0 ? _mm256_castsi256_pd(_mm256_set_epi64x(0, -1, 0, -1))
                               : _mm256_castsi256_pd(_mm256_set_epi64x(-1, 0, -1, 0));
    int i = i0;

    for (; i + 3 <= i1; i += 4) {
        __m256d v = point4(a, nb, i, vc, vc2);
        _mm256_storeu_pd(a + i, _mm256_blendv_pd(_mm256_loadu_pd(a + i), v, keep));
    }
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
