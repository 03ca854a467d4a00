/*
 * vmd_group.c - PVM's dynamic groups (pvm_joingroup and friends), kept in
 * the daemons instead of PVM's group server task pvmgs: the group table
 * lives on the master, so it costs no task and lasts as long as the VM.
 *
 * The master's table.  A group is a name and an array indexed by instance
 * number holding each member's tid; a join takes the lowest free instance,
 * as PVM does, and a group with no members left is gone.  Requests reach
 * the master as the mailbox's do (task -> its daemon -> RELAY -> master),
 * with the task's tid filled in by its own daemon.  A freeze waits until
 * `size` members have asked for it; afterwards the group takes no joins.
 *
 * Barriers are gathered per host, then between hosts (so a barrier of 64
 * tasks on 4 hosts costs 4 messages to the master and 4 back, not 64 round
 * trips).  Every daemon keeps a local view of the groups that have members
 * on its host (struct lgrp): the master tells a member's daemon of each
 * join and leave (GROUP_SYNC, on the same link and before the reply, so
 * the daemon knows before the task does).  A task's pvm_barrier waits at
 * its daemon; when every local member has arrived (or the arrivals alone
 * reach the count, or VMD_GROUP_HOLD_MS passed, for barriers that not every
 * member joins) the daemon sends one BARRIER_ARRIVE with the number that
 * arrived.  The master adds them up and, at the count, answers each host
 * with BARRIER_DONE for its number; the daemon releases that many of its
 * oldest forwarded waiters (the link keeps them in order).
 *
 * A member that leaves the VM (exit, kill, death, its host lost) breaks
 * the barriers it could have been part of: the master gives the group a
 * new generation, fails the barrier in progress and tells every daemon
 * (GROUP_SYNC broken), which fails the arrivals it holds.  Arrivals stamped
 * with an older generation that were on their way fail on arrival, and a
 * barrier that, after a death (and before a join or a barrier that passed),
 * waits for more members than the group has fails at once.  So a barrier
 * with a dying member ends with an error, never a hang.  The same happens,
 * with PvmNoGroup and for good, when a member leaves a frozen group while
 * a barrier is in progress (pvm_freezegroup(3PVM)).  GROUP_INFO also
 * tells the latest members that died, so that a task waiting in pvm_reduce,
 * pvm_gather or pvm_scatter can tell a slow member from a lost one
 * (lib/pvm/pvm_reduce.c).
 */
#define LOG_TAG "group"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define VMD_GROUP_NAME_MAX 256
#define VMD_GROUP_MAX_INST 65536
#define VMD_GROUP_MAX 65536
#define VMD_GROUP_HOLD_MS 20
#define VMD_GROUP_BREAKS 8      /* departures that broke a group, kept for GROUP_INFO */

enum { SYNC_JOINED = 1, SYNC_LEFT = 2, SYNC_BROKEN = 3 };

/* A pvm_freezegroup waiting for the others. */
struct frz_wait {
    int origin;
    uint32_t client_id, req_id;
    uint32_t tid;
};

/* The master's entry. */
struct grp {
    struct vmd_list link;       /* in vmd->groups */
    char name[VMD_GROUP_NAME_MAX];
    uint32_t *tids;             /* by instance; 0: free */
    int ninst;                  /* slots in tids */
    int size;                   /* members */
    int frozen, fsize;
    int defunct;                /* frozen and a member left during a barrier */
    uint32_t gen;               /* arrivals of an older generation fail */
    int gen_code;               /* why the generation changed */
    int broken;                 /* a member died since the last barrier or join */
    int freeze_size;            /* 0: no freeze in progress */
    struct frz_wait *fw;
    int nfw;
    int bar_active, bar_count, bar_total;
    struct bar_host {
        int host;
        uint32_t n;
    } *bar;
    int nbar;
    /* The latest members that left by dying (ring): a task waiting in a
     * collective asks for them to tell a slow member from a lost one. */
    struct grp_break {
        uint32_t tid;
        int32_t inst;
        uint64_t at;            /* uv_now */
    } brk[VMD_GROUP_BREAKS];
    unsigned nbrk;              /* entries ever recorded */
};

/* A waiter of a local barrier. */
struct lwait {
    uint32_t client_id, req_id, tid;
};

/* A daemon's view of a group with members (or waiters) on its host. */
struct lgrp {
    struct vmd_list link;       /* in vmd->lgroups */
    char name[VMD_GROUP_NAME_MAX];
    uint32_t *tids;             /* local members */
    int n, cap;
    uint32_t gen;
    int count;                  /* of the latest arrival */
    struct lwait *w;            /* arrival order; the first `inflight` went to the master */
    int nw, wcap;
    int inflight;
};

