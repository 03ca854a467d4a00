/*
 * vmd_fwd.c - task requests that reach other hosts: pvm_spawn (placement
 * over the hosts, a part per host), pvm_kill / pvm_sendsig, pvm_notify
 * (PvmTaskExit is watched where the task lives), pvm_tasks.
 *
 * The daemon of the requesting task is the origin.  It does its own part
 * at once and sends each other host a FWD frame (op id, origin tid, type,
 * request); that daemon does its part as if the origin task had asked
 * locally and answers with FWD_REPLY.  When every part has answered, or
 * the op's deadline passes (a host died), the origin answers the task.
 * A spawn then sends every new task its sibling list (pvm_siblings).
 */
#define LOG_TAG "fwd"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SPAWN_MAX 4096
#define FWD_ARGS_MAX 256

/* PVM's spawn flags that matter for placement. */
#define PVM_TASK_HOST 1
#define PVM_TASK_ARCH 2
#define PVM_HOST_COMPL 32

struct vmd_fwd {
    struct vmd_list link;       /* in vmd->fwds */
    uint32_t id;
    uint32_t client_id, req_id;
    uint32_t origin;            /* the requesting task */
    int32_t ctx;                /* its context, for notifications */
    int type;
    int pending;
    int status;
    uint64_t deadline;
    struct fwd_due {            /* the parts sent and not answered, per host */
        uint16_t host, n;
    } *due;
    int ndue, capdue;
    int ntask;                  /* spawn: slots */
    int32_t *tids;              /* spawn: a tid or a negative code per slot */
    uint32_t *hosts;            /* spawn: the dtid of each slot's host, 0 none */
    uint32_t out_tid;           /* spawn: who catches the tasks' output, 0 none */
    int32_t out_code;
    uint32_t count;             /* tasks: items in acc */
    struct wire_wbuf acc;       /* tasks: the items */
};

/* A spawn request: str file, u32 flags, str where ([HOST|ARCH][:DIR]), u32
 * ntask, u32 out_tid, i32 out_code, u32 argc, argv, u32 envc, env (as
 * "NAME=value"); a part for a peer has no where, and str DIR and u32
 * flags (PvmNoSpawnParent alone) after out_code.  Its
 * reply: u32 ntask, i32 a tid or a negative code per slot, then u32 the
 * dtid of the host each slot was placed on (0: none could take it), so
 * that a failure can name its host; libpvm3 reads the tids alone. */
struct spawn_req {
    char file[1024];
    uint32_t flags;
    char where[1280];
    char wd[1024];              /* where's working directory, after a ':' */
    uint32_t ntask;
    uint32_t out_tid;
    int32_t out_code;
    uint32_t argc, envc;
    char *argv[FWD_ARGS_MAX];
    char *env[FWD_ARGS_MAX];
    char *strings;              /* one block holding argv and env */
};

static void
spawn_req_free(struct spawn_req *s)
{
    free(s->strings);
}

static int
get_strs(struct wire_rbuf *r, uint32_t *n, char **out, char **block, size_t *used, size_t cap)
{
    int rc;
    if ((rc = wire_get_u32(r, n)) != 0)
        return rc;
    if (*n > FWD_ARGS_MAX)
        return -E2BIG;
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t len;
        const void *p;
        if ((rc = wire_get_u32(r, &len)) || len > WIRE_STR_MAX || *used + len + 1 > cap ||
            (rc = wire_get_bytes(r, &p, len)))
            return rc ? rc : WIRE_EFRAME;
        if (memchr(p, '\0', len))
            return WIRE_EFRAME;
        out[i] = *block + *used;
        memcpy(out[i], p, len);
        out[i][len] = '\0';
        *used += len + 1;
    }
    return 0;
}

