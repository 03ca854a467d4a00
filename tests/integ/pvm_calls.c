/*
 * pvm_calls - the PVM 3.4 calls LiquidVM added last (tests/integ/
 * test_pvm_calls.sh): pvm_export/pvm_unexport through pvm_spawn,
 * pvm_getnoresets, the trace masks a child inherits, pvm_hostsync on
 * every host, and the calls LiquidVM does not provide; and the corners
 * where libpvm3 answered otherwise than PVM 3.4.6: pvm_notify's
 * PvmNotifyCancel and PvmHostAdd counts, pvm_mstat, pvm_pstat, pvm_kill,
 * pvm_trecv and pvm_archcode.  Written only against pvm3.h.  Each command
 * prints what it found and exits 0 when it is right.
 *
 *   pvm_calls export | noreset | tmask | hostsync | unsupported | notify | corners |
 *             spawnflags | database
 *   pvm_calls idle | noreset-idle     enroll (set PvmNoReset), print the tid, wait
 *   pvm_calls hostwatch              print "ready", then check the notices of
 *                                    two host additions and a deletion
 *   pvm_calls hostsync-one DTID      prints the return code
 *   pvm_calls start [block] ARGS...  pvm_start_pvmd(ARGS), prints its code
 *   pvm_calls child-env NAME | child-tmask | child-noreset | child-wait  (spawned)
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* PVM's library exports it; pvm3.h does not declare it. */
extern int pvm_errno;

#define TAG 4242
#define MASKLEN 36

static char *self;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            pvm_exit();                                                        \
            return 1;                                                          \
        }                                                                      \
    } while (0)

/* Spawn ourselves as "child-<what> args" on host where (NULL: any) and
 * return the string it sends. */
static int
ask_child_on(const char *what, char *arg, char *where, char *out, size_t cap)
{
    char cmd[64];
    char *args[3] = { cmd, arg, NULL };
    int tid;
    snprintf(cmd, sizeof(cmd), "child-%s", what);
    if (pvm_spawn(self, args, where ? PvmTaskHost : PvmTaskDefault, where ? where : "", 1,
                  &tid) != 1)
        return -1;
    char buf[4096];
    if (pvm_recv(tid, TAG) < 0 || pvm_upkstr(buf) < 0)
        return -1;
    snprintf(out, cap, "%s", buf);
    return tid;
}

static int
ask_child(const char *what, char *arg, char *out, size_t cap)
{
    return ask_child_on(what, arg, NULL, out, cap);
}

static int
reply(char *s)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(s);
    pvm_send(pvm_parent(), TAG);
    return 0;
}

static int
children(const char *cmd, char **argv)
{
    char m[MASKLEN];
    if (pvm_mytid() < 0)
        return 1;
    if (strcmp(cmd, "child-env") == 0) {
        char *v = getenv(argv[0]);
        reply(v ? v : "(unset)");
    } else if (strcmp(cmd, "child-tmask") == 0) {
        if (pvm_gettmask(PvmTaskSelf, m) < 0)
            return 1;
        reply(m);
    } else if (strcmp(cmd, "child-noreset") == 0) {
        pvm_setopt(PvmNoReset, 1);
        reply("set");
        /* Wait until told to go, so the parent sees us listed. */
        pvm_recv(pvm_parent(), TAG);
    } else if (strcmp(cmd, "child-wait") == 0) {
        reply("up");
        pvm_recv(pvm_parent(), TAG);
    } else if (strcmp(cmd, "child-cwd") == 0) {
        char cwd[4096];
        reply(getcwd(cwd, sizeof(cwd)) ? cwd : "?");
    } else if (strcmp(cmd, "child-home") == 0) {
        char home[4096];
        reply(getenv("HOME") && realpath(getenv("HOME"), home) ? home : "?");
    } else if (strcmp(cmd, "child-parent") == 0) {
        /* Spawned with PvmNoSpawnParent: argv[0] says whom to tell. */
        char s[32];
        snprintf(s, sizeof(s), "%d", pvm_parent());
        pvm_initsend(PvmDataDefault);
        pvm_pkstr(s);
        pvm_send((int)strtol(argv[0], NULL, 0), TAG);
    } else if (strcmp(cmd, "child-mbox") == 0) {
        /* Another task's locked entry: put over it, then wait to take it. */
        char s[64];
        int sb = pvm_initsend(PvmDataDefault), v = 7, put, wait;
        pvm_pkint(&v, 1, 1);
        pvm_setopt(PvmAutoErr, 0);
        put = pvm_putinfo(argv[0], sb, PvmMboxDefault);
        reply("ready");
        pvm_recv(pvm_parent(), TAG);
        wait = pvm_recvinfo(argv[1], 0, PvmMboxWaitForInfo | PvmMboxReadAndDelete);
        snprintf(s, sizeof(s), "%d %d", put, wait);
        reply(s);
    } else {
        return 2;
    }
    pvm_exit();
    return 0;
}

