/*
 * liq_master_disk.c - checkpoints on disk and --resume, the master's side
 * (issue 26: "--checkpoint DIR also writes them to disk every N seconds,
 * checksummed"; "--resume DIR continues from the latest disk checkpoint
 * with the same bits").  The master writes: when it confirms an in-memory
 * checkpoint (liq_master_ckpt.c) and the last write is at least
 * --checkpoint-interval seconds old, the CONFIRM asks every worker for its
 * own copies of that checkpoint; the master places them in one grid-sized
 * state and hands it to a thread that writes it (liq_ckfile.c: temporary
 * file, fsync, rename) while the master goes on answering the workers;
 * a checkpoint confirmed while a write is in flight is not gathered.  The
 * workers need no shared file system, and the file holds the whole grid,
 * so a job may resume on other hosts.  Going on from the file, after the
 * master's death (--resume) or when a recovery finds quanta with no copy
 * left, sends each quantum's state to its owner as the copy it restores
 * from.
 */
#include "liq_master.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lvm_err.h"
#include "pvm3.h"
#include "wire.h"

static int
md_nstate(const struct liq_opts *o)
{
    return o->user != NULL ? liq_user_nboxes(o->user) : 1;
}

void
liq_md_describe(const struct liq_opts *o, char *buf, size_t len)
{
    const struct liquid *lq = liq_opts_program(o);
    size_t k = 0;

#define ADD(...)                                                                    \
    do {                                                                            \
        if (k < len)                                                                \
            k += (size_t)snprintf(buf + k, len - k, __VA_ARGS__);                   \
    } while (0)
    ADD("program %s\n", lq != NULL ? lq->name : "stencil");
    ADD("kernel %s\n", liq_kernel_name(o));
    ADD("grid %dx%dx%d\n", o->n[0], o->n[1], o->n[2]);
    ADD("iterations %d\n", o->iters);
    ADD("seed %" PRIu64 "\n", o->seed);
    ADD("state %d\n", md_nstate(o));
    if (lq != NULL) {
        ADD("fields");
        for (int f = 0; f < lq->nf; f++)
            ADD(" %s", lq->f[f].name);
        ADD("\ndescription %08x\n", (unsigned)liq_user_fingerprint(lq));
        ADD("input");
        for (int i = 0; i < o->ninput; i++)
            ADD(" %s", o->input[i]);
        ADD("%s\n", o->ninput == 0 ? " (none)" : "");
        /* The program's options as its workers get them (NAME=VALUE). */
        ADD("options");
        for (int i = 0; i < lq->nopt; i++)
            ADD(" %s", lq->wbuf[i]);
        ADD("\n");
    }
#undef ADD
    if (k >= len && len > 0)
        buf[len - 1] = '\0';
}

