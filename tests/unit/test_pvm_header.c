/*
 * test_pvm_header.c - lib/pvm/pvm3.h against PVM 3.4.6's own header: every
 * constant, string and mailbox macro, the layout of every structure, the
 * presence of every function, and every prototype.
 *
 * Both headers cannot be live at once, so this file includes ours first,
 * with its four structures and the six functions that take them renamed,
 * records what it defines, undefines its macros, and then includes PVM's
 * /usr/include/pvm3.h (from pvm-dev) by path.  The compiler then checks
 * that each of PVM's prototypes agrees with ours (a redeclaration must be
 * compatible), and _Static_assert checks the six renamed ones; the tables
 * recorded from both sides are compared at run time.  Without pvm-dev the
 * comparisons skip and only the values the man pages state are checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/time.h>

/* Integer constants of PVM 3.4.6's pvm3.h. */
#define PVM_HDR_INTS(X)                                                       \
    X(PVM_MAJOR_VERSION) X(PVM_MINOR_VERSION) X(PVM_PATCH_VERSION)            \
    X(PvmDataDefault) X(PvmDataRaw) X(PvmDataInPlace) X(PvmDataFoo)           \
    X(PvmDataTrace)                                                           \
    X(PvmTaskDefault) X(PvmTaskHost) X(PvmTaskArch) X(PvmTaskDebug)           \
    X(PvmTaskTrace) X(PvmMppFront) X(PvmHostCompl) X(PvmNoSpawnParent)        \
    X(PvmTaskExit) X(PvmHostDelete) X(PvmHostAdd) X(PvmRouteAdd)              \
    X(PvmRouteDelete) X(PvmNotifyCancel)                                      \
    X(PvmRoute) X(PvmDontRoute) X(PvmAllowDirect) X(PvmRouteDirect)           \
    X(PvmDebugMask) X(PvmAutoErr) X(PvmOutputTid) X(PvmOutputCode)            \
    X(PvmTraceTid) X(PvmTraceCode) X(PvmTraceBuffer) X(PvmTraceOptions)       \
    X(PvmTraceFull) X(PvmTraceTime) X(PvmTraceCount) X(PvmFragSize)           \
    X(PvmResvTids) X(PvmSelfOutputTid) X(PvmSelfOutputCode)                   \
    X(PvmSelfTraceTid) X(PvmSelfTraceCode) X(PvmSelfTraceBuffer)              \
    X(PvmSelfTraceOptions) X(PvmShowTids) X(PvmPollType) X(PvmPollConstant)   \
    X(PvmPollSleep) X(PvmPollTime) X(PvmOutputContext) X(PvmTraceContext)     \
    X(PvmSelfOutputContext) X(PvmSelfTraceContext) X(PvmNoReset)              \
    X(PvmTaskSelf) X(PvmTaskChild) X(PvmBaseContext)                          \
    X(PvmMboxDefault) X(PvmMboxPersistent) X(PvmMboxMultiInstance)            \
    X(PvmMboxOverWritable) X(PvmMboxFirstAvail) X(PvmMboxReadAndDelete)       \
    X(PvmMboxWaitForInfo) X(PvmMboxMaxFlag) X(PvmMboxDirectIndexShift)        \
    X(PvmMboxMaxDirectIndex)                                                  \
    X(PvmOk) X(PvmBadParam) X(PvmMismatch) X(PvmOverflow) X(PvmNoData)        \
    X(PvmNoHost) X(PvmNoFile) X(PvmDenied) X(PvmNoMem) X(PvmBadMsg)           \
    X(PvmSysErr) X(PvmNoBuf) X(PvmNoSuchBuf) X(PvmNullGroup) X(PvmDupGroup)   \
    X(PvmNoGroup) X(PvmNotInGroup) X(PvmNoInst) X(PvmHostFail)                \
    X(PvmNoParent) X(PvmNotImpl) X(PvmDSysErr) X(PvmBadVersion)               \
    X(PvmOutOfRes) X(PvmDupHost) X(PvmCantStart) X(PvmAlready) X(PvmNoTask)   \
    X(PvmNotFound) X(PvmExists) X(PvmHostrNMstr) X(PvmParentNotSet)           \
    X(PvmIPLoopback) X(PvmNoEntry) X(PvmDupEntry)                             \
    X(PVM_STR) X(PVM_BYTE) X(PVM_SHORT) X(PVM_INT) X(PVM_FLOAT) X(PVM_CPLX)   \
    X(PVM_DOUBLE) X(PVM_DCPLX) X(PVM_LONG) X(PVM_USHORT) X(PVM_UINT)          \
    X(PVM_ULONG) X(PVMTMPNAMLEN)

