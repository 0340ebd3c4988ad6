/* Time series for the UI's charts, bounded in size: a benchmark's telemetry duty cycle
 * downsampled to at most N points with its idle stretches, and job-accounting GPU-hours per
 * time bucket by team and workload class. Read-only. */
#ifndef CAPLEDGER_STORE_SERIES_H
#define CAPLEDGER_STORE_SERIES_H

#include "store/scope.h"
#include "store/store.h"

/* *out: {benchmark_id, samples, untimed_samples, samples_with_duty_cycle, gpus, first_ts,
 * last_ts, bucket_s, idle_below, idle_min_s, points: [{t, t_end, samples, duty_cycle_mean,
 * duty_cycle_min, duty_cycle_max, idle_share, memory_used_gb, power_w}] (at most points_max,
 * equal time buckets over the timed samples, all GPUs together), idle_stretches: [{gpu, start,
 * end, duration_s, samples}] (at most stretches_max, in time order), idle_stretches_total,
 * idle_seconds_total}. An idle stretch is the definition of core/formats/telemetry.h applied
 * to all the benchmark's timed samples of one GPU (duty cycle below idle_below; it lasts from
 * its first idle sample to the GPU's next busy sample, or to its last idle sample), kept when
 * it lasts at least idle_min_s. Numbers are passed as text (checked by the caller). */
enum store_status store_telemetry_series(struct store *s, const char *benchmark_id,
                                         const char *points_max, const char *idle_below,
                                         const char *idle_min_s, const char *stretches_max,
                                         json_t **out) STORE_MUSTCHECK;

struct usage_series_query {
    const struct team_scope *scope; /* the caller's teams (NULL: all) */
    const char *team;               /* only this team; NULL: all the caller may read */
    const char *bucket;             /* day | week | month */
    const char *from, *to;          /* started_at in [from, to); NULL: open */
    const char *buckets_max;        /* the latest this many buckets are kept (text integer) */
    const char *workload_json; /* {"team", "match"} (http/runsof.h): only that workload's runs */
};

/* *out: {bucket, buckets: [start, …] (contiguous, UTC), truncated (earlier buckets dropped),
 * groups: [{team, workload_class, gpu_hours: [...], runs: [...]}] aligned with buckets}. A run
 * counts in the bucket it started in, with all its GPU-hours (gpus × (ended − started)). */
enum store_status store_usage_series(struct store *s, const struct usage_series_query *q,
                                     json_t **out) STORE_MUSTCHECK;

#endif
