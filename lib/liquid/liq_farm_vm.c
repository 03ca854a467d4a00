/*
 * liq_farm_vm.c - a farm's VM session, on the public PVM API alone
 * (pvm3.h, lvm_load.h): enroll, pick the hosts, spawn this executable as
 * the workers on each (`vmrun farm-worker`, or a program's own with
 * --liquid-farm-worker), ask for the notifications that turn a dead worker,
 * a lost host or an added one into a message, start workers on a host
 * added while the farm runs, read the hosts' capacities, and leave.
 * It was vmrun farm's (vmrun_farm_vm.c) before liquid_farm() shared it.
 */
#include "liq_farm.h"
#include "liq.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lvm_err.h"
#include "lvm_load.h"
#include "pvm3.h"

double
liq_farm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
vm_fail(struct liq_farm_vm *vm, const char *what, int code)
{
    snprintf(vm->why, sizeof(vm->why), "%s: %s", what, code < 0 ? lvm_errtext(code) : "failed");
    return -1;
}

/* Is name in the comma-separated list? */
static int
list_has(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);

        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

int
liq_farm_vm_worker(const struct liq_farm_vm *vm, int tid)
{
    for (int i = 0; i < vm->nworkers; i++)
        if (vm->tids[i] == tid && tid != 0)
            return i;
    return -1;
}

int
liq_farm_vm_host(const struct liq_farm_vm *vm, int dtid)
{
    for (int h = 0; h < vm->nhosts; h++)
        if (vm->host[h].dtid == dtid)
            return h;
    return -1;
}

/* Spawn host h's count workers (vm->tids from its first on); how many
 * started (the rest are 0), with why set when not all did. */
static int
spawn_on(struct liq_farm_vm *vm, int h)
{
    struct liq_farm_host *ho = &vm->host[h];
    int got = pvm_spawn(vm->exe, vm->wargv, PvmTaskHost, ho->name, ho->count, vm->tids + ho->first);

    for (int i = 0; i < ho->count; i++)
        vm->whost[ho->first + i] = h;
    return liq_spawned(got, ho->count, vm->tids + ho->first, ho->name, vm->why, sizeof(vm->why));
}

int
liq_farm_vm_add(struct liq_farm_vm *vm, int dtid)
{
    struct pvmhostinfo *hi;
    struct liq_farm_host *host;
    int nhost, narch, rc, h = vm->nhosts, k = vm->tasks_per_host, got, *tids, *whost;

    if (!vm->grows || dtid <= 0 || liq_farm_vm_host(vm, dtid) >= 0)
        return -2;
    if ((rc = pvm_config(&nhost, &narch, &hi)) < 0)
        return vm_fail(vm, "pvm_config", rc);
    while (nhost > 0 && hi[nhost - 1].hi_tid != dtid)
        nhost--;
    if (nhost == 0)
        return -2; /* gone again */
    host = realloc(vm->host, (size_t)(h + 1) * sizeof(*host));
    if (host != NULL)
        vm->host = host;
    tids = realloc(vm->tids, (size_t)(vm->nworkers + k) * sizeof(int));
    if (tids != NULL)
        vm->tids = tids;
    whost = realloc(vm->whost, (size_t)(vm->nworkers + k) * sizeof(int));
    if (whost != NULL)
        vm->whost = whost;
    if (host == NULL || tids == NULL || whost == NULL)
        return vm_fail(vm, "out of memory", 0);
    memset(&vm->host[h], 0, sizeof(vm->host[h]));
    snprintf(vm->host[h].name, sizeof(vm->host[h].name), "%s", hi[nhost - 1].hi_name);
    vm->host[h].dtid = dtid;
    vm->host[h].first = vm->nworkers;
    vm->host[h].count = k;
    if ((got = spawn_on(vm, h)) == 0)
        return -1;
    vm->host[h].count = got;
    vm->nhosts++;
    vm->nworkers += got;
    pvm_notify(PvmTaskExit, LIQ_FARM_TAG_EXITED, got, vm->tids + vm->host[h].first);
    pvm_notify(PvmHostDelete, LIQ_FARM_TAG_HOSTGONE, 1, &dtid);
    return h;
}