static int
t_export(void)
{
    char got[4096];
    setenv("LVM_CALLS_A", "apple", 1);
    unsetenv("PVM_EXPORT");
    CHECK(pvm_export("LVM_CALLS_A") == 0);
    CHECK(pvm_export("LVM_CALLS_A") == 0);
    CHECK(strcmp(getenv("PVM_EXPORT"), "LVM_CALLS_A") == 0);
    CHECK(ask_child("env", "LVM_CALLS_A", got, sizeof(got)) > 0);
    printf("exported: %s\n", got);
    CHECK(strcmp(got, "apple") == 0);
    CHECK(pvm_unexport("LVM_CALLS_A") == 0);
    CHECK(pvm_unexport("LVM_CALLS_A") == 0);
    CHECK(ask_child("env", "LVM_CALLS_A", got, sizeof(got)) > 0);
    printf("unexported: %s\n", got);
    CHECK(strcmp(got, "(unset)") == 0);
    pvm_exit();
    return 0;
}

static int
listed(int tid)
{
    int *tids = NULL, n = -1, found = 0;
    if (pvm_getnoresets(&tids, &n) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        found += tids[i] == tid;
    return found;
}

static int
t_noreset(void)
{
    char got[64];
    int me = pvm_mytid();
    CHECK(me > 0);
    CHECK(listed(me) == 0);
    CHECK(pvm_setopt(PvmNoReset, 1) == 0);
    CHECK(listed(me) == 1);
    int child = ask_child("noreset", "", got, sizeof(got));
    CHECK(child > 0);
    CHECK(listed(child) == 1);
    CHECK(pvm_notify(PvmTaskExit, TAG + 1, 1, &child) == 0);
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(child, TAG) == 0);
    CHECK(pvm_recv(-1, TAG + 1) > 0);
    /* The master deletes a task's entries when it leaves. */
    for (int i = 0; i < 100 && listed(child) != 0; i++)
        usleep(20000);
    CHECK(listed(child) == 0);
    CHECK(pvm_setopt(PvmNoReset, 0) == 1);
    CHECK(listed(me) == 0);
    printf("noresets: self and child listed, then neither\n");
    pvm_exit();
    return 0;
}

static int
t_tmask(void)
{
    char m[MASKLEN], c[MASKLEN], got[4096];
    unsetenv("PVMTMASK");
    CHECK(pvm_gettmask(PvmTaskSelf, m) == 0);
    CHECK(strlen(m) == MASKLEN - 1 && strspn(m, "@") == MASKLEN - 1);
    m[3] |= 1 << 2;             /* TEV_MASK_SET(m, 14) */
    m[20] |= 1;
    CHECK(pvm_settmask(PvmTaskChild, m) == 0);
    CHECK(pvm_gettmask(PvmTaskChild, c) == 0 && strcmp(c, m) == 0);
    CHECK(pvm_gettmask(PvmTaskSelf, c) == 0 && strspn(c, "@") == MASKLEN - 1);
    CHECK(pvm_settmask(7, m) == PvmBadParam);
    CHECK(ask_child("tmask", "", got, sizeof(got)) > 0);
    printf("child's mask: %s\n", got);
    CHECK(strcmp(got, m) == 0);
    pvm_exit();
    return 0;
}

