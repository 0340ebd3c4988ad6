/* Drift alerts. The sweep reads, for every decided review, the assumptions its latest decision
 * rests on and what has been observed since, and raises an alert for each metric that moved
 * beyond the review's threshold (the rule: core/ledger/drift.h; the realised cost per outcome:
 * core/ledger/outcome.h). It is idempotent (one alert per decision and metric, enforced
 * by a unique key), so concurrent sweeps from several server instances are harmless. */
#include "store/alerts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/drift.h"
#include "core/ledger/outcome.h"
#include "core/validate.h"
#include "store/alert_row.h"
#include "store/ledger.h"
#include "store/outcome.h"
#include "store/webhooks.h"

/* The latest decision of every review (by leaf index), unless every metric has already been
 * raised for it. What the decision says (decide, chosen option, cited comparison, time) is
 * read from its leaf afterwards (store_decision_get), never from the row. */
static const char *SQL_CANDIDATES =
    "SELECT coalesce(json_agg(json_build_object('decision_id', d.id, 'review_id', r.id, "
    "'owner', r.owner, 'threshold', r.drift_threshold, 'workload_ids', to_json(r.workload_ids)"
    ")), '[]') "
    "FROM review r CROSS JOIN LATERAL (SELECT x.id FROM decision x WHERE x.review_id = r.id "
    "ORDER BY x.leaf_index DESC LIMIT 1) d "
    "WHERE (SELECT count(*) FROM alert a WHERE a.decision_id = d.id) < 5";

/* The comparison a decision's leaf cites first, with its scenario. */
static const char *SQL_COMPARISON =
    "SELECT json_build_object('comparison_sha256', c.sha256, 'resolved', c.resolved, "
    "'winner', coalesce(c.result->>'winner', c.result->'ranking'->>0), "
    "'document', s.document) FROM comparison c LEFT JOIN scenario s ON s.id = c.scenario_id "
    "WHERE c.sha256 = $1";

/* The GPU runs of the workloads' teams and classes (a run's class label by its tier, 0130)
 * since the decision, read once (one scan of
 * the months since, found by run_submitted_brin) for every figure below. */
#define SINCE_RUNS                                                                                 \
    "WITH x AS MATERIALIZED (SELECT x.state, x.gpu_utilization, x.started_at, x.submitted_at, "    \
    "x.upload_id FROM run x WHERE x.gpus > 0 AND x.submitted_at >= $2::timestamptz "               \
    "AND (x.team, capledger_class_tier(x.workload_class)) IN (SELECT w.team, w.class FROM "        \
    "workload w "                                                                                  \
    "WHERE w.id::text IN (SELECT json_array_elements_text($1::json)))), "                          \
    "a AS (SELECT count(*) AS runs, count(*) FILTER (WHERE x.state <> 'COMPLETED') AS failed, "    \
    "count(x.gpu_utilization) AS util_n, avg(x.gpu_utilization) AS util_mean, "                    \
    "count(x.started_at) "                                                                         \
    "AS queue_n, avg(extract(epoch FROM x.started_at - x.submitted_at)) AS queue_mean_s FROM x) "
#define SINCE_BENCHMARKS                                                                           \
    "FROM benchmark b LEFT JOIN benchmark_derived bd ON bd.benchmark_id = b.id "                   \
    "WHERE b.workload_id::text IN (SELECT json_array_elements_text($1::json)) "                    \
    "AND b.created_at >= $2::timestamptz AND b.outcome = 'succeeded' "                             \
    "AND NOT EXISTS (SELECT 1 FROM benchmark n WHERE n.supersedes = b.id) "                        \
    "AND b.offer_id IS NOT DISTINCT FROM coalesce($3::uuid, "                                      \
    "(SELECT o.offer_id FROM benchmark o WHERE o.id = $4::uuid), b.offer_id)"

static const char *SQL_OBSERVED = SINCE_RUNS
    "SELECT json_build_object("
    "'runs', a.runs, 'failed', a.failed, 'util_n', a.util_n, 'util_mean', a.util_mean, "
    "'queue_n', a.queue_n, 'queue_mean_s', a.queue_mean_s, "
    "'run_uploads', (SELECT coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT x.upload_id AS "
    "u FROM x ORDER BY 1 LIMIT 20) t), "
    "'throughput_n', (SELECT count(b.throughput_units_per_s) " SINCE_BENCHMARKS "), "
    "'throughput_mean', (SELECT avg(b.throughput_units_per_s) " SINCE_BENCHMARKS "), "
    "'duty_n', (SELECT count(coalesce(b.gpu_duty_cycle, bd.gpu_duty_cycle)) " SINCE_BENCHMARKS "), "
    "'duty_mean', (SELECT avg(coalesce(b.gpu_duty_cycle, bd.gpu_duty_cycle)) " SINCE_BENCHMARKS
    "), "
    "'benchmarks', (SELECT coalesce(json_agg(b.id ORDER BY b.created_at, b.id), "
    "'[]') " SINCE_BENCHMARKS ")) FROM a";

