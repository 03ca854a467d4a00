/*
 * test_liq_job.c - a worker's reading of the JOB message (liq_job.c,
 * liq_job_setup): the master's job taken as packed, and messages a broken
 * or hostile master could send refused with a reason, leaving nothing for
 * liq_job_free to trip on.  The cases are those fuzz_liq_job found
 * (tests/fuzz/corpus/liq_job/).
 *
 * There is no daemon (LIQUIDVM_HOME is an empty directory): the worker's
 * messages to its master go nowhere, as they must when it is gone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "liq_int.h"
#include "pvm3.h"

#define T0 0x40001
#define MASTER 0x40100

static char home[64];
static struct liquid *desc;

static int
update(const struct liquid_box *b, void *arg)
{
    (void)b;
    (void)arg;
    return 0;
}

static int
setup(void **state)
{
    (void)state;
    snprintf(home, sizeof(home), "/tmp/test_liq_job.XXXXXX");
    if (mkdtemp(home) == NULL)
        return -1;
    setenv("LIQUIDVM_HOME", home, 1);
    unsetenv("LIQUIDVM_SOCK");
    unsetenv("LIQUIDVM_HOST");
    pvm_setopt(PvmAutoErr, 0);
    if ((desc = liquid_new("heat")) == NULL || liquid_field(desc, "u") != 0 ||
        liquid_update(desc, update, NULL) != 0)
        return -1;
    liq_user_spec = desc;
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    liquid_free(desc);
    rmdir(home);
    return 0;
}

/* A JOB as liq_master_job_send packs it: two workers of an 8^3 grid in
 * four quanta, the first two this worker's. */
struct job {
    int hdr[LIQ_JOB_HDR];
    int nworkers, tids[4], nquanta, owner[8], whost[4];
};

static void
job_default(struct job *j)
{
    memset(j, 0, sizeof(*j));
    j->hdr[LIQ_JOB_NX] = j->hdr[LIQ_JOB_NY] = j->hdr[LIQ_JOB_NZ] = 8;
    j->hdr[LIQ_JOB_NQUANTA] = j->nquanta = 4;
    j->hdr[LIQ_JOB_KERNEL] = LIQ_USER;
    j->hdr[LIQ_JOB_ITERS] = 10;
    j->hdr[LIQ_JOB_EPOCH] = 5;
    j->hdr[LIQ_JOB_HEAVY] = 1;
    j->hdr[LIQ_JOB_HALO] = 1;
    j->hdr[LIQ_JOB_SPEC] = (int)liq_user_fingerprint(desc);
    j->hdr[LIQ_JOB_CKMUL] = 1;
    j->nworkers = 2;
    j->tids[0] = T0;
    j->tids[1] = T0 + 1;
    j->owner[2] = j->owner[3] = 1;
}

/* What the setup made of it, before liq_job_free. */
struct seen {
    int me, nq, nrg, nsend, nrecv, trace_cap;
};

/*
 * The message of j, less its last `cut` ints or with `extra` more, read by
 * worker T0 and freed.  Returns liq_job_setup's code.
 */
static int
job_run(const struct job *j, int cut, int extra, struct seen *seen)
{
    int v[64], n = 0, seed[2] = { 7, 0 }, b, rc;
    struct liq_worker w;

    memcpy(v, j->hdr, sizeof(j->hdr));
    n = LIQ_JOB_HDR;
    v[n++] = seed[0];
    v[n++] = seed[1];
    v[n++] = j->nworkers;
    for (int i = 0; i < j->nworkers; i++)
        v[n++] = j->tids[i];
    for (int q = 0; q < j->nquanta; q++)
        v[n++] = j->owner[q];
    if (j->hdr[LIQ_JOB_CKPT] > 0)
        for (int i = 0; i < j->nworkers; i++)
            v[n++] = j->whost[i];
    for (int x = 0; x < extra; x++)
        v[n++] = 0;
    n -= cut;
    assert_true(n > 0 && n <= (int)(sizeof(v) / sizeof(v[0])));
    assert_true(pvm_initsend(PvmDataDefault) > 0);
    assert_int_equal(pvm_pkint(v, n, 1), PvmOk);
    b = pvm_getsbuf();
    pvm_setrbuf(b);

    memset(&w, 0, sizeof(w));
    w.mytid = T0;
    w.master = MASTER;
    w.cache = kern_cache_bytes(0);
    rc = liq_job_setup(&w);
    if (seen != NULL) {
        seen->me = w.me;
        seen->nq = w.nq;
        seen->nrg = w.nrg;
        seen->nsend = w.nsend;
        seen->nrecv = w.nrecv;
        seen->trace_cap = w.tr.cap;
    }
    liq_job_free(&w);
    pvm_freebuf(b);
    return rc;
}

