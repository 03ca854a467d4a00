/*
 * test_vmd_hosts.c - daemon/vmd_hosts.c (the host table a non-master takes
 * from the master) and vmd_hoststart_expand() of daemon/vmd_hoststart.c.
 *
 * Each test gets a bare daemon: a zeroed struct vmd named "hostB" that
 * joined "hostA", with default configuration and its own libuv loop, but no
 * listener, socket, timers or signals (vmd_halt closes only handles that
 * were initialised).  Tables are built with wire_wbuf in the layout of
 * vmd_hosts_pack -- serial, master index, count, then per host index, name,
 * address, port, arch, speed, fingerprint -- and one test feeds the real
 * vmd_hosts_pack output through.  A table that fails any check must leave
 * every host, pointer and field as it was.
 *
 * Hosts with a higher index than ours are dialled; they get 127.0.0.1 and a
 * port bound by the fixture but never listened on, so the connect is
 * refused at once and the loop can be run to completion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "vmd.h"

#define FP_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define FP_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define FP_X "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

struct fixture {
    uv_loop_t loop;
    struct vmd *vmd;
    int dead_fd;                /* bound, never listening: connects are refused */
    int dead_port;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);

    if (f == NULL)
        return -1;
    log_init("test", LOG_LVL_ERR);
    if (uv_loop_init(&f->loop) != 0)
        return -1;
    f->vmd = calloc(1, sizeof(*f->vmd));
    if (f->vmd == NULL)
        return -1;
    struct vmd *vmd = f->vmd;
    conf_defaults(&vmd->conf);
    vmd->loop = &f->loop;
    vmd_init_lists(vmd);
    /* The real hooks: vmd_halt closes the links through them. */
    vmd_modules_install(vmd);
    snprintf(vmd->name, sizeof(vmd->name), "hostB");
    snprintf(vmd->master_name, sizeof(vmd->master_name), "hostA");
    snprintf(vmd->address, sizeof(vmd->address), "10.0.0.2");
    vmd->port = 7002;
    snprintf(vmd->fingerprint, sizeof(vmd->fingerprint), FP_B);
    vmd->is_master = 0;
    vmd->ready_fd = -1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->dead_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (f->dead_fd < 0 || bind(f->dead_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(f->dead_fd, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    f->dead_port = ntohs(sa.sin_port);
    *state = f;
    return 0;
}

static int
count_peers(const struct vmd *vmd)
{
    int n = 0;
    for (const struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next)
        n++;
    return n;
}

/* Run the loop until every peer is gone (connects refused), at most ~5 s. */
static void
run_until_no_peers(struct fixture *f)
{
    for (int i = 0; i < 5000 && count_peers(f->vmd) > 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (count_peers(f->vmd) > 0)
            usleep(1000);
    }
    assert_int_equal(count_peers(f->vmd), 0);
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    int rc = 0;

    /* The daemon's own way out: close everything, let close callbacks run. */
    vmd_halt(vmd, "test over");
    uv_run(&f->loop, UV_RUN_DEFAULT);
    if (count_peers(vmd) != 0)
        rc = -1;
    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i])
            vmd_host_free(vmd, vmd->hosts[i]);
    conf_free(&vmd->conf);
    /* Fails with UV_EBUSY if any handle was left open. */
    if (uv_loop_close(&f->loop) != 0)
        rc = -1;
    close(f->dead_fd);
    free(vmd);
    free(f);
    return rc;
}

/* ---- building tables ---- */

struct ent {
    uint32_t idx;
    const char *name;
    const char *addr;
    uint32_t port;
    const char *arch;
    uint32_t speed;
    const char *fp;
    size_t name_len;            /* nonzero: name is raw bytes of this length */
};

static void
pack_table(struct wire_wbuf *b, uint32_t serial, uint32_t master, uint32_t count,
           const struct ent *e, size_t n)
{
    wire_wbuf_init(b);
    wire_put_u32(b, serial);
    wire_put_u32(b, master);
    wire_put_u32(b, count);
    for (size_t i = 0; i < n; i++) {
        wire_put_u32(b, e[i].idx);
        if (e[i].name_len) {
            wire_put_u32(b, (uint32_t)e[i].name_len);
            wire_put_bytes(b, e[i].name, e[i].name_len);
        } else {
            wire_put_str(b, e[i].name);
        }
        wire_put_str(b, e[i].addr);
        wire_put_u32(b, e[i].port);
        wire_put_str(b, e[i].arch);
        wire_put_u32(b, e[i].speed);
        wire_put_str(b, e[i].fp);
    }
    assert_int_equal(b->err, 0);
}

/* Apply from an exactly sized heap copy, so any overread is seen. */
static int
apply(struct vmd *vmd, const void *data, size_t len)
{
    void *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, data, len);
    int rc = vmd_hosts_apply(vmd, copy, len);
    free(copy);
    return rc;
}

