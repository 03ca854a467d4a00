/*
 * test_shm_ring.c - the shared-memory rings between tasks of one host
 * (lib/pvm/pvm_shm.c) and their use by the direct-link protocol
 * (lib/pvm/pvm_link.c).  Shown:
 * frames wrap around a small ring byte for byte; a frame many times the
 * ring's size streams through it between two processes; a writer killed
 * mid-frame leaves nothing whole for the reader, and a reader killed
 * mid-frame ends the writer's wait with an error instead of a hang; many
 * processes pairwise keep every pair's order; a segment that is not a
 * sealed ring is refused.  Through the library: the peer's messages on the
 * link come before those in its ring, all behind its MARK; the ring is
 * drained before a message from the daemon is queued (an exit notice comes
 * after the dead task's last messages); WIRE_DIRECT_SHM without
 * descriptors closes the link; our first message to a local peer makes a
 * ring and hands its descriptors over on the link.
 */
#include "test_pvm_fakevm.h"
#include "../../lib/pvm/pvm_shm.h"

#include <errno.h>
#include <stdatomic.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define SMALL 4096u             /* the smallest ring */

/* The byte at offset i of frame seq: every frame's bytes differ. */
static unsigned char
pattern(unsigned seq, size_t i)
{
    return (unsigned char)(seq * 131u + i * 7u + (i >> 8));
}

static unsigned char *
make_body(unsigned seq, size_t len)
{
    unsigned char *b = malloc(len ? len : 1);

    assert_non_null(b);
    for (size_t i = 0; i < len; i++)
        b[i] = pattern(seq, i);
    return b;
}

static int
body_ok(unsigned seq, const unsigned char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pattern(seq, i))
            return 0;
    return 1;
}

/* A ring of size bytes: its writer in *w, its reader in *r. */
static void
ring_pair(size_t size, struct pvm__shm **w, struct pvm__shm **r)
{
    int fds[PVM__SHM_NFD], mine[PVM__SHM_NFD];

    assert_int_equal(pvm__shm_create(size, w, fds), 0);
    mine[0] = fds[0];
    mine[1] = dup(fds[1]);
    mine[2] = dup(fds[2]);
    assert_int_equal(pvm__shm_attach(mine, r), 0);
}

static int
frame_write(struct pvm__shm *w, unsigned seq, size_t len, pvm__shm_wait_cb wait, void *arg)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = (int)seq };
    unsigned char *b = make_body(seq, len);
    int rc = pvm__shm_write(w, &h, b, len, wait, arg);

    free(b);
    return rc;
}

/* A wait that must not happen: the ring had room. */
static int
no_wait(struct pvm__shm *r, void *arg)
{
    (void)r;
    (void)arg;
    return -EDEADLK;
}

/* Sleep on the space eventfd, giving up once the process arg names died. */
static int
wait_alive(struct pvm__shm *r, void *arg)
{
    pid_t pid = *(pid_t *)arg;
    struct pollfd p = { .fd = pvm__shm_space_fd(r), .events = POLLIN };

    (void)poll(&p, 1, 20);
    if (pid > 0 && waitpid(pid, NULL, WNOHANG) == pid) {
        *(pid_t *)arg = -1;
        return -ECONNRESET;
    }
    return 0;
}

/* Read one whole frame, sleeping on the data eventfd while there is none. */
static int
frame_read(struct pvm__shm *r, struct wire_hdr *h, unsigned char **body, int timeout_ms)
{
    struct pollfd p = { .fd = pvm__shm_data_fd(r), .events = POLLIN };
    int rc;

    for (int waited = 0;; waited += 10) {
        if ((rc = pvm__shm_read(r, 1u << 26, h, body)) != 0)
            return rc;
        if (pvm__shm_arm(r)) {
            pvm__shm_disarm(r);
            continue;
        }
        if (waited >= timeout_ms) {
            pvm__shm_disarm(r);
            return 0;
        }
        (void)poll(&p, 1, 10);
        pvm__shm_disarm(r);
    }
}

/* ---- the ring alone ---- */

