/*
 * decomp_count.c: messages and bytes per owner and direction (seed 001
 * requirement 7, section 5.6). Owner i sends one message in direction k to
 * every other owner holding a k-neighbour of one of its cells, carrying each
 * such face; wrap-around neighbours count in their own direction, as on the
 * thesis's torus. Two counters give the same links: one walks every cell
 * face (any layout), the other intersects box faces (O(p^2), and the only one
 * that works on fractional boxes). The tests hold them to each other.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int
decomp__counts_alloc(struct decomp_counts *c, int nowners, int ndirs)
{
    memset(c, 0, sizeof *c);
    c->nowners = nowners;
    c->ndirs = ndirs;
    c->msgs = calloc((size_t)nowners * ndirs, sizeof *c->msgs);
    c->faces = calloc((size_t)nowners * ndirs, sizeof *c->faces);
    if (c->msgs == NULL || c->faces == NULL) {
        decomp_counts_free(c);
        return -ENOMEM;
    }
    return 0;
}

void
decomp__counts_tally(struct decomp_counts *c)
{
    for (size_t l = 0; l < c->nlinks; l++) {
        const struct decomp_link *lk = &c->link[l];
        size_t at = (size_t)lk->from * c->ndirs + lk->dir;
        c->msgs[at]++;
        c->faces[at] += lk->faces;
    }
}

void
decomp_counts_free(struct decomp_counts *c)
{
    if (c == NULL)
        return;
    free(c->msgs);
    free(c->faces);
    free(c->link);
    memset(c, 0, sizeof *c);
}

uint64_t
decomp_counts_messages(const struct decomp_counts *c)
{
    return c ? (uint64_t)c->nlinks : 0;
}

uint64_t
decomp_counts_latency_units(const struct decomp_counts *c, unsigned dirs)
{
    uint64_t sum = 0;

    if (c == NULL || c->msgs == NULL)
        return 0;
    for (int k = 0; k < c->ndirs; k++) {
        if (dirs != 0 && !(dirs & (1u << k)))
            continue;
        uint32_t mx = 0;
        for (int i = 0; i < c->nowners; i++)
            if (c->msgs[(size_t)i * c->ndirs + k] > mx)
                mx = c->msgs[(size_t)i * c->ndirs + k];
        sum += mx;
    }
    return sum;
}

static int
cmp_link(const void *pa, const void *pb)
{
    const struct decomp_link *a = pa, *b = pb;

    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->dir != b->dir)
        return a->dir < b->dir ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

/*
 * Open-addressing map from (from, dir, to) to faces: memory follows the
 * number of distinct messages, not p^2, so scatter over many owners and a
 * block layout over thousands both stay cheap.
 */
struct linkmap {
    uint64_t *key;              /* packed key + 1; 0 = empty */
    double *faces;
    size_t cap, used;
};

static uint64_t
mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int
map_grow(struct linkmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *key = calloc(cap, sizeof *key);
    double *faces = malloc(cap * sizeof *faces);

    if (key == NULL || faces == NULL) {
        free(key);
        free(faces);
        return -ENOMEM;
    }
    for (size_t s = 0; s < m->cap; s++) {
        if (m->key[s] == 0)
            continue;
        size_t h = mix(m->key[s]) & (cap - 1);
        while (key[h] != 0)
            h = (h + 1) & (cap - 1);
        key[h] = m->key[s];
        faces[h] = m->faces[s];
    }
    free(m->key);
    free(m->faces);
    m->key = key;
    m->faces = faces;
    m->cap = cap;
    return 0;
}

static int
map_add(struct linkmap *m, uint64_t k, double faces, size_t *last)
{
    k += 1;
    /* Consecutive faces along a boundary usually hit the same link. */
    if (*last < m->cap && m->key[*last] == k) {
        m->faces[*last] += faces;
        return 0;
    }
    if (2 * (m->used + 1) > m->cap) {
        int rc = map_grow(m);
        if (rc < 0)
            return rc;
    }
    size_t h = mix(k) & (m->cap - 1);
    while (m->key[h] != 0 && m->key[h] != k)
        h = (h + 1) & (m->cap - 1);
    if (m->key[h] == 0) {
        m->key[h] = k;
        m->faces[h] = 0;
        m->used++;
    }
    m->faces[h] += faces;
    *last = h;
    return 0;
}

