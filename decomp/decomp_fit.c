/*
 * decomp_fit.c: lambda and tau from the ring benchmark, seed 001 section 3.4.
 * The thesis fits its ring timings by least squares without saying on what;
 * here the regressor is what the cost model charges for one round (every host
 * sends one message to its right neighbour): lambda + tau * hosts * frame(D)
 * on a shared medium, lambda + tau * frame(D) on a switched one. Fitting on
 * the model's own terms means the fitted values predict the model's costs.
 *
 * The squares are weighted by 1 / seconds^2, so each sample counts by its
 * relative error: on a shared machine a round's scatter grows with its
 * length, and unweighted the largest messages' scatter set the intercept
 * (lambda read 0.1-0.4 ms where 8-byte rounds took 0.055 ms, and swung
 * the halo depth and the methods' ranking with it).  Exact samples give
 * the same line either way.
 */
#include "decomp.h"
#include "decomp_int.h"

#include <math.h>

int
decomp_fit_ring(const struct decomp_sample *s, size_t n, int hosts,
                const struct decomp_net *net, double *lambda, double *tau, double *r2)
{
    if (s == NULL || lambda == NULL || tau == NULL || hosts < 1 || n < 2 || net == NULL)
        return -EINVAL;
    if (!isfinite(net->payload) || net->payload < 0 || !isfinite(net->overhead) ||
        net->overhead < 0 || (net->kind != DECOMP_NET_SHARED && net->kind != DECOMP_NET_SWITCHED))
        return -EINVAL;
    double mult = net->kind == DECOMP_NET_SHARED ? hosts : 1;

    /* Two passes (weighted means first) keep the sums well conditioned
     * when sizes span several orders of magnitude. */
    double sw = 0, mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(s[i].bytes) || s[i].bytes < 0 || !isfinite(s[i].seconds) ||
            s[i].seconds < 0)
            return -EINVAL;
        double w = 1.0 / fmax(s[i].seconds * s[i].seconds, 1e-24);
        sw += w;
        mx += w * mult * decomp_frame(s[i].bytes, net);
        my += w * s[i].seconds;
    }
    mx /= sw;
    my /= sw;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / fmax(s[i].seconds * s[i].seconds, 1e-24);
        double dx = mult * decomp_frame(s[i].bytes, net) - mx, dy = s[i].seconds - my;
        sxx += w * dx * dx;
        sxy += w * dx * dy;
        syy += w * dy * dy;
    }
    /* All samples of one size: the slope is undetermined. */
    if (!(sxx > 0))
        return -EINVAL;
    double t = sxy / sxx, l = my - t * mx;
    if (!(t > 0) || l < 0)
        return -ERANGE;
    *tau = t;
    *lambda = l;
    if (r2 != NULL)
        *r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1;
    return 0;
}
