/* Monte Carlo for batch kinds: each trial replays one completed result with its own
 * throughput, interruptions, failed attempts and queue waits, and costs it with the closed
 * form's breakdown. The generator and the bounded-work rule are documented in core/cost/cost.h.
 *
 * Segment model (the closed form's, drawn rather than averaged): a checkpoint segment of
 * L = τ + δ seconds must run without an interruption; an interruption loses the partial
 * segment, then a restart of R seconds must itself run uninterrupted. With G_a the time to get
 * a uninterrupted seconds (E = (e^{λa} − 1)/λ, Var = (e^{2λa} − 1 − 2λa·e^{λa})/λ²) and K the
 * number of interruptions of the segment (geometric, E = e^{λL} − 1, Var = E·e^{λL}), a
 * segment takes S = G_L + Σ_{i≤K} G_R,i, whose mean is the closed form's per-segment time
 * e^{λR}(e^{λL} − 1)/λ and whose variance is
 * Var G_L + E K·Var G_R + Var K·(E G_R)² + 2·E G_R·Cov(G_L, K), Cov(G_L, K) = (E G_L − L)·e^{λL}.
 */
#include "core/cost/cost_mc.h"

#include "core/cost/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- xoshiro256** seeded through splitmix64 --------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void cost_rng_seed(struct cost_rng *rng, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&state);
}

