/*
 * pvm_api - a PVM program for the integration tests, written only against
 * pvm3.h: contexts, pvm_mcast, pvm_psend/pvm_precv, message handlers,
 * pvm_probe and pvm_recvf between tasks of a real VM.
 *
 *   pvm_api worker            prints its tid, then serves the checks below
 *                             until tag 99 comes
 *   pvm_api CHECK TID...      runs one check against the workers, prints
 *                             "ok ..." and exits 0, or says what failed
 *
 * Checks: ctx (a message in another context is not received in the base
 * context, and is in its own), mcast (one copy per worker, none for the
 * sender), pp (psend/precv of 0 to 100000 doubles, tid/tag/length), mhf
 * (the workers' handlers answer while they wait in pvm_recv; ours count
 * the answers while we wait in pvm_trecv; answers come in the context of
 * the question), recvf (a match function picks by content; a probe's
 * bufid is the receive's), stop.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    T_CTX = 1,          /* base context, int C: the question in C is tag T_CTX_Q */
    T_CTX_Q = 2,
    T_CTX_A = 3,        /* answer, in C: 1 if the worker saw what it should */
    T_MCAST = 10,       /* int v; answer T_MCAST_A: v + 1 */
    T_MCAST_A = 11,
    T_PP = 20,          /* int n: n doubles follow by psend, tag T_PP_DATA */
    T_PP_DATA = 21,
    T_PP_A = 22,        /* the doubles times two, by psend */
    T_MHF = 50,         /* int v: the worker's handler answers T_MHF_A 2v */
    T_MHF_A = 51,
    T_STOP = 99,
};

static int fail_count;

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        fail_count++;                                                          \
    } while (0)

static int
send_int(int tid, int tag, int v)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    return pvm_send(tid, tag);
}

/* The int of the active receive buffer. */
static int
upk_int(void)
{
    int v = -1;
    pvm_upkint(&v, 1, 1);
    return v;
}

/* ---- the worker ---- */

/* Answers in the message's context, which PVM makes current for handlers. */
static int
worker_mhf(int mid)
{
    int src, v;
    pvm_bufinfo(mid, NULL, NULL, &src);
    v = 2 * upk_int();
    pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
    pvm_pkint(&v, 1, 1);
    pvm_send(src, T_MHF_A);
    pvm_freebuf(pvm_setsbuf(0));
    return 0;
}

static int
worker(void)
{
    int me = pvm_mytid();
    if (me < 0)
        return 1;
    if (pvm_addmhf(-1, T_MHF, -1, worker_mhf) < 0)
        return 1;
    printf("t%x\n", me);
    fflush(stdout);
    for (;;) {
        int src, tag, len, buf = pvm_recv(-1, -1);
        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0)
            return 1;
        if (tag == T_STOP)
            break;
        if (tag == T_CTX) {
            /* The question came first, in another context: it must wait. */
            int c = upk_int(), good = 1;
            if (pvm_nrecv(-1, -1) != 0 || pvm_probe(src, T_CTX_Q) != 0)
                good = 0;
            int old = pvm_setcontext(c);
            if (old != 0 || pvm_getcontext() != c)
                good = 0;
            buf = pvm_nrecv(src, T_CTX_Q);
            if (buf <= 0 || upk_int() != c + 1)
                good = 0;
            send_int(src, T_CTX_A, good);
            pvm_setcontext(old);
        } else if (tag == T_MCAST) {
            send_int(src, T_MCAST_A, upk_int() + 1);
        } else if (tag == T_PP) {
            int n = upk_int(), at, ag, al, i;
            double *d = malloc(sizeof(double) * (size_t)(n + 1));
            if (d == NULL || pvm_precv(src, T_PP_DATA, d, n + 1, PVM_DOUBLE, &at, &ag, &al) < 0)
                return 1;
            /* alen is in bytes, as in PVM 3.4; a wrong one empties the answer. */
            if (at != src || ag != T_PP_DATA || al != n * (int)sizeof(double))
                n = 0;
            for (i = 0; i < n; i++)
                d[i] *= 2;
            pvm_psend(src, T_PP_A, d, n, PVM_DOUBLE);
            free(d);
        }
    }
    pvm_exit();
    return 0;
}

/* ---- the checks ---- */

static int
check_ctx(int me, int *w, int n)
{
    int c = pvm_newcontext(), c2 = pvm_newcontext(), i;
    if (c <= 0 || c2 <= 0 || c == c2) {
        FAIL("newcontext gave %d and %d", c, c2);
        return 1;
    }
    for (i = 0; i < n; i++) {
        pvm_setcontext(c);
        send_int(w[i], T_CTX_Q, c + 1);
        pvm_setcontext(0);
        send_int(w[i], T_CTX, c);
        /* The answer comes in context c: not seen from the base context. */
        struct timeval tv = { 0, 300000 };
        if (pvm_trecv(w[i], T_CTX_A, &tv) != 0)
            FAIL("t%x: an answer in context %d was received in the base context", w[i], c);
        pvm_setcontext(c);
        if (pvm_recv(w[i], T_CTX_A) < 0 || upk_int() != 1)
            FAIL("t%x: the worker did not see contexts as it should", w[i]);
        pvm_setcontext(0);
    }
    if (pvm_freecontext(c) != 0 || pvm_freecontext(c2) != 0)
        FAIL("freecontext failed");
    printf("ok t%x: contexts %d and %d with %d workers\n", me, c, c2, n);
    return 0;
}