static void
test_shm_ring_frames_wrap_around_byte_for_byte(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b;
    unsigned seq = 0, next = 0;

    (void)state;
    ring_pair(SMALL, &w, &r);
    /* Sizes that never divide the ring, two or three frames in flight at
     * once, so that headers and bodies straddle its end again and again. */
    for (int round = 0; round < 400; round++) {
        size_t len[3] = { (size_t)(round * 37 % 1500), (size_t)(round * 11 % 700), 3 };

        for (int k = 0; k < 3; k++)
            assert_int_equal(frame_write(w, seq++, len[k], no_wait, NULL), 0);
        for (int k = 0; k < 3; k++, next++) {
            assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
            assert_int_equal(h.tag, (int)next);
            assert_int_equal(h.len, len[k]);
            assert_true(body_ok(next, b, h.len));
            free(b);
        }
        assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    }
    assert_false(pvm__shm_readable(r));
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_streams_frames_larger_than_the_ring(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b;
    static const size_t lens[] = { 100000, 1, 3 * SMALL + 5, 1 << 20 };
    pid_t pid;
    int status;

    (void)state;
    ring_pair(SMALL, &w, &r);
    if ((pid = fork()) == 0) {
        pid_t parent = 0;
        for (unsigned i = 0; i < 4; i++)
            if (frame_write(w, i, lens[i], wait_alive, &parent) != 0)
                _exit(1);
        _exit(0);
    }
    assert_true(pid > 0);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(frame_read(r, &h, &b, 10000), 1);
        assert_int_equal(h.tag, (int)i);
        assert_int_equal(h.len, lens[i]);
        assert_true(body_ok(i, b, h.len));
        free(b);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_writer_killed_mid_frame_leaves_nothing_whole(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b = NULL;
    pid_t pid;

    (void)state;
    ring_pair(SMALL, &w, &r);
    /* One whole frame, then one of 64 KB that cannot fit: the writer waits
     * for the reader, part of the frame published, and is killed there. */
    if ((pid = fork()) == 0) {
        pid_t parent = 0;
        (void)frame_write(w, 1, 100, no_wait, NULL);
        (void)frame_write(w, 2, 65536, wait_alive, &parent);
        _exit(3);
    }
    assert_true(pid > 0);
    assert_int_equal(frame_read(r, &h, &b, 10000), 1);
    assert_int_equal(h.tag, 1);
    free(b);
    /* Read until the writer is stuck mid-frame: part of frame 2 read. */
    for (int i = 0; i < 1000 && !pvm__shm_partial(r); i++) {
        assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
        usleep(1000);
    }
    assert_true(pvm__shm_partial(r));
    usleep(20000);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    /* Everything it published is read; nothing whole comes of it. */
    for (int i = 0; i < 100; i++)
        assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_true(pvm__shm_partial(r));
    assert_false(pvm__shm_readable(r));
    pvm__shm_close(r);          /* drops the partial frame (ASan: no leak) */
    pvm__shm_close(w);
}

static void
test_shm_ring_reader_killed_mid_frame_ends_the_writers_wait(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b;
    pid_t pid;
    int go[2];
    char c;

    (void)state;
    ring_pair(SMALL, &w, &r);
    assert_int_equal(pipe(go), 0);
    /* The reader takes a little of a large frame, then stops (and dies). */
    if ((pid = fork()) == 0) {
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        for (int i = 0; i < 4; i++)
            (void)pvm__shm_read(r, 1u << 24, &h, &b);
        pause();
        _exit(0);
    }
    assert_true(pid > 0);
    close(go[0]);
    assert_int_equal(write(go[1], "x", 1), 1);
    close(go[1]);
    /* Killed while we write: the wait sees it die, the write fails. */
    if (fork() == 0) {
        usleep(100000);
        kill(pid, SIGKILL);
        _exit(0);
    }
    pid_t watched = pid;
    assert_int_equal(frame_write(w, 7, 1 << 20, wait_alive, &watched), -ECONNRESET);
    assert_int_equal(watched, -1);
    while (wait(NULL) > 0)
        ;
    pvm__shm_close(w);
    pvm__shm_close(r);
}

#define NPROC 5
#define NMSG 300

/* The writer's wait in a process of many: read everyone meanwhile, as the
 * library's one wait does, so that no pair waits on another forever. */
struct many {
    struct pvm__shm *rx[NPROC];
    unsigned next[NPROC];
    int me, bad;
};

static void
many_read(struct many *m)
{
    struct wire_hdr h;
    unsigned char *b;

    for (int j = 0; j < NPROC; j++) {
        if (j == m->me)
            continue;
        while (pvm__shm_read(m->rx[j], 1u << 24, &h, &b) == 1) {
            unsigned seq = (unsigned)h.tag;
            if ((int)h.src != j || seq != m->next[j] || !body_ok(seq, b, h.len))
                m->bad = 1;
            m->next[j]++;
            free(b);
        }
    }
}

static int
many_wait(struct pvm__shm *r, void *arg)
{
    struct many *m = arg;

    (void)r;
    many_read(m);
    sched_yield();
    return 0;
}

static void
test_shm_ring_many_processes_pairwise_keep_each_pairs_order(void **state)
{
    static struct pvm__shm *w[NPROC][NPROC], *r[NPROC][NPROC];
    pid_t pid[NPROC];
    int status;

    (void)state;
    for (int i = 0; i < NPROC; i++)
        for (int j = 0; j < NPROC; j++)
            if (i != j)
                ring_pair(SMALL, &w[i][j], &r[i][j]);
    for (int i = 0; i < NPROC; i++) {
        if ((pid[i] = fork()) != 0)
            continue;
        struct many m = { .me = i };
        for (int j = 0; j < NPROC; j++)
            m.rx[j] = r[j][i];
        for (unsigned k = 0; k < NMSG; k++) {
            for (int j = 0; j < NPROC; j++) {
                if (j == i)
                    continue;
                struct wire_hdr h = { .type = WIRE_T_MSG, .src = (uint32_t)i, .tag = (int)k };
                size_t len = (k * 97 + (unsigned)j * 13) % 9000;   /* some above the ring */
                unsigned char *b = make_body(k, len);
                if (pvm__shm_write(w[i][j], &h, b, len, many_wait, &m) != 0)
                    _exit(2);
                free(b);
            }
            many_read(&m);
        }
        for (int spins = 0; spins < 2000000; spins++) {
            int done = 1;
            many_read(&m);
            for (int j = 0; j < NPROC; j++)
                if (j != i && m.next[j] != NMSG)
                    done = 0;
            if (done || m.bad)
                break;
            sched_yield();
        }
        for (int j = 0; j < NPROC; j++)
            if (j != i && m.next[j] != NMSG)
                _exit(3);
        _exit(m.bad ? 4 : 0);
    }
    for (int i = 0; i < NPROC; i++) {
        assert_true(pid[i] > 0);
        assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    for (int i = 0; i < NPROC; i++)
        for (int j = 0; j < NPROC; j++)
            if (i != j) {
                pvm__shm_close(w[i][j]);
                pvm__shm_close(r[i][j]);
            }
}

static void
test_shm_ring_attach_refuses_what_is_not_a_sealed_ring(void **state)
{
    struct pvm__shm *w, *r;
    int fds[PVM__SHM_NFD], bad[PVM__SHM_NFD];

    (void)state;
    /* An unsealed memfd of the right size and contents. */
    assert_int_equal(pvm__shm_create(SMALL, &w, fds), 0);
    int m = memfd_create("x", MFD_CLOEXEC);
    assert_true(m >= 0);
    assert_int_equal(ftruncate(m, 4096 + SMALL), 0);
    unsigned char page[64];
    assert_int_equal(pread(fds[0], page, sizeof page, 0), (ssize_t)sizeof page);
    assert_int_equal(pwrite(m, page, sizeof page, 0), (ssize_t)sizeof page);
    bad[0] = m;
    bad[1] = dup(fds[1]);
    bad[2] = dup(fds[2]);
    assert_int_equal(pvm__shm_attach(bad, &r), -EPROTO);
    /* The right segment with a pipe for an eventfd. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    bad[0] = dup(fds[0]);
    bad[1] = p[0];
    bad[2] = p[1];
    assert_int_equal(pvm__shm_attach(bad, &r), -EPROTO);
    /* A good one: the version word changed under it. */
    bad[0] = dup(fds[0]);
    bad[1] = dup(fds[1]);
    bad[2] = dup(fds[2]);
    uint32_t v = 99;
    assert_int_equal(pwrite(fds[0], &v, sizeof v, 4), (ssize_t)sizeof v);
    assert_int_equal(pvm__shm_attach(bad, &r), -EPROTO);
    close(fds[0]);
    pvm__shm_close(w);
}

static void
test_shm_ring_bad_header_is_a_protocol_error(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .src = FAKE_T2, .dst = FAKE_ME };
    unsigned char *b;

    (void)state;
    ring_pair(SMALL, &w, &r);
    assert_int_equal(pvm__shm_write(w, &h, NULL, 0, no_wait, NULL), 0);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), -EPROTO);
    pvm__shm_close(w);
    pvm__shm_close(r);
    /* A body above the reader's limit. */
    ring_pair(SMALL, &w, &r);
    assert_int_equal(frame_write(w, 1, 200, no_wait, NULL), 0);
    assert_int_equal(pvm__shm_read(r, 100, &h, &b), -EPROTO);
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_failed_write_is_torn_only_if_part_was_published(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b = NULL;

    (void)state;
    /* A frame that fills the ring exactly, then one that finds no room at
     * all: it fails with nothing of it published, and the ring goes on. */
    ring_pair(SMALL, &w, &r);
    assert_int_equal(frame_write(w, 1, SMALL - WIRE_HDR_LEN, no_wait, NULL), 0);
    assert_int_equal(frame_write(w, 2, 10, no_wait, NULL), -EDEADLK);
    assert_false(pvm__shm_torn(w));
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 1);
    free(b);
    assert_int_equal(frame_write(w, 3, 10, no_wait, NULL), 0);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 3);
    assert_true(body_ok(3, b, h.len));
    free(b);
    /* A frame larger than the ring fails with its start published: torn,
     * and the ring takes no other frame, which the reader would read as
     * the rest of the torn one. */
    assert_int_equal(frame_write(w, 4, 65536, no_wait, NULL), -EDEADLK);
    assert_true(pvm__shm_torn(w));
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_true(pvm__shm_partial(r));
    assert_int_equal(frame_write(w, 5, 10, no_wait, NULL), -EPIPE);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_false(pvm__shm_readable(r));
    pvm__shm_close(w);
    pvm__shm_close(r);
}