static int
spawn_req_parse(struct wire_rbuf *r, struct spawn_req *s, int with_placement)
{
    int rc;
    memset(s, 0, sizeof(*s));
    if ((rc = wire_get_str(r, s->file, sizeof(s->file))))
        return rc;
    if (with_placement &&
        ((rc = wire_get_u32(r, &s->flags)) || (rc = wire_get_str(r, s->where, sizeof(s->where)))))
        return rc;
    if ((rc = wire_get_u32(r, &s->ntask)) || (rc = wire_get_u32(r, &s->out_tid)) ||
        (rc = wire_get_i32(r, &s->out_code)))
        return rc;
    /* pvm_spawn's where is [HOST|ARCH][:DIR]; a part carries DIR alone. */
    if (with_placement) {
        char *colon = strchr(s->where, ':');

        if (colon != NULL) {
            snprintf(s->wd, sizeof(s->wd), "%s", colon + 1);
            *colon = '\0';
        }
    } else if ((rc = wire_get_str(r, s->wd, sizeof(s->wd))) || (rc = wire_get_u32(r, &s->flags))) {
        return rc;
    }
    size_t cap = r->len - r->pos + 2 * FWD_ARGS_MAX, used = 0;
    if ((s->strings = malloc(cap)) == NULL)
        return -ENOMEM;
    if ((rc = get_strs(r, &s->argc, s->argv, &s->strings, &used, cap)) ||
        (rc = get_strs(r, &s->envc, s->env, &s->strings, &used, cap)))
        return rc;
    if (s->ntask < 1 || s->ntask > SPAWN_MAX)
        return -EINVAL;
    for (uint32_t i = 0; i < s->envc; i++)
        if (strchr(s->env[i], '=') == NULL || !wire_env_spawnable(s->env[i]))
            return -EINVAL;
    return 0;
}

static void
put_strs(struct wire_wbuf *b, char **v, uint32_t n)
{
    wire_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        wire_put_str(b, v[i]);
}

static struct vmd_fwd *
fwd_new(struct vmd *vmd, struct vmd_client *c, const struct wire_hdr *h)
{
    struct vmd_fwd *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    f->id = ++vmd->next_op_id;
    f->client_id = c->id;
    f->req_id = h->id;
    f->origin = c->task->tid;
    f->ctx = h->ctx;
    f->type = h->type;
    f->pending = 1;             /* released once every part is sent */
    f->deadline = uv_now(vmd->loop) + (uint64_t)(vmd->conf.start_timeout * 1000.0) + 5000;
    wire_wbuf_init(&f->acc);
    vmd_list_insert(&vmd->fwds, &f->link);
    return f;
}

static void
fwd_finish(struct vmd *vmd, struct vmd_fwd *f)
{
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    if (f->type == WIRE_T_TASK_SPAWN) {
        uint32_t ok[SPAWN_MAX];
        uint32_t nok = 0;
        wire_put_u32(&b, (uint32_t)f->ntask);
        for (int i = 0; i < f->ntask; i++) {
            wire_put_i32(&b, f->tids[i]);
            if (f->tids[i] > 0)
                ok[nok++] = (uint32_t)f->tids[i];
        }
        for (int i = 0; i < f->ntask; i++)
            wire_put_u32(&b, f->hosts[i]);
        /* The catcher hears of each task started on another host from us,
         * before the spawner has its tids: so before the spawner's own EOF,
         * which comes from us too, whatever the other host's link. */
        for (uint32_t i = 0; i < nok && f->out_tid != 0; i++) {
            if (VMD_TID_HOST(ok[i]) == vmd->index)
                continue;       /* its SPAWNED frame came from us already */
            unsigned char t[4];
            wire_be32_put(t, ok[i]);
            struct wire_hdr e = { .type = WIRE_T_MSG, .src = f->origin, .dst = f->out_tid,
                                  .ctx = WIRE_CTX_OUTPUT, .tag = f->out_code,
                                  .flags = WIRE_OUT_EXPECT, .len = sizeof(t) };
            vmd_route_deliver(vmd, &e, t);
        }
        /* pvm_siblings: each new task learns the whole set. */
        struct wire_wbuf s;
        wire_wbuf_init(&s);
        wire_put_u32(&s, nok);
        for (uint32_t i = 0; i < nok; i++)
            wire_put_u32(&s, ok[i]);
        for (uint32_t i = 0; i < nok && s.err == 0; i++) {
            struct wire_hdr h = { .type = WIRE_T_MSG, .src = VMD_HOST_TID(vmd->index),
                                  .dst = ok[i], .ctx = WIRE_CTX_SYSTEM,
                                  .tag = WIRE_TAG_SIBLINGS, .len = (uint32_t)s.len };
            vmd_route_deliver(vmd, &h, s.data);
        }
        wire_wbuf_free(&s);
    } else if (f->type == WIRE_T_TASK_LIST) {
        wire_put_u32(&b, f->count);
        wire_put_bytes(&b, f->acc.data, f->acc.len);
    }
    vmd_client_reply(vmd, f->client_id, f->req_id, f->status, &b);
    wire_wbuf_free(&b);
    vmd_list_remove(&f->link);
    wire_wbuf_free(&f->acc);
    free(f->tids);
    free(f->hosts);
    free(f->due);
    free(f);
}