static int
check_mcast(int me, int *w, int n)
{
    int *list = malloc(sizeof(int) * (size_t)(2 * n + 2)), i, k = 0, got = 0, v = 41;
    /* Everybody twice, and ourselves: each worker once, us never. */
    for (i = 0; i < n; i++)
        list[k++] = w[i];
    list[k++] = me;
    for (i = n; i-- > 0;)
        list[k++] = w[i];
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    if (pvm_mcast(list, k, T_MCAST) != 0)
        FAIL("pvm_mcast failed");
    int *seen = calloc((size_t)n, sizeof(int));
    for (;;) {
        struct timeval tv = { 2, 0 };
        int src, buf = pvm_trecv(-1, T_MCAST_A, &tv);
        if (buf <= 0)
            break;
        pvm_bufinfo(buf, NULL, NULL, &src);
        if (upk_int() != 42)
            FAIL("t%x answered with a wrong value", src);
        for (i = 0; i < n; i++)
            if (w[i] == src)
                seen[i]++;
        if (++got == n)
            break;
    }
    for (i = 0; i < n; i++)
        if (seen[i] != 1)
            FAIL("t%x got %d copies", w[i], seen[i]);
    if (pvm_nrecv(-1, -1) != 0)
        FAIL("the sender got a copy or a worker answered twice");
    free(seen);
    free(list);
    printf("ok t%x: one copy each to %d workers, none to itself\n", me, n);
    return 0;
}

static int
check_pp(int me, int *w, int n)
{
    static const int sizes[] = { 0, 1, 7, 1000, 100000 };
    int i, s;
    for (i = 0; i < n; i++) {
        for (s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
            int k = sizes[s], at, ag, al, j, sbuf = pvm_initsend(PvmDataDefault);
            double *d = malloc(sizeof(double) * (size_t)(k + 1));
            double *e = malloc(sizeof(double) * (size_t)(k + 1));
            for (j = 0; j < k; j++)
                d[j] = j + 0.5 * i;
            send_int(w[i], T_PP, k);
            sbuf = pvm_getsbuf();
            if (pvm_psend(w[i], T_PP_DATA, d, k, PVM_DOUBLE) != 0)
                FAIL("psend of %d doubles failed", k);
            if (pvm_getsbuf() != sbuf)
                FAIL("psend changed the send buffer");
            int rbuf = pvm_getrbuf();
            if (pvm_precv(w[i], T_PP_A, e, k, PVM_DOUBLE, &at, &ag, &al) != 0 || at != w[i] ||
                ag != T_PP_A || al != k * (int)sizeof(double))
                FAIL("t%x: precv of %d doubles: tid t%x tag %d len %d", w[i], k, at, ag, al);
            if (pvm_getrbuf() != rbuf)
                FAIL("precv changed the receive buffer");
            for (j = 0; j < k; j++)
                if (e[j] != 2 * d[j]) {
                    FAIL("t%x: double %d of %d differs", w[i], j, k);
                    break;
                }
            free(d);
            free(e);
        }
    }
    printf("ok t%x: psend/precv of up to %d doubles with %d workers\n", me, sizes[4], n);
    return 0;
}

static int answers, answer_sum, answer_ctx_wrong;

static int
count_answer(int mid)
{
    struct pvmminfo mi;
    pvm_getminfo(mid, &mi);
    if (mi.ctx != pvm_getcontext())
        answer_ctx_wrong++;
    answers++;
    answer_sum += upk_int();
    return 0;
}

static int
check_mhf(int me, int *w, int n)
{
    int i, k, rounds = 20, c = pvm_newcontext(), expect = 0;
    /* The workers' handlers answer while they sit in pvm_recv. */
    for (i = 0; i < n; i++) {
        for (k = 1; k <= rounds; k++) {
            send_int(w[i], T_MHF, k);
            if (pvm_recv(w[i], T_MHF_A) < 0 || upk_int() != 2 * k)
                FAIL("t%x: handler answer %d is wrong", w[i], k);
        }
    }
    /* Ours takes the answers (sent in context c) while we wait for nothing. */
    int id = pvm_addmhf(-1, T_MHF_A, c, count_answer);
    if (id < 0 || pvm_addmhf(-1, -1, c, count_answer) != PvmExists)
        FAIL("addmhf: %d, or an overlapping handler was accepted", id);
    pvm_setcontext(c);
    for (i = 0; i < n; i++)
        for (k = 1; k <= rounds; k++) {
            send_int(w[i], T_MHF, k);
            expect += 2 * k;
        }
    pvm_setcontext(0);
    for (int tries = 0; answers < n * rounds && tries < 100; tries++) {
        struct timeval tv = { 0, 100000 };
        if (pvm_trecv(-1, 12345, &tv) != 0)
            FAIL("trecv got a message nobody sent");
    }
    if (answers != n * rounds || answer_sum != expect || answer_ctx_wrong)
        FAIL("handler saw %d answers summing to %d (%d expected, %d), %d in a wrong context",
             answers, answer_sum, n * rounds, expect, answer_ctx_wrong);
    if (pvm_delmhf(id) != 0 || pvm_delmhf(id) != PvmNotFound)
        FAIL("delmhf");
    /* With the handler gone, answers are ordinary messages again. */
    pvm_setcontext(c);
    send_int(w[0], T_MHF, 5);
    if (pvm_recv(w[0], T_MHF_A) < 0 || upk_int() != 10 || answers != n * rounds)
        FAIL("an answer after delmhf went astray");
    pvm_setcontext(0);
    printf("ok t%x: %d handler answers from %d workers, and %d to our handler\n", me,
           n * rounds, n, answers);
    return 0;
}

