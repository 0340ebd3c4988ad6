/* The signed decision log: appending a decision (its checks, then its leaf through head.c). */
#include "store/ledger/ledger_private.h"

/* The signer's key and its owner, the key row locked against a concurrent revocation. */
static const char *SQL_SIGNER =
    "SELECT json_build_object('user_id', k.user_id, 'username', u.username, 'role', u.role, "
    "'disabled', u.disabled_at IS NOT NULL, 'revoked', k.revoked_at IS NOT NULL, "
    "'public_key', " B64("k.public_key") ") "
                                         "FROM signing_key k JOIN app_user u ON u.id = k.user_id "
                                         "WHERE k.key_id = $1 FOR SHARE OF k";

static const char *SQL_FACTS =
    "SELECT json_build_object("
    "'review', (SELECT json_build_object('id', r.id, 'owner', r.owner) FROM review r "
    "  WHERE r.id = $1::uuid), "
    "'duplicate', EXISTS (SELECT 1 FROM decision d WHERE d.id = $2::uuid), "
    "'supersedes', (SELECT json_build_object('review_id', d.review_id, 'superseded_by', "
    "  (SELECT n.id FROM decision n WHERE n.supersedes = d.id)) FROM decision d "
    "  WHERE d.id = $3::uuid), "
    "'comparisons', (SELECT coalesce(json_agg(json_build_object('sha256', e.h, "
    "  'stored', c.sha256 IS NOT NULL, 'result', CASE WHEN e.i = 1 THEN c.result END) "
    "  ORDER BY e.i), '[]') FROM json_array_elements_text($4::json) WITH ORDINALITY AS e(h, i) "
    "  LEFT JOIN comparison c ON c.sha256 = e.h), "
    "'received_at', " UTC_MICROS("now()") ")";

static const char *SQL_INSERT_DECISION =
    "INSERT INTO decision (id, review_id, decision, chosen_option, comparison_sha256, record, "
    "signature, signer_key_id, signer, supersedes, leaf_index, received_at) "
    "VALUES ($1::uuid, $2::uuid, $3, $4, ARRAY(SELECT json_array_elements_text($5::json)), "
    "$6::jsonb, $7, $8, $9, $10::uuid, $11::bigint, $12::timestamptz)";
static const char *SQL_REVIEW_DECIDED =
    "UPDATE review SET status = 'decided', version = version + 1, updated_at = now() "
    "WHERE id = $1::uuid";

/* ---- appending ---- */

/* The signer's key: registered, not revoked (in the table and in the log), an enabled owner's,
 * and the caller's. */
static enum store_status check_signer(struct store_conn *c, const struct ledger_append *in,
                                      enum ledger_outcome *outcome, struct problems *p, char *fault,
                                      size_t fault_size, json_t **key_out)
{
    const char *key_id = text_of(in->record, "signer_key_id");
    const char *params[] = {key_id};
    json_t *key = NULL;
    enum store_status st = store_json_tx(c, SQL_SIGNER, STORE_ARGS(params), &key);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, "/record/signer_key_id", "no signing key with this id is registered");
        *outcome = LEDGER_INVALID;
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    if (strcmp(text_of(key, "user_id") ? text_of(key, "user_id") : "",
               in->caller_user_id ? in->caller_user_id : "") != 0) {
        *outcome = LEDGER_NOT_SIGNER;
    } else if (json_is_true(json_object_get(key, "revoked"))) {
        problems_add(p, "/record/signer_key_id", "this key was revoked: sign with a current key");
        *outcome = LEDGER_INVALID;
    } else if (json_is_true(json_object_get(key, "disabled")) ||
               strcmp(text_of(key, "role") ? text_of(key, "role") : "", "owner") != 0) {
        problems_add(p, "/record/signer_key_id",
                     "the key's holder '%s' is not an owner: only owners sign decisions",
                     text_of(key, "username") ? text_of(key, "username") : "");
        *outcome = LEDGER_INVALID;
    } else if (decision_verify(in->record, in->signature_b64, text_of(key, "public_key")) != 0) {
        problems_add(p, "/signature",
                     "does not verify over \"capledger-decision-v1\\n\" followed by the RFC 8785 "
                     "bytes of the record, with the key signer_key_id names");
        *outcome = LEDGER_INVALID;
    } else {
        size_t before = p->total;
        st = ledger__check_signer_in_log(c, key_id, text_of(key, "public_key"), p, fault,
                                         fault_size);
        if (fault[0])
            *outcome = LEDGER_INCONSISTENT;
        else if (p->total > before)
            *outcome = LEDGER_INVALID;
    }
    *key_out = key;
    return st;
}

