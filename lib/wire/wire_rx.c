/*
 * wire_rx.c - frame assembly from a byte stream (wire.h).
 *
 * The buffer grows only to hold the frame being assembled: the header is
 * checked against max_body first, so a peer announcing a huge frame costs
 * nothing but the closing of its link.
 */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
wire_rx_init(struct wire_rx *rx, uint32_t max_body)
{
    memset(rx, 0, sizeof(*rx));
    rx->max_body = max_body;
}

void
wire_rx_free(struct wire_rx *rx)
{
    free(rx->buf);
    rx->buf = NULL;
    rx->off = rx->len = rx->cap = 0;
}

int
wire_rx_reserve(struct wire_rx *rx, size_t want, void **p, size_t *avail)
{
    /* Move unconsumed bytes to the front before growing. */
    if (rx->off > 0) {
        memmove(rx->buf, rx->buf + rx->off, rx->len - rx->off);
        rx->len -= rx->off;
        rx->off = 0;
    }
    /* Doubling the capacity must not wrap around. */
    if (want > SIZE_MAX / 2 - rx->len)
        return -ENOMEM;
    if (rx->cap - rx->len < want) {
        size_t cap = rx->cap ? rx->cap : 4096;
        while (cap - rx->len < want)
            cap *= 2;
        unsigned char *nb = realloc(rx->buf, cap);
        if (nb == NULL)
            return -ENOMEM;
        rx->buf = nb;
        rx->cap = cap;
    }
    *p = rx->buf + rx->len;
    *avail = rx->cap - rx->len;
    return 0;
}

size_t
wire_rx_want(const struct wire_rx *rx)
{
    size_t have = rx->len - rx->off;
    struct wire_hdr h;

    if (have < WIRE_HDR_LEN)
        return WIRE_HDR_LEN - have;
    /* A bad header is wire_rx_next's to report; nothing is reserved for it. */
    if (wire_hdr_unpack(rx->buf + rx->off, rx->max_body, &h) != 0)
        return 0;
    return have - WIRE_HDR_LEN < h.len ? WIRE_HDR_LEN + h.len - have : 0;
}

void
wire_rx_commit(struct wire_rx *rx, size_t n)
{
    rx->len += n;
}

int
wire_rx_append(struct wire_rx *rx, const void *data, size_t n)
{
    void *p;
    size_t avail;
    /* Nothing to copy, and the buffer may not exist yet (memcpy to NULL). */
    if (n == 0)
        return 0;
    int rc = wire_rx_reserve(rx, n, &p, &avail);
    if (rc != 0)
        return rc;
    memcpy(p, data, n);
    wire_rx_commit(rx, n);
    return 0;
}

int
wire_rx_next(struct wire_rx *rx, struct wire_hdr *h, const unsigned char **body)
{
    size_t have = rx->len - rx->off;
    if (have < WIRE_HDR_LEN)
        return 0;
    int rc = wire_hdr_unpack(rx->buf + rx->off, rx->max_body, h);
    if (rc != 0)
        return rc;
    if (have - WIRE_HDR_LEN < h->len)
        return 0;
    *body = rx->buf + rx->off + WIRE_HDR_LEN;
    rx->off += WIRE_HDR_LEN + h->len;
    if (rx->off == rx->len)
        rx->off = rx->len = 0;
    return 1;
}
