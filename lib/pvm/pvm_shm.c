/*
 * pvm_shm.c - one shared-memory ring between two tasks of one host: the
 * segment, its writer and its reader (issue 31, shared memory on one host).
 * The layout, the publishing rule and the wake-ups are pvm_shm.h's; when a
 * ring is made, handed over and used is pvm_link.c's.
 *
 * The segment is a memfd sealed against shrinking and growing before it is
 * handed over, so that no peer can make the other's loads fault (SIGBUS)
 * by truncating it; the reader checks the seals, the magic, the version
 * and the size against the file before it believes any of them.  After
 * that the only shared words it reads are head and writer_waits, and a
 * head that runs ahead of the tail by more than the ring is an error.
 *
 * A write that fails (its wait for room gave up: the reader's end closed,
 * the daemon went away) never resumes its frame.  If it had published
 * part of the frame, the ring is torn (pvm__shm_torn) and takes no other
 * write: the reader holds those bytes as a partial frame, hands nothing of
 * it on, and drops it when its end closes.  pvm_link.c then reports the
 * error to the sender instead of sending the message again through the
 * daemons: a copy there would count on the reader dropping the partial
 * frame before anything could complete it, and would buy nothing, since a
 * ring write fails only when its reader is gone (the daemons would drop
 * the copy) or the task's own wait failed (they could not take it).  If
 * nothing of the frame was published, the reader saw nothing of it and
 * the message may go whole another way.
 *
 * References (pvm_shm.h) copy out of and into the other process's memory,
 * so each end takes the other's pid from the kernel (pvm_link.c gives
 * SO_PEERCRED), never from the segment, and holds a pidfd of it.  The
 * reader accepts references only if the writer's probe, read through that
 * pid at the address the writer gave, equals the probe in its own mapping
 * (that process maps this very segment: not a forked copy that took the
 * ring, whose writes the writer also refuses by its own pid), and it
 * throws a copy away if the writer has exited by the end of it (the pid
 * might have been reused midway).  The writer's chunks go only into the
 * buffer the reader named for this reference, while its state is TAKEN;
 * claims are counted before and after, so that a reader that gives up
 * waits until the writer is out of its buffer before freeing it.
 *
 * Memory order: the writer copies, then stores head with release; the
 * reader loads head with acquire, copies, then stores tail with release.
 * The sleep flags follow the usual pattern: the sleeper stores its flag,
 * fences, and looks again; the other side stores its counter, fences and
 * reads the flag, so one of them always sees the other.
 */
#include "pvm_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x4c565348u   /* "LVSH" */
#define SHM_VERSION 2u
#define SHM_CTL 4096u           /* the control page before the data */
#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define SHM_PROBE 16u
#define SHM_REF_LEN (WIRE_HDR_LEN + 8u)  /* a reference's body: the header, the address */
#define SHM_REF_CHUNK (128u << 10)         /* a shared copy's unit */
#define SHM_REF_STALL_NS 2000000000ull     /* a copy that makes no progress this long fails */

/* A reference's life (ref_state): the writer posts it, the reader takes it
 * (or the writer cancels it first), and the reader ends it. */
enum { REF_NONE, REF_POSTED, REF_TAKEN, REF_CANCEL, REF_DONE, REF_FAILED, REF_LOST };

/* The control page, shared; writer's and reader's words on lines of their own. */
struct shm_ctl {
    uint32_t magic;
    uint32_t version;
    uint64_t size;
    uint32_t wpid;              /* the writer that offers references */
    uint32_t pad;
    uint64_t probe_addr;        /* where probe is in the writer's memory */
    unsigned char probe[SHM_PROBE];
    unsigned char pad0[16];
    _Atomic uint64_t head;
    _Atomic uint32_t writer_waits;
    unsigned char pad1[52];
    _Atomic uint64_t tail;
    _Atomic uint32_t reader_waits;
    _Atomic uint32_t ref_ok;    /* the reader takes references */
    _Atomic uint32_t reader_recv; /* the reader waits for a message */
    unsigned char pad2[44];
    /* A reference in flight (one at a time): its state, and the copy that
     * both ends share, chunk by chunk, once the reader has said where. */
    _Atomic uint32_t ref_state;
    uint32_t ref_nchunks;       /* reader: chunks of SHM_REF_CHUNK */
    _Atomic uint32_t ref_next;  /* both: the next chunk to claim */
    _Atomic uint32_t ref_done;  /* both: chunks copied */
    _Atomic uint32_t ref_wclaimed; /* writer: claims begun */
    _Atomic uint32_t ref_wended;   /* writer: claims ended */
    _Atomic uint32_t ref_redo;  /* writer: 1 + a chunk it could not copy */
    uint32_t pad3;
    _Atomic uint64_t ref_dst;   /* reader: where the body goes, in its memory */
};

