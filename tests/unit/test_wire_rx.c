/*
 * test_wire_rx.c - lib/wire/wire_rx.c: assembling frames from a byte stream.
 *
 * Streams are built here from known frames (each body a pattern derived
 * from the frame's id), fed in every way a socket can deliver them -- split
 * at every byte, one byte at a time, all at once, through reserve/commit as
 * a libuv alloc_cb does, and in random chunks from a fixed-seed PRNG -- and
 * every frame must come out intact and in order.  Bad headers must be
 * refused as soon as their 32 bytes are present, before any room is made
 * for the body they announce.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* The impossible-reservation test asks for ~2^63 bytes; under ASan that must
 * come back as NULL rather than abort the process. */
const char *__asan_default_options(void);
__attribute__((used)) const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ---- helpers ---- */

/* xorshift64*: fixed seeds, so every failure reproduces. */
static uint64_t
rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

static uint32_t
rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rng_next(s) >> 32) % n;
}

static unsigned char
body_byte(uint32_t id, size_t i)
{
    return (unsigned char)(id * 131u + i * 7u + (i >> 8));
}

/* A growable byte string. */
struct stream {
    unsigned char *data;
    size_t len, cap;
};

static void
stream_add(struct stream *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < s->len + n)
            cap *= 2;
        s->data = realloc(s->data, cap);
        assert_non_null(s->data);
        s->cap = cap;
    }
    memcpy(s->data + s->len, p, n);
    s->len += n;
}

/* Append one frame with the given header fields and a patterned body. */
static void
stream_frame(struct stream *s, const struct wire_hdr *h)
{
    unsigned char hdr[WIRE_HDR_LEN];
    wire_hdr_pack(h, hdr);
    stream_add(s, hdr, sizeof(hdr));
    for (size_t i = 0; i < h->len; i++) {
        unsigned char c = body_byte(h->id, i);
        stream_add(s, &c, 1);
    }
}

static struct wire_hdr
frame_hdr(uint32_t id, uint32_t len)
{
    return (struct wire_hdr){
        .version = WIRE_VERSION,
        .type = (uint8_t)(1 + id % 255),
        .len = len,
        .src = 0x40000 * (id % 7),
        .dst = 0x80000 + id,
        .tag = -(int32_t)id,
        .ctx = (int32_t)(id * 3),
        .id = id,
        .flags = id ^ 0x5a5a,
    };
}

/* The receiver's side: what came out so far, checked against expectations. */
struct sink {
    const struct wire_hdr *want;    /* the frames expected, in order */
    size_t nwant;
    size_t got;
};

static void
check_frame(struct sink *k, const struct wire_hdr *h, const unsigned char *body)
{
    assert_true(k->got < k->nwant);
    const struct wire_hdr *w = &k->want[k->got];
    assert_int_equal(h->version, WIRE_VERSION);
    assert_int_equal(h->type, w->type);
    assert_int_equal(h->len, w->len);
    assert_int_equal(h->src, w->src);
    assert_int_equal(h->dst, w->dst);
    assert_int_equal(h->tag, w->tag);
    assert_int_equal(h->ctx, w->ctx);
    assert_int_equal(h->id, w->id);
    assert_int_equal(h->flags, w->flags);
    for (size_t i = 0; i < h->len; i++)
        if (body[i] != body_byte(w->id, i))
            fail_msg("frame %zu (id %u): body byte %zu is %u, expected %u", k->got, w->id, i,
                     body[i], body_byte(w->id, i));
    k->got++;
}

/* Take every complete frame; 0 when more bytes are needed. */
static int
drain(struct wire_rx *rx, struct sink *k)
{
    struct wire_hdr h;
    const unsigned char *body;
    int rc;
    while ((rc = wire_rx_next(rx, &h, &body)) == 1)
        check_frame(k, &h, body);
    return rc;
}

/* Bytes held for frames not yet handed out. */
static size_t
pending(const struct wire_rx *rx)
{
    return rx->len - rx->off;
}

