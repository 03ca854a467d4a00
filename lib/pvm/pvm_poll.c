/*
 * pvm_poll.c - the library's one wait: a single poll over the daemon's
 * socket and, once the task has direct links or listeners, over those too.
 *
 * Everything that blocks waits here: a receive, a request waiting for its
 * reply, and a write whose socket is full (which must keep reading the
 * others, so two tasks sending large messages to each other both
 * progress).  The links are a source registered by pvm_link.c
 * (pvm__poll_source): this file knows their descriptors only through its
 * hooks and services them by calling its ready hook, so the link
 * protocol, which waits here while it writes, is never named from below.
 * Without links a plain receive never comes here (pvm__pump reads the
 * daemon's socket directly).
 *
 * Rings in shared memory (pvm_shm.c) are part of that source: a wait that
 * may sleep first lets the source spin on them for a few microseconds
 * (its spin hook), and when that finds input the wait returns without a
 * system call; every PVM__SPIN_POLL-th time it polls anyway, without
 * blocking, so that the daemon's socket is never starved by a busy ring.
 */
#include "pvm_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#define PVM__SPIN_POLL 8

void
pvm__poll_source(const struct pvm__pollsrc *src)
{
    pvm__ctx.pollsrc = src;
    if (src == NULL) {
        free(pvm__ctx.pfd);
        pvm__ctx.pfd = NULL;
        pvm__ctx.pcap = 0;
    }
}

static int
reserve(size_t n)
{
    struct pollfd *p;

    if (n <= pvm__ctx.pcap)
        return 0;
    if ((p = realloc(pvm__ctx.pfd, n * sizeof(*p))) == NULL)
        return -ENOMEM;
    pvm__ctx.pfd = p;
    pvm__ctx.pcap = n;
    return 0;
}

int
pvm__poll_wait(int timeout_ms, int wfd, int *dready, int *wready)
{
    const struct pvm__pollsrc *src = pvm__ctx.pollsrc;
    struct pollfd one, *pfd = &one;
    size_t n = 0, first, i, more;
    int r, busy = 0, rc;

    *dready = 0;
    if (wready)
        *wready = 0;
    if (src != NULL && src->spin != NULL && timeout_ms != 0 && src->spin()) {
        if (++pvm__ctx.spin_hits % PVM__SPIN_POLL != 0) {
            src->ready(NULL, 0);
            return 1;
        }
        timeout_ms = 0;
    }
    if (src != NULL) {
        if ((rc = src->size(&more)) != 0 || (rc = reserve(more + 1)) != 0)
            return rc;
        pfd = pvm__ctx.pfd;
    }
    if (pvm__ctx.fd >= 0)
        pfd[n++] = (struct pollfd){ .fd = pvm__ctx.fd,
                                    .events = POLLIN | (wfd == pvm__ctx.fd ? POLLOUT : 0) };
    first = n;
    if (src != NULL)
        n += src->fill(pfd + first, wfd, timeout_ms != 0, &busy);
    r = poll(pfd, (nfds_t)n, busy ? 0 : timeout_ms);
    if (r < 0 && errno != EINTR)
        return -errno;
    if (r < 0)
        return 1;       /* a signal: the caller looks at its clock and comes back */
    if (first > 0 && (pfd[0].revents & (POLLIN | POLLERR | POLLHUP)))
        *dready = 1;
    if (wready != NULL && wfd >= 0)
        for (i = 0; i < n; i++)
            if (pfd[i].fd == wfd && (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP)))
                *wready = 1;
    if (src != NULL)
        src->ready(pfd + first, n - first);
    return r > 0 || busy;
}
