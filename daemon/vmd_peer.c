/*
 * vmd_peer.c - TLS links between daemons: the glue between a libuv TCP
 * stream and the TLS engine of vmd_tls.c (STYLE.md 5.4, 5.5).
 *
 * read_cb feeds ciphertext to the engine, which appends plaintext to the
 * link's frame buffer; complete frames go to vmd->on_frame (the dispatch
 * table) with their origin: a daemon before its HELLO, the master, a
 * member talking to us the master, or another daemon.  After every feed or
 * write the engine's ciphertext is taken and handed to uv_write with a
 * request that owns it.  A link is freed only in the close callback of its
 * last handle; anything that goes wrong marks it CLOSING first, and the
 * modules hear of a lost link to a host through their link_lost hooks.
 * This file calls nothing above the host table, the halt and the clients'
 * flow control.
 *
 * Strangers (inbound links before TLS is up) are bounded (STYLE.md 5.5,
 * issue 30): at most vmd->stranger_cap of them in all and
 * limits.max_handshakes_per_address from one address, each cut after
 * VMD_HANDSHAKE_TIMEOUT_MS; they read into the daemon's one handshake
 * buffer and get their own 64 KiB only once their certificate is accepted;
 * the lines their refusals and timeouts cause are rate limited.
 *
 * Who dials whom: the master dials a host it is adding; otherwise the lower
 * host index dials the higher, and the heartbeat tick redials links that are
 * missing, so a refused or broken link heals while both hosts are listed.
 */
#define LOG_TAG "peer"
#include "log.h"
#include "vmd.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

struct peer_wreq {
    uv_write_t req;
    struct vmd_peer *peer;
    char *buf;
    size_t len;
};

static void peer_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void peer_process(struct vmd_peer *p);

static void
peer_on_close(uv_handle_t *handle)
{
    struct vmd_peer *p = handle->data;
    if (--p->handles > 0)
        return;
    struct vmd *vmd = p->vmd;
    vmd_list_remove(&p->link);
    if (p->tls)
        vmd_tls_free(p->tls);
    wire_rx_free(&p->rx);
    free(p->inbuf);
    free(p);
    if (vmd->halting_vm)
        vmd_halt_check(vmd);
}

static void
peer_close_handles(struct vmd_peer *p)
{
    if (!uv_is_closing((uv_handle_t *)&p->tcp))
        uv_close((uv_handle_t *)&p->tcp, peer_on_close);
    if (!uv_is_closing((uv_handle_t *)&p->timer))
        uv_close((uv_handle_t *)&p->timer, peer_on_close);
}

/* A stranger no longer: through TLS, or closing. */
static void
stranger_done(struct vmd_peer *p)
{
    if (p->stranger) {
        p->stranger = 0;
        p->vmd->nstrangers--;
    }
}

/* Close a stranger without a line of its own: a flood would fill the log.
 * The caller logged, rate limited. */
static void
peer_close_quiet(struct vmd_peer *p)
{
    p->state = VMD_PEER_CLOSING;
    stranger_done(p);
    uv_read_stop((uv_stream_t *)&p->tcp);
    peer_close_handles(p);
}

static void
peer_on_timeout(uv_timer_t *t)
{
    struct vmd_peer *p = t->data;
    struct vmd *vmd = p->vmd;
    unsigned quiet;
    if (p->state == VMD_PEER_CLOSING) {
        peer_close_handles(p);      /* the shutdown did not finish in time */
    } else if (p->stranger) {
        if (vmd_ratelimit_ok(&vmd->rl_refused, uv_now(vmd->loop), &quiet))
            log_warn("connection from %s did not finish the TLS handshake in %d s; closing "
                     "(%u more strangers refused or cut since the last such line)", p->addr,
                     VMD_HANDSHAKE_TIMEOUT_MS / 1000, quiet);
        peer_close_quiet(p);
    } else {
        vmd_peer_close(p, -ETIMEDOUT, "did not finish the handshake in time");
    }
}

