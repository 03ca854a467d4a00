/*
 * vmrun_panalyze.c - `vmrun analyze` for PVM programs (issue 27, seed
 * 003): the task traces of one run (LIQUIDVM_TRACE=DIR, lib/pvm/
 * pvm_trace.c), merged by vmrun_tload_pvm_dir, give per task its life,
 * its compute between PVM calls (the grain: mean and coefficient of
 * variation), its waits in receives and collectives, and its sends; per
 * host, the share of its tasks' time they waited (idle); between tasks, the
 * message and byte matrix; over all, the message sizes.  The rules
 * (vmrun_prules.c) turn them into hints for the program's next run.
 */
#include "vmrun_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmrun_prules.h"
#include "wire.h"

static int
pa_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int
pa_lane_of(const struct vmrun_trace *t, int tid)
{
    for (int l = 0; l < t->nlanes; l++)
        if (t->lanes[l].tid == tid)
            return l;
    return -1;
}

/* The pair a -> b, added if new; NULL out of memory. */
static struct vmrun_ppair *
pa_pair(struct vmrun_pprog *p, int a, int b, int *cap)
{
    for (int i = 0; i < p->npair; i++)
        if (p->pair[i].a == a && p->pair[i].b == b)
            return &p->pair[i];
    if (p->npair == *cap) {
        int c = *cap ? 2 * *cap : 16;
        struct vmrun_ppair *v = realloc(p->pair, (size_t)c * sizeof(*v));

        if (v == NULL)
            return NULL;
        p->pair = v;
        *cap = c;
    }
    p->pair[p->npair] = (struct vmrun_ppair){ a, b, 0, 0 };
    return &p->pair[p->npair++];
}

/* The characteristics of t's tasks (lanes).  0, or -1 out of memory. */
static int
pa_build(const struct vmrun_trace *t, struct vmrun_pprog *p, int fragsize)
{
    double *g2 = calloc((size_t)t->nlanes + 1, sizeof(double));
    double *t0 = malloc(((size_t)t->nlanes + 1) * sizeof(double));
    double *t1 = calloc((size_t)t->nlanes + 1, sizeof(double));
    double *sizes = malloc(((size_t)t->nspans + 1) * sizeof(double));
    int nsizes = 0, cap = 0, rc = -1;

    memset(p, 0, sizeof(*p));
    p->fragsize = fragsize;
    if (g2 == NULL || t0 == NULL || t1 == NULL || sizes == NULL ||
        (p->task = calloc((size_t)t->nlanes + 1, sizeof(*p->task))) == NULL)
        goto out;
    p->ntask = t->nlanes;
    for (int l = 0; l < t->nlanes; l++) {
        struct vmrun_ptask *k = &p->task[l];

        k->tid = t->lanes[l].tid;
        k->parent = t->lanes[l].parent;
        snprintf(k->path, sizeof(k->path), "%s", t->lanes[l].path[0] ? t->lanes[l].path : "?");
        snprintf(k->program, sizeof(k->program), "%s", t->lanes[l].program);
        snprintf(k->host, sizeof(k->host), "%s", t->hosts[t->lanes[l].host].name);
        t0[l] = INFINITY;
    }
    for (int i = 0; i < t->nspans; i++) {
        const struct vmrun_tspan *s = &t->spans[i];
        struct vmrun_ptask *k = &p->task[s->lane];
        struct vmrun_ppair *pr;
        int peer;

        t0[s->lane] = fmin(t0[s->lane], s->t);
        t1[s->lane] = fmax(t1[s->lane], s->t + s->dur);
        switch (s->kind) {
        case VT_COMPUTE:
            k->compute += s->dur;
            k->ncompute++;
            g2[s->lane] += s->dur * s->dur;
            break;
        case VT_PVM_WAIT:
            k->wait += s->dur;
            break;
        case VT_SEND:
            k->send += s->dur;
            sizes[nsizes++] = s->bytes;
            p->msgs++;
            p->bytes += s->bytes;
            /* A receiver without a trace still gets its row. */
            if ((peer = pa_lane_of(t, s->peer)) < 0)
                break;
            if ((pr = pa_pair(p, s->lane, peer, &cap)) == NULL)
                goto out;
            pr->msgs++;
            pr->bytes += s->bytes;
            break;
        default:
            break;
        }
    }
    for (int l = 0; l < t->nlanes; l++) {
        struct vmrun_ptask *k = &p->task[l];

        k->life = isfinite(t0[l]) ? t1[l] - t0[l] : 0;
        if (k->ncompute > 0) {
            double m = k->compute / k->ncompute, v = g2[l] / k->ncompute - m * m;

            k->grain_mean = m;
            k->grain_cv = m > 0 && v > 0 ? sqrt(v) / m : 0;
        }
    }
    if (nsizes > 0) {
        qsort(sizes, (size_t)nsizes, sizeof(double), pa_dcmp);
        p->msg_p90 = sizes[(int)ceil(0.9 * nsizes) - 1];
    }
    rc = 0;
out:
    free(g2);
    free(t0);
    free(t1);
    free(sizes);
    return rc;
}

