/*
 * vmd_hoststart.c - starting a daemon on a host being added (docs/architecture.md,
 * Hosts).  The master runs the configured hoststart template through
 * /bin/sh (default: ssh, as PVM used rsh), reads the new daemon's READY
 * line from the command's stdout, pins the announced certificate
 * fingerprint, and dials it.  The add is settled when the link is up
 * (vmd_hoststart_peer_ready) or when anything fails or times out.
 *
 * Escapes in the template: %h the host, %v the vmd command line for it,
 * %m the master's name, %% a percent sign.  Substituted values are quoted
 * for the shell, so a host name can never inject a command.
 */
#define LOG_TAG "hoststart"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define HS_CMD_MAX 8192

static int
append(char *out, size_t cap, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (*n + l + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(out + *n, s, l + 1);
    *n += l;
    return 0;
}

static int
append_quoted(char *out, size_t cap, size_t *n, const char *s)
{
    char q[4200];
    int rc = vmd_shell_quote(s, q, sizeof(q));
    return rc ? rc : append(out, cap, n, q);
}

/*
 * A word of vmd's command line for another host (%v).  hoststart's
 * template may hand it to ssh, which joins its arguments and has the
 * remote shell parse them again: quoting for the local shell is not
 * enough.  So where %v follows another word of the template (a command
 * it is given to), a word is letters, digits and . _ - / + , : = @ ~
 * only, and a path with any other character (a space, ';', '$') is
 * refused; where %v is the command itself (vmctl start --local's "%v
 * --listen ..."), only our shell parses it and quoting is enough.
 */
static char word_why[400];      /* why the last word was refused */
static int word_strict = 1;     /* the template passes %v on to a command */

static int
append_word(char *out, size_t cap, size_t *n, const char *s)
{
    if (word_strict &&
        (s[0] == '\0' || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789._-/+,:=@~") != strlen(s))) {
        snprintf(word_why, sizeof(word_why), "'%.200s' holds a character the other host's "
                 "shell would read again (a path of vmd's command line may have letters, "
                 "digits and ._-/+,:=@~ only)", s);
        log_warn("hoststart: %s; not started", word_why);
        return -EINVAL;
    }
    return append_quoted(out, cap, n, s);
}

/* The hosts entry for host, with vmctl add's options over it. */
void
vmd_hoststart_settings(struct vmd *vmd, const char *host, const struct conf_host *set,
                       struct conf_host *out)
{
    const struct conf_host *e = conf_host_find(&vmd->conf, host);
    conf_host_clear(out);
    if (e)
        *out = *e;
    if (set == NULL)
        return;
    if (set->address)
        out->address = set->address;
    if (set->port >= 0)
        out->port = set->port;
    if (set->speed > 0)
        out->speed = set->speed;
    if (set->vmd)
        out->vmd = set->vmd;
    if (set->home)
        out->home = set->home;
    if (set->send_certs >= 0)
        out->send_certs = set->send_certs;
    if (set->spawn_path_len > 0) {
        memcpy(out->spawn_path, set->spawn_path, sizeof(out->spawn_path));
        out->spawn_path_len = set->spawn_path_len;
    }
}

static int
send_certs(const struct vmd *vmd, const struct conf_host *s)
{
    return s->send_certs >= 0 ? s->send_certs : vmd->conf.send_certs;
}

/* The per-host options of the command line (vmd.conf(5), hosts). */
static int
host_options(struct vmd *vmd, const struct conf_host *s, char *out, size_t cap, size_t *n)
{
    char buf[64];
    int rc = 0;
    if (s->address) {
        snprintf(buf, sizeof(buf), "%s:%d", s->address, s->port >= 0 ? s->port : 0);
        if ((rc = append(out, cap, n, " --listen ")) || (rc = append_word(out, cap, n, buf)))
            return rc;
    } else if (s->port >= 0) {
        snprintf(buf, sizeof(buf), " --port %d", s->port);
        if ((rc = append(out, cap, n, buf)))
            return rc;
    }
    if (s->speed > 0) {
        snprintf(buf, sizeof(buf), " --speed %d", s->speed);
        if ((rc = append(out, cap, n, buf)))
            return rc;
    }
    for (int i = 0; i < s->spawn_path_len && rc == 0; i++)
        if ((rc = append(out, cap, n, " --spawn-path ")) == 0)
            rc = append_word(out, cap, n, s->spawn_path[i]);
    if (rc == 0 && send_certs(vmd, s))
        rc = append(out, cap, n, " --take-certs");
    return rc;
}

/*
 * The command line of the daemon to start on host: vmd at its path there,
 * the master's home and configuration file unless the host has its own
 * (a configuration file missing there means the defaults), the master's
 * address and version, and the host's own settings.
 */
static int
vmd_command(struct vmd *vmd, const char *host, const struct conf_host *s, char *out, size_t cap)
{
    static const char *const levels[] = { "err", "warn", "info", "debug" };
    size_t n = 0;
    int rc;
    out[0] = '\0';
    if ((rc = append_word(out, cap, &n, s->vmd ? s->vmd : vmd->exe)) ||
        (rc = append(out, cap, &n, " --daemon --join ")) ||
        (rc = append_word(out, cap, &n, vmd->name)) || (rc = append(out, cap, &n, " --name ")) ||
        (rc = append_word(out, cap, &n, host)) || (rc = append(out, cap, &n, " --home ")) ||
        (rc = append_word(out, cap, &n, s->home ? s->home : vmd->home)) ||
        (rc = append(out, cap, &n, " --log-level ")) ||
        (rc = append(out, cap, &n, levels[vmd->conf.log_level & 3])))
        return rc;
    if (vmd->conf_path[0] &&
        ((rc = append(out, cap, &n, " -c ")) || (rc = append_word(out, cap, &n, vmd->conf_path))))
        return rc;
    if ((rc = append(out, cap, &n, " --master-address ")) ||
        (rc = append_word(out, cap, &n, vmd->address)) ||
        (rc = append(out, cap, &n, " --master-version ")) ||
        (rc = append_word(out, cap, &n, LIQUIDVM_VERSION)) ||
        (rc = append(out, cap, &n, " --master-fingerprint ")) ||
        (rc = append_word(out, cap, &n, vmd->fingerprint)))
        return rc;
    return host_options(vmd, s, out, cap, &n);
}

int
vmd_hoststart_expand(struct vmd *vmd, const char *tmpl, const char *host, char *out, size_t cap)
{
    return vmd_hoststart_expand_for(vmd, tmpl, host, NULL, out, cap);
}

int
vmd_hoststart_expand_for(struct vmd *vmd, const char *tmpl, const char *host,
                         const struct conf_host *set, char *out, size_t cap)
{
    char v[HS_CMD_MAX];
    struct conf_host s;
    size_t n = 0;
    int rc = 0;
    if (cap == 0)
        return -ENAMETOOLONG;
    vmd_hoststart_settings(vmd, host, set, &s);
    out[0] = '\0';
    for (const char *t = tmpl; *t && rc == 0; t++) {
        if (*t != '%' || t[1] == '\0') {
            char c[2] = { *t, 0 };
            rc = append(out, cap, &n, c);
            continue;
        }
        switch (*++t) {
        case 'h':
            rc = append_quoted(out, cap, &n, host);
            break;
        case 'm':
            rc = append_quoted(out, cap, &n, vmd->name);
            break;
        case 'v':
            word_strict = t - 1 != tmpl + strspn(tmpl, " \t"); /* t is at the v */
            rc = vmd_command(vmd, host, &s, v, sizeof(v));
            word_strict = 1;
            if (rc == 0)
                rc = append(out, cap, &n, v);
            break;
        case '%':
            rc = append(out, cap, &n, "%");
            break;
        default:
            return -EINVAL;
        }
    }
    return rc;
}

static void
start_on_close(uv_handle_t *handle)
{
    struct vmd_start *s = handle->data;
    if (--s->handles > 0)
        return;
    vmd_list_remove(&s->link);
    vmd_hostcerts_wipe(s->bundle, s->bundle_len);
    free(s);
}

static void
start_close(struct vmd_start *s)
{
    uv_handle_t *hs[] = { (uv_handle_t *)&s->proc, (uv_handle_t *)&s->out,
                          (uv_handle_t *)&s->err, (uv_handle_t *)&s->timer,
                          (uv_handle_t *)&s->in };
    for (int i = 0; i < 5; i++)
        if (!uv_is_closing(hs[i]))
            uv_close(hs[i], start_on_close);
}

/* Settle the add item once; the process may live on (ssh exiting). */
static void
start_settle(struct vmd_start *s, int status, const char *msg)
{
    struct vmd *vmd = s->vmd;
    if (s->done)
        return;
    s->done = 1;
    uv_timer_stop(&s->timer);
    if (status != 0) {
        log_warn("cannot add %s: %s", s->host ? s->host->name : "?", msg ? msg : wire_strerror(status));
        if (s->host) {
            struct vmd_host *h = s->host;
            s->host = NULL;
            if (h->peer)
                vmd_peer_close(h->peer, status, "the add failed");
            if (vmd->hosts[h->index] == h)
                vmd_host_free(vmd, h);
        }
    }
    s->host = NULL;
    vmd_op_item_done(vmd, s->op, s->item, status, msg);
    if (s->exited && s->out_eof)
        start_close(s);
}

/*
 * The command is over only when it has exited *and* its stdout has reached
 * EOF: libuv may report the exit before the last bytes of the pipe are read,
 * and the READY line may be among them.
 */
static void
start_check_over(struct vmd_start *s)
{
    if (!s->exited || !s->out_eof)
        return;
    if (!s->done && !s->got_line) {
        char msg[512], last[260];
        snprintf(last, sizeof(last), "%.*s", (int)s->errlen, s->errtail);
        vmd_hosterr_exit(s->host->name, s->vmd_path, s->exit_signal ? 128 + s->exit_signal
                         : s->exit_status, last, msg, sizeof(msg));
        start_settle(s, WIRE_ECANTSTART, msg);
        return;
    }
    if (s->done)
        start_close(s);
}

static void
start_on_exit(uv_process_t *proc, int64_t status, int signo)
{
    struct vmd_start *s = proc->data;
    s->exited = 1;
    s->exit_status = (int)status;
    s->exit_signal = signo;
    start_check_over(s);
}

static void
start_on_timeout(uv_timer_t *t)
{
    struct vmd_start *s = t->data;
    char msg[256];
    /* READY came but no link: something between drops the master's packets. */
    if (s->got_line && s->host)
        vmd_hosterr_link(s->host, -ETIMEDOUT, NULL, msg, sizeof(msg));
    else
        snprintf(msg, sizeof(msg), "start vmd on %.64s: no daemon ready within start_timeout "
                 "(%.1f s)", s->host ? s->host->name : "?", s->vmd->conf.start_timeout);
    if (!s->exited)
        uv_process_kill(&s->proc, SIGTERM);
    start_settle(s, -ETIMEDOUT, msg);
}

static void
start_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    static char scratch[4096];  /* loop thread only; copied out at once */
    (void)handle;
    (void)suggested;
    buf->base = scratch;
    buf->len = sizeof(scratch);
}

/* "vmd ready name=N address=A port=P fingerprint=F pid=X" */
static int
parse_ready(struct vmd_start *s, const char *line, char *msg, size_t msgcap)
{
    struct vmd_host *h = s->host;
    char name[VMD_NAME_MAX] = "", addr[VMD_ADDR_MAX] = "", fp[65] = "";
    int port = -1;
    if (strncmp(line, "vmd error: ", 11) == 0) {
        vmd_hosterr_daemon(h->name, line + 11, msg, msgcap);
        return WIRE_ECANTSTART;
    }
    if (strncmp(line, "vmd ready ", 10) != 0) {
        snprintf(msg, msgcap, "unexpected output from hoststart: %.200s", line);
        return WIRE_ECANTSTART;
    }
    char copy[1024];
    vmd_strlcpy(copy, line + 10, sizeof(copy));
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (strncmp(tok, "name=", 5) == 0)
            vmd_strlcpy(name, tok + 5, sizeof(name));
        else if (strncmp(tok, "address=", 8) == 0)
            vmd_strlcpy(addr, tok + 8, sizeof(addr));
        else if (strncmp(tok, "port=", 5) == 0)
            port = atoi(tok + 5);
        else if (strncmp(tok, "fingerprint=", 12) == 0)
            vmd_strlcpy(fp, tok + 12, sizeof(fp));
    }
    struct sockaddr_in sa;
    if (strcmp(name, h->name) != 0 || port <= 0 || port > 65535 || strlen(fp) != 64 ||
        uv_ip4_addr(addr, port, &sa) != 0) {
        snprintf(msg, msgcap, "malformed READY line from hoststart: %.200s", line);
        return WIRE_ECANTSTART;
    }
    vmd_strlcpy(h->address, addr, sizeof(h->address));
    h->port = port;
    vmd_strlcpy(h->fingerprint, fp, sizeof(h->fingerprint));
    return 0;
}

