/* 90-day reviews, their artifacts and the evidence checklist.
 *
 * Who may do what: owners create and edit reviews (any owner: they run reviews together) and
 * their artifacts; team members read the reviews that cover one of their teams' workloads and
 * add or update those reviews' artifacts (they are the named contributors); auditors and admins
 * read every review. Status is the server's: 'decided' after a decision, 'needs decision' after
 * drift (see h_alerts.c), so a PATCH cannot set it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/validate.h"
#include "core/formats/evfield.h"
#include "core/formats/timefmt.h"
#include "http/evidence.h"
#include "http/handlers/h_reviews.h"
#include "http/idempotency.h"
#include "store/alerts.h"
#include "store/compute.h"
#include "store/reviews.h"

#define DEFAULT_QUESTION                                                                           \
    "Which capacity arrangement produces the lowest reliable cost per completed experiment or "    \
    "accepted inference outcome?"
#define MAX_WORKLOADS 100
#define MAX_EVIDENCE 200
#define MAX_EXERCISED 50
#define LONG_TEXT 4000

static const char *const REVIEW_FIELDS[] = {
    "title", "question", "workload_ids", "owner", "started_on", "drift_threshold", NULL};
static const char *const REVIEW_SERVER_FIELDS[] = {
    "id",      "status",     "day",        "current_phase", "phases",
    "version", "created_by", "created_at", "updated_at",    NULL};
static const char *const ARTIFACT_FIELDS[] = {
    "title",    "phase",  "contributor", "due_on",    "representative_inputs",
    "baseline", "status", "evidence",    "exercised", NULL};
static const char *const ARTIFACT_SERVER_FIELDS[] = {
    "id", "review_id", "version", "created_by", "created_at", "updated_at", NULL};
static const char *const PHASES[] = {"evidence_plan", "smallest_complete_workflow", "boundary_test",
                                     NULL};
static const char *const ARTIFACT_STATUSES[] = {"planned", "in_progress", "done", "blocked", NULL};
static const char *const BOUNDARY_CONDITIONS[] = {"degraded_dependency", "ambiguous_input",
                                                  "recovery", "handoff", NULL};
static const char *const REVIEW_STATUSES[] = {"open", "needs decision", "decided", NULL};

/* ---- shared helpers (h_reviews.h) ---- */

int review_query_index(struct req *r, const char *name, long long *out, struct problems *p)
{
    char buf[32];
    if (!req_query(r, name, buf, sizeof buf))
        return 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (!buf[0] || *end || buf[0] == '-' || buf[0] == '+' || v < 0 || v > 9007199254740991LL) {
        char ptr[64];
        snprintf(ptr, sizeof ptr, "?%s", name);
        problems_add(p, ptr, "must be a non-negative integer");
        return -1;
    }
    *out = v;
    return 1;
}

/* ---- validation ---- */

static void check_enum(const json_t *obj, const char *key, const char *prefix,
                       const char *const *values, int required, struct problems *p)
{
    const char *v = json_want_string(obj, key, prefix, required, 64, p);
    if (!v)
        return;
    for (const char *const *a = values; *a; a++)
        if (strcmp(*a, v) == 0)
            return;
    char ptr[128], list[256] = "";
    for (const char *const *a = values; *a; a++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s'%s'", a == values ? "" : ", ", *a);
    }
    problems_add(p, problems_pointer(ptr, sizeof ptr, prefix, key), "must be one of %s", list);
}

static void check_date(const json_t *obj, const char *key, int required, struct problems *p)
{
    const char *v = json_want_string(obj, key, "", required, 10, p);
    char ptr[64];
    if (v && !timefmt_date_valid(v))
        problems_add(p, problems_pointer(ptr, sizeof ptr, "", key), "must be a date YYYY-MM-DD");
}

/* Members the server sets are refused by name; anything else unknown as unknown. */
static void check_members(const json_t *doc, const char *const *client, const char *const *server,
                          struct problems *p)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)doc, key, value)
    {
        int known = 0;
        for (const char *const *a = client; *a && !known; a++)
            known = strcmp(*a, key) == 0;
        if (known)
            continue;
        int by_server = 0;
        for (const char *const *a = server; *a && !by_server; a++)
            by_server = strcmp(*a, key) == 0;
        char ptr[300];
        problems_add(p, problems_pointer(ptr, sizeof ptr, "", key), "%s",
                     by_server ? "is set by the server" : "unknown field");
    }
}

