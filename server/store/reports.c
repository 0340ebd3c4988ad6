/* Reports. The usage report groups by any of team, workload_class, cluster and state with
 * one parameterised query: a dimension not asked for is grouped as the constant NULL and
 * left out of the group's keys. Percentiles are PostgreSQL's percentile_cont (linear
 * interpolation), as docs/evidence.md specifies. */
#include "store/reports.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/qwhist.h"

/* Which runs a usage report covers: the caller's teams ($1, or 'null' for all), ?team= ($12). */
#define USAGE_TEAMS(x)                                                                             \
    "($1::jsonb = 'null'::jsonb OR " x ".team IN (SELECT jsonb_array_elements_text($1::jsonb))) "  \
    "AND ($12::text IS NULL OR " x ".team = $12) "

/* ?workload= ($14: {"team", "match"}, or NULL): only the runs of that team its runs_match
 * recognises (0131_run_workloads.sql). The rollups know no workload, so with it every figure is
 * read from run (see b and sel below). */
#define USAGE_WORKLOAD(x)                                                                          \
    "AND ($14::jsonb IS NULL OR (" x                                                               \
    ".team = $14::jsonb->>'team' AND capledger_run_of($14::jsonb->"                                \
    "'match', " x ".wckey, " x ".comment, " x ".job_name, " x ".workload))) "

/* The additive figures of a run, as a row of the rollups has them (0061_usage_rollup.sql). */
#define USAGE_RUN_ROW                                                                              \
    "SELECT x.team, x.workload_class, x.cluster, x.partition, x.gpu_model, x.state, 1::bigint AS " \
    "runs, (x.gpus > 0)::int::bigint AS gpu_runs, (x.gh > 0)::int::bigint AS gh_runs, "            \
    "(x.started_at IS NULL)::int::bigint AS never_started, x.gh, x.qw AS qw_sum, (x.qw IS NOT "    \
    "NULL)::int::bigint AS qw_n, x.gpu_utilization AS util_sum, (x.gpu_utilization IS NOT "        \
    "NULL)::int::bigint AS util_n FROM (SELECT r.*, CASE WHEN r.started_at IS NOT NULL THEN "      \
    "r.gpus * extract(epoch FROM r.ended_at - r.started_at) / 3600 ELSE 0 END AS gh, CASE WHEN "   \
    "r.started_at IS NOT NULL AND r.gpus > 0 THEN extract(epoch FROM r.started_at - "              \
    "r.submitted_at) END AS qw FROM run r "

#define USAGE_ROLLUP_ROW(t)                                                                        \
    "SELECT team, workload_class, cluster, partition, gpu_model, state, runs, gpu_runs, gh_runs, " \
    "never_started, gh, qw_sum, qw_n, util_sum, util_n FROM " t " x WHERE " USAGE_TEAMS("x")

/* Which waits the report's percentiles count, and whether exactly: sel.exact when the runs
 * selected hold at most $13 waits (qw_n, from the rollups), then pct sorts them (percentile_cont),
 * else hg gives each group's queue-wait histogram (0062_queue_wait_histogram.sql) as
 * [[bucket, n], ...] by bucket, for store_report_usage to compute the percentiles from
 * (core/qwhist.h): with neither from nor to, all of run_qw_hist_all; else whole UTC months
 * [m0, m1) from run_qw_hist and the rest of [from, to) from run, bucketed as the upload does. Each
 * part is gated on sel, so only one of pct and hg reads. */
#define USAGE_HIST_RUN                                                                             \
    "SELECT x.team, x.workload_class, x.cluster, x.state, capledger_qw_bucket(extract(epoch FROM " \
    "x.started_at - x.submitted_at)::float8) AS bucket, 1::bigint AS n FROM run x WHERE x.gpus > " \
    "0 AND x.started_at IS NOT NULL AND NOT (SELECT exact FROM sel) AND " USAGE_TEAMS("x")         \
        USAGE_WORKLOAD("x")