static void
pa_free(struct vmrun_pprog *p)
{
    free(p->task);
    free(p->pair);
    memset(p, 0, sizeof(*p));
}

static double
pa_cell(const struct vmrun_pprog *p, int a, int b, int bytes)
{
    for (int i = 0; i < p->npair; i++)
        if (p->pair[i].a == a && p->pair[i].b == b)
            return bytes ? p->pair[i].bytes : p->pair[i].msgs;
    return 0;
}

static void
pa_print(FILE *fp, const char *in, const struct vmrun_trace *t, const struct vmrun_pprog *p,
         const struct vmrun_padvice *adv)
{
    fprintf(fp, "%s: PVM program %s, %d tasks on %d hosts, %.0f messages (%.0f bytes) in "
                "%.3f s; clocks ",
            in, t->job.program, p->ntask, t->nhosts, p->msgs, p->bytes, t->t_end);
    if (t->residual_us >= 0)
        fprintf(fp, "within %.0f us", t->residual_us);
    else
        fprintf(fp, "of several hosts, not measured (as NTP keeps them)");
    fprintf(fp, "; %d message ends unpaired, %ld events dropped\n", t->unpaired, t->dropped);
    if (t->hints[0] != '\0')
        fprintf(fp, "settings from hints in this run: %s\n", t->hints);
    fprintf(fp, "\ntasks (grain: compute between PVM calls; wait: in receives and collectives)\n");
    fprintf(fp, "  %-10s %-8s %-12s %-10s %9s %10s %9s %7s %8s %11s %6s\n", "path", "tid",
            "program", "host", "life s", "compute s", "wait s", "wait %", "spans", "grain us",
            "cv");
    for (int i = 0; i < p->ntask; i++) {
        const struct vmrun_ptask *k = &p->task[i];

        fprintf(fp, "  %-10s t%-7x %-12.12s %-10.10s %9.4f %10.4f %9.4f %7.1f %8d %11.1f %6.2f\n",
                k->path, (unsigned)k->tid, k->program, k->host, k->life, k->compute, k->wait,
                k->life > 0 ? 100 * k->wait / k->life : 0, k->ncompute, k->grain_mean * 1e6,
                k->grain_cv);
    }
    /* Per host: its tasks' time, and how much of it they waited. */
    fprintf(fp, "\nhosts (idle: the tasks' waits against their lives)\n");
    fprintf(fp, "  %-12s %6s %10s %10s %9s %7s\n", "host", "tasks", "life s", "compute s",
            "wait s", "idle %");
    for (int h = 0; h < t->nhosts; h++) {
        double life = 0, comp = 0, wait = 0;
        int n = 0;

        for (int i = 0; i < p->ntask; i++)
            if (t->lanes[i].host == h) {
                n++;
                life += p->task[i].life;
                comp += p->task[i].compute;
                wait += p->task[i].wait;
            }
        fprintf(fp, "  %-12.12s %6d %10.4f %10.4f %9.4f %7.1f\n", t->hosts[h].name, n, life, comp,
                wait, life > 0 ? 100 * wait / life : 0);
    }
    fprintf(fp, "\ncommunication matrix: messages (bytes), sender by row, receiver by column\n");
    fprintf(fp, "  %-9s", "");
    for (int b = 0; b < p->ntask; b++)
        fprintf(fp, " t%-15x", (unsigned)p->task[b].tid);
    fputc('\n', fp);
    for (int a = 0; a < p->ntask; a++) {
        fprintf(fp, "  t%-8x", (unsigned)p->task[a].tid);
        for (int b = 0; b < p->ntask; b++) {
            char cell[40];

            if (pa_cell(p, a, b, 0) > 0)
                snprintf(cell, sizeof(cell), "%.0f (%.0f)", pa_cell(p, a, b, 0),
                         pa_cell(p, a, b, 1));
            else
                snprintf(cell, sizeof(cell), "-");
            fprintf(fp, " %-16s", cell);
        }
        fputc('\n', fp);
    }
    fprintf(fp, "\nmessage sizes: 90 %% at most %.0f bytes\n\nrules\n", p->msg_p90);
    for (int r = 0; r < adv->nrules; r++)
        fprintf(fp, "  %-13s %s: %s\n", adv->rule[r].name, adv->rule[r].fired ? "fired" : "no",
                adv->rule[r].why);
    fprintf(fp, "\nhints\n");
    if (adv->nhints == 0)
        fprintf(fp, "  none\n");
    for (int i = 0; i < adv->nhints; i++)
        fprintf(fp, "  %s%s%s%s = %s  (%s: %s)\n", adv->hint[i].path[0] ? "task " : "",
                adv->hint[i].path, adv->hint[i].path[0] ? ": " : "", adv->hint[i].key,
                adv->hint[i].value, adv->hint[i].rule, adv->hint[i].why);
}

