/* 90-day reviews, artifacts and the evidence checklist.
 *
 * Phases are computed by PostgreSQL from started_on and today's UTC date, so every server
 * instance shows the same phase whatever its own clock zone. The checklist gathers its facts
 * with a few queries (the review's workloads with their run and benchmark counts, the cited
 * comparisons, and for each option of the first one the stored benchmark and offer it was
 * resolved from); core/ledger/checklist.c decides each item from them. */
#include "store/reviews.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/checklist.h"
#include "core/ledger/contradiction.h"
#include "core/ledger/drift.h"
#include "core/ledger/outcome.h"
#include "store/store_private.h"

#define TODAY "((now() AT TIME ZONE 'UTC')::date)"
#define PHASES                                                                                     \
    "(VALUES ('evidence_plan', 'Evidence plan', 1, 30), "                                          \
    "('smallest_complete_workflow', 'Smallest complete workflow', 31, 60), "                       \
    "('boundary_test', 'Boundary test', 61, 90)) AS ph(name, title, first_day, last_day)"
#define REVIEW_DAY "(" TODAY " - r.started_on + 1)"
#define REVIEW_JSON                                                                                \
    "json_build_object('id', r.id, 'title', r.title, 'question', r.question, "                     \
    "'workload_ids', to_json(r.workload_ids), 'owner', r.owner, 'started_on', r.started_on, "      \
    "'status', r.status, 'drift_threshold', r.drift_threshold, 'outcome_threshold', "              \
    "r.outcome_threshold, 'day', " REVIEW_DAY ", "                                                 \
    "'current_phase', (SELECT ph.name FROM " PHASES " WHERE " REVIEW_DAY                           \
    " BETWEEN ph.first_day AND ph.last_day), "                                                     \
    "'phases', (SELECT json_agg(json_build_object('phase', ph.name, 'title', ph.title, "           \
    "'first_day', ph.first_day, 'last_day', ph.last_day, "                                         \
    "'starts_on', r.started_on + ph.first_day - 1, 'ends_on', r.started_on + ph.last_day - 1, "    \
    "'current', " REVIEW_DAY " BETWEEN ph.first_day AND ph.last_day) ORDER BY ph.first_day) "      \
    "FROM " PHASES "), "                                                                           \
    "'version', r.version, 'created_by', r.created_by, 'created_at', r.created_at, "               \
    "'updated_at', r.updated_at)"

/* A review is visible to a team member when one of its workloads belongs to their teams. */
#define REVIEW_VISIBLE(param)                                                                      \
    "(" param "::jsonb = 'null'::jsonb OR EXISTS (SELECT 1 FROM workload w "                       \
    "WHERE w.id = ANY (r.workload_ids) AND w.team IN "                                             \
    "(SELECT jsonb_array_elements_text(" param "::jsonb))))"

/* A record of team `team` is visible under the caller's team filter (a JSON array, or JSON null
 * for every team). */
#define TEAM_SEES(param, team)                                                                     \
    "(" param "::jsonb = 'null'::jsonb OR " team " IN "                                            \
    "(SELECT jsonb_array_elements_text(" param "::jsonb)))"

/* A scenario document's reference as a uuid, or NULL for text that is not one: CASE keeps the
 * cast from seeing it, and comparing uuids (not text) lets the primary key index serve. */
#define UUID_OR_NULL(expr)                                                                         \
    "(CASE WHEN (" expr ") ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "   \
    "THEN (" expr ")::uuid END)"

static const char *SQL_REFS =
    "SELECT json_build_object('owner_ok', EXISTS (SELECT 1 FROM app_user "
    "WHERE username = $1 AND role = 'owner' AND disabled_at IS NULL), "
    "'missing_workloads', coalesce((SELECT json_agg(e.i - 1 ORDER BY e.i) "
    "FROM json_array_elements_text($2::json) WITH ORDINALITY AS e(id, i) "
    "WHERE NOT EXISTS (SELECT 1 FROM workload w WHERE w.id = e.id::uuid)), '[]'))";

/* The thresholds' defaults, the numbers of core/ledger/drift.h and outcome.h as SQL text. */
#define DRIFT_DEFAULT_SQL STORE_SQL_NUMBER(DRIFT_DEFAULT_THRESHOLD)
#define OUTCOME_DEFAULT_SQL STORE_SQL_NUMBER(OUTCOME_DEFAULT_THRESHOLD)

