/*
 * liq_master.c - a stencil job's master, liq_stencil_main (docs/architecture.md,
 * "The liquid runtime": steps 1 to 4 and 8; seeds 000 and 001): benchmark the hosts, cut
 * the grid into quanta, rank the decompositions with the measured speeds,
 * lambda and tau, place the quanta by the best (or the one asked for), run
 * the job with a live progress line, gather and verify, and report
 * (summary and JSON).  `vmrun stencil` is this, and so is a user's own
 * program.  The VM session is liq_vm.c's, the JOB message
 * liq_master_job.c's; balancing and reclaim during the run are
 * liq_master_balance.c's.
 */
#include "liq_master.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lvm_err.h"
#include "lvm_load.h"
#include "pvm3.h"
#include "wire.h"

static const char *const stencil_synopsis[] = {
    "[--grid N|NXxNYxNZ] [--iters K] [--kernel jacobi|rbgs]",
    "[--quanta Q] [--hosts NAME,...] [--tasks-per-host T]",
    "[--decomp METHOD|auto] [--verify] [--json FILE] [--output FILE]",
    "[--job FILE] [--seed S] [--network shared|switched]",
    "[--probe-seconds S] [--quiet] [--balance on|off] [--epoch K]",
    "[--heavy K] [--min-gain F] [--reclaim on|off]",
    "[--reclaim-below F] [--reclaim-after S] [--rejoin-above F]",
    "[--rejoin-after S] [--svg FILE] [--halo H|auto]",
    "[--png FILE [--slice x|y|z=K] [--field NAME]]",
    "[--trace FILE] [--hints FILE] [--checkpoint-every K|auto] [--checkpoint-share F]",
    "[--checkpoint DIR [--checkpoint-interval S]] [--resume DIR]",
    "[--worker-timeout S|auto]",
    NULL
};

static const char stencil_text[] =
    "\n"
    "  Run a 3D 7-point stencil job on the virtual machine of LIQUIDVM_HOME: probe\n"
    "  every host's speed and the ring network (lambda, tau), cut the grid into Q\n"
    "  quanta per host, rank the decompositions by predicted time, place the quanta\n"
    "  by the best, run, report.\n"
    "\n"
    "  --grid N|NXxNYxNZ    grid of interior points (default 64)\n"
    "  --iters K            iterations (default 20)\n"
    "  --kernel K           jacobi (default) or rbgs (red-black Gauss-Seidel)\n"
    "  --quanta Q           quanta per host (default 8)\n"
    "  --hosts LIST         run on these hosts only (default: every host)\n"
    "  --tasks-per-host T   workers per host (default 1)\n"
    "  --decomp METHOD      row, point, hilbert, interleaved, scatter, block, brbd,\n"
    "                       fbrd, phd, orb, or auto (default: the advisor's best)\n"
    "  --verify             also run the single-process reference; exit 1 if any bit\n"
    "                       of the final field differs\n"
    "  --json FILE          write the JSON report to FILE (- for stdout)\n"
    "  --output FILE        write the final field: for FILE.h5 (or .hdf5) an HDF5\n"
    "                       dataset /u [NZ][NY][NX] with attributes (grid, origin,\n"
    "                       spacing, iteration, time, checksum) and FILE.xmf beside it\n"
    "                       for ParaView; any other name: NX*NY*NZ native doubles,\n"
    "                       i fastest\n"
    "  --job FILE           a libconfig job file with these keys (grid, iters, kernel,\n"
    "                       quanta, hosts, tasks_per_host, decomp, verify, json, output,\n"
    "                       seed, network, probe_seconds, quiet, balance, epoch, heavy,\n"
    "                       min_gain, reclaim, reclaim_below, reclaim_after, rejoin_above,\n"
    "                       rejoin_after, svg, halo, png, slice, field); options\n"
    "                       override it\n"
    "  --seed S             seed of the initial field (default 1)\n"
    "  --network KIND       switched (default) or shared, for the cost model\n"
    "  --probe-seconds S    how long each speed probe runs (default 0.25)\n"
    "  --quiet              no progress lines\n"
    "  --balance on|off     re-place quanta every epoch from their measured times\n"
    "                       (default on; off keeps the initial placement)\n"
    "  --epoch K            iterations per epoch (default 10)\n"
    "  --heavy K            the quanta in the grid's lower octant cost K times more\n"
    "                       (same result; default 1, uniform)\n"
    "  --min-gain F         move quanta only for a predicted gain above F (default 0.2),\n"
    "                       seen in two epochs in a row if under 2F\n"
    "  --reclaim on|off     with balancing, leave a host whose owner needs it and come\n"
    "                       back when it is idle (default on)\n"
    "  --reclaim-below F    a host's quanta leave when the CPU share each of its workers\n"
    "                       could get (its daemon's capacity over its workers) is below\n"
    "                       F, until it is back at --rejoin-above; its workers leave\n"
    "                       when it stays below F ...\n"
    "  --reclaim-after S    ... for S seconds (defaults 0.125 and 3)\n"
    "  --rejoin-above F     an evacuated host gets workers again once that share stays\n"
    "  --rejoin-after S     at F or more for S seconds (defaults 0.25 and 1)\n"
    "  --svg FILE           plot BE and each host's share of the quanta per epoch\n"
    "  --halo H|auto        iterations per ghost exchange: each quantum's box reaches\n"
    "                       H points (rbgs 2H) into its neighbours and the kernel runs\n"
    "                       up to H iterations per pass (default auto: the deepest, up to 16\n"
    "                       and the epoch, that computes at most 15% more points, or deeper\n"
    "                       where the ring's lambda makes fewer exchanges faster)\n"
    "  --png FILE           picture of a slice of the final field through viridis, with\n"
    "                       a colour bar labelled with its minimum and maximum\n"
    "  --slice AXIS=K       the slice: x=K, y=K or z=K, K from 0 (default: z, the middle)\n"
    "  --field NAME         the field to picture (the stencil job has one: u)\n"
    "  --trace FILE         record the run (compute, waits, messages, moves, epochs)\n"
    "                       as Chrome Trace Event JSON (vmrun trace view, vmrun analyze,\n"
    "                       the Perfetto UI)\n"
    "  --hints FILE         settings from vmrun analyze --hints, read like --job; options\n"
    "                       given on the command line or in --job win\n"
    "  --checkpoint-every K copy every quantum to a worker on another host every K\n"
    "                       epochs (in memory); a lost worker or host then rolls the job\n"
    "                       back to the last complete copy instead of failing it; auto:\n"
    "                       the K whose copies the model prices at --checkpoint-share\n"
    "                       of the run, then spaced out by what they cost (default 0:\n"
    "                       no checkpoints)\n"
    "  --checkpoint-share F with auto, the share of the run checkpoints may cost\n"
    "                       (default 0.03)\n"
    "  --worker-timeout S   with checkpoints, a worker that sends nothing for S seconds\n"
    "                       (stopped, hung, or its host cut off) is lost and the job\n"
    "                       rolls back (default auto: 10 times the slowest epoch, at\n"
    "                       least 5 s)\n"
    "  --checkpoint DIR     also write the last complete checkpoint to DIR, at most\n"
    "                       every --checkpoint-interval S seconds (default 60; 0: each\n"
    "                       one), checksummed, replacing the one before only once\n"
    "                       whole; --checkpoint-every 0 (the default) becomes auto\n"
    "  --resume DIR         go on from the checkpoint in DIR of this same job (after\n"
    "                       its master died) with the same bits; keeps writing there\n"
    "                       unless --checkpoint says where\n"
    "\n"
    "  Exit status: 0 done (and verified), 1 the job failed or the field differs,\n"
    "  2 bad options or job file.\n";

