/*
 * liq_master_balance.c - liquid balancing on the master's side (issue 8).  At the
 * end of every epoch each worker reports the median time of its quanta and
 * its speed now; when the last report is in, the master looks at the
 * hosts' capacity (reclaim, seed 002: the workers leave a host its owner
 * needs and come back when it is idle again), re-solves the placement
 * (liq_balance_plan) and sends the plan: the owner of every quantum and
 * the worker of every slot.
 */
#include "liq_master.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lvm_err.h"
#include "pvm3.h"

/* The CPU share one of a host's workers may get: min(1, cap / count); -1 unknown. */
static double
slot_share(double cap, int count)
{
    double s = cap < 0 || count < 1 ? -1 : cap / count;

    return s > 1 ? 1 : s;
}

static int
vm_machines(struct liq_vm *vm, struct liq_stats *st)
{
    int nh = vm->nhosts, nw = vm->nworkers;
    double *cap = calloc((size_t)nh, sizeof(double)), *v = calloc((size_t)nw, sizeof(double));
    unsigned long long *kernel = calloc((size_t)nh, sizeof(*kernel));
    int known;

    if (cap == NULL || v == NULL || kernel == NULL) {
        free(cap);
        free(v);
        free(kernel);
        snprintf(vm->why, sizeof(vm->why), "out of memory for the balancer");
        return -1;
    }
    liq_vm_await_load(vm, 2.0);
    known = liq_vm_capacity(vm, cap, kernel) == 0;
    if (!known)
        memset(kernel, 0, (size_t)nh * sizeof(*kernel));
    for (int w = 0; w < nw; w++) {
        st->wshare[w] = known ? slot_share(cap[vm->whost[w]], vm->host[vm->whost[w]].count) : -1;
        unsigned long long k = kernel[vm->whost[w]];
        size_t n = 0;

        if (k == 0) {
            st->wfull[w] = vm->wcpu[w];
            continue;
        }
        for (int x = 0; x < nw; x++)
            if (kernel[vm->whost[x]] == k)
                v[n++] = vm->wcpu[x];
        st->wfull[w] = liq_median(v, n);
    }
    free(cap);
    free(v);
    free(kernel);
    return 0;
}

int
liq_mb_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    if (st->order != NULL)
        return 0; /* done already, for the first placement */
    struct decomp_grid grid;
    int n = st->g.nquanta, nep = o->epoch > 0 ? o->iters / o->epoch + 1 : 1;

    memset(&grid, 0, sizeof(grid));
    grid.ndim = 3;
    for (int a = 0; a < 3; a++)
        grid.dim[a] = (uint32_t)st->g.q[a];
    st->order = calloc((size_t)n, sizeof(uint32_t));
    st->cost = calloc((size_t)n, sizeof(double));
    st->qbytes = calloc((size_t)n, sizeof(double));
    st->ep = calloc((size_t)nep, sizeof(*st->ep));
    st->hquanta = calloc((size_t)nep * (size_t)vm->nhosts, sizeof(int));
    st->hmodel = calloc((size_t)nep * (size_t)vm->nhosts, sizeof(double));
    st->hwall = calloc((size_t)nep * (size_t)vm->nhosts, sizeof(double));
    st->hshare = calloc((size_t)nep * (size_t)vm->nhosts, sizeof(double));
    st->wnow = calloc((size_t)vm->nworkers, sizeof(double));
    st->wother = calloc((size_t)vm->nworkers, sizeof(double));
    st->wfull = calloc((size_t)vm->nworkers, sizeof(double));
    st->wshare = calloc((size_t)vm->nworkers, sizeof(double));
    st->rec = calloc((size_t)vm->nhosts, sizeof(*st->rec));
    st->ev = calloc((size_t)nep * (size_t)vm->nhosts, sizeof(*st->ev));
    st->owner_prev = calloc((size_t)n, sizeof(int32_t));
    st->rep_from = calloc((size_t)vm->nworkers, sizeof(int));
    st->rep_until = calloc((size_t)vm->nworkers, sizeof(int));
    st->kept = calloc((size_t)vm->nworkers, sizeof(*st->kept));
    if (!st->order || !st->cost || !st->qbytes || !st->ep || !st->hquanta || !st->hmodel ||
        !st->hwall || !st->hshare || !st->wnow ||
        !st->wother || !st->wfull || !st->wshare || !st->rec || !st->ev || !st->owner_prev ||
        !st->rep_from || !st->rep_until || !st->kept ||
        decomp_hilbert_order(&grid, st->order) != 0) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the balancer");
        return -1;
    }
    for (int q = 0; q < n; q++) {
        int lo[3], hi[3];

        liq_quantum_extent(&st->g, q, lo, hi);
        st->qbytes[q] = 8.0 * (hi[0] - lo[0] + 2) * (hi[1] - lo[1] + 2) * (hi[2] - lo[2] + 2);
    }
    for (int h = 0; h < vm->nhosts; h++)
        st->rec[h].below_since = st->rec[h].above_since = -1;
    st->nlive = vm->nworkers;
    st->nkept = vm->nworkers;
    for (int w = 0; w < vm->nworkers; w++) {
        st->rep_from[w] = 1;
        st->rep_until[w] = INT_MAX;
    }
    /* A worker's CPU speed: its probe's updates per CPU-second (the same
     * box on every worker, so they compare across hosts); workers on one
     * machine (hosts of one kernel) share one CPU model, so they get the
     * median of their probes, and a noisy probe does not make the same
     * quantum weigh differently on two of them. */
    return vm_machines(vm, st);
}

