/*
 * test_pvm_msg.c - lib/pvm/pvm_msg.c against a socketpair daemon
 * (test_pvm_fakevm.h): the receive calls and the receive buffer, probe's
 * bufids, pvm_recvf match functions and their ranks, pvm_psend and
 * pvm_precv, the checks of pvm_send, the daemons' own messages, and bad
 * input.  Expected values are PVM 3.4.6's, as its library behaves with a
 * pvmd (freeing the receive buffer on every receive, alen in bytes...).
 */
#include "test_pvm_fakevm.h"

#include <limits.h>

static void
test_pvm_msg_recv_takes_the_oldest_match_in_order(void **state)
{
    int i;

    (void)state;
    for (i = 0; i < 5; i++)
        fake_deliver_int(FAKE_T2, 1 + i % 2, 0, i);
    assert_true(pvm_recv(-1, 2) > 0);
    assert_int_equal(fake_upk_int(), 1);
    assert_true(pvm_recv(FAKE_T2, -1) > 0);
    assert_int_equal(fake_upk_int(), 0);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 2);
    assert_int_equal(pvm_nrecv(FAKE_T3, -1), 0);
    assert_true(pvm_nrecv(-1, 2) > 0);
    assert_int_equal(fake_upk_int(), 3);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 4);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
}

static void
test_pvm_msg_every_receive_frees_the_previous_receive_buffer(void **state)
{
    int a, b;
    struct timeval tv = { 0, 1000 };

    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    a = pvm_recv(-1, -1);
    assert_true(a > 0);
    assert_int_equal(pvm_getrbuf(), a);
    /* PVM frees it even when nothing comes. */
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm_getrbuf(), 0);
    assert_int_equal(pvm_bufinfo(a, NULL, NULL, NULL), PvmNoSuchBuf);
    fake_deliver_int(FAKE_T2, 1, 0, 2);
    b = pvm_recv(-1, -1);
    assert_int_equal(pvm_trecv(-1, -1, &tv), 0);
    assert_int_equal(pvm_bufinfo(b, NULL, NULL, NULL), PvmNoSuchBuf);
}

static void
test_pvm_msg_received_buffer_is_rewound_once(void **state)
{
    int a, v;

    (void)state;
    {
        unsigned char two[8] = { 0, 0, 0, 7, 0, 0, 0, 8 };
        fake_deliver(FAKE_T2, 1, 0, PVM__ENCWORD_XDR, two, sizeof two);
    }
    a = pvm_recv(-1, -1);
    assert_int_equal(fake_upk_int(), 7);
    /* The buffer is already being unpacked: setrbuf does not rewind it. */
    assert_int_equal(pvm_setrbuf(a), a);
    assert_int_equal(pvm_upkint(&v, 1, 1), PvmOk);
    assert_int_equal(v, 8);
    assert_int_equal(pvm_upkint(&v, 1, 1), PvmNoData);
}

static void
test_pvm_msg_probe_gives_the_bufid_recv_returns(void **state)
{
    int p, r, bytes, tag, tid, keep;

    (void)state;
    keep = pvm_mkbuf(PvmDataDefault);
    pvm_setrbuf(keep);
    fake_deliver_int(FAKE_T3, 4, 0, 44);
    assert_int_equal(pvm_probe(-1, 5), 0);
    p = pvm_probe(-1, 4);
    assert_true(p > 0);
    assert_int_not_equal(p, keep);
    /* The probe leaves the receive buffer alone and can be asked again. */
    assert_int_equal(pvm_getrbuf(), keep);
    assert_int_equal(pvm_probe(FAKE_T3, -1), p);
    assert_int_equal(pvm_bufinfo(p, &bytes, &tag, &tid), PvmOk);
    assert_int_equal(bytes, 4);
    assert_int_equal(tag, 4);
    assert_int_equal(tid, FAKE_T3);
    r = pvm_recv(-1, -1);
    assert_int_equal(r, p);
    assert_int_equal(fake_upk_int(), 44);
    assert_int_equal(pvm_bufinfo(keep, NULL, NULL, NULL), PvmNoSuchBuf);
}

