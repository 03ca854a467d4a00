/*
 * liq_master_ckpt.c - checkpoints and recovery on the master's side (issue
 * 26; liq.h, "checkpoints", says what the workers do).  The master counts
 * the buddies' acknowledgements of each checkpoint's copies and confirms
 * a checkpoint once every quantum's copy is held (two-phase: the workers
 * keep the last confirmed copies until then).  When a worker exits or its
 * host leaves the VM (liq_vm_next says LIQ_VM_LOST), it places every
 * quantum on the survivor that holds its copy of the last confirmed
 * checkpoint, makes every survivor give its job up and say so (after that
 * nothing older comes from it), rolls its own state back (the balancer's
 * in liq_master_balance.c) and sends the job again from that checkpoint
 * with the next generation.  A failure while it waits for the survivors
 * starts the same again with the survivors left, as long as every
 * quantum still has a copy.
 */
#include "liq_master.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lvm_err.h"
#include "pvm3.h"
#include "wire.h"

/* The heavy octant's weight on an iteration's points. */
static double
ck_heavy(const struct liq_opts *o)
{
    return o->heavy > 1 ? 1 + (o->heavy - 1) / 8.0 : 1;
}

/* An epoch on the slowest worker if each held an equal share of the
 * points: what the hung workers' timeout starts from (liq_vm_watch). */
static double
ck_epoch_model(const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st)
{
    double pts = (double)st->g.n[0] * st->g.n[1] * st->g.n[2], slow = 0;

    for (int w = 0; w < vm->nworkers; w++)
        if (vm->wspeed[w] > 0 && (slow == 0 || vm->wspeed[w] < slow))
            slow = vm->wspeed[w];
    return slow > 0 ? o->epoch * pts * ck_heavy(o) / vm->nworkers / slow : 0;
}

/*
 * --checkpoint-every auto: the fewest epochs between checkpoints whose
 * copies the model prices at most --checkpoint-share of the iterations'
 * time, but no more than a quarter of the job's epochs, so that their cost
 * is measured early in the job; with balancing the plans then space them
 * out by that cost (ck_space, liq_master_balance.c).  A worker sends its
 * share of the state and keeps a buddy's once per checkpoint: twice tau
 * per byte, plus lambda (the sends overlap); an iteration takes the grid's
 * points (heavy ones counted as often as they run) over the workers'
 * probed speeds together.
 */
static int
ck_auto(const struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st)
{
    double pts = (double)st->g.n[0] * st->g.n[1] * st->g.n[2], speed = 0, state, copy, iter;
    int nstate = o->user != NULL ? liq_user_nboxes(o->user) : 1, k;

    for (int w = 0; w < vm->nworkers; w++)
        speed += vm->wspeed[w];
    state = 8.0 * nstate * pts / vm->nworkers;
    copy = 2 * (vm->ringn >= 2 ? vm->tau : 1e-9) * state + vm->lambda;
    iter = speed > 0 ? pts * ck_heavy(o) / speed : 0;
    if (!(iter > 0) || o->epoch <= 0)
        return 1;
    k = (int)(copy / (o->ck_share * o->epoch * iter)) + 1;
    if (k > o->iters / o->epoch / 4)
        k = o->iters / o->epoch / 4;
    return k < 1 ? 1 : k;
}