int
liq_mb_speeds(const struct liq_vm *vm, const struct liq_stats *st, double *speed)
{
    for (int w = 0; w < vm->nworkers; w++) {
        speed[w] = st->wfull[w] * liq_balance_share(st->wshare[w]);
        if (!(speed[w] > 0))
            return -1;
    }
    return 0;
}

void
liq_mb_free(struct liq_stats *st)
{
    free(st->order);
    free(st->cost);
    free(st->qbytes);
    free(st->ep);
    free(st->hquanta);
    free(st->hmodel);
    free(st->hwall);
    free(st->hshare);
    free(st->wnow);
    free(st->wother);
    free(st->wfull);
    free(st->wshare);
    free(st->rec);
    free(st->ev);
    free(st->owner_prev);
    free(st->rep_from);
    free(st->rep_until);
    if (st->kept != NULL)
        for (int w = 0; w < st->nkept; w++)
            if (st->kept[w].buf > 0)
                pvm_freebuf(st->kept[w].buf);
    free(st->kept);
}

static void
event(const struct liq_vm *vm, struct liq_stats *st, int epoch, int h, int rejoin)
{
    struct liq_event *e = &st->ev[st->nev++];

    e->epoch = epoch;
    e->t_s = liq_vm_now() - st->run_t0;
    e->host = h;
    e->rejoin = rejoin;
    liq_trace_rec(&st->tr.mine, LIQ_TEV_RECLAIM, liq_vm_now(), 0, h, rejoin, epoch, 0, 0);
    if (vm->progress)
        fprintf(stderr, "%s%s: epoch %d: host %s %s\n", isatty(2) ? "\n" : "", vm->who, epoch,
                vm->host[h].name,
                rejoin ? "is idle again: a worker rejoins"
                       : "is needed by its owner: its workers leave");
}

/* The epoch's per-host figures for the report: each host's slowest worker
 * by the balancer's model (its quanta's kernel CPU per iteration at the
 * share it was planned with, over the placement the costs were measured
 * under) and by its compute wall time per iteration; the share its
 * workers were planned with. */
static void
host_times(const struct liq_vm *vm, struct liq_stats *st, const double *share)
{
    double *m = &st->hmodel[st->nep * vm->nhosts], *t = &st->hwall[st->nep * vm->nhosts];
    double *sh = &st->hshare[st->nep * vm->nhosts];

    for (int h = 0; h < vm->nhosts; h++)
        sh[h] = -1;
    for (int w = 0; w < vm->nworkers; w++) {
        double cpu = 0, s = liq_balance_share(share[w]);
        int h = vm->whost[w];

        for (int q = 0; q < st->g.nquanta; q++)
            if (st->owner_prev[q] == w)
                cpu += st->cost[q];
        if (share[w] >= 0 && (sh[h] < 0 || share[w] < sh[h]))
            sh[h] = share[w];
        if (cpu / s > m[h])
            m[h] = cpu / s;
        if (cpu > 0 && st->wnow[w] > t[h])
            t[h] = st->wnow[w];
    }
}