static void
start_on_certs_written(uv_write_t *req, int status)
{
    struct vmd_start *s = req->data;
    vmd_hostcerts_wipe(s->bundle, s->bundle_len);
    s->bundle = NULL;
    if (status != 0)
        log_warn("host %s: cannot write its certificates to hoststart: %s",
                 s->host ? s->host->name : "?", uv_strerror(status));
}

/* The new daemon has no certificate: hand it one through its stdin only. */
static int
start_send_certs(struct vmd_start *s, char *msg, size_t cap)
{
    const char *name = s->host->name;
    char err[400] = "";
    int rc;
    if (!s->send_certs) {
        snprintf(msg, cap, "certificates for %s: it has none and the add was told not to "
                 "send them (--no-send-certs): copy them there", name);
        return WIRE_ENOTFOUND;
    }
    if (s->bundle)
        return 0;
    if ((rc = vmd_hostcerts_bundle(s->vmd, name, &s->bundle, &s->bundle_len, err,
                                   sizeof(err))) != 0) {
        snprintf(msg, cap, "certificates for %s: %s", name, err[0] ? err : wire_strerror(rc));
        return rc;
    }
    uv_buf_t b = uv_buf_init(s->bundle, (unsigned)s->bundle_len);
    s->in_req.data = s;
    if ((rc = uv_write(&s->in_req, (uv_stream_t *)&s->in, &b, 1, start_on_certs_written)) != 0) {
        vmd_hostcerts_wipe(s->bundle, s->bundle_len);
        s->bundle = NULL;
        snprintf(msg, cap, "certificates for %s: cannot write to hoststart: %s", name,
                 uv_strerror(rc));
        return WIRE_ECANTSTART;
    }
    log_info("host %s: sent its certificate, key and the CA certificate through hoststart", name);
    return 0;
}

