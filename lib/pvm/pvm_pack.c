/*
 * pvm_pack.c - typed packing and unpacking: pvm_pk* and pvm_upk* for every
 * type with PVM's (nitem, stride) semantics, pvm_pkstr/pvm_upkstr,
 * pvm_packf/pvm_unpackf with PVM's format syntax, and pvm_pkmesg,
 * pvm_pkmesgbody, pvm_upkmesg.  The byte layouts are in pvm_int.h; they are
 * PVM 3.4.6's, checked against its libpvm3 by tests/unit/test_pvm_pack.c.
 *
 * Where PVM and its man pages differ, this file follows PVM's behaviour
 * where a program could depend on it (a stride of 0 packs one item nitem
 * times, a negative stride walks backwards, ushorts are sign-extended on
 * the wire) and the man pages where PVM loses data (an XDR long beyond 32
 * bits is PvmOverflow, not silently truncated).  Every call is atomic: on
 * error nothing was packed and nothing was consumed.  Bad arguments
 * (negative counts, NULL arrays, absurd strides) are PvmBadParam.
 */
#include "pvm_int.h"
#include "pvm_ext.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE float and double expected");
_Static_assert(sizeof(int) == 4, "32-bit int expected");

/* Native and XDR sizes of one item of each PVM_* type (PVM_STR aside). */
static const struct {
    unsigned char native;
    unsigned char xdr;
} pvm__tsize[] = {
    [PVM_BYTE] = { 1, 1 },
    [PVM_SHORT] = { sizeof(short), 4 },
    [PVM_INT] = { sizeof(int), 4 },
    [PVM_FLOAT] = { sizeof(float), 4 },
    [PVM_CPLX] = { 2 * sizeof(float), 8 },
    [PVM_DOUBLE] = { sizeof(double), 8 },
    [PVM_DCPLX] = { 2 * sizeof(double), 16 },
    [PVM_LONG] = { sizeof(long), 4 },
    [PVM_USHORT] = { sizeof(short), 4 },
    [PVM_UINT] = { sizeof(int), 4 },
    [PVM_ULONG] = { sizeof(long), 4 },
};

/* Where a buffer stood, to undo a call that fails halfway. */
struct pvm__mark {
    size_t len;
    size_t nsegs;
    size_t seglen;
    size_t pos;
};

static void
pvm__save(const struct pvm__buf *b, struct pvm__mark *m)
{
    m->len = b->len;
    m->nsegs = b->nsegs;
    m->seglen = b->seglen;
    m->pos = b->pos;
}

static void
pvm__rewind(struct pvm__buf *b, const struct pvm__mark *m)
{
    b->len = m->len;
    b->nsegs = m->nsegs;
    b->seglen = m->seglen;
    b->pos = m->pos;
}

static void
pvm__put64(unsigned char *p, uint64_t v)
{
    wire_be32_put(p, (uint32_t)(v >> 32));
    wire_be32_put(p + 4, (uint32_t)v);
}

static uint64_t
pvm__get64(const unsigned char *p)
{
    return (uint64_t)wire_be32_get(p) << 32 | wire_be32_get(p + 4);
}

/*
 * Check the arguments every typed call shares; *step is the distance in
 * bytes between items.  The whole span the items cover must be
 * addressable, or stepping through it would overflow.
 */
static int
pvm__args(int type, const void *p, int nitem, int stride, ptrdiff_t *step)
{
    ptrdiff_t span;

    if (type < PVM_BYTE || type > PVM_ULONG || nitem < 0)
        return -EINVAL;
    if (nitem > 0 && p == NULL)
        return -EINVAL;
    *step = (ptrdiff_t)stride * pvm__tsize[type].native;
    if (nitem > 0 && __builtin_mul_overflow(*step, (ptrdiff_t)(nitem - 1), &span))
        return -EINVAL;
    return 0;
}

/* XDR longs are 32 bits: PvmOverflow for a value that would not survive. */
static int
pvm__xdr_long_fits(int type, const unsigned char *p, int nitem, ptrdiff_t step)
{
    int i;

    for (i = 0; i < nitem; i++) {
        long l;
        unsigned long u;

        if (type == PVM_LONG) {
            memcpy(&l, p + i * step, sizeof l);
            if (l < INT32_MIN || l > INT32_MAX)
                return -ERANGE;
        } else {
            memcpy(&u, p + i * step, sizeof u);
            if (u > UINT32_MAX)
                return -ERANGE;
        }
    }
    return 0;
}

