/* Benchmarks (append-only table; derived figures in benchmark_derived). */
#include "store/benchmarks.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/uploads.h"

/* The rendering of one benchmark row b: its columns, the names of its workload and offer (what
 * people read), the correction that superseded it, and what telemetry derived. */
#define BENCHMARK_JSON(b)                                                                          \
    "to_jsonb(" b ") || jsonb_build_object('workload_name', (SELECT w.name FROM workload w "       \
    "WHERE w.id = " b ".workload_id), 'offer_name', (SELECT coalesce(o.name, o.instance_type) "    \
    "FROM offer o WHERE o.id = " b ".offer_id), 'superseded_by', (SELECT s.id FROM benchmark s "   \
    "WHERE s.supersedes = " b ".id), 'derived', (SELECT jsonb_build_object('gpu_duty_cycle', "     \
    "d.gpu_duty_cycle, 'memory_peak_gb', d.memory_peak_gb, 'telemetry_upload_id', "                \
    "d.telemetry_upload_id, 'telemetry_upload_ids', d.telemetry_upload_ids, 'updated_at', "        \
    "d.updated_at) FROM benchmark_derived d "                                                      \
    "WHERE d.benchmark_id = " b ".id))"

#define BENCHMARK_INSERT                                                                           \
    "WITH ins AS (INSERT INTO benchmark SELECT * FROM jsonb_populate_record(NULL::benchmark, "     \
    "'{\"repetitions\": 1, \"outcome\": \"succeeded\", \"capacity_usable\": true, "                \
    "\"flags\": []}'::jsonb || $1::jsonb || jsonb_build_object('id', gen_random_uuid(), "          \
    "'team', $2::text, 'created_by', $3::text, 'created_at', now())) RETURNING *) "

static const char *SQL_CREATE =
    BENCHMARK_INSERT "SELECT to_jsonb(ins) || jsonb_build_object('superseded_by', NULL, "
                     "'derived', NULL) FROM ins";

static const char *SQL_GET =
    "SELECT " BENCHMARK_JSON("b") " FROM benchmark b WHERE b.id = $1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT " BENCHMARK_JSON(
        "b") " AS j, b.created_at, b.id FROM benchmark b "
             "WHERE ($1::jsonb = 'null'::jsonb OR b.team IN (SELECT "
             "jsonb_array_elements_text($1::jsonb))) "
             "AND ($2::text IS NULL OR b.team = $2) AND ($3::uuid IS NULL OR b.workload_id = "
             "$3::uuid) "
             "AND ($4::uuid IS NULL OR b.offer_id = $4::uuid) AND ($5::text IS NULL OR b.outcome = "
             "$5) "
             "AND ($6::timestamptz IS NULL OR b.measured_at >= $6::timestamptz) "
             "AND ($7::timestamptz IS NULL OR b.measured_at < $7::timestamptz) "
             "AND ($11::text IS NULL OR EXISTS (SELECT 1 FROM workload w WHERE w.id = "
             "b.workload_id AND starts_with(lower(w.name), lower($11))) OR EXISTS (SELECT 1 "
             "FROM offer o WHERE o.id = b.offer_id AND starts_with(lower(coalesce(o.name, "
             "o.instance_type)), lower($11)))) "
             "AND ($8::timestamptz IS NULL OR (b.created_at, b.id) > ($8::timestamptz, $9::uuid)) "
             "ORDER BY b.created_at, b.id LIMIT $10::integer) t";

enum store_status store_benchmark_create(struct store *s, const struct audit_actor *who,
                                         const json_t *doc, const char *team, json_t **out)
{
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, team, who->name};
    enum store_status st =
        store_write_audited(s, who, "benchmark.create", SQL_CREATE, STORE_ARGS(p), out);
    free(text);
    return st;
}

enum store_status store_benchmark_import(struct store *s, const struct audit_actor *who,
                                         const json_t *doc, const char *team, const json_t *upload,
                                         json_t **out)
{
    *out = NULL;
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, team, who->name};
    enum store_status st =
        store_upload_with(s, who, upload, SQL_CREATE, STORE_ARGS(p), "benchmark.import", out);
    free(text);
    return st;
}

enum store_status store_benchmark_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_benchmark_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {team_scope_param(q->scope),
                       q->team,
                       q->workload_id,
                       q->offer_id,
                       q->state,
                       q->from,
                       q->to,
                       q->after_at,
                       q->after_id,
                       lim,
                       q->q};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}