static struct vmd_peer *
peer_new(struct vmd *vmd, int outbound)
{
    struct vmd_peer *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->vmd = vmd;
    p->outbound = outbound;
    uv_tcp_init(vmd->loop, &p->tcp);
    uv_timer_init(vmd->loop, &p->timer);
    p->tcp.data = p;
    p->timer.data = p;
    p->handles = 2;
    wire_rx_init(&p->rx, (uint32_t)vmd->conf.max_message);
    vmd_list_insert(&vmd->peers, &p->link);
    uv_timer_start(&p->timer, peer_on_timeout, VMD_HANDSHAKE_TIMEOUT_MS, 0);
    p->last_rx = uv_now(vmd->loop);
    return p;
}

static void
peer_on_plain(void *arg, const void *buf, size_t len)
{
    struct vmd_peer *p = arg;
    if (p->err == 0 && p->state != VMD_PEER_CLOSING)
        p->err = wire_rx_append(&p->rx, buf, len);
}

static void
peer_on_write(uv_write_t *req, int status)
{
    struct peer_wreq *w = vmd_container_of(req, struct peer_wreq, req);
    struct vmd_peer *p = w->peer;
    p->queued -= w->len;
    free(w->buf);
    free(w);
    vmd_client_flow_check(p->vmd);
    if (status < 0 && status != UV_ECANCELED && p->state != VMD_PEER_CLOSING)
        vmd_peer_close(p, status == UV_EPIPE ? -EPIPE : -ECONNRESET, "write failed");
}

/* Hand every ciphertext byte the engine has to uv_write. */
static int
peer_flush(struct vmd_peer *p)
{
    for (;;) {
        char *out;
        ssize_t n = vmd_tls_take(p->tls, &out);
        if (n <= 0)
            return (int)n;
        struct peer_wreq *w = malloc(sizeof(*w));
        if (w == NULL) {
            free(out);
            return -ENOMEM;
        }
        w->peer = p;
        w->buf = out;
        w->len = (size_t)n;
        uv_buf_t b = uv_buf_init(out, (unsigned)n);
        int rc = uv_write(&w->req, (uv_stream_t *)&p->tcp, &b, 1, peer_on_write);
        if (rc != 0) {
            free(out);
            free(w);
            return rc;
        }
        p->queued += (size_t)n;
    }
}

static void
peer_on_shutdown(uv_shutdown_t *req, int status)
{
    struct vmd_peer *p = req->data;
    (void)status;
    free(req);
    peer_close_handles(p);
}

void
vmd_peer_close(struct vmd_peer *p, int err, const char *why)
{
    struct vmd *vmd = p->vmd;
    if (p->state == VMD_PEER_CLOSING)
        return;
    enum vmd_peer_state was = p->state;
    p->state = VMD_PEER_CLOSING;
    stranger_done(p);
    p->err = err;
    if (err)
        log_code(err, "peer %s (%s): %s; closing", p->name[0] ? p->name : "?", p->addr, why);
    else
        log_info("peer %s (%s): %s; closing", p->name[0] ? p->name : "?", p->addr, why);

    struct vmd_host *h = p->host;
    if (h) {
        h->peer = NULL;
        p->host = NULL;
    }
    uv_read_stop((uv_stream_t *)&p->tcp);

    /* Let queued bytes (a HALT, an alert) leave before the socket closes,
     * but never wait on a stalled peer for longer than the timer allows. */
    if (was != VMD_PEER_CONNECTING && p->tls) {
        if (err == 0 && was == VMD_PEER_UP)
            vmd_tls_shutdown(p->tls);
        peer_flush(p);
        uv_shutdown_t *req = malloc(sizeof(*req));
        if (req) {
            req->data = p;
            if (uv_shutdown(req, (uv_stream_t *)&p->tcp, peer_on_shutdown) == 0) {
                uv_timer_start(&p->timer, peer_on_timeout, 2000, 0);
                goto lost;
            }
            free(req);
        }
    }
    peer_close_handles(p);
lost:
    if (h)
        vmd_hooks_link_lost(vmd, h, err);
    vmd_client_flow_check(vmd);
}

int
vmd_peer_send(struct vmd_peer *p, struct wire_hdr *h, const void *body, size_t len)
{
    return vmd_peer_send2(p, h, body, len, NULL, 0);
}

/* A frame whose body is in two pieces (a multicast's tid list and its
 * message), so that a large message is not copied to be framed. */