/*
 * Hosts lost with their daemons, and back: a host whose workers were all
 * lost and whose daemon is no longer in the VM is out (its daemon's tid
 * forgotten: the VM may give it to another host); once a host of its name
 * is in the VM again -- a workstation rebooted and added back -- it is
 * watched under its new daemon and counts as evacuated, so that reclaim
 * brings it back as it brings back a host its owner had taken (once its
 * share stays at --rejoin-above).  A host whose daemon stayed (only its
 * worker was lost) is not taken back: what ended the worker may end the
 * next.
 */
static int
host_live(const struct liq_vm *vm, int h)
{
    int live = 0;

    for (int w = vm->host[h].first; w < vm->host[h].first + vm->host[h].count; w++)
        live += vm->tids[w] != 0;
    return live;
}

static void
returning_hosts(struct liq_vm *vm, struct liq_stats *st)
{
    struct pvmhostinfo *hi;
    int nh, narch, look = 0;

    for (int h = 0; h < vm->nhosts; h++)
        look |= host_live(vm, h) == 0;
    if (!look || pvm_config(&nh, &narch, &hi) < 0)
        return;
    for (int h = 0; h < vm->nhosts; h++) {
        struct liq_vm_host *ho = &vm->host[h];
        int i;

        if (host_live(vm, h) > 0)
            continue;
        if (ho->dtid != 0) {
            for (i = 0; i < nh && hi[i].hi_tid != ho->dtid; i++)
                ;
            if (i == nh)
                ho->dtid = 0; /* its daemon left */
            continue;
        }
        for (i = 0; i < nh && strcmp(hi[i].hi_name, ho->name) != 0; i++)
            ;
        if (i == nh)
            continue;
        ho->dtid = hi[i].hi_tid;
        pvm_notify(PvmHostDelete, LIQ_TAG_HOSTGONE, 1, &ho->dtid);
        /* Evacuated, whether it was lost computing or after reclaim had
         * emptied it: either way it comes back through reclaim's rejoin. */
        st->rec[h].evacuated = 1;
        st->rec[h].benched = 0;
        st->rec[h].below_since = st->rec[h].above_since = -1;
        if (vm->progress)
            fprintf(stderr, "%s%s: host %s is in the virtual machine again; it rejoins once "
                            "its share stays at --rejoin-above\n",
                    isatty(2) ? "\n" : "", vm->who, ho->name);
    }
}

/*
 * Who computes in the next epoch, and how fast.  active[w]: the slot's
 * worker may hold quanta; tids[w]: the plan's worker of every slot (0 for
 * none); share[w]: the CPU share its host's daemon says it may get now
 * (-1 unknown); fb[w]: its CPU's speed.  With reclaim on,
 * the hosts' capacities decide which hosts' workers leave or come back;
 * those that come back are spawned and sent the job, to join at the
 * boundary where this plan takes effect.
 */
