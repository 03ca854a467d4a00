/*
 * liq_farm_worker.c - liquid_farm()'s worker role: the PVM task a
 * program's master spawns (this executable with LIQUID_FARM_WORKER_ARG)
 * on every host.  It takes the job, checks that the program described the
 * same index space as the master, asks for work, calls the program's tile
 * function on each tile of its chunks and sends each tile's records back.
 * It asks again when it starts its last queued tile (one request ahead, so
 * the next chunk is there when it finishes), reads the master's messages
 * between tiles (SHRINK: another worker took the back of a chunk; DROP:
 * its host was reclaimed past the limit) and exits on QUIT or when the
 * master is gone.  The queue is vmrun farm-worker's (vmrun_farm_worker.c)
 * without the command lines.
 */
#include "liq_farm.h"

#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

struct ftile {
    struct liq_farm_key k;
    int idx;
};

struct fworker {
    int master;
    struct liq_farm_queue fq;
    int asked, quit;
};

int
liq_farm_push(struct liq_farm_queue *fq, const void *item)
{
    if (fq->head > 0 && fq->tail == fq->cap) {
        memmove(fq->q, fq->q + fq->head * fq->size, (fq->tail - fq->head) * fq->size);
        fq->tail -= fq->head;
        fq->head = 0;
    }
    if (fq->tail == fq->cap) {
        size_t c = fq->cap ? 2 * fq->cap : 64;
        char *b = realloc(fq->q, c * fq->size);

        if (b == NULL)
            return -1;
        fq->q = b;
        fq->cap = c;
    }
    memcpy(fq->q + fq->tail++ * fq->size, item, fq->size);
    return 0;
}

int
liq_farm_pop(struct liq_farm_queue *fq, void *item)
{
    if (fq->head == fq->tail)
        return -1;
    memcpy(item, fq->q + fq->head++ * fq->size, fq->size);
    return 0;
}

void
liq_farm_shrink(struct liq_farm_queue *fq, int chunk, int keep)
{
    size_t o = fq->head;

    for (size_t i = fq->head; i < fq->tail; i++) {
        struct liq_farm_key k;

        memcpy(&k, fq->q + i * fq->size, sizeof(k));
        if (k.chunk != chunk || k.ord < keep) {
            if (o != i)
                memcpy(fq->q + o * fq->size, fq->q + i * fq->size, fq->size);
            o++;
        }
    }
    fq->tail = o;
}

/* One message from the master, already received into the active buffer. */
static void
fw_take(struct fworker *w, int tag)
{
    switch (tag) {
    case LIQ_FARM_TAG_CHUNK: {
        struct ftile t;
        int count = 0;

        pvm_upkint(&t.k.chunk, 1, 1);
        pvm_upkint(&count, 1, 1);
        for (int i = 0; i < count; i++) {
            t.k.ord = i;
            pvm_upkint(&t.idx, 1, 1);
            if (liq_farm_push(&w->fq, &t) != 0)
                w->quit = 1; /* out of memory: the master reruns our tiles elsewhere */
        }
        w->asked = 0;
        break;
    }
    case LIQ_FARM_TAG_DROP:
        w->fq.head = w->fq.tail = 0;
        break;
    case LIQ_FARM_TAG_SHRINK: {
        int chunk = -1, keep = 0;

        pvm_upkint(&chunk, 1, 1);
        pvm_upkint(&keep, 1, 1);
        liq_farm_shrink(&w->fq, chunk, keep);
        break;
    }
    case LIQ_FARM_TAG_QUIT:
    case LIQ_FARM_TAG_EXITED: /* the master is gone */
        w->quit = 1;
        break;
    default:
        break;
    }
}

/* Take what the master sent; wait for it when block is set. */
static void
fw_poll(struct fworker *w, int block)
{
    int b, bytes, tag, src;

    while ((b = block ? pvm_recv(-1, -1) : pvm_nrecv(-1, -1)) > 0) {
        pvm_bufinfo(b, &bytes, &tag, &src);
        if (src == w->master || tag == LIQ_FARM_TAG_EXITED)
            fw_take(w, tag);
        block = 0;
    }
    if (b < 0)
        w->quit = 1;
}

