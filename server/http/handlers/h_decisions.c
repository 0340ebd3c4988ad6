/* Signed decisions: POST verifies and appends to the log (store/ledger/append.c), GETs read them.
 *
 * Only owners post, and only with their own registered key. Owners, auditors and admins read
 * every decision; team members read the decisions of reviews that cover one of their teams'
 * workloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/cursor.h"
#include "core/formats/evfield.h"
#include "core/ledger/decision.h"
#include "core/validate.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "store/ledger.h"
#include "store/outcome.h"
#include "store/reviews.h"

/* What POST /decisions would answer for an outcome (the dry run reports it). */
static int outcome_status(enum ledger_outcome o)
{
    switch (o) {
    case LEDGER_APPENDED:
        return 201;
    case LEDGER_NOT_SIGNER:
        return 403;
    case LEDGER_DUPLICATE:
    case LEDGER_NOT_CURRENT:
        return 409;
    case LEDGER_INCONSISTENT:
        return 503;
    case LEDGER_INVALID:
    case LEDGER_REFUSED:
        break;
    }
    return 422;
}

static const char *outcome_name(enum ledger_outcome o)
{
    switch (o) {
    case LEDGER_APPENDED:
        return "accepted";
    case LEDGER_REFUSED:
        return "refused";
    case LEDGER_NOT_SIGNER:
        return "not_signer";
    case LEDGER_DUPLICATE:
        return "duplicate";
    case LEDGER_NOT_CURRENT:
        return "not_current";
    case LEDGER_INCONSISTENT:
        return "log_inconsistent";
    case LEDGER_INVALID:
        break;
    }
    return "invalid";
}

/* ?dry_run=true: the same checks as the append (store_decision_check shares them), unsigned,
 * nothing written. 200 {dry_run, outcome, status (what the append would answer), errors,
 * checklist (the gate's, on the first cited comparison), current_decision}. */
static void decision_dry_run(struct req *r, const json_t *record, struct problems *p)
{
    enum ledger_outcome outcome = LEDGER_INVALID;
    json_t *out = NULL;
    enum store_status st = STORE_OK;
    if (!p->total)
        st = store_decision_check(r->app->store, record, &outcome, p, &out);
    if (st != STORE_OK) {
        resp_store_error(r, st, "decision");
        return;
    }
    json_t *body = json_pack("{s:b, s:s, s:i, s:o, s:I}", "dry_run", 1, "outcome",
                             outcome_name(outcome), "status", outcome_status(outcome), "errors",
                             problems_errors_json(p), "error_count", (json_int_t)p->total);
    json_object_set(body, "checklist", out ? json_object_get(out, "checklist") : json_null());
    json_object_set(body, "current_decision",
                    out ? json_object_get(out, "current_decision") : json_null());
    json_decref(out);
    resp_json(r, 200, body);
}

#define DECISION_RECORD                                                                            \
    {                                                                                              \
        "record", EVF_ANY, EVF_REQUIRED | EVF_MSG_ALL, 0, 0, 0,                                    \
            EVF_WORDS("is required: the decision record (docs/ledger-format.md)"), NULL            \
    }

