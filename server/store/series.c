/* Chart series (store/series.h): one statement each, bounded by their parameters. */
#include "store/series.h"

/* Every part reads telemetry_sample by benchmark directly (no materialised copy): the span from
 * the ends of the (benchmark_id, ts) index, the points in one hashed pass, the stretches in one
 * pass ordered by the (benchmark_id, gpu, ts) unique index. */
static const char *SQL_TELEMETRY_SERIES =
    "WITH sp AS (SELECT (SELECT min(ts) FROM telemetry_sample WHERE benchmark_id = $1::uuid AND "
    "ts IS NOT NULL) AS lo, (SELECT max(ts) FROM telemetry_sample WHERE benchmark_id = $1::uuid "
    "AND ts IS NOT NULL) AS hi), "
    "spe AS (SELECT lo, hi, date_part('epoch', lo) AS lo_e, date_part('epoch', hi) - "
    "date_part('epoch', lo) AS span_e FROM sp), "
    "pts AS (SELECT k, min(ts) AS t0, max(ts) AS t1, count(*) AS samples, count(duty_cycle) AS "
    "with_duty, avg(duty_cycle) AS duty, min(duty_cycle) AS duty_min, max(duty_cycle) AS "
    "duty_max, count(*) FILTER (WHERE duty_cycle < $3::float8)::float8 / "
    "nullif(count(duty_cycle), 0) AS idle_share, avg(memory_used_gb) AS mem, avg(power_w) AS "
    "power FROM (SELECT CASE WHEN sp.span_e = 0 THEN 0 ELSE least($2::int - 1, "
    "floor((date_part('epoch', t.ts) - sp.lo_e) / sp.span_e * $2::int)::int) END AS k, t.ts, "
    "t.duty_cycle, t.memory_used_gb, t.power_w FROM telemetry_sample t CROSS JOIN spe sp WHERE "
    "t.benchmark_id = $1::uuid AND t.ts IS NOT NULL) b "
    "GROUP BY k), "
    /* Idle stretches per GPU over its samples with a duty cycle: a stretch starts at an idle
     * sample after a busy one (or first), and ends at the next change point — the GPU's next
     * busy sample — or, when the capture ends idle, at the GPU's last sample; its samples are
     * the row numbers in between. */
    "d AS (SELECT gpu, ts, duty_cycle < $3::float8 AS idle, row_number() OVER w AS rn, "
    "lag(duty_cycle < $3::float8) OVER w AS prev, count(*) OVER (PARTITION BY gpu) AS n, "
    "max(ts) OVER (PARTITION BY gpu) AS last_ts FROM telemetry_sample WHERE benchmark_id = "
    "$1::uuid AND ts IS NOT NULL AND duty_cycle IS NOT NULL WINDOW w AS (PARTITION BY gpu "
    "ORDER BY ts)), "
    "ch AS (SELECT gpu, ts, idle, rn, n, last_ts, lead(ts) OVER (PARTITION BY gpu ORDER BY ts) "
    "AS next_ts, lead(rn) OVER (PARTITION BY gpu ORDER BY ts) AS next_rn FROM d WHERE prev IS "
    "NULL OR prev <> idle), "
    "st AS (SELECT gpu, ts AS start, coalesce(next_ts, last_ts) AS \"end\", "
    "coalesce(next_rn, n + 1) - rn AS samples, extract(epoch FROM coalesce(next_ts, last_ts) - "
    "ts)::float8 AS duration_s FROM ch WHERE idle), "
    "kept AS (SELECT * FROM st WHERE duration_s >= $4::float8), "
    "cnt AS (SELECT count(*) AS n, count(*) FILTER (WHERE ts IS NULL) AS untimed FROM "
    "telemetry_sample WHERE benchmark_id = $1::uuid) "
    "SELECT json_build_object('benchmark_id', $1::uuid, "
    "'samples', (SELECT n FROM cnt), 'untimed_samples', (SELECT untimed FROM cnt), "
    "'samples_with_duty_cycle', (SELECT coalesce(sum(with_duty), 0) FROM pts), "
    "'gpus', (SELECT count(*) FROM (SELECT DISTINCT gpu FROM telemetry_sample WHERE "
    "benchmark_id = $1::uuid AND ts IS NOT NULL) g), "
    "'first_ts', sp.lo, 'last_ts', sp.hi, 'bucket_s', extract(epoch FROM sp.hi - sp.lo)::float8 "
    "/ $2::int, 'points_max', $2::int, 'idle_below', $3::float8, 'idle_min_s', $4::float8, "
    "'points', (SELECT coalesce(json_agg(json_build_object('t', t0, 't_end', t1, 'samples', "
    "samples, 'duty_cycle_mean', duty, 'duty_cycle_min', duty_min, 'duty_cycle_max', duty_max, "
    "'idle_share', idle_share, 'memory_used_gb', mem, 'power_w', power) ORDER BY k), '[]') "
    "FROM pts), "
    "'idle_stretches', (SELECT coalesce(json_agg(json_build_object('gpu', gpu, 'start', start, "
    "'end', \"end\", 'duration_s', duration_s, 'samples', samples) ORDER BY start, gpu), '[]') "
    "FROM (SELECT * FROM kept ORDER BY start, gpu LIMIT $5::int) x), "
    "'idle_stretches_total', (SELECT count(*) FROM kept), "
    "'idle_seconds_total', (SELECT coalesce(sum(duration_s), 0) FROM kept)) FROM sp";