#define USAGE_QW_HIST                                                                              \
    "sel AS (SELECT coalesce(sum(qw_n), 0) <= $13::bigint OR $14::jsonb IS NOT NULL AS exact "     \
    "FROM u), "                                                                                    \
    "hb AS (SELECT coalesce(a_lo, '-infinity') AS f, coalesce(b_hi, 'infinity') AS t, monthly, "   \
    "m0, m1 FROM b), "                                                                             \
    "hrow AS (SELECT x.team, x.workload_class, x.cluster, x.state, x.bucket, x.n FROM "            \
    "run_qw_hist_all x WHERE NOT (SELECT exact FROM sel) AND $2::timestamptz IS NULL AND "         \
    "$3::timestamptz IS NULL AND " USAGE_TEAMS(                                                    \
        "x") "UNION ALL SELECT x.team, x.workload_class, x.cluster, x.state, x.bucket, x.n FROM "  \
             "run_qw_hist x WHERE NOT (SELECT exact FROM sel) AND NOT ($2::timestamptz IS NULL "   \
             "AND "                                                                                \
             "$3::timestamptz IS NULL) AND (SELECT monthly FROM hb) AND x.month >= "               \
             "(SELECT m0 FROM hb) AND x.month < (SELECT m1 FROM hb) AND " USAGE_TEAMS(             \
                 "x") "UNION ALL " USAGE_HIST_RUN                                                  \
                      "AND x.submitted_at >= (SELECT f FROM hb) AND x.submitted_at < "             \
                      "(SELECT CASE WHEN monthly THEN m0 ELSE t END FROM hb) "                     \
                      "UNION ALL " USAGE_HIST_RUN                                                  \
                      "AND (SELECT monthly FROM hb) AND x.submitted_at >= (SELECT m1 "             \
                      "FROM hb) AND x.submitted_at < (SELECT t FROM hb)), "                        \
                      "hg AS (SELECT g_team, g_class, g_cluster, g_state, "                        \
                      "json_agg(json_build_array(bucket, n) "                                      \
                      "ORDER BY bucket) AS h FROM (SELECT CASE WHEN $4::boolean THEN x.team END "  \
                      "AS "                                                                        \
                      "g_team, CASE "                                                              \
                      "WHEN $5::boolean THEN x.workload_class END AS g_class, CASE WHEN "          \
                      "$6::boolean THEN "                                                          \
                      "x.cluster END AS g_cluster, CASE WHEN $7::boolean THEN x.state END AS "     \
                      "g_state, "                                                                  \
                      "x.bucket, "                                                                 \
                      "sum(x.n) AS n FROM hrow x GROUP BY 1, 2, 3, 4, 5) y GROUP BY 1, 2, 3, 4), "

/* The runs submitted in [$2, $3) (either open) are read as: whole UTC months from
 * run_usage_month [m0, m1), whole UTC days from run_usage_day [d0, m0) and [m1, d1), and the
 * partial days at the edges, [$2, d0) and [d1, $3), from run (its partitions pruned, its
 * submitted_at index used). The queue-wait percentiles read run for every covered run.
 * Each run's price per GPU-hour: the ?cluster_offers= offer of its cluster, else its cluster
 * map's offer for its partition and GPU model, else for its partition (any model), else the
 * ?offer_id= offer. The report's currency is the parameters' ($11), else the maps' (one, kept
 * so by PUT /clusters); a price in another currency does not count (the run is unpriced). */