static int
apply_table(struct vmd *vmd, uint32_t serial, uint32_t master, const struct ent *e, size_t n)
{
    struct wire_wbuf b;
    pack_table(&b, serial, master, (uint32_t)n, e, n);
    int rc = apply(vmd, b.data, b.len);
    wire_wbuf_free(&b);
    return rc;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The first table: we are the highest index, so nobody is dialled. */
static const struct ent base[] = {
    { 1, "hostA", "10.0.0.1", 7001, "LINUX64", 1000, FP_A, 0 },
    { 2, "hostX", "10.0.0.9", 7009, "LINUXARM", 500, FP_X, 0 },
    { 3, "hostB", "10.0.0.2", 7002, "LINUX64", 1000, FP_B, 0 },
};

/* A later table that would change things if it were accepted. */
static const struct ent next_table[] = {
    { 1, "hostA", "10.0.0.1", 7101, "LINUX64", 2000, FP_A, 0 },
    { 2, "hostX", "10.0.0.19", 7109, "LINUX64", 600, FP_X, 0 },
    { 3, "hostB", "10.0.0.2", 7002, "LINUX64", 1000, FP_B, 0 },
};

/* Everything a rejected table must leave alone. */
struct snapshot {
    int index, master_index, halting, npeers;
    uint32_t serial;
    struct vmd_host *ptr[VMD_MAX_HOSTS + 1];
    struct vmd_host copy[8];
    int ncopy;
};

static void
take_snapshot(const struct vmd *vmd, struct snapshot *s)
{
    memset(s, 0, sizeof(*s));
    s->index = vmd->index;
    s->master_index = vmd->master_index;
    s->halting = vmd->halting;
    s->serial = vmd->table_serial;
    s->npeers = count_peers(vmd);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        s->ptr[i] = vmd->hosts[i];
        if (vmd->hosts[i]) {
            assert_true(s->ncopy < 8);
            s->copy[s->ncopy++] = *vmd->hosts[i];
        }
    }
}

static void
assert_unchanged(const struct vmd *vmd, const struct snapshot *s)
{
    int n = 0;
    assert_int_equal(vmd->index, s->index);
    assert_int_equal(vmd->master_index, s->master_index);
    assert_int_equal(vmd->halting, s->halting);
    assert_int_equal(vmd->table_serial, s->serial);
    assert_int_equal(count_peers(vmd), s->npeers);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        assert_ptr_equal(vmd->hosts[i], s->ptr[i]);
        if (vmd->hosts[i])
            assert_memory_equal(vmd->hosts[i], &s->copy[n++], sizeof(struct vmd_host));
    }
    assert_int_equal(n, s->ncopy);
}

static void
apply_base(struct vmd *vmd)
{
    assert_int_equal(apply_table(vmd, 1, 1, base, N(base)), 0);
    assert_int_equal(vmd->index, 3);
    assert_int_equal(vmd_host_count(vmd, 0), 3);
}

/* Apply a table that must be refused as malformed and change nothing. */
static void
assert_rejected(struct vmd *vmd, uint32_t serial, uint32_t master, uint32_t count,
                const struct ent *e, size_t n)
{
    struct snapshot s;
    struct wire_wbuf b;
    take_snapshot(vmd, &s);
    pack_table(&b, serial, master, count, e, n);
    assert_int_equal(apply(vmd, b.data, b.len), WIRE_EFRAME);
    wire_wbuf_free(&b);
    assert_unchanged(vmd, &s);
}

/* ---- vmd_hosts_apply: accepted tables ---- */

static void
test_vmd_hosts_apply_creates_hosts_and_sets_index(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;

    assert_int_equal(vmd->index, 0);
    assert_int_equal(apply_table(vmd, 7, 1, base, N(base)), 0);
    assert_int_equal(vmd->index, 3);
    assert_int_equal(vmd->master_index, 1);
    assert_int_equal(vmd->table_serial, 7);
    assert_int_equal(vmd_host_count(vmd, 0), 3);
    assert_int_equal(vmd_host_count(vmd, 1), 3);
    for (size_t i = 0; i < N(base); i++) {
        struct vmd_host *h = vmd->hosts[base[i].idx];
        assert_non_null(h);
        assert_ptr_equal(vmd_host_by_name(vmd, base[i].name), h);
        assert_int_equal(h->index, (int)base[i].idx);
        assert_string_equal(h->name, base[i].name);
        assert_string_equal(h->address, base[i].addr);
        assert_int_equal(h->port, (int)base[i].port);
        assert_string_equal(h->arch, base[i].arch);
        assert_int_equal(h->speed, (int)base[i].speed);
        assert_string_equal(h->fingerprint, base[i].fp);
        assert_int_equal(h->state, VMD_HOST_UP);
        /* All lower than or equal to ours: nobody dialled. */
        assert_null(h->peer);
    }
    assert_int_equal(count_peers(vmd), 0);
    assert_int_equal(vmd->halting, 0);
}