/* ---- references: bodies copied once, out of the writer's memory ---- */

/* The writer's wait in one process: be the reader meanwhile. */
struct self {
    struct pvm__shm *r;
    int got, bad, fail_wait;
    unsigned next;
};

static int
self_wait(struct pvm__shm *w, void *arg)
{
    struct self *x = arg;
    struct wire_hdr h;
    unsigned char *b;
    int rc;

    (void)w;
    if (x->fail_wait)
        return -ECONNRESET;
    while ((rc = pvm__shm_read(x->r, 1u << 26, &h, &b)) == 1) {
        if (h.tag != (int)x->next || !body_ok(x->next, b, h.len))
            x->bad = 1;
        x->next++;
        x->got++;
        free(b);
    }
    return rc < 0 ? rc : 0;
}

static void
test_shm_ring_reference_in_one_process_copies_once_in_order(void **state)
{
    struct pvm__shm *w, *r;
    struct self x = { 0 };
    static const size_t lens[] = { 1 << 20, 10, 65536, 3 * (1 << 20) + 7, 0, 300000 };
    unsigned long refs, helped;

    (void)state;
    ring_pair(SMALL, &w, &r);
    x.r = r;
    assert_int_equal(pvm__shm_ref_offer(w, getpid()), 1);
    assert_int_equal(pvm__shm_ref_accept(r, getpid()), 1);
    /* A reader busy elsewhere: large frames stream, whole. */
    assert_int_equal(frame_write(w, 0, 1 << 20, self_wait, &x), 0);
    assert_int_equal(self_wait(w, &x), 0);
    assert_int_equal(x.got, 1);
    pvm__shm_ref_stats(w, &refs, &helped);
    assert_int_equal(refs, 0);
    /* A reader that waits in the library: by reference. */
    x.got = 0;
    x.next = 0;
    pvm__shm_receiving(r, 1);
    for (unsigned i = 0; i < 6; i++)
        assert_int_equal(frame_write(w, i, lens[i], self_wait, &x), 0);
    assert_int_equal(self_wait(w, &x), 0);
    assert_int_equal(x.got, 6);
    assert_false(x.bad);
    /* 1 MB, 64 KB, 3 MB and 300 KB went by reference; 10 and 0 bytes did not. */
    pvm__shm_ref_stats(w, &refs, &helped);
    assert_int_equal(refs, 4);
    pvm__shm_ref_stats(r, &refs, &helped);
    assert_int_equal(refs, 4);
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_reference_refused_without_a_good_probe(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_REF, .src = FAKE_T2,
                          .dst = FAKE_ME };
    unsigned char body[WIRE_HDR_LEN + 8] = { 0 }, *b;
    struct self x = { 0 };

    (void)state;
    ring_pair(SMALL, &w, &r);
    /* Not the writer's pid; a reader cannot offer, a writer cannot accept. */
    assert_int_equal(pvm__shm_ref_offer(w, getpid()), 1);
    assert_int_equal(pvm__shm_ref_accept(r, getppid()), 0);
    assert_int_equal(pvm__shm_ref_offer(r, getpid()), 0);
    assert_int_equal(pvm__shm_ref_accept(w, getpid()), 0);
    /* References stay off: a large frame streams, whole. */
    x.r = r;
    assert_int_equal(frame_write(w, 0, 100000, self_wait, &x), 0);
    assert_int_equal(self_wait(w, &x), 0);
    assert_int_equal(x.got, 1);
    assert_false(x.bad);
    /* A reference frame forged by a writer whose references were not
     * taken is a protocol error, not a read of its memory. */
    assert_int_equal(pvm__shm_write(w, &h, body, sizeof(body), no_wait, NULL), 0);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), -EPROTO);
    pvm__shm_close(w);
    pvm__shm_close(r);
    /* With LIQUIDVM_SHM_REF=0 neither end takes part. */
    ring_pair(SMALL, &w, &r);
    setenv("LIQUIDVM_SHM_REF", "0", 1);
    assert_int_equal(pvm__shm_ref_offer(w, getpid()), 0);
    unsetenv("LIQUIDVM_SHM_REF");
    assert_int_equal(pvm__shm_ref_offer(w, getpid()), 1);
    setenv("LIQUIDVM_SHM_REF", "0", 1);
    assert_int_equal(pvm__shm_ref_accept(r, getpid()), 0);
    unsetenv("LIQUIDVM_SHM_REF");
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_reference_cancelled_by_a_failed_wait_is_dropped(void **state)
{
    struct pvm__shm *w, *r;
    struct self x = { 0 };
    struct wire_hdr h;
    unsigned char *b;
    unsigned long refs, helped;

    (void)state;
    ring_pair(SMALL, &w, &r);
    x.r = r;
    assert_int_equal(pvm__shm_ref_offer(w, getpid()), 1);
    assert_int_equal(pvm__shm_ref_accept(r, getpid()), 1);
    pvm__shm_receiving(r, 1);
    /* The wait fails before the reader took the reference: the writer
     * cancels it, the write fails whole (not torn: it may go another way),
     * and the reader drops it unread. */
    x.fail_wait = 1;
    assert_int_equal(frame_write(w, 0, 1 << 20, self_wait, &x), -ECONNRESET);
    assert_false(pvm__shm_torn(w));
    assert_int_equal(pvm__shm_read(r, 1u << 26, &h, &b), 0);
    assert_false(pvm__shm_readable(r));
    /* The ring takes nothing more: a reference behind the cancelled one
     * would be taken in its place. */
    x.fail_wait = 0;
    assert_int_equal(frame_write(w, 1, 200000, self_wait, &x), -EPIPE);
    assert_int_equal(frame_write(w, 2, 10, self_wait, &x), -EPIPE);
    assert_int_equal(pvm__shm_read(r, 1u << 26, &h, &b), 0);
    assert_int_equal(x.got, 0);
    pvm__shm_ref_stats(r, &refs, &helped);
    assert_int_equal(refs, 0);
    pvm__shm_close(w);
    pvm__shm_close(r);
}