uint64_t cost_rng_next(struct cost_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Equivalent to 2^128 calls of cost_rng_next: gives each option its own subsequence. */
void cost_rng_jump(struct cost_rng *rng)
{
    static const uint64_t jump[] = {0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL,
                                    0xa9582618e03fc9aaULL, 0x39abdc4529b1661cULL};
    uint64_t s[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < 4; i++)
        for (int b = 0; b < 64; b++) {
            if (jump[i] & (UINT64_C(1) << b))
                for (int k = 0; k < 4; k++)
                    s[k] ^= rng->s[k];
            (void)cost_rng_next(rng);
        }
    memcpy(rng->s, s, sizeof s);
}

double cost_rng_uniform(struct cost_rng *rng)
{
    return (double)(cost_rng_next(rng) >> 11) * 0x1.0p-53;
}

static double rng_normal(struct cost_rng *rng)
{
    double u1 = 1 - cost_rng_uniform(rng); /* (0, 1]: the logarithm stays finite */
    double u2 = cost_rng_uniform(rng);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static double rng_exponential(struct cost_rng *rng, double mean)
{
    return -mean * log(1 - cost_rng_uniform(rng));
}

/* Failures before the first success, each try succeeding with probability p_success. */
static double rng_failures(struct cost_rng *rng, double p_success)
{
    if (p_success >= 1)
        return 0;
    double u = 1 - cost_rng_uniform(rng);
    return floor(log(u) / log1p(-p_success));
}

/* ---- moments ------------------------------------------------------------------------------ */

/* e^{2x} − 1 − 2x·e^x, by its series where the direct form cancels: Σ_{n≥3} (2^n − 2n)/n!·x^n. */
static double run_variance_factor(double x)
{
    if (x > 0.1)
        return expm1(2 * x) - 2 * x * exp(x);
    double term = x * x * x / 6, sum = 0; /* x^n/n! for n = 3 */
    double pow2 = 8;
    for (int n = 3; n <= 12; n++) {
        sum += (pow2 - 2 * n) * term;
        pow2 *= 2;
        term *= x / (n + 1);
    }
    return sum;
}

struct segment_model {
    double lambda, length_s, restart_s;
    double p_segment, p_restart;      /* probability a try runs uninterrupted */
    double restart_mean, restart_var; /* G_R */
    double lost_mean, lost_var;       /* one partial segment lost: Exp(λ) truncated at L */
    double restart_lost_mean, restart_lost_var;
    double mean, var; /* S */
};

/* Moments of an exponential (rate λ) truncated to [0, a). */
static void truncated_exp_moments(double lambda, double a, double *mean, double *var)
{
    double x = lambda * a;
    if (x < 1e-4) { /* indistinguishable from uniform on [0, a) */
        *mean = a / 2;
        *var = a * a / 12;
        return;
    }
    double tail = exp(-x);
    double m1 = 1 / lambda - a / expm1(x);
    double m2 = (2 / (lambda * lambda) - tail * (a * a + 2 * a / lambda + 2 / (lambda * lambda))) /
                (-expm1(-x));
    *mean = m1;
    *var = fmax(0, m2 - m1 * m1);
}

static void segment_model_init(struct segment_model *m, double lambda, double length_s,
                               double restart_s)
{
    m->lambda = lambda;
    m->length_s = length_s;
    m->restart_s = restart_s;
    double xl = lambda * length_s, xr = lambda * restart_s;
    m->p_segment = exp(-xl);
    m->p_restart = exp(-xr);
    double run_mean = expm1(xl) / lambda, run_var = run_variance_factor(xl) / (lambda * lambda);
    m->restart_mean = expm1(xr) / lambda;
    m->restart_var = run_variance_factor(xr) / (lambda * lambda);
    double k_mean = expm1(xl), k_var = expm1(xl) * exp(xl);
    double cov = (run_mean - length_s) * exp(xl);
    m->mean = run_mean + k_mean * m->restart_mean;
    m->var = fmax(0, run_var + k_mean * m->restart_var + k_var * m->restart_mean * m->restart_mean +
                         2 * m->restart_mean * cov);
    truncated_exp_moments(lambda, length_s, &m->lost_mean, &m->lost_var);
    truncated_exp_moments(lambda, restart_s, &m->restart_lost_mean, &m->restart_lost_var);
}

/* A sum of count i.i.d. terms, each at least floor_each: term by term when few, else one
 * normal draw with the sum's mean and variance (see core/cost/cost.h). */
static double sum_terms(struct cost_rng *rng, double count, double mean, double var,
                        double floor_each, double (*draw)(struct cost_rng *, const void *),
                        const void *ctx)
{
    if (count <= 0)
        return 0;
    if (count <= COST_MC_EXACT_TERMS) {
        double sum = 0;
        for (double i = 0; i < count; i++)
            sum += draw(rng, ctx);
        return sum;
    }
    double x = count * mean + sqrt(count * var) * rng_normal(rng);
    return fmax(x, count * floor_each);
}

static double draw_lost_segment(struct cost_rng *rng, const void *ctx)
{
    const struct segment_model *m = ctx;
    /* inversion of the truncated exponential */
    return -log1p(-cost_rng_uniform(rng) * -expm1(-m->lambda * m->length_s)) / m->lambda;
}

static double draw_lost_restart(struct cost_rng *rng, const void *ctx)
{
    const struct segment_model *m = ctx;
    return -log1p(-cost_rng_uniform(rng) * -expm1(-m->lambda * m->restart_s)) / m->lambda;
}

/* G_R: a restart that starts over whenever it is interrupted. */
static double draw_restart(struct cost_rng *rng, const void *ctx)
{
    const struct segment_model *m = ctx;
    double lost = rng_failures(rng, m->p_restart);
    return m->restart_s +
           sum_terms(rng, lost, m->restart_lost_mean, m->restart_lost_var, 0, draw_lost_restart, m);
}

static double draw_segment(struct cost_rng *rng, const void *ctx)
{
    const struct segment_model *m = ctx;
    double interruptions = rng_failures(rng, m->p_segment);
    double lost = sum_terms(rng, interruptions, m->lost_mean, m->lost_var, 0, draw_lost_segment, m);
    double restarts = sum_terms(rng, interruptions, m->restart_mean, m->restart_var, m->restart_s,
                                draw_restart, m);
    return m->length_s + lost + restarts;
}

/* One attempt's run time including checkpoints and interruptions (T_int drawn). */
struct run_model {
    double segments;
    double length_s;  /* L = τ + δ */
    bool interrupted; /* λ > 0 */
    struct segment_model seg;
};

static double draw_run(struct cost_rng *rng, const struct run_model *r)
{
    if (!r->interrupted)
        return r->segments * r->length_s;
    return sum_terms(rng, r->segments, r->seg.mean, r->seg.var, r->length_s, draw_segment, &r->seg);
}

static double run_mean(const struct run_model *r)
{
    return r->interrupted ? r->segments * r->seg.mean : r->segments * r->length_s;
}

static double run_var(const struct run_model *r)
{
    return r->interrupted ? r->segments * r->seg.var : 0;
}

/* A failed attempt pays its whole setup and the run up to the failure, which strikes uniformly
 * on [0, 2f] of the run when f ≤ 0.5, else on [2f − 1, 1] (mean f: the closed form's
 * setup_s + f·T_int). */
struct attempt_model {
    const struct run_model *run;
    double setup_s;
    double fail_lo, fail_hi;
};

static double draw_failed_attempt(struct cost_rng *rng, const void *ctx)
{
    const struct attempt_model *a = ctx;
    double at = a->fail_lo + (a->fail_hi - a->fail_lo) * cost_rng_uniform(rng);
    return a->setup_s + at * draw_run(rng, a->run);
}

static double draw_queue(struct cost_rng *rng, const void *ctx)
{
    return rng_exponential(rng, *(const double *)ctx);
}

/* Moves the k-th smallest of v[lo..hi] to v[k], smaller ones before it and larger ones after
 * (Hoare partitioning around a median of three, which also copes with runs of equal values).
 * Quantiles need only a few ranks, and selecting them is several times faster than sorting. */
static void select_rank(double *v, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t k)
{
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        double t;
        if (v[mid] < v[lo])
            t = v[mid], v[mid] = v[lo], v[lo] = t;
        if (v[hi] < v[lo])
            t = v[hi], v[hi] = v[lo], v[lo] = t;
        if (v[hi] < v[mid])
            t = v[hi], v[hi] = v[mid], v[mid] = t;
        double pivot = v[mid];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                t = v[i], v[i] = v[j], v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return; /* v[j+1..i-1] all equal the pivot */
    }
}

/* Nearest rank: the 0-based index of rank ⌈p·N⌉ of the sorted trials. p·N that is an integer
 * up to rounding (0.9 × 20000) is taken as that integer, not the next one. */
static size_t nearest_rank_index(size_t n, double p)
{
    double x = p * (double)n, r = round(x);
    double rank = fabs(x - r) <= 1e-9 * fmax(1, x) ? r : ceil(x);
    if (rank < 1)
        rank = 1;
    if (rank > (double)n)
        rank = (double)n;
    return (size_t)rank - 1;
}

/* Ascending; +∞ (a trial that could not finish) sorts last. */
static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Engine 2's expected shortfall: with the rank r = ⌈α·N⌉ (as the nearest rank) and k = N − r,
 * the mean of the k largest values, or the largest when k = 0 (values reordered in place). */
static double cvar_of(double *values, size_t n, double alpha)
{
    size_t rank = nearest_rank_index(n, alpha) + 1, k = n - rank;
    size_t from = k == 0 ? n - 1 : n - k;
    select_rank(values, 0, (ptrdiff_t)n - 1, (ptrdiff_t)from);
    double sum = 0;
    for (size_t i = from; i < n; i++)
        sum += values[i];
    double cvar = sum / (double)(n - from);
    return isfinite(cvar) ? cvar : NAN;
}

/* Mean and the quantiles of values (reordered in place). A rank that lands on a trial that
 * could not finish (+∞) has no figure. */
static void summarise(double *values, size_t n, double reliable_p, struct cost_quantiles *q)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    q->mean = isfinite(sum) ? sum / (double)n : NAN;
    double p[4] = {0.5, 0.9, 0.99, reliable_p};
    double *out[4] = {&q->p50, &q->p90, &q->p99, &q->reliable};
    size_t index[4];
    for (int i = 0; i < 4; i++)
        index[i] = nearest_rank_index(n, p[i]);
    /* Select in increasing rank order so each search starts past the previous rank. */
    bool done[4] = {false};
    ptrdiff_t lo = 0;
    for (int step = 0; step < 4; step++) {
        int next = -1;
        for (int i = 0; i < 4; i++)
            if (!done[i] && (next < 0 || index[i] < index[next]))
                next = i;
        done[next] = true;
        select_rank(values, lo, (ptrdiff_t)n - 1, (ptrdiff_t)index[next]);
        lo = (ptrdiff_t)index[next];
        *out[next] = isfinite(values[index[next]]) ? values[index[next]] : NAN;
    }
}

