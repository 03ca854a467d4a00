/*
 * pvm_opt.c - libpvm's options: pvm_setopt and pvm_getopt.
 *
 * Every option of PVM 3.4 is kept, with PVM 3.4.6's defaults (as its
 * LINUX64 library reports them, in the context's initial state and read
 * through pvm__opt, pvm_ctx.c) and the checks it makes on new values;
 * setopt returns the old value.  What each one does in LiquidVM:
 *
 *   PvmRoute        PvmRouteDirect asks every task sent to for a direct
 *                   link (pvm_link.c); PvmAllowDirect (the default)
 *                   accepts links others ask for; PvmDontRoute refuses
 *                   them.  A link once up carries both ways whatever the
 *                   option says later, which keeps each pair's order.
 *   PvmAutoErr      pvm__ctx.autoerr, which pvm__err() obeys.
 *   PvmOutput*      for the children spawned afterwards (pvm_spawn.c):
 *                   their output comes to PvmOutputTid as messages
 *                   tagged PvmOutputCode (pvm_output.c); both default to
 *                   where the task's own output goes, as in PVM;
 *   PvmSelfOutput*  setting them also sets the children's, as in PVM.
 *   PvmSelfTraceTid a tracer named turns the task's trace on (pvm_trace.c);
 *   PvmTraceTid     one for the children traces them (pvm_spawn.c).  The
 *                   events go to trace files, not to the tracer; the
 *                   tracer, code and context are written in the file.
 *   PvmTrace*, PvmSelfTrace*, PvmDebugMask, PvmFragSize (frames are not
 *                   fragmented), PvmShowTids, PvmPollType, PvmPollTime:
 *                   stored and reported; nothing else reads them yet.
 *   Hints (pvm_hints.c) may set PvmRoute and PvmFragSize; a value the
 *   program sets itself, before or after, wins (pvm__ctx.opt_set).
 *   PvmResvTids     lets sends use negative tags and non-task tids.
 *   PvmNoReset      needs an enrolled task, as in PVM; puts or deletes
 *                   the task's entry in PVMNORESETCLASS (pvm_noreset.c),
 *                   which pvm_getnoresets reads.
 *
 * Differences from PVM 3.4.6 on Linux: PvmPollType and PvmPollTime are
 * accepted and kept (checked as PVM's shared-memory builds check them)
 * where its LINUX64 build says PvmNotImpl; the Self output and trace
 * destinations are not sent to the daemon: a task's own output goes
 * where its spawner said (LIQUIDVM_OUTPUT, pvm_output.c).
 */
#include "pvm_int.h"

#include <errno.h>

/* PVM's limits for PvmFragSize: a fragment and message header plus 4. */
#define PVM__FRAG_MIN 52
#define PVM__FRAG_MAX 1048576

_Static_assert(PvmNoReset < (int)(sizeof pvm__ctx.opt / sizeof pvm__ctx.opt[0]),
               "pvm__ctx.opt holds every option");

static int
known(int what)
{
    return what >= PvmRoute && what <= PvmNoReset;
}

int
pvm_getopt(int what)
{
    if (!known(what))
        return pvm__err(-EINVAL, "pvm_getopt");
    return pvm__opt(what);
}

/*
 * A child's output or trace destination may only be ourselves, nobody
 * (0), or the destination we have ourselves with the same tag.
 */
static int
child_dest_ok(int val, int self_tid, int child_code, int self_code)
{
    return val == 0 || val == pvm__ctx.mytid || (val == self_tid && child_code == self_code);
}

/* The tag or context of a child's messages follows our own once the
 * children's destination is someone else. */
static int
child_field_ok(int child_tid, int val, int self_val)
{
    return child_tid <= 0 || child_tid == pvm__ctx.mytid || val == self_val;
}

static int
trace_opts_ok(int val)
{
    return val == PvmTraceFull || val == PvmTraceTime || val == PvmTraceCount;
}

/* Store val; return the old value. */
static int
swap(int what, int val)
{
    int old = pvm__ctx.opt[what];

    pvm__ctx.opt[what] = val;
    /* The program's own choice: hints (pvm_hints.c) leave it alone. */
    pvm__ctx.opt_set |= 1u << what;
    /* A tracer named: decide again whether to trace (pvm_trace.c). */
    if (what == PvmSelfTraceTid && val > 0 && pvm__ctx.tr_state < 0)
        pvm__ctx.tr_state = 0;
    return old;
}