#define PVM_HDR_STRS(X)                                                       \
    X(PVM_VER) X(PVMNORESETCLASS) X(PVMHOSTERCLASS) X(PVMTASKERCLASS)         \
    X(PVMTRACERCLASS) X(PVMRMCLASS)

#define PVM_HDR_STRUCTS(X) X(pvmhostinfo) X(pvmtaskinfo) X(pvmminfo) X(pvmmboxinfo)

#define PVM_HDR_FIELDS(X)                                                     \
    X(pvmhostinfo, hi_tid) X(pvmhostinfo, hi_name) X(pvmhostinfo, hi_arch)    \
    X(pvmhostinfo, hi_speed) X(pvmhostinfo, hi_dsig)                          \
    X(pvmtaskinfo, ti_tid) X(pvmtaskinfo, ti_ptid) X(pvmtaskinfo, ti_host)    \
    X(pvmtaskinfo, ti_flag) X(pvmtaskinfo, ti_a_out) X(pvmtaskinfo, ti_pid)   \
    X(pvmminfo, len) X(pvmminfo, ctx) X(pvmminfo, tag) X(pvmminfo, wid)       \
    X(pvmminfo, enc) X(pvmminfo, crc) X(pvmminfo, src) X(pvmminfo, dst)       \
    X(pvmmboxinfo, mi_name) X(pvmmboxinfo, mi_nentries)                       \
    X(pvmmboxinfo, mi_indices) X(pvmmboxinfo, mi_owners)                      \
    X(pvmmboxinfo, mi_flags)

/* Every function PVM's header declares (pvmtmpnam only under NOTMPNAM). */
#define PVM_HDR_FUNCS(X)                                                      \
    X(pvmgetrsh) X(pvmgettmp) X(pvm_strerror) X(pvm_addhosts) X(pvm_addmhf)   \
    X(pvm_archcode) X(pvm_barrier) X(pvm_bcast) X(pvm_bufinfo)                \
    X(pvm_catchout) X(pvm_config) X(pvm_delhosts) X(pvm_delinfo)              \
    X(pvm_delmhf) X(pvm_exit) X(pvm_export) X(pvm_freebuf)                    \
    X(pvm_freecontext) X(pvm_freezegroup) X(pvm_gather) X(pvm_getcontext)     \
    X(pvm_getfds) X(pvm_getinst) X(pvm_getminfo) X(pvm_getnoresets)           \
    X(pvm_getopt) X(pvm_getrbuf) X(pvm_getsbuf) X(pvm_gettid) X(pvm_gsize)    \
    X(pvm_halt) X(pvm_hostsync) X(pvm_initsend) X(pvm_joingroup)              \
    X(pvm_kill) X(pvm_lvgroup) X(pvm_getmboxinfo) X(pvm_mcast) X(pvm_mkbuf)   \
    X(pvm_mstat) X(pvm_mytid) X(pvm_newcontext) X(pvm_notify) X(pvm_nrecv)    \
    X(pvm_packf) X(pvm_parent) X(pvm_perror) X(pvm_pkbyte) X(pvm_pkcplx)      \
    X(pvm_pkdcplx) X(pvm_pkdouble) X(pvm_pkfloat) X(pvm_pkint) X(pvm_pklong)  \
    X(pvm_pkshort) X(pvm_pkstr) X(pvm_pkuint) X(pvm_pkulong) X(pvm_pkushort)  \
    X(pvm_pkmesg) X(pvm_pkmesgbody) X(pvm_precv) X(pvm_probe) X(pvm_psend)    \
    X(pvm_pstat) X(pvm_putinfo) X(pvm_recv) X(pvm_recvf) X(pvm_recvinfo)      \
    X(pvm_reduce) X(PvmMax) X(PvmMin) X(PvmSum) X(PvmProduct)                 \
    X(pvm_reg_hoster) X(pvm_reg_rm) X(pvm_reg_tasker) X(pvm_reg_tracer)       \
    X(pvm_scatter) X(pvm_send) X(pvm_sendsig) X(pvm_setcontext)               \
    X(pvm_setminfo) X(pvm_setopt) X(pvm_setrbuf) X(pvm_setsbuf)               \
    X(pvm_siblings) X(pvm_spawn) X(pvm_start_pvmd) X(pvm_tasks) X(pvm_tickle) \
    X(pvm_tidtohost) X(pvm_trecv) X(pvm_unexport) X(pvm_unpackf)              \
    X(pvm_upkbyte) X(pvm_upkcplx) X(pvm_upkdcplx) X(pvm_upkdouble)            \
    X(pvm_upkfloat) X(pvm_upkint) X(pvm_upklong) X(pvm_upkshort)              \
    X(pvm_upkstr) X(pvm_upkuint) X(pvm_upkulong) X(pvm_upkushort)             \
    X(pvm_upkmesg) X(pvm_version) X(pvm_delete) X(pvm_insert) X(pvm_lookup)

