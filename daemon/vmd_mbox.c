/*
 * vmd_mbox.c - PVM's message mailbox (pvm_putinfo, pvm_recvinfo,
 * pvm_delinfo, pvm_getmboxinfo), kept by the master: requests from tasks
 * on other hosts reach it through RELAY (vmd_ops.c), with the owner tid
 * filled in by the task's own daemon, never by the task.
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
    vmd_ops_answer(vmd, origin, client_id, req_id, 0, &b);
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
        answer_entry(vmd, w->origin_host, w->client_id, w->req_id, e);
        vmd_list_remove(&w->link);
        int take = w->flags & MB_READDELETE;
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
        if (old && !permitted(old, owner))
            return old->owner == 0 && !(old->flags & MB_OVERWRITE) ? WIRE_EDENIED : -EEXIST;
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

int
vmd_mbox_request(struct vmd *vmd, int origin, uint32_t client_id, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct wire_rbuf r;
    struct wire_wbuf b;
    uint32_t owner, flags;
    int32_t index;
    char name[256];
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_get_u32(&r, &owner)) != 0)
        return rc;
    wire_wbuf_init(&b);
    switch (h->type) {
    case WIRE_T_MBOX_PUT: {
        struct mb_entry *e = NULL;
        rc = do_put(vmd, owner, &r, &index, &e);
        if (rc == WIRE_EFRAME)
            break;
        if (rc == 0)
            wire_put_i32(&b, index);
        vmd_ops_answer(vmd, origin, client_id, h->id, rc, &b);
        if (e)
            wake_waiters(vmd, e);
        rc = 0;
        break;
    }
    case WIRE_T_MBOX_GET:
    case WIRE_T_MBOX_DEL: {
        if ((rc = wire_get_str(&r, name, sizeof(name))) || (rc = wire_get_i32(&r, &index)) ||
            (rc = wire_get_u32(&r, &flags)))
            break;
        int get = h->type == WIRE_T_MBOX_GET;
        struct mb_entry *e = find(vmd, name, index, get && (flags & MB_FIRSTAVAIL));
        if (e == NULL && get && (flags & MB_WAIT)) {
            struct mb_wait *w = calloc(1, sizeof(*w));
            if (w == NULL) {
                vmd_ops_answer(vmd, origin, client_id, h->id, -ENOMEM, NULL);
                break;
            }
            vmd_strlcpy(w->name, name, sizeof(w->name));
            w->index = index;
            w->flags = flags;
            w->origin_host = origin;
            w->client_id = client_id;
            w->req_id = h->id;
            vmd_list_insert(&vmd->mbox_waits, &w->link);
            break;
        }
        if (e == NULL) {
            vmd_ops_answer(vmd, origin, client_id, h->id, WIRE_ENOTFOUND, NULL);
            break;
        }
        int del = !get || (flags & MB_READDELETE);
        if (del && !permitted(e, owner)) {
            vmd_ops_answer(vmd, origin, client_id, h->id, WIRE_EDENIED, NULL);
            break;
        }
        if (get)
            answer_entry(vmd, origin, client_id, h->id, e);
        else
            vmd_ops_answer(vmd, origin, client_id, h->id, 0, NULL);
        if (del)
            entry_free(e);
        break;
    }
    case WIRE_T_MBOX_LIST: {
        int err = 0;
        if ((rc = wire_get_str(&r, name, sizeof(name))) != 0)
            break;
        list_classes(vmd, name, &b, &err);
        vmd_ops_answer(vmd, origin, client_id, h->id, err, err ? NULL : &b);
        break;
    }
    case WIRE_T_MBOX_GONE: {
        /* Its entries go, or lose their owner if persistent (PVM). */
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
        vmd_ops_answer(vmd, origin, client_id, h->id, 0, NULL);
        break;
    }
    default:
        rc = WIRE_EFRAME;
    }
    wire_wbuf_free(&b);
    return rc;
}

/* halt, or the master leaving: every entry and waiter goes. */
void
vmd_mbox_clear(struct vmd *vmd)
{
    while (!vmd_list_empty(&vmd->mbox))
        entry_free(vmd_container_of(vmd->mbox.next, struct mb_entry, link));
    while (!vmd_list_empty(&vmd->mbox_waits)) {
        struct vmd_list *l = vmd->mbox_waits.next;
        vmd_list_remove(l);
        free(vmd_container_of(l, struct mb_wait, link));
    }
}
