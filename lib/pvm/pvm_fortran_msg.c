/*
 * pvm_fortran_msg.c - libfpvm3 (pvm_fortran.h): message buffers, packing
 * and unpacking by type code, sending and receiving.
 *
 * pvmfpack(STRING, xp, nitem, stride) packs nitem characters of xp as
 * bytes, as PVM's Fortran library does (pvmfpack(3PVM): "nitem is the
 * number of characters"), and pvmfunpack(STRING, ...) unpacks them the
 * same way, leaving the rest of xp as it was.  Unlike PVM, the characters
 * named must lie inside the string gfortran passes (its hidden length):
 * more is PvmBadParam instead of a read or write past its end.
 */
#include "pvm_fortran.h"

#include <stddef.h>
#include <sys/time.h>

#include "pvm3.h"

void
pvmfinitsend_(int *encoding, int *bufid)
{
    *bufid = pvm_initsend(*encoding);
}

void
pvmfmkbuf_(int *encoding, int *bufid)
{
    *bufid = pvm_mkbuf(*encoding);
}

void
pvmffreebuf_(int *bufid, int *info)
{
    *info = pvm_freebuf(*bufid);
}

void
pvmfgetsbuf_(int *bufid)
{
    *bufid = pvm_getsbuf();
}

void
pvmfgetrbuf_(int *bufid)
{
    *bufid = pvm_getrbuf();
}

void
pvmfsetsbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setsbuf(*bufid);
}

void
pvmfsetrbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setrbuf(*bufid);
}

void
pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info)
{
    *info = pvm_bufinfo(*bufid, bytes, msgtag, tid);
}

void
pvmfgetminfo_(int *bufid, int *len, int *ctx, int *tag, int *wid, int *enc, int *crc, int *src,
              int *dst, int *info)
{
    struct pvmminfo mi;
    int rc = pvm_getminfo(*bufid, &mi);

    *info = rc;
    if (rc < 0)
        return;
    *len = mi.len;
    *ctx = mi.ctx;
    *tag = mi.tag;
    *wid = mi.wid;
    *enc = mi.enc;
    *crc = mi.crc;
    *src = mi.src;
    *dst = mi.dst;
}

/* The fields Fortran may set; the others keep their values. */
void
pvmfsetminfo_(int *bufid, int *ctx, int *tag, int *wid, int *src, int *dst, int *info)
{
    struct pvmminfo mi;
    int rc = pvm_getminfo(*bufid, &mi);

    if (rc < 0) {
        *info = rc;
        return;
    }
    mi.ctx = *ctx;
    mi.tag = *tag;
    mi.wid = *wid;
    mi.src = *src;
    mi.dst = *dst;
    *info = pvm_setminfo(*bufid, &mi);
}

/* Whether nitem characters every stride-th lie inside a string of len. */
static int
pvm__fstr_fits(int nitem, int stride, size_t len)
{
    if (nitem < 0 || stride < 1)
        return 0;
    return nitem == 0 || (size_t)(nitem - 1) * (size_t)stride < len;
}

/* One pack or unpack call by Fortran type code. */
static int
pvm__fpack(int unpack, int what, void *xp, int nitem, int stride, size_t xp_len)
{
    switch (what) {
    case PVM__F_STRING:
        if (!pvm__fstr_fits(nitem, stride, xp_len))
            return PvmBadParam;
        return unpack ? pvm_upkbyte(xp, nitem, stride) : pvm_pkbyte(xp, nitem, stride);
    case PVM__F_BYTE1:
        return unpack ? pvm_upkbyte(xp, nitem, stride) : pvm_pkbyte(xp, nitem, stride);
    case PVM__F_INTEGER2:
        return unpack ? pvm_upkshort(xp, nitem, stride) : pvm_pkshort(xp, nitem, stride);
    case PVM__F_INTEGER4:
        return unpack ? pvm_upkint(xp, nitem, stride) : pvm_pkint(xp, nitem, stride);
    case PVM__F_REAL4:
        return unpack ? pvm_upkfloat(xp, nitem, stride) : pvm_pkfloat(xp, nitem, stride);
    case PVM__F_COMPLEX8:
        return unpack ? pvm_upkcplx(xp, nitem, stride) : pvm_pkcplx(xp, nitem, stride);
    case PVM__F_REAL8:
        return unpack ? pvm_upkdouble(xp, nitem, stride) : pvm_pkdouble(xp, nitem, stride);
    case PVM__F_COMPLEX16:
        return unpack ? pvm_upkdcplx(xp, nitem, stride) : pvm_pkdcplx(xp, nitem, stride);
    case PVM__F_INTEGER8:
        return unpack ? pvm_upklong(xp, nitem, stride) : pvm_pklong(xp, nitem, stride);
    default:
        return PvmBadParam;
    }
}

/* xp_len is gfortran's hidden length, there (and read) only for STRING. */
void
pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info, size_t xp_len)
{
    *info = pvm__fpack(0, *what, xp, *nitem, *stride, xp_len);
}

void
pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info, size_t xp_len)
{
    *info = pvm__fpack(1, *what, xp, *nitem, *stride, xp_len);
}

void
pvmfpkmesg_(int *bufid, int *info)
{
    *info = pvm_pkmesg(*bufid);
}

void
pvmfpkmesgbody_(int *bufid, int *info)
{
    *info = pvm_pkmesgbody(*bufid);
}

/* Unpacks from the active receive buffer, as pvm_upkmesg does; bufid is
 * PVM's documented argument and names nothing more. */
void
pvmfupkmesg_(int *bufid, int *newbufid)
{
    (void)bufid;
    *newbufid = pvm_upkmesg();
}

void
pvmfsend_(int *tid, int *msgtag, int *info)
{
    *info = pvm_send(*tid, *msgtag);
}

void
pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info)
{
    *info = pvm_mcast(tids, *ntask, *msgtag);
}

void
pvmfrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_recv(*tid, *msgtag);
}

void
pvmfnrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_nrecv(*tid, *msgtag);
}

void
pvmfprobe_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_probe(*tid, *msgtag);
}

/* sec -1 waits for ever, as a NULL timeout does in C. */
void
pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid)
{
    struct timeval tv;

    if (*sec == -1) {
        *bufid = pvm_trecv(*tid, *msgtag, NULL);
        return;
    }
    /* Another negative time polls, as pvm_trecv (and PVM 3.4.6's) do. */
    tv.tv_sec = *sec;
    tv.tv_usec = *usec;
    *bufid = pvm_trecv(*tid, *msgtag, &tv);
}

/* STRING travels as bytes, len characters of the string. */
static int
pvm__fptype(int datatype, int len, size_t buf_len)
{
    if (datatype == PVM__F_STRING)
        return pvm__fstr_fits(len, 1, buf_len) ? PVM_BYTE : PvmBadParam;
    if (datatype < PVM__F_BYTE1 || datatype > PVM__F_INTEGER8)
        return PvmBadParam;
    return datatype;    /* BYTE1 .. INTEGER8 are PVM_BYTE .. PVM_LONG */
}

void
pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *info,
           size_t buf_len)
{
    int dt = pvm__fptype(*datatype, *len, buf_len);

    *info = dt < 0 ? dt : pvm_psend(*tid, *msgtag, buf, *len, dt);
}

void
pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *atid, int *atag,
           int *alen, int *info, size_t buf_len)
{
    int dt = pvm__fptype(*datatype, *len, buf_len);

    *info = dt < 0 ? dt : pvm_precv(*tid, *msgtag, buf, *len, dt, atid, atag, alen);
}
