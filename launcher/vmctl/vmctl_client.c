/*
 * vmctl_client.c - a request and its reply over a daemon's socket, found
 * by wire_sock_find (the master, or the daemon given with --host).  It is
 * the bottom of vmctl's layers: the commands call it and it calls only
 * lib/wire.  It implements no seed idea.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Where frames other than the awaited reply go (the console's session). */
static vmctl_notice_fn *notice_fn;
static void *notice_arg;

double
vmctl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
vmctl_request_on_notice(vmctl_notice_fn *fn, void *arg)
{
    notice_fn = fn;
    notice_arg = arg;
}

/* What the last vmctl_connect failed with, for vmctl_connect_why. */
static int connect_failure;
static char connect_text[512];

int
vmctl_fail(const struct vmctl *v, int code, const char *what)
{
    char msg[4600];

    if (vmctl_connect_why(code))
        snprintf(msg, sizeof(msg), "%s: %s (in %s)", what, vmctl_connect_why(code), v->home);
    else if (code == WIRE_ENOVM)
        snprintf(msg, sizeof(msg), "%s: no virtual machine is running in %s (vmctl start)", what,
                 v->home);
    else
        snprintf(msg, sizeof(msg), "%s: %s", what, wire_strerror(code));
    if (v->json)
        vmctl_json_fail(v, msg, wire_errname(code));
    else
        fprintf(stderr, "vmctl: %s\n", msg);
    return VMCTL_EXIT_FAIL;
}

int
vmctl_home_init(struct vmctl *v)
{
    if (v->home[0])
        return 0;
    return wire_home(v->home, sizeof(v->home));
}

int
vmctl_socket_path(const struct vmctl *v, char *out, size_t cap)
{
    const char *host = v->host[0] ? v->host : getenv("LIQUIDVM_HOST");
    return wire_sock_find(v->home, host, out, cap);
}

/* --host NAME (or LIQUIDVM_HOST) with no socket of that name while the
 * VM's master answers: not a daemon of this VM on this machine. */
int
vmctl_connect(const struct vmctl *v)
{
    const char *host = v->host[0] ? v->host : getenv("LIQUIDVM_HOST");
    char path[4300];
    int rc = vmctl_socket_path(v, path, sizeof(path));

    connect_text[0] = '\0';
    if (rc == WIRE_ENOVM && host != NULL && host[0] != '\0' &&
        wire_sock_find(v->home, NULL, path, sizeof(path)) == 0) {
        snprintf(connect_text, sizeof(connect_text),
                 "%.255s is not a daemon of this virtual machine on this machine (--host and "
                 "LIQUIDVM_HOST name one; vmctl conf lists the hosts)", host);
        rc = WIRE_ENOHOST;
    }
    if (rc == 0)
        rc = wire_sock_connect(path);
    connect_failure = rc < 0 ? rc : 0;
    return rc;
}

const char *
vmctl_connect_why(int code)
{
    if (code >= 0 || code != connect_failure)
        return NULL;
    return connect_text[0] ? connect_text : code == WIRE_ENOVM ? NULL : wire_sock_why(code);
}

int
vmctl_request(int fd, int type, const struct wire_wbuf *req, int timeout_ms,
              unsigned char **body, size_t *len, int *status)
{
    static uint32_t next_id;
    struct wire_hdr h = { .type = (uint8_t)type, .id = ++next_id };
    int rc;

    *body = NULL;
    *len = 0;
    if (req && req->err)
        return req->err;
    if ((rc = wire_write_frame(fd, &h, req ? req->data : NULL, req ? req->len : 0)) != 0)
        return rc;
    for (;;) {
        struct wire_hdr r;
        unsigned char *b;
        rc = wire_read_frame(fd, 1u << 26, timeout_ms, &r, &b);
        if (rc == 0)
            return -ETIMEDOUT;
        if (rc < 0)
            return rc;
        if (r.type != WIRE_T_REPLY || r.id != h.id) {
            if (notice_fn)      /* not ours: a notice for the session */
                notice_fn(notice_arg, &r, b);
            free(b);
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

int
vmctl_enroll(const struct vmctl *v, int *fd, uint32_t *tid)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status, rc;

    *fd = vmctl_connect(v);
    if (*fd < 0)
        return *fd;
    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)getpid());
    wire_put_u32(&req, 0);
    wire_put_str(&req, "vmctl");
    wire_put_u32(&req, 0);
    rc = vmctl_request(*fd, WIRE_T_TASK_ENROLL, &req, 60000, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0 && status != 0)
        rc = status;
    if (rc == 0) {
        struct wire_rbuf r;
        wire_rbuf_init(&r, body, len);
        rc = wire_get_u32(&r, tid);
    }
    free(body);
    if (rc != 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}