/* ---- helpers ---- */

static void
put_name(struct wire_wbuf *b, const char *name)
{
    wire_put_str(b, name);
}

static struct grp *
grp_find(struct vmd *vmd, const char *name)
{
    for (struct vmd_list *l = vmd->groups.next; l != &vmd->groups; l = l->next) {
        struct grp *g = vmd_container_of(l, struct grp, link);
        if (strcmp(g->name, name) == 0)
            return g;
    }
    return NULL;
}

static int
grp_inst(const struct grp *g, uint32_t tid)
{
    for (int i = 0; i < g->ninst; i++)
        if (g->tids[i] == tid)
            return i;
    return -1;
}

static void
grp_free(struct grp *g)
{
    vmd_list_remove(&g->link);
    free(g->tids);
    free(g->fw);
    free(g->bar);
    free(g);
}

static struct lgrp *
lgrp_find(struct vmd *vmd, const char *name)
{
    for (struct vmd_list *l = vmd->lgroups.next; l != &vmd->lgroups; l = l->next) {
        struct lgrp *g = vmd_container_of(l, struct lgrp, link);
        if (strcmp(g->name, name) == 0)
            return g;
    }
    return NULL;
}

static int
lgrp_has(const struct lgrp *g, uint32_t tid)
{
    for (int i = 0; i < g->n; i++)
        if (g->tids[i] == tid)
            return 1;
    return 0;
}

static void
lgrp_maybe_free(struct lgrp *g)
{
    if (g->n > 0 || g->nw > 0)
        return;
    vmd_list_remove(&g->link);
    free(g->tids);
    free(g->w);
    free(g);
}

/* Answer waiters [from, to) of g with status and drop them from the queue. */
static void
lgrp_answer(struct vmd *vmd, struct lgrp *g, int from, int to, int status)
{
    if (to > g->nw)
        to = g->nw;
    if (from >= to)
        return;
    for (int i = from; i < to; i++)
        vmd_client_reply(vmd, g->w[i].client_id, g->w[i].req_id, status, NULL);
    memmove(&g->w[from], &g->w[to], (size_t)(g->nw - to) * sizeof(*g->w));
    g->nw -= to - from;
}

/* ---- the master: messages to the daemons ---- */

static void lgrp_sync(struct vmd *vmd, int op, const char *name, uint32_t tid, uint32_t gen,
                      int code);
static void lgrp_done(struct vmd *vmd, const char *name, uint32_t n, int status);

static void
to_host(struct vmd *vmd, int host, int type, const struct wire_wbuf *b)
{
    struct vmd_host *h = host > 0 && host <= VMD_MAX_HOSTS ? vmd->hosts[host] : NULL;
    if (h == NULL || h->peer == NULL || h->peer->state != VMD_PEER_UP || b->err)
        return;
    struct wire_hdr hh = { .type = (uint8_t)type, .src = VMD_HOST_TID(vmd->index) };
    vmd_peer_send(h->peer, &hh, b->data, b->len);
}

static void
sync_host(struct vmd *vmd, int host, int op, const char *name, uint32_t tid, uint32_t gen,
          int code)
{
    if (host == vmd->index) {
        lgrp_sync(vmd, op, name, tid, gen, code);
        return;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, (uint32_t)op);
    put_name(&b, name);
    wire_put_u32(&b, tid);
    wire_put_u32(&b, gen);
    wire_put_i32(&b, code);
    to_host(vmd, host, WIRE_T_GROUP_SYNC, &b);
    wire_wbuf_free(&b);
}

static void
done_host(struct vmd *vmd, int host, const char *name, uint32_t n, int status)
{
    if (host == vmd->index) {
        lgrp_done(vmd, name, n, status);
        return;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    put_name(&b, name);
    wire_put_u32(&b, n);
    wire_put_i32(&b, status);
    to_host(vmd, host, WIRE_T_BARRIER_DONE, &b);
    wire_wbuf_free(&b);
}

/* End the barrier in progress: every host gets its number back. */
static void
bar_finish(struct vmd *vmd, struct grp *g, int status)
{
    for (int i = 0; i < g->nbar; i++)
        done_host(vmd, g->bar[i].host, g->name, g->bar[i].n, status);
    g->nbar = 0;
    g->bar_active = 0;
    if (status == 0)
        g->broken = 0;
    g->bar_total = 0;
    g->bar_count = 0;
}

/*
 * A member left in a way that breaks barriers: a new generation, the
 * barrier in progress fails, and every daemon fails what it holds.
 */
static void
grp_break(struct vmd *vmd, struct grp *g, int code)
{
    g->gen = ++vmd->group_gen;
    g->gen_code = code;
    g->broken = 1;
    if (g->bar_active)
        bar_finish(vmd, g, code);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i] && vmd->hosts[i]->state == VMD_HOST_UP)
            sync_host(vmd, i, SYNC_BROKEN, g->name, 0, g->gen, code);
}