static int
reclaim(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int epoch,
        int may_act, char *active, int *tids, double *share, double *fb)
{
    int boundary = liq_plan_boundary(epoch); /* where this plan takes effect */
    int nh = vm->nhosts, ret = 0, nnew = 0;
    double *cap = calloc((size_t)nh, sizeof(double));
    int *count = calloc((size_t)nh, sizeof(int)), *act = calloc((size_t)nh, sizeof(int));
    int *fresh = calloc((size_t)vm->nworkers, sizeof(int));

    if (!cap || !count || !act || !fresh) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the balancer");
        ret = -1;
        goto out;
    }
    if (o->reclaim && may_act)
        returning_hosts(vm, st);
    if (liq_vm_capacity(vm, cap, NULL) != 0)
        for (int h = 0; h < nh; h++)
            cap[h] = -1; /* nothing known: nobody leaves or comes, shares are whole CPUs */
    for (int h = 0; h < nh; h++)
        /* Its workers lost (a recovery): it computes no more, and must not
         * be the host reclaim keeps while it benches every other one. */
        count[h] = host_live(vm, h) == 0 && !st->rec[h].evacuated ? 0 : vm->host[h].count;
    for (int w = 0; w < vm->nworkers; w++) {
        double now = slot_share(cap[vm->whost[w]], count[vm->whost[w]]), *used = &st->wshare[w];

        /* A dead band: the samples of a busy machine wander; a share the
         * model follows moves quanta, so only a change of a quarter counts. */
        if (now >= 0 && (*used < 0 || now > 1.25 * *used || now < 0.8 * *used))
            *used = now;
        share[w] = *used;
        active[w] = vm->tids[w] != 0 && !vm->leaving[w];
        tids[w] = active[w] ? vm->tids[w] : 0;
        fb[w] = st->wfull[w];
    }
    if (!o->reclaim || !may_act)
        goto out;
    struct liq_reclaim_opts ro = {o->reclaim_below, o->reclaim_after, o->rejoin_above,
                                  o->rejoin_after};
    int acting = liq_reclaim_step(st->rec, nh, cap, count, liq_vm_now(), &ro, act);

    /* A host whose share is below reclaim_below holds no quanta from this
     * plan on (they leave at once, whatever the gain), though its worker
     * stays until reclaim_after has passed: at a tenth of a CPU a worker
     * with any quanta is the one the others wait for at every exchange
     * (a CFS period's throttle each time), and in the liquid scenario the
     * two quanta the kernels' model left on the cut host cost the other
     * workers 1.3-2.0 s of waiting in the 3 s before it was evacuated. */
    for (int w = 0; w < vm->nworkers; w++)
        if (st->rec[vm->whost[w]].benched)
            active[w] = 0;
    if (acting == 0)
        goto out;
    for (int h = 0; h < nh; h++) {
        const struct liq_vm_host *ho = &vm->host[h];

        if (act[h] == LIQ_EVACUATE) {
            for (int w = ho->first; w < ho->first + ho->count; w++)
                if (active[w]) {
                    active[w] = 0;
                    tids[w] = 0;
                    vm->leaving[w] = 1;
                    st->rep_until[w] = boundary; /* it reports that epoch, then leaves */
                    st->nlive--;
                    st->left_due++;
                }
            event(vm, st, epoch, h, 0);
        } else if (act[h] == LIQ_REJOIN) {
            int back = 0;

            for (int w = ho->first; w < ho->first + ho->count; w++) {
                if (vm->tids[w] != 0)
                    continue; /* its last worker has not left yet */
                if (liq_vm_respawn(vm, w) != 0) {
                    if (vm->progress)
                        fprintf(stderr, "%s: %s; host %s stays out\n", vm->who, vm->why, ho->name);
                    continue;
                }
                active[w] = 1;
                tids[w] = vm->tids[w];
                fresh[nnew++] = vm->tids[w];
                if (liq_mt_expect(vm, st, w) != 0) {
                    ret = -1;
                    goto out;
                }
                st->wnow[w] = 0;
                st->wother[w] = 0;
                st->witer[w] = boundary * o->epoch;
                st->rep_from[w] = boundary + 1;
                st->rep_until[w] = INT_MAX;
                st->nlive++;
                back++;
            }
            if (back > 0)
                event(vm, st, epoch, h, 1);
            else
                st->rec[h].evacuated = 1; /* try again at a later epoch */
        }
    }
    /* The new workers learn the job, with the owners before this plan. */
    if (nnew > 0 && liq_master_job_send(vm, o, st, fresh, nnew, boundary * o->epoch, 0) != 0)
        ret = -1;
out:
    free(cap);
    free(count);
    free(act);
    free(fresh);
    return ret;
}

/* The balancer's input for the plan taken at boundary. */
static void
plan_input(const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st,
           int boundary, const char *active, const double *fb, const double *share,
           struct liq_balance_in *in)
{
    memset(in, 0, sizeof(*in));
    in->nquanta = st->g.nquanta;
    in->nworkers = vm->nworkers;
    in->order = st->order;
    in->cost = st->cost;
    in->points = st->qweight;
    in->bytes = st->qbytes;
    in->owner = st->owner;
    in->measured = st->owner_prev;
    in->cpu_speed = fb;
    in->share = share;
    in->wtime = st->wnow;
    in->active = active;
    in->lambda = vm->lambda;
    in->tau = vm->tau;
    in->remaining = o->iters - boundary * o->epoch;
    in->min_gain = o->min_gain;
    in->wanted = st->nep > 0 && st->ep[st->nep - 1].wanted && !st->ep[st->nep - 1].applied;
}