int
decomp_count(const struct decomp_grid *g, const int32_t *owner, int nowners,
             struct decomp_counts *out)
{
    int rc;

    if (out == NULL)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if ((rc = decomp_grid_check(g)) < 0)
        return rc;
    if (owner == NULL || nowners < 1 || nowners > DECOMP_MAX_OWNERS)
        return -EINVAL;
    size_t n = decomp_grid_cells(g);
    for (size_t c = 0; c < n; c++)
        if (owner[c] < 0 || owner[c] >= nowners)
            return -EINVAL;

    int ndirs = 2 * g->ndim;
    uint64_t P = (uint64_t)nowners;
    struct linkmap m = { 0 };
    size_t last = SIZE_MAX;
    if ((rc = map_grow(&m)) < 0)
        return rc;

    size_t stride[DECOMP_MAX_DIM] = { 1, g->dim[0], (size_t)g->dim[0] * g->dim[1] };
    for (int a = 0; a < g->ndim; a++) {
        bool wrap = g->periodic & (1u << a);
        uint32_t xyz[DECOMP_MAX_DIM];
        last = SIZE_MAX;
        for (xyz[2] = 0; xyz[2] < g->dim[2]; xyz[2]++)
            for (xyz[1] = 0; xyz[1] < g->dim[1]; xyz[1]++)
                for (xyz[0] = 0; xyz[0] < g->dim[0]; xyz[0]++) {
                    size_t c = decomp__index(g, xyz[0], xyz[1], xyz[2]), nb;
                    if (xyz[a] + 1 < g->dim[a])
                        nb = c + stride[a];
                    else if (wrap)
                        nb = c - (size_t)(g->dim[a] - 1) * stride[a];
                    else
                        continue;
                    uint64_t i = (uint64_t)owner[c], j = (uint64_t)owner[nb];
                    if (i == j)
                        continue;
                    /* i sends toward +a to j; j sends toward -a to i. */
                    if ((rc = map_add(&m, (i * ndirs + 2 * a + 1) * P + j, 1, &last)) < 0 ||
                        (rc = map_add(&m, (j * ndirs + 2 * a) * P + i, 1, &last)) < 0)
                        goto done;
                }
    }

    if ((rc = decomp__counts_alloc(out, nowners, ndirs)) < 0)
        goto done;
    out->link = malloc((m.used ? m.used : 1) * sizeof *out->link);
    if (out->link == NULL) {
        decomp_counts_free(out);
        rc = -ENOMEM;
        goto done;
    }
    for (size_t s = 0; s < m.cap; s++) {
        if (m.key[s] == 0)
            continue;
        uint64_t k = m.key[s] - 1;
        struct decomp_link *lk = &out->link[out->nlinks++];
        lk->to = (int32_t)(k % P);
        k /= P;
        lk->dir = (int)(k % (uint64_t)ndirs);
        lk->from = (int32_t)(k / (uint64_t)ndirs);
        lk->faces = m.faces[s];
    }
    qsort(out->link, out->nlinks, sizeof *out->link, cmp_link);
    decomp__counts_tally(out);
    rc = 0;
done:
    free(m.key);
    free(m.faces);
    return rc;
}

