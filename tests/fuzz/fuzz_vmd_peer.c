/*
 * fuzz_vmd_peer.c - libFuzzer harness for the frames a peer daemon sends
 * after a valid handshake (daemon/vmd_dispatch.c and every handler behind
 * it: host table updates, relays, forwarded requests, group operations,
 * multicasts, load samples, task messages): a hostile peer that holds a
 * valid certificate of the cluster.
 *
 * Each input gets a fresh daemon, set up as tests/unit/test_vmd_dispatch.c
 * does (a bare struct vmd, its lists, its modules) plus a real loop, a
 * host table of three (host1 the master, host2, host3) and a link that is
 * UP: a struct vmd_peer over one end of a socketpair, with a real TLS
 * engine of the cluster (tls/ of a scratch CA made at start-up) so every
 * answer the daemon sends goes the whole way to bytes on the socket.
 * Input byte 0 picks who we are (the master, or host2) and who the link
 * is (the master, host3, or a daemon that has not said HELLO); the rest is
 * the byte stream of frames, cut and dispatched as vmd_peer.c does.  The
 * loop runs between frames, and at the end the daemon halts and the loop
 * runs until every handle has closed, so leaks show.
 *
 * Nothing leaves the process: uv_spawn runs no program (it execs a path
 * that cannot exist), uv_kill and uv_tcp_connect do nothing; they are
 * replaced here (a peer may ask us to spawn any program: that is PVM's
 * trust model, and no harness should run what a fuzzer writes).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "vmctl_ca.h"
#include "vmd.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- libuv calls that would reach outside the process ---- */

/* libuv's own uv_spawn, made to fail as it does for a missing program: the
 * child's exec of a path that cannot exist fails, and the handle is left
 * initialised for the caller's uv_close (a stub that only returned an error
 * left it uninitialised, and uv_close asserted: a finding of the stub). */
int
uv_spawn(uv_loop_t *loop, uv_process_t *handle, const uv_process_options_t *options)
{
    static int (*real)(uv_loop_t *, uv_process_t *, const uv_process_options_t *);
    static char nowhere[] = "/nonexistent/liquidvm-fuzz/no-such-program";
    char *args[] = { nowhere, NULL };
    uv_process_options_t o = *options;
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "uv_spawn");
    if (real == NULL)
        abort();
    o.file = nowhere;
    o.args = args;
    o.env = NULL;
    o.cwd = NULL;
    return real(loop, handle, &o);
}

int
uv_kill(int pid, int signum)
{
    (void)pid, (void)signum;
    return 0;
}

int
uv_tcp_connect(uv_connect_t *req, uv_tcp_t *handle, const struct sockaddr *addr, uv_connect_cb cb)
{
    (void)req, (void)handle, (void)addr, (void)cb;
    return UV_ECONNREFUSED;
}

/* ---- the cluster, made once ---- */