#define HDR_NAME(n) #n,
#define HDR_INT(n) (long)(n),
#define HDR_STR(n) n,
#define HDR_SIZE(s) sizeof(struct s),
#define HDR_OFF(s, f) offsetof(struct s, f),
#define HDR_FSIZE(s, f) sizeof(((struct s *)0)->f),
#define HDR_FNAME(s, f) #s "." #f,
#define HDR_FUNC(f) sizeof(&f),

static const char *const int_names[] = { PVM_HDR_INTS(HDR_NAME) };
static const char *const str_names[] = { PVM_HDR_STRS(HDR_NAME) };
static const char *const struct_names[] = { PVM_HDR_STRUCTS(HDR_NAME) };
static const char *const field_names[] = { PVM_HDR_FIELDS(HDR_FNAME) };
#define NINTS (sizeof int_names / sizeof int_names[0])
#define NSTRS (sizeof str_names / sizeof str_names[0])
#define NSTRUCTS (sizeof struct_names / sizeof struct_names[0])
#define NFIELDS (sizeof field_names / sizeof field_names[0])

/* Sample inputs for the mailbox index macros. */
static const unsigned mbox_samples[] = { 0, 1, 5, 1000, 0x1fffff };

/* ---- ours ---- */

#define pvmhostinfo lv_pvmhostinfo
#define pvmtaskinfo lv_pvmtaskinfo
#define pvmminfo lv_pvmminfo
#define pvmmboxinfo lv_pvmmboxinfo
#define pvm_config lv_pvm_config
#define pvm_tasks lv_pvm_tasks
#define pvm_getminfo lv_pvm_getminfo
#define pvm_setminfo lv_pvm_setminfo
#define pvm_getmboxinfo lv_pvm_getmboxinfo
#define pvm_reg_rm lv_pvm_reg_rm
#include "../../lib/pvm/pvm3.h"

static const long lv_ints[] = { PVM_HDR_INTS(HDR_INT) };
static const char *const lv_strs[] = { PVM_HDR_STRS(HDR_STR) };
static const size_t lv_sizes[] = { PVM_HDR_STRUCTS(HDR_SIZE) };
static const size_t lv_offs[] = { PVM_HDR_FIELDS(HDR_OFF) };
static const size_t lv_fsizes[] = { PVM_HDR_FIELDS(HDR_FSIZE) };
/* A missing declaration fails here, at compile time. */
static const size_t lv_funcs[] = { PVM_HDR_FUNCS(HDR_FUNC) };

static int
lv_mbox_index(unsigned i)
{
    return (int)PvmMboxDirectIndex(i);
}

static int
lv_mbox_index_of(int flags)
{
    return (int)PvmMboxDirectIndexOf(flags);
}

#define SAME_TYPE(a, b) __builtin_types_compatible_p(__typeof__(a), b)
_Static_assert(SAME_TYPE(lv_pvm_config, int(int *, int *, struct lv_pvmhostinfo **)),
               "pvm_config");
