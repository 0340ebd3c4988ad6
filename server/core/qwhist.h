/* Queue-wait histogram: the bucket arithmetic behind the usage report's approximate
 * percentiles (db/migrations/0062_queue_wait_histogram.sql keeps the counts per bucket).
 *
 * A wait v (seconds) falls in bucket QWHIST_ZERO when v <= 0 (exactly 0: waits are never
 * negative, core/formats/run.c refuses a start before the submission), else in bucket
 * k = max(QWHIST_KMIN, ceil(ln v / ln G)), G = (1 + E) / (1 - E), E = QWHIST_REL_ERR = 0.01:
 * bucket k holds (G^(k-1), G^k]. Its representative value is 2 G^k / (G + 1), within a
 * relative E of every value in the bucket. (QWHIST_KMIN, G^-1000 ≈ 2e-9 s, is far below
 * the microsecond of a timestamptz, so no positive wait is clamped in practice.)
 *
 * Percentile p of N counted waits, as PostgreSQL's percentile_cont does it on the exact
 * values: rank h = p (N − 1) (0-based), result = x[floor h] + (h − floor h)(x[floor h + 1] −
 * x[floor h]), where x[i] is the representative value of the bucket holding the i-th smallest
 * wait. Each x[i] is within E of the true i-th wait, so the interpolation (a convex
 * combination of two non-negative values) is within E of the exact percentile. Deterministic:
 * the same counts always give the same result. Pure. */
#ifndef CAPLEDGER_CORE_QWHIST_H
#define CAPLEDGER_CORE_QWHIST_H

#include <stddef.h>
#include <stdint.h>

#define QWHIST_REL_ERR 0.01
#define QWHIST_KMIN (-1000)
#define QWHIST_ZERO (-2000) /* the bucket of exact zero */

/* The bucket of a wait of v seconds (NaN counts as 0). */
int qwhist_bucket(double v);

/* The representative value of bucket k (0 for QWHIST_ZERO); bucket k > QWHIST_KMIN holds
 * (G^(k−1), G^k] with G = (1 + QWHIST_REL_ERR)/(1 − QWHIST_REL_ERR), QWHIST_KMIN (0, G^KMIN]. */
double qwhist_value(int k);

struct qwhist_bin {
    int bucket;
    int64_t n; /* > 0 */
};

/* Percentile p in [0, 1] of the waits counted in bins (sorted by bucket, ascending, buckets
 * distinct, counts > 0), into *out. Returns 0, or -1 when there are no waits or the bins are
 * not as stated (then *out is untouched). */
int qwhist_percentile(const struct qwhist_bin *bins, size_t nbins, double p, double *out);

#endif
