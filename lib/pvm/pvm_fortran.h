/*
 * pvm_fortran.h - libfpvm3, the Fortran binding of the PVM 3.4 API: the
 * entry points as gfortran calls them, and the binding's internal helpers.
 * Internal: only lib/pvm/pvm_fortran*.c include it; it is never installed
 * (Fortran programs include fpvm3.h, which holds the constants).
 *
 * Layering (docs/architecture.md): the binding sits strictly above the C API.
 * pvm_fortran_str.c (strings, below everything) <- pvm_fortran.c (tasks,
 * hosts, options), pvm_fortran_msg.c (buffers, packing, messages),
 * pvm_fortran_group.c (groups), pvm_fortran_mbox.c (mailbox, contexts,
 * message handlers); each of those calls only pvm3.h's functions and
 * pvm_fortran_str.c, and no file of libpvm3 knows this one.
 *
 * Calling convention (gfortran on LINUX64): a routine's name is lowercase
 * with a trailing underscore; every argument is passed by reference; each
 * CHARACTER argument adds a hidden length (size_t, by value) after all the
 * visible arguments, in order.  A Fortran INTEGER is a C int, REAL a float,
 * DOUBLE PRECISION a double, INTEGER*2 a short, INTEGER*8 a long.
 *
 * Strings, as PVM's libfpvm does it: an input string has its trailing
 * blanks removed before it reaches the C API; an output string is filled
 * and blank-padded to its declared length.  An output that does not fit
 * yields PvmBadParam (what fits is still stored), never a write past the
 * end.  Every routine reports through its last INTEGER argument the value
 * the C call returns: PVM's codes, never errno.
 *
 * Context: the task's one libpvm3 context, from one thread (pvm3.h).  The
 * cycling routines (pvmfconfig, pvmftasks, pvmfgetmboxinfo) keep a snapshot
 * of their list between calls in this library.
 */
#ifndef LIQUIDVM_PVM_FORTRAN_H
#define LIQUIDVM_PVM_FORTRAN_H

#include <stddef.h>

/* libfpvm3's objects are built with hidden visibility like libpvm3's; the
 * entry points are marked, and libfpvm3.map exports only them. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define PVM_FAPI __attribute__((visibility("default")))
#else
#define PVM_FAPI
#endif

/* The type codes of pvmfpack/pvmfunpack (fpvm3.h's STRING ... INTEGER8). */
enum {
    PVM__F_STRING = 0, PVM__F_BYTE1 = 1, PVM__F_INTEGER2 = 2, PVM__F_INTEGER4 = 3,
    PVM__F_REAL4 = 4, PVM__F_COMPLEX8 = 5, PVM__F_REAL8 = 6, PVM__F_COMPLEX16 = 7,
    PVM__F_INTEGER8 = 8
};

/* ---- pvm_fortran_str.c: Fortran strings ---- */

/* A NUL-terminated copy of the Fortran string (s, len) without its trailing
 * blanks, in *out (free() it).  0, or PvmNoMem. */
int pvm__fstr_in(const char *s, size_t len, char **out);
/* Stores the C string c into the Fortran string (f, len), blank-padded.
 * 0, or PvmBadParam when c is longer than len (the first len bytes are
 * stored).  A NULL c stores blanks. */
int pvm__fstr_out(char *f, size_t len, const char *c);
/* Splits a blank-separated Fortran string into a NULL-terminated argv
 * (one allocation, free() it); *argc gets the count.  0 or PvmNoMem. */
int pvm__fstr_argv(const char *s, size_t len, char ***argv, int *argc);

/* ---- pvm_fortran.c: identity, tasks, hosts, options, errors ---- */
PVM_FAPI void pvmfmytid_(int *tid);
PVM_FAPI void pvmfexit_(int *info);
PVM_FAPI void pvmfparent_(int *tid);
PVM_FAPI void pvmfsiblings_(int *ntids, int *index, int *sibling);
PVM_FAPI void pvmftidtohost_(int *tid, int *dtid);
PVM_FAPI void pvmftidtoh_(int *tid, int *dtid);
PVM_FAPI void pvmfarchcode_(char *arch, int *cod, size_t arch_len);
PVM_FAPI void pvmfperror_(char *msg, int *info, size_t msg_len);
PVM_FAPI void pvmfserror_(int *set, int *oldset);
PVM_FAPI void pvmfgetopt_(int *what, int *val);
PVM_FAPI void pvmfsetopt_(int *what, int *val, int *oldval);
PVM_FAPI void pvmfadvise_(int *route, int *info);
PVM_FAPI void pvmfsleep_(int *secs);
PVM_FAPI void pvmfstartpvmd_(char *args, int *block, int *info, size_t args_len);
PVM_FAPI void pvmfspawn_(char *task, int *flag, char *where, int *ntask, int *tids, int *numt,
                         size_t task_len, size_t where_len);
PVM_FAPI void pvmfkill_(int *tid, int *info);
PVM_FAPI void pvmfsendsig_(int *tid, int *signum, int *info);
PVM_FAPI void pvmfpstat_(int *tid, int *status);
PVM_FAPI void pvmfmstat_(char *host, int *mstat, size_t host_len);
PVM_FAPI void pvmfcatchout_(int *onoff, int *info);
PVM_FAPI void pvmfaddhost_(char *host, int *info, size_t host_len);
PVM_FAPI void pvmfdelhost_(char *host, int *info, size_t host_len);
PVM_FAPI void pvmfhalt_(int *info);
PVM_FAPI void pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch, int *speed,
                          int *info, size_t name_len, size_t arch_len);
