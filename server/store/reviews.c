/* 90-day reviews, artifacts and the evidence checklist.
 *
 * Phases are computed by PostgreSQL from started_on and today's UTC date, so every server
 * instance shows the same phase whatever its own clock zone. The checklist gathers its facts
 * with a few queries (the review's workloads with their run and benchmark counts, the cited
 * comparisons, and for each option of the first one the stored benchmark and offer it was
 * resolved from) and then decides each item in C, writing a sentence for everything missing. */
#include "store/reviews.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TODAY "((now() AT TIME ZONE 'UTC')::date)"
#define PHASES                                                                                     \
    "(VALUES ('evidence_plan', 'Evidence plan', 1, 30), "                                          \
    "('smallest_complete_workflow', 'Smallest complete workflow', 31, 60), "                       \
    "('boundary_test', 'Boundary test', 61, 90)) AS ph(name, title, first_day, last_day)"
#define REVIEW_DAY "(" TODAY " - r.started_on + 1)"
#define REVIEW_JSON                                                                                \
    "json_build_object('id', r.id, 'title', r.title, 'question', r.question, "                     \
    "'workload_ids', to_json(r.workload_ids), 'owner', r.owner, 'started_on', r.started_on, "      \
    "'status', r.status, 'drift_threshold', r.drift_threshold, 'day', " REVIEW_DAY ", "            \
    "'current_phase', (SELECT ph.name FROM " PHASES " WHERE " REVIEW_DAY                           \
    " BETWEEN ph.first_day AND ph.last_day), "                                                     \
    "'phases', (SELECT json_agg(json_build_object('phase', ph.name, 'title', ph.title, "           \
    "'first_day', ph.first_day, 'last_day', ph.last_day, "                                         \
    "'starts_on', r.started_on + ph.first_day - 1, 'ends_on', r.started_on + ph.last_day - 1, "    \
    "'current', " REVIEW_DAY " BETWEEN ph.first_day AND ph.last_day) ORDER BY ph.first_day) "      \
    "FROM " PHASES "), "                                                                           \
    "'version', r.version, 'created_by', r.created_by, 'created_at', r.created_at, "               \
    "'updated_at', r.updated_at)"

/* A review is visible to a team member when one of its workloads belongs to their teams. */
#define REVIEW_VISIBLE(param)                                                                      \
    "(" param "::jsonb = 'null'::jsonb OR EXISTS (SELECT 1 FROM workload w "                       \
    "WHERE w.id = ANY (r.workload_ids) AND w.team IN "                                             \
    "(SELECT jsonb_array_elements_text(" param "::jsonb))))"

/* A scenario document's reference as a uuid, or NULL for text that is not one: CASE keeps the
 * cast from seeing it, and comparing uuids (not text) lets the primary key index serve. */
#define UUID_OR_NULL(expr)                                                                         \
    "(CASE WHEN (" expr ") ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "   \
    "THEN (" expr ")::uuid END)"

static const char *SQL_REFS =
    "SELECT json_build_object('owner_ok', EXISTS (SELECT 1 FROM app_user "
    "WHERE username = $1 AND role = 'owner' AND disabled_at IS NULL), "
    "'missing_workloads', coalesce((SELECT json_agg(e.i - 1 ORDER BY e.i) "
    "FROM json_array_elements_text($2::json) WITH ORDINALITY AS e(id, i) "
    "WHERE NOT EXISTS (SELECT 1 FROM workload w WHERE w.id = e.id::uuid)), '[]'))";

static const char *SQL_CREATE =
    "INSERT INTO review AS r (title, question, workload_ids, owner, started_on, drift_threshold,"
    " created_by) SELECT $1, $2, ARRAY(SELECT json_array_elements_text($3::json))::uuid[], $4,"
    " $5::date, coalesce($6::float8, 0.25), $7 RETURNING " REVIEW_JSON;