static long long
us(const struct timeval *tv)
{
    return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

static int
t_hostsync(void)
{
    int nhost, narch;
    struct pvmhostinfo *hi;
    struct timeval clk, delta, now;
    CHECK(pvm_mytid() > 0);
    CHECK(pvm_config(&nhost, &narch, &hi) == 0);
    for (int i = 0; i < nhost; i++) {
        CHECK(pvm_hostsync(hi[i].hi_tid, &clk, &delta) == 0);
        gettimeofday(&now, NULL);
        /* One kernel's clock: the host's and ours agree within a second. */
        CHECK(delta.tv_usec >= 0 && delta.tv_usec <= 999999);
        CHECK(llabs(us(&delta)) < 1000000);
        CHECK(llabs(us(&clk) - us(&now)) < 1000000);
        printf("host %s t%x: delta %lld us\n", hi[i].hi_name, hi[i].hi_tid, us(&delta));
    }
    CHECK(pvm_hostsync(hi[0].hi_tid, NULL, NULL) == 0);
    CHECK(pvm_hostsync(0x3ff << 18, &clk, &delta) == PvmNoHost);
    CHECK(pvm_hostsync(0, &clk, &delta) == PvmNoHost);
    pvm_exit();
    return 0;
}

static int
t_unsupported(void)
{
    struct pvmhostinfo *hip = NULL;
    int narg = 0, nres = 0, res[16];
    char mask[MASKLEN];
    memset(mask, '@', MASKLEN - 1);
    mask[MASKLEN - 1] = 0;
    pvm_setopt(PvmAutoErr, 0);
    CHECK(pvm_tickle(1, &narg, &nres, res) == PvmNotImpl);
    CHECK(pvm_errno == PvmNotImpl);
    CHECK(pvm_reg_hoster() == PvmNotImpl);
    CHECK(pvm_reg_tasker() == PvmNotImpl);
    CHECK(pvm_reg_rm(&hip) == PvmNotImpl);
    CHECK(pvm_reg_tracer(1, 2, 3, 4, mask, 0, 0) == PvmNotImpl);
    printf("pvm_tickle, pvm_reg_*: PvmNotImpl\n");
    pvm_exit();
    return 0;
}

/*
 * The messages with tag waiting within wait_ms, and the int first in
 * the last of them in *first (each is received, so freed by the next).
 */
static int
notices(int tag, int wait_ms, int *first)
{
    struct timeval tmo = { wait_ms / 1000, (wait_ms % 1000) * 1000 };
    int n = 0;
    while (pvm_trecv(-1, tag, &tmo) > 0) {
        if (first)
            pvm_upkint(first, 1, 1);
        n++;
        tmo.tv_sec = 0;
        tmo.tv_usec = 200000;
    }
    return n;
}

/* Cancel a PvmTaskExit request for a child of host where. */
static int
cancel_taskexit(char *where)
{
    char got[64];
    int child = ask_child_on("wait", "", where, got, sizeof(got)), who = 0;
    CHECK(child > 0);
    CHECK(pvm_notify(PvmTaskExit, TAG + 10, 1, &child) == 0);
    CHECK(pvm_notify(PvmTaskExit, TAG + 10, 1, &child) == 0);
    /* The man page: a cancelled request is told at once, as if the task
     * had exited; one request per cancel, none when none is left. */
    CHECK(pvm_notify(PvmTaskExit | PvmNotifyCancel, TAG + 10, 1, &child) == 0);
    CHECK(notices(TAG + 10, 2000, &who) == 1 && who == child);
    CHECK(pvm_notify(PvmTaskExit | PvmNotifyCancel, TAG + 10, 1, &child) == 0);
    CHECK(notices(TAG + 10, 2000, &who) == 1 && who == child);
    CHECK(pvm_notify(PvmTaskExit | PvmNotifyCancel, TAG + 10, 1, &child) == 0);
    CHECK(notices(TAG + 10, 300, NULL) == 0);
    /* Another tag's request still holds; the cancelled ones stay quiet. */
    CHECK(pvm_notify(PvmTaskExit, TAG + 11, 1, &child) == 0);
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(child, TAG) == 0);
    CHECK(notices(TAG + 11, 10000, &who) == 1 && who == child);
    CHECK(notices(TAG + 10, 300, NULL) == 0);
    printf("PvmTaskExit cancelled for t%x on %s\n", child, where);
    return 0;
}

