/*
 * wire_frame.c - frame headers and bounded body codecs (wire.h).
 *
 * Everything here reads bytes that came from another process, so every read
 * is checked against the bytes present and against the caller's limit before
 * anything is allocated (relayd's IMSG_SIZE_CHECK).
 */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
wire_hdr_pack(const struct wire_hdr *h, unsigned char *out)
{
    out[0] = WIRE_MAGIC >> 8;
    out[1] = WIRE_MAGIC & 0xff;
    out[2] = WIRE_VERSION;
    out[3] = h->type;
    wire_be32_put(out + 4, h->len);
    wire_be32_put(out + 8, h->src);
    wire_be32_put(out + 12, h->dst);
    wire_be32_put(out + 16, (uint32_t)h->tag);
    wire_be32_put(out + 20, (uint32_t)h->ctx);
    wire_be32_put(out + 24, h->id);
    wire_be32_put(out + 28, h->flags);
}

int
wire_hdr_unpack(const unsigned char *in, uint32_t max_body, struct wire_hdr *h)
{
    if (((unsigned)in[0] << 8 | in[1]) != WIRE_MAGIC)
        return WIRE_EFRAME;
    h->version = in[2];
    if (h->version != WIRE_VERSION)
        return WIRE_EVERSION;
    h->type = in[3];
    h->len = wire_be32_get(in + 4);
    h->src = wire_be32_get(in + 8);
    h->dst = wire_be32_get(in + 12);
    h->tag = (int32_t)wire_be32_get(in + 16);
    h->ctx = (int32_t)wire_be32_get(in + 20);
    h->id = wire_be32_get(in + 24);
    h->flags = wire_be32_get(in + 28);
    if (h->type == 0)
        return WIRE_EFRAME;
    if (h->len > max_body)
        return -EMSGSIZE;
    return 0;
}

void
wire_wbuf_init(struct wire_wbuf *b)
{
    memset(b, 0, sizeof(*b));
}

void
wire_wbuf_free(struct wire_wbuf *b)
{
    free(b->data);
    wire_wbuf_init(b);
}

static unsigned char *
wbuf_grow(struct wire_wbuf *b, size_t n)
{
    if (b->err)
        return NULL;
    if (n > SIZE_MAX - b->len) {
        b->err = -ENOMEM;
        return NULL;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        unsigned char *p = realloc(b->data, cap);
        if (p == NULL) {
            b->err = -ENOMEM;
            return NULL;
        }
        b->data = p;
        b->cap = cap;
    }
    unsigned char *at = b->data + b->len;
    b->len += n;
    return at;
}

void
wire_wbuf_begin_frame(struct wire_wbuf *b)
{
    unsigned char *p = wbuf_grow(b, WIRE_HDR_LEN);
    if (p)
        memset(p, 0, WIRE_HDR_LEN);
}

int
wire_wbuf_finish(struct wire_wbuf *b, struct wire_hdr *h)
{
    if (b->err)
        return b->err;
    if (b->len < WIRE_HDR_LEN || b->len - WIRE_HDR_LEN > UINT32_MAX)
        return -EMSGSIZE;
    h->len = (uint32_t)(b->len - WIRE_HDR_LEN);
    wire_hdr_pack(h, b->data);
    return 0;
}

void
wire_put_u8(struct wire_wbuf *b, uint8_t v)
{
    unsigned char *p = wbuf_grow(b, 1);
    if (p)
        *p = v;
}

void
wire_put_u32(struct wire_wbuf *b, uint32_t v)
{
    unsigned char *p = wbuf_grow(b, 4);
    if (p)
        wire_be32_put(p, v);
}

void
wire_put_i32(struct wire_wbuf *b, int32_t v)
{
    wire_put_u32(b, (uint32_t)v);
}

void
wire_put_u64(struct wire_wbuf *b, uint64_t v)
{
    wire_put_u32(b, (uint32_t)(v >> 32));
    wire_put_u32(b, (uint32_t)v);
}

void
wire_put_double(struct wire_wbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    wire_put_u64(b, u);
}

void
wire_put_bytes(struct wire_wbuf *b, const void *p, size_t n)
{
    unsigned char *at = wbuf_grow(b, n);
    if (at && n)
        memcpy(at, p, n);
}

void
wire_put_str(struct wire_wbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) {
        b->err = -EMSGSIZE;
        return;
    }
    wire_put_u32(b, (uint32_t)n);
    wire_put_bytes(b, s, n);
}

void
wire_rbuf_init(struct wire_rbuf *r, const void *data, size_t len)
{
    r->data = data;
    r->len = len;
    r->pos = 0;
}

int
wire_get_bytes(struct wire_rbuf *r, const void **p, size_t n)
{
    if (n > r->len - r->pos)
        return WIRE_EFRAME;
    *p = r->data + r->pos;
    r->pos += n;
    return 0;
}

int
wire_get_u8(struct wire_rbuf *r, uint8_t *v)
{
    const void *p;
    int rc = wire_get_bytes(r, &p, 1);
    if (rc == 0)
        *v = *(const unsigned char *)p;
    return rc;
}

int
wire_get_u32(struct wire_rbuf *r, uint32_t *v)
{
    const void *p;
    int rc = wire_get_bytes(r, &p, 4);
    if (rc == 0)
        *v = wire_be32_get(p);
    return rc;
}

int
wire_get_i32(struct wire_rbuf *r, int32_t *v)
{
    uint32_t u;
    int rc = wire_get_u32(r, &u);
    if (rc == 0)
        *v = (int32_t)u;
    return rc;
}

int
wire_get_u64(struct wire_rbuf *r, uint64_t *v)
{
    uint32_t hi, lo;
    int rc;
    if ((rc = wire_get_u32(r, &hi)) != 0 || (rc = wire_get_u32(r, &lo)) != 0)
        return rc;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

int
wire_get_double(struct wire_rbuf *r, double *v)
{
    uint64_t u;
    int rc = wire_get_u64(r, &u);
    if (rc == 0)
        memcpy(v, &u, sizeof(*v));
    return rc;
}

int
wire_get_str(struct wire_rbuf *r, char *out, size_t cap)
{
    uint32_t n;
    const void *p;
    int rc;
    if ((rc = wire_get_u32(r, &n)) != 0)
        return rc;
    if (cap == 0 || n > cap - 1)
        return WIRE_EFRAME;
    if ((rc = wire_get_bytes(r, &p, n)) != 0)
        return rc;
    if (memchr(p, '\0', n) != NULL)
        return WIRE_EFRAME;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}
