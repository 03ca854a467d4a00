/*
 * test_pvm_fakevm.h - a daemon made of one end of a socketpair, for the
 * libpvm3 tests that receive, send, match and dispatch messages without a
 * virtual machine.
 *
 * The library's link to its daemon (pvm__ctx.fd) is one end; the test
 * holds the other, writes the frames a daemon would route to the task
 * (fake_deliver) and reads back what the task sends (fake_sent).  The
 * library sources are compiled in, as in test_pvm_buf.c; enrollment
 * (lib/pvm/pvm_task.c) and requests (lib/pvm/pvm_request.c) are replaced by
 * stubs: pvm__enroll succeeds once the link is up, and pvm__request returns
 * the reply the test set (fake_reply), after reading what is readable as
 * the real one does while it waits, so messages can arrive "during" a
 * request.  fake_up wires the direct-link protocol in as enrollment does.
 */
#ifndef TEST_PVM_FAKEVM_H
#define TEST_PVM_FAKEVM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/pvm/pvm_ctx.c"
#include "../../lib/pvm/pvm_err.c"
#include "../../lib/pvm/pvm_buf.c"
#include "../../lib/pvm/pvm_pack.c"
#include "../../lib/pvm/pvm_inq.c"
#include "../../lib/pvm/pvm_poll.c"
#include "../../lib/pvm/pvm_daemon.c"
#include "../../lib/pvm/pvm_msg.c"
#include "../../lib/pvm/pvm_linkio.c"
#include "../../lib/pvm/pvm_link.c"
#include "../../lib/pvm/pvm_context.c"
#include "../../lib/pvm/pvm_opt.c"
#include "../../lib/pvm/pvm_mhf.c"
#include "../../lib/pvm/pvm_mcast.c"

#define FAKE_ME 0x40001         /* our tid: host 1, task 1 */
#define FAKE_T2 0x40002
#define FAKE_T3 0x80001         /* a task of host 2 */

#define FAKE_UNUSED __attribute__((unused))

static int fake_fd = -1;        /* the daemon's end */
static int fake_enrolls;
/* The last request and the reply the next one gets. */
static int fake_req_type, fake_reqs;
static size_t fake_req_len;
static int fake_reply_status;
static unsigned char fake_reply_body[256];
static size_t fake_reply_len;

int
pvm__enroll(void)
{
    fake_enrolls++;
    return pvm__ctx.fd >= 0 ? 0 : WIRE_ENOVM;
}

int
pvm__request(int type, const struct wire_wbuf *req, unsigned char **body, size_t *len)
{
    struct wire_hdr h;
    unsigned char *b = NULL;

    *body = NULL;
    *len = 0;
    fake_req_type = type;
    fake_req_len = req ? req->len : 0;
    fake_reqs++;
    if (pvm__ctx.fd < 0)
        return WIRE_ENOVM;
    /* What arrives while the request waits is queued, handlers or not. */
    while (pvm__pump(0, &h, &b) > 0)
        free(b), b = NULL;
    if (fake_reply_len > 0) {
        *body = malloc(fake_reply_len);
        memcpy(*body, fake_reply_body, fake_reply_len);
        *len = fake_reply_len;
    }
    return fake_reply_status;
}

static FAKE_UNUSED void
fake_set_reply_u32(int status, uint32_t v)
{
    fake_reply_status = status;
    fake_reply_body[0] = (unsigned char)(v >> 24);
    fake_reply_body[1] = (unsigned char)(v >> 16);
    fake_reply_body[2] = (unsigned char)(v >> 8);
    fake_reply_body[3] = (unsigned char)v;
    fake_reply_len = 4;
}

/* Group/test setup: a fresh context enrolled as FAKE_ME with a fake daemon. */
static FAKE_UNUSED int
fake_up(void **state)
{
    int sv[2];

    (void)state;
    pvm__ctx_reset();
    pvm__ctx.autoerr = 0;
    pvm_errno = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    pvm__ctx.fd = sv[0];
    pvm__ctx.mytid = FAKE_ME;
    pvm__ctx.on_direct = pvm__direct_from_daemon;
    fake_fd = sv[1];
    fake_enrolls = fake_reqs = 0;
    fake_req_type = 0;
    fake_reply_status = 0;
    fake_reply_len = 0;
    unsetenv("LIQUIDVM_CTX");
    return 0;
}

static FAKE_UNUSED int
fake_down(void **state)
{
    (void)state;
    pvm__direct_close(); /* the links a send to a task of our host asked for */
    pvm__inq_free();
    pvm__mhf_reset();
    free(pvm__ctx.myctxs);
    if (pvm__ctx.fd >= 0)
        close(pvm__ctx.fd);
    if (fake_fd >= 0)
        close(fake_fd);
    fake_fd = -1;
    pvm__ctx_reset();
    return 0;
}

/* The daemon routes a message to us. */
static FAKE_UNUSED void
fake_deliver(int src, int tag, int ctx, int encword, const void *body, size_t len)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = (uint32_t)src, .dst = FAKE_ME,
                          .tag = tag, .ctx = ctx, .flags = (uint32_t)encword };

    assert_int_equal(wire_write_frame(fake_fd, &h, body, len), 0);
}

/* One int, XDR-packed, as pvm_pkint sends it. */
static FAKE_UNUSED void
fake_deliver_int(int src, int tag, int ctx, int v)
{
    unsigned char b[4] = { (unsigned char)((unsigned)v >> 24), (unsigned char)((unsigned)v >> 16),
                           (unsigned char)((unsigned)v >> 8), (unsigned char)v };

    fake_deliver(src, tag, ctx, PVM__ENCWORD_XDR, b, sizeof b);
}

/* The next frame the task sent: 1 with *h and *body (malloc'ed), 0 if none. */
static FAKE_UNUSED int
fake_sent(struct wire_hdr *h, unsigned char **body)
{
    int rc = wire_read_frame(fake_fd, 1u << 24, 0, h, body);

    assert_true(rc >= 0);
    return rc;
}

/* The next frame must be a message to dst with that tag and context; its int. */
static FAKE_UNUSED int
fake_expect_int(int dst, int tag, int ctx)
{
    struct wire_hdr h;
    unsigned char *b = NULL;
    int v;

    assert_int_equal(fake_sent(&h, &b), 1);
    assert_int_equal(h.type, WIRE_T_MSG);
    assert_int_equal((int)h.dst, dst);
    assert_int_equal(h.tag, tag);
    assert_int_equal(h.ctx, ctx);
    assert_int_equal(h.len, 4);
    v = (int)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    free(b);
    return v;
}

/* The int in the active receive buffer. */
static FAKE_UNUSED int
fake_upk_int(void)
{
    int v = -12345;

    assert_int_equal(pvm_upkint(&v, 1, 1), PvmOk);
    return v;
}

/* Send one int to tid with tag in the current context. */
static FAKE_UNUSED int
fake_send_int(int tid, int tag, int v)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    return pvm_send(tid, tag);
}

#endif
