/* The signed decision log: key events (enrolments and revocations) as leaves. */
#include "store/ledger/ledger_private.h"

/* ---- key events ---- */

static const char *SQL_KEY_FOR_EVENT = "SELECT json_build_object('public_key', " B64(
    "k.public_key") ", 'owner', u.username, "
                    "'created_at', " UTC_MICROS(
                        "k.created_at") ", 'revoked_at', CASE WHEN k.revoked_at IS NOT "
                                        "NULL THEN " UTC_MICROS(
                                            "k.revoked_at") " END, 'logged', EXISTS (SELECT 1 FROM "
                                                            "log_leaf l WHERE " KEY_EVENTS_OF(
                                                                "k.key_id") " AND position("
                                                                            "convert_to('\"kind\":"
                                                                            "\"key_' || $2 || "
                                                                            "'\"', 'UTF8') IN "
                                                                            "l.leaf) > 0)) FROM "
                                                                            "signing_key k JOIN "
                                                                            "app_user u ON u.id = "
                                                                            "k.user_id WHERE "
                                                                            "k.key_id = $1";
static const char *SQL_INSERT_KEY_EVENT =
    "INSERT INTO log_key_event (key_id, kind, leaf_index) VALUES ($1, $2, $3::bigint)";
/* Keys the log does not enrol yet, or whose revocation it does not record yet, oldest first. */
static const char *SQL_KEYS_UNLOGGED =
    "SELECT coalesce(json_agg(json_build_object('key_id', k.key_id, 'revoked', k.revoked_at IS "
    "NOT NULL) ORDER BY k.created_at, k.key_id), '[]') FROM signing_key k WHERE (NOT EXISTS "
    "(SELECT 1 FROM log_leaf l WHERE " KEY_EVENTS_OF(
        "k.key_id") " AND position('\"kind\":"
                    "\"key_enrol\"' IN "
                    "convert_from(l.leaf, 'UTF8')) > "
                    "0) AND k.key_id IN (SELECT "
                    "key_id FROM "
                    "log_key_backfill_key)) OR "
                    "(k.revoked_at IS NOT NULL AND EXISTS (SELECT 1 FROM log_leaf l "
                    "WHERE " KEY_EVENTS_OF(
                        "k.key_id") " AND position('\"kind\":\"key_enrol\"' IN "
                                    "convert_from(l.leaf, 'UTF8')) > "
                                    "0) AND NOT EXISTS (SELECT 1 FROM log_leaf l "
                                    "WHERE " KEY_EVENTS_OF(
                                        "k.key_id") " AND position('\"kind\":\"key_revoke\"' IN "
                                                    "convert_from(l.leaf, 'UTF8')) > 0))";
/* Key rows the log never enrolled (after the backfill): written into the database by hand. */
static const char *SQL_KEYS_NOT_ENROLLED =
    "SELECT coalesce(json_agg(k.key_id ORDER BY k.key_id), '[]') FROM signing_key k WHERE NOT "
    "EXISTS (SELECT 1 FROM log_leaf l WHERE " KEY_EVENTS_OF(
        "k.key_id") " AND position('\"kind\":\"key_enrol\"' IN convert_from(l.leaf, 'UTF8')) > "
                    "0)";
/* The leaves that enrolled and revoked a key, for the check at append time: found in log_leaf
 * (never through the log_key_event index, which a superuser can edit), with what the index
 * says, which must agree. */
static const char *SQL_KEY_LEAVES =
    "SELECT json_build_object('leaves', (SELECT coalesce(json_agg(json_build_object('i', "
    "l.leaf_index, 'leaf', " B64("l.leaf") ") ORDER BY l.leaf_index), '[]') FROM log_leaf l "
                                           "WHERE " KEY_EVENTS_OF(
                                               "$1") "), 'indexed', (SELECT coalesce(json_agg(e."
                                                     "leaf_index ORDER BY e.leaf_index), '[]') "
                                                     "FROM log_key_event e WHERE e.key_id = $1))";

enum store_status store__log_key_event(struct store_conn *c, const char *key_id, const char *kind,
                                       const unsigned char *server_sk, char *fault,
                                       size_t fault_size)
{
    const char *pk[] = {key_id, kind};
    json_t *key = NULL, *head = NULL, *appended = NULL;
    char *leaf = NULL;
    enum store_status st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_KEY_FOR_EVENT, STORE_ARGS(pk), &key);
    if (st != STORE_OK || json_is_true(json_object_get(key, "logged")))
        goto out;
    size_t len = 0;
    int enrol = strcmp(kind, "enrol") == 0;
    if (enrol)
        leaf = keylog_enrol_leaf(key_id, text_of(key, "public_key"), text_of(key, "owner"),
                                 text_of(key, "created_at"), &len);
    else if (text_of(key, "revoked_at"))
        leaf = keylog_revoke_leaf(key_id, text_of(key, "revoked_at"), &len);
    if (!leaf) {
        st = STORE_ERROR;
        goto out;
    }
    st = ledger__append_leaf_locked(c, head, leaf, len, server_sk, fault, fault_size, &appended);
    if (st != STORE_OK || fault[0])
        goto out;
    char index_text[24];
    snprintf(index_text, sizeof index_text, "%lld",
             (long long)json_integer_value(json_object_get(appended, "leaf_index")));
    const char *pe[] = {key_id, kind, index_text};
    st = store_exec_tx(c, SQL_INSERT_KEY_EVENT, STORE_ARGS(pe), NULL);
out:
    free(leaf);
    json_decref(key);
    json_decref(head);
    json_decref(appended);
    return st;
}

/* At start: enrol (and revoke) in the log every key it does not record yet — the keys of a log
 * begun before key events were logged, appended after its existing leaves. */
