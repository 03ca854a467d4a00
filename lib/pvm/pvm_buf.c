/*
 * pvm_buf.c - message buffers: the table of buffer ids, the active send and
 * receive buffers, and pvm_mkbuf, pvm_freebuf, pvm_initsend, pvm_[gs]etsbuf,
 * pvm_[gs]etrbuf, pvm_bufinfo, pvm_[gs]etminfo with PVM 3.4's semantics and
 * error codes (their man pages).  Also the primitives the packing code and
 * the send and receive paths share: growing a body, InPlace segments,
 * flattening, and buffers made from received bytes.  The buffer table
 * is the library context's only owned memory that a reset must free, so
 * pvm__ctx_reset lives here too.
 *
 * A buffer is either being packed or being unpacked, as in PVM: making it
 * the receive buffer rewinds it unless it already was one, making it the
 * send buffer packs at its end, and no buffer is both at once.
 */
#include "pvm_int.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pvm__buf *
pvm__buf_get(int id)
{
    if (id <= 0 || id >= pvm__ctx.nbufs)
        return NULL;
    return pvm__ctx.bufs[id];
}

/* The lowest free id, growing the table if it is full. */
static int
pvm__buf_slot(void)
{
    struct pvm__buf **nb;
    int i, n;

    for (i = 1; i < pvm__ctx.nbufs; i++)
        if (pvm__ctx.bufs[i] == NULL)
            return i;
    if (pvm__ctx.nbufs >= INT_MAX / 2)
        return -ENOMEM;
    n = pvm__ctx.nbufs ? pvm__ctx.nbufs * 2 : 16;
    nb = pvm__realloc(pvm__ctx.bufs, (size_t)n * sizeof *nb);
    if (nb == NULL)
        return -ENOMEM;
    memset(nb + pvm__ctx.nbufs, 0, (size_t)(n - pvm__ctx.nbufs) * sizeof *nb);
    i = pvm__ctx.nbufs ? pvm__ctx.nbufs : 1;
    pvm__ctx.bufs = nb;
    pvm__ctx.nbufs = n;
    return i;
}

/* Allocate and register an empty buffer of encoding enc (word encword). */
static int
pvm__buf_make(enum pvm__enc enc, int encword, struct pvm__buf **out)
{
    struct pvm__buf *b;
    int id;

    id = pvm__buf_slot();
    if (id < 0)
        return id;
    b = pvm__calloc(1, sizeof *b);
    if (b == NULL)
        return -ENOMEM;
    b->id = id;
    b->enc = enc;
    b->encword = encword;
    b->src = pvm__ctx.mytid;
    pvm__ctx.bufs[id] = b;
    *out = b;
    return 0;
}

enum pvm__enc
pvm__enc_of_word(int encword)
{
    if (encword == PVM__ENCWORD_XDR)
        return PVM__ENC_XDR;
    if (encword == pvm__dsig())
        return PVM__ENC_RAW;
    return PVM__ENC_ALIEN;
}

int
pvm__buf_new(int encoding, struct pvm__buf **out)
{
    switch (encoding) {
    case PvmDataDefault:
        return pvm__buf_make(PVM__ENC_XDR, PVM__ENCWORD_XDR, out);
    case PvmDataRaw:
        return pvm__buf_make(PVM__ENC_RAW, pvm__dsig(), out);
    case PvmDataInPlace:
        return pvm__buf_make(PVM__ENC_INPLACE, PVM__ENCWORD_INPLACE, out);
    case PvmDataTrace:
        /* PVM's tracer record format; no LiquidVM tool reads it. */
        return -ENOTSUP;
    default:
        return -EINVAL;
    }
}

void
pvm__buf_free(struct pvm__buf *b)
{
    if (pvm__ctx.sbuf == b)
        pvm__ctx.sbuf = NULL;
    if (pvm__ctx.rbuf == b)
        pvm__ctx.rbuf = NULL;
    if (pvm__buf_get(b->id) == b)
        pvm__ctx.bufs[b->id] = NULL;
    free(b->flat);
    free(b->segs);
    free(b->data);
    free(b);
}

void
pvm__ctx_reset(void)
{
    int i;

    for (i = 0; i < pvm__ctx.nbufs; i++)
        if (pvm__ctx.bufs[i] != NULL)
            pvm__buf_free(pvm__ctx.bufs[i]);
    free(pvm__ctx.bufs);
    free(pvm__ctx.noresets);
    pvm__ctx = pvm__ctx_init;
}

