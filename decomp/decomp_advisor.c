/*
 * decomp_advisor.c: the advisory system of seed 001 chapter 7. It places the
 * job by every candidate method, counts messages and bytes from the actual
 * layout (heterogeneous layouts have no closed form, section 5), predicts
 * time per iteration with the cost model, and ranks: rating = time / best,
 * so the best is exactly 1.00 and 1.5 means about half as long again
 * (Fig. 42). The thesis's prototype ranked block and row; this one ranks
 * every method, and lists those that cannot place the job after the rest.
 * Formatting writes into the caller's buffer with snprintf's contract; the
 * library itself prints nothing.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
job_check(const struct decomp_job *job)
{
    int rc;

    if (job == NULL)
        return -EINVAL;
    if ((rc = decomp_grid_check(&job->grid)) < 0 || (rc = decomp_net_check(&job->net)) < 0)
        return rc;
    if (job->methods >> DECOMP_NMETHODS)
        return -EINVAL;
    const struct decomp_workload *w = &job->work;
    if (!isfinite(w->work_per_cell) || w->work_per_cell < 0 || w->dirs >> (2 * job->grid.ndim))
        return -EINVAL;
    for (int a = 0; a < DECOMP_MAX_DIM; a++)
        if (!isfinite(w->face_bytes[a]) || w->face_bytes[a] < 0)
            return -EINVAL;
    struct decomp_spec s = { .method = DECOMP_ROW, .nowners = job->nowners, .speed = job->speed,
                             .group_tol = job->group_tol };
    return decomp__spec_check(&job->grid, &s);
}

/* Place, count and cost one method. -ERANGE goes into the rank's status. */
static int
evaluate(const struct decomp_job *job, enum decomp_method m, int32_t *owner,
         struct decomp_box *box, double *load, struct decomp_rank *r)
{
    struct decomp_spec s = { .method = m, .nowners = job->nowners, .speed = job->speed,
                             .seed = job->seed, .group_tol = job->group_tol };
    struct decomp_counts c;
    int rc;

    memset(r, 0, sizeof *r);
    r->method = m;
    rc = decomp_place(&job->grid, &s, owner, box);
    if (rc == -ERANGE) {
        r->status = rc;
        return 0;
    }
    if (rc < 0)
        return rc;
    /* Box methods count in O(p^2) from their boxes; the rest walk cells. */
    if (decomp_method_has_boxes(m))
        rc = decomp_count_boxes(&job->grid, box, job->nowners, &c);
    else
        rc = decomp_count(&job->grid, owner, job->nowners, &c);
    if (rc < 0)
        return rc;
    if ((rc = decomp_loads(&job->grid, owner, job->nowners, load)) == 0)
        rc = decomp_cost_eval(&c, load, job->speed, &job->work, &job->net, &r->cost);
    decomp_counts_free(&c);
    return rc;
}

int
decomp_advise(const struct decomp_job *job, struct decomp_advice *out)
{
    int rc;

    if (out == NULL)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    if ((rc = job_check(job)) < 0)
        return rc;

    size_t cells = decomp_grid_cells(&job->grid);
    int32_t *owner = malloc(cells * sizeof *owner);
    struct decomp_box *box = malloc((size_t)job->nowners * sizeof *box);
    double *load = malloc((size_t)job->nowners * sizeof *load);
    if (owner == NULL || box == NULL || load == NULL) {
        rc = -ENOMEM;
        goto done;
    }

    struct decomp_rank all[DECOMP_NMETHODS];
    int n = 0;
    for (int m = 0; m < DECOMP_NMETHODS; m++) {
        if (job->methods != 0 && !(job->methods & (1u << m)))
            continue;
        if ((rc = evaluate(job, (enum decomp_method)m, owner, box, load, &all[n])) < 0)
            goto done;
        n++;
    }

    /* Ranked methods by predicted time (method order breaks ties), then the
     * methods that could not place the job, in method order. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (all[i].status != 0)
            continue;
        int j = k++;
        out->rank[j] = all[i];
        while (j > 0 && out->rank[j].cost.total < out->rank[j - 1].cost.total) {
            struct decomp_rank tmp = out->rank[j];
            out->rank[j] = out->rank[j - 1];
            out->rank[j - 1] = tmp;
            j--;
        }
    }
    out->nranked = k;
    for (int i = 0; i < n; i++)
        if (all[i].status != 0)
            out->rank[k++] = all[i];
    out->nranks = k;
    if (out->nranked > 0) {
        double best = out->rank[0].cost.total;
        for (int i = 0; i < out->nranked; i++) {
            double t = out->rank[i].cost.total;
            /* x / x is exactly 1 in IEEE arithmetic, so the best prints as
             * 1.00; a zero-cost best (one owner, no work) rates the rest as
             * infinitely worse. */
            out->rank[i].rating = t == best ? 1.0 : best > 0 ? t / best : INFINITY;
        }
    }
    out->name = job->name;
    out->cells = job->cells;
    out->grid = job->grid;
    out->grid.weight = NULL;
    out->nowners = job->nowners;
    out->net = job->net;
    rc = 0;
