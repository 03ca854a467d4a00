/*
 * liq_worker.c - the worker task of a stencil job (docs/architecture.md,
 * "The liquid runtime"): vmrun spawns itself as `vmrun worker` on
 * every task slot, and this is its main.  It enrolls, sets up the process
 * for the traffic a job makes, and serves the master's requests -- the
 * probe and the ring (step 1, seed 001), the job (steps 4 and 5, seeds 000
 * and 002) -- until told to quit, the master exits, or it is evacuated.
 * Each request has its own file (liq_int.h lists them).
 */
#include "liq_int.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

int
liq_worker_main(const char *who)
{
    struct liq_worker w;
    const char *cache = getenv("LIQUIDVM_CACHE");

    memset(&w, 0, sizeof(w));
    int autoerr = pvm_setopt(PvmAutoErr, 0); /* said here, in words */

    if ((w.mytid = pvm_mytid()) < 0) {
        fprintf(stderr, "%s: cannot enroll in the virtual machine (%s); a job's master spawns "
                        "its workers\n", who, w.mytid == PvmSysErr ? "no daemon here" : "error");
        return 1;
    }
    pvm_setopt(PvmAutoErr, autoerr);
    if ((w.master = pvm_parent()) < 0) {
        fprintf(stderr, "%s: no parent task; a job's master spawns its workers\n", who);
        pvm_exit();
        return 2;
    }
    /* Ghost messages of a megabyte or so come and go every block.  glibc
     * would serve each from fresh pages (mmap, or a heap top trimmed after
     * the last one was freed), and every page of every message would be
     * faulted in and zeroed again.  Kept on the heap and never trimmed,
     * they reuse the same pages.  The boxes are mapped on their own
     * (kern_box_alloc). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    w.cache = kern_cache_bytes(cache != NULL ? strtoull(cache, NULL, 10) : 0);
    /* Ghost faces and moves go task to task, not through the daemons: a
     * daemon relays for all of its host's tasks and, in a cgroup with a CPU
     * quota, is throttled with them. */
    pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_notify(PvmTaskExit, LIQ_TAG_EXITED, 1, &w.master);
    for (;;) {
        int b = liq_wait(&w, w.master, -1), bytes, tag, tid;

        if (b <= 0)
            break;
        pvm_bufinfo(b, &bytes, &tag, &tid);
        if (tag == LIQ_TAG_RECOVER) {
            int msg[2] = { 0, 0 };

            pvm_upkint(msg, 2, 1);
            w.rec_gen = msg[0];
            w.rec_iter = msg[1];
        }
        /* The benchmarks' buffers go back to the system: the heap is kept
         * for the job's ghost messages (above), not for theirs. */
        if (tag == LIQ_TAG_PROBE) {
            liq_probe(&w);
            malloc_trim(0);
        } else if (tag == LIQ_TAG_RING) {
            liq_ring(&w);
            malloc_trim(0);
        } else if (tag == LIQ_TAG_CKLOAD) {
            liq_ckpt_load(&w);
        } else if (tag == LIQ_TAG_JOB && liq_job(&w)) {
            break; /* evacuated */
        } else if (tag == LIQ_TAG_QUIT) {
            break;
        } else if (tag == LIQ_TAG_TSYNC) {
            /* The master's clock ping (--trace): answer at once, since the
             * round trip bounds the offset's error. */
            double t = liq_now();

            pvm_initsend(PvmDataDefault);
            pvm_pkdouble(&t, 1, 1);
            pvm_send(w.master, LIQ_TAG_TSYNCED);
        }
        /* A recovery (liq.h, "checkpoints"): the RECOVER came now, or
         * while the job ran, which then gave up and freed its memory. */
        if (w.rec_gen > 0)
            liq_ckpt_recovered(&w);
        if (w.orphan) {
            fprintf(stderr, "vmrun worker t%x: the job's master t%x exited; leaving\n",
                    (unsigned)w.mytid, (unsigned)w.master);
            break;
        }
    }
    liq_ckpt_free(&w);
    liq_trace_free(&w.tr); /* kept by a recovery no JOB followed */
    pvm_exit();
    return 0;
}