int
liq_md_open(const struct liq_opts *o, struct liq_stats *st, const char *name)
{
    struct liq_disk *dk = &st->dk;
    char why[512], *want = malloc(LIQ_CKF_DESC_MAX);
    double t0 = liq_vm_now();

    struct stat sb;

    if (want == NULL) {
        fprintf(stderr, "%s: out of memory\n", name);
        return LIQ_EXIT_USAGE;
    }
    if (o->ckdir[0] != '\0') {
        /* --resume DIR is also where the job goes on writing. */
        const char *opt = o->resume[0] != '\0' && strcmp(o->resume, o->ckdir) == 0
                              ? "--resume" : "--checkpoint";
        const char *what = NULL;

        if (stat(o->ckdir, &sb) != 0)
            what = errno == ENOENT ? "no such directory" : strerror(errno);
        else if (!S_ISDIR(sb.st_mode))
            what = "not a directory (it names the folder that holds checkpoint.lqc)";
        else if (access(o->ckdir, W_OK | X_OK) != 0)
            what = strerror(errno);
        if (what != NULL) {
            fprintf(stderr, "%s: %s %s: %s\n", name, opt, o->ckdir, what);
            free(want);
            return LIQ_EXIT_USAGE;
        }
    }
    if (o->resume[0] == '\0') {
        free(want);
        return 0;
    }
    if (liq_ckfile_read(o->resume, &dk->file, why, sizeof(why)) != 0) {
        fprintf(stderr, "%s: --resume: %s\n", name, why);
        goto bad;
    }
    liq_md_describe(o, want, LIQ_CKF_DESC_MAX);
    if (liq_ckfile_same_job(dk->file.desc, want, why, sizeof(why)) != 0) {
        fprintf(stderr, "%s: --resume %s: %s\n", name, o->resume, why);
        goto bad;
    }
    if (dk->file.nstate != md_nstate(o) || memcmp(dk->file.n, o->n, sizeof(o->n)) != 0 ||
        dk->file.iter >= o->iters) {
        fprintf(stderr, "%s: --resume %s: the checkpoint (iteration %d, grid %dx%dx%d) does "
                        "not fit this job\n", name, o->resume, dk->file.iter, dk->file.n[0],
                dk->file.n[1], dk->file.n[2]);
        goto bad;
    }
    /* Its checkpoints' spacing, from the file: the workers restore only at
     * one of its multiples, and it sizes this run's (a forged one must not
     * overflow). */
    if (dk->file.ck_iters < 1 || dk->file.ck_iters > o->iters ||
        dk->file.iter % dk->file.ck_iters != 0) {
        fprintf(stderr, "%s: --resume %s: the checkpoint does not hold together (iteration %d "
                        "with checkpoints every %d iterations)\n", name, o->resume, dk->file.iter,
                dk->file.ck_iters);
        goto bad;
    }
    free(want);
    dk->resumed_from = dk->file.iter;
    dk->read_s = liq_vm_now() - t0;
    if (!o->quiet)
        fprintf(stderr, "%s: resuming from the checkpoint of iteration %d in %s (read and "
                        "checked in %.3f s)\n", name, dk->file.iter, o->resume, dk->read_s);
    return 0;
bad:
    free(want);
    liq_ckfile_free(&dk->file);
    return LIQ_EXIT_USAGE;
}

int
liq_md_init(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liq_disk *dk = &st->dk;
    struct liq_ckpt *ck = &st->ck;

    dk->nstate = md_nstate(o);
    dk->last_t = liq_vm_now();
    if (o->ckdir[0] == '\0' || !ck->on)
        return 0;
    dk->on = 1;
    dk->interval_s = o->ck_interval;
    dk->patience = 4;
    if (dk->resumed_from > 0 && dk->file.ck_iters != ck->iters) {
        /* The JOB's START must be a checkpoint of the job's own rhythm;
         * auto may choose another from this run's probes. */
        ck->iters = dk->file.ck_iters;
        ck->every = o->epoch > 0 ? (ck->iters + o->epoch - 1) / o->epoch : 1;
    }
    if ((dk->have = calloc((size_t)st->g.nquanta, 1)) == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the disk checkpoints");
        return -1;
    }
    return 0;
}

/* A file being written by its thread; the thread touches nothing else. */
struct liq_mdwrite {
    pthread_t thr;
    int joinable;               /* thr runs it (else it was written in place) */
    struct liq_ckfile f;        /* f.v: the grid's state, owned here */
    char dir[LIQ_PATH_MAX];
    size_t len;
    int rc;
    double sec, end;            /* hash, write, fsync, rename; when it ended */
    int done;                   /* set last, by the writer (atomic) */
    char why[512];
};

static void *
md_writer(void *arg)
{
    struct liq_mdwrite *m = arg;
    double t0 = liq_vm_now();

    m->rc = liq_ckfile_write(m->dir, &m->f, &m->len, m->why, sizeof(m->why));
    m->end = liq_vm_now();
    m->sec = m->end - t0;
    __atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Count the write in flight once it is done (wait: however long it takes;
 * vm NULL: say nothing).  1 while it is still in flight, else 0. */
static int
md_reap(struct liq_vm *vm, struct liq_disk *dk, int wait)
{
    struct liq_mdwrite *m = dk->wr;

    if (m == NULL)
        return 0;
    if (!wait && !__atomic_load_n(&m->done, __ATOMIC_ACQUIRE))
        return 1;
    if (m->joinable)
        pthread_join(m->thr, NULL);
    dk->wr = NULL;
    dk->last_t = m->end;
    if (m->rc != 0) {
        /* The job itself is whole: say so and go on. */
        dk->failed++;
        snprintf(dk->err, sizeof(dk->err), "%s", m->why);
        if (vm != NULL && vm->progress)
            fprintf(stderr, "%s%s: checkpoint of iteration %d not written: %s\n",
                    isatty(2) ? "\n" : "", vm->who, m->f.iter, m->why);
    } else {
        dk->writes++;
        dk->iter = m->f.iter;
        dk->bytes = (double)m->len;
        dk->bytes_all += (double)m->len;
        dk->sec += m->sec;
        if (m->sec > dk->sec_max)
            dk->sec_max = m->sec;
    }
    /* Its buffer holds the next gather. */
    if (dk->v == NULL)
        dk->v = m->f.v;
    else
        free(m->f.v);
    free(m);
    return 0;
}

/* The gathered state to its writer thread (signals stay with the
 * master's); written here when no thread can be had. */
static void
md_write(struct liq_vm *vm, struct liq_disk *dk, struct liq_mdwrite *m)
{
    sigset_t all, old;

    dk->wr = m;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    m->joinable = pthread_create(&m->thr, NULL, md_writer, m) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!m->joinable) {
        md_writer(m);
        md_reap(vm, dk, 1);
    }
}