done:
    free(load);
    free(box);
    free(owner);
    return rc;
}

/* snprintf-style appender: pos counts what the whole text needs. */
struct out {
    char *buf;
    size_t len;
    size_t pos;
    int err;
};

static void
put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    char *dst = o->pos < o->len ? o->buf + o->pos : NULL;
    size_t room = o->pos < o->len ? o->len - o->pos : 0;

    va_start(ap, fmt);
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        o->err = -EINVAL;
    else
        o->pos += (size_t)n;
}

static ssize_t
finish(struct out *o)
{
    if (o->err < 0)
        return o->err;
    if (o->len > 0 && o->pos >= o->len)
        o->buf[o->len - 1] = '\0';
    if (o->pos > (size_t)SSIZE_MAX)
        return -ERANGE;
    return (ssize_t)o->pos;
}

static int
advice_check(const struct decomp_advice *a, char *buf, size_t len)
{
    if (a == NULL || (buf == NULL && len > 0) || a->nranks < 0 || a->nranks > DECOMP_NMETHODS ||
        a->nranked < 0 || a->nranked > a->nranks)
        return -EINVAL;
    return 0;
}

/* A time in the unit that puts it in [1, 1000), for people. */
static void
put_time(struct out *o, double s, int width)
{
    const char *unit = "s";
    double v = s;

    if (s == 0) {
        unit = "ms";
    } else if (s < 1e-3) {
        v = s * 1e6;
        unit = "us";
    } else if (s < 1) {
        v = s * 1e3;
        unit = "ms";
    }
    put(o, "%*.3f %-2s", width, v, unit);
}

static void
put_grid(struct out *o, const struct decomp_grid *g)
{
    if (g->ndim == 2)
        put(o, "%" PRIu32 " x %" PRIu32, g->dim[1], g->dim[0]);
    else
        put(o, "%" PRIu32 " x %" PRIu32 " x %" PRIu32, g->dim[0], g->dim[1], g->dim[2]);
}

static const char *
net_name(enum decomp_netkind k)
{
    return k == DECOMP_NET_SWITCHED ? "switched" : "shared";
}

/* Why a method could not place the job, as a phrase for both formats. */
static void
put_reason(struct out *o, const struct decomp_advice *a, const struct decomp_rank *r)
{
    static const char axis_name[] = "xyz";
    int s = decomp__slab_axis(&a->grid);

    switch (r->method) {
    case DECOMP_ROW:
    case DECOMP_INTERLEAVED:
        put(o, "%d owners but only %" PRIu32 " slabs along %c", a->nowners, a->grid.dim[s],
            axis_name[s]);
        break;
    case DECOMP_BLOCK:
        put(o, "%d owners do not factor into blocks of at least one cell", a->nowners);
        break;
    default:
        put(o, "cannot place this grid on %d owners", a->nowners);
        break;
    }
}

ssize_t
decomp_advice_table(const struct decomp_advice *a, char *buf, size_t len)
{
    struct out o = { buf, len, 0, 0 };
    int rc = advice_check(a, buf, len);

    if (rc < 0)
        return rc;
    if (len > 0)
        buf[0] = '\0';
    put(&o, "Application: %s   Grid: ", a->name ? a->name : "-");
    put_grid(&o, &a->grid);
    if (a->cells != NULL)
        put(&o, " %s", a->cells);
    put(&o, "%s   Processors: %d\n", a->grid.periodic ? " (periodic)" : "", a->nowners);
    put(&o, "Network: %s, lambda ", net_name(a->net.kind));
    put_time(&o, a->net.lambda, 0);
    put(&o, ", tau %.4g us/B, M %.0f, F %.0f\n", a->net.tau * 1e6, a->net.payload,
        a->net.overhead);
    put(&o, "rank  method       rating     time/iter       compute       latency      transfer"
            "  messages  balance\n");
    for (int i = 0; i < a->nranks; i++) {
        const struct decomp_rank *r = &a->rank[i];
        if (i < a->nranked) {
            put(&o, "%4d  %-11s %7.2f ", i + 1, decomp_method_name(r->method), r->rating);
            put_time(&o, r->cost.total, 10);
            put_time(&o, r->cost.compute, 10);
            put_time(&o, r->cost.latency, 10);
            put_time(&o, r->cost.transfer, 10);
            put(&o, "%10" PRIu64 "  %7.3f\n", r->cost.messages, r->cost.balance);
        } else {
            put(&o, "   -  %-11s %7s   (", decomp_method_name(r->method), "n/a");
            put_reason(&o, a, r);
            put(&o, ")\n");
        }
    }
    return finish(&o);
}

