/*
 * liq_master_user.c - a program's own stencil (liquid.h) as the job's
 * master: liquid_run, the program's options on the job's command line and
 * in its workers' argv, the reductions' verdicts, --verify against the
 * one-process reference, --check-reach, the fields in files and the
 * results the program reads back.  The job itself is liq_master.c's, as
 * for the built-in kernels.
 */
#include "liq_master.h"
#include "liq_ukern.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "wire.h"

const char *
liq_kernel_name(const struct liq_opts *o)
{
    const struct liquid *lq = liq_opts_program(o);

    if (lq != NULL)
        return lq->name;
    return (o->builtin ? o->bkernel : o->kernel) == LIQ_RBGS ? "rbgs" : "jacobi";
}

void
liq_mu_usage(FILE *fp, const struct liquid *lq, const char *const *synopsis, const char *text)
{
    const char *line = text, *end;
    int skip = 0;

    fprintf(fp, "usage: %s [--input FILE:DATASET] [--check-reach] [its own options]\n",
            lq->name);
    for (int i = 0; synopsis[i] != NULL; i++) {
        char l[256], *x;

        snprintf(l, sizeof(l), "%s", synopsis[i]);
        /* what does not apply to a program's own stencil */
        while ((x = strstr(l, "[--kernel jacobi|rbgs]")) != NULL ||
               (x = strstr(l, "[--seed S]")) != NULL) {
            char *e = strchr(x, ']') + 1;

            memmove(x, *e == ' ' ? e + 1 : e, strlen(*e == ' ' ? e + 1 : e) + 1);
        }
        for (size_t n = strlen(l); n > 0 && l[n - 1] == ' ';)
            l[--n] = '\0';
        fprintf(fp, "       %*s%s\n", (int)strlen(lq->name), "", l);
    }
    fprintf(fp, "\n  Run %s's own stencil on the virtual machine of LIQUIDVM_HOME (liquid(3)):\n"
                "  fields", lq->name);
    for (int f = 0; f < lq->nf; f++)
        fprintf(fp, "%s %s", f ? "," : "", lq->f[f].name);
    fprintf(fp, "; grid %dx%dx%d unless --grid says otherwise.  The options are\n"
                "  vmrun stencil's (--kernel and --seed excepted):\n",
            lq->n[0], lq->n[1], lq->n[2]);
    /* The text's first paragraph is vmrun's; its options follow. */
    if ((line = strstr(text, "\n\n  --")) != NULL)
        line += 1;
    for (; line != NULL && *line != '\0'; line = end) {
        end = strchr(line, '\n');
        end = end != NULL ? end + 1 : line + strlen(line);
        if (strncmp(line, "  Exit status", 13) == 0) {
            fprintf(fp, "  --grid NXxNYxNZ      grid of interior points (NZ 1: 2D)\n"
                        "  --input FILE:DATASET the initial values of the field the dataset "
                        "names, from\n"
                        "                       HDF5 (doubles of the grid's shape); once per "
                        "field\n"
                        "  --check-reach        first run the update on a point with poison "
                        "beyond its\n"
                        "                       declared reach; exit 1 naming what it read "
                        "there\n");
            liq_user_opts_usage(fp, lq);
            fputc('\n', fp);
            skip = 0;
        } else if (strncmp(line, "  --", 4) == 0) {
            skip = strncmp(line, "  --kernel", 10) == 0 || strncmp(line, "  --seed", 8) == 0 ||
                   strncmp(line, "  --grid", 8) == 0;
        }
        if (!skip)
            fwrite(line, 1, (size_t)(end - line), fp);
    }
}

/* ---- --check-reach ---- */

/* Poison: values an update cannot read without its result showing it. */
static const double poison[] = { NAN, 1e30, -1e30, 0.0, 1.0, 0.5 };

#define CR (LIQUID_MAX_RADIUS + 1) /* offsets checked: -CR..CR per axis */
#define CB (2 * CR + 1)            /* the box's interior extent per axis */

static int
in_reach(const struct liquid *lq, const int d[3], int two_d)
{
    int moved = 0;

    for (int a = 0; a < 3; a++) {
        int r = a == 2 && two_d ? 0 : lq->reach[a];

        if (abs(d[a]) > r)
            return 0;
        moved += d[a] != 0;
    }
    return lq->shape == LIQUID_BOX || moved <= 1;
}