static void
test_vmd_hosts_apply_updates_existing_hosts_in_place(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;

    apply_base(vmd);
    struct vmd_host *a = vmd->hosts[1], *x = vmd->hosts[2], *b = vmd->hosts[3];
    assert_int_equal(apply_table(vmd, 2, 1, next_table, N(next_table)), 0);
    assert_ptr_equal(vmd->hosts[1], a);
    assert_ptr_equal(vmd->hosts[2], x);
    assert_ptr_equal(vmd->hosts[3], b);
    assert_int_equal(a->port, 7101);
    assert_int_equal(a->speed, 2000);
    assert_string_equal(x->address, "10.0.0.19");
    assert_int_equal(x->port, 7109);
    assert_string_equal(x->arch, "LINUX64");
    assert_int_equal(vmd->table_serial, 2);
}

static void
test_vmd_hosts_apply_dials_only_higher_indexes(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    const struct ent t[] = {
        { 1, "hostA", "10.0.0.1", 7001, "LINUX64", 1000, FP_A, 0 },
        { 2, "hostB", "10.0.0.2", 7002, "LINUX64", 1000, FP_B, 0 },
        { 3, "hostC", "127.0.0.1", (uint32_t)f->dead_port, "LINUX64", 1000, FP_X, 0 },
        { 9, "hostD", "127.0.0.1", (uint32_t)f->dead_port, "LINUX64", 1000, FP_X, 0 },
    };

    assert_int_equal(apply_table(vmd, 1, 1, t, N(t)), 0);
    assert_int_equal(vmd->index, 2);
    /* The lower index dials: we dial C and D, A dials us, never ourselves. */
    assert_null(vmd->hosts[1]->peer);
    assert_null(vmd->hosts[2]->peer);
    assert_non_null(vmd->hosts[3]->peer);
    assert_non_null(vmd->hosts[9]->peer);
    assert_true(vmd->hosts[3]->peer->outbound);
    assert_int_equal(vmd->hosts[3]->peer->state, VMD_PEER_CONNECTING);
    assert_string_equal(vmd->hosts[3]->peer->name, "hostC");
    assert_int_equal(count_peers(vmd), 2);

    /* Refused: the links close, the hosts stay listed, we stay up. */
    run_until_no_peers(f);
    assert_non_null(vmd->hosts[3]);
    assert_non_null(vmd->hosts[9]);
    assert_null(vmd->hosts[3]->peer);
    assert_null(vmd->hosts[9]->peer);
    assert_int_equal(vmd->halting, 0);
}

static void
test_vmd_hosts_apply_drops_vanished_and_moved_hosts(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    const struct ent first[] = {
        { 1, "hostA", "10.0.0.1", 7001, "LINUX64", 1000, FP_A, 0 },
        { 2, "hostB", "10.0.0.2", 7002, "LINUX64", 1000, FP_B, 0 },
        { 3, "hostX", "127.0.0.1", (uint32_t)f->dead_port, "LINUX64", 1000, FP_X, 0 },
        { 4, "hostC", "127.0.0.1", (uint32_t)f->dead_port, "LINUX64", 1000, FP_X, 0 },
    };
    /* C is gone, X moved from 3 to 5. */
    const struct ent second[] = {
        { 1, "hostA", "10.0.0.1", 7001, "LINUX64", 1000, FP_A, 0 },
        { 2, "hostB", "10.0.0.2", 7002, "LINUX64", 1000, FP_B, 0 },
        { 5, "hostX", "127.0.0.1", (uint32_t)f->dead_port, "LINUX64", 1000, FP_X, 0 },
    };

    assert_int_equal(apply_table(vmd, 1, 1, first, N(first)), 0);
    struct vmd_peer *pc = vmd->hosts[4]->peer;
    assert_non_null(pc);
    assert_non_null(vmd->hosts[3]->peer);
    assert_int_equal(apply_table(vmd, 2, 1, second, N(second)), 0);
    assert_null(vmd->hosts[3]);
    assert_null(vmd->hosts[4]);
    assert_null(vmd_host_by_name(vmd, "hostC"));
    assert_non_null(vmd->hosts[5]);
    assert_string_equal(vmd->hosts[5]->name, "hostX");
    assert_ptr_equal(vmd_host_by_name(vmd, "hostX"), vmd->hosts[5]);
    assert_int_equal(vmd_host_count(vmd, 0), 3);
    run_until_no_peers(f);
    assert_int_equal(vmd->halting, 0);
}

