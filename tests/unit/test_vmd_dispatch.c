/*
 * test_vmd_dispatch.c - daemon/vmd_dispatch.c: the one table that says who
 * may send what, and the dispatcher that applies it.
 *
 * The test holds its own statement of the rules (expect[] below: each
 * frame type's origins, minimum length and flags, written from wire.h and
 * the daemon's protocol, not copied from the table) and checks the real
 * table against it row by row.  Then it sends every frame type from every
 * origin through vmd_dispatch() with a copy of the real table whose
 * handlers are replaced by one spy: the origins, lengths and flags are the
 * real rows', so a wrong rule shows as a spy that ran when it should not
 * have (or did not when it should).  A refused frame must return an error
 * and reach no handler.  The daemon is a bare struct vmd: no loop is run,
 * no socket is opened; a client and a peer are plain structs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vmd.h"
#include "wire_load.h"

#define C VMD_FROM_CLIENT
#define R VMD_FROM_RELAY
#define S VMD_FROM_STRANGER
#define P VMD_FROM_PEER
#define MB VMD_FROM_MEMBER
#define M VMD_FROM_MASTER
#define D (P | MB | M)

#define TASK VMD_F_TASK
#define SSRC VMD_F_STAMP_SRC
#define SBODY VMD_F_STAMP_BODY
#define TCTX VMD_F_TASK_CTX
#define MAST VMD_F_MASTER
#define BOUND VMD_F_BOUND
#define OSRC VMD_F_OWN_SRC

/* The rules, stated independently of daemon/vmd_dispatch.c. */
static const struct expect {
    int row;
    unsigned from;
    uint32_t min_len;
    unsigned flags;
} expect[] = {
    { WIRE_T_HELLO, S, 24, 0 },                 /* u32 version, str, u32, str, u32, str */
    { WIRE_T_HOSTTABLE, M, 12, 0 },             /* serial, master, count */
    { WIRE_T_HEARTBEAT, D, 0, 0 },
    { WIRE_T_HALT, M, 0, 0 },
    { WIRE_T_RELAY, MB, 8, BOUND },             /* client id, type */
    { VMD_FRAME_RELAY_REPLY, M, 4, 0 },         /* client id */
    { WIRE_T_FWD, D, 12, BOUND },               /* op id, origin, type */
    { WIRE_T_FWD_REPLY, D, 4, BOUND },
    { WIRE_T_GROUP_SYNC, M, 20, BOUND },
    { WIRE_T_BARRIER_ARRIVE, MB, 16, BOUND },
    { WIRE_T_BARRIER_DONE, M, 12, BOUND },
    { WIRE_T_MCAST, D, 4, BOUND | OSRC },
    { WIRE_T_LOAD, D, 84, 0 },
    { WIRE_T_CLOCK, D, 0, BOUND },              /* an ask (empty) or an answer (sec, usec) */
    { WIRE_T_REQ_CONF, C, 0, 0 },
    { WIRE_T_REQ_ADD, C | R, 4, MAST },
    { WIRE_T_REQ_DELETE, C | R, 4, MAST },
    { WIRE_T_REQ_HALT, C | R, 0, MAST },
    { WIRE_T_REQ_STATUS, C, 0, 0 },
    { WIRE_T_REQ_LOAD, C, 0, 0 },
    { WIRE_T_REQ_CLOCK, C, 4, TASK },           /* the host's daemon tid */
    { WIRE_T_TASK_ENROLL, C, 12, 0 },
    { WIRE_T_TASK_NEWCTX, C, 0, TASK },
    { WIRE_T_TASK_SPAWN, C, 32, TASK },
    { WIRE_T_TASK_KILL, C, 8, TASK },
    { WIRE_T_TASK_LIST, C, 4, TASK },
    { WIRE_T_TASK_NOTIFY, C, 12, TASK },
    { WIRE_T_TASK_DIRECT, C, 4, TASK },
    { WIRE_T_TASK_FREECTX, C, 4, TASK },
    { WIRE_T_MBOX_PUT, C | R, 16, TASK | SBODY | MAST },
    { WIRE_T_MBOX_GET, C | R, 16, TASK | SBODY | MAST },
    { WIRE_T_MBOX_DEL, C | R, 16, TASK | SBODY | MAST },
    { WIRE_T_MBOX_LIST, C | R, 8, TASK | SBODY | MAST },
    { WIRE_T_MBOX_GONE, R, 4, SBODY | MAST },   /* daemons only: never a client */
    { WIRE_T_GROUP_JOIN, C | R, 8, TASK | SBODY | MAST },
    { WIRE_T_GROUP_LEAVE, C | R, 8, TASK | SBODY | MAST },
    { WIRE_T_GROUP_TID, C | R, 12, SBODY | MAST },
    { WIRE_T_GROUP_INST, C | R, 12, SBODY | MAST },
    { WIRE_T_GROUP_SIZE, C | R, 8, SBODY | MAST },
    { WIRE_T_GROUP_FREEZE, C | R, 12, TASK | SBODY | MAST },
    { WIRE_T_GROUP_INFO, C | R, 8, SBODY | MAST },
    { WIRE_T_GROUP_LIST, C | R, 8, SBODY | MAST },
    { WIRE_T_GROUP_GONE, R, 8, SBODY | MAST },  /* daemons only: never a client */
    { WIRE_T_GROUP_BARRIER, C | R, 12, TASK | SBODY },
    { WIRE_T_MSG, C | D, 0, TASK | SSRC | TCTX | BOUND | OSRC },
    { WIRE_T_TASK_MCAST, C, 4, TASK | SSRC | TCTX },
    { WIRE_T_DIRECT, C | D, 0, TASK | SSRC | TCTX | BOUND | OSRC },
};
#define NEXPECT (sizeof(expect) / sizeof(expect[0]))

