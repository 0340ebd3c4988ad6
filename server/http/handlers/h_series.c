/* Chart series, bounded in size (store/series.h):
 *   GET /benchmarks/{id}/telemetry/series?points=&idle_below=&idle_min_s= — the benchmark's
 *     duty cycle over time downsampled to at most `points` equal time buckets, and its idle
 *     stretches (the first TELEMETRY_SERIES_MAX_STRETCHES, with their total count);
 *   GET /reports/usage/series?bucket=day|week|month&team=&from=&to= — GPU-hours per bucket by
 *     team and workload class, the latest USAGE_SERIES_MAX_BUCKETS buckets.
 * Team members see their teams' benchmarks and runs only (a benchmark of another team is 404). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/runsof.h"
#include "core/formats/telemetry.h"
#include "http/resource.h"
#include "store/series.h"

/* ?name= of kind RQ_INTEGER or RQ_NUMBER in range, as text in out (size >= 32); def when
 * absent or refused (then a problem names it). */
static void number_param(struct req *r, const char *name, enum res_query_kind kind,
                         struct res_range range, double def, char *out, size_t size,
                         struct problems *p)
{
    if (!res_query(r, name, kind, &range, out, size, p))
        snprintf(out, size, "%.17g", def);
}

static void telemetry_series(struct req *r)
{
    struct problems p;
    problems_init(&p);
    char points[32], idle_below[32], idle_min[32], stretches[24];
    json_t *out = NULL;
    json_t *bench = res_readable_benchmark(r, r->params[0]);
    if (!bench)
        goto done;
    number_param(r, "points", RQ_INTEGER, (struct res_range){2, TELEMETRY_SERIES_MAX_POINTS},
                 TELEMETRY_SERIES_DEFAULT_POINTS, points, sizeof points, &p);
    number_param(r, "idle_below", RQ_NUMBER, (struct res_range){0.001, 1},
                 TELEMETRY_DEFAULT_IDLE_BELOW, idle_below, sizeof idle_below, &p);
    number_param(r, "idle_min_s", RQ_NUMBER, (struct res_range){0, 86400.0 * 30},
                 TELEMETRY_SERIES_DEFAULT_IDLE_MIN_S, idle_min, sizeof idle_min, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto done;
    }
    snprintf(stretches, sizeof stretches, "%d", TELEMETRY_SERIES_MAX_STRETCHES);
    enum store_status st = store_telemetry_series(r->app->read_store, r->params[0], points,
                                                  idle_below, idle_min, stretches, &out);
    resp_stored(r, st, out, "telemetry series");
    out = NULL;
done:
    json_decref(out);
    json_decref(bench);
    problems_free(&p);
}

#define USAGE_SERIES_MAX_BUCKETS 120

static const char *const BUCKETS[] = {"day", "week", "month", NULL};

static void usage_series(struct req *r)
{
    struct problems p;
    problems_init(&p);
    char bucket[16], team[128], from[40], to[40], max[16], workload[40];
    char *of_text = NULL;
    json_t *out = NULL, *of = NULL;
    int unavailable = 0;
    struct usage_series_query q;
    memset(&q, 0, sizeof q);
    q.bucket = res_query(r, "bucket", RQ_ENUM, BUCKETS, bucket, sizeof bucket, &p);
    if (!q.bucket) /* absent (a refused one answers 422) */
        q.bucket = "week";
    q.team = res_query(r, "team", RQ_TEXT, NULL, team, sizeof team, &p);
    q.from = res_query(r, "from", RQ_TIME, NULL, from, sizeof from, &p);
    q.to = res_query(r, "to", RQ_TIME, NULL, to, sizeof to, &p);
    if (res_query(r, "workload", RQ_UUID, NULL, workload, sizeof workload, &p) &&
        (of = runsof_workload(r, workload, "?workload", &p, &unavailable)) != NULL)
        q.workload_json = of_text = json_dumps(of, JSON_COMPACT);
    if (unavailable) {
        resp_store_error(r, STORE_UNAVAILABLE, "workload");
        goto done;
    }
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto done;
    }
    snprintf(max, sizeof max, "%d", USAGE_SERIES_MAX_BUCKETS);
    q.buckets_max = max;
    q.scope = &r->scope;
    enum store_status st = store_usage_series(r->app->read_store, &q, &out);
    resp_stored(r, st, out, "usage series");
    out = NULL;
done:
    json_decref(out);
    json_decref(of);
    free(of_text);
    problems_free(&p);
}

const struct route series_routes[] = {
    {"GET", "/api/v1/benchmarks/{id}/telemetry/series", telemetry_series, ROLES_USERS, 0,
     "points idle_below idle_min_s", NULL},
    {"GET", "/api/v1/reports/usage/series", usage_series, ROLES_USERS, 0,
     "bucket team from to workload", NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