static const char *const stencil_opts[] = {
    "grid", "iters", "kernel", "quanta", "hosts", "tasks-per-host", "decomp", "verify", "json",
    "output", "seed", "network", "probe-seconds", "quiet", "balance", "epoch", "heavy",
    "min-gain", "reclaim", "reclaim-below", "reclaim-after", "rejoin-above", "rejoin-after",
    "svg", "halo", "png", "slice", "field", "trace", "hints", "checkpoint-every", "checkpoint",
    "checkpoint-interval", "checkpoint-share", "resume", "worker-timeout", NULL
};

static void
stats_free(struct liq_stats *st)
{
    free(st->owner);
    free(st->qweight);
    free(st->wquanta);
    free(st->witer);
    free(st->wcompute);
    free(st->wcomm);
    free(st->wsetup);
    free(st->wrun);
    free(st->wcpu);
    liq_mb_free(st);
    liq_mu_free(st);
    liq_mt_free(st);
    liq_mc_free(st);
    liq_md_free(st);
    kern_box_free(&st->field);
}

/* ---- decomposition ---- */

static int
decompose(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct decomp_job job;
    struct decomp_spec spec;
    int ext[3], rc, phases = liq_halo_depth(o->kernel, 1);
    double *model = NULL;

    liq_geom_max_extent(&st->g, ext);
    if ((st->owner = calloc((size_t)st->g.nquanta, sizeof(int32_t))) == NULL ||
        (st->qweight = calloc((size_t)st->g.nquanta, sizeof(double))) == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory");
        return -1;
    }
    for (int q = 0; q < st->g.nquanta; q++) {
        int lo[3], hi[3];

        liq_quantum_extent(&st->g, q, lo, hi);
        st->qweight[q] = (double)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    }
    memset(&job, 0, sizeof(job));
    /* The advisor's cells are quanta, and its lambda is an iteration's:
     * the report says so. */
    if (phases > 1)
        snprintf(st->advname, sizeof(st->advname), "%s, %d exchanges an iteration",
                 liq_kernel_name(o), phases);
    else
        snprintf(st->advname, sizeof(st->advname), "%s", liq_kernel_name(o));
    job.name = st->advname;
    job.cells = "quanta";
    job.grid.ndim = 3;
    for (int a = 0; a < 3; a++)
        job.grid.dim[a] = (uint32_t)st->g.q[a];
    job.grid.weight = st->qweight;
    job.nowners = vm->nworkers;
    job.speed = vm->wspeed;
    /* Quanta are the cells: a face normal to axis a carries the quantum's
     * face of points, once per exchange phase. */
    job.work.face_bytes[0] = 8.0 * phases * (double)st->g.n[1] / st->g.q[1] * st->g.n[2] / st->g.q[2];
    job.work.face_bytes[1] = 8.0 * phases * (double)st->g.n[0] / st->g.q[0] * st->g.n[2] / st->g.q[2];
    job.work.face_bytes[2] = 8.0 * phases * (double)st->g.n[0] / st->g.q[0] * st->g.n[1] / st->g.q[1];
    job.work.work_per_cell = 1.0; /* weights are points; speeds are points per second */
    job.net.lambda = vm->lambda * phases;
    job.net.tau = vm->ringn >= 2 ? vm->tau : 1e-12;
    job.net.payload = DECOMP_ETH_PAYLOAD;
    job.net.overhead = DECOMP_ETH_OVERHEAD;
    job.net.kind = vm->net;
    job.seed = o->seed;
    if ((rc = decomp_advise(&job, &st->adv)) != 0) {
        snprintf(vm->why, sizeof(vm->why), "the advisor failed: %s", strerror(-rc));
        return -1;
    }
    st->advised = 1;
    if (o->decomp >= 0) {
        st->method = (enum decomp_method)o->decomp;
    } else if (o->balance && o->epoch < o->iters) {
        /* The balancer moves the cuts along the Hilbert curve (seed 000):
         * starting there, each epoch moves only the quanta near a cut. */
        st->method = DECOMP_HILBERT;
    } else if (st->adv.nranked > 0) {
        st->method = st->adv.rank[0].method;
    } else {
        snprintf(vm->why, sizeof(vm->why), "no decomposition can place %d quanta on %d workers",
                 st->g.nquanta, vm->nworkers);
        return -1;
    }
    memset(&spec, 0, sizeof(spec));
    spec.method = st->method;
    spec.nowners = vm->nworkers;
    spec.speed = vm->wspeed;
    spec.seed = o->seed;
    if (o->decomp < 0 && st->method == DECOMP_HILBERT && o->balance) {
        /* The balancer's own speeds: the first epoch then moves only what
         * its measurements change. */
        if ((model = malloc((size_t)vm->nworkers * sizeof(double))) == NULL ||
            liq_mb_init(vm, o, st) != 0 || liq_mb_speeds(vm, st, model) != 0) {
            free(model);
            if (vm->why[0] == '\0')
                snprintf(vm->why, sizeof(vm->why), "out of memory");
            return -1;
        }
        spec.speed = model;
    }
    rc = decomp_place(&job.grid, &spec, st->owner, NULL);
    free(model);
    if (rc != 0) {
        snprintf(vm->why, sizeof(vm->why), "%s cannot place %d quanta (%dx%dx%d) on %d workers%s",
                 decomp_method_name(st->method), st->g.nquanta, st->g.q[0], st->g.q[1], st->g.q[2],
                 vm->nworkers, rc == -ERANGE ? "" : ": bad input");
        /* A method asked for that cannot serve the job is a usage error. */
        return o->decomp >= 0 && rc == -ERANGE ? -2 : -1;
    }
    return 0;
}

