#include "store/users.h"

#include <stdlib.h>

static const char *SQL_TOKEN_RESOLVE =
    "WITH t AS (UPDATE api_token SET last_used_at = now() "
    "  WHERE token_sha256 = $1 AND revoked_at IS NULL RETURNING id, user_id) "
    "SELECT json_build_object('user_id', u.id, 'username', u.username, 'role', u.role, "
    "  'token_id', t.id, 'teams', coalesce((SELECT json_agg(tm.name ORDER BY tm.name) "
    "  FROM user_team ut JOIN team tm ON tm.id = ut.team_id WHERE ut.user_id = u.id), '[]')) "
    "FROM t JOIN app_user u ON u.id = t.user_id WHERE u.disabled_at IS NULL";

/* Team names are resolved inside the statement; a name that does not exist makes the count
 * differ and the CHECK below fails the whole insert (nothing half-written). */
static const char *SQL_USER_CREATE =
    "WITH wanted AS (SELECT DISTINCT value AS name FROM json_array_elements_text($4::json)), "
    "found AS (SELECT t.id, t.name FROM team t JOIN wanted w ON w.name = t.name), "
    "ok AS (SELECT (SELECT count(*) FROM wanted) = (SELECT count(*) FROM found) AS all_found), "
    "u AS (INSERT INTO app_user (username, role, password_hash) "
    "  SELECT $1, $2, $3 FROM ok WHERE all_found RETURNING id, username, role, created_at), "
    "m AS (INSERT INTO user_team (user_id, team_id) SELECT u.id, found.id FROM u, found) "
    "SELECT json_build_object('id', u.id, 'username', u.username, 'role', u.role, "
    "  'teams', coalesce((SELECT json_agg(name ORDER BY name) FROM found), '[]'), "
    "  'created_at', u.created_at) FROM u";

static const char *SQL_BOOTSTRAP =
    "INSERT INTO app_user (username, role, password_hash) "
    "SELECT 'admin', 'admin', $1 WHERE NOT EXISTS (SELECT 1 FROM app_user) "
    "RETURNING json_build_object('id', id, 'username', username)";

static const char *SQL_TOKEN_CREATE =
    "INSERT INTO api_token (user_id, label, token_sha256) "
    "SELECT id, $2, $3 FROM app_user WHERE username = $1 AND disabled_at IS NULL "
    "RETURNING json_build_object('id', id, 'label', label, 'user', $1::text, "
    "'created_at', created_at)";

enum store_status store_token_resolve(struct store *s, const char *token_sha256, json_t **out)
{
    const char *p[] = {token_sha256};
    return store_json1(s, SQL_TOKEN_RESOLVE, 1, p, out);
}

enum store_status store_user_create(struct store *s, const struct audit_actor *who,
                                    const char *username, const char *role,
                                    const char *password_hash, const json_t *team_names,
                                    json_t **out)
{
    char *teams = json_dumps(team_names ? team_names : json_array(), JSON_COMPACT);
    const char *p[] = {username, role, password_hash, teams ? teams : "[]"};
    enum store_status st = store_write_audited(s, who, "user.create", SQL_USER_CREATE, 4, p, out);
    free(teams);
    /* No row: a named team does not exist. */
    return st == STORE_NOT_FOUND ? STORE_INVALID : st;
}

enum store_status store_bootstrap_admin(struct store *s, const char *password_hash)
{
    struct store_conn *c = store_acquire(s, 5000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *row = NULL;
    const char *lock[] = {"7302948812364312"};
    const char *p[] = {password_hash};
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec(c, "SELECT pg_advisory_xact_lock($1::bigint)", 1, lock, NULL);
    if (st == STORE_OK)
        st = store_json(c, SQL_BOOTSTRAP, 1, p, &row);
    if (st == STORE_OK) {
        struct audit_actor system = {.name = "system", .request_id = "bootstrap"};
        st = store_audit_record_tx(c, &system, "user.bootstrap_admin",
                                   json_string_value(json_object_get(row, "id")), row);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    else
        store_rollback(c);
    json_decref(row);
    store_release(s, c);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}

enum store_status store_token_create(struct store *s, const struct audit_actor *who,
                                     const char *username, const char *label,
                                     const char *token_sha256, json_t **out)
{
    const char *p[] = {username, label ? label : "", token_sha256};
    return store_write_audited(s, who, "token.create", SQL_TOKEN_CREATE, 3, p, out);
}