static void
fwd_release(struct vmd *vmd, struct vmd_fwd *f)
{
    if (--f->pending == 0)
        fwd_finish(vmd, f);
}

/* Send part of a request to host h; the reply releases one pending. */
static int
fwd_send(struct vmd *vmd, struct vmd_fwd *f, struct vmd_host *h, int type,
         const struct wire_wbuf *req)
{
    /* A host in the VM whose link is being made (just added, or a redial)
     * gets it once the link is up, as a task's message would; the op's
     * deadline answers for one that never links. */
    if (h->state != VMD_HOST_UP)
        return WIRE_EHOSTFAIL;
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, f->id);
    wire_put_u32(&b, f->origin);
    wire_put_u32(&b, (uint32_t)type);
    wire_put_bytes(&b, req->data, req->len);
    struct wire_hdr hh = { .type = WIRE_T_FWD, .src = VMD_HOST_TID(vmd->index), .ctx = f->ctx,
                           .len = (uint32_t)b.len };
    int rc = b.err ? b.err : vmd_route_to_host(vmd, h, &hh, b.data);
    wire_wbuf_free(&b);
    if (rc == 0) {
        int i = 0;

        while (i < f->ndue && f->due[i].host != h->index)
            i++;
        if (i == f->ndue) {
            if (f->ndue == f->capdue) {
                int cap = f->capdue ? 2 * f->capdue : 4;
                struct fwd_due *d = realloc(f->due, (size_t)cap * sizeof(*d));

                if (d == NULL)
                    return -ENOMEM; /* sent, but its answer would not be taken: it times out */
                f->due = d;
                f->capdue = cap;
            }
            f->due[f->ndue++] = (struct fwd_due){ (uint16_t)h->index, 0 };
        }
        f->due[i].n++;
        f->pending++;
    }
    return rc;
}

/* The hosts a spawn may use, in table order: those the flags choose
 * (the host named, the hosts of the architecture named, or all), or with
 * PvmHostCompl every other one, as PVM 3.4's tm_spawn complements its set
 * (the complement of a host not in the VM is every host). */
static int
spawn_candidates(struct vmd *vmd, const struct spawn_req *s, struct vmd_host **out)
{
    int n = 0, compl = (s->flags & PVM_HOST_COMPL) != 0;
    const char *where = s->where;
    struct vmd_host *named = NULL;
    if (s->flags & PVM_TASK_HOST) {
        named = (strcmp(where, ".") == 0) ? vmd->hosts[vmd->index] : vmd_host_by_name(vmd, where);
        if (named == NULL && !compl)
            return WIRE_ENOHOST;
    }
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *h = vmd->hosts[i];
        int chosen;
        if (h == NULL || h->state != VMD_HOST_UP)
            continue;
        if (s->flags & PVM_TASK_HOST)
            chosen = h == named;
        else if (s->flags & PVM_TASK_ARCH)
            chosen = strcmp(h->arch, where) == 0;
        else
            chosen = 1;
        if (chosen == compl)
            continue;
        /* Placed by us, a task goes only where we have a link now: one
         * still being made (just after a start or an add) or being remade
         * would fail its part.  A host named is tried, and its failure
         * said. */
        if (h->index != vmd->index && !(named != NULL && h == named) &&
            (h->peer == NULL || h->peer->state != VMD_PEER_UP))
            continue;
        out[n++] = h;
    }
    return n ? n : WIRE_ENOHOST;
}

