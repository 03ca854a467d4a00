/*
 * vmd_task.c - the PVM tasks of this host: their tids, their messages,
 * their exits and the notifications those trigger (DESIGN.md, Task ids and
 * Routing).
 *
 * A task is either a program started from the shell that enrolled over the
 * local socket, or a process we spawned (vmd_spawn.c), which has its tid
 * from the start and claims it when it enrolls; messages sent to it before
 * that wait in its queue.  A task ends at pvm_exit (its connection closes),
 * when its process dies, or when it is killed; then every task that asked
 * with pvm_notify(PvmTaskExit) gets a message.  Tids follow PVM's layout:
 * our host index in bits 18-29 and a local part in bits 0-17.
 *
 * Routing: a message goes task -> this daemon -> (the destination host's
 * daemon over its TLS link) -> task.  Links are ordered, so messages between
 * a pair of tasks keep their order.  The first daemon stamps the source tid,
 * so a task cannot speak for another; a daemon accepts from a peer only
 * messages whose source is on that peer's host (vmd_proto.c).
 */
#define LOG_TAG "task"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int direct_sock_path(struct vmd *vmd, uint32_t tid, char *out, size_t cap);
static void rwatch_noticed(struct vmd *vmd, const struct wire_hdr *h, const unsigned char *body);
static void rwatch_drop_watcher(struct vmd *vmd, uint32_t watcher);

struct vmd_task *
vmd_task_by_tid(struct vmd *vmd, uint32_t tid)
{
    for (struct vmd_list *l = vmd->tasks.next; l != &vmd->tasks; l = l->next) {
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (t->tid == tid && !t->ended)
            return t;
    }
    return NULL;
}

/* A new task with the next free tid, or NULL (no tid free, no memory). */
struct vmd_task *
vmd_task_new(struct vmd *vmd, uint32_t ptid, const char *name)
{
    uint32_t tid = 0;
    if (vmd->index == 0 || (uint64_t)vmd->ntasks >= vmd->conf.max_tasks)
        return NULL;
    for (uint32_t tries = 0; tries < VMD_TID_LOCAL_MASK && tid == 0; tries++) {
        vmd->next_task = (vmd->next_task % VMD_TID_LOCAL_MASK) + 1;
        uint32_t cand = VMD_HOST_TID(vmd->index) | vmd->next_task;
        if (vmd_task_by_tid(vmd, cand) == NULL)
            tid = cand;
    }
    struct vmd_task *t = tid ? calloc(1, sizeof(*t)) : NULL;
    if (t == NULL)
        return NULL;
    t->vmd = vmd;
    t->tid = tid;
    t->ptid = ptid;
    vmd_strlcpy(t->name, name, sizeof(t->name));
    vmd_list_insert(&vmd->tasks, &t->link);
    vmd->ntasks++;
    return t;
}

/* Free t once it has ended and its process (if ours) is gone. */
void
vmd_task_release(struct vmd_task *t)
{
    if (!t->ended || t->handles > 0)
        return;
    vmd_list_remove(&t->link);
    free(t);
}

static void
send_int_msg(struct vmd *vmd, uint32_t to, int32_t tag, int32_t ctx, const uint32_t *v, int n)
{
    unsigned char body[4 * 64];
    int k = n > 64 ? 64 : n;
    for (int i = 0; i < k; i++) {
        body[4 * i] = (unsigned char)(v[i] >> 24);
        body[4 * i + 1] = (unsigned char)(v[i] >> 16);
        body[4 * i + 2] = (unsigned char)(v[i] >> 8);
        body[4 * i + 3] = (unsigned char)v[i];
    }
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = VMD_HOST_TID(vmd->index), .dst = to,
                          .tag = tag, .ctx = ctx, .flags = WIRE_ENC_XDR, .len = (uint32_t)(4 * k) };
    vmd_task_deliver(vmd, &h, body);
}