/* Record the plan next as the owners from now on, and the epoch's figures. */
static void
plan_record(struct liq_vm *vm, struct liq_stats *st, int epoch, int boundary,
            const int32_t *next, int *owners)
{
    int n = st->g.nquanta;
    struct liq_epoch *ep = &st->ep[st->nep];

    /* The placement of the epoch reported next: the one before this plan,
     * unless the plan is taken at this epoch's end (the first). */
    if (boundary != epoch)
        memcpy(st->owner_prev, st->owner, (size_t)n * sizeof(int32_t));
    else
        memcpy(st->owner_prev, next, (size_t)n * sizeof(int32_t));
    for (int q = 0; q < n; q++) {
        st->wquanta[st->owner[q]]--;
        st->owner[q] = next[q];
        st->wquanta[next[q]]++;
        owners[q] = next[q];
        st->hquanta[st->nep * vm->nhosts + vm->whost[next[q]]]++;
    }
    st->moved_total += ep->moved;
    st->bytes_total += ep->bytes;
    st->nep++;
    st->reported = 0;
}

/* Send the owners from boundary on to every worker: those of every slot,
 * leaving and new, take it there together. */
static int
plan_send(struct liq_vm *vm, int boundary, int *owners, int n, int *tids, int *to, int ckmul)
{
    int nw = vm->nworkers, nto = 0, rc;

    for (int w = 0; w < nw; w++)
        if (vm->tids[w] != 0)
            to[nto++] = vm->tids[w];
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&boundary, 1, 1);
    pvm_pkint(owners, n, 1);
    pvm_pkint(&nw, 1, 1);
    pvm_pkint(tids, nw, 1);
    pvm_pkint(&ckmul, 1, 1);
    if ((rc = pvm_mcast(to, nto, LIQ_TAG_PLAN)) < 0) {
        snprintf(vm->why, sizeof(vm->why), "the plan of boundary %d could not be sent (%s)",
                 boundary, lvm_errtext(rc));
        return -1;
    }
    return 0;
}

/*
 * --checkpoint-every auto, once checkpoints were made: the multiple of
 * their first spacing (the model's, liq_master_ckpt.c) that keeps their
 * measured cost at --checkpoint-share of the run.  The slowest worker's seconds
 * per checkpoint over the run's seconds per iteration so far (epoch's
 * reports come at boundary epoch) is the spacing the share allows.  The
 * multiple only grows: a schedule that went back and forth could pass
 * checkpoint after checkpoint by.
 */
static void
ck_space(const struct liq_opts *o, struct liq_stats *st, int epoch)
{
    struct liq_ckpt *ck = &st->ck;
    double cost = 0, t_it, want;
    int done = epoch * o->epoch - st->dk.resumed_from;

    if (!ck->on || o->ckpt_every >= 0 || ck->wcks == NULL || ck->iters <= 0 || done <= 0)
        return;
    for (int w = 0; w < st->nkept; w++)
        if (ck->wckn[w] > 0 && ck->wcks[w] / ck->wckn[w] > cost)
            cost = ck->wcks[w] / ck->wckn[w];
    t_it = (liq_vm_now() - st->run_t0) / done;
    if (!(cost > 0) || !(t_it > 0))
        return;
    want = ceil(cost / (o->ck_share * t_it) / ck->iters);
    if (want > (double)o->iters / ck->iters + 1)
        want = (double)o->iters / ck->iters + 1;
    if (want > LIQ_MAX_CKMUL)
        want = LIQ_MAX_CKMUL;
    if (want > ck->mul)
        ck->mul = (int)want;
}

/* Decide the placement from liq_plan_boundary(epoch) on and send the
 * plan; when no boundary is left to take it, only the epoch's figures. */