/*
 * Placement as PVM 3.4.6's assign_tasks does it, so programs land where
 * they did under PVM: the first spawn starts at the host after this one,
 * the tasks go in contiguous blocks over min(hosts, tasks) hosts, and the
 * next spawn starts at the host after the last one used.  slot_host[i] is
 * the candidate slot i goes to.
 */
static void
spawn_place(struct vmd *vmd, uint32_t ntask, struct vmd_host **cand, int nc, int *slot_host)
{
    uint32_t start = vmd->spawn_rr ? vmd->spawn_rr : (uint32_t)vmd->index + 1;
    int at = 0;
    while (at < nc && (uint32_t)cand[at]->index < start)
        at++;
    if (at == nc)
        at = 0;
    uint32_t nh = (uint32_t)nc < ntask ? (uint32_t)nc : ntask, acc = 0;
    for (uint32_t i = 0; i < ntask; i++) {
        slot_host[i] = at;
        if ((acc += nh) >= ntask) {
            acc -= ntask;
            at = (at + 1) % nc;
        }
    }
    vmd->spawn_rr = (uint32_t)cand[at]->index;
}

/* Candidate k's slots: started here, or sent to its host as one part. */
static void
spawn_part_send(struct vmd *vmd, struct vmd_fwd *f, struct spawn_req *s,
                struct vmd_host *host, int k, const int *slot_host)
{
    uint32_t nslots = 0;
    int rc;
    for (uint32_t i = 0; i < s->ntask; i++)
        nslots += slot_host[i] == k;
    if (nslots == 0)
        return;
    if (host->index == vmd->index) {
        for (uint32_t i = 0; i < s->ntask; i++) {
            if (slot_host[i] != k)
                continue;
            uint32_t tid;
            rc = vmd_spawn_local(vmd, f->origin, s->out_tid, s->out_code, s->file, s->wd,
                                 s->flags & VMD_SPAWN_NOPARENT, s->argv,
                                 (int)s->argc, s->env, (int)s->envc, &tid);
            f->tids[i] = rc ? rc : (int32_t)tid;
        }
        return;
    }
    struct wire_wbuf part;
    wire_wbuf_init(&part);
    wire_put_str(&part, s->file);
    wire_put_u32(&part, nslots);
    wire_put_u32(&part, s->out_tid);
    wire_put_i32(&part, s->out_code);
    wire_put_str(&part, s->wd);
    wire_put_u32(&part, s->flags & VMD_SPAWN_NOPARENT);
    put_strs(&part, s->argv, s->argc);
    put_strs(&part, s->env, s->envc);
    for (uint32_t i = 0; i < s->ntask; i++)
        if (slot_host[i] == k)
            wire_put_u32(&part, i);
    rc = fwd_send(vmd, f, host, WIRE_T_TASK_SPAWN, &part);
    wire_wbuf_free(&part);
    for (uint32_t i = 0; rc != 0 && i < s->ntask; i++)
        if (slot_host[i] == k)
            f->tids[i] = rc;
}

/* pvm_spawn: placed over the hosts, a part per host; the answer waits for
 * every part. */