static const char *SQL_CREATE =
    "INSERT INTO review AS r (title, question, workload_ids, owner, started_on, drift_threshold,"
    " created_by, outcome_threshold) SELECT $1, $2, ARRAY(SELECT "
    "json_array_elements_text($3::json))::uuid[], $4, $5::date, "
    "coalesce($6::float8, " DRIFT_DEFAULT_SQL "), $7, "
    "coalesce($8::float8, " OUTCOME_DEFAULT_SQL ") RETURNING " REVIEW_JSON;

static const char *SQL_GET =
    "SELECT " REVIEW_JSON " FROM review r WHERE r.id = $1::uuid AND " REVIEW_VISIBLE("$2");

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM (SELECT " REVIEW_JSON
    " AS j, r.created_at, r.id FROM review r WHERE " REVIEW_VISIBLE(
        "$1") " AND ($2::text IS NULL OR r.status = $2) AND ($3::text IS NULL OR r.owner = $3)"
              " AND ($4::timestamptz IS NULL OR (r.created_at, r.id) > ($4::timestamptz, $5::uuid))"
              " ORDER BY r.created_at, r.id LIMIT $6::integer) t";

static const char *SQL_UPDATE =
    "UPDATE review AS r SET title = $2, question = $3, "
    "workload_ids = ARRAY(SELECT json_array_elements_text($4::json))::uuid[], owner = $5, "
    "started_on = $6::date, drift_threshold = coalesce($7::float8, " DRIFT_DEFAULT_SQL "), "
    "outcome_threshold = coalesce($9::float8, " OUTCOME_DEFAULT_SQL
    "), version = r.version + 1, updated_at = now() "
    "WHERE r.id = $1::uuid AND r.version = $8::integer RETURNING " REVIEW_JSON;

#define ARTIFACT_JSON                                                                              \
    "json_build_object('id', a.id, 'review_id', a.review_id, 'title', a.title, "                   \
    "'phase', a.phase, 'contributor', a.contributor, 'due_on', a.due_on, "                         \
    "'representative_inputs', a.representative_inputs, 'baseline', a.baseline, "                   \
    "'status', a.status, 'evidence', to_json(a.evidence), 'exercised', a.exercised, "              \
    "'version', a.version, 'created_by', a.created_by, 'created_at', a.created_at, "               \
    "'updated_at', a.updated_at)"

static const char *SQL_ARTIFACT_CREATE =
    "INSERT INTO review_artifact AS a (review_id, title, phase, contributor, due_on, "
    "representative_inputs, baseline, status, evidence, exercised, created_by) "
    "SELECT $1::uuid, d.title, d.phase, d.contributor, d.due_on, d.representative_inputs, "
    "d.baseline, coalesce(d.status, 'planned'), "
    "ARRAY(SELECT jsonb_array_elements_text(coalesce($2::jsonb->'evidence', '[]'))), "
    "coalesce($2::jsonb->'exercised', '[]'), $3 "
    "FROM jsonb_to_record($2::jsonb) AS d(title text, phase text, contributor text, due_on date, "
    "representative_inputs text, baseline text, status text) RETURNING " ARTIFACT_JSON;

static const char *SQL_ARTIFACT_LIST =
    "SELECT coalesce(json_agg(" ARTIFACT_JSON " ORDER BY a.created_at, a.id), '[]') "
    "FROM review_artifact a WHERE a.review_id = $1::uuid";

static const char *SQL_ARTIFACT_GET = "SELECT " ARTIFACT_JSON " FROM review_artifact a "
                                      "WHERE a.review_id = $1::uuid AND a.id = $2::uuid";

static const char *SQL_ARTIFACT_UPDATE =
    "UPDATE review_artifact AS a SET title = d.title, phase = d.phase, "
    "contributor = d.contributor, due_on = d.due_on, "
    "representative_inputs = d.representative_inputs, baseline = d.baseline, "
    "status = coalesce(d.status, 'planned'), "
    "evidence = ARRAY(SELECT jsonb_array_elements_text(coalesce($3::jsonb->'evidence', '[]'))), "
    "exercised = coalesce($3::jsonb->'exercised', '[]'), version = a.version + 1, "
    "updated_at = now() "
    "FROM jsonb_to_record($3::jsonb) AS d(title text, phase text, contributor text, due_on date, "
    "representative_inputs text, baseline text, status text) "
    "WHERE a.review_id = $1::uuid AND a.id = $2::uuid AND a.version = $4::integer "
    "RETURNING " ARTIFACT_JSON;

/* An id is evidence when it names a benchmark or an upload (runs, telemetry, price sheets,
 * load-test imports), or is the hash of a stored comparison or what-if replay. CASE keeps the uuid
 * cast from seeing text that is not one. */
static const char *SQL_EVIDENCE_UNKNOWN =
    "SELECT coalesce(json_agg(e.i - 1 ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(id, i) WHERE NOT CASE "
    "WHEN e.id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN "
    "EXISTS (SELECT 1 FROM benchmark b WHERE b.id = e.id::uuid) "
    "OR EXISTS (SELECT 1 FROM upload u WHERE u.id = e.id::uuid) "
    "WHEN e.id ~ '^[0-9a-f]{64}$' THEN EXISTS (SELECT 1 FROM comparison c WHERE c.sha256 = e.id) "
    "OR EXISTS (SELECT 1 FROM whatif w WHERE w.sha256 = e.id) "
    "ELSE false END";

/* The indexes of ids a team member may not cite: benchmarks of teams outside $2; uploads they
 * cannot list (another team's, or a team-less one someone else made — offer price sheets are
 * everyone's); comparisons no scenario of those teams asked for, replays none of them stored.
 * Unknown ids are left to SQL_EVIDENCE_UNKNOWN. */
static const char *SQL_EVIDENCE_FOREIGN =
    "SELECT coalesce(json_agg(e.i - 1 ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(id, i) WHERE CASE "
    "WHEN e.id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN "
    "EXISTS (SELECT 1 FROM benchmark b WHERE b.id = e.id::uuid AND b.team NOT IN "
    "  (SELECT json_array_elements_text($2::json))) "
    "OR EXISTS (SELECT 1 FROM upload u WHERE u.id = e.id::uuid AND u.kind <> 'offers' "
    "  AND u.created_by IS DISTINCT FROM $3::uuid AND (u.team IS NULL "
    "  OR u.team NOT IN (SELECT json_array_elements_text($2::json)))) "
    "WHEN e.id ~ '^[0-9a-f]{64}$' THEN (EXISTS (SELECT 1 FROM comparison c WHERE c.sha256 = e.id) "
    "  AND NOT EXISTS (SELECT 1 FROM comparison_link l WHERE l.sha256 = e.id AND l.team IN "
    "  (SELECT json_array_elements_text($2::json)))) "
    "  OR (EXISTS (SELECT 1 FROM whatif_link l WHERE l.sha256 = e.id) "
    "  AND NOT EXISTS (SELECT 1 FROM whatif_link l WHERE l.sha256 = e.id AND l.team IN "
    "  (SELECT json_array_elements_text($2::json)))) "
    "ELSE false END";

/* The indexes into ids of what the caller's teams may not see (a JSON array, caller decrefs). */
static enum store_status evidence_foreign_indexes(struct store *s, const json_t *ids,
                                                  const struct team_scope *scope,
                                                  const char *user_id, json_t **foreign)
{
    *foreign = NULL;
    if (!json_array_size(ids))
        return STORE_OK;
    char *text = json_dumps(ids, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {text, team_scope_param(scope), user_id};
    enum store_status st = store_json(s, SQL_EVIDENCE_FOREIGN, STORE_ARGS(params), foreign);
    free(text);
    return st;
}

enum store_status store_evidence_foreign(struct store *s, const json_t *ids,
                                         const struct team_scope *scope, const char *user_id,
                                         const char *prefix, struct problems *p)
{
    json_t *foreign = NULL;
    enum store_status st = evidence_foreign_indexes(s, ids, scope, user_id, &foreign);
    size_t i;
    json_t *idx;
    json_array_foreach(foreign, i, idx)
    {
        char ptr[256];
        snprintf(ptr, sizeof ptr, "%s/%lld", prefix, (long long)json_integer_value(idx));
        /* The same words as for an unknown id: another team's evidence must not be confirmed. */
        problems_add(p, ptr, "names no benchmark, upload or stored comparison");
    }
    json_decref(foreign);
    return st;
}

enum store_status store_evidence_hide_foreign(struct store *s, json_t *artifact,
                                              const struct team_scope *scope, const char *user_id,
                                              size_t *hidden)
{
    *hidden = 0;
    json_t *ids = json_object_get(artifact, "evidence");
    json_t *foreign = NULL;
    enum store_status st = evidence_foreign_indexes(s, ids, scope, user_id, &foreign);
    if (st != STORE_OK || !json_array_size(foreign)) {
        json_decref(foreign);
        return st;
    }
    json_t *kept = json_array();
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        int is_foreign = 0;
        size_t k;
        json_t *idx;
        json_array_foreach(foreign, k, idx) is_foreign |= (size_t)json_integer_value(idx) == i;
        if (!is_foreign)
            json_array_append(kept, id);
    }
    *hidden = json_array_size(ids) - json_array_size(kept);
    json_object_set_new(artifact, "evidence", kept);
    json_object_set_new(artifact, "evidence_hidden", json_integer((json_int_t)*hidden));
    json_decref(foreign);
    return STORE_OK;
}

enum store_status store_decision_hide_foreign(struct store *s, json_t *decision,
                                              const struct team_scope *scope, const char *user_id,
                                              size_t *hidden)
{
    static const char *const lists[] = {"evidence", "comparison_sha256", NULL};
    *hidden = 0;
    json_t *record = json_object_get(decision, "record");
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++) {
        /* the record's lists, then the row's own copy of the comparison hashes */
        json_t *ids = lists[l] ? json_object_get(record, lists[l])
                               : json_object_get(decision, "comparison_sha256");
        json_t *foreign = NULL;
        enum store_status st = evidence_foreign_indexes(s, ids, scope, user_id, &foreign);
        if (st != STORE_OK) {
            json_decref(foreign);
            return st;
        }
        size_t k;
        json_t *idx;
        json_array_foreach(foreign, k, idx)
        {
            if (json_array_set_new(ids, (size_t)json_integer_value(idx), json_string("hidden")) ==
                    0 &&
                lists[l])
                (*hidden)++;
        }
        json_decref(foreign);
    }
    if (*hidden)
        json_object_set_new(decision, "evidence_hidden", json_integer((json_int_t)*hidden));
    return STORE_OK;
}

