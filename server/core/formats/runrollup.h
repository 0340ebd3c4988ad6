/* What an upload of runs adds to the usage rollups and the queue-wait histograms, computed from
 * the parsed runs (db/migrations/0061_usage_rollup.sql, 0062_queue_wait_histogram.sql,
 * 0110_run_ingest_direct.sql), and the class each run gets.
 *
 * The server parsed every run, so it sums them itself and the store upserts a few aggregated
 * rows instead of aggregating in SQL. Each figure is computed as the SQL that rebuilds the
 * rollups computes it (capledger_usage_rollup_rebuild): a day is the UTC day of submitted_at,
 * GPU-hours gpus × (ended − started) / 3600 in double precision (0 when it never started), the
 * queue wait started − submitted in whole seconds for runs that started on GPUs, its bucket
 * core/qwhist.h's (capledger_qw_bucket). Sums of doubles run in line order, as the SQL did.
 *
 * Use: rollup_prepare for each parsed run (interns its groups; counts nothing yet), then
 * rollup_add for each one that was stored (its key was new). The groups that gained runs are
 * emitted as JSON rows for the store's upsert; rollup_clear starts again (bounded memory: the
 * store flushes when rollup_groups passes its limit). */
#ifndef CAPLEDGER_CORE_RUNROLLUP_H
#define CAPLEDGER_CORE_RUNROLLUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/formats/run.h"

/* The class map of one cluster (cluster.default_class and its cluster_partition rows). */
struct run_classmap_entry {
    char *partition;
    char *gpu_model; /* "" = any model */
    char *klass;     /* the map's label as given, or NULL */
};
struct run_classmap {
    char *default_class; /* the map's label as given, or NULL */
    struct run_classmap_entry *e;
    size_t n;
};

/* {"default": "production" | null, "parts": [{"partition": …, "gpu_model": …, "class": … |
 * null}, …]} (borrowed) into *m. Returns 0, or -1 (out of memory, or not that shape). */
int run_classmap_from_json(const json_t *v, struct run_classmap *m)
    __attribute__((warn_unused_result));
void run_classmap_free(struct run_classmap *m);
/* A run's class: upload_class (?class=) when given, else the run's own, else the map's entry
 * for its partition and GPU model, else for its partition with any model (""), else the
 * cluster's default, else NULL (unclassified). Entries without a class are passed over. m may
 * be NULL (a cluster without a map). */
const char *run_class_resolve(const char *upload_class, const struct run *r,
                              const struct run_classmap *m);

/* One run's share, kept until its key is decided. */
struct rollup_ref {
    uint32_t day_group;
    int32_t hist_group; /* -1: not a GPU run that started */
    double gh;
    int64_t qw_s;
    double util;  /* NAN: unknown */
    bool gpu_run; /* gpus > 0 */
    bool started;
};

struct rollup;
struct rollup *rollup_new(void);
void rollup_free(struct rollup *t);
/* Interns the groups of r (classed klass, may be NULL) into *ref. Returns 0, -1 out of memory. */
int rollup_prepare(struct rollup *t, const struct run *r, const char *klass, struct rollup_ref *ref)
    __attribute__((warn_unused_result));
/* Counts a stored run. */
void rollup_add(struct rollup *t, const struct rollup_ref *ref);
/* Groups interned (with or without runs). */
size_t rollup_groups(const struct rollup *t);
/* The day groups that gained runs, in the order they were first met: [{day, team,
 * workload_class, cluster, partition, gpu_model, state, runs, gpu_runs, gh_runs,
 * never_started, gh, qw_sum, qw_n, util_sum, util_n}, …]; NULL when out of memory. */
json_t *rollup_day_json(const struct rollup *t);
/* The histogram's groups that gained runs: [{month, team, workload_class, cluster, state,
 * bucket, n}, …]; NULL when out of memory. */
json_t *rollup_hist_json(const struct rollup *t);
/* Forgets every group. */
void rollup_clear(struct rollup *t);

/* UTC midnight of the day, and the first instant of the month, of epoch second s. */
int64_t rollup_day_start(int64_t s);
int64_t rollup_month_start(int64_t s);

#endif
