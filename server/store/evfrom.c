/* Inputs from evidence: see store/evfrom.h. Each query is kept as text in the answer (with its
 * parameters) so the resolved scenario says exactly what an auditor runs to get the figure. */
#include "store/evfrom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runs of a selection: $1 scope, $2 cluster, $3 partition, $4 class label, $5 team, $6
 * workload id, $7 from, $8 to (submitted_at in [from, to)). */
#define EVFROM_RUNS                                                                                \
    "FROM run r WHERE ($1::jsonb = 'null'::jsonb OR r.team IN (SELECT "                            \
    "jsonb_array_elements_text($1::jsonb))) AND ($2::text IS NULL OR r.cluster = $2) AND "         \
    "($3::text IS NULL OR r.partition = $3) AND ($4::text IS NULL OR r.workload_class = $4) AND "  \
    "($5::text IS NULL OR r.team = $5) AND ($7::timestamptz IS NULL OR r.submitted_at >= "         \
    "$7::timestamptz) AND ($8::timestamptz IS NULL OR r.submitted_at < $8::timestamptz) AND "      \
    "($6::uuid IS NULL OR EXISTS (SELECT 1 FROM workload w WHERE w.id = $6::uuid AND w.team = "    \
    "r.team AND CASE WHEN w.runs_match IS NULL THEN capledger_class_tier(r.workload_class) = "     \
    "w.class ELSE capledger_run_of(w.runs_match, r.wckey, r.comment, r.job_name, r.workload) "     \
    "END))"

#define QW_QUERY                                                                                   \
    "SELECT percentile_cont(ARRAY(SELECT g / 100.0 FROM generate_series(0, 100) g)) WITHIN "       \
    "GROUP (ORDER BY extract(epoch FROM r.started_at - r.submitted_at)) " EVFROM_RUNS              \
    " AND r.gpus > 0 AND r.started_at IS NOT NULL"

static const char *SQL_QUEUE_WAIT =
    "WITH n AS (SELECT count(*) AS runs FROM (SELECT 1 " EVFROM_RUNS
    " AND r.gpus > 0 AND r.started_at IS NOT NULL LIMIT $9::bigint + 1) x) "
    "SELECT json_build_object('runs', n.runs, 'quantiles', CASE WHEN n.runs BETWEEN 1 AND "
    "$9::bigint THEN to_json((" QW_QUERY ")::float8[]) END) FROM n";

#define FAIL_QUERY                                                                                 \
    "SELECT count(*) AS runs, count(*) FILTER (WHERE r.state IN ('COMPLETED', 'FAILED', "          \
    "'OUT_OF_MEMORY', 'TIMEOUT')) AS attempts, count(*) FILTER (WHERE r.state IN ('FAILED', "      \
    "'OUT_OF_MEMORY', 'TIMEOUT')) AS failed, count(*) FILTER (WHERE r.state IN ('NODE_FAIL', "     \
    "'PREEMPTED')) AS crashes, count(*) FILTER (WHERE r.state IN ('CANCELLED', 'DEADLINE', "       \
    "'BOOT_FAIL')) AS excluded, coalesce(sum(r.gpus * extract(epoch FROM r.ended_at - "            \
    "r.started_at) / 3600) FILTER (WHERE r.started_at IS NOT NULL), 0)::float8 AS "                \
    "gpu_hours " EVFROM_RUNS " AND r.gpus > 0"

/* GPU runs only, as the checklist, the drift check and typed-against-evidence count attempts: a
 * CPU-only step under the workload's WCKey is not an attempt of the GPU job. */
static const char *SQL_FAILURES =
    "WITH n AS (SELECT count(*) AS runs FROM (SELECT 1 " EVFROM_RUNS
    " AND r.gpus > 0 LIMIT $9::bigint + 1) x) "
    "SELECT CASE WHEN n.runs > $9::bigint THEN json_build_object('runs', n.runs) ELSE (SELECT "
    "to_json(f) FROM (" FAIL_QUERY ") f) END FROM n";

#define UTIL_QUERY                                                                                 \
    "SELECT count(*) AS samples, count(x.duty_cycle) AS with_duty, avg(x.duty_cycle) AS "          \
    "duty_mean, count(*) FILTER (WHERE x.duty_cycle < (u.summary->>'idle_below')::float8) AS "     \
    "idle, count(x.memory_used_gb) AS with_memory, max(x.memory_used_gb) AS memory_used_peak_gb, " \
    "max(x.memory_total_gb) AS memory_total_gb, count(DISTINCT x.upload_id) AS uploads FROM "      \
    "telemetry_sample x JOIN upload u ON u.id = x.upload_id WHERE x.benchmark_id = $2::uuid"

