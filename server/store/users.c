#include "store/users.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/store_private.h"

/* A read, plus a write of last_used_at only when the stored one is over a minute old: a busy
 * token does not serialise its requests on its own row's lock or write WAL on every read.
 * expires_in_ms bounds how long the caller may cache the answer (http/auth.c). */
static const char *SQL_TOKEN_RESOLVE =
    "WITH t AS (SELECT id, user_id, expires_at, last_used_at FROM api_token "
    "  WHERE token_sha256 = $1 AND revoked_at IS NULL "
    "  AND (expires_at IS NULL OR expires_at > now())), "
    "touch AS (UPDATE api_token a SET last_used_at = now() FROM t WHERE a.id = t.id "
    "  AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '60 seconds') "
    "  RETURNING a.id) "
    "SELECT json_build_object('user_id', u.id, 'username', u.username, 'role', u.role, "
    "  'token_id', t.id, 'teams', coalesce((SELECT json_agg(tm.name ORDER BY tm.name) "
    "  FROM user_team ut JOIN team tm ON tm.id = ut.team_id WHERE ut.user_id = u.id), '[]'), "
    "  'expires_in_ms', floor(extract(epoch FROM t.expires_at - now()) * 1000)) "
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

/* FOR SHARE: a disable committing meanwhile is waited for and then seen (no token is added
 * behind the disable's revocation of them all). */
static const char *SQL_TOKEN_CREATE =
    "INSERT INTO api_token (user_id, label, token_sha256, expires_at) "
    "SELECT id, $2, $3, now() + make_interval(days => $4::int) FROM app_user "
    "WHERE username = $1 AND disabled_at IS NULL FOR SHARE "
    "RETURNING json_build_object('id', id, 'label', label, 'user', $1::text, "
    "'created_at', created_at, 'expires_at', expires_at)";

static const char *SQL_REHASH =
    "UPDATE app_user SET password_hash = $3 WHERE id = $1::uuid AND password_hash = $2 "
    "RETURNING json_build_object('id', id, 'username', username)";

#define USER_TEAMS_JSON                                                                            \
    "coalesce((SELECT json_agg(tm.name ORDER BY tm.name) FROM user_team ut "                       \
    "JOIN team tm ON tm.id = ut.team_id WHERE ut.user_id = u.id), '[]')"

static const char *SQL_LOGIN_GET =
    "SELECT json_build_object('id', u.id, 'username', u.username, 'role', u.role, "
    "'teams', " USER_TEAMS_JSON ", 'password_hash', u.password_hash) "
    "FROM app_user u WHERE u.username = $1 AND u.disabled_at IS NULL";

static const char *SQL_USER_LIST =
    "SELECT coalesce(json_agg(json_build_object('id', u.id, 'username', u.username, "
    "'role', u.role, 'teams', " USER_TEAMS_JSON ", 'created_at', u.created_at, "
    "'disabled_at', u.disabled_at) ORDER BY u.username), '[]') "
    "FROM (SELECT * FROM app_user WHERE $1::text IS NULL OR username > $1 "
    "ORDER BY username LIMIT $2) u";

/* Disabling: the user row, then every live session ended, every token and every signing key
 * revoked, in one statement (the key events follow in the same transaction). The user row's
 * lock orders it after a token, session or key being added under FOR SHARE. */
static const char *SQL_USER_DISABLE =
    "WITH u AS (UPDATE app_user SET disabled_at = coalesce(disabled_at, now()) "
    "  WHERE username = $1 RETURNING id, username, role, created_at, disabled_at), "
    "s AS (UPDATE user_session x SET ended_at = now() FROM u WHERE x.user_id = u.id "
    "  AND x.ended_at IS NULL RETURNING x.id), "
    "t AS (UPDATE api_token x SET revoked_at = now() FROM u WHERE x.user_id = u.id "
    "  AND x.revoked_at IS NULL RETURNING x.id), "
    "k AS (UPDATE signing_key x SET revoked_at = now() FROM u WHERE x.user_id = u.id "
    "  AND x.revoked_at IS NULL RETURNING x.key_id) "
    "SELECT json_build_object('id', u.id, 'username', u.username, 'role', u.role, "
    "'teams', " USER_TEAMS_JSON ", 'created_at', u.created_at, 'disabled_at', u.disabled_at, "
    "'sessions_ended', (SELECT count(*) FROM s), 'tokens_revoked', (SELECT count(*) FROM t), "
    "'signing_keys_revoked', (SELECT coalesce(json_agg(key_id ORDER BY key_id), '[]') FROM k)) "
    "FROM u";