/* ---- the run ---- */

/* The iterations this run computed: a resumed job's start from its file's. */
static int
iters_run(const struct liq_stats *st)
{
    return st->iters_done - st->dk.resumed_from;
}

/* Balance efficiency: mean over max of the compute time of the workers that hold quanta. */
static double
job_be(const struct liq_vm *vm, const struct liq_stats *st)
{
    double sum = 0, max = 0;
    int busy = 0;

    for (int w = 0; w < vm->nworkers; w++)
        if (st->wquanta[w] > 0) {
            sum += st->wcompute[w];
            busy++;
            if (st->wcompute[w] > max)
                max = st->wcompute[w];
        }
    return max > 0 ? sum / busy / max : 1.0;
}


static void
progress_line(const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st,
              double elapsed, int final)
{
    int low = o->iters;

    for (int w = 0; w < vm->nworkers; w++)
        if (vm->tids[w] != 0 && !vm->leaving[w] && st->witer[w] < low)
            low = st->witer[w];
    double points = (double)st->g.n[0] * st->g.n[1] * st->g.n[2];

    fprintf(stderr, "%siteration %d/%d  %.1f Mupdates/s  BE %.2f%s",
            isatty(2) ? "\r" : "", low, o->iters, elapsed > 0 ? points * low / elapsed / 1e6 : 0.0,
            job_be(vm, st), isatty(2) && !final ? "   " : "\n");
}

static int
take_field(struct liq_vm *vm, struct liq_stats *st)
{
    int hdr[4], lo[3], hi[3], bytes, tag, src;
    size_t plane;
    struct kern_box *b = NULL;

    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
    pvm_upkint(hdr, 4, 1);
    if (hdr[0] < 0 || hdr[0] >= st->g.nquanta || st->owner[hdr[0]] != liq_vm_worker(vm, src) ||
        (b = liq_mu_field(st, hdr[3])) == NULL)
        goto bad;
    liq_quantum_extent(&st->g, hdr[0], lo, hi);
    if (hdr[1] < 1 || hdr[2] < hdr[1] || hdr[2] > hi[2] - lo[2])
        goto bad;
    plane = (size_t)(hi[0] - lo[0]) * (size_t)(hi[1] - lo[1]);
    if ((size_t)bytes != 4 * sizeof(int) + plane * (size_t)(hdr[2] - hdr[1] + 1) * sizeof(double))
        goto bad;
    for (int k = hdr[1]; k <= hdr[2]; k++)
        for (int j = 1; j <= hi[1] - lo[1]; j++) {
            if (pvm_upkdouble(kern_at(b, lo[0] + 1, lo[1] + j, lo[2] + k),
                              hi[0] - lo[0], 1) < 0)
                goto bad;
            st->field_points += (size_t)(hi[0] - lo[0]);
        }
    return 0;
bad:
    snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed field message", (unsigned)src);
    return -1;
}

static int
take_done(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w)
{
    unsigned cs[2];
    int nq;
    double totals[2], move = 0;

    /* Compute and communication add up from the progress messages (over
     * every worker a slot had); these totals are this worker's alone. */
    pvm_upkdouble(&st->wsetup[w], 1, 1);
    pvm_upkdouble(&st->wrun[w], 1, 1);
    pvm_upkdouble(totals, 2, 1);
    pvm_upkuint(cs, 2, 1);
    pvm_upkint(&nq, 1, 1);
    if (nq != st->wquanta[w]) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x reports %d quanta, it was given %d",
                 (unsigned)vm->tids[w], nq, st->wquanta[w]);
        return -1;
    }
    for (int i = 0; i < nq; i++) {
        int id;
        double sec;

        pvm_upkint(&id, 1, 1);
        pvm_upkdouble(&sec, 1, 1);
    }
    if (pvm_upkdouble(&move, 1, 1) < 0 ||
        pvm_upkdouble(&st->wcpu[LIQ_WCPU * w], LIQ_WCPU, 1) < 0) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x sent a short DONE message",
                 (unsigned)vm->tids[w]);
        return -1;
    }
    liq_mc_done(st, w);
    /* They go into the JSON report as numbers. */
    const double *cpu = &st->wcpu[LIQ_WCPU * w];

    if (!(cpu[0] >= 0) || !isfinite(cpu[0]) ||
        !(cpu[1] >= 0) || !isfinite(cpu[1]) || !(cpu[2] >= 0) || !(cpu[2] <= cpu[0]) ||
        !(cpu[3] >= 0) || !isfinite(cpu[3]) || !(cpu[4] >= 0) || !isfinite(cpu[4]) ||
        !(cpu[5] >= 0) || !(cpu[5] <= 1e18) || !(cpu[6] >= 0) || !(cpu[6] <= 1e18) ||
        !(cpu[7] >= 0) || !(cpu[7] <= 1e18) || !(cpu[8] >= 0) || !(cpu[8] <= 1e18)) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed DONE message",
                 (unsigned)vm->tids[w]);
        return -1;
    }
    /* Its last move was at the last boundary (or at none: a move is
     * reported with the next epoch's report). */
    int e = o->epoch > 0 ? liq_mb_plan_record((st->iters_done - 1) / o->epoch) : -1;

    if (e >= 0 && e < st->nep && move > st->ep[e].move_s)
        st->ep[e].move_s = move;
    st->checksum += (uint64_t)cs[0] | (uint64_t)cs[1] << 32;
    if (st->wrun[w] > st->t_iter)
        st->t_iter = st->wrun[w];
    if (vm->quiet != NULL)
        vm->quiet[w] = 1; /* it waits for QUIT now: its silence is no hang */
    st->ndone++;
    return 0;
}