/* Our own destination changed: the children's follows, as in PVM. */
static void
self_to_children(int tid, int ctx, int code, int ctid, int cctx, int ccode)
{
    int *o = pvm__ctx.opt;

    o[ctid] = o[tid];
    o[cctx] = o[ctx];
    o[ccode] = o[code];
}

/*
 * Our own output or trace destination or tag.  PVM tells its daemon, so
 * it must be a task when a tid is involved; the children's follow.
 */
static int
set_self(int what, int val)
{
    int *o = pvm__ctx.opt;
    int output = what == PvmSelfOutputTid || what == PvmSelfOutputCode;
    int tidopt = output ? PvmSelfOutputTid : PvmSelfTraceTid;
    int old, rc;

    if (what == tidopt) {
        if ((o[what] > 0 || val > 0) && (rc = pvm__enroll()) != 0)
            return pvm__err(rc, "pvm_setopt");
    } else {
        /* With no destination PVM ignores the tag and returns 0. */
        if (o[tidopt] <= 0)
            return 0;
        if ((rc = pvm__enroll()) != 0)
            return pvm__err(rc, "pvm_setopt");
    }
    old = swap(what, val);
    if (output)
        self_to_children(PvmSelfOutputTid, PvmSelfOutputContext, PvmSelfOutputCode,
                         PvmOutputTid, PvmOutputContext, PvmOutputCode);
    else
        self_to_children(PvmSelfTraceTid, PvmSelfTraceContext, PvmSelfTraceCode,
                         PvmTraceTid, PvmTraceContext, PvmTraceCode);
    return old;
}

int
pvm_setopt(int what, int val)
{
    int *o = pvm__ctx.opt;
    int old, rc;

    pvm__opt_load();
    switch (what) {
    case PvmRoute:
        if (val != PvmDontRoute && val != PvmAllowDirect && val != PvmRouteDirect)
            break;
        return swap(what, val);
    case PvmAutoErr:
        old = pvm__ctx.autoerr;
        pvm__ctx.autoerr = val;
        return old;
    case PvmDebugMask:
    case PvmTraceBuffer:
    case PvmResvTids:
    case PvmSelfTraceBuffer:
    case PvmShowTids:
        return swap(what, val);
    case PvmOutputTid:
        if (!child_dest_ok(val, o[PvmSelfOutputTid], o[PvmOutputCode], o[PvmSelfOutputCode]))
            break;
        return swap(what, val);
    case PvmOutputContext:
        if (!child_field_ok(o[PvmOutputTid], val, o[PvmSelfOutputContext]))
            break;
        return swap(what, val);
    case PvmOutputCode:
        if (!child_field_ok(o[PvmOutputTid], val, o[PvmSelfOutputCode]))
            break;
        return swap(what, val);
    case PvmTraceTid:
        if (!child_dest_ok(val, o[PvmSelfTraceTid], o[PvmTraceCode], o[PvmSelfTraceCode]))
            break;
        return swap(what, val);
    case PvmTraceContext:
        if (!child_field_ok(o[PvmTraceTid], val, o[PvmSelfTraceContext]))
            break;
        return swap(what, val);
    case PvmTraceCode:
        if (!child_field_ok(o[PvmTraceTid], val, o[PvmSelfTraceCode]))
            break;
        return swap(what, val);
    case PvmTraceOptions:
    case PvmSelfTraceOptions:
        if (!trace_opts_ok(val))
            break;
        return swap(what, val);
    case PvmFragSize:
        if (val < PVM__FRAG_MIN || val > PVM__FRAG_MAX)
            break;
        return swap(what, val);
    case PvmSelfOutputTid:
    case PvmSelfTraceTid:
    case PvmSelfOutputCode:
    case PvmSelfTraceCode:
        return set_self(what, val);
    case PvmSelfOutputContext:
    case PvmSelfTraceContext:
        /* Not settable in PVM 3.4.6 either. */
        return pvm__err(-ENOTSUP, "pvm_setopt");
    case PvmPollType:
        if (val != PvmPollConstant && val != PvmPollSleep)
            break;
        return swap(what, val);
    case PvmPollTime:
        if (val < 0)
            break;
        return swap(what, val);
    case PvmNoReset:
        /* PVM registers the task with its daemon, so it must have enrolled. */
        if (pvm__ctx.mytid < 0)
            break;
        if ((rc = pvm__noreset_set(val)) < 0)
            return rc;
        return swap(what, val);
    default:
        break;
    }
    return pvm__err(-EINVAL, "pvm_setopt");
}
