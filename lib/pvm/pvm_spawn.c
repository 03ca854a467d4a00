/*
 * pvm_spawn.c - tasks: pvm_spawn, pvm_siblings, pvm_catchout, pvm_kill,
 * pvm_sendsig, pvm_notify, pvm_tasks, pvm_pstat, pvm_tidtohost.
 *
 * The daemon does the work (daemon/vmd_fwd.c, vmd_spawn.c): placement over
 * the hosts, starting processes, watching exits.  Arrays handed back to the
 * program (pvm_tasks, pvm_siblings) live in the library context and stay
 * valid until the next call of the same function, as in PVM.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire_tid.h"

#define PVM__SPAWN_MAX 4096

static double
mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * As PVM's: while pvm_catchout is on, pvm_exit waits until every task
 * whose output it catches has ended it, so that a parent that leaves at
 * once loses none of its children's lines.  A task gone without its EOF
 * (its host lost) is let go once pvm_pstat has said so twice, a second
 * apart.
 */
static void
output_wait(void)
{
    int tids[64], n, suspect[64], nsus = 0, said = 0, autoerr = pvm__ctx.autoerr;
    double t0 = mono_now(), last = t0;

    /* As PVM's: only while pvm_catchout is on (pvm_catchout(0) is the way out). */
    if (pvm__ctx.catchout == NULL || pvm__ctx.nouts == 0)
        return;
    for (;;) {
        /* Nothing open: done (a grandchild on another host was announced
         * by its spawner's daemon before its spawner's EOF). */
        if ((n = pvm__output_open(tids, 64)) == 0)
            return;
        if (pvm__pump(100, NULL, NULL) < 0)
            break;
        if (mono_now() - last < 1.0)
            continue;
        last = mono_now();
        int now[64], nnow = 0;

        pvm__ctx.autoerr = 0;
        for (int i = 0; i < n && i < 64; i++) {
            int st = pvm_pstat(tids[i]);

            /* Gone: no such task (also when its host left the VM). */
            if (st >= 0 || st == PvmSysErr)
                continue;
            int was = 0;

            for (int k = 0; k < nsus; k++)
                was |= suspect[k] == tids[i];
            if (was)
                pvm__output_drop(tids[i]);
            else
                now[nnow++] = tids[i];
        }
        pvm__ctx.autoerr = autoerr;
        memcpy(suspect, now, (size_t)nnow * sizeof(int));
        nsus = nnow;
        if (!said && last - t0 >= 5.0) {
            fprintf(stderr, "libpvm [t%x]: pvm_exit waits for the output of %d task(s)\n",
                    (unsigned)pvm__ctx.mytid, n);
            said = 1;
        }
    }
}

/* pvm_exit (pvm_task.c, below us) calls it through the context. */
static void __attribute__((constructor))
output_hook(void)
{
    pvm__ctx.output_wait = output_wait;
}

/*
 * As PVM: PvmOutputTid becomes us and PvmOutputCode the code whose lines
 * are printed (pvm_output.c), for the children spawned from now on; off,
 * the lines still on their way are dropped and pvm_exit does not wait.
 */
int
pvm_catchout(FILE *ff)
{
    pvm__opt_load();
    pvm__ctx.catchout = ff;
    if (ff != NULL && pvm__enroll() != 0)
        return PvmOk;       /* PVM's returns 0 whatever happens */
    /* Off: the children go where our own output goes, as PVM's. */
    pvm__ctx.opt[PvmOutputTid] = ff != NULL ? pvm__ctx.mytid : pvm__ctx.opt[PvmSelfOutputTid];
    pvm__ctx.opt[PvmOutputCode] = ff != NULL ? PVM__OUT_CATCH : pvm__ctx.opt[PvmSelfOutputCode];
    return PvmOk;
}

/* Variables named in PVM_EXPORT (colon-separated) go to spawned tasks,
 * at most 254 of them: the daemon takes 256 with our own two, plus
 * Paradise's (below, at most 5; the daemon allows for them).  Of ours
 * (LIQUIDVM_*) only the shared memory's tuning may be named there; the
 * context and Paradise's are set below. */
static int
exportable(const char *name)
{
    return strncmp(name, "LIQUIDVM_", 9) != 0 ||
           (strncmp(name, "LIQUIDVM_SHM_", 13) == 0 && wire_env_spawnable(name));
}

