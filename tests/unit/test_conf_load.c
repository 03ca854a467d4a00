/*
 * test_conf_load.c - conf/conf_load.c: defaults, the example vmd.conf, every
 * kind of error with its exact "file:line: key: ..." line, overlaying, and
 * conf_expand.
 *
 * Each test writes its files into one mkdtemp directory made by the group
 * fixture.  Expected error lines are written with "$F" for the file's path.
 * Run from the repository root, or set CONF_EXAMPLE to the example file.
 */
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "wire.h"

static char tmpdir[PATH_MAX];
static char conf_path[PATH_MAX + 32];

static int
group_setup(void **state)
{
    const char *base = getenv("TMPDIR");

    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "%s/test_conf_load.XXXXXX",
             base != NULL && *base != '\0' ? base : "/tmp");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    chmod(path, 0700);
    return remove(path);
}

static int
group_teardown(void **state)
{
    (void)state;
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write len bytes of text to tmpdir/name; returns its path (static buffer). */
static const char *
write_file_n(const char *name, const char *text, size_t len)
{
    FILE *f;

    snprintf(conf_path, sizeof(conf_path), "%s/%s", tmpdir, name);
    f = fopen(conf_path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return conf_path;
}

static const char *
write_file(const char *name, const char *text)
{
    return write_file_n(name, text, strlen(text));
}

/* conf_defaults, then load text from a file; the caller frees c. */
static int
load_text(const char *text, struct conf *c, struct conf_diag *d)
{
    conf_defaults(c);
    return conf_load(write_file("vmd.conf", text), c, d);
}

/* The expected diag text: tmpl with every "$F" replaced by the last path. */
static void
assert_diag(const struct conf_diag *d, const char *tmpl)
{
    char want[CONF_DIAG_MAX * 2];
    size_t o = 0, plen = strlen(conf_path);
    const char *p;

    for (p = tmpl; *p != '\0'; p++) {
        if (p[0] == '$' && p[1] == 'F') {
            assert_true(o + plen < sizeof(want));
            memcpy(want + o, conf_path, plen);
            o += plen;
            p++;
        } else {
            assert_true(o + 1 < sizeof(want));
            want[o++] = *p;
        }
    }
    want[o] = '\0';
    assert_string_equal(d->text, want);
}

/* One bad file: exactly one error, WIRE_ECONF, and *c left as it was. */
static void
assert_one_error(const char *text, const char *line)
{
    struct conf c;
    struct conf_diag d;

    assert_int_equal(load_text(text, &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, 1);
    assert_diag(&d, line);
    assert_string_equal(c.listen_address, "auto");
    assert_int_equal(c.listen_port, 0);
    assert_int_equal(c.speed, 1000);
    conf_free(&c);
}

static void
assert_is_default(const struct conf *c)
{
    assert_string_equal(c->listen_address, "auto");
    assert_int_equal(c->listen_port, 0);
    assert_string_equal(c->tls_ca, "certs/ca.pem");
    assert_string_equal(c->tls_cert, "certs/%h.pem");
    assert_string_equal(c->tls_key, "certs/%h.key");
    assert_true(c->heartbeat == 1.0);
    assert_true(c->host_timeout == 5.0);
    assert_true(c->start_timeout == 30.0);
    assert_true(c->load_interval == 1.0);
    assert_true(c->quota_interval == 0.05);
    assert_int_equal(c->spawn_path_len, 2);
    assert_string_equal(c->spawn_path[0], "$HOME/pvm3/bin/$PVM_ARCH");
    assert_string_equal(c->spawn_path[1], "$PVM_ROOT/bin/$PVM_ARCH");
    assert_null(c->spawn_path[2]);
    assert_string_equal(c->hoststart, "ssh -o BatchMode=yes %h %v");
    assert_int_equal(c->log_level, CONF_LOG_INFO);
    assert_string_equal(c->log_file, "logs/%h.log");
    assert_int_equal(c->speed, 1000);
    assert_true(c->max_message == 64ULL * 1024 * 1024);
    assert_true(c->max_tasks == 4096);
    assert_true(c->max_peer_queue == 256ULL * 1024 * 1024);
    assert_true(c->max_handshakes == 64);
    assert_true(c->max_handshakes_per_address == 16);
    assert_true(c->cache_bytes == 0);
    assert_true(c->llc_bytes == 0);
}

static void
test_conf_defaults_sets_every_field(void **state)
{
    struct conf c;

    (void)state;
    memset(&c, 0xa5, sizeof(c));
    conf_defaults(&c);
    assert_is_default(&c);
    conf_free(&c);
    assert_null(c.listen_address);
    assert_int_equal(c.spawn_path_len, 0);
    /* conf_free twice is harmless: it leaves NULLs behind. */
    conf_free(&c);
}

/* The example documents the defaults, so loading it must change nothing. */
static void
test_conf_example_loads_cleanly_and_matches_defaults(void **state)
{
    const char *path = getenv("CONF_EXAMPLE");
    struct conf c;
    struct conf_diag d;

    (void)state;
    if (path == NULL || *path == '\0')
        path = "conf/vmd.conf";
    if (access(path, R_OK) != 0) {
        print_message("cannot read %s: run from the repository root or set CONF_EXAMPLE\n",
                      path);
        fail();
    }
    conf_defaults(&c);
    assert_int_equal(conf_load(path, &c, &d), 0);
    assert_int_equal(d.nerrors, 0);
    assert_string_equal(d.text, "");
    assert_is_default(&c);
    conf_free(&c);
}

static void
test_conf_load_reads_every_key(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("listen = { address = \"10.1.2.3\"; port = 7000; };\n"
                               "tls = { ca = \"/etc/lvm/ca.pem\"; cert = \"c/%h.crt\";"
                               " key = \"k/%h.key\"; };\n"
                               "heartbeat = 0.25; host_timeout = 2; start_timeout = 10L;\n"
                               "spawn_path = ( \"/opt/bin\" );\n"
                               "hoststart = \"ip netns exec %h %v --master %m 100%%\";\n"
                               "log = { level = \"debug\"; file = \"/var/log/vmd-%h.log\"; };\n"
                               "speed = 2500;\n"
                               "limits = { max_message = 1073741824; max_tasks = 262143;"
                               " max_peer_queue = 0x200000000; max_handshakes = 500;"
                               " max_handshakes_per_address = 3; };\n"
                               "cache_bytes = 33554432;\n"
                               "llc_bytes = 16777216;\n",
                               &c, &d),
                     0);
    assert_int_equal(d.nerrors, 0);
    assert_string_equal(c.listen_address, "10.1.2.3");
    assert_int_equal(c.listen_port, 7000);
    assert_string_equal(c.tls_ca, "/etc/lvm/ca.pem");
    assert_string_equal(c.tls_cert, "c/%h.crt");
    assert_string_equal(c.tls_key, "k/%h.key");
    assert_true(c.heartbeat == 0.25);
    assert_true(c.host_timeout == 2.0);
    assert_true(c.start_timeout == 10.0);
    assert_int_equal(c.spawn_path_len, 1);
    assert_string_equal(c.spawn_path[0], "/opt/bin");
    assert_null(c.spawn_path[1]);
    assert_string_equal(c.hoststart, "ip netns exec %h %v --master %m 100%%");
    assert_int_equal(c.log_level, CONF_LOG_DEBUG);
    assert_string_equal(c.log_file, "/var/log/vmd-%h.log");
    assert_int_equal(c.speed, 2500);
    assert_true(c.max_message == 1073741824ULL);
    assert_true(c.max_tasks == 262143);
    assert_true(c.max_peer_queue == 0x200000000ULL);
    assert_true(c.max_handshakes == 500);
    assert_true(c.max_handshakes_per_address == 3);
    assert_true(c.cache_bytes == 33554432);
    assert_true(c.llc_bytes == 16777216);
    conf_free(&c);
}

static void
test_conf_load_overlay_keeps_unspecified_defaults(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("listen = { port = 4000; };\nspeed = 7;\n", &c, &d), 0);
    assert_int_equal(c.listen_port, 4000);
    assert_int_equal(c.speed, 7);
    assert_string_equal(c.listen_address, "auto");
    assert_string_equal(c.tls_ca, "certs/ca.pem");
    assert_int_equal(c.spawn_path_len, 2);
    assert_true(c.host_timeout == 5.0);
    assert_true(c.max_peer_queue == 256ULL * 1024 * 1024);

    /* A second file overlays the first: port stays, address changes. */
    assert_int_equal(conf_load(write_file("second.conf", "listen = { address = \"127.0.0.1\"; };\n"
                                          "spawn_path = [ \"/a\", \"/b\", \"/c\" ];\n"),
                               &c, &d),
                     0);
    assert_int_equal(c.listen_port, 4000);
    assert_int_equal(c.speed, 7);
    assert_string_equal(c.listen_address, "127.0.0.1");
    assert_int_equal(c.spawn_path_len, 3);
    assert_string_equal(c.spawn_path[2], "/c");
    conf_free(&c);
}

static void
test_conf_load_empty_file_changes_nothing(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("", &c, &d), 0);
    assert_is_default(&c);
    conf_free(&c);
    assert_int_equal(load_text("# only a comment\n// and another\n/* and a block */\n", &c, &d),
                     0);
    assert_is_default(&c);
    conf_free(&c);
}

