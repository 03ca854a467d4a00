/*
 * vmd_client.c - the local Unix socket that vmctl and the tasks use.
 *
 * The socket lives in LIQUIDVM_HOME/run, a directory only its owner can
 * enter, and every connection's peer uid is checked with SO_PEERCRED; its
 * pid is taken from there too, never from what the client says, as it is
 * the pid vmctl kill and halt signal (docs/architecture.md, Local clients).  Frames are plaintext; alloc_cb lends the tail
 * of the client's own frame buffer, capped at max_message.  Each frame goes
 * to vmd->on_frame (the dispatch table) as VMD_FROM_CLIENT; replies and
 * messages come back through vmd_client_send.  Flow control pauses a
 * client whose messages pile up for a host or a task.
 */
#define LOG_TAG "client"
#include "log.h"
#include "vmd.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct client_wreq {
    uv_write_t req;
    char *buf;
};

static void client_process(struct vmd_client *c);

static void
client_on_close(uv_handle_t *handle)
{
    struct vmd_client *c = handle->data;
    if (c->paused) {
        c->paused = 0;
        c->vmd->npaused--;
    }
    vmd_hooks_client_gone(c->vmd, c);
    vmd_list_remove(&c->link);
    wire_rx_free(&c->rx);
    struct vmd *vmd = c->vmd;
    free(c);
    /* Tasks paused for this one (it read too slowly) go on. */
    vmd_client_flow_check(vmd);
}

static void
client_on_shutdown(uv_shutdown_t *req, int status)
{
    struct vmd_client *c = req->data;
    (void)status;
    free(req);
    uv_close((uv_handle_t *)&c->pipe, client_on_close);
}

/* Close after whatever is queued has been written (a reply, then EOF). */
static void
client_close(struct vmd_client *c, const char *why)
{
    if (c->closing)
        return;
    c->closing = 1;
    if (why)
        log_debug("client %u: %s; closing", c->id, why);
    uv_read_stop((uv_stream_t *)&c->pipe);
    uv_shutdown_t *req = malloc(sizeof(*req));
    if (req) {
        req->data = c;
        if (uv_shutdown(req, (uv_stream_t *)&c->pipe, client_on_shutdown) == 0)
            return;
        free(req);
    }
    uv_close((uv_handle_t *)&c->pipe, client_on_close);
}


static void
client_on_write(uv_write_t *req, int status)
{
    struct client_wreq *w = vmd_container_of(req, struct client_wreq, req);
    struct vmd_client *c = req->handle->data;
    (void)status;
    free(w->buf);
    free(w);
    /* A task that reads again lets the tasks paused for it go on. */
    if (c->vmd->npaused > 0)
        vmd_client_flow_check(c->vmd);
}

static struct vmd_client *
client_by_id(struct vmd *vmd, uint32_t id)
{
    for (struct vmd_list *l = vmd->clients.next; l != &vmd->clients; l = l->next) {
        struct vmd_client *c = vmd_container_of(l, struct vmd_client, link);
        if (c->id == id)
            return c;
    }
    return NULL;
}

/*
 * One frame to a client.  When nothing waits in its queue the frame is
 * written at once from the caller's bytes (uv_try_write: no copy, no
 * request, no write callback and no re-arming of the socket for it); only
 * what the socket does not take is copied and queued behind, in order.
 */
int
vmd_client_send(struct vmd_client *c, const struct wire_hdr *h, const void *body, size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    struct wire_hdr hh = *h;
    size_t done = 0, left;

    if (c->closing)
        return -EPIPE;
    hh.len = (uint32_t)len;
    wire_hdr_pack(&hh, hdr);
    uv_buf_t now[2] = { uv_buf_init((char *)hdr, WIRE_HDR_LEN),
                        uv_buf_init((char *)(uintptr_t)body, (unsigned)len) };
    /* Any error (UV_EAGAIN: a queue or a full socket) leaves it to uv_write,
     * which reports a dead reader as before. */
    int n = uv_try_write((uv_stream_t *)&c->pipe, now, len ? 2 : 1);
    if (n > 0)
        done = (size_t)n;
    left = WIRE_HDR_LEN + len - done;
    if (left == 0)
        return 0;
    struct client_wreq *w = malloc(sizeof(*w));
    char *buf = malloc(left);
    if (w == NULL || buf == NULL) {
        free(w);
        free(buf);
        client_close(c, "out of memory for a frame");
        return -ENOMEM;
    }
    if (done < WIRE_HDR_LEN) {
        memcpy(buf, hdr + done, WIRE_HDR_LEN - done);
        if (len)
            memcpy(buf + WIRE_HDR_LEN - done, body, len);
    } else {
        memcpy(buf, (const char *)body + (done - WIRE_HDR_LEN), left);
    }
    w->buf = buf;
    uv_buf_t b = uv_buf_init(buf, (unsigned)left);
    if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, client_on_write) != 0) {
        free(buf);
        free(w);
        client_close(c, "write failed");
        return -EPIPE;
    }
    return 0;
}