void
vmd_task_end(struct vmd_task *t, const char *why)
{
    struct vmd *vmd = t->vmd;
    if (t->ended)
        return;
    t->ended = 1;
    vmd->ntasks--;
    log_info("task t%x (pid %ld, %s) %s", t->tid, t->pid, t->name[0] ? t->name : "-", why);
    vmd_qmsg_free_all(t->qhead);
    t->qhead = t->qtail = NULL;
    /* The notifications are PVM's: an XDR int, the tid that exited. */
    for (struct vmd_watch *w = t->watch, *n; w; w = n) {
        n = w->next;
        send_int_msg(vmd, w->tid, w->tag, w->ctx, &t->tid, 1);
        free(w);
    }
    t->watch = NULL;
    if (t->client) {
        t->client->task = NULL;
        t->client = NULL;
    }
    vmd_mbox_task_gone(vmd, t->tid);
    if (!vmd->halting)
        vmd_group_task_gone(vmd, t->tid);
    rwatch_drop_watcher(vmd, t->tid);
    /* The socket a task listened on for direct links, if it did. */
    char path[4200];
    if (direct_sock_path(vmd, t->tid, path, sizeof(path)) == 0)
        unlink(path);
    vmd_task_release(t);
}

void
vmd_task_client_gone(struct vmd *vmd, struct vmd_client *c)
{
    (void)vmd;
    if (c->task)
        vmd_task_end(c->task, "left the VM");
}

int
vmd_task_enroll(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    uint32_t pid, parent, claim = 0;
    char name[256];
    struct wire_wbuf b;
    struct vmd_task *t = NULL;
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &pid)) || (rc = wire_get_u32(&r, &parent)) ||
        (rc = wire_get_str(&r, name, sizeof(name))))
        return rc;
    if (r.pos < r.len && (rc = wire_get_u32(&r, &claim)) != 0)
        return rc;
    if (c->task != NULL)
        return WIRE_EFRAME;     /* enrolls once */
    if (vmd->index == 0 || vmd->halting || vmd->halting_vm) {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENOVM, NULL);
        return 0;
    }
    if (claim) {
        /* A task we spawned takes the tid pvm_spawn already returned. */
        t = vmd_task_by_tid(vmd, claim);
        if (t == NULL || !t->spawned || t->client) {
            log_warn("pid %u claims tid t%x, which is not one of our spawned tasks", pid, claim);
            vmd_client_reply(vmd, c->id, h->id, WIRE_ENOTASK, NULL);
            return 0;
        }
    } else {
        t = vmd_task_new(vmd, parent, name);
        if (t == NULL) {
            vmd_client_reply(vmd, c->id, h->id, -EAGAIN, NULL);
            return 0;
        }
        t->pid = (long)pid;
    }
    t->client = c;
    c->task = t;
    log_info("task t%x enrolled: pid %u, %s, parent t%x", t->tid, pid, name[0] ? name : "-",
             t->ptid);
    wire_wbuf_init(&b);
    wire_put_u32(&b, t->tid);
    wire_put_u32(&b, t->ptid);
    wire_put_u64(&b, vmd->conf.max_message);   /* libpvm3 refuses larger messages itself */
    vmd_client_reply(vmd, c->id, h->id, 0, &b);
    wire_wbuf_free(&b);
    /* What was sent to it before it connected, in order. */
    for (struct vmd_qmsg *q = t->qhead, *n; q; q = n) {
        n = q->next;
        vmd_client_send(c, &q->h, q->body, q->h.len);
        free(q->body);
        free(q);
    }
    t->qhead = t->qtail = NULL;
    t->qbytes = 0;
    return 0;
}

void
vmd_qmsg_free_all(struct vmd_qmsg *q)
{
    for (struct vmd_qmsg *n; q; q = n) {
        n = q->next;
        free(q->body);
        free(q);
    }
}

static struct vmd_qmsg *
qmsg_new(const struct wire_hdr *h, const void *body)
{
    struct vmd_qmsg *q = calloc(1, sizeof(*q));
    if (q == NULL || (h->len && (q->body = malloc(h->len)) == NULL)) {
        free(q);
        return NULL;
    }
    q->h = *h;
    if (h->len)
        memcpy(q->body, body, h->len);
    return q;
}

/* Held in order for a host whose link is being made; the tasks that feed it
 * are paused once max_peer_queue bytes wait (vmd_task_route). */