int
liq_mc_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liq_ckpt *ck = &st->ck;
    int n = st->g.nquanta, stride = o->user != NULL ? liq_user_stride(o->user) : 0;

    if ((vm->lost = calloc((size_t)vm->nworkers, 1)) == NULL)
        goto nomem;
    ck->mul = 1;
    if (o->ckpt_every == 0)
        return 0;
    ck->on = 1;
    vm->ckpt = 1;
    if (liq_vm_watch(vm, o->worker_timeout, ck_epoch_model(vm, o, st)) != 0)
        return -1;
    ck->every = o->ckpt_every > 0 ? o->ckpt_every : ck_auto(vm, o, st);
    /* Both may be 100000: a period past the job's end is its end. */
    ck->iters = (long long)ck->every * o->epoch > o->iters ? (o->iters > 0 ? o->iters : 1)
                                                          : ck->every * o->epoch;
    /* A checkpoint is a block's end: blocks never cross a reduction point. */
    if (stride > 0 && ck->iters % stride != 0)
        ck->iters += stride - ck->iters % stride;
    ck->otid = calloc((size_t)n, sizeof(int));
    ck->btid = calloc((size_t)n, sizeof(int));
    ck->wsec = calloc((size_t)vm->nworkers, sizeof(double));
    ck->wbytes = calloc((size_t)vm->nworkers, sizeof(double));
    ck->wcks = calloc((size_t)vm->nworkers, sizeof(double));
    ck->wckn = calloc((size_t)vm->nworkers, sizeof(int));
    if (ck->otid == NULL || ck->btid == NULL || ck->wsec == NULL || ck->wbytes == NULL ||
        ck->wcks == NULL || ck->wckn == NULL)
        goto nomem;
    for (int i = 0; i < LIQ_CK_PENDING; i++) {
        ck->pend[i].otid = calloc((size_t)n, sizeof(int));
        ck->pend[i].btid = calloc((size_t)n, sizeof(int));
        if (ck->pend[i].otid == NULL || ck->pend[i].btid == NULL)
            goto nomem;
    }
    return 0;
nomem:
    snprintf(vm->why, sizeof(vm->why), "out of memory for the checkpoints");
    return -1;
}

void
liq_mc_free(struct liq_stats *st)
{
    struct liq_ckpt *ck = &st->ck;

    free(ck->otid);
    free(ck->btid);
    free(ck->wsec);
    free(ck->wbytes);
    free(ck->wcks);
    free(ck->wckn);
    for (int i = 0; i < LIQ_CK_PENDING; i++) {
        free(ck->pend[i].otid);
        free(ck->pend[i].btid);
    }
    free(ck->fail);
    free(ck->hand);
    memset(ck, 0, sizeof(*ck));
}

void
liq_mc_done(struct liq_stats *st, int w)
{
    double f[2] = { 0, 0 };

    if (pvm_upkdouble(f, 2, 1) < 0 || !st->ck.on)
        return;
    if (f[0] >= 0 && f[0] < 1e9 && f[1] >= 0 && f[1] < 1e18) {
        st->ck.wsec[w] = f[0];
        st->ck.wbytes[w] = f[1];
    }
}

void
liq_mc_progress(struct liq_stats *st)
{
    struct liq_ckpt *ck = &st->ck;

    /* Reports come only from the generation running now (the recovery's
     * handshake dropped the ones before). */
    for (int i = ck->nfail - 1; i >= 0 && ck->fail[i].resumed_s < 0; i--)
        ck->fail[i].resumed_s = liq_vm_now() - st->run_t0 - ck->fail[i].t_s;
}

/* Every copy of checkpoint it is held: it replaces the last one. */
static int
ck_confirm(struct liq_vm *vm, struct liq_stats *st, int p)
{
    struct liq_ckpt *ck = &st->ck;
    int it = ck->pend[p].iter, *x, msg[3] = { vm->gen, it, 0 }, nto = 0, rc;
    int *to = malloc((size_t)vm->nworkers * sizeof(int));

    if (to == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the checkpoints");
        return -1;
    }
    x = ck->otid, ck->otid = ck->pend[p].otid, ck->pend[p].otid = x;
    x = ck->btid, ck->btid = ck->pend[p].btid, ck->pend[p].btid = x;
    ck->iter = it;
    ck->count++;
    for (int i = 0; i < LIQ_CK_PENDING; i++)
        if (ck->pend[i].iter <= it)
            ck->pend[i].iter = 0;
    for (int w = 0; w < vm->nworkers; w++)
        if (vm->tids[w] != 0)
            to[nto++] = vm->tids[w];
    /* The third int asks for the copies of it for the disk (liq_master_disk.c). */
    msg[2] = liq_md_due(vm, st, it);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(msg, 3, 1);
    rc = nto > 0 ? pvm_mcast(to, nto, LIQ_TAG_CKCONFIRM) : 0;
    free(to);
    if (rc < 0) {
        snprintf(vm->why, sizeof(vm->why), "checkpoint %d could not be confirmed (%s)", it,
                 lvm_errtext(rc));
        return -1;
    }
    return 0;
}

