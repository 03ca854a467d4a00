/*
 * liq_probe.c - the speed probe (step 1 of the liquid runtime, seed 001):
 * the worker runs the job's own kernel, in the job's blocks, on a box the
 * size of one quantum laid out as a region would be, and tells the master
 * its updates per second of wall clock and of CPU time and the cache it
 * tiles for.  The decomposition weighs hosts by these speeds.
 */
#include "liq_int.h"

#include <string.h>

#include "pvm3.h"

/* The program's faces as they were before the probe. */
static void
probe_faces_back(struct liquid *lq, const enum liquid_bc bc[6], const double bcval[6],
                 const liquid_value_fn bcfn[6])
{
    memcpy(lq->bc, bc, 6 * sizeof(bc[0]));
    memcpy(lq->bcval, bcval, 6 * sizeof(bcval[0]));
    memcpy(lq->bcfn, bcfn, 6 * sizeof(bcfn[0]));
}

void
liq_probe(struct liq_worker *w)
{
    int ext[3], kernel, lo[3] = { 0, 0, 0 }, none[6] = { 0 }, rc;
    double seconds, t0, c0 = 0, t, ups, ups_cpu;
    long sweeps = 0;
    struct liq_region q;

    pvm_upkint(ext, 3, 1);
    pvm_upkint(&kernel, 1, 1);
    pvm_upkdouble(&seconds, 1, 1);
    pvm_upkint(&w->halo, 1, 1);
    if (kernel != LIQ_JACOBI && kernel != LIQ_RBGS && !liq_kernel_user(kernel)) {
        liq_fail(w, "probe: bad kernel %d", kernel);
        return;
    }
    if (liq_kernel_user(kernel) && liq_user_spec == NULL) {
        liq_fail(w, "probe: a program's own update, but this worker is not that program");
        return;
    }
    if (w->halo < 1 || w->halo > LIQ_MAX_HALO) {
        liq_fail(w, "probe: bad halo %d", w->halo);
        return;
    }
    for (int a = 0; a < 3; a++)
        if (ext[a] < 1 || ext[a] > LIQ_MAX_EXTENT) {
            liq_fail(w, "probe: bad box %dx%dx%d", ext[0], ext[1], ext[2]);
            return;
        }
    w->kernel = (enum liq_kernel)kernel;
    w->user = liq_kernel_user(w->kernel) ? liq_user_spec : NULL;
    w->nstate = w->user != NULL ? liq_user_nboxes(w->user) : 1;
    w->it = 0;
    memset(&w->g, 0, sizeof(w->g));
    memcpy(w->g.n, ext, sizeof(w->g.n));
    /* The probe's box is a grid of its own to the program's setup.  Its
     * ends are walls: a periodic axis of a box smaller than the update's
     * reach would wrap onto itself.  The speed is the update's all the
     * same; the faces are the program's again after the probe. */
    enum liquid_bc bc[6];
    double bcval[6];
    liquid_value_fn bcfn[6];

    if (w->user != NULL && liq_user_setup(liq_user_spec, ext, w->halo) != 0) {
        liq_fail(w, "probe: %s", liq_user_spec->err);
        return;
    }
    /* (after the setup, which may set the faces itself) */
    if (w->user != NULL) {
        memcpy(bc, w->user->bc, sizeof(bc));
        memcpy(bcval, w->user->bcval, sizeof(bcval));
        memcpy(bcfn, w->user->bcfn, sizeof(bcfn));
        for (int f = 0; f < 6; f++)
            if (liq_user_spec->bc[f] == LIQUID_PERIODIC) {
                liq_user_spec->bc[f] = LIQUID_DIRICHLET;
                liq_user_spec->bcval[f] = 0;
                liq_user_spec->bcfn[f] = NULL;
            }
    }
    w->seed = 1;
    liq_coeffs(ext, &w->c, &w->c2);
    /* A box with no halo, run in the job's blocks: the kernel's speed (an
     * update of reach r has r ghost layers to read). */
    for (int a = 0; w->user != NULL && a < 3; a++)
        none[2 * a] = none[2 * a + 1] = liq_user_radius(w->user, ext, a) > 1
                                            ? liq_user_radius(w->user, ext, a) - 1 : 0;
    if ((rc = liq_region_make(w, &q, lo, ext, none, 1, 0, 0)) != 0) {
        liq_region_clear(&q);
        if (w->user != NULL)
            probe_faces_back(liq_user_spec, bc, bcval, bcfn);
        liq_fail(w, "probe: cannot allocate a %dx%dx%d box: %s", ext[0], ext[1], ext[2],
                 strerror(-rc));
        return;
    }
    /* One untimed iteration faults the pages in; then iterate for the time. */
    for (int warm = 1;; warm = 0) {
        t0 = liq_now();
        c0 = liq_cpu_now();
        do {
            liq_sweep_region(w, &q, w->halo);
            sweeps += w->halo;
            t = liq_now() - t0;
        } while (!warm && (t < seconds || sweeps < 3));
        if (!warm)
            break;
        sweeps = 0;
    }
    ups = (double)ext[0] * ext[1] * ext[2] * (double)sweeps / t;
    c0 = liq_cpu_now() - c0;
    ups_cpu = c0 > 0 ? (double)ext[0] * ext[1] * ext[2] * (double)sweeps / c0 : ups;
    liq_region_clear(&q);
    if (w->user != NULL)
        probe_faces_back(liq_user_spec, bc, bcval, bcfn);
    double cache = (double)w->cache;

    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&ups, 1, 1);
    pvm_pkdouble(&cache, 1, 1);
    pvm_pkdouble(&ups_cpu, 1, 1);
    pvm_send(w->master, LIQ_TAG_PROBED);
}