static int
plan(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int epoch)
{
    int boundary = liq_plan_boundary(epoch), last = (o->iters - 1) / o->epoch;
    int taken = boundary <= last && !st->stopped;
    struct liq_balance_in in;
    struct liq_epoch *ep = &st->ep[st->nep];
    int n = st->g.nquanta, nw = vm->nworkers, rc = -1;
    int32_t *next = malloc((size_t)n * sizeof(int32_t));
    int *owners = malloc((size_t)n * sizeof(int)), *tids = malloc((size_t)nw * sizeof(int));
    int *to = malloc((size_t)nw * sizeof(int));
    char *active = malloc((size_t)nw);
    double *fb = malloc((size_t)nw * sizeof(double)), t0 = liq_vm_now();
    double *share = malloc((size_t)nw * sizeof(double));

    if (!next || !owners || !tids || !to || !active || !fb || !share) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the balancer");
        goto out;
    }
    if (reclaim(vm, o, st, epoch, taken, active, tids, share, fb) != 0)
        goto out;
    plan_input(vm, o, st, boundary, active, fb, share, &in);
    if (liq_balance_plan(&in, next, ep) != 0) {
        snprintf(vm->why, sizeof(vm->why), "the balancer found no worker to place the quanta on");
        goto out;
    }
    if (!taken) {
        /* Nobody would take it: the epoch's figures only. */
        memcpy(next, st->owner, (size_t)n * sizeof(int32_t));
        ep->applied = ep->wanted = ep->forced = ep->moved = 0;
        ep->bytes = 0;
        ep->after_s = ep->before_s;
    }
    ep->epoch = epoch;
    ep->decide_s = liq_vm_now() - t0;
    ep->t_s = liq_vm_now() - st->run_t0;
    ep->publish_s = t0 - st->t_first;
    host_times(vm, st, share);
    plan_record(vm, st, epoch, boundary, next, owners);
    liq_trace_rec(&st->tr.mine, LIQ_TEV_PLAN, t0, liq_vm_now(), epoch, ep->applied, ep->moved,
                  (int)(ep->be * 1000), ep->forced);
    if (taken)
        ck_space(o, st, epoch);
    rc = taken ? plan_send(vm, boundary, owners, n, tids, to, st->ck.mul) : 0;
out:
    free(next);
    free(owners);
    free(tids);
    free(to);
    free(active);
    free(fb);
    free(share);
    return rc;
}

int
liq_mb_plan_record(int boundary)
{
    return boundary == 1 ? 0 : liq_plan_at(boundary) ? boundary - 2 : -1;
}

/*
 * Whether the plan decided from epoch e's reports must wait for a verdict:
 * an until rule may stop the job at a reduction before the boundary that
 * plan takes effect at, and the workers that stop there never take it (nor
 * leave, nor join, by it).  So the plan waits for every such verdict; the
 * workers wait for it only when that reduction is the last iteration
 * before the boundary.
 */
static int
plan_waits(const struct liq_opts *o, const struct liq_stats *st, int epoch)
{
    const struct liquid *lq = o->user;
    int at = liq_plan_boundary(epoch) * o->epoch;

    if (lq == NULL || lq->until < 0 || st->stopped || at > o->iters)
        return 0;
    for (int t = st->red_done + 1; t < at; t++)
        if (liq_user_due(lq, lq->until, t, o->iters))
            return 1;
    return 0;
}

/* The workers that compute in epoch e, and so report it (one that left
 * since reported its last epoch before it went). */
static int
reporters(const struct liq_stats *st, int nworkers, int e)
{
    int n = 0;

    for (int w = 0; w < nworkers; w++)
        n += st->rep_from[w] <= e && e <= st->rep_until[w];
    return n;
}

/*
 * Take worker w's report of `epoch` (its header read, the rest in the
 * active receive buffer), which came at `came` (liq_vm_now()).  1 when it
 * completed the epoch's reports and the plan went out, 0 when others are
 * still due, -1 on a bad report.
 */