/* Answer the freeze once `freeze_size` members asked and are there. */
static void
grp_check_freeze(struct vmd *vmd, struct grp *g)
{
    if (g->freeze_size == 0 || g->nfw < g->freeze_size || g->size < g->freeze_size)
        return;
    g->frozen = 1;
    g->fsize = g->size;
    g->freeze_size = 0;
    log_info("group %s frozen at %d members", g->name, g->fsize);
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_i32(&b, g->fsize);
    for (int i = 0; i < g->nfw; i++)
        vmd_reply(vmd, g->fw[i].origin, g->fw[i].client_id, g->fw[i].req_id, 0, &b);
    wire_wbuf_free(&b);
    free(g->fw);
    g->fw = NULL;
    g->nfw = 0;
}

/* Remove tid from g (it is a member); g may be freed.  Returns 1 if freed. */
static int
grp_remove(struct vmd *vmd, struct grp *g, uint32_t tid, int code)
{
    int inst = grp_inst(g, tid);
    if (inst < 0)
        return 0;
    g->tids[inst] = 0;
    g->size--;
    for (int i = 0; i < g->nfw; i++)
        if (g->fw[i].tid == tid) {
            g->fw[i] = g->fw[--g->nfw];
            break;
        }
    sync_host(vmd, VMD_TID_HOST(tid), SYNC_LEFT, g->name, tid, g->gen, 0);
    if (code != 0) {
        struct grp_break *b = &g->brk[g->nbrk++ % VMD_GROUP_BREAKS];
        b->tid = tid;
        b->inst = inst;
        b->at = uv_now(vmd->loop);
        grp_break(vmd, g, code);
    } else if (g->frozen && g->bar_active) {
        g->defunct = 1;
        grp_break(vmd, g, WIRE_ENOGROUP);
    }
    if (g->size == 0) {
        /* Nobody is left to wait: a freeze or barrier in progress ends. */
        for (int i = 0; i < g->nfw; i++)
            vmd_reply(vmd, g->fw[i].origin, g->fw[i].client_id, g->fw[i].req_id,
                           WIRE_ENOGROUP, NULL);
        if (g->bar_active)
            bar_finish(vmd, g, WIRE_ENOGROUP);
        grp_free(g);
        return 1;
    }
    grp_check_freeze(vmd, g);
    return 0;
}

static int
do_join(struct vmd *vmd, const char *name, uint32_t tid, int32_t *inst_out)
{
    struct grp *g = grp_find(vmd, name);
    if (tid == 0)
        return -EINVAL;
    if (g == NULL) {
        int count = 0;
        for (struct vmd_list *l = vmd->groups.next; l != &vmd->groups; l = l->next)
            count++;
        if (count >= VMD_GROUP_MAX)
            return -ENOSPC;
        if ((g = calloc(1, sizeof(*g))) == NULL)
            return -ENOMEM;
        vmd_strlcpy(g->name, name, sizeof(g->name));
        g->gen = ++vmd->group_gen;
        vmd_list_insert(&vmd->groups, &g->link);
    }
    /* PVM 3.4.6 answers a join of a frozen group with PvmNotInGroup. */
    if (g->frozen)
        return WIRE_ENOTINGROUP;
    if (grp_inst(g, tid) >= 0)
        return WIRE_EDUPGROUP;
    int inst = grp_inst(g, 0);
    if (inst < 0) {
        if (g->ninst >= VMD_GROUP_MAX_INST)
            return -ENOSPC;
        int n = g->ninst ? g->ninst * 2 : 8;
        uint32_t *t = realloc(g->tids, (size_t)n * sizeof(*t));
        if (t == NULL) {
            if (g->size == 0)
                grp_free(g);
            return -ENOMEM;
        }
        memset(t + g->ninst, 0, (size_t)(n - g->ninst) * sizeof(*t));
        inst = g->ninst;
        g->tids = t;
        g->ninst = n;
    }
    g->tids[inst] = tid;
    g->broken = 0;              /* the group is growing again: a barrier may wait for more */
    g->size++;
    sync_host(vmd, VMD_TID_HOST(tid), SYNC_JOINED, g->name, tid, g->gen, 0);
    grp_check_freeze(vmd, g);
    *inst_out = inst;
    return 0;
}