int
liq_md_due(struct liq_vm *vm, struct liq_stats *st, int it)
{
    struct liq_disk *dk = &st->dk;
    double now = liq_vm_now();

    if (!dk->on || md_reap(vm, dk, 0) != 0 || now - dk->last_t < dk->interval_s)
        return 0;
    /* A gather under way goes on: its copies may come after a newer
     * checkpoint's acknowledgements (a worker reads the request a block
     * late), and giving it up for each newer one may write none at all.
     * It is given up once it cannot complete (a recovery, or a worker
     * that left since the request may have taken copies with it), or
     * once it has waited out `patience` newer checkpoints, twice as many
     * as the last one given up, so a copy that never comes stops no
     * write for long, and slow ones still complete. */
    if (dk->want != 0 && dk->wgen == vm->gen && dk->wleft == st->left_all) {
        if (++dk->wconf < dk->patience)
            return 0;
        dk->given_up++;
        if (dk->patience < (1 << 20))
            dk->patience *= 2;
    }
    dk->want = it;
    dk->wconf = 0;
    dk->wgen = vm->gen;
    dk->wleft = st->left_all;
    dk->got = 0;
    dk->t_req = now;
    memset(dk->have, 0, (size_t)st->g.nquanta);
    return 1;
}

int
liq_md_take(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w)
{
    struct liq_disk *dk = &st->dk;
    int hdr[3] = { -1, -1, -1 }, bytes, tag, src, lo[3], hi[3];
    size_t pts = (size_t)st->g.n[0] * st->g.n[1] * st->g.n[2], qp, row;

    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
    if (pvm_upkint(hdr, 3, 1) < 0 || hdr[2] < 0 || hdr[2] >= st->g.nquanta)
        goto bad;
    if (!dk->on || hdr[0] != dk->wgen || hdr[0] != vm->gen || hdr[1] != dk->want ||
        dk->have[hdr[2]])
        return 0; /* of a gather given up */
    liq_quantum_extent(&st->g, hdr[2], lo, hi);
    row = (size_t)(hi[0] - lo[0]);
    qp = row * (size_t)(hi[1] - lo[1]) * (size_t)(hi[2] - lo[2]);
    if ((size_t)bytes != 3 * sizeof(int) + qp * (size_t)dk->nstate * sizeof(double))
        goto bad;
    if (dk->v == NULL && (dk->v = malloc(pts * (size_t)dk->nstate * sizeof(double))) == NULL) {
        snprintf(vm->why, sizeof(vm->why), "out of memory for the disk checkpoint (%.1f MB)",
                 pts * (double)dk->nstate * 8 / 1e6);
        return -1;
    }
    /* The copy is state box by box, each z, y, x fastest over the quantum. */
    for (int s = 0; s < dk->nstate; s++)
        for (int z = lo[2]; z < hi[2]; z++)
            for (int y = lo[1]; y < hi[1]; y++) {
                double *d = dk->v + s * pts + ((size_t)z * st->g.n[1] + (size_t)y) * st->g.n[0] +
                            (size_t)lo[0];

                if (pvm_upkdouble(d, (int)row, 1) < 0)
                    goto bad;
            }
    dk->have[hdr[2]] = 1;
    if (++dk->got < st->g.nquanta)
        return 0;

    struct liq_mdwrite *m = calloc(1, sizeof(*m));

    dk->gather_s += liq_vm_now() - dk->t_req;
    if (m == NULL) {
        dk->failed++;
        snprintf(dk->err, sizeof(dk->err), "out of memory for the write");
        dk->want = 0;
        return 0;
    }
    m->f.iter = dk->want;
    m->f.ck_iters = st->ck.iters;
    m->f.nstate = dk->nstate;
    memcpy(m->f.n, st->g.n, sizeof(m->f.n));
    liq_md_describe(o, m->f.desc, sizeof(m->f.desc));
    snprintf(m->dir, sizeof(m->dir), "%s", o->ckdir);
    m->f.v = dk->v;
    dk->v = NULL;
    dk->want = 0;
    md_write(vm, dk, m);
    return 0;
bad:
    snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed checkpoint copy (%d bytes)",
             (unsigned)vm->tids[w], bytes);
    return -1;
}