enum store_status store_telemetry_series(struct store *s, const char *benchmark_id,
                                         const char *points_max, const char *idle_below,
                                         const char *idle_min_s, const char *stretches_max,
                                         json_t **out)
{
    const char *p[] = {benchmark_id, points_max, idle_below, idle_min_s, stretches_max};
    return store_json(s, SQL_TELEMETRY_SERIES, STORE_ARGS(p), out);
}

/* $3 is day|week|month (checked by the caller), a field name of date_trunc and an interval
 * unit alike. The window ends at ?to= or the last bucket with runs, and keeps $6 buckets. */
static const char *SQL_USAGE_SERIES =
    "WITH r AS (SELECT date_trunc($3::text, x.started_at AT TIME ZONE 'UTC') AS bk, "
    "x.team, coalesce(x.workload_class, '') AS klass, x.gpus * extract(epoch FROM x.ended_at - "
    "x.started_at) / 3600 AS gh FROM run x WHERE x.started_at IS NOT NULL "
    "AND ($1::jsonb = 'null'::jsonb OR x.team IN (SELECT jsonb_array_elements_text($1::jsonb))) "
    "AND ($2::text IS NULL OR x.team = $2) "
    "AND ($4::timestamptz IS NULL OR x.started_at >= $4::timestamptz) "
    "AND ($5::timestamptz IS NULL OR x.started_at < $5::timestamptz) "
    "AND ($7::jsonb IS NULL OR (x.team = $7::jsonb->>'team' AND capledger_run_of($7::jsonb->"
    "'match', x.wckey, x.comment, x.job_name, x.workload)))), "
    "w AS (SELECT max(bk) AS hi, greatest(min(bk), max(bk) - ($6::int - 1) * ('1 ' || "
    "$3::text)::interval) AS lo, min(bk) AS first FROM r), "
    "bks AS (SELECT generate_series(w.lo, w.hi, ('1 ' || $3::text)::interval) AS bk FROM w "
    "WHERE w.hi IS NOT NULL), "
    "agg AS (SELECT team, klass, bk, sum(gh) AS gh, count(*) AS runs FROM r, w WHERE r.bk >= "
    "w.lo GROUP BY 1, 2, 3), "
    "grp AS (SELECT DISTINCT team, klass FROM agg) "
    "SELECT json_build_object('bucket', $3::text, 'from', $4::timestamptz, 'to', "
    "$5::timestamptz, 'buckets_max', $6::int, "
    "'buckets', (SELECT coalesce(json_agg(to_char(bk, 'YYYY-MM-DD') ORDER BY bk), '[]') FROM "
    "bks), 'truncated', coalesce((SELECT first < lo FROM w), false), "
    "'groups', (SELECT coalesce(json_agg(json_build_object('team', g.team, 'workload_class', "
    "nullif(g.klass, ''), 'gpu_hours', (SELECT json_agg(coalesce(a.gh, 0) ORDER BY b.bk) FROM "
    "bks b LEFT JOIN agg a ON a.bk = b.bk AND a.team IS NOT DISTINCT FROM g.team AND a.klass = "
    "g.klass), 'runs', (SELECT json_agg(coalesce(a.runs, 0) ORDER BY b.bk) FROM bks b LEFT "
    "JOIN agg a ON a.bk = b.bk AND a.team IS NOT DISTINCT FROM g.team AND a.klass = g.klass)) "
    "ORDER BY g.team, g.klass), '[]') FROM grp g))";

enum store_status store_usage_series(struct store *s, const struct usage_series_query *q,
                                     json_t **out)
{
    const char *p[] = {team_scope_param(q->scope),
                       q->team,
                       q->bucket,
                       q->from,
                       q->to,
                       q->buckets_max,
                       q->workload_json};
    return store_json(s, SQL_USAGE_SERIES, STORE_ARGS(p), out);
}