enum store_status ledger__log_unlogged_keys(struct store *s, const unsigned char *server_sk,
                                            char *fault, size_t fault_size)
{
    struct store_conn *c = store_acquire(s, 5000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *head = NULL, *keys = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK) /* serialises concurrent starters before reading what is missing */
        st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_KEYS_UNLOGGED, 0, NULL, &keys);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *key_id = text_of(k, "key_id");
        if (st == STORE_OK && !fault[0])
            st = store__log_key_event(c, key_id, "enrol", server_sk, fault, fault_size);
        if (st == STORE_OK && !fault[0] && json_is_true(json_object_get(k, "revoked")))
            st = store__log_key_event(c, key_id, "revoke", server_sk, fault, fault_size);
    }
    json_t *strays = NULL;
    int append_fault = fault[0] != '\0';
    if (st == STORE_OK && !fault[0])
        st = store_json_tx(c, SQL_KEYS_NOT_ENROLLED, 0, NULL, &strays);
    if (st == STORE_OK && !fault[0] && json_array_size(strays) > 0) {
        char *ids = json_dumps(strays, JSON_COMPACT);
        snprintf(fault, fault_size,
                 "signing key rows %s have no enrolment leaf in the log (written into the "
                 "database behind the server's back): they sign nothing",
                 ids ? ids : "?");
        free(ids);
    }
    /* The backfill commits even when a stray key is found: its leaves are the log's own. */
    if (st == STORE_OK && !append_fault)
        st = store_commit(c);
    else
        store_rollback(c);
    store_release(s, c);
    json_decref(head);
    json_decref(keys);
    json_decref(strays);
    return st;
}

/* The signer's standing in the log itself: the leaves that enrolled and revoked key_id, read
 * back and replayed (core/ledger/keylog.h). Adds a problem when the key may not sign. */
enum store_status ledger__check_signer_in_log(struct store_conn *c, const char *key_id,
                                              const char *public_key, struct problems *p,
                                              char *fault, size_t fault_size)
{
    const char *params[] = {key_id};
    json_t *found = NULL;
    enum store_status st = store_json_tx(c, SQL_KEY_LEAVES, STORE_ARGS(params), &found);
    if (st != STORE_OK)
        return st;
    const json_t *leaves = json_object_get(found, "leaves");
    /* The index must point at exactly these leaves: a difference is a log-integrity fault
     * (someone edited the leaves or the index behind the server's back), never served. */
    json_t *at = json_array();
    size_t j;
    json_t *one;
    json_array_foreach(leaves, j, one) json_array_append(at, json_object_get(one, "i"));
    if (!json_equal(at, json_object_get(found, "indexed"))) {
        char *a = json_dumps(at, JSON_COMPACT);
        char *b = json_dumps(json_object_get(found, "indexed"), JSON_COMPACT);
        snprintf(fault, fault_size,
                 "key %s: the key event index (log_key_event) names leaves %s, but the log's "
                 "key event leaves of the key are %s",
                 key_id, b ? b : "null", a ? a : "null");
        free(a);
        free(b);
    }
    json_decref(at);
    /* Every key event leaf the check relies on is authenticated against the signed log. */
    struct note_checkpoint cp;
    if (!fault[0] && json_array_size(leaves) > 0)
        st = ledger__signed_checkpoint(c, &cp, fault, fault_size);
    json_array_foreach(leaves, j, one)
    {
        if (st != STORE_OK || fault[0])
            break;
        char why[400] = "";
        st = ledger__leaf_authenticate_b64(c, &cp,
                                           (uint64_t)json_integer_value(json_object_get(one, "i")),
                                           text_of(one, "leaf"), why, sizeof why);
        if (why[0])
            snprintf(fault, fault_size, "key %s: key event %s", key_id, why);
    }
    if (st != STORE_OK || fault[0]) {
        json_decref(found);
        return st;
    }
    struct keylog *k = keylog_new();
    char why[512] = "";
    size_t i;
    json_t *row;
    int revoked = 0;
    json_array_foreach(leaves, i, row)
    {
        const char *b64 = text_of(row, "leaf");
        size_t b64_len = b64 ? strlen(b64) : 0;
        uint8_t *bytes = malloc(b64_len / 4 * 3 + 1);
        long len = bytes ? codec_b64_decode(b64, b64_len, bytes, b64_len / 4 * 3 + 1) : -1;
        json_t *doc = len >= 0 ? jcs_parse((const char *)bytes, (size_t)len, NULL) : NULL;
        free(bytes);
        struct keylog_event ev;
        if (!k || !doc || keylog_event_parse(doc, &ev, why, sizeof why) != 0 ||
            ev.kind == KEYLOG_DECISION || strcmp(ev.key_id, key_id) != 0 ||
            keylog_apply(k, (uint64_t)json_integer_value(json_object_get(row, "i")), &ev, why,
                         sizeof why) != 0) {
            if (!why[0])
                snprintf(why, sizeof why, "leaf %lld is not a key event of this key",
                         (long long)json_integer_value(json_object_get(row, "i")));
            json_decref(doc);
            break;
        }
        revoked |= ev.kind == KEYLOG_REVOKE;
        json_decref(doc);
    }
    if (!why[0] && k && keylog_may_sign(k, key_id, public_key, why, sizeof why) == 0)
        why[0] = '\0';
    else if (revoked)
        problems_add(p, "/record/signer_key_id",
                     "this key was revoked (the log records it: %s): sign with a current key", why);
    else
        problems_add(p, "/record/signer_key_id", "the log does not let this key sign: %s",
                     why[0] ? why : "out of memory");
    keylog_free(k);
    json_decref(found);
    return STORE_OK;
}