/* The update on the centre point of boxes u (levels as a job's), into res. */
static int
centre_run(const struct liquid *lq, struct liq_ubox *u, const int n[3], const int at[3],
           double *res)
{
    struct liquid_box b;
    const struct kern_box *c = u->lv[0][0];
    ptrdiff_t o = (CR + 1) + c->bi * ((ptrdiff_t)(CR + 1) + (ptrdiff_t)c->bj * (CR + 1));
    int rc;

    memset(&b, 0, sizeof(b));
    for (int a = 0; a < 3; a++) {
        b.lo[a] = at[a];
        b.n[a] = 1;
    }
    b.sj = c->bi;
    b.sk = (ptrdiff_t)c->bi * c->bj;
    b.nfields = lq->nf;
    for (int f = 0; f < lq->nf; f++) {
        b.in[f] = u->lv[0][f]->data + o;
        b.out[f] = u->lv[u->nlev - 1][f]->data + o;
        b.old[f] = u->nlev == 3 ? u->lv[1][f]->data + o : NULL;
        res[f] = NAN;
    }
    b.colour = (at[0] + at[1] + at[2]) & 1;
    b.iter = 1;
    b.dt = lq->dt;
    liq_user_spacing(lq, n, b.h, b.origin);
    if ((rc = lq->update(&b, lq->uarg)) != 0)
        return rc;
    for (int f = 0; f < lq->nf; f++)
        res[f] = b.out[f][0];
    return 0;
}

/* Does the update read beyond its declared reach?  0 no, 1 yes (what says
 * where), -1 it could not be checked. */
static int
check_reach(struct liquid *lq, const int n[3], char *what, size_t len)
{
    struct kern_box shape = { .ni = CB, .nj = CB, .nk = CB, .bi = CB + 2, .bj = CB + 2 };
    struct liq_ubox u, fresh;
    double base[LIQUID_MAX_FIELDS], got[LIQUID_MAX_FIELDS];
    int at[3], two_d = n[2] == 1, nread, rc = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;

    /* A point in the middle of the job's grid; its neighbourhood random. */
    for (int a = 0; a < 3; a++)
        at[a] = n[a] / 2;
    shape.oi = at[0] - CR;
    shape.oj = at[1] - CR;
    shape.ok = at[2] - CR;
    if (liq_ubox_make(&u, lq, n, &shape, 0) != 0 || liq_ubox_make(&fresh, lq, n, &shape, 0) != 0)
        return -1;
    nread = u.nlev == 3 ? 2 : 1;
    for (int l = 0; l < u.nlev; l++)
        for (int f = 0; f < u.nf; f++) {
            struct kern_box *b = fresh.lv[l][f];

            for (int k = 0; k < CB + 2; k++)
                for (int j = 0; j < CB + 2; j++)
                    for (int i = 0; i < CB + 2; i++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        /* 0s and 1s (a cellular automaton's states) and values between */
                        *kern_at(b, i, j, k) = (x >> 11) % 3 == 0 ? (double)((x >> 20) & 1)
                                                                  : (double)(x >> 11) * 0x1p-53;
                    }
        }
    for (int i = 0; i < u.nlev * u.nf; i++)
        kern_box_copy(&u.box[i], &fresh.box[i]);
    if (centre_run(lq, &u, n, at, base) != 0) {
        snprintf(what, len, "the update failed on a point of a %dx%dx%d box", CB, CB, CB);
        rc = 1;
    }
    for (int dz = -CR; rc == 0 && dz <= CR; dz++)
        for (int dy = -CR; rc == 0 && dy <= CR; dy++)
            for (int dx = -CR; rc == 0 && dx <= CR; dx++) {
                const int d[3] = { dx, dy, dz };

                if (in_reach(lq, d, two_d))
                    continue;
                for (int l = 0; rc == 0 && l < nread; l++)
                    for (int f = 0; rc == 0 && f < u.nf; f++)
                        for (size_t p = 0; rc == 0 && p < sizeof(poison) / sizeof(poison[0]);
                             p++) {
                            for (int i = 0; i < u.nlev * u.nf; i++)
                                kern_box_copy(&u.box[i], &fresh.box[i]);
                            *kern_at(u.lv[l][f], CR + 1 + dx, CR + 1 + dy, CR + 1 + dz) =
                                poison[p];
                            if (centre_run(lq, &u, n, at, got) != 0 ||
                                memcmp(base, got, (size_t)u.nf * sizeof(double)) != 0) {
                                snprintf(what, len,
                                         "the update reads %s%s at offset (%d,%d,%d), beyond its "
                                         "declared reach (radius %d,%d,%d, %s)",
                                         l == 1 ? "the level before of " : "", lq->f[f].name, dx,
                                         dy, dz, lq->reach[0], lq->reach[1],
                                         two_d ? 0 : lq->reach[2],
                                         lq->shape == LIQUID_BOX ? "box" : "star");
                                rc = 1;
                            }
                        }
            }
    liq_ubox_free(&u);
    liq_ubox_free(&fresh);
    return rc;
}

