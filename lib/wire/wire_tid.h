/*
 * wire_tid.h - the layout of a PVM task id, the one definition the daemon,
 * libpvm3 and the tools share (docs/architecture.md, Processes).
 *
 * Who may include it: everything that includes wire.h (which includes it).
 * Macros only: pure, no state.
 *
 *   bit 31-30  0 for a task or a daemon (PVM uses them for special ids)
 *   bit 29-18  host index, 1..WIRE_TID_MAX_HOSTS; a daemon's tid is its
 *              index here and 0 below
 *   bit 17-0   local part, 1..WIRE_TID_LOCAL_MASK for a task
 *
 * Contexts (pvm_newcontext) use the same layout: the host that made one in
 * the host bits, a counter in the local part.
 */
#ifndef LIQUIDVM_WIRE_TID_H
#define LIQUIDVM_WIRE_TID_H

#include <stdint.h>

#define WIRE_TID_HOST_SHIFT 18
#define WIRE_TID_HOST_MASK 0xfffu          /* 12 bits of host index */
#define WIRE_TID_LOCAL_MASK 0x3ffffu       /* 18 bits of local part */
#define WIRE_TID_SPECIAL_MASK 0xc0000000u  /* bits PVM keeps for special ids */
#define WIRE_TID_MAX_HOSTS 4095            /* the largest host index */

/* The tid of host index i's daemon, and the host index of a tid. */
#define WIRE_HOST_TID(i) ((uint32_t)(i) << WIRE_TID_HOST_SHIFT)
#define WIRE_TID_HOST(t) ((int)(((uint32_t)(t) >> WIRE_TID_HOST_SHIFT) & WIRE_TID_HOST_MASK))
/* A task's tid (not a daemon's, not a special id). */
#define WIRE_TID_IS_TASK(t) \
    (((uint32_t)(t) & WIRE_TID_SPECIAL_MASK) == 0 && ((uint32_t)(t) & WIRE_TID_LOCAL_MASK) != 0)

#endif /* LIQUIDVM_WIRE_TID_H */