static void review_check(const json_t *doc, struct problems *p)
{
    json_want_string(doc, "title", "", 1, 200, p);
    json_want_string(doc, "question", "", 1, 2000, p);
    const char *owner = json_want_string(doc, "owner", "", 1, 64, p);
    if (owner && !team_name_valid(owner))
        problems_add(p, "/owner", "must be a username");
    check_date(doc, "started_on", 1, p);
    json_t *ids = json_object_get(doc, "workload_ids");
    if (!json_is_array(ids) || json_array_size(ids) > MAX_WORKLOADS) {
        problems_add(p, "/workload_ids", "must be an array of at most %d workload ids",
                     MAX_WORKLOADS);
    } else {
        size_t i, k;
        json_t *id, *other;
        json_array_foreach(ids, i, id)
        {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/workload_ids/%zu", i);
            if (!json_is_string(id) || !uuid_valid(json_string_value(id))) {
                problems_add(p, ptr, "must be a workload id");
                continue;
            }
            json_array_foreach(ids, k, other)
            {
                if (k >= i)
                    break;
                if (json_is_string(other) &&
                    strcasecmp(json_string_value(other), json_string_value(id)) == 0) {
                    problems_add(p, ptr, "repeats /workload_ids/%zu", k);
                    break;
                }
            }
        }
    }
    json_t *thr = json_object_get(doc, "drift_threshold");
    if (thr && !json_is_null(thr) &&
        (!json_is_number(thr) || json_number_value(thr) <= 0 || json_number_value(thr) > 10))
        problems_add(p, "/drift_threshold",
                     "must be a number above 0 and at most 10 (a relative change: 0.25 = 25%%)");
}

static void artifact_check(const json_t *doc, struct problems *p)
{
    json_want_string(doc, "title", "", 1, 200, p);
    check_enum(doc, "phase", "", PHASES, 1, p);
    json_want_string(doc, "contributor", "", 1, 200, p);
    check_date(doc, "due_on", 0, p);
    json_want_string(doc, "representative_inputs", "", 0, LONG_TEXT, p);
    json_want_string(doc, "baseline", "", 0, LONG_TEXT, p);
    check_enum(doc, "status", "", ARTIFACT_STATUSES, 0, p);
    json_t *ev = json_object_get(doc, "evidence");
    size_t i;
    json_t *v;
    if (ev && !json_is_null(ev) && (!json_is_array(ev) || json_array_size(ev) > MAX_EVIDENCE))
        problems_add(p, "/evidence", "must be an array of at most %d evidence ids", MAX_EVIDENCE);
    else
        json_array_foreach(ev, i, v)
        {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/evidence/%zu", i);
            if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > 128)
                problems_add(p, ptr, "must be the id of a benchmark, upload or comparison");
        }
    json_t *ex = json_object_get(doc, "exercised");
    const char *phase = json_string_value(json_object_get(doc, "phase"));
    if (!ex || json_is_null(ex))
        return;
    if (!json_is_array(ex) || json_array_size(ex) > MAX_EXERCISED) {
        problems_add(p, "/exercised",
                     "must be an array of at most %d {condition, exercised, "
                     "outcome} objects",
                     MAX_EXERCISED);
        return;
    }
    if (json_array_size(ex) && phase && strcmp(phase, "boundary_test") != 0)
        problems_add(p, "/exercised", "only boundary_test artifacts record what was exercised");
    static const char *const allowed[] = {"condition", "exercised", "outcome", NULL};
    json_array_foreach(ex, i, v)
    {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "/exercised/%zu", i);
        if (!json_is_object(v)) {
            problems_add(p, prefix, "must be an object {condition, exercised, outcome}");
            continue;
        }
        json_check_unknown(v, prefix, allowed, p);
        check_enum(v, "condition", prefix, BOUNDARY_CONDITIONS, 1, p);
        json_want_string(v, "exercised", prefix, 1, LONG_TEXT, p);
        json_want_string(v, "outcome", prefix, 0, LONG_TEXT, p);
    }
}

/* obj's members named in fields (null when absent): what a PATCH merges into. */
static json_t *project(const json_t *obj, const char *const *fields)
{
    json_t *out = json_object();
    for (const char *const *f = fields; *f; f++) {
        json_t *v = json_object_get(obj, *f);
        json_object_set_new(out, *f, v ? json_incref(v) : json_null());
    }
    return out;
}

/* Drops null members, so that "absent" and "null" read the same to the store. */
static void drop_nulls(json_t *obj)
{
    const char *key;
    json_t *value;
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, value) if (json_is_null(value))
        json_object_del(obj, key);
}

/* ---- reviews ---- */