static char root[256];
static struct vmd_tls_ctx *ctx;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char ca[300], cert[320], key[320], err[512] = "";
    const char *dir = getenv("TMPDIR");
    (void)argc, (void)argv;
    log_init("fuzz", LOG_LVL_ERR);
    snprintf(root, sizeof(root), "%s/lvm-fuzz-peer.XXXXXX", dir && dir[0] ? dir : "/tmp");
    if (mkdtemp(root) == NULL)
        abort();
    snprintf(ca, sizeof(ca), "%s/tls", root);
    if (vmctl_ca_init(ca, 0, err, sizeof(err)) != 0 ||
        vmctl_cert_issue(ca, "host2", 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_vmd_peer: certificates: %s\n", err);
        abort();
    }
    snprintf(cert, sizeof(cert), "%s/host2.pem", ca);
    snprintf(key, sizeof(key), "%s/host2.key", ca);
    snprintf(ca, sizeof(ca), "%s/tls/ca.pem", root);
    if (vmd_tls_ctx_new(ca, cert, key, &ctx, err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz_vmd_peer: %s\n", err);
        abort();
    }
    snprintf(ca, sizeof(ca), "%s/run", root);
    mkdir(ca, 0700);
    return 0;
}

/* ---- one daemon per input ---- */

static void
on_plain(void *arg, const void *buf, size_t len)
{
    (void)arg, (void)buf, (void)len;
}

static struct vmd *
daemon_new(uv_loop_t *loop, int master)
{
    struct vmd *vmd = calloc(1, sizeof(*vmd));
    if (vmd == NULL)
        return NULL;
    vmd->loop = loop;
    conf_defaults(&vmd->conf);
    vmd->conf.max_message = 1 << 20;
    vmd_init_lists(vmd);
    vmd_modules_install(vmd);
    vmd_group_init(vmd);
    uv_timer_init(loop, &vmd->halt_timer);
    vmd->halt_timer.data = vmd;
    vmd->tls = ctx;
    vmd->ready_fd = -1;
    vmd->stranger_cap = 64;
    snprintf(vmd->home, sizeof(vmd->home), "%s", root);
    snprintf(vmd->name, sizeof(vmd->name), "%s", master ? "host1" : "host2");
    snprintf(vmd->master_name, sizeof(vmd->master_name), "host1");
    snprintf(vmd->address, sizeof(vmd->address), "127.0.0.1");
    vmd->index = master ? 1 : 2;
    vmd->master_index = 1;
    vmd->is_master = master;
    const char *names[] = { "host1", "host2", "host3" };
    for (int i = 0; i < 3; i++) {
        struct vmd_host *h = vmd_host_new(vmd, names[i], i + 1);
        if (h) {
            h->state = VMD_HOST_UP;
            snprintf(h->address, sizeof(h->address), "127.0.0.%d", i + 1);
            h->port = 7000 + i;
        }
    }
    return vmd;
}

/* The link from host `index`, UP, over one end of a socketpair. */
static struct vmd_peer *
link_new(struct vmd *vmd, int index, int fd)
{
    struct vmd_peer *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->vmd = vmd;
    uv_tcp_init(vmd->loop, &p->tcp);
    uv_timer_init(vmd->loop, &p->timer);
    p->tcp.data = p->timer.data = p;
    p->handles = 2;
    if (uv_tcp_open(&p->tcp, fd) != 0)
        close(fd);
    wire_rx_init(&p->rx, (uint32_t)vmd->conf.max_message);
    vmd_list_insert(&vmd->peers, &p->link);
    p->host = vmd->hosts[index];
    p->host->peer = p;
    snprintf(p->name, sizeof(p->name), "%s", p->host->name);
    snprintf(p->addr, sizeof(p->addr), "127.0.0.%d:%d", index, 7000 + index);
    p->tls = vmd_tls_new(ctx, VMD_TLS_CLIENT, p->name, on_plain, p);
    p->inbuf = malloc(VMD_PEER_INBUF);
    p->state = VMD_PEER_UP;
    p->last_rx = uv_now(vmd->loop);
    return p;
}

static int
origin(const struct vmd *vmd, const struct vmd_peer *p, int stranger)
{
    if (stranger)
        return VMD_FROM_STRANGER;
    if (vmd->is_master)
        return VMD_FROM_MEMBER;
    return p->host && p->host->index == vmd->master_index ? VMD_FROM_MASTER : VMD_FROM_PEER;
}

/* Is p still one of vmd's links, open?  (A handler may have closed it.) */
static int
link_open(struct vmd *vmd, struct vmd_peer *p)
{
    for (struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next)
        if (vmd_container_of(l, struct vmd_peer, link) == p)
            return p->state != VMD_PEER_CLOSING;
    return 0;
}

static void
drain(int fd)
{
    char buf[65536];
    while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uv_loop_t loop;
    int sv[2];

    if (size < 1 || uv_loop_init(&loop) != 0)
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        uv_loop_close(&loop);
        return 0;
    }
    int master = data[0] & 1, stranger = (data[0] >> 1 & 3) == 3;
    int from_index = master ? 3 : (data[0] & 2) ? 3 : 1;
    size_t chunk = (size_t)(data[0] >> 3) * 64 + 32;
    struct vmd *vmd = daemon_new(&loop, master);
    struct vmd_peer *p = vmd ? link_new(vmd, from_index, sv[0]) : NULL;
    if (p == NULL)
        abort();
    if (stranger)
        p->state = VMD_PEER_HELLO;
    data++, size--;
    for (size_t off = 0; off < size && link_open(vmd, p) && !vmd->halting;) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (wire_rx_append(&p->rx, data + off, n) != 0)
            break;
        off += n;
        struct wire_hdr h;
        const unsigned char *body;
        int rc;
        while (link_open(vmd, p) && !vmd->halting &&
               (rc = wire_rx_next(&p->rx, &h, &body)) == 1) {
            struct vmd_from from = { .kind = (unsigned)origin(vmd, p, p->state != VMD_PEER_UP),
                                     .peer = p, .host = p->host ? p->host->index : -1 };
            if (vmd->on_frame(vmd, &from, &h, body) != 0) {
                vmd_peer_close(p, WIRE_EFRAME, "sent a bad frame");
                break;
            }
        }
        uv_run(&loop, UV_RUN_NOWAIT);
        drain(sv[1]);
    }
    /* The end: everything closes, and every handle's close callback runs. */
    if (!vmd->halting)
        vmd_halt(vmd, "end of input");
    for (int i = 0; i < 1000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; i++)
        drain(sv[1]);
    close(sv[1]);
    for (int i = 0; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i])
            vmd_host_free(vmd, vmd->hosts[i]);
    if (uv_loop_close(&loop) != 0) {
        fprintf(stderr, "fuzz_vmd_peer: handles left open after the halt\n");
        abort();
    }
    conf_free(&vmd->conf);
    free(vmd);
    return 0;
}