/* Encode one item of type at src as XDR into out (pvm__tsize[type].xdr bytes). */
static void
pvm__xdr_put(int type, const unsigned char *src, unsigned char *out)
{
    short s;
    int n;
    long l;
    uint32_t w;
    uint64_t d;

    switch (type) {
    case PVM_SHORT:
    case PVM_USHORT:
        /* Both go out sign-extended, as PVM's encoder treats them alike. */
        memcpy(&s, src, sizeof s);
        wire_be32_put(out, (uint32_t)(int32_t)s);
        break;
    case PVM_INT:
    case PVM_UINT:
        memcpy(&n, src, sizeof n);
        wire_be32_put(out, (uint32_t)n);
        break;
    case PVM_LONG:
    case PVM_ULONG:
        memcpy(&l, src, sizeof l);
        wire_be32_put(out, (uint32_t)l);
        break;
    case PVM_FLOAT:
        memcpy(&w, src, 4);
        wire_be32_put(out, w);
        break;
    case PVM_CPLX:
        memcpy(&w, src, 4);
        wire_be32_put(out, w);
        memcpy(&w, src + 4, 4);
        wire_be32_put(out + 4, w);
        break;
    case PVM_DOUBLE:
        memcpy(&d, src, 8);
        pvm__put64(out, d);
        break;
    case PVM_DCPLX:
        memcpy(&d, src, 8);
        pvm__put64(out, d);
        memcpy(&d, src + 8, 8);
        pvm__put64(out + 8, d);
        break;
    default:
        break;
    }
}

/* Decode one XDR item of type from in into dst (native layout). */
static void
pvm__xdr_get(int type, const unsigned char *in, unsigned char *dst)
{
    uint32_t w = wire_be32_get(in);
    uint64_t d;
    short s;
    unsigned short us;
    int n;
    long l;
    unsigned long ul;

    switch (type) {
    case PVM_SHORT:
        s = (short)(int32_t)w;
        memcpy(dst, &s, sizeof s);
        break;
    case PVM_USHORT:
        us = (unsigned short)w;
        memcpy(dst, &us, sizeof us);
        break;
    case PVM_INT:
    case PVM_UINT:
        n = (int)w;
        memcpy(dst, &n, sizeof n);
        break;
    case PVM_LONG:
        l = (int32_t)w;
        memcpy(dst, &l, sizeof l);
        break;
    case PVM_ULONG:
        ul = w;
        memcpy(dst, &ul, sizeof ul);
        break;
    case PVM_FLOAT:
        memcpy(dst, &w, 4);
        break;
    case PVM_CPLX:
        memcpy(dst, &w, 4);
        w = wire_be32_get(in + 4);
        memcpy(dst + 4, &w, 4);
        break;
    case PVM_DOUBLE:
        d = pvm__get64(in);
        memcpy(dst, &d, 8);
        break;
    case PVM_DCPLX:
        d = pvm__get64(in);
        memcpy(dst, &d, 8);
        d = pvm__get64(in + 8);
        memcpy(dst + 8, &d, 8);
        break;
    default:
        break;
    }
}

/*
 * Pack into b.  temp says p points at the caller's temporaries (packf
 * values, nested message headers), which an InPlace buffer must copy
 * rather than refer to.
 */