static void
hold(struct vmd *vmd, struct vmd_host *dh, const struct wire_hdr *h, const void *body)
{
    struct vmd_qmsg *q;
    (void)vmd;
    if ((q = qmsg_new(h, body)) == NULL) {
        log_warn("message t%x -> t%x: out of memory holding it for host %s; dropped", h->src,
                 h->dst, dh->name);
        return;
    }
    if (dh->qtail)
        dh->qtail->next = q;
    else
        dh->qhead = q;
    dh->qtail = q;
    dh->qbytes += h->len;
}

/* The link to h is up: send what waited for it. */
void
vmd_task_flush_host(struct vmd *vmd, struct vmd_host *h)
{
    while (h->qhead && h->peer && h->peer->state == VMD_PEER_UP) {
        struct vmd_qmsg *q = h->qhead;
        h->qhead = q->next;
        if (h->qhead == NULL)
            h->qtail = NULL;
        h->qbytes -= q->h.len;
        int rc = vmd_peer_send(h->peer, &q->h, q->body, q->h.len);
        if (rc != 0)
            log_code(rc, "message t%x -> t%x: cannot forward to %s", q->h.src, q->h.dst,
                     h->name);
        free(q->body);
        free(q);
    }
    vmd_client_flow_check(vmd);
}

/* Deliver a message to a task of this host, or hold it until it connects. */
static void
deliver_local(struct vmd *vmd, struct wire_hdr *h, const void *body)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, h->dst);
    if (t == NULL) {
        log_debug("message t%x -> t%x tag %d: no such task; dropped", h->src, h->dst, h->tag);
        return;
    }
    if (t->client) {
        vmd_client_send(t->client, h, body, h->len);
        return;
    }
    if (t->qbytes + h->len > vmd->conf.max_peer_queue) {
        log_warn("task t%x has not connected and holds %zu bytes; message from t%x dropped",
                 t->tid, t->qbytes, h->src);
        return;
    }
    struct vmd_qmsg *q = qmsg_new(h, body);
    if (q == NULL) {
        log_warn("out of memory holding a message for t%x", t->tid);
        return;
    }
    if (t->qtail)
        t->qtail->next = q;
    else
        t->qhead = q;
    t->qtail = q;
    t->qbytes += h->len;
}

/* Send a message to any task of the VM: here, or over the link to its host. */
void
vmd_task_deliver(struct vmd *vmd, struct wire_hdr *h, const void *body)
{
    int host = VMD_TID_HOST(h->dst);
    if (host == vmd->index) {
        deliver_local(vmd, h, body);
        return;
    }
    struct vmd_host *dh = host > 0 && host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (dh == NULL) {
        log_debug("message t%x -> t%x: host %d is not in the VM; dropped", h->src, h->dst, host);
        return;
    }
    if (dh->peer == NULL || dh->peer->state != VMD_PEER_UP || dh->qhead) {
        /* The link is being made (a new host, a redial): hold the message,
         * in order, until it is up; the host leaving the VM drops them. */
        hold(vmd, dh, h, body);
        return;
    }
    int rc = vmd_peer_send(dh->peer, h, body, h->len);
    if (rc != 0)
        log_code(rc, "message t%x -> t%x: cannot forward to %s", h->src, h->dst, dh->name);
}

/*
 * A MSG or DIRECT frame, from a local task (its src stamped by the
 * dispatcher) or from a peer (for its own tasks).  Messages to a task that
 * does not exist are dropped, as PVM drops them.
 */
int
vmd_msg_route(struct vmd *vmd, const struct vmd_from *src, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct vmd_client *from = src->kind == VMD_FROM_CLIENT ? src->client : NULL;
    struct wire_hdr m = *h;
    if ((m.dst & VMD_TID_LOCAL_MASK) == 0 || VMD_TID_HOST(m.dst) == 0)
        return from ? 0 : WIRE_EFRAME;
    if (from == NULL && VMD_TID_HOST(m.dst) != vmd->index)
        return WIRE_EFRAME;     /* peers deliver only to our own tasks */
    if (from == NULL)
        rwatch_noticed(vmd, &m, body);
    vmd_task_deliver(vmd, &m, body);
    /* Flow control: a sender whose messages pile up for a host or for a
     * local task that does not read waits. */
    if (from && VMD_TID_HOST(m.dst) == vmd->index) {
        if (vmd_task_backlog(vmd, m.dst) >= vmd->conf.max_peer_queue)
            vmd_client_pause(from, 0, m.dst);
    } else if (from && vmd_host_backlog(vmd, VMD_TID_HOST(m.dst)) >= vmd->conf.max_peer_queue) {
        vmd_client_pause(from, VMD_TID_HOST(m.dst), 0);
    }
    return 0;
}

