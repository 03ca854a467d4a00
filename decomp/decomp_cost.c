/*
 * decomp_cost.c: the communication cost model of seed 001 chapter 6 and the
 * closed forms of section 5. The evaluator charges, per direction, lambda
 * times the largest number of messages any one owner prepares (preparation
 * runs in parallel) and tau times the bytes on the wire, framed by
 * frame(D) = D + F ceil(D/M): summed over all messages on a shared medium,
 * which carries one at a time (6.10), or the largest amount any one host
 * receives on a switched network, where ports receive in parallel (the
 * thesis's future work, Fig. 44). No overlap is credited (Fig. 30).
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>
#include <stdlib.h>

double
decomp_frame(double bytes, const struct decomp_net *net)
{
    if (net == NULL || !(net->payload > 0) || bytes <= 0)
        return bytes > 0 ? bytes : 0;
    return bytes + net->overhead * ceil(bytes / net->payload);
}

int
decomp_net_check(const struct decomp_net *net)
{
    if (net == NULL)
        return -EINVAL;
    if (!isfinite(net->lambda) || net->lambda < 0 || !isfinite(net->tau) || net->tau < 0)
        return -EINVAL;
    if (!isfinite(net->payload) || net->payload < 0 || !isfinite(net->overhead) ||
        net->overhead < 0)
        return -EINVAL;
    if (net->kind != DECOMP_NET_SHARED && net->kind != DECOMP_NET_SWITCHED)
        return -EINVAL;
    return 0;
}

static int
workload_check(const struct decomp_workload *w, int ndirs)
{
    if (w == NULL || !isfinite(w->work_per_cell) || w->work_per_cell < 0)
        return -EINVAL;
    for (int a = 0; a < DECOMP_MAX_DIM; a++)
        if (!isfinite(w->face_bytes[a]) || w->face_bytes[a] < 0)
            return -EINVAL;
    if (w->dirs >> ndirs)
        return -EINVAL;
    return 0;
}

int
decomp_cost_eval(const struct decomp_counts *c, const double *load, const double *speed,
                 const struct decomp_workload *w, const struct decomp_net *net,
                 struct decomp_cost *out)
{
    int rc;

    if (c == NULL || c->msgs == NULL || out == NULL || c->nowners < 1)
        return -EINVAL;
    if ((rc = decomp_net_check(net)) < 0 || (rc = workload_check(w, c->ndirs)) < 0)
        return rc;
    int p = c->nowners;
    struct decomp_cost r = { 0 };

    /* Computation: the slowest owner sets the pace. */
    r.balance = 1;
    if (load != NULL && w->work_per_cell > 0) {
        if (speed == NULL)
            return -EINVAL;
        double sum = 0, mx = 0;
        for (int i = 0; i < p; i++) {
            if (!isfinite(speed[i]) || !(speed[i] > 0) || !isfinite(load[i]) || load[i] < 0)
                return -EINVAL;
            double t = load[i] * w->work_per_cell / speed[i];
            sum += t;
            if (t > mx)
                mx = t;
        }
        r.compute = mx;
        r.balance = mx > 0 ? sum / p / mx : 1;
    }

    double *recv = NULL;
    if (net->kind == DECOMP_NET_SWITCHED && (recv = malloc((size_t)p * sizeof *recv)) == NULL)
        return -ENOMEM;
    double wire = 0;
    for (int k = 0; k < c->ndirs; k++) {
        if (w->dirs != 0 && !(w->dirs & (1u << k)))
            continue;
        uint32_t mx = 0;
        for (int i = 0; i < p; i++)
            if (c->msgs[(size_t)i * c->ndirs + k] > mx)
                mx = c->msgs[(size_t)i * c->ndirs + k];
        r.latency += net->lambda * mx;
        if (recv != NULL)
            for (int i = 0; i < p; i++)
                recv[i] = 0;
        double dir_wire = 0;
        for (size_t l = 0; l < c->nlinks; l++) {
            const struct decomp_link *lk = &c->link[l];
            if (lk->dir != k)
                continue;
            double D = lk->faces * w->face_bytes[k / 2];
            double f = decomp_frame(D, net);
            r.messages++;
            r.bytes += D;
            r.wire_bytes += f;
            if (recv != NULL)
                recv[lk->to] += f;
            else
                dir_wire += f;
        }
        if (recv != NULL)
            for (int i = 0; i < p; i++)
                if (recv[i] > dir_wire)
                    dir_wire = recv[i];
        wire += dir_wire;
    }
    free(recv);
    r.transfer = net->tau * wire;
    r.total = r.compute + r.latency + r.transfer;
    *out = r;
    return 0;
}

