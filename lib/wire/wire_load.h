/*
 * wire_load.h - one host's load sample as it travels between daemons
 * (WIRE_T_LOAD), to vmctl (the end of the WIRE_T_REQ_CONF reply) and to
 * tasks (WIRE_T_REQ_LOAD).  Internal to the project: daemon/, launcher/
 * and libpvm3 include it; never installed.  Pure functions, reentrant.
 *
 * A sample, in order (big-endian, wire.h's wbuf/rbuf encodings):
 *
 *   i32     cpus        online CPUs                               -1 unknown
 *   double  load1       1-minute load average                     -1 unknown
 *   double  ext_busy    CPUs busy with processes outside the VM   -1 unknown
 *   double  vm_busy     CPUs busy with the daemon, its tasks and
 *                       their descendants                         -1 unknown
 *   double  quota       CPUs the daemon's cgroup may use           0 no limit, -1 unknown
 *   double  throttled   share of the cgroup's CFS periods that
 *                       were throttled during the interval (0..1)  -1 unknown
 *   double  capacity    CPUs left for the VM: min(quota,
 *                       cpus - ext_busy), never below 0           -1 unknown
 *   double  interval    seconds the busy figures cover             0 none yet
 *   u64     mem_total   bytes of memory                             0 unknown
 *   u64     mem_avail   bytes available without swapping            0 unknown
 *   u64     kernel      which running kernel the host is: a hash of
 *                       its boot_id, equal for daemons that share a
 *                       machine (network namespaces, --local VMs)  0 unknown
 *
 * ext_busy leaves out the VM's processes of every daemon whose kernel is
 * this one, so daemons that share a machine do not see each other's
 * workers as their owner's load.
 *
 * A table of samples (REQ_LOAD reply, the tail of the REQ_CONF reply) is
 * u32 n, then n times: u32 dtid, str name, u64 age_ms (since the sample
 * was taken, as the answering daemon saw it), the sample.
 *
 * wire_load_get refuses (WIRE_EFRAME) a sample with a value no sampler
 * produces: not finite, below -1, more than WIRE_LOAD_MAX_CPUS, a share
 * above 1, so a bad peer cannot feed nonsense to a balancer.
 */
#ifndef LIQUIDVM_WIRE_LOAD_H
#define LIQUIDVM_WIRE_LOAD_H

#include <stdint.h>

#include "wire.h"

#define WIRE_LOAD_MAX_CPUS 65536

struct wire_load {
    int32_t cpus;
    double load1;
    double ext_busy;
    double vm_busy;
    double quota;
    double throttled;
    double capacity;
    double interval;
    uint64_t mem_total;
    uint64_t mem_avail;
    uint64_t kernel;
};

/* A sample with every field unknown. */
void wire_load_unknown(struct wire_load *l);
void wire_load_put(struct wire_wbuf *b, const struct wire_load *l);
/* 0, or WIRE_EFRAME for a short or implausible sample (*l then undefined). */
int wire_load_get(struct wire_rbuf *r, struct wire_load *l);

#endif
