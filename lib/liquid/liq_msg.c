/*
 * liq_msg.c - the worker's two ways of talking to its master that every
 * request uses: waiting for a message while watching for the master's
 * QUIT or exit, and giving up with a reason the master can print.  The
 * worker is a PVM task (liq.h, "the worker"); nothing here is specific to
 * one request.
 */
#include "liq_int.h"

#include <stdarg.h>
#include <stdio.h>

#include "pvm3.h"

/* How often a waiting worker looks for QUIT or its master's exit. */
#define LIQ_POLL_USEC 200000

/* A worker that waits says every LIQ_ALIVE_S that it is not hung: a
 * neighbour it waits for may be, and the master then tells the stopped
 * one from those blocked behind it (liq_vm_recv). */
static void
alive(struct liq_worker *w, double *since)
{
    double now = liq_now();

    if (now - *since < LIQ_ALIVE_S)
        return;
    *since = now;
    pvm_initsend(PvmDataDefault);
    pvm_send(w->master, LIQ_TAG_ALIVE);
}

/* Tell the master why this worker gives up. */
void
liq_fail(struct liq_worker *w, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    fprintf(stderr, "vmrun worker t%x: %s\n", (unsigned)w->mytid, text);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(text);
    pvm_send(w->master, LIQ_TAG_FAIL);
}

/*
 * Receive a message from tid with tag (-1: any), giving up when the master
 * says QUIT or exits, or gives the job up for a recovery (w->rec_gen is
 * then set: liq_ckpt_recovered answers once the job is freed).  Returns
 * the buffer id, 0 when told to stop, or a PVM error.
 */
int
liq_wait(struct liq_worker *w, int tid, int tag)
{
    struct timeval tmo = { 0, LIQ_POLL_USEC };
    double since = liq_now();

    for (;;) {
        int b;

        if (w->orphan)
            return 0;
        if ((b = pvm_trecv(tid, tag, &tmo)) != 0)
            return b;
        alive(w, &since);
        if (pvm_nrecv(w->master, LIQ_TAG_QUIT) > 0)
            return 0;
        /* The only exit a worker is told of is its master's. */
        if (pvm_nrecv(-1, LIQ_TAG_EXITED) > 0) {
            w->orphan = 1;
            return 0;
        }
        if (w->ckpt > 0 && pvm_nrecv(w->master, LIQ_TAG_RECOVER) > 0) {
            int msg[2] = { 0, 0 };

            pvm_upkint(msg, 2, 1);
            w->rec_gen = msg[0];
            w->rec_iter = msg[1];
            return 0;
        }
    }
}