/* ---- before the job ---- */

/* --input FILE:DATASET: the field the dataset's last name names (or the
 * job's only field), its whole interior read now; one --input per field. */
static int
read_input(struct liquid *lq, const struct liq_opts *o, const char *input)
{
    char file[LIQ_PATH_MAX], set[256], err[1024];
    const char *base;
    size_t npts = (size_t)o->n[0] * o->n[1] * o->n[2];
    int f;

    if (liq_h5_split_input(input, file, sizeof(file), set, sizeof(set), err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: --input: %s\n", lq->name, err);
        return -1;
    }
    base = strrchr(set, '/') != NULL ? strrchr(set, '/') + 1 : set;
    if ((f = liquid_field_index(lq, base)) < 0 && lq->nf == 1)
        f = 0;
    if (f < 0) {
        fprintf(stderr, "%s: --input %s: no field named %s (the dataset's name says which)\n",
                lq->name, input, base);
        return -1;
    }
    if (lq->f[f].konst) {
        fprintf(stderr, "%s: --input %s: field %s is constant (liquid_field_const): its values "
                        "come from the program, not a file\n", lq->name, input, base);
        return -1;
    }
    if (lq->input[f] != NULL) {
        fprintf(stderr, "%s: --input %s: field %s has its values from an earlier --input\n",
                lq->name, input, lq->f[f].name);
        return -1;
    }
    if ((lq->input[f] = malloc(npts * sizeof(double))) == NULL) {
        fprintf(stderr, "%s: --input: out of memory for %zu points\n", lq->name, npts);
        return -1;
    }
    if (liq_h5_read(file, set, o->n, lq->input[f], o->n[0], (long)o->n[0] * o->n[1], err,
                    sizeof(err)) != 0) {
        fprintf(stderr, "%s: --input: %s\n", lq->name, err);
        free(lq->input[f]);
        lq->input[f] = NULL;
        return -1;
    }
    return 0;
}

int
liq_mu_send_input(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    const struct liquid *lq = o->user;
    double *buf = NULL;

    if (o->ninput == 0)
        return 0;
    for (int q = 0; q < st->g.nquanta; q++) {
        int lo[3], hi[3], hdr[2] = { q, 0 }, rc;
        size_t n = 0;

        liq_quantum_extent(&st->g, q, lo, hi);
        free(buf);
        buf = malloc((size_t)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]) * sizeof(double));
        if (buf == NULL) {
            snprintf(vm->why, sizeof(vm->why), "--input: out of memory");
            return -1;
        }
        for (int f = 0; f < lq->nf; f++) {
            if (lq->input[f] == NULL)
                continue;
            n = 0;
            for (int z = lo[2]; z < hi[2]; z++)
                for (int y = lo[1]; y < hi[1]; y++)
                    for (int x = lo[0]; x < hi[0]; x++)
                        buf[n++] = lq->input[f][x + (size_t)st->g.n[0] *
                                                        (y + (size_t)st->g.n[1] * z)];
            hdr[1] = f;
            pvm_initsend(PvmDataDefault);
            pvm_pkint(hdr, 2, 1);
            pvm_pkdouble(buf, (int)n, 1);
            if ((rc = pvm_send(vm->tids[st->owner[q]], LIQ_TAG_INIT)) < 0) {
                free(buf);
                snprintf(vm->why, sizeof(vm->why), "--input: quantum %d could not be sent", q);
                return -1;
            }
        }
    }
    free(buf);
    return 0;
}