/*
 * Copies a leaving worker handed over, for quantum id of iteration it: the
 * worker that took one holds it in the leaver's place, in the confirmed
 * checkpoint's record or a pending one's.  Applied when the word comes and
 * again at each acknowledgement of that copy, whichever comes first.
 */
static void
ck_hand_apply(struct liq_ckpt *ck, int it, int id)
{
    for (int i = 0; i < ck->nhand; i++) {
        const struct liq_ckhand *h = &ck->hand[i];
        int *o = NULL, *b = NULL;

        if (h->iter != it || h->id != id)
            continue;
        if (it == ck->iter) {
            o = ck->otid;
            b = ck->btid;
        }
        for (int p = 0; p < LIQ_CK_PENDING && o == NULL; p++)
            if (ck->pend[p].iter == it) {
                o = ck->pend[p].otid;
                b = ck->pend[p].btid;
            }
        if (o == NULL)
            continue;
        if (o[id] == h->from)
            o[id] = h->to;
        else if (b[id] == h->from)
            b[id] = h->to;
    }
}

int
liq_mc_handed(struct liq_vm *vm, struct liq_stats *st, int w)
{
    struct liq_ckpt *ck = &st->ck;
    int msg[4] = { -1, -1, -1, 0 };

    if (!ck->on)
        return 0;
    if (pvm_upkint(msg, 4, 1) < 0 || msg[1] <= 0 || msg[1] % ck->iters != 0 || msg[2] < 0 ||
        msg[2] >= st->g.nquanta) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed checkpoint message",
                 (unsigned)vm->tids[w]);
        return -1;
    }
    if (msg[0] != vm->gen || msg[1] < ck->iter || msg[3] == vm->tids[w])
        return 0; /* of a generation given up, or a checkpoint replaced */
    if (ck->nhand == ck->caphand) {
        int cap = ck->caphand ? 2 * ck->caphand : 64;
        struct liq_ckhand *x = realloc(ck->hand, (size_t)cap * sizeof(*x));

        if (x == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the checkpoints");
            return -1;
        }
        ck->hand = x;
        ck->caphand = cap;
    }
    ck->hand[ck->nhand++] = (struct liq_ckhand){ msg[1], msg[2], msg[3], vm->tids[w] };
    ck_hand_apply(ck, msg[1], msg[2]);
    return 0;
}

int
liq_mc_ack(struct liq_vm *vm, struct liq_stats *st, int w)
{
    struct liq_ckpt *ck = &st->ck;
    int hdr[4] = { -1, -1, 0, -1 }, n = st->g.nquanta, p = -1;
    double bytes = 0;

    if (!ck->on)
        return 0;
    if (pvm_upkint(hdr, 4, 1) < 0 || pvm_upkdouble(&bytes, 1, 1) < 0 || hdr[3] < 0 ||
        hdr[3] >= n || hdr[1] <= 0 || hdr[1] % ck->iters != 0 || !(bytes >= 0)) {
        snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed checkpoint message",
                 (unsigned)vm->tids[w]);
        return -1;
    }
    if (hdr[0] != vm->gen || hdr[1] <= ck->iter)
        return 0; /* of a generation given up, or of a checkpoint replaced */
    ck->bytes += bytes;
    for (int i = 0; i < LIQ_CK_PENDING && p < 0; i++)
        if (ck->pend[i].iter == hdr[1])
            p = i;
    if (p < 0) {
        /* A new checkpoint: a free entry, else the oldest's. */
        for (int i = 0; i < LIQ_CK_PENDING; i++)
            if (p < 0 || ck->pend[i].iter < ck->pend[p].iter)
                p = i;
        ck->pend[p].iter = hdr[1];
        ck->pend[p].got = 0;
        memset(ck->pend[p].otid, 0, (size_t)n * sizeof(int));
        memset(ck->pend[p].btid, 0, (size_t)n * sizeof(int));
    }
    if (ck->pend[p].otid[hdr[3]] == 0)
        ck->pend[p].got++;
    ck->pend[p].otid[hdr[3]] = hdr[2];
    ck->pend[p].btid[hdr[3]] = vm->tids[w];
    ck_hand_apply(ck, hdr[1], hdr[3]);
    return ck->pend[p].got == n ? ck_confirm(vm, st, p) : 0;
}