int
vmd_peer_send2(struct vmd_peer *p, struct wire_hdr *h, const void *a, size_t alen, const void *b,
               size_t blen)
{
    unsigned char hdr[WIRE_HDR_LEN];
    int rc;

    if (p->state != VMD_PEER_UP && p->state != VMD_PEER_HELLO)
        return WIRE_EHOSTFAIL;
    /* No cap on queued bytes here: the tasks feeding a full link are paused
     * (vmd_client_pause) rather than their messages dropped. */
    if (blen > p->vmd->conf.max_message || alen > p->vmd->conf.max_message - blen)
        return -EMSGSIZE;
    h->len = (uint32_t)(alen + blen);
    wire_hdr_pack(h, hdr);
    if ((rc = vmd_tls_write(p->tls, hdr, sizeof(hdr))) != 0 ||
        (alen && (rc = vmd_tls_write(p->tls, a, alen)) != 0) ||
        (blen && (rc = vmd_tls_write(p->tls, b, blen)) != 0) || (rc = peer_flush(p)) != 0) {
        vmd_peer_close(p, rc, "cannot send");
        return rc;
    }
    return 0;
}

/* Who we are, the link's first frame each way: version, name, index,
 * arch, speed, and our master, so that daemons of two VMs sharing a CA
 * never mistake each other for peers. */
static void
peer_send_hello(struct vmd_peer *p)
{
    struct vmd *vmd = p->vmd;
    struct wire_wbuf b;
    struct wire_hdr h = { .type = WIRE_T_HELLO, .src = VMD_HOST_TID(vmd->index) };

    wire_wbuf_init(&b);
    wire_put_u32(&b, WIRE_VERSION);
    wire_put_str(&b, vmd->name);
    wire_put_u32(&b, (uint32_t)vmd->index);
    wire_put_str(&b, "LINUX64");
    wire_put_u32(&b, (uint32_t)vmd->conf.speed);
    wire_put_str(&b, vmd->master_name);
    if (b.err == 0)
        vmd_peer_send(p, &h, b.data, b.len);
    wire_wbuf_free(&b);
}

/* TLS is up: settle who the peer is before any frame is believed. */
static int
peer_on_tls_up(struct vmd_peer *p)
{
    struct vmd *vmd = p->vmd;
    const char *cn = vmd_tls_peer_name(p->tls);
    if (cn == NULL)
        return WIRE_ENOCERT;
    if (!p->outbound) {
        struct vmd_host *h = vmd_host_by_name(vmd, cn);
        vmd_strlcpy(p->name, cn, sizeof(p->name));
        if (strcmp(cn, vmd->name) == 0) {
            log_warn("peer %s (%s): certificate names this host; refusing", cn, p->addr);
            return WIRE_ENAME;
        }
        if (h == NULL && !(vmd->index == 0 && strcmp(cn, vmd->master_name) == 0)) {
            log_warn("peer %s (%s): certificate name %s is not in the host table; refusing", cn,
                     p->addr, cn);
            return WIRE_ENAME;
        }
        /*
         * The name is not enough: the CA may have issued it again (a
         * superseded key, another VM under the same CA).  The certificate
         * must be the one the host announced (its READY line, the master's
         * table) -- or, for a daemon still joining, the one its hoststart
         * named for the master.  A host whose READY has not come yet dials
         * nobody: the master dials it.
         */
        const char *want = h != NULL ? h->fingerprint : vmd->master_fingerprint;
        if (want[0] == '\0' || strcmp(want, vmd_tls_peer_fingerprint(p->tls)) != 0) {
            log_warn("peer %s (%s): %s; refusing", cn, p->addr,
                     want[0] != '\0' ? "its certificate is not the one that host announced "
                                       "(another key under its name)"
                                     : "that host's certificate is not known yet (the master "
                                       "dials a host it adds)");
            return WIRE_EPINNED;
        }
    } else if (p->host && p->host->fingerprint[0] &&
               strcmp(p->host->fingerprint, vmd_tls_peer_fingerprint(p->tls)) != 0) {
        log_warn("peer %s (%s): certificate fingerprint differs from the one it announced; "
                 "refusing", p->name, p->addr);
        return WIRE_EBADCERT;
    }
    /* Authenticated: now it gets a receive buffer of its own. */
    if ((p->inbuf = malloc(VMD_PEER_INBUF)) == NULL)
        return -ENOMEM;
    stranger_done(p);
    p->state = VMD_PEER_HELLO;
    log_debug("peer %s (%s): TLS up", p->name, p->addr);
    peer_send_hello(p);
    return 0;
}

