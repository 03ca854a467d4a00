/*
 * wire_load.c - encoding and checking of a host's load sample (the
 * format is in wire_load.h).  The daemon produces samples in vmd_load.c;
 * vmctl conf and lvm_hostload() read them.
 */
#include "wire_load.h"

#include <math.h>

void
wire_load_unknown(struct wire_load *l)
{
    l->cpus = -1;
    l->load1 = l->ext_busy = l->vm_busy = l->quota = l->throttled = l->capacity = -1.0;
    l->interval = 0.0;
    l->mem_total = l->mem_avail = 0;
    l->kernel = 0;
}

void
wire_load_put(struct wire_wbuf *b, const struct wire_load *l)
{
    wire_put_i32(b, l->cpus);
    wire_put_double(b, l->load1);
    wire_put_double(b, l->ext_busy);
    wire_put_double(b, l->vm_busy);
    wire_put_double(b, l->quota);
    wire_put_double(b, l->throttled);
    wire_put_double(b, l->capacity);
    wire_put_double(b, l->interval);
    wire_put_u64(b, l->mem_total);
    wire_put_u64(b, l->mem_avail);
    wire_put_u64(b, l->kernel);
}

/* -1 (unknown) or a finite value in 0..max. */
static int
in_range(double v, double max)
{
    return isfinite(v) && (v == -1.0 || (v >= 0.0 && v <= max));
}

int
wire_load_get(struct wire_rbuf *r, struct wire_load *l)
{
    int rc;
    const double cpus_max = WIRE_LOAD_MAX_CPUS;

    if ((rc = wire_get_i32(r, &l->cpus)) || (rc = wire_get_double(r, &l->load1)) ||
        (rc = wire_get_double(r, &l->ext_busy)) || (rc = wire_get_double(r, &l->vm_busy)) ||
        (rc = wire_get_double(r, &l->quota)) || (rc = wire_get_double(r, &l->throttled)) ||
        (rc = wire_get_double(r, &l->capacity)) || (rc = wire_get_double(r, &l->interval)) ||
        (rc = wire_get_u64(r, &l->mem_total)) || (rc = wire_get_u64(r, &l->mem_avail)) ||
        (rc = wire_get_u64(r, &l->kernel)))
        return rc;
    if (l->cpus < -1 || l->cpus == 0 || l->cpus > WIRE_LOAD_MAX_CPUS)
        return WIRE_EFRAME;
    /* A load average can exceed the CPU count many times over; bound it
     * only by what a process table could hold. */
    if (!in_range(l->load1, 1e7) || !in_range(l->ext_busy, cpus_max) ||
        !in_range(l->vm_busy, cpus_max) || !in_range(l->quota, cpus_max) ||
        !in_range(l->throttled, 1.0) || !in_range(l->capacity, cpus_max) ||
        !isfinite(l->interval) || l->interval < 0.0 || l->interval > 86400.0 ||
        l->mem_avail > l->mem_total)
        return WIRE_EFRAME;
    return 0;
}
