/*
 * pvm3.h - the PVM 3.4 C API as LiquidVM provides it.  Installed.
 *
 * Who may include it: any program written for PVM 3.4, unchanged, and
 * LiquidVM's own lib/pvm/pvm_*.c.  The names, values, structure layouts and
 * prototypes below are those of PVM 3.4.6, so that a program compiled
 * against PVM's header runs against our libpvm3.so.3 and the reverse;
 * tests/unit/test_pvm_header.c checks every one against PVM's own header
 * when it is installed.  PVM's man pages are the specification.
 *
 * Context: a task has one library context; libpvm3 is not
 * thread-safe, as PVM's was not: call it from one thread at a time.
 *
 * Errors: every function returns PvmOk (0) or a positive result on success
 * and one of the negative Pvm* codes below on failure, never a raw errno.
 * Unless pvm_setopt(PvmAutoErr, 0) was called, a failing call also prints
 * "libpvm [tXXXX]: pvm_func(): message" on stderr (PvmAutoErr 2 then exits,
 * 3 aborts).
 *
 * Ownership: libpvm3 never keeps a caller's pointer after the call returns,
 * with one documented exception: a buffer made with PvmDataInPlace keeps a
 * reference to each packed array until the message is sent, so the caller
 * must leave those arrays alone until then.  Arrays returned through
 * pointers (pvm_config, pvm_tasks, pvm_siblings, pvm_getfds,
 * pvm_getmboxinfo) belong to the library and stay valid until the next call
 * of the same function.
 */
#ifndef LIQUIDVM_PVM3_H
#define LIQUIDVM_PVM3_H

/* Some PVM programs test PVM's own include guard. */
#ifndef _PVM3_H_
#define _PVM3_H_
#endif

#include <stdio.h>      /* FILE for pvm_catchout, fprintf in PvmMboxDirectIndex */
#include <sys/time.h>   /* struct timeval for pvm_trecv, as PVM's header */

/*
 * libpvm3.so.3 exports PVM's names only: the library is built with hidden
 * visibility and each API entry point is marked here (libuv's UV_EXTERN).
 */
#if defined(__GNUC__) && __GNUC__ >= 4
#define PVM_API __attribute__((visibility("default")))
#else
#define PVM_API
#endif

#define PVM_VER "3.4.6"
#define PVM_MAJOR_VERSION 3
#define PVM_MINOR_VERSION 4
#define PVM_PATCH_VERSION 6

/* Message encodings: pvm_initsend(), pvm_mkbuf(). */
#define PvmDataDefault 0        /* XDR: big-endian, portable between hosts */
#define PvmDataRaw 1            /* the sender's native layout */
#define PvmDataInPlace 2        /* a reference to the caller's arrays, copied at send */
#define PvmDataFoo PvmDataDefault
#define PvmDataTrace 4          /* PVM's trace records; not implemented here */

/* pvm_spawn() flags. */
#define PvmTaskDefault 0
#define PvmTaskHost 1           /* where names a host */
#define PvmTaskArch 2           /* where names an architecture */
#define PvmTaskDebug 4
#define PvmTaskTrace 8
#define PvmMppFront 16
#define PvmHostCompl 32         /* any host but where */
#define PvmNoSpawnParent 64

/* pvm_notify() kinds, and the flag that cancels a notify. */
#define PvmTaskExit 1
#define PvmHostDelete 2
#define PvmHostAdd 3
#define PvmRouteAdd 4
#define PvmRouteDelete 5
#define PvmNotifyCancel 256