/*
 * libconfig 1.5 reads integer literals with atoi(): without the loader's
 * rescan, 5000000000 would silently become 705032704.
 */
static void
test_conf_load_reads_64bit_integers_without_suffix(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("limits = { max_peer_queue = 5000000000; };\n"
                               "cache_bytes = 9223372036854775807;\n",
                               &c, &d),
                     0);
    assert_true(c.max_peer_queue == 5000000000ULL);
    assert_true(c.cache_bytes == 9223372036854775807ULL);
    conf_free(&c);

    assert_int_equal(load_text("cache_bytes = 4294967296L;\n", &c, &d), 0);
    assert_true(c.cache_bytes == 4294967296ULL);
    conf_free(&c);

    assert_int_equal(load_text("cache_bytes = 0x100000000;\n", &c, &d), 0);
    assert_true(c.cache_bytes == 0x100000000ULL);
    conf_free(&c);

    /* Numbers inside strings and comments are left alone. */
    assert_int_equal(load_text("hoststart = \"run 5000000000 %v\"; # 5000000000\n", &c, &d), 0);
    assert_string_equal(c.hoststart, "run 5000000000 %v");
    conf_free(&c);
}

static void
test_conf_load_rejects_integers_beyond_64_bits(void **state)
{
    (void)state;
    assert_one_error("cache_bytes = 99999999999999999999;\n",
                     "$F:1: cache_bytes: expected an integer >= 0, got 1e+20\n");
    assert_one_error("\n\ncache_bytes = 0x10000000000000000;\n",
                     "$F:3: cache_bytes: expected an integer >= 0, got 1.84467e+19\n");
    assert_one_error("llc_bytes = -1;\n", "$F:1: llc_bytes: expected an integer >= 0, got -1\n");
    assert_one_error("speed = 3000000000;\n",
                     "$F:1: speed: expected an integer 1..1000000, got 3000000000\n");
}

static void
test_conf_load_accepts_int_and_float_seconds(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("heartbeat = 2; host_timeout = 7.5; start_timeout = 1e2;\n", &c, &d),
                     0);
    assert_true(c.heartbeat == 2.0);
    assert_true(c.host_timeout == 7.5);
    assert_true(c.start_timeout == 100.0);
    conf_free(&c);
    assert_int_equal(load_text("load_interval = 0.25;\n", &c, &d), 0);
    assert_true(c.load_interval == 0.25);
    conf_free(&c);
    assert_int_equal(load_text("load_interval = 0;\n", &c, &d), WIRE_ECONF);
    assert_non_null(strstr(d.text, "load_interval: expected a number of seconds > 0"));
    conf_free(&c);
    assert_int_equal(load_text("quota_interval = 0.2;\n", &c, &d), 0);
    assert_true(c.quota_interval == 0.2);
    conf_free(&c);
    assert_int_equal(load_text("quota_interval = -1;\n", &c, &d), WIRE_ECONF);
    assert_non_null(strstr(d.text, "quota_interval: expected a number of seconds > 0"));
    conf_free(&c);
}

static void
test_conf_load_reports_bad_listen(void **state)
{
    (void)state;
    assert_one_error("\n\nlisten = { port = 70000; };\n",
                     "$F:3: listen.port: expected an integer 0..65535, got 70000\n");
    assert_one_error("listen = { port = -1; };\n",
                     "$F:1: listen.port: expected an integer 0..65535, got -1\n");
    assert_one_error("listen = { port = \"80\"; };\n",
                     "$F:1: listen.port: expected an integer 0..65535, got \"80\"\n");
    assert_one_error("listen = { address = \"localhost\"; };\n",
                     "$F:1: listen.address: expected \"auto\" or an IPv4 address such as \"0.0.0.0\", got \"localhost\"\n");
    assert_one_error("listen = { address = \"::1\"; };\n",
                     "$F:1: listen.address: expected \"auto\" or an IPv4 address such as \"0.0.0.0\", "
                     "got \"::1\"\n");
    assert_one_error("listen = { address = 127; };\n",
                     "$F:1: listen.address: expected \"auto\" or an IPv4 address such as \"0.0.0.0\", got 127\n");
    assert_one_error("listen = 7000;\n",
                     "$F:1: listen: expected a group { address = ...; port = ...; }, got 7000\n");
}