int
pvm__buf_adopt(int encword, unsigned char *data, size_t len, size_t cap, int copy,
               struct pvm__buf **out)
{
    struct pvm__buf *b;
    unsigned char *d = data;
    int rc;

    if (len > INT_MAX || len > cap || (len > 0 && data == NULL))
        return len > INT_MAX ? -EMSGSIZE : -EINVAL;
    if (copy) {
        d = NULL;
        cap = 0;
        if (len > 0) {
            d = pvm__malloc(len);
            if (d == NULL)
                return -ENOMEM;
            memcpy(d, data, len);
            cap = len;
        }
    }
    rc = pvm__buf_make(pvm__enc_of_word(encword), encword, &b);
    if (rc < 0) {
        /* Not taken: the caller still owns data. */
        if (copy)
            free(d);
        return rc;
    }
    b->data = d;
    b->len = len;
    b->cap = d != NULL ? cap : 0;
    *out = b;
    return 0;
}

void
pvm__buf_set_info(struct pvm__buf *b, const struct pvmminfo *mi)
{
    b->src = mi->src;
    b->dst = mi->dst;
    b->tag = mi->tag;
    b->ctx = mi->ctx;
    b->wid = mi->wid;
    b->crc = mi->crc;
}

int
pvm__buf_encword(const struct pvm__buf *b)
{
    /* Flattened InPlace bytes are our native layout. */
    return b->enc == PVM__ENC_INPLACE ? pvm__dsig() : b->encword;
}

size_t
pvm__buf_len(const struct pvm__buf *b)
{
    return b->enc == PVM__ENC_INPLACE ? b->seglen : b->len;
}

int
pvm__buf_grow(struct pvm__buf *b, size_t n, unsigned char **p)
{
    unsigned char *nd;
    size_t want, ncap;

    /* Lengths reach programs as int (pvm_bufinfo), so a body stops there. */
    if (n > (size_t)INT_MAX - b->len)
        return -EMSGSIZE;
    want = b->len + n;
    if (want > b->cap) {
        ncap = b->cap > 0 ? b->cap : 64;
        while (ncap < want)
            ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
        nd = pvm__realloc(b->data, ncap);
        if (nd == NULL)
            return -ENOMEM;
        b->data = nd;
        b->cap = ncap;
    }
    *p = b->data + b->len;
    b->len = want;
    return 0;
}

int
pvm__buf_add_seg(struct pvm__buf *b, const void *ref, size_t n, unsigned char **owned)
{
    struct pvm__seg *ns;
    size_t ncap, off = b->len;
    int rc;

    if (n > (size_t)INT_MAX - b->seglen)
        return -EMSGSIZE;
    if (b->nsegs == b->segcap) {
        ncap = b->segcap ? b->segcap * 2 : 8;
        ns = pvm__realloc(b->segs, ncap * sizeof *ns);
        if (ns == NULL)
            return -ENOMEM;
        b->segs = ns;
        b->segcap = ncap;
    }
    if (ref == NULL) {
        rc = pvm__buf_grow(b, n, owned);
        if (rc < 0)
            return rc;
    }
    b->segs[b->nsegs].ref = ref;
    b->segs[b->nsegs].off = off;
    b->segs[b->nsegs].len = n;
    b->nsegs++;
    b->seglen += n;
    return 0;
}

int
pvm__buf_flatten(struct pvm__buf *b, const unsigned char **p, size_t *len)
{
    unsigned char *f;
    size_t i, at = 0;

    if (b->enc != PVM__ENC_INPLACE) {
        *p = b->data;
        *len = b->len;
        return 0;
    }
    /* One array packed by reference is its own flat form: every caller
     * consumes the bytes before it returns (a send writes them out, a
     * pack copies them), so they are read at send time without a copy. */
    if (b->nsegs == 1 && b->segs[0].ref != NULL) {
        *p = b->segs[0].ref;
        *len = b->segs[0].len;
        return 0;
    }
    f = pvm__realloc(b->flat, b->seglen);
    if (f == NULL)
        return -ENOMEM;
    b->flat = f;
    for (i = 0; i < b->nsegs; i++) {
        const struct pvm__seg *s = &b->segs[i];

        memcpy(f + at, s->ref != NULL ? s->ref : b->data + s->off, s->len);
        at += s->len;
    }
    *p = f;
    *len = b->seglen;
    return 0;
}