static void
test_pvm_msg_freeing_a_probed_buffer_drops_the_message(void **state)
{
    int p;

    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    fake_deliver_int(FAKE_T2, 2, 0, 2);
    p = pvm_probe(-1, 1);
    assert_true(p > 0);
    assert_int_equal(pvm_freebuf(p), PvmOk);
    /* A new buffer may get the same id and memory: it is not the message. */
    assert_int_equal(pvm_mkbuf(PvmDataDefault), p);
    assert_int_equal(pvm_nrecv(-1, 1), 0);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 2);
    assert_int_equal(pvm_freebuf(p), PvmOk);
}

static void
test_pvm_msg_precv_may_take_a_probed_message(void **state)
{
    int v = 0, at = 0, ag = 0, al = 0, p;

    (void)state;
    fake_deliver_int(FAKE_T2, 3, 0, 0x01020304);
    p = pvm_probe(-1, 3);
    assert_true(p > 0);
    assert_int_equal(pvm_precv(-1, 3, &v, 1, PVM_INT, &at, &ag, &al), PvmOk);
    /* No conversion: the XDR bytes as they came. */
    assert_memory_equal(&v, "\x01\x02\x03\x04", 4);
    assert_int_equal(al, 4);
    assert_int_equal(pvm_bufinfo(p, NULL, NULL, NULL), PvmNoSuchBuf);
}

/* ---- pvm_recvf ---- */

static int match_calls, match_last_tid, match_last_tag;

/* Takes any message whose int is 3, ignoring tids, tags and contexts. */
static int
match_int3(int mid, int tid, int tag)
{
    int save = pvm_setrbuf(mid), v = -1;

    match_calls++;
    match_last_tid = tid;
    match_last_tag = tag;
    pvm_upkint(&v, 1, 1);
    pvm_setrbuf(save);
    return v == 3;
}

/* Ranks messages by their int (the highest wins), none is picked at once. */
static int
match_rank(int mid, int tid, int tag)
{
    int save = pvm_setrbuf(mid), v = 0;

    (void)tid;
    (void)tag;
    match_calls++;
    pvm_upkint(&v, 1, 1);
    pvm_setrbuf(save);
    return v > 1 ? v : 0;
}

static int
match_error(int mid, int tid, int tag)
{
    (void)mid;
    (void)tid;
    (void)tag;
    return PvmNoTask;
}

static int
match_freeing(int mid, int tid, int tag)
{
    (void)tid;
    (void)tag;
    pvm_freebuf(mid);
    return 1;
}

typedef int (*match_fn)(int, int, int);

/*
 * Read what the daemon sent into the queue: match functions rank the
 * messages that are there (PVM reads more only when none will do).
 */
static void
settle(void)
{
    assert_int_equal(pvm_probe(-1, 12345), 0);
}

static void
test_pvm_msg_recvf_match_function_sees_every_message(void **state)
{
    match_fn old;

    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0x40005, 1);
    fake_deliver_int(FAKE_T2, 2, 0, 2);
    fake_deliver_int(FAKE_T3, 3, 0x40007, 3);
    fake_deliver_int(FAKE_T2, 4, 0, 4);
    settle();
    old = (match_fn)(void (*)(void))pvm_recvf(match_int3);
    assert_non_null(old);
    match_calls = 0;
    assert_true(pvm_recv(77, 88) > 0);
    /* It chose in another context, from another tid, with another tag. */
    assert_int_equal(fake_upk_int(), 3);
    assert_int_equal(match_calls, 3);
    assert_int_equal(match_last_tid, 77);
    assert_int_equal(match_last_tag, 88);
    /* Handing the old one back restores PVM's matching. */
    assert_true((match_fn)(void (*)(void))pvm_recvf(old) == match_int3);
    assert_null(pvm__ctx.recvf);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 2);
}

