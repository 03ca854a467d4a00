/*
 * pvm_err.c - the libpvm3 error boundary (STYLE.md 5.3): the one table
 * that maps the project's codes (-errno, WIRE_E*, PVM__E*) to PVM's, PVM's
 * message texts, pvm_perror, pvm_strerror, and PvmAutoErr reporting.
 *
 * Texts and the report format are PVM 3.4.6's, as a program linked with it
 * prints them: "libpvm [t40001]: pvm_send(): No such task", with
 * "[pid1234]" before the task enrolls.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "lvm_err.h"
#include "wire.h"

/*
 * Indexed by -code.  The size and texts are those of PVM's exported
 * pvm_errlist: binaries compiled against PVM may index it directly, and a
 * copy relocation needs the same size.
 */
#define PVM__NERR 37

int pvm_errno;

char *const pvm_errlist[PVM__NERR] = {
    "Error 0",
    "Error 1",
    "Bad parameter",
    "Parameter mismatch",
    "Value too large",
    "End of buffer",
    "No such host",
    "No such file",
    "Permission denied",
    "Error 9",
    "Malloc failed",
    "Error 11",
    "Can't decode message",
    "Error 13",
    "Can't contact local daemon",
    "No current buffer",
    "No such buffer",
    "Null group name",
    "Already in group",
    "No such group",
    "Not in group",
    "No such instance",
    "Host failed",
    "No parent task",
    "Not implemented",
    "Pvmd system error",
    "Version mismatch",
    "Out of resources",
    "Duplicate host",
    "Can't start pvmd",
    "Already in progress",
    "No such task",
    "Not Found",
    "Already Exists",
    "Hoster must run on master host",
    "Spawning parent set PvmNoParent",
    "Master Host IP Address is Loopback! (See pvm3/Readme)",
};

const int pvm_nerr = PVM__NERR;

/*
 * Our code -> PVM's.  A code that is missing maps to PvmSysErr: something
 * between the task and its daemon failed in a way PVM has no word for.
 */
static const struct {
    int code;
    int pvm;
} pvm__errmap[] = {
    { -ENOMEM, PvmNoMem },
    { -EINVAL, PvmBadParam },
    { -ERANGE, PvmOverflow },
    { -EOVERFLOW, PvmOverflow },
    { -EMSGSIZE, PvmOverflow },
    { -E2BIG, PvmOverflow },
    { -ENODATA, PvmNoData },
    { -EBADMSG, PvmBadMsg },
    { -EPROTO, PvmBadMsg },
    { -ENOENT, PvmNoFile },
    { -ENOEXEC, PvmNoFile },
    { -EACCES, PvmDenied },
    { -EPERM, PvmDenied },
    { -EEXIST, PvmExists },
    { -ESRCH, PvmNoTask },
    { -ENOTSUP, PvmNotImpl },
    { -ENOSYS, PvmNotImpl },
    { -EALREADY, PvmAlready },
    { -EINPROGRESS, PvmAlready },
    { -EAGAIN, PvmOutOfRes },
    { -EMFILE, PvmOutOfRes },
    { -ENFILE, PvmOutOfRes },
    { -ENOSPC, PvmOutOfRes },
    { -ENOBUFS, PvmOutOfRes },
    { -ECONNREFUSED, PvmSysErr },
    { -ECONNRESET, PvmSysErr },
    { -ENOTCONN, PvmSysErr },
    { -EPIPE, PvmSysErr },
    { -ETIMEDOUT, PvmSysErr },
    { -EIO, PvmSysErr },
    { WIRE_ECONF, PvmSysErr },
    { WIRE_EBADCERT, PvmSysErr },
    { WIRE_ENOCERT, PvmSysErr },
    { WIRE_ENAME, PvmSysErr },
    { WIRE_ENOTLS, PvmSysErr },
    { WIRE_EFRAME, PvmBadMsg },
    { WIRE_EVERSION, PvmBadVersion },
    { WIRE_ENOHOST, PvmNoHost },
    { WIRE_ENOTASK, PvmNoTask },
    { WIRE_ENOGROUP, PvmNoGroup },
    { WIRE_ENOTINGROUP, PvmNotInGroup },
    { WIRE_EDUPGROUP, PvmDupGroup },
    { WIRE_ENOINST, PvmNoInst },
    { WIRE_ENULLGROUP, PvmNullGroup },
    { WIRE_ENOTFOUND, PvmNotFound },
    { WIRE_EDENIED, PvmDenied },
    { WIRE_EDUPHOST, PvmDupHost },
    { WIRE_ECANTSTART, PvmCantStart },
    { WIRE_EHOSTFAIL, PvmHostFail },
    { WIRE_ENOVM, PvmSysErr },
    { WIRE_EMASTER, PvmDenied },
    { WIRE_ETLS, PvmSysErr },
    { WIRE_EBUSY, PvmAlready },
    { WIRE_EHALTED, PvmSysErr },
    { WIRE_ESTRANGER, PvmSysErr },
    { WIRE_EPINNED, PvmSysErr },
};