/* The review when it exists and the caller may see it; else answers 404 and returns NULL. */
static json_t *visible_review(struct req *r, const char *id)
{
    json_t *row = NULL;
    char *teams = principal_team_filter(&r->who);
    enum store_status st = teams && uuid_valid(id)
                               ? store_review_get(r->app->store, id, teams, &row)
                               : STORE_NOT_FOUND;
    free(teams);
    if (st != STORE_OK) {
        resp_store_error(r, st, "review");
        return NULL;
    }
    return row;
}

static void reply_review_fault(struct req *r, enum store_status st, const struct problems *p)
{
    if (st == STORE_INVALID && p->total)
        resp_invalid(r, p, NULL);
    else if (st == STORE_CONFLICT)
        resp_problem(r, 412, "precondition-failed", "Precondition failed",
                     "the record changed while you were saving it; read it again");
    else
        resp_store_error(r, st, "review");
}

static void review_create(struct req *r)
{
    struct idem idem;
    struct problems p;
    problems_init(&p);
    json_t *doc = NULL, *out = NULL;
    if (idem_begin(r, &idem) == IDEM_ANSWERED)
        goto out;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    check_members(r->body, REVIEW_FIELDS, REVIEW_SERVER_FIELDS, &p);
    doc = json_deep_copy(r->body);
    drop_nulls(doc);
    if (!json_object_get(doc, "question"))
        json_object_set_new(doc, "question", json_string(DEFAULT_QUESTION));
    if (!json_object_get(doc, "workload_ids"))
        json_object_set_new(doc, "workload_ids", json_array());
    if (!json_object_get(doc, "owner") && r->who.role == ROLE_OWNER)
        json_object_set_new(doc, "owner", json_string(r->who.username));
    review_check(doc, &p);
    if (p.total)
        goto invalid;
    struct audit_actor who;
    enum store_status st = store_review_create(r->app->store, req_actor(r, &who), doc, &p, &out);
    if (st != STORE_OK) {
        reply_review_fault(r, st, &p);
        goto out;
    }
    idem_reply(r, &idem, 201, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    idem_end(r, &idem);
    json_decref(doc);
    json_decref(out);
    problems_free(&p);
}

static void review_list(struct req *r)
{
    struct ev_page pg;
    struct evlist_query q = {0};
    struct problems p;
    problems_init(&p);
    char status[40], owner[80];
    if (ev_page_begin(r, &pg, &q) != 0)
        goto out;
    q.state = ev_query(r, "status", EVQ_ENUM, REVIEW_STATUSES, status, sizeof status, &p);
    q.team = ev_query(r, "owner", EVQ_TEXT, NULL, owner, sizeof owner, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    json_t *items = NULL;
    enum store_status st = store_review_list(r->app->store, &q, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "reviews");
        goto out;
    }
    ev_page_reply(r, items, &q, "created_at");
out:
    ev_page_end(&pg);
    problems_free(&p);
}

static void review_get(struct req *r)
{
    json_t *row = visible_review(r, r->params[0]);
    if (!row)
        return;
    resp_versioned(r, 200, row);
}

static void review_patch(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *current = NULL, *merged = NULL, *out = NULL;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "a merge patch must be a JSON object");
        resp_invalid(r, &p, NULL);
        goto out;
    }
    current = visible_review(r, r->params[0]);
    if (!current || etag_check(r, current, "review") != 0)
        goto out;
    check_members(r->body, REVIEW_FIELDS, REVIEW_SERVER_FIELDS, &p);
    json_t *base = project(current, REVIEW_FIELDS);
    merged = evfield_merge_patch(base, r->body);
    json_decref(base);
    drop_nulls(merged);
    if (!json_object_get(merged, "question"))
        json_object_set_new(merged, "question", json_string(DEFAULT_QUESTION));
    if (!json_object_get(merged, "workload_ids"))
        json_object_set_new(merged, "workload_ids", json_array());
    review_check(merged, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    enum store_status st = store_review_update(
        r->app->store, req_actor(r, &who), json_string_value(json_object_get(current, "id")),
        (long)json_integer_value(json_object_get(current, "version")), merged, &p, &out);
    if (st != STORE_OK) {
        reply_review_fault(r, st, &p);
        goto out;
    }
    resp_versioned(r, 200, out);
    out = NULL;
out:
    json_decref(current);
    json_decref(merged);
    json_decref(out);
    problems_free(&p);
}

