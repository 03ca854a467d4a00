/*
 * liq_ukern.c - vmrun stencil's two kernels, Jacobi and red-black
 * Gauss-Seidel, written against liquid.h: the same numbers as the
 * built-in kernels (kernels/kern.h: the field and right-hand side hashed
 * from global coordinates, Dirichlet ghosts that keep their hashed values,
 * kern__point's operations in its order), so a job run either way gives
 * the same bits.  The right-hand side is a constant field: computed where
 * it is needed, never sent.
 *
 * Coordinates.  The built-in boxes put the grid's ghost corner at global
 * (0, 0, 0), so interior point i (liquid.h's global index) is hashed at
 * i + 1; on a Dirichlet axis of length 1 it sits at x = (i + 1) / (N + 1),
 * so i + 1 = round(x (N + 1)), ghosts (i = -1, N) included.  Red-black:
 * the built-in red points have an even sum of hashed coordinates, which
 * is liquid.h's odd one, and red goes first: colour 0 updates them.
 */
#include "liq.h"
#include "liq_ukern.h"

#include <math.h>
#include <string.h>

static double
value(int field, const double x[3], void *arg)
{
    const struct liq_ukern *k = arg;
    long g[3];

    for (int a = 0; a < 3; a++)
        g[a] = lround(x[a] * (k->n[a] + 1));
    return liq_field_value(k->seed, field == k->rhs, g[0], g[1], g[2]);
}

static int
setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    struct liq_ukern *k = arg;

    (void)lq;
    (void)iters;
    for (int a = 0; a < 3; a++)
        k->n[a] = n[a];
    liq_coeffs(n, &k->c, &k->c2);
    return 0;
}

/* AVX2 where the host has it, chosen when the program loads (as
 * kernels/kern_row.c does at run time; never FMA: -ffp-contract=off). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LIQ_UKERN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LIQ_UKERN_CLONES
#endif

/* The update of point i of row u (kern__point's operations, in its order). */
static inline __attribute__((always_inline)) double
point(const double *u, const double *r, int i, ptrdiff_t sj, ptrdiff_t sk, double c, double c2)
{
    return c * (((u[i - 1] + u[i + 1]) + (u[i - sj] + u[i + sj])) +
                ((u[i + sk] + u[i - sk]) - c2 * r[i]));
}

/* One row of the update into o. */
LIQ_UKERN_CLONES static void
row(double *restrict o, const double *restrict u, const double *restrict r, ptrdiff_t sj,
    ptrdiff_t sk, int n, double c, double c2)
{
    for (int i = 0; i < n; i++)
        o[i] = point(u, r, i, sj, sk, c, c2);
}

static int
jacobi(const struct liquid_box *b, void *arg)
{
    const struct liq_ukern *kp = arg;
    const ptrdiff_t sj = b->sj, sk = b->sk;

    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++)
            row(b->out[0] + j * sj + k * sk, b->in[0] + j * sj + k * sk,
                b->in[1] + j * sj + k * sk, sj, sk, b->n[0], kp->c, kp->c2);
    return 0;
}

/*
 * Red-black: one colour of a row in place.  Its points read only the other
 * colour's, which this phase does not write, so four points are computed
 * at a time and only the lanes of the colour (i with parity `first`; i
 * steps by four, so the lanes' parities are fixed) are kept.  The row's
 * i-1 and i+1 neighbours are shifted out of the vectors already loaded:
 * a load that partly overlaps the store just made would stall
 * (kernels/kern_row.c does the same with intrinsics).
 */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));

/* Four doubles from p, unaligned (a macro: a function returning a vector
 * type would change the ABI between the clones). */
#define LD4(v, p) memcpy(&(v), (p), sizeof(v4d))

LIQ_UKERN_CLONES static void
row_colour(double *restrict u, const double *restrict r, ptrdiff_t sj, ptrdiff_t sk, int n,
           int first, double c, double c2)
{
    int i = 0;
#if defined(__GNUC__) && !defined(__clang__) /* __builtin_shuffle */
    const v4i keep = first ? (v4i){ 0, -1, 0, -1 } : (v4i){ -1, 0, -1, 0 };
    const v4d vc = { c, c, c, c }, vc2 = { c2, c2, c2, c2 };
    v4d lo, cur;

    LD4(lo, u - 1);
    LD4(cur, u);
    for (; i + 3 < n; i += 4) {
        v4d next, hi, v, jm, jp, km, kp, rr;

        if (i + 7 <= n) {
            LD4(next, u + i + 4);
            hi = __builtin_shuffle(cur, next, (v4i){ 1, 2, 3, 4 });
        } else {
            next = cur;
            LD4(hi, u + i + 1);
        }
        LD4(jm, u + i - sj);
        LD4(jp, u + i + sj);
        LD4(km, u + i - sk);
        LD4(kp, u + i + sk);
        LD4(rr, r + i);
        v = vc * (((lo + hi) + (jm + jp)) + ((kp + km) - vc2 * rr));
        v = (v4d)(((v4i)v & keep) | ((v4i)cur & ~keep));
        memcpy(u + i, &v, sizeof(v));
        lo = __builtin_shuffle(cur, next, (v4i){ 3, 4, 5, 6 });
        cur = next;
    }
#endif
    for (i += (i & 1) != first; i < n; i += 2)
        u[i] = point(u, r, i, sj, sk, c, c2);
}

static int
redblack(const struct liquid_box *b, void *arg)
{
    const struct liq_ukern *kp = arg;
    const ptrdiff_t sj = b->sj, sk = b->sk;

    for (int k = 0; k < b->n[2]; k++)
        for (int j = 0; j < b->n[1]; j++) {
            int first = (b->lo[0] + b->lo[1] + j + b->lo[2] + k + b->colour) & 1 ? 0 : 1;

            row_colour(b->out[0] + j * sj + k * sk, b->in[1] + j * sj + k * sk, sj, sk,
                       b->n[0], first, kp->c, kp->c2);
        }
    return 0;
}

int
liq_ukern_describe(struct liquid *lq, struct liq_ukern *k, int redblack_, uint64_t seed)
{
    int u;

    k->seed = seed;
    if ((u = liquid_field(lq, "u")) < 0 || (k->rhs = liquid_field(lq, "rhs")) < 0 ||
        liquid_field_const(lq, k->rhs) != 0 || liquid_reach(lq, 1, 1, 1, LIQUID_STAR) != 0 ||
        liquid_levels(lq, redblack_ ? LIQUID_RED_BLACK : LIQUID_TWO_LEVEL) != 0 ||
        liquid_boundary_fn(lq, LIQUID_ALL, value, k) != 0 || liquid_init(lq, u, value, k) != 0 ||
        liquid_init(lq, k->rhs, value, k) != 0 || liquid_setup(lq, setup, k) != 0 ||
        liquid_update(lq, redblack_ ? redblack : jacobi, k) != 0)
        return -1;
    return 0;
}