static int
take_report(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w,
            int epoch, int count, double came)
{
    int held = 0;
    double recent, move, other, cks;
    int ckn;

    /* The quanta it held in that epoch (plan() keeps that placement). */
    for (int q = 0; q < st->g.nquanta; q++)
        held += st->owner_prev[q] == w;
    if (epoch != st->nep + 1 || count != held || epoch < st->rep_from[w] ||
        epoch > st->rep_until[w])
        goto bad;
    for (int i = 0; i < count; i++) {
        int id;
        double med;

        if (pvm_upkint(&id, 1, 1) < 0 || pvm_upkdouble(&med, 1, 1) < 0 || id < 0 ||
            id >= st->g.nquanta || st->owner_prev[id] != w || !(med >= 0))
            goto bad;
        st->cost[id] = med;
    }
    if (pvm_upkdouble(&recent, 1, 1) < 0 || pvm_upkdouble(&move, 1, 1) < 0 ||
        pvm_upkdouble(&other, 1, 1) < 0 || pvm_upkdouble(&cks, 1, 1) < 0 ||
        pvm_upkint(&ckn, 1, 1) < 0 || !(recent >= 0) || !(move >= 0) || !(other >= 0) ||
        !isfinite(other) || !(cks >= 0) || !isfinite(cks) || ckn < 0)
        goto bad;
    if (st->ck.wcks != NULL) {
        st->ck.wcks[w] = cks;
        st->ck.wckn[w] = ckn;
    }
    st->wnow[w] = recent;
    /* For the report.  A worker that held nothing sent no ghosts: what it
     * measured is the CPU of racing through an empty epoch. */
    st->wother[w] = count > 0 ? other : 0;
    /* Its last move was at boundary epoch - 1. */
    int e = liq_mb_plan_record(epoch - 1);

    if (e >= 0 && e < st->nep && move > st->ep[e].move_s)
        st->ep[e].move_s = move;
    if (st->reported == 0 || came < st->t_first)
        st->t_first = came;
    if (++st->reported < reporters(st, vm->nworkers, epoch))
        return 0;
    if (plan_waits(o, st, epoch)) {
        st->plan_due = epoch;
        return 0;
    }
    return plan(vm, o, st, epoch) == 0 ? 1 : -1;
bad:
    snprintf(vm->why, sizeof(vm->why),
             "worker t%x sent a malformed epoch report (epoch %d, %d quanta; expected epoch %d, "
             "%d quanta)", (unsigned)vm->tids[w], epoch, count, st->nep + 1, held);
    return -1;
}

/* Epoch e's reports are complete and its plan made: the early reports
 * kept are the next epoch's. */
static int
take_kept(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    int rc;

    for (int x = 0; x < vm->nworkers; x++) {
        int b = st->kept[x].buf, old;

        if (b <= 0)
            continue;
        st->kept[x].buf = 0;
        if ((old = pvm_setrbuf(b)) > 0)
            pvm_freebuf(old);
        rc = take_report(vm, o, st, x, st->nep + 1, st->kept[x].count, st->kept[x].t);
        pvm_freebuf(b);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/*
 * An epoch report.  The plan decided from epoch e's reports takes effect at
 * the boundary after the next (e + 1; the first epoch's alone at its own
 * end), so nobody waits for the master at a boundary: the workers send
 * their reports and go on, and by the next boundary the plan is there.  A
 * worker may then report epoch e + 1 before the last report of epoch e
 * has come (never further ahead: it could not pass boundary e + 1 without
 * that plan); its report is kept, and taken when epoch e's are complete.
 */
int
liq_mb_epoch(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w)
{
    int epoch = -1, count = -1, rc;

    if (pvm_upkint(&epoch, 1, 1) < 0 || pvm_upkint(&count, 1, 1) < 0)
        epoch = -1;
    if (epoch == st->nep + 2 && st->kept[w].buf == 0) {
        struct liq_kept *k = &st->kept[w];

        if ((k->buf = pvm_setrbuf(0)) <= 0) {
            k->buf = 0;
            snprintf(vm->why, sizeof(vm->why), "no buffer to keep an early epoch report in");
            return -1;
        }
        k->count = count;
        k->t = liq_vm_now();
        return 0;
    }
    if ((rc = take_report(vm, o, st, w, epoch, count, liq_vm_now())) <= 0)
        return rc;
    return take_kept(vm, o, st);
}

int
liq_mb_verdict(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int it)
{
    int e = st->plan_due;

    st->red_done = it;
    if (e <= 0 || plan_waits(o, st, e))
        return 0;
    st->plan_due = 0;
    if (plan(vm, o, st, e) != 0)
        return -1;
    return st->stopped ? 0 : take_kept(vm, o, st);
}

int
liq_mb_left(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w)
{
    double totals[2], move;
    int iters;

    if (!vm->leaving[w] || pvm_upkdouble(totals, 2, 1) < 0 || pvm_upkint(&iters, 1, 1) < 0 ||
        pvm_upkdouble(&move, 1, 1) < 0 || st->wquanta[w] != 0) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x left without being asked to",
                 (unsigned)vm->tids[w]);
        return -1;
    }
    st->witer[w] = iters;
    /* It handed its quanta over at boundary iters / epoch. */
    int e = o->epoch > 0 ? liq_mb_plan_record(iters / o->epoch) : -1;

    if (e >= 0 && e < st->nep && move > st->ep[e].move_s)
        st->ep[e].move_s = move;
    /* Its exit is no failure now: the slot has no worker. */
    liq_vm_slot_empty(vm, w, 'e');
    vm->leaving[w] = 0;
    st->left_due--;
    st->left_all++;
    return 0;
}