static void
pack_members(const struct grp *g, struct wire_wbuf *b)
{
    wire_put_u32(b, (uint32_t)g->frozen);
    wire_put_u32(b, (uint32_t)g->size);
    for (int i = 0; i < g->ninst; i++)
        if (g->tids[i]) {
            wire_put_i32(b, i);
            wire_put_u32(b, g->tids[i]);
        }
}

/* The master: a BARRIER_ARRIVE of n tasks of host `host`. */
static void
bar_arrive(struct vmd *vmd, int host, const char *name, int32_t count, uint32_t gen, uint32_t n)
{
    struct grp *g = grp_find(vmd, name);
    if (g == NULL || g->defunct) {
        done_host(vmd, host, name, n, WIRE_ENOGROUP);
        return;
    }
    if (gen != g->gen) {
        done_host(vmd, host, name, n, g->gen_code ? g->gen_code : WIRE_ENOTASK);
        return;
    }
    if (!g->bar_active) {
        g->bar_active = 1;
        g->bar_count = count > 0 ? count : (g->frozen ? g->fsize : g->size);
        g->bar_total = 0;
    }
    int i;
    for (i = 0; i < g->nbar && g->bar[i].host != host; i++)
        ;
    if (i == g->nbar) {
        struct bar_host *nb = realloc(g->bar, (size_t)(g->nbar + 1) * sizeof(*nb));
        if (nb == NULL) {
            done_host(vmd, host, name, n, -ENOMEM);
            return;
        }
        g->bar = nb;
        g->bar[g->nbar].host = host;
        g->bar[g->nbar].n = 0;
        g->nbar++;
    }
    g->bar[i].n += n;
    g->bar_total += (int)n;
    if (g->bar_total >= g->bar_count)
        bar_finish(vmd, g, 0);
    else if (g->broken && g->bar_count > g->size)
        /* A member died and the barrier waits for more than are left:
         * it would hang until someone joins, so it fails now. */
        bar_finish(vmd, g, g->gen_code);
}

/* ---- the master: requests to the table ---- */

/* Every request to the master's table: u32 tid (the task's daemon wrote
 * it), str group, then the request's own fields. */
struct greq {
    struct wire_rbuf r;
    uint32_t tid;
    char name[VMD_GROUP_NAME_MAX];
    struct grp *g;              /* the group, if it exists */
    struct wire_wbuf b;         /* the answer */
};

/* 0: q is ready; 1: answered already (a null group name); or an error. */
static int
greq_begin(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
           const unsigned char *body, struct greq *q, int empty_ok)
{
    int rc;
    wire_rbuf_init(&q->r, body, h->len);
    if ((rc = wire_get_u32(&q->r, &q->tid)) != 0 ||
        (rc = wire_get_str(&q->r, q->name, sizeof(q->name))) != 0)
        return rc;
    if (!empty_ok && q->name[0] == '\0') {
        vmd_answer(vmd, from, h, WIRE_ENULLGROUP, NULL);
        return 1;
    }
    q->g = grp_find(vmd, q->name);
    wire_wbuf_init(&q->b);
    return 0;
}

/* Answer with status (the body only on success) and free q. */
static int
greq_end(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
         struct greq *q, int status)
{
    vmd_answer(vmd, from, h, status, status ? NULL : &q->b);
    wire_wbuf_free(&q->b);
    return 0;
}

int
vmd_group_join(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    int32_t inst;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    int status = do_join(vmd, q.name, q.tid, &inst);
    if (status == 0)
        wire_put_i32(&q.b, inst);
    return greq_end(vmd, from, h, &q, status);
}

int
vmd_group_leave(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                const unsigned char *body)
{
    struct greq q;
    int status = 0;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    if (q.g == NULL)
        status = WIRE_ENOGROUP;
    else if (grp_inst(q.g, q.tid) < 0)
        status = WIRE_ENOTINGROUP;
    else
        grp_remove(vmd, q.g, q.tid, 0);
    return greq_end(vmd, from, h, &q, status);
}

/* pvm_gettid: i32 instance. */
int
vmd_group_tid(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct greq q;
    int32_t inst;
    int rc, status = 0;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    if ((rc = wire_get_i32(&q.r, &inst)) != 0) {
        wire_wbuf_free(&q.b);
        return rc;
    }
    if (q.g == NULL)
        status = WIRE_ENOGROUP;
    else if (inst < 0 || inst >= q.g->ninst || q.g->tids[inst] == 0)
        status = WIRE_ENOINST;
    else
        wire_put_u32(&q.b, q.g->tids[inst]);
    return greq_end(vmd, from, h, &q, status);
}