/* What both engines' trials start from: out cleared, room for n costs and times, and the
 * generator of option opt_index (the seed's, advanced by opt_index jumps). -1 when memory runs
 * out (nothing held). */
static int mc_begin(const struct cost_scenario *sc, size_t opt_index, struct cost_mc_result *out,
                    double **costs, double **times, struct cost_rng *rng)
{
    size_t n = sc->trials;
    memset(out, 0, sizeof *out);
    *costs = malloc(n * sizeof **costs);
    *times = malloc(n * sizeof **times);
    if (!*costs || !*times) {
        free(*costs);
        free(*times);
        return -1;
    }
    cost_rng_seed(rng, sc->seed);
    for (size_t i = 0; i < opt_index; i++)
        cost_rng_jump(rng);
    return 0;
}

/* The whole distribution, for a chart of it: sorted once, the percentiles are read off by the
 * same nearest rank as the quantiles (which then select on a sorted array). */
static void mc_percentiles(double *costs, size_t n, struct cost_mc_result *out)
{
    qsort(costs, n, sizeof *costs, compare_doubles);
    for (size_t k = 1; k <= COST_PERCENTILES; k++) {
        double v = costs[nearest_rank_index(n, (double)k / 100)];
        out->cost_percentile[k - 1] = isfinite(v) ? v : NAN;
    }
}

