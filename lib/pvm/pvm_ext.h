/*
 * pvm_ext.h - what libpvm3 offers libliquid beyond PVM's API.  Never
 * installed.  vmrun links libpvm3.a; libliquid.so, the runtime for users'
 * own programs, must share the task's one library context with them, so
 * it calls libpvm3.so.3's: these calls alone of lib/pvm's internals are
 * exported from it (visible, and pvm* in libpvm3.map), under the pvm__
 * prefix no PVM program uses.
 */
#ifndef LVM_PVM_EXT_H
#define LVM_PVM_EXT_H

#include <stddef.h>

/*
 * The next n bytes of the active receive buffer where they lie, instead of
 * a copy: for a body in this host's own raw encoding (PvmDataRaw or
 * PvmDataInPlace from a host like this one) whose next n bytes are there
 * and 8-byte aligned; the cursor moves past them.  Valid until the buffer
 * is freed (the next receive).  NULL otherwise, the cursor unmoved: the
 * caller unpacks as usual.
 */
__attribute__((visibility("default"))) const void *pvm__upk_view(size_t n);

/*
 * Messages to task tid come in bursts of `count` messages and about
 * `bytes` of bodies (the liquid runtime's ghosts of one exchange, in
 * messages of at most 1 MiB): our shared-memory ring to it grows to hold a
 * whole burst, frames' headers included (up to LIQUIDVM_SHM_RING_MAX), as
 * it grows for one large message, so that we need not wait for a peer
 * that computes.  Nothing for other links, or before the link to tid is
 * up (say it again then).
 */
__attribute__((visibility("default"))) void pvm__link_burst(int tid, size_t bytes, int count);

/*
 * 1 when our messages to task tid take the way they will keep: a direct
 * link that is up, or the daemons where no link is being made (refused,
 * failed, or not asked for under this route); 0 while one is being set
 * up, which takes a few of our calls into the library and a TLS handshake
 * between hosts, so that a message then is slower than the rest.  A
 * measurement warms up until it is 1 (the liquid runtime's ring).
 */
__attribute__((visibility("default"))) int pvm__link_settled(int tid);

#endif