_Static_assert(sizeof(struct shm_ctl) <= SHM_CTL, "control page");
_Static_assert(offsetof(struct shm_ctl, head) == 64, "layout");
_Static_assert(offsetof(struct shm_ctl, tail) == 128, "layout");
_Static_assert(offsetof(struct shm_ctl, ref_state) == 192, "layout");

struct pvm__shm {
    struct shm_ctl *ctl;
    unsigned char *data;
    size_t size;                /* data bytes, a power of two */
    size_t maplen;
    int data_efd;               /* rung by the writer, slept on by the reader */
    int space_efd;              /* rung by the reader, slept on by the writer */
    int writer;                 /* this end writes */
    int torn;                   /* writer: a write failed after publishing part of its frame */
    uint64_t pos;               /* writer: bytes written; reader: bytes consumed */
    int armed, sticky;          /* reader: reader_waits is set */
    /* References: the peer process (a pidfd: is it still the one?). */
    pid_t peer;
    int peer_fd;
    pid_t owner;                /* the process that offered or accepted them */
    int nohelp;                 /* writer: a copy into the reader's memory failed */
    int dead;                   /* writer: a cancelled reference is in the ring */
    unsigned long refs;         /* frames moved by reference */
    unsigned long helped;       /* writer: chunks it copied into the reader's memory */
    size_t ref_min;             /* writer: frames from this size, 0: none */
    /* Reader: the frame being assembled. */
    int in_frame;
    struct wire_hdr h;
    unsigned char *body;
    size_t got;
};

/* ---- settings ---- */

/* 1 with the number the environment variable name holds, 0 if unset or not one. */
static int
env_number(const char *name, unsigned long long *v)
{
    const char *s = getenv(name);
    char *end;

    if (s == NULL || *s == '\0')
        return 0;
    *v = strtoull(s, &end, 0);
    return *end == '\0';
}

/*
 * A ring size from the environment variable name: a power of two within
 * PVM__SHM_MIN..PVM__SHM_MAX, rounded up; dflt when unset or not a number;
 * 0 for 0 when zero is allowed (no rings).
 */
static size_t
env_size(const char *name, size_t dflt, int zero)
{
    unsigned long long want;
    size_t size = PVM__SHM_MIN;

    if (!env_number(name, &want))
        return dflt;
    if (want == 0 && zero)
        return 0;
    while (size < want && size < PVM__SHM_MAX)
        size <<= 1;
    return size;
}

size_t
pvm__shm_ring_size(void)
{
    return env_size("LIQUIDVM_SHM_RING", PVM__SHM_DEFAULT, 1);
}

size_t
pvm__shm_ring_max(void)
{
    return env_size("LIQUIDVM_SHM_RING_MAX", PVM__SHM_GROW_DEFAULT, 0);
}

size_t
pvm__shm_size(const struct pvm__shm *r)
{
    return r->size;
}

size_t
pvm__shm_ref_min(void)
{
    unsigned long long v;

    if (!env_number("LIQUIDVM_SHM_REF", &v))
        return PVM__SHM_REF_DEFAULT;
    if (v == 0)
        return 0;
    return v < PVM__SHM_MIN ? PVM__SHM_MIN : v > UINT32_MAX ? UINT32_MAX : (size_t)v;
}

int
pvm__shm_spin_us(void)
{
    static int us = -1;
    const char *s;

    if (us < 0) {
        s = getenv("LIQUIDVM_SHM_SPIN_US");
        us = s && *s ? atoi(s) : PVM__SHM_SPIN_US;
        if (us < 0 || us > 1000)
            us = PVM__SHM_SPIN_US;      /* a spin stays short, whatever is asked */
    }
    return us;
}

/*
 * The spin adapts: a spin that ends with the peer's answer doubles the
 * budget (up to pvm__shm_spin_us), one that runs out halves it (down to
 * PVM__SHM_SPIN_MIN_NS, so that a peer that answers quickly again is
 * noticed).  On a host whose CPUs are busy the peer often cannot run while
 * we spin; a fixed 50 us spin then cost 108 us round trips where sleeping
 * at once costs 5-7 us.
 */
static long spin_budget = -1;

long
pvm__shm_spin_budget_ns(void)
{
    if (spin_budget < 0)
        spin_budget = (long)pvm__shm_spin_us() * 1000;
    return spin_budget;
}

void
pvm__shm_spin_result(int answered)
{
    long max = (long)pvm__shm_spin_us() * 1000;

    if (spin_budget < 0)
        spin_budget = max;
    if (answered)
        spin_budget = spin_budget * 2 > max ? max : spin_budget * 2;
    else
        spin_budget = spin_budget / 2 < PVM__SHM_SPIN_MIN_NS ? PVM__SHM_SPIN_MIN_NS
                                                             : spin_budget / 2;
    if (max == 0)
        spin_budget = 0;
}