/* Record the failure of slot w (what: vm->why). */
static int
fail_push(struct liq_vm *vm, struct liq_stats *st, int w, int reached, int during)
{
    struct liq_ckpt *ck = &st->ck;
    struct liq_failure *f;

    if (ck->nfail == ck->capfail) {
        int cap = ck->capfail ? 2 * ck->capfail : 4;
        struct liq_failure *x = realloc(ck->fail, (size_t)cap * sizeof(*x));

        if (x == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the failures");
            return -1;
        }
        ck->fail = x;
        ck->capfail = cap;
    }
    f = &ck->fail[ck->nfail++];
    memset(f, 0, sizeof(*f));
    f->t_s = liq_vm_now() - st->run_t0;
    f->tid = vm->tids[w];
    f->host = vm->whost[w];
    snprintf(f->what, sizeof(f->what), "%.*s", (int)sizeof(f->what) - 1, vm->why);
    f->reached = reached;
    f->during = during;
    f->resumed_s = -1;
    return 0;
}

/* A traced worker that is gone sends no trace. */
static void
trace_gone(struct liq_stats *st, int tid)
{
    for (int i = 0; i < st->tr.nw; i++)
        if (st->tr.w[i].tid == tid && !st->tr.w[i].done) {
            st->tr.w[i].done = 1;
            st->tr.due--;
        }
}

/* Slot w is out of the job: lost, or evacuated while the job was given up. */
static void
slot_gone(struct liq_vm *vm, struct liq_stats *st, int w)
{
    if (vm->leaving[w] && !vm->lost[w])
        pvm_kill(vm->tids[w]); /* its hand-over belongs to the generation given up */
    if (vm->lost[w]) {
        /* It may only be stopped or cut off, and run again later: told to
         * quit (a link between tasks may outlive its host's daemon). */
        pvm_initsend(PvmDataDefault);
        pvm_send(vm->tids[w], LIQ_TAG_QUIT);
    }
    trace_gone(st, vm->tids[w]);
    liq_vm_slot_empty(vm, w, vm->lost[w] ? 'l' : 'e');
    vm->leaving[w] = 0;
    vm->lost[w] = 0;
}

/*
 * The owner of every quantum from checkpoint c on: the worker that held
 * it then, else the buddy that holds its copy; for c = 0 (no checkpoint
 * yet: the job starts again) its owner now if alive, else the survivors
 * in turn.  0, or -1 with vm->why naming the quanta no survivor holds.
 */