/* Between processes: the child writes by reference, the parent reads. */
static void
test_shm_ring_reference_between_processes_shares_the_copy(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b;
    int go[2], back[2], res[2], status;
    unsigned long refs, helped, child[2];
    pid_t pid;
    char c;

    (void)state;
    ring_pair(64u << 10, &w, &r);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(back), 0);
    assert_int_equal(pipe(res), 0);
    if ((pid = fork()) == 0) {
        pid_t parent = getppid(), none = 0;
        if (pvm__shm_ref_offer(w, parent) != 1 || write(back[1], "x", 1) != 1 ||
            read(go[0], &c, 1) != 1)
            _exit(1);
        for (unsigned i = 0; i < 40; i++)
            if (frame_write(w, i, i % 4 == 3 ? 100 : (1u << 20) + i * 4099, wait_alive, &none) != 0)
                _exit(2);
        pvm__shm_ref_stats(w, &child[0], &child[1]);
        if (write(res[1], child, sizeof(child)) != (ssize_t)sizeof(child))
            _exit(3);
        _exit(0);
    }
    assert_true(pid > 0);
    assert_int_equal(read(back[0], &c, 1), 1);
    assert_int_equal(pvm__shm_ref_accept(r, pid), 1);
    pvm__shm_receiving(r, 1);    /* we do nothing but wait for its frames */
    assert_int_equal(write(go[1], "x", 1), 1);
    for (unsigned i = 0; i < 40; i++) {
        assert_int_equal(frame_read(r, &h, &b, 10000), 1);
        assert_int_equal(h.tag, (int)i);
        assert_int_equal(h.len, i % 4 == 3 ? 100 : (1u << 20) + i * 4099);
        assert_true(body_ok(i, b, h.len));
        free(b);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(read(res[0], child, sizeof(child)), (ssize_t)sizeof(child));
    pvm__shm_ref_stats(r, &refs, &helped);
    assert_int_equal(refs, 30);
    assert_int_equal(child[0], 30);
    print_message("references: 30 of 30 large frames; the writer copied %lu of their %d chunks\n",
                  child[1], 30 * 9);
    pvm__shm_close(w);
    pvm__shm_close(r);
}

static void
test_shm_ring_reference_writer_killed_while_waiting_delivers_nothing(void **state)
{
    struct pvm__shm *w, *r;
    struct wire_hdr h;
    unsigned char *b = NULL;
    int go[2], back[2];
    pid_t pid;
    char c;

    (void)state;
    ring_pair(SMALL, &w, &r);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(back), 0);
    if ((pid = fork()) == 0) {
        pid_t none = 0;
        if (pvm__shm_ref_offer(w, getppid()) != 1 || write(back[1], "x", 1) != 1 ||
            read(go[0], &c, 1) != 1)
            _exit(1);
        (void)frame_write(w, 1, 1 << 20, wait_alive, &none);
        _exit(3);
    }
    assert_true(pid > 0);
    assert_int_equal(read(back[0], &c, 1), 1);
    assert_int_equal(pvm__shm_ref_accept(r, pid), 1);
    pvm__shm_receiving(r, 1);
    assert_int_equal(write(go[1], "x", 1), 1);
    /* The reference is published; the writer dies before we read it. */
    for (int i = 0; i < 2000 && !pvm__shm_readable(r); i++)
        usleep(1000);
    assert_true(pvm__shm_readable(r));
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_true(pvm__shm_read(r, 1u << 26, &h, &b) < 0);
    assert_null(b);
    pvm__shm_close(r);
    pvm__shm_close(w);
}

