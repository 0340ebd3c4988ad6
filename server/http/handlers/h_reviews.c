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

#include "core/validate.h"
#include "core/formats/evfield.h"
#include "http/resource.h"
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
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

static const char *const PHASES[] = {"evidence_plan", "smallest_complete_workflow", "boundary_test",
                                     NULL};
static const char *const ARTIFACT_STATUSES[] = {"planned", "in_progress", "done", "blocked", NULL};
static const char *const BOUNDARY_CONDITIONS[] = {"degraded_dependency", "ambiguous_input",
                                                  "recovery", "handoff", NULL};
static const char *const REVIEW_STATUSES[] = {"open", "needs decision", "decided", NULL};

/* ---- validation ---- */

static const struct evfield WORKLOAD_ID[] = {
    {"workload_id", EVF_UUID, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be a workload id"), NULL},
    EVF_END,
};

static const struct evfield REVIEW_FIELDS[] = {
    {"title", EVF_TEXT, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    {"question", EVF_TEXT, EVF_REQUIRED, 0, 0, 2000, NULL, NULL},
    {"owner", EVF_HANDLE, EVF_REQUIRED, 0, 0, 0, EVF_WORDS("must be a username"), NULL},
    {"started_on", EVF_DATE, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"workload_ids", EVF_LIST, EVF_REQUIRED | EVF_MSG_ALL | EVF_UNIQUE, 0, 0, MAX_WORKLOADS,
     EVF_WORDS("must be an array of at most " TEXT(MAX_WORKLOADS) " workload ids"), WORKLOAD_ID},
    {"drift_threshold", EVF_NUMBER, EVF_MIN_EXCLUSIVE | EVF_MSG_ALL, 0, 10, 0,
     EVF_WORDS("must be a number above 0 and at most 10 (a relative change: 0.25 = 25%)"), NULL},
    {"outcome_threshold", EVF_NUMBER, EVF_MIN_EXCLUSIVE | EVF_MSG_ALL, 0, 10, 0,
     EVF_WORDS("must be a number above 0 and at most 10 (realised over predicted: 0.2 = 20%)"),
     NULL},
    EVF_SERVER_FIELD("id"),
    EVF_SERVER_FIELD("status"),
    EVF_SERVER_FIELD("day"),
    EVF_SERVER_FIELD("current_phase"),
    EVF_SERVER_FIELD("phases"),
    EVF_SERVER_FIELD("version"),
    EVF_SERVER_FIELD("created_by"),
    EVF_SERVER_FIELD("created_at"),
    EVF_SERVER_FIELD("updated_at"),
    EVF_END,
};

static const struct evfield EVIDENCE_ID[] = {
    {"evidence_id", EVF_TEXT, EVF_REQUIRED | EVF_MSG_ALL, 0, 0, 128,
     EVF_WORDS("must be the id of a benchmark, upload or comparison"), NULL},
    EVF_END,
};

static const struct evfield EXERCISED_FIELDS[] = {
    {"condition", EVF_ENUM, EVF_REQUIRED | EVF_QUOTE, 0, 0, 0, BOUNDARY_CONDITIONS, NULL},
    {"exercised", EVF_TEXT, EVF_REQUIRED, 0, 0, LONG_TEXT, NULL, NULL},
    {"outcome", EVF_TEXT, 0, 0, 0, LONG_TEXT, NULL, NULL},
    EVF_END,
};

static const struct evfield ARTIFACT_FIELDS[] = {
    {"title", EVF_TEXT, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    {"phase", EVF_ENUM, EVF_REQUIRED | EVF_QUOTE, 0, 0, 0, PHASES, NULL},
    {"contributor", EVF_TEXT, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    {"due_on", EVF_DATE, 0, 0, 0, 0, NULL, NULL},
    {"representative_inputs", EVF_TEXT, 0, 0, 0, LONG_TEXT, NULL, NULL},
    {"baseline", EVF_TEXT, 0, 0, 0, LONG_TEXT, NULL, NULL},
    {"status", EVF_ENUM, EVF_QUOTE, 0, 0, 0, ARTIFACT_STATUSES, NULL},
    {"evidence", EVF_LIST, EVF_MSG_ALL, 0, 0, MAX_EVIDENCE,
     EVF_WORDS("must be an array of at most " TEXT(MAX_EVIDENCE) " evidence ids"), EVIDENCE_ID},
    {"exercised", EVF_ARRAY, EVF_MSG_ALL, 0, 0, MAX_EXERCISED,
     EVF_WORDS("must be an array of at most " TEXT(
                   MAX_EXERCISED) " {condition, exercised, outcome} objects",
               "must be an object {condition, exercised, outcome}"),
     EXERCISED_FIELDS},
    EVF_SERVER_FIELD("id"),
    EVF_SERVER_FIELD("review_id"),
    EVF_SERVER_FIELD("version"),
    EVF_SERVER_FIELD("created_by"),
    EVF_SERVER_FIELD("created_at"),
    EVF_SERVER_FIELD("updated_at"),
    EVF_END,
};

/* What the table cannot say: only a boundary test records what it exercised. */
static void artifact_check(const json_t *doc, struct problems *p)
{
    evfield_check_values(doc, ARTIFACT_FIELDS, "", p);
    json_t *ex = json_object_get(doc, "exercised");
    const char *phase = json_string_value(json_object_get(doc, "phase"));
    if (json_is_array(ex) && json_array_size(ex) && phase && strcmp(phase, "boundary_test") != 0)
        problems_add(p, "/exercised", "only boundary_test artifacts record what was exercised");
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

/* The body of a create, its members checked against fields (faults in p), as a copy without
 * its null members in *doc. Returns -1 (the fault in p) when the body is not a JSON object. */
static int body_doc(struct req *r, const struct evfield *fields, struct problems *p, json_t **doc)
{
    if (!json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object");
        return -1;
    }
    evfield_check_members(r->body, fields, "", p);
    *doc = json_deep_copy(r->body);
    drop_nulls(*doc);
    return 0;
}

/* ---- reviews ---- */

/* The review when it exists and the caller may see it; else answers 404 and returns NULL. */
static json_t *visible_review(struct req *r, const char *id)
{
    json_t *row = NULL;
    enum store_status st =
        uuid_valid(id) ? store_review_get(r->app->store, id, &r->scope, &row) : STORE_NOT_FOUND;
    return req_stored(r, st, row, "review");
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

/* A write's row (stolen) when st is STORE_OK; else answers the fault and returns NULL. */
static json_t *review_stored(struct req *r, enum store_status st, json_t *row,
                             const struct problems *p)
{
    if (st == STORE_OK)
        return row;
    json_decref(row);
    reply_review_fault(r, st, p);
    return NULL;
}

/* A PATCH of current by the body: the body's members checked against the table (p), the
 * client fields of current merged with it (RFC 7396), null members dropped. New reference. */
static json_t *patched(struct req *r, const json_t *current, const struct evfield *fields,
                       struct problems *p)
{
    evfield_check_members(r->body, fields, "", p);
    json_t *base = evfield_project(current, fields);
    json_t *merged = evfield_merge_patch(base, r->body);
    json_decref(base);
    drop_nulls(merged);
    return merged;
}

/* An update's reply: the new row (stolen) as 200 with its ETag, or the fault. */
static void reply_updated(struct req *r, enum store_status st, json_t *row,
                          const struct problems *p)
{
    row = review_stored(r, st, row, p);
    if (row)
        resp_versioned(r, 200, row);
}

static json_t *review_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *doc = NULL, *out = NULL;
    if (body_doc(r, REVIEW_FIELDS, p, &doc) != 0)
        goto out;
    if (!json_object_get(doc, "question"))
        json_object_set_new(doc, "question", json_string(DEFAULT_QUESTION));
    if (!json_object_get(doc, "workload_ids"))
        json_object_set_new(doc, "workload_ids", json_array());
    if (!json_object_get(doc, "owner") && r->who.role == ROLE_OWNER)
        json_object_set_new(doc, "owner", json_string(r->who.username));
    evfield_check_values(doc, REVIEW_FIELDS, "", p);
    if (p->total)
        goto out;
    struct audit_actor who;
    enum store_status st = store_review_create(r->app->store, req_actor(r, &who), doc, p, &out);
    made = review_stored(r, st, out, p);
out:
    json_decref(doc);
    return made;
}

static void review_create(struct req *r)
{
    idem_create(r, review_create_make);
}

/* The route declares no from/to, so res_list's are never given here. */
static const struct res_list_kind REVIEWS = {
    "reviews",
    store_review_list,
    {{"status", RQ_ENUM, REVIEW_STATUSES, RES_FIELD(state)},
     {"owner", RQ_TEXT, NULL, RES_FIELD(team)}},
};

static void review_get(struct req *r)
{
    resp_read_versioned(r, visible_review(r, r->params[0]));
}

static void review_patch(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *current = NULL, *merged = NULL, *out = NULL;
    if (etag_patch_body(r, &p) != 0)
        goto out;
    current = visible_review(r, r->params[0]);
    if (!current || etag_check(r, current, "review") != 0)
        goto out;
    merged = patched(r, current, REVIEW_FIELDS, &p);
    if (!json_object_get(merged, "question"))
        json_object_set_new(merged, "question", json_string(DEFAULT_QUESTION));
    if (!json_object_get(merged, "workload_ids"))
        json_object_set_new(merged, "workload_ids", json_array());
    evfield_check_values(merged, REVIEW_FIELDS, "", &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    enum store_status st = store_review_update(r->app->store, req_actor(r, &who),
                                               json_string_value(json_object_get(current, "id")),
                                               etag_row_version(current), merged, &p, &out);
    reply_updated(r, st, out, &p);
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
    struct problems p;
    problems_init(&p);
    int asked = res_query(r, "comparison", RQ_SHA256, NULL, sha, sizeof sha, &p) != NULL;
    if (p.total)
        resp_invalid(r, &p, NULL);
    problems_free(&p);
    if (r->status)
        goto out;
    if (asked) {
        /* The caller must be able to see the comparison (team scoping): a hash the caller
         * cannot read answers as one that is not stored. */
        json_t *visible = NULL;
        enum store_status vis = store_comparison_get(r->app->store, sha, &r->scope, &visible);
        json_decref(visible);
        if (vis != STORE_OK) {
            resp_store_error(r, vis, "comparison");
            goto out;
        }
        cited = json_pack("[s]", sha);
    }
    enum store_status st = store_review_checklist(
        r->app->store, json_string_value(json_object_get(review, "id")), cited, &r->scope, &out);
    resp_stored(r, st, out, "review");
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
    struct page pg;
    if (page_begin(r, &pg, PAGE_TEXT, NULL) != 0)
        goto out;
    enum store_status st =
        store_comparison_list(r->app->store, NULL, json_string_value(json_object_get(review, "id")),
                              &r->scope, pg.after, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "cursor_key", "comparisons");
out:
    json_decref(review);
}

/* ---- artifacts ---- */

/* Team members cite only their teams' evidence; others may cite any. Returns 0, or -1 after
 * answering a store failure. */
static int evidence_scoped(struct req *r, const json_t *doc, struct problems *p)
{
    if (r->who.role != ROLE_TEAM)
        return 0;
    enum store_status st = store_evidence_foreign(r->app->store, json_object_get(doc, "evidence"),
                                                  &r->scope, r->who.user_id, "/evidence", p);
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
    enum store_status st =
        store_evidence_hide_foreign(r->app->store, artifact, &r->scope, r->who.user_id, hidden);
    if (st != STORE_OK) {
        resp_store_error(r, st, "evidence");
        return -1;
    }
    return 0;
}

static json_t *artifact_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *review = NULL, *doc = NULL, *out = NULL;
    review = visible_review(r, r->params[0]);
    if (!review)
        goto out;
    if (body_doc(r, ARTIFACT_FIELDS, p, &doc) != 0)
        goto out;
    artifact_check(doc, p);
    if (!p->total && evidence_scoped(r, doc, p) != 0)
        goto out;
    if (p->total)
        goto out;
    struct audit_actor who;
    enum store_status st =
        store_artifact_create(r->app->store, req_actor(r, &who),
                              json_string_value(json_object_get(review, "id")), doc, p, &out);
    made = review_stored(r, st, out, p);
out:
    json_decref(review);
    json_decref(doc);
    return made;
}

static void artifact_create(struct req *r)
{
    idem_create(r, artifact_create_make);
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
    if (etag_patch_body(r, &p) != 0)
        goto out;
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
    merged = patched(r, current, ARTIFACT_FIELDS, &p);
    artifact_check(merged, &p);
    if (!p.total && evidence_scoped(r, merged, &p) != 0)
        goto out;
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    st = store_artifact_update(r->app->store, req_actor(r, &who),
                               json_string_value(json_object_get(review, "id")),
                               json_string_value(json_object_get(current, "id")),
                               etag_row_version(current), merged, &p, &out);
    reply_updated(r, st, out, &p);
    out = NULL;
out:
    json_decref(review);
    json_decref(current);
    json_decref(merged);
    json_decref(out);
    problems_free(&p);
}

const struct route review_routes[] = {
    {"GET", "/api/v1/reviews", res_list_route, ROLES_USERS, 0, "limit cursor status owner",
     &REVIEWS},
    {"POST", "/api/v1/reviews", review_create, ROLE_OWNER, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/reviews/{id}", review_get, ROLES_USERS, 0, NULL, NULL},
    {"PATCH", "/api/v1/reviews/{id}", review_patch, ROLE_OWNER, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/reviews/{id}/checklist", review_checklist, ROLES_USERS, 0, "comparison", NULL},
    {"GET", "/api/v1/reviews/{id}/comparisons", review_comparisons, ROLES_USERS, 0, "limit cursor",
     NULL},
    {"GET", "/api/v1/reviews/{id}/artifacts", artifact_list, ROLES_USERS, 0, NULL, NULL},
    {"POST", "/api/v1/reviews/{id}/artifacts", artifact_create, ROLE_OWNER | ROLE_TEAM,
     ROUTE_JSON_BODY, NULL, NULL},
    {"PATCH", "/api/v1/reviews/{id}/artifacts/{aid}", artifact_patch, ROLE_OWNER | ROLE_TEAM,
     ROUTE_JSON_BODY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