static int
replace(struct liq_vm *vm, struct liq_stats *st, int c, int32_t *owner, int *replaced)
{
    struct liq_ckpt *ck = &st->ck;
    int n = st->g.nquanta, nw = vm->nworkers, next = 0, nlost = 0;
    size_t len = 0;
    char list[256] = "";

    *replaced = 0;
    for (int q = 0; q < n; q++) {
        int s = -1;

        if (c > 0) {
            s = liq_vm_worker(vm, ck->otid[q]);
            if (s < 0 || vm->tids[s] == 0)
                s = liq_vm_worker(vm, ck->btid[q]);
            if (s >= 0 && vm->tids[s] == 0)
                s = -1;
            *replaced += s >= 0 && vm->tids[s] != ck->otid[q];
        } else if (vm->tids[st->owner[q]] != 0) {
            s = st->owner[q];
        } else {
            for (int k = 0; k < nw && s < 0; k++, next++)
                if (vm->tids[next % nw] != 0)
                    s = next % nw;
            next++;
            (*replaced)++;
        }
        if (s < 0) {
            if (len < sizeof(list) - 16)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
                                        nlost ? ", " : "", q);
            else if (len < sizeof(list) - 4)
                len += (size_t)snprintf(list + len, sizeof(list) - len, ", ...");
            nlost++;
        }
        owner[q] = s;
    }
    if (nlost == 0)
        return 0;
    char cause[200];

    snprintf(cause, sizeof(cause), "%.*s", (int)sizeof(cause) - 1, vm->why);
    if (nlost == n)
        snprintf(vm->why, sizeof(vm->why), "%s; all %d quant%s lost (%s): no worker of the job "
                 "is left", cause, nlost, nlost == 1 ? "um" : "a", list);
    else
        snprintf(vm->why, sizeof(vm->why),
             "%s; %d quant%s lost (%s): neither the worker that held %s at the checkpoint of "
             "iteration %d nor the buddy with %s copy survives",
             cause, nlost, nlost == 1 ? "um" : "a", list, nlost == 1 ? "it" : "them", c,
             nlost == 1 ? "its" : "their");
    return -1;
}

/*
 * Wait for every survivor's RECOVERED of this generation, dropping
 * whatever else comes (the job given up).  0; 1 when another worker or
 * host was lost meanwhile (vm->lost marks it, vm->why says it); -1 when
 * the VM failed.
 */
static int
handshake(struct liq_vm *vm, struct liq_stats *st, int need)
{
    char *seen = calloc((size_t)vm->nworkers, 1);
    int rc = 0;

    if (seen == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the recovery");
        return -1;
    }
    /* Every survivor must answer: one that stays silent is lost too. */
    liq_vm_rewatch(vm);
    while (need > 0 && rc == 0) {
        int b = liq_vm_recv(vm), bytes, t, s, who = 0, g = -1, w;

        if (b == LIQ_VM_LOST) {
            snprintf(vm->why + strlen(vm->why), sizeof(vm->why) - strlen(vm->why),
                     " during the recovery");
            rc = 1;
            break;
        }
        if (b < 0) {
            snprintf(vm->why, sizeof(vm->why), "receive during the recovery: %s",
                     lvm_errtext(b));
            rc = -1;
            break;
        }
        pvm_bufinfo(b, &bytes, &t, &s);
        if (t == LIQ_TAG_EXITED) {
            pvm_upkint(&who, 1, 1);
            if ((w = liq_vm_worker(vm, who)) >= 0) {
                snprintf(vm->why, sizeof(vm->why),
                         "worker t%x on host %s exited during the recovery", (unsigned)who,
                         vm->host[vm->whost[w]].name);
                vm->lost[w] = 1;
                rc = 1;
            }
        } else if (t == LIQ_TAG_HOSTGONE) {
            pvm_upkint(&who, 1, 1);
            for (int h = 0; h < vm->nhosts; h++) {
                if (vm->host[h].dtid != who)
                    continue;
                for (w = 0; w < vm->nworkers; w++)
                    if (vm->whost[w] == h && vm->tids[w] != 0) {
                        snprintf(vm->why, sizeof(vm->why),
                                 "host %s left the virtual machine during the recovery",
                                 vm->host[h].name);
                        vm->lost[w] = 1;
                        rc = 1;
                    }
                vm->host[h].dtid = 0; /* as vm_host_lost */
            }
        } else if (t == LIQ_TAG_TRACE && liq_vm_worker(vm, s) >= 0) {
            /* A survivor that had finished its part: its trace is kept. */
            if (liq_mt_take(vm, st, s) != 0) {
                rc = -1;
                break;
            }
        } else if (t == LIQ_TAG_RECOVERED && (w = liq_vm_worker(vm, s)) >= 0) {
            pvm_upkint(&g, 1, 1);
            if (g == vm->gen && !seen[w]) {
                seen[w] = 1;
                need--;
            }
        }
    }
    free(seen);
    return rc;
}