static const char *SQL_USAGE =
    "WITH prices AS (SELECT e.key AS cluster, o.price_per_hour / o.gpus_per_instance AS p, "
    "o.currency AS cur FROM jsonb_each_text(coalesce($8::jsonb, '{}'::jsonb)) e JOIN offer o ON "
    "o.id = e.value::uuid), "
    "default_price AS (SELECT price_per_hour / gpus_per_instance AS p, currency AS cur FROM offer "
    "WHERE id = $9::uuid), "
    "map AS (SELECT cp.cluster, cp.partition, cp.gpu_model, o.price_per_hour / "
    "o.gpus_per_instance AS p, o.currency AS cur FROM cluster_partition cp JOIN offer o ON o.id "
    "= cp.offer_id), "
    "rc AS (SELECT coalesce($11::text, (SELECT min(cur) FROM map)) AS cur), "
    "b1 AS (SELECT $2::timestamptz AS f, $3::timestamptz AS t, CASE WHEN $2::timestamptz IS NULL "
    "THEN '-infinity'::timestamptz WHEN date_trunc('day', $2::timestamptz, 'UTC') = "
    "$2::timestamptz THEN $2::timestamptz ELSE date_trunc('day', $2::timestamptz, 'UTC') + "
    "interval '24 hours' END AS d0, coalesce(date_trunc('day', $3::timestamptz, 'UTC'), "
    "'infinity'::timestamptz) AS d1), "
    "b2 AS (SELECT *, d0 < d1 AND $14::jsonb IS NULL AS roll, CASE WHEN date_trunc('month', d0, "
    "'UTC') = d0 THEN d0 "
    "ELSE (date_trunc('month', d0 AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC' "
    "END AS m0, date_trunc('month', d1, 'UTC') AS m1 FROM b1), "
    "b AS (SELECT coalesce(f, '-infinity') AS a_lo, CASE WHEN roll THEN d0 ELSE coalesce(t, "
    "'infinity') END AS a_hi, CASE WHEN roll THEN d1 "
    "END AS b_lo, t AS b_hi, roll, d0, d1, roll AND m0 < m1 AS monthly, m0, m1 FROM b2), "
    "u AS (" USAGE_RUN_ROW "WHERE r.submitted_at >= (SELECT a_lo FROM b) AND r.submitted_at < "
    "(SELECT a_hi FROM b)) x WHERE " USAGE_TEAMS("x") USAGE_WORKLOAD(
        "x") "UNION ALL " USAGE_RUN_ROW
             "WHERE r.submitted_at >= (SELECT b_lo FROM b) AND r.submitted_at < (SELECT b_hi FROM "
             "b)) x WHERE " USAGE_TEAMS("x") USAGE_WORKLOAD("x") "UNION ALL " USAGE_ROLLUP_ROW(
                 "run_usage_day") "AND (SELECT roll FROM b) AND ((x.day >= (SELECT d0 FROM b) AND "
                                  "x.day < (SELECT CASE WHEN monthly THEN m0 ELSE d1 END FROM b)) "
                                  "OR (x.day >= (SELECT CASE WHEN monthly THEN m1 ELSE d1 END FROM "
                                  "b) AND x.day < (SELECT d1 FROM b))) "
                                  "UNION ALL " USAGE_ROLLUP_ROW(
                                      "run_usage_month") "AND (SELECT monthly FROM b) AND x.month "
                                                         ">= (SELECT m0 FROM b) AND x.month < "
                                                         "(SELECT m1 FROM b)), " USAGE_QW_HIST
                                                         "r AS (SELECT CASE WHEN $4::boolean THEN "
                                                         "x.team END AS g_team, "
                                                         "CASE WHEN $5::boolean THEN "
                                                         "x.workload_class END AS g_class, "
                                                         "CASE WHEN $6::boolean THEN x.cluster END "
                                                         "AS g_cluster, "
                                                         "CASE WHEN $7::boolean THEN x.state END "
                                                         "AS g_state, x.*, CASE WHEN (CASE WHEN "
                                                         "pr.p IS NOT "
                                                         "NULL THEN pr.cur WHEN m1.p IS NOT NULL "
                                                         "THEN m1.cur WHEN m0.p IS NOT NULL THEN "
                                                         "m0.cur ELSE "
                                                         "(SELECT cur FROM default_price) END) = "
                                                         "(SELECT cur FROM rc) THEN (CASE WHEN "
                                                         "pr.p IS NOT NULL "
                                                         "THEN pr.p WHEN m1.p IS NOT NULL THEN "
                                                         "m1.p WHEN m0.p IS NOT NULL THEN m0.p "
                                                         "ELSE (SELECT p "
                                                         "FROM default_price) END) END AS price "
                                                         "FROM u x LEFT JOIN prices pr ON "
                                                         "pr.cluster = "
                                                         "x.cluster LEFT JOIN map m1 ON m1.cluster "
                                                         "= x.cluster AND m1.partition = "
                                                         "x.partition AND "
                                                         "m1.gpu_model = x.gpu_model LEFT JOIN map "
                                                         "m0 ON m0.cluster = x.cluster AND "
                                                         "m0.partition = "
                                                         "x.partition AND m0.gpu_model = ''), "
                                                         "pct AS (SELECT CASE WHEN $4::boolean "
                                                         "THEN x.team END AS g_team, "
                                                         "CASE WHEN $5::boolean THEN "
                                                         "x.workload_class END AS g_class, "
                                                         "CASE WHEN $6::boolean THEN x.cluster END "
                                                         "AS g_cluster, "
                                                         "CASE WHEN $7::boolean THEN x.state END "
                                                         "AS g_state, "
                                                         "percentile_cont(0.5) WITHIN GROUP (ORDER "
                                                         "BY qw) AS qw_p50, "
                                                         "percentile_cont(0.9) WITHIN GROUP (ORDER "
                                                         "BY qw) AS qw_p90, "
                                                         "percentile_cont(0.99) WITHIN GROUP "
                                                         "(ORDER BY qw) AS qw_p99 "
                                                         "FROM (SELECT x.team, x.workload_class, "
                                                         "x.cluster, x.state, extract(epoch FROM "
                                                         "x.started_at "
                                                         "- x.submitted_at) AS qw FROM run x WHERE "
                                                         "x.submitted_at >= "
                                                         "coalesce($2::timestamptz, "
                                                         "'-infinity') AND x.submitted_at < "
                                                         "coalesce($3::timestamptz, 'infinity') "
                                                         "AND x.gpus > 0 AND "
                                                         "x.started_at IS NOT NULL AND (SELECT "
                                                         "exact FROM sel) "
                                                         "AND " USAGE_TEAMS("x") USAGE_WORKLOAD(
                                                             "x") ") x GROUP BY 1, 2, 3, 4), "
                                                                  "by_state AS (SELECT g_team, "
                                                                  "g_class, g_cluster, g_state, "
                                                                  "jsonb_object_agg(state, h) AS m "
                                                                  "FROM (SELECT g_team, g_class, "
                                                                  "g_cluster, g_state, state, "
                                                                  "sum(gh) AS h FROM r "
                                                                  "GROUP BY 1, 2, 3, 4, 5) s GROUP "
                                                                  "BY 1, 2, 3, 4), "
                                                                  "agg AS (SELECT g_team, g_class, "
                                                                  "g_cluster, g_state, sum(runs) "
                                                                  "AS runs, "
                                                                  "sum(gpu_runs) AS gpu_runs, "
                                                                  "sum(gh) AS gpu_hours, "
                                                                  "coalesce(sum(gpu_runs) FILTER "
                                                                  "(WHERE state <> 'COMPLETED'), "
                                                                  "0) AS failed_gpu_runs, "
                                                                  "coalesce(sum(gh) FILTER (WHERE "
                                                                  "state <> 'COMPLETED'), 0) AS "
                                                                  "failed_gh, "
                                                                  "sum(qw_sum) / nullif(sum(qw_n), "
                                                                  "0) AS qw_mean, "
                                                                  "sum(never_started) AS "
                                                                  "never_started, "
                                                                  "sum(util_sum) / "
                                                                  "nullif(sum(util_n), 0) AS "
                                                                  "mean_util, sum(gh * price) AS "
                                                                  "cost, "
                                                                  "sum(gh * price) FILTER (WHERE "
                                                                  "state <> 'COMPLETED') AS "
                                                                  "failed_cost, "
                                                                  "sum(gh) FILTER (WHERE price IS "
                                                                  "NOT NULL) AS priced_gh, "
                                                                  "coalesce(sum(gh) FILTER (WHERE "
                                                                  "price IS NULL), 0) AS "
                                                                  "unpriced_gh, "
                                                                  "coalesce(sum(gh_runs) FILTER "
                                                                  "(WHERE price IS NULL), 0) AS "
                                                                  "unpriced_runs "
                                                                  "FROM r GROUP BY 1, 2, 3, 4), "
                                                                  "unpriced AS (SELECT cluster, "
                                                                  "partition, gpu_model, "
                                                                  "sum(gh_runs) AS runs, sum(gh) "
                                                                  "AS "
                                                                  "gpu_hours FROM r WHERE price IS "
                                                                  "NULL AND gh_runs > 0 GROUP BY "
                                                                  "1, 2, 3 ORDER BY 5 DESC, 1, 2, "
                                                                  "3 LIMIT 100) "
                                                                  "SELECT "
                                                                  "json_build_object('currency', "
                                                                  "(SELECT cur FROM rc), "
                                                                  "'unpriced', (SELECT "
                                                                  "coalesce(json_agg(json_build_"
                                                                  "object('cluster', cluster, "
                                                                  "'partition', partition, "
                                                                  "'gpu_model', gpu_model, 'runs', "
                                                                  "runs, 'gpu_hours', gpu_hours) "
                                                                  "ORDER BY gpu_hours DESC, "
                                                                  "cluster, partition, gpu_model), "
                                                                  "'[]') FROM unpriced), "
                                                                  "'groups', "
                                                                  "coalesce(json_agg((jsonb_build_"
                                                                  "object('team', a.g_team, "
                                                                  "'workload_class', a.g_class, "
                                                                  "'cluster', a.g_cluster, "
                                                                  "'state', a.g_state) - "
                                                                  "$10::text[]) || "
                                                                  "jsonb_build_object('runs', "
                                                                  "a.runs, 'gpu_runs', a.gpu_runs, "
                                                                  "'gpu_hours', a.gpu_hours, "
                                                                  "'gpu_hours_by_state', "
                                                                  "coalesce(b.m, '{}'::jsonb), "
                                                                  "'failure_rate', "
                                                                  "a.failed_gpu_runs::float8 / "
                                                                  "nullif(a.gpu_runs, 0), "
                                                                  "'failed_gpu_hours_share', "
                                                                  "a.failed_gh / "
                                                                  "nullif(a.gpu_hours, 0), "
                                                                  "'queue_wait_s', "
                                                                  "jsonb_build_object('mean', "
                                                                  "a.qw_mean, "
                                                                  "'p50', p.qw_p50, 'p90', "
                                                                  "p.qw_p90, 'p99', p.qw_p99, "
                                                                  "'approximate', NOT (SELECT "
                                                                  "exact FROM sel), "
                                                                  "'relative_error', CASE WHEN "
                                                                  "(SELECT exact FROM sel) THEN 0 "
                                                                  "END), '_qw_hist', hg.h, "
                                                                  "'never_started', "
                                                                  "a.never_started, "
                                                                  "'mean_gpu_utilization', "
                                                                  "a.mean_util, 'cost', CASE WHEN "
                                                                  "a.priced_gh IS NULL THEN NULL "
                                                                  "ELSE "
                                                                  "jsonb_build_object('currency', "
                                                                  "(SELECT cur FROM rc), 'amount', "
                                                                  "coalesce(a.cost, 0), "
                                                                  "'failed_amount', "
                                                                  "coalesce(a.failed_cost, 0), "
                                                                  "'failed_share', "
                                                                  "coalesce(a.failed_cost, 0) / "
                                                                  "nullif(a.cost, 0), "
                                                                  "'priced_gpu_hours', "
                                                                  "a.priced_gh, "
                                                                  "'unpriced_gpu_hours', "
                                                                  "a.unpriced_gh, "
                                                                  "'unpriced_runs', "
                                                                  "a.unpriced_runs) END) "
                                                                  "ORDER BY a.g_team, a.g_class, "
                                                                  "a.g_cluster, a.g_state), '[]')) "
                                                                  "FROM agg a LEFT JOIN by_state b "
                                                                  "ON b.g_team IS NOT DISTINCT "
                                                                  "FROM a.g_team AND "
                                                                  "b.g_class IS NOT DISTINCT FROM "
                                                                  "a.g_class AND b.g_cluster IS "
                                                                  "NOT DISTINCT FROM a.g_cluster "
                                                                  "AND b.g_state IS NOT DISTINCT "
                                                                  "FROM a.g_state LEFT JOIN pct p "
                                                                  "ON p.g_team IS NOT DISTINCT "
                                                                  "FROM a.g_team AND p.g_class IS "
                                                                  "NOT DISTINCT FROM a.g_class AND "
                                                                  "p.g_cluster IS NOT DISTINCT "
                                                                  "FROM a.g_cluster AND p.g_state "
                                                                  "IS NOT DISTINCT FROM a.g_state "
                                                                  "LEFT JOIN hg ON hg.g_team IS "
                                                                  "NOT DISTINCT FROM a.g_team AND "
                                                                  "hg.g_class IS NOT DISTINCT FROM "
                                                                  "a.g_class AND hg.g_cluster IS "
                                                                  "NOT DISTINCT FROM a.g_cluster "
                                                                  "AND hg.g_state IS NOT DISTINCT "
                                                                  "FROM a.g_state";