static int
pvm__pack_any(struct pvm__buf *b, int type, const void *p, int nitem, int stride, int temp)
{
    const unsigned char *src = p;
    unsigned char *out;
    size_t native, nbytes, pad = 0;
    ptrdiff_t step;
    int i, rc;

    rc = pvm__args(type, p, nitem, stride, &step);
    if (rc < 0 || nitem == 0)
        return rc;
    native = pvm__tsize[type].native;
    switch (b->enc) {
    case PVM__ENC_ALIEN:
        return -EBADMSG;
    case PVM__ENC_INPLACE:
        /* PVM keeps only dense arrays in place. */
        if (stride != 1)
            return -ENOTSUP;
        if (!temp)
            return pvm__buf_add_seg(b, p, (size_t)nitem * native, NULL);
        rc = pvm__buf_add_seg(b, NULL, (size_t)nitem * native, &out);
        if (rc == 0)
            memcpy(out, p, (size_t)nitem * native);
        return rc;
    case PVM__ENC_RAW:
        rc = pvm__buf_grow(b, (size_t)nitem * native, &out);
        if (rc < 0)
            return rc;
        if (stride == 1)
            memcpy(out, src, (size_t)nitem * native);
        else
            for (i = 0; i < nitem; i++)
                memcpy(out + (size_t)i * native, src + i * step, native);
        return 0;
    case PVM__ENC_XDR:
        break;
    }
    if (type == PVM_LONG || type == PVM_ULONG) {
        rc = pvm__xdr_long_fits(type, src, nitem, step);
        if (rc < 0)
            return rc;
    }
    nbytes = (size_t)nitem * pvm__tsize[type].xdr;
    if (type == PVM_BYTE)
        pad = -nbytes & 3;
    rc = pvm__buf_grow(b, nbytes + pad, &out);
    if (rc < 0)
        return rc;
    if (type == PVM_BYTE) {
        for (i = 0; i < nitem; i++)
            out[i] = src[i * step];
        memset(out + nbytes, 0, pad);
        return 0;
    }
    for (i = 0; i < nitem; i++)
        pvm__xdr_put(type, src + i * step, out + (size_t)i * pvm__tsize[type].xdr);
    return 0;
}

int
pvm__pack(struct pvm__buf *b, int type, const void *p, int nitem, int stride)
{
    return pvm__pack_any(b, type, p, nitem, stride, 0);
}

int
pvm__unpack(struct pvm__buf *b, int type, void *p, int nitem, int stride)
{
    unsigned char *dst = p;
    const unsigned char *in;
    size_t native, need, avail;
    ptrdiff_t step;
    int i, rc, xdr;

    rc = pvm__args(type, p, nitem, stride, &step);
    if (rc < 0 || nitem == 0)
        return rc;
    native = pvm__tsize[type].native;
    /* An alien body is opaque but for its bytes; InPlace ones never unpack. */
    if (b->enc == PVM__ENC_INPLACE || (b->enc == PVM__ENC_ALIEN && type != PVM_BYTE))
        return -EBADMSG;
    xdr = b->enc == PVM__ENC_XDR;
    need = (size_t)nitem * (xdr ? pvm__tsize[type].xdr : native);
    avail = b->len - b->pos;
    if (need > avail)
        return -ENODATA;
    in = b->data + b->pos;
    if (!xdr || type == PVM_BYTE) {
        if (stride == 1)
            memcpy(dst, in, need);
        else
            for (i = 0; i < nitem; i++)
                memcpy(dst + i * step, in + (size_t)i * native, native);
        b->pos += need;
        /* XDR bytes end on a 4-byte boundary; a short body ends early. */
        if (xdr)
            b->pos = b->len - b->pos < (-need & 3) ? b->len : b->pos + (-need & 3);
        return 0;
    }
    for (i = 0; i < nitem; i++)
        pvm__xdr_get(type, in + (size_t)i * pvm__tsize[type].xdr, dst + i * step);
    b->pos += need;
    return 0;
}

const void *
pvm__upk_view(size_t n)
{
    struct pvm__buf *b = pvm__ctx.rbuf;
    const unsigned char *p;

    if (b == NULL || b->enc != PVM__ENC_RAW || n > b->len - b->pos)
        return NULL;
    p = b->data + b->pos;
    if ((uintptr_t)p % 8 != 0)
        return NULL;
    b->pos += n;
    return p;
}

int
pvm__pack_str(struct pvm__buf *b, const char *s)
{
    struct pvm__mark m;
    size_t n;
    int len, rc;

    if (s == NULL)
        return -EINVAL;
    /* PVM documents PvmNotImpl: a string has no fixed size to refer to. */
    if (b->enc == PVM__ENC_INPLACE)
        return -ENOTSUP;
    n = strlen(s) + 1;
    if (n > INT_MAX)
        return -EMSGSIZE;
    len = (int)n;
    pvm__save(b, &m);
    rc = pvm__pack_any(b, PVM_INT, &len, 1, 1, 1);
    if (rc == 0)
        rc = pvm__pack_any(b, PVM_BYTE, s, len, 1, 1);
    if (rc < 0)
        pvm__rewind(b, &m);
    return rc;
}