static void
test_pvm_msg_recvf_default_can_be_called_and_null_restores_it(void **state)
{
    match_fn def;
    int p;

    (void)state;
    def = (match_fn)(void (*)(void))pvm_recvf(NULL);
    fake_deliver_int(FAKE_T2, 9, 0, 1);
    fake_deliver_int(FAKE_T2, 9, 0x40005, 1);
    p = pvm_probe(-1, -1);
    assert_true(p > 0);
    assert_int_equal(def(p, FAKE_T2, 9), 1);
    assert_int_equal(def(p, -1, -1), 1);
    assert_int_equal(def(p, FAKE_T3, 9), 0);
    assert_int_equal(def(p, -1, 8), 0);
    assert_int_equal(def(9999, -1, -1), PvmNoSuchBuf);
    pvm_recvf(match_rank);
    assert_true((match_fn)(void (*)(void))pvm_recvf(NULL) == match_rank);
    assert_null(pvm__ctx.recvf);
}

static void
test_pvm_msg_recvf_ranks_pick_the_highest_seen(void **state)
{
    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    fake_deliver_int(FAKE_T2, 1, 0, 5);
    fake_deliver_int(FAKE_T2, 1, 0, 9);
    fake_deliver_int(FAKE_T2, 1, 0, 4);
    settle();
    pvm_recvf(match_rank);
    match_calls = 0;
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 9);
    assert_int_equal(match_calls, 4);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 5);
    assert_true(pvm_probe(-1, -1) > 0);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 4);
    /* Only a 1 left, which this function never picks. */
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    pvm_recvf(NULL);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 1);
}

static void
test_pvm_msg_recvf_error_is_returned(void **state)
{
    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    pvm_recvf(match_error);
    assert_int_equal(pvm_recv(-1, -1), PvmNoTask);
    assert_int_equal(pvm_errno, PvmNoTask);
    assert_int_equal(pvm_probe(-1, -1), PvmNoTask);
    pvm_recvf(NULL);
    assert_true(pvm_recv(-1, -1) > 0);
}

static void
test_pvm_msg_recvf_that_frees_the_message_does_not_get_it(void **state)
{
    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    fake_deliver_int(FAKE_T2, 1, 0, 2);
    pvm_recvf(match_freeing);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_null(pvm__ctx.inq_head);
    pvm_recvf(NULL);
}

/* ---- sending ---- */

static void
test_pvm_msg_send_checks_tids_and_tags_like_pvm(void **state)
{
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    pvm_initsend(PvmDataDefault);
    assert_int_equal(pvm_send(FAKE_T2, -1), PvmBadParam);
    assert_int_equal(pvm_send(0, 1), PvmBadParam);
    assert_int_equal(pvm_send(-1, 1), PvmBadParam);
    assert_int_equal(pvm_send(0x40000, 1), PvmBadParam);         /* a daemon */
    assert_int_equal(pvm_send((int)0x80040000u, 1), PvmBadParam);
    assert_int_equal(pvm_send(0x40040001, 1), PvmBadParam);      /* a multicast address */
    assert_int_equal(fake_sent(&h, &b), 0);
    /* PvmResvTids lets them through. */
    assert_int_equal(pvm_setopt(PvmResvTids, 1), 0);
    assert_int_equal(pvm_send(0x40000, -7), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal((int)h.dst, 0x40000);
    assert_int_equal(h.tag, -7);
    free(b);
    pvm_setopt(PvmResvTids, 0);
    pvm_freebuf(pvm_setsbuf(0));
    assert_int_equal(pvm_send(FAKE_T2, 1), PvmNoBuf);
}

static void
test_pvm_msg_psend_sends_raw_bytes_and_keeps_the_send_buffer(void **state)
{
    double d[3] = { 1.5, -2.25, 1e300 };
    struct wire_hdr h;
    unsigned char *b = NULL;
    int sbuf;

    (void)state;
    sbuf = pvm_initsend(PvmDataDefault);
    pvm_setcontext(0x40005);
    assert_int_equal(pvm_psend(FAKE_T2, 6, d, 3, PVM_DOUBLE), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal(h.type, WIRE_T_MSG);
    assert_int_equal((int)h.dst, FAKE_T2);
    assert_int_equal(h.tag, 6);
    assert_int_equal(h.ctx, 0x40005);
    assert_int_equal((int)h.flags, pvm__dsig());
    assert_int_equal(h.len, sizeof d);
    assert_memory_equal(b, d, sizeof d);
    free(b);
    assert_int_equal(pvm_getsbuf(), sbuf);
    /* Zero items is an empty message. */
    assert_int_equal(pvm_psend(FAKE_T2, 6, NULL, 0, PVM_INT), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal(h.len, 0);
    free(b);
}

static void
test_pvm_msg_psend_refuses_bad_arguments(void **state)
{
    int v[2] = { 1, 2 };
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    assert_int_equal(pvm_psend(FAKE_T2, 1, v, 1, PVM_STR), PvmNotImpl);
    assert_int_equal(pvm_psend(FAKE_T2, 1, v, 1, 99), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, 1, v, 1, -1), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, 1, v, -1, PVM_INT), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, 1, NULL, 2, PVM_INT), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, 1, v, INT_MAX, PVM_DOUBLE), PvmBadParam);
    assert_int_equal(pvm_psend(FAKE_T2, -1, v, 1, PVM_INT), PvmBadParam);
    assert_int_equal(pvm_psend(0, 1, v, 1, PVM_INT), PvmBadParam);
    assert_int_equal(fake_sent(&h, &b), 0);
}

