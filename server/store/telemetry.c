/* Telemetry samples and the figures they give a benchmark. */
#include "store/telemetry.h"

#include <stdio.h>

/* Rows are staged first and then offered in their order, so of two samples with the same
 * (benchmark, GPU, timestamp) the first stored wins and the rest count as duplicates, whether
 * they repeat an earlier upload or the same one. A sample without a timestamp has no identity:
 * it is stored unless an earlier upload to the benchmark had the very same bytes ($3). */
static const char *SQL_STAGE =
    "CREATE TEMP TABLE telemetry_stage (seq bigint GENERATED ALWAYS AS IDENTITY, upload_id uuid, "
    "benchmark_id uuid, ts timestamptz, gpu text, duty_cycle double precision, memory_used_gb "
    "double precision, memory_total_gb double precision, power_w double precision) ON COMMIT DROP";

static const char *SQL_COPY =
    "COPY telemetry_stage (upload_id, benchmark_id, ts, gpu, duty_cycle, memory_used_gb, "
    "memory_total_gb, power_w) FROM STDIN";

static const char *SQL_MOVE =
    "WITH ins AS (INSERT INTO telemetry_sample (upload_id, benchmark_id, ts, gpu, duty_cycle, "
    "memory_used_gb, memory_total_gb, power_w) SELECT upload_id, benchmark_id, ts, gpu, "
    "duty_cycle, memory_used_gb, memory_total_gb, power_w FROM telemetry_stage s "
    "WHERE s.ts IS NOT NULL OR NOT EXISTS (SELECT 1 FROM upload u WHERE u.kind = 'telemetry' "
    "AND u.benchmark_id = $1::uuid AND u.body_sha256 = $2) ORDER BY seq "
    "ON CONFLICT (benchmark_id, gpu, ts) DO NOTHING RETURNING 1) "
    "SELECT json_build_object('inserted', (SELECT count(*) FROM ins), 'staged', "
    "(SELECT count(*) FROM telemetry_stage))";

#define DERIVED_JSON                                                                               \
    "json_build_object('gpu_duty_cycle', gpu_duty_cycle, 'memory_peak_gb', memory_peak_gb, "       \
    "'telemetry_upload_id', telemetry_upload_id, 'telemetry_upload_ids', telemetry_upload_ids, "   \
    "'updated_at', updated_at)"

/* Figures over every sample of the benchmark, so several uploads (one per node, say) add up
 * to one duty cycle whatever their order. Only what the benchmark left out is derived; run
 * only when the upload added samples, so a re-upload changes nothing. The upload being
 * committed ($2) is not yet in table upload: it is added to the list by hand. */
static const char *SQL_DERIVE =
    "INSERT INTO benchmark_derived (benchmark_id, gpu_duty_cycle, memory_peak_gb, "
    "telemetry_upload_id, telemetry_upload_ids, updated_at) "
    "SELECT b.id, CASE WHEN b.gpu_duty_cycle IS NULL THEN a.duty END, "
    "CASE WHEN b.memory_peak_gb IS NULL THEN a.mem END, $2::uuid, "
    "coalesce((SELECT array_agg(u.id ORDER BY u.created_at, u.id) FROM upload u "
    "WHERE u.kind = 'telemetry' AND u.benchmark_id = b.id AND EXISTS (SELECT 1 FROM "
    "telemetry_sample s WHERE s.benchmark_id = b.id AND s.upload_id = u.id)), '{}') || $2::uuid, "
    "now() FROM benchmark b, "
    "(SELECT avg(duty_cycle) AS duty, max(memory_used_gb) AS mem FROM telemetry_sample "
    "WHERE benchmark_id = $1::uuid) a WHERE b.id = $1::uuid "
    "ON CONFLICT (benchmark_id) DO UPDATE SET gpu_duty_cycle = EXCLUDED.gpu_duty_cycle, "
    "memory_peak_gb = EXCLUDED.memory_peak_gb, telemetry_upload_id = "
    "EXCLUDED.telemetry_upload_id, telemetry_upload_ids = EXCLUDED.telemetry_upload_ids, "
    "updated_at = EXCLUDED.updated_at RETURNING " DERIVED_JSON;

static const char *SQL_DERIVED_NOW =
    "SELECT " DERIVED_JSON " FROM benchmark_derived WHERE benchmark_id = $1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT to_jsonb(u) AS j, u.created_at, u.id FROM upload u "
    "WHERE u.kind = 'telemetry' AND u.benchmark_id = $1::uuid "
    "AND ($2::timestamptz IS NULL OR (u.created_at, u.id) > ($2::timestamptz, $3::uuid)) "
    "AND ($5::timestamptz IS NULL OR u.created_at >= $5::timestamptz) "
    "AND ($6::timestamptz IS NULL OR u.created_at < $6::timestamptz) "
    "ORDER BY u.created_at, u.id LIMIT $4::integer) t";

enum store_status store_telemetry_begin(struct store *s, struct upload_tx **out)
{
    return store_upload_tx_begin(s, SQL_STAGE, SQL_COPY, out);
}

enum store_status store_telemetry_finish(struct upload_tx *u, const struct audit_actor *who,
                                         json_t *rec, const char *benchmark_id, json_t **derived)
{
    *derived = NULL;
    long rows = 0;
    json_t *counts = NULL;
    const char *upload_id = json_string_value(json_object_get(rec, "id"));
    const char *p[] = {benchmark_id, upload_id};
    const char *pm[] = {benchmark_id, json_string_value(json_object_get(rec, "body_sha256"))};
    struct store_conn *c = NULL;
    enum store_status st = store_upload_tx_end_copy(u, &rows);
    if (st == STORE_OK) {
        c = store_upload_tx_conn(u);
        st = store_json_tx(c, SQL_MOVE, STORE_ARGS(pm), &counts);
    }
    long staged = (long)json_integer_value(json_object_get(counts, "staged"));
    long inserted = (long)json_integer_value(json_object_get(counts, "inserted"));
    json_decref(counts);
    if (st == STORE_OK && inserted > 0)
        st = store_json_tx(c, SQL_DERIVE, STORE_ARGS(p), derived);
    else if (st == STORE_OK) {
        st = store_json_tx(c, SQL_DERIVED_NOW, 1, p, derived);
        if (st == STORE_NOT_FOUND) {
            st = STORE_OK;
            *derived = json_null();
        }
    }
    if (st != STORE_OK) {
        json_decref(*derived);
        *derived = NULL;
        store_upload_tx_abort(u);
        return st;
    }
    json_object_set_new(rec, "inserted", json_integer(inserted));
    json_object_set_new(rec, "duplicates", json_integer(staged - inserted));
    st = store_upload_tx_commit(u, who, rec, "telemetry.upload", NULL);
    if (st != STORE_OK) {
        json_decref(*derived);
        *derived = NULL;
    }
    return st;
}

enum store_status store_telemetry_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {q->benchmark_id, q->after_at, q->after_id, lim, q->from, q->to};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}