/*
 * A string as pvm_pkstr packs it: an int length that counts the NUL, then
 * the bytes.  cap is the caller's buffer when the API tells it (pvm_unpackf's
 * "%Ns"), else -1 (pvm_upkstr): PVM's contract is then only that the buffer
 * holds what was packed.  What is written is always terminated.  A sender
 * that packed a length without the NUL (never pvm_pkstr; a raw or hostile
 * one) gets its last byte replaced by the NUL when cap is unknown, so not
 * one byte beyond the packed length is written; with a known cap the NUL
 * follows the bytes if it fits.  A string that does not fit a known cap is
 * refused with -ENODATA (PvmNoData) and leaves "" (or nothing, cap 0).
 */
int
pvm__unpack_str_cap(struct pvm__buf *b, char *s, int cap)
{
    struct pvm__mark m;
    int len, rc;

    if (s == NULL || cap == 0)
        return s == NULL ? -EINVAL : -ENODATA;
    pvm__save(b, &m);
    rc = pvm__unpack(b, PVM_INT, &len, 1, 1);
    if (rc == 0 && len < 0)
        rc = -EBADMSG;
    if (rc == 0 && cap > 0 && len > cap)
        rc = -ENODATA;
    if (rc == 0 && len == 0)
        s[0] = '\0';
    else if (rc == 0)
        rc = pvm__unpack(b, PVM_BYTE, s, len, 1);
    if (rc == 0 && len > 0 && s[len - 1] != '\0') {
        if (cap < 0)
            s[len - 1] = '\0';
        else if (len < cap)
            s[len] = '\0';
        else
            rc = -ENODATA;
    }
    if (rc < 0) {
        if (rc == -ENODATA && cap > 0)
            s[0] = '\0';
        pvm__rewind(b, &m);
    }
    return rc;
}

int
pvm__unpack_str(struct pvm__buf *b, char *s)
{
    return pvm__unpack_str_cap(b, s, -1);
}

/* ---- pvm_pk* and pvm_upk* ---- */

static int
pvm__pk_active(int type, const void *p, int nitem, int stride)
{
    if (nitem < 0)
        return -EINVAL;
    if (pvm__ctx.sbuf == NULL)
        return PVM__ENOBUF;
    return pvm__pack(pvm__ctx.sbuf, type, p, nitem, stride);
}

static int
pvm__upk_active(int type, void *p, int nitem, int stride)
{
    if (nitem < 0)
        return -EINVAL;
    if (pvm__ctx.rbuf == NULL)
        return PVM__ENOBUF;
    return pvm__unpack(pvm__ctx.rbuf, type, p, nitem, stride);
}

#define PVM__PK(name, ctype, type)                                            \
    int                                                                       \
    pvm_pk##name(ctype *p, int nitem, int stride)                             \
    {                                                                         \
        return pvm__err(pvm__pk_active(type, p, nitem, stride), "pvm_pk" #name); \
    }                                                                         \
    int                                                                       \
    pvm_upk##name(ctype *p, int nitem, int stride)                            \
    {                                                                         \
        return pvm__err(pvm__upk_active(type, p, nitem, stride), "pvm_upk" #name); \
    }

PVM__PK(byte, char, PVM_BYTE)
PVM__PK(cplx, float, PVM_CPLX)
PVM__PK(dcplx, double, PVM_DCPLX)
PVM__PK(double, double, PVM_DOUBLE)
PVM__PK(float, float, PVM_FLOAT)
PVM__PK(int, int, PVM_INT)
PVM__PK(uint, unsigned int, PVM_UINT)
PVM__PK(long, long, PVM_LONG)
PVM__PK(ulong, unsigned long, PVM_ULONG)
PVM__PK(short, short, PVM_SHORT)
PVM__PK(ushort, unsigned short, PVM_USHORT)

int
pvm_pkstr(char *sp)
{
    int rc = pvm__ctx.sbuf == NULL ? PVM__ENOBUF : pvm__pack_str(pvm__ctx.sbuf, sp);

    return pvm__err(rc, "pvm_pkstr");
}

int
pvm_upkstr(char *sp)
{
    int rc = pvm__ctx.rbuf == NULL ? PVM__ENOBUF : pvm__unpack_str(pvm__ctx.rbuf, sp);

    return pvm__err(rc, "pvm_upkstr");
}

/* ---- pvm_packf and pvm_unpackf ---- */

/*
 * One conversion of a packf format:
 *   '%' [count] ['.' stride] {h|l|u} fchar
 * count and stride are digits or '*' (taken from the arguments); either
 * one makes the argument an address, else it is a value.  fchar is c, d,
 * f, x (complex, always an address) or s.
 */
struct pvm__conv {
    int cnt;
    int std;
    int isv;
    int h, l, u;
    char fchar;
};

/* Digits at *pp as a count; -EINVAL if it does not fit an int. */
static int
pvm__fmt_num(const char **pp, int *out)
{
    const char *p = *pp;
    long v = 0;

    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p++ - '0');
        if (v > INT_MAX)
            return -EINVAL;
    }
    *pp = p;
    *out = (int)v;
    return 0;
}