/*
 * Who a frame on this link comes from, for the dispatch table: a daemon
 * that has not said HELLO yet, the master (to us), a member (to us, the
 * master), or another daemon.  A daemon that was started for an add knows
 * the master by name until the master's table binds the link.
 */
static unsigned
peer_origin(const struct vmd_peer *p)
{
    const struct vmd *vmd = p->vmd;
    if (p->state != VMD_PEER_UP)
        return VMD_FROM_STRANGER;
    if (vmd->is_master)
        return VMD_FROM_MEMBER;
    if (p->host ? p->host->index == vmd->master_index
                : vmd->index == 0 && strcmp(p->name, vmd->master_name) == 0)
        return VMD_FROM_MASTER;
    return VMD_FROM_PEER;
}

static void
peer_process(struct vmd_peer *p)
{
    struct vmd *vmd = p->vmd;
    struct wire_hdr h;
    const unsigned char *body;
    int rc, n = 0;

    while (p->state != VMD_PEER_CLOSING && (rc = wire_rx_next(&p->rx, &h, &body)) == 1) {
        p->last_rx = uv_now(vmd->loop);
        /* The origin is worked out per frame: HELLO changes it. */
        struct vmd_from from = { .kind = peer_origin(p), .peer = p,
                                 .host = p->host ? p->host->index : -1 };
        if ((rc = vmd->on_frame(vmd, &from, &h, body)) != 0) {
            vmd_peer_close(p, rc, "sent a bad frame");
            return;
        }
        n++;
    }
    if (p->state != VMD_PEER_CLOSING && rc < 0)
        vmd_peer_close(p, rc, rc == -EMSGSIZE ? "announced a frame above max_message"
                                               : "sent a malformed frame header");
}

static void
peer_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct vmd_peer *p = handle->data;
    (void)suggested;
    /* Before TLS is up, the shared buffer: read_cb runs right after this
     * and the engine copies what it keeps. */
    buf->base = p->inbuf ? p->inbuf : p->vmd->hs_inbuf;
    buf->len = p->inbuf ? VMD_PEER_INBUF : VMD_HS_INBUF;
}

static void
peer_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct vmd_peer *p = s->data;
    int rc;

    if (p->state == VMD_PEER_CLOSING)
        return;
    if (nread == 0)
        return;
    if (nread < 0) {
        vmd_peer_close(p, nread == UV_EOF ? 0 : -ECONNRESET,
                       nread == UV_EOF ? "closed the connection" : "connection reset");
        return;
    }
    rc = vmd_tls_feed(p->tls, buf->base, (size_t)nread);
    int frc = peer_flush(p);
    if (rc < 0) {
        log_warn("peer %s (%s): TLS refused: %s", p->name[0] ? p->name : "?", p->addr,
                 vmd_tls_error(p->tls));
        vmd_peer_close(p, rc, "TLS handshake failed");
        return;
    }
    if (frc < 0) {
        vmd_peer_close(p, frc, "cannot write");
        return;
    }
    if (p->err) {
        vmd_peer_close(p, p->err, "out of memory for its frames");
        return;
    }
    if (p->state == VMD_PEER_HANDSHAKE && vmd_tls_handshake_done(p->tls)) {
        if ((rc = peer_on_tls_up(p)) != 0) {
            vmd_peer_close(p, rc, "refused after the handshake");
            return;
        }
    }
    if (p->state == VMD_PEER_HELLO || p->state == VMD_PEER_UP)
        peer_process(p);
    if (rc == 1 && p->state != VMD_PEER_CLOSING)
        vmd_peer_close(p, 0, "closed TLS");
}

