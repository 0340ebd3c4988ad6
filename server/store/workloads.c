/* Workload profiles. The validated JSON document is handed to PostgreSQL as one parameter and
 * spread over the typed columns by jsonb_populate_record, whose keys are the column names. */
#include "store/workloads.h"
#include "store/uploads.h"

#include <stdio.h>
#include <stdlib.h>

/* The client fields, in one list for the UPDATE's two sides: those of WORKLOAD_FIELDS
 * (h_workloads.c), in its order (tests/integration/field_tables.test.mjs ties them). */
#define WORKLOAD_CLIENT_COLUMNS                                                                    \
    "team, name, kind, class, description, model_parameters, precision, memory_required_gb, "      \
    "sequence_length, image_width_px, image_height_px, global_batch_size, batch_behaviour, "       \
    "dataset_gb, dataset_location, storage, network, expected_run_duration_s, checkpoint_gb, "     \
    "checkpoint_interval_s, checkpoints_kept, distributed_pattern, communication_gb_per_step, "    \
    "target_units, unit, target_quality, input_tokens_per_request, output_tokens_per_request, "    \
    "runs_match"

static const char *SQL_CREATE =
    "INSERT INTO workload SELECT * FROM jsonb_populate_record(NULL::workload, $1::jsonb || "
    "jsonb_build_object('id', gen_random_uuid(), 'version', 1, 'created_by', $2::text, "
    "'created_at', now(), 'updated_at', now())) RETURNING to_jsonb(workload)";

static const char *SQL_GET = "SELECT to_jsonb(w) FROM workload w WHERE w.id = $1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT to_jsonb(w) AS j, w.created_at, w.id FROM workload w "
    "WHERE ($1::jsonb = 'null'::jsonb OR w.team IN (SELECT jsonb_array_elements_text($1::jsonb))) "
    "AND ($2::text IS NULL OR w.team = $2) AND ($3::text IS NULL OR w.kind = $3) "
    "AND ($4::text IS NULL OR w.class = $4) "
    "AND ($10::text IS NULL OR starts_with(lower(w.name), lower($10))) "
    "AND ($5::timestamptz IS NULL OR w.created_at >= $5::timestamptz) "
    "AND ($6::timestamptz IS NULL OR w.created_at < $6::timestamptz) "
    "AND ($7::timestamptz IS NULL OR (w.created_at, w.id) > ($7::timestamptz, $8::uuid)) "
    "ORDER BY w.created_at, w.id LIMIT $9::integer) t";

static const char *SQL_UPDATE =
    "UPDATE workload w SET (" WORKLOAD_CLIENT_COLUMNS ", version, updated_at) = "
    "(SELECT " WORKLOAD_CLIENT_COLUMNS ", version, updated_at FROM jsonb_populate_record(w, "
    "$2::jsonb || jsonb_build_object('version', w.version + 1, 'updated_at', now()))) "
    "WHERE w.id = $1::uuid AND w.version = $3::integer RETURNING to_jsonb(w)";

enum store_status store_workload_create(struct store *s, const struct audit_actor *who,
                                        const json_t *doc, json_t **out)
{
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, who->name};
    enum store_status st =
        store_write_audited(s, who, "workload.create", SQL_CREATE, STORE_ARGS(p), out);
    free(text);
    return st;
}

enum store_status store_workload_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_workload_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {team_scope_param(q->scope),
                       q->team,
                       q->kind,
                       q->class_,
                       q->from,
                       q->to,
                       q->after_at,
                       q->after_id,
                       lim,
                       q->q};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_workload_update(struct store *s, const struct audit_actor *who,
                                        const char *id, long expected_version, const json_t *doc,
                                        json_t **out)
{
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    char version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *p[] = {id, text, version};
    enum store_status st =
        store_write_audited(s, who, "workload.update", SQL_UPDATE, STORE_ARGS(p), out);
    free(text);
    return st;
}
