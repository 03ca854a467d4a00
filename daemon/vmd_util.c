/*
 * vmd_util.c - small helpers the daemon's files share: the intrusive list,
 * shell quoting for the hoststart command line, bounded string copies,
 * freeing a queue of held messages and the once-a-second rate limit of log
 * lines a stranger can repeat.  It calls no other daemon file.
 */
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
vmd_list_init(struct vmd_list *l)
{
    l->prev = l->next = l;
}

void
vmd_list_insert(struct vmd_list *head, struct vmd_list *n)
{
    n->next = head;
    n->prev = head->prev;
    head->prev->next = n;
    head->prev = n;
}

void
vmd_list_remove(struct vmd_list *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

int
vmd_list_empty(const struct vmd_list *l)
{
    return l->next == l;
}

/*
 * Quote s for /bin/sh: 'a b' and 'it'\''s'.  The hoststart template is run
 * by the shell, so every value we substitute into it is quoted; a name can
 * never inject a command.  Returns 0 or -ENAMETOOLONG.
 */
int
vmd_shell_quote(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    if (cap < 3)
        return -ENAMETOOLONG;
    out[n++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t plen = piece ? 4 : 1;
        if (n + plen + 2 > cap)
            return -ENAMETOOLONG;
        if (piece) {
            memcpy(out + n, piece, plen);
            n += plen;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
    return 0;
}

/* Copy a string that must fit; -ENAMETOOLONG (and dst truncated) if not. */
int
vmd_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (cap == 0)
        return -ENAMETOOLONG;
    if (n >= cap) {
        memcpy(dst, src, cap - 1);
        dst[cap - 1] = '\0';
        return -ENAMETOOLONG;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

/* Every list of struct vmd empty: the first thing main (or a test) does. */
void
vmd_init_lists(struct vmd *vmd)
{
    struct vmd_list *lists[] = { &vmd->peers, &vmd->clients, &vmd->ops, &vmd->starts,
                                 &vmd->tasks, &vmd->hostwatch, &vmd->fwds, &vmd->mbox,
                                 &vmd->mbox_waits, &vmd->groups, &vmd->lgroups, &vmd->rwatch,
                                 &vmd->clocks };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        vmd_list_init(lists[i]);
}

/* A queue of held messages (a host's or a task's), freed. */
void
vmd_qmsg_free_all(struct vmd_qmsg *q)
{
    for (struct vmd_qmsg *n; q; q = n) {
        n = q->next;
        free(q->body);
        free(q);
    }
}

int
vmd_ratelimit_ok(struct vmd_ratelimit *rl, uint64_t now_ms, unsigned *suppressed)
{
    if (rl->last_ms != 0 && now_ms - rl->last_ms < 1000) {
        rl->suppressed++;
        return 0;
    }
    rl->last_ms = now_ms ? now_ms : 1;
    *suppressed = rl->suppressed;
    rl->suppressed = 0;
    return 1;
}
