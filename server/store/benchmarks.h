/* Benchmarks: measured runs of a workload on an offer's instance type (the scenario
 * `benchmark` of docs/cost-model.md plus workload_id, offer_id, team, measured_at, repetitions,
 * outcome, failure_reason, ran_by, supersedes). Immutable: a correction is a new benchmark
 * whose `supersedes` names the old one; both stay readable and the old one shows
 * `superseded_by`. Figures derived later from telemetry are shown under `derived`. */
#ifndef CAPLEDGER_STORE_BENCHMARKS_H
#define CAPLEDGER_STORE_BENCHMARKS_H

#include "store/audit.h"
#include "store/evlist.h"
#include "store/store.h"

/* doc: validated client fields (borrowed); team: the workload's team. STORE_CONFLICT: the
 * superseded benchmark already has a correction; STORE_INVALID: a referenced row is gone. */
enum store_status store_benchmark_create(struct store *s, const struct audit_actor *who,
                                         const json_t *doc, const char *team,
                                         json_t **out) STORE_MUSTCHECK;
/* A load-test import: the upload record and the benchmark (doc: columns, with upload_id set
 * to the record's id) in one transaction. */
enum store_status store_benchmark_import(struct store *s, const struct audit_actor *who,
                                         const json_t *doc, const char *team, const json_t *upload,
                                         json_t **out) STORE_MUSTCHECK;
enum store_status store_benchmark_get(struct store *s, const char *id,
                                      json_t **out) STORE_MUSTCHECK;
/* Filters: scope, team, workload_id, offer_id, state (= outcome), measured_at
 * from/to; keyset on (created_at, id). */
enum store_status store_benchmark_list(struct store *s, const struct evlist_query *q,
                                       json_t **out) STORE_MUSTCHECK;

#endif