/* Feed n bytes through reserve/commit, as a libuv read does. */
static void
feed_reserve(struct wire_rx *rx, const unsigned char *p, size_t n, size_t want)
{
    while (n > 0) {
        void *at;
        size_t avail;
        assert_int_equal(wire_rx_reserve(rx, want, &at, &avail), 0);
        assert_true(avail >= want);
        size_t take = n < avail ? n : avail;
        memcpy(at, p, take);
        wire_rx_commit(rx, take);
        p += take;
        n -= take;
    }
}

/* Frames of interesting sizes: empty, tiny, around the header size and the
 * buffer's first block of 4096. */
static const uint32_t mixed_lens[] = { 0, 1, 31, 32, 33, 0, 4063, 4064, 4065, 100, 5000 };
#define NMIXED (sizeof(mixed_lens) / sizeof(mixed_lens[0]))

static void
build_mixed(struct stream *s, struct wire_hdr *want)
{
    for (size_t i = 0; i < NMIXED; i++) {
        want[i] = frame_hdr((uint32_t)i + 1, mixed_lens[i]);
        stream_frame(s, &want[i]);
    }
}

/* ---- tests ---- */

static void
test_wire_rx_reassembles_frames_split_at_every_byte(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr want[3];

    (void)state;
    want[0] = frame_hdr(10, 0);
    want[1] = frame_hdr(11, 40);
    want[2] = frame_hdr(12, 4100);
    for (int i = 0; i < 3; i++)
        stream_frame(&s, &want[i]);

    for (size_t cut = 0; cut <= s.len; cut++) {
        struct wire_rx rx;
        struct sink k = { want, 3, 0 };
        wire_rx_init(&rx, 1u << 20);
        assert_int_equal(wire_rx_append(&rx, s.data, cut), 0);
        assert_int_equal(drain(&rx, &k), 0);
        /* Exactly the frames wholly before the cut came out. */
        size_t done = 0, end = 0;
        for (int i = 0; i < 3; i++) {
            end += WIRE_HDR_LEN + want[i].len;
            if (end <= cut)
                done++;
        }
        assert_int_equal(k.got, done);
        assert_int_equal(wire_rx_append(&rx, s.data + cut, s.len - cut), 0);
        assert_int_equal(drain(&rx, &k), 0);
        assert_int_equal(k.got, 3);
        assert_int_equal(pending(&rx), 0);
        wire_rx_free(&rx);
    }
    free(s.data);
}

static void
test_wire_rx_reassembles_mixed_sizes_split_at_every_byte(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr want[NMIXED];

    (void)state;
    build_mixed(&s, want);
    /* Two cuts: every first cut, with the second a prime stride further. */
    for (size_t cut = 0; cut <= s.len; cut++) {
        struct wire_rx rx;
        struct sink k = { want, NMIXED, 0 };
        size_t cut2 = cut + (cut * 7919) % (s.len - cut + 1);
        wire_rx_init(&rx, 1u << 20);
        assert_int_equal(wire_rx_append(&rx, s.data, cut), 0);
        assert_int_equal(drain(&rx, &k), 0);
        feed_reserve(&rx, s.data + cut, cut2 - cut, 1 + cut % 5000);
        assert_int_equal(drain(&rx, &k), 0);
        assert_int_equal(wire_rx_append(&rx, s.data + cut2, s.len - cut2), 0);
        assert_int_equal(drain(&rx, &k), 0);
        assert_int_equal(k.got, NMIXED);
        wire_rx_free(&rx);
    }
    free(s.data);
}

