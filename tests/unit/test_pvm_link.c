/*
 * test_pvm_link.c - direct links (lib/pvm/pvm_link.c, pvm_linkio.c)
 * without a virtual machine: the daemon is one end of a socketpair
 * (test_pvm_fakevm.h) and a direct link another, whose far end the test
 * writes as the peer task would.  Shown:
 * messages on a link wait for the peer's MARK behind what it routed
 * before; a peer that forges its source, announces a frame above the limit
 * or sends a bad HELLO loses its link and nothing it sent is queued; a
 * HELLO with the right token turns the request into a link and is answered
 * ACK; frames written a byte at a time are assembled; PvmDontRoute answers
 * a CONREQ with a NAK carrying its token; a malformed CONREQ is ignored;
 * the daemon's word that a host left closes the links to its tasks only.
 */
#include "test_pvm_fakevm.h"

/* A link from FAKE_T2 (same host: a Unix socket) in state st; *peer is
 * the far end, which the test writes as FAKE_T2. */
static struct pvm__link *
make_link(int st, int tid, int *peer)
{
    int sv[2];
    struct pvm__direct *d = dir();
    struct pvm__link *l;

    assert_non_null(d);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    l = link_new(d, tid, (enum pvm__link_state)st);
    assert_non_null(l);
    l->fd = sv[0];
    l->remote = 0;
    *peer = sv[1];
    return l;
}

static void
peer_write(int fd, int type, int src, int dst, int tag, const void *body, size_t len)
{
    struct wire_hdr h = { .type = (uint8_t)type, .src = (uint32_t)src, .dst = (uint32_t)dst,
                          .tag = tag, .flags = PVM__ENCWORD_XDR };

    assert_int_equal(wire_write_frame(fd, &h, body, len), 0);
}

static void
peer_msg(int fd, int src, int tag, int v)
{
    unsigned char b[4] = { 0, 0, (unsigned char)(v >> 8), (unsigned char)v };

    peer_write(fd, WIRE_T_MSG, src, FAKE_ME, tag, b, sizeof b);
}

/* Service links and the daemon for what is readable now. */
static void
settle(void)
{
    for (int i = 0; i < 8; i++)
        pvm__pump(0, NULL, NULL);
}

static int
direct_up(void **state)
{
    int rc = fake_up(state);

    pvm__ctx.max_msg = 1 << 20;
    return rc;
}

static int
direct_down(void **state)
{
    pvm__direct_close();
    return fake_down(state);
}

static void
test_pvm_link_link_messages_wait_for_the_mark(void **state)
{
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, FAKE_T2, &peer);

    (void)state;
    /* Routed before the switch: 1; on the link after it: 2 and 3. */
    peer_msg(peer, FAKE_T2, 5, 2);
    peer_msg(peer, FAKE_T2, 5, 3);
    settle();
    assert_int_equal(pvm_nrecv(-1, -1), 0);     /* held: no MARK yet */
    fake_deliver_int(FAKE_T2, 5, 0, 1);
    settle();
    struct wire_hdr m = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_MARK, .src = FAKE_T2,
                          .dst = FAKE_ME };
    assert_int_equal(wire_write_frame(fake_fd, &m, NULL, 0), 0);
    for (int want = 1; want <= 3; want++) {
        assert_true(pvm_recv(FAKE_T2, 5) > 0);
        assert_int_equal(fake_upk_int(), want);
    }
    /* Marked: what comes on the link now is queued at once. */
    peer_msg(peer, FAKE_T2, 5, 4);
    assert_true(pvm_recv(FAKE_T2, 5) > 0);
    assert_int_equal(fake_upk_int(), 4);
    assert_int_equal(l->state, PVM__LINK_READY);
    close(peer);
}

static void
test_pvm_link_forged_source_closes_the_link(void **state)
{
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, FAKE_T2, &peer);

    (void)state;
    l->marked = 1;
    peer_msg(peer, FAKE_T3, 5, 1);      /* speaks for another task */
    settle();
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_int_equal(l->fd, -1);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    close(peer);
}

static void
test_pvm_link_oversized_frame_closes_the_link(void **state)
{
    int peer;
    unsigned char hdr[WIRE_HDR_LEN];
    struct pvm__link *l = make_link(PVM__LINK_READY, FAKE_T2, &peer);
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME,
                          .len = (1u << 20) + 1 };

    (void)state;
    wire_hdr_pack(&h, hdr);
    assert_int_equal(write(peer, hdr, sizeof hdr), (ssize_t)sizeof hdr);
    settle();
    assert_int_equal(l->state, PVM__LINK_DEAD);
    close(peer);
}