static void
test_conf_load_reports_bad_tls_paths(void **state)
{
    (void)state;
    assert_one_error("tls = { ca = \"\"; };\n", "$F:1: tls.ca: expected a file name, got \"\"\n");
    assert_one_error("tls = {\n  cert = true;\n};\n",
                     "$F:2: tls.cert: expected a file name, got true\n");
    assert_one_error("tls = { key = \"certs/%x.key\"; };\n",
                     "$F:1: tls.key: unknown escape %x; expected %h or %%\n");
    assert_one_error("tls = { key = \"certs/%v.key\"; };\n",
                     "$F:1: tls.key: unknown escape %v; expected %h or %%\n");
    assert_one_error("tls = { key = \"certs/key%\"; };\n",
                     "$F:1: tls.key: a lone % ends the string; write %% for a %\n");
    assert_one_error("tls = [ \"a\" ];\n",
                     "$F:1: tls: expected a group { ca = ...; cert = ...; key = ...; }, "
                     "got an array\n");
}

static void
test_conf_load_reports_bad_seconds(void **state)
{
    (void)state;
    assert_one_error("\n\n\n\n\n\nheartbeat = \"fast\";\n",
                     "$F:7: heartbeat: expected a number of seconds > 0, got \"fast\"\n");
    assert_one_error("heartbeat = 0;\n",
                     "$F:1: heartbeat: expected a number of seconds > 0, got 0\n");
    assert_one_error("start_timeout = -2.5;\n",
                     "$F:1: start_timeout: expected a number of seconds > 0, got -2.5\n");
    assert_one_error("host_timeout = 0.0;\n",
                     "$F:1: host_timeout: expected a number of seconds > 0, got 0.0\n");
    assert_one_error("heartbeat = 0.0001;\n",
                     "$F:1: heartbeat: expected a number of seconds from 0.001 to 86400, "
                     "got 0.0001\n");
    assert_one_error("start_timeout = 1e400;\n",
                     "$F:1: start_timeout: expected a number of seconds from 0.001 to 86400, "
                     "got inf\n");
    assert_one_error("heartbeat = [ 1 ];\n",
                     "$F:1: heartbeat: expected a number of seconds > 0, got an array\n");
}

static void
test_conf_load_requires_host_timeout_above_heartbeat(void **state)
{
    (void)state;
    assert_one_error("heartbeat = 2.0;\nhost_timeout = 1.5;\n",
                     "$F:2: host_timeout: expected more than heartbeat (2 s), got 1.5\n");
    assert_one_error("heartbeat = 2.0;\nhost_timeout = 2;\n",
                     "$F:2: host_timeout: expected more than heartbeat (2 s), got 2\n");
    /* Only heartbeat in the file: the error is at its line. */
    assert_one_error("\nheartbeat = 10;\n",
                     "$F:2: heartbeat: expected less than host_timeout (5 s), got 10\n");
    assert_one_error("host_timeout = 0.5;\n",
                     "$F:1: host_timeout: expected more than heartbeat (1 s), got 0.5\n");
}

/* A key that is wrong by itself does not also fail the rule it takes part in. */
static void
test_conf_load_skips_cross_check_when_a_key_is_bad(void **state)
{
    (void)state;
    assert_one_error("heartbeat = 10;\nhost_timeout = \"x\";\n",
                     "$F:2: host_timeout: expected a number of seconds > 0, got \"x\"\n");
    assert_one_error("limits = { max_message = 0; max_peer_queue = 10; };\n",
                     "$F:1: limits.max_message: expected an integer 1048576 (1 MiB)..1073741824 "
                     "(1 GiB), got 0\n");
}

static void
test_conf_load_reports_bad_spawn_path(void **state)
{
    static const char many[] =
        "spawn_path = [ \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"9\", \"10\","
        " \"11\", \"12\", \"13\", \"14\", \"15\", \"16\", \"17\", \"18\", \"19\", \"20\", \"21\","
        " \"22\", \"23\", \"24\", \"25\", \"26\", \"27\", \"28\", \"29\", \"30\", \"31\", \"32\","
        " \"33\" ];\n";
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_one_error("spawn_path = \"/bin\";\n",
                     "$F:1: spawn_path: expected a list of 1..32 directories [ \"...\", ... ], "
                     "got \"/bin\"\n");
    assert_one_error("spawn_path = [ ];\n",
                     "$F:1: spawn_path: expected a list of 1..32 directories [ \"...\", ... ], "
                     "got 0\n");
    assert_one_error(many, "$F:1: spawn_path: expected a list of 1..32 directories "
                           "[ \"...\", ... ], got 33\n");
    assert_one_error("spawn_path = ( \"/bin\",\n  42 );\n",
                     "$F:2: spawn_path[1]: expected a directory, got 42\n");
    assert_one_error("spawn_path = [ \"/bin\",\n  \"\" ];\n",
                     "$F:2: spawn_path[1]: expected a directory, got \"\"\n");

    /* Exactly CONF_MAX_SPAWN_PATH is fine. */
    assert_int_equal(load_text("spawn_path = [ \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\","
                               " \"8\", \"9\", \"10\", \"11\", \"12\", \"13\", \"14\", \"15\","
                               " \"16\", \"17\", \"18\", \"19\", \"20\", \"21\", \"22\", \"23\","
                               " \"24\", \"25\", \"26\", \"27\", \"28\", \"29\", \"30\", \"31\","
                               " \"32\" ];\n",
                               &c, &d),
                     0);
    assert_int_equal(c.spawn_path_len, CONF_MAX_SPAWN_PATH);
    assert_string_equal(c.spawn_path[31], "32");
    conf_free(&c);
}

static void
test_conf_load_reports_bad_hoststart(void **state)
{
    (void)state;
    assert_one_error("hoststart = \"ssh %h %x\";\n",
                     "$F:1: hoststart: unknown escape %x; expected %h, %v, %m or %%\n");
    assert_one_error("hoststart = \"ssh %h %v %\";\n",
                     "$F:1: hoststart: a lone % ends the string; write %% for a %\n");
    assert_one_error("hoststart = \"\";\n",
                     "$F:1: hoststart: expected a command line, got \"\"\n");
    assert_one_error("hoststart = [ \"ssh\", \"%h\" ];\n",
                     "$F:1: hoststart: expected a command line, got an array\n");
}