/* ---- checklist facts ---- */

static const char *SQL_FACTS_REVIEW =
    "SELECT json_build_object('id', r.id, 'workloads', coalesce((SELECT json_agg("
    "json_build_object('id', w.id, 'name', w.name, 'team', w.team, 'class', w.class, "
    "'target_units', w.target_units, 'memory_required_gb', w.memory_required_gb, "
    "'dataset_gb', w.dataset_gb, 'dataset_location', w.dataset_location, "
    "'team_runs', (SELECT coalesce(sum(x.gpu_runs), 0)::bigint FROM run_usage_month x "
    "  WHERE x.team = w.team AND capledger_class_tier(x.workload_class) = w.class), "
    "'team_run_uploads', (SELECT coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT "
    "  x.upload_id AS u FROM run_usage_upload x WHERE x.team = w.team "
    "  AND capledger_class_tier(x.workload_class) = w.class AND x.gpu_runs > 0 ORDER BY 1 "
    "  LIMIT 20) t), "
    "'benchmark_repetitions', (SELECT coalesce(sum(b.repetitions), 0) FROM benchmark b "
    "  WHERE b.workload_id = w.id), "
    "'benchmarks', (SELECT coalesce(json_agg(b.id ORDER BY b.created_at, b.id), '[]') "
    "  FROM benchmark b WHERE b.workload_id = w.id)) "
    "ORDER BY array_position(r.workload_ids, w.id)) "
    "FROM workload w WHERE w.id = ANY (r.workload_ids) AND " TEAM_SEES(
        "$2",
        "w.team") "), '[]'), "
                  "'unmapped_classes', (SELECT coalesce(json_agg(l.label ORDER BY l.label), '[]') "
                  "FROM (SELECT DISTINCT x.workload_class AS label FROM run_usage_month x "
                  "JOIN workload w ON w.team = x.team AND w.id = ANY (r.workload_ids) "
                  "AND " TEAM_SEES(
                      "$2",
                      "w.team") " "
                                "WHERE x.workload_class IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                                "workload_class_tier t WHERE t.label = x.workload_class) ORDER BY "
                                "1 LIMIT 100) l)) "
                                "FROM review r WHERE r.id = $1::uuid";