static void
peer_set_addr(struct vmd_peer *p)
{
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    char ip[64] = "?";
    int port = 0;
    if (uv_tcp_getpeername(&p->tcp, (struct sockaddr *)&ss, &len) == 0 &&
        ss.ss_family == AF_INET) {
        uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    vmd_strlcpy(p->ip, ip, sizeof(p->ip));
    snprintf(p->addr, sizeof(p->addr), "%s:%d", ip, port);
}

/* Strangers from ip now. */
static int
strangers_from(struct vmd *vmd, const char *ip)
{
    int n = 0;
    for (struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next) {
        struct vmd_peer *q = vmd_container_of(l, struct vmd_peer, link);
        n += q->stranger && strcmp(q->ip, ip) == 0;
    }
    return n;
}

/*
 * The oldest stranger from p's address, to make way for p: a process on a
 * member's machine that holds its quota of silent connections would
 * otherwise lock that member's daemon out of its redials (it shares the
 * address).  A daemon's handshake takes milliseconds once it is admitted,
 * so only a flood faster than that can still keep it out.
 */
static struct vmd_peer *
stranger_oldest(struct vmd *vmd, const struct vmd_peer *p)
{
    struct vmd_peer *old = NULL;
    for (struct vmd_list *l = vmd->peers.next; l != &vmd->peers; l = l->next) {
        struct vmd_peer *q = vmd_container_of(l, struct vmd_peer, link);
        if (q != p && q->stranger && q->state != VMD_PEER_CLOSING && strcmp(q->ip, p->ip) == 0 &&
            (old == NULL || q->born < old->born))
            old = q;
    }
    return old;
}

/* Whether p, just accepted, may start a handshake; counts it if so. */
static int
stranger_admit(struct vmd *vmd, struct vmd_peer *p)
{
    unsigned quiet;
    const char *why = NULL;
    struct vmd_peer *old;

    p->born = uv_now(vmd->loop);
    if ((uint64_t)strangers_from(vmd, p->ip) >= vmd->conf.max_handshakes_per_address &&
        (old = stranger_oldest(vmd, p)) != NULL) {
        if (vmd_ratelimit_ok(&vmd->rl_refused, uv_now(vmd->loop), &quiet))
            log_warn("connection from %s: %llu from that address have not finished TLS "
                     "(limits.max_handshakes_per_address); the oldest is cut for it; %u more "
                     "strangers refused or cut since the last such line", p->addr,
                     (unsigned long long)vmd->conf.max_handshakes_per_address, quiet);
        peer_close_quiet(old);
    }
    if (vmd->nstrangers >= vmd->stranger_cap)
        why = "connections that have not finished TLS";
    else if ((uint64_t)strangers_from(vmd, p->ip) >= vmd->conf.max_handshakes_per_address)
        why = "such connections from that address";
    if (why == NULL) {
        p->stranger = 1;
        vmd->nstrangers++;
        return 1;
    }
    if (vmd_ratelimit_ok(&vmd->rl_refused, uv_now(vmd->loop), &quiet))
        log_warn("connection from %s refused: %d %s already (limits.max_handshakes %llu, "
                 "_per_address %llu, descriptors allow %d); %u more strangers refused or cut "
                 "since the last such line", p->addr, why[0] == 'c' ? vmd->nstrangers :
                 strangers_from(vmd, p->ip), why,
                 (unsigned long long)vmd->conf.max_handshakes,
                 (unsigned long long)vmd->conf.max_handshakes_per_address, vmd->stranger_cap,
                 quiet);
    return 0;
}

/*
 * Connections taken from the daemon port in one turn of the loop.  A flood
 * that reconnects as fast as it is refused would otherwise keep libuv's
 * accept loop going for as long as it lasts, and the local socket, the
 * peers' heartbeats and the tasks would wait: a connection left unaccepted
 * makes libuv stop watching the port until uv_accept, which accept_resume
 * does on the next turn, after the other handles have had theirs.
 */
#define VMD_ACCEPTS_PER_TURN 32

static void peer_on_connection(uv_stream_t *server, int status);

static void
accept_resume(uv_timer_t *t)
{
    struct vmd *vmd = t->data;

    vmd->accept_count = 0;
    vmd->accept_ms = uv_now(vmd->loop);
    peer_on_connection((uv_stream_t *)&vmd->listener, 0);
}

/* 0 when this connection may be taken now; else it waits for the timer. */
static int
accept_paced(struct vmd *vmd)
{
    if (uv_now(vmd->loop) != vmd->accept_ms) {
        vmd->accept_ms = uv_now(vmd->loop);
        vmd->accept_count = 0;
    }
    if (++vmd->accept_count <= VMD_ACCEPTS_PER_TURN)
        return 0;
    if (!uv_is_active((uv_handle_t *)&vmd->accept_timer))
        uv_timer_start(&vmd->accept_timer, accept_resume, 1, 0);
    return -1;
}

static void
peer_on_connection(uv_stream_t *server, int status)
{
    struct vmd *vmd = server->data;
    unsigned quiet;
    if (status >= 0 && accept_paced(vmd) != 0)
        return;
    if (status < 0) {
        /* EMFILE and the like repeat for as long as the flood lasts. */
        if (vmd_ratelimit_ok(&vmd->rl_accept, uv_now(vmd->loop), &quiet))
            log_warn("accept on the daemon port: %s (%u more such errors since the last line)",
                     uv_strerror(status), quiet);
        return;
    }
    struct vmd_peer *p = peer_new(vmd, 0);
    if (p == NULL) {
        log_warn("accept: out of memory");
        return;
    }
    if (uv_accept(server, (uv_stream_t *)&p->tcp) != 0 || vmd->halting) {
        peer_close_quiet(p);
        return;
    }
    peer_set_addr(p);
    if (!stranger_admit(vmd, p)) {
        peer_close_quiet(p);
        return;
    }
    p->tls = vmd_tls_new(vmd->tls, VMD_TLS_SERVER, NULL, peer_on_plain, p);
    if (p->tls == NULL) {
        vmd_peer_close(p, -ENOMEM, "no TLS session");
        return;
    }
    p->state = VMD_PEER_HANDSHAKE;
    uv_tcp_nodelay(&p->tcp, 1);
    uv_read_start((uv_stream_t *)&p->tcp, peer_alloc, peer_on_read);
    log_debug("connection from %s", p->addr);
}

/*
 * Strangers may hold at most half of the descriptors that are free now, so
 * that however many of them come, the local socket (vmctl, the tasks), the
 * spawned tasks' pipes and the peers always find one.  libuv keeps one more
 * in reserve for itself to shed connections when none is left.
 */
static void
stranger_cap_init(struct vmd *vmd)
{
    struct rlimit rl;
    int open = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        while (readdir(d) != NULL)
            open++;
        closedir(d);
        open -= 2;              /* "." and ".." (the DIR's own fd stays counted: slack) */
    }
    uint64_t cap = vmd->conf.max_handshakes;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t free_fds = rl.rlim_cur > (rlim_t)open ? (uint64_t)(rl.rlim_cur - open) : 0;
        if (free_fds / 2 < cap)
            cap = free_fds / 2;
    }
    vmd->stranger_cap = cap > 0 ? (int)cap : 1;
    if ((uint64_t)vmd->stranger_cap < vmd->conf.max_handshakes)
        log_info("at most %d connections may be in their TLS handshake at once "
                 "(limits.max_handshakes %llu): half of the %llu descriptors free under the "
                 "limit", vmd->stranger_cap, (unsigned long long)vmd->conf.max_handshakes,
                 (unsigned long long)(rl.rlim_cur - (rlim_t)open));
}

