/*
 * vmd_task.c - the PVM tasks of this host: their tids, enrolling, their
 * end, kill, the task list, context ids and the facts a task needs for a
 * direct link (docs/architecture.md, Task ids).
 *
 * A task is either a program started from the shell that enrolled over the
 * local socket, or a process we spawned (vmd_spawn.c), which has its tid
 * from the start and claims it when it enrolls; messages sent to it before
 * that wait in its queue (vmd_route.c).  A task ends at pvm_exit (its
 * connection closes), when its process dies, or when it is killed; the
 * modules that keep something of it hear of it through their task_gone
 * hooks (its watchers, the mailbox, the groups).  Tids follow PVM's
 * layout: our host index in bits 18-29 and a local part in bits 0-17.
 */
#define LOG_TAG "task"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int direct_sock_path(struct vmd *vmd, uint32_t tid, char *out, size_t cap);

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
    if (t->client) {
        t->client->task = NULL;
        t->client = NULL;
    }
    /* Its watchers, its mailbox entries, its groups. */
    vmd_hooks_task_gone(vmd, t);
    /* The socket a task listened on for direct links, if it did. */
    char path[4200];
    if (direct_sock_path(vmd, t->tid, path, sizeof(path)) == 0)
        unlink(path);
    vmd_task_release(t);
}

/*
 * Whether client c may take spawned task t's tid: t is one we spawned that
 * has not enrolled, c's process (the kernel says which) is the one we
 * started, and it knows the one-time token we put in its environment.  The
 * pid keeps out every other process; the token, a process that reused the
 * pid after ours died.
 */
int
vmd_task_claim_ok(const struct vmd_task *t, const struct vmd_client *c, int has_token, uint64_t token)
{
    return t != NULL && t->spawned && t->client == NULL && t->token != 0 && has_token &&
           token == t->token && c->pid == t->pid;
}

int
vmd_task_enroll(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    uint32_t said_pid, parent, claim = 0;
    uint64_t token = 0;
    int has_token = 0;
    char name[256];
    struct wire_wbuf b;
    struct vmd_task *t = NULL;
    int rc;

    /* The pid in the body is not used: who the client is comes from the
     * kernel (c->pid, SO_PEERCRED), whatever it says. */
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &said_pid)) || (rc = wire_get_u32(&r, &parent)) ||
        (rc = wire_get_str(&r, name, sizeof(name))))
        return rc;
    if (r.pos < r.len && (rc = wire_get_u32(&r, &claim)) != 0)
        return rc;
    if (r.pos < r.len) {
        if ((rc = wire_get_u64(&r, &token)) != 0)
            return rc;
        has_token = 1;
    }
    if (c->task != NULL)
        return WIRE_EFRAME;     /* enrolls once */
    if (vmd->index == 0 || vmd->halting || vmd->halting_vm) {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENOVM, NULL);
        return 0;
    }
    if (claim) {
        /* A task we spawned takes the tid pvm_spawn already returned. */
        t = vmd_task_by_tid(vmd, claim);
        if (!vmd_task_claim_ok(t, c, has_token, token)) {
            log_warn("pid %ld claims tid t%x, which is not a spawned task waiting for that "
                     "process and token; refused", c->pid, claim);
            vmd_client_reply(vmd, c->id, h->id, WIRE_ENOTASK, NULL);
            return 0;
        }
        t->token = 0;           /* one time */
    } else {
        t = vmd_task_new(vmd, parent, name);
        if (t == NULL) {
            vmd_client_reply(vmd, c->id, h->id, -EAGAIN, NULL);
            return 0;
        }
        t->pid = c->pid;
    }
    t->client = c;
    c->task = t;
    if (said_pid != (uint32_t)c->pid)
        log_info("task t%x said it was pid %u; the kernel says pid %ld", t->tid, said_pid,
                 c->pid);
    log_info("task t%x enrolled: pid %ld, %s, parent t%x", t->tid, c->pid,
             name[0] ? name : "-", t->ptid);
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

int
vmd_task_pid_ok(long pid, long self)
{
    return pid > 1 && pid <= INT_MAX && pid != self;
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
    /* A process we spawned is signalled through its handle (libuv knows
     * its pid); any other only through the one guard. */
    if (t->spawned && !t->proc_exited)
        rc = uv_process_kill(&t->proc, s);
    else if (!t->spawned && vmd_task_pid_ok(t->pid, (long)getpid()))
        rc = uv_kill((int)t->pid, s);
    else if (!t->spawned)
        log_warn("task t%x: pid %ld is not one to signal; not signalled", t->tid, t->pid);
    if (sig == 0)
        vmd_task_end(t, "killed");
    return rc == 0 || rc == UV_ESRCH ? 0 : -EPERM;
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
static void
task_halt(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->tasks.next; l != &vmd->tasks; l = next) {
        next = l->next;
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (!t->ended)
            vmd_task_kill(vmd, t->tid, 0);
    }
}

/* Its connection closed: a task leaves the VM with it. */
static void
task_client_gone(struct vmd *vmd, struct vmd_client *c)
{
    (void)vmd;
    if (c->task)
        vmd_task_end(c->task, "left the VM");
}

/*
 * Host h left the VM: every task of this host hears it (WIRE_DIRECT_GONE),
 * so that a link to a task of h dies.  Otherwise a write blocked on such a
 * link (the host stopped, its socket buffers full) would wait for ever:
 * a stopped peer's kernel keeps the connection open.
 */
static void
task_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    unsigned char body[4];
    struct wire_hdr m = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_GONE,
                          .src = VMD_HOST_TID(vmd->index), .len = sizeof(body) };

    wire_be32_put(body, (uint32_t)h->index);
    for (struct vmd_list *l = vmd->tasks.next; l != &vmd->tasks; l = l->next) {
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);

        if (t->client == NULL || t->ended)
            continue;
        m.dst = t->tid;
        if (vmd_client_send(t->client, &m, body, sizeof(body)) != 0)
            log_warn("task t%x: cannot tell it host %s left", t->tid, h->name);
    }
}

const struct vmd_hooks vmd_task_hooks = {
    .module = "task",
    .halt = task_halt,
    .host_gone = task_host_gone,
    .client_gone = task_client_gone,
};

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
    if (VMD_TID_HOST(ctx) != vmd->index || (ctx & WIRE_TID_SPECIAL_MASK) != 0 || k == 0 ||
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
 * PvmRouteDirect (lib/pvm/pvm_link.c): u32 peer tid.  The reply tells the
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
