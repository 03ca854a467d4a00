/*
 * vmd_main.c - the daemon's start-up: arguments, LIQUIDVM_HOME, the
 * configuration, daemonising, the listeners, and the loop.
 *
 * A daemon started by `vmctl start` or by a hoststart command (docs/architecture.md,
 * Hosts) reports readiness with one line on its standard output,
 *   vmd ready name=NAME address=IP port=PORT fingerprint=HEX pid=PID
 * or "vmd error: REASON", and only then lets the command that started it
 * finish: with --daemon the parent process waits on a pipe for that line,
 * prints it and exits, while the child carries on detached.
 */
#define LOG_TAG "main"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void
usage(FILE *fp)
{
    fprintf(fp,
            "usage: vmd [options]\n"
            "  The LiquidVM daemon: one per host and user.  Normally started by\n"
            "  `vmctl start` (the master) or by the master through hoststart.\n"
            "\n"
            "  -c, --conf FILE        configuration file (see vmd.conf(5))\n"
            "      --home DIR         state directory (default $LIQUIDVM_HOME or ~/.liquidvm)\n"
            "      --name NAME        this host's name in the VM (default: the host name)\n"
            "      --join MASTER      join the VM whose master is MASTER (else be the master)\n"
            "      --listen ADDR[:PORT]  override listen.address/listen.port\n"
            "      --port PORT        override listen.port\n"
            "      --hoststart TMPL   override hoststart (see vmd.conf(5))\n"
            "      --speed N          override speed\n"
            "      --spawn-path DIR   override spawn_path (repeat for several)\n"
            "      --master-address IP  (joining) listen where the route to the master leaves\n"
            "      --master-version V (joining) refuse to join a master of another version\n"
            "      --master-fingerprint F  (joining) the master's certificate (SHA-256): any other\n"
            "                         with its name is refused\n"
            "      --take-certs       (joining) read missing certificates from stdin\n"
            "      --log-level LEVEL  err, warn, info or debug\n"
            "  -d, --daemon           detach once ready; the READY line goes to stdout\n"
            "  -h, --help             this text\n"
            "      --version          print the version\n"
            "\n"
            "exit status: 0 after a clean halt, 1 on a failure, 2 on bad usage or configuration\n");
}

/* Report a start-up failure on the ready channel and stderr, then exit. */
static void __attribute__((noreturn, format(printf, 3, 4)))
die(struct vmd *vmd, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (vmd->ready_fd >= 0 && vmd->ready_fd != STDOUT_FILENO) {
        dprintf(vmd->ready_fd, "vmd error: %s\n", msg);
    } else {
        fprintf(stderr, "vmd: %s\n", msg);
        if (vmd->ready_fd == STDOUT_FILENO)
            printf("vmd error: %s\n", msg);
    }
    exit(status);
}

static int
mkdir_private(const char *path)
{
    struct stat st;
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return -errno;
    if (stat(path, &st) != 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (st.st_uid != getuid())
        return -EPERM;
    /* The socket directory must be ours alone (docs/architecture.md, Local clients). */
    if ((st.st_mode & 077) != 0 && chmod(path, 0700) != 0)
        return -errno;
    return 0;
}

/* home/rel, or rel itself when absolute; "" on overflow. */
static void
home_path(const struct vmd *vmd, const char *rel, char *out, size_t cap)
{
    int n = rel[0] == '/' ? snprintf(out, cap, "%s", rel)
                          : snprintf(out, cap, "%s/%s", vmd->home, rel);
    if (n < 0 || (size_t)n >= cap)
        out[0] = '\0';
}

static int
expand_home_file(struct vmd *vmd, const char *tmpl, char *out, size_t cap)
{
    char *e = conf_expand(tmpl, vmd->name);
    if (e == NULL)
        return -ENOMEM;
    home_path(vmd, e, out, cap);
    free(e);
    return out[0] ? 0 : -ENAMETOOLONG;
}

static void
parse_listen(struct vmd *vmd, const char *arg)
{
    char host[VMD_ADDR_MAX];
    const char *colon = strrchr(arg, ':');
    size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
    if (n == 0 || n >= sizeof(host))
        die(vmd, 2, "--listen %s: expected ADDRESS or ADDRESS:PORT", arg);
    memcpy(host, arg, n);
    host[n] = '\0';
    if (colon) {
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end != '\0' || port < 0 || port > 65535 || colon[1] == '\0')
            die(vmd, 2, "--listen %s: port must be 0..65535", arg);
        vmd->conf.listen_port = (int)port;
    }
    struct sockaddr_in sa;
    if (uv_ip4_addr(host, 0, &sa) != 0)
        die(vmd, 2, "--listen %s: not an IPv4 address", arg);
    vmd_strlcpy(vmd->listen_override, host, sizeof(vmd->listen_override));
    free(vmd->conf.listen_address);
    vmd->conf.listen_address = strdup(host);
    if (vmd->conf.listen_address == NULL)
        die(vmd, 1, "out of memory");
}