/*
 * pvm_kill (sig 0: SIGTERM, and the task leaves the VM at once) and
 * pvm_sendsig, for a task of this host.
 */
int
vmd_task_kill(struct vmd *vmd, uint32_t tid, int sig)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, tid);
    if (t == NULL)
        return WIRE_ENOTASK;
    if (sig < 0 || sig >= 65)
        return -EINVAL;
    int s = sig ? sig : SIGTERM;
    int rc = 0;
    if (t->spawned && !t->proc_exited)
        rc = uv_process_kill(&t->proc, s);
    else if (t->pid > 0)
        rc = uv_kill((int)t->pid, s);
    if (sig == 0)
        vmd_task_end(t, "killed");
    return rc == 0 || rc == UV_ESRCH ? 0 : -EPERM;
}

int
vmd_task_watch_exit(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid)
{
    struct vmd_task *t = vmd_task_by_tid(vmd, tid);
    if (t == NULL) {
        /* Already gone: PVM tells at once. */
        send_int_msg(vmd, watcher, tag, ctx, &tid, 1);
        return 0;
    }
    struct vmd_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    w->tid = watcher;
    w->tag = tag;
    w->ctx = ctx;
    w->next = t->watch;
    t->watch = w;
    return 0;
}

/*
 * A local task watches a task of another host (pvm_notify PvmTaskExit):
 * the watch lives there, and is lost if that host dies.  So the watcher's
 * daemon keeps a copy and tells the watcher itself when the host leaves
 * the VM (vmd_task_host_gone); the copy goes when the notice comes from
 * the other host (vmd_task_route) or the watcher ends.
 */
int
vmd_task_rwatch_add(struct vmd *vmd, uint32_t watcher, int32_t tag, int32_t ctx, uint32_t tid)
{
    struct vmd_rwatch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    w->watcher = watcher;
    w->tid = tid;
    w->tag = tag;
    w->ctx = ctx;
    vmd_list_insert(&vmd->rwatch, &w->link);
    return 0;
}

/* A message from another host's daemon: if it is the exit notice a copy
 * stands for, the copy is done. */
static void
rwatch_noticed(struct vmd *vmd, const struct wire_hdr *h, const unsigned char *body)
{
    if (h->type != WIRE_T_MSG || (h->src & VMD_TID_LOCAL_MASK) != 0 || h->len != 4 ||
        vmd_list_empty(&vmd->rwatch))
        return;
    uint32_t tid = (uint32_t)body[0] << 24 | (uint32_t)body[1] << 16 | (uint32_t)body[2] << 8 |
                   body[3];
    for (struct vmd_list *l = vmd->rwatch.next; l != &vmd->rwatch; l = l->next) {
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (w->watcher == h->dst && w->tid == tid && w->tag == h->tag && w->ctx == h->ctx &&
            VMD_TID_HOST(tid) == VMD_TID_HOST(h->src)) {
            vmd_list_remove(&w->link);
            free(w);
            return;
        }
    }
}

/* Host index left the VM: its tasks are gone; tell whoever watched them. */
void
vmd_task_host_gone(struct vmd *vmd, int index)
{
    struct vmd_list *l, *next;
    for (l = vmd->rwatch.next; l != &vmd->rwatch; l = next) {
        next = l->next;
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (VMD_TID_HOST(w->tid) != index)
            continue;
        vmd_list_remove(&w->link);
        log_info("task t%x left with host %d; telling t%x", w->tid, index, w->watcher);
        send_int_msg(vmd, w->watcher, w->tag, w->ctx, &w->tid, 1);
        free(w);
    }
}