static void
test_shm_ring_reference_reader_killed_ends_the_writers_wait(void **state)
{
    struct pvm__shm *w, *r;
    pid_t pid, watched;
    int go[2], back[2];
    char c;

    (void)state;
    ring_pair(SMALL, &w, &r);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(back), 0);
    /* The reader accepts, then never reads, and is killed. */
    if ((pid = fork()) == 0) {
        if (read(go[0], &c, 1) != 1 || pvm__shm_ref_accept(r, getppid()) != 1)
            _exit(1);
        pvm__shm_receiving(r, 1);
        if (write(back[1], "y", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    assert_true(pid > 0);
    assert_int_equal(pvm__shm_ref_offer(w, pid), 1);
    assert_int_equal(write(go[1], "x", 1), 1);
    assert_int_equal(read(back[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    if (fork() == 0) {
        usleep(100000);
        kill(pid, SIGKILL);
        _exit(0);
    }
    watched = pid;
    /* Cancelled unread: the write fails whole, not torn. */
    assert_int_equal(frame_write(w, 7, 1 << 20, wait_alive, &watched), -ECONNRESET);
    assert_false(pvm__shm_torn(w));
    while (wait(NULL) > 0)
        ;
    pvm__shm_close(w);
    pvm__shm_close(r);
}

/*
 * A reference the reader took when the writer's wait failed: the writer
 * may not return while the reader may still copy out of its memory.  The
 * reader here is played through the segment itself (ref_state is the word
 * at offset 192, pvm_shm.c): it takes the reference, then either finishes
 * (the write succeeds) or its process dies (the write fails, torn).
 */
#define REF_STATE_OFF 192
enum { T_POSTED = 1, T_TAKEN = 2, T_DONE = 4 };

struct taken {
    _Atomic uint32_t *state;
    pid_t finisher;             /* sets DONE later; or 0 */
};

static int
take_then_fail(struct pvm__shm *w, void *arg)
{
    struct taken *t = arg;

    (void)w;
    assert_int_equal(atomic_load(t->state), T_POSTED);
    atomic_store(t->state, T_TAKEN);
    return -ECONNRESET;
}

static void
test_shm_ring_reference_taken_outlives_the_writers_failed_wait(void **state)
{
    for (int finish = 1; finish >= 0; finish--) {
        struct pvm__shm *w, *r;
        int fds[PVM__SHM_NFD], mine[PVM__SHM_NFD], status, go[2];
        struct taken t = { 0 };
        pid_t reader, killer;
        void *map;
        char c;

        (void)state;
        assert_int_equal(pvm__shm_create(SMALL, &w, fds), 0);
        map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
        assert_true(map != MAP_FAILED);
        t.state = (_Atomic uint32_t *)((char *)map + REF_STATE_OFF);
        mine[0] = fds[0];
        mine[1] = dup(fds[1]);
        mine[2] = dup(fds[2]);
        assert_int_equal(pvm__shm_attach(mine, &r), 0);
        assert_int_equal(pipe(go), 0);
        /* The "reader" process: accepts once the writer has offered, then
         * either finishes the copy it took 100 ms later, or sleeps until
         * it is killed. */
        if ((reader = fork()) == 0) {
            close(go[1]);                /* a writer that fails first ends the read */
            pvm__shm_receiving(r, 1);    /* before the writer sees it accept */
            if (read(go[0], &c, 1) != 1 || pvm__shm_ref_accept(r, getppid()) != 1)
                _exit(1);
            if (finish) {
                for (int i = 0; i < 5000 && atomic_load(t.state) != T_TAKEN; i++)
                    usleep(1000);
                usleep(100000);
                atomic_store(t.state, T_DONE);
                _exit(0);
            }
            pause();
            _exit(0);
        }
        assert_true(reader > 0);
        assert_int_equal(pvm__shm_ref_offer(w, reader), 1);
        assert_int_equal(write(go[1], "x", 1), 1);
        close(go[0]);
        close(go[1]);
        for (int i = 0; i < 2000 && !pvm__shm_ref_accepted(w); i++)
            usleep(1000);
        assert_true(pvm__shm_ref_accepted(w));
        killer = 0;
        if (!finish && (killer = fork()) == 0) {
            usleep(150000);
            kill(reader, SIGKILL);
            _exit(0);
        }
        if (finish) {
            assert_int_equal(frame_write(w, 1, 1 << 20, take_then_fail, &t), 0);
            assert_false(pvm__shm_torn(w));
        } else {
            assert_int_equal(frame_write(w, 1, 1 << 20, take_then_fail, &t), -ECONNRESET);
            assert_true(pvm__shm_torn(w));
        }
        assert_int_equal(waitpid(reader, &status, 0), reader);
        if (killer > 0)
            assert_int_equal(waitpid(killer, NULL, 0), killer);
        munmap(map, 4096);
        pvm__shm_close(w);
        pvm__shm_close(r);
    }
}

/* ---- through the library ---- */

static int
lib_up(void **state)
{
    int rc = fake_up(state);

    pvm__ctx.max_msg = 1 << 24;
    unsetenv("LIQUIDVM_SHM_RING");
    /* Rings keep their size here, but in the tests of growth. */
    setenv("LIQUIDVM_SHM_RING_MAX", "1", 1);
    return rc;
}

static int
lib_down(void **state)
{
    pvm__direct_close();
    return fake_down(state);
}

/* A link from FAKE_T2 in state st; *peer is its far end. */
static struct pvm__link *
make_link(int st, int *peer)
{
    int sv[2];
    struct pvm__direct *d = dir();
    struct pvm__link *l;

    assert_non_null(d);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    l = link_new(d, FAKE_T2, (enum pvm__link_state)st);
    assert_non_null(l);
    l->fd = sv[0];
    *peer = sv[1];
    return l;
}

static void
int_body(unsigned char b[4], int v)
{
    b[0] = (unsigned char)((unsigned)v >> 24);
    b[1] = (unsigned char)((unsigned)v >> 16);
    b[2] = (unsigned char)((unsigned)v >> 8);
    b[3] = (unsigned char)v;
}

/* The peer's message with one int, on the socket or in its ring. */
static void
peer_sock(int fd, int v)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = 5,
                          .flags = PVM__ENCWORD_XDR };
    unsigned char b[4];

    int_body(b, v);
    assert_int_equal(wire_write_frame(fd, &h, b, 4), 0);
}

static void
peer_ring(struct pvm__shm *w, int v)
{
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = 5,
                          .flags = PVM__ENCWORD_XDR };
    unsigned char b[4];

    int_body(b, v);
    assert_int_equal(pvm__shm_write(w, &h, b, 4, no_wait, NULL), 0);
}

/* WIRE_DIRECT_SHM on the socket with n descriptors. */
static void
peer_shm(int fd, const int *fds, int n)
{
    struct wire_hdr h = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_SHM, .src = FAKE_T2,
                          .dst = FAKE_ME };
    unsigned char hdr[WIRE_HDR_LEN];
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int) * PVM__SHM_NFD)];
    } cm;
    struct iovec iov = { hdr, sizeof hdr };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

    wire_hdr_pack(&h, hdr);
    if (n > 0) {
        memset(&cm, 0, sizeof cm);
        mh.msg_control = cm.b;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
        CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
        CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
        CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
        memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * (size_t)n);
    }
    assert_int_equal(sendmsg(fd, &mh, 0), (ssize_t)sizeof hdr);
}