static const char *SQL_USER_ENABLE =
    "UPDATE app_user u SET disabled_at = NULL WHERE username = $1 "
    "RETURNING json_build_object('id', u.id, 'username', u.username, 'role', u.role, "
    "'teams', " USER_TEAMS_JSON ", 'created_at', u.created_at, 'disabled_at', u.disabled_at)";

/* A new password ends the user's sessions (a browser signed in with the old one signs in
 * again); API tokens stay. */
static const char *SQL_USER_PASSWORD =
    "WITH u AS (UPDATE app_user SET password_hash = $2 WHERE username = $1 "
    "  RETURNING id, username, role, created_at, disabled_at), "
    "s AS (UPDATE user_session x SET ended_at = now() FROM u WHERE x.user_id = u.id "
    "  AND x.ended_at IS NULL RETURNING x.id) "
    "SELECT json_build_object('id', u.id, 'username', u.username, 'role', u.role, "
    "'teams', " USER_TEAMS_JSON ", 'created_at', u.created_at, 'disabled_at', u.disabled_at, "
    "'sessions_ended', (SELECT count(*) FROM s)) FROM u";

static const char *SQL_TEAMS_MISSING =
    "SELECT coalesce(json_agg(w.ord - 1 ORDER BY w.ord), '[]') "
    "FROM json_array_elements_text($1::json) WITH ORDINALITY AS w(name, ord) "
    "WHERE NOT EXISTS (SELECT 1 FROM team t WHERE t.name = w.name)";

static const char *SQL_TOKEN_LIST =
    "SELECT coalesce(json_agg(json_build_object('id', t.id, 'label', t.label, "
    "'user', u.username, 'created_at', t.created_at, 'last_used_at', t.last_used_at, "
    "'revoked_at', t.revoked_at, 'expires_at', t.expires_at) ORDER BY t.id), '[]') "
    "FROM (SELECT * FROM api_token WHERE ($1::uuid IS NULL OR user_id = $1::uuid) "
    "AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3) t "
    "JOIN app_user u ON u.id = t.user_id";

static const char *SQL_TOKEN_REVOKE =
    "UPDATE api_token SET revoked_at = coalesce(revoked_at, now()) "
    "WHERE id = $1::uuid AND ($2::uuid IS NULL OR user_id = $2::uuid) "
    "RETURNING json_build_object('id', id, 'label', label, 'user_id', user_id, "
    "'revoked_at', revoked_at)";

enum store_status store_token_resolve(struct store *s, const char *token_sha256, json_t **out)
{
    const char *p[] = {token_sha256};
    return store_json(s, SQL_TOKEN_RESOLVE, STORE_ARGS(p), out);
}

enum store_status store_user_create(struct store *s, const struct audit_actor *who,
                                    const char *username, const char *role,
                                    const char *password_hash, const json_t *team_names,
                                    json_t **out)
{
    /* NULL team_names: no teams (json_dumps of NULL is NULL, hence "[]"). */
    char *teams = team_names ? json_dumps(team_names, JSON_COMPACT) : NULL;
    const char *p[] = {username, role, password_hash, teams ? teams : "[]"};
    enum store_status st =
        store_write_audited(s, who, "user.create", SQL_USER_CREATE, STORE_ARGS(p), out);
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
        st = store_exec_tx(c, "SELECT pg_advisory_xact_lock($1::bigint)", STORE_ARGS(lock), NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_BOOTSTRAP, STORE_ARGS(p), &row);
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
                                     const char *token_sha256, int expires_in_days, json_t **out)
{
    char days[16];
    snprintf(days, sizeof days, "%d", expires_in_days);
    const char *p[] = {username, label ? label : "", token_sha256,
                       expires_in_days > 0 ? days : NULL};
    return store_write_audited(s, who, "token.create", SQL_TOKEN_CREATE, STORE_ARGS(p), out);
}

enum store_status store_user_login_get(struct store *s, const char *username, json_t **out)
{
    const char *p[] = {username};
    return store_json(s, SQL_LOGIN_GET, STORE_ARGS(p), out);
}

enum store_status store_user_rehash(struct store *s, const struct audit_actor *who,
                                    const char *user_id, const char *old_hash, const char *new_hash)
{
    const char *p[] = {user_id, old_hash, new_hash};
    json_t *row = NULL;
    enum store_status st =
        store_write_audited(s, who, "user.password_rehash", SQL_REHASH, STORE_ARGS(p), &row);
    json_decref(row);
    return st;
}

enum store_status store_user_list(struct store *s, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {after, lim};
    return store_json(s, SQL_USER_LIST, STORE_ARGS(p), out);
}

