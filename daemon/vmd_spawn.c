/*
 * vmd_spawn.c - starting a PVM task's process on this host (pvm_spawn),
 * and its output.
 *
 * The executable is looked up along spawn_path (PVM's $HOME/pvm3/bin/
 * $PVM_ARCH and $PVM_ROOT/bin/$PVM_ARCH among the defaults) unless the name
 * has a '/'.  The task's tid exists before the process does: pvm_spawn
 * returns it at once, the process finds it in LIQUIDVM_TID and claims it
 * when it enrolls, with the one-time token of LIQUIDVM_TOKEN, from the pid
 * we started (vmd_task.c), and messages sent to it meanwhile wait (vmd_route.c).
 * The process starts in $HOME, as PVM's tasks did.  Its stdout and stderr
 * come back to us line by line and go to the task that catches them
 * (pvm_catchout / PvmOutputTid) as WIRE_CTX_OUTPUT messages with its
 * output code, framed as PVM frames them (spawned, begin, lines, EOF),
 * else to our log (docs/architecture.md, Spawning).  Its own children's
 * output goes to the same task by default (LIQUIDVM_OUTPUT).
 */
#define LOG_TAG "spawn"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define SPAWN_ENV_MAX 1024

/* Expand $NAME in a spawn_path entry; -ENOENT if a variable is unset. */
static int
expand_vars(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p;) {
        const char *val = NULL;
        char name[64];
        size_t len;
        if (*p == '$') {
            size_t k = 0;
            p++;
            while ((*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9')) && k < sizeof(name) - 1)
                name[k++] = *p++;
            name[k] = '\0';
            val = getenv(name);
            if (val == NULL && strcmp(name, "PVM_ARCH") == 0)
                val = "LINUX64";
            if (val == NULL || val[0] == '\0')
                return -ENOENT;
            len = strlen(val);
        } else {
            val = p++;
            len = 1;
        }
        if (n + len + 1 > cap)
            return -ENAMETOOLONG;
        memcpy(out + n, val, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

/* The executable for file: 0 and its path, or -ENOENT. */
static int
find_executable(struct vmd *vmd, const char *file, char *out, size_t cap)
{
    if (file[0] == '\0' || strstr(file, "..") == file)
        return -ENOENT;
    if (strchr(file, '/')) {
        if (vmd_strlcpy(out, file, cap) != 0)
            return -ENAMETOOLONG;
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
    }
    for (int i = 0; i < vmd->conf.spawn_path_len; i++) {
        char dir[2048];
        if (expand_vars(vmd->conf.spawn_path[i], dir, sizeof(dir)) != 0)
            continue;
        int n = snprintf(out, cap, "%s/%s", dir, file);
        if (n > 0 && (size_t)n < cap && access(out, X_OK) == 0)
            return 0;
    }
    return -ENOENT;
}

static void
task_on_close(uv_handle_t *handle)
{
    struct vmd_task *t = handle->data;
    t->handles--;
    vmd_task_release(t);
}

/* A WIRE_OUT_* event of a task's output to the task that catches it. */
static void
output_send(struct vmd_task *t, int kind, const char *line, size_t len)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = t->tid, .dst = t->out_tid,
                          .ctx = WIRE_CTX_OUTPUT, .tag = t->out_code, .flags = (uint32_t)kind,
                          .len = (uint32_t)len };

    vmd_route_deliver(t->vmd, &h, line);
}

/* One line of a task's output (whole: it ended with a newline): to the
 * catching task, else to our log. */
static void
output_line(struct vmd_task *t, int whole, const char *line, size_t len)
{
    if (t->out_tid)
        output_send(t, whole ? WIRE_OUT_LINE : WIRE_OUT_PART, line, len);
    else
        log_info("t%x: %.*s", t->tid, (int)len, line);
}

static void
out_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    static char scratch[8192];  /* loop thread only; copied out at once */
    (void)handle;
    (void)suggested;
    buf->base = scratch;
    buf->len = sizeof(scratch);
}

static void
out_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct vmd_task *t = stream->data;
    int which = stream == (uv_stream_t *)&t->out[1];
    char *line = t->line[which];
    size_t *ll = &t->linelen[which];

    if (nread < 0) {
        if (*ll)
            output_line(t, 0, line, *ll);
        *ll = 0;
        /* Both closed: the catcher has every line (PVM's EOF). */
        if (--t->out_open == 0 && t->out_tid)
            output_send(t, WIRE_OUT_EOF, NULL, 0);
        uv_read_stop(stream);
        if (!uv_is_closing((uv_handle_t *)stream))
            uv_close((uv_handle_t *)stream, task_on_close);
        return;
    }
    for (ssize_t i = 0; i < nread; i++) {
        char c = buf->base[i];
        if (c == '\n' || *ll == sizeof(t->line[0])) {
            output_line(t, c == '\n', line, *ll);
            *ll = 0;
            if (c == '\n')
                continue;
        }
        line[(*ll)++] = c;
    }
}