/* The idle report counts stored samples (each once, however often its file was uploaded), with
 * the idle threshold of the upload that stored it; the longest idle stretch is the longest any
 * upload that stored samples saw. It is priced by each benchmark's offer (the capacity the
 * samples were measured on) at price_per_hour / gpus_per_instance per GPU-hour: a sample
 * stands for its upload's time_span_s × gpus / samples GPU-seconds (uploads without
 * timestamps have no span: their samples are unpriced). */
#define IDLE_SELECT(key)                                                                           \
    "SELECT " key ", count(*) AS uploads, sum(samples) AS samples, sum(with_duty) AS "             \
    "samples_with_duty_cycle, sum(duty_sum) / nullif(sum(with_duty), 0) AS duty_cycle_mean, "      \
    "sum(idle)::float8 / nullif(sum(with_duty), 0) AS idle_fraction, max(longest_idle_s) "         \
    "FILTER (WHERE samples > 0) AS longest_idle_s, array_agg(DISTINCT idle_below) AS idle_below, " \
    "sum(gh) AS gpu_hours, sum(idle_gh) AS idle_gpu_hours, coalesce(sum(samples) FILTER (WHERE "   \
    "gh IS NULL), 0) AS unpriced_samples, CASE WHEN count(DISTINCT cur) FILTER (WHERE gh > 0) = "  \
    "1 "                                                                                           \
    "THEN json_build_object('currency', min(cur) FILTER (WHERE gh > 0), 'amount', sum(gh * "       \
    "price), 'idle_amount', sum(idle_gh * price), 'idle_share', sum(idle_gh * price) / "           \
    "nullif(sum(gh * price), 0)) END AS cost, array_agg(DISTINCT cur) FILTER (WHERE gh > 0) AS "   \
    "currencies FROM per u "

