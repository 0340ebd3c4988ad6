/* Job accounting runs: COPY into a staging table, then one set-based insert. */
#include "store/runs.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/formats/run.h"
#include "store/uploads.h"

static const char *SQL_STAGE =
    "CREATE TEMP TABLE run_stage (lineno bigint, cluster text, external_id text, team text, "
    "\"user\" text, workload_class text, partition text, gpu_model text, submitted_at "
    "timestamptz, started_at timestamptz, "
    "ended_at timestamptz, gpus double precision, state text, exit_code text, "
    "gpu_utilization double precision) ON COMMIT DROP";

static const char *SQL_COPY =
    "COPY run_stage (lineno, cluster, external_id, team, \"user\", workload_class, partition, "
    "gpu_model, submitted_at, started_at, ended_at, gpus, state, exit_code, gpu_utilization) "
    "FROM STDIN";

/* Of two rows of the upload with the same (cluster, external_id) the first (in line order) is
 * offered and the second counted a duplicate, like a row already stored. What is a duplicate
 * is decided by run_key (PRIMARY KEY (cluster, external_id); the partitioned run cannot hold
 * that unique index, see 0060_partition_by_month.sql): ON CONFLICT DO NOTHING there, and only
 * the rows whose key went in reach run, in line order.
 * The class of each run: the upload's ?class= ($2), else the run's own (JSON), else the
 * cluster's map for its partition and GPU model, else for its partition (any model), else the
 * cluster's default class, else none (unclassified). */
/* The usage rollups (0061_usage_rollup.sql) gain the stored runs in the same statement, in key
 * order (so concurrent uploads lock their rows in one order). */
#define ROLLUP_ADD                                                                                 \
    "runs = d.runs + EXCLUDED.runs, gpu_runs = d.gpu_runs + EXCLUDED.gpu_runs, gh_runs = "         \
    "d.gh_runs + EXCLUDED.gh_runs, never_started = d.never_started + EXCLUDED.never_started, gh "  \
    "= "                                                                                           \
    "d.gh + EXCLUDED.gh, qw_sum = d.qw_sum + EXCLUDED.qw_sum, qw_n = d.qw_n + EXCLUDED.qw_n, "     \
    "util_sum = d.util_sum + EXCLUDED.util_sum, util_n = d.util_n + EXCLUDED.util_n"

static const char *SQL_MOVE =
    "WITH first AS (SELECT DISTINCT ON (cluster, external_id) * FROM run_stage "
    "ORDER BY cluster, external_id, lineno), "
    "keys AS (INSERT INTO run_key (cluster, external_id) SELECT cluster, external_id FROM first "
    "ON CONFLICT DO NOTHING RETURNING cluster, external_id), "
    "ins AS (INSERT INTO run (cluster, external_id, team, \"user\", workload_class, "
    "partition, gpu_model, submitted_at, started_at, ended_at, gpus, state, exit_code, "
    "gpu_utilization, upload_id) "
    "SELECT s.cluster, s.external_id, s.team, s.\"user\", coalesce($2::text, s.workload_class, "
    "m1.workload_class, m0.workload_class, c.default_class), s.partition, s.gpu_model, "
    "s.submitted_at, s.started_at, s.ended_at, s.gpus, s.state, s.exit_code, s.gpu_utilization, "
    "$1::uuid FROM first s JOIN keys k ON k.cluster = s.cluster AND k.external_id = "
    "s.external_id "
    "LEFT JOIN cluster_partition m1 ON m1.cluster = s.cluster AND m1.partition = s.partition "
    "AND m1.gpu_model = s.gpu_model "
    "LEFT JOIN cluster_partition m0 ON m0.cluster = s.cluster AND m0.partition = s.partition "
    "AND m0.gpu_model = '' LEFT JOIN cluster c ON c.name = s.cluster ORDER BY s.lineno "
    "RETURNING submitted_at, team, workload_class, cluster, partition, gpu_model, state, gpus, "
    "started_at, ended_at, gpu_utilization), "
    "g AS (SELECT date_trunc('day', submitted_at, 'UTC') AS day, team, workload_class, cluster, "
    "partition, gpu_model, state, count(*) AS runs, count(*) FILTER (WHERE gpus > 0) AS gpu_runs, "
    "count(*) FILTER (WHERE gh > 0) AS gh_runs, count(*) FILTER (WHERE started_at IS NULL) AS "
    "never_started, coalesce(sum(gh), 0) AS gh, coalesce(sum(qw), 0) AS qw_sum, count(qw) AS "
    "qw_n, coalesce(sum(gpu_utilization), 0) AS util_sum, count(gpu_utilization) AS util_n "
    "FROM (SELECT i.*, CASE WHEN started_at IS NOT NULL THEN gpus * extract(epoch FROM ended_at "
    "- started_at) / 3600 ELSE 0 END AS gh, CASE WHEN started_at IS NOT NULL AND gpus > 0 THEN "
    "extract(epoch FROM started_at - submitted_at) END AS qw FROM ins i) x "
    "GROUP BY 1, 2, 3, 4, 5, 6, 7), "
    "day_up AS (INSERT INTO run_usage_day AS d SELECT * FROM g ORDER BY 1, 2, 3, 4, 5, 6, 7 "
    "ON CONFLICT (day, team, workload_class, cluster, partition, gpu_model, state) DO UPDATE "
    "SET " ROLLUP_ADD " RETURNING 1), "
    "month_up AS (INSERT INTO run_usage_month AS d SELECT date_trunc('month', day, 'UTC'), team, "
    "workload_class, cluster, partition, gpu_model, state, sum(runs), sum(gpu_runs), "
    "sum(gh_runs), sum(never_started), sum(gh), sum(qw_sum), sum(qw_n), sum(util_sum), "
    "sum(util_n) FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 "
    "ON CONFLICT (month, team, workload_class, cluster, partition, gpu_model, state) DO UPDATE "
    "SET " ROLLUP_ADD " RETURNING 1), "
    "hq AS (SELECT date_trunc('month', submitted_at, 'UTC') AS month, team, workload_class, "
    "cluster, state, capledger_qw_bucket(extract(epoch FROM started_at - submitted_at)::float8) "
    "AS bucket, count(*) AS n FROM ins WHERE started_at IS NOT NULL AND gpus > 0 "
    "GROUP BY 1, 2, 3, 4, 5, 6), "
    "qh AS (INSERT INTO run_qw_hist AS h SELECT * FROM hq ORDER BY 1, 2, 3, 4, 5, 6 "
    "ON CONFLICT (month, team, workload_class, cluster, state, bucket) DO UPDATE SET n = h.n + "
    "EXCLUDED.n RETURNING 1), "
    "qa AS (INSERT INTO run_qw_hist_all AS h SELECT team, workload_class, cluster, state, bucket, "
    "sum(n) FROM hq GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (team, "
    "workload_class, cluster, state, bucket) DO UPDATE SET n = h.n + EXCLUDED.n RETURNING 1) "
    "SELECT json_build_object('inserted', (SELECT count(*) FROM ins), 'staged', "
    "(SELECT count(*) FROM run_stage), 'classes', (SELECT coalesce(json_object_agg(k, n), '{}') "
    "FROM (SELECT coalesce(workload_class, 'unclassified') AS k, count(*) AS n FROM ins "
    "GROUP BY 1) x))";