static void review_checklist(struct req *r)
{
    json_t *review = visible_review(r, r->params[0]), *cited = NULL, *out = NULL;
    if (!review)
        return;
    char sha[80];
    if (req_query(r, "comparison", sha, sizeof sha)) {
        struct problems p;
        problems_init(&p);
        if (!lower_hex_valid(sha, 64))
            problems_add(&p, "?comparison", "must be a comparison's SHA-256 (64 lower-case hex)");
        if (p.total) {
            resp_invalid(r, &p, NULL);
            problems_free(&p);
            goto out;
        }
        problems_free(&p);
        /* The caller must be able to see the comparison (team scoping): a hash the caller
         * cannot read answers as one that is not stored. */
        char *filter = principal_team_filter(&r->who);
        json_t *visible = NULL;
        enum store_status vis = store_comparison_get(r->app->store, sha, filter, &visible);
        free(filter);
        json_decref(visible);
        if (vis != STORE_OK) {
            resp_store_error(r, vis, "comparison");
            goto out;
        }
        cited = json_pack("[s]", sha);
    }
    char *teams = principal_team_filter(&r->who);
    enum store_status st =
        teams ? store_review_checklist1(r->app->store,
                                        json_string_value(json_object_get(review, "id")), cited,
                                        teams, &out)
              : STORE_UNAVAILABLE;
    free(teams);
    if (st != STORE_OK) {
        resp_store_error(r, st, "review");
        goto out;
    }
    resp_json(r, 200, out);
    out = NULL;
out:
    json_decref(review);
    json_decref(cited);
    json_decref(out);
}

/* The stored comparisons that answer for one of the review's workloads, newest first: what a
 * review page offers to choose its comparison from (by scenario name and date). */
static void review_comparisons(struct req *r)
{
    json_t *review = visible_review(r, r->params[0]), *items = NULL;
    if (!review)
        return;
    char after_buf[128];
    const char *after = NULL;
    int limit = req_limit(r);
    char *filter = NULL;
    if (limit < 0 || req_cursor(r, after_buf, sizeof after_buf, &after) != 0)
        goto out;
    filter = principal_team_filter(&r->who);
    enum store_status st =
        store_comparison_list(r->app->store, NULL, json_string_value(json_object_get(review, "id")),
                              filter, after, limit + 1, &items);
    if (st == STORE_INVALID) { /* a cursor that decodes but is not ours */
        resp_problem(r, 422, "invalid", "Invalid input", "the cursor is not valid");
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "comparisons");
        goto out;
    }
    resp_page(r, items, limit, "cursor_key");
out:
    free(filter);
    json_decref(review);
}

/* ---- artifacts ---- */

/* Team members cite only their teams' evidence; others may cite any. Returns 0, or -1 after
 * answering a store failure. */
static int evidence_scoped(struct req *r, const json_t *doc, struct problems *p)
{
    if (r->who.role != ROLE_TEAM)
        return 0;
    char *teams = principal_team_filter(&r->who);
    enum store_status st = store_evidence_foreign(r->app->store, json_object_get(doc, "evidence"),
                                                  teams, r->who.user_id, "/evidence", p);
    free(teams);
    if (st != STORE_OK) {
        resp_store_error(r, st, "evidence");
        return -1;
    }
    return 0;
}

/* A team member sees an artifact of a review shared with other teams without the evidence ids
 * of those teams (`evidence_hidden` counts them). *hidden: how many were hidden. Returns 0, or -1
 * after answering a store failure. */
static int artifact_scoped(struct req *r, json_t *artifact, size_t *hidden)
{
    *hidden = 0;
    if (r->who.role != ROLE_TEAM)
        return 0;
    char *teams = principal_team_filter(&r->who);
    enum store_status st =
        store_evidence_hide_foreign(r->app->store, artifact, teams, r->who.user_id, hidden);
    free(teams);
    if (st != STORE_OK) {
        resp_store_error(r, st, "evidence");
        return -1;
    }
    return 0;
}