/* pvm_getinst: u32 tid. */
int
vmd_group_inst(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    uint32_t u;
    int rc, status = 0;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    if ((rc = wire_get_u32(&q.r, &u)) != 0) {
        wire_wbuf_free(&q.b);
        return rc;
    }
    if (q.g == NULL)
        status = WIRE_ENOGROUP;
    else if (u == 0 || grp_inst(q.g, u) < 0)
        status = WIRE_ENOTINGROUP;
    else
        wire_put_i32(&q.b, grp_inst(q.g, u));
    return greq_end(vmd, from, h, &q, status);
}

int
vmd_group_size(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    if (q.g == NULL)
        return greq_end(vmd, from, h, &q, WIRE_ENOGROUP);
    wire_put_u32(&q.b, (uint32_t)q.g->size);
    return greq_end(vmd, from, h, &q, 0);
}

/* The members; after them the generation and the latest members that
 * died, newest first, with their instance and how long ago (ms). */
int
vmd_group_info(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    struct grp *g = q.g;
    if (g == NULL)
        return greq_end(vmd, from, h, &q, WIRE_ENOGROUP);
    pack_members(g, &q.b);
    wire_put_u32(&q.b, g->gen);
    int nb = g->nbrk < VMD_GROUP_BREAKS ? (int)g->nbrk : VMD_GROUP_BREAKS;
    uint64_t now = uv_now(vmd->loop);
    wire_put_u32(&q.b, (uint32_t)nb);
    for (int i = 0; i < nb; i++) {
        const struct grp_break *e = &g->brk[(g->nbrk - 1 - (unsigned)i) % VMD_GROUP_BREAKS];
        uint64_t ago = now - e->at;
        wire_put_u32(&q.b, e->tid);
        wire_put_i32(&q.b, e->inst);
        wire_put_u32(&q.b, ago > UINT32_MAX ? UINT32_MAX : (uint32_t)ago);
    }
    return greq_end(vmd, from, h, &q, 0);
}

/* Every group (the name is ignored). */
int
vmd_group_list(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    uint32_t n = 0;
    int begun = greq_begin(vmd, from, h, body, &q, 1);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    for (struct vmd_list *l = vmd->groups.next; l != &vmd->groups; l = l->next)
        n++;
    wire_put_u32(&q.b, n);
    for (struct vmd_list *l = vmd->groups.next; l != &vmd->groups; l = l->next) {
        struct grp *e = vmd_container_of(l, struct grp, link);
        put_name(&q.b, e->name);
        pack_members(e, &q.b);
    }
    return greq_end(vmd, from, h, &q, 0);
}

/* pvm_freezegroup: i32 size (-1: the members now); answered once frozen. */
int
vmd_group_freeze(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct greq q;
    int32_t size;
    int rc;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    struct grp *g = q.g;
    if ((rc = wire_get_i32(&q.r, &size)) != 0) {
        wire_wbuf_free(&q.b);
        return rc;
    }
    if (g == NULL)
        return greq_end(vmd, from, h, &q, WIRE_ENOGROUP);
    if (grp_inst(g, q.tid) < 0)
        return greq_end(vmd, from, h, &q, WIRE_ENOTINGROUP);
    if (g->frozen)
        return greq_end(vmd, from, h, &q, WIRE_EDUPGROUP);
    if (size == 0 || size < -1 || size > VMD_GROUP_MAX_INST)
        return greq_end(vmd, from, h, &q, -EINVAL);
    struct frz_wait *fw = realloc(g->fw, (size_t)(g->nfw + 1) * sizeof(*fw));
    if (fw == NULL)
        return greq_end(vmd, from, h, &q, -ENOMEM);
    g->fw = fw;
    fw[g->nfw].origin = from->host;
    fw[g->nfw].client_id = from->client_id;
    fw[g->nfw].req_id = h->id;
    fw[g->nfw].tid = q.tid;
    g->nfw++;
    if (g->freeze_size == 0)
        g->freeze_size = size == -1 ? g->size : size;
    wire_wbuf_free(&q.b);
    grp_check_freeze(vmd, g);
    return 0;
}

/* A barrier the task's daemon could not gather: it did not find the task
 * among the members, so the master says why. */
static int
barrier_at_master(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    struct greq q;
    int status;
    int begun = greq_begin(vmd, from, h, body, &q, 0);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    if (q.g == NULL)
        status = WIRE_ENOGROUP;
    else if (grp_inst(q.g, q.tid) < 0)
        status = WIRE_ENOTINGROUP;
    else
        status = -EAGAIN;
    return greq_end(vmd, from, h, &q, status);
}

