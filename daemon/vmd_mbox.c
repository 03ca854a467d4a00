/*
 * vmd_mbox.c - PVM's message mailbox (pvm_putinfo, pvm_recvinfo,
 * pvm_delinfo, pvm_getmboxinfo), kept by the master: requests from tasks
 * on other hosts reach it through RELAY (vmd_relay.c), with the owner tid
 * filled in by the task's own daemon, never by the task (vmd_dispatch.c).
 *
 * An entry is a message under <name, index>, owned by the task that put
 * it.  Without PvmMboxMultiInstance a name has one entry, index 0; with it
 * each put takes the lowest free index.  Only the owner, or anyone if the
 * entry is PvmMboxOverWritable, may replace or delete it.  When its owner
 * leaves the VM an entry is deleted, unless PvmMboxPersistent, which keeps
 * it with owner 0.  pvm_recvinfo with PvmMboxWaitForInfo waits for a put.
 */
#define LOG_TAG "mbox"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define MB_PERSISTENT 1
#define MB_MULTI 2
#define MB_OVERWRITE 4
#define MB_FIRSTAVAIL 8
#define MB_READDELETE 16
#define MB_WAIT 32
#define MB_FLAGMASK 511
#define MB_DIRECT_SHIFT 10
#define MB_MAX_ENTRIES 65536

struct mb_entry {
    struct vmd_list link;       /* in vmd->mbox, sorted by name then index */
    char name[256];
    int32_t index;
    uint32_t owner;
    uint32_t flags;
    uint32_t enc;
    unsigned char *data;
    size_t len;
};

/* A pvm_recvinfo(..., PvmMboxWaitForInfo) waiting for a put. */
struct mb_wait {
    struct vmd_list link;       /* in vmd->mbox_waits */
    char name[256];
    int32_t index;
    uint32_t flags;
    int origin_host;
    uint32_t client_id, req_id;
    uint32_t owner;             /* the waiting task: may it take the entry? */
};

static struct mb_entry *
find(struct vmd *vmd, const char *name, int32_t index, int first_avail)
{
    for (struct vmd_list *l = vmd->mbox.next; l != &vmd->mbox; l = l->next) {
        struct mb_entry *e = vmd_container_of(l, struct mb_entry, link);
        if (strcmp(e->name, name) == 0 && (first_avail ? e->index >= index : e->index == index))
            return e;
    }
    return NULL;
}

static void
entry_free(struct mb_entry *e)
{
    vmd_list_remove(&e->link);
    free(e->data);
    free(e);
}

/* Insert keeping the list sorted by name, then index. */
static void
insert_sorted(struct vmd *vmd, struct mb_entry *n)
{
    struct vmd_list *l;
    for (l = vmd->mbox.next; l != &vmd->mbox; l = l->next) {
        struct mb_entry *e = vmd_container_of(l, struct mb_entry, link);
        int c = strcmp(e->name, n->name);
        if (c > 0 || (c == 0 && e->index > n->index))
            break;
    }
    vmd_list_insert(l, &n->link);
}

static void
answer_entry(struct vmd *vmd, int origin, uint32_t client_id, uint32_t req_id,
             const struct mb_entry *e)
{
    struct wire_wbuf b;
    wire_wbuf_init(&b);
    wire_put_u32(&b, e->owner);
    wire_put_u32(&b, e->enc);
    wire_put_i32(&b, e->index);
    wire_put_bytes(&b, e->data, e->len);
    vmd_reply(vmd, origin, client_id, req_id, 0, &b);
    wire_wbuf_free(&b);
}

static int
permitted(const struct mb_entry *e, uint32_t who)
{
    return e->owner == who || (e->flags & MB_OVERWRITE);
}

/* A put may satisfy waiting readers; a read-and-delete one takes it. */
static void
wake_waiters(struct vmd *vmd, struct mb_entry *e)
{
    struct vmd_list *l, *next;
    for (l = vmd->mbox_waits.next; l != &vmd->mbox_waits; l = next) {
        next = l->next;
        struct mb_wait *w = vmd_container_of(l, struct mb_wait, link);
        if (strcmp(w->name, e->name) != 0 ||
            ((w->flags & MB_FIRSTAVAIL) ? e->index < w->index : e->index != w->index))
            continue;
        int take = w->flags & MB_READDELETE;
        vmd_list_remove(&w->link);
        /* Read-and-delete of another's locked entry: refused, as when the
         * entry was there at the call; the entry stays. */
        if (take && !permitted(e, w->owner)) {
            vmd_reply(vmd, w->origin_host, w->client_id, w->req_id, WIRE_EDENIED, NULL);
            free(w);
            continue;
        }
        answer_entry(vmd, w->origin_host, w->client_id, w->req_id, e);
        free(w);
        if (take) {
            entry_free(e);
            return;
        }
    }
}