/* The gate (core/ledger/gate.h) over the checklist of the record's citations and its first
 * cited comparison. */
static void check_gate(const json_t *record, const json_t *facts, const json_t *checklist,
                       struct problems *p)
{
    struct gate_facts g = {
        .record = record,
        .checklist = checklist,
        .comparison = json_array_get(json_object_get(facts, "comparisons"), 0),
    };
    gate_check(&g, p);
}

/* Inserts the leaf and the decision, moves the head, signs the checkpoint. Called with the
 * head row locked. */
static enum store_status append_locked(struct store_conn *c, const struct ledger_append *in,
                                       const json_t *head, const json_t *key,
                                       const char *received_at, enum ledger_outcome *outcome,
                                       char *fault, size_t fault_size, json_t **out)
{
    const json_t *record = in->record;
    size_t leaf_len = 0;
    char *leaf = decision_leaf(record, in->signature_b64, text_of(key, "public_key"), received_at,
                               &leaf_len);
    char *record_text = json_dumps(record, JSON_COMPACT);
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    json_t *appended = NULL;
    enum store_status st = STORE_ERROR;
    if (!leaf || !record_text || !cited_text)
        goto out;
    st = ledger__append_leaf_locked(c, head, leaf, leaf_len, in->server_sk, fault, fault_size,
                                    &appended);
    if (st != STORE_OK || fault[0]) {
        if (fault[0])
            *outcome = LEDGER_INCONSISTENT;
        goto out;
    }
    json_int_t index = json_integer_value(json_object_get(appended, "leaf_index"));
    char index_text[24];
    snprintf(index_text, sizeof index_text, "%lld", (long long)index);
    const char *pd[] = {text_of(record, "id"),
                        text_of(record, "review_id"),
                        text_of(record, "decision"),
                        text_of(record, "chosen_option"),
                        cited_text,
                        record_text,
                        in->signature_b64,
                        text_of(record, "signer_key_id"),
                        text_of(key, "username"),
                        text_of(record, "supersedes"),
                        index_text,
                        received_at};
    st = store_exec_tx(c, SQL_INSERT_DECISION, STORE_ARGS(pd), NULL);
    if (st == STORE_CONFLICT && strcmp(store_last_constraint(c), "decision_pkey") == 0) {
        /* Another append with this id committed while this one waited for the head. */
        *outcome = LEDGER_DUPLICATE;
        st = STORE_OK;
        goto out;
    }
    /* A concurrent decision superseding the same one: decision_supersedes_once refuses it
     * (STORE_CONFLICT, answered 409); the facts check before the lock catches the usual case. */
    if (st != STORE_OK)
        goto out;
    *out =
        json_pack("{s:s, s:s, s:I, s:O, s:s, s:O, s:{s:I, s:O, s:O}}", "id", text_of(record, "id"),
                  "review_id", text_of(record, "review_id"), "leaf_index", index, "tree_size",
                  json_object_get(appended, "tree_size"), "received_at", received_at, "checkpoint",
                  json_object_get(appended, "checkpoint"), "inclusion_proof", "leaf_index", index,
                  "tree_size", json_object_get(appended, "tree_size"), "hashes",
                  json_object_get(appended, "hashes"));
    if (!*out)
        st = STORE_ERROR;
out:
    json_decref(appended);
    free(leaf);
    free(record_text);
    free(cited_text);
    return st;
}