/* Task tid left the VM: it leaves every group, which breaks barriers. */
static void
grp_gone(struct vmd *vmd, uint32_t tid)
{
    struct vmd_list *l, *next;
    for (l = vmd->groups.next; l != &vmd->groups; l = next) {
        next = l->next;
        struct grp *e = vmd_container_of(l, struct grp, link);
        if (grp_inst(e, tid) >= 0)
            grp_remove(vmd, e, tid, WIRE_ENOTASK);
    }
}

/* A task of another host left the VM (its daemon relays: u32 tid, str ""). */
int
vmd_group_gone(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
               const unsigned char *body)
{
    struct greq q;
    int begun = greq_begin(vmd, from, h, body, &q, 1);
    if (begun != 0)
        return begun > 0 ? 0 : begun;
    grp_gone(vmd, q.tid);
    return greq_end(vmd, from, h, &q, 0);
}

/* A task of this host left the VM: the master drops it from its groups. */
static void
gone_to_master(struct vmd *vmd, uint32_t tid)
{
    if (vmd->halting || vmd->halting_vm)
        return;
    if (vmd->is_master) {
        grp_gone(vmd, tid);
        return;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, tid);
    wire_put_str(&b, "");
    if (b.err == 0)
        vmd_relay_own(vmd, WIRE_T_GROUP_GONE, b.data, b.len);
    wire_wbuf_free(&b);
}

/* ---- every daemon: the local view and the barrier gathering ---- */

static void
lgrp_flush(struct vmd *vmd, struct lgrp *g)
{
    uint32_t pending = (uint32_t)(g->nw - g->inflight);
    if (pending == 0)
        return;
    g->inflight = g->nw;
    if (vmd->is_master) {
        bar_arrive(vmd, vmd->index, g->name, g->count, g->gen, pending);
        return;
    }
    struct vmd_host *m = vmd->master_index ? vmd->hosts[vmd->master_index] : NULL;
    if (m == NULL || m->peer == NULL || m->peer->state != VMD_PEER_UP) {
        lgrp_answer(vmd, g, g->nw - (int)pending, g->nw, WIRE_ENOVM);
        g->inflight = g->nw;
        return;
    }
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    put_name(&b, g->name);
    wire_put_i32(&b, g->count);
    wire_put_u32(&b, g->gen);
    wire_put_u32(&b, pending);
    struct wire_hdr hh = { .type = WIRE_T_BARRIER_ARRIVE, .src = VMD_HOST_TID(vmd->index) };
    if (b.err == 0)
        vmd_peer_send(m->peer, &hh, b.data, b.len);
    wire_wbuf_free(&b);
}

static void
group_on_timer(uv_timer_t *t)
{
    struct vmd *vmd = t->data;
    struct vmd_list *l, *next;
    for (l = vmd->lgroups.next; l != &vmd->lgroups; l = next) {
        next = l->next;
        lgrp_flush(vmd, vmd_container_of(l, struct lgrp, link));
    }
}

/* Every local member arrived, or enough for the count: no reason to wait. */
static void
lgrp_check(struct vmd *vmd, struct lgrp *g)
{
    if (g->nw == g->inflight)
        return;
    if (g->nw >= g->n || (g->count > 0 && g->nw >= g->count)) {
        lgrp_flush(vmd, g);
        return;
    }
    if (vmd->group_timer_init && !uv_is_active((uv_handle_t *)&vmd->group_timer))
        uv_timer_start(&vmd->group_timer, group_on_timer, VMD_GROUP_HOLD_MS, 0);
}

static void
lgrp_sync(struct vmd *vmd, int op, const char *name, uint32_t tid, uint32_t gen, int code)
{
    struct lgrp *g = lgrp_find(vmd, name);
    if (op == SYNC_JOINED) {
        if (g == NULL) {
            if ((g = calloc(1, sizeof(*g))) == NULL) {
                log_warn("out of memory for group %s; its barriers will fail here", name);
                return;
            }
            vmd_strlcpy(g->name, name, sizeof(g->name));
            vmd_list_insert(&vmd->lgroups, &g->link);
        }
        g->gen = gen;
        if (lgrp_has(g, tid))
            return;
        if (g->n == g->cap) {
            int cap = g->cap ? g->cap * 2 : 8;
            uint32_t *t = realloc(g->tids, (size_t)cap * sizeof(*t));
            if (t == NULL)
                return;
            g->tids = t;
            g->cap = cap;
        }
        g->tids[g->n++] = tid;
        /* A task that left before we heard of its join: it is gone. */
        if (vmd_task_by_tid(vmd, tid) == NULL)
            gone_to_master(vmd, tid);
        return;
    }
    if (g == NULL)
        return;
    if (op == SYNC_LEFT) {
        for (int i = 0; i < g->n; i++)
            if (g->tids[i] == tid) {
                g->tids[i] = g->tids[--g->n];
                break;
            }
        lgrp_check(vmd, g);
    } else if (op == SYNC_BROKEN) {
        g->gen = gen;
        /* What we hold arrived before we knew: it fails with the barrier. */
        lgrp_answer(vmd, g, g->inflight, g->nw, code);
    }
    lgrp_maybe_free(g);
}