int cost_mc_run(const struct cost_scenario *sc, size_t opt_index,
                const struct cost_batch_result *cf, bool percentiles, struct cost_mc_result *out)
{
    const struct cost_option *opt = &sc->options[opt_index];
    const struct cost_benchmark *b = &opt->bench;
    const struct cost_assumptions *as = &sc->assumptions;
    size_t n = sc->trials;
    double *costs, *times;
    struct cost_rng rng;
    if (mc_begin(sc, opt_index, out, &costs, &times, &rng) != 0)
        return -1;

    double lambda = cf->interruption_rate_per_s;
    double q = cf->failure_probability, f = as->failure_progress_fraction;
    double per_result_fixed = cf->breakdown[COST_B_STORAGE] + cf->breakdown[COST_B_TRANSFER];
    double compute_factor =
        cf->rate_per_s / cf->paid_utilization * (1 + opt->offer.orchestration_overhead);
    double engineer_per_s = as->engineer_rate_per_hour * as->engineer_blocked_fraction / 3600;
    struct run_model run = {.segments = cf->segments, .interrupted = lambda > 0};
    struct attempt_model attempt = {.run = &run,
                                    .setup_s = b->setup_s,
                                    .fail_lo = f <= 0.5 ? 0 : 2 * f - 1,
                                    .fail_hi = f <= 0.5 ? 2 * f : 1};
    double fail_sq = (attempt.fail_lo * attempt.fail_lo + attempt.fail_lo * attempt.fail_hi +
                      attempt.fail_hi * attempt.fail_hi) /
                     3; /* E[u²] of the failure point */
    double throughput = b->throughput_units_per_s;
    bool fixed_throughput = !(b->throughput_stddev > 0);
    if (fixed_throughput) {
        run.length_s =
            sc->workload.target_units / throughput / cf->segments + b->checkpoint_write_s;
        if (run.interrupted)
            segment_model_init(&run.seg, lambda, run.length_s, b->restart_s);
    }

    for (size_t t = 0; t < n; t++) {
        if (!fixed_throughput) {
            do
                throughput = b->throughput_units_per_s + b->throughput_stddev * rng_normal(&rng);
            while (!(throughput > 0));
            run.length_s =
                sc->workload.target_units / throughput / cf->segments + b->checkpoint_write_s;
            if (run.interrupted) {
                if (!(lambda * run.length_s <= COST_INTERRUPTION_EXPONENT_LIMIT)) {
                    costs[t] = times[t] = INFINITY; /* this draw cannot finish */
                    out->unfinished_trials++;
                    continue;
                }
                segment_model_init(&run.seg, lambda, run.length_s, b->restart_s);
            }
        }
        double failures = q > 0 ? rng_failures(&rng, 1 - q) : 0;
        double rm = run_mean(&run), rv = run_var(&run);
        double failed_mean = b->setup_s + f * rm;
        double failed_var = fail_sq * (rv + rm * rm) - f * f * rm * rm;
        double failed_s = sum_terms(&rng, failures, failed_mean, fmax(0, failed_var), b->setup_s,
                                    draw_failed_attempt, &attempt);
        double billed_s = b->setup_s + draw_run(&rng, &run) + failed_s;
        double queue_s = b->queue_wait_s > 0 ? sum_terms(&rng, failures + 1, b->queue_wait_s,
                                                         b->queue_wait_s * b->queue_wait_s, 0,
                                                         draw_queue, &b->queue_wait_s)
                                             : 0;
        double wait_s = queue_s + billed_s;
        double cost = billed_s * compute_factor + per_result_fixed + engineer_per_s * wait_s;
        if (!isfinite(cost) || !isfinite(wait_s)) {
            cost = wait_s = INFINITY;
            out->unfinished_trials++;
        }
        costs[t] = cost;
        times[t] = wait_s;
    }
    if (percentiles)
        mc_percentiles(costs, n, out);
    summarise(costs, n, as->reliable_quantile, &out->cost);
    summarise(times, n, as->reliable_quantile, &out->time);
    free(costs);
    free(times);
    return 0;
}