int
vmd_fwd_spawn(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    struct spawn_req s;
    struct vmd_host *cand[VMD_MAX_HOSTS];
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = spawn_req_parse(&r, &s, 1)) != 0) {
        spawn_req_free(&s);
        if (rc == WIRE_EFRAME)
            return rc;
        vmd_client_reply(vmd, c->id, h->id, rc, NULL);
        return 0;
    }
    struct vmd_fwd *f = fwd_new(vmd, c, h);
    if (f == NULL || (f->tids = calloc(s.ntask, sizeof(*f->tids))) == NULL ||
        (f->hosts = calloc(s.ntask, sizeof(*f->hosts))) == NULL) {
        if (f) {
            vmd_list_remove(&f->link);
            free(f->tids);
            free(f);
        }
        spawn_req_free(&s);
        vmd_client_reply(vmd, c->id, h->id, -ENOMEM, NULL);
        return 0;
    }
    f->ntask = (int)s.ntask;
    f->out_tid = s.out_tid;
    f->out_code = s.out_code;
    int nc = spawn_candidates(vmd, &s, cand);
    int *slot_host = nc > 0 ? calloc(s.ntask, sizeof(int)) : NULL;
    if (nc < 0) {
        for (int i = 0; i < f->ntask; i++)
            f->tids[i] = nc;
    } else if (slot_host == NULL) {
        f->status = -ENOMEM;
    } else {
        spawn_place(vmd, s.ntask, cand, nc, slot_host);
        for (uint32_t i = 0; i < s.ntask; i++)
            f->hosts[i] = VMD_HOST_TID(cand[slot_host[i]]->index);
        for (int k = 0; k < nc; k++)
            spawn_part_send(vmd, f, &s, cand[k], k, slot_host);
    }
    free(slot_host);
    spawn_req_free(&s);
    fwd_release(vmd, f);
    return 0;
}

/* A part of a spawn for this host, from a peer: returns slot/tid pairs. */
static int
spawn_part(struct vmd *vmd, uint32_t origin, struct wire_rbuf *r, struct wire_wbuf *out)
{
    struct spawn_req s;
    int rc = spawn_req_parse(r, &s, 0);
    if (rc == 0 && s.ntask > SPAWN_MAX)
        rc = WIRE_EFRAME;
    if (rc == 0) {
        wire_put_u32(out, s.ntask);
        for (uint32_t i = 0; i < s.ntask; i++) {
            uint32_t slot, tid;
            if ((rc = wire_get_u32(r, &slot)) != 0)
                break;
            int e = vmd_spawn_local(vmd, origin, s.out_tid, s.out_code, s.file, s.wd,
                                    s.flags & VMD_SPAWN_NOPARENT, s.argv,
                                    (int)s.argc, s.env, (int)s.envc, &tid);
            wire_put_u32(out, slot);
            wire_put_i32(out, e ? e : (int32_t)tid);
        }
    }
    spawn_req_free(&s);
    return rc;
}

/* Do a request for origin on this host; the reply body goes in out. */
static int
exec_local(struct vmd *vmd, uint32_t origin, int type, int32_t ctx, struct wire_rbuf *r,
           struct wire_wbuf *out)
{
    uint32_t a, b;
    int32_t tag;
    int rc;
    switch (type) {
    case WIRE_T_TASK_SPAWN:
        return spawn_part(vmd, origin, r, out);
    case WIRE_T_TASK_KILL:
        if ((rc = wire_get_u32(r, &a)) || (rc = wire_get_u32(r, &b)))
            return rc;
        return vmd_task_kill(vmd, a, (int)b);
    case WIRE_T_TASK_NOTIFY:
        /* PvmTaskExit for one of our tasks: u32 tid, i32 tag, and from a
         * cancel u32 1: the watch goes, its notice given by the origin's
         * daemon. */
        if ((rc = wire_get_u32(r, &a)) || (rc = wire_get_i32(r, &tag)))
            return rc;
        if (wire_get_u32(r, &b) == 0 && b == 1) {
            vmd_watch_cancel(vmd, origin, tag, ctx, a, 0);
            return 0;
        }
        return vmd_watch_exit(vmd, origin, tag, ctx, a);
    default:
        return WIRE_EFRAME;
    }
}

/*
 * vmd_task_list puts its count after the items; the reply wants it first,
 * so LIST parts are built into a scratch buffer and prefixed.
 */