static int
t_notify(void)
{
    int nhost, narch, me = pvm_mytid(), mine = -1, other = -1, dtid, who = 0;
    struct pvmhostinfo *hi;
    CHECK(me > 0);
    CHECK(pvm_config(&nhost, &narch, &hi) == 0 && nhost >= 2);
    for (int i = 0; i < nhost; i++) {
        if (hi[i].hi_tid == pvm_tidtohost(me))
            mine = i;
        else
            other = i;
    }
    CHECK(mine >= 0 && other >= 0);
    char *here = strdup(hi[mine].hi_name), *there = strdup(hi[other].hi_name);
    dtid = hi[other].hi_tid;
    CHECK(here && there);
    pvm_setopt(PvmAutoErr, 0);
    if (cancel_taskexit(here) || cancel_taskexit(there))
        return 1;
    /* PvmHostDelete: the cancel tells at once, once. */
    CHECK(pvm_notify(PvmHostDelete, TAG + 12, 1, &dtid) == 0);
    CHECK(pvm_notify(PvmHostDelete | PvmNotifyCancel, TAG + 12, 1, &dtid) == 0);
    CHECK(notices(TAG + 12, 2000, &who) == 1 && who == dtid);
    CHECK(pvm_notify(PvmHostDelete | PvmNotifyCancel, TAG + 12, 1, &dtid) == 0);
    CHECK(notices(TAG + 12, 300, NULL) == 0);
    /* PvmHostAdd: cancelling one never asked for, or one asked for, is no
     * error and tells nothing. */
    CHECK(pvm_notify(PvmHostAdd | PvmNotifyCancel, TAG + 13, 0, NULL) == 0);
    CHECK(pvm_notify(PvmHostAdd, TAG + 13, -1, NULL) == 0);
    CHECK(pvm_notify(PvmHostAdd | PvmNotifyCancel, TAG + 13, -1, NULL) == 0);
    CHECK(notices(TAG + 13, 300, NULL) == 0);
    /* As PVM's: the kinds that take tids want at least one. */
    CHECK(pvm_notify(PvmTaskExit, TAG + 14, 0, &me) == PvmBadParam);
    CHECK(pvm_notify(PvmHostDelete, TAG + 14, 0, &dtid) == PvmBadParam);
    CHECK(pvm_notify(PvmTaskExit, TAG + 14, 1, NULL) == PvmBadParam);
    printf("PvmHostDelete and PvmHostAdd cancelled; no tids: PvmBadParam\n");
    free(here);
    free(there);
    pvm_exit();
    return 0;
}

/*
 * Run while the script adds two hosts, then deletes the first: the counts
 * of PvmHostAdd requests as PVM's man page gives them (a later call
 * replaces the count; 0 and PvmNotifyCancel end the request), and
 * PvmHostDelete of an added host.
 */
