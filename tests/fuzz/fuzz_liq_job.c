/*
 * fuzz_liq_job.c - libFuzzer harness for a worker's reading of the JOB
 * message (lib/liquid/liq_job.c, liq_job_setup): what a `vmrun worker`
 * does with the bytes its master sent, before the first block -- the
 * header, the workers and owners, the cut into regions, the regions'
 * boxes, the quanta and the links of the exchange.
 *
 * Input: byte 0 says who reads it (bits 0-1: the program's description,
 * fuzz_desc below, 3 none; bits 2-3: which of the tids FUZZ_TID0.. this
 * worker is; bit 4: a trace kept from a job given up for a recovery is
 * there already), the rest is the message body as the master's
 * PvmDataDefault packing makes it (XDR), adopted as the receive buffer
 * (pvm__buf_adopt, as a frame from the daemon is).  The worker is built as
 * liq_worker_main builds it; there is no daemon (LIQUIDVM_HOME is an empty
 * scratch directory), so liq_fail's message to the master goes nowhere at
 * once (its text goes to stderr).  The setup must return 0 with a worker
 * that holds together, or a negative code, and liq_job_free must leave
 * nothing allocated.  A crash, a leak, undefined behaviour, an oversized
 * allocation or a slow input is a bug.
 *
 * Memory: the address space is capped at FUZZ_AS_MB above what the
 * process maps when fuzzing starts (and the sanitizer's allocator returns
 * NULL rather than abort), as on a host with that much memory: a job
 * larger than that must be refused with a message, like any other.  The
 * cap is small, since the boxes that fit in it are filled point by point:
 * the fuzzer's time goes to messages, not to large grids.
 *
 * Seeds (corpus/liq_job/): the master's own packing (liq_master_job_send)
 * of small jobs, written by this binary when LIQ_JOB_SEEDS names a
 * directory:  LIQ_JOB_SEEDS=tests/fuzz/corpus/liq_job build/fuzz/fuzz_liq_job
 * The corpus also holds the inputs of the defects found, by what they are.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "liq_int.h"
#include "liq_master.h"
#include "pvm3.h"
#include "pvm_int.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

#define FUZZ_TID0 0x40001
#define FUZZ_MASTER 0x40100
#define FUZZ_AS_MB 64

/* A failed allocation is an answer the library must handle, not a crash;
 * freed memory kept for use-after-free checks stays well inside the cap. */
const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1:quarantine_size_mb=8";
}

/* ---- the programs' descriptions: what liquid_run leaves in liq_user_spec ---- */

static double fuzz_axis_sum;

static double
fuzz_start(int field, const double x[3], void *arg)
{
    (void)arg;
    return (double)field + x[0] * x[1] - x[2];
}

static int
fuzz_update(const struct liquid_box *b, void *arg)
{
    (void)b;
    (void)arg;
    return 0;
}

static double
fuzz_partial(const struct liquid_box *b, void *arg)
{
    (void)b;
    (void)arg;
    return 0;
}

/* As heat3d's setup: per-axis tables of the grid's size, and a refusal. */
static int
fuzz_heat_setup(struct liquid *lq, const int n[3], int iters, void *arg)
{
    (void)arg;
    (void)iters;
    fuzz_axis_sum = 0;
    for (int a = 0; a < 3; a++) {
        double *s;

        if (n[a] == 7)
            return liquid_fail(lq, "heat: a grid of 7 points along an axis is not served");
        if ((s = malloc((size_t)n[a] * sizeof(double))) == NULL)
            return liquid_fail(lq, "heat: out of memory");
        for (int i = 0; i < n[a]; i++)
            s[i] = 1.0 / (i + 1);
        fuzz_axis_sum += s[n[a] - 1];
        free(s);
    }
    return 0;
}

/* 0: heat-like, one field, 7 points, two levels, Dirichlet, a reduction at the end.
 * 1: wave-like, a field and a constant one, a box of reach 2, three levels, periodic
 *    x and y, Neumann z, a reduction every 5 iterations.
 * 2: red-black, one field of reach 1, Dirichlet 1 on every face. */
static struct liquid *fuzz_desc[3];