int
liq_md_fallback(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int *c)
{
    struct liq_disk *dk = &st->dk;
    char why[512] = "", *want;
    int rc = -1;

    if (!dk->on)
        return -1;
    md_reap(vm, dk, 1); /* the newest file whole before it is read */
    if ((want = malloc(LIQ_CKF_DESC_MAX)) == NULL)
        return -1;
    liq_ckfile_free(&dk->file);
    liq_md_describe(o, want, LIQ_CKF_DESC_MAX);
    if (liq_ckfile_read(o->ckdir, &dk->file, why, sizeof(why)) != 0 ||
        liq_ckfile_same_job(dk->file.desc, want, why, sizeof(why)) != 0 ||
        dk->file.nstate != dk->nstate || memcmp(dk->file.n, st->g.n, sizeof(st->g.n)) != 0 ||
        dk->file.iter % st->ck.iters != 0) {
        /* vm->why names the quanta lost; the file's trouble goes with it. */
        size_t k = strlen(vm->why);

        if (dk->file.v == NULL && why[0] != '\0' && k + 40 < sizeof(vm->why))
            snprintf(vm->why + k, sizeof(vm->why) - k, "; no disk checkpoint to go on "
                     "from (%.200s)", why);
        liq_ckfile_free(&dk->file);
        goto out;
    }
    if (vm->progress)
        fprintf(stderr, "%s: %s; going on from the disk checkpoint of iteration %d\n", vm->who,
                vm->why, dk->file.iter);
    *c = dk->file.iter;
    dk->fallbacks++;
    dk->fb_iter = dk->file.iter;
    rc = 0;
out:
    free(want);
    return rc;
}

int
liq_md_load(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int c)
{
    struct liq_disk *dk = &st->dk;
    struct liq_ckpt *ck = &st->ck;
    size_t pts = liq_ckfile_points(&dk->file);
    double *buf = NULL;
    int rc = -1;

    (void)o;
    if (dk->file.v == NULL || dk->file.iter != c) {
        snprintf(vm->why, sizeof(vm->why), "no disk checkpoint of iteration %d is loaded", c);
        return -1;
    }
    for (int q = 0; q < st->g.nquanta; q++) {
        int lo[3], hi[3], hdr[2] = { c, q }, tid = vm->tids[st->owner[q]];
        size_t row, qp, k = 0;

        liq_quantum_extent(&st->g, q, lo, hi);
        row = (size_t)(hi[0] - lo[0]);
        qp = row * (size_t)(hi[1] - lo[1]) * (size_t)(hi[2] - lo[2]);
        free(buf);
        if ((buf = malloc(qp * (size_t)dk->nstate * sizeof(double))) == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for quantum %d's state", q);
            goto out;
        }
        for (int s = 0; s < dk->nstate; s++)
            for (int z = lo[2]; z < hi[2]; z++)
                for (int y = lo[1]; y < hi[1]; y++, k += row)
                    memcpy(buf + k,
                           dk->file.v + s * pts + ((size_t)z * st->g.n[1] + (size_t)y) *
                                                      st->g.n[0] + (size_t)lo[0],
                           row * sizeof(double));
        pvm_initsend(PvmDataDefault);
        pvm_pkint(hdr, 2, 1);
        pvm_pkdouble(buf, (int)k, 1);
        if ((rc = pvm_send(tid, LIQ_TAG_CKLOAD)) < 0) {
            snprintf(vm->why, sizeof(vm->why), "quantum %d's state could not be sent to t%x (%s)",
                     q, (unsigned)tid, lvm_errtext(rc));
            rc = -1;
            goto out;
        }
        /* The owner holds the only copy until the next checkpoint. */
        ck->otid[q] = tid;
        ck->btid[q] = 0;
    }
    ck->iter = c;
    for (int i = 0; i < LIQ_CK_PENDING; i++)
        ck->pend[i].iter = 0;
    rc = 0;
out:
    free(buf);
    liq_ckfile_free(&dk->file);
    return rc;
}