static void
test_pvm_msg_psend_item_sizes(void **state)
{
    static const struct {
        int type;
        size_t size;
    } t[] = {
        { PVM_BYTE, 1 },
        { PVM_SHORT, sizeof(short) },
        { PVM_USHORT, sizeof(short) },
        { PVM_INT, sizeof(int) },
        { PVM_UINT, sizeof(int) },
        { PVM_LONG, sizeof(long) },
        { PVM_ULONG, sizeof(long) },
        { PVM_FLOAT, sizeof(float) },
        { PVM_CPLX, 2 * sizeof(float) },
        { PVM_DOUBLE, sizeof(double) },
        { PVM_DCPLX, 2 * sizeof(double) },
    };
    unsigned char src[3 * 16];
    struct wire_hdr h;
    unsigned char *b = NULL;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_int_equal(pvm_psend(FAKE_T2, 1, src, 3, t[i].type), PvmOk);
        assert_int_equal(fake_sent(&h, &b), 1);
        assert_int_equal(h.len, 3 * t[i].size);
        assert_memory_equal(b, src, 3 * t[i].size);
        free(b);
    }
}

static void
test_pvm_msg_precv_copies_and_reports_bytes(void **state)
{
    double d[4] = { 1, 2, 3, 4 }, e[6] = { 0 };
    int at = 0, ag = 0, al = 0, rbuf;

    (void)state;
    rbuf = pvm_mkbuf(PvmDataDefault);
    pvm_setrbuf(rbuf);
    fake_deliver(FAKE_T3, 8, 0, pvm__dsig(), d, sizeof d);
    fake_deliver(FAKE_T2, 8, 0, pvm__dsig(), d, sizeof d);
    /* Room for more than came: all of it, alen in bytes as in PVM 3.4.6. */
    assert_int_equal(pvm_precv(FAKE_T2, 8, e, 6, PVM_DOUBLE, &at, &ag, &al), PvmOk);
    assert_int_equal(at, FAKE_T2);
    assert_int_equal(ag, 8);
    assert_int_equal(al, (int)sizeof d);
    assert_memory_equal(e, d, sizeof d);
    assert_true(e[4] == 0);
    /* Room for less: truncated, alen still the message's length. */
    memset(e, 0, sizeof e);
    assert_int_equal(pvm_precv(-1, -1, e, 1, PVM_DOUBLE, &at, &ag, &al), PvmOk);
    assert_int_equal(at, FAKE_T3);
    assert_int_equal(al, (int)sizeof d);
    assert_true(e[0] == 1 && e[1] == 0);
    /* The receive buffer was never touched. */
    assert_int_equal(pvm_getrbuf(), rbuf);
}