/* vmrun stencil's kernel (red-black or Jacobi) on seed's field, the
 * master's and each worker's alike: the description, alive as long as
 * the process, or NULL out of memory. */
static struct liquid *
builtin_describe(int redblack, uint64_t seed)
{
    static struct liquid *lq;
    static struct liq_ukern k;

    liquid_free(lq);
    if ((lq = liquid_new(redblack ? "rbgs" : "jacobi")) != NULL &&
        liq_ukern_describe(lq, &k, redblack, seed) != 0) {
        liquid_free(lq);
        lq = NULL;
    }
    return lq;
}

int
liq_mu_builtin(struct liq_opts *o)
{
    if ((o->user = builtin_describe(o->kernel == LIQ_RBGS, o->seed)) == NULL)
        return -1;
    o->builtin = 1;
    o->bkernel = o->kernel;
    return 0;
}

int
liq_builtin_worker(const char *who, int argc, char **argv)
{
    int kernel = -1, have_seed = 0;
    uint64_t seed = 0;

    if (argc == 1)
        return liq_worker_main(who); /* vmrun bench's probe: the built-in kernels */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end = NULL;

        if (strcmp(a, "kernel=jacobi") == 0 || strcmp(a, "kernel=rbgs") == 0) {
            kernel = strcmp(a, "kernel=rbgs") == 0;
            continue;
        }
        if (strncmp(a, "seed=", 5) == 0 && a[5] >= '0' && a[5] <= '9') {
            errno = 0;
            seed = strtoull(a + 5, &end, 10);
            if (errno == 0 && *end == '\0') {
                have_seed = 1;
                continue;
            }
        }
        fprintf(stderr, "%s: unexpected argument '%s'; the job's master spawns this\n", who, a);
        return LIQ_EXIT_USAGE;
    }
    if (kernel < 0 || !have_seed) {
        fprintf(stderr, "%s: takes kernel=jacobi|rbgs and seed=N; the job's master spawns it\n",
                who);
        return LIQ_EXIT_USAGE;
    }
    if ((liq_user_spec = builtin_describe(kernel, seed)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        return LIQ_EXIT_FAIL;
    }
    return liq_worker_main(who);
}

/* The workers' argv: the program's options as NAME=VALUE, or for vmrun
 * stencil its kernel and seed (liq_builtin_worker), after the first
 * argument its workers are spawned with. */
static void
worker_argv(struct liquid *lq, const struct liq_opts *o, const struct liq_program *prog)
{
    int k = 0;

    lq->wargv[k++] = (char *)(uintptr_t)(prog->worker_argv != NULL ? prog->worker_argv[0]
                                                                    : LIQ_WORKER_ARG);
    if (o->builtin) {
        snprintf(lq->wbuf[0], sizeof(lq->wbuf[0]), "kernel=%s", liq_kernel_name(o));
        snprintf(lq->wbuf[1], sizeof(lq->wbuf[1]), "seed=%" PRIu64, o->seed);
        lq->wargv[k++] = lq->wbuf[0];
        lq->wargv[k++] = lq->wbuf[1];
    } else {
        for (int i = 0; i < lq->nopt; i++) {
            const struct liq_user_opt *p = &lq->opt[i];

            if (p->kind != LIQ_OPT_DOUBLE)
                snprintf(lq->wbuf[i], sizeof(lq->wbuf[i]), "%s=%d", p->name, *(int *)p->var);
            else
                snprintf(lq->wbuf[i], sizeof(lq->wbuf[i]), "%s=%.17g", p->name,
                         *(double *)p->var);
            lq->wargv[k++] = lq->wbuf[i];
        }
    }
    lq->wargv[k] = NULL;
}

int
liq_mu_prepare(struct liquid *lq, struct liq_opts *o, const struct liq_program *prog,
               struct liq_program *up)
{
    int stride;