static const char *SQL_GET =
    "SELECT " REVIEW_JSON " FROM review r WHERE r.id = $1::uuid AND " REVIEW_VISIBLE("$2");

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM (SELECT " REVIEW_JSON
    " AS j, r.created_at, r.id FROM review r WHERE " REVIEW_VISIBLE(
        "$1") " AND ($2::text IS NULL OR r.status = $2) AND ($3::text IS NULL OR r.owner = $3)"
              " AND ($4::timestamptz IS NULL OR (r.created_at, r.id) > ($4::timestamptz, $5::uuid))"
              " ORDER BY r.created_at, r.id LIMIT $6::integer) t";

static const char *SQL_UPDATE =
    "UPDATE review AS r SET title = $2, question = $3, "
    "workload_ids = ARRAY(SELECT json_array_elements_text($4::json))::uuid[], owner = $5, "
    "started_on = $6::date, drift_threshold = coalesce($7::float8, 0.25), "
    "version = r.version + 1, updated_at = now() "
    "WHERE r.id = $1::uuid AND r.version = $8::integer RETURNING " REVIEW_JSON;

#define ARTIFACT_JSON                                                                              \
    "json_build_object('id', a.id, 'review_id', a.review_id, 'title', a.title, "                   \
    "'phase', a.phase, 'contributor', a.contributor, 'due_on', a.due_on, "                         \
    "'representative_inputs', a.representative_inputs, 'baseline', a.baseline, "                   \
    "'status', a.status, 'evidence', to_json(a.evidence), 'exercised', a.exercised, "              \
    "'version', a.version, 'created_by', a.created_by, 'created_at', a.created_at, "               \
    "'updated_at', a.updated_at)"

static const char *SQL_ARTIFACT_CREATE =
    "INSERT INTO review_artifact AS a (review_id, title, phase, contributor, due_on, "
    "representative_inputs, baseline, status, evidence, exercised, created_by) "
    "SELECT $1::uuid, d.title, d.phase, d.contributor, d.due_on, d.representative_inputs, "
    "d.baseline, coalesce(d.status, 'planned'), "
    "ARRAY(SELECT jsonb_array_elements_text(coalesce($2::jsonb->'evidence', '[]'))), "
    "coalesce($2::jsonb->'exercised', '[]'), $3 "
    "FROM jsonb_to_record($2::jsonb) AS d(title text, phase text, contributor text, due_on date, "
    "representative_inputs text, baseline text, status text) RETURNING " ARTIFACT_JSON;

static const char *SQL_ARTIFACT_LIST =
    "SELECT coalesce(json_agg(" ARTIFACT_JSON " ORDER BY a.created_at, a.id), '[]') "
    "FROM review_artifact a WHERE a.review_id = $1::uuid";

static const char *SQL_ARTIFACT_GET = "SELECT " ARTIFACT_JSON " FROM review_artifact a "
                                      "WHERE a.review_id = $1::uuid AND a.id = $2::uuid";

static const char *SQL_ARTIFACT_UPDATE =
    "UPDATE review_artifact AS a SET title = d.title, phase = d.phase, "
    "contributor = d.contributor, due_on = d.due_on, "
    "representative_inputs = d.representative_inputs, baseline = d.baseline, "
    "status = coalesce(d.status, 'planned'), "
    "evidence = ARRAY(SELECT jsonb_array_elements_text(coalesce($3::jsonb->'evidence', '[]'))), "
    "exercised = coalesce($3::jsonb->'exercised', '[]'), version = a.version + 1, "
    "updated_at = now() "
    "FROM jsonb_to_record($3::jsonb) AS d(title text, phase text, contributor text, due_on date, "
    "representative_inputs text, baseline text, status text) "
    "WHERE a.review_id = $1::uuid AND a.id = $2::uuid AND a.version = $4::integer "
    "RETURNING " ARTIFACT_JSON;

/* An id is evidence when it names a benchmark or an upload (runs, telemetry, price sheets,
 * load-test imports), or is the hash of a stored comparison. CASE keeps the uuid cast from
 * seeing text that is not one. */
static const char *SQL_EVIDENCE_UNKNOWN =
    "SELECT coalesce(json_agg(e.i - 1 ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(id, i) WHERE NOT CASE "
    "WHEN e.id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN "
    "EXISTS (SELECT 1 FROM benchmark b WHERE b.id = e.id::uuid) "
    "OR EXISTS (SELECT 1 FROM upload u WHERE u.id = e.id::uuid) "
    "WHEN e.id ~ '^[0-9a-f]{64}$' THEN EXISTS (SELECT 1 FROM comparison c WHERE c.sha256 = e.id) "
    "ELSE false END";

/* The indexes of ids a team member may not cite: benchmarks of teams outside $2; uploads they
 * cannot list (another team's, or a team-less one someone else made — offer price sheets are
 * everyone's); comparisons no scenario of those teams asked for. Unknown ids are left to
 * SQL_EVIDENCE_UNKNOWN. */
static const char *SQL_EVIDENCE_FOREIGN =
    "SELECT coalesce(json_agg(e.i - 1 ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(id, i) WHERE CASE "
    "WHEN e.id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN "
    "EXISTS (SELECT 1 FROM benchmark b WHERE b.id = e.id::uuid AND b.team NOT IN "
    "  (SELECT json_array_elements_text($2::json))) "
    "OR EXISTS (SELECT 1 FROM upload u WHERE u.id = e.id::uuid AND u.kind <> 'offers' "
    "  AND u.created_by IS DISTINCT FROM $3::uuid AND (u.team IS NULL "
    "  OR u.team NOT IN (SELECT json_array_elements_text($2::json)))) "
    "WHEN e.id ~ '^[0-9a-f]{64}$' THEN EXISTS (SELECT 1 FROM comparison c WHERE c.sha256 = e.id) "
    "  AND NOT EXISTS (SELECT 1 FROM comparison_link l WHERE l.sha256 = e.id AND l.team IN "
    "  (SELECT json_array_elements_text($2::json))) "
    "ELSE false END";

enum store_status store_evidence_foreign(struct store *s, const json_t *ids, const char *teams,
                                         const char *user_id, const char *prefix,
                                         struct problems *p)
{
    if (!json_array_size(ids))
        return STORE_OK;
    char *text = json_dumps(ids, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {text, teams, user_id};
    json_t *foreign = NULL;
    enum store_status st = store_json1(s, SQL_EVIDENCE_FOREIGN, 3, params, &foreign);
    free(text);
    size_t i;
    json_t *idx;
    json_array_foreach(foreign, i, idx)
    {
        char ptr[256];
        snprintf(ptr, sizeof ptr, "%s/%lld", prefix, (long long)json_integer_value(idx));
        /* The same words as for an unknown id: another team's evidence must not be confirmed. */
        problems_add(p, ptr, "names no benchmark, upload or stored comparison");
    }
    json_decref(foreign);
    return st;
}

/* ---- checklist facts ---- */

static const char *SQL_FACTS_REVIEW =
    "SELECT json_build_object('id', r.id, 'workloads', coalesce((SELECT json_agg("
    "json_build_object('id', w.id, 'name', w.name, 'team', w.team, 'class', w.class, "
    "'target_units', w.target_units, 'memory_required_gb', w.memory_required_gb, "
    "'dataset_gb', w.dataset_gb, 'dataset_location', w.dataset_location, "
    "'team_runs', (SELECT count(*) FROM run x WHERE x.team = w.team "
    "  AND x.workload_class = w.class AND x.gpus > 0), "
    "'team_run_uploads', (SELECT coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT "
    "  x.upload_id AS u FROM run x WHERE x.team = w.team AND x.workload_class = w.class "
    "  AND x.gpus > 0 ORDER BY 1 LIMIT 20) t), "
    "'benchmark_repetitions', (SELECT coalesce(sum(b.repetitions), 0) FROM benchmark b "
    "  WHERE b.workload_id = w.id), "
    "'benchmarks', (SELECT coalesce(json_agg(b.id ORDER BY b.created_at, b.id), '[]') "
    "  FROM benchmark b WHERE b.workload_id = w.id)) "
    "ORDER BY array_position(r.workload_ids, w.id)) "
    "FROM workload w WHERE w.id = ANY (r.workload_ids)), '[]')) "
    "FROM review r WHERE r.id = $1::uuid";

/* The workloads a comparison answers for: over every scenario that asked for it (its links),
 * the workloads listed and the scenario's workload when that was a stored workload's id. */
#define COMPARISON_WORKLOADS                                                                       \
    "(SELECT coalesce(jsonb_agg(DISTINCT x.w), '[]'::jsonb) FROM ("                                \
    " SELECT unnest(cl.workload_ids)::text AS w FROM comparison_link cl WHERE cl.sha256 = "        \
    "c.sha256"                                                                                     \
    " UNION SELECT lower(s2.document->>'workload') FROM comparison_link cl2"                       \
    " JOIN scenario s2 ON s2.id = cl2.scenario_id WHERE cl2.sha256 = c.sha256"                     \
    " AND jsonb_typeof(s2.document->'workload') = 'string') x)"

static const char *SQL_FACTS_LATEST =
    "SELECT to_json(c.sha256) FROM review r, comparison c WHERE r.id = $1::uuid "
    "AND " COMPARISON_WORKLOADS " ?| r.workload_ids::text[] "
    "ORDER BY c.created_at DESC, c.sha256 LIMIT 1";

static const char *SQL_FACTS_CITED =
    "SELECT coalesce(json_agg(json_build_object('sha256', e.h, 'stored', c.sha256 IS NOT NULL, "
    "'workload_ids', CASE WHEN c.sha256 IS NOT NULL THEN " COMPARISON_WORKLOADS " END, "
    "'resolved', CASE WHEN e.i = 1 THEN c.resolved END, "
    "'result', CASE WHEN e.i = 1 THEN c.result END) ORDER BY e.i), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS e(h, i) "
    "LEFT JOIN comparison c ON c.sha256 = e.h";

/* For each option of a comparison, the stored records its scenario named by id (an option
 * whose benchmark was an id takes that benchmark's offer), and how many started GPU runs of
 * its cluster there are — a run's cluster matches the option's name or the offer's name. */
static const char *SQL_FACTS_OPTIONS =
    "SELECT coalesce(json_agg(json_build_object('name', o.opt->>'name', "
    "'benchmark_id', b.id, 'data_loading_s', b.data_loading_s, "
    "'telemetry', b.id IS NOT NULL AND EXISTS (SELECT 1 FROM benchmark_derived bd "
    "  WHERE bd.benchmark_id = b.id), "
    "'telemetry_uploads', (SELECT coalesce(json_agg(u.id ORDER BY u.created_at, u.id), '[]') "
    "  FROM upload u WHERE b.id IS NOT NULL AND u.kind = 'telemetry' AND u.benchmark_id = b.id), "
    "'offer_name', f.name, "
    "'cluster_runs', (SELECT count(*) FROM run x WHERE x.cluster IN (o.opt->>'name', f.name) "
    "  AND x.started_at IS NOT NULL AND x.gpus > 0), "
    "'cluster_run_uploads', (SELECT coalesce(json_agg(t.u), '[]') FROM (SELECT DISTINCT "
    "  x.upload_id AS u FROM run x WHERE x.cluster IN (o.opt->>'name', f.name) "
    "  AND x.started_at IS NOT NULL AND x.gpus > 0 ORDER BY 1 LIMIT 20) t)) "
    "ORDER BY o.i), '[]') "
    "FROM comparison c LEFT JOIN scenario s ON s.id = c.scenario_id "
    "CROSS JOIN LATERAL jsonb_array_elements(c.resolved->'options') WITH ORDINALITY AS o(opt, i) "
    "LEFT JOIN LATERAL (SELECT s.document->'options'->(o.i::int - 1) AS doc) d ON true "
    "LEFT JOIN benchmark b ON jsonb_typeof(d.doc->'benchmark') = 'string' "
    "  AND b.id = " UUID_OR_NULL(
        "d.doc->>'benchmark'") " "
                               "LEFT JOIN offer f ON f.id = coalesce(CASE WHEN "
                               "jsonb_typeof(d.doc->'offer') = 'string' "
                               "  THEN " UUID_OR_NULL("d.doc->>'offer'") " END, b.offer_id) "
                                                                         "WHERE c.sha256 = $1";

/* ---- references ---- */

/* Appends a problem for an owner that is not an owner and for each unknown workload id. */
static enum store_status check_review_refs(struct store_conn *c, const json_t *doc,
                                           struct problems *p)
{
    json_t *ids = json_object_get(doc, "workload_ids");
    char *ids_text = json_dumps(ids ? ids : json_array(), JSON_COMPACT | JSON_ENCODE_ANY);
    if (!ids_text)
        return STORE_ERROR;
    const char *owner = json_string_value(json_object_get(doc, "owner"));
    const char *params[] = {owner, ids_text};
    json_t *refs = NULL;
    enum store_status st = store_json(c, SQL_REFS, 2, params, &refs);
    free(ids_text);
    if (st != STORE_OK)
        return st;
    if (!json_is_true(json_object_get(refs, "owner_ok")))
        problems_add(p, "/owner", "'%s' is not a user with role owner", owner ? owner : "");
    size_t i;
    json_t *idx;
    json_array_foreach(json_object_get(refs, "missing_workloads"), i, idx)
    {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/workload_ids/%lld", (long long)json_integer_value(idx));
        problems_add(p, ptr, "no workload with this id");
    }
    json_decref(refs);
    return STORE_OK;
}

enum store_status store_evidence_check(struct store_conn *c, const json_t *ids, const char *prefix,
                                       struct problems *p)
{
    if (!json_array_size(ids))
        return STORE_OK;
    char *text = json_dumps(ids, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {text};
    json_t *unknown = NULL;
    enum store_status st = store_json(c, SQL_EVIDENCE_UNKNOWN, 1, params, &unknown);
    free(text);
    if (st != STORE_OK)
        return st;
    size_t i;
    json_t *idx;
    json_array_foreach(unknown, i, idx)
    {
        char ptr[256];
        snprintf(ptr, sizeof ptr, "%s/%lld", prefix, (long long)json_integer_value(idx));
        problems_add(p, ptr, "names no benchmark, upload or stored comparison");
    }
    json_decref(unknown);
    return STORE_OK;
}

/* Checks references with check(), then runs the write and its audit row, all in one
 * transaction; STORE_INVALID (nothing written) when check() appended problems, STORE_NOT_FOUND
 * when the write matched no row. */
static enum store_status
checked_write(struct store *s, const struct audit_actor *who, const char *action,
              enum store_status (*check)(struct store_conn *, const json_t *, struct problems *),
              const json_t *doc, struct problems *p, const char *sql, int nparams,
              const char *const *params, json_t **out)
{
    struct audit_check c = {.fn = check, .doc = doc, .p = p};
    return store_write_audited_checked(s, who, action, &c, sql, nparams, params, out);
}

/* ---- reviews ---- */

static char *real_text(const json_t *v, char *buf, size_t size)
{
    if (!json_is_number(v))
        return NULL;
    snprintf(buf, size, "%.17g", json_number_value(v));
    return buf;
}

enum store_status store_review_create(struct store *s, const struct audit_actor *who,
                                      const json_t *doc, struct problems *p, json_t **out)
{
    char *ids = json_dumps(json_object_get(doc, "workload_ids"), JSON_COMPACT | JSON_ENCODE_ANY);
    char threshold[40];
    const char *params[] = {
        json_string_value(json_object_get(doc, "title")),
        json_string_value(json_object_get(doc, "question")),
        ids ? ids : "[]",
        json_string_value(json_object_get(doc, "owner")),
        json_string_value(json_object_get(doc, "started_on")),
        real_text(json_object_get(doc, "drift_threshold"), threshold, sizeof threshold),
        who->name};
    enum store_status st = checked_write(s, who, "review.create", check_review_refs, doc, p,
                                         SQL_CREATE, 7, params, out);
    free(ids);
    return st;
}

enum store_status store_review_get(struct store *s, const char *id, const char *teams_json,
                                   json_t **out)
{
    const char *params[] = {id, teams_json};
    return store_json1(s, SQL_GET, 2, params, out);
}

enum store_status store_review_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *params[] = {q->teams_json, q->state, q->team, q->after_at, q->after_id, lim};
    return store_json1(s, SQL_LIST, 6, params, out);
}

enum store_status store_review_update(struct store *s, const struct audit_actor *who,
                                      const char *id, long expected_version, const json_t *doc,
                                      struct problems *p, json_t **out)
{
    char *ids = json_dumps(json_object_get(doc, "workload_ids"), JSON_COMPACT | JSON_ENCODE_ANY);
    char threshold[40], version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *params[] = {
        id,
        json_string_value(json_object_get(doc, "title")),
        json_string_value(json_object_get(doc, "question")),
        ids ? ids : "[]",
        json_string_value(json_object_get(doc, "owner")),
        json_string_value(json_object_get(doc, "started_on")),
        real_text(json_object_get(doc, "drift_threshold"), threshold, sizeof threshold),
        version};
    enum store_status st = checked_write(s, who, "review.update", check_review_refs, doc, p,
                                         SQL_UPDATE, 8, params, out);
    free(ids);
    /* No row: the review exists (the caller read it) but its version moved on. */
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

/* ---- artifacts ---- */

static enum store_status check_artifact_refs(struct store_conn *c, const json_t *doc,
                                             struct problems *p)
{
    return store_evidence_check(c, json_object_get(doc, "evidence"), "/evidence", p);
}

enum store_status store_artifact_create(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const json_t *doc,
                                        struct problems *p, json_t **out)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *params[] = {review_id, text, who->name};
    enum store_status st = checked_write(s, who, "review_artifact.create", check_artifact_refs, doc,
                                         p, SQL_ARTIFACT_CREATE, 3, params, out);
    free(text);
    return st;
}

enum store_status store_artifact_list(struct store *s, const char *review_id, json_t **out)
{
    const char *params[] = {review_id};
    return store_json1(s, SQL_ARTIFACT_LIST, 1, params, out);
}

enum store_status store_artifact_get(struct store *s, const char *review_id, const char *id,
                                     json_t **out)
{
    const char *params[] = {review_id, id};
    return store_json1(s, SQL_ARTIFACT_GET, 2, params, out);
}

enum store_status store_artifact_update(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const char *id,
                                        long expected_version, const json_t *doc,
                                        struct problems *p, json_t **out)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    char version[24];
    snprintf(version, sizeof version, "%ld", expected_version);
    const char *params[] = {review_id, id, text, version};
    enum store_status st = checked_write(s, who, "review_artifact.update", check_artifact_refs, doc,
                                         p, SQL_ARTIFACT_UPDATE, 4, params, out);
    free(text);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

/* ---- the checklist ---- */

struct item {
    json_t *evidence; /* array of ids, without repeats */
    json_t *missing;  /* array of sentences */
};

static void cite(struct item *it, const json_t *id)
{
    if (!json_is_string(id))
        return;
    size_t i;
    json_t *v;
    json_array_foreach(it->evidence, i, v) if (json_equal(v, id)) return;
    json_array_append(it->evidence, (json_t *)id);
}

static void cite_all(struct item *it, const json_t *ids)
{
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) cite(it, v);
}

static void miss(struct item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void miss(struct item *it, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    json_array_append_new(it->missing, json_string(text));
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int has_number(const json_t *obj, const char *key)
{
    return json_is_number(json_object_get(obj, key));
}

static long long count_of(const json_t *obj, const char *key)
{
    return (long long)json_number_value(json_object_get(obj, key));
}

/* What the items are decided from. Borrowed pieces of the fetched documents. */
struct facts {
    const json_t *workloads; /* review's workloads with counts */
    const json_t *cited;     /* [{sha256, stored, workload_ids, resolved?, result?}] */
    const json_t *first;     /* cited[0] when stored, else NULL */
    const json_t *resolved;  /* first's resolved scenario */
    const json_t *options;   /* per option of first: stored facts */
    const char *none_reason; /* why there are no compared options, when first is NULL */
};

static void item_workload_memory(const struct facts *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        cite(it, json_object_get(w, "id"));
        if (!has_number(w, "target_units"))
            miss(it, "workload '%s' gives no target_units", str(w, "name"));
        if (!has_number(w, "memory_required_gb"))
            miss(it, "workload '%s' gives no memory_required_gb", str(w, "name"));
    }
    if (!f->first) {
        miss(it, "%s, so no option has a memory verdict", f->none_reason);
        return;
    }
    cite(it, json_object_get(f->first, "sha256"));
    int workload_memory =
        has_number(json_object_get(f->resolved, "workload"), "memory_required_gb");
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        if (!workload_memory && !has_number(json_object_get(opt, "benchmark"), "memory_peak_gb"))
            miss(it,
                 "option '%s' has no memory verdict: its benchmark gives no memory_peak_gb and "
                 "the compared workload no memory_required_gb",
                 str(opt, "name"));
    }
}

/* A figure counts as measured only when it comes from a stored benchmark the scenario named by
 * id: numbers typed into a scenario are assumptions, whatever their field is called. */
static int measured(const json_t *stored, const json_t *opt, const char *field)
{
    return json_is_string(json_object_get(stored, "benchmark_id")) &&
           has_number(json_object_get(opt, "benchmark"), field);
}

static void miss_typed(struct item *it, const json_t *stored, const json_t *opt, const char *what)
{
    if (!json_is_string(json_object_get(stored, "benchmark_id")))
        miss(it,
             "option '%s': its benchmark is typed into the scenario, not a stored benchmark: "
             "%s there is an assumption, not a measurement",
             str(opt, "name"), what);
}

static void item_data_path(const struct facts *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        cite(it, json_object_get(w, "id"));
        if (!has_number(w, "dataset_gb"))
            miss(it, "workload '%s' gives no dataset size (dataset_gb)", str(w, "name"));
        if (!*str(w, "dataset_location"))
            miss(it, "workload '%s' gives no dataset location (dataset_location)", str(w, "name"));
    }
    if (!f->first) {
        miss(it, "%s, so no option's data path can be checked", f->none_reason);
        return;
    }
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "transfer_gb") || has_number(stored, "data_loading_s"))
            cite(it, json_object_get(stored, "benchmark_id"));
        else if (has_number(json_object_get(opt, "benchmark"), "transfer_gb"))
            miss_typed(it, stored, opt, "transfer_gb");
        else
            miss(it,
                 "option '%s': its benchmark gives neither transfer_gb nor a data-loading "
                 "time (data_loading_s)",
                 str(opt, "name"));
    }
}

