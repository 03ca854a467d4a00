/*
 * pvm_shm.h - libpvm3's shared-memory rings between two tasks of one host
 * (pvm_shm.c).  Internal to lib/pvm, never installed; pvm_link.c is its one
 * user in the library, tests/unit/test_shm_ring.c the other.
 *
 * A ring carries message frames one way, from the task that made it (the
 * writer) to the task it handed the descriptors to (the reader), as bytes
 * of a stream: each frame is its 32-byte wire header (wire.h) and its body.
 * The segment is a sealed memfd; its layout:
 *
 *   offset  size  field
 *        0     4  magic "LVSH" (0x4c565348)
 *        4     4  version (2)
 *        8     8  size: data bytes, a power of two
 *       16     4  wpid: the writer that offers references
 *       24     8  probe_addr: where probe lies in the writer's memory
 *       32    16  probe: random bytes
 *       64     8  head: bytes published by the writer (only it writes)
 *       72     4  writer_waits: the writer sleeps on the space eventfd
 *      128     8  tail: bytes consumed by the reader (only it writes)
 *      136     4  reader_waits: the reader sleeps on the data eventfd
 *      140     4  ref_ok: the reader takes references
 *      144     4  reader_recv: the reader waits for a message
 *      192    40  the reference in flight: its state, its chunks claimed
 *                 and copied by either end, the reader's buffer
 *     4096  size  data: stream byte n at data[n % size]
 *
 * head and tail only grow (64 bits never wrap).  The writer publishes head
 * when a frame is whole, and for frames larger than PVM__SHM_CHUNK every
 * PVM__SHM_CHUNK bytes too, so that the reader copies while the writer
 * does (a frame larger than the ring streams through it).  The reader
 * assembles a frame in a buffer of its own and hands it on only when
 * whole: a writer that dies or gives up mid-frame leaves a partial frame
 * that nobody sees, dropped when the ring is closed.
 *
 * Wake-ups are two eventfds, so that a sleeping end waits in the library's
 * one poll with every other socket: data (the reader sleeps, the writer
 * rings) and space (the other way round).  A side rings only when the
 * other said it sleeps (reader_waits, writer_waits, with a full fence on
 * both sides); an end spins at most a bounded time before it sleeps.
 *
 * References.  A frame of at least pvm__shm_ref_min bytes that does not
 * fit in the room left goes by reference, where both ends agreed to them
 * and the reader is waiting for a message (spinning or asleep, and not
 * inside a send of its own: a reader that computes or sends would hold the
 * writer until it next read, where a streamed frame lets the writer go
 * once its rest fits):
 * the ring carries a WIRE_T_DIRECT/WIRE_DIRECT_REF frame whose body is the
 * message's header and its body's address in the writer's memory, and the
 * body is copied once, straight into the reader's buffer, in chunks that
 * the reader pulls (process_vm_readv) and the waiting writer pushes
 * (process_vm_writev), each claiming the next chunk from a shared counter.
 * The writer returns only when the reader has consumed the frame, and so
 * is done with its memory; a writer whose wait fails first cancels the
 * reference if the reader has not taken it (the reader drops it, and the
 * ring takes no more writes), and otherwise waits until the reader ends
 * it or dies.  A copy that makes no progress for 2 s fails.  One reference is in
 * flight per ring.  References block the writer only where a streamed
 * frame would have blocked it as well (it did not fit).
 *
 * Nothing here knows the library's context: the writer's wait for space is
 * the caller's callback.  Every function returns 0 (or a count) or a
 * negative errno; bad bytes in the segment are -EPROTO, never an assert.
 * Single-threaded: one end per process.
 */
#ifndef LIQUIDVM_PVM_SHM_H
#define LIQUIDVM_PVM_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

#define PVM__SHM_NFD 3                  /* memfd, data eventfd, space eventfd */
#define PVM__SHM_MIN (4u << 10)
#define PVM__SHM_MAX (1u << 30)
#define PVM__SHM_DEFAULT (512u << 10)   /* LIQUIDVM_SHM_RING overrides; 0: no rings */
#define PVM__SHM_CHUNK (64u << 10)      /* a large frame is published this often */
#define PVM__SHM_SPIN_US 50             /* LIQUIDVM_SHM_SPIN_US overrides */
#define PVM__SHM_REF_DEFAULT (64u << 10) /* LIQUIDVM_SHM_REF overrides; 0: none */
#define PVM__SHM_GROW_DEFAULT (32u << 20) /* LIQUIDVM_SHM_RING_MAX overrides */

struct pvm__shm;

/* One step of a spin: let the sibling hyperthread run. */
static inline void
pvm__shm_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/*
 * The writer's wait for room: called once the ring is full, the writer's
 * flag is set and the space eventfd (pvm__shm_space_fd) will be rung.  0 to
 * look again, or a negative code to give up (the write fails with it).
 */