static void
put_exports(struct wire_wbuf *b, const char *const *extra, uint32_t nextra)
{
    const char *list = getenv("PVM_EXPORT");
    char names[4096];
    char *save = NULL;
    uint32_t n = 0;
    struct wire_wbuf tmp;
    wire_wbuf_init(&tmp);
    if (list && strlen(list) < sizeof(names)) {
        strcpy(names, list);
        for (char *name = strtok_r(names, ":", &save); name; name = strtok_r(NULL, ":", &save)) {
            const char *v = getenv(name);
            char kv[8192];
            if (v == NULL || !exportable(name) || strchr(name, '=') ||
                (size_t)snprintf(kv, sizeof(kv), "%s=%s", name, v) >= sizeof(kv) ||
                n >= 254 - nextra)
                continue;
            wire_put_str(&tmp, kv);
            n++;
        }
    }
    /* Children start in the parent's current context (pvm_context.c) and
     * with its child trace mask (pvm_tmask.c), as PVM passes it. */
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "LIQUIDVM_CTX=%d", pvm__context());
    wire_put_str(&tmp, ctx);
    n++;
    snprintf(ctx, sizeof(ctx), "PVMTMASK=%s", pvm__tmask_child());
    wire_put_str(&tmp, ctx);
    n++;
    for (uint32_t i = 0; i < nextra; i++, n++)
        wire_put_str(&tmp, extra[i]);
    wire_put_u32(b, n);
    wire_put_bytes(b, tmp.data, tmp.len);
    wire_wbuf_free(&tmp);
}

/*
 * Paradise (issue 27): the children's task path (pvm_hints.c), and the
 * trace passed on: LIQUIDVM_TRACE when we trace from it, or the spawn
 * asks for traced children (PvmTaskTrace, a tracer in PvmTraceTid); the
 * first traced task's host, where clocks are compared; the run the traces
 * are of; the hints file we read, so that a run follows one file even if
 * its other programs have none beside them.
 * Each string is put in env[] (room for 6); returns how many.
 */
static uint32_t
paradise_env(int flags, const char *childpath, char env[][WIRE_STR_MAX])
{
    const char *e, *traced = getenv("LIQUIDVM_TRACE");
    char dir[4096];
    uint32_t n = 0;

    snprintf(env[n++], sizeof(env[0]), "LIQUIDVM_TASKPATH=%s", childpath);
    if ((traced != NULL && traced[0] != '\0') || (flags & PvmTaskTrace) ||
        pvm__ctx.opt[PvmTraceTid] > 0) {
        if (pvm__trace_dir(dir, sizeof(dir)) == 0 &&
            (size_t)snprintf(env[n], sizeof(env[0]), "LIQUIDVM_TRACE=%s", dir) < sizeof(env[0]))
            n++;
    }
    if ((e = pvm__trace_run()) != NULL)
        snprintf(env[n++], sizeof(env[0]), "LIQUIDVM_TRACE_RUN=%s", e);
    if ((e = getenv("LIQUIDVM_TRACE_ROOT")) != NULL && strlen(e) < 16)
        snprintf(env[n++], sizeof(env[0]), "LIQUIDVM_TRACE_ROOT=%s", e);
    else if (pvm__ctx.tr_state > 0)
        snprintf(env[n++], sizeof(env[0]), "LIQUIDVM_TRACE_ROOT=%d", WIRE_TID_HOST(pvm__ctx.mytid));
    /* The hints of the run: named, or found beside the program started. */
    if ((e = getenv("LIQUIDVM_HINTS")) == NULL && pvm__ctx.hints != NULL)
        e = pvm__ctx.hints->file;
    if (e != NULL &&
        (size_t)snprintf(env[n], sizeof(env[0]), "LIQUIDVM_HINTS=%s", e) < sizeof(env[0]))
        n++;
    if ((e = getenv("LIQUIDVM_HINTS_VERBOSE")) != NULL && strlen(e) < 64)
        snprintf(env[n++], sizeof(env[0]), "LIQUIDVM_HINTS_VERBOSE=%s", e);
    return n;
}

/*
 * Where the hints put the children of childpath when the caller named no
 * host: 1 with the host in out, else 0.  "@parent" is our own host.
 */