static int
t_hostwatch(void)
{
    int n = 0, v[3] = { 0, 0, 0 };
    CHECK(pvm_mytid() > 0);
    CHECK(pvm_notify(PvmHostAdd, TAG + 20, 1, NULL) == 0);      /* one */
    CHECK(pvm_notify(PvmHostAdd, TAG + 21, -1, NULL) == 0);
    CHECK(pvm_notify(PvmHostAdd, TAG + 21, 0, NULL) == 0);      /* none */
    CHECK(pvm_notify(PvmHostAdd, TAG + 22, -1, NULL) == 0);
    CHECK(pvm_notify(PvmHostAdd, TAG + 22, 2, NULL) == 0);      /* two */
    CHECK(pvm_notify(PvmHostAdd, TAG + 23, 5, NULL) == 0);
    CHECK(pvm_notify(PvmHostAdd | PvmNotifyCancel, TAG + 23, 5, NULL) == 0); /* none */
    printf("ready\n");
    fflush(stdout);
    /* Each notice: the count 1, then the new host's dtid. */
    int added[2];
    for (int i = 0; i < 2; i++) {
        CHECK(pvm_recv(-1, TAG + 22) > 0);
        CHECK(pvm_upkint(v, 2, 1) == 0 && v[0] == 1 && (v[1] & 0x3ffff) == 0);
        added[i] = v[1];
    }
    CHECK(pvm_notify(PvmHostDelete, TAG + 24, 1, &added[0]) == 0);
    printf("added t%x t%x\n", added[0], added[1]);
    fflush(stdout);
    CHECK(notices(TAG + 24, 20000, &n) == 1 && n == added[0]);
    CHECK(notices(TAG + 20, 300, &n) == 1 && n == 1);
    CHECK(notices(TAG + 21, 0, NULL) == 0);
    CHECK(notices(TAG + 22, 0, NULL) == 0);
    CHECK(notices(TAG + 23, 0, NULL) == 0);
    printf("PvmHostAdd: 1, 0, 2 and 0 notices as asked; PvmHostDelete told\n");
    pvm_exit();
    return 0;
}

static int
t_corners(void)
{
    int nhost, narch, ntask, me = pvm_mytid(), gone, st;
    struct pvmhostinfo *hi;
    struct pvmtaskinfo *ti;
    struct timeval past = { -1, 0 };
    char got[64];
    CHECK(me > 0);
    pvm_setopt(PvmAutoErr, 0);
    /* pvm_mstat and pvm_pstat leave pvm_config's and pvm_tasks' arrays
     * alone, as PVM's do. */
    CHECK(pvm_config(&nhost, &narch, &hi) == 0);
    for (int i = 0; i < nhost; i++)
        CHECK(pvm_mstat(hi[i].hi_name) == PvmOk);
    CHECK(pvm_tasks(0, &ntask, &ti) == 0 && ntask >= 1);
    int tids[64], n = ntask < 64 ? ntask : 64;
    char names[64][64];
    for (int i = 0; i < n; i++) {
        tids[i] = ti[i].ti_tid;
        snprintf(names[i], sizeof(names[i]), "%s", ti[i].ti_a_out);
    }
    for (int i = 0; i < n; i++)
        CHECK(pvm_pstat(ti[i].ti_tid) == PvmOk || ti[i].ti_tid != me);
    for (int i = 0; i < n; i++)
        CHECK(ti[i].ti_tid == tids[i] && strncmp(ti[i].ti_a_out, names[i], 63) == 0);
    CHECK(pvm_mstat("no-such-host") == PvmNoHost);
    CHECK(pvm_mstat("") == PvmBadParam);
    /* pvm_pstat: a daemon is no task; a task of a host not in the VM is
     * not running. */
    CHECK(pvm_pstat(hi[0].hi_tid) == PvmBadParam);
    CHECK(pvm_pstat((0xffe << 18) | 1) == PvmNoTask);
    /* pvm_kill and pvm_sendsig of a task that has ended: 0, as in PVM. */
    gone = ask_child("env", "HOME", got, sizeof(got));
    CHECK(gone > 0);
    for (int i = 0; i < 100 && (st = pvm_pstat(gone)) == PvmOk; i++)
        usleep(20000);
    CHECK(st == PvmNoTask);
    CHECK(pvm_kill(gone) == 0);
    CHECK(pvm_sendsig(gone, 15) == 0);
    CHECK(pvm_kill((0xffe << 18) | 1) == 0);
    CHECK(pvm_kill(hi[0].hi_tid) == PvmBadParam);
    /* pvm_trecv with a time already past polls. */
    CHECK(pvm_trecv(-1, TAG + 30, &past) == 0);
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(me, TAG + 30) == 0);
    while (pvm_probe(me, TAG + 30) == 0)
        usleep(1000);
    CHECK(pvm_trecv(-1, TAG + 30, &past) > 0);
    /* pvm_archcode of an architecture no host has. */
    CHECK(pvm_archcode("LINUX64") == hi[0].hi_dsig);
    CHECK(pvm_archcode("SUN4") == PvmNotFound);
    CHECK(pvm_archcode(NULL) == PvmBadParam);
    printf("pvm_mstat, pvm_pstat, pvm_kill, pvm_trecv, pvm_archcode as PVM's\n");
    pvm_exit();
    return 0;
}