typedef int (*pvm__shm_wait_cb)(struct pvm__shm *r, void *arg);

/* The ring size the environment asks for (LIQUIDVM_SHM_RING, rounded up to
 * a power of two within PVM__SHM_MIN..MAX), 0 when rings are off. */
size_t pvm__shm_ring_size(void);
/* How large a ring may grow (LIQUIDVM_SHM_RING_MAX, a power of two). */
size_t pvm__shm_ring_max(void);
/* A ring's data bytes. */
size_t pvm__shm_size(const struct pvm__shm *r);
/* The smallest frame sent by reference (LIQUIDVM_SHM_REF), 0 when never. */
size_t pvm__shm_ref_min(void);
/* How long an end spins before it sleeps, in microseconds. */
int pvm__shm_spin_us(void);
/* The spin's budget now (ns), and how a spin ended (1: the peer answered). */
#define PVM__SHM_SPIN_MIN_NS 2000
long pvm__shm_spin_budget_ns(void);
void pvm__shm_spin_result(int answered);

/*
 * A new ring of size data bytes (a power of two), this process its writer.
 * fds gets what the reader needs: fds[0], the memfd, is the caller's to
 * close once sent; the eventfds in fds[1..2] stay the ring's.
 */
int pvm__shm_create(size_t size, struct pvm__shm **out, int fds[PVM__SHM_NFD]);
/*
 * The reader's end of a ring from the descriptors a writer sent.  Takes
 * every descriptor, success or not.  A segment that is not a sealed ring
 * of the right size and version is -EPROTO.
 */
int pvm__shm_attach(const int fds[PVM__SHM_NFD], struct pvm__shm **out);
/*
 * References (one copy instead of two), both ends given the other's pid by
 * the kernel (SO_PEERCRED), never by the peer.  The writer offers them
 * before it hands the descriptors over; the reader accepts if it can read
 * the writer's probe where the writer says it is.  1 if on, 0 if off.
 */
int pvm__shm_ref_offer(struct pvm__shm *r, pid_t peer);
int pvm__shm_ref_accept(struct pvm__shm *r, pid_t peer);
/* 1 once the reader has accepted references. */
int pvm__shm_ref_accepted(const struct pvm__shm *r);
/* Frames this end moved by reference, and (writer) the chunks it copied
 * into the reader's memory itself. */
void pvm__shm_ref_stats(const struct pvm__shm *r, unsigned long *refs, unsigned long *helped);
/* Unmap, close, and drop a partial frame. */
void pvm__shm_close(struct pvm__shm *r);

/*
 * Write one frame (h->len is set to len).  While the ring is full it spins,
 * then calls wait.  Returns 0 once the frame is whole in the ring, or
 * wait's code.  After an error pvm__shm_torn says whether part of the
 * frame was published: then the reader holds it in part and will drop it,
 * the ring refuses further writes (-EPIPE), and the message must not be
 * sent again another way (pvm_shm.c); if not, the reader saw none of it.
 */
int pvm__shm_write(struct pvm__shm *r, struct wire_hdr *h, const void *body, size_t len,
                   pvm__shm_wait_cb wait, void *arg);
/* 1 if a write failed after publishing part of its frame. */
int pvm__shm_torn(const struct pvm__shm *r);
/* The eventfd the writer's wait sleeps on (POLLIN). */
int pvm__shm_space_fd(const struct pvm__shm *r);

/*
 * Read on: 1 with a whole frame (its header in *h, its body in *body,
 * malloc'ed and the caller's, NULL if empty), 0 if none is whole yet, or
 * an error (-EPROTO: a bad header, a type other than WIRE_T_MSG, a body
 * above max, a head that makes no sense; -ENOMEM).
 */
int pvm__shm_read(struct pvm__shm *r, uint32_t max, struct wire_hdr *h, unsigned char **body);
/* 1 if published bytes wait for pvm__shm_read (one load: for spinning). */
int pvm__shm_readable(const struct pvm__shm *r);
/* 1 while a frame is read in part. */
int pvm__shm_partial(const struct pvm__shm *r);
/*
 * Before the reader sleeps: say so, then look once more.  1 if bytes wait
 * (do not sleep), 0 to sleep on pvm__shm_data_fd.  pvm__shm_disarm after
 * the sleep.  A sticky ring stays armed, so that its eventfd wakes a
 * program that waits outside the library (pvm_getfds).
 */
int pvm__shm_arm(struct pvm__shm *r);
void pvm__shm_disarm(struct pvm__shm *r);
void pvm__shm_sticky(struct pvm__shm *r);
/* The reader waits for a message (spinning or asleep), not inside a send
 * of its own: a writer sends large frames by reference only then. */
void pvm__shm_receiving(struct pvm__shm *r, int on);
int pvm__shm_data_fd(const struct pvm__shm *r);

#endif