int
decomp__count_dboxes(const struct decomp_grid *g, const struct decomp_xbox *box, int nowners,
                     double eps, struct decomp_counts *out)
{
    int ndirs = 2 * g->ndim, rc;
    size_t cap = 64, nl = 0;
    struct decomp_link *link = malloc(cap * sizeof *link);

    if (link == NULL)
        return -ENOMEM;
    double tol[DECOMP_MAX_DIM], area[DECOMP_MAX_DIM];
    for (int a = 0; a < DECOMP_MAX_DIM; a++)
        tol[a] = eps * g->dim[a];
    for (int a = 0; a < DECOMP_MAX_DIM; a++) {
        area[a] = eps;
        for (int b = 0; b < g->ndim; b++)
            if (b != a)
                area[a] *= g->dim[b];
    }

    for (int a = 0; a < g->ndim; a++) {
        bool wrap = g->periodic & (1u << a);
        double D = g->dim[a];
        for (int i = 0; i < nowners; i++) {
            const struct decomp_xbox *bi = &box[i];
            for (int j = 0; j < nowners; j++) {
                const struct decomp_xbox *bj = &box[j];
                if (i == j)
                    continue;
                bool meet = fabs(bi->hi[a] - bj->lo[a]) <= tol[a] ||
                            (wrap && fabs(bi->hi[a] - D) <= tol[a] && fabs(bj->lo[a]) <= tol[a]);
                if (!meet)
                    continue;
                /* Both boxes need volume and their faces a common area. */
                if (bi->hi[a] - bi->lo[a] <= tol[a] || bj->hi[a] - bj->lo[a] <= tol[a])
                    continue;
                double ov = 1;
                for (int b = 0; b < g->ndim; b++) {
                    if (b == a)
                        continue;
                    double lo = fmax(bi->lo[b], bj->lo[b]), hi = fmin(bi->hi[b], bj->hi[b]);
                    ov *= hi > lo ? hi - lo : 0;
                }
                if (ov <= area[a])
                    continue;
                if (nl + 2 > cap) {
                    cap *= 2;
                    struct decomp_link *nlk = realloc(link, cap * sizeof *link);
                    if (nlk == NULL) {
                        free(link);
                        return -ENOMEM;
                    }
                    link = nlk;
                }
                link[nl++] = (struct decomp_link){ i, j, 2 * a + 1, ov };
                link[nl++] = (struct decomp_link){ j, i, 2 * a, ov };
            }
        }
    }
    if ((rc = decomp__counts_alloc(out, nowners, ndirs)) < 0) {
        free(link);
        return rc;
    }
    qsort(link, nl, sizeof *link, cmp_link);
    out->link = link;
    out->nlinks = nl;
    decomp__counts_tally(out);
    return 0;
}

int
decomp_count_boxes(const struct decomp_grid *g, const struct decomp_box *box, int nowners,
                   struct decomp_counts *out)
{
    int rc;

    if (out == NULL)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if ((rc = decomp_grid_check(g)) < 0)
        return rc;
    if (box == NULL || nowners < 1 || nowners > DECOMP_MAX_OWNERS)
        return -EINVAL;
    struct decomp_xbox *xb = malloc((size_t)nowners * sizeof *xb);
    if (xb == NULL)
        return -ENOMEM;
    for (int i = 0; i < nowners; i++)
        for (int a = 0; a < DECOMP_MAX_DIM; a++) {
            if (box[i].lo[a] > box[i].hi[a] || box[i].hi[a] > g->dim[a]) {
                free(xb);
                return -EINVAL;
            }
            xb[i].lo[a] = box[i].lo[a];
            xb[i].hi[a] = box[i].hi[a];
        }
    /* Integer corners are exact in doubles: no tolerance. */
    rc = decomp__count_dboxes(g, xb, nowners, 0, out);
    free(xb);
    return rc;
}

int
decomp_count_xboxes(const struct decomp_grid *g, const struct decomp_xbox *box, int nowners,
                    struct decomp_counts *out)
{
    int rc;

    if (out == NULL)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if ((rc = decomp_grid_check(g)) < 0)
        return rc;
    if (box == NULL || nowners < 1 || nowners > DECOMP_MAX_OWNERS)
        return -EINVAL;
    for (int i = 0; i < nowners; i++)
        for (int a = 0; a < DECOMP_MAX_DIM; a++)
            if (!isfinite(box[i].lo[a]) || !isfinite(box[i].hi[a]) ||
                box[i].lo[a] > box[i].hi[a] || box[i].lo[a] < 0 || box[i].hi[a] > g->dim[a])
                return -EINVAL;
    return decomp__count_dboxes(g, box, nowners, 1e-9, out);
}
