/*
 * pvm_fortran.c - libfpvm3 (pvm_fortran.h): identity, processes, hosts,
 * options and errors.  Each routine converts its Fortran arguments, calls
 * the one pvm3.h function it wraps and stores the result in its last
 * argument.  pvmfconfig and pvmftasks return one host or task per call from
 * a snapshot taken at the start of a cycle, as PVM's Fortran library does.
 */
#include "pvm_fortran.h"

#include <stdio.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvm3.h"

void
pvmfmytid_(int *tid)
{
    *tid = pvm_mytid();
}

void
pvmfexit_(int *info)
{
    *info = pvm_exit();
}

void
pvmfparent_(int *tid)
{
    *tid = pvm_parent();
}

/* index -1 leaves sibling alone; out of range, sibling gets PvmBadParam. */
void
pvmfsiblings_(int *ntids, int *index, int *sibling)
{
    int *tids = NULL;
    int n = pvm_siblings(&tids);

    *ntids = n;
    if (n < 0 || *index == -1)
        return;
    /* PVM 3.4.6: an index past the siblings names no task. */
    *sibling = (*index >= 0 && *index < n) ? tids[*index] : PvmNoTask;
}

void
pvmftidtohost_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

/* The name PVM's man page gives (pvmftidtoh(3PVM)). */
void
pvmftidtoh_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

void
pvmfarchcode_(char *arch, int *cod, size_t arch_len)
{
    char *a;
    int rc = pvm__fstr_in(arch, arch_len, &a);

    if (rc < 0) {
        *cod = rc;
        return;
    }
    *cod = pvm_archcode(a);
    free(a);
}

void
pvmfperror_(char *msg, int *info, size_t msg_len)
{
    char *m;
    int rc = pvm__fstr_in(msg, msg_len, &m);

    if (rc < 0) {
        *info = rc;
        return;
    }
    /* Fortran's unit 6 and C's stdout buffer separately: what the program
     * wrote before comes first only if both are flushed. */
    fflush(stdout);
    *info = pvm_perror(m);
    free(m);
}

/* PVM 3.3's pvm_serror: PvmAutoErr on (1) or off (0); returns the old one. */
void
pvmfserror_(int *set, int *oldset)
{
    *oldset = pvm_setopt(PvmAutoErr, *set);
}

void
pvmfgetopt_(int *what, int *val)
{
    *val = pvm_getopt(*what);
}

void
pvmfsetopt_(int *what, int *val, int *oldval)
{
    *oldval = pvm_setopt(*what, *val);
}

/* PVM 3.3's pvm_advise: the routing policy, now the PvmRoute option. */
void
pvmfadvise_(int *route, int *info)
{
    int rc = pvm_setopt(PvmRoute, *route);

    *info = rc < 0 ? rc : PvmOk;
}

void
pvmfsleep_(int *secs)
{
    if (*secs > 0)
        sleep((unsigned)*secs);
}

/* args: the arguments in one string, split at blanks (pvm_start.c). */
void
pvmfstartpvmd_(char *args, int *block, int *info, size_t args_len)
{
    char **argv;
    int argc, rc = pvm__fstr_argv(args, args_len, &argv, &argc);

    if (rc < 0) {
        *info = rc;
        return;
    }
    *info = pvm_start_pvmd(argc, argv, *block);
    free(argv);
}

/* where "*" (or blank) means any host, as NULL does in C. */
void
pvmfspawn_(char *task, int *flag, char *where, int *ntask, int *tids, int *numt,
           size_t task_len, size_t where_len)
{
    char *t = NULL, *w = NULL;
    int rc;

    rc = pvm__fstr_in(task, task_len, &t);
    if (rc == 0)
        rc = pvm__fstr_in(where, where_len, &w);
    if (rc < 0) {
        *numt = rc;
        goto out;
    }
    *numt = pvm_spawn(t, NULL, *flag, (w[0] == '\0' || strcmp(w, "*") == 0) ? NULL : w,
                      *ntask, tids);
out:
    free(w);
    free(t);
}

void
pvmfkill_(int *tid, int *info)
{
    *info = pvm_kill(*tid);
}

void
pvmfsendsig_(int *tid, int *signum, int *info)
{
    *info = pvm_sendsig(*tid, *signum);
}

void
pvmfpstat_(int *tid, int *status)
{
    *status = pvm_pstat(*tid);
}

void
pvmfmstat_(char *host, int *mstat, size_t host_len)
{
    char *h;
    int rc = pvm__fstr_in(host, host_len, &h);

    if (rc < 0) {
        *mstat = rc;
        return;
    }
    *mstat = pvm_mstat(h);
    free(h);
}

/* Fortran can only switch it on or off; the output goes to stdout. */
void
pvmfcatchout_(int *onoff, int *info)
{
    *info = pvm_catchout(*onoff ? stdout : NULL);
}

/* One host per call: 1 on success, else the host's (or the call's) code. */
static void
pvm__fhost(char *host, int *info, size_t host_len, int add)
{
    char *h;
    int st = 0, rc = pvm__fstr_in(host, host_len, &h);

    if (rc < 0) {
        *info = rc;
        return;
    }
    rc = add ? pvm_addhosts(&h, 1, &st) : pvm_delhosts(&h, 1, &st);
    *info = rc < 0 ? rc : (st < 0 ? st : 1);
    free(h);
}

void
pvmfaddhost_(char *host, int *info, size_t host_len)
{
    pvm__fhost(host, info, host_len, 1);
}

void
pvmfdelhost_(char *host, int *info, size_t host_len)
{
    pvm__fhost(host, info, host_len, 0);
}

void
pvmfhalt_(int *info)
{
    *info = pvm_halt();
}

