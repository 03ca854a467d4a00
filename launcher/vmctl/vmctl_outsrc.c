/*
 * vmctl_outsrc.c - the tasks whose output one `spawn -o` (or one console
 * job) shows, as PVM's console counts them: the tasks it spawned and every
 * task those start (children inherit the catcher and the output code, and
 * their daemon announces each with a "spawned" frame, or, for one started
 * on another host, their spawner's daemon with an "expect" frame that comes
 * before the spawner's own EOF).  A task's output is open until its EOF
 * frame; the spawn or job is over when none is open.
 * A task whose host leaves the VM sends no EOF, so the first task seen on
 * each host asks for that host's PvmHostDelete notice (tag
 * VMCTL_HOSTDEL_TAG), and the notice closes that host's tasks.  No seed
 * idea; PVM's console semantics.
 */
#include "vmctl.h"

#include <stdlib.h>
#include <string.h>

void
vmctl_outsrc_free(struct vmctl_outsrc *o)
{
    unsigned char *w = o->watched;
    free(o->tids);
    free(o->closed);
    memset(o, 0, sizeof(*o));
    o->watched = w;
}

static int
find(const struct vmctl_outsrc *o, uint32_t tid)
{
    for (int i = 0; i < o->n; i++)
        if (o->tids[i] == tid)
            return i;
    return -1;
}

/* Ask for fd's PvmHostDelete notice of tid's host, once per host.  The
 * request is written without waiting: its reply is a frame like the
 * others on the connection, which the readers pass over. */
static void
watch_host(struct vmctl_outsrc *o, int fd, uint32_t tid)
{
    static uint32_t next_id = 3u << 30;
    int host = WIRE_TID_HOST(tid);
    unsigned char bit = (unsigned char)(1u << (host & 7));

    if (fd < 0 || host < 1 || o->watched == NULL || (o->watched[host >> 3] & bit))
        return;
    o->watched[host >> 3] |= bit;
    struct wire_wbuf req;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 2);      /* PvmHostDelete */
    wire_put_i32(&req, VMCTL_HOSTDEL_TAG);
    wire_put_u32(&req, 1);
    wire_put_u32(&req, WIRE_HOST_TID(host));
    struct wire_hdr h = { .type = WIRE_T_TASK_NOTIFY, .id = ++next_id };
    if (req.data != NULL)
        (void)wire_write_frame(fd, &h, req.data, req.len);
    wire_wbuf_free(&req);
}

int
vmctl_outsrc_add(struct vmctl_outsrc *o, int fd, uint32_t tid)
{
    if (find(o, tid) >= 0)
        return 0;
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 8;
        uint32_t *t = realloc(o->tids, (size_t)cap * sizeof(*t));
        if (t == NULL)
            return -1;
        o->tids = t;
        unsigned char *c = realloc(o->closed, (size_t)cap);
        if (c == NULL)
            return -1;
        o->closed = c;
        o->cap = cap;
    }
    o->tids[o->n] = tid;
    o->closed[o->n++] = 0;
    o->open++;
    watch_host(o, fd, tid);
    return 1;
}

int
vmctl_outsrc_frame(struct vmctl_outsrc *o, int fd, const struct wire_hdr *h,
                   const unsigned char *body)
{
    if (h->flags == WIRE_OUT_EXPECT) {
        if (h->len == 4 && body != NULL)
            vmctl_outsrc_add(o, fd, wire_be32_get(body));
        return 0;
    }
    int i = find(o, h->src);
    if (i < 0) {
        /* A task seen first by a later frame still counts until its EOF. */
        if (vmctl_outsrc_add(o, fd, h->src) < 0)
            return 0;
        i = o->n - 1;
    }
    if (h->flags != WIRE_OUT_EOF || o->closed[i])
        return 0;
    o->closed[i] = 1;
    o->open--;
    return 1;
}

void
vmctl_outsrc_host_lost(struct vmctl_outsrc *o, uint32_t dtid)
{
    int host = WIRE_TID_HOST(dtid);
    if (o->watched != NULL) /* for a host that reuses the index */
        o->watched[host >> 3] &= (unsigned char)~(1u << (host & 7));
    for (int i = 0; i < o->n; i++)
        if (!o->closed[i] && WIRE_TID_HOST(o->tids[i]) == WIRE_TID_HOST(dtid)) {
            o->closed[i] = 1;
            o->open--;
        }
}
