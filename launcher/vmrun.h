/*
 * vmrun.h - the stencil job launcher: benchmark the hosts and the ring,
 * choose a decomposition, run a job on the VM, report.
 *
 * Who may include it: launcher/vmrun_*.c and tests.  Every subcommand is a
 * function taking its own argc/argv (argv[0] is the subcommand's name) and
 * returning the process exit status: VMRUN_EXIT_OK, VMRUN_EXIT_FAIL (the job
 * or the VM failed, or --verify found a difference), VMRUN_EXIT_USAGE (bad
 * options or job file).
 */
#ifndef LIQUIDVM_VMRUN_H
#define LIQUIDVM_VMRUN_H

#define VMRUN_EXIT_OK 0
#define VMRUN_EXIT_FAIL 1
#define VMRUN_EXIT_USAGE 2

/* vmrun_advise.c: the offline advisor (seed 001 chapter 7). */
int vmrun_advise_main(int argc, char **argv);

#endif
