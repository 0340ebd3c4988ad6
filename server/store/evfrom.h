/* Inputs from evidence (docs/evidence.md "Inputs from evidence"): the figures a scenario's
 * *_from asks for, computed by PostgreSQL over stored runs, telemetry and benchmarks, each with
 * the query and the counts it came from so an auditor can redo it. Every read is limited to the
 * teams in scope. */
#ifndef CAPLEDGER_STORE_EVFROM_H
#define CAPLEDGER_STORE_EVFROM_H

#include "store/scope.h"
#include "store/store.h"

/* The most runs one *_from may select (a window past it is refused: narrow it). */
#define EVFROM_MAX_RUNS 2000000
/* The longest a run selection may take (then {"timed_out": true}: narrow it). */
#define EVFROM_TIMEOUT_TEXT "20s"

/* The selection of runs of a *_from, each member NULL when not given. workload_id: its team's
 * runs its runs_match recognises (its team's runs of its class tier without one). */
struct evfrom_runs {
    const struct team_scope *scope;
    const char *cluster, *partition, *workload_class, *team, *workload_id, *from, *to;
};

/* queue_wait_from: {runs, quantiles: [101 numbers] (percentile_cont at 0, 0.01, …, 1 of
 * started − submitted in seconds over the GPU runs that started), query}; runs 0 and no
 * quantiles when nothing is selected; runs > EVFROM_MAX_RUNS when too many (nothing computed). */
enum store_status store_evfrom_queue_wait(struct store *s, const struct evfrom_runs *q,
                                          json_t **out) STORE_MUSTCHECK;

/* failure_from: {runs, attempts (COMPLETED, FAILED, OUT_OF_MEMORY, TIMEOUT), failed (FAILED,
 * OUT_OF_MEMORY, TIMEOUT), crashes (NODE_FAIL, PREEMPTED), excluded (CANCELLED, DEADLINE,
 * BOOT_FAIL), gpu_hours (of the runs that started), query}. */
enum store_status store_evfrom_failures(struct store *s, const struct evfrom_runs *q,
                                        json_t **out) STORE_MUSTCHECK;

/* utilization_from: over the stored telemetry samples of benchmark_id (in scope, else
 * STORE_NOT_FOUND): {benchmark_id, samples, with_duty, duty_mean, idle (samples under their
 * upload's idle_below), with_memory, memory_used_peak_gb, memory_total_gb, uploads, query}. */
enum store_status store_evfrom_utilization(struct store *s, const struct team_scope *scope,
                                           const char *benchmark_id, json_t **out) STORE_MUSTCHECK;

/* throughput_from: over the succeeded, not superseded benchmarks of workload_id on offer_id (in
 * scope) that give a throughput: {benchmarks: [ids], n, mean, stddev (sample, n − 1), query}. */
enum store_status store_evfrom_throughput(struct store *s, const struct team_scope *scope,
                                          const char *workload_id, const char *offer_id,
                                          json_t **out) STORE_MUSTCHECK;

#endif