static int
list_part(struct vmd *vmd, uint32_t where, struct wire_wbuf *out)
{
    struct wire_wbuf items;
    wire_wbuf_init(&items);
    int n = vmd_task_list(vmd, where, &items);
    wire_put_u32(out, (uint32_t)n);
    wire_put_bytes(out, items.data, items.len);
    int rc = items.err;
    wire_wbuf_free(&items);
    return rc;
}

static void
acc_list(struct vmd_fwd *f, const unsigned char *p, size_t len)
{
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, p, len);
    if (wire_get_u32(&r, &n) != 0)
        return;
    f->count += n;
    wire_put_bytes(&f->acc, p + r.pos, r.len - r.pos);
}

/* A request that waits for other hosts, or fails now with -ENOMEM. */
static struct vmd_fwd *
fwd_begin(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h)
{
    struct vmd_fwd *f = fwd_new(vmd, from->client, h);
    if (f == NULL)
        vmd_client_reply(vmd, from->client->id, h->id, -ENOMEM, NULL);
    return f;
}

/* Answer once every part has: a malformed request closes the client. */
static int
fwd_end(struct vmd *vmd, struct vmd_fwd *f, int rc)
{
    if (rc == WIRE_EFRAME) {
        vmd_list_remove(&f->link);
        wire_wbuf_free(&f->acc);
        free(f);
        return rc;
    }
    if (rc != 0)
        f->status = rc;
    fwd_release(vmd, f);
    return 0;
}

/* pvm_kill, pvm_sendsig: u32 tid, u32 signal, where the task lives. */
int
vmd_fwd_kill(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t a, b;
    int rc;
    struct vmd_fwd *f = fwd_begin(vmd, from, h);
    if (f == NULL)
        return 0;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &a)) || (rc = wire_get_u32(&r, &b)))
        return fwd_end(vmd, f, rc);
    if (VMD_TID_HOST(a) == vmd->index) {
        f->status = vmd_task_kill(vmd, a, (int)b);
    } else {
        struct vmd_host *host = VMD_TID_HOST(a) ? vmd->hosts[VMD_TID_HOST(a)] : NULL;
        struct wire_wbuf req;
        wire_wbuf_init(&req);
        wire_put_u32(&req, a);
        wire_put_u32(&req, b);
        f->status = host ? fwd_send(vmd, f, host, h->type, &req) : WIRE_ENOTASK;
        wire_wbuf_free(&req);
    }
    return fwd_end(vmd, f, 0);
}

/* pvm_tasks: u32 where; every host that may hold a match lists its own. */
int
vmd_fwd_list(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    struct wire_rbuf r;
    struct wire_wbuf req;
    uint32_t a;
    int rc;
    struct vmd_fwd *f = fwd_begin(vmd, from, h);
    if (f == NULL)
        return 0;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &a)) != 0)
        return fwd_end(vmd, f, rc);
    wire_wbuf_init(&req);
    wire_put_u32(&req, a);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        struct vmd_host *host = vmd->hosts[i];
        if (host == NULL || host->state != VMD_HOST_UP)
            continue;
        if (a != 0 && VMD_TID_HOST(a) != i)
            continue;
        if (i == vmd->index) {
            struct wire_wbuf part;
            wire_wbuf_init(&part);
            list_part(vmd, a, &part);
            acc_list(f, part.data, part.len);
            wire_wbuf_free(&part);
        } else if (fwd_send(vmd, f, host, h->type, &req) != 0 && a != 0) {
            f->status = WIRE_EHOSTFAIL;
        }
    }
    wire_wbuf_free(&req);
    if (a != 0 && (VMD_TID_HOST(a) < 1 || vmd->hosts[VMD_TID_HOST(a)] == NULL))
        f->status = WIRE_ENOHOST;
    return fwd_end(vmd, f, 0);
}

/* A watch of task a (or its cancel) to the daemon of host hi, which keeps
 * it: u32 tid, i32 tag (u32 1: cancel).  0, or -1 when hi is not in the VM
 * or the frame could not go. */