static void
start_on_stdout(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct vmd_start *s = stream->data;
    if (nread <= 0) {
        if (nread < 0) {
            uv_read_stop(stream);
            s->out_eof = 1;
            start_check_over(s);
        }
        return;
    }
    if (s->done || s->got_line)
        return;
    for (ssize_t i = 0; i < nread; i++) {
        char c = buf->base[i];
        if (c != '\n') {
            if (s->linelen < sizeof(s->line) - 1)
                s->line[s->linelen++] = c;
            continue;
        }
        s->line[s->linelen] = '\0';
        /* Login banners and the like may come first; skip blank lines and
         * anything that is not ours until the READY or error line. */
        if (strncmp(s->line, "vmd ", 4) != 0) {
            s->linelen = 0;
            continue;
        }
        char msg[512];
        int rc;
        if (strncmp(s->line, "vmd need-certs", 14) == 0) {
            s->linelen = 0;
            if ((rc = start_send_certs(s, msg, sizeof(msg))) != 0) {
                start_settle(s, rc, msg);
                return;
            }
            continue;
        }
        s->got_line = 1;
        if ((rc = parse_ready(s, s->line, msg, sizeof(msg))) != 0) {
            start_settle(s, rc, msg);
            return;
        }
        log_info("host %s: daemon ready at %s:%d; connecting", s->host->name, s->host->address,
                 s->host->port);
        if ((rc = vmd_peer_connect(s->vmd, s->host)) != 0) {
            vmd_hosterr_link(s->host, rc, NULL, msg, sizeof(msg));
            start_settle(s, rc, msg);
        }
        return;
    }
}