/* pvm_spawn as PVM 3.4.6: where's ":DIR" (any flags) is the working
 * directory, one that cannot be entered passed over; PvmNoSpawnParent;
 * PvmHostCompl complements the set the other flags choose. */
static int
t_spawnflags(void)
{
    char got[4096], home[4096], me[32];
    int me_tid = pvm_mytid(), tid, rc;
    char *args[3] = { "child-parent", me, NULL };
    CHECK(me_tid > 0);
    pvm_setopt(PvmAutoErr, 0);
    char *cwdargs[2] = { "child-cwd", NULL };
    CHECK(pvm_spawn(self, cwdargs, PvmTaskDefault, ":/tmp", 1, &tid) == 1);
    CHECK(pvm_recv(tid, TAG) > 0 && pvm_upkstr(got) >= 0 && strcmp(got, "/tmp") == 0);
    CHECK(ask_child_on("home", "", NULL, home, sizeof(home)) > 0 && home[0] == '/');
    /* ask_child_on gives PvmTaskHost for a where: ".:/tmp" names this host. */
    CHECK(ask_child_on("cwd", "", ".:/tmp", got, sizeof(got)) > 0 && strcmp(got, "/tmp") == 0);
    CHECK(ask_child_on("cwd", "", ".:.", got, sizeof(got)) > 0 && strcmp(got, home) == 0);
    CHECK(ask_child_on("cwd", "", ".:/no/such/dir", got, sizeof(got)) > 0 &&
          strcmp(got, home) == 0);
    printf("where's :DIR: /tmp, ., a missing one passed over for %s\n", home);
    snprintf(me, sizeof(me), "%d", me_tid);
    CHECK(pvm_spawn(self, args, PvmNoSpawnParent, "", 1, &tid) == 1);
    CHECK(pvm_recv(tid, TAG) > 0 && pvm_upkstr(got) >= 0);
    CHECK(atoi(got) == PvmParentNotSet);
    args[0] = "child-env";
    args[1] = "HOME";
    CHECK(pvm_spawn(self, args, PvmTaskHost | PvmHostCompl, "no-such-host", 1, &tid) == 1);
    CHECK(pvm_recv(tid, TAG) > 0);
    CHECK((rc = pvm_spawn(self, args, PvmTaskArch | PvmHostCompl, "LINUX64", 1, &tid)) == 0 &&
          tid == PvmNoHost);
    CHECK((rc = pvm_spawn(self, args, PvmHostCompl, "", 1, &tid)) == 0 && tid == PvmNoHost);
    printf("PvmNoSpawnParent: PvmParentNotSet; PvmHostCompl: the other hosts, or none\n");
    pvm_exit();
    return 0;
}

