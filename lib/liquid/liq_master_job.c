/*
 * liq_master_job.c - the JOB message (liq.h, "the worker"): what the master
 * tells every worker of a job -- the grid, the kernel, the iterations,
 * the epoch, the heavy region, the halo, the seed, the workers' tids and
 * the owner of every quantum.  The job's start sends it to all the
 * workers (liq_master.c), and reclaim (seed 002) to the workers that
 * rejoin at an epoch boundary (liq_master_balance.c); so it has a file of its
 * own that both use.
 */
#include "liq_master.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm_err.h"
#include "pvm3.h"

int
liq_master_job_send(struct liq_vm *vm, const struct liq_opts *o, const struct liq_stats *st,
                    int *to, int nto, int start, int restore)
{
    int hdr[LIQ_JOB_HDR], seed[2], rc;
    int *owner = malloc((size_t)st->g.nquanta * sizeof(int));

    if (owner == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory");
        return -1;
    }
    for (int q = 0; q < st->g.nquanta; q++)
        owner[q] = st->owner[q];
    memcpy(hdr, st->g.n, sizeof(st->g.n));
    hdr[LIQ_JOB_NQUANTA] = st->g.nquanta;
    hdr[LIQ_JOB_KERNEL] = (int)o->kernel;
    hdr[LIQ_JOB_ITERS] = o->iters;
    /* bit 0: send the final field; bits 1..: the fields whose initial
     * values follow (--input), for the job's first workers only */
    hdr[LIQ_JOB_GATHER] = liq_opts_gathers(o);
    for (int f = 0; start == 0 && o->user != NULL && f < o->user->nf; f++)
        if (o->user->input[f] != NULL)
            hdr[LIQ_JOB_GATHER] |= 2 << f;
    hdr[LIQ_JOB_EPOCH] = o->balance ? o->epoch : 0;
    hdr[LIQ_JOB_HEAVY] = o->heavy;
    hdr[LIQ_JOB_START] = start;
    hdr[LIQ_JOB_HALO] = st->halo;
    hdr[LIQ_JOB_SPEC] = o->user != NULL ? (int)liq_user_fingerprint(o->user) : 0;
    hdr[LIQ_JOB_TRACE] = o->trace[0] != '\0' ? LIQ_TRACE_EVENTS : 0;
    hdr[LIQ_JOB_CKPT] = st->ck.on ? st->ck.iters : 0;
    hdr[LIQ_JOB_GEN] = vm->gen;
    hdr[LIQ_JOB_RESTORE] = restore;
    hdr[LIQ_JOB_CKMUL] = st->ck.mul > 0 ? st->ck.mul : 1;
    seed[0] = (int)(uint32_t)o->seed;
    seed[1] = (int)(uint32_t)(o->seed >> 32);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(hdr, LIQ_JOB_HDR, 1);
    pvm_pkint(seed, 2, 1);
    pvm_pkint(&vm->nworkers, 1, 1);
    pvm_pkint(vm->tids, vm->nworkers, 1);
    pvm_pkint(owner, st->g.nquanta, 1);
    if (st->ck.on)
        pvm_pkint(vm->whost, vm->nworkers, 1); /* the checkpoints' buddies are on other hosts */
    free(owner);
    if ((rc = pvm_mcast(to, nto, LIQ_TAG_JOB)) < 0) {
        snprintf(vm->why, sizeof(vm->why), "the job could not be sent to the workers (%s)",
                 lvm_errtext(rc));
        return -1;
    }
    return 0;
}