static void
test_wire_rx_delivers_many_frames_from_one_append(void **state)
{
    enum { N = 2000 };
    struct stream s = { 0 };
    struct wire_hdr *want = calloc(N, sizeof(*want));
    struct wire_rx rx;
    struct sink k = { want, N, 0 };

    (void)state;
    assert_non_null(want);
    for (uint32_t i = 0; i < N; i++) {
        want[i] = frame_hdr(i + 1, (i * 37) % 300);
        stream_frame(&s, &want[i]);
    }
    wire_rx_init(&rx, 1u << 20);
    assert_int_equal(wire_rx_append(&rx, s.data, s.len), 0);
    assert_int_equal(drain(&rx, &k), 0);
    assert_int_equal(k.got, N);
    assert_int_equal(pending(&rx), 0);
    /* Drained: the next call needs more bytes again. */
    struct wire_hdr h;
    const unsigned char *body;
    assert_int_equal(wire_rx_next(&rx, &h, &body), 0);
    wire_rx_free(&rx);
    free(want);
    free(s.data);
}

static void
test_wire_rx_reassembles_one_byte_at_a_time(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr want[NMIXED];
    struct wire_rx rx;
    struct sink k = { want, NMIXED, 0 };
    size_t frame_end = 0, f = 0;

    (void)state;
    build_mixed(&s, want);
    wire_rx_init(&rx, 1u << 20);
    frame_end = WIRE_HDR_LEN + want[0].len;
    for (size_t i = 0; i < s.len; i++) {
        struct wire_hdr h;
        const unsigned char *body;
        assert_int_equal(wire_rx_append(&rx, s.data + i, 1), 0);
        int rc = wire_rx_next(&rx, &h, &body);
        if (i + 1 < frame_end) {
            /* Not a byte early. */
            assert_int_equal(rc, 0);
            continue;
        }
        /* Exactly on the last byte of the frame. */
        assert_int_equal(rc, 1);
        check_frame(&k, &h, body);
        assert_int_equal(wire_rx_next(&rx, &h, &body), 0);
        if (++f < NMIXED)
            frame_end += WIRE_HDR_LEN + want[f].len;
    }
    assert_int_equal(k.got, NMIXED);
    wire_rx_free(&rx);
    free(s.data);
}

static void
test_wire_rx_refuses_oversized_header_before_body(void **state)
{
    static const uint32_t limit = 1u << 20;
    struct wire_hdr h = frame_hdr(1, limit + 1), got;
    unsigned char hdr[WIRE_HDR_LEN];
    const unsigned char *body;
    struct wire_rx rx;

    (void)state;
    wire_hdr_pack(&h, hdr);
    wire_rx_init(&rx, limit);
    for (size_t i = 0; i < WIRE_HDR_LEN - 1; i++) {
        assert_int_equal(wire_rx_append(&rx, hdr + i, 1), 0);
        assert_int_equal(wire_rx_next(&rx, &got, &body), 0);
    }
    size_t cap = rx.cap;
    assert_int_equal(wire_rx_append(&rx, hdr + WIRE_HDR_LEN - 1, 1), 0);
    /* The 32nd byte settles it; no byte of the body is needed. */
    assert_int_equal(wire_rx_next(&rx, &got, &body), -EMSGSIZE);
    assert_int_equal(rx.cap, cap);
    assert_true(rx.cap < WIRE_HDR_LEN + (size_t)limit);
    /* The refusal sticks: the stream is unusable. */
    assert_int_equal(wire_rx_next(&rx, &got, &body), -EMSGSIZE);
    assert_int_equal(rx.cap, cap);
    wire_rx_free(&rx);

    /* The largest possible announcement, against the largest limit below it. */
    h = frame_hdr(2, UINT32_MAX);
    wire_hdr_pack(&h, hdr);
    wire_rx_init(&rx, UINT32_MAX - 1);
    assert_int_equal(wire_rx_append(&rx, hdr, sizeof(hdr)), 0);
    cap = rx.cap;
    assert_int_equal(wire_rx_next(&rx, &got, &body), -EMSGSIZE);
    assert_int_equal(rx.cap, cap);
    wire_rx_free(&rx);
}