static void
test_vmd_hosts_apply_takes_what_vmd_hosts_pack_wrote(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct vmd *m = calloc(1, sizeof(*m));
    struct wire_wbuf b;

    assert_non_null(m);
    conf_defaults(&m->conf);
    m->conf.speed = 1234;
    snprintf(m->name, sizeof(m->name), "hostA");
    snprintf(m->address, sizeof(m->address), "10.0.0.1");
    m->port = 7001;
    snprintf(m->fingerprint, sizeof(m->fingerprint), FP_A);
    m->index = m->master_index = 1;
    m->table_serial = 41;
    struct vmd_host *ha = vmd_host_new(m, "hostA", 1);
    struct vmd_host *hb = vmd_host_new(m, "hostB", 0);     /* lowest free: 2 */
    struct vmd_host *hc = vmd_host_new(m, "hostC", 7);
    assert_non_null(ha);
    assert_non_null(hb);
    assert_non_null(hc);
    assert_int_equal(hb->index, 2);
    assert_null(vmd_host_new(m, "dup", 7));                 /* index taken */
    ha->state = hb->state = VMD_HOST_UP;
    snprintf(hb->address, sizeof(hb->address), "10.0.0.2");
    hb->port = 7002;
    snprintf(hb->fingerprint, sizeof(hb->fingerprint), FP_B);
    snprintf(hc->address, sizeof(hc->address), "127.0.0.1");
    hc->port = f->dead_port;

    /* Hosts that are up only: C is still starting. */
    wire_wbuf_init(&b);
    vmd_hosts_pack(m, &b, NULL);
    assert_int_equal(b.err, 0);
    assert_int_equal(apply(vmd, b.data, b.len), 0);
    wire_wbuf_free(&b);
    assert_int_equal(vmd->index, 2);
    assert_int_equal(vmd->table_serial, 41);
    assert_int_equal(vmd_host_count(vmd, 0), 2);
    assert_string_equal(vmd->hosts[1]->address, "10.0.0.1");
    assert_int_equal(vmd->hosts[1]->port, 7001);
    assert_int_equal(vmd->hosts[1]->speed, 1234);
    assert_string_equal(vmd->hosts[1]->fingerprint, FP_A);
    assert_string_equal(vmd->hosts[1]->arch, "LINUX64");
    assert_null(vmd->hosts[7]);
    assert_int_equal(count_peers(vmd), 0);

    /* With C as the host being added: it is listed and we dial it. */
    m->table_serial = 42;
    wire_wbuf_init(&b);
    vmd_hosts_pack(m, &b, hc);
    assert_int_equal(b.err, 0);
    assert_int_equal(apply(vmd, b.data, b.len), 0);
    wire_wbuf_free(&b);
    assert_int_equal(vmd_host_count(vmd, 0), 3);
    assert_non_null(vmd->hosts[7]);
    assert_string_equal(vmd->hosts[7]->name, "hostC");
    assert_non_null(vmd->hosts[7]->peer);
    run_until_no_peers(f);

    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (m->hosts[i])
            vmd_host_free(m, m->hosts[i]);
    conf_free(&m->conf);
    free(m);
}

static void
test_vmd_hosts_apply_takes_a_table_larger_than_its_stack_array(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    enum { NH = 150 };
    struct ent *t = calloc(NH, sizeof(*t));
    char (*names)[16] = calloc(NH, 16);

    assert_non_null(t);
    assert_non_null(names);
    for (int i = 0; i < NH; i++) {
        snprintf(names[i], 16, i == NH - 1 ? "hostB" : "n%03d", i);
        /* Scattered indexes, ours the highest, so nobody is dialled. */
        t[i] = (struct ent){ (uint32_t)(1 + i * 27), names[i], "10.1.0.1", 7000, "LINUX64",
                             1000, FP_X, 0 };
    }
    assert_int_equal(apply_table(vmd, 1, 1, t, NH), 0);
    assert_int_equal(vmd_host_count(vmd, 0), NH);
    assert_int_equal(vmd->index, 1 + (NH - 1) * 27);
    for (int i = 0; i < NH; i++)
        assert_string_equal(vmd->hosts[1 + i * 27]->name, names[i]);
    free(names);
    free(t);
}

static void
test_vmd_hosts_apply_accepts_fields_at_their_limits(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    char name[VMD_NAME_MAX], addr[VMD_ADDR_MAX], arch[16], fp[65];

    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    memset(addr, '1', sizeof(addr) - 1);
    addr[sizeof(addr) - 1] = '\0';
    memset(arch, 'A', sizeof(arch) - 1);
    arch[sizeof(arch) - 1] = '\0';
    memset(fp, 'f', sizeof(fp) - 1);
    fp[sizeof(fp) - 1] = '\0';
    const struct ent t[] = {
        { 1, name, addr, 0, arch, UINT32_MAX >> 1, fp, 0 },
        { VMD_MAX_HOSTS, "hostB", "10.0.0.2", 65535, "LINUX64", 0, "", 0 },
    };
    assert_int_equal(apply_table(vmd, UINT32_MAX, VMD_MAX_HOSTS, t, N(t)), 0);
    assert_int_equal(vmd->index, VMD_MAX_HOSTS);
    assert_int_equal(vmd->master_index, VMD_MAX_HOSTS);
    assert_string_equal(vmd->hosts[1]->name, name);
    assert_string_equal(vmd->hosts[1]->address, addr);
    assert_string_equal(vmd->hosts[1]->arch, arch);
    assert_string_equal(vmd->hosts[1]->fingerprint, fp);
    assert_int_equal(vmd->hosts[VMD_MAX_HOSTS]->port, 65535);
}