int
vmd_client_reply(struct vmd *vmd, uint32_t client_id, uint32_t req_id, int status,
                 const struct wire_wbuf *body)
{
    struct vmd_client *c = client_by_id(vmd, client_id);
    size_t blen = body ? body->len : 0;
    if (c == NULL || c->closing)
        return -ENOENT;
    if (body && body->err)
        status = body->err, blen = 0;
    struct wire_hdr h = { .type = WIRE_T_REPLY, .src = VMD_HOST_TID(vmd->index), .tag = status,
                          .id = req_id };
    return vmd_client_send(c, &h, blen ? body->data : NULL, blen);
}

static void
client_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct vmd_client *c = handle->data;
    void *p;
    size_t avail, need = wire_rx_want(&c->rx), most = need > 65536 ? need : 65536;
    (void)suggested;
    /* The rest of a large frame in one read (wire_rx_want counts a body only
     * once its header passed the max_message check); else up to 64 KB. */
    if (wire_rx_reserve(&c->rx, need > 4096 ? need : 4096, &p, &avail) != 0) {
        buf->base = NULL;
        buf->len = 0;
        return;
    }
    buf->base = p;
    buf->len = avail > most ? most : avail;
}

size_t
vmd_host_backlog(struct vmd *vmd, int host)
{
    struct vmd_host *h = host > 0 && host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (h == NULL || host == vmd->index)
        return 0;
    return h->qbytes + (h->peer ? h->peer->queued : 0);
}

/* An enrolled client's task is live: vmd_task_end unlinks the two. */
size_t
vmd_task_backlog(struct vmd *vmd, uint32_t tid)
{
    for (struct vmd_list *l = vmd->clients.next; l != &vmd->clients; l = l->next) {
        struct vmd_client *c = vmd_container_of(l, struct vmd_client, link);
        if (c->task && c->task->tid == tid)
            return c->closing ? 0 : uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe);
    }
    return 0;
}

static size_t
backlog(struct vmd_client *c)
{
    return c->paused_tid ? vmd_task_backlog(c->vmd, c->paused_tid)
                         : vmd_host_backlog(c->vmd, c->paused_host);
}

/*
 * A task whose messages pile up for a slow or unreachable host, or for a
 * local task that does not read, stops being read (its pvm_send waits in
 * its socket, reading what comes meanwhile, so two tasks paused for each
 * other still drain each other) instead of the daemon dropping messages or
 * growing without bound (max_peer_queue in vmd.conf(5)).  The message that
 * crossed the line is already queued; nothing is lost.
 */
void
vmd_client_pause(struct vmd_client *c, int host, uint32_t tid)
{
    if (c->paused || c->closing)
        return;
    c->paused = 1;
    c->paused_host = host;
    c->paused_tid = tid;
    c->vmd->npaused++;
    uv_read_stop((uv_stream_t *)&c->pipe);
    if (tid)
        log_debug("task t%x paused: %zu bytes wait for task t%x (max_peer_queue %llu)",
                  c->task ? c->task->tid : 0, backlog(c), tid,
                  (unsigned long long)c->vmd->conf.max_peer_queue);
    else
        log_debug("task t%x paused: %zu bytes wait for host %d (max_peer_queue %llu)",
                  c->task ? c->task->tid : 0, backlog(c), host,
                  (unsigned long long)c->vmd->conf.max_peer_queue);
}

static void client_read_start(struct vmd_client *c);