static void
test_wire_rx_never_reserves_room_for_an_announced_body(void **state)
{
    /* A legal header announcing 64 MiB, followed by a trickle: the buffer
     * grows with the bytes that arrive, never with the announcement. */
    static const uint32_t big = 64u << 20;
    struct wire_hdr h = frame_hdr(3, big), got;
    unsigned char hdr[WIRE_HDR_LEN], chunk[1000];
    const unsigned char *body;
    struct wire_rx rx;

    (void)state;
    wire_hdr_pack(&h, hdr);
    memset(chunk, 0, sizeof(chunk));
    wire_rx_init(&rx, big);
    assert_int_equal(wire_rx_append(&rx, hdr, sizeof(hdr)), 0);
    assert_int_equal(wire_rx_next(&rx, &got, &body), 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(wire_rx_append(&rx, chunk, sizeof(chunk)), 0);
        assert_int_equal(wire_rx_next(&rx, &got, &body), 0);
    }
    assert_true(rx.cap <= 2 * (WIRE_HDR_LEN + 10 * sizeof(chunk)) + 4096);
    wire_rx_free(&rx);
}

static void
test_wire_rx_refuses_bad_magic_in_second_frame(void **state)
{
    static const struct {
        int offset;             /* byte of the second header to change */
        unsigned char value;
        int want;
    } cases[] = {
        { 0, 0x00, WIRE_EFRAME },
        { 1, 0x57, WIRE_EFRAME },
        { 2, WIRE_VERSION + 1, WIRE_EVERSION },
        { 3, 0, WIRE_EFRAME },              /* type 0 */
        { 4, 0xff, -EMSGSIZE },             /* length 0xff000000 */
    };

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct stream s = { 0 };
        struct wire_hdr want[2] = { frame_hdr(1, 50), frame_hdr(2, 10) };
        struct wire_hdr h;
        const unsigned char *body;
        struct wire_rx rx;
        struct sink k = { want, 2, 0 };

        stream_frame(&s, &want[0]);
        stream_frame(&s, &want[1]);
        s.data[WIRE_HDR_LEN + 50 + cases[c].offset] = cases[c].value;
        wire_rx_init(&rx, 1u << 20);
        assert_int_equal(wire_rx_append(&rx, s.data, s.len), 0);
        /* The good frame comes out whole, then the bad header is refused. */
        assert_int_equal(wire_rx_next(&rx, &h, &body), 1);
        check_frame(&k, &h, body);
        assert_int_equal(wire_rx_next(&rx, &h, &body), cases[c].want);
        assert_int_equal(wire_rx_next(&rx, &h, &body), cases[c].want);
        wire_rx_free(&rx);

        /* Same, with the bad header arriving alone after the good frame. */
        wire_rx_init(&rx, 1u << 20);
        k.got = 0;
        assert_int_equal(wire_rx_append(&rx, s.data, WIRE_HDR_LEN + 50), 0);
        assert_int_equal(drain(&rx, &k), 0);
        assert_int_equal(k.got, 1);
        assert_int_equal(wire_rx_append(&rx, s.data + WIRE_HDR_LEN + 50, WIRE_HDR_LEN), 0);
        assert_int_equal(wire_rx_next(&rx, &h, &body), cases[c].want);
        wire_rx_free(&rx);
        free(s.data);
    }
}

