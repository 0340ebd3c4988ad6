/* Realised against predicted: see store/outcome.h. */
#include "store/outcome.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/drift.h"
#include "core/ledger/outcome.h"
#include "store/ledger.h"

/* The review, the comparison's currency and options, and when a successor superseded it. */
static const char *SQL_FACTS =
    "SELECT json_build_object('owner', r.owner, 'threshold', r.outcome_threshold, "
    "'workload_ids', to_json(r.workload_ids), 'until', (SELECT to_char(d.received_at AT TIME "
    "ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM decision d WHERE d.id = $3::uuid), "
    "'currency', c.result->>'currency', 'winner', "
    "coalesce(c.result->>'winner', c.result->'ranking'->>0), 'options', c.result->'options', "
    "'workloads', (SELECT coalesce(json_agg(json_build_object('id', w.id, 'name', w.name, "
    "'team', w.team, 'matched_by', CASE WHEN w.runs_match IS NULL THEN 'team_and_class' ELSE "
    "'runs_match' END) ORDER BY array_position(r.workload_ids, w.id)), '[]') FROM workload w "
    "WHERE w.id = ANY (r.workload_ids) AND ($4::jsonb = 'null'::jsonb OR w.team IN (SELECT "
    "jsonb_array_elements_text($4::jsonb)))), 'hidden_workloads', (SELECT count(*) FROM "
    "workload w WHERE w.id = ANY (r.workload_ids) AND NOT ($4::jsonb = 'null'::jsonb OR w.team "
    "IN (SELECT jsonb_array_elements_text($4::jsonb))))) "
    "FROM review r LEFT JOIN comparison c ON c.sha256 = $2 WHERE r.id = $1::uuid";

/* The GPU runs of the workloads ($1) submitted in [$2, $3), each priced by its cluster map: once
 * through the run table (months pruned by submitted_at), then summed. A run without GPUs (a CPU
 * preprocessing step under the same WCKey) is neither a cost nor a completed outcome. */
static const char *SQL_REALISED =
    "WITH w AS (SELECT team, class, runs_match FROM workload WHERE id = ANY "
    "(ARRAY(SELECT json_array_elements_text($1::json))::uuid[]) AND ($4::jsonb = 'null'::jsonb "
    "OR team IN (SELECT jsonb_array_elements_text($4::jsonb)))), "
    "map AS (SELECT cp.cluster, cp.partition, cp.gpu_model, o.price_per_hour / "
    "o.gpus_per_instance AS p, o.currency AS cur FROM cluster_partition cp JOIN offer o ON "
    "o.id = cp.offer_id), "
    "x AS MATERIALIZED (SELECT r.state, r.upload_id, date_trunc('month', r.submitted_at, 'UTC') "
    "AS month, CASE WHEN r.started_at IS NOT NULL THEN r.gpus * extract(epoch FROM r.ended_at - "
    "r.started_at) / 3600 ELSE 0 END AS gh, coalesce(m1.p, m0.p) AS p, coalesce(m1.cur, m0.cur) "
    "AS cur FROM run r LEFT JOIN map m1 ON m1.cluster = r.cluster AND m1.partition = "
    "r.partition AND m1.gpu_model = r.gpu_model LEFT JOIN map m0 ON m0.cluster = r.cluster AND "
    "m0.partition = r.partition AND m0.gpu_model = '' "
    "WHERE r.gpus > 0 AND r.submitted_at >= $2::timestamptz AND r.submitted_at < "
    "coalesce($3::timestamptz, 'infinity') AND r.team IN (SELECT team FROM w) AND EXISTS (SELECT 1 "
    "FROM w WHERE w.team = "
    "r.team AND CASE WHEN w.runs_match IS NULL THEN capledger_class_tier(r.workload_class) = "
    "w.class ELSE capledger_run_of(w.runs_match, r.wckey, r.comment, r.job_name, r.workload) "
    "END)) "
    "SELECT json_build_object('runs', count(*), 'completed', count(*) FILTER (WHERE state = "
    "'COMPLETED'), 'gpu_hours', coalesce(sum(gh), 0), 'cost', sum(gh * p), 'unpriced_runs', "
    "count(*) FILTER (WHERE p IS NULL AND gh > 0), 'unpriced_gpu_hours', coalesce(sum(gh) FILTER "
    "(WHERE p IS NULL), 0), 'currencies', coalesce((SELECT json_agg(DISTINCT cur) FROM x WHERE "
    "cur IS NOT NULL AND gh > 0), '[]'), 'months', (SELECT coalesce(json_agg(json_build_object("
    "'month', m.month, 'runs', m.runs, 'completed', m.completed, 'gpu_hours', m.gh, 'cost', "
    "m.cost, 'unpriced_gpu_hours', m.ugh) ORDER BY m.month), '[]') FROM (SELECT month, "
    "count(*) AS runs, count(*) FILTER (WHERE state = 'COMPLETED') AS completed, "
    "coalesce(sum(gh), 0) AS gh, sum(gh * p) AS cost, coalesce(sum(gh) FILTER (WHERE p IS "
    "NULL), 0) AS ugh FROM x GROUP BY month) m), 'run_uploads', (SELECT coalesce(json_agg(t.u), "
    "'[]') FROM "
    "(SELECT DISTINCT upload_id AS u FROM x ORDER BY 1 LIMIT 20) t)) FROM x";