/* ---- vmd_hosts_apply: refused tables ---- */

static void
test_vmd_hosts_apply_rejects_bad_index(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const uint32_t bad[] = { 0, VMD_MAX_HOSTS + 1, 0x7fffffff, 0x80000000, UINT32_MAX };
    struct ent t[N(next_table)];

    apply_base(vmd);
    for (size_t i = 0; i < N(bad); i++) {
        /* In the first entry, and in the last (after good ones were parsed). */
        memcpy(t, next_table, sizeof(t));
        t[0].idx = bad[i];
        assert_rejected(vmd, 2, 1, N(t), t, N(t));
        memcpy(t, next_table, sizeof(t));
        t[2].idx = bad[i];
        assert_rejected(vmd, 2, 1, N(t), t, N(t));
    }
}

static void
test_vmd_hosts_apply_rejects_duplicate_index(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct ent t[N(next_table)];

    apply_base(vmd);
    memcpy(t, next_table, sizeof(t));
    t[1].idx = 1;                       /* X on A's index */
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    memcpy(t, next_table, sizeof(t));
    t[2].idx = 1;                       /* the last on the first's */
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
}

static void
test_vmd_hosts_apply_rejects_duplicate_name(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct ent t[N(next_table)];

    apply_base(vmd);
    memcpy(t, next_table, sizeof(t));
    t[1].name = "hostA";
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    memcpy(t, next_table, sizeof(t));
    t[1].name = "hostB";                /* ourselves twice */
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
}

static void
test_vmd_hosts_apply_rejects_empty_or_bad_strings(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct ent t[N(next_table)];
    char name[VMD_NAME_MAX + 1], addr[VMD_ADDR_MAX + 1], arch[17], fp[66];

    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    memset(addr, '1', sizeof(addr) - 1);
    addr[sizeof(addr) - 1] = '\0';
    memset(arch, 'A', sizeof(arch) - 1);
    arch[sizeof(arch) - 1] = '\0';
    memset(fp, 'f', sizeof(fp) - 1);
    fp[sizeof(fp) - 1] = '\0';

    apply_base(vmd);
    memcpy(t, next_table, sizeof(t));
    t[1].name = "";
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    /* One byte too long for each field: refused, never truncated. */
    memcpy(t, next_table, sizeof(t));
    t[1].name = name;
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    memcpy(t, next_table, sizeof(t));
    t[1].addr = addr;
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    memcpy(t, next_table, sizeof(t));
    t[1].arch = arch;
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    memcpy(t, next_table, sizeof(t));
    t[1].fp = fp;
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
    /* A NUL inside a name: "hostB\0evil" must not pass as hostB. */
    memcpy(t, next_table, sizeof(t));
    t[2].name = "hostB\0evil";
    t[2].name_len = 10;
    assert_rejected(vmd, 2, 1, N(t), t, N(t));
}

static void
test_vmd_hosts_apply_rejects_port_above_65535(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const uint32_t bad[] = { 65536, 0x80000000, UINT32_MAX };
    struct ent t[N(next_table)];

    apply_base(vmd);
    for (size_t i = 0; i < N(bad); i++) {
        memcpy(t, next_table, sizeof(t));
        t[1].port = bad[i];
        assert_rejected(vmd, 2, 1, N(t), t, N(t));
    }
}

static void
test_vmd_hosts_apply_rejects_bad_master_index(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;

    apply_base(vmd);
    assert_rejected(vmd, 2, 0, N(next_table), next_table, N(next_table));
    assert_rejected(vmd, 2, VMD_MAX_HOSTS + 1, N(next_table), next_table, N(next_table));
    assert_rejected(vmd, 2, UINT32_MAX, N(next_table), next_table, N(next_table));
}

static void
test_vmd_hosts_apply_rejects_trailing_bytes(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct snapshot s;
    struct wire_wbuf b;

    apply_base(vmd);
    take_snapshot(vmd, &s);
    pack_table(&b, 2, 1, N(next_table), next_table, N(next_table));
    wire_put_u8(&b, 0);
    assert_int_equal(apply(vmd, b.data, b.len), WIRE_EFRAME);
    assert_unchanged(vmd, &s);
    /* Without the extra byte the same table is taken. */
    assert_int_equal(apply(vmd, b.data, b.len - 1), 0);
    assert_int_equal(vmd->table_serial, 2);
    wire_wbuf_free(&b);
}