static int
hinted_host(int flags, const char *where, const char *childpath, char *out, size_t cap)
{
    const char *h;

    if ((flags & (PvmTaskHost | PvmTaskArch)) && where != NULL && where[0] != '\0')
        return 0;
    if ((h = pvm__hints_host(childpath)) == NULL)
        return 0;
    if (strcmp(h, "@parent") == 0) {
        if (pvm__host_name((int)((uint32_t)pvm__ctx.mytid & WIRE_HOST_TID(WIRE_TID_HOST_MASK)),
                           out, cap) != 0)
            return 0;
    } else {
        snprintf(out, cap, "%s", h);
    }
    pvm__hints_note("spawn %s on host %s", childpath, out);
    return 1;
}

/* One spawn request: 0 with *ok the count started (tids filled), or a
 * negative code. */
static int
spawn_once(const char *file, char **argv, uint32_t argc, int flags, const char *where, int ntask,
           int *tids, const char *const *envp, uint32_t nenv, int *ok)
{
    struct wire_wbuf req;
    struct wire_rbuf r;
    unsigned char *body;
    size_t len;
    uint32_t n;
    int rc;

    *ok = 0;
    wire_wbuf_init(&req);
    wire_put_str(&req, file);
    wire_put_u32(&req, (uint32_t)flags);
    /* where is [HOST|ARCH][:DIR]: the name counts with PvmTaskHost or
     * PvmTaskArch only, the working directory always. */
    if (where != NULL && (flags & (PvmTaskHost | PvmTaskArch)))
        wire_put_str(&req, where);
    else
        wire_put_str(&req, where != NULL && strchr(where, ':') ? strchr(where, ':') : "");
    wire_put_u32(&req, (uint32_t)ntask);
    pvm__opt_load();
    wire_put_u32(&req, (uint32_t)pvm__ctx.opt[PvmOutputTid]);
    wire_put_i32(&req, pvm__ctx.opt[PvmOutputCode]);
    wire_put_u32(&req, argc);
    for (uint32_t i = 0; i < argc; i++)
        wire_put_str(&req, argv[i]);
    put_exports(&req, envp, nenv);
    rc = pvm__request(WIRE_T_TASK_SPAWN, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc != 0) {
        free(body);
        return rc;
    }
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &n) != 0 || n != (uint32_t)ntask) {
        free(body);
        return WIRE_EFRAME;
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t t;
        if (wire_get_i32(&r, &t) != 0)
            t = WIRE_EFRAME;
        /* Failed slots hold PVM's code: PvmNoFile, PvmNoHost, ... */
        int v = t > 0 ? t : pvm__errcode(t);
        if (tids)
            tids[i] = v;
        if (t > 0)
            ++*ok;
        /* Its output comes to us: pvm_exit waits for its end. */
        if (t > 0 && pvm__ctx.opt[PvmOutputTid] == pvm__ctx.mytid)
            pvm__output_expect(t, pvm__ctx.opt[PvmOutputCode]);
    }
    free(body);
    return 0;
}

int
pvm_spawn(char *file, char **argv, int flags, char *where, int ntask, int *tids)
{
    uint32_t argc = 0, nenv;
    int rc, callno, ok = 0, hinted;
    char childpath[PVM__HINT_PATH + 16], host[256], env[6][WIRE_STR_MAX];
    const char *envp[6];
    int64_t t0 = 0;

    if (file == NULL || file[0] == '\0' || ntask < 1 || ntask > PVM__SPAWN_MAX)
        return pvm__err(-EINVAL, "pvm_spawn");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_spawn");
    if (pvm__tracing())
        t0 = pvm__trace_begin();
    callno = pvm__ctx.nspawn_calls++;
    snprintf(childpath, sizeof(childpath), "%s/%d", pvm__task_path(), callno);
    if (strlen(childpath) >= PVM__HINT_PATH)
        snprintf(childpath, sizeof(childpath), "%s", pvm__task_path());
    hinted = hinted_host(flags, where, childpath, host, sizeof(host));
    nenv = paradise_env(flags, childpath, env);
    for (uint32_t i = 0; i < nenv; i++)
        envp[i] = env[i];
    while (argv && argv[argc] && argc < 256)
        argc++;
    if (hinted) {
        rc = spawn_once(file, argv, argc, (flags & ~PvmTaskArch) | PvmTaskHost, host, ntask, tids,
                        envp, nenv, &ok);
        /* Hints from another VM may name a host this one lacks: the
         * daemons place the tasks, as the program asked. */
        if (rc == 0 && ok == 0)
            pvm__hints_note("spawn %s on host %s started nothing; placed as asked", childpath,
                            host);
    }
    if (!hinted || (rc == 0 && ok == 0))
        rc = spawn_once(file, argv, argc, flags, where, ntask, tids, envp, nenv, &ok);
    if (rc != 0)
        return pvm__err(rc, "pvm_spawn");
    if (t0 != 0)
        pvm__trace_spawn(t0, callno, file, ntask, tids, ok);
    /* As PVM 3.4.6: the count started; failed slots hold their codes, and
     * a spawn that started nothing returns 0 without a report. */
    return ok;
}