static int
send_watch(struct vmd *vmd, struct vmd_fwd *f, int hi, int type, uint32_t a, int32_t tag,
           int cancel)
{
    struct vmd_host *host = hi > 0 ? vmd->hosts[hi] : NULL;
    struct wire_wbuf one;
    int rc = -1;
    wire_wbuf_init(&one);
    wire_put_u32(&one, a);
    wire_put_i32(&one, tag);
    if (cancel)
        wire_put_u32(&one, 1);
    if (host != NULL)
        rc = fwd_send(vmd, f, host, type, &one) != 0 ? -1 : 0;
    wire_wbuf_free(&one);
    return rc;
}

/* PvmTaskExit for tid a: watched where it lives, with a copy here when
 * that is another host (vmd_watch_remote_add). */
static void
notify_exit_one(struct vmd *vmd, struct vmd_fwd *f, int type, int32_t tag, int32_t ctx,
                uint32_t a)
{
    int hi = VMD_TID_HOST(a);
    if (hi == vmd->index) {
        f->status = vmd_watch_exit(vmd, f->origin, tag, ctx, a);
        return;
    }
    /* A host we cannot reach: the task is as good as gone.  One we can
     * may die later: the copy tells the watcher then. */
    if (send_watch(vmd, f, hi, type, a, tag, 0) != 0)
        vmd_watch_exit(vmd, f->origin, tag, ctx, a);
    else if (vmd_watch_remote_add(vmd, f->origin, tag, ctx, a) != 0)
        f->status = -ENOMEM;
}

/*
 * PvmTaskExit | PvmNotifyCancel for tid a: the watch goes and the watcher
 * is told now.  A watch of a task of another host is dropped there too,
 * told by the copy kept here; with no copy there is nothing to cancel.
 */
static void
notify_cancel_one(struct vmd *vmd, struct vmd_fwd *f, int type, int32_t tag, int32_t ctx,
                  uint32_t a)
{
    int hi = VMD_TID_HOST(a);
    if (hi == vmd->index) {
        vmd_watch_cancel(vmd, f->origin, tag, ctx, a, 1);
        return;
    }
    if (vmd_watch_remote_cancel(vmd, f->origin, tag, ctx, a))
        send_watch(vmd, f, hi, type, a, tag, 1);
}

/* pvm_notify: u32 what, i32 tag, u32 n, u32 tids[n].  PvmTaskExit spans
 * hosts; the host events are this daemon's own (vmd_hostwatch.c). */
int
vmd_fwd_notify(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t a, what, n;
    int32_t tag;
    int rc;
    struct vmd_fwd *f = fwd_begin(vmd, from, h);
    if (f == NULL)
        return 0;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &what)) || (rc = wire_get_i32(&r, &tag)) ||
        (rc = wire_get_u32(&r, &n)))
        return fwd_end(vmd, f, rc);
    if ((what & ~VMD_NOTIFY_CANCEL) != 1) {
        f->status = vmd_hostwatch_request(vmd, f->origin, h, body);
        return fwd_end(vmd, f, 0);
    }
    if (n > 65536)
        return fwd_end(vmd, f, -EINVAL);
    for (uint32_t i = 0; i < n; i++) {
        if ((rc = wire_get_u32(&r, &a)) != 0)
            return fwd_end(vmd, f, rc);
        if (what & VMD_NOTIFY_CANCEL)
            notify_cancel_one(vmd, f, h->type, tag, h->ctx, a);
        else
            notify_exit_one(vmd, f, h->type, tag, h->ctx, a);
    }
    return fwd_end(vmd, f, 0);
}

static struct vmd_fwd *
fwd_by_id(struct vmd *vmd, uint32_t id)
{
    for (struct vmd_list *l = vmd->fwds.next; l != &vmd->fwds; l = l->next) {
        struct vmd_fwd *f = vmd_container_of(l, struct vmd_fwd, link);
        if (f->id == id)
            return f;
    }
    return NULL;
}

