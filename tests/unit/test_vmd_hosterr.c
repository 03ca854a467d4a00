/*
 * test_vmd_hosterr.c - daemon/vmd_hosterr.c: every way an add fails gets a
 * message that names the host and the step, from what the hoststart command
 * printed last (the real ssh, sh and vmd wordings), the daemon's error line,
 * or the link's error.  Table-driven: one row per cause.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmd.h"

struct exit_case {
    int status;
    const char *last;       /* the command's last stderr line */
    const char *want[3];    /* substrings the message must hold */
};

static const struct exit_case exit_cases[] = {
    { 255, "Host key verification failed.", { "ssh to ws2:", "host key of ws2 is unknown" } },
    { 255, "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
      { "ssh to ws2:", "unknown or changed" } },
    { 255, "ssh: connect to host ws2 port 22: Connection refused",
      { "ssh to ws2:", "connection refused", "sshd running on ws2" } },
    { 255, "alice@ws2: Permission denied (publickey,password).",
      { "ssh to ws2:", "login refused" } },
    { 255, "ssh: Could not resolve hostname ws2: Name or service not known",
      { "ssh to ws2:", "cannot reach it" } },
    { 255, "ssh: connect to host ws2 port 22: No route to host", { "cannot reach it" } },
    { 255, "ssh: connect to host ws2 port 22: Connection timed out", { "cannot reach it" } },
    { 127, "bash: line 1: /opt/lvm/bin/vmd: No such file or directory",
      { "start vmd on ws2:", "vmd not found at /opt/lvm/bin/vmd on ws2", "--vmd" } },
    { 127, "", { "vmd not found at /opt/lvm/bin/vmd" } },
    { 126, "bash: line 1: /opt/lvm/bin/vmd: Permission denied",
      { "start vmd on ws2:", "is not executable there" } },
    { 1, "vmd: unrecognized option '--take-certs'",
      { "start vmd on ws2:", "different LiquidVM version" } },
    { 255, "kex_exchange_identification: read: Connection reset by peer",
      { "ssh to ws2:", "Connection reset" } },
    { 3, "something else went wrong", { "start vmd on ws2:", "status 3", "something else" } },
    { 3, NULL, { "start vmd on ws2:", "exited (status 3) without a READY line" } },
};

static void
test_vmd_hosterr_exit_names_host_and_step(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(exit_cases) / sizeof(exit_cases[0]); i++) {
        const struct exit_case *c = &exit_cases[i];
        char msg[512];

        vmd_hosterr_exit("ws2", "/opt/lvm/bin/vmd", c->status, c->last, msg, sizeof(msg));
        for (int k = 0; k < 3 && c->want[k]; k++)
            if (strstr(msg, c->want[k]) == NULL)
                fail_msg("case %zu (status %d, \"%s\"): \"%s\" lacks \"%s\"", i, c->status,
                         c->last ? c->last : "(none)", msg, c->want[k]);
    }
}

static void
test_vmd_hosterr_daemon_names_the_cause(void **state)
{
    (void)state;
    static const struct {
        const char *what, *want;
    } cases[] = {
        { "version mismatch: master 0.1.0, here 0.0.9", "different LiquidVM version" },
        { "tls: certificate is not yet valid", "its clock is far off" },
        { "tls: certificate has expired", "has expired by ws2's clock" },
        { "certificates: cannot write ca.pem: Permission denied", "certificates for ws2:" },
        { "listen 10.0.0.9:7411: Cannot assign requested address", "the daemon failed" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char msg[512];

        vmd_hosterr_daemon("ws2", cases[i].what, msg, sizeof(msg));
        if (strstr(msg, cases[i].want) == NULL || strstr(msg, "ws2") == NULL)
            fail_msg("\"%s\" gave \"%s\", wanted \"%s\"", cases[i].what, msg, cases[i].want);
    }
}

static void
test_vmd_hosterr_link_blocked_port_and_other(void **state)
{
    (void)state;
    struct vmd_host h;
    char msg[512];
    const int blocked[] = { -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH, -ENETUNREACH, -EINVAL,
                            -EACCES };

    memset(&h, 0, sizeof(h));
    snprintf(h.name, sizeof(h.name), "ws3");
    snprintf(h.address, sizeof(h.address), "10.0.0.3");
    h.port = 7411;
    for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
        vmd_hosterr_link(&h, blocked[i], NULL, msg, sizeof(msg));
        assert_non_null(strstr(msg, "connect to ws3: its daemon listens on 10.0.0.3:7411"));
        assert_non_null(strstr(msg, "cannot reach that port"));
    }
    vmd_hosterr_link(&h, -EPROTO, "TLS handshake failed", msg, sizeof(msg));
    assert_string_equal(msg, "connect to ws3 at 10.0.0.3:7411: TLS handshake failed");
}

/* A message never overruns its buffer, whatever the command printed. */
static void
test_vmd_hosterr_truncates_to_the_buffer(void **state)
{
    (void)state;
    char last[4096], msg[64];

    memset(last, 'x', sizeof(last) - 1);
    last[sizeof(last) - 1] = '\0';
    memset(msg, 0x55, sizeof(msg));
    vmd_hosterr_exit("ws2", "/opt/lvm/bin/vmd", 3, last, msg, 40);
    assert_int_equal(strlen(msg), 39);
    assert_int_equal((unsigned char)msg[40], 0x55);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmd_hosterr_exit_names_host_and_step),
        cmocka_unit_test(test_vmd_hosterr_daemon_names_the_cause),
        cmocka_unit_test(test_vmd_hosterr_link_blocked_port_and_other),
        cmocka_unit_test(test_vmd_hosterr_truncates_to_the_buffer),
    };
    return cmocka_run_group_tests_name("vmd_hosterr", tests, NULL, NULL);
}
