/* Telemetry samples and the figures they give a benchmark. */
#include "store/telemetry.h"

#include <stdio.h>

static const char *SQL_COPY =
    "COPY telemetry_sample (upload_id, benchmark_id, ts, gpu, duty_cycle, memory_used_gb, "
    "memory_total_gb, power_w) FROM STDIN";

/* Figures over every sample of the benchmark, so several uploads (one per node, say) add up
 * to one duty cycle whatever their order. Only what the benchmark left out is derived. */
static const char *SQL_DERIVE =
    "INSERT INTO benchmark_derived (benchmark_id, gpu_duty_cycle, memory_peak_gb, "
    "telemetry_upload_id, updated_at) "
    "SELECT b.id, CASE WHEN b.gpu_duty_cycle IS NULL THEN a.duty END, "
    "CASE WHEN b.memory_peak_gb IS NULL THEN a.mem END, $2::uuid, now() FROM benchmark b, "
    "(SELECT avg(duty_cycle) AS duty, max(memory_used_gb) AS mem FROM telemetry_sample "
    "WHERE benchmark_id = $1::uuid) a WHERE b.id = $1::uuid "
    "ON CONFLICT (benchmark_id) DO UPDATE SET gpu_duty_cycle = EXCLUDED.gpu_duty_cycle, "
    "memory_peak_gb = EXCLUDED.memory_peak_gb, telemetry_upload_id = "
    "EXCLUDED.telemetry_upload_id, updated_at = EXCLUDED.updated_at "
    "RETURNING json_build_object('gpu_duty_cycle', gpu_duty_cycle, 'memory_peak_gb', "
    "memory_peak_gb, 'telemetry_upload_id', telemetry_upload_id, 'updated_at', updated_at)";

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
    return store_upload_tx_begin(s, NULL, SQL_COPY, out);
}

enum store_status store_telemetry_finish(struct upload_tx *u, const struct audit_actor *who,
                                         const json_t *rec, const char *benchmark_id,
                                         json_t **derived)
{
    *derived = NULL;
    long rows = 0;
    const char *p[] = {benchmark_id, json_string_value(json_object_get(rec, "id"))};
    enum store_status st = store_upload_tx_end_copy(u, &rows);
    if (st == STORE_OK)
        st = store_json(store_upload_tx_conn(u), SQL_DERIVE, 2, p, derived);
    if (st != STORE_OK) {
        json_decref(*derived);
        *derived = NULL;
        store_upload_tx_abort(u);
        return st;
    }
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
    return store_json1(s, SQL_LIST, 6, p, out);
}