/* What the command line asked for that is applied after the options. */
struct args {
    const char *conf_file, *listen, *home, *loglevel, *port, *speed;
    const char *spawn_path[CONF_MAX_SPAWN_PATH];
    int nspawn;
};

/* The options, into vmd and a; exits on --help, --version or bad usage. */
static void
parse_options(struct vmd *vmd, int argc, char **argv, int *daemonize, struct args *a)
{
    enum { O_HOME = 256, O_NAME, O_JOIN, O_LISTEN, O_HOSTSTART, O_LOGLEVEL, O_VERSION, O_PORT,
           O_SPEED, O_SPAWN, O_MADDR, O_MVERSION, O_TAKE, O_MFP };
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' },
        { "home", required_argument, NULL, O_HOME },
        { "name", required_argument, NULL, O_NAME },
        { "join", required_argument, NULL, O_JOIN },
        { "listen", required_argument, NULL, O_LISTEN },
        { "hoststart", required_argument, NULL, O_HOSTSTART },
        { "log-level", required_argument, NULL, O_LOGLEVEL },
        { "daemon", no_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, O_VERSION },
        { "port", required_argument, NULL, O_PORT },
        { "speed", required_argument, NULL, O_SPEED },
        { "spawn-path", required_argument, NULL, O_SPAWN },
        { "master-address", required_argument, NULL, O_MADDR },
        { "master-version", required_argument, NULL, O_MVERSION },
        { "take-certs", no_argument, NULL, O_TAKE },
        { "master-fingerprint", required_argument, NULL, O_MFP },
        { NULL, 0, NULL, 0 },
    };
    int c;

    vmd->is_master = 1;
    while ((c = getopt_long(argc, argv, "c:dh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            a->conf_file = optarg;
            break;
        case O_HOME:
            a->home = optarg;
            break;
        case O_NAME:
            if (strlen(optarg) == 0 || strlen(optarg) >= VMD_NAME_MAX)
                die(vmd, 2, "--name: expected a host name of 1..%d characters", VMD_NAME_MAX - 1);
            vmd_strlcpy(vmd->name, optarg, sizeof(vmd->name));
            break;
        case O_JOIN:
            if (strlen(optarg) == 0 || strlen(optarg) >= VMD_NAME_MAX)
                die(vmd, 2, "--join: expected the master's host name");
            vmd->is_master = 0;
            vmd_strlcpy(vmd->master_name, optarg, sizeof(vmd->master_name));
            break;
        case O_LISTEN:
            a->listen = optarg;
            break;
        case O_HOSTSTART:
            if (strlen(optarg) >= sizeof(vmd->hoststart_override))
                die(vmd, 2, "--hoststart: template too long");
            vmd_strlcpy(vmd->hoststart_override, optarg, sizeof(vmd->hoststart_override));
            break;
        case O_LOGLEVEL:
            a->loglevel = optarg;
            break;
        case O_PORT:
            a->port = optarg;
            break;
        case O_SPEED:
            a->speed = optarg;
            break;
        case O_SPAWN:
            if (a->nspawn == CONF_MAX_SPAWN_PATH)
                die(vmd, 2, "--spawn-path: at most %d directories", CONF_MAX_SPAWN_PATH);
            a->spawn_path[a->nspawn++] = optarg;
            break;
        case O_MADDR:
            vmd_strlcpy(vmd->master_address, optarg, sizeof(vmd->master_address));
            break;
        case O_MVERSION:
            /* A joiner of another version would speak another protocol. */
            if (strcmp(optarg, LIQUIDVM_VERSION) != 0)
                die(vmd, 2, "version mismatch: this vmd is LiquidVM %s, the master runs %s",
                    LIQUIDVM_VERSION, optarg);
            break;
        case O_TAKE:
            vmd->take_certs = 1;
            break;
        case O_MFP:
            if (strlen(optarg) != 64 || strspn(optarg, "0123456789abcdef") != 64)
                die(vmd, 2, "--master-fingerprint: expected 64 lowercase hex digits");
            vmd_strlcpy(vmd->master_fingerprint, optarg, sizeof(vmd->master_fingerprint));
            break;
        case 'd':
            *daemonize = 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case O_VERSION:
            printf("vmd %s (LiquidVM, PVM 3.4 compatible)\n", LIQUIDVM_VERSION);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vmd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        exit(2);
    }
}

/* Our name (the host name unless --name) and LIQUIDVM_HOME, made absolute. */
static void
set_name_and_home(struct vmd *vmd, const char *home)
{
    if (vmd->name[0] == '\0') {
        char hn[VMD_NAME_MAX];
        if (gethostname(hn, sizeof(hn)) != 0)
            die(vmd, 1, "gethostname: %s", strerror(errno));
        hn[sizeof(hn) - 1] = '\0';
        vmd_strlcpy(vmd->name, hn, sizeof(vmd->name));
    }
    if (home)
        vmd_strlcpy(vmd->home, home, sizeof(vmd->home));
    else if (getenv("LIQUIDVM_HOME") && getenv("LIQUIDVM_HOME")[0])
        vmd_strlcpy(vmd->home, getenv("LIQUIDVM_HOME"), sizeof(vmd->home));
    else if (getenv("HOME"))
        snprintf(vmd->home, sizeof(vmd->home), "%s/.liquidvm", getenv("HOME"));
    else
        die(vmd, 2, "no --home, LIQUIDVM_HOME or HOME");
    if (vmd->home[0] != '/') {
        char cwd[2048], tmp[4096];
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            die(vmd, 1, "getcwd: %s", strerror(errno));
        if (snprintf(tmp, sizeof(tmp), "%s/%s", cwd, vmd->home) >= (int)sizeof(tmp) ||
            vmd_strlcpy(vmd->home, tmp, sizeof(vmd->home)) != 0)
            die(vmd, 2, "%s: home path too long", vmd->home);
    }
}

/* --port, --speed and --spawn-path over the configuration. */
static void
apply_host_overrides(struct vmd *vmd, const struct args *a)
{
    char *end;
    if (a->port) {
        long port = strtol(a->port, &end, 10);
        if (*end != '\0' || a->port[0] == '\0' || port < 0 || port > 65535)
            die(vmd, 2, "--port %s: expected 0..65535", a->port);
        vmd->conf.listen_port = (int)port;
        vmd->listen_given = 1;
    }
    if (a->speed) {
        long speed = strtol(a->speed, &end, 10);
        if (*end != '\0' || a->speed[0] == '\0' || speed < 1 || speed > 1000000)
            die(vmd, 2, "--speed %s: expected 1..1000000", a->speed);
        vmd->conf.speed = (int)speed;
    }
    if (a->nspawn > 0) {
        for (int i = 0; i < vmd->conf.spawn_path_len; i++) {
            free(vmd->conf.spawn_path[i]);
            vmd->conf.spawn_path[i] = NULL;
        }
        vmd->conf.spawn_path_len = a->nspawn;
        for (int i = 0; i < a->nspawn; i++)
            if ((vmd->conf.spawn_path[i] = strdup(a->spawn_path[i])) == NULL)
                die(vmd, 1, "out of memory");
    }
}

/*
 * The configuration file, then what the command line overrides in it.  A
 * joining daemon is given the master's file name; on a host that does not
 * share it (no such file, or not ours to read), runs on the defaults.
 */
static void
load_conf(struct vmd *vmd, const struct args *a)
{
    const char *conf_file = a->conf_file;
    conf_defaults(&vmd->conf);
    if (conf_file && !vmd->is_master && access(conf_file, R_OK) != 0 &&
        (errno == ENOENT || errno == EACCES)) {
        log_debug("no configuration %s for us on this host; using the defaults", conf_file);
        conf_file = NULL;
    }
    if (conf_file) {
        struct conf_diag diag = { 0 };
        struct stat st;

        if (realpath(conf_file, vmd->conf_path) == NULL)
            die(vmd, 2, "%s: %s", conf_file, strerror(errno));
        /* It names what the daemon runs (spawn_path, hoststart): another
         * user must not have written it, as a joining daemon reads a file
         * at the master's path, wherever that is on its host. */
        if (stat(vmd->conf_path, &st) == 0 &&
            ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & S_IWOTH)))
            die(vmd, 2, "%s: %s; refusing it (it says what this daemon runs)", conf_file,
                st.st_uid != geteuid() && st.st_uid != 0 ? "owned by another user"
                                                         : "writable by every user");
        if (conf_load(vmd->conf_path, &vmd->conf, &diag) != 0) {
            fprintf(stderr, "%s", diag.text);
            die(vmd, 2, "%s: %d error%s in the configuration", conf_file, diag.nerrors,
                diag.nerrors == 1 ? "" : "s");
        }
    }
    if (a->listen) {
        parse_listen(vmd, a->listen);
        vmd->listen_given = 1;
    }
    apply_host_overrides(vmd, a);
    if (vmd->hoststart_override[0]) {
        free(vmd->conf.hoststart);
        vmd->conf.hoststart = strdup(vmd->hoststart_override);
        if (vmd->conf.hoststart == NULL)
            die(vmd, 1, "out of memory");
    }
    if (a->loglevel) {
        int lv = conf_log_level_parse(a->loglevel);
        if (lv < 0)
            die(vmd, 2, "--log-level %s: expected err, warn, info or debug", a->loglevel);
        vmd->conf.log_level = lv;
    }
}