/* PVM 3.3's database and the mailbox's locks, as PVM 3.4.6 answers. */
static int
t_database(void)
{
    char name[64], lock[64], got[64], wait[64];
    int v = 0, me = pvm_mytid(), sb, tid;
    char *args[4] = { "child-mbox", lock, wait, NULL };
    CHECK(me > 0);
    pvm_setopt(PvmAutoErr, 0);
    snprintf(name, sizeof(name), "calls-db-%x", me);
    CHECK(pvm_insert(name, 0, 10) == 0);
    CHECK(pvm_insert(name, 0, 11) == PvmDupEntry);
    CHECK(pvm_insert(name, 5, 50) == 5);
    CHECK(pvm_insert(name, 5, 51) == PvmDupEntry);
    CHECK(pvm_insert(name, -1, 12) == 1);
    CHECK(pvm_lookup(name, 0, &v) == 0 && v == 10);
    CHECK(pvm_lookup(name, 5, &v) == 5 && v == 50);
    CHECK(pvm_insert(name, -2, 1) == PvmBadParam);
    CHECK(pvm_lookup(name, -2, &v) == PvmBadParam);
    CHECK(pvm_delete(name, -1) == PvmBadParam);
    CHECK(pvm_delete(name, 5) == PvmOk && pvm_lookup(name, 5, &v) == PvmNoEntry);
    /* Another task's put over our locked entry, and its read-and-delete
     * waiting for one: PvmDenied both, and the entries stay. */
    snprintf(lock, sizeof(lock), "calls-lock-%x", me);
    snprintf(wait, sizeof(wait), "calls-wait-%x", me);
    sb = pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    CHECK(pvm_putinfo(lock, sb, PvmMboxDefault) == 0);
    CHECK(pvm_spawn(self, args, PvmTaskDefault, "", 1, &tid) == 1);
    CHECK(pvm_recv(tid, TAG) > 0 && pvm_upkstr(got) >= 0 && strcmp(got, "ready") == 0);
    sb = pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    CHECK(pvm_putinfo(wait, sb, PvmMboxDefault) == 0);
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(tid, TAG) == 0);
    CHECK(pvm_recv(tid, TAG) > 0 && pvm_upkstr(got) >= 0);
    printf("another task's putinfo, waiting read-and-delete: %s (PvmDenied %d)\n", got,
           PvmDenied);
    CHECK(atoi(got) == PvmDenied && atoi(strchr(got, ' ') + 1) == PvmDenied);
    CHECK((sb = pvm_recvinfo(wait, 0, PvmMboxDefault)) > 0);
    CHECK(pvm_setrbuf(sb) >= 0 && pvm_upkint(&v, 1, 1) == 0 && v == me);
    CHECK((sb = pvm_recvinfo(lock, 0, PvmMboxDefault)) > 0);
    CHECK(pvm_setrbuf(sb) >= 0 && pvm_upkint(&v, 1, 1) == 0 && v == me);
    printf("pvm_insert: PvmDupEntry for a taken index; bad indices PvmBadParam\n");
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    self = argv[0];
    if (argc < 2)
        return 2;
    if (strncmp(argv[1], "child-", 6) == 0)
        return children(argv[1], argv + 2);
    if (strcmp(argv[1], "export") == 0)
        return t_export();
    if (strcmp(argv[1], "noreset") == 0)
        return t_noreset();
    if (strcmp(argv[1], "tmask") == 0)
        return t_tmask();
    if (strcmp(argv[1], "hostsync") == 0)
        return t_hostsync();
    if (strcmp(argv[1], "unsupported") == 0)
        return t_unsupported();
    if (strcmp(argv[1], "notify") == 0)
        return t_notify();
    if (strcmp(argv[1], "hostwatch") == 0)
        return t_hostwatch();
    if (strcmp(argv[1], "corners") == 0)
        return t_corners();
    if (strcmp(argv[1], "spawnflags") == 0)
        return t_spawnflags();
    if (strcmp(argv[1], "database") == 0)
        return t_database();
    if (strcmp(argv[1], "idle") == 0 || strcmp(argv[1], "noreset-idle") == 0) {
        /* For vmctl reset: enroll (and set PvmNoReset), say so, wait. */
        if (pvm_mytid() < 0 || (argv[1][0] == 'n' && pvm_setopt(PvmNoReset, 1) != 0))
            return 1;
        printf("t%x\n", pvm_mytid());
        fflush(stdout);
        sleep(60);
        pvm_exit();
        return 0;
    }
    if (strcmp(argv[1], "hostsync-one") == 0 && argc == 3) {
        struct timeval clk, delta;
        pvm_setopt(PvmAutoErr, 0);
        printf("%d\n", pvm_hostsync((int)strtol(argv[2], NULL, 0), &clk, &delta));
        return 0;
    }
    if (strcmp(argv[1], "start") == 0 && argc >= 3) {
        int block = atoi(argv[2]);
        pvm_setopt(PvmAutoErr, 0);
        printf("%d\n", pvm_start_pvmd(argc - 3, argv + 3, block));
        return 0;
    }
    return 2;
}