static int
do_put(struct vmd *vmd, uint32_t owner, struct wire_rbuf *r, int32_t *index_out,
       struct mb_entry **put)
{
    char name[256];
    uint32_t flags, enc;
    const void *p;
    int rc;
    if ((rc = wire_get_str(r, name, sizeof(name))) || (rc = wire_get_u32(r, &flags)) ||
        (rc = wire_get_u32(r, &enc)))
        return rc;
    size_t len = r->len - r->pos;
    if ((rc = wire_get_bytes(r, &p, len)) != 0)
        return rc;
    int32_t direct = (int32_t)(flags >> MB_DIRECT_SHIFT);
    int32_t index = 0;
    struct mb_entry *old = NULL;

    if (direct > 0 || !(flags & MB_MULTI)) {
        /* One named instance, or a direct index: replace what is there. */
        index = direct;
        old = find(vmd, name, index, 0);
        /* Another's locked entry: PvmDenied, as PVM 3.4.6 answers (its man
         * page's example tests PvmExists, which is -33, not this). */
        if (old && !permitted(old, owner))
            return WIRE_EDENIED;
    } else {
        /* The lowest free index of the class. */
        while (find(vmd, name, index, 0))
            index++;
    }
    int count = 0;
    for (struct vmd_list *l = vmd->mbox.next; l != &vmd->mbox; l = l->next)
        count++;
    if (count >= MB_MAX_ENTRIES && old == NULL)
        return -ENOSPC;
    struct mb_entry *e = calloc(1, sizeof(*e));
    if (e == NULL || (len && (e->data = malloc(len)) == NULL)) {
        free(e);
        return -ENOMEM;
    }
    vmd_strlcpy(e->name, name, sizeof(e->name));
    e->index = index;
    e->owner = owner;
    e->flags = flags & MB_FLAGMASK;
    e->enc = enc;
    e->len = len;
    if (len)
        memcpy(e->data, p, len);
    if (old)
        entry_free(old);
    insert_sorted(vmd, e);
    *index_out = index;
    *put = e;
    return 0;
}

static void
list_classes(struct vmd *vmd, const char *pattern, struct wire_wbuf *b, int *err)
{
    regex_t re;
    int all = strcmp(pattern, "*") == 0 || pattern[0] == '\0';
    if (!all && regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
        *err = -EINVAL;
        return;
    }
    struct wire_wbuf items;
    uint32_t nclasses = 0;
    wire_wbuf_init(&items);
    struct vmd_list *l = vmd->mbox.next;
    while (l != &vmd->mbox) {
        struct mb_entry *first = vmd_container_of(l, struct mb_entry, link);
        uint32_t n = 0;
        struct vmd_list *m;
        for (m = l; m != &vmd->mbox; m = m->next)
            if (strcmp(vmd_container_of(m, struct mb_entry, link)->name, first->name) == 0)
                n++;
            else
                break;
        if (all || regexec(&re, first->name, 0, NULL, 0) == 0) {
            nclasses++;
            wire_put_str(&items, first->name);
            wire_put_u32(&items, n);
            for (struct vmd_list *k = l; k != m; k = k->next) {
                struct mb_entry *e = vmd_container_of(k, struct mb_entry, link);
                wire_put_i32(&items, e->index);
                wire_put_u32(&items, e->owner);
                wire_put_u32(&items, e->flags);
            }
        }
        l = m;
    }
    if (!all)
        regfree(&re);
    wire_put_u32(b, nclasses);
    wire_put_bytes(b, items.data, items.len);
    wire_wbuf_free(&items);
}

/* The owner word every request starts with (the task's daemon wrote it). */
static int
get_owner(struct wire_rbuf *r, const struct wire_hdr *h, const unsigned char *body,
          uint32_t *owner)
{
    wire_rbuf_init(r, body, h->len);
    return wire_get_u32(r, owner);
}

/* pvm_putinfo: u32 owner, str name, u32 flags, u32 encoding, the message. */
int
vmd_mbox_put(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    struct wire_rbuf r;
    struct wire_wbuf b;
    struct mb_entry *e = NULL;
    uint32_t owner;
    int32_t index;
    int rc;

    if ((rc = get_owner(&r, h, body, &owner)) != 0)
        return rc;
    rc = do_put(vmd, owner, &r, &index, &e);
    if (rc == WIRE_EFRAME)
        return rc;
    wire_wbuf_init(&b);
    if (rc == 0)
        wire_put_i32(&b, index);
    vmd_answer(vmd, from, h, rc, &b);
    wire_wbuf_free(&b);
    if (e)
        wake_waiters(vmd, e);
    return 0;
}