static void artifact_create(struct req *r)
{
    struct idem idem;
    struct problems p;
    problems_init(&p);
    json_t *review = NULL, *doc = NULL, *out = NULL;
    if (idem_begin(r, &idem) == IDEM_ANSWERED)
        goto out;
    review = visible_review(r, r->params[0]);
    if (!review)
        goto out;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    check_members(r->body, ARTIFACT_FIELDS, ARTIFACT_SERVER_FIELDS, &p);
    doc = json_deep_copy(r->body);
    drop_nulls(doc);
    artifact_check(doc, &p);
    if (!p.total && evidence_scoped(r, doc, &p) != 0)
        goto out;
    if (p.total)
        goto invalid;
    struct audit_actor who;
    enum store_status st =
        store_artifact_create(r->app->store, req_actor(r, &who),
                              json_string_value(json_object_get(review, "id")), doc, &p, &out);
    if (st != STORE_OK) {
        reply_review_fault(r, st, &p);
        goto out;
    }
    idem_reply(r, &idem, 201, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    idem_end(r, &idem);
    json_decref(review);
    json_decref(doc);
    json_decref(out);
    problems_free(&p);
}

static void artifact_list(struct req *r)
{
    json_t *review = visible_review(r, r->params[0]), *items = NULL;
    if (!review)
        return;
    enum store_status st = store_artifact_list(
        r->app->store, json_string_value(json_object_get(review, "id")), &items);
    json_decref(review);
    if (st != STORE_OK) {
        resp_store_error(r, st, "artifacts");
        return;
    }
    size_t i, hidden;
    json_t *a;
    json_array_foreach(items, i, a)
    {
        if (artifact_scoped(r, a, &hidden) != 0) {
            json_decref(items);
            return;
        }
    }
    resp_json(r, 200, json_pack("{s:o, s:n}", "items", items, "next_cursor"));
}

static void artifact_patch(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *review = NULL, *current = NULL, *merged = NULL, *out = NULL;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "a merge patch must be a JSON object");
        resp_invalid(r, &p, NULL);
        goto out;
    }
    review = visible_review(r, r->params[0]);
    if (!review)
        goto out;
    enum store_status st =
        uuid_valid(r->params[1])
            ? store_artifact_get(r->app->store, json_string_value(json_object_get(review, "id")),
                                 r->params[1], &current)
            : STORE_NOT_FOUND;
    if (st != STORE_OK) {
        resp_store_error(r, st, "artifact");
        goto out;
    }
    if (etag_check(r, current, "artifact") != 0)
        goto out;
    size_t hidden = 0;
    if (artifact_scoped(r, current, &hidden) != 0)
        goto out;
    if (hidden) { /* editing it would drop or rewrite another team's citations */
        resp_problem(r, 403, "forbidden", "Forbidden",
                     "this artifact cites evidence of another team (%zu id(s)): an owner, or a "
                     "member of that team, may change it",
                     hidden);
        goto out;
    }
    check_members(r->body, ARTIFACT_FIELDS, ARTIFACT_SERVER_FIELDS, &p);
    json_t *base = project(current, ARTIFACT_FIELDS);
    merged = evfield_merge_patch(base, r->body);
    json_decref(base);
    drop_nulls(merged);
    artifact_check(merged, &p);
    if (!p.total && evidence_scoped(r, merged, &p) != 0)
        goto out;
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    st = store_artifact_update(
        r->app->store, req_actor(r, &who), json_string_value(json_object_get(review, "id")),
        json_string_value(json_object_get(current, "id")),
        (long)json_integer_value(json_object_get(current, "version")), merged, &p, &out);
    if (st != STORE_OK) {
        reply_review_fault(r, st, &p);
        goto out;
    }
    resp_versioned(r, 200, out);
    out = NULL;
out:
    json_decref(review);
    json_decref(current);
    json_decref(merged);
    json_decref(out);
    problems_free(&p);
}

const struct route review_routes[] = {
    {"GET", "/api/v1/reviews", review_list, ROLES_USERS, 0, "limit cursor status owner"},
    {"POST", "/api/v1/reviews", review_create, ROLE_OWNER, ROUTE_JSON_BODY, NULL},
    {"GET", "/api/v1/reviews/{id}", review_get, ROLES_USERS, 0, NULL},
    {"PATCH", "/api/v1/reviews/{id}", review_patch, ROLE_OWNER, ROUTE_JSON_BODY, NULL},
    {"GET", "/api/v1/reviews/{id}/checklist", review_checklist, ROLES_USERS, 0, "comparison"},
    {"GET", "/api/v1/reviews/{id}/comparisons", review_comparisons, ROLES_USERS, 0, "limit cursor"},
    {"GET", "/api/v1/reviews/{id}/artifacts", artifact_list, ROLES_USERS, 0, NULL},
    {"POST", "/api/v1/reviews/{id}/artifacts", artifact_create, ROLE_OWNER | ROLE_TEAM,
     ROUTE_JSON_BODY, NULL},
    {"PATCH", "/api/v1/reviews/{id}/artifacts/{aid}", artifact_patch, ROLE_OWNER | ROLE_TEAM,
     ROUTE_JSON_BODY, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
};