enum store_status store_decision_outcome(struct store *s, const char *decision_id,
                                         const struct team_scope *scope, char *fault,
                                         size_t fault_size, json_t **out)
{
    *out = NULL;
    json_t *d = NULL, *facts = NULL, *real = NULL;
    enum store_status st = store_decision_get(s, decision_id, scope, fault, fault_size, &d);
    if (st != STORE_OK || fault[0])
        goto done;
    const char *stop = json_string_value(json_object_get(d, "decision"));
    const char *p1[] = {
        json_string_value(json_object_get(d, "review_id")),
        json_string_value(json_array_get(json_object_get(d, "comparison_sha256"), 0)),
        json_string_value(json_object_get(d, "superseded_by")), team_scope_param(scope)};
    st = store_json(s, SQL_FACTS, STORE_ARGS(p1), &facts);
    if (st != STORE_OK)
        goto done;
    char *ids = json_dumps(json_object_get(facts, "workload_ids"), JSON_COMPACT);
    if (!ids) {
        st = STORE_ERROR;
        goto done;
    }
    const char *until = json_string_value(json_object_get(facts, "until"));
    const char *p2[] = {ids, json_string_value(json_object_get(d, "received_at")), until,
                        team_scope_param(scope)};
    st = store_json(s, SQL_REALISED, STORE_ARGS(p2), &real);
    free(ids);
    if (st != STORE_OK)
        goto done;
    const json_t *thr = json_object_get(facts, "threshold");
    struct outcome_facts f = {
        .option = stop && strcmp(stop, "stop") == 0
                      ? NULL
                      : decision_option(json_string_value(json_object_get(d, "chosen_option")),
                                        json_string_value(json_object_get(facts, "winner")),
                                        json_object_get(facts, "options"), NULL),
        .currency = json_string_value(json_object_get(facts, "currency")),
        .realised = real,
        .threshold = json_is_number(thr) ? json_number_value(thr) : OUTCOME_DEFAULT_THRESHOLD,
        .min_runs = OUTCOME_MIN_RUNS};
    *out = outcome_decide(&f);
    if (!*out) {
        st = STORE_ERROR;
        goto done;
    }
    json_object_set(*out, "decision_id", json_object_get(d, "id"));
    json_object_set(*out, "review_id", json_object_get(d, "review_id"));
    json_object_set(*out, "decision", json_object_get(d, "decision"));
    json_object_set(*out, "owner", json_object_get(facts, "owner"));
    json_object_set(*out, "signer", json_object_get(d, "signer"));
    json_object_set(*out, "received_at", json_object_get(d, "received_at"));
    json_object_set_new(*out, "window",
                        json_pack("{s:O, s:O}", "from", json_object_get(d, "received_at"), "until",
                                  until ? json_object_get(facts, "until") : json_null()));
    json_object_set(*out, "workloads", json_object_get(facts, "workloads"));
    /* a review may span teams: a team member's figures cover its own teams' workloads only */
    json_object_set(*out, "hidden_workloads", json_object_get(facts, "hidden_workloads"));
    json_object_set(*out, "run_uploads", json_object_get(real, "run_uploads"));
done:
    json_decref(d);
    json_decref(facts);
    json_decref(real);
    return st;
}