/* A ring of size bytes from the peer, handed over on its link; its writer. */
static struct pvm__shm *
peer_ring_new(int peer, size_t size)
{
    struct pvm__shm *w;
    int fds[PVM__SHM_NFD];

    assert_int_equal(pvm__shm_create(size, &w, fds), 0);
    peer_shm(peer, fds, PVM__SHM_NFD);
    close(fds[0]);
    return w;
}

static void
settle(void)
{
    for (int i = 0; i < 8; i++)
        pvm__pump(0, NULL, NULL);
}

static void
test_shm_ring_link_then_ring_in_order_behind_the_mark(void **state)
{
    struct pvm__shm *w;
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);

    (void)state;
    /* 1 routed by the daemons; 2, 3 on the link; then the ring: 4, 5. */
    peer_sock(peer, 2);
    peer_sock(peer, 3);
    w = peer_ring_new(peer, SMALL);
    peer_ring(w, 4);
    peer_ring(w, 5);
    settle();
    assert_non_null(l->rx);
    assert_int_equal(pvm_nrecv(-1, -1), 0);     /* all held: no MARK yet */
    fake_deliver_int(FAKE_T2, 5, 0, 1);
    struct wire_hdr m = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_MARK, .src = FAKE_T2,
                          .dst = FAKE_ME };
    assert_int_equal(wire_write_frame(fake_fd, &m, NULL, 0), 0);
    for (int want = 1; want <= 5; want++) {
        assert_true(pvm_recv(FAKE_T2, 5) > 0);
        assert_int_equal(fake_upk_int(), want);
    }
    /* Marked: the ring's next message is queued as it comes. */
    peer_ring(w, 6);
    assert_true(pvm_recv(FAKE_T2, 5) > 0);
    assert_int_equal(fake_upk_int(), 6);
    pvm__shm_close(w);
    close(peer);
}

static void
test_shm_ring_is_drained_before_a_daemon_message(void **state)
{
    struct pvm__shm *w;
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);

    (void)state;
    l->marked = 1;
    w = peer_ring_new(peer, SMALL);
    settle();
    assert_non_null(l->rx);
    /* Its last message, then it dies: the daemon's notice (tag 99) is read
     * first, but queued after what the ring holds. */
    peer_ring(w, 1);
    pvm__shm_close(w);
    close(peer);
    fake_deliver_int(0x40000000, 99, 0, FAKE_T2);
    assert_int_equal(pvm__pump_daemon(NULL, NULL), 1);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), 1);
    assert_true(pvm_nrecv(-1, -1) > 0);
    assert_int_equal(fake_upk_int(), FAKE_T2);
}

static void
test_shm_ring_eof_takes_the_whole_messages_first(void **state)
{
    struct pvm__shm *w;
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = 5 };

    (void)state;
    l->marked = 1;
    w = peer_ring_new(peer, SMALL);
    settle();
    /* Two whole, then the start of one that never ends: the writer's
     * 64 KB frame stops at the ring's end as if it died there. */
    peer_ring(w, 1);
    peer_ring(w, 2);
    unsigned char *big = make_body(0, 65536);
    assert_int_equal(pvm__shm_write(w, &h, big, 65536, no_wait, NULL), -EDEADLK);
    free(big);
    pvm__shm_close(w);
    close(peer);
    settle();
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_null(l->rx);
    for (int want = 1; want <= 2; want++) {
        assert_true(pvm_nrecv(FAKE_T2, 5) > 0);
        assert_int_equal(fake_upk_int(), want);
    }
    assert_int_equal(pvm_nrecv(-1, -1), 0);    /* no torn message */
}

static void
test_shm_ring_shm_frame_without_descriptors_closes_the_link(void **state)
{
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);

    (void)state;
    peer_shm(peer, NULL, 0);
    settle();
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_null(l->rx);
    close(peer);
}

/* Read the frame the library wrote on the link, with its descriptors. */
static int
recv_shm(int fd, int *fds)
{
    unsigned char hdr[WIRE_HDR_LEN];
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int) * PVM__SHM_NFD)];
    } cm;
    struct iovec iov = { hdr, sizeof hdr };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
                         .msg_controllen = sizeof cm.b };
    struct wire_hdr h;
    struct cmsghdr *c;

    assert_int_equal(recvmsg(fd, &mh, 0), (ssize_t)sizeof hdr);
    assert_int_equal(wire_hdr_unpack(hdr, 0, &h), 0);
    assert_int_equal(h.type, WIRE_T_DIRECT);
    assert_int_equal(h.tag, WIRE_DIRECT_SHM);
    c = CMSG_FIRSTHDR(&mh);
    assert_non_null(c);
    assert_int_equal(c->cmsg_type, SCM_RIGHTS);
    int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
    return n;
}