static void item_utilisation(const struct facts *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's utilisation can be checked", f->none_reason);
        return;
    }
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        const json_t *bench = json_object_get(opt, "benchmark");
        int both = measured(stored, opt, "gpu_duty_cycle") &&
                   measured(stored, opt, "input_stall_fraction");
        int telemetry = json_is_true(json_object_get(stored, "telemetry")) ||
                        json_array_size(json_object_get(stored, "telemetry_uploads")) > 0;
        if (both || telemetry) {
            cite(it, json_object_get(stored, "benchmark_id"));
            cite_all(it, json_object_get(stored, "telemetry_uploads"));
            continue;
        }
        if (has_number(bench, "gpu_duty_cycle") && has_number(bench, "input_stall_fraction")) {
            miss_typed(it, stored, opt, "the duty cycle and input-stall fraction");
            continue;
        }
        miss(it, "option '%s': its benchmark has no measured %s%s%s and no telemetry is attached",
             str(opt, "name"), has_number(bench, "gpu_duty_cycle") ? "" : "gpu_duty_cycle",
             !has_number(bench, "gpu_duty_cycle") && !has_number(bench, "input_stall_fraction")
                 ? " or "
                 : "",
             has_number(bench, "input_stall_fraction") ? "" : "input_stall_fraction");
    }
}

