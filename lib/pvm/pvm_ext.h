/*
 * pvm_ext.h - what libpvm3 offers libliquid beyond PVM's API.  Never
 * installed and never exported from libpvm3.so (hidden like the rest of
 * lib/pvm/pvm_*.c's internals): the stencil workers link libpvm3.a.
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
const void *pvm__upk_view(size_t n);

#endif