static void
test_shm_ring_first_send_hands_a_ring_over_on_the_link(void **state)
{
    struct pvm__shm *r;
    struct wire_hdr h;
    unsigned char *b = NULL;
    int peer, fds[PVM__SHM_NFD];
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);

    (void)state;
    pvm_initsend(PvmDataRaw);
    int v = 77;
    pvm_pkint(&v, 1, 1);
    assert_int_equal(pvm_send(FAKE_T2, 8), PvmOk);
    assert_int_equal(fake_sent(&h, &b), 1);     /* the MARK, to the daemon */
    assert_int_equal(h.tag, WIRE_DIRECT_MARK);
    free(b);
    assert_non_null(l->tx);
    assert_int_equal(recv_shm(peer, fds), PVM__SHM_NFD);
    assert_int_equal(pvm__shm_attach(fds, &r), 0);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 8);
    assert_int_equal((int)h.dst, FAKE_T2);
    assert_int_equal(h.len, 4);
    free(b);
    /* Larger than the ring: it streams, and we read it as it comes. */
    unsigned char *big = make_body(3, 3 << 20);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)big, 3 << 20, 1);
    pid_t child = fork();
    if (child == 0) {
        int rc;
        while ((rc = pvm__shm_read(r, 1u << 24, &h, &b)) == 0)
            ;
        _exit(rc == 1 && h.len == (3u << 20) && body_ok(3, b, h.len) ? 0 : 1);
    }
    assert_int_equal(pvm_send(FAKE_T2, 9), PvmOk);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(big);
    pvm__shm_close(r);
    close(peer);
}

/*
 * Our first message to FAKE_T2 through a 4 KB ring, body bytes long: the
 * ring is made; the reader's end in *r, the MARK taken from the daemon.
 */
static struct pvm__link *
ring_to_peer(size_t body, int *peer, struct pvm__shm **r)
{
    struct pvm__link *l = make_link(PVM__LINK_READY, peer);
    unsigned char *b = make_body(1, body);
    int fds[PVM__SHM_NFD];
    struct wire_hdr h;
    unsigned char *mark = NULL;

    setenv("LIQUIDVM_SHM_RING", "4096", 1);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)b, (int)body, 1);
    free(b);
    assert_int_equal(pvm_send(FAKE_T2, 1), PvmOk);
    assert_int_equal(fake_sent(&h, &mark), 1);
    assert_int_equal(h.tag, WIRE_DIRECT_MARK);
    free(mark);
    assert_non_null(l->tx);
    assert_int_equal(recv_shm(*peer, fds), PVM__SHM_NFD);
    assert_int_equal(pvm__shm_attach(fds, r), 0);
    return l;
}

static void
test_shm_ring_send_torn_by_the_peers_end_fails_and_is_not_resent(void **state)
{
    struct pvm__shm *r;
    struct wire_hdr h;
    unsigned char *b = NULL;
    int peer;
    struct pvm__link *l = ring_to_peer(4, &peer, &r);

    (void)state;
    /* The peer closes its end; our 64 KB message fills the ring, waits for
     * room, and hears of the close with its start published. */
    close(peer);
    unsigned char *big = make_body(2, 65536);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)big, 65536, 1);
    free(big);
    assert_int_equal(pvm_send(FAKE_T2, 2), PvmSysErr);
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_null(l->tx);
    /* No copy went to the daemon... */
    assert_int_equal(fake_sent(&h, &b), 0);
    /* ... and the reader has the first message whole, the second in part. */
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 1);
    free(b);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_true(pvm__shm_partial(r));
    pvm__shm_close(r);
    /* The next message goes whole through the daemon. */
    pvm_initsend(PvmDataDefault);
    int v = 3;
    pvm_pkint(&v, 1, 1);
    assert_int_equal(pvm_send(FAKE_T2, 3), PvmOk);
    assert_int_equal(fake_expect_int(FAKE_T2, 3, 0), 3);
}

static void
test_shm_ring_send_with_nothing_published_goes_whole_through_the_daemon(void **state)
{
    struct pvm__shm *r;
    struct wire_hdr h;
    unsigned char *b = NULL;
    int peer;
    /* The first message fills the 4 KB ring exactly. */
    struct pvm__link *l = ring_to_peer(4096 - WIRE_HDR_LEN, &peer, &r);

    (void)state;
    close(peer);
    pvm_initsend(PvmDataDefault);
    int v = 2;
    pvm_pkint(&v, 1, 1);
    assert_int_equal(pvm_send(FAKE_T2, 2), PvmOk);
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_null(l->tx);
    assert_int_equal(fake_expect_int(FAKE_T2, 2, 0), 2);
    assert_int_equal(fake_sent(&h, &b), 0);
    /* The ring holds the first message whole and nothing of the second. */
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 1);
    assert_int_equal(h.len, 4096 - WIRE_HDR_LEN);
    assert_true(body_ok(1, b, h.len));
    free(b);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_false(pvm__shm_partial(r));
    pvm__shm_close(r);
}

/* Our sends to FAKE_T2 through a 4 KB ring that may grow to 1 MB: a frame
 * of more than half the ring brings a larger ring, handed over on the link
 * after the old ring's last frame. */