static void
test_pvm_msg_precv_takes_packed_messages_and_null_outputs(void **state)
{
    int v = 0;

    (void)state;
    fake_deliver_int(FAKE_T2, 3, 0x40005, 5);
    fake_deliver_int(FAKE_T2, 3, 0, 6);
    assert_int_equal(pvm_precv(-1, 3, &v, 1, PVM_INT, NULL, NULL, NULL), PvmOk);
    assert_memory_equal(&v, "\0\0\0\6", 4);
    /* Its own context, and no room at all: the message is consumed. */
    pvm_setcontext(0x40005);
    assert_int_equal(pvm_precv(-1, 3, NULL, 0, PVM_BYTE, NULL, NULL, NULL), PvmOk);
    assert_null(pvm__ctx.inq_head);
}

static void
test_pvm_msg_precv_refuses_bad_arguments(void **state)
{
    int v;

    (void)state;
    fake_deliver_int(FAKE_T2, 3, 0, 6);
    assert_int_equal(pvm_precv(-1, 3, &v, 1, PVM_STR, NULL, NULL, NULL), PvmNotImpl);
    assert_int_equal(pvm_precv(-1, 3, &v, 1, 42, NULL, NULL, NULL), PvmBadParam);
    assert_int_equal(pvm_precv(-1, 3, &v, -2, PVM_INT, NULL, NULL, NULL), PvmBadParam);
    assert_int_equal(pvm_precv(-1, 3, NULL, 1, PVM_INT, NULL, NULL, NULL), PvmBadParam);
    /* Nothing was taken. */
    assert_true(pvm_probe(-1, 3) > 0);
}

/* ---- what else comes over the link ---- */

static void
test_pvm_msg_daemon_messages_are_not_received(void **state)
{
    FILE *out = tmpfile();
    char line[64] = "";

    (void)state;
    assert_non_null(out);
    pvm__ctx.catchout = out;
    pvm__ctx.opt[PvmShowTids] = 1;
    fake_deliver_int(FAKE_T2, 1, 0x7fff0000, 1);    /* siblings */
    /* An output line with pvm_catchout's code (flags: WIRE_OUT_LINE). */
    fake_deliver(FAKE_T2, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_LINE, "a line", 6);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    /* The output line is printed to the pvm_catchout file, not queued. */
    rewind(out);
    assert_non_null(fgets(line, sizeof(line), out));
    assert_string_equal(line, "[t40002] a line\n");
    pvm__ctx.catchout = NULL;
    pvm__output_free();
    fclose(out);
    pvm_recvf(match_rank);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    pvm_recvf(NULL);
    assert_non_null(pvm__ctx.inq_head);
    assert_null(pvm__ctx.inq_head->next);
}

/* With another code (PvmOutputTid/Code), a task's output is PVM's
 * message: from our daemon, int tid, int count, the bytes with their
 * newline; -2, -1 and 0 for spawned, begin and EOF, the first two with the
 * task's parent's tid after them. */