/* The workloads a comparison answers for: over every scenario that asked for it (its links),
 * the workloads listed and the scenario's workload when that was a stored workload's id. */
#define COMPARISON_WORKLOADS                                                                       \
    "(SELECT coalesce(jsonb_agg(DISTINCT x.w), '[]'::jsonb) FROM ("                                \
    " SELECT unnest(cl.workload_ids)::text AS w FROM comparison_link cl WHERE cl.sha256 = "        \
    "c.sha256"                                                                                     \
    " UNION SELECT lower(s2.document->>'workload') FROM comparison_link cl2"                       \
    " JOIN scenario s2 ON s2.id = cl2.scenario_id WHERE cl2.sha256 = c.sha256"                     \
    " AND jsonb_typeof(s2.document->'workload') = 'string') x)"

static const char *SQL_FACTS_LATEST =
    "SELECT to_json(c.sha256) FROM review r, comparison c WHERE r.id = $1::uuid "
    "AND " COMPARISON_WORKLOADS " ?| r.workload_ids::text[] "
    "AND EXISTS (SELECT 1 FROM comparison_link l WHERE l.sha256 = c.sha256 AND " TEAM_SEES(
        "$2", "l.team") ") "
                        "ORDER BY c.created_at DESC, c.sha256 LIMIT 1";