/* Parse the conversion after a '%'; takes '*' counts from ap. */
static int
pvm__fmt_conv(const char **pp, va_list *ap, struct pvm__conv *c)
{
    const char *p = *pp;

    c->cnt = 1;
    c->std = 1;
    c->isv = 1;
    c->h = c->l = c->u = 0;
    if (*p == '*') {
        c->cnt = va_arg(*ap, int);
        c->isv = 0;
        p++;
    } else if (isdigit((unsigned char)*p)) {
        if (pvm__fmt_num(&p, &c->cnt) < 0)
            return -EINVAL;
        c->isv = 0;
    }
    if (*p == '.') {
        c->isv = 0;
        p++;
        if (*p == '*') {
            c->std = va_arg(*ap, int);
            p++;
        } else if (pvm__fmt_num(&p, &c->std) < 0) {
            return -EINVAL;
        }
    }
    for (;; p++) {
        if (*p == 'h')
            c->h = 1;
        else if (*p == 'l')
            c->l = 1;
        else if (*p == 'u')
            c->u = 1;
        else
            break;
    }
    c->fchar = *p;
    if (*p != '\0')
        p++;
    *pp = p;
    return 0;
}

/* The PVM_* type of a 'd' conversion. */
static int
pvm__conv_int_type(const struct pvm__conv *c)
{
    if (c->l)
        return c->u ? PVM_ULONG : PVM_LONG;
    if (c->h)
        return c->u ? PVM_USHORT : PVM_SHORT;
    return c->u ? PVM_UINT : PVM_INT;
}

/* Pack one conversion's argument(s) into b. */
static int
pvm__packf_one(struct pvm__buf *b, const struct pvm__conv *c, va_list *ap)
{
    int type;

    switch (c->fchar) {
    case 'c':
        if (c->isv) {
            char v = (char)va_arg(*ap, int);

            return pvm__pack_any(b, PVM_BYTE, &v, 1, 1, 1);
        }
        return pvm__pack(b, PVM_BYTE, va_arg(*ap, char *), c->cnt, c->std);
    case 'd':
        type = pvm__conv_int_type(c);
        if (!c->isv)
            return pvm__pack(b, type, va_arg(*ap, void *), c->cnt, c->std);
        switch (type) {
        case PVM_LONG: {
            long v = va_arg(*ap, long);

            return pvm__pack_any(b, type, &v, 1, 1, 1);
        }
        case PVM_ULONG: {
            unsigned long v = va_arg(*ap, unsigned long);

            return pvm__pack_any(b, type, &v, 1, 1, 1);
        }
        case PVM_SHORT:
        case PVM_USHORT: {
            /* Promoted to int on the way in. */
            short v = (short)va_arg(*ap, int);

            return pvm__pack_any(b, type, &v, 1, 1, 1);
        }
        default: {
            int v = va_arg(*ap, int);

            return pvm__pack_any(b, type, &v, 1, 1, 1);
        }
        }
    case 'f':
        if (!c->isv)
            return pvm__pack(b, c->l ? PVM_DOUBLE : PVM_FLOAT, va_arg(*ap, void *), c->cnt,
                             c->std);
        if (c->l) {
            double v = va_arg(*ap, double);

            return pvm__pack_any(b, PVM_DOUBLE, &v, 1, 1, 1);
        } else {
            /* A float argument arrives as a double. */
            float v = (float)va_arg(*ap, double);

            return pvm__pack_any(b, PVM_FLOAT, &v, 1, 1, 1);
        }
    case 'x':
        return pvm__pack(b, c->l ? PVM_DCPLX : PVM_CPLX, va_arg(*ap, void *), c->cnt, c->std);
    case 's':
        return pvm__pack_str(b, va_arg(*ap, char *));
    default:
        return -EINVAL;
    }
}

