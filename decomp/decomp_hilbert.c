/*
 * decomp_hilbert.c: contiguous point along a Hilbert curve (2D or 3D), the
 * order seed 000 uses for quanta. Grids whose sides are not powers of two are
 * embedded in the enclosing power-of-two square or cube and the cells are
 * taken in the order of their curve index there; the order keeps the curve's
 * locality but consecutive cells may be more than one step apart. The index
 * conversion is J. Skilling's transpose form ("Programming the Hilbert
 * curve", AIP Conf. Proc. 707, 2004).
 */
#include "decomp.h"
#include "decomp_int.h"

#include <stdlib.h>

/* Hilbert transpose -> axes, in place (Skilling's TransposetoAxes). */
static void
transpose_to_axes(uint32_t *X, int b, int n)
{
    uint32_t N = 2u << (b - 1), P, Q, t;

    t = X[n - 1] >> 1;
    for (int i = n - 1; i > 0; i--)
        X[i] ^= X[i - 1];
    X[0] ^= t;
    for (Q = 2; Q != N; Q <<= 1) {
        P = Q - 1;
        for (int i = n - 1; i >= 0; i--) {
            if (X[i] & Q) {
                X[0] ^= P;
            } else {
                t = (X[0] ^ X[i]) & P;
                X[0] ^= t;
                X[i] ^= t;
            }
        }
    }
}

/* Axes -> Hilbert transpose, in place (Skilling's AxestoTranspose). */
static void
axes_to_transpose(uint32_t *X, int b, int n)
{
    uint32_t M = 1u << (b - 1), P, Q, t;

    for (Q = M; Q > 1; Q >>= 1) {
        P = Q - 1;
        for (int i = 0; i < n; i++) {
            if (X[i] & Q) {
                X[0] ^= P;
            } else {
                t = (X[0] ^ X[i]) & P;
                X[0] ^= t;
                X[i] ^= t;
            }
        }
    }
    for (int i = 1; i < n; i++)
        X[i] ^= X[i - 1];
    t = 0;
    for (Q = M; Q > 1; Q >>= 1)
        if (X[n - 1] & Q)
            t ^= Q - 1;
    for (int i = 0; i < n; i++)
        X[i] ^= t;
}

/* The index's bits, most significant first, are X[0]'s top bit, X[1]'s top
 * bit, ..., then the next bit of each. */
static uint64_t
transpose_to_index(const uint32_t *X, int b, int n)
{
    uint64_t h = 0;

    for (int j = b - 1; j >= 0; j--)
        for (int i = 0; i < n; i++)
            h = (h << 1) | ((X[i] >> j) & 1u);
    return h;
}

static void
index_to_transpose(uint64_t h, uint32_t *X, int b, int n)
{
    for (int i = 0; i < n; i++)
        X[i] = 0;
    for (int j = 0; j < b; j++)
        for (int i = n - 1; i >= 0; i--) {
            X[i] |= (uint32_t)(h & 1u) << j;
            h >>= 1;
        }
}

static int
curve_bits(const struct decomp_grid *g)
{
    uint32_t m = 1;

    for (int a = 0; a < g->ndim; a++)
        if (g->dim[a] > m)
            m = g->dim[a];
    int b = 1;
    while ((1u << b) < m)
        b++;
    return b;
}

struct keyed {
    uint64_t key;
    uint32_t cell;
};

static int
cmp_keyed(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;

    return (a->key > b->key) - (a->key < b->key);
}

int
decomp_hilbert_order(const struct decomp_grid *g, uint32_t *order)
{
    return decomp__hilbert_order_mode(g, order, -1);
}

int
decomp__hilbert_order_mode(const struct decomp_grid *g, uint32_t *order, int walk)
{
    int rc = decomp_grid_check(g);

    if (rc < 0)
        return rc;
    if (order == NULL)
        return -EINVAL;

    int n = g->ndim, b = curve_bits(g);
    size_t cells = decomp_grid_cells(g);
    uint64_t span = 1ull << (n * b);
    uint32_t X[DECOMP_MAX_DIM];

    /* Walking the whole curve costs its length; when the grid fills most of
     * it that is cheaper than sorting, otherwise sort the cells by index.
     * Both give the same order, which the tests check. */
    if (walk < 0)
        walk = span <= 8 * (uint64_t)cells;
    if (walk) {
        size_t k = 0;
        for (uint64_t h = 0; h < span; h++) {
            index_to_transpose(h, X, b, n);
            transpose_to_axes(X, b, n);
            if (X[0] >= g->dim[0] || X[1] >= g->dim[1] || (n == 3 && X[2] >= g->dim[2]))
                continue;
            order[k++] = (uint32_t)decomp__index(g, X[0], X[1], n == 3 ? X[2] : 0);
        }
        return 0;
    }

    struct keyed *kv = malloc(cells * sizeof *kv);
    if (kv == NULL)
        return -ENOMEM;
    for (size_t c = 0; c < cells; c++) {
        uint32_t xyz[DECOMP_MAX_DIM];
        decomp__coords(g, c, xyz);
        for (int i = 0; i < n; i++)
            X[i] = xyz[i];
        axes_to_transpose(X, b, n);
        kv[c].key = transpose_to_index(X, b, n);
        kv[c].cell = (uint32_t)c;
    }
    /* Keys are distinct, so qsort's instability cannot change the order. */
    qsort(kv, cells, sizeof *kv, cmp_keyed);
    for (size_t c = 0; c < cells; c++)
        order[c] = kv[c].cell;
    free(kv);
    return 0;
}

int
decomp__hilbert_place(const struct decomp_grid *g, const struct decomp_spec *s, int32_t *owner)
{
    size_t cells = decomp_grid_cells(g);
    int p = s->nowners;
    uint32_t *order = malloc(cells * sizeof *order);
    double *target = malloc(((size_t)p + 1) * sizeof *target);
    int rc = -ENOMEM;

    if (order == NULL || target == NULL)
        goto done;
    if ((rc = decomp_hilbert_order(g, order)) < 0)
        goto done;
    decomp__targets(s->speed, NULL, p, decomp__total_weight(g), target);
    struct decomp__cursor cur = { target, p, 0, 0 };
    for (size_t r = 0; r < cells; r++)
        owner[order[r]] = decomp__cursor_take(&cur, decomp__w(g, order[r]));
    rc = 0;
done:
    free(target);
    free(order);
    return rc;
}