static void
test_pvm_link_frames_arrive_a_byte_at_a_time(void **state)
{
    int peer;
    unsigned char frame[WIRE_HDR_LEN + 4] = { 0 };
    struct pvm__link *l = make_link(PVM__LINK_READY, FAKE_T2, &peer);
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = 9,
                          .flags = PVM__ENCWORD_XDR, .len = 4 };

    (void)state;
    l->marked = 1;
    wire_hdr_pack(&h, frame);
    frame[WIRE_HDR_LEN + 3] = 42;
    for (size_t i = 0; i < sizeof frame; i++) {
        assert_int_equal(pvm_nrecv(-1, -1), 0);
        assert_int_equal(write(peer, frame + i, 1), 1);
        settle();
    }
    assert_true(pvm_nrecv(FAKE_T2, 9) > 0);
    assert_int_equal(fake_upk_int(), 42);
    assert_int_equal(l->state, PVM__LINK_READY);
    close(peer);
}

static void
test_pvm_link_hello_needs_the_token_of_the_request(void **state)
{
    int bad, good;
    unsigned char wrong[WIRE_DIRECT_TOKEN], ack[WIRE_HDR_LEN];
    struct pvm__link *asked = link_new(dir(), FAKE_T2, PVM__LINK_ASKED);
    struct pvm__link *c1, *c2;
    struct wire_hdr h;

    (void)state;
    memset(asked->token, 0xab, WIRE_DIRECT_TOKEN);
    memset(wrong, 0xac, WIRE_DIRECT_TOKEN);
    /* Being made: not settled until our messages take it. */
    assert_int_equal(pvm__link_settled(FAKE_T2), 0);
    c1 = make_link(PVM__LINK_ACCEPTED, 0, &bad);
    peer_write(bad, WIRE_T_DIRECT, FAKE_T2, FAKE_ME, WIRE_DIRECT_HELLO, wrong, sizeof wrong);
    settle();
    (void)c1;       /* refused and swept */
    assert_int_equal(asked->state, PVM__LINK_ASKED);
    assert_int_equal(read(bad, ack, sizeof ack), 0);    /* closed on it */
    close(bad);

    /* Before its HELLO, a connection announcing a big frame is dropped. */
    int big;
    unsigned char hdr[WIRE_HDR_LEN];
    struct pvm__link *c3 = make_link(PVM__LINK_ACCEPTED, 0, &big);
    struct wire_hdr bh = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .len = 1000 };
    wire_hdr_pack(&bh, hdr);
    assert_int_equal(write(big, hdr, sizeof hdr), (ssize_t)sizeof hdr);
    (void)c3;
    settle();
    assert_int_equal(read(big, ack, sizeof ack), 0);    /* closed on it */
    close(big);

    c2 = make_link(PVM__LINK_ACCEPTED, 0, &good);
    (void)c2;
    peer_write(good, WIRE_T_DIRECT, FAKE_T2, FAKE_ME, WIRE_DIRECT_HELLO, asked->token,
               WIRE_DIRECT_TOKEN);
    settle();
    assert_int_equal(asked->state, PVM__LINK_READY);
    assert_int_equal(pvm__link_settled(FAKE_T2), 0);
    assert_true(asked->fd >= 0);
    assert_int_equal(read(good, ack, sizeof ack), (ssize_t)sizeof ack);
    assert_int_equal(wire_hdr_unpack(ack, 0, &h), 0);
    assert_int_equal(h.type, WIRE_T_DIRECT);
    assert_int_equal(h.tag, WIRE_DIRECT_ACK);
    /* The first send takes the link, behind a MARK to the daemon (the
     * socket itself: no ring, which test_shm_ring.c shows). */
    setenv("LIQUIDVM_SHM_RING", "0", 1);
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_send(FAKE_T2, 7), PvmOk);
    unsigned char *b = NULL;
    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal(h.type, WIRE_T_DIRECT);
    assert_int_equal(h.tag, WIRE_DIRECT_MARK);
    free(b);
    assert_int_equal(fake_sent(&h, &b), 0);     /* nothing else to the daemon */
    assert_int_equal(asked->state, PVM__LINK_UP);
    assert_int_equal(pvm__link_settled(FAKE_T2), 1);
    unsigned char got[WIRE_HDR_LEN];
    assert_int_equal(read(good, got, sizeof got), (ssize_t)sizeof got);
    assert_int_equal(wire_hdr_unpack(got, 0, &h), 0);
    assert_int_equal(h.type, WIRE_T_MSG);
    assert_int_equal(h.tag, 7);
    unsetenv("LIQUIDVM_SHM_RING");
    close(good);
}

