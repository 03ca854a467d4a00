/*
 * kern_pad.c - padding: GcdPad3D, and EucPad2D/EucPad3D as baselines.
 *
 * Seed 000 s3.2-3.4.  In a cache of C elements (a power of two), a tile of
 * TI x TJ columns is free of self-conflicts when gcd(C, BI) = TI and
 * gcd(C, BI*BJ) = TI*TJ (the thesis's eqs. 1 and 2): columns, and tile
 * planes, then overlap in the cache completely or not at all.  GcdPad3D
 * picks the tile from C alone and pads the array to the smallest odd
 * multiples of TI and TJ, which satisfies both in O(1).  EucPad picks the
 * tile from the column length by Euclid's recursion and pads columns only
 * (0..8 elements); it ignores conflicts between planes, so its grind time
 * spikes where planes collide.  Pure integer arithmetic: no floating
 * point, so every host computes the same layout from the same inputs.
 */
#include "kern_int.h"

#include <errno.h>

static int is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

/* Smallest odd multiple of t that is >= a (the thesis's
 * 2t*floor((a+3t-1)/(2t)) - t), or -ERANGE if it does not fit an int. */
static int odd_multiple(int t, int a, int *out)
{
    long long m = 2LL * t * ((a + 3LL * t - 1) / (2LL * t)) - t;

    if (m > INT32_MAX)
        return -ERANGE;
    *out = (int)m;
    return 0;
}

int kern_gcdpad3d(size_t cache_elems, int ai, int aj, struct kern_gcdpad *out)
{
    size_t quarter, ti;
    int rc;

    if (out == NULL || ai < 1 || aj < 1 || cache_elems < KERN_TK || !is_pow2(cache_elems))
        return -EINVAL;
    if (cache_elems > KERN_CACHE_MAX_ELEMS)
        return -ERANGE;
    /* TI = 2^ceil(log2 sqrt(C/4)): the smallest power of two whose square
     * is at least C/4, found without floating point. */
    quarter = cache_elems / KERN_TK;
    ti = 1;
    while (ti * ti < quarter)
        ti *= 2;
    out->ti = (int)ti;
    out->tj = (int)(cache_elems / (KERN_TK * ti));
    rc = odd_multiple(out->ti, ai, &out->bi);
    if (rc == 0)
        rc = odd_multiple(out->tj, aj, &out->bj);
    return rc;
}

int kern_eucpad2d(size_t cache_elems, int col, struct kern_euctile *out, int max)
{
    /* EucPad2D(H, Hnext, Wprev, W), unrolled: the heights are the remainders
     * of Euclid's algorithm on (C, col) and the widths its continuants, so
     * h*w <= C for every pair. */
    unsigned long long h = cache_elems, hnext = (unsigned long long)col, wprev = 0, w = 1;
    int n = 0;

    if (col < 1 || cache_elems < 1 || max < 0 || (out == NULL && max > 0))
        return -EINVAL;
    if (cache_elems > KERN_CACHE_MAX_ELEMS)
        return -ERANGE;
    for (;;) {
        unsigned long long wnext;

        if (n < max) {
            out[n].h = (int)h;
            out[n].w = (int)w;
        }
        n++;
        if (hnext == 0)
            break;
        wnext = (h / hnext) * w + wprev;
        wprev = w;
        w = wnext;
        wnext = h % hnext;
        h = hnext;
        hnext = wnext;
    }
    return n;
}

/* Is tile a cheaper than tile b by cost 1/h + 1/w?  Compared exactly as
 * (ha+wa)*hb*wb < (hb+wb)*ha*wa: h*w <= C <= 2^30, so this fits 64 bits. */
static int cheaper(const struct kern_euctile *a, const struct kern_euctile *b)
{
    unsigned long long ca = (unsigned long long)(a->h + a->w) * (unsigned long long)b->h
                            * (unsigned long long)b->w;
    unsigned long long cb = (unsigned long long)(b->h + b->w) * (unsigned long long)a->h
                            * (unsigned long long)a->w;

    return ca < cb;
}

int kern_eucpad3d(size_t cache_elems, int ai, int maxpad, struct kern_eucpad *out)
{
    /* A recursion on (C, col) has at most ~1.45 log2(C) + 2 steps. */
    struct kern_euctile cand[64], best = { 0, 0 };
    size_t quarter;
    int found = 0;

    if (out == NULL || ai < 1 || maxpad < 0 || cache_elems < KERN_TK)
        return -EINVAL;
    if (cache_elems > KERN_CACHE_MAX_ELEMS || ai > INT32_MAX - maxpad)
        return -ERANGE;
    quarter = cache_elems / KERN_TK;
    for (int pad = 0; pad <= maxpad; pad++) {
        int col = ai + pad;
        int n = kern_eucpad2d(quarter, col, cand, 64);

        if (n < 0)
            return n;
        if (n > 64)
            n = 64;
        for (int x = 0; x < n; x++) {
            if (cand[x].h > col || cand[x].w < 1)
                continue;
            if (!found || cheaper(&cand[x], &best)) {
                best = cand[x];
                out->pad = pad;
                found = 1;
            }
        }
    }
    if (!found)
        return -EINVAL;
    out->h = best.h;
    out->w = best.w;
    out->bi = ai + out->pad;
    return 0;
}