int
decomp_cost_formula(enum decomp_method m, double rows, double cols, int p, double d,
                    const struct decomp_net *net, double *seconds)
{
    int rc = decomp_net_check(net);

    if (rc < 0)
        return rc;
    if (seconds == NULL || p < 1 || !(rows > 0) || !(cols > 0) || !(d > 0) ||
        !isfinite(rows) || !isfinite(cols) || !isfinite(d))
        return -EINVAL;
    double L = net->lambda, T = net->tau, n = cols;
    switch (m) {
    case DECOMP_ROW: /* (6.30) */
        *seconds = 2 * L + 2 * T * p * decomp_frame(d * n, net);
        return 0;
    case DECOMP_POINT: /* (6.29) */
        *seconds = 6 * L + 2 * T * (p * decomp_frame(d * n, net) +
                                    2.0 * (p - 1) * decomp_frame(d, net));
        return 0;
    case DECOMP_INTERLEAVED: /* (6.31) [R] */
        *seconds = 2 * L + 2 * T * p * decomp_frame(d * rows * n / p, net);
        return 0;
    case DECOMP_BLOCK: /* (6.33) [R] */
        *seconds = 4 * L + 4 * T * p * decomp_frame(d * n / sqrt((double)p), net);
        return 0;
    default:
        return -EINVAL;
    }
}

int
decomp_cost_broadcast(int p, double d, const struct decomp_net *net, double *seconds)
{
    int rc = decomp_net_check(net);

    if (rc < 0)
        return rc;
    if (seconds == NULL || p < 1 || !(d >= 0) || !isfinite(d))
        return -EINVAL;
    /* (6.12): the root prepares p-1 messages one after another. */
    *seconds = (p - 1) * net->lambda + net->tau * (p - 1) * decomp_frame(d, net);
    return 0;
}

int
decomp_cost_reduction(int p, double d, const struct decomp_net *net, double *seconds)
{
    int rc = decomp_net_check(net);

    if (rc < 0)
        return rc;
    if (seconds == NULL || p < 1 || !(d >= 0) || !isfinite(d))
        return -EINVAL;
    /* (6.13): p-1 senders prepare in parallel; the wire is still shared. */
    *seconds = (p > 1 ? net->lambda : 0) + net->tau * (p - 1) * decomp_frame(d, net);
    return 0;
}

int
decomp_block_beats_row(double lambda, double tau, double d, double n, int p)
{
    if (p < 1 || !(lambda >= 0) || !(tau >= 0) || !(d > 0) || !(n > 0) || !isfinite(lambda) ||
        !isfinite(tau) || !isfinite(d) || !isfinite(n))
        return -EINVAL;
    /* (6.35); framing ignored, as in the theorem's proof. */
    return lambda < p * d * n * tau * (1 - 2 / sqrt((double)p));
}

int
decomp_block_min_n(double lambda, double tau, double d, int p, double *n_min)
{
    if (n_min == NULL || p < 1 || !(lambda >= 0) || !(tau > 0) || !(d > 0) ||
        !isfinite(lambda) || !isfinite(tau) || !isfinite(d))
        return -EINVAL;
    double k = 1 - 2 / sqrt((double)p);
    if (!(k > 0))
        return -ERANGE;
    *n_min = lambda / (p * d * tau * k);
    return 0;
}