enum store_status store_team_names_missing(struct store *s, const json_t *team_names, json_t **out)
{
    char *names = json_dumps(team_names, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!names)
        return STORE_ERROR;
    const char *p[] = {names};
    enum store_status st = store_json(s, SQL_TEAMS_MISSING, STORE_ARGS(p), out);
    free(names);
    return st;
}

enum store_status store_token_list(struct store *s, const char *user_id, const char *after,
                                   int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {user_id, after, lim};
    return store_json(s, SQL_TOKEN_LIST, STORE_ARGS(p), out);
}

enum store_status store_token_revoke(struct store *s, const struct audit_actor *who, const char *id,
                                     const char *owner_id)
{
    const char *p[] = {id, owner_id};
    json_t *row = NULL;
    enum store_status st =
        store_write_audited(s, who, "token.revoke", SQL_TOKEN_REVOKE, STORE_ARGS(p), &row);
    json_decref(row);
    return st;
}

/* The revocation leaves of the keys a disable revoked, in its transaction. */
struct disable_events {
    const unsigned char *server_sk;
    int log; /* 0: the log is known inconsistent, append nothing (see store_user_disable) */
    char fault[512];
};

static enum store_status log_revocations(struct store_conn *c, const json_t *row, void *ctx)
{
    struct disable_events *e = ctx;
    size_t i;
    json_t *k;
    if (!e->log)
        return STORE_OK;
    json_array_foreach(json_object_get(row, "signing_keys_revoked"), i, k)
    {
        enum store_status st = store__log_key_event(c, json_string_value(k), "revoke", e->server_sk,
                                                    e->fault, sizeof e->fault);
        if (st != STORE_OK)
            return st;
        if (e->fault[0])
            return STORE_UNAVAILABLE;
    }
    return STORE_OK;
}

/* The user row locked by a statement of its own, before the statement that ends what the user
 * holds: that one's snapshot then sees every token, session and key added under FOR SHARE of
 * the row by a transaction that committed while this one waited (a single statement takes its
 * snapshot before it waits, and left such a token live). */
static enum store_status lock_user(struct store_conn *c, const json_t *doc, struct problems *p)
{
    (void)p;
    const char *params[] = {json_string_value(doc)};
    return store_exec_tx(c, "SELECT 1 FROM app_user WHERE username = $1 FOR UPDATE",
                         STORE_ARGS(params), NULL);
}

/* store_write_audited with the user named params[0] locked first (lock_user). */
static enum store_status
write_locked(struct store *s, const struct audit_actor *who, const char *action, void *then_ctx,
             enum store_status (*then)(struct store_conn *, const json_t *, void *),
             const char *sql, int nparams, const char *const *params, json_t **out)
{
    struct problems p;
    problems_init(&p);
    json_t *name = json_string(params[0]);
    struct audit_check check = {
        .fn = lock_user, .doc = name, .p = &p, .then = then, .ctx = then_ctx};
    enum store_status st =
        name ? store_write_audited_checked(s, who, action, &check, sql, nparams, params, out)
             : STORE_ERROR;
    json_decref(name);
    problems_free(&p);
    return st;
}

enum store_status store_user_disable(struct store *s, const struct audit_actor *who,
                                     const char *username, const unsigned char *server_sk,
                                     json_t **out)
{
    const char *p[] = {username};
    struct disable_events e = {.server_sk = server_sk, .log = !store_log_fault(s, NULL, 0)};
    enum store_status st = write_locked(s, who, "user.disable", &e, log_revocations,
                                        SQL_USER_DISABLE, STORE_ARGS(p), out);
    if (e.fault[0]) {
        /* The log was found inconsistent while appending: it appends nothing more, but the
         * account is closed all the same; the revocations reach the log when it is restored
         * (the next start logs every key revoked in the table and not in the log). */
        store__log_fault(s, e.fault);
        e.log = 0;
        e.fault[0] = '\0';
        st = write_locked(s, who, "user.disable", &e, log_revocations, SQL_USER_DISABLE,
                          STORE_ARGS(p), out);
    }
    if (st == STORE_OK)
        json_object_set_new(*out, "signing_keys_logged", json_boolean(e.log));
    return st;
}

enum store_status store_user_enable(struct store *s, const struct audit_actor *who,
                                    const char *username, json_t **out)
{
    const char *p[] = {username};
    return store_write_audited(s, who, "user.enable", SQL_USER_ENABLE, STORE_ARGS(p), out);
}

enum store_status store_user_password_set(struct store *s, const struct audit_actor *who,
                                          const char *username, const char *password_hash,
                                          json_t **out)
{
    const char *p[] = {username, password_hash};
    return write_locked(s, who, "user.password_reset", NULL, NULL, SQL_USER_PASSWORD, STORE_ARGS(p),
                        out);
}
