/*
 * pvm_output.c - spawned tasks' output, as PVM 3.4 delivers it: to the
 * pvm_catchout file, or as messages to the task PvmOutputTid names.
 *
 * The daemon that runs a spawned task sends its output to the task its
 * spawner named (PvmOutputTid, inherited by the task's own children through
 * LIQUIDVM_OUTPUT) with the spawner's PvmOutputCode, as WIRE_CTX_OUTPUT
 * frames: spawned, begin, lines, EOF (daemon/vmd_spawn.c).  Here they
 * become what PVM makes of them:
 *
 *   - pvm_catchout's code (PVM__OUT_CATCH): lines printed to the file,
 *     "[tTID] line" between "[tTID] BEGIN" and "[tTID] EOF" (bare lines
 *     when PvmShowTids is 0), a line cut short joined to what follows;
 *   - any other code: a message with that tag from our daemon (PVM's
 *     pvmd), packed as PVM packs it: int tid, int count, then count bytes;
 *     count -2 when the task was spawned, -1 when its output begins, 0 at
 *     its end (EOF), else the bytes of a line with its newline.
 *
 * Every task whose output comes to us is open from its spawn (or its first
 * frame) to its EOF; while pvm_catchout is on, pvm_exit waits for the
 * open ones (pvm_spawn.c), as PVM's does, so that no line is lost to a
 * parent that leaves first.  A task started on another host than its
 * spawner's is announced by the spawner's daemon (EXPECT) before the
 * spawner's own EOF, so none is open unseen when the last EOF comes.
 * This file calls only the buffers and the context.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_tid.h"

enum { OUT_NONE, OUT_OPEN, OUT_DONE };

/* A task whose output comes to us. */
struct pvm__outsrc {
    int tid;
    int code;                   /* the output code its frames carry */
    int state;                  /* OUT_*: an EOF ends it for good, whatever comes late */
    char *part;                 /* a line cut short, waiting for its rest */
    size_t partlen;
};

/* The task tid's entry, made when add is set.  The entries are sorted by
 * tid and kept after their EOF (late frames must not open them again), so
 * a program that spawns many tasks finds each in log time. */
