/* Chart series (store/series.h): one statement each, bounded by their parameters. */
#include "store/series.h"

static const char *SQL_TELEMETRY_SERIES =
    "WITH timed AS (SELECT gpu, ts, duty_cycle, memory_used_gb, power_w FROM telemetry_sample "
    "WHERE benchmark_id = $1::uuid AND ts IS NOT NULL), "
    "span AS (SELECT min(ts) AS lo, max(ts) AS hi, count(*) AS n, count(DISTINCT gpu) AS gpus, "
    "count(duty_cycle) AS with_duty FROM timed), "
    "b AS (SELECT CASE WHEN sp.hi = sp.lo THEN 0 ELSE least($2::int - 1, floor(extract(epoch "
    "FROM t.ts - sp.lo) / extract(epoch FROM sp.hi - sp.lo) * $2::int)::int) END AS k, t.* "
    "FROM timed t CROSS JOIN span sp), "
    "pts AS (SELECT k, min(ts) AS t0, max(ts) AS t1, count(*) AS samples, avg(duty_cycle) AS "
    "duty, min(duty_cycle) AS duty_min, max(duty_cycle) AS duty_max, count(*) FILTER (WHERE "
    "duty_cycle < $3::float8)::float8 / nullif(count(duty_cycle), 0) AS idle_share, "
    "avg(memory_used_gb) AS mem, avg(power_w) AS power FROM b GROUP BY k), "
    /* Gaps and islands per GPU over the samples with a duty cycle: grp counts the busy samples
     * so far, so a group is a busy sample followed by the idle ones up to the next busy. */
    "d AS (SELECT gpu, ts, duty_cycle < $3::float8 AS idle FROM timed WHERE duty_cycle IS NOT "
    "NULL), "
    "g AS (SELECT gpu, ts, idle, count(*) FILTER (WHERE NOT idle) OVER (PARTITION BY gpu ORDER "
    "BY ts) AS grp FROM d), "
    "gs AS (SELECT gpu, grp, min(ts) FILTER (WHERE idle) AS start, max(ts) FILTER (WHERE idle) "
    "AS last_idle, count(*) FILTER (WHERE idle) AS samples, lead(min(ts)) OVER (PARTITION BY "
    "gpu ORDER BY grp) AS next_start FROM g GROUP BY gpu, grp), "
    "st AS (SELECT gpu, start, coalesce(next_start, last_idle) AS \"end\", samples, "
    "extract(epoch FROM coalesce(next_start, last_idle) - start)::float8 AS duration_s FROM gs "
    "WHERE samples > 0), "
    "kept AS (SELECT * FROM st WHERE duration_s >= $4::float8) "
    "SELECT json_build_object('benchmark_id', $1::uuid, "
    "'samples', (SELECT count(*) FROM telemetry_sample WHERE benchmark_id = $1::uuid), "
    "'untimed_samples', (SELECT count(*) FROM telemetry_sample WHERE benchmark_id = $1::uuid "
    "AND ts IS NULL), 'samples_with_duty_cycle', sp.with_duty, 'gpus', sp.gpus, "
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
    "'idle_seconds_total', (SELECT coalesce(sum(duration_s), 0) FROM kept)) FROM span sp";

enum store_status store_telemetry_series(struct store *s, const char *benchmark_id,
                                         const char *points_max, const char *idle_below,
                                         const char *idle_min_s, const char *stretches_max,
                                         json_t **out)
{
    const char *p[] = {benchmark_id, points_max, idle_below, idle_min_s, stretches_max};
    return store_json1(s, SQL_TELEMETRY_SERIES, 5, p, out);
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
    "AND ($5::timestamptz IS NULL OR x.started_at < $5::timestamptz)), "
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
    const char *p[] = {q->teams_json, q->team, q->bucket, q->from, q->to, q->buckets_max};
    return store_json1(s, SQL_USAGE_SERIES, 6, p, out);
}