static const unsigned origins[] = { C, R, S, P, MB, M };
#define NORIGINS (sizeof(origins) / sizeof(origins[0]))

static const struct expect *
expect_of(int row)
{
    for (size_t i = 0; i < NEXPECT; i++)
        if (expect[i].row == row)
            return &expect[i];
    return NULL;
}

/* ---- the spy ---- */

static struct spy {
    int calls;
    struct wire_hdr h;
    unsigned char body[256];
    unsigned kind;
} spy;

static int
spy_fn(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
       const unsigned char *body)
{
    (void)vmd;
    spy.calls++;
    spy.h = *h;
    spy.kind = from->kind;
    if (h->len && h->len <= sizeof(spy.body))
        memcpy(spy.body, body, h->len);
    return 0;
}

static struct vmd_frame spy_table[VMD_FRAME_ROWS];

/* The real rules with the spy for every handler. */
static void
make_spy_table(void)
{
    memcpy(spy_table, vmd_frames, sizeof(spy_table));
    for (int i = 0; i < VMD_FRAME_ROWS; i++)
        if (spy_table[i].fn)
            spy_table[i].fn = spy_fn;
}

/* ---- a bare daemon, a client that enrolled, a peer bound to host 2 ---- */

#define OUR_TASK (VMD_HOST_TID(1) | 5)
#define PEER_TASK (VMD_HOST_TID(2) | 3)

struct fixture {
    struct vmd vmd;
    struct vmd_task task;
    struct vmd_client client;
    struct vmd_host host;
    struct vmd_peer peer;
    unsigned char body[256];
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    log_init("test", LOG_LVL_ERR);
    conf_defaults(&f->vmd.conf);
    vmd_init_lists(&f->vmd);
    f->vmd.index = 1;
    f->vmd.master_index = 1;
    f->vmd.is_master = 1;
    f->task.tid = OUR_TASK;
    f->client.vmd = &f->vmd;
    f->client.id = 7;
    f->client.task = &f->task;
    f->host.index = 2;
    f->peer.vmd = &f->vmd;
    f->peer.host = &f->host;
    f->peer.state = VMD_PEER_UP;
    snprintf(f->peer.name, sizeof(f->peer.name), "hostB");
    make_spy_table();
    memset(&spy, 0, sizeof(spy));
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    conf_free(&f->vmd.conf);
    free(f);
    return 0;
}

/* A well-formed sender of each kind. */
static struct vmd_from
sender(struct fixture *f, unsigned kind)
{
    struct vmd_from from = { .kind = kind };
    if (kind == C) {
        from.client = &f->client;
        from.client_id = f->client.id;
    } else {
        from.peer = &f->peer;
        from.host = f->host.index;
        from.client_id = kind == R ? 9 : 0;
    }
    return from;
}

/* A frame of row `row` that satisfies every flag, with len body bytes. */
static struct wire_hdr
frame(int row, unsigned kind, uint32_t len)
{
    struct wire_hdr h = { .version = WIRE_VERSION, .len = len, .id = 42 };
    h.type = (uint8_t)(row == VMD_FRAME_RELAY_REPLY ? WIRE_T_RELAY : row);
    h.flags = row == VMD_FRAME_RELAY_REPLY ? VMD_RELAY_REPLY : 0;
    h.src = kind == C ? 0 : PEER_TASK;
    h.dst = OUR_TASK;
    return h;
}