int
liq_farm_vm_start(struct liq_farm_vm *vm, const char *hosts, int tasks_per_host, char **wargv)
{
    struct pvmhostinfo *hi;
    int nhost, narch, rc, *dt;
    ssize_t n;

    memset(vm, 0, sizeof(*vm));
    pvm_setopt(PvmAutoErr, 0);
    if ((vm->mytid = pvm_mytid()) < 0) {
        snprintf(vm->why, sizeof(vm->why),
                 "cannot enroll in the virtual machine (%s); start one with `vmctl start`",
                 lvm_errtext(vm->mytid));
        vm->mytid = 0;
        return -1;
    }
    /* Asked for before the host table is read: a host added after that is
     * told (one added before is in the table, and a notice of it ignored). */
    if ((vm->grows = hosts[0] == '\0') &&
        (rc = pvm_notify(PvmHostAdd, LIQ_FARM_TAG_HOSTADD, -1, NULL)) < 0)
        return vm_fail(vm, "pvm_notify", rc);
    if ((rc = pvm_config(&nhost, &narch, &hi)) < 0)
        return vm_fail(vm, "pvm_config", rc);
    if ((vm->host = calloc((size_t)nhost, sizeof(*vm->host))) == NULL)
        return vm_fail(vm, "out of memory", 0);
    for (int i = 0; i < nhost; i++) {
        if (hosts[0] != '\0' && !list_has(hosts, hi[i].hi_name))
            continue;
        snprintf(vm->host[vm->nhosts].name, sizeof(vm->host[0].name), "%s", hi[i].hi_name);
        vm->host[vm->nhosts].dtid = hi[i].hi_tid;
        vm->nhosts++;
    }
    /* Every named host must be in the VM. */
    for (const char *p = hosts; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;

        for (int h = 0; h < vm->nhosts; h++)
            found |= strlen(vm->host[h].name) == len && strncmp(vm->host[h].name, p, len) == 0;
        if (!found && len > 0) {
            snprintf(vm->why, sizeof(vm->why), "--hosts: %.*s is not in the virtual machine",
                     (int)len, p);
            vm->usage = 1;
            return -1;
        }
        p += len + (e != NULL);
    }
    if (vm->nhosts == 0) {
        snprintf(vm->why, sizeof(vm->why), "no hosts to run on");
        return -1;
    }
    vm->nworkers = vm->nhosts * tasks_per_host;
    vm->tids = calloc((size_t)vm->nworkers, sizeof(int));
    vm->whost = calloc((size_t)vm->nworkers, sizeof(int));
    if (vm->tids == NULL || vm->whost == NULL)
        return vm_fail(vm, "out of memory", 0);
    if ((n = readlink("/proc/self/exe", vm->exe, sizeof(vm->exe) - 1)) < 0)
        return vm_fail(vm, "cannot find this executable (/proc/self/exe)", 0);
    vm->exe[n] = '\0';
    vm->wargv = wargv;
    vm->tasks_per_host = tasks_per_host;
    for (int h = 0; h < vm->nhosts; h++) {
        vm->host[h].first = h * tasks_per_host;
        vm->host[h].count = tasks_per_host;
        /* The ones that started are killed by liq_farm_vm_stop. */
        if (spawn_on(vm, h) != tasks_per_host)
            return -1;
    }
    pvm_notify(PvmTaskExit, LIQ_FARM_TAG_EXITED, vm->nworkers, vm->tids);
    if ((dt = calloc((size_t)vm->nhosts, sizeof(int))) == NULL)
        return vm_fail(vm, "out of memory", 0);
    for (int h = 0; h < vm->nhosts; h++)
        dt[h] = vm->host[h].dtid;
    pvm_notify(PvmHostDelete, LIQ_FARM_TAG_HOSTGONE, vm->nhosts, dt);
    free(dt);
    return 0;
}

int
liq_farm_vm_capacity(struct liq_farm_vm *vm, double *cap)
{
    struct lvm_hostload *hl = NULL;
    int n = 0, rc = lvm_hostload(&hl, &n);

    for (int h = 0; h < vm->nhosts; h++)
        cap[h] = -1;
    if (rc < 0)
        return vm_fail(vm, "the hosts' load", rc);
    for (int i = 0; i < n; i++) {
        int h = liq_farm_vm_host(vm, hl[i].dtid);

        if (h >= 0 && hl[i].age >= 0 && hl[i].capacity >= 0)
            cap[h] = hl[i].capacity;
    }
    free(hl);
    return 0;
}

void
liq_farm_vm_stop(struct liq_farm_vm *vm, int failed)
{
    if (vm->mytid <= 0)
        return;
    liq_tasks_end(vm->tids, vm->nworkers, failed, LIQ_FARM_TAG_QUIT);
    vm->mytid = 0;
}

void
liq_farm_vm_free(struct liq_farm_vm *vm)
{
    free(vm->host);
    free(vm->tids);
    free(vm->whost);
    vm->host = NULL;
    vm->tids = vm->whost = NULL;
}