/* pvm_setopt() / pvm_getopt() options, with their predefined values. */
#define PvmRoute 1
#define PvmDontRoute 1
#define PvmAllowDirect 2
#define PvmRouteDirect 3
#define PvmDebugMask 2
#define PvmAutoErr 3
#define PvmOutputTid 4
#define PvmOutputCode 5
#define PvmTraceTid 6
#define PvmTraceCode 7
#define PvmTraceBuffer 8
#define PvmTraceOptions 9
#define PvmTraceFull 1
#define PvmTraceTime 2
#define PvmTraceCount 3
#define PvmFragSize 10
#define PvmResvTids 11
#define PvmSelfOutputTid 12
#define PvmSelfOutputCode 13
#define PvmSelfTraceTid 14
#define PvmSelfTraceCode 15
#define PvmSelfTraceBuffer 16
#define PvmSelfTraceOptions 17
#define PvmShowTids 18
#define PvmPollType 19
#define PvmPollConstant 1
#define PvmPollSleep 2
#define PvmPollTime 20
#define PvmOutputContext 21
#define PvmTraceContext 22
#define PvmSelfOutputContext 23
#define PvmSelfTraceContext 24
#define PvmNoReset 25

/* pvm_settmask() / pvm_gettmask() targets. */
#define PvmTaskSelf 0
#define PvmTaskChild 1

/* The context every task starts in, as in PVM 3.3. */
#define PvmBaseContext 0

/* Message mailbox flags: pvm_putinfo(), pvm_recvinfo(). */
#define PvmMboxDefault 0
#define PvmMboxPersistent 1     /* survives its owner's exit */
#define PvmMboxMultiInstance 2
#define PvmMboxOverWritable 4
#define PvmMboxFirstAvail 8
#define PvmMboxReadAndDelete 16
#define PvmMboxWaitForInfo 32
#define PvmMboxMaxFlag 512

/* A direct index travels in the flag bits above PvmMboxMaxFlag. */
#define PvmMboxDirectIndexShift 10
#define PvmMboxMaxDirectIndex ((unsigned)1 << (31 - PvmMboxDirectIndexShift))
#define PvmMboxDirectIndexOf(_flags)                                          \
    (((_flags) & ((PvmMboxMaxDirectIndex - 1) << PvmMboxDirectIndexShift))   \
     >> PvmMboxDirectIndexShift)
#define PvmMboxDirectIndex(_index)                                            \
    (((_index) >= PvmMboxMaxDirectIndex)                                      \
         ? (fprintf(stderr, "Mbox Direct Index Too Large: %d >= %d\n",        \
                    (_index), PvmMboxMaxDirectIndex), 0)                      \
         : ((_index) << PvmMboxDirectIndexShift))

/* Mailbox classes PVM reserves for its system services. */
#define PVMNORESETCLASS "###_PVM_NO_RESET_###"
#define PVMHOSTERCLASS "###_PVM_HOSTER_###"
#define PVMTASKERCLASS "###_PVM_TASKER_###"
#define PVMTRACERCLASS "###_PVM_TRACER_###"
#define PVMRMCLASS "###_PVM_RM_###"

/* Error codes: what every call returns on failure (see pvm_perror). */
#define PvmOk 0
#define PvmBadParam -2          /* bad parameter */
#define PvmMismatch -3          /* parameter mismatch */
#define PvmOverflow -4          /* value too large */
#define PvmNoData -5            /* end of buffer */
#define PvmNoHost -6            /* no such host */
#define PvmNoFile -7            /* no such file */
#define PvmDenied -8            /* permission denied */
#define PvmNoMem -10            /* out of memory */
#define PvmBadMsg -12           /* cannot decode message */
#define PvmSysErr -14           /* cannot contact the local daemon */
#define PvmNoBuf -15            /* no current buffer */
#define PvmNoSuchBuf -16        /* no such buffer */
#define PvmNullGroup -17        /* null group name */
#define PvmDupGroup -18         /* already in group */
#define PvmNoGroup -19          /* no such group */
#define PvmNotInGroup -20       /* not in group */
#define PvmNoInst -21           /* no such instance */
#define PvmHostFail -22         /* host failed */
#define PvmNoParent -23         /* no parent task */
#define PvmNotImpl -24          /* not implemented */
#define PvmDSysErr -25          /* daemon system error */
#define PvmBadVersion -26       /* version mismatch */
#define PvmOutOfRes -27         /* out of resources */
#define PvmDupHost -28          /* host already in the virtual machine */
#define PvmCantStart -29        /* cannot start a daemon */
#define PvmAlready -30          /* already in progress */
#define PvmNoTask -31           /* no such task */
#define PvmNotFound -32         /* not found */
#define PvmExists -33           /* already exists */
#define PvmHostrNMstr -34       /* hoster run on a host other than the master */
#define PvmParentNotSet -35     /* the spawning parent set PvmNoSpawnParent */
#define PvmIPLoopback -36       /* the master host's address is loopback */