static const char *SQL_UTILIZATION =
    "SELECT (SELECT to_jsonb(t) FROM (" UTIL_QUERY ") t) || jsonb_build_object('benchmark_id', "
    "b.id) FROM benchmark b JOIN workload w ON w.id = b.workload_id WHERE b.id = $2::uuid AND "
    "($1::jsonb = 'null'::jsonb OR w.team IN (SELECT jsonb_array_elements_text($1::jsonb)))";

#define TPUT_QUERY                                                                                 \
    "SELECT b.id, b.throughput_units_per_s FROM benchmark b JOIN workload w ON w.id = "            \
    "b.workload_id WHERE b.workload_id = $2::uuid AND b.offer_id = $3::uuid AND b.outcome = "      \
    "'succeeded' AND b.throughput_units_per_s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "          \
    "benchmark n WHERE n.supersedes = b.id) AND ($1::jsonb = 'null'::jsonb OR w.team IN (SELECT "  \
    "jsonb_array_elements_text($1::jsonb)))"

static const char *SQL_THROUGHPUT =
    "SELECT json_build_object('benchmarks', coalesce(json_agg(t.id ORDER BY t.id), '[]'), 'n', "
    "count(*), 'mean', avg(t.throughput_units_per_s), 'stddev', stddev_samp("
    "t.throughput_units_per_s)) FROM (" TPUT_QUERY ") t";

/* Runs sql read-only with a statement timeout of EVFROM_TIMEOUT_MS: a selection too wide to
 * answer in time gives STORE_OK and *out = {"timed_out": true} (the caller's 422), never an
 * error. */
static enum store_status bounded(struct store *s, const char *sql, int n, const char *const *p,
                                 json_t **out)
{
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_exec_tx(c, "BEGIN READ ONLY", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_exec_tx(c,
                           "SELECT set_config('statement_timeout', '" EVFROM_TIMEOUT_TEXT "', "
                           "true), set_config('jit', 'off', true), set_config('work_mem', "
                           "'256MB', true)",
                           0, NULL, NULL);
    if (st == STORE_OK) {
        st = store_json_tx(c, sql, n, p, out);
        if (st != STORE_OK && strcmp(store_last_sqlstate(c), "57014") == 0) {
            st = STORE_OK;
            *out = json_pack("{s:b}", "timed_out", 1);
        }
    }
    store_rollback(c);
    store_release(s, c);
    return st;
}

/* out is read after the store call (never as another argument of the same call). */
static enum store_status with_query(enum store_status st, json_t **out, const char *query)
{
    if (st == STORE_OK && json_is_object(*out))
        json_object_set_new(*out, "query", json_string(query));
    return st;
}

static void run_params(const struct evfrom_runs *q, char max[24], const char *p[9])
{
    snprintf(max, 24, "%d", EVFROM_MAX_RUNS);
    p[0] = team_scope_param(q->scope);
    p[1] = q->cluster;
    p[2] = q->partition;
    p[3] = q->workload_class;
    p[4] = q->team;
    p[5] = q->workload_id;
    p[6] = q->from;
    p[7] = q->to;
    p[8] = max;
}

enum store_status store_evfrom_queue_wait(struct store *s, const struct evfrom_runs *q,
                                          json_t **out)
{
    char max[24];
    const char *p[9];
    run_params(q, max, p);
    /* the sort of up to EVFROM_MAX_RUNS waits stays in memory, without JIT */
    return with_query(bounded(s, SQL_QUEUE_WAIT, 9, p, out), out, QW_QUERY);
}

enum store_status store_evfrom_failures(struct store *s, const struct evfrom_runs *q, json_t **out)
{
    char max[24];
    const char *p[9];
    run_params(q, max, p);
    return with_query(bounded(s, SQL_FAILURES, 9, p, out), out, FAIL_QUERY);
}

enum store_status store_evfrom_utilization(struct store *s, const struct team_scope *scope,
                                           const char *benchmark_id, json_t **out)
{
    const char *p[] = {team_scope_param(scope), benchmark_id};
    return with_query(store_json(s, SQL_UTILIZATION, STORE_ARGS(p), out), out, UTIL_QUERY);
}

enum store_status store_evfrom_throughput(struct store *s, const struct team_scope *scope,
                                          const char *workload_id, const char *offer_id,
                                          json_t **out)
{
    const char *p[] = {team_scope_param(scope), workload_id, offer_id};
    return with_query(store_json(s, SQL_THROUGHPUT, STORE_ARGS(p), out), out, TPUT_QUERY);
}