static const char *SQL_FACTS_CITED =
    "SELECT coalesce(json_agg(json_build_object('sha256', e.h, 'stored', c.sha256 IS NOT NULL, "
    "'workload_ids', CASE WHEN c.sha256 IS NOT NULL THEN " COMPARISON_WORKLOADS " END, "
    "'resolved', CASE WHEN e.i = 1 THEN c.resolved END, "
    "'result', CASE WHEN e.i = 1 THEN c.result END) ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(h, i) "
    "LEFT JOIN comparison c ON c.sha256 = e.h";

/* For each option of a comparison, the stored records its scenario named by id (an option
 * whose benchmark was an id takes that benchmark's offer), and how many started GPU runs of
 * its cluster there are — a run's cluster matches the option's name or the offer's name. The
 * run counts and their uploads come from the rollups (run_usage_month's qw_n counts the runs
 * that started on GPUs; run_usage_upload, 0111), as do the workloads' team_runs above. */
static const char *SQL_FACTS_OPTIONS =
    "SELECT coalesce(json_agg(json_build_object('name', o.opt->>'name', "
    "'benchmark_id', b.id, 'data_loading_s', b.data_loading_s, "
    "'telemetry', b.id IS NOT NULL AND EXISTS (SELECT 1 FROM benchmark_derived bd "
    "  WHERE bd.benchmark_id = b.id), "
    "'telemetry_uploads', (SELECT coalesce(json_agg(u.id ORDER BY u.created_at, u.id), '[]') "
    "  FROM upload u WHERE b.id IS NOT NULL AND u.kind = 'telemetry' AND u.benchmark_id = b.id), "
    "'offer_name', f.name, "
    "'cluster_runs', (SELECT coalesce(sum(x.qw_n), 0)::bigint FROM run_usage_month x "
    "  WHERE x.cluster IN (o.opt->>'name', f.name) AND " TEAM_SEES(
        "$2",
        "x.team") "), "
                  "'cluster_run_uploads', (SELECT coalesce(json_agg(t.u), '[]') FROM (SELECT "
                  "DISTINCT "
                  "  x.upload_id AS u FROM run_usage_upload x WHERE x.cluster IN (o.opt->>'name', "
                  "f.name) "
                  "  AND x.qw_n > 0 AND " TEAM_SEES(
                      "$2",
                      "x.team") " ORDER BY 1 LIMIT 20) t)) "
                                "ORDER BY o.i), '[]') "
                                "FROM comparison c LEFT JOIN scenario s ON s.id = c.scenario_id "
                                "CROSS JOIN LATERAL jsonb_array_elements(c.resolved->'options') "
                                "WITH ORDINALITY AS o(opt, i) "
                                "LEFT JOIN LATERAL (SELECT s.document->'options'->(o.i::int - 1) "
                                "AS doc) d ON true "
                                "LEFT JOIN benchmark b ON jsonb_typeof(d.doc->'benchmark') = "
                                "'string' "
                                "  AND b.id = " UUID_OR_NULL(
                                    "d.doc->>'benchmark'") " AND EXISTS (SELECT 1 FROM workload bw "
                                                           "  WHERE bw.id = b.workload_id "
                                                           "AND " TEAM_SEES(
                                                               "$2", "bw.team") ") "
                                                                                "LEFT JOIN offer f "
                                                                                "ON f.id = "
                                                                                "coalesce(CASE "
                                                                                "WHEN "
                                                                                "jsonb_typeof(d."
                                                                                "doc->'offer') = "
                                                                                "'string' "
                                                                                "  "
                                                                                "THEN"
                                                                                " " UUID_OR_NULL(
                                                                                    "d.doc->>'"
                                                                                    "offer'") " END"
                                                                                              ", "
                                                                                              "b."
                                                                                              "offe"
                                                                                              "r_"
                                                                                              "id) "
                                                                                              "WHER"
                                                                                              "E "
                                                                                              "c."
                                                                                              "sha2"
                                                                                              "56 "
                                                                                              "= "
                                                                                              "$1";

/* What the stored evidence says of the assumptions a scenario may type (core/ledger/
 * contradiction.h): the failed share of the attempts among the GPU runs of the review's
 * workloads' teams and classes ($1 review, $2 scope), and per option ($3: [[option name, offer
 * name], …]) the mean wait of the started GPU runs of its cluster — from the rollups, as the
 * checklist counts them. */