/* PVM 3.3 names kept for old programs. */
#define PvmNoEntry PvmNotFound
#define PvmDupEntry PvmDenied

/* Data types: pvm_psend(), pvm_precv(), pvm_reduce(). */
#define PVM_STR 0
#define PVM_BYTE 1
#define PVM_SHORT 2
#define PVM_INT 3
#define PVM_FLOAT 4
#define PVM_CPLX 5
#define PVM_DOUBLE 6
#define PVM_DCPLX 7
#define PVM_LONG 8
#define PVM_USHORT 9
#define PVM_UINT 10
#define PVM_ULONG 11

/* One host of the virtual machine: pvm_config(), pvm_reg_rm(). */
struct pvmhostinfo {
    int hi_tid;                 /* the daemon's task id */
    char *hi_name;
    char *hi_arch;              /* "LINUX64" */
    int hi_speed;               /* relative speed, 1000 by default */
    int hi_dsig;                /* data signature of the host's native layout */
};

/* One task: pvm_tasks(). */
struct pvmtaskinfo {
    int ti_tid;
    int ti_ptid;                /* parent, or 0 */
    int ti_host;                /* the daemon's task id */
    int ti_flag;
    char *ti_a_out;             /* executable name */
    int ti_pid;
};

/* A message header: pvm_getminfo(), pvm_setminfo(). */
struct pvmminfo {
    int len;                    /* body length in bytes */
    int ctx;
    int tag;
    int wid;                    /* wait id matching a reply to its request */
    int enc;                    /* 0x10000000 for XDR, else a data signature */
    int crc;
    int src;
    int dst;
};

/* One mailbox class: pvm_getmboxinfo(). */
struct pvmmboxinfo {
    char *mi_name;
    int mi_nentries;
    int *mi_indices;
    int *mi_owners;
    int *mi_flags;
};

/* Temporary file names, spelled as PVM spells them for its programs. */
#ifdef NOTMPNAM
#define PVMTMPNAMFUN(x) pvmtmpnam(x)
#define PVMTMPNAMLEN 128
#else
#define PVMTMPNAMFUN(x) tmpnam(x)
#ifdef L_tmpnam
#define PVMTMPNAMLEN L_tmpnam
#else
#define PVMTMPNAMLEN 128
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The prototypes keep PVM's parameter types exactly, non-const char *
 * included, so that function pointers taken by PVM programs keep their
 * types.
 */

/* Identity and enrollment. */
PVM_API int pvm_mytid(void);
PVM_API int pvm_exit(void);
PVM_API int pvm_parent(void);
PVM_API int pvm_siblings(int **tids);
PVM_API int pvm_tidtohost(int tid);
PVM_API int pvm_archcode(char *arch);
PVM_API char *pvm_version(void);
PVM_API int pvm_getfds(int **fds);
PVM_API int pvm_start_pvmd(int argc, char **argv, int block);

/* Errors. */
PVM_API int pvm_perror(char *msg);
PVM_API char *pvm_strerror(void);

/* Processes and hosts. */
PVM_API int pvm_spawn(char *file, char **argv, int flags, char *where, int ntask,
                      int *tids);
