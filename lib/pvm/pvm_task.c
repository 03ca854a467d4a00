/*
 * pvm_task.c - a task's enrollment with its local daemon: pvm_mytid,
 * pvm_exit, pvm_parent.  Enrollment also hands the daemon's WIRE_T_DIRECT
 * frames to the direct-link protocol (pvm__ctx.on_direct): this file sits
 * above both, so neither names the other.
 *
 * The daemon is found through LIQUIDVM_SOCK (set for tasks the daemon
 * spawns), else LIQUIDVM_HOST / LIQUIDVM_HOME as vmctl finds it (a program
 * started from the shell enrolls with the VM of LIQUIDVM_HOME).  The first
 * call that needs a tid enrolls, as in PVM.  Enrollment reads the hints
 * (pvm_hints.c) and starts the trace; pvm_exit writes it: through
 * pvm__ctx.trace_start and trace_exit, since pvm_trace.c sits above this
 * file.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The program's name for the daemon's log. */
static const char *
prog_name(void)
{
    static char name[256];
    ssize_t n = readlink("/proc/self/exe", name, sizeof(name) - 1);
    if (n <= 0)
        return "";
    name[n] = '\0';
    const char *slash = strrchr(name, '/');
    return slash ? slash + 1 : name;
}

static int
pvm__connect(void)
{
    char home[4096], path[4400];
    const char *sock = getenv("LIQUIDVM_SOCK");
    int rc;
    if (sock && sock[0])
        return wire_sock_connect(sock);
    if ((rc = wire_home(home, sizeof(home))) != 0)
        return rc;
    if ((rc = wire_sock_find(home, getenv("LIQUIDVM_HOST"), path, sizeof(path))) != 0)
        return rc;
    return wire_sock_connect(path);
}

static void
pvm__leave(void)
{
    pvm__direct_close();
    if (pvm__ctx.fd >= 0)
        close(pvm__ctx.fd);
    pvm__ctx.fd = -1;
    pvm__ctx.mytid = -1;
    pvm__inq_free();
}

int
pvm__enroll(void)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    uint32_t tid;
    const char *parent;
    int fd, rc;

    /* Every call passes here: nothing before this test (getenv walks the
     * environment). */
    if (pvm__ctx.fd >= 0)
        return 0;
    parent = getenv("LIQUIDVM_PARENT");
    if ((fd = pvm__connect()) < 0) {
        /* PVM's codes have no words for why; the report, when asked for, does. */
        if (pvm__ctx.autoerr && fd != WIRE_ENOVM && fd != -ENOENT)
            fprintf(stderr, "libpvm [pid%d]: cannot reach the daemon: %s\n", (int)getpid(),
                    wire_sock_why(fd));
        return fd == WIRE_ENOVM || fd == -ENOENT ? WIRE_ENOVM : fd;
    }
    pvm__ctx.fd = fd;
    pvm__ctx.on_direct = pvm__direct_from_daemon;
    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)getpid());
    wire_put_u32(&req, parent ? (uint32_t)strtoul(parent, NULL, 0) : 0);
    wire_put_str(&req, prog_name());
    /* A task we were spawned as: claim the tid pvm_spawn returned. */
    const char *claim = getenv("LIQUIDVM_TID");
    const char *token = getenv("LIQUIDVM_TOKEN");
    wire_put_u32(&req, claim ? (uint32_t)strtoul(claim, NULL, 0) : 0);
    /* With the one-time token the daemon gave only to the process it
     * started; the pid it checks it asks the kernel for. */
    if (claim && token)
        wire_put_u64(&req, (uint64_t)strtoull(token, NULL, 16));
    rc = pvm__request(WIRE_T_TASK_ENROLL, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc == 0) {
        struct wire_rbuf r;
        uint32_t ptid;
        uint64_t maxmsg;
        wire_rbuf_init(&r, body, len);
        rc = wire_get_u32(&r, &tid);
        if (rc == 0 && wire_get_u32(&r, &ptid) == 0 && wire_get_u64(&r, &maxmsg) == 0)
            pvm__ctx.max_msg = maxmsg;
    }
    free(body);
    if (rc != 0) {
        pvm__leave();
        return rc;
    }
    pvm__ctx.mytid = (int)tid;
    pvm__ctx.exit_hook = pvm__leave;
    pvm__hints_load();
    /* A traced task's trace starts with its tid (pvm_trace.c, above us). */
    if (pvm__ctx.trace_start != NULL && pvm__ctx.tr_state == 0)
        pvm__ctx.trace_start();
    return 0;
}

int
pvm_mytid(void)
{
    int rc = pvm__enroll();
    return rc ? pvm__err(rc, "pvm_mytid") : pvm__ctx.mytid;
}

int
pvm_exit(void)
{
    if (pvm__ctx.fd < 0)
        return PvmOk;
    fflush(stdout);
    /* Our children's output first (pvm_spawn.c, above us). */
    if (pvm__ctx.output_wait != NULL)
        pvm__ctx.output_wait();
    /* The trace (pvm_trace.c) is written while the task still has its tid. */
    if (pvm__ctx.trace_exit != NULL)
        pvm__ctx.trace_exit();
    pvm__mhf_reset();       /* PVM drops every handler at exit */
    pvm__leave();
    pvm__output_free();
    return PvmOk;
}

int
pvm_parent(void)
{
    const char *parent = getenv("LIQUIDVM_PARENT");
    int rc = pvm__enroll();
    if (rc)
        return pvm__err(rc, "pvm_parent");
    if (parent != NULL && strcmp(parent, "unset") == 0)
        return PvmParentNotSet; /* spawned with PvmNoSpawnParent */
    if (parent == NULL || strtoul(parent, NULL, 0) == 0)
        return PvmNoParent;     /* not an error report: PVM returns it quietly */
    return (int)strtoul(parent, NULL, 0);
}