/* Unpack one conversion into the address(es) it names. */
static int
pvm__unpackf_one(struct pvm__buf *b, const struct pvm__conv *c, va_list *ap)
{
    switch (c->fchar) {
    case 'c':
        return pvm__unpack(b, PVM_BYTE, va_arg(*ap, char *), c->cnt, c->std);
    case 'd':
        return pvm__unpack(b, pvm__conv_int_type(c), va_arg(*ap, void *), c->cnt, c->std);
    case 'f':
        return pvm__unpack(b, c->l ? PVM_DOUBLE : PVM_FLOAT, va_arg(*ap, void *), c->cnt,
                           c->std);
    case 'x':
        return pvm__unpack(b, c->l ? PVM_DCPLX : PVM_CPLX, va_arg(*ap, void *), c->cnt,
                           c->std);
    case 's':
        /* "%Ns": the caller says its buffer holds N bytes. */
        return pvm__unpack_str_cap(b, va_arg(*ap, char *), c->isv ? -1 : c->cnt);
    default:
        return -EINVAL;
    }
}

static int
pvm__vpackf(const char *fmt, va_list *ap)
{
    const char *p = fmt;
    struct pvm__buf *b;
    struct pvm__conv c;
    struct pvm__mark m;
    int rc;

    if (fmt == NULL)
        return -EINVAL;
    /* "%+" first: pvm_initsend with the encoding from the arguments. */
    if (p[0] == '%' && p[1] == '+') {
        int enc = va_arg(*ap, int);

        rc = pvm__buf_new(enc, &b);
        if (rc < 0)
            return rc;
        if (pvm__ctx.sbuf != NULL)
            pvm__buf_free(pvm__ctx.sbuf);
        pvm__ctx.sbuf = b;
        p += 2;
    }
    if ((b = pvm__ctx.sbuf) == NULL)
        return PVM__ENOBUF;
    pvm__save(b, &m);
    while (*p != '\0') {
        if (*p++ != '%')
            continue;
        rc = pvm__fmt_conv(&p, ap, &c);
        if (rc == 0 && c.fchar == 's' && b->enc == PVM__ENC_INPLACE)
            rc = -ENOTSUP;
        if (rc == 0)
            rc = pvm__packf_one(b, &c, ap);
        if (rc < 0) {
            pvm__rewind(b, &m);
            return rc;
        }
    }
    return 0;
}

static int
pvm__vunpackf(const char *fmt, va_list *ap)
{
    const char *p = fmt;
    struct pvm__buf *b;
    struct pvm__conv c;
    struct pvm__mark m;
    int rc;

    if (fmt == NULL)
        return -EINVAL;
    if ((b = pvm__ctx.rbuf) == NULL)
        return PVM__ENOBUF;
    pvm__save(b, &m);
    while (*p != '\0') {
        if (*p++ != '%')
            continue;
        rc = pvm__fmt_conv(&p, ap, &c);
        if (rc == 0)
            rc = pvm__unpackf_one(b, &c, ap);
        if (rc < 0) {
            pvm__rewind(b, &m);
            return rc;
        }
    }
    return 0;
}

int
pvm_vpackf(const char *fmt, va_list ap)
{
    va_list aq;
    int rc;

    va_copy(aq, ap);
    rc = pvm__vpackf(fmt, &aq);
    va_end(aq);
    return pvm__err(rc, "pvm_packf");
}

int
pvm_vunpackf(const char *fmt, va_list ap)
{
    va_list aq;
    int rc;

    va_copy(aq, ap);
    rc = pvm__vunpackf(fmt, &aq);
    va_end(aq);
    return pvm__err(rc, "pvm_unpackf");
}

int
pvm_packf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm__vpackf(fmt, &ap);
    va_end(ap);
    return pvm__err(rc, "pvm_packf");
}

int
pvm_unpackf(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = pvm__vunpackf(fmt, &ap);
    va_end(ap);
    return pvm__err(rc, "pvm_unpackf");
}

/* ---- messages inside messages ---- */

/* The buffer pvm_pkmesg and pvm_pkmesgbody include: checked as PVM does. */
static int
pvm__inner(int bufid, struct pvm__buf **out)
{
    struct pvm__buf *b;

    if (bufid <= 0)
        return -EINVAL;
    if ((b = pvm__buf_get(bufid)) == NULL)
        return PVM__ENOSUCHBUF;
    if (pvm__ctx.sbuf == NULL)
        return PVM__ENOBUF;
    if (b == pvm__ctx.sbuf)
        return -EINVAL;
    *out = b;
    return 0;
}