static int
run_job(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    int gather = liq_opts_gathers(o);
    size_t want = (size_t)st->g.n[0] * st->g.n[1] * st->g.n[2] * (size_t)st->nfields;
    double t0 = liq_vm_now(), last = t0;

    if (liq_mb_init(vm, o, st) != 0 || liq_mc_init(vm, o, st) != 0 ||
        liq_md_init(vm, o, st) != 0)
        return -1;
    if (liq_mu_gather_alloc(vm, o, st) != 0)
        return -1;
    /* The first epoch's reports are of the placement the job starts with. */
    memcpy(st->owner_prev, st->owner, (size_t)st->g.nquanta * sizeof(int32_t));
    if (liq_mt_start(vm, o, st) != 0)
        return -1;
    for (int w = 0; w < vm->nworkers; w++)
        if (liq_mt_expect(vm, st, w) != 0)
            return -1;
    st->run_t0 = liq_vm_now();
    st->run_unix = liq_vm_unix_now();
    if (st->dk.resumed_from > 0) {
        /* --resume: every quantum's state from the file to its owner, then
         * a restoring JOB, as a recovery sends (liq_master_disk.c). */
        int c = st->dk.resumed_from;

        if (liq_md_load(vm, o, st, c) != 0 ||
            liq_master_job_send(vm, o, st, vm->tids, vm->nworkers, c, 1) != 0 ||
            liq_mb_rollback(vm, o, st, c) != 0)
            return -1;
    } else if (liq_master_job_send(vm, o, st, vm->tids, vm->nworkers, 0, 0) != 0 ||
               (o->user != NULL && liq_mu_send_input(vm, o, st) != 0))
        return -1;
    while (st->ndone < st->nlive || st->left_due > 0 || (gather && st->field_points < want) ||
           st->tr.due > 0) {
        int tag, src, w, rc;

        if ((rc = liq_vm_next(vm, &tag, &src)) == LIQ_VM_LOST) {
            if (liq_mc_recover(vm, o, st) != 0)
                return -1;
            continue;
        }
        if (rc < 0)
            return -1;
        w = liq_vm_worker(vm, src);
        if (tag == LIQ_TAG_PROGRESS) {
            int it;
            double c, m;

            pvm_upkint(&it, 1, 1);
            pvm_upkdouble(&c, 1, 1);
            pvm_upkdouble(&m, 1, 1);
            st->witer[w] = it;
            st->wcompute[w] += c;
            st->wcomm[w] += m;
            liq_mc_progress(st);
            if (vm->progress && liq_vm_now() - last > (isatty(2) ? 0.25 : 2.0)) {
                last = liq_vm_now();
                progress_line(vm, o, st, last - t0, 0);
            }
        } else if (tag == LIQ_TAG_DONE) {
            if (take_done(vm, o, st, w) != 0)
                return -1;
            if (st->ndone == st->nlive)
                st->t_run = liq_vm_now() - t0;
        } else if (tag == LIQ_TAG_FIELD) {
            if (take_field(vm, st) != 0)
                return -1;
        } else if (tag == LIQ_TAG_EPOCH) {
            if (liq_mb_epoch(vm, o, st, w) != 0)
                return -1;
        } else if (tag == LIQ_TAG_LEFT) {
            if (liq_mb_left(vm, o, st, w) != 0)
                return -1;
        } else if (tag == LIQ_TAG_REDUCE) {
            if ((rc = liq_mu_reduce(vm, o, st, w)) < 0 ||
                (rc > 0 && liq_mb_verdict(vm, o, st, st->red_it) != 0))
                return -1;
        } else if (tag == LIQ_TAG_TRACE) {
            if (liq_mt_take(vm, st, src) != 0)
                return -1;
        } else if (tag == LIQ_TAG_CKACK) {
            if (liq_mc_ack(vm, st, w) != 0)
                return -1;
        } else if (tag == LIQ_TAG_CKHANDED) {
            if (liq_mc_handed(vm, st, w) != 0)
                return -1;
        } else if (tag == LIQ_TAG_CKSAVE) {
            if (liq_md_take(vm, o, st, w) != 0)
                return -1;
        }
    }
    liq_md_settle(vm, st);
    if (vm->progress)
        progress_line(vm, o, st, st->t_run, 1);
    st->t_gather = liq_vm_now() - t0 - st->t_run;
    return 0;
}

static int
verify(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct kern_box ref;
    double t0 = liq_vm_now();
    int rc;

    if (vm->progress)
        fprintf(stderr, "%s: verifying against the single-process reference (%d iterations)\n",
                vm->who, o->iters);
    if ((rc = liq_reference(st->g.n, o->bkernel, o->iters, o->seed, &ref)) != 0) {
        snprintf(vm->why, sizeof(vm->why), "the reference run failed: %s", strerror(-rc));
        return -1;
    }
    st->diffs = 0;
    for (int k = 1; k <= st->g.n[2]; k++)
        for (int j = 1; j <= st->g.n[1]; j++)
            if (memcmp(kern_at(&ref, 1, j, k), kern_at(&st->field, 1, j, k),
                       (size_t)st->g.n[0] * sizeof(double)) != 0)
                for (int i = 1; i <= st->g.n[0]; i++)
                    st->diffs += memcmp(kern_at(&ref, i, j, k), kern_at(&st->field, i, j, k),
                                        sizeof(double)) != 0;
    st->verified = st->diffs == 0 && liq_field_checksum(&ref) == st->checksum;
    kern_box_free(&ref);
    st->t_verify = liq_vm_now() - t0;
    return 0;
}

/* ---- reports ---- */

static double
job_comm_share(const struct liq_vm *vm, const struct liq_stats *st)
{
    double c = 0, m = 0;

    for (int w = 0; w < vm->nworkers; w++) {
        c += st->wcompute[w];
        m += st->wcomm[w];
    }
    return c + m > 0 ? m / (c + m) : 0;
}