static void
pa_json(FILE *fp, const char *in, const struct vmrun_trace *t, const struct vmrun_pprog *p,
        const struct vmrun_padvice *adv)
{
    fprintf(fp, "{\"trace\":");
    wire_json_str(fp, in);
    fprintf(fp, ",\"kind\":\"pvm\",\"program\":");
    wire_json_str(fp, t->job.program);
    fprintf(fp, ",\"tasks\":%d,\"hosts\":%d,\"messages\":%.0f,\"bytes\":%.0f,\"seconds\":%.6f,"
                "\"residual_us\":%.1f,\"unpaired\":%d,\"dropped\":%ld,\"msg_p90\":%.0f,"
                "\"task\":[",
            p->ntask, t->nhosts, p->msgs, p->bytes, t->t_end, t->residual_us, t->unpaired,
            t->dropped, p->msg_p90);
    for (int i = 0; i < p->ntask; i++) {
        const struct vmrun_ptask *k = &p->task[i];

        fprintf(fp, "%s{\"tid\":%d,\"parent\":%d,\"path\":", i ? "," : "", k->tid, k->parent);
        wire_json_str(fp, k->path);
        fprintf(fp, ",\"program\":");
        wire_json_str(fp, k->program);
        fprintf(fp, ",\"host\":");
        wire_json_str(fp, k->host);
        fprintf(fp, ",\"life\":%.6f,\"compute\":%.6f,\"wait\":%.6f,\"send\":%.6f,"
                    "\"compute_spans\":%d,\"grain_mean\":%.9f,\"grain_cv\":%.4f}",
                k->life, k->compute, k->wait, k->send, k->ncompute, k->grain_mean, k->grain_cv);
    }
    fprintf(fp, "],\"hosts_idle\":[");
    for (int h = 0; h < t->nhosts; h++) {
        double life = 0, wait = 0;

        for (int i = 0; i < p->ntask; i++)
            if (t->lanes[i].host == h) {
                life += p->task[i].life;
                wait += p->task[i].wait;
            }
        fprintf(fp, "%s{\"host\":", h ? "," : "");
        wire_json_str(fp, t->hosts[h].name);
        fprintf(fp, ",\"life\":%.6f,\"wait\":%.6f}", life, wait);
    }
    fprintf(fp, "],\"pairs\":[");
    for (int i = 0; i < p->npair; i++)
        fprintf(fp, "%s{\"from\":%d,\"to\":%d,\"messages\":%.0f,\"bytes\":%.0f}", i ? "," : "",
                p->task[p->pair[i].a].tid, p->task[p->pair[i].b].tid, p->pair[i].msgs,
                p->pair[i].bytes);
    fprintf(fp, "],\"rules\":[");
    for (int r = 0; r < adv->nrules; r++) {
        fprintf(fp, "%s{\"name\":\"%s\",\"fired\":%s,\"why\":", r ? "," : "", adv->rule[r].name,
                adv->rule[r].fired ? "true" : "false");
        wire_json_str(fp, adv->rule[r].why);
        fputc('}', fp);
    }
    fprintf(fp, "],\"hints_in_run\":");
    wire_json_str(fp, t->hints);
    fprintf(fp, ",\"hints\":[");
    for (int i = 0; i < adv->nhints; i++) {
        fprintf(fp, "%s{\"path\":", i ? "," : "");
        wire_json_str(fp, adv->hint[i].path);
        fprintf(fp, ",\"key\":\"%s\",\"value\":", adv->hint[i].key);
        wire_json_str(fp, adv->hint[i].value);
        fprintf(fp, ",\"rule\":\"%s\",\"why\":", adv->hint[i].rule);
        wire_json_str(fp, adv->hint[i].why);
        fputc('}', fp);
    }
    fprintf(fp, "]}\n");
}

int
vmrun_panalyze(const char *in, int dir, const char *hints, int json,
               const struct vmrun_pthresholds *th)
{
    struct vmrun_trace t;
    struct vmrun_pprog p;
    struct vmrun_padvice adv;
    char err[512];
    FILE *fp;
    int rc = 1;

    if ((dir ? vmrun_tload_pvm_dir(in, &t, err, sizeof(err))
             : vmrun_tload(in, &t, err, sizeof(err))) != 0) {
        fprintf(stderr, "vmrun analyze: %s\n", err);
        return 1;
    }
    if (pa_build(&t, &p, 4080) != 0) {
        fprintf(stderr, "vmrun analyze: out of memory\n");
        goto out;
    }
    vmrun_prules_apply(&p, th, &adv);
    if (json)
        pa_json(stdout, in, &t, &p, &adv);
    else
        pa_print(stdout, in, &t, &p, &adv);
    if (hints != NULL) {
        int bad = (fp = fopen(hints, "w")) == NULL;

        if (!bad) {
            bad = vmrun_prules_write(fp, in, &adv) != 0;
            bad |= fclose(fp) != 0;
        }
        if (bad) {
            fprintf(stderr, "vmrun analyze: cannot write %s\n", hints);
            goto out;
        }
        if (!json)
            printf("wrote %s\n", hints);
    }
    rc = 0;
out:
    pa_free(&p);
    vmrun_tfree(&t);
    return rc;
}