static const char *SQL_FACTS_EVIDENCE =
    "WITH w AS (SELECT DISTINCT w.team, w.class FROM review r JOIN workload w ON w.id = ANY "
    "(r.workload_ids) WHERE r.id = $1::uuid AND " TEAM_SEES(
        "$2",
        "w.team") "), "
                  "f AS (SELECT x.* FROM run_usage_month x JOIN w ON x.team = w.team AND "
                  "capledger_class_tier(x.workload_class) = w.class) "
                  "SELECT json_build_object('failure', (SELECT json_build_object('attempts', "
                  "coalesce(sum(f.gpu_runs) FILTER (WHERE f.state IN ('COMPLETED', 'FAILED', "
                  "'OUT_OF_MEMORY', "
                  "'TIMEOUT')), 0)::bigint, 'failed', coalesce(sum(f.gpu_runs) FILTER (WHERE "
                  "f.state IN "
                  "('FAILED', 'OUT_OF_MEMORY', 'TIMEOUT')), 0)::bigint, 'uploads', (SELECT "
                  "coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT u.upload_id AS u FROM "
                  "run_usage_upload "
                  "u JOIN w ON u.team = w.team AND capledger_class_tier(u.workload_class) = "
                  "w.class WHERE "
                  "u.gpu_runs > 0 ORDER BY 1 LIMIT 20) t)) FROM f), "
                  "'queue', (SELECT coalesce(json_agg((SELECT json_build_object('runs', "
                  "coalesce(sum(x.qw_n), "
                  "0)::bigint, 'mean_s', (sum(x.qw_sum) / nullif(sum(x.qw_n), 0))::float8, "
                  "'uploads', (SELECT "
                  "coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT u.upload_id AS u FROM "
                  "run_usage_upload "
                  "u WHERE u.cluster IN (e.value->>0, e.value->>1) AND u.qw_n > 0 AND " TEAM_SEES(
                      "$2",
                      "u.team") " ORDER BY 1 LIMIT 20) t)) FROM run_usage_month x WHERE x.cluster "
                                "IN "
                                "(e.value->>0, e.value->>1) AND " TEAM_SEES(
                                    "$2",
                                    "x.team") ") ORDER BY e.i), '[]') FROM "
                                              "json_array_elements($3::json) WITH ORDINALITY AS "
                                              "e(value, i)))";

/* Typed against evidence for the first cited comparison (NULL when it is not stored): the
 * evidence figures read here, recomputed and decided in core (contradiction_evaluate). */
static enum store_status typed_vs_evidence(struct store_conn *c, const char *review_id,
                                           const char *scope, const json_t *compared,
                                           const json_t *options, json_t **out)
{
    *out = NULL;
    if (!compared)
        return STORE_OK;
    const json_t *resolved = json_object_get(compared, "resolved");
    json_t *pairs = json_array();
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(resolved, "options"), i, o)
    {
        const json_t *f = json_array_get(options, i);
        json_array_append_new(
            pairs, json_pack("[O, O]",
                             json_object_get(o, "name") ? json_object_get(o, "name") : json_null(),
                             json_object_get(f, "offer_name") ? json_object_get(f, "offer_name")
                                                              : json_null()));
    }
    char *pairs_text = json_dumps(pairs, JSON_COMPACT);
    json_decref(pairs);
    if (!pairs_text)
        return STORE_ERROR;
    const char *p[] = {review_id, scope, pairs_text};
    json_t *evidence = NULL;
    enum store_status st = store_json_tx(c, SQL_FACTS_EVIDENCE, STORE_ARGS(p), &evidence);
    free(pairs_text);
    if (st != STORE_OK)
        return st;
    *out = contradiction_evaluate(resolved, options, evidence);
    json_decref(evidence);
    return *out ? STORE_OK : STORE_ERROR;
}

/* ---- references ---- */

/* Appends a problem for an owner that is not an owner and for each unknown workload id. */
static enum store_status check_review_refs(struct store_conn *c, const json_t *doc,
                                           struct problems *p)
{
    json_t *ids = json_object_get(doc, "workload_ids");
    char *ids_text = json_dumps(ids ? ids : json_array(), JSON_COMPACT | JSON_ENCODE_ANY);
    if (!ids_text)
        return STORE_ERROR;
    const char *owner = json_string_value(json_object_get(doc, "owner"));
    const char *params[] = {owner, ids_text};
    json_t *refs = NULL;
    enum store_status st = store_json_tx(c, SQL_REFS, STORE_ARGS(params), &refs);
    free(ids_text);
    if (st != STORE_OK)
        return st;
    if (!json_is_true(json_object_get(refs, "owner_ok")))
        problems_add(p, "/owner", "'%s' is not a user with role owner", owner ? owner : "");
    size_t i;
    json_t *idx;
    json_array_foreach(json_object_get(refs, "missing_workloads"), i, idx)
    {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/workload_ids/%lld", (long long)json_integer_value(idx));
        problems_add(p, ptr, "no workload with this id");
    }
    json_decref(refs);
    return STORE_OK;
}