void
vmd_client_flow_check(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    if (vmd->npaused == 0)
        return;
    for (l = vmd->clients.next; l != &vmd->clients; l = next) {
        next = l->next;
        struct vmd_client *c = vmd_container_of(l, struct vmd_client, link);
        if (!c->paused || c->closing || backlog(c) > vmd->conf.max_peer_queue / 2)
            continue;
        c->paused = 0;
        vmd->npaused--;
        log_debug("task t%x resumed", c->task ? c->task->tid : 0);
        client_read_start(c);
        /* Frames that came before the pause are handled first. */
        client_process(c);
    }
}

static void
client_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct vmd_client *c = s->data;

    (void)buf;
    if (c->closing || nread == 0)
        return;
    if (nread < 0) {
        client_close(c, nread == UV_ENOBUFS ? "out of memory" : "disconnected");
        return;
    }
    wire_rx_commit(&c->rx, (size_t)nread);
    client_process(c);
}

static void
client_process(struct vmd_client *c)
{
    struct wire_hdr h;
    const unsigned char *body;
    int rc = 0;

    while (!c->closing && !c->paused && (rc = wire_rx_next(&c->rx, &h, &body)) == 1) {
        struct vmd_from from = { .kind = VMD_FROM_CLIENT, .client = c, .client_id = c->id };
        if ((rc = c->vmd->on_frame(c->vmd, &from, &h, body)) != 0) {
            log_code(rc, "client %u: bad request type %u", c->id, h.type);
            client_close(c, "bad request");
            return;
        }
    }
    if (rc < 0) {
        log_code(rc, "client %u: bad frame", c->id);
        client_close(c, "bad frame");
    }
}

static void
client_on_connection(uv_stream_t *server, int status)
{
    struct vmd *vmd = server->data;
    struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
    socklen_t clen = sizeof(cred);
    uv_os_fd_t fd;
    unsigned quiet;

    /* A failed accept (EMFILE: out of descriptors) is told, at most once a
     * second: it repeats for as long as its cause lasts. */
    if (status < 0) {
        if (vmd_ratelimit_ok(&vmd->rl_local_accept, uv_now(vmd->loop), &quiet))
            log_warn("accept on the local socket: %s (%u more such errors since the last line)",
                     uv_strerror(status), quiet);
        return;
    }
    struct vmd_client *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        log_warn("accept on the local socket: out of memory");
        return;
    }
    c->vmd = vmd;
    c->id = ++vmd->next_client_id;
    wire_rx_init(&c->rx, (uint32_t)vmd->conf.max_message);
    uv_pipe_init(vmd->loop, &c->pipe, 0);
    c->pipe.data = c;
    vmd_list_insert(&vmd->clients, &c->link);
    if ((status = uv_accept(server, (uv_stream_t *)&c->pipe)) != 0) {
        if (vmd_ratelimit_ok(&vmd->rl_local_accept, uv_now(vmd->loop), &quiet))
            log_warn("accept on the local socket: %s (%u more such errors since the last line)",
                     uv_strerror(status), quiet);
        client_close(c, "accept failed");
        return;
    }
    if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != getuid()) {
        log_warn("local connection from uid %d refused: only uid %d may use this VM",
                 (int)cred.uid, (int)getuid());
        client_close(c, "wrong uid");
        return;
    }
    c->pid = (long)cred.pid;
    if (vmd->halting) {
        client_close(c, "halting");
        return;
    }
    /* Room for a large message in the socket, so it goes to the task in one
     * write from the frame buffer (vmd_client_send) rather than a copy
     * queued behind a ~200 KB first part.  Speed only: failure is fine. */
    int size = WIRE_SOCK_SNDBUF;
    (void)uv_send_buffer_size((uv_handle_t *)&c->pipe, &size);
    client_read_start(c);
}

static void
client_read_start(struct vmd_client *c)
{
    uv_read_start((uv_stream_t *)&c->pipe, client_alloc, client_on_read);
}

