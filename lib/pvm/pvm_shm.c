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
 * Memory order: the writer copies, then stores head with release; the
 * reader loads head with acquire, copies, then stores tail with release.
 * The sleep flags follow the usual pattern: the sleeper stores its flag,
 * fences, and looks again; the other side stores its counter, fences and
 * reads the flag, so one of them always sees the other.
 */
#include "pvm_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x4c565348u   /* "LVSH" */
#define SHM_VERSION 1u
#define SHM_CTL 4096u           /* the control page before the data */
#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* The control page, shared; writer's and reader's words on lines of their own. */
struct shm_ctl {
    uint32_t magic;
    uint32_t version;
    uint64_t size;
    unsigned char pad0[48];
    _Atomic uint64_t head;
    _Atomic uint32_t writer_waits;
    unsigned char pad1[52];
    _Atomic uint64_t tail;
    _Atomic uint32_t reader_waits;
};

_Static_assert(sizeof(struct shm_ctl) <= SHM_CTL, "control page");
_Static_assert(offsetof(struct shm_ctl, head) == 64, "layout");
_Static_assert(offsetof(struct shm_ctl, tail) == 128, "layout");

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
    /* Reader: the frame being assembled. */
    int in_frame;
    struct wire_hdr h;
    unsigned char *body;
    size_t got;
};

/* ---- settings ---- */

size_t
pvm__shm_ring_size(void)
{
    const char *s = getenv("LIQUIDVM_SHM_RING");
    unsigned long long want;
    size_t size = PVM__SHM_MIN;
    char *end;

    if (s == NULL || *s == '\0')
        return PVM__SHM_DEFAULT;
    want = strtoull(s, &end, 0);
    if (*end != '\0')
        return PVM__SHM_DEFAULT;
    if (want == 0)
        return 0;
    while (size < want && size < PVM__SHM_MAX)
        size <<= 1;
    return size;
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
        r->data_efd = r->space_efd = -1;
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

/* Until there is room past head: spin, then sleep through wait. */
static int
wait_room(struct pvm__shm *r, uint64_t head, pvm__shm_wait_cb wait, void *arg)
{
    uint64_t until = now_ns() + (uint64_t)pvm__shm_spin_budget_ns();
    int rc, n = 0, spun = room(r, head) == 0;

    while (room(r, head) == 0) {
        if ((++n & 31) == 0) {
            if (now_ns() >= until)
                break;
            /* The reader may share our CPU: let it run. */
            sched_yield();
        }
        pvm__shm_relax();
    }
    if (spun)
        pvm__shm_spin_result(room(r, head) != 0);
    while (room(r, head) == 0) {
        atomic_store_explicit(&r->ctl->writer_waits, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (room(r, head) != 0)
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
    if (r->torn)
        return -EPIPE;
    if (len > UINT32_MAX)
        return -EMSGSIZE;
    h->len = (uint32_t)len;
    wire_hdr_pack(h, hdr);
    for (int i = 0; i < 2; i++) {
        while (n[i] > 0) {
            size_t k = room(r, head);

            if (k == 0) {
                /* Full: what is written goes now, and we wait for the reader. */
                if (head != published)
                    publish(r, published = head);
                if ((rc = wait_room(r, head, wait, arg)) != 0) {
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

int
pvm__shm_read(struct pvm__shm *r, uint32_t max, struct wire_hdr *h, unsigned char **body)
{
    uint64_t head = atomic_load_explicit(&r->ctl->head, memory_order_acquire), start = r->pos;
    unsigned char hb[WIRE_HDR_LEN];
    size_t avail, n;

    if (head - r->pos > r->size)
        return -EPROTO;
    avail = (size_t)(head - r->pos);
    if (!r->in_frame) {
        if (avail < WIRE_HDR_LEN)
            return 0;
        copy_out(r, r->pos, hb, WIRE_HDR_LEN);
        if (wire_hdr_unpack(hb, max, &r->h) != 0 || r->h.type != WIRE_T_MSG)
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