/* ---- engine 2 ----------------------------------------------------------------------------- */

/* One attempt's queue wait from the 101 percentiles: linear between neighbouring percentiles. */
static double draw_queue_quantiles(struct cost_rng *rng, const void *ctx)
{
    const double *q = ctx;
    double x = 100 * cost_rng_uniform(rng);
    int i = (int)x;
    return q[i] + (x - i) * (q[i + 1] - q[i]);
}

/* What one completed run (its failed attempts, queue waits, interruptions and reads included)
 * costs and takes, and the moments of both (for sums of many runs drawn as one normal). */
struct run2_model {
    const struct cost_benchmark *bench;
    struct run_model run;
    struct attempt_model attempt;
    double q, f, fail_sq;
    double compute_factor, engineer_per_s, per_run_fixed;
    double read_per_attempt, read_per_run_s; /* reads from the source: per attempt, per second */
    const double *queue_quantiles;
    double queue_mean, queue_var;
    double cost_mean, cost_sd, time_mean, time_sd, rho, cost_min, time_min;
};

static void run2_moments(struct run2_model *m)
{
    const struct cost_benchmark *b = m->bench;
    double rm = run_mean(&m->run), rv = run_var(&m->run);
    double vu = fmax(0, m->fail_sq * (rv + rm * rm) - m->f * m->f * rm * rm);
    double ek = m->q / (1 - m->q), vk = m->q / ((1 - m->q) * (1 - m->q));
    double alpha = m->compute_factor + m->engineer_per_s, beta = m->engineer_per_s;
    double ar = alpha + m->read_per_run_s, mw = m->queue_mean, vw = m->queue_var;
    double ez = alpha * b->setup_s + ar * m->f * rm + beta * mw + m->read_per_attempt;
    double ezt = b->setup_s + m->f * rm + mw;
    m->cost_mean =
        alpha * b->setup_s + ar * rm + beta * mw + m->read_per_attempt + m->per_run_fixed + ek * ez;
    m->time_mean = b->setup_s + rm + mw + ek * ezt;
    double vx =
        ar * ar * rv + beta * beta * vw + ek * (ar * ar * vu + beta * beta * vw) + vk * ez * ez;
    double vy = rv + vw + ek * (vu + vw) + vk * ezt * ezt;
    double cxy = ar * rv + beta * vw + ek * (ar * vu + beta * vw) + vk * ez * ezt;
    m->cost_sd = sqrt(fmax(0, vx));
    m->time_sd = sqrt(fmax(0, vy));
    m->rho =
        m->cost_sd > 0 && m->time_sd > 0 ? fmax(-1, fmin(1, cxy / (m->cost_sd * m->time_sd))) : 0;
    double run_min = m->run.segments * m->run.length_s;
    m->time_min = b->setup_s + run_min;
    m->cost_min = alpha * b->setup_s + alpha * run_min + m->per_run_fixed + m->read_per_attempt;
}