static int
send_as(struct fixture *f, const struct vmd_from *from, const struct wire_hdr *h)
{
    spy.calls = 0;
    return vmd_dispatch(&f->vmd, spy_table, from, h, f->body);
}

/* ---- the table against the rules ---- */

static void
test_vmd_dispatch_table_matches_the_rules(void **state)
{
    (void)state;
    for (int row = 0; row < VMD_FRAME_ROWS; row++) {
        const struct vmd_frame *t = &vmd_frames[row];
        const struct expect *e = expect_of(row);
        if (e == NULL) {
            if (t->fn != NULL)
                fail_msg("row %d (%s) has a handler but no rule", row, t->name);
            continue;
        }
        if (t->fn == NULL)
            fail_msg("row %d has a rule but no handler", row);
        if (t->from != e->from || t->min_len != e->min_len || t->flags != e->flags)
            fail_msg("row %d (%s): from %#x len %u flags %#x; expected %#x %u %#x", row, t->name,
                     t->from, t->min_len, t->flags, e->from, e->min_len, e->flags);
        assert_non_null(t->name);
    }
}

/* Flags that only make sense together, and only for who sends the row. */
static void
test_vmd_dispatch_table_flags_are_consistent(void **state)
{
    (void)state;
    for (int row = 0; row < VMD_FRAME_ROWS; row++) {
        const struct vmd_frame *t = &vmd_frames[row];
        if (t->fn == NULL)
            continue;
        if ((t->flags & VMD_F_STAMP_BODY) && t->min_len < 4)
            fail_msg("%s stamps a body word it may not have", t->name);
        if ((t->flags & VMD_F_STAMP_SRC) && !(t->flags & VMD_F_TASK))
            fail_msg("%s stamps the tid of a client that may have none", t->name);
        if ((t->flags & (VMD_F_TASK | VMD_F_STAMP_SRC | VMD_F_TASK_CTX)) && !(t->from & C))
            fail_msg("%s has client flags but no client may send it", t->name);
        if ((t->flags & (VMD_F_BOUND | VMD_F_OWN_SRC)) && !(t->from & (S | D)))
            fail_msg("%s has daemon flags but no daemon may send it", t->name);
        if ((t->flags & VMD_F_MASTER) && !(t->from & (C | R)))
            fail_msg("%s goes to the master but no client asks for it", t->name);
    }
}

/* The load sample's fixed length is what wire_load_put writes. */
static void
test_vmd_dispatch_load_length_is_a_sample(void **state)
{
    struct wire_wbuf b;
    struct wire_load l;
    (void)state;
    wire_load_unknown(&l);
    wire_wbuf_init(&b);
    wire_load_put(&b, &l);
    assert_int_equal(b.err, 0);
    assert_int_equal(b.len, vmd_frames[WIRE_T_LOAD].min_len);
    wire_wbuf_free(&b);
}

/* ---- every frame type from every origin ---- */

static void
test_vmd_dispatch_every_type_from_every_origin(void **state)
{
    struct fixture *f = *state;
    int accepted = 0, refused = 0;
    for (int row = 0; row < VMD_FRAME_ROWS; row++) {
        const struct expect *e = expect_of(row);
        for (size_t k = 0; k < NORIGINS; k++) {
            unsigned kind = origins[k];
            struct vmd_from from = sender(f, kind);
            struct wire_hdr h = frame(row, kind, e ? e->min_len : 0);
            memset(f->body, 0, sizeof(f->body));
            int rc = send_as(f, &from, &h);
            int want = e != NULL && (e->from & kind);
            if (want) {
                if (rc != 0 || spy.calls != 1)
                    fail_msg("row %d from %s: refused (%d) but may send it", row,
                             vmd_from_name(kind), rc);
                assert_int_equal(spy.kind, kind);
                accepted++;
            } else {
                if (rc == 0 || spy.calls != 0)
                    fail_msg("row %d from %s: reached its handler (rc %d)", row,
                             vmd_from_name(kind), rc);
                refused++;
            }
        }
    }
    /* Every row of the rules was accepted from somewhere. */
    assert_true(accepted >= (int)NEXPECT);
    assert_true(refused > accepted);
}

static void
test_vmd_dispatch_refuses_unknown_types(void **state)
{
    struct fixture *f = *state;
    static const int unknown[] = { 0, 14, 31, 39, WIRE_T_REPLY, 67, 100, WIRE_T_MAX };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
        for (size_t k = 0; k < NORIGINS; k++) {
            struct vmd_from from = sender(f, origins[k]);
            struct wire_hdr h = frame(unknown[i], origins[k], 16);
            assert_int_equal(send_as(f, &from, &h), WIRE_EFRAME);
            assert_int_equal(spy.calls, 0);
        }
}