_Static_assert(SAME_TYPE(lv_pvm_tasks, int(int, int *, struct lv_pvmtaskinfo **)),
               "pvm_tasks");
_Static_assert(SAME_TYPE(lv_pvm_getminfo, int(int, struct lv_pvmminfo *)), "pvm_getminfo");
_Static_assert(SAME_TYPE(lv_pvm_setminfo, int(int, struct lv_pvmminfo *)), "pvm_setminfo");
_Static_assert(SAME_TYPE(lv_pvm_getmboxinfo, int(char *, int *, struct lv_pvmmboxinfo **)),
               "pvm_getmboxinfo");
_Static_assert(SAME_TYPE(lv_pvm_reg_rm, int(struct lv_pvmhostinfo **)), "pvm_reg_rm");

#undef pvmhostinfo
#undef pvmtaskinfo
#undef pvmminfo
#undef pvmmboxinfo
#undef pvm_config
#undef pvm_tasks
#undef pvm_getminfo
#undef pvm_setminfo
#undef pvm_getmboxinfo
#undef pvm_reg_rm

#if defined(__has_include)
#if __has_include("/usr/include/pvm3.h")
#define HAVE_PVM_HEADER 1
#endif
#endif

#ifdef HAVE_PVM_HEADER
/* Everything our header defines goes, so that PVM's can define it again. */
#undef _PVM3_H_
#undef PVMHOSTERCLASS
#undef PVMNORESETCLASS
#undef PVMRMCLASS
#undef PVMTASKERCLASS
#undef PVMTMPNAMFUN
#undef PVMTMPNAMLEN
#undef PVMTRACERCLASS
#undef PVM_BYTE
#undef PVM_CPLX
#undef PVM_DCPLX
#undef PVM_DOUBLE
#undef PVM_FLOAT
#undef PVM_INT
#undef PVM_LONG
#undef PVM_MAJOR_VERSION
#undef PVM_MINOR_VERSION
#undef PVM_PATCH_VERSION
#undef PVM_SHORT
#undef PVM_STR
#undef PVM_UINT
#undef PVM_ULONG
#undef PVM_USHORT
#undef PVM_VER
#undef PvmAllowDirect
#undef PvmAlready
#undef PvmAutoErr
#undef PvmBadMsg
#undef PvmBadParam
#undef PvmBadVersion
#undef PvmBaseContext
#undef PvmCantStart
#undef PvmDSysErr
#undef PvmDataDefault
#undef PvmDataFoo
#undef PvmDataInPlace
#undef PvmDataRaw
#undef PvmDataTrace
#undef PvmDebugMask
#undef PvmDenied
#undef PvmDontRoute
#undef PvmDupEntry
#undef PvmDupGroup
#undef PvmDupHost
#undef PvmExists
#undef PvmFragSize
#undef PvmHostAdd
#undef PvmHostCompl
#undef PvmHostDelete
#undef PvmHostFail
#undef PvmHostrNMstr
#undef PvmIPLoopback
#undef PvmMboxDefault
#undef PvmMboxDirectIndex
#undef PvmMboxDirectIndexOf
#undef PvmMboxDirectIndexShift
#undef PvmMboxFirstAvail
#undef PvmMboxMaxDirectIndex
#undef PvmMboxMaxFlag
#undef PvmMboxMultiInstance
#undef PvmMboxOverWritable
#undef PvmMboxPersistent
#undef PvmMboxReadAndDelete
#undef PvmMboxWaitForInfo
#undef PvmMismatch
#undef PvmMppFront
#undef PvmNoBuf
#undef PvmNoData
#undef PvmNoEntry
#undef PvmNoFile
#undef PvmNoGroup
#undef PvmNoHost
#undef PvmNoInst
#undef PvmNoMem
#undef PvmNoParent
#undef PvmNoReset
#undef PvmNoSpawnParent
#undef PvmNoSuchBuf
#undef PvmNoTask
#undef PvmNotFound
#undef PvmNotImpl
#undef PvmNotInGroup
#undef PvmNotifyCancel
#undef PvmNullGroup
#undef PvmOk
#undef PvmOutOfRes
#undef PvmOutputCode
#undef PvmOutputContext
#undef PvmOutputTid
#undef PvmOverflow
#undef PvmParentNotSet
#undef PvmPollConstant
#undef PvmPollSleep
#undef PvmPollTime
#undef PvmPollType
#undef PvmResvTids
#undef PvmRoute
#undef PvmRouteAdd
#undef PvmRouteDelete
#undef PvmRouteDirect
#undef PvmSelfOutputCode
#undef PvmSelfOutputContext
#undef PvmSelfOutputTid
#undef PvmSelfTraceBuffer
#undef PvmSelfTraceCode
#undef PvmSelfTraceContext
#undef PvmSelfTraceOptions
#undef PvmSelfTraceTid
#undef PvmShowTids
#undef PvmSysErr
#undef PvmTaskArch
#undef PvmTaskChild
#undef PvmTaskDebug
#undef PvmTaskDefault
#undef PvmTaskExit
#undef PvmTaskHost
#undef PvmTaskSelf
#undef PvmTaskTrace
#undef PvmTraceBuffer
#undef PvmTraceCode
#undef PvmTraceContext
#undef PvmTraceCount
#undef PvmTraceFull
#undef PvmTraceOptions
#undef PvmTraceTid
#undef PvmTraceTime

