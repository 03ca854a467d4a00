/*
 * lvm_err.h - the text of a PVM error code.  A LiquidVM extension, not
 * part of PVM's API (pvm_strerror only reports the last error, and
 * pvm_spawn leaves per-task codes in its tids array), so it is not in
 * pvm3.h; libpvm3.so.3 exports it.
 */
#ifndef LIQUIDVM_LVM_ERR_H
#define LIQUIDVM_LVM_ERR_H

/* PVM's message for pvmcode (PvmBadParam, PvmNoHost, ...), as pvm_perror
 * prints it; "Unknown Error" for anything else. */
const char *lvm_errtext(int pvmcode);

#endif
