#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <math.h>

#include "core/qwhist.h"

/* The bounds (*lo, *hi] of bucket k as qwhist.h states them, written here from the statement
 * (the library keeps no such function: only this test needs it). */
static void bounds(int k, double *lo, double *hi)
{
    if (k == QWHIST_ZERO) {
        *lo = *hi = 0;
        return;
    }
    double g = (1.0 + QWHIST_REL_ERR) / (1.0 - QWHIST_REL_ERR);
    *hi = pow(g, k);
    *lo = k == QWHIST_KMIN ? 0 : pow(g, k - 1);
}

static void test_bucket_bounds(void **state)
{
    (void)state;
    assert_int_equal(qwhist_bucket(0), QWHIST_ZERO);
    assert_int_equal(qwhist_bucket(-5), QWHIST_ZERO);
    assert_int_equal(qwhist_bucket(NAN), QWHIST_ZERO);
    assert_int_equal(qwhist_bucket(1), 0); /* (G^-1, G^0] */
    assert_int_equal(qwhist_bucket(1e-300), QWHIST_KMIN);
    double lo, hi;
    bounds(QWHIST_ZERO, &lo, &hi);
    assert_true(lo == 0 && hi == 0);
    assert_true(qwhist_value(QWHIST_ZERO) == 0);
    /* every value lies in its bucket's bounds, and the representative value within 1 % */
    static const double vs[] = {1e-6, 0.5, 1, 1.5, 2, 7, 59, 60, 61, 3599, 3600, 86400, 1e7};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        int k = qwhist_bucket(vs[i]);
        bounds(k, &lo, &hi);
        assert_true(lo < vs[i] * (1 + 1e-12) && vs[i] <= hi * (1 + 1e-12));
        assert_true(fabs(qwhist_value(k) - vs[i]) <= QWHIST_REL_ERR * vs[i] * (1 + 1e-9));
        /* a bucket's width relative to its representative value is 2 E / (1 - E^2) */
        assert_true(fabs((hi - lo) / qwhist_value(k) -
                         2 * QWHIST_REL_ERR / (1 - QWHIST_REL_ERR * QWHIST_REL_ERR)) < 1e-9);
        /* adjacent buckets tile the line */
        double lo2, hi2;
        bounds(k + 1, &lo2, &hi2);
        assert_true(fabs(lo2 - hi) <= 1e-12 * hi);
    }
}

static void test_percentile_exact_cases(void **state)
{
    (void)state;
    double out = -1;
    struct qwhist_bin zero[] = {{QWHIST_ZERO, 10}};
    assert_int_equal(qwhist_percentile(zero, 1, 0.5, &out), 0);
    assert_true(out == 0);
    /* one wait: every percentile is its bucket's value */
    int k = qwhist_bucket(100);
    struct qwhist_bin one[] = {{k, 1}};
    assert_int_equal(qwhist_percentile(one, 1, 0.99, &out), 0);
    assert_true(out == qwhist_value(k));
    /* 0 and 100 s, one each: p50 interpolates halfway between the two values */
    struct qwhist_bin two[] = {{QWHIST_ZERO, 1}, {k, 1}};
    assert_int_equal(qwhist_percentile(two, 2, 0.5, &out), 0);
    assert_true(fabs(out - qwhist_value(k) / 2) < 1e-12);
    assert_int_equal(qwhist_percentile(two, 2, 0, &out), 0);
    assert_true(out == 0);
    assert_int_equal(qwhist_percentile(two, 2, 1, &out), 0);
    assert_true(out == qwhist_value(k));
}

static void test_percentile_refused(void **state)
{
    (void)state;
    double out = 42;
    struct qwhist_bin unsorted[] = {{5, 1}, {3, 1}};
    struct qwhist_bin empty_bin[] = {{5, 0}};
    assert_int_equal(qwhist_percentile(unsorted, 2, 0.5, &out), -1);
    assert_int_equal(qwhist_percentile(empty_bin, 1, 0.5, &out), -1);
    assert_int_equal(qwhist_percentile(unsorted, 0, 0.5, &out), -1);
    assert_int_equal(qwhist_percentile(unsorted, 1, 1.5, &out), -1);
    assert_int_equal(qwhist_percentile(unsorted, 1, NAN, &out), -1);
    assert_true(out == 42);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* percentile_cont on exact values, the reference */
static double exact_pct(const double *sorted, size_t n, double p)
{
    double h = p * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    double b = lo + 1 < n ? sorted[lo + 1] : sorted[lo];
    return sorted[lo] + (h - floor(h)) * (b - sorted[lo]);
}

static void test_percentile_within_error(void **state)
{
    (void)state;
    enum { N = 20000 };
    static double v[N];
    static int ks[N];
    static struct qwhist_bin bins[N];
    srand(7);
    for (size_t i = 0; i < N; i++) {
        /* waits as a scheduler gives them: many zeros, whole seconds, a long tail */
        double u = (double)rand() / RAND_MAX;
        v[i] = i % 10 == 0 ? 0 : floor(exp(u * 11)) - 1;
        ks[i] = qwhist_bucket(v[i]);
    }
    qsort(v, N, sizeof v[0], cmp_double);
    qsort(ks, N, sizeof ks[0], cmp_int);
    size_t nb = 0;
    for (size_t i = 0; i < N; i++) {
        if (nb > 0 && bins[nb - 1].bucket == ks[i])
            bins[nb - 1].n++;
        else
            bins[nb++] = (struct qwhist_bin){ks[i], 1};
    }
    static const double ps[] = {0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        double got = -1, want = exact_pct(v, N, ps[i]);
        assert_int_equal(qwhist_percentile(bins, nb, ps[i], &got), 0);
        assert_true(fabs(got - want) <= QWHIST_REL_ERR * want + 1e-9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_bounds),
        cmocka_unit_test(test_percentile_exact_cases),
        cmocka_unit_test(test_percentile_refused),
        cmocka_unit_test(test_percentile_within_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