/* The latest decisions of the reviews in scope ($1), newest first, with the teams of their
 * review's workloads in scope. */
static const char *SQL_TRACK =
    "SELECT coalesce(json_agg(json_build_object('id', x.id, 'teams', x.teams) ORDER BY "
    "x.leaf_index DESC), '[]') FROM (SELECT d.id, d.leaf_index, (SELECT coalesce(json_agg("
    "DISTINCT w.team), '[]') FROM workload w WHERE w.id = ANY (r.workload_ids) AND ($1::jsonb = "
    "'null'::jsonb OR w.team IN (SELECT jsonb_array_elements_text($1::jsonb)))) AS teams FROM "
    "decision d JOIN review r ON r.id = d.review_id WHERE $1::jsonb = 'null'::jsonb OR EXISTS "
    "(SELECT 1 FROM workload w WHERE w.id = ANY (r.workload_ids) AND w.team IN (SELECT "
    "jsonb_array_elements_text($1::jsonb))) ORDER BY d.leaf_index DESC LIMIT $2::integer) x";

enum store_status store_decisions_track_record(struct store *s, const struct team_scope *scope,
                                               char *fault, size_t fault_size, json_t **out)
{
    *out = NULL;
    char lim[16];
    snprintf(lim, sizeof lim, "%d", OUTCOME_TRACK_MAX + 1);
    const char *p[] = {team_scope_param(scope), lim};
    json_t *ids = NULL, *scored = json_array(), *list = json_array();
    enum store_status st =
        scored && list ? store_json(s, SQL_TRACK, STORE_ARGS(p), &ids) : STORE_ERROR;
    size_t i;
    json_t *row;
    json_array_foreach(ids, i, row)
    {
        if (st != STORE_OK || i == OUTCOME_TRACK_MAX)
            break;
        json_t *o = NULL;
        st = store_decision_outcome(s, json_string_value(json_object_get(row, "id")), scope, fault,
                                    fault_size, &o);
        if (st == STORE_NOT_FOUND) { /* not the caller's to see after all */
            st = STORE_OK;
            continue;
        }
        if (st != STORE_OK || fault[0]) {
            json_decref(o);
            break;
        }
        json_object_set(o, "teams", json_object_get(row, "teams"));
        json_array_append(scored, o);
        json_array_append_new(
            list, json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "decision_id",
                            json_object_get(o, "decision_id"), "review_id",
                            json_object_get(o, "review_id"), "signer", json_object_get(o, "signer"),
                            "decision", json_object_get(o, "decision"), "received_at",
                            json_object_get(o, "received_at"), "verdict",
                            json_object_get(o, "verdict"), "error", json_object_get(o, "error")));
        json_decref(o);
    }
    if (st == STORE_OK && !fault[0]) {
        *out = outcome_track_record(scored);
        if (*out) {
            json_object_set(*out, "decisions", list);
            json_object_set_new(*out, "truncated",
                                json_boolean(json_array_size(ids) > OUTCOME_TRACK_MAX));
        } else {
            st = STORE_ERROR;
        }
    }
    json_decref(ids);
    json_decref(scored);
    json_decref(list);
    return st;
}