/* One byte short of its row's minimum never reaches the handler. */
static void
test_vmd_dispatch_refuses_short_bodies(void **state)
{
    struct fixture *f = *state;
    int checked = 0;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        if (e->min_len == 0)
            continue;
        for (size_t k = 0; k < NORIGINS; k++) {
            if (!(e->from & origins[k]))
                continue;
            struct vmd_from from = sender(f, origins[k]);
            memset(f->body, 0, sizeof(f->body));
            struct wire_hdr h = frame(e->row, origins[k], e->min_len - 1);
            assert_int_equal(send_as(f, &from, &h), WIRE_EFRAME);
            assert_int_equal(spy.calls, 0);
            h.len = e->min_len;
            assert_int_equal(send_as(f, &from, &h), 0);
            assert_int_equal(spy.calls, 1);
            checked++;
        }
    }
    assert_true(checked > 30);
}

/* ---- the flags ---- */

static void
test_vmd_dispatch_task_rows_need_an_enrolled_client(void **state)
{
    struct fixture *f = *state;
    f->client.task = NULL;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        if (!(e->from & C))
            continue;
        struct vmd_from from = sender(f, C);
        struct wire_hdr h = frame(e->row, C, e->min_len);
        int rc = send_as(f, &from, &h);
        if (e->flags & TASK) {
            assert_int_equal(rc, -EPERM);
            assert_int_equal(spy.calls, 0);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(spy.calls, 1);
        }
    }
}

/* A task never speaks for another: its tid replaces what it wrote. */
static void
test_vmd_dispatch_stamps_the_senders_tid(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        if (!(e->from & C) || !(e->flags & (SSRC | SBODY)))
            continue;
        struct vmd_from from = sender(f, C);
        struct wire_hdr h = frame(e->row, C, e->min_len);
        h.src = PEER_TASK;
        memset(f->body, 0xee, sizeof(f->body));
        assert_int_equal(send_as(f, &from, &h), 0);
        assert_int_equal(spy.calls, 1);
        if (e->flags & SSRC)
            assert_int_equal(spy.h.src, OUR_TASK);
        if (e->flags & SBODY)
            assert_int_equal(wire_be32_get(spy.body), OUR_TASK);
        /* The client's own bytes are left as they came. */
        assert_int_equal(f->body[0], 0xee);
    }
}

/* Before it enrolls, a client's queries carry tid 0. */
static void
test_vmd_dispatch_stamps_zero_before_enrolling(void **state)
{
    struct fixture *f = *state;
    f->client.task = NULL;
    struct vmd_from from = sender(f, C);
    struct wire_hdr h = frame(WIRE_T_GROUP_SIZE, C, 8);
    memset(f->body, 0xee, sizeof(f->body));
    assert_int_equal(send_as(f, &from, &h), 0);
    assert_int_equal(wire_be32_get(spy.body), 0);
}

/* A relaying daemon speaks only for its own tasks. */
static void
test_vmd_dispatch_relay_must_carry_its_own_tids(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        if (!(e->from & R) || !(e->flags & SBODY))
            continue;
        struct vmd_from from = sender(f, R);
        struct wire_hdr h = frame(e->row, R, e->min_len);
        wire_be32_put(f->body, OUR_TASK);          /* a task of host 1, not of host 2 */
        assert_int_equal(send_as(f, &from, &h), -EPERM);
        assert_int_equal(spy.calls, 0);
        wire_be32_put(f->body, PEER_TASK);
        assert_int_equal(send_as(f, &from, &h), 0);
        assert_int_equal(spy.calls, 1);
    }
}

static void
test_vmd_dispatch_refuses_the_daemons_contexts_from_tasks(void **state)
{
    struct fixture *f = *state;
    static const int rows[] = { WIRE_T_MSG, WIRE_T_DIRECT, WIRE_T_TASK_MCAST };
    for (size_t i = 0; i < 3; i++) {
        struct vmd_from from = sender(f, C);
        struct wire_hdr h = frame(rows[i], C, 4);
        h.ctx = WIRE_CTX_SYSTEM;
        assert_int_equal(send_as(f, &from, &h), -EPERM);
        assert_int_equal(spy.calls, 0);
        h.ctx = WIRE_CTX_OUTPUT;
        assert_int_equal(send_as(f, &from, &h), -EPERM);
        h.ctx = 0x40001;
        assert_int_equal(send_as(f, &from, &h), 0);
        assert_int_equal(spy.calls, 1);
    }
}

