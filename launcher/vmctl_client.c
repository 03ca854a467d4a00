/*
 * vmctl_client.c - finding and talking to a daemon: LIQUIDVM_HOME, the
 * socket of the master (run/master names it) or of the daemon given with
 * --host, and a blocking request/reply over the wire format.
 */
#include "vmctl.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int
vmctl_home_init(struct vmctl *v)
{
    const char *h = getenv("LIQUIDVM_HOME");
    int n;
    if (v->home[0])
        return 0;
    if (h && h[0])
        n = snprintf(v->home, sizeof(v->home), "%s", h);
    else if ((h = getenv("HOME")) != NULL)
        n = snprintf(v->home, sizeof(v->home), "%s/.liquidvm", h);
    else
        return -ENOENT;
    return n < (int)sizeof(v->home) ? 0 : -ENAMETOOLONG;
}

static int
sock_alive(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd, ok;
    if (strlen(path) >= sizeof(sa.sun_path))
        return 0;
    strcpy(sa.sun_path, path);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return 0;
    ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

int
vmctl_socket_path(const struct vmctl *v, char *out, size_t cap)
{
    char name[256] = "";
    const char *host = v->host[0] ? v->host : getenv("LIQUIDVM_HOST");
    int n;

    if (host && host[0]) {
        n = snprintf(out, cap, "%s/run/%s.sock", v->home, host);
        return n < (int)cap && sock_alive(out) ? 0 : WIRE_ENOVM;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/run/master", v->home);
    FILE *fp = fopen(path, "r");
    if (fp) {
        if (fgets(name, sizeof(name), fp))
            name[strcspn(name, "\n")] = '\0';
        fclose(fp);
        n = snprintf(out, cap, "%s/run/%s.sock", v->home, name);
        if (name[0] && n < (int)cap && sock_alive(out))
            return 0;
    }
    /* No master here (its home is on another workstation): the one local
     * daemon, if there is exactly one. */
    snprintf(path, sizeof(path), "%s/run", v->home);
    DIR *d = opendir(path);
    int found = 0;
    if (d == NULL)
        return WIRE_ENOVM;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".sock") == 0) {
            char p[4600];
            snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
            if (sock_alive(p) && (size_t)snprintf(out, cap, "%s", p) < cap)
                found++;
        }
    }
    closedir(d);
    return found == 1 ? 0 : WIRE_ENOVM;
}

int
vmctl_connect(const struct vmctl *v)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    char path[4300];
    int rc = vmctl_socket_path(v, path, sizeof(path));
    if (rc != 0)
        return rc;
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return WIRE_ENOVM;
    }
    return fd;
}

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly n bytes, within the deadline (-1: none). */
static int
read_full(int fd, unsigned char *buf, size_t n, int64_t deadline)
{
    size_t got = 0;
    while (got < n) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return -ETIMEDOUT;
            wait = (int)left;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, wait);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -ETIMEDOUT;
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return -ECONNRESET;
        got += (size_t)k;
    }
    return 0;
}

static int
write_full(int fd, const unsigned char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, buf, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

int
vmctl_request(int fd, int type, const struct wire_wbuf *req, int timeout_ms,
              unsigned char **body, size_t *len, int *status)
{
    static uint32_t next_id;
    unsigned char hdr[WIRE_HDR_LEN];
    struct wire_hdr h = { .type = (uint8_t)type, .id = ++next_id,
                          .len = req ? (uint32_t)req->len : 0 };
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    int rc;

    *body = NULL;
    *len = 0;
    if (req && req->err)
        return req->err;
    wire_hdr_pack(&h, hdr);
    if ((rc = write_full(fd, hdr, sizeof(hdr))) != 0 ||
        (req && req->len && (rc = write_full(fd, req->data, req->len)) != 0))
        return rc;
    for (;;) {
        struct wire_hdr r;
        if ((rc = read_full(fd, hdr, sizeof(hdr), deadline)) != 0)
            return rc;
        if ((rc = wire_hdr_unpack(hdr, 1u << 26, &r)) != 0)
            return rc;
        unsigned char *b = malloc(r.len + 1);
        if (b == NULL)
            return -ENOMEM;
        if ((rc = read_full(fd, b, r.len, deadline)) != 0) {
            free(b);
            return rc;
        }
        if (r.type != WIRE_T_REPLY || r.id != h.id) {
            free(b);            /* not ours: an unrelated notice */
            continue;
        }
        *body = b;
        *len = r.len;
        *status = r.tag;
        return 0;
    }
}

int
vmctl_call(const struct vmctl *v, int type, const struct wire_wbuf *req, int timeout_ms,
           unsigned char **body, size_t *len, int *status)
{
    int fd = vmctl_connect(v);
    if (fd < 0)
        return fd;
    int rc = vmctl_request(fd, type, req, timeout_ms, body, len, status);
    close(fd);
    return rc;
}