/* The watcher ended: its copies have nobody to tell. */
static void
rwatch_drop_watcher(struct vmd *vmd, uint32_t watcher)
{
    struct vmd_list *l, *next;
    for (l = vmd->rwatch.next; l != &vmd->rwatch; l = next) {
        next = l->next;
        struct vmd_rwatch *w = vmd_container_of(l, struct vmd_rwatch, link);
        if (w->watcher == watcher) {
            vmd_list_remove(&w->link);
            free(w);
        }
    }
}

/*
 * A local task's pvm_notify for hosts: PvmHostDelete for the dtids given,
 * PvmHostAdd for the next n additions (n = -1: all).  Body: u32 what,
 * i32 tag, u32 n, u32 tids[n] (HostAdd: n is the count, no tids).
 */
int
vmd_task_notify_req(struct vmd *vmd, uint32_t from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t what, n;
    int32_t tag;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &what)) || (rc = wire_get_i32(&r, &tag)) ||
        (rc = wire_get_u32(&r, &n)))
        return rc;
    if (what == 3) {
        struct vmd_hostwatch *w = calloc(1, sizeof(*w));
        if (w == NULL)
            return -ENOMEM;
        w->what = 3;
        w->tid = from;
        w->tag = tag;
        w->ctx = h->ctx;
        w->count = (int32_t)n;
        vmd_list_insert(&vmd->hostwatch, &w->link);
        return 0;
    }
    if (what != 2 || n > VMD_MAX_HOSTS)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t dtid;
        if ((rc = wire_get_u32(&r, &dtid)) != 0)
            return rc;
        int idx = VMD_TID_HOST(dtid);
        if (idx < 1 || vmd->hosts[idx] == NULL) {
            send_int_msg(vmd, from, tag, h->ctx, &dtid, 1);
            continue;
        }
        struct vmd_hostwatch *w = calloc(1, sizeof(*w));
        if (w == NULL)
            return -ENOMEM;
        w->what = 2;
        w->tid = from;
        w->tag = tag;
        w->ctx = h->ctx;
        w->dtid = VMD_HOST_TID(idx);
        vmd_list_insert(&vmd->hostwatch, &w->link);
    }
    return 0;
}

/* A host joined (what 3) or left (what 2): tell the local tasks that asked. */
void
vmd_task_host_event(struct vmd *vmd, int what, uint32_t dtid)
{
    struct vmd_list *l, *next;
    for (l = vmd->hostwatch.next; l != &vmd->hostwatch; l = next) {
        next = l->next;
        struct vmd_hostwatch *w = vmd_container_of(l, struct vmd_hostwatch, link);
        if (w->what != what || (what == 2 && w->dtid != dtid))
            continue;
        if (what == 3) {
            uint32_t v[2] = { 1, dtid };
            send_int_msg(vmd, w->tid, w->tag, w->ctx, v, 2);
            if (w->count > 0 && --w->count == 0) {
                vmd_list_remove(&w->link);
                free(w);
            }
        } else {
            send_int_msg(vmd, w->tid, w->tag, w->ctx, &dtid, 1);
            vmd_list_remove(&w->link);
            free(w);
        }
    }
}

/*
 * Append this host's tasks matching where (0: all; our dtid: all; a tid)
 * to b as u32 tid, u32 ptid, u32 host dtid, u32 flags, str name, u32 pid.
 * Returns how many.
 */
int
vmd_task_list(struct vmd *vmd, uint32_t where, struct wire_wbuf *b)
{
    int n = 0;
    for (struct vmd_list *l = vmd->tasks.next; l != &vmd->tasks; l = l->next) {
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (t->ended)
            continue;
        if (where != 0 && (where & VMD_TID_LOCAL_MASK) != 0 && where != t->tid)
            continue;
        wire_put_u32(b, t->tid);
        wire_put_u32(b, t->ptid);
        wire_put_u32(b, VMD_HOST_TID(vmd->index));
        wire_put_u32(b, t->client ? 4 : 0);     /* PVM's TF_CONN: enrolled */
        wire_put_str(b, t->name);
        wire_put_u32(b, (uint32_t)t->pid);
        n++;
    }
    return n;
}