/*
 * PVM's header, by path: -Ilib would find ours under <pvm3.h>.  Each of its
 * prototypes redeclares one of ours, which must be compatible.
 */
#include "/usr/include/pvm3.h"

static const long pvm_ints[] = { PVM_HDR_INTS(HDR_INT) };
static const char *const pvm_strs[] = { PVM_HDR_STRS(HDR_STR) };
static const size_t pvm_sizes[] = { PVM_HDR_STRUCTS(HDR_SIZE) };
static const size_t pvm_offs[] = { PVM_HDR_FIELDS(HDR_OFF) };
static const size_t pvm_fsizes[] = { PVM_HDR_FIELDS(HDR_FSIZE) };

static int
pvm_mbox_index(unsigned i)
{
    return (int)PvmMboxDirectIndex(i);
}

static int
pvm_mbox_index_of(int flags)
{
    return (int)PvmMboxDirectIndexOf(flags);
}

_Static_assert(SAME_TYPE(pvm_config, int(int *, int *, struct pvmhostinfo **)), "pvm_config");
_Static_assert(SAME_TYPE(pvm_tasks, int(int, int *, struct pvmtaskinfo **)), "pvm_tasks");
_Static_assert(SAME_TYPE(pvm_getminfo, int(int, struct pvmminfo *)), "pvm_getminfo");
_Static_assert(SAME_TYPE(pvm_setminfo, int(int, struct pvmminfo *)), "pvm_setminfo");
_Static_assert(SAME_TYPE(pvm_getmboxinfo, int(char *, int *, struct pvmmboxinfo **)),
               "pvm_getmboxinfo");
_Static_assert(SAME_TYPE(pvm_reg_rm, int(struct pvmhostinfo **)), "pvm_reg_rm");
#endif

#ifndef HAVE_PVM_HEADER
#define SKIP_WITHOUT_PVM()                                                    \
    do {                                                                      \
        print_message("pvm-dev's /usr/include/pvm3.h is missing; "            \
                      "apt-get install pvm-dev to compare with PVM\n");       \
        skip();                                                               \
    } while (0)
#else
#define SKIP_WITHOUT_PVM() ((void)0)
#endif

static void
test_pvm_header_declares_every_pvm_function(void **state)
{
    size_t i;

    (void)state;
    assert_int_equal(sizeof lv_funcs / sizeof lv_funcs[0], 112);
    for (i = 0; i < sizeof lv_funcs / sizeof lv_funcs[0]; i++)
        assert_int_equal(lv_funcs[i], sizeof(void (*)(void)));
}