/* connect() to a local socket: 0, or -errno (-ECONNREFUSED: no listener). */
static int
socket_probe(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd, rc;
    vmd_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        return -errno;
    /* Non-blocking: a listener whose backlog is full answers EAGAIN, which
     * is alive, rather than stalling us. */
    rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

/* Another live daemon on this socket means a second vmd for the same name. */
static int
socket_in_use(const char *path)
{
    int rc = socket_probe(path);
    return rc == 0 || rc == -EAGAIN;
}

static int
socket_refused(const char *path)
{
    return socket_probe(path) == -ECONNREFUSED;
}

/*
 * Socket files in run/ that nobody listens on any more: a daemon or a task
 * killed with -9 cannot remove its own.  connect() tells them apart without
 * a pid file: ECONNREFUSED is a socket with no listener.  A socket is bound
 * a moment before it listens, so at start-up (settle) one refused is tried
 * again 20 ms later before it goes, and a daemon starting beside us keeps
 * its own.  Returns how many were removed.
 */
static int
sweep_stale(struct vmd *vmd, int settle)
{
    char dir[4200], p[4600], stale[16][256];
    int nstale = 0, removed = 0;
    snprintf(dir, sizeof(dir), "%s/run", vmd->home);
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && nstale < 16;) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || l >= sizeof(stale[0]) || strcmp(e->d_name + l - 5, ".sock") != 0)
            continue;
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p))
            continue;
        if (strcmp(p, vmd->sock_path) != 0 && socket_refused(p))
            vmd_strlcpy(stale[nstale++], e->d_name, sizeof(stale[0]));
    }
    closedir(d);
    if (settle && nstale > 0)
        usleep(20000);
    for (int i = 0; i < nstale; i++) {
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, stale[i]) >= sizeof(p))
            continue;
        if ((!settle || socket_refused(p)) && unlink(p) == 0) {
            log_info("removed %s: no daemon or task listens on it any more", p);
            removed++;
        }
    }
    return removed;
}

static int
write_master_file(struct vmd *vmd)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof(path), "%s/run/master", vmd->home);
    snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "w");
    if (fp == NULL)
        return -errno;
    fprintf(fp, "%s\n%ld\n", vmd->name, (long)getpid());
    if (fclose(fp) != 0 || rename(tmp, path) != 0) {
        int e = -errno;
        unlink(tmp);
        return e;
    }
    return 0;
}

int
vmd_client_listen(struct vmd *vmd)
{
    struct sockaddr_un sa;
    int rc;
    int n = snprintf(vmd->sock_path, sizeof(vmd->sock_path), "%s/run/%s.sock", vmd->home,
                     vmd->name);
    if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    if (socket_in_use(vmd->sock_path)) {
        fprintf(stderr, "vmd: a daemon named %s already runs in %s\n", vmd->name, vmd->home);
        return -EADDRINUSE;
    }
    unlink(vmd->sock_path);
    sweep_stale(vmd, 1);
    uv_pipe_init(vmd->loop, &vmd->local, 0);
    vmd->local.data = vmd;
    if ((rc = uv_pipe_bind(&vmd->local, vmd->sock_path)) != 0)
        return rc;
    chmod(vmd->sock_path, 0600);
    if ((rc = uv_listen((uv_stream_t *)&vmd->local, 64, client_on_connection)) != 0)
        return rc;
    if (vmd->is_master && (rc = write_master_file(vmd)) != 0)
        return rc;
    return 0;
}

static void
remove_master_file(struct vmd *vmd)
{
    char path[4200], name[VMD_NAME_MAX] = "";
    snprintf(path, sizeof(path), "%s/run/master", vmd->home);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return;
    if (fgets(name, sizeof(name), fp))
        name[strcspn(name, "\n")] = '\0';
    fclose(fp);
    /* Only our own: another VM's master may have taken the home since. */
    if (strcmp(name, vmd->name) == 0)
        unlink(path);
}

/* Halting: every client is closed after what is queued for it, and the
 * socket and the master file go. */
static void
client_halt(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->clients.next; l != &vmd->clients; l = next) {
        next = l->next;
        client_close(vmd_container_of(l, struct vmd_client, link), NULL);
    }
    if (vmd->local.loop && !uv_is_closing((uv_handle_t *)&vmd->local))
        uv_close((uv_handle_t *)&vmd->local, NULL);
    if (vmd->sock_path[0])
        unlink(vmd->sock_path);
    /* The master goes last: what dead daemons and tasks left goes with it. */
    if (vmd->is_master) {
        sweep_stale(vmd, 0);
        remove_master_file(vmd);
    }
}

const struct vmd_hooks vmd_client_hooks = {
    .module = "client",
    .halt = client_halt,
};
