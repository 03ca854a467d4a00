/*
 * pvm_unsupported.c - PVM 3.4 calls for pluggable system services that
 * LiquidVM does not have: pvm_tickle (PVM's daemon debugging hook),
 * pvm_reg_hoster, pvm_reg_rm, pvm_reg_tasker, pvm_reg_tracer.  The
 * daemon starts hosts (hoststart), places and starts tasks itself, and
 * a traced task writes its own events (pvm_trace.c), so there is nothing
 * to register with.
 *
 * They are defined so that PVM programs link and run; each one returns
 * PvmNotImpl, as PVM 3.4.6 answers a request its daemon does not
 * implement, sets pvm_errno and reports through PvmAutoErr like every
 * call (man/libpvm3.3, "Calls LiquidVM does not provide").  Output
 * arguments are left untouched.
 */
#include "pvm_int.h"

#define PVM__ENOTIMPL PVM__ECODE(PvmNotImpl)

int
pvm_tickle(int narg, int *argp, int *nresp, int *resp)
{
    (void)narg, (void)argp, (void)nresp, (void)resp;
    return pvm__err(PVM__ENOTIMPL, "pvm_tickle");
}

int
pvm_reg_hoster(void)
{
    return pvm__err(PVM__ENOTIMPL, "pvm_reg_hoster");
}

int
pvm_reg_rm(struct pvmhostinfo **hip)
{
    (void)hip;
    return pvm__err(PVM__ENOTIMPL, "pvm_reg_rm");
}

int
pvm_reg_tasker(void)
{
    return pvm__err(PVM__ENOTIMPL, "pvm_reg_tasker");
}

int
pvm_reg_tracer(int tctx, int tag, int octx, int otag, char *tmask, int tbuf, int topt)
{
    (void)tctx, (void)tag, (void)octx, (void)otag, (void)tmask, (void)tbuf, (void)topt;
    return pvm__err(PVM__ENOTIMPL, "pvm_reg_tracer");
}