/* halt: every task of this host is told to stop, as PVM's halt does. */
void
vmd_task_kill_all(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->tasks.next; l != &vmd->tasks; l = next) {
        next = l->next;
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (!t->ended)
            vmd_task_kill(vmd, t->tid, 0);
    }
    while (!vmd_list_empty(&vmd->hostwatch)) {
        struct vmd_list *w = vmd->hostwatch.next;
        vmd_list_remove(w);
        free(vmd_container_of(w, struct vmd_hostwatch, link));
    }
}

#define CTX_USED(vmd, k) ((vmd)->ctx_used[(k) >> 3] & (1u << ((k) & 7)))

/*
 * A context id unique in the VM: our host index in bits 18-29, like a tid,
 * and a local part below, the next one after the last given that nobody
 * holds.  Context 0 is PVM's base context, never given out.  Ids come back
 * with pvm_freecontext; when all 262143 are held the request fails
 * (PvmOutOfRes) rather than give one out twice.
 */
int
vmd_task_newctx(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_wbuf b;
    uint32_t k = 0;
    (void)body;
    for (uint32_t tries = 0; tries < VMD_TID_LOCAL_MASK; tries++) {
        vmd->next_ctx = (vmd->next_ctx % VMD_TID_LOCAL_MASK) + 1;
        if (!CTX_USED(vmd, vmd->next_ctx)) {
            k = vmd->next_ctx;
            break;
        }
    }
    if (k == 0) {
        log_warn("task t%x: every context id of this host is held; none to give", c->task->tid);
        vmd_client_reply(vmd, c->id, h->id, -EAGAIN, NULL);
        return 0;
    }
    vmd->ctx_used[k >> 3] |= (unsigned char)(1u << (k & 7));
    wire_wbuf_init(&b);
    wire_put_u32(&b, VMD_HOST_TID(vmd->index) | k);
    vmd_client_reply(vmd, c->id, h->id, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}

/* pvm_freecontext: u32 ctx, one of ours that is held, may be given again. */
int
vmd_task_freectx(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    uint32_t ctx, k;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &ctx)) != 0)
        return rc;
    k = ctx & VMD_TID_LOCAL_MASK;
    if (VMD_TID_HOST(ctx) != vmd->index || (ctx & 0xc0000000u) != 0 || k == 0 ||
        !CTX_USED(vmd, k)) {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENOTFOUND, NULL);
        return 0;
    }
    vmd->ctx_used[k >> 3] &= (unsigned char)~(1u << (k & 7));
    vmd_client_reply(vmd, c->id, h->id, 0, NULL);
    return 0;
}

/* A task's Unix socket for direct links from tasks of this host. */
static int
direct_sock_path(struct vmd *vmd, uint32_t tid, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/run/t%x.sock", vmd->home, tid);
    return n > 0 && (size_t)n < cap && (size_t)n < 108 ? 0 : -ENAMETOOLONG;
}

/*
 * PvmRouteDirect (lib/pvm/pvm_direct.c): u32 peer tid.  The reply tells the
 * task where to listen (our address, its own socket path), the TLS files
 * it presents (ours: a task runs as our user), and the peer's host name,
 * which the peer's certificate must carry.
 */
int
vmd_task_direct_info(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                     const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    struct wire_wbuf b;
    uint32_t peer;
    char path[4200];
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &peer)) != 0)
        return rc;
    int idx = VMD_TID_HOST(peer);
    struct vmd_host *ph = idx > 0 ? vmd->hosts[idx] : NULL;
    if (ph == NULL || (peer & VMD_TID_LOCAL_MASK) == 0) {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENOHOST, NULL);
        return 0;
    }
    if ((rc = direct_sock_path(vmd, c->task->tid, path, sizeof(path))) != 0) {
        vmd_client_reply(vmd, c->id, h->id, rc, NULL);
        return 0;
    }
    wire_wbuf_init(&b);
    wire_put_str(&b, vmd->address);
    wire_put_str(&b, path);
    wire_put_str(&b, vmd->tls_ca);
    wire_put_str(&b, vmd->tls_cert);
    wire_put_str(&b, vmd->tls_key);
    wire_put_str(&b, ph->name);
    vmd_client_reply(vmd, c->id, h->id, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}
