/* Drift alerts. The sweep reads, for every decided review, the assumptions its latest decision
 * rests on and what has been observed since, then raises an alert for each metric that moved
 * beyond the review's threshold. It is idempotent (one alert per decision and metric, enforced
 * by a unique key), so concurrent sweeps from several server instances are harmless. */
#include "store/alerts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "store/ledger.h"
#include "store/outcome.h"
#include "store/webhooks.h"

#define ALERT_JSON                                                                                 \
    "json_build_object('id', a.id, 'kind', a.kind, 'review_id', a.review_id, "                     \
    "'decision_id', a.decision_id, 'owner', a.owner, 'metric', a.metric, 'assumed', a.assumed, "   \
    "'observed', a.observed, 'relative_change', a.relative_change, 'threshold', a.threshold, "     \
    "'sample_size', a.sample_size, 'evidence', a.evidence, 'message', a.message, "                 \
    "'status', a.status, 'note', a.note, 'version', a.version, 'created_at', a.created_at, "       \
    "'updated_at', a.updated_at, 'updated_by', a.updated_by)"

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

/* One alert per enabled owner and admin; the same evidence again raises nothing new. Returns
 * the new alerts, for their webhooks. */
static const char *SQL_RAISE_LOG_INTEGRITY =
    "WITH n AS (INSERT INTO alert AS a (kind, owner, message, evidence) "
    "SELECT 'log_integrity', u.username, $1, "
    "'[]'::jsonb FROM app_user u WHERE u.role IN ('owner', 'admin') AND u.disabled_at IS NULL "
    "ON CONFLICT (owner, md5(message)) WHERE kind = 'log_integrity' DO NOTHING "
    "RETURNING " ALERT_JSON " AS j) SELECT coalesce(json_agg(j), '[]') FROM n";

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

/* ---- assumptions and observations ---- */

struct metric {
    const char *name;  /* alert.metric */
    const char *label; /* for the message */
    const char *unit;  /* "" or " s" or " units/s" */
    double floor;      /* smallest denominator of the relative change */
    int known;         /* both figures present with enough samples */
    double assumed, observed;
    long long samples;
    const char *basis;        /* where the observation comes from */
    const char *evidence_key; /* the observation's member listing the ids behind it */
    double threshold;         /* 0: the review's drift_threshold */
};

static double number_or(const json_t *obj, const char *key, double fallback)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : fallback;
}

/* The option the decision stands on: the chosen one, else the comparison's winner. */
static const json_t *decision_option(const json_t *cand, size_t *index)
{
    const char *name = json_string_value(json_object_get(cand, "chosen_option"));
    if (!name)
        name = json_string_value(json_object_get(cand, "winner"));
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(json_object_get(cand, "resolved"), "options"), i, opt)
    {
        const char *n = json_string_value(json_object_get(opt, "name"));
        if (name && n && strcmp(n, name) == 0) {
            *index = i;
            return opt;
        }
    }
    return NULL;
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

static void fill_metrics(const json_t *cand, const json_t *opt, const json_t *seen,
                         struct metric m[4])
{
    const json_t *bench = json_object_get(opt, "benchmark");
    const json_t *offer = json_object_get(opt, "offer");
    const json_t *assume = json_object_get(json_object_get(cand, "resolved"), "assumptions");
    long long runs = (long long)number_or(seen, "runs", 0);
    long long util_n = (long long)number_or(seen, "util_n", 0);
    long long duty_n = (long long)number_or(seen, "duty_n", 0);
    long long queue_n = (long long)number_or(seen, "queue_n", 0);
    long long tput_n = (long long)number_or(seen, "throughput_n", 0);

    m[0] =
        (struct metric){.name = "failure_rate", .label = "failure rate", .unit = "", .floor = 0.01};
    m[0].assumed =
        number_or(bench, "failure_probability", number_or(assume, "failure_probability", 0));
    m[0].known = runs >= ALERT_MIN_RUNS;
    m[0].observed = runs ? number_or(seen, "failed", 0) / (double)runs : 0;
    m[0].samples = runs;
    m[0].basis = "GPU runs since the decision";
    m[0].evidence_key = "run_uploads";

    m[1] = (struct metric){
        .name = "gpu_utilization", .label = "GPU utilisation", .unit = "", .floor = 0.01};
    m[1].assumed = number_or(bench, "gpu_duty_cycle", 1);
    if (util_n >= ALERT_MIN_RUNS) {
        m[1].known = 1;
        m[1].observed = number_or(seen, "util_mean", 0);
        m[1].samples = util_n;
        m[1].basis = "GPU runs since the decision that report utilisation";
        m[1].evidence_key = "run_uploads";
    } else if (duty_n > 0) {
        m[1].known = 1;
        m[1].observed = number_or(seen, "duty_mean", 0);
        m[1].samples = duty_n;
        m[1].basis = "benchmarks since the decision";
        m[1].evidence_key = "benchmarks";
    }

    m[2] =
        (struct metric){.name = "queue_wait_s", .label = "queue wait", .unit = " s", .floor = 60};
    m[2].assumed = number_or(bench, "queue_wait_s", number_or(offer, "provisioning_delay_s", 0));
    m[2].known = queue_n >= ALERT_MIN_RUNS;
    m[2].observed = number_or(seen, "queue_mean_s", 0);
    m[2].samples = queue_n;
    m[2].basis = "started GPU runs since the decision";
    m[2].evidence_key = "run_uploads";

