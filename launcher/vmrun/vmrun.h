/*
 * vmrun.h - the stencil job launcher: `vmrun stencil` and `vmrun bench`
 * are thin callers of libliquid's job master (liq_master.h); `vmrun
 * advise` ranks decompositions offline with decomp/ alone.
 *
 * Who may include it: launcher/vmrun/vmrun_*.c and tests.  Every subcommand is a
 * function taking its own argc/argv (argv[0] is the subcommand's name) and
 * returning the process exit status: VMRUN_EXIT_OK, VMRUN_EXIT_FAIL (the job
 * or the VM failed, or --verify found a difference), VMRUN_EXIT_USAGE (bad
 * options or job file), the same as libliquid's LIQ_EXIT_*.
 */
#ifndef LIQUIDVM_VMRUN_H
#define LIQUIDVM_VMRUN_H

#include "liq_master.h"

#define VMRUN_EXIT_OK LIQ_EXIT_OK
#define VMRUN_EXIT_FAIL LIQ_EXIT_FAIL
#define VMRUN_EXIT_USAGE LIQ_EXIT_USAGE

/* vmrun_advise.c: the offline advisor (seed 001 chapter 7). */
int vmrun_advise_main(int argc, char **argv);

#endif
