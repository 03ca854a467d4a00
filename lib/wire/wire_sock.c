/*
 * wire_sock.c - the client side of a daemon's Unix socket, shared by vmctl
 * and libpvm3: where the socket is (LIQUIDVM_HOME/run), connecting, and
 * blocking frame I/O with a deadline.
 */
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int
wire_env_spawnable(const char *kv)
{
    static const char *const ours[] = { "LIQUIDVM_CTX",        "LIQUIDVM_SHM_RING",
                                        "LIQUIDVM_SHM_SPIN_US", "LIQUIDVM_SHM_REF",
                                        "LIQUIDVM_SHM_RING_MAX",
                                        "LIQUIDVM_TRACE",
                                        "LIQUIDVM_TRACE_ROOT",  "LIQUIDVM_TRACE_RUN",
                                        "LIQUIDVM_TASKPATH",
                                        "LIQUIDVM_HINTS",       "LIQUIDVM_HINTS_VERBOSE" };
    size_t n = strcspn(kv, "=");

    if (strncmp(kv, "LIQUIDVM_", 9) != 0)
        return 1;
    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
        if (strlen(ours[i]) == n && strncmp(kv, ours[i], n) == 0)
            return 1;
    return 0;
}

int
wire_home(char *out, size_t cap)
{
    const char *h = getenv("LIQUIDVM_HOME");
    int n;
    if (h && h[0])
        n = snprintf(out, cap, "%s", h);
    else if ((h = getenv("HOME")) != NULL)
        n = snprintf(out, cap, "%s/.liquidvm", h);
    else
        return -ENOENT;
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int
wire_sock_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno;
        close(fd);
        return e == ENOTDIR ? -ENOENT : -e;
    }
    /* The daemon is ours, by the kernel's word: one another user started
     * in a home it made first would read what we send it. */
    struct ucred cred;
    socklen_t clen = sizeof(cred);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != geteuid()) {
        close(fd);
        return WIRE_ESTRANGER;
    }
    /* A Unix stream socket holds what its sender's buffer allows (~200 KB
     * by default): room for a 1 MB message lets it go in one write and one
     * wakeup of the daemon instead of five.  The kernel caps it (wmem_max);
     * a refusal only costs speed. */
    int size = WIRE_SOCK_SNDBUF;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    return fd;
}

const char *
wire_sock_why(int code)
{
    switch (code) {
    case -EACCES:
    case -EPERM:
        return "permission denied on the daemon's socket: it or its directory belongs to "
               "another user (or LIQUIDVM_HOME is not yours)";
    case -ENOENT:
        return "no such socket: no daemon has been started there";
    case -ECONNREFUSED:
        return "connection refused: a socket is there but no daemon listens on it (one that "
               "died left it; the next vmctl start removes it)";
    case WIRE_ENOVM:
        return "no virtual machine is running";
    case WIRE_ESTRANGER:
        return "the daemon listening there runs as another user; nothing was sent to it";
    default:
        return wire_strerror(code);
    }
}

/* 0 if a daemon answers on path, else why not (wire_sock_connect's codes). */
static int
sock_try(const char *path)
{
    int fd = wire_sock_connect(path);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/* The worse of two reasons for not reaching a daemon: a permission problem
 * tells more than a refused socket, which tells more than no socket. */
static int
worse(int a, int b)
{
    static const int rank[] = { WIRE_ENOVM, -ENOENT, -ECONNREFUSED, -EACCES };
    int ra = -1, rb = -1;
    for (int i = 0; i < 4; i++) {
        if (a == rank[i])
            ra = i;
        if (b == rank[i])
            rb = i;
    }
    return rb > ra ? b : a;
}

/* The one daemon of run/ that answers, when there is exactly one. */
static int
find_only(const char *home, char *out, size_t cap, int why)
{
    char path[4200];
    int n, found = 0;
    snprintf(path, sizeof(path), "%s/run", home);
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == EACCES || errno == EPERM ? -EACCES : why == -ENOENT ? WIRE_ENOVM : why;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        char p[4600];
        if (l <= 5 || strcmp(e->d_name + l - 5, ".sock") != 0)
            continue;
        n = snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        if (n < 0 || (size_t)n >= sizeof(p))
            continue;
        int rc = sock_try(p);
        if (rc == 0 && (size_t)snprintf(out, cap, "%s", p) < cap)
            found++;
        else if (rc < 0)
            why = worse(why, rc);
    }
    closedir(d);
    if (found == 1)
        return 0;
    return found > 1 || why == -ENOENT ? WIRE_ENOVM : why;
}