int
pvm__errcode(int code)
{
    size_t i;

    if (code >= 0)
        return code;
    /* PVM__E* codes carry PVM's code inside them. */
    if (code < PVM__EBASE && code > PVM__EBASE - PVM__NERR)
        return code - PVM__EBASE;
    for (i = 0; i < sizeof pvm__errmap / sizeof pvm__errmap[0]; i++)
        if (pvm__errmap[i].code == code)
            return pvm__errmap[i].pvm;
    return PvmSysErr;
}

const char *
pvm__errtext(int pvmcode)
{
    if (pvmcode <= 0 && pvmcode > -PVM__NERR)
        return pvm_errlist[-pvmcode];
    return "Unknown Error";
}

PVM_API const char *
lvm_errtext(int pvmcode)
{
    return pvm__errtext(pvmcode);
}

/* "libpvm [t40001]: " or, before the task enrolls, "libpvm [pid1234]: ". */
static void
pvm__report_prefix(void)
{
    if (pvm__ctx.mytid == -1)
        fprintf(stderr, "libpvm [pid%d]: ", (int)getpid());
    else
        fprintf(stderr, "libpvm [t%x]: ", (unsigned)pvm__ctx.mytid);
}

int
pvm_perror(char *msg)
{
    pvm__report_prefix();
    fprintf(stderr, "%s: %s\n", msg != NULL ? msg : "(null)", pvm__errtext(pvm_errno));
    return PvmOk;
}

char *
pvm_strerror(void)
{
    int c = pvm_errno;

    if (c <= 0 && c > -PVM__NERR)
        return pvm_errlist[-c];
    return "Unknown Error";
}

int
pvm__err(int code, const char *fn)
{
    char what[128];
    int pvmcode;

    if (code >= 0)
        return code;
    pvmcode = pvm__errcode(code);
    pvm_errno = pvmcode;
    if (pvm__ctx.autoerr == 0)
        return pvmcode;
    snprintf(what, sizeof what, "%s()", fn);
    pvm_perror(what);
    fflush(stderr);
    if (pvm__ctx.autoerr == 3)
        abort();
    if (pvm__ctx.autoerr == 2) {
        /* As PVM does: leave the VM quietly, then exit with the code. */
        pvm__ctx.autoerr = 1;
        if (pvm__ctx.exit_hook != NULL)
            pvm__ctx.exit_hook();
        exit(pvmcode);
    }
    return pvmcode;
}

/*
 * Two internal functions of PVM's libpvm3 that its own example programs
 * call, so binaries and sources that use them link: lpvmerr(f, n) reports
 * PVM code n from function f as PvmAutoErr says and returns it, and
 * pvmsleep(secs) sleeps; and pvmgetclock(tv), the clock bwtest times
 * with.  pvmdebmask is PVM's library debug mask, a variable its programs
 * may set (ptest does); like pvm_errno it is kept for them and, as our
 * library has no such debug classes, read by nobody.
 */
PVM_API int lpvmerr(const char *f, int n);
PVM_API int pvmsleep(int secs);
PVM_API int pvmgetclock(struct timeval *tm);
PVM_API int pvmdebmask;

int
pvmgetclock(struct timeval *tm)
{
    return tm ? gettimeofday(tm, NULL) : PvmBadParam;
}

int
lpvmerr(const char *f, int n)
{
    if (n >= 0)
        return n;
    return pvm__err(PVM__ECODE(n), f ? f : "libpvm");
}

int
pvmsleep(int secs)
{
    while (secs > 0)
        secs = (int)sleep((unsigned)secs);
    return 0;
}