static const struct evfield DECISION_FIELDS[] = {
    DECISION_RECORD,
    {"signature", EVF_TEXT, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    EVF_END,
};

/* A dry run comes before signing: its signature is optional (and not checked). */
static const struct evfield DRY_RUN_FIELDS[] = {
    DECISION_RECORD,
    {"signature", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    EVF_END,
};

/* The stored decision when the one posted is already in the log byte for byte (the same record,
 * signature and signer) and the request carries an Idempotency-Key: a retry whose first answer
 * was lost, e.g. through another instance after the first died between the append's commit and
 * storing its reply under the key. NULL otherwise (without a key a reused id stays a 409). */
static json_t *same_decision_stored(struct req *r, const json_t *record, const char *sig)
{
    const char *id = json_string_value(json_object_get(record, "id"));
    json_t *row = NULL;
    char fault[512] = "";
    enum store_status st = id && uuid_valid(id) ? store_decision_get(r->app->store, id, &r->scope,
                                                                     fault, sizeof fault, &row)
                                                : STORE_NOT_FOUND;
    if (st != STORE_OK || fault[0] || !row)
        return NULL;
    const char *stored_sig = json_string_value(json_object_get(row, "signature"));
    const char *signer = json_string_value(json_object_get(row, "signer"));
    if (!json_equal(json_object_get(row, "record"), record) || !stored_sig || !sig ||
        strcmp(stored_sig, sig) != 0 || !signer || strcmp(signer, r->who.username) != 0) {
        json_decref(row);
        return NULL;
    }
    return row;
}

/* Not idem_create: ?dry_run=true takes no key, and a retry of its own committed append is
 * recognised (idem_begin_own_retries). */
static void decision_create(struct req *r)
{
    struct idem idem = {0};
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    int dry_run = res_query_bool(r, "dry_run", &p);
    if (p.total)
        goto invalid;
    if (!dry_run && idem_begin_own_retries(r, &idem) == IDEM_ANSWERED)
        goto out;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object {record, signature}");
        goto invalid;
    }
    evfield_check(r->body, dry_run ? DRY_RUN_FIELDS : DECISION_FIELDS, "", 0, NULL, &p);
    json_t *record = json_object_get(r->body, "record");
    if (json_is_object(record))
        decision_validate(record, "/record", &p);
    const char *sig = evfield_valid_string(r->body, "signature", &p);
    uint8_t raw[crypto_sign_BYTES + 3];
    if (sig && codec_b64_decode(sig, strlen(sig), raw, sizeof raw) != crypto_sign_BYTES)
        problems_add(&p, "/signature",
                     "must be the standard base64 (with padding) of a 64-byte "
                     "Ed25519 signature");
    if (dry_run) {
        decision_dry_run(r, record, &p);
        goto out;
    }
    if (p.total)
        goto invalid;
    struct audit_actor who;
    struct ledger_append in = {
        .record = record,
        .signature_b64 = sig,
        .caller_user_id = r->who.user_id,
        .server_sk = r->app->cfg->server_sk,
    };
    enum ledger_outcome outcome;
    enum store_status st =
        store_decision_append(r->app->store, req_actor(r, &who), &in, &outcome, &p, &out);
    if (st != STORE_OK) {
        resp_store_error(r, st, "decision");
        goto out;
    }
    switch (outcome) {
    case LEDGER_APPENDED:
        idem_reply(r, &idem, 201, out);
        out = NULL;
        break;
    case LEDGER_INVALID:
        goto invalid;
    case LEDGER_REFUSED:
        resp_invalid(r, &p,
                     "The gate refuses this advance: every unmet condition is listed in errors. "
                     "A revise or stop decision is always accepted.");
        break;
    case LEDGER_NOT_SIGNER:
        resp_problem(r, 403, "forbidden", "Forbidden",
                     "signer_key_id names a key that is not yours: sign with your own "
                     "registered key (PUT /api/v1/me/signing-key)");
        break;
    case LEDGER_INCONSISTENT:
        resp_log_inconsistent(r);
        break;
    case LEDGER_DUPLICATE:
        if (idem.active && (out = same_decision_stored(r, record, sig)) != NULL) {
            idem_reply(r, &idem, 200, out);
            out = NULL;
            break;
        }
        resp_problem(r, 409, "conflict", "Conflict",
                     "a decision with id %s is already in the log: choose a new id",
                     json_string_value(json_object_get(record, "id")));
        break;
    case LEDGER_NOT_CURRENT: {
        const char *current = json_string_value(json_object_get(out, "current_decision"));
        resp_problem_with(r, 409, "not-current", "Conflict", json_incref(out),
                          "the review's current decision is %s: a new decision names it in "
                          "supersedes (a review has one current decision)",
                          current ? current : "?");
        break;
    }
    }
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    if (!dry_run)
        idem_end(r, &idem);
    json_decref(out);
    problems_free(&p);
}

/* A stored decision that differs from its log leaf: never served (the alert is raised). */
static void integrity_error(struct req *r, const char *fault)
{
    resp_problem(r, 500, "log-integrity", "A decision differs from the log",
                 "%s: the stored copy was changed outside capledger; owners and admins were "
                 "alerted",
                 fault);
}

/* Decision reads are authenticated against the signed log (store_decision_get): once the store
 * knows the log is inconsistent — at start, at an append or at a read whose leaf does not
 * authenticate — they answer 503 log-inconsistent, never the data. */
static int log_faulted(struct req *r)
{
    if (!store_log_fault(r->app->store, NULL, 0))
        return 0;
    resp_log_inconsistent(r);
    return 1;
}

/* A team member reads the decisions of a review shared with other teams without those teams'
 * evidence ids and comparison hashes (store_decision_hide_foreign). Returns 0, or -1 after
 * answering a store failure. */
static int decisions_scoped(struct req *r, json_t *rows)
{
    if (r->who.role != ROLE_TEAM)
        return 0;
    size_t i, hidden;
    json_t *row;
    json_t *list = json_is_array(rows) ? rows : NULL;
    for (i = 0; i < (list ? json_array_size(list) : 1); i++) {
        row = list ? json_array_get(list, i) : rows;
        enum store_status st =
            store_decision_hide_foreign(r->app->store, row, &r->scope, r->who.user_id, &hidden);
        if (st != STORE_OK) {
            resp_store_error(r, st, "evidence");
            return -1;
        }
    }
    return 0;
}

static void decision_get(struct req *r)
{
    json_t *row = NULL;
    char fault[512] = "";
    if (log_faulted(r))
        return;
    enum store_status st =
        uuid_valid(r->params[0])
            ? store_decision_get(r->app->store, r->params[0], &r->scope, fault, sizeof fault, &row)
            : STORE_NOT_FOUND;
    if (st != STORE_OK) {
        resp_store_error(r, st, "decision");
        return;
    }
    if (fault[0]) {
        if (!log_faulted(r))
            integrity_error(r, fault);
        return;
    }
    if (decisions_scoped(r, row) != 0) {
        json_decref(row);
        return;
    }
    resp_json(r, 200, row);
}

/* Realised against predicted (docs/reviews.md): the decision's scorecard. */
static void decision_outcome(struct req *r)
{
    json_t *row = NULL;
    char fault[512] = "";
    if (log_faulted(r))
        return;
    enum store_status st = uuid_valid(r->params[0])
                               ? store_decision_outcome(r->app->store, r->params[0], &r->scope,
                                                        fault, sizeof fault, &row)
                               : STORE_NOT_FOUND;
    if (st != STORE_OK) {
        resp_store_error(r, st, "decision");
        return;
    }
    if (fault[0]) {
        if (!log_faulted(r))
            integrity_error(r, fault);
        return;
    }
    resp_json(r, 200, row);
}

/* Pages in log order; the cursor is the last leaf index shown. */
static void decision_list(struct req *r)
{
    struct problems p;
    problems_init(&p);
    char review[40];
    struct page pg;
    if (page_begin(r, &pg, PAGE_SERIAL, &p) != 0)
        goto out;
    const char *of_review = res_query(r, "review", RQ_UUID, NULL, review, sizeof review, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    json_t *items = NULL;
    char fault[512] = "";
    if (log_faulted(r))
        goto out;
    enum store_status st = store_decision_list(r->app->store, of_review, &r->scope, pg.after_index,
                                               pg.fetch, fault, sizeof fault, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "decisions");
        goto out;
    }
    if (fault[0]) {
        if (!log_faulted(r))
            integrity_error(r, fault);
        goto out;
    }
    if (decisions_scoped(r, items) != 0) {
        json_decref(items);
        goto out;
    }
    page_reply(r, &pg, items, "leaf_index");
out:
    problems_free(&p);
}

const struct route decision_routes[] = {
    {"GET", "/api/v1/decisions", decision_list, ROLES_USERS, ROUTE_STANDBY, "limit cursor review",
     NULL},
    {"POST", "/api/v1/decisions", decision_create, ROLE_OWNER, ROUTE_JSON_BODY, "dry_run", NULL},
    {"GET", "/api/v1/decisions/{id}", decision_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {"GET", "/api/v1/decisions/{id}/outcome", decision_outcome, ROLES_USERS, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