/* pvmfconfig's snapshot of the hosts and where the cycle stands. */
static struct {
    int n, narch, next;
    struct pvm__fhost { int tid, speed; char *name, *arch; } *h;
} pvm__fconf;

static void
pvm__fconf_reset(void)
{
    int i;

    for (i = 0; i < pvm__fconf.n; i++) {
        free(pvm__fconf.h[i].name);
        free(pvm__fconf.h[i].arch);
    }
    free(pvm__fconf.h);
    memset(&pvm__fconf, 0, sizeof pvm__fconf);
}

static int
pvm__fconf_load(void)
{
    struct pvmhostinfo *hp = NULL;
    int nhost = 0, narch = 0, i, rc = pvm_config(&nhost, &narch, &hp);

    if (rc < 0)
        return rc;
    if (nhost <= 0)
        return PvmSysErr;
    pvm__fconf.h = calloc((size_t)nhost, sizeof *pvm__fconf.h);
    if (pvm__fconf.h == NULL)
        return PvmNoMem;
    pvm__fconf.n = nhost;
    pvm__fconf.narch = narch;
    for (i = 0; i < nhost; i++) {
        pvm__fconf.h[i].tid = hp[i].hi_tid;
        pvm__fconf.h[i].speed = hp[i].hi_speed;
        pvm__fconf.h[i].name = strdup(hp[i].hi_name ? hp[i].hi_name : "");
        pvm__fconf.h[i].arch = strdup(hp[i].hi_arch ? hp[i].hi_arch : "");
        if (pvm__fconf.h[i].name == NULL || pvm__fconf.h[i].arch == NULL) {
            pvm__fconf_reset();
            return PvmNoMem;
        }
    }
    return 0;
}

void
pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch, int *speed, int *info,
            size_t name_len, size_t arch_len)
{
    struct pvm__fhost *h;
    int rc, rc2;

    if (*nhost == -1)
        pvm__fconf_reset();
    if (pvm__fconf.n == 0 && (rc = pvm__fconf_load()) < 0) {
        *info = rc;
        return;
    }
    h = &pvm__fconf.h[pvm__fconf.next];
    *nhost = pvm__fconf.n;
    *narch = pvm__fconf.narch;
    *dtid = h->tid;
    *speed = h->speed;
    rc = pvm__fstr_out(name, name_len, h->name);
    rc2 = pvm__fstr_out(arch, arch_len, h->arch);
    *info = rc < 0 ? rc : rc2;
    if (++pvm__fconf.next == pvm__fconf.n)
        pvm__fconf_reset();
}

/* pvmftasks's snapshot, likewise. */
static struct {
    int n, next;
    struct pvm__ftask { int tid, ptid, host, flag; char *aout; } *t;
} pvm__ftasks;

static void
pvm__ftasks_reset(void)
{
    int i;

    for (i = 0; i < pvm__ftasks.n; i++)
        free(pvm__ftasks.t[i].aout);
    free(pvm__ftasks.t);
    memset(&pvm__ftasks, 0, sizeof pvm__ftasks);
}

static int
pvm__ftasks_load(int where)
{
    struct pvmtaskinfo *tp = NULL;
    int n = 0, i, rc = pvm_tasks(where, &n, &tp);

    if (rc < 0)
        return rc;
    if (n <= 0)
        return PvmNoTask;
    pvm__ftasks.t = calloc((size_t)n, sizeof *pvm__ftasks.t);
    if (pvm__ftasks.t == NULL)
        return PvmNoMem;
    pvm__ftasks.n = n;
    for (i = 0; i < n; i++) {
        pvm__ftasks.t[i].tid = tp[i].ti_tid;
        pvm__ftasks.t[i].ptid = tp[i].ti_ptid;
        pvm__ftasks.t[i].host = tp[i].ti_host;
        pvm__ftasks.t[i].flag = tp[i].ti_flag;
        pvm__ftasks.t[i].aout = strdup(tp[i].ti_a_out ? tp[i].ti_a_out : "");
        if (pvm__ftasks.t[i].aout == NULL) {
            pvm__ftasks_reset();
            return PvmNoMem;
        }
    }
    return 0;
}

void
pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid, int *flag, char *aout,
           int *info, size_t aout_len)
{
    struct pvm__ftask *t;
    int rc;

    if (*ntask == -1)
        pvm__ftasks_reset();
    if (pvm__ftasks.n == 0 && (rc = pvm__ftasks_load(*where)) < 0) {
        *info = rc;
        return;
    }
    t = &pvm__ftasks.t[pvm__ftasks.next];
    *ntask = pvm__ftasks.n;
    *tid = t->tid;
    *ptid = t->ptid;
    *dtid = t->host;
    *flag = t->flag;
    *info = pvm__fstr_out(aout, aout_len, t->aout);
    if (++pvm__ftasks.next == pvm__ftasks.n)
        pvm__ftasks_reset();
}

void
pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info)
{
    *info = pvm_notify(*what, *msgtag, *cnt, tids);
}

/* The times as C's timevals, in default integers (seconds past 2038
 * wrap, as in PVM's own binding); zero on an error. */
void
pvmfhostsync_(int *host, int *clksec, int *clkusec, int *deltasec, int *deltausec, int *info)
{
    struct timeval clk = { 0, 0 }, delta = { 0, 0 };

    *info = pvm_hostsync(*host, &clk, &delta);
    if (*info < 0)
        clk.tv_sec = clk.tv_usec = delta.tv_sec = delta.tv_usec = 0;
    *clksec = (int)clk.tv_sec;
    *clkusec = (int)clk.tv_usec;
    *deltasec = (int)delta.tv_sec;
    *deltausec = (int)delta.tv_usec;
}