/* A pvm_recvinfo with PvmMboxWaitForInfo that found nothing waits. */
static void
wait_for_put(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const char *name, int32_t index, uint32_t flags, uint32_t owner)
{
    struct mb_wait *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        vmd_answer(vmd, from, h, -ENOMEM, NULL);
        return;
    }
    vmd_strlcpy(w->name, name, sizeof(w->name));
    w->index = index;
    w->flags = flags;
    w->origin_host = from->host;
    w->client_id = from->client_id;
    w->req_id = h->id;
    w->owner = owner;
    vmd_list_insert(&vmd->mbox_waits, &w->link);
}

/* pvm_recvinfo (get) and pvm_delinfo: u32 owner, str name, i32 index,
 * u32 flags. */
static int
get_or_del(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
           const unsigned char *body, int get)
{
    struct wire_rbuf r;
    uint32_t owner, flags;
    int32_t index;
    char name[256];
    int rc;

    if ((rc = get_owner(&r, h, body, &owner)) || (rc = wire_get_str(&r, name, sizeof(name))) ||
        (rc = wire_get_i32(&r, &index)) || (rc = wire_get_u32(&r, &flags)))
        return rc;
    struct mb_entry *e = find(vmd, name, index, get && (flags & MB_FIRSTAVAIL));
    if (e == NULL && get && (flags & MB_WAIT)) {
        wait_for_put(vmd, from, h, name, index, flags, owner);
        return 0;
    }
    if (e == NULL) {
        vmd_answer(vmd, from, h, WIRE_ENOTFOUND, NULL);
        return 0;
    }
    int del = !get || (flags & MB_READDELETE);
    if (del && !permitted(e, owner)) {
        vmd_answer(vmd, from, h, WIRE_EDENIED, NULL);
        return 0;
    }
    if (get)
        answer_entry(vmd, from->host, from->client_id, h->id, e);
    else
        vmd_answer(vmd, from, h, 0, NULL);
    if (del)
        entry_free(e);
    return 0;
}

int
vmd_mbox_get(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    return get_or_del(vmd, from, h, body, 1);
}

int
vmd_mbox_del(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
             const unsigned char *body)
{
    return get_or_del(vmd, from, h, body, 0);
}

/* pvm_getmboxinfo: u32 owner, str pattern. */
int
vmd_mbox_list(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct wire_rbuf r;
    struct wire_wbuf b;
    uint32_t owner;
    char name[256];
    int rc, err = 0;

    if ((rc = get_owner(&r, h, body, &owner)) || (rc = wire_get_str(&r, name, sizeof(name))))
        return rc;
    wire_wbuf_init(&b);
    list_classes(vmd, name, &b, &err);
    vmd_answer(vmd, from, h, err, err ? NULL : &b);
    wire_wbuf_free(&b);
    return 0;
}

/* Task `owner` left the VM: its entries go, or lose their owner if
 * persistent (PVM). */
static void
owner_gone(struct vmd *vmd, uint32_t owner)
{
    struct vmd_list *l, *next;
    for (l = vmd->mbox.next; l != &vmd->mbox; l = next) {
        next = l->next;
        struct mb_entry *e = vmd_container_of(l, struct mb_entry, link);
        if (e->owner != owner)
            continue;
        if (e->flags & MB_PERSISTENT)
            e->owner = 0;
        else
            entry_free(e);
    }
}

/* A task of another host left the VM (its daemon relays: u32 tid). */
int
vmd_mbox_gone(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
              const unsigned char *body)
{
    struct wire_rbuf r;
    uint32_t owner;
    int rc;
    if ((rc = get_owner(&r, h, body, &owner)) != 0)
        return rc;
    owner_gone(vmd, owner);
    vmd_answer(vmd, from, h, 0, NULL);
    return 0;
}

/* A task of this host left the VM: the master drops its entries (no
 * client waits for that answer). */
static void
mbox_task_gone(struct vmd *vmd, struct vmd_task *t)
{
    uint32_t tid = t->tid;
    unsigned char body[4];
    if (vmd->halting || vmd->halting_vm)
        return;
    if (vmd->is_master) {
        owner_gone(vmd, tid);
        return;
    }
    wire_be32_put(body, tid);
    vmd_relay_own(vmd, WIRE_T_MBOX_GONE, body, sizeof(body));
}

/* halt, or the master leaving: every entry and waiter goes. */
static void
mbox_halt(struct vmd *vmd)
{
    while (!vmd_list_empty(&vmd->mbox))
        entry_free(vmd_container_of(vmd->mbox.next, struct mb_entry, link));
    while (!vmd_list_empty(&vmd->mbox_waits)) {
        struct vmd_list *l = vmd->mbox_waits.next;
        vmd_list_remove(l);
        free(vmd_container_of(l, struct mb_wait, link));
    }
}

const struct vmd_hooks vmd_mbox_hooks = {
    .module = "mbox",
    .halt = mbox_halt,
    .task_gone = mbox_task_gone,
};