/* ---- helpers ---- */

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
ring_fd(int fd)
{
    uint64_t one = 1;

    /* EAGAIN means the counter is already far from 0: awake anyway. */
    (void)!write(fd, &one, sizeof(one));
}

static void
drain_fd(int fd)
{
    uint64_t v;

    (void)!read(fd, &v, sizeof(v));
}

/* Copy n bytes into the ring at stream position pos, across its end. */
static void
copy_in(struct pvm__shm *r, uint64_t pos, const unsigned char *p, size_t n)
{
    size_t off = (size_t)(pos & (r->size - 1)), first = r->size - off;

    if (first >= n) {
        memcpy(r->data + off, p, n);
    } else {
        memcpy(r->data + off, p, first);
        memcpy(r->data, p + first, n - first);
    }
}

static void
copy_out(const struct pvm__shm *r, uint64_t pos, unsigned char *p, size_t n)
{
    size_t off = (size_t)(pos & (r->size - 1)), first = r->size - off;

    if (first >= n) {
        memcpy(p, r->data + off, n);
    } else {
        memcpy(p, r->data + off, first);
        memcpy(p + first, r->data, n - first);
    }
}

static struct pvm__shm *
shm_new(void)
{
    struct pvm__shm *r = calloc(1, sizeof(*r));

    if (r != NULL)
        r->data_efd = r->space_efd = r->peer_fd = -1;
    return r;
}

/* ---- making and taking a ring ---- */

