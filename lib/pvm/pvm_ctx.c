/*
 * pvm_ctx.c - the task's one library context (docs/architecture.md: no mutable state
 * outside it) and what reads it without calling anything else: the
 * current message context, the options' values, the allocation wrappers
 * that let tests inject failures (SQLite's fault.c), and PVM's data
 * signature of our native layout.  Every other file of libpvm3 may call
 * it, so it calls none of them.
 */
#include "pvm_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The options start at PVM 3.4.6's defaults, as its LINUX64 library reports them. */
#define PVM__CTX_INIT                                                                       \
    { .mytid = -1, .autoerr = 1, .fd = -1,                                                  \
      .opt = { [PvmRoute] = PvmAllowDirect, [PvmFragSize] = 4080, [PvmShowTids] = 1,        \
               [PvmPollType] = PvmPollSleep } }

struct pvm__ctx pvm__ctx = PVM__CTX_INIT;

/* Used by pvm__ctx_reset (pvm_buf.c), which frees the buffers first. */
const struct pvm__ctx pvm__ctx_init = PVM__CTX_INIT;

int
pvm__context(void)
{
    if (!pvm__ctx.msgctx_known) {
        const char *e = getenv("LIQUIDVM_CTX");
        char *end;
        long v;

        pvm__ctx.msgctx_known = 1;
        if (e != NULL && *e != '\0') {
            v = strtol(e, &end, 0);
            if (*end == '\0' && v >= INT_MIN && v <= INT_MAX && !PVM__CTX_DAEMON(v))
                pvm__ctx.msgctx = (int)v;
        }
    }
    return pvm__ctx.msgctx;
}

/*
 * PvmOutputTid and PvmOutputCode default to where the task's own output
 * goes (LIQUIDVM_OUTPUT="tid:code", from the daemon that spawned it), as
 * in PVM: a caught task's children are caught too.  The Self options say
 * the same.
 */
void
pvm__opt_load(void)
{
    const char *e;
    char *end;
    unsigned long tid;
    long code;

    if (pvm__ctx.output_known)
        return;
    pvm__ctx.output_known = 1;
    if ((e = getenv("LIQUIDVM_OUTPUT")) == NULL)
        return;
    tid = strtoul(e, &end, 0);
    if (*end != ':' || tid == 0 || tid > INT_MAX)
        return;
    code = strtol(end + 1, &end, 10);
    if (*end != '\0' || code < INT_MIN || code > INT_MAX)
        return;
    pvm__ctx.opt[PvmOutputTid] = pvm__ctx.opt[PvmSelfOutputTid] = (int)tid;
    pvm__ctx.opt[PvmOutputCode] = pvm__ctx.opt[PvmSelfOutputCode] = (int)code;
}

int
pvm__opt(int what)
{
    pvm__opt_load();
    if (what == PvmAutoErr)
        return pvm__ctx.autoerr;
    return what >= PvmRoute && what <= PvmNoReset ? pvm__ctx.opt[what] : 0;
}

/* 1 when the allocation about to happen must fail. */
static int
pvm__fault(void)
{
    if (pvm__ctx.fault_after <= 0)
        return 0;
    return --pvm__ctx.fault_after == 0;
}

void *
pvm__malloc(size_t n)
{
    return pvm__fault() ? NULL : malloc(n ? n : 1);
}

void *
pvm__realloc(void *p, size_t n)
{
    return pvm__fault() ? NULL : realloc(p, n ? n : 1);
}

void *
pvm__calloc(size_t nmemb, size_t size)
{
    return pvm__fault() ? NULL : calloc(nmemb ? nmemb : 1, size ? size : 1);
}

/*
 * PVM's byte-order code for an integer of n bytes: 0 little-endian, 3
 * big-endian (the half-swapped orders of old machines do not occur here).
 */
static int
pvm__int_order(const unsigned char *p, size_t n)
{
    return p[0] == n - 1 ? 3 : 0;
}

/* log2 of a power-of-two size. */
static int
pvm__log2(size_t n)
{
    int k = 0;

    while ((size_t)1 << k < n)
        k++;
    return k;
}

/*
 * The data signature: bits 0-4 short, 5-9 int, 10-14 long (each a byte
 * order in the top two bits and log2 of the size below), 15-20 float,
 * 21-26 double (format 1 IEEE single, 2 IEEE double; order 0 little, 3
 * big).  Receivers compare it with their own to know whether PvmDataRaw
 * bytes are native to them.
 */
int
pvm__dsig(void)
{
    short s = 0;
    int i = 0;
    long l = 0;
    float f = 1.0f;
    unsigned char b[sizeof(long)];
    size_t k;
    int sig = 0, forder;

    for (k = 0; k < sizeof s; k++)
        s = (short)(s | (short)(k << (8 * k)));
    memcpy(b, &s, sizeof s);
    sig |= ((pvm__int_order(b, sizeof s) << 3) | pvm__log2(sizeof s)) << 0;
    for (k = 0; k < sizeof i; k++)
        i |= (int)(k << (8 * k));
    memcpy(b, &i, sizeof i);
    sig |= ((pvm__int_order(b, sizeof i) << 3) | pvm__log2(sizeof i)) << 5;
    for (k = 0; k < sizeof l; k++)
        l |= (long)((unsigned long)k << (8 * k));
    memcpy(b, &l, sizeof l);
    sig |= ((pvm__int_order(b, sizeof l) << 3) | pvm__log2(sizeof l)) << 10;
    /* IEEE 1.0f is 3f 80 00 00 in big-endian order. */
    memcpy(b, &f, sizeof f);
    forder = b[0] == 0x3f ? 3 : 0;
    sig |= ((forder << 4) | 1) << 15;
    sig |= ((forder << 4) | 2) << 21;
    return sig;
}