static const char *SQL_RAISE =
    "INSERT INTO alert AS a (kind, review_id, decision_id, owner, metric, assumed, observed, "
    "relative_change, threshold, sample_size, evidence, message) "
    "VALUES ('drift', $1::uuid, $2::uuid, $3, $4, $5::float8, $6::float8, $7::float8, $8::float8, "
    "$9::integer, $10::jsonb, $11) ON CONFLICT (decision_id, metric) DO NOTHING "
    "RETURNING " ALERT_JSON;

/* Only while the decision that drifted is still the review's latest. */
static const char *SQL_NEEDS_DECISION =
    "UPDATE review r SET status = 'needs decision', version = r.version + 1, updated_at = now() "
    "WHERE r.id = $1::uuid AND r.status = 'decided' AND (SELECT x.id FROM decision x "
    "WHERE x.review_id = r.id ORDER BY x.leaf_index DESC LIMIT 1) = $2::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM (SELECT " ALERT_JSON
    " AS j, a.created_at, a.id FROM alert a WHERE ($1::text IS NULL OR a.owner = $1) "
    "AND ($2::text IS NULL OR a.status = $2) AND ($3::uuid IS NULL OR a.review_id = $3::uuid) AND "
    "($4::timestamptz IS NULL OR (a.created_at, a.id) > ($4::timestamptz, "
    "$5::uuid)) ORDER BY a.created_at, a.id LIMIT $6::integer) t";

static const char *SQL_GET = "SELECT " ALERT_JSON " FROM alert a WHERE a.id = $1::uuid";

static const char *SQL_UPDATE =
    "UPDATE alert a SET status = $3, note = $4, version = a.version + 1, updated_at = now(), "
    "updated_by = $5 WHERE a.id = $1::uuid AND a.version = $2::integer RETURNING " ALERT_JSON;

static double number_or(const json_t *obj, const char *key, double fallback)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : fallback;
}

/* The stored offer or benchmark the scenario named for option index (ids, or NULL). */
static void stored_refs(const json_t *cand, size_t index, const char **offer_id,
                        const char **benchmark_id)
{
    const json_t *doc_opt =
        json_array_get(json_object_get(json_object_get(cand, "document"), "options"), index);
    const char *offer = json_string_value(json_object_get(doc_opt, "offer"));
    const char *bench = json_string_value(json_object_get(doc_opt, "benchmark"));
    *offer_id = offer && uuid_valid(offer) ? offer : NULL;
    *benchmark_id = bench && uuid_valid(bench) ? bench : NULL;
}

/* Inserts the alert (the metric m departed by rel beyond thr) and marks the review, in one
 * transaction. *raised is incremented when the alert is new. */
static enum store_status raise_alert(struct store *s, const struct audit_actor *who,
                                     const json_t *cand, const struct drift_metric *m, double rel,
                                     double thr, const json_t *evidence, int *raised)
{
    char assumed[40], observed[40], relative[40], threshold[40], samples[24], message[600];
    snprintf(assumed, sizeof assumed, "%.17g", m->assumed);
    snprintf(observed, sizeof observed, "%.17g", m->observed);
    snprintf(relative, sizeof relative, "%.17g", rel);
    snprintf(threshold, sizeof threshold, "%.17g", thr);
    snprintf(samples, sizeof samples, "%lld", m->samples);
    drift_message(m, rel, thr, message, sizeof message);
    char *ev = json_dumps(evidence, JSON_COMPACT);
    if (!ev)
        return STORE_ERROR;
    const char *review = json_string_value(json_object_get(cand, "review_id"));
    const char *decision = json_string_value(json_object_get(cand, "decision_id"));
    const char *p[] = {review,   decision,  json_string_value(json_object_get(cand, "owner")),
                       m->name,  assumed,   observed,
                       relative, threshold, samples,
                       ev,       message};
    json_t *row = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(ev);
        return STORE_UNAVAILABLE;
    }
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_RAISE, STORE_ARGS(p), &row);
    if (st == STORE_NOT_FOUND) { /* raised already, by this sweep's twin on another instance */
        store_rollback(c);
        st = STORE_OK;
        goto out;
    }
    const char *pr[] = {review, decision};
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_NEEDS_DECISION, STORE_ARGS(pr), NULL);
    /* the owner's webhooks learn of it once this commits, never before */
    if (st == STORE_OK)
        st = store_webhook_enqueue_tx(c, "drift", json_string_value(json_object_get(row, "owner")),
                                      1, row, NULL);
    if (st == STORE_OK)
        st = store_audit_record_tx(c, who, "alert.raise",
                                   json_string_value(json_object_get(row, "id")), row);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st == STORE_OK)
        (*raised)++;
    else
        store_rollback(c);
out:
    store_release(s, c);
    json_decref(row);
    free(ev);
    return st;
}

/* Realised against predicted (store/outcome.h, core/ledger/outcome.h): the realised compute cost
 * per completed run of the review's workloads since the decision against the prediction for its
 * option, over the review's outcome_threshold, decided in core. */
