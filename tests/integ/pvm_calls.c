/*
 * pvm_calls - the PVM 3.4 calls LiquidVM added last (tests/integ/
 * test_pvm_calls.sh): pvm_export/pvm_unexport through pvm_spawn,
 * pvm_getnoresets, the trace masks a child inherits, pvm_hostsync on
 * every host, and the calls LiquidVM does not provide.  Written only
 * against pvm3.h.  Each command prints what it found and exits 0 when it
 * is right.
 *
 *   pvm_calls export | noreset | tmask | hostsync | unsupported
 *   pvm_calls idle | noreset-idle     enroll (set PvmNoReset), print the tid, wait
 *   pvm_calls hostsync-one DTID      prints the return code
 *   pvm_calls start [block] ARGS...  pvm_start_pvmd(ARGS), prints its code
 *   pvm_calls child-env NAME | child-tmask | child-noreset   (spawned)
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

/* Spawn ourselves as "child-<what> args" and return the string it sends. */
static int
ask_child(const char *what, char *arg, char *out, size_t cap)
{
    char cmd[64];
    char *args[3] = { cmd, arg, NULL };
    int tid;
    snprintf(cmd, sizeof(cmd), "child-%s", what);
    if (pvm_spawn(self, args, PvmTaskDefault, "", 1, &tid) != 1)
        return -1;
    char buf[4096];
    if (pvm_recv(tid, TAG) < 0 || pvm_upkstr(buf) < 0)
        return -1;
    snprintf(out, cap, "%s", buf);
    return tid;
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
