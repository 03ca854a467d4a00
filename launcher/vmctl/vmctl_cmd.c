/*
 * vmctl_cmd.c - vmctl's commands for the virtual machine itself: start,
 * add, delete, conf, status, halt, ca, cert, version, after PVM's console
 * (no seed idea of its own).  Each parses its own words, asks the daemon
 * through vmctl_client.c, and prints text for people or one JSON object
 * with --json.
 */
#include "vmctl.h"
#include "vmctl_ca.h"
#include "conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ADD_TIMEOUT_MS (-1)     /* the daemon bounds an add by start_timeout */
#define CTL_TIMEOUT_MS 30000

static int
fail(struct vmctl *v, int code, const char *fmt, const char *arg)
{
    char msg[5200];
    snprintf(msg, sizeof(msg), fmt, arg);
    if (v->json)
        vmctl_json_fail(v, msg, wire_errname(code));
    else
        fprintf(stderr, "vmctl: %s\n", msg);
    return VMCTL_EXIT_FAIL;
}

/* Options shared by every command that takes only --json/-h. */
static int
simple_opts(struct vmctl *v, int argc, char **argv, const char *help, int *first_arg)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s", help);
            return -1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return vmctl_usage_error(argv[0], "unknown option %s", argv[i]);
        } else {
            /* Words; options may also follow them. */
            if (*first_arg == 0)
                *first_arg = i;
        }
    }
    return 0;
}

/* Collect non-option words. */
static int
collect_words(int argc, char **argv, char **out, int max)
{
    int n = 0;
    for (int i = 1; i < argc && n < max; i++)
        if (argv[i][0] != '-')
            out[n++] = argv[i];
    return n;
}

/* mkdir -p, the last component private. */
static int
mkdir_parents(const char *path)
{
    char p[4096];
    if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
        return -ENAMETOOLONG;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static void
certs_dir(const struct vmctl *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s/certs", v->home);
}

int
vmctl_ensure_cert(struct vmctl *v, const char *verb, const char *host, int init_ca)
{
    char dir[4200], path[4600], err[512];
    struct stat st;
    int rc;

    certs_dir(v, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/%s.pem", dir, host);
    if (stat(path, &st) == 0)
        return 0;
    snprintf(path, sizeof(path), "%s/ca.key", dir);
    if (stat(path, &st) != 0) {
        if (!init_ca) {
            fprintf(stderr, "vmctl: %s: no certificate for %s and no CA key in %s: run `vmctl "
                            "ca init` or copy %s.pem and %s.key there\n", verb, host, dir, host,
                    host);
            return -ENOENT;
        }
        mkdir_parents(v->home);
        if ((rc = vmctl_ca_init(dir, 0, err, sizeof(err))) != 0 && rc != -EEXIST) {
            fprintf(stderr, "vmctl: %s: cannot create the cluster CA: %s\n", verb, err);
            return rc;
        }
        if (!v->json && !v->quiet)
            fprintf(stderr, "vmctl: created the cluster CA in %s\n", dir);
    }
    if ((rc = vmctl_cert_issue(dir, host, 0, err, sizeof(err))) != 0 && rc != -EEXIST) {
        fprintf(stderr, "vmctl: %s: cannot issue %s's certificate: %s\n", verb, host, err);
        return rc;
    }
    return 0;
}

/* vmd beside this vmctl, else along PATH. */
static void
vmd_path(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(out, cap, "%s/vmd", self) < (int)cap && access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, cap, "vmd");
}

/* Run vmd --daemon and read its READY line; returns 0 and the line. */
static int
spawn_master(struct vmctl *v, char **args, char *line, size_t cap)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -errno;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(args[0], args);
        printf("vmd error: cannot run %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t r = read(fds[0], line + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    line[n] = '\0';
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    (void)v;
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "vmd ready ", 10) != 0)
        return WIRE_ECANTSTART;
    return 0;
}

static const char *
field(const char *line, const char *key, char *out, size_t cap)
{
    const char *p = strstr(line, key);
    out[0] = '\0';
    if (p) {
        p += strlen(key);
        size_t n = strcspn(p, " ");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, p, n);
        out[n] = '\0';
    }
    return out;
}

struct add_result {
    int ok, failed;
};

/* vmctl add's per-host options, key and value pairs for the master (vmd.conf(5), hosts). */
struct add_opts {
    const char *kv[2 * 40];
    int n;                      /* pairs */
};
static int do_add(struct vmctl *v, char **names, int n, const struct add_opts *o,
                  struct add_result *res, int print);

struct start_opts {
    char *conf, *name, *listen;
    long local;                 /* --local N: N daemons on this machine, 0 = off */
};