static void
test_pvm_link_dontroute_answers_a_conreq_with_nak(void **state)
{
    struct wire_wbuf b;
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_CONREQ, .src = FAKE_T2,
                          .dst = FAKE_ME };
    unsigned char token[WIRE_DIRECT_TOKEN], *body = NULL;

    (void)state;
    memset(token, 0x5a, sizeof token);
    pvm_setopt(PvmRoute, PvmDontRoute);
    /* No link will be made: the daemons' route is the one that stays,
     * to a task of our host or another's. */
    assert_int_equal(pvm__link_settled(FAKE_T2), 1);
    assert_int_equal(pvm__link_settled(FAKE_T3), 1);
    wire_wbuf_init(&b);
    wire_put_bytes(&b, token, sizeof token);
    wire_put_str(&b, "/nonexistent/t40002.sock");
    wire_put_str(&b, "");
    wire_put_u32(&b, 0);
    assert_int_equal(wire_write_frame(fake_fd, &h, b.data, b.len), 0);
    wire_wbuf_free(&b);
    assert_int_equal(pvm_nrecv(-1, -1), 0);     /* reads it, then answers */
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(fake_sent(&h, &body), 1);
    assert_int_equal(h.type, WIRE_T_DIRECT);
    assert_int_equal(h.tag, WIRE_DIRECT_NAK);
    assert_int_equal((int)h.dst, FAKE_T2);
    assert_int_equal(h.len, WIRE_DIRECT_TOKEN);
    assert_memory_equal(body, token, WIRE_DIRECT_TOKEN);
    free(body);
    assert_int_equal(fake_reqs, 0);             /* no link was tried */
    pvm_setopt(PvmRoute, PvmAllowDirect);
    /* The default route makes links to tasks of our host only (for the
     * rings); PvmRouteDirect to every task. */
    assert_int_equal(pvm__link_settled(FAKE_T3), 1);
    pvm_setopt(PvmRoute, PvmRouteDirect);
    assert_int_equal(pvm__link_settled(FAKE_T3), 0);
    pvm_setopt(PvmRoute, PvmAllowDirect);
}

static void
test_pvm_link_malformed_conreq_is_ignored(void **state)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_CONREQ, .src = FAKE_T2,
                          .dst = FAKE_ME };
    unsigned char shortbody[10] = { 0 }, *body = NULL;

    (void)state;
    assert_int_equal(wire_write_frame(fake_fd, &h, shortbody, sizeof shortbody), 0);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_true(pvm__ctx.direct == NULL || pvm__ctx.direct->conreqs == NULL);
    assert_int_equal(fake_sent(&h, &body), 0);  /* no answer of any kind */
}

/* Our daemon says host 2 left the VM: the link to its task (FAKE_T3) dies
 * after what it brought is queued; the link to a task of host 1 stays.  The
 * same words from a task are not believed. */
static void
test_pvm_link_host_gone_closes_its_links_only(void **state)
{
    int p2, p3;
    struct pvm__link *l2 = make_link(PVM__LINK_READY, FAKE_T2, &p2);
    struct pvm__link *l3 = make_link(PVM__LINK_READY, FAKE_T3, &p3);
    unsigned char host2[4] = { 0, 0, 0, 2 };
    struct wire_hdr g = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_GONE, .src = FAKE_T2,
                          .dst = FAKE_ME };

    (void)state;
    l2->marked = l3->marked = 1;
    /* Forged by a task of host 1: nothing happens. */
    assert_int_equal(wire_write_frame(fake_fd, &g, host2, sizeof host2), 0);
    settle();
    assert_int_equal(l3->state, PVM__LINK_READY);
    /* Host 2's task wrote a message, unread when the daemon's word comes. */
    peer_msg(p3, FAKE_T3, 5, 7);
    g.src = WIRE_HOST_TID(1);
    assert_int_equal(wire_write_frame(fake_fd, &g, host2, sizeof host2), 0);
    pvm__pump_daemon(NULL, NULL);
    assert_int_equal(l3->state, PVM__LINK_DEAD);
    assert_int_equal(l3->fd, -1);
    assert_int_equal(l2->state, PVM__LINK_READY);
    assert_true(pvm_nrecv(FAKE_T3, 5) > 0);
    assert_int_equal(fake_upk_int(), 7);
    /* A short body is ignored. */
    assert_int_equal(wire_write_frame(fake_fd, &g, host2, 3), 0);
    settle();
    assert_int_equal(l2->state, PVM__LINK_READY);
    close(p2);
    close(p3);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, direct_up, direct_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_link_link_messages_wait_for_the_mark),
        T(test_pvm_link_forged_source_closes_the_link),
        T(test_pvm_link_oversized_frame_closes_the_link),
        T(test_pvm_link_frames_arrive_a_byte_at_a_time),
        T(test_pvm_link_hello_needs_the_token_of_the_request),
        T(test_pvm_link_dontroute_answers_a_conreq_with_nak),
        T(test_pvm_link_malformed_conreq_is_ignored),
        T(test_pvm_link_host_gone_closes_its_links_only),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_link", tests, NULL, NULL);
}