int
vmd_peer_listen(struct vmd *vmd)
{
    struct sockaddr_in sa;
    struct sockaddr_storage bound;
    int len = sizeof(bound), rc;

    if ((rc = uv_ip4_addr(vmd->conf.listen_address, vmd->conf.listen_port, &sa)) != 0)
        return rc;
    uv_tcp_init(vmd->loop, &vmd->listener);
    vmd->listener.data = vmd;
    uv_timer_init(vmd->loop, &vmd->accept_timer);
    vmd->accept_timer.data = vmd;
    stranger_cap_init(vmd);
    if ((rc = uv_tcp_bind(&vmd->listener, (struct sockaddr *)&sa, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&vmd->listener, 128, peer_on_connection)) != 0 ||
        (rc = uv_tcp_getsockname(&vmd->listener, (struct sockaddr *)&bound, &len)) != 0)
        return rc;
    vmd->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    return 0;
}

static void
peer_on_connect(uv_connect_t *req, int status)
{
    struct vmd_peer *p = req->data;
    if (p->state == VMD_PEER_CLOSING)
        return;
    if (status < 0) {
        vmd_peer_close(p, status == UV_ECONNREFUSED ? -ECONNREFUSED : -EHOSTUNREACH,
                       "cannot connect");
        return;
    }
    peer_set_addr(p);
    p->tls = vmd_tls_new(p->vmd->tls, VMD_TLS_CLIENT, p->name, peer_on_plain, p);
    if (p->tls == NULL) {
        vmd_peer_close(p, -ENOMEM, "no TLS session");
        return;
    }
    p->state = VMD_PEER_HANDSHAKE;
    uv_tcp_nodelay(&p->tcp, 1);
    int rc = vmd_tls_start(p->tls);
    if (rc == 0)
        rc = peer_flush(p);
    if (rc < 0) {
        vmd_peer_close(p, rc, "cannot start TLS");
        return;
    }
    uv_read_start((uv_stream_t *)&p->tcp, peer_alloc, peer_on_read);
}