static void
start_on_stderr(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct vmd_start *s = stream->data;
    if (nread <= 0) {
        if (nread < 0)
            uv_read_stop(stream);
        return;
    }
    /* Keep the last line or so, for the error message. */
    for (ssize_t i = 0; i < nread; i++) {
        char c = buf->base[i];
        if (c == '\n') {
            if (s->errlen)
                log_warn("hoststart %s: %.*s", s->host ? s->host->name : "?", (int)s->errlen,
                         s->errtail);
            s->errlen_last = s->errlen;
            memcpy(s->errlast, s->errtail, s->errlen);
            s->errlen = 0;
            continue;
        }
        if (s->errlen < sizeof(s->errtail))
            s->errtail[s->errlen++] = c;
    }
    if (s->errlen == 0 && s->errlen_last) {
        memcpy(s->errtail, s->errlast, s->errlen_last);
        s->errlen = s->errlen_last;
    }
}

int
vmd_hoststart(struct vmd *vmd, struct vmd_op *op, int item, struct vmd_host *h,
              const struct conf_host *set, char *why, size_t whylen)
{
    char cmd[HS_CMD_MAX];
    struct conf_host hs;
    int rc;

    word_why[0] = '\0';
    if ((rc = vmd_hoststart_expand_for(vmd, vmd->conf.hoststart, h->name, set, cmd,
                                       sizeof(cmd))) != 0) {
        if (why != NULL)
            snprintf(why, whylen, "%s", word_why[0] ? word_why : "");
        return rc == -EINVAL ? WIRE_ECONF : rc;
    }
    struct vmd_start *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -ENOMEM;
    vmd_hoststart_settings(vmd, h->name, set, &hs);
    s->send_certs = send_certs(vmd, &hs);
    vmd_strlcpy(s->vmd_path, hs.vmd ? hs.vmd : vmd->exe, sizeof(s->vmd_path));
    if (hs.speed > 0)
        h->speed = hs.speed;
    s->vmd = vmd;
    s->op = op;
    s->item = item;
    s->host = h;
    uv_pipe_init(vmd->loop, &s->in, 0);
    uv_pipe_init(vmd->loop, &s->out, 0);
    uv_pipe_init(vmd->loop, &s->err, 0);
    uv_timer_init(vmd->loop, &s->timer);
    s->proc.data = s->in.data = s->out.data = s->err.data = s->timer.data = s;

    char *args[] = { "/bin/sh", "-c", cmd, NULL };
    uv_stdio_container_t stdio[3] = {
        /* stdin: the channel a new daemon's certificates take, and no other. */
        { .flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&s->in },
        { .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&s->out },
        { .flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&s->err },
    };
    uv_process_options_t o = {
        .exit_cb = start_on_exit,
        .file = "/bin/sh",
        .args = args,
        .stdio_count = 3,
        .stdio = stdio,
    };
    log_debug("host %s: running %s", h->name, cmd);
    vmd_list_insert(&vmd->starts, &s->link);
    if ((rc = uv_spawn(vmd->loop, &s->proc, &o)) != 0) {
        log_warn("host %s: cannot run hoststart: %s", h->name, uv_strerror(rc));
        /* The process handle was never started, so it closes like the rest. */
        s->handles = 5;
        s->done = 1;
        start_close(s);
        return WIRE_ECANTSTART;
    }
    s->handles = 5;
    uv_read_start((uv_stream_t *)&s->out, start_alloc, start_on_stdout);
    uv_read_start((uv_stream_t *)&s->err, start_alloc, start_on_stderr);
    uv_timer_start(&s->timer, start_on_timeout, (uint64_t)(vmd->conf.start_timeout * 1000.0), 0);
    return 0;
}