int
liq_mc_recover(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liq_ckpt *ck = &st->ck;
    int n = st->g.nquanta, nw = vm->nworkers, reached = 0, during = 0, first = ck->nfail;
    int replaced = 0, c = ck->iter, rc = -1, nto, msg[2], disk = 0;
    int32_t *owner = malloc((size_t)n * sizeof(int32_t));
    int *to = malloc((size_t)nw * sizeof(int));
    double t0 = liq_vm_now();

    if (owner == NULL || to == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the recovery");
        goto out;
    }
    for (int w = 0; w < nw; w++)
        if (vm->tids[w] != 0 && st->witer[w] > reached)
            reached = st->witer[w];
    for (;;) {
        for (int w = 0; w < nw; w++)
            if (vm->lost[w]) {
                if (fail_push(vm, st, w, reached, during) != 0)
                    goto out;
                liq_trace_rec(&st->tr.mine, LIQ_TEV_LOST, liq_vm_now(), 0, vm->tids[w],
                              vm->whost[w], reached, during, 0);
                if (vm->progress)
                    fprintf(stderr, "%s%s: %s\n", isatty(2) ? "\n" : "", vm->who, vm->why);
                slot_gone(vm, st, w);
            }
        for (int w = 0; w < nw; w++)
            if (vm->leaving[w])
                slot_gone(vm, st, w);
        nto = 0;
        for (int w = 0; w < nw; w++)
            if (vm->tids[w] != 0)
                to[nto++] = vm->tids[w];
        /* Quanta with no copy left: the disk checkpoint, if there is one,
         * places every quantum anew (as for c = 0) and brings its state. */
        if (replace(vm, st, disk ? 0 : c, owner, &replaced) != 0) {
            if (nto == 0 || disk || liq_md_fallback(vm, o, st, &c) != 0 ||
                replace(vm, st, 0, owner, &replaced) != 0)
                goto out;
            disk = 1;
        } else if (nto == 0) {
            goto out;
        }
        if (vm->gen >= LIQ_MAX_GEN) {
            snprintf(vm->why, sizeof(vm->why), "more than %d recoveries", LIQ_MAX_GEN);
            goto out;
        }
        vm->gen++;
        if (vm->progress)
            fprintf(stderr, "%s: rolling back to iteration %d (the last complete checkpoint) "
                            "on %d worker%s\n", vm->who, c, nto, nto == 1 ? "" : "s");
        msg[0] = vm->gen;
        msg[1] = c;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(msg, 2, 1);
        if ((rc = pvm_mcast(to, nto, LIQ_TAG_RECOVER)) < 0) {
            snprintf(vm->why, sizeof(vm->why), "the recovery could not be sent (%s)",
                     lvm_errtext(rc));
            rc = -1;
            goto out;
        }
        if ((rc = handshake(vm, st, nto)) < 0)
            goto out;
        if (rc == 0)
            break;
        during = 1; /* another loss: again, with the survivors left */
        rc = -1;
    }
    rc = -1;
    /* The master's side of the job, back at c. */
    memcpy(st->owner, owner, (size_t)n * sizeof(int32_t));
    st->ndone = 0;
    st->field_points = 0;
    st->checksum = 0;
    st->t_iter = st->t_run = 0;
    if (st->red_have != NULL)
        memset(st->red_have, 0, (size_t)n);
    st->red_got = 0;
    st->stopped = 0;
    st->iters_done = o->iters;
    /* Checkpoints begun after c belong to the generation given up. */
    for (int i = 0; i < LIQ_CK_PENDING; i++)
        ck->pend[i].iter = 0;
    if ((disk && liq_md_load(vm, o, st, c) != 0) ||
        liq_master_job_send(vm, o, st, to, nto, c, 1) != 0 ||
        liq_mb_rollback(vm, o, st, c) != 0 ||
        (c == 0 && o->user != NULL && liq_mu_send_input(vm, o, st) != 0))
        goto out;
    liq_vm_rewatch(vm);
    /* Survivors that had sent their traces send the rest at the end. */
    for (int i = 0; i < nto; i++)
        liq_mt_reopen(st, to[i]);
    liq_trace_rec(&st->tr.mine, LIQ_TEV_RECOVER, t0, liq_vm_now(), c, vm->gen, replaced, 0, 0);
    for (int i = first; i < ck->nfail; i++) {
        ck->fail[i].back_to = c;
        ck->fail[i].replaced = replaced;
        ck->fail[i].recovery_s = liq_vm_now() - t0;
    }
    rc = 0;
out:
    free(owner);
    free(to);
    return rc;
}

