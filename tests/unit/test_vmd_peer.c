/*
 * test_vmd_peer.c - daemon/vmd_peer.c: when a silent host is dropped.
 *
 * The daemon checks its links once per heartbeat tick (vmd_main.c runs
 * vmd_peer_heartbeat_all and vmd_peer_check_liveness from one timer of
 * period `heartbeat`), and a link silent for more than host_timeout is
 * closed.  So a silent host must go no sooner than host_timeout after its
 * last frame and no later than host_timeout plus two heartbeats (one tick
 * of granularity, one of slack).
 *
 * The clock is faked: the loop never runs while the ticks are simulated,
 * so uv_now() stays put and the test moves the link's last frame back
 * instead (last_rx = now - silence).  The link is a real one from
 * vmd_peer_connect to a port bound but never listening, marked UP; its
 * connect is cancelled when it closes.  No modules are installed, so a
 * lost link reaches no hook.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "vmd.h"

struct fixture {
    uv_loop_t loop;
    struct vmd vmd;
    struct vmd_host host;
    int dead_fd;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof(sa);

    if (f == NULL || uv_loop_init(&f->loop) != 0)
        return -1;
    conf_defaults(&f->vmd.conf);
    f->vmd.loop = &f->loop;
    vmd_init_lists(&f->vmd);
    f->vmd.index = 1;
    f->vmd.is_master = 1;           /* no redials, no start_timeout */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->dead_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (f->dead_fd < 0 || bind(f->dead_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(f->dead_fd, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    f->host.index = 2;
    snprintf(f->host.name, sizeof(f->host.name), "hostB");
    snprintf(f->host.address, sizeof(f->host.address), "127.0.0.1");
    f->host.port = ntohs(sa.sin_port);
    f->host.state = VMD_HOST_UP;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    int rc = 0;

    uv_run(&f->loop, UV_RUN_DEFAULT);
    if (f->vmd.peers.next != &f->vmd.peers)
        rc = -1;
    conf_free(&f->vmd.conf);
    if (uv_loop_close(&f->loop) != 0)
        rc = -1;
    close(f->dead_fd);
    free(f);
    return rc;
}

/* A link to hostB in state UP, the newest in the list. */
static struct vmd_peer *
up_peer(struct fixture *f)
{
    assert_int_equal(vmd_peer_connect(&f->vmd, &f->host), 0);
    assert_non_null(f->host.peer);
    f->host.peer->state = VMD_PEER_UP;
    return f->host.peer;
}

/*
 * Ticks every heartbeat, the first `phase` ms after the last frame: the
 * silence (ms) at the tick that closed the link, or 0 if none did within
 * host_timeout plus ten heartbeats.
 */
static uint64_t
silence_at_drop(struct fixture *f, double host_timeout, double heartbeat, uint64_t phase)
{
    struct vmd_peer *p = up_peer(f);
    uint64_t now, hb = (uint64_t)(heartbeat * 1000.0);
    uint64_t end = (uint64_t)(host_timeout * 1000.0) + 10 * hb;

    f->vmd.conf.host_timeout = host_timeout;
    f->vmd.conf.heartbeat = heartbeat;
    uv_update_time(&f->loop);
    now = uv_now(&f->loop);
    assert_true(now > end);
    for (uint64_t t = phase; t <= end; t += hb) {
        p->last_rx = now - t;
        vmd_peer_check_liveness(&f->vmd);
        if (p->state == VMD_PEER_CLOSING) {
            assert_null(f->host.peer);
            uv_run(&f->loop, UV_RUN_DEFAULT);       /* let it close */
            return t;
        }
    }
    vmd_peer_close(p, 0, "test over");
    uv_run(&f->loop, UV_RUN_DEFAULT);
    return 0;
}

static void
test_vmd_peer_silent_host_dropped_between_timeout_and_two_heartbeats_more(void **state)
{
    struct fixture *f = *state;
    static const struct {
        double host_timeout, heartbeat;
    } cases[] = { { 5.0, 1.0 }, { 3.5, 0.5 }, { 2.0, 1.5 }, { 1.0, 0.25 } };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t to = (uint64_t)(cases[i].host_timeout * 1000.0);
        uint64_t hb = (uint64_t)(cases[i].heartbeat * 1000.0);
        uint64_t phases[] = { 0, 1, hb / 2, hb - 1 };

        for (size_t k = 0; k < 4; k++) {
            uint64_t t = silence_at_drop(f, cases[i].host_timeout, cases[i].heartbeat, phases[k]);

            if (t == 0)
                fail_msg("host_timeout %.2f s, heartbeat %.2f s: a silent host was never dropped",
                         cases[i].host_timeout, cases[i].heartbeat);
            if (t < to || t > to + 2 * hb)
                fail_msg("host_timeout %.2f s, heartbeat %.2f s, phase %llu ms: dropped after "
                         "%llu ms of silence, not within %llu..%llu", cases[i].host_timeout,
                         cases[i].heartbeat, (unsigned long long)phases[k],
                         (unsigned long long)t, (unsigned long long)to,
                         (unsigned long long)(to + 2 * hb));
        }
    }
}

/* A host heard from within host_timeout stays, tick after tick. */
static void
test_vmd_peer_host_heard_from_stays(void **state)
{
    struct fixture *f = *state;
    struct vmd_peer *p = up_peer(f);
    uint64_t now;

    uv_update_time(&f->loop);
    now = uv_now(&f->loop);
    for (int tick = 0; tick < 20; tick++) {
        p->last_rx = now - (uint64_t)(f->vmd.conf.host_timeout * 1000.0);   /* exactly at it */
        vmd_peer_check_liveness(&f->vmd);
        assert_int_equal(p->state, VMD_PEER_UP);
    }
    vmd_peer_close(p, 0, "test over");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_vmd_peer_silent_host_dropped_between_timeout_and_two_heartbeats_more, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_vmd_peer_host_heard_from_stays, setup, teardown),
    };

    log_init("test", LOG_LVL_ERR);
    return cmocka_run_group_tests_name("vmd_peer", tests, NULL, NULL);
}