static void
put_json_string(struct out *o, const char *s)
{
    put(o, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            put(o, "\\%c", ch);
        else if (ch < 0x20)
            put(o, "\\u%04x", ch);
        else
            put(o, "%c", ch);
    }
    put(o, "\"");
}

/* JSON has no infinities: an unbounded rating is null. */
static void
put_json_number(struct out *o, double v)
{
    if (isfinite(v))
        put(o, "%.9g", v);
    else
        put(o, "null");
}

/* ,"key":number */
static void
put_json_field(struct out *o, const char *key, double v)
{
    put(o, ",\"%s\":", key);
    put_json_number(o, v);
}

/*
 * The ranking comes first and holds exactly what vmrun's users script
 * against (issue 7): method, rating and predicted seconds per iteration, best
 * first. The parts of each prediction, the methods that could not place the
 * job and the inputs follow under their own keys.
 */
ssize_t
decomp_advice_json(const struct decomp_advice *a, char *buf, size_t len)
{
    struct out o = { buf, len, 0, 0 };
    int rc = advice_check(a, buf, len);

    if (rc < 0)
        return rc;
    if (len > 0)
        buf[0] = '\0';
    put(&o, "{\"ranking\":[");
    for (int i = 0; i < a->nranked; i++) {
        const struct decomp_rank *r = &a->rank[i];
        put(&o, "%s{\"method\":\"%s\",\"rating\":", i ? "," : "", decomp_method_name(r->method));
        put_json_number(&o, r->rating);
        put_json_field(&o, "predicted_s", r->cost.total);
        put(&o, "}");
    }
    put(&o, "],\"detail\":[");
    for (int i = 0; i < a->nranked; i++) {
        const struct decomp_rank *r = &a->rank[i];
        put(&o, "%s{\"method\":\"%s\",\"compute_s\":", i ? "," : "",
            decomp_method_name(r->method));
        put_json_number(&o, r->cost.compute);
        put_json_field(&o, "latency_s", r->cost.latency);
        put_json_field(&o, "transfer_s", r->cost.transfer);
        put(&o, ",\"messages\":%" PRIu64, r->cost.messages);
        put_json_field(&o, "bytes", r->cost.bytes);
        put_json_field(&o, "wire_bytes", r->cost.wire_bytes);
        put_json_field(&o, "balance", r->cost.balance);
        put(&o, "}");
    }
    put(&o, "],\"unavailable\":[");
    for (int i = a->nranked; i < a->nranks; i++) {
        put(&o, "%s{\"method\":\"%s\",\"error\":%d,\"reason\":\"", i > a->nranked ? "," : "",
            decomp_method_name(a->rank[i].method), a->rank[i].status);
        /* put_reason writes no character JSON must escape. */
        put_reason(&o, a, &a->rank[i]);
        put(&o, "\"}");
    }
    put(&o, "],\"application\":");
    if (a->name)
        put_json_string(&o, a->name);
    else
        put(&o, "null");
    put(&o, ",\"grid\":[");
    for (int d = 0; d < a->grid.ndim; d++)
        put(&o, "%s%" PRIu32, d ? "," : "", a->grid.dim[d]);
    put(&o, "],\"periodic\":%u,\"processors\":%d,", a->grid.periodic, a->nowners);
    put(&o, "\"network\":{\"kind\":\"%s\",\"lambda\":", net_name(a->net.kind));
    put_json_number(&o, a->net.lambda);
    put_json_field(&o, "tau", a->net.tau);
    put_json_field(&o, "payload", a->net.payload);
    put_json_field(&o, "overhead", a->net.overhead);
    put(&o, "}}\n");
    return finish(&o);
}