static void
lgrp_done(struct vmd *vmd, const char *name, uint32_t n, int status)
{
    struct lgrp *g = lgrp_find(vmd, name);
    if (g == NULL)
        return;
    int k = n > (uint32_t)g->inflight ? g->inflight : (int)n;
    lgrp_answer(vmd, g, 0, k, status);
    g->inflight -= k;
    lgrp_check(vmd, g);
    lgrp_maybe_free(g);
}

/* A local task's pvm_barrier. */
static int
local_barrier(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct vmd_client *c = from->client;
    struct wire_rbuf r;
    uint32_t tid;
    int32_t count;
    char name[VMD_GROUP_NAME_MAX];
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &tid)) || (rc = wire_get_str(&r, name, sizeof(name))) ||
        (rc = wire_get_i32(&r, &count)))
        return rc;
    tid = c->task->tid;
    if (name[0] == '\0') {
        vmd_client_reply(vmd, c->id, h->id, WIRE_ENULLGROUP, NULL);
        return 0;
    }
    if (count == 0 || count < -1) {
        vmd_client_reply(vmd, c->id, h->id, -EINVAL, NULL);
        return 0;
    }
    struct lgrp *g = lgrp_find(vmd, name);
    if (g == NULL || !lgrp_has(g, tid)) {
        /* Not a member: the master says whether the group exists. */
        struct wire_wbuf b;
        wire_wbuf_init(&b);
        wire_put_u32(&b, tid);
        wire_put_str(&b, name);
        wire_put_i32(&b, count);
        struct wire_hdr hh = *h;
        hh.len = (uint32_t)b.len;
        if (b.err)
            rc = b.err;
        else if (vmd->is_master)
            rc = barrier_at_master(vmd, from, &hh, b.data);
        else
            rc = vmd_relay_request(vmd, c->id, &hh, b.data);
        wire_wbuf_free(&b);
        return rc;
    }
    if (g->nw == g->wcap) {
        int cap = g->wcap ? g->wcap * 2 : 8;
        struct lwait *w = realloc(g->w, (size_t)cap * sizeof(*w));
        if (w == NULL) {
            vmd_client_reply(vmd, c->id, h->id, -ENOMEM, NULL);
            return 0;
        }
        g->w = w;
        g->wcap = cap;
    }
    g->w[g->nw].client_id = c->id;
    g->w[g->nw].req_id = h->id;
    g->w[g->nw].tid = tid;
    g->nw++;
    g->count = count;
    lgrp_check(vmd, g);
    return 0;
}

/* pvm_barrier: gathered by the task's daemon (a local client's), or, on
 * the master, the relayed one of a task its daemon did not find. */
int
vmd_group_barrier(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    if (from->kind == VMD_FROM_CLIENT)
        return local_barrier(vmd, from, h, body);
    return barrier_at_master(vmd, from, h, body);
}

/* The master: a member's join, leave or break (u32 op, str group, u32
 * tid, u32 gen, i32 code). */
int
vmd_group_on_sync(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    struct wire_rbuf r;
    char name[VMD_GROUP_NAME_MAX];
    uint32_t op, tid, gen;
    int32_t code;
    int rc;
    (void)from;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &op)) || (rc = wire_get_str(&r, name, sizeof(name))) ||
        (rc = wire_get_u32(&r, &tid)) || (rc = wire_get_u32(&r, &gen)) ||
        (rc = wire_get_i32(&r, &code)))
        return rc;
    if (op < SYNC_JOINED || op > SYNC_BROKEN || code > 0 ||
        (op != SYNC_BROKEN && VMD_TID_HOST(tid) != vmd->index))
        return WIRE_EFRAME;
    lgrp_sync(vmd, (int)op, name, tid, gen, code);
    return 0;
}