/* A review's decision leaves, found in the log itself (db/migrations/0100_log_leaf_reviews.sql),
 * with whether each has its decision row, and the review's rows that have no leaf. */
#define DECISION_LEAF "substring(l.leaf FROM 1 FOR 14) = '\\x7b227075626c69635f6b6579223a'::bytea"
static const char *SQL_REVIEW_LEAVES =
    "SELECT json_build_object('leaves', (SELECT coalesce(json_agg(json_build_object('i', "
    "l.leaf_index, 'leaf', " B64(
        "l.leaf") ", 'row', EXISTS (SELECT 1 FROM decision d WHERE "
                  "d.leaf_index = l.leaf_index)) ORDER BY l.leaf_index), "
                  "'[]') FROM log_leaf l WHERE " DECISION_LEAF
                  " AND log_leaf_review_id(l.leaf) = $1), 'orphans', (SELECT "
                  "coalesce(json_agg(d.leaf_index "
                  "ORDER BY d.leaf_index), '[]') FROM decision d WHERE d.review_id = $1::uuid AND "
                  "NOT EXISTS "
                  "(SELECT 1 FROM log_leaf l WHERE l.leaf_index = d.leaf_index AND " DECISION_LEAF
                  " AND log_leaf_review_id(l.leaf) = $1)))";

/* The review's line of decisions as the signed log proves it: every decision leaf of the review
 * authenticated, each with its row, no row without its leaf, no decision superseded twice.
 * *current = the id of the one no other supersedes (new reference; NULL for a review without
 * decisions). Fills fault on any contradiction (a log-integrity fault). */
enum store_status ledger__review_line(struct store_conn *c, const char *review_id, json_t **current,
                                      char *fault, size_t size)
{
    *current = NULL;
    const char *pr[] = {review_id};
    json_t *found = NULL;
    enum store_status st = store_json_tx(c, SQL_REVIEW_LEAVES, STORE_ARGS(pr), &found);
    if (st != STORE_OK)
        return st;
    const json_t *leaves = json_object_get(found, "leaves");
    const json_t *orphans = json_object_get(found, "orphans");
    json_t *superseded = json_object(), *ids = json_array();
    struct note_checkpoint cp;
    if (json_array_size(orphans) > 0)
        snprintf(fault, size,
                 "review %s: the decision row of leaf %lld has no decision leaf of the review in "
                 "the log",
                 review_id, (long long)json_integer_value(json_array_get(orphans, 0)));
    else if (json_array_size(leaves) > 0)
        st = ledger__signed_checkpoint(c, &cp, fault, size);
    size_t i;
    json_t *one;
    json_array_foreach(leaves, i, one)
    {
        if (st != STORE_OK || fault[0])
            break;
        long long index = (long long)json_integer_value(json_object_get(one, "i"));
        char why[400] = "";
        st = ledger__leaf_authenticate_b64(c, &cp, (uint64_t)index, text_of(one, "leaf"), why,
                                           sizeof why);
        if (st != STORE_OK)
            break;
        json_t *view = why[0] ? NULL : decision_view_b64(text_of(one, "leaf"));
        if (why[0])
            snprintf(fault, size, "review %s: decision %s", review_id, why);
        else if (!view)
            snprintf(fault, size, "review %s: leaf %lld is not a decision leaf", review_id, index);
        else if (!json_is_true(json_object_get(one, "row")))
            snprintf(fault, size, "review %s: decision %s (leaf %lld) has no decision row",
                     review_id, text_of(view, "id") ? text_of(view, "id") : "?", index);
        else if (text_of(view, "supersedes") &&
                 json_object_get(superseded, text_of(view, "supersedes")))
            snprintf(fault, size, "review %s: two decision leaves supersede decision %s", review_id,
                     text_of(view, "supersedes"));
        if (!fault[0]) {
            if (text_of(view, "supersedes"))
                json_object_set_new(superseded, text_of(view, "supersedes"), json_true());
            json_array_append(ids, json_object_get(view, "id"));
        }
        json_decref(view);
    }
    /* The last leaf no other supersedes: the line's end. */
    for (size_t k = json_array_size(ids); st == STORE_OK && !fault[0] && k-- > 0;) {
        const char *id = json_string_value(json_array_get(ids, k));
        if (id && !json_object_get(superseded, id)) {
            *current = json_string(id);
            break;
        }
    }
    json_decref(superseded);
    json_decref(ids);
    json_decref(found);
    return st;
}