static enum store_status sweep_outcome(struct store *s, const struct audit_actor *who,
                                       const json_t *cand, double review_threshold, int *raised)
{
    char fault[512] = "";
    json_t *o = NULL;
    enum store_status st = store_decision_outcome(
        s, json_string_value(json_object_get(cand, "decision_id")), NULL, fault, sizeof fault, &o);
    if (st == STORE_NOT_FOUND || fault[0]) {
        json_decref(o);
        return STORE_OK;
    }
    struct drift_metric m;
    double rel;
    if (st == STORE_OK && outcome_drift_metric(o, &m, &rel) == 0)
        st = raise_alert(s, who, cand, &m, rel, drift_threshold(&m, review_threshold),
                         json_object_get(o, "run_uploads"), raised);
    json_decref(o);
    return st;
}

static enum store_status sweep_one(struct store *s, const struct audit_actor *who,
                                   const json_t *cand, int *raised)
{
    double threshold = number_or(cand, "threshold", DRIFT_DEFAULT_THRESHOLD);
    enum store_status so = sweep_outcome(s, who, cand, threshold, raised);
    if (so != STORE_OK)
        return so;
    size_t index = 0;
    const json_t *opt = drift_option(cand, &index);
    if (!opt)
        return STORE_OK; /* no option to hold the assumptions (no feasible winner, none chosen) */
    const char *offer_id, *benchmark_id;
    stored_refs(cand, index, &offer_id, &benchmark_id);
    char *ids = json_dumps(json_object_get(cand, "workload_ids"), JSON_COMPACT);
    if (!ids)
        return STORE_ERROR;
    const char *p[] = {ids, json_string_value(json_object_get(cand, "received_at")), offer_id,
                       benchmark_id};
    json_t *seen = NULL;
    enum store_status st = store_json(s, SQL_OBSERVED, STORE_ARGS(p), &seen);
    free(ids);
    if (st != STORE_OK)
        return st;
    struct drift_metric m[DRIFT_METRICS];
    drift_metrics(cand, opt, seen, m);
    for (size_t i = 0; i < DRIFT_METRICS && st == STORE_OK; i++) {
        double rel;
        if (drift_departs(&m[i], threshold, &rel))
            st = raise_alert(s, who, cand, &m[i], rel, drift_threshold(&m[i], threshold),
                             json_object_get(seen, m[i].evidence_key), raised);
    }
    json_decref(seen);
    return st;
}

/* Fills a candidate with what its decision's leaf says (received_at, chosen_option) and the
 * comparison the leaf cites first. STORE_NOT_FOUND when there is nothing to check: the decision
 * stops the work, cites nothing, or its row differs from its leaf (then store_decision_get has
 * logged it and alerted owners and admins, and nothing is computed from the edited row). */
static enum store_status bind_candidate(struct store *s, json_t *cand)
{
    char fault[512];
    json_t *d = NULL, *cmp = NULL;
    enum store_status st = store_decision_get(
        s, json_string_value(json_object_get(cand, "decision_id")), NULL, fault, sizeof fault, &d);
    if (st != STORE_OK)
        return st;
    const char *decision = json_string_value(json_object_get(d, "decision"));
    const char *cited =
        json_string_value(json_array_get(json_object_get(d, "comparison_sha256"), 0));
    if (fault[0] || !decision || strcmp(decision, "stop") == 0 || !cited) {
        json_decref(d);
        return STORE_NOT_FOUND;
    }
    const char *p[] = {cited};
    st = store_json(s, SQL_COMPARISON, STORE_ARGS(p), &cmp);
    if (st == STORE_OK) {
        json_object_update(cand, cmp);
        json_object_set(cand, "received_at", json_object_get(d, "received_at"));
        json_object_set(cand, "chosen_option", json_object_get(d, "chosen_option"));
    }
    json_decref(cmp);
    json_decref(d);
    return st;
}

enum store_status store_alert_sweep(struct store *s, const struct audit_actor *who, int *raised)
{
    *raised = 0;
    json_t *cands = NULL;
    enum store_status st = store_json(s, SQL_CANDIDATES, 0, NULL, &cands);
    if (st != STORE_OK)
        return st;
    size_t i;
    json_t *cand;
    json_array_foreach(cands, i, cand)
    {
        st = bind_candidate(s, cand);
        if (st == STORE_NOT_FOUND) { /* a stop, no citation, or a row that differs from its leaf */
            st = STORE_OK;
            continue;
        }
        if (st == STORE_OK)
            st = sweep_one(s, who, cand, raised);
        if (st != STORE_OK)
            break;
    }
    json_decref(cands);
    return st;
}

enum store_status store_alert_list(struct store *s, const struct alert_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {q->owner, q->status, q->review_id, q->after_at, q->after_id, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_alert_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_alert_update(struct store *s, const struct audit_actor *who, const char *id,
                                     long expected_version, const char *status, const char *note,
                                     json_t **out)
{
    char version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *p[] = {id, version, status, note, who->name};
    enum store_status st =
        store_write_audited(s, who, "alert.update", SQL_UPDATE, STORE_ARGS(p), out);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}
