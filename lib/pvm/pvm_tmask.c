/*
 * pvm_tmask.c - the trace masks: pvm_settmask and pvm_gettmask.
 *
 * A trace mask is PVM 3.4.6's Pvmtmask (pvmtev.h): a printable string of
 * TEV_MASK_LENGTH (36) bytes with the NUL, four events to a character
 * ('@' + bits, TEV_MASK_SET), kept for the task itself (PvmTaskSelf) and
 * for the children it spawns from now on (PvmTaskChild).  A task's own
 * mask comes from PVMTMASK in its environment, which pvm_spawn sets from
 * the parent's child mask (pvm_spawn.c), else it is all clear
 * (TEV_MASK_INIT: 35 '@'); the child mask starts as a copy of it, so a
 * mask reaches grandchildren too.  A PVMTMASK of the wrong length is
 * ignored, as PVM ignores it.  Neither call needs a virtual machine.
 *
 * Any event set in the task's own mask turns its trace on (pvm_trace.c):
 * LiquidVM records every kind of event of a traced task into its trace
 * file, not those of the mask alone, and clearing the mask again does not
 * stop a trace once begun.  Setting the mask only decides again whether
 * to trace (pvm__ctx.tr_state), so this file calls nothing above it.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void
tmask_load(void)
{
    if (pvm__ctx.tmask_known)
        return;
    const char *e = getenv("PVMTMASK");
    if (e != NULL && strlen(e) == PVM__TMASK_LEN - 1) {
        memcpy(pvm__ctx.tmask_self, e, PVM__TMASK_LEN);
    } else {
        memset(pvm__ctx.tmask_self, '@', PVM__TMASK_LEN - 1);
        pvm__ctx.tmask_self[PVM__TMASK_LEN - 1] = '\0';
    }
    memcpy(pvm__ctx.tmask_child, pvm__ctx.tmask_self, PVM__TMASK_LEN);
    pvm__ctx.tmask_known = 1;
}

const char *
pvm__tmask_child(void)
{
    tmask_load();
    return pvm__ctx.tmask_child;
}

int
pvm__tmask_on(int child)
{
    const char *m;

    tmask_load();
    m = child ? pvm__ctx.tmask_child : pvm__ctx.tmask_self;
    for (int i = 0; i < PVM__TMASK_LEN - 1 && m[i] != '\0'; i++)
        if (m[i] != '@')
            return 1;
    return 0;
}

static char *
which(int who)
{
    tmask_load();
    if (who == PvmTaskSelf)
        return pvm__ctx.tmask_self;
    if (who == PvmTaskChild)
        return pvm__ctx.tmask_child;
    return NULL;
}

int
pvm_settmask(int who, char *mask)
{
    char *m = which(who);
    if (m == NULL || mask == NULL)
        return pvm__err(-EINVAL, "pvm_settmask");
    /* PVM copies TEV_MASK_LENGTH bytes; we stop at the caller's NUL. */
    size_t n = strnlen(mask, PVM__TMASK_LEN - 1);
    memcpy(m, mask, n);
    memset(m + n, '\0', PVM__TMASK_LEN - n);
    if (who == PvmTaskSelf && pvm__ctx.tr_state < 0)
        pvm__ctx.tr_state = 0;
    return PvmOk;
}

int
pvm_gettmask(int who, char *mask)
{
    char *m = which(who);
    if (m == NULL || mask == NULL)
        return pvm__err(-EINVAL, "pvm_gettmask");
    memcpy(mask, m, PVM__TMASK_LEN);
    return PvmOk;
}