static void item_queue(const struct facts *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's queue delay can be checked", f->none_reason);
        return;
    }
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "queue_wait_s")) {
            cite(it, json_object_get(stored, "benchmark_id"));
            continue;
        }
        long long runs = count_of(stored, "cluster_runs");
        if (runs >= REVIEW_MIN_RUNS) {
            cite_all(it, json_object_get(stored, "cluster_run_uploads"));
            continue;
        }
        char clusters[300];
        if (*str(stored, "offer_name"))
            snprintf(clusters, sizeof clusters, "'%s' or '%s'", str(opt, "name"),
                     str(stored, "offer_name"));
        else
            snprintf(clusters, sizeof clusters, "'%s'", str(opt, "name"));
        miss(it,
             "option '%s': its benchmark has no measured queue_wait_s, and %lld started GPU runs "
             "of its cluster (%s) give queue waits where %d are needed",
             str(opt, "name"), runs, clusters, REVIEW_MIN_RUNS);
    }
}

static void item_failures(const struct facts *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        long long runs = count_of(w, "team_runs");
        long long reps = count_of(w, "benchmark_repetitions");
        if (runs >= REVIEW_MIN_RUNS)
            cite_all(it, json_object_get(w, "team_run_uploads"));
        else if (reps >= REVIEW_MIN_RUNS)
            cite_all(it, json_object_get(w, "benchmarks"));
        else
            miss(it,
                 "workload '%s': the failure probability is backed by %lld GPU runs of team '%s' "
                 "and class '%s' and %lld benchmark repetitions; at least %d of either are needed",
                 str(w, "name"), runs, str(w, "team"), str(w, "class"), reps, REVIEW_MIN_RUNS);
    }
}