static void
test_vmd_hosts_apply_rejects_every_truncation(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct snapshot s;
    struct wire_wbuf b;

    apply_base(vmd);
    take_snapshot(vmd, &s);
    pack_table(&b, 2, 1, N(next_table), next_table, N(next_table));
    for (size_t len = 0; len < b.len; len++) {
        int rc = apply(vmd, b.data, len);
        if (rc != WIRE_EFRAME)
            fail_msg("a table cut to %zu of %zu bytes gave %d", len, b.len, rc);
        assert_unchanged(vmd, &s);
    }
    assert_int_equal(apply(vmd, b.data, b.len), 0);
    wire_wbuf_free(&b);
}

static void
test_vmd_hosts_apply_rejects_bad_count(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const uint32_t huge[] = { VMD_MAX_HOSTS + 1, 0x10000, 0x80000000, UINT32_MAX };

    apply_base(vmd);
    /* No hosts at all, with and without entries after the count. */
    assert_rejected(vmd, 2, 1, 0, NULL, 0);
    assert_rejected(vmd, 2, 1, 0, next_table, N(next_table));
    /* More than a VM can hold. */
    for (size_t i = 0; i < N(huge); i++)
        assert_rejected(vmd, 2, 1, huge[i], next_table, N(next_table));
    /* Counts that disagree with the entries: too many (on the stack and
     * on the heap) and too few. */
    assert_rejected(vmd, 2, 1, N(next_table) + 1, next_table, N(next_table));
    assert_rejected(vmd, 2, 1, 65, next_table, N(next_table));
    assert_rejected(vmd, 2, 1, VMD_MAX_HOSTS, next_table, N(next_table));
    assert_rejected(vmd, 2, 1, N(next_table) - 1, next_table, N(next_table));
}

static void
test_vmd_hosts_apply_leaves_vm_when_not_listed(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    struct snapshot s;

    apply_base(vmd);
    take_snapshot(vmd, &s);
    /* A and X only: we were dropped from the VM. */
    assert_int_equal(apply_table(vmd, 2, 1, next_table, 2), 0);
    assert_int_equal(vmd->halting, 1);
    /* The table itself is not taken. */
    s.halting = 1;
    assert_unchanged(vmd, &s);
    /* The loop ends: nothing of ours is left open. */
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_alive(&f->loop), 0);
}

/* ---- vmd_hoststart_expand ---- */

static void
expand_fixture(struct vmd *vmd)
{
    snprintf(vmd->exe, sizeof(vmd->exe), "/opt/lvm/bin/vmd");
    snprintf(vmd->home, sizeof(vmd->home), "/home/u/.liquidvm");
    vmd->conf_path[0] = '\0';
    vmd->conf.log_level = CONF_LOG_INFO;
}

static void
test_vmd_hoststart_expand_substitutes_each_escape(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    char out[8192];

    expand_fixture(vmd);
    assert_int_equal(vmd_hoststart_expand(vmd, "ssh %h", "node3", out, sizeof(out)), 0);
    assert_string_equal(out, "ssh 'node3'");
    assert_int_equal(vmd_hoststart_expand(vmd, "from %m", "node3", out, sizeof(out)), 0);
    assert_string_equal(out, "from 'hostB'");
    assert_int_equal(vmd_hoststart_expand(vmd, "100%% %h%%", "n", out, sizeof(out)), 0);
    assert_string_equal(out, "100% 'n'%");
    assert_int_equal(vmd_hoststart_expand(vmd, "no escapes", "n", out, sizeof(out)), 0);
    assert_string_equal(out, "no escapes");
    assert_int_equal(vmd_hoststart_expand(vmd, "", "n", out, sizeof(out)), 0);
    assert_string_equal(out, "");
    /* A lone percent sign at the very end is kept. */
    assert_int_equal(vmd_hoststart_expand(vmd, "50%", "n", out, sizeof(out)), 0);
    assert_string_equal(out, "50%");
    /* Substituted text is not expanded again. */
    assert_int_equal(vmd_hoststart_expand(vmd, "%h", "a%hb%%", out, sizeof(out)), 0);
    assert_string_equal(out, "'a%hb%%'");

    assert_int_equal(vmd_hoststart_expand(vmd, "ssh -x %h %v", "node3", out, sizeof(out)), 0);
    assert_string_equal(out, "ssh -x 'node3' '/opt/lvm/bin/vmd' --daemon --join 'hostB' --name "
                             "'node3' --home '/home/u/.liquidvm' --log-level info "
                             "--master-address '10.0.0.2' --master-version '" LIQUIDVM_VERSION
                             "' --master-fingerprint '" FP_B "' --take-certs");
    snprintf(vmd->conf_path, sizeof(vmd->conf_path), "/etc/lvm/vmd.conf");
    vmd->conf.log_level = CONF_LOG_DEBUG;
    assert_int_equal(vmd_hoststart_expand(vmd, "%v", "node3", out, sizeof(out)), 0);
    assert_string_equal(out, "'/opt/lvm/bin/vmd' --daemon --join 'hostB' --name 'node3' --home "
                             "'/home/u/.liquidvm' --log-level debug -c '/etc/lvm/vmd.conf' "
                             "--master-address '10.0.0.2' --master-version '" LIQUIDVM_VERSION
                             "' --master-fingerprint '" FP_B "' --take-certs");
}