static int
start_help(void)
{
    printf("usage: vmctl start [-c FILE] [--name NAME] [--listen ADDR[:PORT]] [--json]\n"
           "       vmctl start --local N [-c FILE] [--json]\n"
           "  Start the master daemon in the background and return once it is ready.\n"
           "  --local N starts a VM of N daemons on this machine, on loopback ports,\n"
           "  named host0..hostN-1 (a CA and certificates are made if missing).\n");
    return VMCTL_EXIT_OK;
}

/* Options of start into *o: -1 to go on, else the exit status. */
static int
start_parse(struct vmctl *v, int argc, char **argv, struct start_opts *o)
{
    static const struct option opts[] = {
        { "conf", required_argument, NULL, 'c' }, { "local", required_argument, NULL, 'l' },
        { "name", required_argument, NULL, 'n' }, { "listen", required_argument, NULL, 'L' },
        { "json", no_argument, NULL, 'j' },       { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *end;
    int c;

    o->conf = v->conf_file[0] ? v->conf_file : NULL;
    optind = 1;
    opterr = 0;                 /* its messages would not name vmctl */
    while ((c = getopt_long(argc, argv, "+:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->conf = optarg;
            break;
        case 'l':
            o->local = strtol(optarg, &end, 10);
            if (*end || o->local < 1 || o->local > 64)
                return vmctl_usage_error("start", "--local %s: expected a number of hosts 1..64",
                                         optarg);
            break;
        case 'n':
            o->name = optarg;
            break;
        case 'L':
            o->listen = optarg;
            break;
        case 'j':
            v->json = 1;
            break;
        case 'h':
            return start_help();
        case ':':
            return vmctl_usage_error("start", "%s needs a value", argv[optind - 1]);
        default:
            return vmctl_usage_error("start", "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return vmctl_usage_error("start", "unexpected argument %s", argv[optind]);
    if (o->name && !vmctl_host_name_ok(o->name))
        return vmctl_usage_error("start", "--name %s: not a valid host name", o->name);
    return -1;
}

/* A wrong configuration file is the user's to fix: report every error and
 * give bad usage before anything starts. */
static int
start_check_conf(struct vmctl *v, const char *conf)
{
    struct conf cf;
    struct conf_diag diag = { 0 };
    int rc;

    conf_defaults(&cf);
    rc = conf_load(conf, &cf, &diag);
    conf_free(&cf);
    if (rc == 0)
        return 0;
    fputs(diag.text, stderr);
    vmctl_json_fail(v, diag.text, wire_errname(rc));
    return VMCTL_EXIT_USAGE;
}

/* The master's certificate, and with --local those of host1..hostN-1. */
static int
start_certs(struct vmctl *v, const char *name, long local)
{
    int rc = vmctl_ensure_cert(v, "start", name, 1);

    for (long i = 1; rc == 0 && i < local; i++) {
        char h[32];
        snprintf(h, sizeof(h), "host%ld", i);
        rc = vmctl_ensure_cert(v, "start", h, 1);
    }
    return rc;
}

/* The master daemon's command line into args (16 entries); vmd and conf_abs
 * are PATH_MAX buffers args points into. */
static int
master_args(struct vmctl *v, const struct start_opts *o, char *name, char *vmd, char *conf_abs,
            char **args)
{
    int a = 0;

    vmd_path(vmd, PATH_MAX);
    args[a++] = vmd;
    args[a++] = "--daemon";
    args[a++] = "--home";
    args[a++] = v->home;
    args[a++] = "--name";
    args[a++] = name;
    if (o->conf) {
        if (realpath(o->conf, conf_abs) == NULL)
            return -errno;
        args[a++] = "-c";
        args[a++] = conf_abs;
    }
    if (o->local) {
        args[a++] = "--listen";
        args[a++] = "127.0.0.1";
        args[a++] = "--hoststart";
        args[a++] = "%v --listen 127.0.0.1";
    } else if (o->listen) {
        args[a++] = "--listen";
        args[a++] = o->listen;
    }
    args[a] = NULL;
    return 0;
}

/* --local N: add host1..hostN-1 once the master runs. */
static int
start_add_local(struct vmctl *v, long local, struct add_result *res)
{
    char *names[64], bufs[64][32];
    int rc;

    for (long i = 1; i < local; i++) {
        snprintf(bufs[i], sizeof(bufs[i]), "host%ld", i);
        names[i - 1] = bufs[i];
    }
    if (!v->json && !v->quiet)
        fprintf(stderr, "adding %ld hosts...\n", local - 1);
    rc = do_add(v, names, (int)local - 1, NULL, res, v->json ? 0 : -1);
    if (rc != 0 || res->failed)
        return fail(v, rc ? rc : WIRE_ECANTSTART,
                    "start: the local VM is incomplete: %s (vmctl conf shows what is up)",
                    rc ? wire_strerror(rc) : "some hosts failed to start");
    return VMCTL_EXIT_OK;
}

/* The master's ready line ("address=... port=... pid=...") as the result. */
static void
start_report(const struct vmctl *v, const char *name, const char *line,
             const struct add_result *res, double dt)
{
    char addr[64], port[16], pid[16];

    field(line, "address=", addr, sizeof(addr));
    field(line, "port=", port, sizeof(port));
    field(line, "pid=", pid, sizeof(pid));
    if (v->json) {
        printf("{\"ok\":true,\"master\":");
        wire_json_str(stdout, name);
        printf(",\"address\":\"%s:%s\",\"pid\":%s,\"hosts\":%d,\"seconds\":%.3f,\"home\":", addr,
               port, pid, 1 + res->ok, dt);
        wire_json_str(stdout, v->home);
        printf("}\n");
    } else {
        printf("virtual machine ready: master %s at %s:%s (pid %s), %d host%s, %.2f s\n", name,
               addr, port, pid, 1 + res->ok, res->ok ? "s" : "", dt);
    }
}

int
vmctl_cmd_start(struct vmctl *v, int argc, char **argv)
{
    struct start_opts o = { 0 };
    int rc;

    if ((rc = start_parse(v, argc, argv, &o)) >= 0)
        return rc;
    if (o.conf && (rc = start_check_conf(v, o.conf)) != 0)
        return rc;

    char sock[4300], hn[256], local0[] = "host0";
    char *name = o.name;
    if (vmctl_socket_path(v, sock, sizeof(sock)) == 0)
        return fail(v, WIRE_EBUSY,
                    "start: a virtual machine is already running in %s (vmctl halt)", v->home);
    if (o.local)
        name = local0;
    if (name == NULL) {
        if (gethostname(hn, sizeof(hn)) != 0)
            return fail(v, -errno, "start: gethostname: %s", strerror(errno));
        hn[sizeof(hn) - 1] = '\0';
        name = hn;
    }

    double t0 = vmctl_now();
    if (mkdir_parents(v->home) != 0)
        return fail(v, -errno, "start: cannot create %s", v->home);
    if ((rc = start_certs(v, name, o.local)) != 0)
        return fail(v, rc, "start: cannot prepare certificates in %s/certs", v->home);

    char vmd[PATH_MAX], conf_abs[PATH_MAX], line[1024];
    char *args[16];
    if ((rc = master_args(v, &o, name, vmd, conf_abs, args)) != 0)
        return fail(v, rc, "start: %s: no such configuration file", o.conf);
    if (!v->json && !v->quiet)
        fprintf(stderr, "starting the master %s...\n", name);
    if ((rc = spawn_master(v, args, line, sizeof(line))) != 0)
        return fail(v, rc, "start: the master did not start: %s",
                    line[0] ? line : "no output (see the log in LIQUIDVM_HOME/logs)");

    struct add_result res = { 0, 0 };
    if (o.local > 1 && (rc = start_add_local(v, o.local, &res)) != VMCTL_EXIT_OK)
        return rc;
    start_report(v, name, line, &res, vmctl_now() - t0);
    return VMCTL_EXIT_OK;
}

/* Ask the daemon to add or delete names; print per host. */
static int
hosts_op(struct vmctl *v, int type, char **names, int n, const struct add_opts *o,
         struct add_result *res, int print)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status, rc;

    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)n);
    for (int i = 0; i < n; i++)
        wire_put_str(&req, names[i]);
    if (o && o->n > 0) {
        wire_put_u32(&req, (uint32_t)o->n);
        for (int i = 0; i < 2 * o->n; i++)
            wire_put_str(&req, o->kv[i]);
    }
    rc = vmctl_call(v, type, &req, type == WIRE_T_REQ_ADD ? ADD_TIMEOUT_MS : CTL_TIMEOUT_MS,
                    &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc != 0)
        return rc;
    struct wire_rbuf r;
    uint32_t count;
    wire_rbuf_init(&r, body, len);
    if (len == 0 || wire_get_u32(&r, &count) != 0 || count != (uint32_t)n) {
        free(body);
        return status ? status : WIRE_EFRAME;
    }
    const char *verb = type == WIRE_T_REQ_ADD ? "added" : "deleted";
    /* print < 0: start --local's hosts, whose failures are start's. */
    const char *cmd = print < 0 ? "start" : type == WIRE_T_REQ_ADD ? "add" : "delete";
    struct {
        char name[256];
        int32_t st;
        uint32_t tid;
        char msg[256];
    } *it = calloc(count, sizeof(*it));
    if (it == NULL) {
        free(body);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (wire_get_str(&r, it[i].name, sizeof(it[i].name)) || wire_get_i32(&r, &it[i].st) ||
            wire_get_u32(&r, &it[i].tid) || wire_get_str(&r, it[i].msg, sizeof(it[i].msg))) {
            free(it);
            free(body);
            return WIRE_EFRAME;
        }
        if (it[i].st == 0)
            res->ok++;
        else
            res->failed++;
    }
    if (print && v->json) {
        printf("{\"ok\":%s,\"%s\":[", res->failed ? "false" : "true", verb);
        for (uint32_t i = 0; i < count; i++) {
            printf("%s{\"name\":", i ? "," : "");
            wire_json_str(stdout, it[i].name);
            printf(",\"tid\":%u,\"status\":\"%s\"", it[i].tid,
                   it[i].st ? wire_errname(it[i].st) : "ok");
            if (it[i].st) {
                printf(",\"error\":");
                wire_json_str(stdout, it[i].msg[0] ? it[i].msg : wire_strerror(it[i].st));
            }
            printf("}");
        }
        printf("],\"succeeded\":%d,\"failed\":%d}\n", res->ok, res->failed);
    } else if (print < 0) {
        for (uint32_t i = 0; i < count; i++)
            if (it[i].st)
                fprintf(stderr, "vmctl: %s: %s: %s\n", cmd, it[i].name,
                        it[i].msg[0] ? it[i].msg : wire_strerror(it[i].st));
    } else if (print) {
        printf("%d successful\n", res->ok);
        if (res->ok)
            printf("%24s %8s\n", "HOST", "DTID");
        for (uint32_t i = 0; i < count; i++)
            if (it[i].st == 0)
                printf("%24s %8x\n", it[i].name, it[i].tid);
        for (uint32_t i = 0; i < count; i++)
            if (it[i].st)
                fprintf(stderr, "vmctl: %s: %s: %s\n", cmd, it[i].name,
                        it[i].msg[0] ? it[i].msg : wire_strerror(it[i].st));
    }
    free(it);
    free(body);
    return 0;
}

static int
do_add(struct vmctl *v, char **names, int n, const struct add_opts *o, struct add_result *res,
       int print)
{
    int own_certs = 0;
    for (int i = 0; o && i < o->n; i++)
        own_certs |= strcmp(o->kv[2 * i], "send_certs") == 0 && strcmp(o->kv[2 * i + 1], "0") == 0;
    for (int i = 0; i < n; i++) {
        if (!vmctl_host_name_ok(names[i]))
            return -EINVAL;
        /* Certificates provisioned by hand stay where the administrator put them. */
        int rc = own_certs ? 0 : vmctl_ensure_cert(v, "add", names[i], 0);
        if (rc != 0)
            return rc;
    }
    return hosts_op(v, WIRE_T_REQ_ADD, names, n, o, res, print);
}

static int
names_cmd(struct vmctl *v, int argc, char **argv, int type)
{
    static char help_del[] = "usage: vmctl delete HOST... [--json]\n"
                             "  Stop the daemon on each HOST and remove it from the VM.\n";
    int first = 0, rc;
    char *names[4096];
    if ((rc = simple_opts(v, argc, argv, help_del, &first)))
        return rc < 0 ? VMCTL_EXIT_OK : rc;
    int n = collect_words(argc, argv, names, 4096);
    if (n == 0)
        return vmctl_usage_error(argv[0], "name at least one host");
    for (int i = 0; i < n; i++)
        if (!vmctl_host_name_ok(names[i]))
            return vmctl_usage_error(argv[0], "%s: not a valid host name", names[i]);
    struct add_result res = { 0, 0 };
    rc = hosts_op(v, type, names, n, NULL, &res, 1);
    if (rc != 0)
        return vmctl_fail(v, rc, argv[0]);
    return res.failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

static const char add_help[] =
    "usage: vmctl add HOST... [--vmd PATH] [--speed N] [--address IP] [--port N]\n"
    "                 [--home DIR] [--spawn-path DIR]... [--no-send-certs] [--json]\n"
    "  Start a daemon on each HOST through the hoststart command and add it to the VM.\n"
    "  The certificate HOST.pem is issued first if missing and the CA key is here; a\n"
    "  HOST without certificates gets them through the hoststart channel (ssh's stdin).\n"
    "  --vmd PATH        vmd's path on HOST (default: the master's own path)\n"
    "  --speed N         HOST's relative speed, 1..1000000 (PVM's sp=)\n"
    "  --address IP      the address HOST listens on (default: every address)\n"
    "  --port N          the port HOST listens on (default: any free port)\n"
    "  --home DIR        LIQUIDVM_HOME on HOST (default: the master's)\n"
    "  --spawn-path DIR  where HOST looks for spawned programs (PVM's ep=); repeatable\n"
    "  --no-send-certs   HOST's certificates are provisioned by hand: never send them\n"
    "  Options override HOST's entry in the master's hosts list (vmd.conf(5)).\n";

/* One add option with a value into o; 0, or a usage error's exit status. */
static int
add_option(struct add_opts *o, const char *opt, const char *val)
{
    static const char *const keys[][2] = {
        { "--vmd", "vmd" }, { "--speed", "speed" }, { "--address", "address" },
        { "--port", "port" }, { "--home", "home" }, { "--spawn-path", "spawn_path" },
    };
    char *end;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        if (strcmp(opt, keys[k][0]) != 0)
            continue;
        if (val == NULL || val[0] == '\0')
            return vmctl_usage_error("add", "%s needs a value", opt);
        long n = strtol(val, &end, 10);
        if ((k == 1 && (*end || n < 1 || n > 1000000)) || (k == 3 && (*end || n < 0 || n > 65535)))
            return vmctl_usage_error("add", "%s %s: out of range", opt, val);
        struct in_addr a;
        if (k == 2 && inet_pton(AF_INET, val, &a) != 1)
            return vmctl_usage_error("add", "%s %s: expected an IPv4 address", opt, val);
        if (o->n == 40)
            return vmctl_usage_error("add", "too many options");
        o->kv[2 * o->n] = keys[k][1];
        o->kv[2 * o->n + 1] = val;
        o->n++;
        return 0;
    }
    return vmctl_usage_error("add", "unknown option %s", opt);
}

int
vmctl_cmd_add(struct vmctl *v, int argc, char **argv)
{
    struct add_opts o = { .n = 0 };
    char *names[4096];
    int n = 0, rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s", add_help);
            return VMCTL_EXIT_OK;
        } else if (strcmp(argv[i], "--no-send-certs") == 0) {
            if (o.n < 40) {
                o.kv[2 * o.n] = "send_certs";
                o.kv[2 * o.n++ + 1] = "0";
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            if ((rc = add_option(&o, argv[i], i + 1 < argc ? argv[i + 1] : NULL)) != 0)
                return rc;
            i++;
        } else if (n < 4096) {
            if (!vmctl_host_name_ok(argv[i]))
                return vmctl_usage_error("add", "%s: not a valid host name", argv[i]);
            names[n++] = argv[i];
        }
    }
    if (n == 0)
        return vmctl_usage_error("add", "name at least one host");
    struct add_result res = { 0, 0 };
    if ((rc = do_add(v, names, n, &o, &res, 1)) != 0)
        return vmctl_fail(v, rc, argv[0]);
    return res.failed ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

int
vmctl_cmd_delete(struct vmctl *v, int argc, char **argv)
{
    return names_cmd(v, argc, argv, WIRE_T_REQ_DELETE);
}

/* The load table at the end of a conf reply (wire_load.h). */
static int
load_section(struct wire_rbuf *r, struct vmctl_hostrow *rows, uint32_t nrows)
{
    uint32_t n;
    int rc;
    if ((rc = wire_get_u32(r, &n)) != 0 || n > 4095)
        return rc ? rc : WIRE_EFRAME;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t dtid;
        uint64_t age;
        char name[256];
        struct wire_load l;
        if ((rc = wire_get_u32(r, &dtid)) || (rc = wire_get_str(r, name, sizeof(name))) ||
            (rc = wire_get_u64(r, &age)) || (rc = wire_load_get(r, &l)))
            return rc;
        for (uint32_t j = 0; j < nrows && age != UINT64_MAX; j++) {
            if (rows[j].tid == dtid) {
                rows[j].has_load = 1;
                rows[j].load_age_ms = age;
                rows[j].load = l;
            }
        }
    }
    return 0;
}

/* A figure for the text table: "-" when unknown. */
static const char *
fig(char *buf, size_t cap, double v, int prec)
{
    if (v < 0.0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.*f", prec, v);
    return buf;
}

/* A JSON number, or null when unknown (negative). */
static void
json_fig(const char *key, double v, int prec)
{
    if (v < 0.0)
        printf(",\"%s\":null", key);
    else
        printf(",\"%s\":%.*f", key, prec, v);
}

static void
print_load_json(const struct vmctl_hostrow *h)
{
    const struct wire_load *l = &h->load;
    if (!h->has_load) {
        printf(",\"load_age\":null");
        return;
    }
    printf(",\"load_age\":%.3f", (double)h->load_age_ms / 1000.0);
    json_fig("cpus", l->cpus, 0);
    json_fig("load1", l->load1, 2);
    json_fig("ext_busy", l->ext_busy, 3);
    json_fig("vm_busy", l->vm_busy, 3);
    json_fig("quota", l->quota, 3);
    json_fig("throttled", l->throttled, 3);
    json_fig("capacity", l->capacity, 3);
    json_fig("load_interval", l->interval, 3);
    if (l->mem_total)
        printf(",\"mem_total\":%llu,\"mem_avail\":%llu", (unsigned long long)l->mem_total,
               (unsigned long long)l->mem_avail);
    else
        printf(",\"mem_total\":null,\"mem_avail\":null");
}

static void
print_load_table(const struct vmctl_hostrow *rows, int n)
{
    char a[6][32];
    printf("\n%24s %5s %6s %6s %6s %6s %6s %8s %10s %6s\n", "LOAD", "CPUS", "LOAD1", "EXT",
           "VM", "QUOTA", "THROTL", "CAPACITY", "MEM_AVAIL", "AGE");
    for (int i = 0; i < n; i++) {
        const struct vmctl_hostrow *h = &rows[i];
        const struct wire_load *l = &h->load;
        if (!h->has_load) {
            printf("%24s %5s  (no sample yet)\n", h->name, "-");
            continue;
        }
        char cpus[16], mem[32], quota[32];
        snprintf(cpus, sizeof(cpus), l->cpus > 0 ? "%d" : "-", l->cpus);
        if (l->mem_total)
            snprintf(mem, sizeof(mem), "%.1fG", (double)l->mem_avail / (1024.0 * 1024 * 1024));
        else
            snprintf(mem, sizeof(mem), "-");
        if (l->quota == 0.0)
            snprintf(quota, sizeof(quota), "none");
        else
            fig(quota, sizeof(quota), l->quota, 2);
        printf("%24s %5s %6s %6s %6s %6s %6s %8s %10s %5.1fs\n", h->name, cpus,
               fig(a[0], 32, l->load1, 2), fig(a[1], 32, l->ext_busy, 2),
               fig(a[2], 32, l->vm_busy, 2), quota, fig(a[3], 32, l->throttled, 2),
               fig(a[4], 32, l->capacity, 2), mem, (double)h->load_age_ms / 1000.0);
    }
}

int
vmctl_conf_fetch(struct vmctl *v, struct vmctl_hostrow **rows, int *nrows, char *master,
                 size_t mcap)
{
    int rc, status;
    unsigned char *body;
    size_t len;
    *rows = NULL;
    *nrows = 0;
    if ((rc = vmctl_call(v, WIRE_T_REQ_CONF, NULL, CTL_TIMEOUT_MS, &body, &len, &status)) != 0)
        return rc;
    if (status != 0) {
        free(body);
        return status;
    }
    struct wire_rbuf r;
    uint32_t serial, n = 0;
    wire_rbuf_init(&r, body, len);
    /* A short body is malformed, not a lack of memory (n may be unread). */
    if (wire_get_u32(&r, &serial) || wire_get_str(&r, master, mcap) || wire_get_u32(&r, &n) ||
        n > 4095) {
        free(body);
        return WIRE_EFRAME;
    }
    if ((*rows = calloc(n ? n : 1, sizeof(**rows))) == NULL) {
        free(body);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct vmctl_hostrow *h = &(*rows)[i];
        if (wire_get_u32(&r, &h->tid) || wire_get_str(&r, h->name, sizeof(h->name)) ||
            wire_get_str(&r, h->addr, sizeof(h->addr)) || wire_get_u32(&r, &h->port) ||
            wire_get_str(&r, h->arch, sizeof(h->arch)) || wire_get_u32(&r, &h->speed) ||
            wire_get_str(&r, h->state, sizeof(h->state))) {
            free(*rows);
            *rows = NULL;
            free(body);
            return WIRE_EFRAME;
        }
    }
    /* Daemons that sense load append every host's latest sample. */
    if (r.pos < r.len && (rc = load_section(&r, *rows, n)) != 0) {
        free(*rows);
        *rows = NULL;
        free(body);
        return rc;
    }
    *nrows = (int)n;
    free(body);
    return 0;
}

int
vmctl_cmd_conf(struct vmctl *v, int argc, char **argv)
{
    int first = 0, rc, n;
    struct vmctl_hostrow *rows;
    char master[256];
    if ((rc = simple_opts(v, argc, argv,
                          "usage: vmctl conf [--json]\n"
                          "  List the hosts of the VM and the latest load sample of each.\n",
                          &first)))
        return rc < 0 ? VMCTL_EXIT_OK : rc;
    if (first)
        return vmctl_usage_error("conf", "unexpected argument %s", argv[first]);
    if ((rc = vmctl_conf_fetch(v, &rows, &n, master, sizeof(master))) != 0)
        return vmctl_fail(v, rc, "conf");
    if (v->json) {
        printf("{\"master\":");
        wire_json_str(stdout, master);
        printf(",\"hosts\":[");
    } else {
        printf("%d host%s\n%24s %8s %8s %7s  %-21s %s\n", n, n == 1 ? "" : "s", "HOST", "DTID",
               "ARCH", "SPEED", "ADDRESS", "STATE");
    }
    for (int i = 0; i < n; i++) {
        const struct vmctl_hostrow *h = &rows[i];
        char ap[96];
        snprintf(ap, sizeof(ap), "%s:%u", h->addr, h->port);
        if (v->json) {
            printf("%s{\"name\":", i ? "," : "");
            wire_json_str(stdout, h->name);
            printf(",\"tid\":%u,\"arch\":", h->tid);
            wire_json_str(stdout, h->arch);
            printf(",\"speed\":%u,\"address\":", h->speed);
            wire_json_str(stdout, ap);
            printf(",\"state\":");
            wire_json_str(stdout, h->state);
            print_load_json(h);
            printf("}");
        } else {
            printf("%24s %8x %8s %7u  %-21s %s\n", h->name, h->tid, h->arch, h->speed, ap,
                   h->state);
        }
    }
    if (v->json)
        printf("]}\n");
    else
        print_load_table(rows, n);
    free(rows);
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_status(struct vmctl *v, int argc, char **argv)
{
    int first = 0, rc, status;
    unsigned char *body;
    size_t len;
    if ((rc = simple_opts(v, argc, argv,
                          "usage: vmctl status [--json]\n"
                          "  Say whether a VM runs in LIQUIDVM_HOME, and its master and size.\n"
                          "  Exit status 0 if it runs, 1 if not.\n", &first)))
        return rc < 0 ? VMCTL_EXIT_OK : rc;
    if (first)
        return vmctl_usage_error("status", "unexpected argument %s", argv[first]);
    rc = vmctl_call(v, WIRE_T_REQ_STATUS, NULL, CTL_TIMEOUT_MS, &body, &len, &status);
    /* A socket left by a dead daemon is no VM either. */
    if (rc == WIRE_ENOVM || (rc == -ECONNREFUSED && vmctl_connect_why(rc))) {
        if (v->json) {
            printf("{\"running\":false,\"home\":");
            wire_json_str(stdout, v->home);
            printf("}\n");
        } else {
            printf("no virtual machine is running in %s\n", v->home);
        }
        return VMCTL_EXIT_FAIL;
    }
    if (rc != 0 || status != 0) {
        free(body);
        return vmctl_fail(v, rc ? rc : status, "status");
    }
    struct wire_rbuf r;
    char name[256], master[256], version[32], addr[64], home[4096];
    uint32_t tid, is_master, nhosts, pid, port;
    uint64_t up;
    wire_rbuf_init(&r, body, len);
    if (wire_get_str(&r, name, sizeof(name)) || wire_get_u32(&r, &tid) ||
        wire_get_u32(&r, &is_master) || wire_get_str(&r, master, sizeof(master)) ||
        wire_get_u32(&r, &nhosts) || wire_get_u64(&r, &up) || wire_get_u32(&r, &pid) ||
        wire_get_str(&r, version, sizeof(version)) || wire_get_str(&r, addr, sizeof(addr)) ||
        wire_get_u32(&r, &port) || wire_get_str(&r, home, sizeof(home))) {
        free(body);
        return vmctl_fail(v, WIRE_EFRAME, "status");
    }
    free(body);
    if (v->json) {
        printf("{\"running\":true,\"daemon\":");
        wire_json_str(stdout, name);
        printf(",\"tid\":%u,\"master\":", tid);
        wire_json_str(stdout, master);
        printf(",\"is_master\":%s,\"hosts\":%u,\"uptime_ms\":%llu,\"pid\":%u,\"version\":",
               is_master ? "true" : "false", nhosts, (unsigned long long)up, pid);
        wire_json_str(stdout, version);
        printf(",\"address\":\"%s:%u\",\"home\":", addr, port);
        wire_json_str(stdout, home);
        printf("}\n");
    } else {
        printf("virtual machine running: master %s, %u host%s; this daemon %s (t%x) at %s:%u, "
               "pid %u, up %.1f s, vmd %s, home %s\n", master, nhosts, nhosts == 1 ? "" : "s",
               name, tid, addr, port, pid, (double)up / 1000.0, version, home);
    }
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_halt(struct vmctl *v, int argc, char **argv)
{
    int first = 0, rc, status = 0;
    unsigned char *body = NULL;
    size_t len = 0;
    if ((rc = simple_opts(v, argc, argv,
                          "usage: vmctl halt [--json]\n"
                          "  Stop every daemon of the VM (and their tasks).\n", &first)))
        return rc < 0 ? VMCTL_EXIT_OK : rc;
    if (first)
        return vmctl_usage_error("halt", "unexpected argument %s", argv[first]);
    int fd = vmctl_connect(v);
    if (fd < 0)
        return vmctl_fail(v, fd, "halt");
    rc = vmctl_request(fd, WIRE_T_REQ_HALT, NULL, CTL_TIMEOUT_MS, &body, &len, &status);
    /* The daemon we asked may go before it can answer (a relayed halt):
     * its socket closing is the answer. */
    if (rc == -ECONNRESET)
        rc = 0;
    uint32_t stragglers = 0;
    if (rc == 0 && body && len >= 4) {
        struct wire_rbuf r;
        wire_rbuf_init(&r, body, len);
        wire_get_u32(&r, &stragglers);
    }
    free(body);
    if (rc == 0 && status == 0) {
        /* Wait for the daemon to close the socket: it has stopped then. */
        unsigned char b;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        for (int i = 0; i < 500 && read(fd, &b, 1) > 0; i++)
            nanosleep(&ts, NULL);
    }
    close(fd);
    if (rc != 0 || status != 0)
        return vmctl_fail(v, rc ? rc : status, "halt");
    if (v->json)
        printf("{\"ok\":true,\"halted\":true,\"unconfirmed\":%u}\n", stragglers);
    else if (stragglers)
        printf("halted; %u daemon%s did not confirm\n", stragglers, stragglers == 1 ? "" : "s");
    else
        printf("halted\n");
    return stragglers ? VMCTL_EXIT_FAIL : VMCTL_EXIT_OK;
}

int
vmctl_cmd_ca(struct vmctl *v, int argc, char **argv)
{
    char dir[4200], err[512];
    int force = 0, init = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "init") == 0)
            init = 1;
        else if (strcmp(argv[i], "--force") == 0)
            force = 1;
        else if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: vmctl ca init [--force] [--json]\n"
                   "  Create the cluster CA in LIQUIDVM_HOME/certs (ca.pem, ca.key).\n");
            return VMCTL_EXIT_OK;
        } else
            return vmctl_usage_error("ca", "unexpected argument %s", argv[i]);
    }
    if (!init)
        return vmctl_usage_error("ca", "expected `vmctl ca init`");
    certs_dir(v, dir, sizeof(dir));
    mkdir_parents(v->home);
    int rc = vmctl_ca_init(dir, force, err, sizeof(err));
    if (rc != 0)
        return fail(v, rc, "ca: init: %s", rc == -EEXIST ? "a CA exists already (--force replaces "
                                                         "it and invalidates every certificate)"
                                                       : err);
    if (v->json) {
        printf("{\"ok\":true,\"ca\":");
        wire_json_str(stdout, dir);
        printf("}\n");
    } else {
        printf("cluster CA created in %s\n", dir);
    }
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_cert(struct vmctl *v, int argc, char **argv)
{
    char dir[4200], err[512];
    int force = 0, issue = 0;
    const char *host = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "issue") == 0 && !issue)
            issue = 1;
        else if (strcmp(argv[i], "--force") == 0)
            force = 1;
        else if (strcmp(argv[i], "--json") == 0)
            v->json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: vmctl cert issue HOST [--force] [--json]\n"
                   "  Issue HOST.pem and HOST.key in LIQUIDVM_HOME/certs, signed by the CA.\n");
            return VMCTL_EXIT_OK;
        } else if (issue && host == NULL && argv[i][0] != '-')
            host = argv[i];
        else
            return vmctl_usage_error("cert", "unexpected argument %s", argv[i]);
    }
    if (!issue || host == NULL)
        return vmctl_usage_error("cert", "expected `vmctl cert issue HOST`");
    if (!vmctl_host_name_ok(host))
        return vmctl_usage_error("cert", "issue %s: not a valid host name", host);
    certs_dir(v, dir, sizeof(dir));
    int rc = vmctl_cert_issue(dir, host, force, err, sizeof(err));
    if (rc != 0)
        return fail(v, rc, "cert: issue: %s", err);
    if (v->json) {
        printf("{\"ok\":true,\"host\":");
        wire_json_str(stdout, host);
        printf(",\"dir\":");
        wire_json_str(stdout, dir);
        printf("}\n");
    } else {
        printf("certificate for %s issued in %s\n", host, dir);
    }
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_version(struct vmctl *v, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: vmctl version [--json]\n"
                   "  The version of LiquidVM and of PVM it is compatible with.\n");
            return VMCTL_EXIT_OK;
        } else {
            return vmctl_usage_error("version", "unexpected argument %s", argv[i]);
        }
    }
    if (v->json)
        printf("{\"version\":\"%s\",\"pvm\":\"3.4.6\"}\n", LIQUIDVM_VERSION);
    else
        printf("LiquidVM %s (PVM 3.4.6 compatible)\n", LIQUIDVM_VERSION);
    return VMCTL_EXIT_OK;
}