static void item_setup(const struct facts *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's setup time can be checked", f->none_reason);
        return;
    }
    cite(it, json_object_get(f->first, "sha256"));
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "setup_s"))
            cite(it, json_object_get(stored, "benchmark_id"));
        else if (has_number(json_object_get(opt, "benchmark"), "setup_s"))
            miss_typed(it, stored, opt, "setup_s");
        else
            miss(it, "option '%s': its benchmark gives no setup_s", str(opt, "name"));
    }
    const json_t *a = json_object_get(f->resolved, "assumptions");
    if (!has_number(a, "engineer_rate_per_hour"))
        miss(it, "the scenario gives no engineer rate (assumptions/engineer_rate_per_hour)");
    if (!has_number(a, "engineer_blocked_fraction"))
        miss(it, "the scenario gives no engineer blocked fraction "
                 "(assumptions/engineer_blocked_fraction)");
}

static void item_cost(const struct facts *f, struct item *it)
{
    size_t i, k;
    json_t *c, *w;
    int any = 0;
    json_array_foreach(f->cited, i, c)
    {
        if (json_is_true(json_object_get(c, "stored"))) {
            cite(it, json_object_get(c, "sha256"));
            any = 1;
        } else
            miss(it, "comparison %s is not stored", str(c, "sha256"));
    }
    if (!any) {
        miss(it, "%s", f->none_reason);
        return;
    }
    json_array_foreach(f->workloads, i, w)
    {
        int covered = 0;
        json_array_foreach(f->cited, k, c)
        {
            size_t j;
            json_t *id;
            json_array_foreach(json_object_get(c, "workload_ids"), j, id) covered |=
                json_equal(id, json_object_get(w, "id"));
        }
        if (!covered)
            miss(it, "no cited comparison is for workload '%s' (%s)", str(w, "name"), str(w, "id"));
    }
}

