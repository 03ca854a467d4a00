/*
 * liq_vm.c - the job master as a PVM task: choose the hosts, spawn one
 * worker per task slot (the program itself, as its struct liq_program
 * says: vmrun as `vmrun worker`), benchmark them (speed probe on all at
 * once, then the ring of seed 001 fitted to lambda and tau), and turn a
 * worker's failure, death or lost host into an error that names the host
 * instead of a hang.  With checkpoints on, a lost worker is recovered
 * from instead, and a worker that stays silent (stopped, or on a host cut
 * off from the network) is lost too: every running worker sends a report
 * every block, or a heartbeat every LIQ_ALIVE_S while it waits, so
 * silence past the timeout means it cannot (issue 26, "Detection").
 */
#include "liq_master.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lvm_err.h"
#include "lvm_load.h"
#include "pvm3.h"

static const int ring_bytes[LIQ_RING_SIZES] = { 8, 4096, 65536, 262144, 1048576 };
#define LIQ_RING_ROUNDS 5

double
liq_vm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double
liq_vm_unix_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
liq_vm_worker(const struct liq_vm *vm, int tid)
{
    for (int i = 0; i < vm->nworkers; i++)
        if (vm->tids[i] == tid)
            return i;
    return -1;
}

static const char *
vm_host_of(const struct liq_vm *vm, int tid)
{
    int w = liq_vm_worker(vm, tid);

    return w >= 0 ? vm->host[vm->whost[w]].name : "?";
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

static int
vm_fail(struct liq_vm *vm, const char *what, int code)
{
    snprintf(vm->why, sizeof(vm->why), "%s: %s", what, code < 0 ? lvm_errtext(code) : "failed");
    return -1;
}

/* The executable the workers run: the program's, or this very one by its
 * absolute path (vmrun runs as `vmrun worker` wherever it was started
 * from). */
static int
vm_exe(struct liq_vm *vm, char *exe, size_t size)
{
    ssize_t n;

    if (vm->prog->exe != NULL) {
        if (strlen(vm->prog->exe) >= size)
            return vm_fail(vm, "the workers' executable: name too long", 0);
        strcpy(exe, vm->prog->exe);
        return 0;
    }
    if ((n = readlink("/proc/self/exe", exe, size - 1)) < 0) {
        snprintf(vm->why, sizeof(vm->why), "cannot find the %s executable: %s", vm->who,
                 strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    return 0;
}

/* The arguments the workers are spawned with (pvm_spawn's argv is not const). */
static char **
vm_worker_argv(const struct liq_vm *vm)
{
    static const char *const dflt[] = { LIQ_WORKER_ARG, NULL };

    return (char **)(uintptr_t)(vm->prog->worker_argv != NULL ? vm->prog->worker_argv : dflt);
}

/* Spawn count workers on host: this executable by its absolute path where
 * the hosts share it, else (none started: no such file there) by its name
 * along the host's spawn_path, as PVM programs are found. */
static int
vm_spawn(const struct liq_vm *vm, const char *exe, char **wargv, const char *host, int count,
         int *tids)
{
    int got = pvm_spawn((char *)(uintptr_t)exe, wargv, PvmTaskHost, (char *)(uintptr_t)host,
                        count, tids);
    const char *base = strrchr(exe, '/');

    if (got == 0 && tids[0] == PvmNoFile && vm->prog->exe == NULL && base != NULL)
        got = pvm_spawn((char *)(uintptr_t)(base + 1), wargv, PvmTaskHost,
                        (char *)(uintptr_t)host, count, tids);
    return got;
}

int
liq_vm_respawn(struct liq_vm *vm, int w)
{
    char exe[PATH_MAX], host[sizeof(vm->host[0].name)], **wargv = vm_worker_argv(vm);
    int tid = 0, got;

    if (vm_exe(vm, exe, sizeof(exe)) != 0)
        return -1;
    memcpy(host, vm->host[vm->whost[w]].name, sizeof(host));
    got = vm_spawn(vm, exe, wargv, host, 1, &tid);
    if (got != 1) {
        snprintf(vm->why, sizeof(vm->why), "cannot start a worker again on host %s: %s", host,
                 lvm_errtext(got < 0 ? got : tid));
        return -1;
    }
    vm->tids[w] = tid;
    vm->leaving[w] = 0;
    if (vm->heard != NULL) {
        vm->heard[w] = liq_vm_now();
        vm->epoch_t[w] = 0;
        vm->quiet[w] = 0;
    }
    pvm_notify(PvmTaskExit, LIQ_TAG_EXITED, 1, &tid);
    return 0;
}

/*
 * A daemon's CPU figures are differences between two samples: until its
 * second sample (a tenth of a second after it starts, then every
 * load_interval) its host's capacity is unknown, and the balancer would
 * plan with whole CPUs, then move quanta back when the figures come.  A
 * job started right after `vmctl start` or `add` waits for them, at most
 * `limit` seconds; a daemon that cannot read its CPUs (cpus unknown) is
 * not waited for.
 */
void
liq_vm_await_load(struct liq_vm *vm, double limit)
{
    double until = liq_vm_now() + limit;

    for (;;) {
        struct lvm_hostload *hl = NULL;
        int n = 0, pending = 0;

        if (lvm_hostload(&hl, &n) < 0)
            return;
        for (int h = 0; h < vm->nhosts; h++)
            for (int i = 0; i < n; i++)
                if (hl[i].dtid == vm->host[h].dtid)
                    pending += hl[i].age < 0 || (hl[i].cpus > 0 && hl[i].interval <= 0);
        free(hl);
        if (pending == 0 || liq_vm_now() >= until)
            return;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
}

/*
 * Daemons of one machine (one kernel) sample the same CPUs at different
 * moments; the CPUs their owners leave free are one figure, so each host
 * of a machine gets the median of its daemons' samples, bounded by its own
 * quota.  Apart, two co-located hosts would differ by sampling noise alone
 * and the balancer would move quanta between them for nothing.
 */
int
liq_vm_capacity(struct liq_vm *vm, double *cap, unsigned long long *kernel)
{
    struct lvm_hostload *hl = NULL;
    int n = 0, rc = lvm_hostload(&hl, &n);
    double *freecpu = NULL, *v = NULL;
    int *at = NULL;

    if (rc < 0)
        return vm_fail(vm, "the hosts' load", rc);
    freecpu = calloc((size_t)n + 1, sizeof(double));
    v = calloc((size_t)n + 1, sizeof(double));
    at = calloc((size_t)vm->nhosts + 1, sizeof(int));
    if (freecpu == NULL || v == NULL || at == NULL) {
        free(hl);
        free(freecpu);
        free(v);
        free(at);
        return vm_fail(vm, "out of memory", 0);
    }
    for (int i = 0; i < n; i++)
        freecpu[i] = hl[i].cpus > 0 && hl[i].ext_busy >= 0 && hl[i].age >= 0
                         ? hl[i].cpus - hl[i].ext_busy : -1;
    for (int h = 0; h < vm->nhosts; h++) {
        cap[h] = -1;
        at[h] = -1;
        if (kernel != NULL)
            kernel[h] = 0;
        for (int i = 0; i < n; i++)
            if (hl[i].dtid == vm->host[h].dtid && hl[i].age >= 0) {
                cap[h] = hl[i].capacity;
                at[h] = i;
                if (kernel != NULL)
                    kernel[h] = hl[i].kernel;
            }
    }
    for (int h = 0; h < vm->nhosts; h++) {
        int i = at[h];
        size_t m = 0;

        if (i < 0 || hl[i].kernel == 0 || freecpu[i] < 0)
            continue;
        for (int j = 0; j < n; j++)
            if (hl[j].kernel == hl[i].kernel && freecpu[j] >= 0)
                v[m++] = freecpu[j];
        double c = liq_median(v, m);

        if (hl[i].quota > 0 && hl[i].quota < c)
            c = hl[i].quota;
        cap[h] = c > 0 ? c : 0;
    }
    free(hl);
    free(freecpu);
    free(v);
    free(at);
    return 0;
}

int
liq_vm_start(struct liq_vm *vm, const struct liq_opts *o, const struct liq_program *prog)
{
    struct pvmhostinfo *hi;
    int nhost, narch, rc;
    char exe[PATH_MAX], **wargv;

    memset(vm, 0, sizeof(*vm));
    vm->prog = prog;
    snprintf(vm->who, sizeof(vm->who), "%.*s", (int)strcspn(prog->name, " "), prog->name);
    wargv = vm_worker_argv(vm);
    vm->net = o->net;
    vm->progress = !o->quiet;
    pvm_setopt(PvmAutoErr, 0);
    if ((vm->mytid = pvm_mytid()) < 0) {
        snprintf(vm->why, sizeof(vm->why),
                 "cannot enroll in the virtual machine (%s); start one with `vmctl start`",
                 lvm_errtext(vm->mytid));
        return -1;
    }
    if ((rc = pvm_config(&nhost, &narch, &hi)) < 0)
        return vm_fail(vm, "pvm_config", rc);
    if ((vm->host = calloc((size_t)nhost, sizeof(*vm->host))) == NULL)
        return vm_fail(vm, "out of memory", 0);
    for (int i = 0; i < nhost; i++) {
        if (o->hosts[0] != '\0' && !list_has(o->hosts, hi[i].hi_name))
            continue;
        snprintf(vm->host[vm->nhosts].name, sizeof(vm->host[0].name), "%s", hi[i].hi_name);
        vm->host[vm->nhosts].dtid = hi[i].hi_tid;
        vm->nhosts++;
    }
    if (o->hosts[0] != '\0') {
        /* Every named host must be in the VM. */
        char copy[LIQ_PATH_MAX], *save = NULL;

        snprintf(copy, sizeof(copy), "%s", o->hosts);
        for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
            int found = 0;

            for (int i = 0; i < vm->nhosts; i++)
                found |= strcmp(vm->host[i].name, h) == 0;
            if (!found) {
                snprintf(vm->why, sizeof(vm->why), "--hosts: %s is not in the virtual machine", h);
                vm->usage = 1;
                return -1;
            }
        }
    }
    if (vm->nhosts == 0) {
        snprintf(vm->why, sizeof(vm->why), "no hosts to run on");
        return -1;
    }
    vm->nworkers = vm->nhosts * o->tasks_per_host;
    vm->tids = calloc((size_t)vm->nworkers, sizeof(int));
    vm->whost = calloc((size_t)vm->nworkers, sizeof(int));
    vm->wspeed = calloc((size_t)vm->nworkers, sizeof(double));
    vm->leaving = calloc((size_t)vm->nworkers, 1);
    vm->wcpu = calloc((size_t)vm->nworkers, sizeof(double));
    vm->was = calloc((size_t)vm->nworkers, sizeof(int));
    vm->gone = calloc((size_t)vm->nworkers, 1);
    if (vm->tids == NULL || vm->whost == NULL || vm->wspeed == NULL || vm->leaving == NULL ||
        vm->wcpu == NULL || vm->was == NULL || vm->gone == NULL)
        return vm_fail(vm, "out of memory", 0);

    if (vm_exe(vm, exe, sizeof(exe)) != 0)
        return -1;
    for (int h = 0; h < vm->nhosts; h++) {
        struct liq_vm_host *ho = &vm->host[h];
        int got;

        ho->first = h * o->tasks_per_host;
        ho->count = o->tasks_per_host;
        got = vm_spawn(vm, exe, wargv, ho->name, ho->count, vm->tids + ho->first);
        for (int i = 0; i < ho->count; i++)
            vm->whost[ho->first + i] = h;
        /* The ones that started are killed by liq_vm_stop. */
        if (liq_spawned(got, ho->count, vm->tids + ho->first, ho->name, vm->why,
                        sizeof(vm->why)) != ho->count)
            return -1;
    }
    pvm_notify(PvmTaskExit, LIQ_TAG_EXITED, vm->nworkers, vm->tids);
    {
        int *dt = calloc((size_t)vm->nhosts, sizeof(int));

        if (dt == NULL)
            return vm_fail(vm, "out of memory", 0);
        for (int h = 0; h < vm->nhosts; h++)
            dt[h] = vm->host[h].dtid;
        pvm_notify(PvmHostDelete, LIQ_TAG_HOSTGONE, vm->nhosts, dt);
        free(dt);
    }
    return 0;
}

int
liq_vm_watch(struct liq_vm *vm, double fixed, double epoch_s)
{
    if ((vm->heard = calloc((size_t)vm->nworkers, sizeof(double))) == NULL ||
        (vm->epoch_t = calloc((size_t)vm->nworkers, sizeof(double))) == NULL ||
        (vm->quiet = calloc((size_t)vm->nworkers, 1)) == NULL)
        return vm_fail(vm, "out of memory", 0);
    vm->timeout_fixed = fixed;
    vm->epoch_s = epoch_s > 0 ? epoch_s : 0;
    vm->timeout = fixed > 0 ? fixed : LIQ_HUNG_EPOCHS * vm->epoch_s;
    if (fixed <= 0 && vm->timeout < LIQ_HUNG_MIN_S)
        vm->timeout = LIQ_HUNG_MIN_S;
    liq_vm_rewatch(vm);
    return 0;
}

void
liq_vm_rewatch(struct liq_vm *vm)
{
    double now = liq_vm_now();

    for (int w = 0; vm->heard != NULL && w < vm->nworkers; w++) {
        vm->heard[w] = now;
        /* The gap across a recovery is no epoch. */
        vm->epoch_t[w] = 0;
        vm->quiet[w] = 0;
    }
}

/* A message from slot w came now: heard, and an epoch report may make the
 * slowest epoch longer (and, for auto, the timeout). */
static void
vm_heard(struct liq_vm *vm, int w, int tag, double now)
{
    if (vm->heard == NULL || w < 0)
        return;
    vm->heard[w] = now;
    if (tag != LIQ_TAG_EPOCH)
        return;
    if (vm->epoch_t[w] > 0 && now - vm->epoch_t[w] > vm->epoch_s) {
        vm->epoch_s = now - vm->epoch_t[w];
        if (vm->timeout_fixed <= 0 && LIQ_HUNG_EPOCHS * vm->epoch_s > vm->timeout)
            vm->timeout = LIQ_HUNG_EPOCHS * vm->epoch_s;
    }
    vm->epoch_t[w] = now;
}

/* The slot silent the longest among those that must be heard, or -1. */
static int
vm_oldest(const struct liq_vm *vm)
{
    int o = -1;

    for (int w = 0; vm->heard != NULL && vm->timeout > 0 && w < vm->nworkers; w++)
        if (vm->tids[w] != 0 && !vm->quiet[w] && !vm->lost[w] &&
            (o < 0 || vm->heard[w] < vm->heard[o]))
            o = w;
    return o;
}

/* Does host h's daemon still send its load samples (every load_interval,
 * 1 s by default)?  A daemon stopped or cut off does not, and a request
 * forwarded to it would wait for its answer until the daemons' deadline. */
static int
vm_host_answers(const struct liq_vm *vm, int h)
{
    struct lvm_hostload *hl = NULL;
    int n = 0, answers = 0;

    if (lvm_hostload(&hl, &n) < 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (hl[i].dtid == vm->host[h].dtid)
            answers = hl[i].age >= 0 && hl[i].age < LIQ_HOST_QUIET_S;
    free(hl);
    return answers;
}

/*
 * Slot o was silent past the timeout, and nothing at all came meanwhile:
 * it is lost, with every worker of its host as silent (a stopped or cut
 * off host).  Only those: a worker blocked behind it (waiting for its
 * ghosts) still sends heartbeats, and one that does not is found by the
 * recovery's handshake, which waits as long.  A lost worker may only be
 * stopped, or cut off for a while: it is killed (SIGKILL reaches a stopped
 * process) and told to quit, and what it sends later is not taken, since
 * its slot is no longer its (the fence; liq.h, "checkpoints").  Where its
 * daemon is silent too, the kill is left to that daemon: once it runs
 * again it finds the master's link closed and ends its tasks.
 */
static int
vm_hung(struct liq_vm *vm, int o, double now)
{
    int h = vm->whost[o], kill = vm_host_answers(vm, h);

    snprintf(vm->why, sizeof(vm->why),
             "worker t%x on host %s sent nothing for %.1f s (--worker-timeout %.1f s): "
             "stopped, hung or cut off", (unsigned)vm->tids[o], vm->host[h].name,
             now - vm->heard[o], vm->timeout);
    for (int w = 0; w < vm->nworkers; w++) {
        if (w != o && (vm->whost[w] != h || vm->tids[w] == 0 || vm->quiet[w] ||
                       now - vm->heard[w] < vm->timeout))
            continue;
        vm->lost[w] = 1; /* the recovery tells it to quit (slot_gone) */
        if (kill) {
            pvm_sendsig(vm->tids[w], SIGKILL);
            pvm_kill(vm->tids[w]);
        }
    }
    return LIQ_VM_LOST;
}

int
liq_vm_recv(struct liq_vm *vm)
{
    for (;;) {
        int o = vm_oldest(vm), b, bytes, t, s;
        double now = liq_vm_now();

        if (o < 0) {
            b = pvm_recv(-1, -1);
        } else {
            /* Wait until the oldest is due, and at least a little: after the
             * master was busy, what queued meanwhile is read first. */
            double left = vm->heard[o] + vm->timeout - now;
            struct timeval tmo;

            if (left < 0.05)
                left = 0.05;
            tmo.tv_sec = (long)left;
            tmo.tv_usec = (long)((left - (double)tmo.tv_sec) * 1e6);
            b = pvm_trecv(-1, -1, &tmo);
            now = liq_vm_now();
            if (b == 0 && now - vm->heard[o] >= vm->timeout)
                return vm_hung(vm, o, now);
        }
        if (b <= 0) {
            if (b < 0)
                return b == LIQ_VM_LOST ? PvmSysErr : b; /* never taken for a loss */
            continue;
        }
        pvm_bufinfo(b, &bytes, &t, &s);
        vm_heard(vm, liq_vm_worker(vm, s), t, now);
        if (t != LIQ_TAG_ALIVE)
            return b;
    }
}

/* Host h left the VM: with recovery on, its workers are lost, and its
 * daemon's tid, which the VM may give to a host added later, is forgotten
 * (liq_master_balance.c watches for the host's return by its name). */
static int
vm_host_lost(struct liq_vm *vm, int h)
{
    int n = 0;

    for (int w = 0; vm->lost != NULL && w < vm->nworkers; w++)
        if (vm->whost[w] == h && vm->tids[w] != 0) {
            vm->lost[w] = 1;
            n++;
        }
    if (vm->lost != NULL)
        vm->host[h].dtid = 0;
    return n;
}

/* Is a worker lost (recovery on)? */
static int
vm_any_lost(const struct liq_vm *vm)
{
    for (int w = 0; vm->ckpt && vm->lost != NULL && w < vm->nworkers; w++)
        if (vm->lost[w])
            return 1;
    return 0;
}

/*
 * After a worker reported a failure, wait a little for the notification of
 * a death or a lost host that caused it, and report that instead.
 */
static void
vm_cause(struct liq_vm *vm)
{
    double end = liq_vm_now() + 1.0;

    while (liq_vm_now() < end) {
        struct timeval tmo = { 0, 50000 };
        int who, b;

        if ((b = pvm_nrecv(-1, LIQ_TAG_HOSTGONE)) > 0) {
            pvm_upkint(&who, 1, 1);
            for (int h = 0; h < vm->nhosts; h++)
                if (vm->host[h].dtid == who) {
                    snprintf(vm->why, sizeof(vm->why), "host %s left the virtual machine",
                             vm->host[h].name);
                    vm_host_lost(vm, h);
                    return;
                }
        }
        if ((b = pvm_trecv(-1, LIQ_TAG_EXITED, &tmo)) > 0) {
            pvm_upkint(&who, 1, 1);
            if (liq_vm_worker(vm, who) >= 0) {
                snprintf(vm->why, sizeof(vm->why), "worker t%x on host %s exited during the job",
                         (unsigned)who, vm_host_of(vm, who));
                if (vm->lost != NULL)
                    vm->lost[liq_vm_worker(vm, who)] = 1;
                return;
            }
        }
    }
}

int
liq_vm_next(struct liq_vm *vm, int *tag, int *src)
{
    for (;;) {
        int b = liq_vm_recv(vm), bytes, t, s, who;
        char text[512];

        if (b == LIQ_VM_LOST)
            return b;
        if (b < 0)
            return vm_fail(vm, "receive", b);
        pvm_bufinfo(b, &bytes, &t, &s);
        switch (t) {
        case LIQ_TAG_FAIL:
            text[0] = '\0';
            pvm_upkstr(text);
            text[sizeof(text) - 1] = '\0';
            snprintf(vm->why, sizeof(vm->why), "worker t%x on host %s failed: %s", (unsigned)s,
                     vm_host_of(vm, s), text);
            /* A worker fails when its neighbour dies: the death is the cause. */
            vm_cause(vm);
            return vm_any_lost(vm) ? LIQ_VM_LOST : -1;
        case LIQ_TAG_EXITED: {
            int w;

            pvm_upkint(&who, 1, 1);
            if ((w = liq_vm_worker(vm, who)) < 0)
                continue;
            /* An evacuated worker exits after its last epoch report, its
             * trace (--trace) and its LEFT: take those first, in that
             * order (the report counts towards its epoch; after LEFT
             * nothing from it is taken). */
            static const int last[3] = { LIQ_TAG_EPOCH, LIQ_TAG_TRACE, LIQ_TAG_LEFT };

            for (int i = 0; vm->leaving[w] && i < 3; i++)
                if ((b = pvm_nrecv(who, last[i])) > 0) {
                    *tag = last[i];
                    *src = who;
                    return b;
                }
        }
            snprintf(vm->why, sizeof(vm->why), "worker t%x on host %s exited during the job",
                     (unsigned)who, vm_host_of(vm, who));
            if (vm->ckpt && vm->lost != NULL) {
                vm->lost[liq_vm_worker(vm, who)] = 1;
                return LIQ_VM_LOST;
            }
            return -1;
        case LIQ_TAG_HOSTGONE:
            pvm_upkint(&who, 1, 1);
            for (int h = 0; h < vm->nhosts; h++)
                if (vm->host[h].dtid == who) {
                    snprintf(vm->why, sizeof(vm->why), "host %s left the virtual machine",
                             vm->host[h].name);
                    if (!vm->ckpt)
                        return -1;
                    /* A host whose workers are all gone already is no news. */
                    if (vm_host_lost(vm, h) > 0)
                        return LIQ_VM_LOST;
                }
            continue;
        default:
            if (liq_vm_worker(vm, s) < 0)
                continue; /* not from this job */
            *tag = t;
            *src = s;
            return b;
        }
    }
}

/* Receive one message with tag from every worker in set (flags), in any order. */
static int
vm_collect(struct liq_vm *vm, int want, const int *member,
           int (*take)(struct liq_vm *, int, void *), void *arg)
{
    int left = 0;
    char *seen = calloc((size_t)vm->nworkers, 1);

    if (seen == NULL)
        return vm_fail(vm, "out of memory", 0);
    for (int i = 0; i < vm->nworkers; i++)
        left += member == NULL || member[i];
    while (left > 0) {
        int tag, src, w;

        if (liq_vm_next(vm, &tag, &src) < 0) {
            free(seen);
            return -1;
        }
        w = liq_vm_worker(vm, src);
        if (tag != want || seen[w] || (member != NULL && !member[w]))
            continue;
        seen[w] = 1;
        left--;
        if (take(vm, w, arg) != 0) {
            free(seen);
            return -1;
        }
    }
    free(seen);
    return 0;
}

static int
take_probe(struct liq_vm *vm, int w, void *arg)
{
    double ups, cache, ups_cpu = 0;

    (void)arg;
    pvm_upkdouble(&ups, 1, 1);
    pvm_upkdouble(&cache, 1, 1);
    pvm_upkdouble(&ups_cpu, 1, 1);
    if (!(ups > 0) || !(ups_cpu > 0)) {
        snprintf(vm->why, sizeof(vm->why), "the probe on host %s measured no speed",
                 vm->host[vm->whost[w]].name);
        return -1;
    }
    vm->wspeed[w] = ups;
    vm->wcpu[w] = ups_cpu;
    vm->host[vm->whost[w]].speed += ups;
    vm->host[vm->whost[w]].cache = cache;
    return 0;
}

/* Round times of the ring (arg): per size and round, the slowest member's. */
static int
take_ring(struct liq_vm *vm, int w, void *arg)
{
    double *ring_times = arg;
    int count;
    double t[LIQ_RING_SIZES * LIQ_RING_ROUNDS];

    pvm_upkint(&count, 1, 1);
    if (count != LIQ_RING_SIZES * LIQ_RING_ROUNDS) {
        snprintf(vm->why, sizeof(vm->why), "ring results of worker %d: %d times", w, count);
        return -1;
    }
    pvm_upkdouble(t, count, 1);
    for (int i = 0; i < count; i++)
        if (t[i] > ring_times[i])
            ring_times[i] = t[i];
    return 0;
}

static int
vm_ring(struct liq_vm *vm)
{
    double times[LIQ_RING_SIZES * LIQ_RING_ROUNDS] = { 0 };
    struct decomp_sample s[LIQ_RING_SIZES * LIQ_RING_ROUNDS];
    struct decomp_net net = { 0, 0, DECOMP_ETH_PAYLOAD, DECOMP_ETH_OVERHEAD, vm->net };
    int *member = calloc((size_t)vm->nworkers, sizeof(int)), *rtids, n = 0, rc;
    int nsizes = LIQ_RING_SIZES, rounds = LIQ_RING_ROUNDS;

    if (member == NULL)
        return vm_fail(vm, "out of memory", 0);
    /* One worker per host; all of one host's when there is only one host. */
    for (int i = 0; i < vm->nworkers; i++)
        if (vm->nhosts == 1 || vm->host[vm->whost[i]].first == i)
            member[i] = 1, n++;
    vm->ringn = n;
    memcpy(vm->ring_bytes, ring_bytes, sizeof(ring_bytes));
    if (n < 2) {
        free(member);
        return 0; /* nobody to talk to: no communication term */
    }
    if ((rtids = calloc((size_t)n, sizeof(int))) == NULL) {
        free(member);
        return vm_fail(vm, "out of memory", 0);
    }
    for (int i = 0, k = 0; i < vm->nworkers; i++)
        if (member[i])
            rtids[k++] = vm->tids[i];
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&n, 1, 1);
    pvm_pkint(rtids, n, 1);
    pvm_pkint(&nsizes, 1, 1);
    {
        int sizes[LIQ_RING_SIZES];

        memcpy(sizes, ring_bytes, sizeof(sizes));
        pvm_pkint(sizes, nsizes, 1);
    }
    pvm_pkint(&rounds, 1, 1);
    rc = pvm_mcast(rtids, n, LIQ_TAG_RING);
    free(rtids);
    if (rc < 0) {
        free(member);
        return vm_fail(vm, "ring request", rc);
    }
    rc = vm_collect(vm, LIQ_TAG_RINGED, member, take_ring, times);
    free(member);
    if (rc != 0)
        return -1;
    for (int z = 0; z < nsizes; z++) {
        double r[LIQ_RING_ROUNDS];

        for (int k = 0; k < rounds; k++) {
            s[z * rounds + k].bytes = ring_bytes[z];
            s[z * rounds + k].seconds = times[z * rounds + k];
            r[k] = times[z * rounds + k];
        }
        vm->ring_s[z] = liq_median(r, (size_t)rounds);
    }
    rc = decomp_fit_ring(s, (size_t)(nsizes * rounds), n, &net, &vm->lambda, &vm->tau, &vm->r2);
    vm->fit_ok = rc == 0;
    if (rc != 0) {
        /* Not physical (noise on a fast link): the smallest message's median
         * round is lambda, the slope to the largest is tau. */
        double per = net.kind == DECOMP_NET_SHARED ? n : 1;

        vm->lambda = vm->ring_s[0];
        vm->tau = (vm->ring_s[nsizes - 1] - vm->ring_s[0]) /
                  (per * (decomp_frame(ring_bytes[nsizes - 1], &net) - decomp_frame(8, &net)));
        if (!(vm->tau > 0))
            vm->tau = 1e-12;
        vm->r2 = 0;
    }
    return 0;
}

int
liq_vm_bench(struct liq_vm *vm, const int ext[3], enum liq_kernel k, double seconds,
             int halo)
{
    int kernel = (int)k, rc;

    if (vm->progress)
        fprintf(stderr, "%s: probing %d worker%s on %d host%s (%dx%dx%d %s box, %.2f s)\n",
                vm->who, vm->nworkers, vm->nworkers == 1 ? "" : "s", vm->nhosts,
                vm->nhosts == 1 ? "" : "s", ext[0], ext[1], ext[2], k == LIQ_RBGS ? "rbgs" : "jacobi", seconds);
    int e[3] = { ext[0], ext[1], ext[2] };

    pvm_initsend(PvmDataDefault);
    pvm_pkint(e, 3, 1);
    pvm_pkint(&kernel, 1, 1);
    pvm_pkdouble(&seconds, 1, 1);
    pvm_pkint(&halo, 1, 1);
    if ((rc = pvm_mcast(vm->tids, vm->nworkers, LIQ_TAG_PROBE)) < 0)
        return vm_fail(vm, "probe request", rc);
    if (vm_collect(vm, LIQ_TAG_PROBED, NULL, take_probe, NULL) != 0)
        return -1;
    if (vm->progress)
        fprintf(stderr, "%s: ring benchmark (%d sizes x %d rounds)\n", vm->who, LIQ_RING_SIZES,
                LIQ_RING_ROUNDS);
    return vm_ring(vm);
}

int
liq_spawned(int got, int count, int *tids, const char *host, char *why, size_t len)
{
    if (got != count) {
        int code = got < 0 ? got : tids[got > 0 ? got : 0];

        snprintf(why, len, "cannot start workers on host %s: %s", host, lvm_errtext(code));
        for (int i = got > 0 ? got : 0; i < count; i++)
            tids[i] = 0;
    }
    return got > 0 ? got : 0;
}

void
liq_tasks_end(const int *tids, int n, int failed, int quit_tag)
{
    int m = 0, *live = failed || tids == NULL ? NULL : calloc((size_t)n + 1, sizeof(int));

    for (int i = 0; tids != NULL && i < n; i++) {
        if (tids[i] <= 0)
            continue;
        if (failed)
            pvm_kill(tids[i]);
        else if (live != NULL)
            live[m++] = tids[i];
    }
    if (m > 0) {
        pvm_initsend(PvmDataDefault);
        pvm_mcast(live, m, quit_tag);
    }
    free(live);
    pvm_exit();
}

void
liq_vm_stop(struct liq_vm *vm, int failed)
{
    if (vm->mytid <= 0)
        return;
    liq_tasks_end(vm->tids, vm->nworkers, failed, LIQ_TAG_QUIT);
    vm->mytid = 0;
}

void
liq_vm_free(struct liq_vm *vm)
{
    free(vm->host);
    free(vm->tids);
    free(vm->whost);
    free(vm->wspeed);
    free(vm->leaving);
    free(vm->wcpu);
    free(vm->was);
    free(vm->gone);
    vm->was = NULL;
    vm->gone = NULL;
    free(vm->lost);
    free(vm->heard);
    free(vm->epoch_t);
    free(vm->quiet);
    vm->lost = NULL;
    vm->heard = vm->epoch_t = NULL;
    vm->quiet = NULL;
    vm->wcpu = NULL;
    vm->leaving = NULL;
    vm->host = NULL;
    vm->tids = vm->whost = NULL;
    vm->wspeed = NULL;
}