int
vmd_peer_connect(struct vmd *vmd, struct vmd_host *h)
{
    struct sockaddr_in sa;
    int rc;

    if (vmd->halting)
        return WIRE_EHALTED;
    if ((rc = uv_ip4_addr(h->address, h->port, &sa)) != 0)
        return -EINVAL;
    struct vmd_peer *p = peer_new(vmd, 1);
    if (p == NULL)
        return -ENOMEM;
    vmd_strlcpy(p->name, h->name, sizeof(p->name));
    snprintf(p->addr, sizeof(p->addr), "%s:%d", h->address, h->port);
    p->host = h;
    h->peer = p;
    p->connect_req.data = p;
    if ((rc = uv_tcp_connect(&p->connect_req, &p->tcp, (struct sockaddr *)&sa,
                             peer_on_connect)) != 0) {
        p->host = NULL;
        h->peer = NULL;
        vmd_peer_close(p, -ECONNREFUSED, "cannot connect");
        return rc;
    }
    return 0;
}

void
vmd_peer_heartbeat_all(struct vmd *vmd)
{
    struct wire_hdr h = { .type = WIRE_T_HEARTBEAT, .src = VMD_HOST_TID(vmd->index) };
    struct vmd_list *l, *next;
    for (l = vmd->peers.next; l != &vmd->peers; l = next) {
        next = l->next;
        struct vmd_peer *p = vmd_container_of(l, struct vmd_peer, link);
        if (p->state == VMD_PEER_UP)
            vmd_peer_send(p, &h, NULL, 0);
    }
}

void
vmd_peer_check_liveness(struct vmd *vmd)
{
    uint64_t now = uv_now(vmd->loop);
    uint64_t limit = (uint64_t)(vmd->conf.host_timeout * 1000.0);
    struct vmd_list *l, *next;

    if (vmd->halting)
        return;
    for (l = vmd->peers.next; l != &vmd->peers; l = next) {
        next = l->next;
        struct vmd_peer *p = vmd_container_of(l, struct vmd_peer, link);
        if (p->state == VMD_PEER_UP && now - p->last_rx > limit) {
            char why[96];
            snprintf(why, sizeof(why), "silent for %.1f s (host_timeout %.1f s)",
                     (double)(now - p->last_rx) / 1000.0, vmd->conf.host_timeout);
            vmd_peer_close(p, -ETIMEDOUT, why);
        }
    }
    /* A daemon started for an add that no master ever reached leaves. */
    if (!vmd->is_master && vmd->index == 0 &&
        now - vmd->started_ms > (uint64_t)(vmd->conf.start_timeout * 1000.0)) {
        vmd_halt(vmd, "no master contacted this daemon within start_timeout");
        return;
    }
    /* Redial missing links to higher-indexed hosts. */
    for (int i = vmd->index + 1; vmd->index > 0 && i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *h = vmd->hosts[i];
        if (h && h->state == VMD_HOST_UP && h->peer == NULL && !vmd->is_master)
            vmd_peer_connect(vmd, h);
    }
}

/* Halting: every link closes after what is queued on it, and nobody new
 * gets in. */
static void
peer_halt(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->peers.next; l != &vmd->peers; l = next) {
        next = l->next;
        vmd_peer_close(vmd_container_of(l, struct vmd_peer, link), 0, "stopping");
    }
    if (vmd->listener.loop && !uv_is_closing((uv_handle_t *)&vmd->listener))
        uv_close((uv_handle_t *)&vmd->listener, NULL);
    if (vmd->accept_timer.loop && !uv_is_closing((uv_handle_t *)&vmd->accept_timer))
        uv_close((uv_handle_t *)&vmd->accept_timer, NULL);
}

const struct vmd_hooks vmd_peer_hooks = {
    .module = "peer",
    .halt = peer_halt,
};