int
pvm_siblings(int **tids)
{
    int rc = pvm__enroll();
    if (rc)
        return pvm__err(rc, "pvm_siblings");
    if (pvm__ctx.sibs == NULL) {
        const char *spawned = getenv("LIQUIDVM_TID");
        if (spawned == NULL || strtoul(spawned, NULL, 0) == 0) {
            /* Started from the shell: its own sibling. */
            if ((pvm__ctx.sibs = malloc(sizeof(int))) == NULL)
                return pvm__err(-ENOMEM, "pvm_siblings");
            pvm__ctx.sibs[0] = pvm__ctx.mytid;
            pvm__ctx.nsibs = 1;
        } else {
            /* The spawning daemon sends the list once every host answered. */
            for (;;) {
                struct pvm__msg *prev = NULL, *m;
                for (m = pvm__ctx.inq_head; m; prev = m, m = m->next)
                    if (m->ctx == WIRE_CTX_SYSTEM && m->tag == WIRE_TAG_SIBLINGS)
                        break;
                if (m) {
                    struct wire_rbuf r;
                    uint32_t n;
                    wire_rbuf_init(&r, m->data, m->len);
                    if (wire_get_u32(&r, &n) == 0 && n <= PVM__SPAWN_MAX &&
                        (pvm__ctx.sibs = malloc(sizeof(int) * (n ? n : 1))) != NULL) {
                        for (uint32_t i = 0; i < n; i++) {
                            uint32_t t = 0;
                            wire_get_u32(&r, &t);
                            pvm__ctx.sibs[i] = (int)t;
                        }
                        pvm__ctx.nsibs = (int)n;
                    }
                    pvm__inq_unlink(prev, m);
                    free(m->data);
                    free(m);
                    if (pvm__ctx.sibs == NULL)
                        return pvm__err(-ENOMEM, "pvm_siblings");
                    break;
                }
                if ((rc = pvm__pump(-1, NULL, NULL)) < 0)
                    return pvm__err(rc, "pvm_siblings");
            }
        }
    }
    if (tids)
        *tids = pvm__ctx.sibs;
    return pvm__ctx.nsibs;
}

/* A request of two u32s answered by a status: 0 or an error code, not
 * reported (the caller reports it under its own name). */
static int
simple(int type, uint32_t a, uint32_t b)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int rc = pvm__enroll();
    if (rc)
        return rc;
    wire_wbuf_init(&req);
    wire_put_u32(&req, a);
    wire_put_u32(&req, b);
    rc = pvm__request(type, &req, &body, &len);
    wire_wbuf_free(&req);
    free(body);
    return rc;
}

/*
 * As PVM's: a signal for a task that is not (or no longer) running, here or
 * on a host not in the VM, is no error; PVM's daemon drops it, and the man
 * pages give only PvmBadParam (not a task's tid) and PvmSysErr.
 */
static int
signal_task(int tid, int signum, const char *fn)
{
    if (!WIRE_TID_IS_TASK(tid))
        return pvm__err(-EINVAL, fn);
    int rc = simple(WIRE_T_TASK_KILL, (uint32_t)tid, (uint32_t)signum);
    if (rc == WIRE_ENOTASK || rc == WIRE_ENOHOST)
        return PvmOk;
    return rc ? pvm__err(rc, fn) : PvmOk;
}

int
pvm_kill(int tid)
{
    return signal_task(tid, 0, "pvm_kill");
}

int
pvm_sendsig(int tid, int signum)
{
    if (signum <= 0 || signum >= 65)
        return pvm__err(-EINVAL, "pvm_sendsig");
    return signal_task(tid, signum, "pvm_sendsig");
}