static void
test_shm_ring_grows_for_a_large_message_after_the_old_rings_frames(void **state)
{
    struct pvm__shm *r, *r2;
    struct wire_hdr h;
    unsigned char *b = NULL, *big;
    int peer, fds[PVM__SHM_NFD];
    struct pvm__link *l;

    (void)state;
    setenv("LIQUIDVM_SHM_RING_MAX", "1048576", 1);
    l = ring_to_peer(100, &peer, &r);
    assert_int_equal(pvm__shm_size(r), 4096);
    /* 10 000 bytes: a ring of 32 KB (twice the frame, a power of two). */
    big = make_body(2, 10000);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)big, 10000, 1);
    assert_int_equal(pvm_send(FAKE_T2, 2), PvmOk);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)big, 50, 1);
    assert_int_equal(pvm_send(FAKE_T2, 3), PvmOk);
    free(big);
    assert_non_null(l->tx);
    assert_int_equal(pvm__shm_size(l->tx), 32768);
    /* The old ring: the first message, whole, and nothing after it. */
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 1);
    free(b);
    assert_int_equal(pvm__shm_read(r, 1u << 20, &h, &b), 0);
    assert_false(pvm__shm_readable(r));
    /* The new one, from the link: the other two, in order. */
    assert_int_equal(recv_shm(peer, fds), PVM__SHM_NFD);
    assert_int_equal(pvm__shm_attach(fds, &r2), 0);
    assert_int_equal(pvm__shm_size(r2), 32768);
    assert_int_equal(pvm__shm_read(r2, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 2);
    assert_int_equal(h.len, 10000);
    assert_true(body_ok(2, b, h.len));
    free(b);
    assert_int_equal(pvm__shm_read(r2, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 3);
    free(b);
    /* Not beyond the limit: for 600 000 bytes, 1 MB, not 2. */
    struct pvm__shm *r3;
    big = make_body(4, 600000);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte((char *)big, 600000, 1);
    free(big);
    assert_int_equal(pvm_send(FAKE_T2, 4), PvmOk);
    assert_int_equal(pvm__shm_size(l->tx), 1048576);
    assert_int_equal(recv_shm(peer, fds), PVM__SHM_NFD);
    assert_int_equal(pvm__shm_attach(fds, &r3), 0);
    assert_int_equal(pvm__shm_read(r3, 1u << 20, &h, &b), 1);
    assert_int_equal(h.tag, 4);
    assert_true(body_ok(4, b, h.len));
    free(b);
    pvm__shm_close(r);
    pvm__shm_close(r2);
    pvm__shm_close(r3);
    close(peer);
}

/* The peer's larger ring in place of its first: what the first holds comes
 * first, then the new ring's; a first ring with part of a frame left in it
 * when the new one comes is a broken peer, and the link dies. */
static void
test_shm_ring_peers_larger_ring_takes_over_after_the_old_ones_frames(void **state)
{
    struct pvm__shm *w, *w2;
    int peer;
    struct pvm__link *l = make_link(PVM__LINK_READY, &peer);
    struct wire_hdr h = { .type = WIRE_T_MSG, .src = FAKE_T2, .dst = FAKE_ME, .tag = 5 };

    (void)state;
    l->marked = 1;
    w = peer_ring_new(peer, SMALL);
    settle();
    assert_non_null(l->rx);
    peer_ring(w, 1);
    peer_ring(w, 2);
    w2 = peer_ring_new(peer, 8 * SMALL);
    peer_ring(w2, 3);
    settle();
    assert_int_not_equal(l->state, PVM__LINK_DEAD);
    for (int want = 1; want <= 3; want++) {
        assert_true(pvm_nrecv(FAKE_T2, 5) > 0);
        assert_int_equal(fake_upk_int(), want);
    }
    /* Now a third ring while the second holds the start of a frame. */
    unsigned char *big = make_body(0, 65536);
    assert_int_equal(pvm__shm_write(w2, &h, big, 65536, no_wait, NULL), -EDEADLK);
    free(big);
    struct pvm__shm *w3;
    w3 = peer_ring_new(peer, SMALL);
    settle();
    assert_int_equal(l->state, PVM__LINK_DEAD);
    assert_int_equal(pvm_nrecv(-1, -1), 0);
    pvm__shm_close(w);
    pvm__shm_close(w2);
    pvm__shm_close(w3);
    close(peer);
}

int
main(void)
{
#define L(f) cmocka_unit_test_setup_teardown(f, lib_up, lib_down)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shm_ring_frames_wrap_around_byte_for_byte),
        cmocka_unit_test(test_shm_ring_streams_frames_larger_than_the_ring),
        cmocka_unit_test(test_shm_ring_writer_killed_mid_frame_leaves_nothing_whole),
        cmocka_unit_test(test_shm_ring_reader_killed_mid_frame_ends_the_writers_wait),
        cmocka_unit_test(test_shm_ring_many_processes_pairwise_keep_each_pairs_order),
        cmocka_unit_test(test_shm_ring_attach_refuses_what_is_not_a_sealed_ring),
        cmocka_unit_test(test_shm_ring_bad_header_is_a_protocol_error),
        cmocka_unit_test(test_shm_ring_failed_write_is_torn_only_if_part_was_published),
        cmocka_unit_test(test_shm_ring_reference_in_one_process_copies_once_in_order),
        cmocka_unit_test(test_shm_ring_reference_refused_without_a_good_probe),
        cmocka_unit_test(test_shm_ring_reference_cancelled_by_a_failed_wait_is_dropped),
        cmocka_unit_test(test_shm_ring_reference_between_processes_shares_the_copy),
        cmocka_unit_test(test_shm_ring_reference_writer_killed_while_waiting_delivers_nothing),
        cmocka_unit_test(test_shm_ring_reference_reader_killed_ends_the_writers_wait),
        cmocka_unit_test(test_shm_ring_reference_taken_outlives_the_writers_failed_wait),
        L(test_shm_ring_link_then_ring_in_order_behind_the_mark),
        L(test_shm_ring_is_drained_before_a_daemon_message),
        L(test_shm_ring_eof_takes_the_whole_messages_first),
        L(test_shm_ring_shm_frame_without_descriptors_closes_the_link),
        L(test_shm_ring_first_send_hands_a_ring_over_on_the_link),
        L(test_shm_ring_send_torn_by_the_peers_end_fails_and_is_not_resent),
        L(test_shm_ring_send_with_nothing_published_goes_whole_through_the_daemon),
        L(test_shm_ring_grows_for_a_large_message_after_the_old_rings_frames),
        L(test_shm_ring_peers_larger_ring_takes_over_after_the_old_ones_frames),
    };
#undef L
    return cmocka_run_group_tests_name("shm_ring", tests, NULL, NULL);
}