static void
test_pvm_msg_output_as_messages(void **state)
{
    int tid, count, b, len, tag, src, ptid = 0;
    char data[16] = "";
    static const char parent[4] = { 0x00, 0x04, 0x00, 0x05 }; /* t40005, as the daemon sends it */

    (void)state;
    fake_deliver(FAKE_T2, 33, 0x7fff0001, WIRE_OUT_SPAWNED, parent, 4);
    fake_deliver(FAKE_T2, 33, 0x7fff0001, WIRE_OUT_LINE, "a line", 6);
    fake_deliver(FAKE_T2, 33, 0x7fff0001, WIRE_OUT_EOF, NULL, 0);
    assert_true((b = pvm_recv(-1, 33)) > 0);
    assert_int_equal(pvm_bufinfo(b, &len, &tag, &src), 0);
    assert_int_equal(src, FAKE_ME & ~0x3ffff);
    assert_int_equal(pvm_upkint(&tid, 1, 1), 0);
    assert_int_equal(pvm_upkint(&count, 1, 1), 0);
    assert_int_equal(tid, FAKE_T2);
    assert_int_equal(count, -2);
    assert_int_equal(pvm_upkint(&ptid, 1, 1), 0);
    assert_int_equal(ptid, 0x40005);
    assert_true(pvm_recv(-1, 33) > 0);
    assert_int_equal(pvm_upkint(&tid, 1, 1), 0);
    assert_int_equal(pvm_upkint(&count, 1, 1), 0);
    assert_int_equal(count, 7);
    assert_int_equal(pvm_upkbyte(data, 7, 1), 0);
    assert_memory_equal(data, "a line\n", 7);
    assert_true(pvm_recv(-1, 33) > 0);
    assert_int_equal(pvm_upkint(&tid, 1, 1), 0);
    assert_int_equal(pvm_upkint(&count, 1, 1), 0);
    assert_int_equal(count, 0);
    /* pvm_exit waits for caught output only: a caught task's, until its EOF. */
    assert_int_equal(pvm__output_open(NULL, 0), 0);
    fake_deliver(FAKE_T2 + 1, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_BEGIN, NULL, 0);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm__output_open(NULL, 0), 1);
    fake_deliver(FAKE_T2 + 1, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_EOF, NULL, 0);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm__output_open(NULL, 0), 0);
    /* A task announced by its spawner's daemon (EXPECT, src: the spawner)
     * is open until its own EOF, with no message; one whose EOF came
     * first stays ended. */
    static const char other[4] = { 0x00, 0x08, 0x00, 0x07 };    /* t80007 */
    fake_deliver(FAKE_T2, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_EXPECT, other, 4);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    int open[2] = { 0, 0 };
    assert_int_equal(pvm__output_open(open, 2), 1);
    assert_int_equal(open[0], 0x80007);
    fake_deliver(0x80007, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_EOF, NULL, 0);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm__output_open(NULL, 0), 0);
    fake_deliver(FAKE_T2, PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_EXPECT, other, 4);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    assert_int_equal(pvm__output_open(NULL, 0), 0);
    fake_deliver(FAKE_T2, 33, 0x7fff0001, WIRE_OUT_EXPECT, other, 4);
    assert_int_equal(pvm_nrecv(-1, 33), 0);
    pvm__output_free();
}

/* Many caught tasks, their tids from several hosts in no order: each is
 * open from its first frame to its EOF, and stays ended after it. */
static void
test_pvm_msg_output_many_sources(void **state)
{
    enum { N = 300 };
    int tid[N], open[N];

    (void)state;
    for (int i = 0; i < N; i++)
        tid[i] = (int)((unsigned)(1 + (i * 7) % 5) << 18 | (unsigned)((i * 37) % N + 1));
    for (int i = 0; i < N; i++) {
        fake_deliver(tid[i], PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_BEGIN, NULL, 0);
        assert_int_equal(pvm_nrecv(-1, -1), 0);
        assert_int_equal(pvm__output_open(NULL, 0), i + 1);
    }
    for (int i = 0; i < N; i += 2) {
        fake_deliver(tid[i], PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_EOF, NULL, 0);
        assert_int_equal(pvm_nrecv(-1, -1), 0);
    }
    /* Late frames of the ended ones open nothing again. */
    for (int i = 0; i < N; i += 2) {
        fake_deliver(tid[i], PVM__OUT_CATCH, 0x7fff0001, WIRE_OUT_BEGIN, NULL, 0);
        assert_int_equal(pvm_nrecv(-1, -1), 0);
    }
    assert_int_equal(pvm__output_open(open, N), N / 2);
    for (int k = 0; k < N / 2; k++) {
        int found = 0;

        for (int i = 1; i < N; i += 2)
            found += open[k] == tid[i];
        assert_int_equal(found, 1);
    }
    pvm__output_free();
}

