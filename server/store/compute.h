/* Scenarios and stored comparisons, and the resolution of stored offers and benchmarks into
 * the scenario fields of docs/cost-model.md. */
#ifndef CAPLEDGER_STORE_COMPUTE_H
#define CAPLEDGER_STORE_COMPUTE_H

#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"

/* Every id argument below is a UUID the caller has checked (core/validate.h uuid_valid). */

/* An offer as the scenario `offer` object (only cost-model fields, nulls dropped). */
enum store_status store_offer_as_scenario(struct store *s, const char *id,
                                          json_t **out) STORE_MUSTCHECK;
/* A benchmark as {team, offer_id, workload_id, capacity_usable, benchmark: {cost-model fields}}:
 * the duty cycle and memory peak fall back to those derived from telemetry; load points keep
 * only numeric members. */
enum store_status store_benchmark_as_scenario(struct store *s, const char *id,
                                              json_t **out) STORE_MUSTCHECK;
/* A workload as {team, workload: {cost-model workload fields}}. */
enum store_status store_workload_as_scenario(struct store *s, const char *id,
                                             json_t **out) STORE_MUSTCHECK;

enum store_status store_scenario_create(struct store *s, const struct audit_actor *who,
                                        const char *team, const char *name,
                                        const json_t *workload_ids, const json_t *document,
                                        json_t **out) STORE_MUSTCHECK;
/* The team's scenario named name (without case): {id, name, created_by, created_at,
 * suggested_name (the first free "name (N)")}; STORE_NOT_FOUND when there is none. A create
 * under a taken name answers STORE_CONFLICT (the unique index scenario_team_name). */
enum store_status store_scenario_named(struct store *s, const char *team, const char *name,
                                       json_t **out);
/* scope: the caller's teams (NULL: every team). */
enum store_status store_scenario_get(struct store *s, const char *id,
                                     const struct team_scope *scope, json_t **out) STORE_MUSTCHECK;
/* Newest first; name_prefix (any case) and team narrow it when not NULL. */
enum store_status store_scenario_list(struct store *s, const struct team_scope *scope,
                                      const char *name_prefix, const char *team, const char *after,
                                      int limit, json_t **out) STORE_MUSTCHECK;

/* Stores a comparison (idempotent on its sha256: an identical result is returned as stored).
 * *out: the stored row {sha256, scenario_id, input_sha256, engine_version, created_at, …}. */
enum store_status store_comparison_put(struct store *s, const struct audit_actor *who,
                                       const char *sha256, const char *scenario_id,
                                       const char *team, const json_t *workload_ids,
                                       const char *input_sha256, const char *engine_version,
                                       const json_t *resolved, const char *result_jcs,
                                       json_t **out) STORE_MUSTCHECK;
enum store_status store_comparison_get(struct store *s, const char *sha256,
                                       const struct team_scope *scope,
                                       json_t **out) STORE_MUSTCHECK;
/* Newest first, of one scenario (scenario_id) or answering for a workload of one review
 * (review_id; the other NULL), each {sha256, scenario_id, scenario_name, team, workload_ids,
 * input_sha256, engine_version, winner, hourly_price_trap, created_by, created_at, cursor_key};
 * after: the cursor_key of the last item seen (NULL from the newest). */
enum store_status store_comparison_list(struct store *s, const char *scenario_id,
                                        const char *review_id, const struct team_scope *scope,
                                        const char *after, int limit, json_t **out) STORE_MUSTCHECK;

#endif