void
liq_md_json(FILE *fp, const struct liq_opts *o, const struct liq_stats *st)
{
    const struct liq_disk *dk = &st->dk;

    fprintf(fp, "\"disk_checkpoints\":{\"on\":%s,\"dir\":", dk->on ? "true" : "false");
    if (o->ckdir[0] != '\0')
        wire_json_str(fp, o->ckdir);
    else
        fprintf(fp, "null");
    fprintf(fp, ",\"interval_s\":%.6g,\"writes\":%d,\"failed_writes\":%d,\"last_iteration\":%d,"
                "\"bytes\":%.0f,\"bytes_total\":%.0f,\"seconds\":%.6g,\"max_seconds\":%.6g,"
                "\"gather_s\":%.6g,\"gathers_given_up\":%d,",
            o->ck_interval, dk->writes, dk->failed, dk->iter, dk->bytes, dk->bytes_all, dk->sec,
            dk->sec_max, dk->gather_s, dk->given_up);
    fprintf(fp, "\"last_error\":");
    if (dk->err[0] != '\0')
        wire_json_str(fp, dk->err);
    else
        fprintf(fp, "null");
    fprintf(fp, ",\"resumed_from\":");
    if (dk->resumed_from > 0)
        fprintf(fp, "%d,\"resume_read_s\":%.6g", dk->resumed_from, dk->read_s);
    else
        fprintf(fp, "null,\"resume_read_s\":null");
    fprintf(fp, ",\"recoveries_from_disk\":%d,\"recovered_from\":", dk->fallbacks);
    if (dk->fallbacks > 0)
        fprintf(fp, "%d},", dk->fb_iter);
    else
        fprintf(fp, "null},");
}

void
liq_md_summary(FILE *fp, const struct liq_opts *o, const struct liq_stats *st)
{
    const struct liq_disk *dk = &st->dk;

    if (dk->resumed_from > 0)
        fprintf(fp, "resume: from the disk checkpoint of iteration %d in %s (read and checked "
                    "in %.3f s)\n", dk->resumed_from, o->resume, dk->read_s);
    if (dk->on && dk->writes == 0 && dk->failed == 0)
        fprintf(fp, "disk checkpoints: none written to %s (none due: --checkpoint-interval "
                    "%g s)\n", o->ckdir, o->ck_interval);
    else if (dk->on) {
        fprintf(fp, "disk checkpoints: %d written to %s (the last of iteration %d, %.1f MB), "
                    "%.3f s writing (at most %.3f s), %.3f s gathering",
                dk->writes, o->ckdir, dk->iter, dk->bytes / 1e6, dk->sec, dk->sec_max,
                dk->gather_s);
        if (dk->given_up > 0)
            fprintf(fp, "; %d gather%s given up (a copy did not come)", dk->given_up,
                    dk->given_up == 1 ? "" : "s");
        fprintf(fp, "%s%s\n", dk->failed ? "; FAILED writes: " : "", dk->failed ? dk->err : "");
    }
    if (dk->fallbacks > 0)
        fprintf(fp, "recovery from disk: %d time%s, the last from iteration %d\n",
                dk->fallbacks, dk->fallbacks == 1 ? "" : "s", dk->fb_iter);
}

void
liq_md_settle(struct liq_vm *vm, struct liq_stats *st)
{
    md_reap(vm, &st->dk, 1);
}

void
liq_md_free(struct liq_stats *st)
{
    struct liq_disk *dk = &st->dk;

    md_reap(NULL, dk, 1);
    free(dk->have);
    free(dk->v);
    liq_ckfile_free(&dk->file);
    memset(dk, 0, sizeof(*dk));
}