static void
test_vmd_hoststart_expand_rejects_unknown_escape(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const char *const bad[] = { "%x", "ssh %h %s", "%H", "%%%q", "% h" };
    char out[256];

    expand_fixture(vmd);
    for (size_t i = 0; i < N(bad); i++)
        assert_int_equal(vmd_hoststart_expand(vmd, bad[i], "n", out, sizeof(out)), -EINVAL);
}

static void
test_vmd_hoststart_expand_refuses_output_too_long(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const char *const tmpls[] = { "ssh %h", "%m%%x", "plain text", "%v" };

    expand_fixture(vmd);
    /* Every capacity below the one needed fails, writing nothing past it. */
    for (size_t t = 0; t < N(tmpls); t++) {
        char want[8192];
        assert_int_equal(vmd_hoststart_expand(vmd, tmpls[t], "node3", want, sizeof(want)), 0);
        size_t need = strlen(want) + 1;
        for (size_t cap = 1; cap <= need; cap++) {
            char *out = malloc(cap);
            assert_non_null(out);
            int rc = vmd_hoststart_expand(vmd, tmpls[t], "node3", out, cap);
            if (cap < need) {
                assert_int_equal(rc, -ENAMETOOLONG);
            } else {
                assert_int_equal(rc, 0);
                assert_string_equal(out, want);
            }
            free(out);
        }
    }

    /* Host names too long to quote, or whose quoting is too long. */
    char out[8192];
    char *host = malloc(6000);
    assert_non_null(host);
    memset(host, 'h', 5999);
    host[5999] = '\0';
    assert_int_equal(vmd_hoststart_expand(vmd, "%h", host, out, sizeof(out)), -ENAMETOOLONG);
    memset(host, '\'', 2000);
    host[2000] = '\0';
    assert_int_equal(vmd_hoststart_expand(vmd, "%h", host, out, sizeof(out)), -ENAMETOOLONG);
    free(host);

    /* A %v whose command line would not fit. */
    memset(vmd->home, 'd', sizeof(vmd->home) - 1);
    vmd->home[0] = '/';
    vmd->home[sizeof(vmd->home) - 1] = '\0';
    memset(vmd->exe, 'e', sizeof(vmd->exe) - 1);
    vmd->exe[0] = '/';
    vmd->exe[sizeof(vmd->exe) - 1] = '\0';
    assert_int_equal(vmd_hoststart_expand(vmd, "%v", "node3", out, sizeof(out)), -ENAMETOOLONG);
}

/* Run sh -c cmd in dir and return its standard output (malloc'ed). */
static char *
sh_output(const char *cmd, const char *dir)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (chdir(dir) != 0)
            _exit(126);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 16384;
    char *out = malloc(cap);
    assert_non_null(out);
    ssize_t n;
    while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    return out;
}

/*
 * Names that try to break out of the quoting: through the shell, each
 * substituted value must arrive as exactly one word, unchanged, and no
 * injected command may run (it would create a file in a scratch directory).
 */