static struct liquid *
fuzz_describe(int which)
{
    struct liquid *lq = liquid_new(which == 0 ? "heat" : which == 1 ? "wave" : "rb");
    int bad = lq == NULL;

    if (bad)
        return NULL;
    bad |= liquid_field(lq, "u") != 0;
    bad |= liquid_init(lq, 0, fuzz_start, NULL) != 0;
    bad |= liquid_update(lq, fuzz_update, NULL) != 0;
    if (which == 0) {
        bad |= liquid_setup(lq, fuzz_heat_setup, NULL) != 0;
        bad |= liquid_reduce(lq, "err", LIQUID_MAX, 0, fuzz_partial, NULL, 0) < 0;
    } else if (which == 1) {
        bad |= liquid_field(lq, "c") != 1;
        bad |= liquid_field_const(lq, 1) != 0;
        bad |= liquid_init(lq, 1, fuzz_start, NULL) != 0;
        bad |= liquid_reach(lq, 2, 2, 1, LIQUID_BOX) != 0;
        bad |= liquid_levels(lq, LIQUID_THREE_LEVEL) != 0;
        bad |= liquid_boundary(lq, LIQUID_XLO | LIQUID_XHI | LIQUID_YLO | LIQUID_YHI,
                               LIQUID_PERIODIC, 0) != 0;
        bad |= liquid_boundary(lq, LIQUID_ZLO | LIQUID_ZHI, LIQUID_NEUMANN, 0) != 0;
        bad |= liquid_reduce(lq, "energy", LIQUID_SUM, 0, NULL, NULL, 5) < 0;
    } else {
        bad |= liquid_levels(lq, LIQUID_RED_BLACK) != 0;
        bad |= liquid_boundary(lq, LIQUID_ALL, LIQUID_DIRICHLET, 1) != 0;
    }
    if (bad || liq_user_check(lq) != 0) {
        fprintf(stderr, "fuzz_liq_job: description %d: %s\n", which, lq->err);
        abort();
    }
    return lq;
}

/* ---- seeds: the master's JOB messages ---- */

struct fuzz_seed {
    const char *name;
    int desc, me, n[3], nquanta, nworkers, iters, epoch, halo, ckpt, start, restore, trace;
    int heavy, gather, spread;
};

static const struct fuzz_seed fuzz_seeds[] = {
    { "heat-1w", 0, 0, { 8, 8, 8 }, 1, 1, 10, 0, 1, 0, 0, 0, 0, 1, 1, 0 },
    { "heat-2w-me0", 0, 0, { 16, 8, 8 }, 4, 2, 20, 5, 2, 0, 0, 0, 0, 1, 0, 0 },
    { "heat-2w-me1", 0, 1, { 16, 8, 8 }, 4, 2, 20, 5, 2, 0, 0, 0, 0, 1, 0, 0 },
    { "heat-3w-heavy", 0, 2, { 12, 12, 6 }, 9, 3, 30, 10, 3, 0, 0, 0, 1, 3, 1, 1 },
    { "heat-4w-deep", 0, 3, { 16, 16, 16 }, 8, 4, 40, 8, 8, 0, 0, 0, 0, 1, 0, 1 },
    { "heat-4w-ckpt", 0, 1, { 10, 10, 10 }, 8, 4, 40, 4, 2, 4, 0, 0, 0, 1, 0, 0 },
    { "heat-join", 0, 1, { 12, 8, 4 }, 6, 2, 30, 5, 1, 0, 10, 0, 0, 1, 0, 0 },
    { "heat-restore", 0, 0, { 12, 8, 4 }, 6, 3, 30, 5, 1, 5, 10, 1, 0, 1, 0, 0 },
    { "heat-2d", 0, 0, { 32, 32, 1 }, 4, 2, 12, 4, 4, 0, 0, 0, 0, 1, 1, 0 },
    { "heat-input", 0, 0, { 6, 6, 6 }, 2, 2, 5, 0, 1, 0, 0, 0, 0, 1, 3, 0 },
    { "wave-1w", 1, 0, { 12, 12, 6 }, 4, 1, 20, 10, 1, 0, 0, 0, 0, 1, 1, 0 },
    { "wave-2w", 1, 1, { 16, 16, 8 }, 8, 2, 20, 5, 2, 0, 0, 0, 0, 1, 0, 1 },
    { "wave-4w-ckpt", 1, 2, { 16, 16, 4 }, 16, 4, 30, 10, 1, 10, 0, 0, 0, 1, 0, 0 },
    { "wave-2d", 1, 0, { 24, 24, 1 }, 4, 2, 10, 5, 2, 0, 0, 0, 1, 1, 0, 0 },
    { "rb-1w", 2, 0, { 8, 8, 8 }, 2, 1, 6, 0, 1, 0, 0, 0, 0, 1, 0, 0 },
    { "rb-3w", 2, 1, { 9, 9, 9 }, 27, 3, 12, 6, 2, 0, 0, 0, 0, 1, 1, 1 },
    { "rb-4w-ckpt", 2, 3, { 16, 8, 8 }, 8, 4, 16, 4, 4, 4, 0, 0, 0, 2, 0, 0 },
    { "rb-trace-keep", 2, 0, { 8, 8, 8 }, 4, 2, 20, 5, 1, 5, 10, 1, 1, 1, 0, 0 },
    /* faces of more points than a ghost message holds: cut into pieces */
    { "heat-wide-faces", 0, 1, { 72, 128, 128 }, 2, 2, 32, 16, 16, 0, 0, 0, 0, 1, 0, 0 },
    { "wave-wide-faces", 1, 0, { 32, 128, 110 }, 2, 2, 20, 10, 10, 0, 0, 0, 0, 1, 0, 0 },
};

