/*
 * vmrun_farm_exec.c - one item's run on a worker: fork and exec (no shell
 * unless the user's command is one), the child in its own process group
 * so a timeout or a drop kills everything it started, stdout and stderr
 * through pipes, each kept up to FARM_OUTPUT_MAX bytes.  No PVM: the
 * worker's check callback looks at its messages between polls.
 */
#include "vmrun_farm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After the command exits, how long its pipes may stay open (a background
 * process it left holds them) before we stop reading. */
#define FARM_DRAIN_S 0.2
/* From SIGTERM to SIGKILL at a timeout or a drop. */
#define FARM_KILL_GRACE_S 0.5

/* Read what fd has into buf (up to FARM_OUTPUT_MAX, the rest dropped).
 * 1 at end of file, 0 otherwise. */
static int
drain(int fd, char *buf, size_t *len, int *flags, int trunc_flag)
{
    char scratch[8192];

    for (;;) {
        size_t room = FARM_OUTPUT_MAX - *len;
        char *to = room > 0 ? buf + *len : scratch;
        ssize_t n = read(fd, to, room > 0 ? room : sizeof(scratch));

        if (n > 0) {
            if (room > 0)
                *len += (size_t)n;
            else
                *flags |= trunc_flag;
            continue;
        }
        if (n == 0)
            return 1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
    }
}

static void
child(char *const *argv, int out, int err)
{
    int null = open("/dev/null", O_RDONLY);

    setpgid(0, 0);
    if (null >= 0)
        dup2(null, 0);
    dup2(out, 1);
    dup2(err, 2);
    /* The worker's PVM socket and anything else it holds stay with it. */
    struct rlimit rl;
    int maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur
                                                                           : 65536;

    for (int fd = 3; fd < maxfd; fd++)
        close(fd);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    dprintf(2, "vmrun farm-worker: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int
farm_exec(char *const *argv, double timeout, int (*check)(void *), void *arg,
          struct farm_run *r)
{
    int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = 0, dropped = 0, reaped = 0;
    int eof[2] = { 0, 0 };
    double start = liq_farm_now(), term_at = -1, exited_at = -1;
    struct rusage ru;
    pid_t pid;

    r->exit = 127;
    r->flags = 0;
    r->sig = 0;
    r->outlen = r->errlen = 0;
    r->seconds = 0;
    r->cpu = 0;
    memset(&ru, 0, sizeof(ru));
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
        snprintf(r->err, sizeof(r->err), "vmrun farm-worker: pipe: %s\n", strerror(errno));
        r->errlen = strlen(r->err);
        r->flags |= FARM_F_NOEXEC;
        goto fail;
    }
    if ((pid = fork()) < 0) {
        snprintf(r->err, sizeof(r->err), "vmrun farm-worker: fork: %s\n", strerror(errno));
        r->errlen = strlen(r->err);
        r->flags |= FARM_F_NOEXEC;
        goto fail;
    }
    if (pid == 0)
        child(argv, po[1], pe[1]);
    setpgid(pid, pid); /* also here: no race with a kill before the child's own call */
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);

    while (!reaped || !(eof[0] && eof[1])) {
        struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
        double now = liq_farm_now();

        if (reaped && now - exited_at > FARM_DRAIN_S)
            break;
        pf[0].fd = eof[0] ? -1 : po[0];
        pf[1].fd = eof[1] ? -1 : pe[0];
        poll(pf, 2, 50);
        if (!eof[0])
            eof[0] = drain(po[0], r->out, &r->outlen, &r->flags, FARM_F_OUTTRUNC);
        if (!eof[1])
            eof[1] = drain(pe[0], r->err, &r->errlen, &r->flags, FARM_F_ERRTRUNC);
        if (!reaped && wait4(pid, &status, WNOHANG, &ru) == pid) {
            reaped = 1;
            exited_at = liq_farm_now();
        }
        if (reaped)
            continue;
        now = liq_farm_now();
        if (term_at < 0 && !dropped && check != NULL && check(arg) != 0) {
            dropped = 1;
            kill(-pid, SIGTERM);
            term_at = now;
        }
        if (term_at < 0 && timeout > 0 && now - start >= timeout) {
            r->flags |= FARM_F_TIMEOUT;
            kill(-pid, SIGTERM);
            term_at = now;
        }
        if (term_at >= 0 && now - term_at >= FARM_KILL_GRACE_S)
            kill(-pid, SIGKILL);
    }
    if (!reaped)
        wait4(pid, &status, 0, &ru);
    r->cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
             ru.ru_stime.tv_usec / 1e6;
    /* What it left in its group (killed or timed out) goes with it. */
    if (term_at >= 0)
        kill(-pid, SIGKILL);
    r->seconds = liq_farm_now() - start;
    if (r->flags & FARM_F_TIMEOUT)
        r->exit = FARM_EXIT_TIMEOUT;
    else if (WIFEXITED(status))
        r->exit = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) {
        r->sig = WTERMSIG(status);
        r->exit = 128 + r->sig;
        r->flags |= FARM_F_SIGNAL;
    }
    close(po[0]);
    close(pe[0]);
    return dropped ? 1 : 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    r->seconds = liq_farm_now() - start;
    return -1;
}