void
liq_mc_json(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o,
            const struct liq_stats *st)
{
    const struct liq_ckpt *ck = &st->ck;
    double sec = 0, max = 0, bytes = 0;

    for (int w = 0; ck->on && w < vm->nworkers; w++) {
        sec += ck->wsec[w];
        bytes += ck->wbytes[w];
        if (ck->wsec[w] > max)
            max = ck->wsec[w];
    }
    fprintf(fp, "\"checkpoints\":{\"on\":%s,\"auto\":%s,\"every_epochs\":%d,"
                "\"every_iterations\":%d,\"last_every_iterations\":%d,\"count\":%d,\"last\":%d,"
                "\"bytes\":%.0f,\"bytes_sent\":%.0f,\"seconds\":%.6g,"
                "\"max_worker_seconds\":%.6g},\"failures\":[",
            ck->on ? "true" : "false", o->ckpt_every < 0 ? "true" : "false", ck->every, ck->iters,
            ck->iters * ck->mul, ck->count, ck->iter, ck->bytes,
            bytes, sec, max);
    for (int i = 0; i < ck->nfail; i++) {
        const struct liq_failure *f = &ck->fail[i];

        fprintf(fp, "%s{\"t_s\":%.6g,\"tid\":%d,\"host\":", i ? "," : "", f->t_s, f->tid);
        wire_json_str(fp, vm->host[f->host].name);
        fprintf(fp, ",\"what\":");
        wire_json_str(fp, f->what);
        fprintf(fp, ",\"reached\":%d,\"back_to\":%d,\"iterations_rolled_back\":%d,"
                    "\"quanta_replaced\":%d,\"during_recovery\":%s,\"recovery_s\":%.6g,"
                    "\"resumed_s\":%.6g}",
                f->reached, f->back_to, f->reached - f->back_to, f->replaced,
                f->during ? "true" : "false", f->recovery_s, f->resumed_s);
    }
    fprintf(fp, "],");
}

void
liq_mc_summary(FILE *fp, const struct liq_vm *vm, const struct liq_opts *o,
               const struct liq_stats *st)
{
    const struct liq_ckpt *ck = &st->ck;
    double sec = 0, bytes = 0, compute = 0;

    if (!ck->on)
        return;
    for (int w = 0; w < vm->nworkers; w++) {
        sec += ck->wsec[w];
        bytes += ck->wbytes[w];
        compute += st->wcompute[w];
    }
    fprintf(fp, "checkpoints: %d confirmed, every %d epoch%s (%d iterations%s), %.1f MB sent to "
                "buddies, %.3f s in the workers (%.1f%% of their compute)\n",
            ck->count, ck->every * ck->mul, ck->every * ck->mul == 1 ? "" : "s",
            ck->iters * ck->mul,
            o->ckpt_every < 0 ? (ck->mul > 1 ? ", auto, spaced out by their cost" : ", auto") : "",
            bytes / 1e6, sec,
            compute > 0 ? 100 * sec / compute : 0.0);
    for (int i = 0; i < ck->nfail; i++) {
        const struct liq_failure *f = &ck->fail[i];

        fprintf(fp, "recovery: %s at %.1f s (iteration %d reached)%s; rolled back to iteration "
                    "%d (%d iterations), %d quanta re-placed, job sent again in %.3f s",
                f->what, f->t_s, f->reached, f->during ? " while recovering" : "", f->back_to,
                f->reached - f->back_to, f->replaced, f->recovery_s);
        if (f->resumed_s >= 0)
            fprintf(fp, ", running again in %.3f s", f->resumed_s);
        fputc('\n', fp);
    }
}