static void
test_wire_rx_reserve_commit_keeps_partial_frames(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr want[3] = { frame_hdr(1, 10), frame_hdr(2, 9000), frame_hdr(3, 0) };
    struct wire_rx rx;
    struct sink k = { want, 3, 0 };
    void *p;
    size_t avail;

    (void)state;
    for (int i = 0; i < 3; i++)
        stream_frame(&s, &want[i]);
    wire_rx_init(&rx, 1u << 20);

    /* The first frame and 20 bytes of the second's header. */
    assert_int_equal(wire_rx_reserve(&rx, 1, &p, &avail), 0);
    assert_true(avail >= 1);
    assert_ptr_equal(p, rx.buf);
    memcpy(p, s.data, 42 + 20);
    wire_rx_commit(&rx, 42 + 20);
    assert_int_equal(drain(&rx, &k), 0);
    assert_int_equal(k.got, 1);
    assert_int_equal(pending(&rx), 20);

    /* Reserving moves the partial header to the front, unchanged. */
    assert_int_equal(wire_rx_reserve(&rx, 16, &p, &avail), 0);
    assert_int_equal(rx.off, 0);
    assert_int_equal(rx.len, 20);
    assert_memory_equal(rx.buf, s.data + 42, 20);
    assert_ptr_equal(p, rx.buf + 20);
    /* Committing nothing changes nothing. */
    wire_rx_commit(&rx, 0);
    assert_int_equal(drain(&rx, &k), 0);
    assert_int_equal(pending(&rx), 20);

    /* The rest of the second frame needs the buffer to grow; the bytes
     * already held must survive the move. */
    size_t off = 42 + 20, end2 = 42 + 32 + 9000;
    while (off < end2) {
        size_t want_n = 3000;
        assert_int_equal(wire_rx_reserve(&rx, want_n, &p, &avail), 0);
        assert_true(avail >= want_n);
        assert_ptr_equal(p, rx.buf + rx.len);
        size_t take = end2 - off < avail ? end2 - off : avail;
        memcpy(p, s.data + off, take);
        wire_rx_commit(&rx, take);
        off += take;
        assert_int_equal(drain(&rx, &k), 0);
    }
    assert_int_equal(k.got, 2);
    feed_reserve(&rx, s.data + end2, s.len - end2, 64);
    assert_int_equal(drain(&rx, &k), 0);
    assert_int_equal(k.got, 3);
    wire_rx_free(&rx);
    assert_null(rx.buf);
    free(s.data);
}

static void
test_wire_rx_reserve_refuses_impossible_size(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr want[1] = { frame_hdr(7, 20) };
    struct wire_rx rx;
    struct sink k = { want, 1, 0 };
    void *p = NULL;
    size_t avail = 0;

    (void)state;
    stream_frame(&s, &want[0]);
    wire_rx_init(&rx, 1u << 20);
    assert_int_equal(wire_rx_append(&rx, s.data, 30), 0);
    /* Sizes whose doubling would wrap must fail, not spin or shrink. */
    assert_int_equal(wire_rx_reserve(&rx, SIZE_MAX, &p, &avail), -ENOMEM);
    assert_int_equal(wire_rx_reserve(&rx, SIZE_MAX / 2 + 1, &p, &avail), -ENOMEM);
    assert_int_equal(wire_rx_reserve(&rx, SIZE_MAX / 2 - 10, &p, &avail), -ENOMEM);
    /* One that passes the size checks but that realloc cannot satisfy. */
    assert_int_equal(wire_rx_reserve(&rx, SIZE_MAX / 4, &p, &avail), -ENOMEM);
    /* And the buffer is still whole and usable. */
    assert_int_equal(pending(&rx), 30);
    assert_int_equal(wire_rx_append(&rx, s.data + 30, s.len - 30), 0);
    assert_int_equal(drain(&rx, &k), 0);
    assert_int_equal(k.got, 1);
    wire_rx_free(&rx);
    free(s.data);
}

static void
test_wire_rx_append_of_nothing_is_a_no_op(void **state)
{
    static const unsigned char byte = 0x4c;
    struct wire_hdr h;
    const unsigned char *body;
    struct wire_rx rx;

    (void)state;
    /* Before any buffer exists (no memcpy into NULL under UBSan) ... */
    wire_rx_init(&rx, 100);
    assert_int_equal(wire_rx_append(&rx, &byte, 0), 0);
    assert_int_equal(pending(&rx), 0);
    assert_int_equal(wire_rx_next(&rx, &h, &body), 0);
    /* ... and after. */
    assert_int_equal(wire_rx_append(&rx, &byte, 1), 0);
    assert_int_equal(wire_rx_append(&rx, &byte, 0), 0);
    assert_int_equal(pending(&rx), 1);
    assert_int_equal(rx.buf[0], 0x4c);
    wire_rx_free(&rx);
}