static void
test_pvm_msg_other_frames_are_ignored(void **state)
{
    struct wire_hdr h = { .type = WIRE_T_HEARTBEAT };
    struct wire_hdr r = { .type = WIRE_T_REPLY, .id = 99 };

    (void)state;
    assert_int_equal(wire_write_frame(fake_fd, &h, "xy", 2), 0);
    assert_int_equal(wire_write_frame(fake_fd, &r, NULL, 0), 0);
    fake_deliver_int(FAKE_T2, 1, 0, 1);
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 1);
}

static void
test_pvm_msg_lost_daemon_is_pvmsyserr(void **state)
{
    (void)state;
    close(fake_fd);
    fake_fd = -1;
    assert_int_equal(pvm_recv(-1, -1), PvmSysErr);
    assert_int_equal(pvm_nrecv(-1, -1), PvmSysErr);
}

/* A time already past polls, as PVM 3.4.6's pvm_trecv does: no error. */
static void
test_pvm_msg_trecv_polls_on_negative_times(void **state)
{
    struct timeval tv = { -1, 0 };

    (void)state;
    assert_int_equal(pvm_trecv(-1, -1, &tv), 0);
    tv.tv_sec = 0;
    tv.tv_usec = -5;
    assert_int_equal(pvm_trecv(-1, -1, &tv), 0);
    fake_deliver_int(FAKE_T2, 1, 0, 7);
    assert_true(pvm_trecv(-1, -1, &tv) > 0);
}

static void
test_pvm_msg_out_of_memory_keeps_the_message(void **state)
{
    (void)state;
    fake_deliver_int(FAKE_T2, 1, 0, 5);
    /* Read it into the queue first; then making its buffer fails. */
    assert_int_equal(pvm_probe(-1, 2), 0);
    pvm__ctx.fault_after = 1;
    assert_int_equal(pvm_recv(-1, -1), PvmNoMem);
    pvm__ctx.fault_after = 0;
    assert_true(pvm_recv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 5);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fake_up, fake_down)
    const struct CMUnitTest tests[] = {
        T(test_pvm_msg_recv_takes_the_oldest_match_in_order),
        T(test_pvm_msg_every_receive_frees_the_previous_receive_buffer),
        T(test_pvm_msg_received_buffer_is_rewound_once),
        T(test_pvm_msg_probe_gives_the_bufid_recv_returns),
        T(test_pvm_msg_freeing_a_probed_buffer_drops_the_message),
        T(test_pvm_msg_precv_may_take_a_probed_message),
        T(test_pvm_msg_recvf_match_function_sees_every_message),
        T(test_pvm_msg_recvf_default_can_be_called_and_null_restores_it),
        T(test_pvm_msg_recvf_ranks_pick_the_highest_seen),
        T(test_pvm_msg_recvf_error_is_returned),
        T(test_pvm_msg_recvf_that_frees_the_message_does_not_get_it),
        T(test_pvm_msg_send_checks_tids_and_tags_like_pvm),
        T(test_pvm_msg_psend_sends_raw_bytes_and_keeps_the_send_buffer),
        T(test_pvm_msg_psend_refuses_bad_arguments),
        T(test_pvm_msg_psend_item_sizes),
        T(test_pvm_msg_precv_copies_and_reports_bytes),
        T(test_pvm_msg_precv_takes_packed_messages_and_null_outputs),
        T(test_pvm_msg_precv_refuses_bad_arguments),
        T(test_pvm_msg_daemon_messages_are_not_received),
        T(test_pvm_msg_output_as_messages),
        T(test_pvm_msg_output_many_sources),
        T(test_pvm_msg_other_frames_are_ignored),
        T(test_pvm_msg_lost_daemon_is_pvmsyserr),
        T(test_pvm_msg_trecv_polls_on_negative_times),
        T(test_pvm_msg_out_of_memory_keeps_the_message),
    };
#undef T
    return cmocka_run_group_tests_name("pvm_msg", tests, NULL, NULL);
}