static void
test_liq_job_setup_builds_the_masters_job(void **state)
{
    struct job j;
    struct seen s;

    (void)state;
    job_default(&j);
    assert_int_equal(job_run(&j, 0, 0, &s), 0);
    assert_int_equal(s.me, 0);
    assert_int_equal(s.nq, 2);
    assert_int_equal(s.nrg, 1);
    assert_int_equal(s.nsend, 1);
    assert_int_equal(s.nrecv, 1);
    assert_int_equal(s.trace_cap, 0);
    /* ... with checkpoints, the workers' hosts follow. */
    j.hdr[LIQ_JOB_CKPT] = 5;
    j.whost[1] = 1;
    assert_int_equal(job_run(&j, 0, 0, &s), 0);
}

/* Quanta counted as this worker's before a later owner was found bad:
 * liq_job_free went through a quanta array never allocated. */
static void
test_liq_job_setup_refuses_a_bad_owner_after_its_own_quanta(void **state)
{
    struct job j;

    (void)state;
    job_default(&j);
    j.owner[3] = 7;
    assert_int_equal(job_run(&j, 0, 0, NULL), -EINVAL);
    j.owner[3] = -1;
    assert_int_equal(job_run(&j, 0, 0, NULL), -EINVAL);
}

/* A message short of its owners was taken with the missing ones this
 * worker's (the array's zeros); one short of its header was read from
 * whatever the stack held. */
static void
test_liq_job_setup_refuses_a_message_cut_short_or_too_long(void **state)
{
    struct job j;

    (void)state;
    job_default(&j);
    assert_int_equal(job_run(&j, 1, 0, NULL), -EINVAL);
    assert_int_equal(job_run(&j, 0, 1, NULL), -EINVAL);
    assert_int_equal(job_run(&j, LIQ_JOB_HDR, 0, NULL), -EINVAL);
    /* The hosts that checkpoints need, missing. */
    j.hdr[LIQ_JOB_CKPT] = 5;
    assert_int_equal(job_run(&j, j.nworkers, 0, NULL), -EINVAL);
}

/* The master asks for LIQ_TRACE_EVENTS or none; a count up to 2^24 made a
 * 640 MB allocation. */
static void
test_liq_job_setup_refuses_a_trace_larger_than_a_master_asks_for(void **state)
{
    struct job j;
    struct seen s;

    (void)state;
    job_default(&j);
    j.hdr[LIQ_JOB_TRACE] = LIQ_TRACE_EVENTS;
    assert_int_equal(job_run(&j, 0, 0, &s), 0);
    assert_int_equal(s.trace_cap, LIQ_TRACE_EVENTS);
    j.hdr[LIQ_JOB_TRACE] = LIQ_TRACE_EVENTS + 1;
    assert_int_equal(job_run(&j, 0, 0, NULL), -EINVAL);
    j.hdr[LIQ_JOB_TRACE] = 1 << 24;
    assert_int_equal(job_run(&j, 0, 0, NULL), -EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liq_job_setup_builds_the_masters_job),
        cmocka_unit_test(test_liq_job_setup_refuses_a_bad_owner_after_its_own_quanta),
        cmocka_unit_test(test_liq_job_setup_refuses_a_message_cut_short_or_too_long),
        cmocka_unit_test(test_liq_job_setup_refuses_a_trace_larger_than_a_master_asks_for),
    };

    return cmocka_run_group_tests_name("liq_job", tests, setup, teardown);
}