/*
 * Random valid frames, fed in random chunks through append and
 * reserve/commit, drained at random points: every frame comes out intact
 * and in order, and nothing is left over.
 */
static void
test_wire_rx_random_chunking_keeps_frames_intact_and_in_order(void **state)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;

    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        struct stream s = { 0 };
        uint32_t nframes = 1 + rng_below(&seed, 12);
        struct wire_hdr want[12];
        struct wire_rx rx;
        struct sink k = { want, nframes, 0 };

        for (uint32_t i = 0; i < nframes; i++) {
            uint32_t r = rng_below(&seed, 100), len;
            if (r < 50)
                len = rng_below(&seed, 64);
            else if (r < 90)
                len = rng_below(&seed, 5000);
            else
                len = rng_below(&seed, 20000);
            want[i] = frame_hdr((uint32_t)rng_next(&seed), len);
            want[i].src = (uint32_t)rng_next(&seed);
            want[i].tag = (int32_t)(uint32_t)rng_next(&seed);
            want[i].ctx = (int32_t)(uint32_t)rng_next(&seed);
            want[i].flags = (uint32_t)rng_next(&seed);
            stream_frame(&s, &want[i]);
        }
        wire_rx_init(&rx, 20000);
        size_t off = 0;
        while (off < s.len) {
            size_t n;
            switch (rng_below(&seed, 4)) {
            case 0: n = 1; break;
            case 1: n = 1 + rng_below(&seed, 40); break;
            case 2: n = 1 + rng_below(&seed, 3000); break;
            default: n = 1 + rng_below(&seed, 30000); break;
            }
            if (n > s.len - off)
                n = s.len - off;
            if (rng_below(&seed, 2))
                assert_int_equal(wire_rx_append(&rx, s.data + off, n), 0);
            else
                feed_reserve(&rx, s.data + off, n, 1 + rng_below(&seed, 8192));
            off += n;
            if (rng_below(&seed, 4) != 0)
                assert_int_equal(drain(&rx, &k), 0);
            assert_true(rx.off <= rx.len);
            assert_true(rx.len <= rx.cap);
        }
        assert_int_equal(drain(&rx, &k), 0);
        if (k.got != nframes)
            fail_msg("iteration %d: %zu of %u frames", iter, k.got, nframes);
        assert_int_equal(pending(&rx), 0);
        wire_rx_free(&rx);
        free(s.data);
    }
}

/*
 * Garbage: pure random bytes, and valid streams with random bytes changed.
 * Nothing may crash or read outside the buffer (run under the sanitizer
 * build); every frame handed out lies inside the bytes that were appended,
 * and once a header is refused the refusal is final.
 */
static void
test_wire_rx_random_garbage_never_crashes(void **state)
{
    uint64_t seed = 0xdeadbeefcafef00dULL;

    (void)state;
    for (int iter = 0; iter < 4000; iter++) {
        struct stream s = { 0 };
        struct wire_rx rx;
        uint32_t limit = 1 + rng_below(&seed, 9000);

        if (iter % 2 == 0) {
            size_t n = rng_below(&seed, 3000);
            for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)rng_next(&seed);
                stream_add(&s, &c, 1);
            }
        } else {
            uint32_t nframes = 1 + rng_below(&seed, 6);
            for (uint32_t i = 0; i < nframes; i++) {
                struct wire_hdr h = frame_hdr((uint32_t)rng_next(&seed), rng_below(&seed, 2000));
                stream_frame(&s, &h);
            }
            uint32_t flips = 1 + rng_below(&seed, 4);
            for (uint32_t i = 0; i < flips; i++)
                s.data[rng_below(&seed, (uint32_t)s.len)] = (unsigned char)rng_next(&seed);
        }

        wire_rx_init(&rx, limit);
        size_t off = 0, delivered = 0;
        int dead = 0;
        while (off < s.len && !dead) {
            size_t n = 1 + rng_below(&seed, 700);
            if (n > s.len - off)
                n = s.len - off;
            if (rng_below(&seed, 2))
                assert_int_equal(wire_rx_append(&rx, s.data + off, n), 0);
            else
                feed_reserve(&rx, s.data + off, n, 1 + rng_below(&seed, 2048));
            off += n;
            for (;;) {
                struct wire_hdr h;
                const unsigned char *body;
                int rc = wire_rx_next(&rx, &h, &body);
                if (rc == 0)
                    break;
                if (rc < 0) {
                    assert_true(rc == WIRE_EFRAME || rc == WIRE_EVERSION || rc == -EMSGSIZE);
                    struct wire_hdr h2;
                    assert_int_equal(wire_rx_next(&rx, &h2, &body), rc);
                    dead = 1;
                    break;
                }
                assert_int_equal(rc, 1);
                assert_true(h.type != 0);
                assert_true(h.len <= limit);
                /* The body lies inside what was appended and matches it. */
                delivered += WIRE_HDR_LEN;
                assert_true(delivered + h.len <= off);
                assert_memory_equal(body, s.data + delivered, h.len);
                delivered += h.len;
            }
        }
        wire_rx_free(&rx);
        free(s.data);
    }
}