/* DESIGN.md's table, in its order. per_workload: the item needs the review's workloads. */
static const struct {
    const char *name;
    void (*decide)(const struct facts *, struct item *);
    int per_workload;
} ITEMS[] = {
    {"workload and memory profile", item_workload_memory, 1},
    {"data and storage path", item_data_path, 1},
    {"effective GPU utilisation", item_utilisation, 0},
    {"queue and provisioning delay", item_queue, 0},
    {"failure and rerun rate", item_failures, 1},
    {"engineering setup and support", item_setup, 0},
    {"completed-result and service-level cost", item_cost, 1},
};

static json_t *decide_items(const struct facts *f)
{
    json_t *items = json_array();
    int all = 1;
    for (size_t i = 0; i < sizeof ITEMS / sizeof ITEMS[0]; i++) {
        struct item it = {json_array(), json_array()};
        if (ITEMS[i].per_workload && !json_array_size(f->workloads))
            miss(&it, "the review names no workloads");
        ITEMS[i].decide(f, &it);
        int covered = json_array_size(it.missing) == 0;
        all &= covered;
        json_array_append_new(items,
                              json_pack("{s:s, s:b, s:o, s:o}", "item", ITEMS[i].name, "covered",
                                        covered, "evidence", it.evidence, "missing", it.missing));
    }
    return json_pack("{s:b, s:o}", "covered", all, "items", items);
}

