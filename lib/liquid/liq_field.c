/*
 * liq_field.c - the job's numbers: the initial field and right-hand side as
 * hashes of global coordinates, a cut-independent checksum, the
 * single-process reference.
 */
#include "liq.h"

#include <errno.h>
#include <string.h>

/* splitmix64's finaliser. */
static uint64_t
liq_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t
liq_point_hash(uint64_t seed, long gi, long gj, long gk)
{
    return liq_mix(liq_mix(liq_mix(seed ^ (uint64_t)gi) ^ (uint64_t)gj) ^ (uint64_t)gk);
}

/* A double in [0, 1) from the top 53 bits. */
static double
liq_unit(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

double
liq_field_value(uint64_t seed, int rhs, long gi, long gj, long gk)
{
    return liq_unit(liq_point_hash(liq_mix(seed + (rhs != 0)), gi, gj, gk));
}

void
liq_field_init(struct kern_box *u, struct kern_box *rhs, uint64_t seed)
{
    uint64_t su = liq_mix(seed), sr = liq_mix(seed + 1);

    for (int k = 0; k < u->nk + 2; k++) {
        for (int j = 0; j < u->nj + 2; j++) {
            double *pu = kern_at(u, 0, j, k), *pr = kern_at(rhs, 0, j, k);

            for (int i = 0; i < u->ni + 2; i++) {
                long gi = u->oi + i, gj = u->oj + j, gk = u->ok + k;

                pu[i] = liq_unit(liq_point_hash(su, gi, gj, gk));
                pr[i] = liq_unit(liq_point_hash(sr, gi, gj, gk));
            }
        }
    }
}

uint64_t
liq_field_checksum(const struct kern_box *b)
{
    uint64_t sum = 0;

    for (int k = 1; k <= b->nk; k++) {
        for (int j = 1; j <= b->nj; j++) {
            const double *p = kern_at(b, 0, j, k);

            for (int i = 1; i <= b->ni; i++) {
                uint64_t bits;

                memcpy(&bits, &p[i], sizeof(bits));
                sum += liq_mix(liq_point_hash(0, b->oi + i, b->oj + j, b->ok + k) ^ bits);
            }
        }
    }
    return sum;
}

int
liq_reference(const int n[3], enum liq_kernel kernel, int iters, uint64_t seed,
              struct kern_box *out)
{
    struct kern_box v, rhs;
    double c, c2;
    int rc;

    if (n == NULL || out == NULL || iters < 0 || (kernel != LIQ_JACOBI && kernel != LIQ_RBGS))
        return -EINVAL;
    liq_coeffs(n, &c, &c2);
    if ((rc = kern_box_alloc(out, n[0], n[1], n[2], 0, 0)) != 0)
        return rc;
    if ((rc = kern_box_alloc(&rhs, n[0], n[1], n[2], 0, 0)) != 0) {
        kern_box_free(out);
        return rc;
    }
    liq_field_init(out, &rhs, seed);
    if (kernel == LIQ_RBGS) {
        for (int t = 0; t < iters; t++) {
            kern_rbgs_ref(out, &rhs, c, c2, KERN_RED);
            kern_rbgs_ref(out, &rhs, c, c2, KERN_BLACK);
        }
    } else if (iters > 0) {
        struct kern_box *a = out, *b = &v, *x;

        if ((rc = kern_box_alloc(&v, n[0], n[1], n[2], 0, 0)) != 0) {
            kern_box_free(&rhs);
            kern_box_free(out);
            return rc;
        }
        kern_box_copy(&v, out); /* the Dirichlet ghosts */
        for (int t = 0; t < iters; t++) {
            kern_jacobi_ref(b, a, &rhs, c, c2);
            x = a;
            a = b;
            b = x;
        }
        if (a != out)
            kern_box_copy(out, a);
        kern_box_free(&v);
    }
    kern_box_free(&rhs);
    return 0;
}
