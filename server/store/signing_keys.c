/* Owners' signing keys. */
#include "store/signing_keys.h"

#include "store/store_private.h"

#include <string.h>

#define KEY_JSON                                                                                   \
    "json_build_object('key_id', k.key_id, 'public_key', encode(k.public_key, 'base64'), "         \
    "'created_at', k.created_at, 'revoked_at', k.revoked_at)"

/* Writes return the key id also as "id": the audit trail's target (dropped before replying). */
#define KEY_JSON_WITH_ID                                                                           \
    "json_build_object('id', k.key_id, 'key_id', k.key_id, "                                       \
    "'public_key', encode(k.public_key, 'base64'), 'created_at', k.created_at, "                   \
    "'revoked_at', k.revoked_at)"

/* Only for an enabled user (FOR SHARE: a disable committing meanwhile is waited for, then
 * seen, so no key is added behind its revocation of them all). */
static const char *SQL_ADD = "INSERT INTO signing_key AS k (key_id, user_id, public_key) "
                             "SELECT $1, u.id, decode($3, 'base64') FROM app_user u "
                             "WHERE u.id = $2::uuid AND u.disabled_at IS NULL FOR SHARE "
                             "ON CONFLICT (key_id) DO NOTHING "
                             "RETURNING " KEY_JSON_WITH_ID;

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(" KEY_JSON " ORDER BY k.created_at DESC, k.key_id), '[]') "
    "FROM signing_key k WHERE k.user_id = $1::uuid";

/* By username (admins): no row when there is no such user. */
static const char *SQL_LIST_NAMED =
    "SELECT (SELECT coalesce(json_agg(" KEY_JSON " ORDER BY k.created_at DESC, k.key_id), "
    "'[]') FROM signing_key k WHERE k.user_id = u.id) FROM app_user u WHERE u.username = $1";

/* The key's holder by id ($2) or, when $2 is null, by username ($3). */
static const char *SQL_REVOKE =
    "UPDATE signing_key AS k SET revoked_at = coalesce(k.revoked_at, now()) "
    "WHERE k.key_id = $1 AND k.user_id = coalesce($2::uuid, "
    "(SELECT id FROM app_user WHERE username = $3)) RETURNING " KEY_JSON_WITH_ID;

static const char *SQL_GET =
    "SELECT json_build_object('key_id', k.key_id, 'user_id', u.id, 'user', u.username, "
    "'role', u.role, 'public_key', encode(k.public_key, 'base64'), "
    "'created_at', k.created_at, 'revoked_at', k.revoked_at) "
    "FROM signing_key k JOIN app_user u ON u.id = k.user_id WHERE k.key_id = $1";

/* The key event leaf written with a key's enrolment or revocation, in its transaction. */
struct key_event {
    const char *key_id, *kind;
    const unsigned char *server_sk;
    char fault[512];
};

static enum store_status append_key_event(struct store_conn *c, const json_t *row, void *ctx)
{
    (void)row;
    struct key_event *e = ctx;
    enum store_status st =
        store__log_key_event(c, e->key_id, e->kind, e->server_sk, e->fault, sizeof e->fault);
    return st == STORE_OK && e->fault[0] ? STORE_UNAVAILABLE : st;
}

/* Runs sql (one key row back) and appends the key event leaf of `kind` to the log, audited as
 * `action`, in one transaction. STORE_UNAVAILABLE, with nothing written, when the log is
 * inconsistent: found so now (reported), or earlier by this process (store_log_fault), which
 * then appends nothing more — no decision, and no key event either. */
static enum store_status write_with_event(struct store *s, const struct audit_actor *who,
                                          const char *action, const char *sql, int nparams,
                                          const char *const *params, const char *key_id,
                                          const char *kind, const unsigned char *server_sk,
                                          json_t **out)
{
    if (store_log_fault(s, NULL, 0))
        return STORE_UNAVAILABLE;
    struct key_event e = {.key_id = key_id, .kind = kind, .server_sk = server_sk};
    struct audit_check then = {.then = append_key_event, .ctx = &e};
    enum store_status st =
        store_write_audited_checked(s, who, action, &then, sql, nparams, params, out);
    if (e.fault[0])
        store__log_fault(s, e.fault);
    return st;
}

enum store_status store_signing_key_add(struct store *s, const struct audit_actor *who,
                                        const char *user_id, const char *key_id,
                                        const char *public_key_b64, const unsigned char *server_sk,
                                        json_t **out, int *created)
{
    const char *p[] = {key_id, user_id, public_key_b64};
    *created = 0;
    enum store_status st = write_with_event(s, who, "signing_key.add", SQL_ADD, STORE_ARGS(p),
                                            key_id, "enrol", server_sk, out);
    if (st == STORE_OK) {
        json_object_del(*out, "id");
        *created = 1;
        return st;
    }
    if (st != STORE_NOT_FOUND) /* NOT_FOUND: DO NOTHING, the key is registered already */
        return st;
    json_t *existing = NULL;
    st = store_signing_key_get(s, key_id, &existing);
    if (st == STORE_OK) {
        const char *owner = json_string_value(json_object_get(existing, "user_id"));
        if (owner && strcmp(owner, user_id) == 0 &&
            json_is_null(json_object_get(existing, "revoked_at"))) {
            json_object_del(existing, "user_id");
            json_object_del(existing, "user");
            json_object_del(existing, "role");
            *out = existing;
            return STORE_OK;
        }
        st = STORE_CONFLICT;
    }
    json_decref(existing);
    return st;
}

enum store_status store_signing_key_list(struct store *s, const char *user_id, json_t **out)
{
    const char *p[] = {user_id};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_signing_key_list_named(struct store *s, const char *username, json_t **out)
{
    const char *p[] = {username};
    return store_json(s, SQL_LIST_NAMED, STORE_ARGS(p), out);
}

enum store_status store_signing_key_revoke(struct store *s, const struct audit_actor *who,
                                           const char *user_id, const char *username,
                                           const char *key_id, const unsigned char *server_sk,
                                           json_t **out)
{
    const char *p[] = {key_id, user_id, username};
    enum store_status st = write_with_event(s, who, "signing_key.revoke", SQL_REVOKE, STORE_ARGS(p),
                                            key_id, "revoke", server_sk, out);
    if (st == STORE_OK)
        json_object_del(*out, "id");
    return st;
}

enum store_status store_signing_key_get(struct store *s, const char *key_id, json_t **out)
{
    const char *p[] = {key_id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}