#define RUN_JSON(r)                                                                                \
    "json_build_object('id', " r ".id::text, 'cluster', " r ".cluster, 'external_id', " r          \
    ".external_id, 'team', " r ".team, 'user', " r ".\"user\", 'workload_class', " r               \
    ".workload_class, 'partition', " r ".partition, 'gpu_model', " r ".gpu_model, "                \
    "'submitted_at', " r ".submitted_at, 'started_at', " r ".started_at, "                         \
    "'ended_at', " r ".ended_at, 'gpus', " r ".gpus, 'state', " r ".state, 'exit_code', " r        \
    ".exit_code, 'gpu_utilization', " r ".gpu_utilization, 'upload_id', " r ".upload_id)"

static const char *SQL_LIST = "SELECT coalesce(json_agg(" RUN_JSON(
    "r") " ORDER BY r.id), '[]') FROM ("
         "SELECT * FROM run x "
         "WHERE ($1::jsonb = 'null'::jsonb OR x.team IN (SELECT "
         "jsonb_array_elements_text($1::jsonb))) "
         "AND ($2::text IS NULL OR x.team = $2) AND ($3::text IS NULL OR x.workload_class = $3) "
         "AND ($4::text IS NULL OR x.state = $4) AND ($5::text IS NULL OR x.cluster = $5) "
         "AND ($6::uuid IS NULL OR x.upload_id = $6::uuid) "
         "AND ($7::timestamptz IS NULL OR x.submitted_at >= $7::timestamptz) "
         "AND ($8::timestamptz IS NULL OR x.submitted_at < $8::timestamptz) "
         "AND ($9::bigint IS NULL OR x.id > $9::bigint) ORDER BY x.id LIMIT $10::integer) r";

enum store_status store_runs_begin(struct store *s, struct upload_tx **out)
{
    return store_upload_tx_begin(s, SQL_STAGE, SQL_COPY, out);
}

enum store_status store_runs_finish(struct upload_tx *tx, const struct audit_actor *who,
                                    json_t *rec, const char *klass, long *staged, long *inserted,
                                    long *duplicates, json_t **classes)
{
    *classes = NULL;
    *staged = *inserted = *duplicates = 0;
    long copied = 0;
    json_t *counts = NULL;
    const char *upload_id = json_string_value(json_object_get(rec, "id"));
    const char *p[] = {upload_id, klass};
    enum store_status st = store_upload_tx_end_copy(tx, &copied);
    /* the statement's sorts (first line of each key, then line order) in memory */
    if (st == STORE_OK)
        st = store_exec_tx(store_upload_tx_conn(tx), "SET LOCAL work_mem = '128MB'", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_json_tx(store_upload_tx_conn(tx), SQL_MOVE, 2, p, &counts);
    if (st != STORE_OK) {
        json_decref(counts);
        store_upload_tx_abort(tx);
        return st;
    }
    *staged = (long)json_integer_value(json_object_get(counts, "staged"));
    *inserted = (long)json_integer_value(json_object_get(counts, "inserted"));
    *duplicates = *staged - *inserted;
    *classes = json_incref(json_object_get(counts, "classes"));
    json_decref(counts);
    json_object_set_new(
        rec, "warnings",
        run_upload_warnings(*classes, json_string_value(json_object_get(
                                          json_object_get(rec, "params"), "cluster"))));
    json_object_set_new(rec, "inserted", json_integer(*inserted));
    json_object_set_new(rec, "duplicates", json_integer(*duplicates));
    json_t *change = json_pack("{s:s, s:I, s:I}", "upload_id", upload_id, "inserted",
                               (json_int_t)*inserted, "duplicates", (json_int_t)*duplicates);
    st = store_upload_tx_commit(tx, who, rec, "runs.upload", change);
    json_decref(change);
    return st;
}

enum store_status store_runs_list(struct store *s, const struct runs_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {team_scope_param(q->scope),
                       q->team,
                       q->workload_class,
                       q->state,
                       q->cluster,
                       q->upload_id,
                       q->from,
                       q->to,
                       q->after_id,
                       lim};
    return store_json(s, SQL_LIST, 10, p, out);
}