static void
fw_ask(struct fworker *w)
{
    int zero = 0;

    if (w->asked)
        return;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&zero, 1, 1);
    pvm_send(w->master, LIQ_FARM_TAG_ASK);
    w->asked = 1;
}

static void
fw_fail(struct fworker *w, char *why)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkstr((char *)why);
    pvm_send(w->master, LIQ_FARM_TAG_FAIL);
    w->quit = 1;
}

int
liq_farm_worker_main(const char *name, const int n[3], size_t record, liquid_tile_fn fn,
                     void *arg)
{
    struct fworker w;
    int jn[3], jrec, b, t[3], mb, rc = 1;
    char why[256];
    unsigned char *buf = NULL;

    memset(&w, 0, sizeof(w));
    w.fq.size = sizeof(struct ftile);
    pvm_setopt(PvmAutoErr, 0);
    if (pvm_mytid() < 0 || (w.master = pvm_parent()) <= 0) {
        fprintf(stderr, "%s %s: not spawned by a liquid_farm master\n", name,
                LIQUID_FARM_WORKER_ARG);
        pvm_exit();
        return 2;
    }
    pvm_notify(PvmTaskExit, LIQ_FARM_TAG_EXITED, 1, &w.master);
    if (pvm_recv(w.master, LIQ_FARM_TAG_JOB) < 0)
        goto out;
    pvm_upkint(jn, 3, 1);
    pvm_upkint(&jrec, 1, 1);
    pvm_upkint(&mb, 1, 1);
    liq_farm_tiles(n, &b, t);
    if (fn == NULL || memcmp(jn, n, sizeof(jn)) != 0 || (size_t)jrec != record || mb != b) {
        snprintf(why, sizeof(why),
                 "a worker's index space is %dx%dx%d of %zu-byte records, the master's "
                 "%dx%dx%d of %d: describe the job alike in both roles",
                 n[0], n[1], n[2], record, jn[0], jn[1], jn[2], jrec);
        fw_fail(&w, why);
        goto out;
    }
    {
        size_t pts = 1;

        for (int a = 0; a < 3; a++)
            pts *= (size_t)(n[a] > 1 ? (b < n[a] ? b : n[a]) : 1);
        if ((buf = malloc(pts * record)) == NULL) {
            snprintf(why, sizeof(why), "out of memory for a tile's records");
            fw_fail(&w, why);
            goto out;
        }
    }
    while (!w.quit) {
        struct ftile ft;

        if (liq_farm_pop(&w.fq, &ft) != 0) {
            fw_ask(&w);
            fw_poll(&w, 1);
            continue;
        }
        int lo[3], cnt[3], head[2] = { ft.k.chunk, ft.idx };
        double t0, secs;

        if (w.fq.head == w.fq.tail)
            fw_ask(&w); /* one request ahead: the next chunk comes while this tile runs */
        liq_farm_tile_box(n, b, t, (uint64_t)ft.idx, lo, cnt);
        t0 = liq_farm_now();
        if (fn(lo, cnt, buf, arg) != 0) {
            snprintf(why, sizeof(why), "the tile function failed on the tile at (%d, %d, %d)",
                     lo[0], lo[1], lo[2]);
            fw_fail(&w, why);
            break;
        }
        secs = liq_farm_now() - t0;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(head, 2, 1);
        pvm_pkdouble(&secs, 1, 1);
        pvm_pkbyte((char *)buf, (int)((size_t)cnt[0] * cnt[1] * cnt[2] * record), 1);
        pvm_send(w.master, LIQ_FARM_TAG_RESULT);
        fw_poll(&w, 0);
    }
    rc = 0;
out:
    free(buf);
    free(w.fq.q);
    pvm_exit();
    return rc;
}