    m[3] = (struct metric){
        .name = "throughput_units_per_s", .label = "throughput", .unit = " units/s", .floor = 1e-9};
    m[3].assumed = number_or(bench, "throughput_units_per_s", 0);
    m[3].known = tput_n > 0 && m[3].assumed > 0;
    m[3].observed = number_or(seen, "throughput_mean", 0);
    m[3].samples = tput_n;
    m[3].basis = "benchmarks since the decision";
    m[3].evidence_key = "benchmarks";
}

/* Inserts the alert and marks the review, in one transaction. *raised is incremented when the
 * alert is new. */
static enum store_status raise_alert(struct store *s, const struct audit_actor *who,
                                     const json_t *cand, const struct metric *m, double rel,
                                     const json_t *evidence, int *raised)
{
    char assumed[40], observed[40], relative[40], threshold[40], samples[24], message[600];
    double thr = m->threshold > 0 ? m->threshold : number_or(cand, "threshold", 0.25);
    snprintf(assumed, sizeof assumed, "%.17g", m->assumed);
    snprintf(observed, sizeof observed, "%.17g", m->observed);
    snprintf(relative, sizeof relative, "%.17g", rel);
    snprintf(threshold, sizeof threshold, "%.17g", thr);
    snprintf(samples, sizeof samples, "%lld", m->samples);
    snprintf(message, sizeof message,
             "%s since the decision is %.4g%s over %lld %s, %s than the %.4g%s the decision "
             "assumed by %.0f%% (threshold %.0f%%): the decision may no longer hold",
             m->label, m->observed, m->unit, m->samples, m->basis, rel > 0 ? "higher" : "lower",
             m->assumed, m->unit, fabs(rel) * 100, thr * 100);
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
        st = store_json_tx(c, SQL_RAISE, 11, p, &row);
    if (st == STORE_NOT_FOUND) { /* raised already, by this sweep's twin on another instance */
        store_rollback(c);
        st = STORE_OK;
        goto out;
    }
    const char *pr[] = {review, decision};
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_NEEDS_DECISION, 2, pr, NULL);
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
                                       const json_t *cand, int *raised)
{
    char fault[512] = "";
    json_t *o = NULL;
    enum store_status st = store_decision_outcome(
        s, json_string_value(json_object_get(cand, "decision_id")), NULL, fault, sizeof fault, &o);
    if (st == STORE_NOT_FOUND || fault[0]) {
        json_decref(o);
        return STORE_OK;
    }
    const char *verdict = json_string_value(json_object_get(o, "verdict"));
    if (st == STORE_OK && verdict && strcmp(verdict, "drift") == 0) {
        const json_t *real = json_object_get(o, "realised");
        const json_t *pred = json_object_get(o, "predicted");
        struct metric m = {
            .name = "cost_per_outcome",
            .label = "realised compute cost per completed run",
            .unit = "",
            .floor = 1e-9,
            .known = 1,
            .assumed = number_or(pred, "compute_cost_per_outcome", 0),
            .observed = number_or(real, "cost_per_completed", 0),
            .samples = (long long)number_or(real, "runs", 0),
            .basis = "runs of the review's workloads since the decision",
            .evidence_key = "run_uploads",
            .threshold = number_or(o, "threshold", 0.2),
        };
        st = raise_alert(s, who, cand, &m, number_or(o, "error", 0),
                         json_object_get(o, "run_uploads"), raised);
    }
    json_decref(o);
    return st;
}

static enum store_status sweep_one(struct store *s, const struct audit_actor *who,
                                   const json_t *cand, int *raised)
{
    enum store_status so = sweep_outcome(s, who, cand, raised);
    if (so != STORE_OK)
        return so;
    size_t index = 0;
    const json_t *opt = decision_option(cand, &index);
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
    enum store_status st = store_json(s, SQL_OBSERVED, 4, p, &seen);
    free(ids);
    if (st != STORE_OK)
        return st;
    struct metric m[4];
    fill_metrics(cand, opt, seen, m);
    double threshold = number_or(cand, "threshold", 0.25);
    for (size_t i = 0; i < 4 && st == STORE_OK; i++) {
        if (!m[i].known)
            continue;
        double rel = (m[i].observed - m[i].assumed) / fmax(fabs(m[i].assumed), m[i].floor);
        if (fabs(rel) <= threshold)
            continue;
        st =
            raise_alert(s, who, cand, &m[i], rel, json_object_get(seen, m[i].evidence_key), raised);
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
    st = store_json(s, SQL_COMPARISON, 1, p, &cmp);
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
    return store_json(s, SQL_LIST, 6, p, out);
}

enum store_status store_alert_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, 1, p, out);
}

enum store_status store_alert_update(struct store *s, const struct audit_actor *who, const char *id,
                                     long expected_version, const char *status, const char *note,
                                     json_t **out)
{
    char version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *p[] = {id, version, status, note, who->name};
    enum store_status st = store_write_audited(s, who, "alert.update", SQL_UPDATE, 5, p, out);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

enum store_status store_alert_log_integrity(struct store *s, const char *evidence)
{
    char message[1024];
    snprintf(message, sizeof message,
             "The decision log is inconsistent and capledger stopped appending to it: %s. "
             "Compare the latest checkpoint auditors or witnesses hold with the database before "
             "anything else.",
             evidence);
    return store_alert_log_integrity_message(s, message);
}

enum store_status store_alert_log_integrity_message(struct store *s, const char *message)
{
    const char *p[] = {message};
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *rows = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_RAISE_LOG_INTEGRITY, 1, p, &rows);
    /* each owner's and admin's own alert goes to their own webhooks, in this transaction */
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (st != STORE_OK)
            break;
        st = store_webhook_enqueue_tx(
            c, "log_integrity", json_string_value(json_object_get(row, "owner")), 0, row, NULL);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    else
        store_rollback(c);
    store_release(s, c);
    json_decref(rows);
    return st;
}
