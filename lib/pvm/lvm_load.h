/*
 * lvm_load.h - what a job master asks the VM about its hosts' load
 * (issue 8, Sense).  A LiquidVM extension, not part of PVM's API, so it
 * is not in pvm3.h and carries no pvm_ name; libpvm3.so.3 exports it.
 *
 * Who may include it: PVM tasks linked against libpvm3 (libliquid's
 * balancer among them).  Like the rest of libpvm3 it is meant for the
 * task's one thread.
 *
 * Every daemon samples its host every load_interval seconds (vmd.conf(5))
 * and sends the sample to every other daemon; lvm_hostload() asks the
 * task's own daemon for the latest sample of every host in the VM.  A
 * figure the daemon could not read is -1 (for quota, 0 means no limit);
 * a host whose first sample has not arrived yet has age -1 and every
 * figure unknown.
 */
#ifndef LIQUIDVM_LVM_LOAD_H
#define LIQUIDVM_LVM_LOAD_H

struct lvm_hostload {
    int dtid;               /* the host's daemon tid, as pvm_config's hi_tid */
    char name[256];
    double age;             /* seconds since the sample was taken; -1 none yet */
    double interval;        /* seconds the busy figures are averaged over */
    int cpus;               /* online CPUs */
    double load1;           /* 1-minute load average */
    double ext_busy;        /* CPUs busy with processes outside the VM (of any of its daemons) */
    double vm_busy;         /* CPUs busy with the daemon, its tasks and their children */
    double quota;           /* CPUs the daemon's cgroup may use; 0 no limit */
    double throttled;       /* share of the cgroup's CFS periods throttled, 0..1 */
    double capacity;        /* CPUs left for the VM: min(quota, cpus - ext_busy) >= 0 */
    unsigned long long mem_total, mem_avail;    /* bytes; 0 unknown */
    unsigned long long kernel;  /* which running kernel (machine) the host is; 0 unknown */
};

/*
 * The latest load of every host: *out is a malloc'ed array of *n entries
 * in host-index order, which the caller frees with free().  Enrolls the
 * task if needed.  Returns 0, or a PVM error code (PvmSysErr when the
 * daemon cannot be reached, PvmBadMsg when its answer is malformed,
 * PvmNoMem, PvmBadParam for NULL pointers), reported as PvmAutoErr says,
 * like every pvm_ call; *out is then NULL and *n 0.
 */
#if defined(__GNUC__) && __GNUC__ >= 4
__attribute__((visibility("default")))
#endif
int lvm_hostload(struct lvm_hostload **out, int *n);

#endif