enum store_status store_review_checklist(struct store_conn *c, const char *review_id,
                                         const json_t *cited, json_t **out)
{
    *out = NULL;
    json_t *review = NULL, *latest = NULL, *cited_rows = NULL, *options = NULL, *list = NULL;
    const char *p1[] = {review_id};
    enum store_status st = store_json(c, SQL_FACTS_REVIEW, 1, p1, &review);
    if (st != STORE_OK)
        goto out;
    if (cited) {
        list = json_incref((json_t *)cited);
    } else {
        st = store_json(c, SQL_FACTS_LATEST, 1, p1, &latest);
        if (st != STORE_OK && st != STORE_NOT_FOUND)
            goto out;
        list = json_array();
        if (latest)
            json_array_append(list, latest);
    }
    char *list_text = json_dumps(list, JSON_COMPACT);
    if (!list_text) {
        st = STORE_ERROR;
        goto out;
    }
    const char *p2[] = {list_text};
    st = store_json(c, SQL_FACTS_CITED, 1, p2, &cited_rows);
    free(list_text);
    if (st != STORE_OK)
        goto out;
    struct facts f = {.workloads = json_object_get(review, "workloads"), .cited = cited_rows};
    const json_t *first = json_array_get(cited_rows, 0);
    if (first && json_is_true(json_object_get(first, "stored"))) {
        const char *p3[] = {str(first, "sha256")};
        st = store_json(c, SQL_FACTS_OPTIONS, 1, p3, &options);
        if (st != STORE_OK)
            goto out;
        f.first = first;
        f.resolved = json_object_get(first, "resolved");
        f.options = options;
    } else if (first) {
        f.none_reason = "the first cited comparison is not stored";
    } else {
        f.none_reason = cited ? "no comparison is cited"
                              : "no stored comparison for the review's workloads exists yet";
    }
    *out = decide_items(&f);
    json_object_set_new(*out, "review_id", json_string(review_id));
    json_object_set_new(*out, "comparison_sha256",
                        first ? json_string(str(first, "sha256")) : json_null());
    st = STORE_OK;
out:
    json_decref(review);
    json_decref(latest);
    json_decref(cited_rows);
    json_decref(options);
    json_decref(list);
    return st;
}

enum store_status store_review_checklist1(struct store *s, const char *review_id,
                                          const json_t *cited, json_t **out)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_review_checklist(c, review_id, cited, out);
    store_release(s, c);
    return st;
}