/* ---- the API ---- */

int
pvm_mkbuf(int encoding)
{
    struct pvm__buf *b;
    int rc;

    rc = pvm__buf_new(encoding, &b);
    return pvm__err(rc < 0 ? rc : b->id, "pvm_mkbuf");
}

int
pvm_freebuf(int bufid)
{
    struct pvm__buf *b;
    int rc = 0;

    /*
     * Freeing buffer 0 succeeds quietly, as in PVM 3.4: 3.3 programs free
     * whatever pvm_setsbuf returned, which may be no buffer at all.
     */
    if (bufid < 0)
        rc = -EINVAL;
    else if (bufid > 0 && (b = pvm__buf_get(bufid)) == NULL)
        rc = PVM__ENOSUCHBUF;
    else if (bufid > 0)
        pvm__buf_free(b);
    return pvm__err(rc, "pvm_freebuf");
}

int
pvm_getsbuf(void)
{
    return pvm__ctx.sbuf != NULL ? pvm__ctx.sbuf->id : 0;
}

int
pvm_getrbuf(void)
{
    return pvm__ctx.rbuf != NULL ? pvm__ctx.rbuf->id : 0;
}

int
pvm_setsbuf(int bufid)
{
    struct pvm__buf *b = NULL;
    int old = pvm_getsbuf();

    if (bufid < 0)
        return pvm__err(-EINVAL, "pvm_setsbuf");
    if (bufid > 0 && (b = pvm__buf_get(bufid)) == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_setsbuf");
    if (b != NULL) {
        if (pvm__ctx.rbuf == b)
            pvm__ctx.rbuf = NULL;
        b->unpacking = 0;
    }
    pvm__ctx.sbuf = b;
    return old;
}

int
pvm_setrbuf(int bufid)
{
    struct pvm__buf *b = NULL;
    int old = pvm_getrbuf();

    if (bufid < 0)
        return pvm__err(-EINVAL, "pvm_setrbuf");
    if (bufid > 0 && (b = pvm__buf_get(bufid)) == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_setrbuf");
    if (b != NULL) {
        if (pvm__ctx.sbuf == b)
            pvm__ctx.sbuf = NULL;
        if (!b->unpacking) {
            b->unpacking = 1;
            b->pos = 0;
        }
    }
    pvm__ctx.rbuf = b;
    return old;
}

int
pvm_initsend(int encoding)
{
    struct pvm__buf *b;
    int rc;

    rc = pvm__buf_new(encoding, &b);
    if (rc < 0)
        return pvm__err(rc, "pvm_initsend");
    if (pvm__ctx.sbuf != NULL)
        pvm__buf_free(pvm__ctx.sbuf);
    pvm__ctx.sbuf = b;
    return b->id;
}

int
pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid)
{
    struct pvm__buf *b;

    if (bufid <= 0)
        return pvm__err(-EINVAL, "pvm_bufinfo");
    if ((b = pvm__buf_get(bufid)) == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_bufinfo");
    if (bytes != NULL)
        *bytes = (int)pvm__buf_len(b);
    if (msgtag != NULL)
        *msgtag = b->tag;
    if (tid != NULL)
        *tid = b->src;
    return PvmOk;
}

int
pvm_getminfo(int bufid, struct pvmminfo *info)
{
    struct pvm__buf *b;

    if (bufid <= 0 || info == NULL)
        return pvm__err(-EINVAL, "pvm_getminfo");
    if ((b = pvm__buf_get(bufid)) == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_getminfo");
    info->len = (int)pvm__buf_len(b);
    info->ctx = b->ctx;
    info->tag = b->tag;
    info->wid = b->wid;
    info->enc = b->encword;
    info->crc = b->crc;
    info->src = b->src;
    info->dst = b->dst;
    return PvmOk;
}

int
pvm_setminfo(int bufid, struct pvmminfo *info)
{
    struct pvm__buf *b;

    if (bufid <= 0 || info == NULL)
        return pvm__err(-EINVAL, "pvm_setminfo");
    if ((b = pvm__buf_get(bufid)) == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_setminfo");
    /* len, enc and crc describe the body and stay the buffer's own. */
    b->ctx = info->ctx;
    b->tag = info->tag;
    b->wid = info->wid;
    b->src = info->src;
    b->dst = info->dst;
    return PvmOk;
}