static void
json_report(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o,
            const struct liq_stats *st)
{
    double points = (double)st->g.n[0] * st->g.n[1] * st->g.n[2];

    fprintf(fp, "{\"job\":{\"grid\":[%d,%d,%d],\"iters\":%d,\"kernel\":\"%s\",\"quanta_per_host\":%d,"
                "\"tasks_per_host\":%d,\"seed\":%" PRIu64 "},",
            st->g.n[0], st->g.n[1], st->g.n[2], o->iters, liq_kernel_name(o),
            o->quanta, o->tasks_per_host, o->seed);
    liq_bench_json(fp, vm);
    fprintf(fp, ",\"quanta\":{\"grid\":[%d,%d,%d],\"count\":%d},", st->g.q[0], st->g.q[1],
            st->g.q[2], st->g.nquanta);
    fprintf(fp, "\"halo\":{\"iterations\":%d,\"depth\":%d,\"work\":%.4f,\"auto\":%s,"
                "\"slack_iterations\":%d},",
            st->halo, liq_halo_depth(o->kernel, st->halo), st->halo_work,
            o->halo == 0 ? "true" : "false", st->halo_slack);
    fprintf(fp, "\"ranking\":[");
    for (int r = 0; st->advised && r < st->adv.nranked; r++)
        fprintf(fp, "%s{\"method\":\"%s\",\"rating\":%.4f,\"predicted_s\":%.6g}", r ? "," : "",
                decomp_method_name(st->adv.rank[r].method), st->adv.rank[r].rating,
                st->adv.rank[r].cost.total);
    fprintf(fp, "],\"method\":\"%s\",\"placement\":[", decomp_method_name(st->method));
    for (int q = 0; q < st->g.nquanta; q++)
        fprintf(fp, "%s%d", q ? "," : "", (int)st->owner[q]);
    fprintf(fp, "],\"workers\":[");
    for (int w = 0; w < vm->nworkers; w++) {
        const double *f = &st->wcpu[LIQ_WCPU * w];

        fprintf(fp, "%s{\"tid\":%d,", w ? "," : "", liq_vm_tid(vm, w));
        if (vm->tids[w] == 0 && vm->gone != NULL && vm->gone[w] != 0)
            fprintf(fp, "\"gone\":\"%s\",", vm->gone[w] == 'l' ? "lost" : "evacuated");
        fprintf(fp, "\"host\":");
        wire_json_str(fp, vm->host[vm->whost[w]].name);
        fprintf(fp, ",\"quanta\":%d,\"compute_s\":%.6g,\"comm_s\":%.6g", st->wquanta[w],
                st->wcompute[w], st->wcomm[w]);
        fprintf(fp, ",\"compute_cpu_s\":%.6g,\"cpu_s\":%.6g,\"overlap_cpu_s\":%.6g,"
                    "\"ghost_wait_s\":%.6g,\"plan_wait_s\":%.6g,\"ghost_bytes\":%.0f,"
                    "\"rss_bytes\":%.0f,\"held_bytes\":%.0f,\"held_peak_bytes\":%.0f",
                f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
        if (st->wother != NULL)
            fprintf(fp, ",\"other_cpu_share\":%.4g", st->wother[w]);
        fputc('}', fp);
    }
    fprintf(fp, "],\"time_s\":%.6g,\"run_s\":%.6g,\"time_per_iter_s\":%.6g,\"updates_per_s\":%.6g,"
                "\"be\":%.4f,\"comm_share\":%.4f,",
            st->t_total, st->t_run, iters_run(st) ? st->t_iter / iters_run(st) : 0.0,
            st->t_iter > 0 ? points * iters_run(st) / st->t_iter : 0.0, job_be(vm, st),
            job_comm_share(vm, st));
    fprintf(fp, "\"iterations_done\":%d,", st->iters_done);
    fprintf(fp, "\"trace\":");
    if (o->trace[0] != '\0')
        wire_json_str(fp, o->trace);
    else
        fprintf(fp, "null");
    fprintf(fp, ",\"hints\":{\"file\":");
    if (o->hints[0] != '\0')
        wire_json_str(fp, o->hints);
    else
        fprintf(fp, "null");
    fprintf(fp, ",\"settings\":[");
    for (const char *k = o->hinted, *c; *k != '\0'; k = *c ? c + 1 : c) {
        c = strchr(k, ',');
        if (c == NULL)
            c = k + strlen(k);
        fprintf(fp, "%s\"%.*s\"", k == o->hinted ? "" : ",", (int)(c - k), k);
    }
    fprintf(fp, "]},");
    if (liq_opts_program(o) != NULL)
        liq_mu_json(fp, o, st);
    liq_mc_json(fp, vm, o, st);
    liq_md_json(fp, o, st);
    fprintf(fp, "\"run_started_unix\":%.6f,", st->run_unix);
    fprintf(fp, "\"phases\":{\"benchmark_s\":%.6g,\"decompose_s\":%.6g,\"setup_s\":%.6g,"
                "\"iterations_s\":%.6g,\"gather_s\":%.6g,\"verify_s\":%.6g},",
            st->t_bench, st->t_decomp, st->t_run - st->t_iter, st->t_iter, st->t_gather,
            st->t_verify);
    fprintf(fp, "\"balance\":{\"on\":%s,\"epoch\":%d,\"heavy\":%d,\"min_gain\":%.6g,"
                "\"quanta_moved\":%d,\"bytes_moved\":%.0f,",
            o->balance ? "true" : "false", o->epoch, o->heavy, o->min_gain, st->moved_total,
            st->bytes_total);
    fprintf(fp, "\"reclaim\":{\"on\":%s,\"below\":%.6g,\"after_s\":%.6g,\"rejoin_above\":%.6g,"
                "\"rejoin_after_s\":%.6g},\"epochs\":[",
            o->balance && o->reclaim ? "true" : "false", o->reclaim_below, o->reclaim_after,
            o->rejoin_above, o->rejoin_after);
    for (int e = liq_epoch_first(o, st); e < st->nep; e++) {
        const struct liq_epoch *ep = &st->ep[e];

        fprintf(fp, "%s{\"epoch\":%d,\"t_s\":%.6g,\"be\":%.4f,\"be_cpu\":%.4f,\"predicted_s\":%.6g,"
                    "\"replaced_s\":%.6g,\"applied\":%s,\"forced\":%s,\"moved\":%d,\"bytes\":%.0f,"
                    "\"publish_s\":%.6g,\"decide_s\":%.6g,\"move_s\":%.6g,\"host_quanta\":[",
                e > liq_epoch_first(o, st) ? "," : "", ep->epoch, ep->t_s, ep->be, ep->be_cpu, ep->before_s, ep->after_s,
                ep->applied ? "true" : "false", ep->forced ? "true" : "false", ep->moved, ep->bytes,
                ep->publish_s, ep->decide_s, ep->move_s);
        for (int h = 0; h < vm->nhosts; h++)
            fprintf(fp, "%s%d", h ? "," : "", st->hquanta[e * vm->nhosts + h]);
        fprintf(fp, "],\"host_model_s\":[");
        for (int h = 0; h < vm->nhosts; h++)
            fprintf(fp, "%s%.6g", h ? "," : "", st->hmodel[e * vm->nhosts + h]);
        fprintf(fp, "],\"host_wall_s\":[");
        for (int h = 0; h < vm->nhosts; h++)
            fprintf(fp, "%s%.6g", h ? "," : "", st->hwall[e * vm->nhosts + h]);
        fprintf(fp, "],\"host_share\":[");
        for (int h = 0; h < vm->nhosts; h++) {
            double v = st->hshare[e * vm->nhosts + h];

            if (v >= 0)
                fprintf(fp, "%s%.4g", h ? "," : "", v);
            else
                fprintf(fp, "%snull", h ? "," : "");
        }
        fprintf(fp, "]}");
    }
    fprintf(fp, "],\"events\":[");
    for (int i = 0; i < st->nev; i++) {
        fprintf(fp, "%s{\"epoch\":%d,\"t_s\":%.6g,\"host\":", i ? "," : "", st->ev[i].epoch,
                st->ev[i].t_s);
        wire_json_str(fp, vm->host[st->ev[i].host].name);
        fprintf(fp, ",\"what\":\"%s\"}", st->ev[i].rejoin ? "rejoin" : "evacuate");
    }
    fprintf(fp, "]},");
    liq_fields_json(fp, o);
    fprintf(fp, "\"checksum\":\"%016" PRIx64 "\",\"verified\":%s}\n", st->checksum,
            st->verified < 0 ? "null" : st->verified ? "true" : "false");
}

static void
summary(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st)
{
    double points = (double)st->g.n[0] * st->g.n[1] * st->g.n[2];

    char its[64];

    if (st->stopped)
        snprintf(its, sizeof(its), "%d of %d iterations (its until rule stopped it)",
                 st->iters_done, o->iters);
    else
        snprintf(its, sizeof(its), "%d iterations", o->iters);
    fprintf(fp, "job: %s %dx%dx%d, %s, %d quanta (%dx%dx%d) on %d worker%s, method %s\n",
            liq_kernel_name(o), st->g.n[0], st->g.n[1], st->g.n[2], its, st->g.nquanta, st->g.q[0], st->g.q[1], st->g.q[2], vm->nworkers,
            vm->nworkers == 1 ? "" : "s", decomp_method_name(st->method));
    fprintf(fp, "run: %.3f s (setup included), %.2f ms/iteration, %.1f Mupdates/s, BE %.2f, communication %.0f%%\n",
            st->t_run, iters_run(st) ? st->t_iter / iters_run(st) * 1e3 : 0.0,
            st->t_iter > 0 ? points * iters_run(st) / st->t_iter / 1e6 : 0.0, job_be(vm, st),
            100 * job_comm_share(vm, st));
    fprintf(fp, "phases: benchmark %.3f s, decompose %.3f s, run %.3f s, gather %.3f s, "
                "verify %.3f s; total %.3f s\n",
            st->t_bench, st->t_decomp, st->t_run, st->t_gather, st->t_verify, st->t_total);
    int e0 = liq_epoch_first(o, st);

    /* An epoch counts once its reports are in and its plan made: the last
     * one, which ends the job, has no plan. */
    if (o->balance && st->nep > e0)
        fprintf(fp, "balance: %d plans, one every %d iterations, %d quanta moved (%.1f MB), BE "
                    "%.2f in the first epoch, %.2f in the last planned (by CPU time %.2f, %.2f)\n",
                st->nep - e0, o->epoch, st->moved_total, st->bytes_total / 1e6, st->ep[e0].be,
                st->ep[st->nep - 1].be, st->ep[e0].be_cpu, st->ep[st->nep - 1].be_cpu);
    liq_mc_summary(fp, vm, o, st);
    liq_md_summary(fp, o, st);
    for (int i = 0; i < st->nev; i++)
        fprintf(fp, "reclaim: after epoch %d (%.1f s) host %s %s at the end of epoch %d\n",
                st->ev[i].epoch, st->ev[i].t_s, vm->host[st->ev[i].host].name,
                st->ev[i].rejoin ? "got a worker again, joining" : "was evacuated, leaving",
                st->ev[i].epoch + 1);
    fprintf(fp, "  %-10s %-16s %7s %10s %10s\n", "worker", "host", "quanta", "compute s", "comm s");
    for (int w = 0; w < vm->nworkers; w++)
        fprintf(fp, "  t%-9x %-16s %7d %10.3f %10.3f%s\n", (unsigned)liq_vm_tid(vm, w),
                vm->host[vm->whost[w]].name, st->wquanta[w], st->wcompute[w], st->wcomm[w],
                vm->tids[w] != 0 || vm->gone == NULL || vm->gone[w] == 0 ? ""
                : vm->gone[w] == 'l'                                     ? "  (lost)"
                                                                         : "  (evacuated)");
    fprintf(fp, "checksum %016" PRIx64, st->checksum);
    if (st->verified == 1)
        fprintf(fp, "; verify: bit-identical to the single-process reference\n");
    else if (st->verified == 0)
        fprintf(fp, "; verify: %zu points DIFFER from the single-process reference\n", st->diffs);
    else
        fputc('\n', fp);
}

static int
write_report(const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st)
{
    FILE *fp = liq_report_open(vm->prog->name, "--json", o->json);

    if (fp == NULL)
        return -1;
    json_report(fp, vm, o, st);
    return liq_report_close(vm->prog->name, "--json", o->json, fp);
}

/*
 * Memory, from the daemons' samples (lvm_hostload; a host not sampled yet
 * is not judged): the fields' current state, a lower bound of what the
 * workers hold, must fit in the job's hosts' memory together, and the
 * whole grid on the master's host when it gathers it.  0, or -1 with why.
 */
#define LIQ_MAX_HOSTS_MEM 4096

static int
memory_fits(const struct liq_vm *vm, const struct liq_opts *o, char *why, size_t len)
{
    struct lvm_hostload *hl;
    int n, autoerr = pvm_setopt(PvmAutoErr, 0), rc = 0;
    double points = (double)o->n[0] * o->n[1] * o->n[2], gib = 1024.0 * 1024 * 1024;
    double need = points * sizeof(double) * (o->user != NULL ? liq_user_nboxes(o->user) : 1);
    double have = 0, master = 0;
    int known = 1, me = pvm_tidtohost(pvm_mytid());

    if (lvm_hostload(&hl, &n) != 0) {
        pvm_setopt(PvmAutoErr, autoerr);
        return 0;
    }
    pvm_setopt(PvmAutoErr, autoerr);
    unsigned long long seen[LIQ_MAX_HOSTS_MEM];
    int nseen = 0;

    for (int h = 0; h < vm->nhosts; h++) {
        int i = 0, dup = 0;

        while (i < n && hl[i].dtid != vm->host[h].dtid)
            i++;
        if (i == n || hl[i].mem_total == 0) {
            known = 0;
            continue;
        }
        /* Daemons of one machine (one kernel) share its memory. */
        for (int k = 0; k < nseen && hl[i].kernel != 0; k++)
            dup |= seen[k] == hl[i].kernel;
        if (dup)
            continue;
        if (hl[i].kernel != 0 && nseen < LIQ_MAX_HOSTS_MEM)
            seen[nseen++] = hl[i].kernel;
        have += (double)hl[i].mem_total;
    }
    for (int i = 0; i < n; i++)
        if (hl[i].dtid == me)
            master = (double)hl[i].mem_total;
    free(hl);
    if (known && need > have) {
        snprintf(why, len, "the %dx%dx%d grid's fields need at least %.1f GiB; the job's %d "
                           "host%s have %.1f GiB of memory together (a machine's daemons "
                           "counted once)",
                 o->n[0], o->n[1], o->n[2], need / gib, vm->nhosts, vm->nhosts == 1 ? "" : "s",
                 have / gib);
        rc = -1;
    } else if (liq_opts_gathers(o) && master > 0 && need > master) {
        snprintf(why, len, "the %dx%dx%d grid's fields need at least %.1f GiB, and the master "
                           "gathers them (--verify, --output, --png) on a host of %.1f GiB",
                 o->n[0], o->n[1], o->n[2], need / gib, master / gib);
        rc = -1;
    }
    return rc;
}

/* The quanta grid, checked before any benchmark runs: 0, or
 * LIQ_EXIT_USAGE after saying why and leaving the VM. */
static int
cut_quanta(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    if (liq_geom_make(&st->g, o->n, vm->nhosts * o->quanta) != 0) {
        snprintf(vm->why, sizeof(vm->why),
                 "a %dx%dx%d grid cannot be cut into %d quanta (%d hosts x %d) of at least one "
                 "point per axis",
                 o->n[0], o->n[1], o->n[2], vm->nhosts * o->quanta, vm->nhosts, o->quanta);
        liq_vm_stop(vm, 1);
        liq_vm_free(vm);
        fprintf(stderr, "%s: %s\n", vm->prog->name, vm->why);
        return LIQ_EXIT_USAGE;
    }
    if (vm->nworkers > st->g.nquanta) {
        fprintf(stderr, "%s: more workers (%d) than quanta (%d): raise --quanta or "
                        "lower --tasks-per-host\n", vm->prog->name, vm->nworkers, st->g.nquanta);
        liq_vm_stop(vm, 1);
        liq_vm_free(vm);
        return LIQ_EXIT_USAGE;
    }
    if (memory_fits(vm, o, vm->why, sizeof(vm->why)) != 0) {
        fprintf(stderr, "%s: %s\n", vm->prog->name, vm->why);
        liq_vm_stop(vm, 1);
        liq_vm_free(vm);
        return LIQ_EXIT_USAGE;
    }
    return 0;
}

/* The per-worker figures of a job of nw workers.  0, or -1 out of memory
 * (stats_free frees what was allocated). */
static int
stats_alloc(struct liq_stats *st, int nw)
{
    st->wquanta = calloc((size_t)nw, sizeof(int));
    st->witer = calloc((size_t)nw, sizeof(int));
    st->wcompute = calloc((size_t)nw, sizeof(double));
    st->wcomm = calloc((size_t)nw, sizeof(double));
    st->wsetup = calloc((size_t)nw, sizeof(double));
    st->wrun = calloc((size_t)nw, sizeof(double));
    st->wcpu = calloc(LIQ_WCPU * (size_t)nw, sizeof(double));
    if (!st->wquanta || !st->witer || !st->wcompute || !st->wcomm || !st->wsetup || !st->wrun ||
        !st->wcpu)
        return -1;
    return 0;
}

/* The quanta are placed: the halo for the placement's regions, and each
 * worker's quanta. */
static void
placed(const struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    double speed = 0;

    for (int w = 0; w < vm->nworkers; w++)
        speed += vm->wspeed[w];
    st->halo = liq_mu_halo(o, st, liq_opts_halo(o, &st->g, st->owner, vm->lambda, speed));
    st->halo_slack = o->halo > 0 ? st->halo
                                 : liq_mu_halo(o, st, liq_opts_halo(o, &st->g, st->owner, 0, 0));
    st->halo_work = liq_halo_work(&st->g, o->kernel, st->halo, st->owner, o->heavy);
    for (int q = 0; q < st->g.nquanta; q++)
        st->wquanta[st->owner[q]]++;
}

/* The advisor's table, the halo and the placement, before the run. */
static void
print_placement(FILE *out, const struct liq_opts *o, const struct liq_stats *st)
{
    ssize_t need = decomp_advice_table(&st->adv, NULL, 0);
    char *text = need > 0 ? malloc((size_t)need + 1) : NULL;

    if (text != NULL) {
        decomp_advice_table(&st->adv, text, (size_t)need + 1);
        fprintf(out, "%s", text);
        free(text);
    }
    fprintf(out, "halo: %d iteration%s per ghost exchange (depth %d, %.1f%% more points swept)\n",
            st->halo, st->halo == 1 ? "" : "s", liq_halo_depth(o->kernel, st->halo),
            100 * (st->halo_work - 1));
    fprintf(out, "placing %d quanta (%dx%dx%d) by %s%s\n", st->g.nquanta, st->g.q[0],
            st->g.q[1], st->g.q[2], decomp_method_name(st->method),
            o->decomp >= 0 ? " (asked for)"
            : st->method == DECOMP_HILBERT && o->balance
                ? " (balancing moves its cuts; --balance off places by the advisor's best)"
                : "");
}

/* This process is one of a job's workers when the program's own workers
 * are spawned with LIQ_WORKER_ARG and argv is that: the worker's exit
 * status, or -1 when it is not a worker. */
static int
stencil_worker(const struct liq_program *prog, int argc, char **argv)
{
    char who[128];

    if (prog->worker_argv != NULL || argc < 2 || strcmp(argv[1], LIQ_WORKER_ARG) != 0)
        return -1;
    snprintf(who, sizeof(who), "%s %s", prog->name, LIQ_WORKER_ARG);
    return liq_builtin_worker(who, argc - 1, argv + 1);
}

int
liq_stencil_main(const struct liq_program *prog, int argc, char **argv)
{
    struct liq_opts o;
    struct liq_vm vm;
    struct liq_stats st;
    int rc, ext[3], failed = 1, nw, usage = 0;
    double t0 = liq_vm_now(), t;
    FILE *out;

    struct liq_program up;

    if ((rc = stencil_worker(prog, argc, argv)) >= 0)
        return rc;
    liq_opts_defaults(&o);
    o.user = (struct liquid *)(uintptr_t)prog->user;
    if (o.user != NULL)
        memcpy(o.n, o.user->n, sizeof(o.n)); /* the program's grid, unless --grid */
    rc = liq_opts_parse(&o, prog->name, argc, argv, o.user != NULL ? liq_user_runtime_opts : stencil_opts);
    if (rc != 0) {
        if (rc < 0) {
            /* --help: no job, so the program is not its master either. */
            if (o.user != NULL)
                o.user->master = 0;
            if (o.user != NULL)
                liq_mu_usage(stdout, o.user, stencil_synopsis, stencil_text);
            else
                liq_opts_usage(stdout, prog->name, stencil_synopsis, stencil_text);
            return LIQ_EXIT_OK;
        }
        return rc;
    }
    if (o.user == NULL && liq_mu_builtin(&o) != 0) {
        fprintf(stderr, "%s: out of memory\n", prog->name);
        return LIQ_EXIT_FAIL;
    }
    if ((rc = liq_mu_prepare(o.user, &o, prog, &up)) != 0)
        return rc == -2 ? LIQ_EXIT_FAIL : LIQ_EXIT_USAGE;
    prog = &up;
    if (liq_reclaim_check(o.reclaim_below, o.rejoin_above, o.balance && o.reclaim, vm.why,
                          sizeof(vm.why)) != 0) {
        fprintf(stderr, "%s: %s\n", prog->name, vm.why);
        return LIQ_EXIT_USAGE;
    }
    if (liq_fields_check(&o, vm.why, sizeof(vm.why)) != 0) {
        fprintf(stderr, "%s: %s\n", prog->name, vm.why);
        return LIQ_EXIT_USAGE;
    }
    /* --resume goes on where the job was: its directory keeps the
     * checkpoints unless --checkpoint says where, and a disk checkpoint
     * needs the in-memory ones it is made of. */
    if (o.resume[0] != '\0' && o.ckdir[0] == '\0')
        snprintf(o.ckdir, sizeof(o.ckdir), "%s", o.resume);
    if (o.ckdir[0] != '\0' && o.ckpt_every == 0)
        o.ckpt_every = -1;
    /* Settings of the checkpoints, given without them, would do nothing. */
    if (o.ckpt_every == 0) {
        static const char *const ck_only[] = { "worker-timeout", "checkpoint-share",
                                               "checkpoint-interval" };

        for (size_t i = 0; i < sizeof(ck_only) / sizeof(ck_only[0]); i++)
            if (liq_opts_given(&o, ck_only[i])) {
                fprintf(stderr, "%s: --%s applies to checkpoints: give --checkpoint-every or "
                                "--checkpoint too\n", prog->name, ck_only[i]);
                return LIQ_EXIT_USAGE;
            }
    }
    out = strcmp(o.json, "-") == 0 ? stderr : stdout;
    memset(&st, 0, sizeof(st));
    st.verified = -1;
    if ((rc = liq_md_open(&o, &st, prog->name)) != 0)
        return rc;
    if (liq_vm_start(&vm, &o, prog) != 0) {
        usage = vm.usage;
        goto out;
    }
    nw = vm.nworkers;
    if ((rc = cut_quanta(&vm, &o, &st)) != 0)
        return rc;
    if (stats_alloc(&st, nw) != 0) {
        snprintf(vm.why, sizeof(vm.why), "out of memory");
        goto out;
    }
    liq_geom_max_extent(&st.g, ext);
    /* The probe's box is a grid of its own to the program (liq_probe.c): a
     * 3D job's is never one plane thick, which would read as a 2D grid
     * with no ghosts in z under an update that reads them. */
    if (st.g.n[2] > 1 && ext[2] < 2)
        ext[2] = 2;
    liq_mu_geom(&o, &st);
    st.halo = liq_mu_halo(&o, &st, liq_opts_halo(&o, &st.g, NULL, 0, 0));
    t = liq_vm_now();
    if (liq_vm_bench(&vm, ext, o.kernel, o.probe_seconds, st.halo) != 0)
        goto out;
    st.t_bench = liq_vm_now() - t;
    if (!o.quiet)
        liq_bench_print(out, &vm);
    t = liq_vm_now();
    if ((rc = decompose(&vm, &o, &st)) != 0) {
        usage = rc == -2;
        goto out;
    }
    st.t_decomp = liq_vm_now() - t;
    placed(&vm, &o, &st);
    if (!o.quiet)
        print_placement(out, &o, &st);
    if (run_job(&vm, &o, &st) != 0)
        goto out;
    if (o.verify && (!o.builtin ? liq_mu_verify(&vm, &o, &st) : verify(&vm, &o, &st)) != 0)
        goto out;
    if (!o.builtin ? liq_mu_finish(&vm, &o, &st) != 0
                       : (o.output[0] != '\0' || o.png[0] != '\0') &&
                             liq_fields_write(&o, &st.field, st.checksum, vm.why,
                                              sizeof(vm.why)) != 0)
        goto out;
    failed = 0;
out:
    st.t_total = liq_vm_now() - t0;
    liq_vm_stop(&vm, failed);
    if (failed) {
        fprintf(stderr, "%s: %s\n", prog->name, vm.why);
    } else {
        summary(out, &vm, &o, &st);
        if (o.json[0] != '\0' && write_report(&vm, &o, &st) != 0)
            failed = 1;
        if (o.svg[0] != '\0' && liq_plot_svg(o.svg, &vm, &o, &st) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog->name, o.svg, strerror(errno));
            failed = 1;
        }
        if (o.trace[0] != '\0' && liq_mt_write(o.trace, &vm, &o, &st) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog->name, o.trace, strerror(errno));
            failed = 1;
        }
        if (st.verified == 0)
            failed = 1;
    }
    stats_free(&st);
    liq_vm_free(&vm);
    return usage ? LIQ_EXIT_USAGE : failed ? LIQ_EXIT_FAIL : LIQ_EXIT_OK;
}