static void
proc_on_exit(uv_process_t *proc, int64_t status, int signo)
{
    struct vmd_task *t = proc->data;
    char why[96];
    t->proc_exited = 1;
    if (signo)
        snprintf(why, sizeof(why), "was killed by signal %d", signo);
    else
        snprintf(why, sizeof(why), "exited with status %d", (int)status);
    /* A connected task ends when its connection does: the last messages it
     * sent may still be unread on the socket when the exit is reported. */
    if (!t->ended && t->client == NULL)
        vmd_task_end(t, why);
    else
        log_debug("process of t%x %s", t->tid, why);
    if (!uv_is_closing((uv_handle_t *)proc))
        uv_close((uv_handle_t *)proc, task_on_close);
}

/* 1 if one of the n entries NAME=value of list has e's name. */
static int
env_named(char **list, int n, const char *e)
{
    size_t len = strcspn(e, "=");

    for (int i = 0; i < n; i++)
        if (strncmp(list[i], e, len) == 0 && list[i][len] == '=')
            return 1;
    return 0;
}

/* Build the child's environment: ours without LIQUIDVM_* and without what
 * it brings itself (the spawner's PVM_EXPORT: a variable there must be
 * the one the task reads, not a second one after ours), then its own. */
static int
child_env(struct vmd *vmd, struct vmd_task *t, char **extra, int nextra, char **env,
          char store[][128])
{
    int n = 0;
    for (char **e = environ; *e && n < SPAWN_ENV_MAX - 16 - nextra; e++)
        if (strncmp(*e, "LIQUIDVM_", 9) != 0 && !env_named(extra, nextra, *e))
            env[n++] = *e;
    snprintf(store[0], 128, "LIQUIDVM_TID=0x%x", t->tid);
    if (t->noparent)
        snprintf(store[1], 128, "LIQUIDVM_PARENT=unset");
    else
        snprintf(store[1], 128, "LIQUIDVM_PARENT=0x%x", t->ptid);
    snprintf(store[2], 128, "LIQUIDVM_TOKEN=%016llx", (unsigned long long)t->token);
    env[n++] = store[0];
    env[n++] = store[1];
    env[n++] = store[2];
    for (int i = 0; i < nextra && n < SPAWN_ENV_MAX - 4; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    (void)vmd;
    return n;
}

int
vmd_spawn_local(struct vmd *vmd, uint32_t ptid, uint32_t out_tid, int32_t out_code,
                const char *file, const char *wd, uint32_t flags, char **argv, int argc,
                char **env, int envc, uint32_t *tid_out)
{
    char path[4096], sock[4200], home[4200], cache[64], output[64], dir[4200];
    char store[3][128];
    char *cenv[SPAWN_ENV_MAX];
    char *args[260];
    int rc;

    if (argc > 256 || envc > 256)
        return -E2BIG;
    if ((rc = find_executable(vmd, file, path, sizeof(path))) != 0) {
        log_info("spawn %s for t%x: not found along spawn_path", file, ptid);
        return rc;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    struct vmd_task *t = vmd_task_new(vmd, ptid, base);
    if (t == NULL)
        return -EAGAIN;
    t->spawned = 1;
    t->noparent = (flags & VMD_SPAWN_NOPARENT) != 0;
    t->out_tid = out_tid;
    t->out_code = out_code;
    /* The one-time secret its enroll must carry (vmd_task_claim_ok). */
    if (getrandom(&t->token, sizeof(t->token), 0) != (ssize_t)sizeof(t->token) || t->token == 0) {
        log_warn("spawn %s for t%x: no random bytes for its token", file, ptid);
        t->spawned = 0;
        vmd_task_end(t, "could not start");
        return WIRE_ECANTSTART;
    }

    snprintf(sock, sizeof(sock), "LIQUIDVM_SOCK=%s", vmd->sock_path);
    snprintf(home, sizeof(home), "LIQUIDVM_HOME=%s", vmd->home);
    char *extra[4 + 256];
    int nextra = 0;
    extra[nextra++] = sock;
    extra[nextra++] = home;
    /* The cache size stencil kernels tile for, when configured for this host. */
    if (vmd->conf.cache_bytes != 0) {
        snprintf(cache, sizeof(cache), "LIQUIDVM_CACHE=%llu",
                 (unsigned long long)vmd->conf.cache_bytes);
        extra[nextra++] = cache;
    }
    /* Its children's output goes where its own does, unless it says
     * otherwise (PvmOutputTid and PvmOutputCode's defaults). */
    if (out_tid != 0) {
        snprintf(output, sizeof(output), "LIQUIDVM_OUTPUT=0x%x:%d", out_tid, (int)out_code);
        extra[nextra++] = output;
    }
    for (int i = 0; i < envc; i++)
        extra[nextra++] = env[i];
    child_env(vmd, t, extra, nextra, cenv, store);

    args[0] = path;
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    args[argc + 1] = NULL;

    uv_pipe_init(vmd->loop, &t->out[0], 0);
    uv_pipe_init(vmd->loop, &t->out[1], 0);
    t->out[0].data = t->out[1].data = t->proc.data = t;
    uv_stdio_container_t stdio[3] = {
        { .flags = UV_IGNORE },
        { .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->out[0] },
        { .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->out[1] },
    };
    const char *cwd = getenv("HOME");

    if (cwd == NULL || access(cwd, X_OK) != 0)
        cwd = "/";
    if (wd != NULL && wd[0] != '\0') {
        int n = wd[0] == '/' ? snprintf(dir, sizeof(dir), "%s", wd)
                             : snprintf(dir, sizeof(dir), "%s/%s", cwd, wd);
        struct stat st;

        if (n > 0 && (size_t)n < sizeof(dir) && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
            access(dir, X_OK) == 0)
            cwd = dir;
        else
            log_info("spawn %s for t%x: working directory %s cannot be entered; %s instead",
                     path, ptid, wd, cwd);
    }
    uv_process_options_t o = {
        .exit_cb = proc_on_exit,
        .file = path,
        .args = args,
        .env = cenv,
        .cwd = cwd,
        .stdio_count = 3,
        .stdio = stdio,
    };
    t->handles = 3;
    if ((rc = uv_spawn(vmd->loop, &t->proc, &o)) != 0) {
        log_warn("spawn %s for t%x: %s", path, ptid, uv_strerror(rc));
        t->proc_exited = 1;
        vmd_task_end(t, "could not start");
        uv_close((uv_handle_t *)&t->proc, task_on_close);
        uv_close((uv_handle_t *)&t->out[0], task_on_close);
        uv_close((uv_handle_t *)&t->out[1], task_on_close);
        return rc == UV_ENOENT || rc == UV_EACCES ? -ENOENT : WIRE_ECANTSTART;
    }
    t->pid = t->proc.pid;
    t->out_open = 2;
    /* As PVM: the catcher hears of the task, and of its parent, before
     * any of its output. */
    if (out_tid != 0) {
        unsigned char p[4];
        wire_be32_put(p, ptid);
        output_send(t, WIRE_OUT_SPAWNED, (const char *)p, sizeof(p));
        output_send(t, WIRE_OUT_BEGIN, (const char *)p, sizeof(p));
    }
    uv_read_start((uv_stream_t *)&t->out[0], out_alloc, out_on_read);
    uv_read_start((uv_stream_t *)&t->out[1], out_alloc, out_on_read);
    log_info("spawned t%x: %s (pid %ld) for t%x", t->tid, path, t->pid, ptid);
    *tid_out = t->tid;
    return 0;
}

/* Halting: stop watching our processes (they were sent SIGTERM). */
static void
spawn_halt(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->tasks.next; l != &vmd->tasks; l = next) {
        next = l->next;
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (!t->spawned)
            continue;
        uv_handle_t *hs[] = { (uv_handle_t *)&t->proc, (uv_handle_t *)&t->out[0],
                              (uv_handle_t *)&t->out[1] };
        for (int i = 0; i < 3; i++)
            if (!uv_is_closing(hs[i]))
                uv_close(hs[i], task_on_close);
    }
}

const struct vmd_hooks vmd_spawn_hooks = {
    .module = "spawn",
    .halt = spawn_halt,
};
