/*
 * liq_uref.c - the one-process reference of a program's own stencil: the
 * whole grid as one box, the periodic ghosts wrapped before every phase,
 * the reductions' partials quantum by quantum in id order as the runtime
 * computes them.  What --verify compares a job's bits with.
 */
#include "liq.h"
#include "liq_user.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
liq_user_stop(const struct liquid *lq, const double *red, const int *ran)
{
    return lq->until >= 0 && ran[lq->until] && red[lq->until] < lq->tol;
}

/* The due reductions at iteration it of the whole-grid boxes u. */
static int
liq_uref_reduce(const struct liquid *lq, const struct liq_geom *g, struct liq_ubox *u, int it,
                const int *due, const int pad[3], double *part, double *red)
{
    struct kern_box view[LIQUID_MAX_FIELDS], *v[LIQUID_MAX_FIELDS];

    liq_ubox_bounds(u, lq, g->n, 1);
    for (int q = 0; q < g->nquanta; q++) {
        int lo[3], hi[3], n[3], e[6];

        liq_quantum_extent(g, q, lo, hi);
        for (int a = 0; a < 3; a++) {
            n[a] = hi[a] - lo[a];
            e[2 * a] = lo[a] + pad[a];
            e[2 * a + 1] = 0;
        }
        for (int f = 0; f < lq->nf; f++) {
            liq_quantum_view(u->lv[0][f], e, n, &view[f]);
            v[f] = &view[f];
        }
        int rc = liq_ubox_reduce(lq, g->n, v, it, due, part + (size_t)q * lq->nred);

        if (rc != 0)
            return rc;
    }
    for (int r = 0; r < lq->nred; r++)
        if (due[r])
            red[r] = liq_user_combine(lq, r, part, g->nquanta, lq->nred);
    return 0;
}

int
liq_user_reference(const struct liquid *lq, const struct liq_geom *g, int iters,
                   struct kern_box *out, int *done, double *red, int *redset)
{
    struct kern_box proto;
    struct liq_ubox u;
    double *part = NULL;
    int rc, it, pad[3], ext[6];

    memset(out, 0, (size_t)lq->nf * sizeof(*out));
    for (int r = 0; r < lq->nred; r++)
        redset[r] = 0;
    /* The grid and, beyond each end, the ghost layers its reach needs. */
    for (int a = 0; a < 3; a++) {
        pad[a] = liq_user_radius(lq, g->n, a) > 1 ? liq_user_radius(lq, g->n, a) - 1 : 0;
        /* The pad is ghosts, not points to compute: past a periodic end
         * they are copies (liq_box_wrap), whose update would read R
         * layers further than the box holds. */
        ext[2 * a] = ext[2 * a + 1] = pad[a];
    }
    memset(&proto, 0, sizeof(proto));
    proto.ni = g->n[0] + 2 * pad[0];
    proto.nj = g->n[1] + 2 * pad[1];
    proto.nk = g->n[2] + 2 * pad[2];
    proto.bi = proto.ni + 2;
    proto.bj = proto.nj + 2;
    proto.oi = -pad[0];
    proto.oj = -pad[1];
    proto.ok = -pad[2];
    rc = liq_ubox_make(&u, lq, g->n, &proto, 0);
    if (rc == 0 && lq->nred > 0 &&
        (part = calloc((size_t)g->nquanta * (size_t)lq->nred, sizeof(double))) == NULL)
        rc = -ENOMEM;
    for (it = 0; rc == 0 && it < iters;) {
        int due[LIQUID_MAX_REDUCTIONS], any = 0;

        rc = liq_ubox_block(&u, lq, g->n, ext, it, 1, 1, 1);
        it++;
        for (int r = 0; r < lq->nred; r++)
            any |= due[r] = liq_user_due(lq, r, it, iters);
        if (rc != 0 || !any)
            continue;
        if ((rc = liq_uref_reduce(lq, g, &u, it, due, pad, part, red)) != 0)
            break;
        for (int r = 0; r < lq->nred; r++)
            redset[r] |= due[r];
        if (liq_user_stop(lq, red, due))
            break;
    }
    *done = it;
    free(part);
    for (int f = 0; rc == 0 && f < lq->nf; f++) {
        if ((rc = kern_box_alloc(&out[f], g->n[0], g->n[1], g->n[2], 0, 0)) != 0)
            break;
        out[f].oi = out[f].oj = out[f].ok = 0;
        /* its points and one ghost layer around them */
        for (int k = 0; k <= g->n[2] + 1; k++)
            for (int j = 0; j <= g->n[1] + 1; j++)
                memcpy(kern_at(&out[f], 0, j, k),
                       kern_at(u.lv[0][f], pad[0], j + pad[1], k + pad[2]),
                       (size_t)(g->n[0] + 2) * sizeof(double));
    }
    liq_ubox_free(&u);
    return rc;
}