void
vmd_hoststart_peer_ready(struct vmd *vmd, struct vmd_host *h, int status, const char *msg)
{
    for (struct vmd_list *l = vmd->starts.next; l != &vmd->starts; l = l->next) {
        struct vmd_start *s = vmd_container_of(l, struct vmd_start, link);
        if (s->host == h && !s->done) {
            char words[256];
            if (status == 0)
                s->host = NULL;     /* the host stays: it is in the VM now */
            else
                vmd_hosterr_link(h, status, msg, words, sizeof(words));
            start_settle(s, status, status ? words : msg);
            return;
        }
    }
}

void
vmd_hoststart_cancel_all(struct vmd *vmd)
{
    struct vmd_list *l, *next;
    for (l = vmd->starts.next; l != &vmd->starts; l = next) {
        next = l->next;
        struct vmd_start *s = vmd_container_of(l, struct vmd_start, link);
        if (!s->exited && !uv_is_closing((uv_handle_t *)&s->proc))
            uv_process_kill(&s->proc, SIGTERM);
        start_settle(s, WIRE_EHALTED, "the VM is halting");
        start_close(s);
    }
}

const struct vmd_hooks vmd_hoststart_hooks = {
    .module = "hoststart",
    .halt = vmd_hoststart_cancel_all,
};