static const char *SQL_IDLE =
    "WITH t AS (SELECT u.id, u.team, u.benchmark_id, b.workload_id, (u.summary->>'idle_below')"
    "::float8 AS idle_below, (u.summary->>'longest_idle_s')::float8 AS longest_idle_s, "
    "(u.summary->>'time_span_s')::float8 * (u.summary->>'gpus')::float8 / "
    "nullif((u.summary->>'samples')::float8, 0) AS sample_s, o.price_per_hour / "
    "o.gpus_per_instance AS price, o.currency AS cur "
    "FROM upload u JOIN benchmark b ON b.id = u.benchmark_id JOIN offer o ON o.id = b.offer_id "
    "WHERE u.kind = 'telemetry' "
    "AND ($1::jsonb = 'null'::jsonb OR u.team IN (SELECT jsonb_array_elements_text($1::jsonb))) "
    "AND ($2::text IS NULL OR u.team = $2) "
    "AND ($3::timestamptz IS NULL OR u.created_at >= $3::timestamptz) "
    "AND ($4::timestamptz IS NULL OR u.created_at < $4::timestamptz)), "
    "per AS (SELECT t.id, t.team, t.benchmark_id, t.workload_id, t.idle_below, "
    "t.longest_idle_s, count(x.gpu) AS samples, count(x.duty_cycle) AS with_duty, "
    "sum(x.duty_cycle) AS duty_sum, count(*) FILTER (WHERE x.duty_cycle < t.idle_below) AS idle, "
    "count(x.gpu) * t.sample_s / 3600 AS gh, count(*) FILTER (WHERE x.duty_cycle < t.idle_below) "
    "* t.sample_s / 3600 AS idle_gh, t.price, t.cur "
    "FROM t LEFT JOIN telemetry_sample x ON x.upload_id = t.id "
    "GROUP BY t.id, t.team, t.benchmark_id, t.workload_id, t.idle_below, t.longest_idle_s, "
    "t.sample_s, t.price, t.cur) "
    "SELECT json_build_object("
    "'benchmarks', (SELECT coalesce(json_agg(to_jsonb(x) ORDER BY x.team, x.benchmark_id), "
    "'[]') FROM (" IDLE_SELECT(
        "u.benchmark_id, u.team, u.workload_id") "GROUP BY 1, 2, 3) x), "
                                                 "'teams', (SELECT coalesce(json_agg(to_jsonb(x) "
                                                 "ORDER BY x.team), '[]') FROM (" IDLE_SELECT(
                                                     "u.team") "GROUP BY 1) x))";