int
wire_sock_find(const char *home, const char *host, char *out, size_t cap)
{
    char name[256] = "", path[4200];
    int n, rc, why = WIRE_ENOVM;

    if (host && host[0]) {
        n = snprintf(out, cap, "%s/run/%s.sock", home, host);
        if (n < 0 || (size_t)n >= cap)
            return -ENAMETOOLONG;
        rc = sock_try(out);
        return rc == -ENOENT ? WIRE_ENOVM : rc;
    }
    snprintf(path, sizeof(path), "%s/run/master", home);
    FILE *fp = fopen(path, "r");
    if (fp) {
        if (fgets(name, sizeof(name), fp))
            name[strcspn(name, "\n")] = '\0';
        fclose(fp);
        n = snprintf(out, cap, "%s/run/%s.sock", home, name);
        if (name[0] && n >= 0 && (size_t)n < cap && (why = sock_try(out)) == 0)
            return 0;
    } else if (errno == EACCES) {
        why = -EACCES;
    }
    /* No master here (its home is on another workstation): the one local
     * daemon, if there is exactly one. */
    return find_only(home, out, cap, why);
}

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly n bytes by the deadline (-1: none).  1 done, 0 timed out
 * before the first byte (only when may_time_out), negative on error.
 * Without a deadline the (blocking) read waits by itself: poll only when
 * there is a deadline to keep, which saves a system call per read on the
 * message path. */
static int
read_full(int fd, unsigned char *buf, size_t n, int64_t deadline, int may_time_out)
{
    size_t got = 0;
    while (got < n) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        /* Once a frame has begun, finish it: the daemon sends whole frames. */
        if (got > 0 || !may_time_out)
            wait = -1;
        if (wait >= 0) {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            int r = poll(&p, 1, wait);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return -errno;
            if (r == 0)
                return 0;
        }
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* A non-blocking descriptor: wait for it. */
            struct pollfd p = { .fd = fd, .events = POLLIN };
            if (poll(&p, 1, wait) < 0 && errno != EINTR)
                return -errno;
            continue;
        }
        if (k < 0)
            return -errno;
        if (k == 0)
            return -ECONNRESET;
        got += (size_t)k;
    }
    return 1;
}

int
wire_write_full(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Header and body in one sendmsg, so the daemon reads the frame at once. */
int
wire_write_frame(int fd, struct wire_hdr *h, const void *body, size_t len)
{
    unsigned char hdr[WIRE_HDR_LEN];
    struct iovec iov[2];
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

    if (len > UINT32_MAX)
        return -EMSGSIZE;
    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof(hdr) };
    iov[1] = (struct iovec){ .iov_base = (void *)(uintptr_t)body, .iov_len = len };
    while (m.msg_iovlen > 0) {
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        /* Skip what was sent: whole iovecs, then part of the next. */
        while (m.msg_iovlen > 0 && (size_t)k >= m.msg_iov->iov_len) {
            k -= (ssize_t)m.msg_iov->iov_len;
            m.msg_iov++;
            m.msg_iovlen--;
        }
        if (m.msg_iovlen > 0) {
            m.msg_iov->iov_base = (unsigned char *)m.msg_iov->iov_base + k;
            m.msg_iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

int
wire_read_frame(int fd, uint32_t max_body, int timeout_ms, struct wire_hdr *h,
                unsigned char **body)
{
    unsigned char hdr[WIRE_HDR_LEN];
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    int rc;

    *body = NULL;
    if ((rc = read_full(fd, hdr, sizeof(hdr), deadline, timeout_ms >= 0)) <= 0)
        return rc;
    if ((rc = wire_hdr_unpack(hdr, max_body, h)) != 0)
        return rc;
    if (h->len == 0)
        return 1;
    unsigned char *b = malloc(h->len);
    if (b == NULL)
        return -ENOMEM;
    if ((rc = read_full(fd, b, h->len, -1, 0)) <= 0) {
        free(b);
        return rc < 0 ? rc : -ECONNRESET;
    }
    *body = b;
    return 1;
}