    if (liq_user_setup(lq, o->n, o->iters) != 0 || liq_user_check(lq) != 0) {
        fprintf(stderr, "%s\n", lq->err);
        return -1;
    }
    o->kernel = lq->levels == LIQUID_RED_BLACK ? LIQ_USER_RB : LIQ_USER;
    stride = liq_user_stride(lq);
    if (o->balance && stride > 0 && o->epoch % stride != 0) {
        int e = (o->epoch + stride - 1) / stride * stride;

        if (!o->quiet)
            fprintf(stderr, "%s: epoch of %d iterations taken as %d, a multiple of the "
                            "reductions' %d\n", lq->name, o->epoch, e, stride);
        o->epoch = e;
    }
    /* What the boxes cannot hold, said before the job (a read past them
     * would crash a worker, not name itself). */
    if (o->n[2] == 1 && lq->reach[2] > 1) {
        fprintf(stderr, "%s: the grid is 2D (NZ 1) but the update reaches %d planes in z "
                        "(liquid_reach): give it a z reach of 0 or 1, or a 3D grid\n",
                lq->name, lq->reach[2]);
        return -1;
    }
    if (lq->levels == LIQUID_RED_BLACK &&
        (lq->shape == LIQUID_BOX || lq->reach[0] > 1 || lq->reach[1] > 1 || lq->reach[2] > 1)) {
        fprintf(stderr, "%s: a red-black update reads only the other colour, a star of radius "
                        "1 (liquid(3), LIMITS); this one is a %s of radius %d,%d,%d\n",
                lq->name, lq->shape == LIQUID_BOX ? "box" : "star", lq->reach[0], lq->reach[1],
                lq->reach[2]);
        return -1;
    }
    for (int f = 0; f < lq->nf; f++) {
        free(lq->input[f]);
        lq->input[f] = NULL;
    }
    for (int i = 0; i < o->ninput; i++)
        if (read_input(lq, o, o->input[i]) != 0)
            return -1;
    if (o->check_reach) {
        char what[512];
        int rc = check_reach(lq, o->n, what, sizeof(what));

        if (rc != 0) {
            fprintf(stderr, "%s: --check-reach: %s\n", lq->name,
                    rc < 0 ? "out of memory" : what);
            return -2;
        }
        if (!o->quiet)
            fprintf(stderr, "%s: --check-reach: the update reads nothing beyond its reach\n",
                    lq->name);
    }
    /* The workers run with the program's options as this master read them. */
    worker_argv(lq, o, prog);
    *up = *prog;
    up->worker_argv = (const char *const *)lq->wargv;
    return 0;
}

void
liq_mu_geom(const struct liq_opts *o, struct liq_stats *st)
{
    st->iters_done = o->iters;
    st->nfields = o->user != NULL ? o->user->nf : 1;
    if (o->user != NULL)
        liq_user_geom(o->user, &st->g);
}

int
liq_mu_halo(const struct liq_opts *o, const struct liq_stats *st, int halo)
{
    int r = liq_geom_reach(&st->g);

    for (int a = 0; o->user != NULL && a < 3; a++)
        while (halo > 1 && st->g.periodic[a] && liq_halo_depth(o->kernel, halo) * r > st->g.n[a])
            halo--;
    return halo;
}

int
liq_mu_gather_alloc(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    const int *n = st->g.n;

    for (int f = 0; liq_opts_gathers(o) && f < st->nfields; f++) {
        struct kern_box *b = f == 0 ? &st->field : &st->more[f];

        if (kern_box_alloc(b, n[0], n[1], n[2], 0, 0) != 0) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the %dx%dx%d fields", n[0],
                     n[1], n[2]);
            return -1;
        }
    }
    if (o->user != NULL && o->user->nred > 0 &&
        ((st->red_part = calloc((size_t)st->g.nquanta * (size_t)o->user->nred,
                                sizeof(double))) == NULL ||
         (st->red_have = calloc((size_t)st->g.nquanta, 1)) == NULL)) {
        snprintf(vm->why, sizeof(vm->why), "out of memory");
        return -1;
    }
    return 0;
}

struct kern_box *
liq_mu_field(struct liq_stats *st, int f)
{
    if (f < 0 || f >= st->nfields)
        return NULL;
    return f == 0 ? &st->field : &st->more[f];
}

/* ---- during the job ---- */

static int
bad_reduce(struct liq_vm *vm, int w, const char *what)
{
    snprintf(vm->why, sizeof(vm->why), "worker t%x sent a malformed reduction (%s)",
             (unsigned)vm->tids[w], what);
    return -1;
}