/* A part's answer: u32 op id, then what the part produced; tag: status. */
int
vmd_fwd_on_reply(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t id;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &id)) != 0)
        return rc;
    struct vmd_fwd *f = fwd_by_id(vmd, id);
    if (f == NULL)
        return 0;       /* it timed out already */
    /* Only a host sent a part answers it, once, and for its own slots: a
     * peer's word about another host's tasks is not taken. */
    int host = from->host, d = 0;
    while (d < f->ndue && (f->due[d].host != host || f->due[d].n == 0))
        d++;
    if (d == f->ndue) {
        log_warn("peer %s: answered a request it was not sent (op %u); ignored",
                 from->peer ? from->peer->name : "?", id);
        return 0;
    }
    f->due[d].n--;
    if (h->tag != 0 && f->status == 0)
        f->status = h->tag;
    if (f->type == WIRE_T_TASK_LIST) {
        acc_list(f, body + r.pos, r.len - r.pos);
    } else if (f->type == WIRE_T_TASK_SPAWN) {
        uint32_t n, slot;
        int32_t tid;
        if (wire_get_u32(&r, &n) == 0 && n <= (uint32_t)f->ntask)
            for (uint32_t i = 0; i < n; i++)
                if (wire_get_u32(&r, &slot) == 0 && wire_get_i32(&r, &tid) == 0 &&
                    slot < (uint32_t)f->ntask && f->hosts[slot] == VMD_HOST_TID(host) &&
                    (tid < 0 || VMD_TID_HOST((uint32_t)tid) == host))
                    f->tids[slot] = tid;
    }
    fwd_release(vmd, f);
    return 0;
}

/* Another host's part of a request: u32 op id, u32 origin tid, u32 type,
 * the request; done here as if the origin task had asked locally. */
int
vmd_fwd_on_request(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                   const unsigned char *body)
{
    struct vmd_peer *p = from->peer;
    struct wire_rbuf r;
    uint32_t id, origin, type;
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &id)) || (rc = wire_get_u32(&r, &origin)) ||
        (rc = wire_get_u32(&r, &type)))
        return rc;
    /* A host asks only on behalf of its own tasks. */
    if (VMD_TID_HOST(origin) != p->host->index)
        return WIRE_EFRAME;
    struct wire_wbuf out;
    wire_wbuf_init(&out);
    wire_put_u32(&out, id);
    if (type == WIRE_T_TASK_LIST) {
        uint32_t where;
        rc = wire_get_u32(&r, &where);
        if (rc == 0)
            rc = list_part(vmd, where, &out);
    } else {
        rc = exec_local(vmd, origin, (int)type, h->ctx, &r, &out);
    }
    if (rc == WIRE_EFRAME) {
        wire_wbuf_free(&out);
        return rc;
    }
    struct wire_hdr rh = { .type = WIRE_T_FWD_REPLY, .src = VMD_HOST_TID(vmd->index), .tag = rc };
    if (out.err == 0)
        vmd_peer_send(p, &rh, out.data, out.len);
    wire_wbuf_free(&out);
    return 0;
}

/* Answer requests whose hosts did not (a host died), or all when halting. */
void
vmd_fwd_sweep(struct vmd *vmd)
{
    uint64_t now = uv_now(vmd->loop);
    struct vmd_list *l, *next;
    for (l = vmd->fwds.next; l != &vmd->fwds; l = next) {
        next = l->next;
        struct vmd_fwd *f = vmd_container_of(l, struct vmd_fwd, link);
        if (!vmd->halting && now < f->deadline)
            continue;
        for (int i = 0; i < f->ntask; i++)
            if (f->tids[i] == 0)
                f->tids[i] = WIRE_EHOSTFAIL;
        if (f->status == 0 && f->type != WIRE_T_TASK_SPAWN && f->type != WIRE_T_TASK_LIST)
            f->status = WIRE_EHOSTFAIL;
        fwd_finish(vmd, f);
    }
}

const struct vmd_hooks vmd_fwd_hooks = {
    .module = "fwd",
    .halt = vmd_fwd_sweep,
};
