/* Upload records. */
#include "store/uploads.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/jcs.h"

static const char *SQL_INSERT =
    "INSERT INTO upload SELECT * FROM jsonb_populate_record(NULL::upload, "
    "'{\"lines\": 0, \"inserted\": 0, \"duplicates\": 0, \"skipped\": 0, "
    "\"rejected_total\": 0, \"params\": {}, \"warnings\": []}'::jsonb || $1::jsonb || "
    "jsonb_build_object('created_at', now())) RETURNING to_jsonb(upload)";

static const char *SQL_GET = "SELECT to_jsonb(u) FROM upload u WHERE u.id = $1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT to_jsonb(u) AS j, u.created_at, u.id FROM upload u "
    "WHERE ($1::jsonb = 'null'::jsonb OR u.team IN (SELECT jsonb_array_elements_text($1::jsonb)) "
    "OR u.created_by = $2::uuid) "
    "AND ($3::text IS NULL OR u.team = $3) AND ($4::text IS NULL OR u.kind = $4) "
    "AND ($5::timestamptz IS NULL OR u.created_at >= $5::timestamptz) "
    "AND ($6::timestamptz IS NULL OR u.created_at < $6::timestamptz) "
    "AND ($7::timestamptz IS NULL OR (u.created_at, u.id) > ($7::timestamptz, $8::uuid)) "
    "ORDER BY u.created_at, u.id LIMIT $9::integer) t";

void store_new_uuid(char out[37])
{
    unsigned char b[16];
    randombytes_buf(b, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

char *store_doc_text(const json_t *v)
{
    return jcs_serialize(v, NULL);
}

enum store_status store_upload_insert_tx(struct store_conn *c, const json_t *rec, json_t **out)
{
    char *text = store_doc_text(rec);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text};
    json_t *row = NULL;
    enum store_status st = store_json_tx(c, SQL_INSERT, STORE_ARGS(p), &row);
    free(text);
    if (out)
        *out = row;
    else
        json_decref(row);
    return st;
}

enum store_status store_upload_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_upload_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {team_scope_param(q->scope),
                       q->user_id,
                       q->team,
                       q->kind,
                       q->from,
                       q->to,
                       q->after_at,
                       q->after_id,
                       lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

static const char *SQL_TZ_KNOWN =
    "SELECT to_json(EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1))";

/* A local time in a gap converts to a UTC time that does not convert back to it. */
static const char *SQL_TZ_HOUR =
    "SELECT json_build_object('epoch', extract(epoch FROM t)::bigint, 'exists', "
    "(t AT TIME ZONE $2) = $1::timestamp) FROM (SELECT $1::timestamp AT TIME ZONE $2 AS t) x";

enum store_status store_tz_known(struct store *s, const char *name, int *known)
{
    const char *p[] = {name};
    json_t *v = NULL;
    enum store_status st = store_json(s, SQL_TZ_KNOWN, STORE_ARGS(p), &v);
    *known = st == STORE_OK && json_is_true(v);
    json_decref(v);
    return st;
}

enum store_status store_tz_local_hour(struct store *s, const char *zone, int year, int month,
                                      int day, int hour, int64_t *epoch_s, int *exists)
{
    char local[32];
    snprintf(local, sizeof local, "%04d-%02d-%02d %02d:00:00", year, month, day, hour);
    const char *p[] = {local, zone};
    json_t *v = NULL;
    enum store_status st = store_json(s, SQL_TZ_HOUR, STORE_ARGS(p), &v);
    *exists = st == STORE_OK && json_is_true(json_object_get(v, "exists"));
    *epoch_s = st == STORE_OK ? (int64_t)json_integer_value(json_object_get(v, "epoch")) : 0;
    json_decref(v);
    return st;
}

struct upload_tx {
    struct store *s;
    struct store_conn *c;
    int copying;
};

enum store_status store_upload_tx_begin(struct store *s, const char *setup_sql,
                                        const char *copy_sql, struct upload_tx **out)
{
    *out = NULL;
    struct upload_tx *u = calloc(1, sizeof *u);
    if (!u)
        return STORE_UNAVAILABLE;
    u->s = s;
    u->c = store_acquire(s, 2000);
    if (!u->c) {
        free(u);
        return STORE_UNAVAILABLE;
    }
    enum store_status st = store_begin(u->c);
    if (st == STORE_OK && setup_sql)
        st = store_exec_tx(u->c, setup_sql, 0, NULL, NULL);
    if (st == STORE_OK && copy_sql)
        st = store_copy_begin(u->c, copy_sql);
    if (st != STORE_OK) {
        store_upload_tx_abort(u);
        return st;
    }
    u->copying = copy_sql != NULL;
    *out = u;
    return STORE_OK;
}

enum store_status store_upload_tx_send(struct upload_tx *u, const char *data, size_t len)
{
    return store_copy_send(u->c, data, len);
}

enum store_status store_upload_tx_end_copy(struct upload_tx *u, long *rows)
{
    u->copying = 0;
    return store_copy_end(u->c, NULL, rows);
}

struct store_conn *store_upload_tx_conn(struct upload_tx *u)
{
    return u->c;
}

void store_upload_tx_abort(struct upload_tx *u)
{
    if (!u)
        return;
    long ignored;
    /* the rollback below discards the COPY whatever this answers */
    if (u->copying && store_copy_end(u->c, "upload cancelled", &ignored) != STORE_OK)
        u->copying = 0;
    store_rollback(u->c);
    store_release(u->s, u->c);
    free(u);
}

enum store_status store_upload_tx_commit(struct upload_tx *u, const struct audit_actor *who,
                                         const json_t *rec, const char *action,
                                         const json_t *change)
{
    enum store_status st = store_upload_insert_tx(u->c, rec, NULL);
    if (st == STORE_OK)
        st = store_audit_record_tx(u->c, who, action, json_string_value(json_object_get(rec, "id")),
                                   change ? change : rec);
    if (st == STORE_OK)
        st = store_commit(u->c);
    store_rollback(u->c);
    store_release(u->s, u->c);
    free(u);
    return st;
}

enum store_status store_upload_with(struct store *s, const struct audit_actor *who,
                                    const json_t *rec, const char *sql, int nparams,
                                    const char *const *params, const char *action, json_t **out)
{
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *result = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_upload_insert_tx(c, rec, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, sql, nparams, params, &result);
    if (st == STORE_OK) {
        const char *target = json_string_value(json_object_get(result, "id"));
        if (!target)
            target = json_string_value(json_object_get(rec, "id"));
        st = store_audit_record_tx(c, who, action, target, result);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    if (st != STORE_OK) {
        store_rollback(c);
        json_decref(result);
        result = NULL;
    }
    store_release(s, c);
    *out = result;
    return st;
}