/* A daemon's link must be bound to a host, and its messages must come
 * from that host's tasks. */
static void
test_vmd_dispatch_daemon_rules(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        unsigned kind = (e->from & P) ? P : (e->from & M) ? M : (e->from & MB) ? MB : 0;
        if (kind == 0)
            continue;
        struct vmd_from from = sender(f, kind);
        struct wire_hdr h = frame(e->row, kind, e->min_len);
        f->peer.host = NULL;
        int rc = send_as(f, &from, &h);
        f->peer.host = &f->host;
        if (e->flags & (BOUND | OSRC)) {
            assert_int_equal(rc, -EPERM);
            assert_int_equal(spy.calls, 0);
        } else {
            assert_int_equal(rc, 0);
        }
        h.src = VMD_HOST_TID(3) | 1;
        rc = send_as(f, &from, &h);
        if (e->flags & OSRC) {
            assert_int_equal(rc, -EPERM);
            assert_int_equal(spy.calls, 0);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(spy.calls, 1);
        }
    }
}

/* A daemon that is not the master relays its client's request for the
 * master (here without a link to it: the client is told, no handler
 * runs), and takes no relayed requests itself. */
static void
test_vmd_dispatch_master_rows_relay_elsewhere(void **state)
{
    struct fixture *f = *state;
    f->vmd.is_master = 0;
    f->vmd.master_index = 3;
    for (size_t i = 0; i < NEXPECT; i++) {
        const struct expect *e = &expect[i];
        if (!(e->flags & MAST))
            continue;
        if (e->from & C) {
            struct vmd_from from = sender(f, C);
            struct wire_hdr h = frame(e->row, C, e->min_len);
            assert_int_equal(send_as(f, &from, &h), 0);
            assert_int_equal(spy.calls, 0);
        }
        struct vmd_from from = sender(f, R);
        struct wire_hdr h = frame(e->row, R, e->min_len);
        assert_int_equal(send_as(f, &from, &h), -EPERM);
        assert_int_equal(spy.calls, 0);
    }
    /* A barrier is gathered by the task's own daemon first. */
    struct vmd_from from = sender(f, C);
    struct wire_hdr h = frame(WIRE_T_GROUP_BARRIER, C, 12);
    assert_int_equal(send_as(f, &from, &h), 0);
    assert_int_equal(spy.calls, 1);
}

/* RELAY's answer is its own row: only the master sends it. */
static void
test_vmd_dispatch_relay_reply_has_its_own_row(void **state)
{
    struct fixture *f = *state;
    struct wire_hdr h = frame(WIRE_T_RELAY, M, 8);
    assert_int_equal(vmd_frame_row(&h), WIRE_T_RELAY);
    h.flags = VMD_RELAY_REPLY;
    assert_int_equal(vmd_frame_row(&h), VMD_FRAME_RELAY_REPLY);
    struct vmd_from master = sender(f, M), member = sender(f, MB);
    assert_int_equal(send_as(f, &master, &h), 0);
    assert_int_equal(spy.calls, 1);
    assert_int_equal(send_as(f, &member, &h), -EPERM);
    assert_int_equal(spy.calls, 0);
    h.flags = 0;
    assert_int_equal(send_as(f, &member, &h), 0);
    assert_int_equal(spy.calls, 1);
    assert_int_equal(send_as(f, &master, &h), -EPERM);
    assert_int_equal(spy.calls, 0);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_vmd_dispatch_table_matches_the_rules),
        T(test_vmd_dispatch_table_flags_are_consistent),
        T(test_vmd_dispatch_load_length_is_a_sample),
        T(test_vmd_dispatch_every_type_from_every_origin),
        T(test_vmd_dispatch_refuses_unknown_types),
        T(test_vmd_dispatch_refuses_short_bodies),
        T(test_vmd_dispatch_task_rows_need_an_enrolled_client),
        T(test_vmd_dispatch_stamps_the_senders_tid),
        T(test_vmd_dispatch_stamps_zero_before_enrolling),
        T(test_vmd_dispatch_relay_must_carry_its_own_tids),
        T(test_vmd_dispatch_refuses_the_daemons_contexts_from_tasks),
        T(test_vmd_dispatch_daemon_rules),
        T(test_vmd_dispatch_master_rows_relay_elsewhere),
        T(test_vmd_dispatch_relay_reply_has_its_own_row),
    };
    return cmocka_run_group_tests_name("vmd_dispatch", tests, NULL, NULL);
}