PVM_API int pvm_kill(int tid);
PVM_API int pvm_sendsig(int tid, int signum);
PVM_API int pvm_catchout(FILE *ff);
PVM_API int pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp);
PVM_API int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp);
PVM_API int pvm_pstat(int tid);
PVM_API int pvm_mstat(char *host);
PVM_API int pvm_addhosts(char **hosts, int nhost, int *infos);
PVM_API int pvm_delhosts(char **hosts, int nhost, int *infos);
PVM_API int pvm_halt(void);
PVM_API int pvm_notify(int what, int msgtag, int cnt, int *tids);
PVM_API int pvm_hostsync(int host, struct timeval *clk, struct timeval *delta);
PVM_API int pvm_tickle(int narg, int *argp, int *nresp, int *resp);
PVM_API int pvm_getnoresets(int **tids, int *ntids);
PVM_API int pvm_export(char *name);
PVM_API int pvm_unexport(char *name);

/* Message buffers. */
PVM_API int pvm_initsend(int encoding);
PVM_API int pvm_mkbuf(int encoding);
PVM_API int pvm_freebuf(int bufid);
PVM_API int pvm_getsbuf(void);
PVM_API int pvm_getrbuf(void);
PVM_API int pvm_setsbuf(int bufid);
PVM_API int pvm_setrbuf(int bufid);
PVM_API int pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid);
PVM_API int pvm_getminfo(int bufid, struct pvmminfo *info);
PVM_API int pvm_setminfo(int bufid, struct pvmminfo *info);

/* Packing and unpacking: nitem items, every stride-th one of the array. */
PVM_API int pvm_packf(const char *fmt, ...);
PVM_API int pvm_pkbyte(char *xp, int nitem, int stride);
PVM_API int pvm_pkcplx(float *cp, int nitem, int stride);
PVM_API int pvm_pkdcplx(double *zp, int nitem, int stride);
PVM_API int pvm_pkdouble(double *dp, int nitem, int stride);
PVM_API int pvm_pkfloat(float *fp, int nitem, int stride);
PVM_API int pvm_pkint(int *ip, int nitem, int stride);
PVM_API int pvm_pkuint(unsigned int *ip, int nitem, int stride);
PVM_API int pvm_pklong(long *ip, int nitem, int stride);
PVM_API int pvm_pkulong(unsigned long *ip, int nitem, int stride);
PVM_API int pvm_pkshort(short *jp, int nitem, int stride);
PVM_API int pvm_pkushort(unsigned short *ip, int nitem, int stride);
PVM_API int pvm_pkstr(char *sp);
PVM_API int pvm_pkmesg(int bufid);
PVM_API int pvm_pkmesgbody(int bufid);
PVM_API int pvm_unpackf(const char *fmt, ...);
PVM_API int pvm_upkbyte(char *xp, int nitem, int stride);
PVM_API int pvm_upkcplx(float *cp, int nitem, int stride);
PVM_API int pvm_upkdcplx(double *zp, int nitem, int stride);
PVM_API int pvm_upkdouble(double *dp, int nitem, int stride);
PVM_API int pvm_upkfloat(float *fp, int nitem, int stride);
PVM_API int pvm_upkint(int *ip, int nitem, int stride);
PVM_API int pvm_upkuint(unsigned int *ip, int nitem, int stride);
PVM_API int pvm_upklong(long *ip, int nitem, int stride);
PVM_API int pvm_upkulong(unsigned long *ip, int nitem, int stride);
PVM_API int pvm_upkshort(short *jp, int nitem, int stride);
PVM_API int pvm_upkushort(unsigned short *ip, int nitem, int stride);
PVM_API int pvm_upkstr(char *sp);
PVM_API int pvm_upkmesg(void);

/* Messages. */
PVM_API int pvm_send(int tid, int msgtag);
PVM_API int pvm_mcast(int *tids, int ntask, int msgtag);
PVM_API int pvm_recv(int tid, int msgtag);
PVM_API int pvm_nrecv(int tid, int msgtag);
PVM_API int pvm_trecv(int tid, int msgtag, struct timeval *tmout);
PVM_API int pvm_probe(int tid, int msgtag);
PVM_API int pvm_psend(int tid, int msgtag, void *buf, int len, int datatype);
PVM_API int pvm_precv(int tid, int msgtag, void *buf, int len, int datatype,
                      int *atid, int *atag, int *alen);