static void
test_conf_load_reports_bad_log(void **state)
{
    (void)state;
    assert_one_error("log = { level = \"loud\"; };\n",
                     "$F:1: log.level: expected one of err, warn, info, debug, got \"loud\"\n");
    assert_one_error("log = { level = \"INFO\"; };\n",
                     "$F:1: log.level: expected one of err, warn, info, debug, got \"INFO\"\n");
    assert_one_error("log = { level = 3; };\n",
                     "$F:1: log.level: expected one of err, warn, info, debug, got 3\n");
    assert_one_error("log = { file = 5; };\n", "$F:1: log.file: expected a file name, got 5\n");
    assert_one_error("log = \"debug\";\n",
                     "$F:1: log: expected a group { level = ...; file = ...; }, got \"debug\"\n");
}

/*
 * Every ranged key at both edges of its range: the edge itself is taken
 * (and read back), one step beyond it is refused with the key's own
 * message.  A row's err is NULL for "accepted", "" for "refused, whatever
 * the message" (beyond 64 bits libconfig itself refuses), else a piece of
 * the expected message.  Where a cross-check forbids an edge on its own
 * (heartbeat < host_timeout, max_message <= max_peer_queue), the row adds
 * the other key, or expects the cross-check's message, which shows the
 * range check let the edge through.
 */
#define SECS "expected a number of seconds from 0.001 to 86400"
static const struct conf_edge {
    const char *text;
    const char *err;
    size_t off;
    char kind;                  /* 'i' int, 'u' uint64_t, 'd' double */
    double value;
    uint64_t uvalue;
} conf_edges[] = {
#define OFF(f) offsetof(struct conf, f)
    { "listen = { port = 0; };", NULL, OFF(listen_port), 'i', 0, 0 },
    { "listen = { port = -1; };", "listen.port: expected an integer 0..65535", 0, 0, 0, 0 },
    { "listen = { port = 65535; };", NULL, OFF(listen_port), 'i', 65535, 0 },
    { "listen = { port = 65536; };", "listen.port: expected an integer 0..65535", 0, 0, 0, 0 },
    { "speed = 1;", NULL, OFF(speed), 'i', 1, 0 },
    { "speed = 0;", "speed: expected an integer 1..1000000", 0, 0, 0, 0 },
    { "speed = 1000000;", NULL, OFF(speed), 'i', 1000000, 0 },
    { "speed = 1000001;", "speed: expected an integer 1..1000000", 0, 0, 0, 0 },
    { "limits = { max_message = 1048576; };", NULL, OFF(max_message), 'u', 0, 1048576 },
    { "limits = { max_message = 1048575; };", "limits.max_message: expected an integer 1048576", 0,
      0, 0, 0 },
    { "limits = { max_message = 0; };", "limits.max_message: expected an integer 1048576", 0, 0,
      0, 0 },
    { "limits = { max_message = 1073741824; max_peer_queue = 1073741824; };", NULL,
      OFF(max_message), 'u', 0, 1073741824ULL },
    { "limits = { max_message = 1073741825; max_peer_queue = 2000000000; };",
      "limits.max_message: expected an integer 1048576 (1 MiB)..1073741824", 0, 0, 0, 0 },
    { "limits = { max_tasks = 1; };", NULL, OFF(max_tasks), 'u', 0, 1 },
    { "limits = { max_tasks = 0; };", "limits.max_tasks: expected an integer 1..262143", 0, 0, 0,
      0 },
    { "limits = { max_tasks = 262143; };", NULL, OFF(max_tasks), 'u', 0, 262143 },
    { "limits = { max_tasks = 262144; };", "limits.max_tasks: expected an integer 1..262143", 0,
      0, 0, 0 },
    { "limits = { max_message = 1048576; max_peer_queue = 1048576; };", NULL,
      OFF(max_peer_queue), 'u', 0, 1048576 },
    { "limits = { max_message = 1048576; max_peer_queue = 0; };",
      "limits.max_peer_queue: expected an integer > 0", 0, 0, 0, 0 },
    { "limits = { max_peer_queue = 9223372036854775807; };", NULL, OFF(max_peer_queue), 'u', 0,
      9223372036854775807ULL },
    { "limits = { max_peer_queue = 9223372036854775808; };", "", 0, 0, 0, 0 },
    { "cache_bytes = 0;", NULL, OFF(cache_bytes), 'u', 0, 0 },
    { "cache_bytes = -1;", "cache_bytes: expected an integer >= 0", 0, 0, 0, 0 },
    { "cache_bytes = 9223372036854775807;", NULL, OFF(cache_bytes), 'u', 0,
      9223372036854775807ULL },
    { "cache_bytes = 9223372036854775808;", "", 0, 0, 0, 0 },
    { "llc_bytes = 0;", NULL, OFF(llc_bytes), 'u', 0, 0 },
    { "llc_bytes = -1;", "llc_bytes: expected an integer >= 0", 0, 0, 0, 0 },
    { "llc_bytes = 9223372036854775807;", NULL, OFF(llc_bytes), 'u', 0, 9223372036854775807ULL },
    { "llc_bytes = 9223372036854775808;", "", 0, 0, 0, 0 },
    { "heartbeat = 0.001;", NULL, OFF(heartbeat), 'd', 0.001, 0 },
    { "heartbeat = 0.0009;", "heartbeat: " SECS, 0, 0, 0, 0 },
    { "heartbeat = 86400; host_timeout = 86400;", "host_timeout: expected more than heartbeat",
      0, 0, 0, 0 },
    { "heartbeat = 86400.001; host_timeout = 86400;", "heartbeat: " SECS, 0, 0, 0, 0 },
    { "heartbeat = 0.001; host_timeout = 0.001;", "host_timeout: expected more than heartbeat",
      0, 0, 0, 0 },
    { "host_timeout = 0.0009;", "host_timeout: " SECS, 0, 0, 0, 0 },
    { "host_timeout = 86400;", NULL, OFF(host_timeout), 'd', 86400, 0 },
    { "host_timeout = 86400.001;", "host_timeout: " SECS, 0, 0, 0, 0 },
    { "start_timeout = 0.001;", NULL, OFF(start_timeout), 'd', 0.001, 0 },
    { "start_timeout = 0.0009;", "start_timeout: " SECS, 0, 0, 0, 0 },
    { "start_timeout = 86400;", NULL, OFF(start_timeout), 'd', 86400, 0 },
    { "start_timeout = 86400.001;", "start_timeout: " SECS, 0, 0, 0, 0 },
    { "load_interval = 0.001;", NULL, OFF(load_interval), 'd', 0.001, 0 },
    { "load_interval = 0.0009;", "load_interval: " SECS, 0, 0, 0, 0 },
    { "load_interval = 86400;", NULL, OFF(load_interval), 'd', 86400, 0 },
    { "load_interval = 86400.001;", "load_interval: " SECS, 0, 0, 0, 0 },
    { "quota_interval = 0.001;", NULL, OFF(quota_interval), 'd', 0.001, 0 },
    { "quota_interval = 0.0009;", "quota_interval: " SECS, 0, 0, 0, 0 },
    { "quota_interval = 86400;", NULL, OFF(quota_interval), 'd', 86400, 0 },
    { "quota_interval = 86400.001;", "quota_interval: " SECS, 0, 0, 0, 0 },
#undef OFF
};
#undef SECS

