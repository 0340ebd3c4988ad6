#include "store/compute.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static const char *SQL_OFFER =
    "SELECT json_strip_nulls(json_build_object("
    " 'gpu_model', gpu_model, 'gpus_per_instance', gpus_per_instance,"
    " 'gpu_memory_gb', gpu_memory_gb, 'purchase_option', purchase_option,"
    " 'price_per_hour', price_per_hour, 'currency', currency,"
    " 'reserved_utilization', reserved_utilization,"
    " 'interruption_rate_per_hour', interruption_rate_per_hour,"
    " 'provisioning_delay_s', provisioning_delay_s, 'quota_gpus', quota_gpus,"
    " 'available', available, 'storage_price_gb_month', storage_price_gb_month,"
    " 'egress_price_gb', egress_price_gb, 'orchestration_overhead', orchestration_overhead,"
    " 'provider', provider, 'region', region))"
    " FROM offer WHERE id = $1::uuid";

/* Load points keep numeric members only: importers also store flags (`saturated`) that are
 * not measurements. */
static const char *SQL_BENCHMARK =
    "SELECT json_build_object('team', b.team, 'offer_id', b.offer_id, 'workload_id', b.workload_id,"
    " 'capacity_usable', b.capacity_usable, 'benchmark', json_strip_nulls(json_build_object("
    " 'instances', b.instances, 'throughput_units_per_s', b.throughput_units_per_s,"
    " 'throughput_stddev', b.throughput_stddev,"
    " 'gpu_duty_cycle', coalesce(b.gpu_duty_cycle, d.gpu_duty_cycle),"
    " 'input_stall_fraction', b.input_stall_fraction, 'setup_s', b.setup_s,"
    " 'checkpoint_write_s', b.checkpoint_write_s, 'restart_s', b.restart_s,"
    " 'checkpoint_interval_s', b.checkpoint_interval_s, 'queue_wait_s', b.queue_wait_s,"
    " 'transfer_gb', b.transfer_gb,"
    " 'memory_peak_gb', coalesce(b.memory_peak_gb, nullif(d.memory_peak_gb, 0)),"
    " 'failure_probability', b.failure_probability,"
    " 'data_access', b.data_access, 'restage_gb', b.restage_gb,"
    " 'crash_rate_per_instance_hour', b.crash_rate_per_instance_hour,"
    " 'load_points', (SELECT json_agg((SELECT coalesce(json_object_agg(k, v), '{}')"
    "     FROM jsonb_each(lp) AS e(k, v) WHERE jsonb_typeof(v) = 'number'))"
    "   FROM jsonb_array_elements(b.load_points) AS lp))))"
    " FROM benchmark b LEFT JOIN benchmark_derived d ON d.benchmark_id = b.id"
    " WHERE b.id = $1::uuid";

static const char *SQL_WORKLOAD =
    "SELECT json_build_object('team', team, 'workload', json_strip_nulls(json_build_object("
    " 'kind', kind, 'name', name, 'target_units', target_units, 'unit', unit,"
    " 'memory_required_gb', memory_required_gb, 'dataset_gb', dataset_gb,"
    " 'checkpoint_gb', checkpoint_gb, 'checkpoints_kept', checkpoints_kept,"
    " 'output_tokens_per_request', output_tokens_per_request)))"
    " FROM workload WHERE id = $1::uuid";

#define SCENARIO_JSON                                                                              \
    "json_build_object('id', id, 'team', team, 'name', name, 'workload_ids', "                     \
    "to_json(workload_ids), 'document', document, 'created_by', created_by, 'created_at', "        \
    "created_at)"

static const char *SQL_SCENARIO_CREATE =
    "INSERT INTO scenario (team, name, workload_ids, document, created_by) "
    "VALUES ($1, $2, ARRAY(SELECT json_array_elements_text($3::json))::uuid[], $4::jsonb, $5) "
    "RETURNING " SCENARIO_JSON;

/* The team's scenario of that name (without case) and the first free "name (N)", N ≥ 2. */
static const char *SQL_SCENARIO_NAMED =
    "SELECT json_build_object('id', e.id, 'name', e.name, 'created_by', e.created_by, "
    "'created_at', e.created_at, 'suggested_name', (SELECT left($2, 190) || ' (' || n || ')' "
    " FROM generate_series(2, 10000) n WHERE NOT EXISTS (SELECT 1 FROM scenario x WHERE "
    " x.team = $1 AND lower(x.name) = lower(left($2, 190) || ' (' || n || ')')) ORDER BY n "
    " LIMIT 1)) FROM scenario e WHERE e.team = $1 AND lower(e.name) = lower($2)";

static const char *SQL_SCENARIO_GET =
    "SELECT " SCENARIO_JSON " FROM scenario WHERE id = $1::uuid AND "
    "($2::json IS NULL OR team IN (SELECT json_array_elements_text($2::json)))";