enum store_status store_evidence_check(struct store_conn *c, const json_t *ids, const char *prefix,
                                       struct problems *p)
{
    if (!json_array_size(ids))
        return STORE_OK;
    char *text = json_dumps(ids, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {text};
    json_t *unknown = NULL;
    enum store_status st = store_json_tx(c, SQL_EVIDENCE_UNKNOWN, STORE_ARGS(params), &unknown);
    free(text);
    if (st != STORE_OK)
        return st;
    size_t i;
    json_t *idx;
    json_array_foreach(unknown, i, idx)
    {
        char ptr[256];
        snprintf(ptr, sizeof ptr, "%s/%lld", prefix, (long long)json_integer_value(idx));
        problems_add(p, ptr, "names no benchmark, upload or stored comparison");
    }
    json_decref(unknown);
    return STORE_OK;
}

/* Checks references with check(), then runs the write and its audit row, all in one
 * transaction; STORE_INVALID (nothing written) when check() appended problems, STORE_NOT_FOUND
 * when the write matched no row. */
static enum store_status
checked_write(struct store *s, const struct audit_actor *who, const char *action,
              enum store_status (*check)(struct store_conn *, const json_t *, struct problems *),
              const json_t *doc, struct problems *p, const char *sql, int nparams,
              const char *const *params, json_t **out)
{
    struct audit_check c = {.fn = check, .doc = doc, .p = p};
    return store_write_audited_checked(s, who, action, &c, sql, nparams, params, out);
}

/* ---- reviews ---- */

static char *real_text(const json_t *v, char *buf, size_t size)
{
    if (!json_is_number(v))
        return NULL;
    snprintf(buf, size, "%.17g", json_number_value(v));
    return buf;
}

enum store_status store_review_create(struct store *s, const struct audit_actor *who,
                                      const json_t *doc, struct problems *p, json_t **out)
{
    char *ids = json_dumps(json_object_get(doc, "workload_ids"), JSON_COMPACT | JSON_ENCODE_ANY);
    char threshold[40], outcome[40];
    const char *params[] = {
        json_string_value(json_object_get(doc, "title")),
        json_string_value(json_object_get(doc, "question")),
        ids ? ids : "[]",
        json_string_value(json_object_get(doc, "owner")),
        json_string_value(json_object_get(doc, "started_on")),
        real_text(json_object_get(doc, "drift_threshold"), threshold, sizeof threshold),
        who->name,
        real_text(json_object_get(doc, "outcome_threshold"), outcome, sizeof outcome)};
    enum store_status st = checked_write(s, who, "review.create", check_review_refs, doc, p,
                                         SQL_CREATE, STORE_ARGS(params), out);
    free(ids);
    return st;
}

enum store_status store_review_get(struct store *s, const char *id, const struct team_scope *scope,
                                   json_t **out)
{
    const char *params[] = {id, team_scope_param(scope)};
    return store_json(s, SQL_GET, STORE_ARGS(params), out);
}

enum store_status store_review_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *params[] = {
        team_scope_param(q->scope), q->state, q->team, q->after_at, q->after_id, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(params), out);
}

enum store_status store_review_update(struct store *s, const struct audit_actor *who,
                                      const char *id, long expected_version, const json_t *doc,
                                      struct problems *p, json_t **out)
{
    char *ids = json_dumps(json_object_get(doc, "workload_ids"), JSON_COMPACT | JSON_ENCODE_ANY);
    char threshold[40], version[24], outcome[40];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *params[] = {
        id,
        json_string_value(json_object_get(doc, "title")),
        json_string_value(json_object_get(doc, "question")),
        ids ? ids : "[]",
        json_string_value(json_object_get(doc, "owner")),
        json_string_value(json_object_get(doc, "started_on")),
        real_text(json_object_get(doc, "drift_threshold"), threshold, sizeof threshold),
        version,
        real_text(json_object_get(doc, "outcome_threshold"), outcome, sizeof outcome)};
    enum store_status st = checked_write(s, who, "review.update", check_review_refs, doc, p,
                                         SQL_UPDATE, STORE_ARGS(params), out);
    free(ids);
    /* No row: the review exists (the caller read it) but its version moved on. */
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

/* ---- artifacts ---- */

static enum store_status check_artifact_refs(struct store_conn *c, const json_t *doc,
                                             struct problems *p)
{
    return store_evidence_check(c, json_object_get(doc, "evidence"), "/evidence", p);
}

enum store_status store_artifact_create(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const json_t *doc,
                                        struct problems *p, json_t **out)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {review_id, text, who->name};
    enum store_status st = checked_write(s, who, "review_artifact.create", check_artifact_refs, doc,
                                         p, SQL_ARTIFACT_CREATE, STORE_ARGS(params), out);
    free(text);
    return st;
}