/* The review's current decision must be the one the record supersedes: a review has one line
 * of decisions, never two current ones — read from the review's authenticated leaves
 * (ledger__review_line), never from the decision table alone. On a mismatch *outcome =
 * LEDGER_NOT_CURRENT and *current = the current decision's id (new reference); on a
 * contradiction in the log *outcome = LEDGER_INCONSISTENT and fault says why. */
static enum store_status check_current(struct store_conn *c, const json_t *record,
                                       enum ledger_outcome *outcome, json_t **current, char *fault,
                                       size_t fault_size)
{
    json_t *id = NULL;
    enum store_status st =
        ledger__review_line(c, text_of(record, "review_id"), &id, fault, fault_size);
    if (st != STORE_OK)
        return st;
    if (fault[0]) {
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    if (!id)
        return STORE_OK; /* the first decision of the review */
    const char *sup = text_of(record, "supersedes");
    if (!sup || strcmp(sup, json_string_value(id)) != 0) {
        *outcome = LEDGER_NOT_CURRENT;
        *current = id;
        return STORE_OK;
    }
    json_decref(id);
    return STORE_OK;
}

/* Everything an append checks about the record before the head lock, in the order the append
 * does it: duplicate id, references to stored data, evidence, then the gate for `advance`.
 * *outcome stays LEDGER_APPENDED when the record may be appended. The checklist the gate uses
 * (on the first cited comparison) goes to *checklist when asked for, whatever the decision. */
static enum store_status check_record(struct store_conn *c, const json_t *record,
                                      const char *cited_text, enum ledger_outcome *outcome,
                                      struct problems *p, json_t **facts, json_t **checklist)
{
    size_t before = p->total;
    /* review_id is any id to the record validator; only a uuid can name a stored review. */
    const char *review_id = text_of(record, "review_id");
    const char *pf[] = {review_id && uuid_valid(review_id) ? review_id : NULL,
                        text_of(record, "id"), text_of(record, "supersedes"), cited_text};
    enum store_status st = store_json_tx(c, SQL_FACTS, STORE_ARGS(pf), facts);
    if (st != STORE_OK)
        return st;
    if (json_is_true(json_object_get(*facts, "duplicate"))) {
        *outcome = LEDGER_DUPLICATE;
        return STORE_OK;
    }
    decision_check_references(record, *facts, p);
    st = store_evidence_check(c, json_object_get(record, "evidence"), "/record/evidence", p);
    if (st != STORE_OK)
        return st;
    if (p->total > before) {
        *outcome = LEDGER_INVALID;
        return STORE_OK;
    }
    int advance = strcmp(text_of(record, "decision"), "advance") == 0;
    if (!advance && !checklist)
        return STORE_OK;
    json_t *items = NULL;
    st = store_review_checklist_tx(c, review_id, json_object_get(record, "comparison_sha256"), NULL,
                                   &items);
    if (st != STORE_OK)
        return st;
    if (advance) {
        check_gate(record, *facts, items, p);
        if (p->total > before)
            *outcome = LEDGER_REFUSED;
    }
    if (checklist)
        *checklist = items;
    else
        json_decref(items);
    return STORE_OK;
}

enum store_status store_decision_append(struct store *s, const struct audit_actor *who,
                                        const struct ledger_append *in,
                                        enum ledger_outcome *outcome, struct problems *p,
                                        json_t **out)
{
    *out = NULL;
    *outcome = LEDGER_INVALID;
    const json_t *record = in->record;
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    if (!cited_text)
        return STORE_ERROR;
    json_t *key = NULL, *facts = NULL, *head = NULL, *result = NULL, *current = NULL;
    char fault[512] = "";
    if (store_log_fault(s, NULL, 0)) {
        free(cited_text);
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(cited_text);
        return STORE_UNAVAILABLE;
    }
    size_t before = p->total;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = check_signer(c, in, outcome, p, fault, sizeof fault, &key);
    if (st != STORE_OK || *outcome == LEDGER_NOT_SIGNER || *outcome == LEDGER_INCONSISTENT ||
        p->total > before)
        goto out;
    *outcome = LEDGER_APPENDED;
    st = check_record(c, record, cited_text, outcome, p, &facts, NULL);
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        goto out;
    /* Everything above ran without the head lock; from here appends are serialised, so the
     * current decision read here is still current when this one commits. */
    st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = check_current(c, record, outcome, &current, fault, sizeof fault);
    if (st != STORE_OK || *outcome == LEDGER_INCONSISTENT)
        goto out;
    if (*outcome == LEDGER_NOT_CURRENT) {
        result = json_pack("{s:O}", "current_decision", current);
        goto out;
    }
    st = append_locked(c, in, head, key, text_of(facts, "received_at"), outcome, fault,
                       sizeof fault, &result);
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        goto out;
    const char *pr[] = {text_of(record, "review_id")};
    st = store_exec_tx(c, SQL_REVIEW_DECIDED, STORE_ARGS(pr), NULL);
    if (st == STORE_OK) {
        json_t *change =
            json_pack("{s:s, s:s, s:s, s:O}", "id", text_of(record, "id"), "review_id",
                      text_of(record, "review_id"), "decision", text_of(record, "decision"),
                      "leaf_index", json_object_get(result, "leaf_index"));
        st = store_audit_record_tx(c, who, "decision.append", text_of(record, "id"), change);
        json_decref(change);
    }
    if (st == STORE_OK)
        st = store_commit(c);
out:
    if (st != STORE_OK || (*outcome != LEDGER_APPENDED && *outcome != LEDGER_NOT_CURRENT)) {
        json_decref(result);
        result = NULL;
    }
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        store_rollback(c);
    store_release(s, c);
    free(cited_text);
    json_decref(key);
    json_decref(facts);
    json_decref(head);
    json_decref(current);
    if (fault[0])
        store__log_fault(s, fault);
    *out = result;
    return st;
}

enum store_status store_decision_check(struct store *s, const json_t *record,
                                       enum ledger_outcome *outcome, struct problems *p,
                                       json_t **out)
{
    *out = NULL;
    *outcome = LEDGER_APPENDED;
    if (store_log_fault(s, NULL, 0)) { /* the append would refuse everything */
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    if (!cited_text)
        return STORE_ERROR;
    json_t *facts = NULL, *checklist = NULL, *current = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(cited_text);
        return STORE_UNAVAILABLE;
    }
    /* One read-only transaction: every check sees one snapshot, and nothing is written. */
    enum store_status st =
        store_exec_tx(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, NULL);
    if (st == STORE_OK)
        st = check_record(c, record, cited_text, outcome, p, &facts, &checklist);
    char fault[512] = "";
    if (st == STORE_OK && *outcome == LEDGER_APPENDED)
        st = check_current(c, record, outcome, &current, fault, sizeof fault);
    if (st == STORE_OK) {
        *out = json_pack("{s:o, s:o}", "checklist", checklist ? checklist : json_null(),
                         "current_decision", current ? current : json_null());
        checklist = current = NULL;
        if (!*out)
            st = STORE_ERROR;
    }
    store_rollback(c);
    store_release(s, c);
    free(cited_text);
    json_decref(facts);
    json_decref(checklist);
    json_decref(current);
    if (fault[0])
        store__log_fault(s, fault);
    return st;
}