/* Keyset on (created_at, id) rendered as text "created_at|id". */
static const char *SQL_SCENARIO_LIST =
    "SELECT coalesce(json_agg(j ORDER BY ca DESC, id DESC), '[]') FROM ("
    " SELECT " SCENARIO_JSON "::jsonb || jsonb_build_object('cursor_key', "
    "  to_char(created_at, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || '|' || id) AS j, created_at AS ca, id"
    " FROM scenario WHERE ($1::json IS NULL OR team IN (SELECT json_array_elements_text($1::json)))"
    " AND ($4::text IS NULL OR starts_with(lower(name), lower($4)))"
    " AND ($5::text IS NULL OR team = $5)"
    " AND ($2::text IS NULL OR (created_at, id) < (split_part($2, '|', 1)::timestamp, "
    "  split_part($2, '|', 2)::uuid))"
    " ORDER BY created_at DESC, id DESC LIMIT $3) t";

/* A comparison as one scenario asked for it: the content-addressed comparison c with the
 * scenario's link l (team, workloads, who and when). */
#define COMPARISON_JSON                                                                            \
    "json_build_object('sha256', c.sha256, 'scenario_id', l.scenario_id, 'team', l.team, "         \
    "'workload_ids', to_json(l.workload_ids), 'input_sha256', c.input_sha256, 'engine_version', "  \
    "c.engine_version, 'created_by', l.created_by, 'created_at', l.created_at, 'scenario', "       \
    "c.resolved, 'result', c.result)"

#define TEAM_VISIBLE "($2::json IS NULL OR l.team IN (SELECT json_array_elements_text($2::json)))"

static const char *SQL_COMPARISON_INSERT =
    "INSERT INTO comparison (sha256, scenario_id, team, workload_ids, input_sha256,"
    " engine_version, resolved, result, result_jcs, created_by) VALUES ($1, $2::uuid, $3,"
    " ARRAY(SELECT json_array_elements_text($4::json))::uuid[], $5, $6, $7::jsonb, "
    "$8::text::jsonb, $8::text, $9) ON CONFLICT (sha256) DO NOTHING";

static const char *SQL_COMPARISON_LINK =
    "INSERT INTO comparison_link (sha256, scenario_id, team, workload_ids, created_by) "
    "VALUES ($1, $2::uuid, $3, ARRAY(SELECT json_array_elements_text($4::json))::uuid[], $5) "
    "ON CONFLICT DO NOTHING RETURNING to_json(true)";

static const char *SQL_COMPARISON_OF_SCENARIO =
    "SELECT " COMPARISON_JSON " FROM comparison c JOIN comparison_link l ON l.sha256 = c.sha256 "
    "WHERE c.sha256 = $1 AND l.scenario_id = $2::uuid";

static const char *SQL_COMPARISON_GET =
    "SELECT " COMPARISON_JSON " FROM comparison c JOIN comparison_link l ON l.sha256 = c.sha256 "
    "WHERE c.sha256 = $1 AND " TEAM_VISIBLE " ORDER BY l.created_at, l.scenario_id LIMIT 1";

/* Newest first, keyset on (created_at, sha256) rendered as text "created_at|sha256": the
 * comparisons of one scenario ($1), or those answering for a workload of one review ($5) — a
 * link naming the workload, or its scenario's stored workload id. */
static const char *SQL_COMPARISON_LIST =
    "SELECT coalesce(json_agg(j ORDER BY ca DESC, sha DESC), '[]') FROM ("
    " SELECT json_build_object('sha256', c.sha256, 'scenario_id', l.scenario_id, "
    " 'scenario_name', s.name, 'team', l.team, 'workload_ids', to_json(l.workload_ids), "
    " 'input_sha256', c.input_sha256, 'engine_version', c.engine_version, 'winner', "
    " c.result->'winner', 'hourly_price_trap', "
    " coalesce(jsonb_typeof(c.result #> '{flags,hourly_price_trap}') = 'object', false), "
    " 'created_by', l.created_by, 'created_at', l.created_at, 'cursor_key', "
    " to_char(l.created_at, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || '|' || c.sha256) AS j, "
    " l.created_at AS ca, c.sha256 AS sha "
    " FROM comparison_link l JOIN comparison c ON c.sha256 = l.sha256 "
    " JOIN scenario s ON s.id = l.scenario_id "
    " WHERE ($1::uuid IS NULL OR l.scenario_id = $1::uuid) AND " TEAM_VISIBLE
    " AND ($5::uuid IS NULL OR EXISTS (SELECT 1 FROM review r WHERE r.id = $5::uuid AND "
    "  (l.workload_ids && r.workload_ids OR (jsonb_typeof(s.document->'workload') = 'string' "
    "   AND lower(s.document->>'workload') = ANY (r.workload_ids::text[])))))"
    " AND ($3::text IS NULL OR (l.created_at, c.sha256) < (split_part($3, '|', 1)::timestamp, "
    "  split_part($3, '|', 2)))"
    " ORDER BY l.created_at DESC, c.sha256 DESC LIMIT $4) t";