PVM_FAPI void pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid, int *flag,
                         char *aout, int *info, size_t aout_len);
PVM_FAPI void pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info);
PVM_FAPI void pvmfhostsync_(int *host, int *clksec, int *clkusec, int *deltasec,
                            int *deltausec, int *info);

/* ---- pvm_fortran_msg.c: buffers, packing, sending, receiving ---- */
PVM_FAPI void pvmfinitsend_(int *encoding, int *bufid);
PVM_FAPI void pvmfmkbuf_(int *encoding, int *bufid);
PVM_FAPI void pvmffreebuf_(int *bufid, int *info);
PVM_FAPI void pvmfgetsbuf_(int *bufid);
PVM_FAPI void pvmfgetrbuf_(int *bufid);
PVM_FAPI void pvmfsetsbuf_(int *bufid, int *oldbuf);
PVM_FAPI void pvmfsetrbuf_(int *bufid, int *oldbuf);
PVM_FAPI void pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info);
PVM_FAPI void pvmfgetminfo_(int *bufid, int *len, int *ctx, int *tag, int *wid, int *enc,
                            int *crc, int *src, int *dst, int *info);
PVM_FAPI void pvmfsetminfo_(int *bufid, int *ctx, int *tag, int *wid, int *src, int *dst,
                            int *info);
PVM_FAPI void pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info, size_t xp_len);
PVM_FAPI void pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info,
                          size_t xp_len);
PVM_FAPI void pvmfpkmesg_(int *bufid, int *info);
PVM_FAPI void pvmfpkmesgbody_(int *bufid, int *info);
PVM_FAPI void pvmfupkmesg_(int *bufid, int *newbufid);
PVM_FAPI void pvmfsend_(int *tid, int *msgtag, int *info);
PVM_FAPI void pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info);
PVM_FAPI void pvmfrecv_(int *tid, int *msgtag, int *bufid);
PVM_FAPI void pvmfnrecv_(int *tid, int *msgtag, int *bufid);
PVM_FAPI void pvmfprobe_(int *tid, int *msgtag, int *bufid);
PVM_FAPI void pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid);
PVM_FAPI void pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *info,
                         size_t buf_len);
PVM_FAPI void pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *atid,
                         int *atag, int *alen, int *info, size_t buf_len);

/* ---- pvm_fortran_group.c: dynamic groups and the reduction functions ---- */
PVM_FAPI void pvmfjoingroup_(char *group, int *inum, size_t group_len);
PVM_FAPI void pvmflvgroup_(char *group, int *info, size_t group_len);
PVM_FAPI void pvmfgettid_(char *group, int *inum, int *tid, size_t group_len);
PVM_FAPI void pvmfgetinst_(char *group, int *tid, int *inum, size_t group_len);
PVM_FAPI void pvmfgsize_(char *group, int *size, size_t group_len);
PVM_FAPI void pvmfbarrier_(char *group, int *count, int *info, size_t group_len);
PVM_FAPI void pvmfbcast_(char *group, int *msgtag, int *info, size_t group_len);
PVM_FAPI void pvmffreezegroup_(char *group, int *size, int *info, size_t group_len);
PVM_FAPI void pvmfgather_(void *result, void *data, int *count, int *datatype, int *msgtag,
                          char *group, int *rootginst, int *info, size_t group_len);
PVM_FAPI void pvmfscatter_(void *result, void *data, int *count, int *datatype, int *msgtag,
                           char *group, int *rootginst, int *info, size_t group_len);
PVM_FAPI void pvmfreduce_(void (*func)(int *, void *, void *, int *, int *), void *data,
                          int *count, int *datatype, int *msgtag, char *group, int *rootginst,
                          int *info, size_t group_len);
PVM_FAPI void pvmmax_(int *datatype, void *x, void *y, int *num, int *info);
PVM_FAPI void pvmmin_(int *datatype, void *x, void *y, int *num, int *info);
PVM_FAPI void pvmsum_(int *datatype, void *x, void *y, int *num, int *info);
PVM_FAPI void pvmproduct_(int *datatype, void *x, void *y, int *num, int *info);

/* ---- pvm_fortran_mbox.c: mailbox, contexts, message handlers ---- */
PVM_FAPI void pvmfputinfo_(char *name, int *bufid, int *flags, int *index, size_t name_len);
PVM_FAPI void pvmfrecvinfo_(char *name, int *index, int *flags, int *bufid, size_t name_len);
PVM_FAPI void pvmfdelinfo_(char *name, int *index, int *flags, int *info, size_t name_len);
PVM_FAPI void pvmfgetmboxinfo_(char *pattern, char *name, int *nclasses, int *nentries,
                               int *index, int *owner, int *flags, int *info,
                               size_t pattern_len, size_t name_len);
PVM_FAPI void pvmfnewcontext_(int *ctx);
PVM_FAPI void pvmfsetcontext_(int *new_ctx, int *old_ctx);
PVM_FAPI void pvmfgetcontext_(int *ctx);
PVM_FAPI void pvmffreecontext_(int *ctx, int *info);
PVM_FAPI void pvmfaddmhf_(int *src, int *tag, int *ctx, int (*func)(int *mid), int *mhid);
PVM_FAPI void pvmfdelmhf_(int *mhid, int *info);

#endif
