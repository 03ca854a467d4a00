/*
 * pvm_load.c - lvm_hostload(): a task asks its daemon for every host's
 * latest load sample (WIRE_T_REQ_LOAD, the table of lib/wire/wire_load.h).
 * The daemons keep each other's samples, so the task's own daemon answers
 * without asking the master.
 */
#include "lvm_load.h"
#include "pvm_int.h"
#include "wire_load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
parse_table(const unsigned char *body, size_t len, struct lvm_hostload **out, int *n)
{
    struct wire_rbuf r;
    uint32_t count;
    int rc;

    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &count)) != 0 || count == 0 || count > WIRE_TID_MAX_HOSTS)
        return rc ? rc : WIRE_EFRAME;
    struct lvm_hostload *v = calloc(count, sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t dtid;
        uint64_t age;
        struct wire_load l;
        if ((rc = wire_get_u32(&r, &dtid)) ||
            (rc = wire_get_str(&r, v[i].name, sizeof(v[i].name))) ||
            (rc = wire_get_u64(&r, &age)) || (rc = wire_load_get(&r, &l))) {
            free(v);
            return rc;
        }
        v[i].dtid = (int)dtid;
        v[i].age = age == UINT64_MAX ? -1.0 : (double)age / 1000.0;
        v[i].interval = l.interval;
        v[i].cpus = l.cpus;
        v[i].load1 = l.load1;
        v[i].ext_busy = l.ext_busy;
        v[i].vm_busy = l.vm_busy;
        v[i].quota = l.quota;
        v[i].throttled = l.throttled;
        v[i].capacity = l.capacity;
        v[i].mem_total = l.mem_total;
        v[i].mem_avail = l.mem_avail;
        v[i].kernel = l.kernel;
    }
    *out = v;
    *n = (int)count;
    return 0;
}

int
lvm_hostload(struct lvm_hostload **out, int *n)
{
    unsigned char *body = NULL;
    size_t len = 0;
    int rc;

    if (out == NULL || n == NULL)
        return pvm__err(-EINVAL, "lvm_hostload");
    *out = NULL;
    *n = 0;
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "lvm_hostload");
    rc = pvm__request(WIRE_T_REQ_LOAD, NULL, &body, &len);
    if (rc == 0)
        rc = parse_table(body, len, out, n);
    free(body);
    return rc ? pvm__err(rc, "lvm_hostload") : 0;
}