/* What the man pages state, checked whether or not pvm-dev is installed. */
static void
test_pvm_header_values_match_the_man_pages(void **state)
{
    static const long want[][2] = {
        { PvmDataDefault, 0 }, { PvmDataRaw, 1 }, { PvmDataInPlace, 2 },
        { PvmRoute, 1 }, { PvmDebugMask, 2 }, { PvmAutoErr, 3 }, { PvmOutputTid, 4 },
        { PvmOutputCode, 5 }, { PvmFragSize, 10 }, { PvmResvTids, 11 },
        { PvmShowTids, 18 }, { PvmNoReset, 25 }, { PvmDontRoute, 1 },
        { PvmAllowDirect, 2 }, { PvmRouteDirect, 3 },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(want[i][0], want[i][1]);
    /* Our own table, recorded while our macros were live. */
    for (i = 0; i < NINTS; i++)
        if (strcmp(int_names[i], "PvmBadParam") == 0)
            assert_int_equal(lv_ints[i], -2);
        else if (strcmp(int_names[i], "PvmIPLoopback") == 0)
            assert_int_equal(lv_ints[i], -36);
        else if (strcmp(int_names[i], "PVM_ULONG") == 0)
            assert_int_equal(lv_ints[i], 11);
    assert_string_equal(lv_strs[0], "3.4.6");
}

static void
test_pvm_header_constants_match_pvm(void **state)
{
    int bad = 0;
    size_t i;

    (void)state;
    SKIP_WITHOUT_PVM();
#ifdef HAVE_PVM_HEADER
    for (i = 0; i < NINTS; i++)
        if (lv_ints[i] != pvm_ints[i]) {
            print_error("%s: ours %ld, PVM's %ld\n", int_names[i], lv_ints[i], pvm_ints[i]);
            bad++;
        }
    for (i = 0; i < NSTRS; i++)
        if (strcmp(lv_strs[i], pvm_strs[i]) != 0) {
            print_error("%s: ours \"%s\", PVM's \"%s\"\n", str_names[i], lv_strs[i],
                        pvm_strs[i]);
            bad++;
        }
#else
    (void)i;
#endif
    assert_int_equal(bad, 0);
}

static void
test_pvm_header_struct_layouts_match_pvm(void **state)
{
    int bad = 0;
    size_t i;

    (void)state;
    SKIP_WITHOUT_PVM();
#ifdef HAVE_PVM_HEADER
    for (i = 0; i < NSTRUCTS; i++)
        if (lv_sizes[i] != pvm_sizes[i]) {
            print_error("sizeof(struct %s): ours %zu, PVM's %zu\n", struct_names[i],
                        lv_sizes[i], pvm_sizes[i]);
            bad++;
        }
    for (i = 0; i < NFIELDS; i++)
        if (lv_offs[i] != pvm_offs[i] || lv_fsizes[i] != pvm_fsizes[i]) {
            print_error("%s: ours at %zu size %zu, PVM's at %zu size %zu\n", field_names[i],
                        lv_offs[i], lv_fsizes[i], pvm_offs[i], pvm_fsizes[i]);
            bad++;
        }
#else
    (void)i;
#endif
    assert_int_equal(bad, 0);
}

static void
test_pvm_header_mbox_index_macros_match_pvm(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < sizeof mbox_samples / sizeof mbox_samples[0]; i++)
        assert_int_equal(lv_mbox_index_of(lv_mbox_index(mbox_samples[i])), (int)mbox_samples[i]);
    SKIP_WITHOUT_PVM();
#ifdef HAVE_PVM_HEADER
    for (i = 0; i < sizeof mbox_samples / sizeof mbox_samples[0]; i++) {
        int flags = (int)(mbox_samples[i] << 10 | PvmMboxMultiInstance);

        assert_int_equal(lv_mbox_index(mbox_samples[i]), pvm_mbox_index(mbox_samples[i]));
        assert_int_equal(lv_mbox_index_of(flags), pvm_mbox_index_of(flags));
    }
#endif
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pvm_header_declares_every_pvm_function),
        cmocka_unit_test(test_pvm_header_values_match_the_man_pages),
        cmocka_unit_test(test_pvm_header_constants_match_pvm),
        cmocka_unit_test(test_pvm_header_struct_layouts_match_pvm),
        cmocka_unit_test(test_pvm_header_mbox_index_macros_match_pvm),
    };

    return cmocka_run_group_tests_name("pvm_header", tests, NULL, NULL);
}