enum store_status store_artifact_list(struct store *s, const char *review_id, json_t **out)
{
    const char *params[] = {review_id};
    return store_json(s, SQL_ARTIFACT_LIST, STORE_ARGS(params), out);
}

enum store_status store_artifact_get(struct store *s, const char *review_id, const char *id,
                                     json_t **out)
{
    const char *params[] = {review_id, id};
    return store_json(s, SQL_ARTIFACT_GET, STORE_ARGS(params), out);
}

enum store_status store_artifact_update(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const char *id,
                                        long expected_version, const json_t *doc,
                                        struct problems *p, json_t **out)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    char version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *params[] = {review_id, id, text, version};
    enum store_status st = checked_write(s, who, "review_artifact.update", check_artifact_refs, doc,
                                         p, SQL_ARTIFACT_UPDATE, STORE_ARGS(params), out);
    free(text);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

enum store_status store_review_checklist_tx(struct store_conn *c, const char *review_id,
                                            const json_t *cited, const struct team_scope *scope,
                                            json_t **out)
{
    *out = NULL;
    json_t *review = NULL, *latest = NULL, *cited_rows = NULL, *options = NULL, *list = NULL;
    const char *p1[] = {review_id, team_scope_param(scope)};
    enum store_status st = store_json_tx(c, SQL_FACTS_REVIEW, STORE_ARGS(p1), &review);
    if (st != STORE_OK)
        goto out;
    if (cited) {
        list = json_incref((json_t *)cited);
    } else {
        st = store_json_tx(c, SQL_FACTS_LATEST, STORE_ARGS(p1), &latest);
        if (st != STORE_OK && st != STORE_NOT_FOUND)
            goto out;
        list = json_array();
        if (latest)
            json_array_append(list, latest);
    }
    char *list_text = json_dumps(list, JSON_COMPACT);
    if (!list_text) {
        st = STORE_ERROR;
        goto out;
    }
    const char *p2[] = {list_text};
    st = store_json_tx(c, SQL_FACTS_CITED, STORE_ARGS(p2), &cited_rows);
    free(list_text);
    if (st != STORE_OK)
        goto out;
    const json_t *compared = checklist_compared(cited_rows);
    if (compared) {
        const char *p3[] = {json_string_value(json_object_get(compared, "sha256")), p1[1]};
        st = store_json_tx(c, SQL_FACTS_OPTIONS, STORE_ARGS(p3), &options);
        if (st != STORE_OK)
            goto out;
    }
    json_t *tve = NULL;
    st = typed_vs_evidence(c, review_id, p1[1], compared, options, &tve);
    if (st != STORE_OK)
        goto out;
    struct checklist_facts f = {.workloads = json_object_get(review, "workloads"),
                                .cited = cited_rows,
                                .options = options,
                                .cited_by_caller = cited != NULL,
                                .unmapped_classes = json_object_get(review, "unmapped_classes"),
                                .typed_vs_evidence = tve};
    *out = checklist_decide(&f);
    json_decref(tve);
    if (!*out) {
        st = STORE_ERROR;
        goto out;
    }
    const json_t *first = json_array_get(cited_rows, 0);
    json_object_set_new(*out, "review_id", json_string(review_id));
    json_object_set_new(*out, "comparison_sha256",
                        first ? json_string(json_string_value(json_object_get(first, "sha256")))
                              : json_null());
    st = STORE_OK;
out:
    json_decref(review);
    json_decref(latest);
    json_decref(cited_rows);
    json_decref(options);
    json_decref(list);
    return st;
}

enum store_status store_review_checklist(struct store *s, const char *review_id,
                                         const json_t *cited, const struct team_scope *scope,
                                         json_t **out)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_review_checklist_tx(c, review_id, cited, scope, out);
    store_release(s, c);
    return st;
}