/* One completed run drawn attempt by attempt. */
static void draw_run2(struct cost_rng *rng, const struct run2_model *m, double *cost, double *time)
{
    const struct cost_benchmark *b = m->bench;
    double failures = m->q > 0 ? rng_failures(rng, 1 - m->q) : 0;
    double rm = run_mean(&m->run), rv = run_var(&m->run);
    double failed_var = m->fail_sq * (rv + rm * rm) - m->f * rm * m->f * rm;
    double failed_s = sum_terms(rng, failures, b->setup_s + m->f * rm, fmax(0, failed_var),
                                b->setup_s, draw_failed_attempt, &m->attempt);
    double billed_s = b->setup_s + draw_run(rng, &m->run) + failed_s;
    double queue_s = 0;
    if (m->queue_quantiles)
        queue_s = sum_terms(rng, failures + 1, m->queue_mean, m->queue_var, m->queue_quantiles[0],
                            draw_queue_quantiles, m->queue_quantiles);
    else if (m->queue_mean > 0)
        queue_s = sum_terms(rng, failures + 1, m->queue_mean, m->queue_var, 0, draw_queue,
                            &m->queue_mean);
    double wait_s = queue_s + billed_s;
    double reads = m->read_per_attempt * (failures + 1) +
                   m->read_per_run_s * (billed_s - (failures + 1) * b->setup_s);
    *cost = billed_s * m->compute_factor + m->per_run_fixed + m->engineer_per_s * wait_s + reads;
    *time = wait_s;
}

/* Gamma(shape, 1) by Marsaglia and Tsang (2000); a shape below 1 through Gamma(shape +
 * 1)·U^{1/shape}. */
static double rng_gamma(struct cost_rng *rng, double shape)
{
    double boost = 1;
    if (shape < 1) {
        boost = pow(1 - cost_rng_uniform(rng), 1 / shape);
        shape += 1;
    }
    double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = rng_normal(rng), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = 1 - cost_rng_uniform(rng); /* (0, 1]: the logarithm stays finite */
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return boost * d * v;
    }
}

/* runs completed runs: one by one when few, else one draw. A run's cost is bounded below and
 * skewed to the right (failures, restarts and queues only add), so the sum is drawn as its
 * cheapest possible value plus a gamma with the sum's exact mean and variance: a normal clamped
 * at that floor lifted the mean above the closed form (by 0.8 % at ten outcomes of the risk
 * example) and had no right skew. The time follows the cost through their exact correlation
 * (a regression on the standardised cost plus an independent normal), never below its
 * smallest possible value. */
static void draw_runs(struct cost_rng *rng, const struct run2_model *m, double runs, bool want_time,
                      double *cost, double *time)
{
    *cost = *time = 0;
    if (runs <= COST_MC_EXACT_TERMS) {
        for (double i = 0; i < runs; i++) {
            double c, t;
            draw_run2(rng, m, &c, &t);
            *cost += c;
            *time += t;
        }
        return;
    }
    double root = sqrt(runs), above = runs * (m->cost_mean - m->cost_min), sd = root * m->cost_sd;
    double z1 = 0;
    *cost = runs * m->cost_min;
    if (above > 0 && sd > 0) {
        double shape = above * above / (sd * sd);
        *cost += sd * sd / above * rng_gamma(rng, shape);
        z1 = (*cost - runs * m->cost_mean) / sd;
    } else {
        *cost = runs * m->cost_mean;
    }
    if (want_time) {
        double z2 = rng_normal(rng);
        double y = runs * m->time_mean +
                   root * m->time_sd * (m->rho * z1 + sqrt(fmax(0, 1 - m->rho * m->rho)) * z2);
        *time = fmax(runs * m->time_min, y);
    }
}

/* Completed runs until `outcomes` accepted ones (a run accepted with probability a). */
static double draw_runs_for(struct cost_rng *rng, double outcomes, double a)
{
    if (a >= 1 || outcomes <= 0)
        return outcomes;
    if (outcomes <= COST_MC_EXACT_TERMS) {
        double runs = outcomes;
        for (double i = 0; i < outcomes; i++)
            runs += rng_failures(rng, a);
        return runs;
    }
    double mean = outcomes * (1 - a) / a, sd = sqrt(outcomes * (1 - a)) / a;
    return outcomes + fmax(0, round(mean + sd * rng_normal(rng)));
}