static void
parse_args(struct vmd *vmd, int argc, char **argv, int *daemonize)
{
    struct args a = { 0 };
    parse_options(vmd, argc, argv, daemonize, &a);
    set_name_and_home(vmd, a.home);
    load_conf(vmd, &a);
}

/*
 * Detach: the parent waits on a pipe for the child's READY (or error) line,
 * copies it to its stdout and exits with 0 only if the child is ready.
 */
static void
daemonize(struct vmd *vmd)
{
    int fds[2];
    if (pipe(fds) != 0)
        die(vmd, 1, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die(vmd, 1, "fork: %s", strerror(errno));
    if (pid > 0) {
        char line[1024];
        size_t n = 0;
        close(fds[1]);
        while (n < sizeof(line) - 1) {
            ssize_t r = read(fds[0], line + n, sizeof(line) - 1 - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            n += (size_t)r;
            if (memchr(line, '\n', n))
                break;
        }
        line[n] = '\0';
        if (strncmp(line, "vmd ready ", 10) == 0) {
            fputs(line, stdout);
            fflush(stdout);
            _exit(0);
        }
        if (n == 0)
            fprintf(stderr, "vmd: the daemon exited before it was ready\n");
        else
            fprintf(stderr, "%s", line);
        if (n)
            fputs(line, stdout);
        fflush(NULL);
        _exit(1);
    }
    close(fds[0]);
    setsid();
    vmd->ready_fd = fds[1];
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        if (null > STDERR_FILENO)
            close(null);
    }
}

/* The local address of the route to ip, without sending anything. */
static int
route_source(const char *ip, char *out, size_t cap)
{
    struct sockaddr_in to, me;
    socklen_t len = sizeof(me);
    if (uv_ip4_addr(ip, 9, &to) != 0 || to.sin_addr.s_addr == htonl(INADDR_ANY))
        return -EINVAL;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc = connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 &&
                     getsockname(fd, (struct sockaddr *)&me, &len) == 0 ? 0 : -errno;
    close(fd);
    return rc == 0 ? uv_ip4_name(&me, out, cap) : rc;
}

/* 1 if ip is the address of one of this host's interfaces. */
static int
is_local_address(const char *ip)
{
    uv_interface_address_t *ifs;
    char name[VMD_ADDR_MAX];
    int n, found = 0;
    if (uv_interface_addresses(&ifs, &n) != 0)
        return 0;
    for (int i = 0; i < n && !found; i++)
        found = ifs[i].address.address4.sin_family == AF_INET &&
                uv_ip4_name(&ifs[i].address.address4, name, sizeof(name)) == 0 &&
                strcmp(name, ip) == 0;
    uv_free_interface_addresses(ifs, n);
    return found;
}

/* The address of the interface toward the other hosts: for a joining
 * daemon the one the route to the master leaves from, for the master the
 * one its default route leaves from (192.0.2.1, TEST-NET-1, is only looked
 * up, never sent to), else the first non-loopback IPv4 address, else
 * loopback. */
static void
toward_others(const struct vmd *vmd, char *out, size_t cap)
{
    uv_interface_address_t *ifs;
    int n;

    if (vmd->master_address[0] && route_source(vmd->master_address, out, cap) == 0)
        return;
    if (route_source("192.0.2.1", out, cap) == 0)
        return;
    snprintf(out, cap, "127.0.0.1");
    if (uv_interface_addresses(&ifs, &n) != 0)
        return;
    for (int i = 0; i < n; i++) {
        if (ifs[i].is_internal || ifs[i].address.address4.sin_family != AF_INET)
            continue;
        uv_ip4_name(&ifs[i].address.address4, out, cap);
        break;
    }
    uv_free_interface_addresses(ifs, n);
}

/*
 * Where the daemon listens.  "auto", the default, is the interface toward
 * the other hosts, so a workstation with several interfaces does not open
 * the VM's port on all of them; "0.0.0.0" (every address) only when the
 * configuration or --listen says so.  A joining daemon given an address
 * that is not one of its own (the master's, from a shared vmd.conf) listens
 * as for "auto": never on the master's address.
 */
static void
resolve_listen_address(struct vmd *vmd)
{
    const char *la = vmd->conf.listen_address;
    char ip[VMD_ADDR_MAX];

    if (strcmp(la, "auto") != 0) {
        if (vmd->is_master || vmd->listen_given || strcmp(la, "0.0.0.0") == 0 ||
            is_local_address(la))
            return;
        log_info("listen.address %s is not an address of this host; listening toward the "
                 "master instead", la);
    }
    toward_others(vmd, ip, sizeof(ip));
    free(vmd->conf.listen_address);
    if ((vmd->conf.listen_address = strdup(ip)) == NULL)
        die(vmd, 1, "out of memory");
}

/* The address others reach us on: the listen address, or for a wildcard
 * the one the route to the master leaves from, else our first
 * non-loopback IPv4 interface. */
static void
pick_address(struct vmd *vmd)
{
    const char *la = vmd->conf.listen_address;
    if (strcmp(la, "0.0.0.0") != 0) {
        vmd_strlcpy(vmd->address, la, sizeof(vmd->address));
        return;
    }
    if (vmd->master_address[0] &&
        route_source(vmd->master_address, vmd->address, sizeof(vmd->address)) == 0)
        return;
    snprintf(vmd->address, sizeof(vmd->address), "127.0.0.1");
    uv_interface_address_t *ifs;
    int n;
    if (uv_interface_addresses(&ifs, &n) != 0)
        return;
    for (int i = 0; i < n; i++) {
        if (ifs[i].is_internal || ifs[i].address.address4.sin_family != AF_INET)
            continue;
        uv_ip4_name(&ifs[i].address.address4, vmd->address, sizeof(vmd->address));
        break;
    }
    uv_free_interface_addresses(ifs, n);
}

void
vmd_ready(struct vmd *vmd)
{
    char line[1024];
    int n = snprintf(line, sizeof(line),
                     "vmd ready name=%s address=%s port=%d fingerprint=%s pid=%ld\n", vmd->name,
                     vmd->address, vmd->port, vmd->fingerprint, (long)getpid());
    if (vmd->ready_fd >= 0) {
        ssize_t w = write(vmd->ready_fd, line, (size_t)n);
        (void)w;
        if (vmd->ready_fd != STDOUT_FILENO)
            close(vmd->ready_fd);
        vmd->ready_fd = -1;
    }
}

static void
on_signal(uv_signal_t *s, int signum)
{
    struct vmd *vmd = s->data;
    if (signum == SIGHUP) {
        log_info("SIGHUP ignored; use vmctl to change the VM");
        return;
    }
    /* The master takes the whole VM down, as PVM's master pvmd did; any other
     * daemon leaves, and the master drops it when the link closes. */
    if (vmd->is_master)
        vmd_halt_vm(vmd);
    else
        vmd_halt(vmd, strsignal(signum));
}

static void
on_hb_timer(uv_timer_t *t)
{
    struct vmd *vmd = t->data;
    /* A joiner the master never reached (its add failed: a blocked port)
     * must not linger on the host holding its socket and port. */
    if (!vmd->is_master && vmd->index == 0 && !vmd->halting &&
        uv_now(vmd->loop) - vmd->started_ms > (uint64_t)(vmd->conf.start_timeout * 1000.0)) {
        vmd_halt(vmd, "the master did not link within start_timeout");
        return;
    }
    vmd_peer_heartbeat_all(vmd);
    vmd_peer_check_liveness(vmd);
    vmd_fwd_sweep(vmd);
}

/* LIQUIDVM_HOME and its run/ and logs/ directories, ours alone. */
static void
make_dirs(struct vmd *vmd)
{
    char path[4096];
    int rc;
    if ((rc = mkdir_private(vmd->home)) != 0)
        die(vmd, 1, "%s: %s", vmd->home, wire_strerror(rc));
    home_path(vmd, "run", path, sizeof(path));
    if ((rc = mkdir_private(path)) != 0)
        die(vmd, 1, "%s: %s (the socket directory must belong to you alone)", path,
            wire_strerror(rc));
    home_path(vmd, "logs", path, sizeof(path));
    if ((rc = mkdir_private(path)) != 0)
        die(vmd, 1, "%s: %s", path, wire_strerror(rc));
}

/* Before detaching, while stdin is still the hoststart channel. */
static void
take_certs(struct vmd *vmd)
{
    char ca[4096], cert[4096], key[4096], err[512] = "";
    int rc;
    if (expand_home_file(vmd, vmd->conf.tls_ca, ca, sizeof(ca)) != 0 ||
        expand_home_file(vmd, vmd->conf.tls_cert, cert, sizeof(cert)) != 0 ||
        expand_home_file(vmd, vmd->conf.tls_key, key, sizeof(key)) != 0)
        die(vmd, 1, "TLS file path too long");
    if ((rc = vmd_certs_take(vmd, ca, cert, key, err, sizeof(err))) != 0)
        die(vmd, 1, "certificates: %s", err[0] ? err : wire_strerror(rc));
}

/* The TLS context, from the configured files (kept for direct links). */
static void
load_tls(struct vmd *vmd)
{
    char path[4096], cert[4096], key[4096], err[512];
    if (expand_home_file(vmd, vmd->conf.tls_ca, path, sizeof(path)) != 0 ||
        expand_home_file(vmd, vmd->conf.tls_cert, cert, sizeof(cert)) != 0 ||
        expand_home_file(vmd, vmd->conf.tls_key, key, sizeof(key)) != 0)
        die(vmd, 1, "TLS file path too long");
    if (vmd_tls_ctx_new(path, cert, key, &vmd->tls, err, sizeof(err)) != 0)
        die(vmd, 1, "TLS: %s", err);
    vmd_strlcpy(vmd->tls_ca, path, sizeof(vmd->tls_ca));
    vmd_strlcpy(vmd->tls_cert, cert, sizeof(vmd->tls_cert));
    vmd_strlcpy(vmd->tls_key, key, sizeof(vmd->tls_key));
    vmd_strlcpy(vmd->fingerprint, vmd_tls_ctx_fingerprint(vmd->tls), sizeof(vmd->fingerprint));
}

/* The local socket, the TCP listener, and the master's own table entry. */
static void
start_listening(struct vmd *vmd)
{
    int rc;
    resolve_listen_address(vmd);
    pick_address(vmd);
    if ((rc = vmd_client_listen(vmd)) != 0)
        die(vmd, 1, "local socket %s: %s", vmd->sock_path, wire_strerror(rc));
    if ((rc = vmd_peer_listen(vmd)) != 0)
        die(vmd, 1, "listen %s:%d: %s", vmd->conf.listen_address, vmd->conf.listen_port,
            wire_strerror(rc));
    if (vmd->is_master) {
        struct vmd_host *self = vmd_host_new(vmd, vmd->name, 1);
        if (self == NULL)
            die(vmd, 1, "out of memory");
        self->state = VMD_HOST_UP;
        vmd->index = 1;
        vmd->master_index = 1;
        vmd_strlcpy(vmd->master_name, vmd->name, sizeof(vmd->master_name));
    }
}

/* The heartbeat, the load sampler, the halt timer and the signals. */
static void
start_timers(struct vmd *vmd)
{
    int rc;
    vmd_group_init(vmd);
    uv_timer_init(vmd->loop, &vmd->hb_timer);
    vmd->hb_timer.data = vmd;
    uint64_t hb_ms = (uint64_t)(vmd->conf.heartbeat * 1000.0);
    if (hb_ms == 0)
        hb_ms = 1;
    uv_timer_start(&vmd->hb_timer, on_hb_timer, hb_ms, hb_ms);
    if ((rc = vmd_load_start(vmd)) != 0)
        die(vmd, 1, "load sampler: %s", wire_strerror(rc));
    uv_timer_init(vmd->loop, &vmd->halt_timer);
    vmd->halt_timer.data = vmd;
    uv_signal_t *sigs[] = { &vmd->sig_term, &vmd->sig_int, &vmd->sig_hup };
    int signums[] = { SIGTERM, SIGINT, SIGHUP };
    for (int i = 0; i < 3; i++) {
        uv_signal_init(vmd->loop, sigs[i]);
        sigs[i]->data = vmd;
        uv_signal_start(sigs[i], on_signal, signums[i]);
    }
}

int
main(int argc, char **argv)
{
    static struct vmd vmd_storage;
    struct vmd *vmd = &vmd_storage;
    char path[4096];
    int detach = 0, rc;

    vmd->ready_fd = STDOUT_FILENO;
    vmd_init_lists(vmd);
    vmd_modules_install(vmd);
    signal(SIGPIPE, SIG_IGN);

    parse_args(vmd, argc, argv, &detach);
    log_init(vmd->name, vmd->conf.log_level);

    ssize_t el = readlink("/proc/self/exe", vmd->exe, sizeof(vmd->exe) - 1);
    if (el <= 0)
        die(vmd, 1, "readlink /proc/self/exe: %s", strerror(errno));
    vmd->exe[el] = '\0';
    make_dirs(vmd);
    if (vmd->take_certs && !vmd->is_master)
        take_certs(vmd);

    if (detach)
        daemonize(vmd);
    if (detach && vmd->conf.log_file && vmd->conf.log_file[0]) {
        if ((rc = expand_home_file(vmd, vmd->conf.log_file, path, sizeof(path))) != 0 ||
            (rc = log_open_file(path)) != 0)
            die(vmd, 1, "log file %s: %s", path, wire_strerror(rc));
    }
    load_tls(vmd);

    vmd->loop = uv_default_loop();
    vmd->started_ms = uv_now(vmd->loop);
    start_listening(vmd);
    start_timers(vmd);

    log_info("%s %s ready on %s:%d, socket %s, pid %ld", vmd->is_master ? "master" : "daemon",
             vmd->name, vmd->address, vmd->port, vmd->sock_path, (long)getpid());
    vmd_ready(vmd);

    uv_run(vmd->loop, UV_RUN_DEFAULT);

    /* vmd_halt closed every handle; let their close callbacks run. */
    uv_run(vmd->loop, UV_RUN_DEFAULT);
    uv_loop_close(vmd->loop);
    vmd_tls_ctx_free(vmd->tls);
    for (int i = 1; i <= VMD_MAX_HOSTS; i++)
        if (vmd->hosts[i])
            vmd_host_free(vmd, vmd->hosts[i]);
    conf_free(&vmd->conf);
    log_info("exited");
    return vmd->exit_code;
}
