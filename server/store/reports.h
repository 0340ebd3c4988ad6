/* Reports over the evidence: job-accounting usage by group (docs/evidence.md "Reports") and
 * idle time from telemetry summaries. Read-only. */
#ifndef CAPLEDGER_STORE_REPORTS_H
#define CAPLEDGER_STORE_REPORTS_H

#include "store/scope.h"
#include "store/store.h"

struct usage_query {
    const struct team_scope *scope; /* the caller's teams (NULL: all) */
    const char *from, *to;          /* submitted_at in [from, to); NULL: open */
    int by_team, by_class, by_cluster, by_state;
    /* Pricing (may be NULL): {"cluster": "offer id", …} and an offer id for other clusters.
     * A run's cost is its GPU hours × the offer's price_per_hour / gpus_per_instance. */
    const char *cluster_offers_json;
    const char *default_offer_id;
    const char *currency; /* of those offers (checked by the caller to be one) */
    const char *team;     /* only this team's runs; NULL: all the caller may read */
    long exact_max;       /* exact queue-wait percentiles up to this many waits, else the
                             histogram's (core/qwhist.h) */
    /* {"team", "match"} (http/runsof.h): only the runs of that team its match recognises, every
     * figure read from run (exact percentiles); NULL: all runs */
    const char *workload_json;
};

/* *out: {currency, unpriced: [{cluster, partition, gpu_model, runs, gpu_hours}] (GPU runs no
 * price covers, the 100 largest), groups: [{<group keys>, runs, gpu_runs, gpu_hours,
 * gpu_hours_by_state, failure_rate, failed_gpu_hours_share, queue_wait_s {mean, p50, p90, p99,
 * approximate, relative_error} (exact, relative_error 0, when the report selects at most
 * exact_max waits, else from run_qw_hist: approximate true, relative_error QWHIST_REL_ERR),
 * never_started, mean_gpu_utilization, cost {currency, amount, failed_amount, failed_share,
 * priced_gpu_hours, unpriced_gpu_hours, unpriced_runs} or null when nothing is priced}]}
 * ordered by the group keys. Prices: ?cluster_offers= for a cluster, else the cluster map
 * (partition and GPU model, then partition), else ?offer_id=. */
enum store_status store_report_usage(struct store *s, const struct usage_query *q,
                                     json_t **out) STORE_MUSTCHECK;

/* *out: {benchmarks: [...], teams: [...]}: per benchmark and per team, from the telemetry
 * uploads' summaries: samples, samples with a duty cycle, duty cycle mean and idle fraction
 * (weighted by samples with a duty cycle), longest idle stretch (s), idle thresholds used.
 * team: optional filter; from/to: upload time. */
enum store_status store_report_idle(struct store *s, const struct team_scope *scope,
                                    const char *team, const char *from, const char *to,
                                    json_t **out) STORE_MUSTCHECK;

#endif