static void
test_conf_load_every_range_at_both_edges(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(conf_edges) / sizeof(conf_edges[0]); i++) {
        const struct conf_edge *e = &conf_edges[i];
        struct conf c;
        struct conf_diag d;
        int rc = load_text(e->text, &c, &d);

        if (e->err == NULL) {
            const char *field = (const char *)&c + e->off;

            if (rc != 0)
                fail_msg("\"%s\": refused: %s", e->text, d.text);
            if ((e->kind == 'i' && *(const int *)(const void *)field != (int)e->value) ||
                (e->kind == 'u' && *(const uint64_t *)(const void *)field != e->uvalue) ||
                (e->kind == 'd' && *(const double *)(const void *)field != e->value))
                fail_msg("\"%s\": accepted but not stored", e->text);
        } else if (rc == 0 || d.nerrors != 1 || strstr(d.text, e->err) == NULL) {
            fail_msg("\"%s\": rc %d, %d errors, expected one with \"%s\", got: %s", e->text, rc,
                     d.nerrors, e->err, d.text);
        }
        conf_free(&c);
    }
}

static void
test_conf_load_reports_bad_speed(void **state)
{
    (void)state;
    assert_one_error("speed = 0;\n", "$F:1: speed: expected an integer 1..1000000, got 0\n");
    assert_one_error("speed = 1000001;\n",
                     "$F:1: speed: expected an integer 1..1000000, got 1000001\n");
    assert_one_error("speed = 1000.0;\n",
                     "$F:1: speed: expected an integer 1..1000000, got 1000.0\n");
    assert_one_error("speed = false;\n", "$F:1: speed: expected an integer 1..1000000, got false\n");
}

static void
test_conf_load_reports_bad_limits(void **state)
{
    (void)state;
    assert_one_error("limits = { max_message = 1073741825; };\n",
                     "$F:1: limits.max_message: expected an integer 1048576 (1 MiB)..1073741824 "
                     "(1 GiB), got 1073741825\n");
    assert_one_error("limits = { max_tasks = 0; };\n",
                     "$F:1: limits.max_tasks: expected an integer 1..262143, got 0\n");
    assert_one_error("limits = { max_tasks = 262144; };\n",
                     "$F:1: limits.max_tasks: expected an integer 1..262143, got 262144\n");
    assert_one_error("limits = { max_peer_queue = -5; };\n",
                     "$F:1: limits.max_peer_queue: expected an integer > 0, got -5\n");
    assert_one_error("limits = { max_peer_queue = 1.5; };\n",
                     "$F:1: limits.max_peer_queue: expected an integer > 0, got 1.5\n");
    assert_one_error("limits = {\n  max_peer_queue = 1000;\n};\n",
                     "$F:2: limits.max_peer_queue: expected at least limits.max_message "
                     "(67108864), got 1000\n");
    /* Only max_message in the file: the error is at its line. */
    assert_one_error("limits = {\n  max_message = 1073741824;\n};\n",
                     "$F:2: limits.max_message: expected at most limits.max_peer_queue "
                     "(268435456), got 1073741824\n");
    assert_one_error("cache_bytes = -1;\n", "$F:1: cache_bytes: expected an integer >= 0, got -1\n");
    assert_one_error("limits = 5;\n",
                     "$F:1: limits: expected a group { max_message = ...; max_tasks = ...; "
                     "max_peer_queue = ...; }, got 5\n");
}

static void
test_conf_load_reports_unknown_keys_at_every_level(void **state)
{
    (void)state;
    assert_one_error("speed = 10;\n\n\n\n\n\n\n\n\n\n\ncolour = \"red\";\n",
                     "$F:12: colour: unknown key\n");
    assert_one_error("Heartbeat = 1.0;\n", "$F:1: Heartbeat: unknown key\n");
    assert_one_error("listen = {\n  prot = 80;\n};\n", "$F:2: listen.prot: unknown key\n");
    assert_one_error("tls = { crt = \"x\"; };\n", "$F:1: tls.crt: unknown key\n");
    assert_one_error("log = { levle = \"info\"; };\n", "$F:1: log.levle: unknown key\n");
    assert_one_error("limits = { max_msg = 5; };\n", "$F:1: limits.max_msg: unknown key\n");
    assert_one_error("listen = { tls = { ca = \"x\"; }; };\n", "$F:1: listen.tls: unknown key\n");
}

static void
test_conf_load_reports_every_error_in_one_run(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("listen = { address = \"0.0.0.0\"; port = 70000; };\n"
                               "heartbeat = \"fast\";\n"
                               "colour = 3;\n"
                               "speed = 10;\n"
                               "log = { level = \"loud\"; file = \"\"; };\n"
                               "limits = { max_tasks = 0; bogus = 1; };\n"
                               "hoststart = \"%q\";\n",
                               &c, &d),
                     WIRE_ECONF);
    assert_int_equal(d.nerrors, 8);
    assert_diag(&d, "$F:1: listen.port: expected an integer 0..65535, got 70000\n"
                    "$F:2: heartbeat: expected a number of seconds > 0, got \"fast\"\n"
                    "$F:3: colour: unknown key\n"
                    "$F:5: log.level: expected one of err, warn, info, debug, got \"loud\"\n"
                    "$F:5: log.file: expected a file name, got \"\"\n"
                    "$F:6: limits.max_tasks: expected an integer 1..262143, got 0\n"
                    "$F:6: limits.bogus: unknown key\n"
                    "$F:7: hoststart: unknown escape %q; expected %h, %v, %m or %%\n");
    /* Nothing was applied, not even the valid speed = 10. */
    assert_is_default(&c);
    conf_free(&c);
}

static void
test_conf_load_reports_syntax_error(void **state)
{
    (void)state;
    assert_one_error("speed = 10;\nheartbeat = 1.0;\nlog = { level = \"info\"; };\nlisten = ;\n",
                     "$F:4: syntax error\n");
    assert_one_error("speed = = 10;\n", "$F:1: syntax error\n");
    assert_one_error("log = { level = \"info\";\n\n", "$F:3: syntax error\n");
}