int
liq_mu_reduce(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st, int w)
{
    struct liquid *lq = o->user;
    int it, count, due[LIQUID_MAX_REDUCTIONS], stop;

    if (lq == NULL || lq->nred == 0 || st->red_part == NULL)
        return bad_reduce(vm, w, "the job has no reductions");
    if (pvm_upkint(&it, 1, 1) < 0 || pvm_upkint(&count, 1, 1) < 0 || it < 1 || it > o->iters ||
        count < 0 || count > st->g.nquanta)
        return bad_reduce(vm, w, "header");
    if (st->red_got > 0 && it != st->red_it)
        return bad_reduce(vm, w, "another iteration than the others'");
    st->red_it = it;
    for (int i = 0; i < count; i++) {
        int id;

        if (pvm_upkint(&id, 1, 1) < 0 || id < 0 || id >= st->g.nquanta || st->red_have[id] ||
            pvm_upkdouble(st->red_part + (size_t)id * lq->nred, lq->nred, 1) < 0)
            return bad_reduce(vm, w, "quantum");
        st->red_have[id] = 1;
        st->red_got++;
    }
    if (st->red_got < st->g.nquanta)
        return 0;
    for (int r = 0; r < lq->nred; r++) {
        due[r] = liq_user_due(lq, r, it, o->iters);
        if (due[r]) {
            lq->redval[r] = liq_user_combine(lq, r, st->red_part, st->g.nquanta, lq->nred);
            lq->redset[r] = 1;
        }
    }
    stop = liq_user_stop(lq, lq->redval, due) && it < o->iters;
    if (vm->progress && lq->until >= 0 && due[lq->until])
        fprintf(stderr, "%s: iteration %d: %s %.6g%s\n", vm->who, it, lq->red[lq->until].name,
                lq->redval[lq->until], stop ? ", below the tolerance: stopping" : "");
    /* Every worker that may hold quanta waits for the verdict; one that
     * has gone since makes its send fail, which is no matter here. */
    for (int x = 0; x < vm->nworkers; x++) {
        int msg[2] = { it, stop };

        if (vm->tids[x] == 0)
            continue;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(msg, 2, 1);
        (void)pvm_send(vm->tids[x], LIQ_TAG_VERDICT);
    }
    liq_trace_rec(&st->tr.mine, LIQ_TEV_REDUCE, liq_vm_now(), 0, it, stop, 0, 0, 0);
    memset(st->red_have, 0, (size_t)st->g.nquanta);
    st->red_got = 0;
    if (stop) {
        st->stopped = 1;
        st->iters_done = it;
    }
    return 1;
}

/* ---- after it ---- */

static uint64_t
fields_checksum(const struct liquid *lq, const struct kern_box *b, int nf)
{
    uint64_t sum = 0;

    for (int f = 0; f < nf; f++)
        if (!lq->f[f].konst)
            sum += liq_field_checksum(&b[f]) * (uint64_t)(2 * f + 1);
    return sum;
}

int
liq_mu_verify(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liquid *lq = o->user;
    struct kern_box ref[LIQUID_MAX_FIELDS];
    double red[LIQUID_MAX_REDUCTIONS], t0 = liq_vm_now();
    int done, set[LIQUID_MAX_REDUCTIONS], rc;

    if (vm->progress)
        fprintf(stderr, "%s: verifying against the single-process reference (%d iterations)\n",
                vm->who, st->iters_done);
    rc = liq_user_reference(lq, &st->g, o->iters, ref, &done, red, set);
    if (rc != 0) {
        if (rc > 0)
            snprintf(vm->why, sizeof(vm->why), "the reference run failed: the update returned %d",
                     rc);
        else
            snprintf(vm->why, sizeof(vm->why), "the reference run failed: %s", strerror(-rc));
        for (int f = 0; f < lq->nf; f++)
            kern_box_free(&ref[f]);
        return -1;
    }
    st->diffs = 0;
    for (int f = 0; f < lq->nf; f++) {
        struct kern_box *b = liq_mu_field(st, f);

        for (int k = 1; k <= st->g.n[2]; k++)
            for (int j = 1; j <= st->g.n[1]; j++)
                for (int i = 1; i <= st->g.n[0]; i++)
                    st->diffs += memcmp(kern_at(&ref[f], i, j, k), kern_at(b, i, j, k),
                                        sizeof(double)) != 0;
    }
    st->verified = st->diffs == 0 && done == st->iters_done &&
                   fields_checksum(lq, ref, lq->nf) == st->checksum;
    for (int r = 0; r < lq->nred; r++)
        if (set[r] != lq->redset[r] ||
            (set[r] && memcmp(&red[r], &lq->redval[r], sizeof(double)) != 0))
            st->verified = 0;
    if (!st->verified && vm->progress)
        fprintf(stderr, "%s: the reference ran %d iterations, the job %d; %zu points differ\n",
                vm->who, done, st->iters_done, st->diffs);
    for (int f = 0; f < lq->nf; f++)
        kern_box_free(&ref[f]);
    st->t_verify = liq_vm_now() - t0;
    return 0;
}