static void
test_vmd_hoststart_expand_host_cannot_break_out_of_quoting(void **state)
{
    struct fixture *f = *state;
    struct vmd *vmd = f->vmd;
    static const char *const hosts[] = {
        "x'; touch pwned; echo '",
        "x' 'y",
        "'$(touch pwned)'",
        "`touch pwned`",
        "x\"; touch pwned; echo \"",
        "a\\'; touch pwned #",
        "x\ntouch pwned",
    };
    char dir[] = "/tmp/test_vmd_hosts.XXXXXX";
    char tmpl[64], cmd[8192], want[16384], marker[64];
    struct stat st;

    assert_non_null(mkdtemp(dir));
    snprintf(marker, sizeof(marker), "%s/pwned", dir);
    expand_fixture(vmd);
    snprintf(vmd->exe, sizeof(vmd->exe), "/opt/it's here/$(touch pwned)/vmd");
    snprintf(vmd->home, sizeof(vmd->home), "/home/u/`touch pwned`");
    snprintf(vmd->conf_path, sizeof(vmd->conf_path), "/etc/a b'c");
    for (size_t i = 0; i < N(hosts); i++) {
        snprintf(tmpl, sizeof(tmpl), "printf '[%%%%s]' %%h %%m");
        assert_int_equal(vmd_hoststart_expand(vmd, tmpl, hosts[i], cmd, sizeof(cmd)), 0);
        char *out = sh_output(cmd, dir);
        snprintf(want, sizeof(want), "[%s][hostB]", hosts[i]);
        assert_string_equal(out, want);
        free(out);

        /* %v's words go through ssh, whose remote shell parses them again:
         * one a shell would read (a quote, a space, $, `) is refused, not
         * quoted once. */
        assert_int_equal(vmd_hoststart_expand(vmd, "printf '[%%s]' %v", hosts[i], cmd, sizeof(cmd)),
                         -EINVAL);
        assert_int_equal(stat(marker, &st), -1);
    }
    snprintf(vmd->exe, sizeof(vmd->exe), "/opt/lvm-1.0/bin/vmd");
    snprintf(vmd->home, sizeof(vmd->home), "/home/u@x/.liquidvm");
    snprintf(vmd->conf_path, sizeof(vmd->conf_path), "/etc/lvm/a,b=c+d~.conf");
    assert_int_equal(vmd_hoststart_expand(vmd, "printf '[%%s]' %v", "node3", cmd, sizeof(cmd)), 0);
    char *out = sh_output(cmd, dir);
    snprintf(want, sizeof(want),
             "[%s][--daemon][--join][hostB][--name][node3][--home][%s][--log-level][info][-c][%s]"
             "[--master-address][%s][--master-version][%s][--master-fingerprint][%s]"
             "[--take-certs]",
             vmd->exe, vmd->home, vmd->conf_path, vmd->address, LIQUIDVM_VERSION, vmd->fingerprint);
    assert_string_equal(out, want);
    free(out);
    /* A path with a space is refused too: the remote shell would split it. */
    snprintf(vmd->conf_path, sizeof(vmd->conf_path), "/etc/my lvm/vmd.conf");
    assert_int_equal(vmd_hoststart_expand(vmd, "ssh %h %v", "node3", cmd, sizeof(cmd)), -EINVAL);
    /* Where %v is the command itself (vmctl start --local's "%v --listen
     * ..."), only this shell parses it: quoted, any path goes. */
    snprintf(vmd->exe, sizeof(vmd->exe), "/bin/echo");
    snprintf(vmd->home, sizeof(vmd->home), "/h/$(touch pwned) it's");
    assert_int_equal(vmd_hoststart_expand(vmd, " %v --listen 127.0.0.1", "node3", cmd, sizeof(cmd)),
                     0);
    out = sh_output(cmd, dir);
    assert_non_null(strstr(out, "--home /h/$(touch pwned) it's --log-level"));
    assert_non_null(strstr(out, "-c /etc/my lvm/vmd.conf"));
    free(out);
    assert_int_equal(stat(marker, &st), -1);
    assert_int_equal(vmd_hoststart_expand(vmd, "printf '[%%s]' %v", "node3", cmd, sizeof(cmd)),
                     -EINVAL);
    rmdir(dir);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_vmd_hosts_apply_creates_hosts_and_sets_index),
        T(test_vmd_hosts_apply_updates_existing_hosts_in_place),
        T(test_vmd_hosts_apply_dials_only_higher_indexes),
        T(test_vmd_hosts_apply_drops_vanished_and_moved_hosts),
        T(test_vmd_hosts_apply_takes_what_vmd_hosts_pack_wrote),
        T(test_vmd_hosts_apply_takes_a_table_larger_than_its_stack_array),
        T(test_vmd_hosts_apply_accepts_fields_at_their_limits),
        T(test_vmd_hosts_apply_rejects_bad_index),
        T(test_vmd_hosts_apply_rejects_duplicate_index),
        T(test_vmd_hosts_apply_rejects_duplicate_name),
        T(test_vmd_hosts_apply_rejects_empty_or_bad_strings),
        T(test_vmd_hosts_apply_rejects_port_above_65535),
        T(test_vmd_hosts_apply_rejects_bad_master_index),
        T(test_vmd_hosts_apply_rejects_trailing_bytes),
        T(test_vmd_hosts_apply_rejects_every_truncation),
        T(test_vmd_hosts_apply_rejects_bad_count),
        T(test_vmd_hosts_apply_leaves_vm_when_not_listed),
        T(test_vmd_hoststart_expand_substitutes_each_escape),
        T(test_vmd_hoststart_expand_rejects_unknown_escape),
        T(test_vmd_hoststart_expand_refuses_output_too_long),
        T(test_vmd_hoststart_expand_host_cannot_break_out_of_quoting),
    };
#undef T
    return cmocka_run_group_tests_name("vmd_hosts", tests, NULL, NULL);
}
