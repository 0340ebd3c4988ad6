#include "store/whatif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Queue order in SQL too, so the resolved document lists its jobs the same way every time. The
 * scan is the run table's own (partitions pruned by the window, BRIN on submitted_at). */
static const char *SQL_JOBS =
    "SELECT r.cluster || '/' || r.external_id, floor(extract(epoch FROM r.submitted_at))::bigint,"
    " floor(extract(epoch FROM r.started_at))::bigint, floor(extract(epoch FROM "
    "r.ended_at))::bigint,"
    " r.gpus, r.state FROM run r WHERE r.team = $1 AND ($2::text IS NULL OR r.cluster = $2)"
    " AND ($3::text IS NULL OR r.partition = $3) AND ($4::text IS NULL OR r.workload_class = $4)"
    " AND ($5::timestamptz IS NULL OR r.submitted_at >= $5::timestamptz)"
    " AND ($6::timestamptz IS NULL OR r.submitted_at < $6::timestamptz)"
    " ORDER BY r.submitted_at, (r.cluster || '/' || r.external_id) COLLATE \"C\"";

static const char *SQL_CAPACITY =
    "SELECT to_json(sum(capacity_gpus)) FROM cluster_partition WHERE cluster = $1"
    " AND ($2::text IS NULL OR partition = $2) HAVING count(capacity_gpus) > 0";

#define WHATIF_ROW                                                                                 \
    "json_build_object('sha256', w.sha256, 'input_sha256', w.input_sha256, 'engine_version', "     \
    "w.engine_version, 'jobs', w.jobs, 'team', l.team, 'selection', w.selection, 'created_by', "   \
    "l.created_by, 'created_at', l.created_at"

#define TEAM_VISIBLE "($2::json IS NULL OR l.team IN (SELECT json_array_elements_text($2::json)))"

static const char *SQL_INSERT =
    "INSERT INTO whatif (sha256, input_sha256, engine_version, jobs, selection, resolved_jcs,"
    " result, result_jcs) VALUES ($1, $2, $3, $4::bigint, $5::jsonb, $6, $7::text::jsonb, $7)"
    " ON CONFLICT (sha256) DO NOTHING";

static const char *SQL_LINK =
    "INSERT INTO whatif_link (sha256, team, created_by) VALUES ($1, $2, $3)"
    " ON CONFLICT DO NOTHING RETURNING to_json(true)";

static const char *SQL_OF_TEAM = "SELECT " WHATIF_ROW ") FROM whatif w JOIN whatif_link l ON"
                                 " l.sha256 = w.sha256 WHERE w.sha256 = $1 AND l.team = $2";

static const char *SQL_GET =
    "SELECT " WHATIF_ROW ", 'result', w.result) FROM whatif w JOIN whatif_link l ON l.sha256 ="
    " w.sha256 WHERE w.sha256 = $1 AND " TEAM_VISIBLE " ORDER BY l.created_at, l.team LIMIT 1";

static const char *SQL_INPUT =
    "SELECT w.resolved_jcs FROM whatif w WHERE w.sha256 = $1 AND EXISTS (SELECT 1 FROM"
    " whatif_link l WHERE l.sha256 = w.sha256 AND " TEAM_VISIBLE ")";

static const char *null_filter(const struct team_scope *scope)
{
    const char *param = team_scope_param(scope);
    return strcmp(param, "null") != 0 ? param : NULL;
}

enum store_status store_whatif_jobs(struct store *s, const struct store_whatif_selection *sel,
                                    store_row_fn fn, void *ctx)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    const char *p[] = {sel->team,           sel->cluster, sel->partition,
                       sel->workload_class, sel->from,    sel->to};
    enum store_status st = store_rows_tx(c, SQL_JOBS, STORE_ARGS(p), fn, ctx);
    store_release(s, c);
    return st;
}

enum store_status store_cluster_capacity(struct store *s, const char *cluster,
                                         const char *partition, double *gpus)
{
    const char *p[] = {cluster, partition};
    json_t *v = NULL;
    enum store_status st = store_json(s, SQL_CAPACITY, STORE_ARGS(p), &v);
    if (st == STORE_OK)
        *gpus = json_number_value(v);
    json_decref(v);
    return st;
}

enum store_status store_whatif_put(struct store *s, const struct audit_actor *who,
                                   const char *sha256, const char *input_sha256,
                                   const char *engine_version, size_t jobs, const char *team,
                                   const json_t *selection, const char *resolved_jcs,
                                   const char *result_jcs, json_t **out)
{
    *out = NULL;
    char njobs[24];
    snprintf(njobs, sizeof njobs, "%zu", jobs);
    char *sel = selection ? json_dumps(selection, JSON_COMPACT) : NULL;
    struct store_conn *c = store_acquire(s, 2000);
    enum store_status st = c ? STORE_OK : STORE_UNAVAILABLE;
    json_t *linked = NULL, *row = NULL;
    if (st == STORE_OK)
        st = store_begin(c);
    if (st == STORE_OK) {
        const char *p[] = {sha256, input_sha256, engine_version, njobs,
                           sel,    resolved_jcs, result_jcs};
        st = store_exec_tx(c, SQL_INSERT, STORE_ARGS(p), NULL);
    }
    if (st == STORE_OK) {
        const char *p[] = {sha256, team, who->name};
        st = store_json_tx(c, SQL_LINK, STORE_ARGS(p), &linked);
        if (st == STORE_NOT_FOUND) /* this team stored this replay before */
            st = STORE_OK;
    }
    if (st == STORE_OK) {
        const char *p[] = {sha256, team};
        st = store_json_tx(c, SQL_OF_TEAM, STORE_ARGS(p), &row);
    }
    if (st == STORE_OK && linked)
        st = store_audit_record_tx(c, who, "whatif.create", sha256, row);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st == STORE_OK) {
        json_object_set_new(row, "created", json_boolean(linked != NULL));
        *out = row;
        row = NULL;
    } else if (c) {
        store_rollback(c);
    }
    if (c)
        store_release(s, c);
    json_decref(linked);
    json_decref(row);
    free(sel);
    return st;
}

enum store_status store_whatif_get(struct store *s, const char *sha256,
                                   const struct team_scope *scope, json_t **out)
{
    const char *p[] = {sha256, null_filter(scope)};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

struct one_text {
    char *bytes;
    size_t len;
    bool oom;
};

static int keep_text(void *ctx, int ncols, const char *const *values)
{
    struct one_text *t = ctx;
    if (ncols >= 1 && values[0] && !t->bytes) {
        t->len = strlen(values[0]);
        t->bytes = malloc(t->len + 1);
        if (t->bytes)
            memcpy(t->bytes, values[0], t->len + 1);
        else
            t->oom = true;
    }
    return 0;
}

enum store_status store_whatif_input(struct store *s, const char *sha256,
                                     const struct team_scope *scope, char **bytes, size_t *len)
{
    *bytes = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    struct one_text t = {0};
    const char *p[] = {sha256, null_filter(scope)};
    enum store_status st = store_rows_tx(c, SQL_INPUT, STORE_ARGS(p), keep_text, &t);
    store_release(s, c);
    if (st == STORE_OK && t.oom)
        st = STORE_ERROR;
    if (st == STORE_OK && !t.bytes)
        st = STORE_NOT_FOUND;
    if (st != STORE_OK) {
        free(t.bytes);
        return st;
    }
    *bytes = t.bytes;
    *len = t.len;
    return STORE_OK;
}