/*
 * A recovery (liq_master_ckpt.c) rolled the job back to checkpoint c, an
 * epoch boundary B = c / epoch whose plan the workers took before they
 * copied their quanta; st->owner is the placement from c on.  The reports
 * due next are of epoch B + 1, made under that placement; epochs after B
 * are measured again, so their figures go.  The plan of boundary B + 1
 * (decided from epoch B's reports, before the failure, for workers some of
 * which are gone) is the recovery's placement, sent again; boundaries 1
 * and 2 need none (liq_plan_at).
 */
int
liq_mb_rollback(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int c)
{
    int n = st->g.nquanta, nw = vm->nworkers, nh = vm->nhosts;
    int b = o->balance && o->epoch > 0 ? c / o->epoch : 0, last, rc = 0;

    memset(st->wquanta, 0, (size_t)nw * sizeof(int));
    for (int q = 0; q < n; q++)
        st->wquanta[st->owner[q]]++;
    st->nlive = 0;
    for (int w = 0; w < nw; w++) {
        st->nlive += vm->tids[w] != 0;
        st->witer[w] = c;
    }
    st->left_due = 0;
    if (st->order == NULL || !o->balance || o->epoch <= 0)
        return 0;
    last = (o->iters - 1) / o->epoch;
    memcpy(st->owner_prev, st->owner, (size_t)n * sizeof(int32_t));
    for (int w = 0; w < nw; w++) {
        if (st->kept[w].buf > 0)
            pvm_freebuf(st->kept[w].buf);
        st->kept[w].buf = 0;
        st->rep_from[w] = b + 1;
        st->rep_until[w] = vm->tids[w] != 0 ? INT_MAX : b;
    }
    st->reported = 0;
    st->nep = b;
    st->plan_due = 0;
    st->red_done = c;
    for (int e = b; e <= last; e++) {
        memset(&st->hquanta[e * nh], 0, (size_t)nh * sizeof(int));
        memset(&st->hmodel[e * nh], 0, (size_t)nh * sizeof(double));
        memset(&st->hwall[e * nh], 0, (size_t)nh * sizeof(double));
        memset(&st->hshare[e * nh], 0, (size_t)nh * sizeof(double));
    }
    if (b >= 1) {
        /* The plan recorded at B is now the recovery's placement. */
        struct liq_epoch *ep = &st->ep[b - 1];

        if (ep->epoch != b) {
            memset(ep, 0, sizeof(*ep));
            ep->epoch = b;
            ep->be = ep->be_cpu = 1;
        }
        ep->applied = ep->forced = 1;
        memset(&st->hquanta[(b - 1) * nh], 0, (size_t)nh * sizeof(int));
        for (int q = 0; q < n; q++)
            st->hquanta[(b - 1) * nh + vm->whost[st->owner[q]]]++;
    }
    if (b >= 2 && b + 1 <= last) {
        int *owners = malloc((size_t)n * sizeof(int)), *to = malloc((size_t)nw * sizeof(int));

        if (owners == NULL || to == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the balancer");
            rc = -1;
        } else {
            for (int q = 0; q < n; q++)
                owners[q] = st->owner[q];
            rc = plan_send(vm, b + 1, owners, n, vm->tids, to, st->ck.mul);
        }
        free(owners);
        free(to);
    }
    return rc;
}