/* The owner of quantum q among nw workers: blocks of quanta, as a cut along
 * the Hilbert curve would give, or spread as a checkerboard: every worker
 * holds several regions. */
static int
fuzz_owner(const struct liq_geom *g, int q, int nw, int spread)
{
    if (spread)
        return (q % g->q[0] + q / g->q[0] % g->q[1] + q / g->q[0] / g->q[1]) % nw;
    return (int)((long long)q * nw / g->nquanta);
}

/* One seed: byte 0 and the body of the master's JOB for s. */
static int
fuzz_seed_write(const char *dir, const struct fuzz_seed *s)
{
    struct liq_opts o;
    struct liq_stats st;
    struct liq_vm vm;
    int32_t owner[64];
    int tids[4], whost[4], rc = -1;
    struct pvm__buf *b;
    const unsigned char *body;
    size_t len;
    char path[1024];
    FILE *fp;
    uint8_t lead = (uint8_t)(s->desc | s->me << 2 | (s->trace && s->restore ? 0x10 : 0));

    liq_opts_defaults(&o);
    memset(&st, 0, sizeof(st));
    memset(&vm, 0, sizeof(vm));
    memcpy(o.n, s->n, sizeof(o.n));
    o.iters = s->iters;
    o.user = fuzz_desc[s->desc];
    o.kernel = o.user->levels == LIQUID_RED_BLACK ? LIQ_USER_RB : LIQ_USER;
    o.balance = s->epoch > 0;
    o.epoch = s->epoch;
    o.heavy = s->heavy;
    o.seed = 0x1234567890abULL + (uint64_t)s->desc;
    if (s->trace)
        snprintf(o.trace, sizeof(o.trace), "trace.json");
    if (s->gather & 1)
        snprintf(o.output, sizeof(o.output), "out.raw");
    /* --input: the master holds a field's initial values (bits 1.. of GATHER). */
    if ((s->gather & 2) && (o.user->input[0] = calloc(1, sizeof(double))) == NULL)
        return -1;
    if (liq_user_setup(o.user, o.n, o.iters) != 0 ||
        liq_geom_make(&st.g, s->n, s->nquanta) != 0 || s->nquanta > 64)
        goto out;
    for (int q = 0; q < s->nquanta; q++)
        owner[q] = fuzz_owner(&st.g, q, s->nworkers, s->spread);
    st.owner = owner;
    st.halo = s->halo;
    st.ck.on = s->ckpt > 0;
    st.ck.iters = s->ckpt;
    st.ck.mul = 1;
    for (int i = 0; i < s->nworkers; i++) {
        tids[i] = FUZZ_TID0 + i;
        whost[i] = i / 2;
    }
    vm.nworkers = s->nworkers;
    vm.tids = tids;
    vm.whost = whost;
    vm.gen = s->restore;
    /* No daemon: the send fails, and leaves the message packed in the send buffer. */
    (void)liq_master_job_send(&vm, &o, &st, tids, s->nworkers, s->start, s->restore);
    if ((b = pvm__buf_get(pvm_getsbuf())) == NULL || pvm__buf_encword(b) != PVM__ENCWORD_XDR ||
        pvm__buf_flatten(b, &body, &len) != 0)
        goto out;
    snprintf(path, sizeof(path), "%s/%s", dir, s->name);
    if ((fp = fopen(path, "wb")) == NULL)
        goto out;
    if (fwrite(&lead, 1, 1, fp) == 1 && fwrite(body, 1, len, fp) == len)
        rc = 0;
    if (fclose(fp) != 0)
        rc = -1;
out:
    free(o.user->input[0]);
    o.user->input[0] = NULL;
    if (rc != 0)
        fprintf(stderr, "fuzz_liq_job: seed %s not written\n", s->name);
    return rc;
}