/* wire_rx_want: the rest of the header, then of the body; nothing for a
 * whole frame, nor for a header that announces more than max_body. */
static void
test_wire_rx_want_counts_what_the_frame_still_lacks(void **state)
{
    struct stream s = { 0 };
    struct wire_hdr h = frame_hdr(7, 100000), big = frame_hdr(8, 5000);
    struct wire_rx rx;
    (void)state;

    stream_frame(&s, &h);
    wire_rx_init(&rx, 200000);
    assert_int_equal(wire_rx_want(&rx), WIRE_HDR_LEN);
    assert_int_equal(wire_rx_append(&rx, s.data, 10), 0);
    assert_int_equal(wire_rx_want(&rx), WIRE_HDR_LEN - 10);
    assert_int_equal(wire_rx_append(&rx, s.data + 10, WIRE_HDR_LEN - 10 + 1000), 0);
    assert_int_equal(wire_rx_want(&rx), 100000 - 1000);
    assert_int_equal(wire_rx_append(&rx, s.data + WIRE_HDR_LEN + 1000, 100000 - 1000), 0);
    assert_int_equal(wire_rx_want(&rx), 0);
    wire_rx_free(&rx);
    free(s.data);

    memset(&s, 0, sizeof(s));
    stream_frame(&s, &big);
    wire_rx_init(&rx, 4096);
    assert_int_equal(wire_rx_append(&rx, s.data, WIRE_HDR_LEN), 0);
    assert_int_equal(wire_rx_want(&rx), 0);
    wire_rx_free(&rx);
    free(s.data);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_rx_reassembles_frames_split_at_every_byte),
        cmocka_unit_test(test_wire_rx_reassembles_mixed_sizes_split_at_every_byte),
        cmocka_unit_test(test_wire_rx_delivers_many_frames_from_one_append),
        cmocka_unit_test(test_wire_rx_reassembles_one_byte_at_a_time),
        cmocka_unit_test(test_wire_rx_refuses_oversized_header_before_body),
        cmocka_unit_test(test_wire_rx_never_reserves_room_for_an_announced_body),
        cmocka_unit_test(test_wire_rx_refuses_bad_magic_in_second_frame),
        cmocka_unit_test(test_wire_rx_reserve_commit_keeps_partial_frames),
        cmocka_unit_test(test_wire_rx_reserve_refuses_impossible_size),
        cmocka_unit_test(test_wire_rx_append_of_nothing_is_a_no_op),
        cmocka_unit_test(test_wire_rx_random_chunking_keeps_frames_intact_and_in_order),
        cmocka_unit_test(test_wire_rx_random_garbage_never_crashes),
        cmocka_unit_test(test_wire_rx_want_counts_what_the_frame_still_lacks),
    };
    return cmocka_run_group_tests_name("wire_rx", tests, NULL, NULL);
}