/*
 * Installs a new matching function for receives and returns the previous
 * one.  The declared return type is PVM's own, which differs from what the
 * function returns (a match function); programs cast it, so it stays.
 */
PVM_API int (*pvm_recvf(int (*new_match)(int bufid, int tid, int tag)))(int (*)(int, int, int));

/* Options. */
PVM_API int pvm_setopt(int what, int val);
PVM_API int pvm_getopt(int what);

/* Contexts. */
PVM_API int pvm_newcontext(void);
PVM_API int pvm_setcontext(int ctx);
PVM_API int pvm_getcontext(void);
PVM_API int pvm_freecontext(int ctx);

/* Message mailbox and message handlers. */
PVM_API int pvm_putinfo(char *name, int bufid, int flags);
PVM_API int pvm_recvinfo(char *name, int index, int flags);
PVM_API int pvm_delinfo(char *name, int index, int flags);
PVM_API int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes);
PVM_API int pvm_addmhf(int src, int tag, int ctx, int (*handler)(int mid));
PVM_API int pvm_delmhf(int mhid);

/* PVM 3.3's mailbox interface, now on top of the one above. */
PVM_API int pvm_insert(char *name, int req, int data);
PVM_API int pvm_lookup(char *name, int req, int *data);
PVM_API int pvm_delete(char *name, int req);

/* Dynamic groups (libgpvm3 in PVM). */
PVM_API int pvm_joingroup(char *group);
PVM_API int pvm_lvgroup(char *group);
PVM_API int pvm_gettid(char *group, int inum);
PVM_API int pvm_getinst(char *group, int tid);
PVM_API int pvm_gsize(char *group);
PVM_API int pvm_barrier(char *group, int count);
PVM_API int pvm_bcast(char *group, int msgtag);
PVM_API int pvm_freezegroup(char *group, int size);
PVM_API int pvm_gather(void *result, void *data, int count, int datatype, int msgtag,
                       char *group, int rootginst);
PVM_API int pvm_scatter(void *result, void *data, int count, int datatype, int msgtag,
                        char *group, int rootginst);
PVM_API int pvm_reduce(void (*func)(int *datatype, void *x, void *y, int *num,
                                    int *info),
                       void *data, int count, int datatype, int msgtag, char *group,
                       int rootginst);

/* The predefined reduction functions for pvm_reduce(). */
PVM_API void PvmMax(int *datatype, void *x, void *y, int *num, int *info);
PVM_API void PvmMin(int *datatype, void *x, void *y, int *num, int *info);
PVM_API void PvmSum(int *datatype, void *x, void *y, int *num, int *info);
PVM_API void PvmProduct(int *datatype, void *x, void *y, int *num, int *info);

/* System services: resource manager, hoster, tasker, tracer. */
PVM_API int pvm_reg_hoster(void);
PVM_API int pvm_reg_rm(struct pvmhostinfo **hip);
PVM_API int pvm_reg_tasker(void);
PVM_API int pvm_reg_tracer(int tctx, int tag, int octx, int otag, char *tmask,
                           int tbuf, int topt);

/* Trace masks (PvmTaskSelf, PvmTaskChild).  PVM declares these two in its
 * pvmtev.h with a Pvmtmask, char[TEV_MASK_LENGTH] (36), argument, which is
 * the same type as a parameter; the TEV_MASK_* macros are pvmtev.h's. */
PVM_API int pvm_gettmask(int who, char *mask);
PVM_API int pvm_settmask(int who, char *mask);

/* Helpers PVM exports for its tools. */
#ifdef NOTMPNAM
PVM_API char *pvmtmpnam(char *buf);
#endif
PVM_API char *pvmgetrsh(void);
PVM_API char *pvmgettmp(void);

#ifdef __cplusplus
}
#endif

#endif