int
pvm_notify(int what, int msgtag, int cnt, int *tids)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int kind = what & ~PvmNotifyCancel;
    int rc;

    /* PVM wants at least one tid for the task and host deletion kinds;
     * PvmHostAdd takes a count (-1: every addition, 0: none) and no tids. */
    if (kind < PvmTaskExit || kind > PvmHostAdd)
        return pvm__err(-EINVAL, "pvm_notify");
    if (kind != PvmHostAdd && (cnt < 1 || tids == NULL))
        return pvm__err(-EINVAL, "pvm_notify");
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, "pvm_notify");
    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)(kind | (what & PvmNotifyCancel)));
    wire_put_i32(&req, msgtag);
    wire_put_u32(&req, (uint32_t)cnt);
    for (int i = 0; kind != PvmHostAdd && i < cnt; i++)
        wire_put_u32(&req, (uint32_t)tids[i]);
    rc = pvm__request(WIRE_T_TASK_NOTIFY, &req, &body, &len);
    wire_wbuf_free(&req);
    free(body);
    return rc ? pvm__err(rc, "pvm_notify") : PvmOk;
}

static void
task_info_free(struct pvmtaskinfo *ti, int n)
{
    for (int i = 0; i < n; i++)
        free(ti[i].ti_a_out);
    free(ti);
}

/* Ask for the task list of where, into a new array *out of *nout entries. */
static int
task_list(uint32_t where, struct pvmtaskinfo **out, int *nout)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int rc = pvm__enroll();
    if (rc)
        return rc;
    wire_wbuf_init(&req);
    wire_put_u32(&req, where);
    rc = pvm__request(WIRE_T_TASK_LIST, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc != 0) {
        free(body);
        return rc;
    }
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &n)) != 0 || n > 1u << 20) {
        free(body);
        return rc ? rc : WIRE_EFRAME;
    }
    struct pvmtaskinfo *tinfo = calloc(n ? n : 1, sizeof(struct pvmtaskinfo));
    int ntinfo = 0;
    if (tinfo == NULL) {
        free(body);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t tid, ptid, host, flag, pid;
        char name[256];
        if ((rc = wire_get_u32(&r, &tid)) || (rc = wire_get_u32(&r, &ptid)) ||
            (rc = wire_get_u32(&r, &host)) || (rc = wire_get_u32(&r, &flag)) ||
            (rc = wire_get_str(&r, name, sizeof(name))) || (rc = wire_get_u32(&r, &pid)))
            break;
        struct pvmtaskinfo *ti = &tinfo[ntinfo++];
        ti->ti_tid = (int)tid;
        ti->ti_ptid = (int)ptid;
        ti->ti_host = (int)host;
        ti->ti_flag = (int)flag;
        ti->ti_a_out = strdup(name);
        ti->ti_pid = (int)pid;
    }
    free(body);
    if (rc) {
        task_info_free(tinfo, ntinfo);
        return rc;
    }
    *out = tinfo;
    *nout = ntinfo;
    return 0;
}

int
pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp)
{
    struct pvmtaskinfo *ti;
    int n, rc = task_list((uint32_t)where, &ti, &n);
    if (rc)
        return pvm__err(rc, "pvm_tasks");
    /* The previous answer stays valid until this one is ready, as in PVM. */
    task_info_free(pvm__ctx.tinfo, pvm__ctx.ntinfo);
    pvm__ctx.tinfo = ti;
    pvm__ctx.ntinfo = n;
    if (ntask)
        *ntask = n;
    if (taskp)
        *taskp = ti;
    return PvmOk;
}

/*
 * PVM's answers: PvmOk, PvmNoTask for a task that is not running (also on
 * a host that is not in the VM), PvmBadParam for what is not a task's tid
 * (a daemon's included).  The array pvm_tasks returned is left alone, so
 * a program may pvm_pstat each task pvm_tasks listed.
 */
int
pvm_pstat(int tid)
{
    if (!WIRE_TID_IS_TASK(tid))
        return pvm__err(-EINVAL, "pvm_pstat");
    struct pvmtaskinfo *ti;
    int n, rc = task_list((uint32_t)tid, &ti, &n);
    if (rc == WIRE_ENOHOST)
        return PvmNoTask;
    if (rc)
        return pvm__err(rc, "pvm_pstat");
    task_info_free(ti, n);
    /* PVM returns PvmNoTask quietly: it is an answer, not a failure. */
    return n > 0 ? PvmOk : PvmNoTask;
}

int
pvm_tidtohost(int tid)
{
    if (tid <= 0)
        return pvm__err(-EINVAL, "pvm_tidtohost");
    return (int)((uint32_t)tid & WIRE_HOST_TID(WIRE_TID_HOST_MASK));
}