/* A group's approximate percentiles from its "_qw_hist" ([[bucket, n], ...] by bucket, or null
 * when it has no waits or its percentiles are exact), which then leaves the group. False when
 * the histogram is malformed (which the query does not make). */
static bool usage_hist_percentiles(json_t *group)
{
    json_t *h = json_object_get(group, "_qw_hist");
    json_t *qw = json_object_get(group, "queue_wait_s");
    bool ok = true;
    if (json_is_array(h) && json_array_size(h) > 0 && json_is_object(qw)) {
        size_t n = json_array_size(h);
        struct qwhist_bin *bins = calloc(n, sizeof *bins);
        if (!bins)
            return false;
        for (size_t i = 0; i < n && ok; i++) {
            json_t *b = json_array_get(h, i);
            json_t *k = json_array_get(b, 0), *c = json_array_get(b, 1);
            ok = json_is_integer(k) && json_is_integer(c) && json_integer_value(k) >= INT_MIN &&
                 json_integer_value(k) <= INT_MAX;
            if (ok)
                bins[i] =
                    (struct qwhist_bin){(int)json_integer_value(k), (int64_t)json_integer_value(c)};
        }
        static const struct {
            const char *key;
            double p;
        } ps[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}};
        for (size_t i = 0; i < 3 && ok; i++) {
            double v;
            ok = qwhist_percentile(bins, n, ps[i].p, &v) == 0;
            if (ok)
                json_object_set_new(qw, ps[i].key, json_real(v));
        }
        free(bins);
        if (ok)
            json_object_set_new(qw, "relative_error", json_real(QWHIST_REL_ERR));
    } else if (json_is_object(qw) && json_is_true(json_object_get(qw, "approximate"))) {
        json_object_set_new(qw, "relative_error", json_real(QWHIST_REL_ERR));
    }
    json_object_del(group, "_qw_hist");
    return ok;
}