int
pvm__shm_create(size_t size, struct pvm__shm **out, int fds[PVM__SHM_NFD])
{
    struct pvm__shm *r;
    void *map;
    int mfd = -1, rc;

    if (size < PVM__SHM_MIN || size > PVM__SHM_MAX || (size & (size - 1)) != 0)
        return -EINVAL;
    if ((r = shm_new()) == NULL)
        return -ENOMEM;
    r->size = size;
    r->maplen = SHM_CTL + size;
    r->writer = 1;
    if ((mfd = memfd_create("pvm-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0 ||
        ftruncate(mfd, (off_t)r->maplen) != 0 || fcntl(mfd, F_ADD_SEALS, SHM_SEALS) != 0)
        goto bad;
    map = mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (map == MAP_FAILED)
        goto bad;
    r->ctl = map;
    r->data = (unsigned char *)map + SHM_CTL;
    r->ctl->magic = SHM_MAGIC;
    r->ctl->version = SHM_VERSION;
    r->ctl->size = size;
    if ((r->data_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        (r->space_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        goto bad;
    fds[0] = mfd;
    fds[1] = r->data_efd;
    fds[2] = r->space_efd;
    *out = r;
    return 0;
bad:
    rc = -errno;
    if (mfd >= 0)
        close(mfd);
    pvm__shm_close(r);
    return rc ? rc : -EIO;
}

/* 1 if fd is an eventfd: what the writer's peer must have sent. */
static int
is_eventfd(int fd)
{
    char path[64], link[64];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
        return 0;
    link[n] = '\0';
    return strcmp(link, "anon_inode:[eventfd]") == 0;
}

int
pvm__shm_attach(const int fds[PVM__SHM_NFD], struct pvm__shm **out)
{
    struct pvm__shm *r = NULL;
    struct shm_ctl probe;
    struct stat st;
    void *map;
    int rc = -EPROTO, seals;

    if (fstat(fds[0], &st) != 0 || !S_ISREG(st.st_mode) ||
        (seals = fcntl(fds[0], F_GET_SEALS)) < 0 || (seals & SHM_SEALS) != SHM_SEALS ||
        st.st_size < (off_t)(SHM_CTL + PVM__SHM_MIN) || !is_eventfd(fds[1]) ||
        !is_eventfd(fds[2]))
        goto bad;
    if (pread(fds[0], &probe, sizeof(probe), 0) != (ssize_t)sizeof(probe) ||
        probe.magic != SHM_MAGIC || probe.version != SHM_VERSION ||
        probe.size < PVM__SHM_MIN || probe.size > PVM__SHM_MAX ||
        (probe.size & (probe.size - 1)) != 0 || (off_t)(SHM_CTL + probe.size) != st.st_size)
        goto bad;
    rc = -ENOMEM;
    if ((r = shm_new()) == NULL)
        goto bad;
    r->size = (size_t)probe.size;
    r->maplen = SHM_CTL + r->size;
    map = mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    if (map == MAP_FAILED) {
        rc = -errno;
        goto bad;
    }
    r->ctl = map;
    r->data = (unsigned char *)map + SHM_CTL;
    r->data_efd = fds[1];
    r->space_efd = fds[2];
    r->pos = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
    close(fds[0]);
    *out = r;
    return 0;
bad:
    free(r);
    for (int i = 0; i < PVM__SHM_NFD; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

void
pvm__shm_close(struct pvm__shm *r)
{
    if (r == NULL)
        return;
    if (r->ctl != NULL)
        munmap(r->ctl, r->maplen);
    if (r->data_efd >= 0)
        close(r->data_efd);
    if (r->space_efd >= 0)
        close(r->space_efd);
    if (r->peer_fd >= 0)
        close(r->peer_fd);
    free(r->body);
    free(r);
}

/* ---- the writer ---- */

int
pvm__shm_space_fd(const struct pvm__shm *r)
{
    return r->space_efd;
}

/* Make [.., head) visible and wake a sleeping reader. */
static void
publish(struct pvm__shm *r, uint64_t head)
{
    atomic_store_explicit(&r->ctl->head, head, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->ctl->reader_waits, memory_order_relaxed))
        ring_fd(r->data_efd);
}

static size_t
room(const struct pvm__shm *r, uint64_t head)
{
    uint64_t tail = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);

    /* A tail beyond head is a broken reader: no room, ever. */
    return head - tail > r->size ? 0 : r->size - (size_t)(head - tail);
}

/*
 * Until there are need bytes of room past head: spin, then sleep through
 * wait.  spin_ns: how long to spin, or -1 for the adaptive budget (which
 * the spin's outcome then adjusts).
 */
static void ref_help(struct pvm__shm *r, const unsigned char *body, size_t len);

static int
wait_room(struct pvm__shm *r, uint64_t head, size_t need, long spin_ns, const unsigned char *help,
          size_t help_len, pvm__shm_wait_cb wait, void *arg)
{
    uint64_t until = now_ns() + (uint64_t)(spin_ns < 0 ? pvm__shm_spin_budget_ns() : spin_ns);
    int rc, n = 0, spun = spin_ns < 0 && room(r, head) < need;

    while (room(r, head) < need) {
        if (help != NULL)
            ref_help(r, help, help_len);
        if ((++n & 31) == 0) {
            if (now_ns() >= until)
                break;
            /* The reader may share our CPU: let it run. */
            sched_yield();
        }
        pvm__shm_relax();
    }
    if (spun)
        pvm__shm_spin_result(room(r, head) >= need);
    while (room(r, head) < need) {
        atomic_store_explicit(&r->ctl->writer_waits, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (room(r, head) >= need)
            break;
        rc = wait(r, arg);
        atomic_store_explicit(&r->ctl->writer_waits, 0, memory_order_relaxed);
        drain_fd(r->space_efd);
        if (rc != 0)
            return rc;
    }
    atomic_store_explicit(&r->ctl->writer_waits, 0, memory_order_relaxed);
    return 0;
}

/* ---- references ---- */

static int
pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* 1 if the process behind pidfd fd has exited (a failed poll says nothing). */
static int
peer_exited(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };

    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

static void
put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t
get_be64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

int
pvm__shm_ref_offer(struct pvm__shm *r, pid_t peer)
{
    size_t min = pvm__shm_ref_min();
    int fd;

    if (!r->writer || min == 0 || peer <= 0 || r->peer_fd >= 0)
        return 0;
    if (getrandom(r->ctl->probe, SHM_PROBE, 0) != (ssize_t)SHM_PROBE)
        return 0;
    if ((fd = pidfd(peer)) < 0)
        return 0;
    r->ctl->probe_addr = (uint64_t)(uintptr_t)r->ctl->probe;
    r->ctl->wpid = (uint32_t)getpid();
    r->owner = getpid();
    r->peer = peer;
    r->peer_fd = fd;
    r->ref_min = min;
    return 1;
}

int
pvm__shm_ref_accept(struct pvm__shm *r, pid_t peer)
{
    unsigned char seen[SHM_PROBE], want[SHM_PROBE];
    struct iovec lv = { seen, SHM_PROBE }, rv;
    int fd;

    if (r->writer || pvm__shm_ref_min() == 0 || peer <= 0 || r->peer_fd >= 0 ||
        r->ctl->wpid != (uint32_t)peer)
        return 0;
    if ((fd = pidfd(peer)) < 0)
        return 0;
    /* The probe, read through the writer's address space, is the one in
     * our mapping: that process maps this very segment where it says. */
    memcpy(want, r->ctl->probe, SHM_PROBE);
    rv.iov_base = (void *)(uintptr_t)r->ctl->probe_addr;
    rv.iov_len = SHM_PROBE;
    if (process_vm_readv(peer, &lv, 1, &rv, 1, 0) != (ssize_t)SHM_PROBE ||
        memcmp(seen, want, SHM_PROBE) != 0 || peer_exited(fd)) {
        close(fd);
        return 0;
    }
    r->peer = peer;
    r->peer_fd = fd;
    r->owner = getpid();
    atomic_store_explicit(&r->ctl->ref_ok, 1, memory_order_release);
    return 1;
}

/*
 * A reference taken by the reader that the writer could not wait for:
 * wait on, sleeping on the space eventfd, until the reader ends it or dies.
 */
static uint32_t
ref_wait_taken(struct pvm__shm *r)
{
    uint32_t st;

    while ((st = atomic_load_explicit(&r->ctl->ref_state, memory_order_acquire)) == REF_TAKEN) {
        struct pollfd p[2] = { { .fd = r->space_efd, .events = POLLIN },
                               { .fd = r->peer_fd, .events = POLLIN } };

        atomic_store_explicit(&r->ctl->writer_waits, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&r->ctl->ref_state, memory_order_acquire) != REF_TAKEN)
            break;
        (void)poll(p, 2, 100);
        atomic_store_explicit(&r->ctl->writer_waits, 0, memory_order_relaxed);
        drain_fd(r->space_efd);
        if (p[1].revents != 0) {
            st = atomic_load_explicit(&r->ctl->ref_state, memory_order_acquire);
            return st == REF_TAKEN ? REF_LOST : st;
        }
    }
    atomic_store_explicit(&r->ctl->writer_waits, 0, memory_order_relaxed);
    return atomic_load_explicit(&r->ctl->ref_state, memory_order_acquire);
}

/*
 * While we wait for the reader: copy chunks of the body into the buffer it
 * named, as it copies others out of our memory.  Each claim is counted
 * before and after, so that a reader that gives up knows when we are out
 * of its buffer; a chunk we cannot write goes back to the reader (redo),
 * and we help no more on this ring.
 */
static void
ref_help(struct pvm__shm *r, const unsigned char *body, size_t len)
{
    struct shm_ctl *c = r->ctl;
    struct iovec lv, rv;
    uint64_t dst;
    uint32_t i, n;
    size_t off, k;

    if (r->nohelp || atomic_load_explicit(&c->ref_state, memory_order_acquire) != REF_TAKEN ||
        (dst = atomic_load_explicit(&c->ref_dst, memory_order_acquire)) == 0)
        return;
    n = c->ref_nchunks;
    if (n != (len + SHM_REF_CHUNK - 1) / SHM_REF_CHUNK)
        return;                 /* not this body's: a broken reader */
    for (uint32_t claims = 0; claims < n; claims++) {
        /* The pid is still the reader's (not reused): it is alive. */
        if (peer_exited(r->peer_fd)) {
            r->nohelp = 1;
            return;
        }
        atomic_fetch_add_explicit(&c->ref_wclaimed, 1, memory_order_seq_cst);
        i = atomic_fetch_add_explicit(&c->ref_next, 1, memory_order_seq_cst);
        if (i < n) {
            off = (size_t)i * SHM_REF_CHUNK;
            k = len - off < SHM_REF_CHUNK ? len - off : SHM_REF_CHUNK;
            lv = (struct iovec){ (void *)(uintptr_t)(body + off), k };
            rv = (struct iovec){ (void *)(uintptr_t)(dst + off), k };
            if (process_vm_writev(r->peer, &lv, 1, &rv, 1, 0) == (ssize_t)k) {
                r->helped++;
                atomic_fetch_add_explicit(&c->ref_done, 1, memory_order_release);
            } else {
                r->nohelp = 1;
                atomic_store_explicit(&c->ref_redo, i + 1, memory_order_release);
            }
        }
        atomic_fetch_add_explicit(&c->ref_wended, 1, memory_order_seq_cst);
        if (i >= n || r->nohelp)
            return;
    }
}

/*
 * A frame too large for the room left, sent by reference: a small frame
 * with the message's header and its body's address in our memory, from
 * which the reader copies it (process_vm_readv), once.  We return only
 * when the reader is done with our memory, or has certainly not begun.
 */
static int
write_ref(struct pvm__shm *r, struct wire_hdr *h, const void *body, size_t len,
          pvm__shm_wait_cb wait, void *arg)
{
    struct wire_hdr rh = { .type = WIRE_T_DIRECT, .tag = WIRE_DIRECT_REF, .src = h->src,
                           .dst = h->dst, .len = SHM_REF_LEN };
    unsigned char f[WIRE_HDR_LEN + SHM_REF_LEN];
    uint64_t head = r->pos;
    uint32_t st;
    int rc;

    h->len = (uint32_t)len;
    wire_hdr_pack(&rh, f);
    wire_hdr_pack(h, f + WIRE_HDR_LEN);
    put_be64(f + 2 * WIRE_HDR_LEN, (uint64_t)(uintptr_t)body);
    if ((rc = wait_room(r, head, sizeof(f), -1, NULL, 0, wait, arg)) != 0)
        return rc;              /* nothing published */
    atomic_store_explicit(&r->ctl->ref_state, REF_POSTED, memory_order_relaxed);
    copy_in(r, head, f, sizeof(f));
    r->pos = head += sizeof(f);
    publish(r, head);
    /*
     * Until the reader has consumed everything, this frame last.  The copy
     * takes time in proportion to its size; a sleep here costs a wake-up
     * that may take longer still (a halted CPU), so the spin covers the
     * copy at a few GB/s, yielding to a reader that shares our CPU.
     */
    rc = wait_room(r, head, r->size, pvm__shm_spin_us() > 0 ? (long)(len / 4) + 20000 : 0,
                   body, len, wait, arg);
    if (rc != 0) {
        st = REF_POSTED;
        if (atomic_compare_exchange_strong(&r->ctl->ref_state, &st, REF_CANCEL)) {
            /* The reader will drop it unread; a reference posted behind
             * it would be taken for it, so the ring takes no more. */
            r->dead = 1;
            return rc;
        }
        if (st == REF_TAKEN)
            st = ref_wait_taken(r);
        if (st == REF_DONE) {
            r->refs++;
            return 0;
        }
        r->torn = st == REF_LOST;
        return rc;
    }
    st = atomic_load_explicit(&r->ctl->ref_state, memory_order_acquire);
    if (st != REF_DONE)
        return -EPROTO;
    r->refs++;
    return 0;
}

int
pvm__shm_write(struct pvm__shm *r, struct wire_hdr *h, const void *body, size_t len,
               pvm__shm_wait_cb wait, void *arg)
{
    unsigned char hdr[WIRE_HDR_LEN];
    const unsigned char *p[2] = { hdr, body };
    size_t n[2] = { WIRE_HDR_LEN, len };
    uint64_t head = r->pos, published = head;
    int rc;

    /* Behind a partial frame, a new one would be read as its rest. */
    if (r->torn || r->dead)
        return -EPIPE;
    if (len > UINT32_MAX)
        return -EMSGSIZE;
    /*
     * By reference only to a reader that waits for a message now (it
     * copies at once, with our help): one that computes, or is sending
     * itself, would keep us until it next reads, where the ring lets us go
     * once the frame's rest fits.
     */
    if (r->ref_min > 0 && len >= r->ref_min &&
        (len + WIRE_HDR_LEN > room(r, head) || len >= 4 * r->ref_min) &&
        atomic_load_explicit(&r->ctl->reader_recv, memory_order_relaxed) &&
        atomic_load_explicit(&r->ctl->ref_ok, memory_order_acquire) && getpid() == r->owner)
        return write_ref(r, h, body, len, wait, arg);
    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    for (int i = 0; i < 2; i++) {
        while (n[i] > 0) {
            size_t k = room(r, head);

            if (k == 0) {
                /* Full: what is written goes now, and we wait for the reader. */
                if (head != published)
                    publish(r, published = head);
                if ((rc = wait_room(r, head, 1, -1, NULL, 0, wait, arg)) != 0) {
                    /* Everything copied is published by now. */
                    r->torn = head != r->pos;
                    r->pos = head;
                    return rc;
                }
                continue;
            }
            if (k > n[i])
                k = n[i];
            if (k > PVM__SHM_CHUNK)
                k = PVM__SHM_CHUNK;
            copy_in(r, head, p[i], k);
            head += k;
            p[i] += k;
            n[i] -= k;
            /* A large frame streams: the reader copies while we do. */
            if (head - published >= PVM__SHM_CHUNK)
                publish(r, published = head);
        }
    }
    if (head != published)
        publish(r, head);
    r->pos = head;
    return 0;
}

int
pvm__shm_ref_accepted(const struct pvm__shm *r)
{
    return atomic_load_explicit(&r->ctl->ref_ok, memory_order_acquire) != 0;
}

void
pvm__shm_ref_stats(const struct pvm__shm *r, unsigned long *refs, unsigned long *helped)
{
    *refs = r->refs;
    *helped = r->helped;
}

int
pvm__shm_torn(const struct pvm__shm *r)
{
    return r->torn;
}

/* ---- the reader ---- */

int
pvm__shm_data_fd(const struct pvm__shm *r)
{
    return r->data_efd;
}

int
pvm__shm_readable(const struct pvm__shm *r)
{
    return atomic_load_explicit(&r->ctl->head, memory_order_relaxed) != r->pos;
}

int
pvm__shm_partial(const struct pvm__shm *r)
{
    return r->in_frame;
}

int
pvm__shm_arm(struct pvm__shm *r)
{
    if (!r->armed) {
        r->armed = 1;
        atomic_store_explicit(&r->ctl->reader_waits, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
    }
    return pvm__shm_readable(r);
}

void
pvm__shm_disarm(struct pvm__shm *r)
{
    if (!r->armed)
        return;
    if (!r->sticky) {
        r->armed = 0;
        atomic_store_explicit(&r->ctl->reader_waits, 0, memory_order_relaxed);
    }
    drain_fd(r->data_efd);
}

void
pvm__shm_receiving(struct pvm__shm *r, int on)
{
    atomic_store_explicit(&r->ctl->reader_recv, on ? 1u : 0u, memory_order_relaxed);
}

void
pvm__shm_sticky(struct pvm__shm *r)
{
    r->sticky = 1;
    (void)pvm__shm_arm(r);
}

/* Give the bytes read back to the writer, and wake it if it sleeps. */
static void
release(struct pvm__shm *r)
{
    atomic_store_explicit(&r->ctl->tail, r->pos, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->ctl->writer_waits, memory_order_relaxed))
        ring_fd(r->space_efd);
}

/* Spin a little, yield now and then, and in the end sleep briefly: 0, or
 * -EPIPE once the writer is seen gone. */
static int
ref_pause(struct pvm__shm *r, unsigned *n)
{
    if ((++*n & 31) == 0)
        sched_yield();
    if ((*n & 1023) == 0) {
        if (peer_exited(r->peer_fd))
            return -EPIPE;
        if (*n > 16384)
            nanosleep(&(struct timespec){ 0, 50000 }, NULL);
    }
    pvm__shm_relax();
    return 0;
}

/*
 * Copy a referenced body of len bytes at src in the writer's memory into
 * b, chunk by chunk, the writer copying others into b (ref_help) once we
 * name it.  0, or an error; *busy is set when the writer may still be
 * writing into b (it stalled mid-chunk for SHM_REF_STALL_NS): then b must
 * not be freed.  What the writer says in the counters is believed: a
 * writer that lies can only spoil its own message (or give us back bytes
 * of our own heap, which, being allowed to copy into our memory, it could
 * read anyway).
 */
static int
ref_copy(struct pvm__shm *r, unsigned char *b, size_t len, uint64_t src, int *busy)
{
    struct shm_ctl *c = r->ctl;
    uint32_t n = (uint32_t)((len + SHM_REF_CHUNK - 1) / SHM_REF_CHUNK), i, seen = 0, d;
    uint64_t since = 0;
    unsigned spins = 0;
    int rc = 0;

    c->ref_nchunks = n;
    atomic_store_explicit(&c->ref_next, 0, memory_order_relaxed);
    atomic_store_explicit(&c->ref_done, 0, memory_order_relaxed);
    atomic_store_explicit(&c->ref_redo, 0, memory_order_relaxed);
    atomic_store_explicit(&c->ref_dst, (uint64_t)(uintptr_t)b, memory_order_seq_cst);
    for (;;) {
        if ((i = atomic_exchange_explicit(&c->ref_redo, 0, memory_order_acquire)) != 0) {
            i--;
        } else if ((i = atomic_fetch_add_explicit(&c->ref_next, 1, memory_order_seq_cst)) >= n) {
            /* All claimed: wait for the writer's chunks, while they come. */
            if ((d = atomic_load_explicit(&c->ref_done, memory_order_acquire)) >= n)
                break;
            if ((spins & 255) == 0) {
                if (since == 0 || d != seen) {
                    seen = d;
                    since = now_ns();
                } else if (now_ns() - since > SHM_REF_STALL_NS) {
                    rc = -ETIMEDOUT;
                    goto stop;
                }
            }
            if ((rc = ref_pause(r, &spins)) != 0)
                goto stop;
            continue;
        }
        size_t off = (size_t)i * SHM_REF_CHUNK;
        size_t k = len - off < SHM_REF_CHUNK ? len - off : SHM_REF_CHUNK;
        struct iovec lv = { b + off, k }, rv = { (void *)(uintptr_t)(src + off), k };

        if (i >= n || process_vm_readv(r->peer, &lv, 1, &rv, 1, 0) != (ssize_t)k) {
            rc = -EPROTO;
            goto stop;
        }
        atomic_fetch_add_explicit(&c->ref_done, 1, memory_order_release);
    }
    atomic_store_explicit(&c->ref_dst, 0, memory_order_relaxed);
    return 0;
stop:
    /*
     * No more claims; then wait until the writer's are all over.  The
     * exchange and the loads are sequentially consistent: a claim the
     * writer counted before our exchange is seen here.
     */
    (void)atomic_exchange_explicit(&c->ref_next, UINT32_MAX / 2, memory_order_seq_cst);
    atomic_store_explicit(&c->ref_dst, 0, memory_order_seq_cst);
    spins = 0;
    since = now_ns();
    while (atomic_load_explicit(&c->ref_wended, memory_order_seq_cst) !=
           atomic_load_explicit(&c->ref_wclaimed, memory_order_seq_cst)) {
        if (ref_pause(r, &spins) != 0)
            break;              /* the writer has exited: out of b */
        if (now_ns() - since > SHM_REF_STALL_NS) {
            *busy = 1;
            break;
        }
    }
    return rc;
}

/*
 * A reference frame, whole at r->pos: copy the body out of the writer's
 * memory, once, unless the writer cancelled it first.  1 with a frame, 0
 * if it was cancelled, or an error (the writer hears REF_FAILED).
 */
static int
read_ref(struct pvm__shm *r, uint32_t max, struct wire_hdr *h, unsigned char **body)
{
    unsigned char f[SHM_REF_LEN], *b = NULL;
    struct wire_hdr in;
    uint32_t st = REF_POSTED;
    int rc = -EPROTO, busy = 0;

    copy_out(r, r->pos + WIRE_HDR_LEN, f, SHM_REF_LEN);
    if (wire_hdr_unpack(f, max, &in) != 0 || in.type != WIRE_T_MSG)
        return -EPROTO;
    /* A forked copy of the reader: the writer would copy into its parent. */
    if (getpid() != r->owner)
        return -EPROTO;
    if (!atomic_compare_exchange_strong(&r->ctl->ref_state, &st, REF_TAKEN)) {
        if (st != REF_CANCEL)
            return -EPROTO;
        r->pos += WIRE_HDR_LEN + SHM_REF_LEN;
        release(r);
        return 0;
    }
    if (in.len > 0) {
        if ((b = malloc(in.len)) == NULL) {
            rc = -ENOMEM;
            goto fail;
        }
        if ((rc = ref_copy(r, b, in.len, get_be64(f + WIRE_HDR_LEN), &busy)) != 0)
            goto fail;
        /* Alive after the copy: the pid was the writer's all along. */
        if (peer_exited(r->peer_fd)) {
            rc = -EPIPE;
            goto fail;
        }
    }
    atomic_store_explicit(&r->ctl->ref_state, REF_DONE, memory_order_release);
    r->pos += WIRE_HDR_LEN + SHM_REF_LEN;
    release(r);
    r->refs++;
    *h = in;
    *body = b;
    return 1;
fail:
    /* A writer stalled mid-chunk may write into b yet: b is left to it. */
    if (!busy)
        free(b);
    atomic_store_explicit(&r->ctl->ref_state, REF_FAILED, memory_order_release);
    r->pos += WIRE_HDR_LEN + SHM_REF_LEN;
    release(r);
    return rc;
}

int
pvm__shm_read(struct pvm__shm *r, uint32_t max, struct wire_hdr *h, unsigned char **body)
{
    uint64_t head, start;
    unsigned char hb[WIRE_HDR_LEN];
    size_t avail, n;
    int rc;

again:
    head = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
    start = r->pos;
    if (head - r->pos > r->size)
        return -EPROTO;
    avail = (size_t)(head - r->pos);
    if (!r->in_frame) {
        if (avail < WIRE_HDR_LEN)
            return 0;
        copy_out(r, r->pos, hb, WIRE_HDR_LEN);
        if (wire_hdr_unpack(hb, max, &r->h) != 0)
            return -EPROTO;
        if (r->h.type == WIRE_T_DIRECT) {
            /* Only by a writer whose references we took; published whole. */
            if (r->h.tag != WIRE_DIRECT_REF || r->h.len != SHM_REF_LEN || r->peer_fd < 0)
                return -EPROTO;
            if (avail < WIRE_HDR_LEN + SHM_REF_LEN)
                return 0;
            if ((rc = read_ref(r, max, h, body)) == 0)
                goto again;
            return rc;
        }
        if (r->h.type != WIRE_T_MSG)
            return -EPROTO;
        r->body = NULL;
        if (r->h.len > 0 && (r->body = malloc(r->h.len)) == NULL)
            return -ENOMEM;
        r->pos += WIRE_HDR_LEN;
        avail -= WIRE_HDR_LEN;
        r->got = 0;
        r->in_frame = 1;
    }
    n = r->h.len - r->got;
    if (n > avail)
        n = avail;
    if (n > 0) {
        copy_out(r, r->pos, r->body + r->got, n);
        r->pos += n;
        r->got += n;
    }
    if (r->pos != start)
        release(r);
    if (r->got < r->h.len)
        return 0;
    *h = r->h;
    *body = r->body;
    r->body = NULL;
    r->in_frame = 0;
    return 1;
}