static int
pick_sixty(int mid, int tid, int tag)
{
    int save = pvm_setrbuf(mid), v = upk_int();
    struct pvmminfo mi;
    (void)tid;
    pvm_setrbuf(save);
    pvm_getminfo(mid, &mi);
    return mi.tag == tag && mi.ctx == 0 && v == 60;
}

static int counted, counted_mids[16];

/* Counts the answers queued (a receive may look at each more than once)
 * and takes none. */
static int
count_only(int mid, int tid, int tag)
{
    int mtag, i;
    (void)tid;
    pvm_bufinfo(mid, NULL, &mtag, NULL);
    if (mtag != tag)
        return 0;
    for (i = 0; i < counted; i++)
        if (counted_mids[i] == mid)
            return 0;
    if (counted < 16)
        counted_mids[counted++] = mid;
    return 0;
}

static int
check_recvf(int me, int *w, int n)
{
    int (*old)(int, int, int);
    int k, p, r, tries;
    (void)n;
    for (k = 10; k <= 30; k += 10)
        send_int(w[0], T_MHF, k);
    /* Wait until the three answers are queued, counting with a matcher. */
    for (tries = 0; tries < 200; tries++) {
        struct timeval tv = { 0, 10000 };
        counted = 0;
        old = (int (*)(int, int, int))(void (*)(void))pvm_recvf(count_only);
        r = pvm_nrecv(-1, T_MHF_A);
        pvm_recvf(old);
        if (r != 0)
            FAIL("a match function that takes nothing took %d", r);
        if (counted == 3)
            break;
        pvm_trecv(-1, 12345, &tv);
    }
    if (counted != 3)
        FAIL("%d answers queued, not 3", counted);
    p = pvm_probe(w[0], T_MHF_A);
    old = (int (*)(int, int, int))(void (*)(void))pvm_recvf(pick_sixty);
    r = pvm_recv(-1, T_MHF_A);
    if (r <= 0 || upk_int() != 60)
        FAIL("the match function did not pick the answer 60");
    if ((int (*)(int, int, int))(void (*)(void))pvm_recvf(old) != pick_sixty)
        FAIL("pvm_recvf did not return the function it replaced");
    /* The default is back: the oldest first, with the probe's bufid. */
    r = pvm_recv(-1, T_MHF_A);
    if (r != p || upk_int() != 20)
        FAIL("the probe's bufid %d is not the receive's %d, or not the oldest", p, r);
    if (pvm_recv(-1, T_MHF_A) <= 0 || upk_int() != 40)
        FAIL("the last answer is not 40");
    printf("ok t%x: probe bufids and a match function by content\n", me);
    return 0;
}

int
main(int argc, char **argv)
{
    int w[64], n = 0, me, i;

    if (argc == 2 && strcmp(argv[1], "worker") == 0)
        return worker();
    if (argc < 3) {
        fprintf(stderr, "usage: pvm_api worker | pvm_api ctx|mcast|pp|mhf|recvf|stop TID...\n");
        return 2;
    }
    for (i = 2; i < argc && n < 64; i++)
        w[n++] = (int)strtol(argv[i] + (argv[i][0] == 't'), NULL, 16);
    if ((me = pvm_mytid()) < 0)
        return 1;
    if (strcmp(argv[1], "ctx") == 0)
        check_ctx(me, w, n);
    else if (strcmp(argv[1], "mcast") == 0)
        check_mcast(me, w, n);
    else if (strcmp(argv[1], "pp") == 0)
        check_pp(me, w, n);
    else if (strcmp(argv[1], "mhf") == 0)
        check_mhf(me, w, n);
    else if (strcmp(argv[1], "recvf") == 0)
        check_recvf(me, w, n);
    else if (strcmp(argv[1], "stop") == 0) {
        for (i = 0; i < n; i++)
            send_int(w[i], T_STOP, 0);
        printf("ok t%x: stopped %d workers\n", me, n);
    } else {
        fprintf(stderr, "pvm_api: unknown check %s\n", argv[1]);
        return 2;
    }
    pvm_exit();
    return fail_count ? 1 : 0;
}
