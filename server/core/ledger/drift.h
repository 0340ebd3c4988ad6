/* The drift rule: after a decision, which of the assumptions its option rests on has the
 * evidence observed since moved beyond the review's threshold. Pure over the facts the store
 * gathers (store/alerts.c reads them and raises the alerts):
 *
 *   failure_rate           share of GPU runs of the review workloads' teams and classes not
 *                          COMPLETED (at least DRIFT_MIN_RUNS runs) vs the option's, else the
 *                          scenario's, failure_probability;
 *   gpu_utilization        their mean gpu_utilization (at least DRIFT_MIN_RUNS runs that report
 *                          it), else the mean duty cycle of new benchmarks, vs the benchmark's
 *                          gpu_duty_cycle (default 1);
 *   queue_wait_s           their mean wait from submission to start (at least DRIFT_MIN_RUNS
 *                          started runs) vs the benchmark's queue_wait_s, else the offer's
 *                          provisioning_delay_s, else 0;
 *   throughput_units_per_s the mean throughput of new succeeded benchmarks vs the benchmark's.
 *
 * A metric departs when |observed − assumed| / max(|assumed|, floor) exceeds the threshold
 * (floors: 0.01 for fractions, 60 s for queue waits, 1e-9 otherwise). */
#ifndef CAPLEDGER_CORE_LEDGER_DRIFT_H
#define CAPLEDGER_CORE_LEDGER_DRIFT_H

#include <jansson.h>
#include <stddef.h>

/* Fewest GPU runs since a decision that give an observed failure rate, utilisation or queue
 * delay (the same bar as the checklist's). */
#define DRIFT_MIN_RUNS 20
#define DRIFT_METRICS 4
/* A review's drift_threshold when none is given (db/migrations/0030's column default). */
#define DRIFT_DEFAULT_THRESHOLD 0.25

struct drift_metric {
    const char *name;  /* alert.metric */
    const char *label; /* for the message */
    const char *unit;  /* "" or " s" or " units/s" */
    double floor;      /* smallest denominator of the relative change */
    int known;         /* both figures present with enough samples */
    double assumed, observed;
    long long samples;
    const char *basis;        /* where the observation comes from */
    const char *evidence_key; /* the observation's member listing the ids behind it */
    double threshold;         /* 0: the review's threshold */
};

/* The option a decision stands on: the one named `chosen`, else the one named `winner`, among
 * options (an array of {name, ...}); its index in *index (may be NULL). NULL when neither
 * names one of them. */
const json_t *decision_option(const char *chosen, const char *winner, const json_t *options,
                              size_t *index);
/* decision_option of decided.chosen_option, decided.winner and decided.resolved.options. */
const json_t *drift_option(const json_t *decided, size_t *index);

/* The four metrics of the option opt (of decided.resolved) against the observations since the
 * decision: {runs, failed, util_n, util_mean, queue_n, queue_mean_s, duty_n, duty_mean,
 * throughput_n, throughput_mean}. */
void drift_metrics(const json_t *decided, const json_t *opt, const json_t *observed,
                   struct drift_metric m[DRIFT_METRICS]);

/* The threshold that applies to m: its own, else the review's. */
double drift_threshold(const struct drift_metric *m, double review_threshold);

/* Whether a known metric departs beyond drift_threshold; the signed relative change in *rel
 * either way. */
int drift_departs(const struct drift_metric *m, double review_threshold, double *rel);

/* The alert's sentence for a departing metric. */
void drift_message(const struct drift_metric *m, double rel, double threshold, char *out,
                   size_t size);

#endif