enum store_status store_report_usage(struct store *s, const struct usage_query *q, json_t **out)
{
    /* The group keys not asked for, as a text[] literal for jsonb "-". */
    char excluded[64] = "{";
    const struct {
        int on;
        const char *name;
    } dims[] = {{q->by_team, "team"},
                {q->by_class, "workload_class"},
                {q->by_cluster, "cluster"},
                {q->by_state, "state"}};
    for (size_t i = 0; i < 4; i++) {
        if (dims[i].on)
            continue;
        if (excluded[1])
            strcat(excluded, ",");
        strcat(excluded, dims[i].name);
    }
    strcat(excluded, "}");
    const char *p[] = {team_scope_param(q->scope),
                       q->from,
                       q->to,
                       q->by_team ? "true" : "false",
                       q->by_class ? "true" : "false",
                       q->by_cluster ? "true" : "false",
                       q->by_state ? "true" : "false",
                       q->cluster_offers_json,
                       q->default_offer_id,
                       excluded,
                       q->currency,
                       q->team};
    char exact_max[24];
    snprintf(exact_max, sizeof exact_max, "%ld", q->exact_max);
    const char *p13[14];
    memcpy(p13, p, sizeof p);
    p13[12] = exact_max;
    p13[13] = q->workload_json;
    /* Without JIT: the planner prices the exact percentiles' scan of every selected run even
     * when sel gates it off, and compiling the plan took 12 s of a 16 s report on 10 M runs.
     * work_mem for the transaction: the groups' sorts stay in memory. A plan for these
     * parameters each time: after five runs of the prepared statement PostgreSQL tried its
     * generic plan, which cannot see which parts the parameters gate off (all runs by cluster
     * and state on 10 M runs: 0.43 s each, then 1.2 s from the sixth on). */
    enum store_status st = store_json_setup(s,
                                            "SELECT set_config('jit', 'off', true), "
                                            "set_config('work_mem', '64MB', true), "
                                            "set_config('plan_cache_mode', 'force_custom_plan', "
                                            "true)",
                                            SQL_USAGE, 14, p13, out);
    if (st != STORE_OK)
        return st;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(*out, "groups"), i, g)
    {
        if (!usage_hist_percentiles(g)) {
            json_decref(*out);
            *out = NULL;
            return STORE_ERROR;
        }
    }
    return STORE_OK;
}

enum store_status store_report_idle(struct store *s, const struct team_scope *scope,
                                    const char *team, const char *from, const char *to,
                                    json_t **out)
{
    const char *p[] = {team_scope_param(scope), team, from, to};
    return store_json(s, SQL_IDLE, STORE_ARGS(p), out);
}