/* The master: n of our waiters may go (str group, u32 n, i32 status). */
int
vmd_group_on_done(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                  const unsigned char *body)
{
    struct wire_rbuf r;
    char name[VMD_GROUP_NAME_MAX];
    uint32_t n;
    int32_t code;
    int rc;
    (void)from;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_str(&r, name, sizeof(name))) || (rc = wire_get_u32(&r, &n)) ||
        (rc = wire_get_i32(&r, &code)))
        return rc;
    if (code > 0)
        return WIRE_EFRAME;
    lgrp_done(vmd, name, n, code);
    return 0;
}

/* A member daemon, to us the master: n of its tasks arrived (str group,
 * i32 count, u32 gen, u32 n). */
int
vmd_group_on_arrive(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                    const unsigned char *body)
{
    struct wire_rbuf r;
    char name[VMD_GROUP_NAME_MAX];
    uint32_t gen, n;
    int32_t count;
    int rc;
    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_str(&r, name, sizeof(name))) || (rc = wire_get_i32(&r, &count)) ||
        (rc = wire_get_u32(&r, &gen)) || (rc = wire_get_u32(&r, &n)))
        return rc;
    if (n == 0 || n > (uint32_t)vmd->conf.max_tasks + 1)
        return WIRE_EFRAME;
    bar_arrive(vmd, from->peer->host->index, name, count, gen, n);
    return 0;
}

/*
 * A local task left the VM.  Its daemon acts first on what it holds (the
 * arrivals here came before the death), then the master drops it from
 * every group, which breaks the barriers elsewhere.
 */
static void
group_task_gone(struct vmd *vmd, struct vmd_task *t)
{
    uint32_t tid = t->tid;
    /* Halting: the tables go with the daemon (group_halt). */
    if (vmd->halting)
        return;
    struct vmd_list *l, *next;
    for (l = vmd->lgroups.next; l != &vmd->lgroups; l = next) {
        next = l->next;
        struct lgrp *g = vmd_container_of(l, struct lgrp, link);
        if (!lgrp_has(g, tid))
            continue;
        for (int i = 0; i < g->n; i++)
            if (g->tids[i] == tid) {
                g->tids[i] = g->tids[--g->n];
                break;
            }
        lgrp_answer(vmd, g, g->inflight, g->nw, WIRE_ENOTASK);
        lgrp_maybe_free(g);
    }
    gone_to_master(vmd, tid);
}

/* Master: host h left the VM; its tasks leave every group. */
static void
group_host_gone(struct vmd *vmd, struct vmd_host *h)
{
    int index = h->index;
    if (!vmd->is_master)
        return;
    struct vmd_list *l, *next;
    for (l = vmd->groups.next; l != &vmd->groups; l = next) {
        next = l->next;
        struct grp *g = vmd_container_of(l, struct grp, link);
        /* Its arrivals cannot be answered: drop them first. */
        for (int i = 0; i < g->nbar; i++)
            if (g->bar[i].host == index) {
                g->bar_total -= (int)g->bar[i].n;
                g->bar[i] = g->bar[--g->nbar];
                break;
            }
        int freed = 0;
        for (int i = 0; !freed && i < g->ninst; i++)
            if (g->tids[i] && VMD_TID_HOST(g->tids[i]) == index)
                freed = grp_remove(vmd, g, g->tids[i], WIRE_EHOSTFAIL);
    }
}

void
vmd_group_init(struct vmd *vmd)
{
    uv_timer_init(vmd->loop, &vmd->group_timer);
    vmd->group_timer.data = vmd;
    vmd->group_timer_init = 1;
}

/* Halting: waiters get an answer, every table goes. */
static void
group_halt(struct vmd *vmd)
{
    while (!vmd_list_empty(&vmd->lgroups)) {
        struct lgrp *g = vmd_container_of(vmd->lgroups.next, struct lgrp, link);
        lgrp_answer(vmd, g, 0, g->nw, WIRE_EHALTED);
        g->n = 0;
        lgrp_maybe_free(g);
    }
    while (!vmd_list_empty(&vmd->groups)) {
        struct grp *g = vmd_container_of(vmd->groups.next, struct grp, link);
        for (int i = 0; i < g->nfw; i++)
            vmd_reply(vmd, g->fw[i].origin, g->fw[i].client_id, g->fw[i].req_id,
                           WIRE_EHALTED, NULL);
        grp_free(g);
    }
    if (vmd->group_timer_init && !uv_is_closing((uv_handle_t *)&vmd->group_timer))
        uv_close((uv_handle_t *)&vmd->group_timer, NULL);
}

const struct vmd_hooks vmd_group_hooks = {
    .module = "group",
    .halt = group_halt,
    .host_gone = group_host_gone,
    .task_gone = group_task_gone,
};
