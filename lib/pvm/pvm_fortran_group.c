/*
 * pvm_fortran_group.c - libfpvm3 (pvm_fortran.h): dynamic groups over
 * libpvm3's group calls, and the predefined reduction functions under the
 * names a Fortran `external PvmSum` asks for (pvmsum_ ...).  A reduction
 * function, PVM's or the program's own Fortran subroutine
 * func(datatype, x, y, num, info), takes every argument by reference, so
 * pvm_reduce calls it directly.
 */
#include "pvm_fortran.h"

#include <stdlib.h>

#include "pvm3.h"

/* Runs call(group) with the trimmed group name; its result, or PvmNoMem. */
#define PVM__FGROUP(out, group, group_len, call)                              \
    do {                                                                      \
        char *g_;                                                             \
        int rc_ = pvm__fstr_in((group), (group_len), &g_);                    \
        if (rc_ < 0) {                                                        \
            *(out) = rc_;                                                     \
            break;                                                            \
        }                                                                     \
        *(out) = call;                                                        \
        free(g_);                                                             \
    } while (0)

void
pvmfjoingroup_(char *group, int *inum, size_t group_len)
{
    PVM__FGROUP(inum, group, group_len, pvm_joingroup(g_));
}

void
pvmflvgroup_(char *group, int *info, size_t group_len)
{
    PVM__FGROUP(info, group, group_len, pvm_lvgroup(g_));
}

void
pvmfgettid_(char *group, int *inum, int *tid, size_t group_len)
{
    PVM__FGROUP(tid, group, group_len, pvm_gettid(g_, *inum));
}

void
pvmfgetinst_(char *group, int *tid, int *inum, size_t group_len)
{
    PVM__FGROUP(inum, group, group_len, pvm_getinst(g_, *tid));
}

void
pvmfgsize_(char *group, int *size, size_t group_len)
{
    PVM__FGROUP(size, group, group_len, pvm_gsize(g_));
}

void
pvmfbarrier_(char *group, int *count, int *info, size_t group_len)
{
    PVM__FGROUP(info, group, group_len, pvm_barrier(g_, *count));
}

void
pvmfbcast_(char *group, int *msgtag, int *info, size_t group_len)
{
    PVM__FGROUP(info, group, group_len, pvm_bcast(g_, *msgtag));
}

void
pvmffreezegroup_(char *group, int *size, int *info, size_t group_len)
{
    PVM__FGROUP(info, group, group_len, pvm_freezegroup(g_, *size));
}

/* Character data would put its own hidden lengths before the group's, so
 * STRING is refused here (PVM's collectives take no strings either). */
static int
pvm__fcoll_type(int datatype)
{
    return datatype < PVM_BYTE || datatype > PVM_LONG ? PvmBadParam : datatype;
}

void
pvmfgather_(void *result, void *data, int *count, int *datatype, int *msgtag, char *group,
            int *rootginst, int *info, size_t group_len)
{
    if ((*info = pvm__fcoll_type(*datatype)) < 0)
        return;
    PVM__FGROUP(info, group, group_len,
                pvm_gather(result, data, *count, *datatype, *msgtag, g_, *rootginst));
}

void
pvmfscatter_(void *result, void *data, int *count, int *datatype, int *msgtag, char *group,
             int *rootginst, int *info, size_t group_len)
{
    if ((*info = pvm__fcoll_type(*datatype)) < 0)
        return;
    PVM__FGROUP(info, group, group_len,
                pvm_scatter(result, data, *count, *datatype, *msgtag, g_, *rootginst));
}

void
pvmfreduce_(void (*func)(int *, void *, void *, int *, int *), void *data, int *count,
            int *datatype, int *msgtag, char *group, int *rootginst, int *info,
            size_t group_len)
{
    if ((*info = pvm__fcoll_type(*datatype)) < 0)
        return;
    if (func == NULL) {
        *info = PvmBadParam;
        return;
    }
    /* PVM's own functions as libpvm3 knows them, so it checks them alike. */
    if (func == pvmmax_)
        func = PvmMax;
    else if (func == pvmmin_)
        func = PvmMin;
    else if (func == pvmsum_)
        func = PvmSum;
    else if (func == pvmproduct_)
        func = PvmProduct;
    PVM__FGROUP(info, group, group_len,
                pvm_reduce(func, data, *count, *datatype, *msgtag, g_, *rootginst));
}

void
pvmmax_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMax(datatype, x, y, num, info);
}

void
pvmmin_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMin(datatype, x, y, num, info);
}

void
pvmsum_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmSum(datatype, x, y, num, info);
}

void
pvmproduct_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmProduct(datatype, x, y, num, info);
}