/* ---- the harness ---- */

static char fuzz_home[64];

static void
fuzz_home_remove(void)
{
    if (fuzz_home[0])
        rmdir(fuzz_home);
}

/* Cap the address space at FUZZ_AS_MB more than is mapped now. */
static void
fuzz_cap_memory(void)
{
    struct rlimit rl;
    unsigned long long vm_kb = 0;
    char line[256];
    FILE *fp = fopen("/proc/self/status", "r");

    if (fp == NULL)
        abort();
    while (fgets(line, sizeof(line), fp) != NULL)
        if (sscanf(line, "VmSize: %llu kB", &vm_kb) == 1)
            break;
    fclose(fp);
    if (vm_kb == 0 || getrlimit(RLIMIT_AS, &rl) != 0)
        abort();
    rl.rlim_cur = (rlim_t)(vm_kb * 1024 + ((unsigned long long)FUZZ_AS_MB << 20));
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
        rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("TMPDIR"), *seeds = getenv("LIQ_JOB_SEEDS");

    (void)argc;
    (void)argv;
    snprintf(fuzz_home, sizeof(fuzz_home), "%s/lvm-fuzz-job.XXXXXX", dir && dir[0] ? dir : "/tmp");
    if (mkdtemp(fuzz_home) == NULL)
        abort();
    atexit(fuzz_home_remove);
    setenv("LIQUIDVM_HOME", fuzz_home, 1);
    unsetenv("LIQUIDVM_SOCK");
    unsetenv("LIQUIDVM_HOST");
    pvm_setopt(PvmAutoErr, 0);
    for (int d = 0; d < 3; d++)
        fuzz_desc[d] = fuzz_describe(d);
    if (seeds != NULL) {
        int bad = 0;

        for (size_t i = 0; i < sizeof(fuzz_seeds) / sizeof(fuzz_seeds[0]); i++)
            bad |= fuzz_seed_write(seeds, &fuzz_seeds[i]) != 0;
        exit(bad ? 1 : 0);
    }
    fuzz_cap_memory();
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct liq_worker w;
    struct pvm__buf *b;
    int rc, id;

    if (size < 1)
        return 0;
    if (pvm__buf_adopt(PVM__ENCWORD_XDR, (unsigned char *)(uintptr_t)(data + 1), size - 1,
                       size - 1, 1, &b) != 0)
        return 0;
    id = b->id;
    pvm_setrbuf(id);
    liq_user_spec = (data[0] & 3) < 3 ? fuzz_desc[data[0] & 3] : NULL;
    memset(&w, 0, sizeof(w));
    w.mytid = FUZZ_TID0 + (data[0] >> 2 & 3);
    w.master = FUZZ_MASTER;
    w.cache = kern_cache_bytes(0);
    if ((data[0] & 0x10) && liq_trace_init(&w.tr, 64) == 0) {
        w.rec_gen = 1;          /* a recovery's trace, kept for the restore */
        w.rec_iter = 1;
    }
    rc = liq_job_setup(&w);
    if (rc > 0)
        abort();                /* neither 0 nor an error */
    if (rc == 0 && (w.me < 0 || w.me >= w.nworkers || w.nrg > w.nall || w.nq > w.g.nquanta))
        abort();                /* accepted, but does not hold together */
    liq_job_free(&w);
    liq_trace_free(&w.tr);      /* kept by liq_job_free for the recovery */
    if (pvm_bufinfo(id, NULL, NULL, NULL) >= 0)
        pvm_freebuf(id);
    return 0;
}
