/* Drift alerts for owners.
 *
 * The drift check (store_alert_sweep) runs in the background every CAPLEDGER_DRIFT_SWEEP_S
 * seconds (server/cmd/serve.c), when alerts are read, and on POST /alerts/sweep (for a
 * pipeline step right after an upload), rather than inside the upload handlers: the evidence
 * code stays unaware of decisions, and a sweep is idempotent, so running it from several
 * places and several server instances is harmless. Reading reviews never writes.
 *
 * Owners read the alerts addressed to them and acknowledge or resolve them; auditors and admins
 * read every alert; admins may also update any (for an owner who has left). */
#include <stdlib.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "core/validate.h"
#include "http/resource.h"
#include "store/alerts.h"

static const char *const ALERT_STATUSES[] = {"open", "acknowledged", "resolved", NULL};
static const char *const ALERT_UPDATE_STATUSES[] = {"acknowledged", "resolved", NULL};

/* Runs the sweep; returns 0, or -1 after answering. */
static int sweep(struct req *r, int *raised)
{
    struct audit_actor who = {.name = "system", .request_id = r->request_id};
    enum store_status st = store_alert_sweep(r->app->store, &who, raised);
    if (st != STORE_OK) {
        resp_store_error(r, st, "drift check");
        return -1;
    }
    return 0;
}

static void alert_list(struct req *r)
{
    struct page pg;
    struct problems p;
    problems_init(&p);
    char status[40], owner[80], review[80];
    if (page_begin(r, &pg, PAGE_AT_ID, &p) != 0)
        goto out;
    struct alert_query q = {
        .status = res_query(r, "status", RQ_ENUM, ALERT_STATUSES, status, sizeof status, &p),
        .owner = res_query(r, "owner", RQ_TEXT, NULL, owner, sizeof owner, &p),
        .review_id = res_query(r, "review", RQ_UUID, NULL, review, sizeof review, &p),
        .after_at = pg.after_at,
        .after_id = pg.after_id,
        .limit = pg.fetch,
    };
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    if (r->who.role == ROLE_OWNER) {
        if (q.owner && strcmp(q.owner, r->who.username) != 0) {
            resp_problem(r, 403, "forbidden", "Forbidden",
                         "owners read the alerts addressed to them");
            goto out;
        }
        q.owner = r->who.username;
    }
    int raised = 0;
    if (sweep(r, &raised) != 0)
        goto out;
    json_t *items = NULL;
    enum store_status st = store_alert_list(r->app->store, &q, &items);
    page_reply_fetched(r, &pg, st, items, "created_at", "alerts");
out:
    problems_free(&p);
}

static void alert_sweep(struct req *r)
{
    int raised = 0;
    if (sweep(r, &raised) == 0)
        resp_json(r, 200, json_pack("{s:i}", "raised", raised));
}

/* The alert if the caller may see it (owners: their own); else answers 404 and returns NULL. */
static json_t *readable_alert(struct req *r, const char *id)
{
    json_t *row = NULL;
    enum store_status st =
        uuid_valid(id) ? store_alert_get(r->app->store, id, &row) : STORE_NOT_FOUND;
    const char *owner = json_string_value(json_object_get(row, "owner"));
    if (st == STORE_OK && r->who.role == ROLE_OWNER && owner && strcmp(owner, r->who.username) != 0)
        st = STORE_NOT_FOUND; /* another owner's alert: not revealed */
    return req_stored(r, st, row, "alert");
}

static void alert_get(struct req *r)
{
    resp_read_versioned(r, readable_alert(r, r->params[0]));
}

static const struct evfield ALERT_PATCH_FIELDS[] = {
    {"status", EVF_ENUM, EVF_QUOTE, 0, 0, 0, ALERT_UPDATE_STATUSES, NULL},
    {"note", EVF_TEXT, 0, 0, 0, 4000, NULL, NULL},
    EVF_END,
};

static void alert_patch(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *current = NULL, *out = NULL;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object {status, note}");
        goto invalid;
    }
    evfield_check(r->body, ALERT_PATCH_FIELDS, "", 0, NULL, &p);
    const char *status = evfield_valid_string(r->body, "status", &p);
    const char *note = evfield_valid_string(r->body, "note", &p);
    if (p.total)
        goto invalid;
    current = readable_alert(r, r->params[0]);
    if (!current || etag_check(r, current, "alert") != 0)
        goto out;
    /* Absent members keep their value (a merge patch). */
    if (!json_object_get(r->body, "status"))
        status = json_string_value(json_object_get(current, "status"));
    if (!json_object_get(r->body, "note"))
        note = json_string_value(json_object_get(current, "note"));
    struct audit_actor who;
    enum store_status st = store_alert_update(r->app->store, req_actor(r, &who), r->params[0],
                                              etag_row_version(current), status, note, &out);
    if (st == STORE_CONFLICT) {
        resp_problem(r, 412, "precondition-failed", "Precondition failed",
                     "the alert changed while you were saving it; read it again");
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "alert");
        goto out;
    }
    resp_versioned(r, 200, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    json_decref(current);
    json_decref(out);
    problems_free(&p);
}

const struct route alert_routes[] = {
    {"GET", "/api/v1/alerts", alert_list, ROLE_OWNER | ROLE_AUDITOR | ROLE_ADMIN, 0,
     "limit cursor status owner review", NULL},
    {"POST", "/api/v1/alerts/sweep", alert_sweep, ROLE_OWNER | ROLE_ADMIN,
     ROUTE_JSON_BODY | ROUTE_OPTIONAL_BODY, NULL, NULL},
    {"GET", "/api/v1/alerts/{id}", alert_get, ROLE_OWNER | ROLE_AUDITOR | ROLE_ADMIN, 0, NULL,
     NULL},
    {"PATCH", "/api/v1/alerts/{id}", alert_patch, ROLE_OWNER | ROLE_ADMIN, ROUTE_JSON_BODY, NULL,
     NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