static int
pvm__pkmesg(int bufid)
{
    struct pvm__buf *in, *b;
    struct pvm__mark m;
    const unsigned char *body;
    size_t blen;
    int hdr[8], frag, rc;

    rc = pvm__inner(bufid, &in);
    if (rc < 0)
        return rc;
    rc = pvm__buf_flatten(in, &body, &blen);
    if (rc < 0)
        return rc;
    b = pvm__ctx.sbuf;
    hdr[0] = (int)blen;
    hdr[1] = in->ctx;
    hdr[2] = in->tag;
    hdr[3] = in->wid;
    hdr[4] = pvm__buf_encword(in);
    hdr[5] = in->crc;
    hdr[6] = in->src;
    hdr[7] = in->dst;
    frag = (int)blen;
    pvm__save(b, &m);
    rc = pvm__pack_any(b, PVM_INT, hdr, 8, 1, 1);
    if (rc == 0 && blen > 0)
        rc = pvm__pack_any(b, PVM_INT, &frag, 1, 1, 1);
    if (rc == 0 && blen > 0)
        rc = pvm__pack_any(b, PVM_BYTE, body, frag, 1, 1);
    if (rc < 0)
        pvm__rewind(b, &m);
    return rc;
}

int
pvm_pkmesg(int bufid)
{
    return pvm__err(pvm__pkmesg(bufid), "pvm_pkmesg");
}

static int
pvm__pkmesgbody(int bufid)
{
    struct pvm__buf *in, *b;
    const unsigned char *body;
    unsigned char *out;
    size_t blen;
    int rc;

    rc = pvm__inner(bufid, &in);
    if (rc < 0)
        return rc;
    b = pvm__ctx.sbuf;
    /* The bodies are spliced as they are, so they must be encoded alike. */
    if (b->encword != in->encword)
        return PVM__EMISMATCH;
    rc = pvm__buf_flatten(in, &body, &blen);
    if (rc < 0 || blen == 0)
        return rc;
    if (b->enc == PVM__ENC_INPLACE)
        rc = pvm__buf_add_seg(b, NULL, blen, &out);
    else
        rc = pvm__buf_grow(b, blen, &out);
    if (rc == 0)
        memcpy(out, body, blen);
    return rc;
}

int
pvm_pkmesgbody(int bufid)
{
    return pvm__err(pvm__pkmesgbody(bufid), "pvm_pkmesgbody");
}

static int
pvm__upkmesg(void)
{
    struct pvm__buf *r = pvm__ctx.rbuf, *nb;
    struct pvm__mark m;
    struct pvmminfo mi;
    unsigned char *out;
    int hdr[8], left, frag, rc;

    if (r == NULL)
        return PVM__ENOBUF;
    pvm__save(r, &m);
    rc = pvm__unpack(r, PVM_INT, hdr, 8, 1);
    if (rc < 0)
        return rc;
    if (hdr[0] < 0) {
        pvm__rewind(r, &m);
        return -EBADMSG;
    }
    rc = pvm__buf_adopt(hdr[4], NULL, 0, 0, 0, &nb);
    if (rc < 0) {
        pvm__rewind(r, &m);
        return rc;
    }
    left = hdr[0];
    while (left > 0 && rc == 0) {
        rc = pvm__unpack(r, PVM_INT, &frag, 1, 1);
        /* Check the length against what is there before allocating it. */
        if (rc == 0 && (frag <= 0 || frag > left))
            rc = -EBADMSG;
        if (rc == 0 && (size_t)frag > r->len - r->pos)
            rc = -ENODATA;
        if (rc == 0)
            rc = pvm__buf_grow(nb, (size_t)frag, &out);
        if (rc == 0)
            rc = pvm__unpack(r, PVM_BYTE, out, frag, 1);
        if (rc == 0)
            left -= frag;
    }
    if (rc < 0) {
        pvm__buf_free(nb);
        pvm__rewind(r, &m);
        return rc;
    }
    mi.ctx = hdr[1];
    mi.tag = hdr[2];
    mi.wid = hdr[3];
    mi.crc = hdr[5];
    mi.src = hdr[6];
    mi.dst = hdr[7];
    pvm__buf_set_info(nb, &mi);
    return nb->id;
}

int
pvm_upkmesg(void)
{
    return pvm__err(pvm__upkmesg(), "pvm_upkmesg");
}