int cost_mc_run2(const struct cost_scenario *sc, size_t opt_index,
                 const struct cost_batch_result *cf, bool percentiles, struct cost_mc_result *out)
{
    const struct cost_option *opt = &sc->options[opt_index];
    const struct cost_benchmark *b = &opt->bench;
    const struct cost_assumptions *as = &sc->assumptions;
    size_t n = sc->trials;
    double *costs, *times;
    struct cost_rng rng;
    if (mc_begin(sc, opt_index, out, &costs, &times, &rng) != 0)
        return -1;

    double lambda = cf->interruption_rate_per_s, f = as->failure_progress_fraction;
    double V = as->planned_outcomes, a = cf->acceptance;
    struct run2_model m = {
        .bench = b,
        .run = {.segments = cf->segments, .interrupted = lambda > 0},
        .q = cf->failure_probability,
        .f = f,
        .compute_factor =
            cf->rate_per_s / cf->paid_utilization * (1 + opt->offer.orchestration_overhead),
        .engineer_per_s = as->engineer_rate_per_hour * as->engineer_blocked_fraction / 3600,
        .per_run_fixed = cf->per_run_fixed,
        .read_per_attempt = cf->source_egress_gb * b->transfer_gb,
        .read_per_run_s = cf->source_egress_gb * b->restage_gb * lambda,
        .queue_quantiles = b->queue_quantiles,
    };
    m.attempt = (struct attempt_model){.run = &m.run,
                                       .setup_s = b->setup_s,
                                       .fail_lo = f <= 0.5 ? 0 : 2 * f - 1,
                                       .fail_hi = f <= 0.5 ? 2 * f : 1};
    m.fail_sq = (m.attempt.fail_lo * m.attempt.fail_lo + m.attempt.fail_lo * m.attempt.fail_hi +
                 m.attempt.fail_hi * m.attempt.fail_hi) /
                3;
    if (b->queue_quantiles) {
        double sq = 0;
        for (int i = 0; i + 1 < COST_QUEUE_QUANTILES; i++) {
            double lo = b->queue_quantiles[i], hi = b->queue_quantiles[i + 1];
            sq += (lo * lo + lo * hi + hi * hi) / 300;
        }
        m.queue_mean = cost_queue_quantiles_mean(b->queue_quantiles);
        m.queue_var = fmax(0, sq - m.queue_mean * m.queue_mean);
    } else {
        m.queue_mean = b->queue_wait_s;
        m.queue_var = b->queue_wait_s * b->queue_wait_s;
    }
    bool fixed_throughput = !(b->throughput_stddev > 0);
    if (fixed_throughput) {
        m.run.length_s = sc->workload.target_units / b->throughput_units_per_s / cf->segments +
                         b->checkpoint_write_s;
        if (m.run.interrupted)
            segment_model_init(&m.run.seg, lambda, m.run.length_s, b->restart_s);
        run2_moments(&m);
    }

    for (size_t t = 0; t < n; t++) {
        if (!fixed_throughput) { /* drawn once: a slow device is slow all month */
            double throughput;
            do
                throughput = b->throughput_units_per_s + b->throughput_stddev * rng_normal(&rng);
            while (!(throughput > 0));
            m.run.length_s =
                sc->workload.target_units / throughput / cf->segments + b->checkpoint_write_s;
            if (m.run.interrupted) {
                if (!(lambda * m.run.length_s <= COST_INTERRUPTION_EXPONENT_LIMIT)) {
                    costs[t] = times[t] = INFINITY; /* this draw cannot finish */
                    out->unfinished_trials++;
                    continue;
                }
                segment_model_init(&m.run.seg, lambda, m.run.length_s, b->restart_s);
            }
            run2_moments(&m);
        }
        /* The first outcome (its time is the trial's time to result), then the rest. */
        double first_cost, first_time, rest_cost, unused;
        draw_runs(&rng, &m, draw_runs_for(&rng, 1, a), true, &first_cost, &first_time);
        draw_runs(&rng, &m, draw_runs_for(&rng, V - 1, a), false, &rest_cost, &unused);
        double cost = (first_cost + rest_cost) / V + cf->per_outcome_fixed;
        if (!isfinite(cost) || !isfinite(first_time)) {
            cost = first_time = INFINITY;
            out->unfinished_trials++;
        }
        costs[t] = cost;
        times[t] = first_time;
    }
    if (percentiles)
        mc_percentiles(costs, n, out);
    summarise(costs, n, as->reliable_quantile, &out->cost);
    out->cost.cvar = cvar_of(costs, n, as->reliable_quantile);
    summarise(times, n, as->reliable_quantile, &out->time);
    out->time.cvar = cvar_of(times, n, as->reliable_quantile);
    if (!as->risk_quantile)
        out->cost.reliable = out->cost.cvar;
    free(costs);
    free(times);
    return 0;
}
