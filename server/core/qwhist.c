#include "core/qwhist.h"

#include <math.h>

static double growth(void)
{
    return (1.0 + QWHIST_REL_ERR) / (1.0 - QWHIST_REL_ERR);
}

int qwhist_bucket(double v)
{
    if (!(v > 0))
        return QWHIST_ZERO;
    double k = ceil(log(v) / log(growth()));
    if (k < QWHIST_KMIN)
        return QWHIST_KMIN;
    if (k > 100000) /* far beyond any wait (G^100000 s) */
        return 100000;
    return (int)k;
}

double qwhist_value(int k)
{
    if (k == QWHIST_ZERO)
        return 0;
    double g = growth();
    return 2 * pow(g, k) / (g + 1);
}

/* The representative value of the bucket holding the r-th smallest wait (0-based). */
static double value_at(const struct qwhist_bin *bins, size_t nbins, int64_t r)
{
    int64_t seen = 0;
    for (size_t i = 0; i < nbins; i++) {
        seen += bins[i].n;
        if (r < seen)
            return qwhist_value(bins[i].bucket);
    }
    return qwhist_value(bins[nbins - 1].bucket);
}

int qwhist_percentile(const struct qwhist_bin *bins, size_t nbins, double p, double *out)
{
    if (!(p >= 0 && p <= 1) || nbins == 0)
        return -1;
    int64_t total = 0;
    for (size_t i = 0; i < nbins; i++) {
        if (bins[i].n <= 0 || (i > 0 && bins[i].bucket <= bins[i - 1].bucket))
            return -1;
        total += bins[i].n;
    }
    double h = p * (double)(total - 1);
    double fl = floor(h);
    int64_t lo = (int64_t)fl;
    double a = value_at(bins, nbins, lo);
    double b = lo + 1 < total ? value_at(bins, nbins, lo + 1) : a;
    *out = a + (h - fl) * (b - a);
    return 0;
}
