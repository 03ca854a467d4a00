/*
 * fuzz_wire_rx.c - libFuzzer harness for the frame reader (lib/wire/wire_rx.c)
 * and the control-body readers (wire_rbuf, lib/wire/wire_frame.c).
 *
 * The input is a byte stream as a socket would deliver it.  Its first
 * byte picks how it is cut into reads (1 to 256 bytes at a time, through
 * wire_rx_append or wire_rx_reserve + wire_rx_commit as a libuv alloc_cb
 * does), the rest is the stream.  Every complete frame's body is then read
 * as u8/u32/u64/str fields until a get fails, as the daemon's handlers do.
 * A crash, a leak, a read outside the buffer or a body longer than the
 * header said is a finding.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
read_body(const struct wire_hdr *h, const unsigned char *body)
{
    struct wire_rbuf r;
    char s[WIRE_STR_MAX + 1];
    uint8_t u8;
    uint32_t u32;
    uint64_t u64;
    unsigned k = h->tag;

    wire_rbuf_init(&r, body, h->len);
    /* The tag's bits choose the field types, as a handler's fixed layout would. */
    for (int i = 0; i < 64; i++, k = k >> 2 | k << 30) {
        int rc;
        switch (k & 3) {
        case 0: rc = wire_get_u8(&r, &u8); break;
        case 1: rc = wire_get_u32(&r, &u32); break;
        case 2: rc = wire_get_u64(&r, &u64); break;
        default: rc = wire_get_str(&r, s, sizeof(s)); break;
        }
        if (rc != 0)
            break;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wire_rx rx;
    struct wire_hdr h;
    const unsigned char *body;

    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] & 0x7f) + 1;
    int reserve = data[0] & 0x80;
    data++, size--;
    /* A small cap, so oversized announcements are exercised too. */
    wire_rx_init(&rx, 1 << 16);
    for (size_t off = 0; off < size;) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (reserve) {
            void *p;
            size_t avail;
            if (wire_rx_reserve(&rx, n, &p, &avail) != 0)
                break;
            if (avail < n)
                n = avail;
            memcpy(p, data + off, n);
            wire_rx_commit(&rx, n);
        } else if (wire_rx_append(&rx, data + off, n) != 0) {
            break;
        }
        off += n;
        int rc;
        while ((rc = wire_rx_next(&rx, &h, &body)) == 1) {
            if (h.len > (1u << 16))
                abort();        /* the reader's cap was not kept */
            read_body(&h, body);
        }
        if (rc < 0)
            break;              /* the link would be closed */
    }
    wire_rx_free(&rx);
    return 0;
}