/*
 * libconfig 1.5 silently ignores everything after an unterminated string or
 * comment that starts where a key is expected; the loader must not.
 */
static void
test_conf_load_reports_unterminated_string_and_comment(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_one_error("\n\"unterminated = 1;\n", "$F:2: syntax error: unterminated string\n");
    assert_one_error("speed = 1;\n\"junk\nheartbeat = 2;\n",
                     "$F:2: syntax error: unterminated string\n");
    assert_one_error("speed = 1;\nhoststart = \"abc\nheartbeat = 2;\n",
                     "$F:2: syntax error: unterminated string\n");
    assert_one_error("speed = 1;\n/* unterminated\nheartbeat = 2;\n",
                     "$F:2: syntax error: unterminated comment\n");
    /* What comes before is still checked. */
    assert_int_equal(load_text("speed = 0;\n/*\n", &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, 2);
    assert_diag(&d, "$F:2: syntax error: unterminated comment\n"
                    "$F:1: speed: expected an integer 1..1000000, got 0\n");
    conf_free(&c);
    /* Quotes and comment marks inside the other are fine. */
    assert_int_equal(load_text("hoststart = \"a /* b # c\" /* \" */; # \"\n", &c, &d), 0);
    assert_string_equal(c.hoststart, "a /* b # c");
    conf_free(&c);
    assert_one_error("log = { level = \"info\";\n\n", "$F:3: syntax error\n");
}

static void
test_conf_load_reports_duplicate_key(void **state)
{
    (void)state;
    assert_one_error("speed = 10;\nspeed = 20;\n", "$F:2: duplicate setting name\n");
}

static void
test_conf_load_rejects_include(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_one_error("speed = 5;\n  @include \"other.conf\"\n",
                     "$F:2: @include is not supported; put every key in one file\n");
    /* The rest of the file is still checked. */
    assert_int_equal(load_text("@include \"/tmp\"\nspeed = 0;\n", &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, 2);
    assert_diag(&d, "$F:1: @include is not supported; put every key in one file\n"
                    "$F:2: speed: expected an integer 1..1000000, got 0\n");
    conf_free(&c);
}

/* libconfig would stop at the NUL and ignore the rest of the file. */
static void
test_conf_load_rejects_nul_byte(void **state)
{
    static const char text[] = "speed = 5;\n\ncolour\0 = 1;\n";
    struct conf c;
    struct conf_diag d;

    (void)state;
    conf_defaults(&c);
    assert_int_equal(conf_load(write_file_n("nul.conf", text, sizeof(text) - 1), &c, &d),
                     WIRE_ECONF);
    assert_int_equal(d.nerrors, 1);
    assert_diag(&d, "$F:3: syntax error: NUL byte\n");
    assert_int_equal(c.speed, 1000);
    conf_free(&c);
}

static void
test_conf_load_missing_file_is_enoent(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    snprintf(conf_path, sizeof(conf_path), "%s/no-such.conf", tmpdir);
    conf_defaults(&c);
    assert_int_equal(conf_load(conf_path, &c, &d), -ENOENT);
    assert_int_equal(d.nerrors, 1);
    assert_diag(&d, "$F: cannot open: No such file or directory\n");
    assert_is_default(&c);
    conf_free(&c);
}

static void
test_conf_load_unreadable_file_is_eacces(void **state)
{
    struct conf c;
    struct conf_diag d;
    const char *path;
    pid_t pid;
    int status, rc, ok;

    (void)state;
    path = write_file("secret.conf", "speed = 5;\n");
    assert_int_equal(chmod(path, 0), 0);
    if (geteuid() != 0) {
        conf_defaults(&c);
        assert_int_equal(conf_load(path, &c, &d), -EACCES);
        assert_int_equal(d.nerrors, 1);
        assert_diag(&d, "$F: cannot open: Permission denied\n");
        conf_free(&c);
        return;
    }
    /* root reads everything: try as nobody, in a child, with the directory open to it. */
    assert_int_equal(chmod(tmpdir, 0711), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        conf_defaults(&c);
        rc = conf_load(path, &c, &d);
        ok = rc == -EACCES && d.nerrors == 1 && strstr(d.text, ": cannot open: Permission denied\n");
        conf_free(&c);
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(chmod(tmpdir, 0700), 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
        skip();
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* libconfig's scanner would call exit() on a directory. */
static void
test_conf_load_directory_is_eisdir(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    snprintf(conf_path, sizeof(conf_path), "%s", tmpdir);
    conf_defaults(&c);
    assert_int_equal(conf_load(conf_path, &c, &d), -EISDIR);
    assert_diag(&d, "$F: cannot read: Is a directory\n");
    conf_free(&c);
}

static void
test_conf_load_rejects_oversized_file(void **state)
{
    size_t n = 2 * 1024 * 1024;
    char *big = malloc(n);
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_non_null(big);
    memset(big, '\n', n);
    conf_defaults(&c);
    assert_int_equal(conf_load(write_file_n("big.conf", big, n), &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, 1);
    assert_diag(&d, "$F: file is larger than 1048576 bytes\n");
    conf_free(&c);
    free(big);
}

static void
test_conf_load_error_leaves_conf_unchanged(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    assert_int_equal(load_text("listen = { port = 4000; };\nspeed = 9;\n", &c, &d), 0);
    assert_int_equal(conf_load(write_file("bad.conf", "listen = { port = 5000; address = \"10.0.0.9\"; };\n"
                                          "spawn_path = [ \"/x\" ];\nspeed = 0;\n"),
                               &c, &d),
                     WIRE_ECONF);
    assert_int_equal(d.nerrors, 1);
    assert_int_equal(c.listen_port, 4000);
    assert_string_equal(c.listen_address, "auto");
    assert_int_equal(c.spawn_path_len, 2);
    assert_int_equal(c.speed, 9);
    conf_free(&c);
}

static void
test_conf_load_quotes_bad_strings_safely(void **state)
{
    (void)state;
    assert_one_error("log = { level = \"a\\\"b\\nc\\td\\\\e\\x01\"; };\n",
                     "$F:1: log.level: expected one of err, warn, info, debug, "
                     "got \"a\\\"b\\nc\\td\\\\e\\x01\"\n");
    assert_one_error("log = { level = \"0123456789012345678901234567890123456789XYZ\"; };\n",
                     "$F:1: log.level: expected one of err, warn, info, debug, "
                     "got \"0123456789012345678901234567890123456789...\"\n");
}

static void
test_conf_load_rejects_overlong_string(void **state)
{
    char text[8192];
    size_t n;

    (void)state;
    n = (size_t)snprintf(text, sizeof(text), "hoststart = \"");
    memset(text + n, 'a', 5000);
    n += 5000;
    snprintf(text + n, sizeof(text) - n, "\";\n");
    assert_one_error(text, "$F:1: hoststart: expected at most 4095 bytes, got a string of 5000\n");
}

/* Thousands of errors: diag stays bounded and says how many were left out. */
static void
test_conf_load_bounds_diag_with_many_errors(void **state)
{
    enum { NKEYS = 3000 };
    char *text = malloc(NKEYS * 32);
    size_t n = 0, len;
    struct conf c;
    struct conf_diag d;
    const char *last;
    int i, shown = 0, omitted = -1;

    (void)state;
    assert_non_null(text);
    for (i = 0; i < NKEYS; i++)
        n += (size_t)sprintf(text + n, "unknown_%d = %d;\n", i, i);
    memset(&d, 'x', sizeof(d));
    assert_int_equal(load_text(text, &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, NKEYS);
    len = strlen(d.text);
    assert_true(len < CONF_DIAG_MAX);
    assert_true(len > CONF_DIAG_MAX / 2);
    assert_int_equal(d.text[len - 1], '\n');
    for (i = 0; d.text[i] != '\0'; i++)
        shown += d.text[i] == '\n';
    /* The last line says how many more there were; together they add up. */
    for (last = d.text + len - 1; last > d.text && last[-1] != '\n'; last--)
        ;
    assert_int_equal(sscanf(last, "%d more errors omitted\n", &omitted), 1);
    assert_int_equal(shown - 1 + omitted, NKEYS);
    assert_non_null(strstr(d.text, ":1: unknown_0: unknown key\n"));
    conf_free(&c);
    free(text);
}

/* A very long key name cannot overrun a line or the buffer. */
static void
test_conf_load_bounds_long_key_names(void **state)
{
    char text[20000];
    struct conf c;
    struct conf_diag d;
    size_t len;

    (void)state;
    memset(text, 'k', 10000);
    snprintf(text + 10000, sizeof(text) - 10000, " = 1;\nlisten = { %.*s = 2; };\n", 5000,
             text);
    assert_int_equal(load_text(text, &c, &d), WIRE_ECONF);
    assert_int_equal(d.nerrors, 2);
    len = strlen(d.text);
    assert_true(len < CONF_DIAG_MAX);
    /* Both lines are cut, and say so. */
    assert_non_null(strstr(d.text, "kkk...: unknown key\n"));
    assert_non_null(strstr(d.text, "listen.kkk"));
    assert_int_equal(strstr(strstr(d.text, "kkk...: unknown key\n") + 1, "...: unknown key\n") !=
                         NULL,
                     1);
    conf_free(&c);
}

static void
test_conf_load_accepts_null_diag(void **state)
{
    struct conf c;

    (void)state;
    conf_defaults(&c);
    assert_int_equal(conf_load(write_file("n.conf", "speed = 0;\n"), &c, NULL), WIRE_ECONF);
    assert_int_equal(conf_load(write_file("n.conf", "speed = 3;\n"), &c, NULL), 0);
    assert_int_equal(c.speed, 3);
    conf_free(&c);
}

/* Run under ASan: every string replaced by a load must be freed. */
static void
test_conf_load_repeated_loads_do_not_leak(void **state)
{
    struct conf c;
    struct conf_diag d;
    const char *path;
    int i;

    (void)state;
    path = write_file("all.conf", "listen = { address = \"10.0.0.1\"; };\n"
                                  "tls = { ca = \"a\"; cert = \"b\"; key = \"c\"; };\n"
                                  "spawn_path = [ \"x\", \"y\", \"z\" ];\n"
                                  "hoststart = \"%v\";\nlog = { file = \"l\"; };\n");
    conf_defaults(&c);
    for (i = 0; i < 3; i++) {
        assert_int_equal(conf_load(path, &c, &d), 0);
        assert_string_equal(c.tls_key, "c");
    }
    conf_free(&c);
}

static void
test_conf_expand_replaces_every_host_escape(void **state)
{
    char *s;

    (void)state;
    s = conf_expand("certs/%h.pem", "node3");
    assert_string_equal(s, "certs/node3.pem");
    free(s);
    s = conf_expand("%h/%h-%h", "ab");
    assert_string_equal(s, "ab/ab-ab");
    free(s);
    s = conf_expand("no escapes", "node3");
    assert_string_equal(s, "no escapes");
    free(s);
    s = conf_expand("", "node3");
    assert_string_equal(s, "");
    free(s);
    s = conf_expand("logs/%h.log", "");
    assert_string_equal(s, "logs/.log");
    free(s);
}

static void
test_conf_expand_handles_percent_escapes(void **state)
{
    char *s;

    (void)state;
    s = conf_expand("100%% %h", "n1");
    assert_string_equal(s, "100% n1");
    free(s);
    /* "%%h" is a literal "%h", not an escape. */
    s = conf_expand("%%h", "n1");
    assert_string_equal(s, "%h");
    free(s);
    s = conf_expand("%%%h", "n1");
    assert_string_equal(s, "%n1");
    free(s);
    /* Other escapes and a trailing % pass through for the caller. */
    s = conf_expand("ssh %h %v %m 5%", "n1");
    assert_string_equal(s, "ssh n1 %v %m 5%");
    free(s);
    assert_null(conf_expand(NULL, "n1"));
}

static void
test_conf_log_level_parse_names(void **state)
{
    (void)state;
    assert_int_equal(conf_log_level_parse("err"), CONF_LOG_ERR);
    assert_int_equal(conf_log_level_parse("warn"), CONF_LOG_WARN);
    assert_int_equal(conf_log_level_parse("info"), CONF_LOG_INFO);
    assert_int_equal(conf_log_level_parse("debug"), CONF_LOG_DEBUG);
    assert_int_equal(conf_log_level_parse("error"), -EINVAL);
    assert_int_equal(conf_log_level_parse(""), -EINVAL);
    assert_int_equal(conf_log_level_parse(NULL), -EINVAL);
}

/* The hosts list: per-host settings for vmctl add, as a PVM hostfile's lines. */
static void
test_conf_load_reads_hosts_list(void **state)
{
    struct conf c;
    struct conf_diag d;
    const struct conf_host *h;

    (void)state;
    conf_defaults(&c);
    assert_int_equal(c.nhosts, 0);
    assert_int_equal(c.send_certs, 1);
    assert_int_equal(conf_load(write_file("hosts.conf",
                                          "send_certs = false;\n"
                                          "hosts = (\n"
                                          "  { name = \"ws2\"; address = \"10.0.0.2\"; port = 7100;\n"
                                          "    speed = 2000; vmd = \"/opt/liquidvm/bin/vmd\";\n"
                                          "    spawn_path = [ \"/opt/bin\" ]; send_certs = true; },\n"
                                          "  { name = \"ws3\"; home = \"/home/u/.liquidvm\"; }\n"
                                          ");\n"),
                               &c, &d),
                     0);
    assert_int_equal(c.send_certs, 0);
    assert_int_equal(c.nhosts, 2);
    assert_non_null(h = conf_host_find(&c, "ws2"));
    assert_string_equal(h->address, "10.0.0.2");
    assert_int_equal(h->port, 7100);
    assert_int_equal(h->speed, 2000);
    assert_string_equal(h->vmd, "/opt/liquidvm/bin/vmd");
    assert_int_equal(h->spawn_path_len, 1);
    assert_string_equal(h->spawn_path[0], "/opt/bin");
    assert_int_equal(h->send_certs, 1);
    assert_null(h->home);
    assert_non_null(h = conf_host_find(&c, "ws3"));
    assert_null(h->address);
    assert_int_equal(h->port, -1);
    assert_int_equal(h->speed, 0);
    assert_int_equal(h->send_certs, -1);
    assert_string_equal(h->home, "/home/u/.liquidvm");
    assert_null(conf_host_find(&c, "ws4"));
    /* The top-level spawn_path is untouched by a host's. */
    assert_int_equal(c.spawn_path_len, 2);
    conf_free(&c);
    assert_int_equal(c.nhosts, 0);
}

static void
test_conf_load_reports_every_bad_hosts_entry_with_its_line(void **state)
{
    struct conf c;
    struct conf_diag d;

    (void)state;
    conf_defaults(&c);
    assert_int_equal(conf_load(write_file("badhosts.conf",
                                          "hosts = (\n"
                                          "  { address = \"10.0.0.2\"; },\n"
                                          "  { name = \"ws2\"; speed = 0; colour = 1; },\n"
                                          "  { name = \"ws3\"; address = \"ws3.lan\"; },\n"
                                          "  { name = \"ws4\"; },\n"
                                          "  { name = \"ws4\"; },\n"
                                          "  { name = \"a b\"; },\n"
                                          "  \"ws5\"\n"
                                          ");\n"),
                               &c, &d),
                     WIRE_ECONF);
    assert_int_equal(d.nerrors, 7);
    assert_non_null(strstr(d.text, ":2: hosts[0]: expected a name = \"HOST\""));
    assert_non_null(strstr(d.text, ":3: hosts[1].speed: expected an integer 1..1000000, got 0"));
    assert_non_null(strstr(d.text, ":3: hosts[1].colour: unknown key"));
    assert_non_null(strstr(d.text, ":4: hosts[2].address: expected an IPv4 address"));
    assert_non_null(strstr(d.text, ":6: hosts[4].name: ws4 is already in hosts[3]"));
    assert_non_null(strstr(d.text, ":7: hosts[5].name: expected a host name"));
    assert_non_null(strstr(d.text, ": hosts[6]: expected a list of groups"));
    /* None of the file is used. */
    assert_int_equal(c.nhosts, 0);
    assert_non_null(write_file("badhosts2.conf", "hosts = { name = \"ws2\"; };\n"));
    assert_int_equal(conf_load(conf_path, &c, &d), WIRE_ECONF);
    assert_non_null(strstr(d.text, ":1: hosts: expected a list of groups"));
    conf_free(&c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_defaults_sets_every_field),
        cmocka_unit_test(test_conf_example_loads_cleanly_and_matches_defaults),
        cmocka_unit_test(test_conf_load_reads_every_key),
        cmocka_unit_test(test_conf_load_overlay_keeps_unspecified_defaults),
        cmocka_unit_test(test_conf_load_empty_file_changes_nothing),
        cmocka_unit_test(test_conf_load_reads_64bit_integers_without_suffix),
        cmocka_unit_test(test_conf_load_rejects_integers_beyond_64_bits),
        cmocka_unit_test(test_conf_load_accepts_int_and_float_seconds),
        cmocka_unit_test(test_conf_load_reports_bad_listen),
        cmocka_unit_test(test_conf_load_reports_bad_tls_paths),
        cmocka_unit_test(test_conf_load_reports_bad_seconds),
        cmocka_unit_test(test_conf_load_requires_host_timeout_above_heartbeat),
        cmocka_unit_test(test_conf_load_skips_cross_check_when_a_key_is_bad),
        cmocka_unit_test(test_conf_load_reports_bad_spawn_path),
        cmocka_unit_test(test_conf_load_reports_bad_hoststart),
        cmocka_unit_test(test_conf_load_reports_bad_log),
        cmocka_unit_test(test_conf_load_every_range_at_both_edges),
        cmocka_unit_test(test_conf_load_reports_bad_speed),
        cmocka_unit_test(test_conf_load_reports_bad_limits),
        cmocka_unit_test(test_conf_load_reports_unknown_keys_at_every_level),
        cmocka_unit_test(test_conf_load_reports_every_error_in_one_run),
        cmocka_unit_test(test_conf_load_reports_syntax_error),
        cmocka_unit_test(test_conf_load_reports_unterminated_string_and_comment),
        cmocka_unit_test(test_conf_load_reports_duplicate_key),
        cmocka_unit_test(test_conf_load_rejects_include),
        cmocka_unit_test(test_conf_load_rejects_nul_byte),
        cmocka_unit_test(test_conf_load_missing_file_is_enoent),
        cmocka_unit_test(test_conf_load_unreadable_file_is_eacces),
        cmocka_unit_test(test_conf_load_directory_is_eisdir),
        cmocka_unit_test(test_conf_load_rejects_oversized_file),
        cmocka_unit_test(test_conf_load_error_leaves_conf_unchanged),
        cmocka_unit_test(test_conf_load_quotes_bad_strings_safely),
        cmocka_unit_test(test_conf_load_rejects_overlong_string),
        cmocka_unit_test(test_conf_load_bounds_diag_with_many_errors),
        cmocka_unit_test(test_conf_load_bounds_long_key_names),
        cmocka_unit_test(test_conf_load_accepts_null_diag),
        cmocka_unit_test(test_conf_load_repeated_loads_do_not_leak),
        cmocka_unit_test(test_conf_expand_replaces_every_host_escape),
        cmocka_unit_test(test_conf_expand_handles_percent_escapes),
        cmocka_unit_test(test_conf_log_level_parse_names),
        cmocka_unit_test(test_conf_load_reads_hosts_list),
        cmocka_unit_test(test_conf_load_reports_every_bad_hosts_entry_with_its_line),
    };

    return cmocka_run_group_tests_name("conf_load", tests, group_setup, group_teardown);
}