int
liq_mu_finish(struct liq_vm *vm, const struct liq_opts *o, struct liq_stats *st)
{
    struct liquid *lq = o->user;
    struct liq_field_set set;
    size_t npts = (size_t)st->g.n[0] * st->g.n[1] * st->g.n[2];

    lq->iters_done = st->iters_done;
    if (!liq_opts_gathers(o))
        return 0;
    memset(&set, 0, sizeof(set));
    set.nf = lq->nf;
    for (int f = 0; f < lq->nf; f++) {
        set.name[f] = lq->f[f].name;
        set.box[f] = liq_mu_field(st, f);
    }
    set.iteration = st->iters_done;
    set.time = st->iters_done * lq->dt;
    set.geom = 1;
    liq_user_spacing(lq, st->g.n, set.spacing, set.origin);
    if ((o->output[0] != '\0' || o->png[0] != '\0') &&
        liq_fields_write_set(o, &set, st->checksum, vm->why, sizeof(vm->why)) != 0)
        return -1;
    /* liquid_result: whenever the fields were gathered (liquid_keep,
     * --verify, --output, --png), as liquid(3) says. */
    for (int f = 0; liq_opts_gathers(o) && f < lq->nf; f++) {
        const struct kern_box *b = set.box[f];
        double *d = malloc(npts * sizeof(double));

        if (d == NULL) {
            snprintf(vm->why, sizeof(vm->why), "out of memory for the results");
            return -1;
        }
        for (int k = 0; k < b->nk; k++)
            for (int j = 0; j < b->nj; j++)
                memcpy(d + (size_t)b->ni * (j + (size_t)b->nj * k), kern_at(b, 1, j + 1, k + 1),
                       (size_t)b->ni * sizeof(double));
        free(lq->result[f]);
        lq->result[f] = d;
    }
    return 0;
}

void
liq_mu_free(struct liq_stats *st)
{
    for (int f = 1; f < LIQUID_MAX_FIELDS; f++)
        kern_box_free(&st->more[f]);
    free(st->red_part);
    free(st->red_have);
    st->red_part = NULL;
    st->red_have = NULL;
}

void
liq_mu_json(FILE *fp, const struct liq_opts *o, const struct liq_stats *st)
{
    const struct liquid *lq = o->user;

    fprintf(fp, "\"program\":{\"name\":");
    wire_json_str(fp, lq->name);
    fprintf(fp, ",\"fields\":[");
    for (int f = 0; f < lq->nf; f++) {
        fprintf(fp, "%s", f ? "," : "");
        wire_json_str(fp, lq->f[f].name);
    }
    fprintf(fp, "],\"levels\":\"%s\",\"reach\":[%d,%d,%d],\"shape\":\"%s\",\"dt\":%.17g,"
                "\"stopped\":%s,\"reductions\":{",
            lq->levels == LIQUID_RED_BLACK ? "red-black"
            : lq->levels == LIQUID_THREE_LEVEL ? "three" : "two",
            lq->reach[0], lq->reach[1], lq->reach[2], lq->shape == LIQUID_BOX ? "box" : "star",
            lq->dt, st->stopped ? "true" : "false");
    for (int r = 0, k = 0; r < lq->nred; r++) {
        if (!lq->redset[r])
            continue;
        fprintf(fp, "%s", k++ ? "," : "");
        wire_json_str(fp, lq->red[r].name);
        fprintf(fp, ":%.17g", lq->redval[r]);
    }
    fprintf(fp, "}},");
}