static struct pvm__outsrc *
source(int tid, int add)
{
    struct pvm__outsrc *v = pvm__ctx.outs;
    int lo = 0, hi = pvm__ctx.nouts;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;

        if (v[mid].tid == tid)
            return &v[mid];
        if (v[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!add)
        return NULL;
    if (pvm__ctx.nouts == pvm__ctx.outcap) {
        int cap = pvm__ctx.outcap ? 2 * pvm__ctx.outcap : 16;

        if ((v = realloc(v, (size_t)cap * sizeof(*v))) == NULL)
            return NULL;
        pvm__ctx.outs = v;
        pvm__ctx.outcap = cap;
    }
    memmove(&v[lo + 1], &v[lo], (size_t)(pvm__ctx.nouts - lo) * sizeof(*v));
    pvm__ctx.nouts++;
    memset(&v[lo], 0, sizeof(*v));
    v[lo].tid = tid;
    return &v[lo];
}

void
pvm__output_expect(int tid, int code)
{
    struct pvm__outsrc *s = source(tid, 1);

    if (s != NULL && s->state == OUT_NONE) {
        s->state = OUT_OPEN;
        s->code = code;
    }
}

int
pvm__output_open(int *tids, int cap)
{
    int n = 0;

    for (int i = 0; i < pvm__ctx.nouts; i++)
        if (pvm__ctx.outs[i].state == OUT_OPEN && pvm__ctx.outs[i].code == PVM__OUT_CATCH) {
            if (n < cap)
                tids[n] = pvm__ctx.outs[i].tid;
            n++;
        }
    return n;
}

void
pvm__output_drop(int tid)
{
    struct pvm__outsrc *s = source(tid, 0);

    if (s != NULL)
        s->state = OUT_DONE;
}

void
pvm__output_free(void)
{
    for (int i = 0; i < pvm__ctx.nouts; i++)
        free(pvm__ctx.outs[i].part);
    free(pvm__ctx.outs);
    pvm__ctx.outs = NULL;
    pvm__ctx.nouts = pvm__ctx.outcap = 0;
}

/* pvm_catchout's printing of one frame. */
static void
catch_print(FILE *fp, struct pvm__outsrc *s, int kind, const char *text, size_t len)
{
    int tids = pvm__ctx.opt[PvmShowTids];
    char *p;

    switch (kind) {
    case WIRE_OUT_BEGIN:
        if (tids)
            fprintf(fp, "[t%x] BEGIN\n", (unsigned)s->tid);
        break;
    case WIRE_OUT_PART:
        /* Kept until the rest of the line comes; dropped if memory fails. */
        if (len > 0 && text != NULL && (p = realloc(s->part, s->partlen + len + 1)) != NULL) {
            memcpy(p + s->partlen, text, len);
            s->part = p;
            s->partlen += len;
        }
        return;
    case WIRE_OUT_LINE:
    case WIRE_OUT_EOF:
        if (kind == WIRE_OUT_EOF && s->partlen == 0)
            break;
        if (tids)
            fprintf(fp, "[t%x] ", (unsigned)s->tid);
        fprintf(fp, "%.*s%.*s\n", (int)s->partlen, s->part ? s->part : "", (int)len,
                text ? text : "");
        free(s->part);
        s->part = NULL;
        s->partlen = 0;
        break;
    }
    if (kind == WIRE_OUT_EOF && tids)
        fprintf(fp, "[t%x] EOF\n", (unsigned)s->tid);
    fflush(fp);
}

/* The message PVM sends for one frame: int tid, int count, count bytes;
 * after spawned (-2) and begin (-1), the task's parent's tid. */
static struct pvm__msg *
as_message(const struct wire_hdr *h, const unsigned char *text)
{
    static const int count_of[] = { [WIRE_OUT_SPAWNED] = -2, [WIRE_OUT_BEGIN] = -1,
                                    [WIRE_OUT_EOF] = 0 };
    struct pvm__buf *b = NULL;
    struct pvm__msg *m = NULL;
    const unsigned char *p;
    unsigned char *line = NULL;
    size_t len;
    int tid = (int)h->src, count, nl = h->flags == WIRE_OUT_LINE, ptid = 0;

    count = h->flags == WIRE_OUT_LINE || h->flags == WIRE_OUT_PART ? (int)h->len + nl
                                                                    : count_of[h->flags];
    if (count < 0 && h->len == 4 && text != NULL)
        ptid = (int)wire_be32_get(text);
    /* The line and its newline in one piece: packed apart, XDR would pad
     * between them and an unpack of count bytes would not see it. */
    if (count > 0 && (line = malloc((size_t)count)) != NULL) {
        if (h->len > 0 && text != NULL)
            memcpy(line, text, h->len);
        else
            memset(line, 0, h->len);
        if (nl)
            line[h->len] = '\n';
    }
    if ((count > 0 && line == NULL) || pvm__buf_new(PvmDataDefault, &b) != 0 ||
        pvm__pack(b, PVM_INT, &tid, 1, 1) != 0 || pvm__pack(b, PVM_INT, &count, 1, 1) != 0 ||
        (count > 0 && pvm__pack(b, PVM_BYTE, line, count, 1) != 0) ||
        (count < 0 && pvm__pack(b, PVM_INT, &ptid, 1, 1) != 0) ||
        pvm__buf_flatten(b, &p, &len) != 0 || (m = calloc(1, sizeof(*m))) == NULL ||
        (len > 0 && (m->data = malloc(len)) == NULL)) {
        free(m);
        free(line);
        if (b != NULL)
            pvm__buf_free(b);
        return NULL;
    }
    free(line);
    if (len > 0)
        memcpy(m->data, p, len);
    m->len = len;
    m->encword = pvm__buf_encword(b);
    m->src = (int)WIRE_HOST_TID(WIRE_TID_HOST((uint32_t)pvm__ctx.mytid));
    m->dst = pvm__ctx.mytid;
    m->tag = h->tag;
    m->ctx = pvm__ctx.opt[PvmOutputContext];
    pvm__buf_free(b);
    return m;
}

struct pvm__msg *
pvm__output_frame(const struct wire_hdr *h, const unsigned char *body)
{
    struct pvm__outsrc *s;
    int kind = (int)h->flags;

    if (kind == WIRE_OUT_EXPECT) {
        /* No message: the task's own frames say spawned and begin. */
        if (h->len == 4 && body != NULL)
            pvm__output_expect((int)wire_be32_get(body), h->tag);
        return NULL;
    }
    if (kind < WIRE_OUT_LINE || kind > WIRE_OUT_EOF)
        return NULL;
    if ((s = source((int)h->src, 1)) != NULL) {
        s->code = h->tag;
        if (kind == WIRE_OUT_EOF)
            s->state = OUT_DONE;
        else if (s->state == OUT_NONE)
            s->state = OUT_OPEN;
    }
    if (h->tag == PVM__OUT_CATCH) {
        if (pvm__ctx.catchout != NULL && s != NULL)
            catch_print(pvm__ctx.catchout, s, kind, (const char *)body, h->len);
        return NULL;
    }
    return as_message(h, body);
}