/* These queries take SQL NULL for every team. */
static const char *null_filter(const struct team_scope *scope)
{
    const char *param = team_scope_param(scope);
    return strcmp(param, "null") != 0 ? param : NULL;
}

enum store_status store_offer_as_scenario(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_OFFER, STORE_ARGS(p), out);
}

enum store_status store_benchmark_as_scenario(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_BENCHMARK, STORE_ARGS(p), out);
}

enum store_status store_workload_as_scenario(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_WORKLOAD, STORE_ARGS(p), out);
}

enum store_status store_scenario_create(struct store *s, const struct audit_actor *who,
                                        const char *team, const char *name,
                                        const json_t *workload_ids, const json_t *document,
                                        json_t **out)
{
    char *ids = json_dumps(workload_ids, JSON_COMPACT);
    char *doc = json_dumps(document, JSON_COMPACT | JSON_REAL_PRECISION(17));
    const char *p[] = {team, name, ids ? ids : "[]", doc, who->name};
    enum store_status st = doc ? store_write_audited(s, who, "scenario.create", SQL_SCENARIO_CREATE,
                                                     STORE_ARGS(p), out)
                               : STORE_ERROR;
    free(ids);
    free(doc);
    return st;
}

enum store_status store_scenario_named(struct store *s, const char *team, const char *name,
                                       json_t **out)
{
    const char *p[] = {team, name};
    return store_json(s, SQL_SCENARIO_NAMED, STORE_ARGS(p), out);
}

enum store_status store_scenario_get(struct store *s, const char *id,
                                     const struct team_scope *scope, json_t **out)
{
    const char *p[] = {id, null_filter(scope)};
    return store_json(s, SQL_SCENARIO_GET, STORE_ARGS(p), out);
}

enum store_status store_scenario_list(struct store *s, const struct team_scope *scope,
                                      const char *name_prefix, const char *team, const char *after,
                                      int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {null_filter(scope), after, lim, name_prefix, team};
    return store_json(s, SQL_SCENARIO_LIST, STORE_ARGS(p), out);
}

enum store_status store_comparison_put(struct store *s, const struct audit_actor *who,
                                       const char *sha256, const char *scenario_id,
                                       const char *team, const json_t *workload_ids,
                                       const char *input_sha256, const char *engine_version,
                                       const json_t *resolved, const char *result_jcs, json_t **out)
{
    *out = NULL;
    char *ids = json_dumps(workload_ids, JSON_COMPACT);
    char *doc = json_dumps(resolved, JSON_COMPACT | JSON_REAL_PRECISION(17));
    struct store_conn *c = doc ? store_acquire(s, 2000) : NULL;
    enum store_status st = doc ? (c ? STORE_OK : STORE_UNAVAILABLE) : STORE_ERROR;
    json_t *linked = NULL, *row = NULL;
    if (st == STORE_OK)
        st = store_begin(c);
    if (st == STORE_OK) {
        const char *p[] = {sha256,         scenario_id, team,       ids ? ids : "[]", input_sha256,
                           engine_version, doc,         result_jcs, who->name};
        st = store_exec_tx(c, SQL_COMPARISON_INSERT, STORE_ARGS(p), NULL);
    }
    if (st == STORE_OK) {
        const char *p[] = {sha256, scenario_id, team, ids ? ids : "[]", who->name};
        st = store_json_tx(c, SQL_COMPARISON_LINK, STORE_ARGS(p), &linked);
        if (st == STORE_NOT_FOUND) /* this scenario already has this comparison */
            st = STORE_OK;
    }
    if (st == STORE_OK) {
        const char *p[] = {sha256, scenario_id};
        st = store_json_tx(c, SQL_COMPARISON_OF_SCENARIO, STORE_ARGS(p), &row);
    }
    if (st == STORE_OK && linked) /* audited by its hash, as this scenario's */
        st = store_audit_record_tx(c, who, "comparison.create", sha256, row);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st == STORE_OK) {
        json_object_set_new(row, "created", json_boolean(linked != NULL));
        *out = row;
        row = NULL;
    } else if (c) {
        store_rollback(c);
    }
    if (c)
        store_release(s, c);
    json_decref(linked);
    json_decref(row);
    free(ids);
    free(doc);
    return st;
}

enum store_status store_comparison_get(struct store *s, const char *sha256,
                                       const struct team_scope *scope, json_t **out)
{
    const char *p[] = {sha256, null_filter(scope)};
    return store_json(s, SQL_COMPARISON_GET, STORE_ARGS(p), out);
}

enum store_status store_comparison_list(struct store *s, const char *scenario_id,
                                        const char *review_id, const struct team_scope *scope,
                                        const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {scenario_id, null_filter(scope), after, lim, review_id};
    return store_json(s, SQL_COMPARISON_LIST, STORE_ARGS(p), out);
}
