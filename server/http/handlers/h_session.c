/* Signing in and out, who am I, and owners' signing keys.
 *
 * POST /api/v1/session answers the same 401, after the same argon2id work, for an unknown
 * user and for a wrong password, so neither the answer nor its time tells which names exist.
 * Attempts are counted per account and per client address in PostgreSQL (store/throttle.h)
 * before any password is checked — a reservation taken in one statement, so a burst of N
 * attempts counts as N — and given back when the password was right (or never checked); an
 * attempt beyond the limit answers 429 with Retry-After without hashing anything. */
#include <ctype.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/auth/password.h"
#include "core/auth/secret.h"
#include "core/auth/session.h"
#include "core/formats/evfield.h"
#include "http/hashgate.h"
#include "http/internal.h"
#include "store/sessions.h"
#include "store/signing_keys.h"
#include "store/throttle.h"
#include "store/users.h"

#define USERNAME_MAX_BYTES 64

static const struct login_throttle_policy THROTTLE = {
    .account_failures = 5,  /* a person mistyping does not get there */
    .address_failures = 20, /* several people behind one NAT may share an address */
    .window_s = 15 * 60,
};

/* Writes body as JSON with extra header lines (Set-Cookie, Retry-After). */
static void reply_json_with(struct req *r, int status, const char *content_type,
                            json_t *body_stolen, const char *extra_headers)
{
    char *text = body_stolen ? json_dumps(body_stolen, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(body_stolen);
    if (text)
        resp_bytes(r, status, content_type, text, strlen(text), extra_headers);
    free(text);
}

static json_t *problem_body(int status, const char *slug, const char *title, const char *detail)
{
    char type[128];
    snprintf(type, sizeof type, PROBLEM_TYPE_BASE "%s", slug);
    return json_pack("{s:s, s:s, s:i, s:s}", "type", type, "title", title, "status", status,
                     "detail", detail);
}

/* SHA-256 hex of a throttle key: usernames are folded to lower case so that case variants
 * share one counter. */
static void throttle_key(const char *text, int fold, char hex[65])
{
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy) {
        secret_sha256_hex(text, len, hex);
        return;
    }
    for (size_t i = 0; i <= len; i++)
        copy[i] = fold ? (char)tolower((unsigned char)text[i]) : text[i];
    secret_sha256_hex(copy, len, hex);
    sodium_memzero(copy, len);
    free(copy);
}

static void set_cookie_header(struct req *r, const char *value, int max_age_s, char *out,
                              size_t size)
{
    snprintf(out, size, "Set-Cookie: %s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s\r\n",
             SESSION_COOKIE_NAME, value, max_age_s,
             session_cookie_secure(r->ri->is_ssl, r->app->cfg->public_origin) ? "; Secure" : "");
}

static json_t *user_view(const json_t *row)
{
    return json_pack("{s:O?, s:O?, s:O?, s:O?}", "id", json_object_get(row, "id"), "username",
                     json_object_get(row, "username"), "role", json_object_get(row, "role"),
                     "teams", json_object_get(row, "teams"));
}

/* The password check proper, inside the hashing gate. *new_hash is filled when the stored
 * hash uses old parameters. Returns -1 when the gate stayed full (503 to send). */
static int check_password(const char *stored, const char *password, enum password_check *result,
                          char new_hash[PASSWORD_HASH_BYTES])
{
    size_t len = strlen(password);
    new_hash[0] = '\0';
    if (hashgate_enter(HASHGATE_WAIT_MS) != 0)
        return -1;
    *result = password_verify(stored, password, len);
    if (*result == PASSWORD_OK_REHASH && password_hash(password, len, new_hash) != 0)
        new_hash[0] = '\0'; /* out of memory: keep the old hash, sign in anyway */
    hashgate_leave();
    return 0;
}

/* Reserves this attempt; answers 429 (or the store's error) and returns -1 when the account
 * or the address is past its limit; 0 to go on. */
static int throttled(struct req *r, const char *account_key, const char *address_key)
{
    long retry_after_s = 0;
    enum store_status st = store_login_throttle_reserve(r->app->store, &THROTTLE, account_key,
                                                        address_key, &retry_after_s);
    if (st != STORE_OK) {
        resp_store_error(r, st, "sign-in");
        return -1;
    }
    if (retry_after_s == 0)
        return 0;
    char extra[64], detail[128];
    snprintf(extra, sizeof extra, "Retry-After: %ld\r\n", retry_after_s);
    snprintf(detail, sizeof detail, "too many failed sign-ins; try again in %ld seconds",
             retry_after_s);
    reply_json_with(r, 429, "application/problem+json",
                    problem_body(429, "too-many-attempts", "Too many attempts", detail), extra);
    return -1;
}

static void log_warning(struct req *r, const char *msg)
{
    fprintf(stderr, "{\"level\":\"warn\",\"msg\":\"%s\",\"request_id\":\"%s\"}\n", msg,
            r->request_id);
}

/* After a right password: stores the upgraded hash (when new_hash is not empty), starts the
 * session, clears the account's failures and answers 201 with the cookie. */
static void start_session(struct req *r, const json_t *user, const char *account_key,
                          const char *address_key, const char *new_hash)
{
    const char *user_id = json_string_value(json_object_get(user, "id"));
    struct audit_actor who = {.user_id = user_id,
                              .name = json_string_value(json_object_get(user, "username")),
                              .request_id = r->request_id};
    const char *old_hash = json_string_value(json_object_get(user, "password_hash"));
    if (new_hash[0] &&
        store_user_rehash(r->app->store, &who, user_id, old_hash, new_hash) != STORE_OK)
        log_warning(r, "password rehash not stored");
    char session_id[SESSION_ID_TEXT_LEN + 1], session_hash[65];
    session_id_new(session_id);
    secret_sha256_hex(session_id, strlen(session_id), session_hash);
    json_t *session = NULL;
    enum store_status st = store_session_create(r->app->store, &who, session_hash, user_id,
                                                AUTH_SESSION_ABSOLUTE_S, &session);
    if (st == STORE_NOT_FOUND) { /* disabled since its password was checked */
        resp_problem(r, 401, "unauthenticated", "Authentication failed",
                     "the username or password is wrong");
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "session");
        goto out;
    }
    /* Housekeeping on the success path only: failures must not buy an attacker extra work. */
    if (store_login_throttle_release(r->app->store, &THROTTLE, account_key, address_key, 1) !=
            STORE_OK ||
        store_login_throttle_purge(r->app->store, &THROTTLE) != STORE_OK ||
        store_session_purge(r->app->store) != STORE_OK)
        log_warning(r, "sign-in housekeeping failed");
    char csrf[SESSION_CSRF_TEXT_LEN + 1], cookie[256];
    session_csrf_token(session_id, csrf);
    set_cookie_header(r, session_id, AUTH_SESSION_ABSOLUTE_S, cookie, sizeof cookie);
    json_t *body = json_pack("{s:o, s:s, s:O?, s:i}", "user", user_view(user), "csrf_token", csrf,
                             "expires_at", json_object_get(session, "expires_at"), "idle_timeout_s",
                             r->app->cfg->session_idle_s);
    reply_json_with(r, 201, "application/json", body, cookie);
    sodium_memzero(cookie, sizeof cookie);
    sodium_memzero(csrf, sizeof csrf);
out:
    sodium_memzero(session_id, sizeof session_id);
    json_decref(session);
}

static const struct evfield SESSION_FIELDS[] = {
    {"username", EVF_TEXT, EVF_REQUIRED, 0, 0, USERNAME_MAX_BYTES, NULL, NULL},
    {"password", EVF_TEXT, EVF_REQUIRED | EVF_SECRET, 0, 0, PASSWORD_MAX_BYTES, NULL, NULL},
    EVF_END,
};

static void session_create(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *user = NULL;
    char account_key[65], address_key[65], new_hash[PASSWORD_HASH_BYTES] = "";
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    evfield_check(r->body, SESSION_FIELDS, "", 0, NULL, &p);
    const char *username = evfield_valid_string(r->body, "username", &p);
    const char *password = evfield_valid_string(r->body, "password", &p);
    if (p.total)
        goto invalid;
    /* A page elsewhere must not sign a browser into an account of its choosing. */
    const char *origin = req_header(r, "Origin");
    if (origin && !req_same_origin(r, origin)) {
        resp_problem(r, 403, "csrf", "Forbidden", "the request's Origin is not this server");
        goto out;
    }
    throttle_key(username, 1, account_key);
    throttle_key(r->ri->remote_addr, 0, address_key);
    if (throttled(r, account_key, address_key) != 0)
        goto out;
    enum store_status st = store_user_login_get(r->app->store, username, &user);
    if (st != STORE_OK && st != STORE_NOT_FOUND) {
        resp_store_error(r, st, "sign-in");
        goto out;
    }
    /* An unknown user is checked against the dummy hash (stored NULL): same work, same 401. */
    const char *stored = json_string_value(json_object_get(user, "password_hash"));
    enum password_check result = PASSWORD_WRONG;
    if (check_password(stored, password, &result, new_hash) != 0) {
        /* never checked: not a failure */
        if (store_login_throttle_release(r->app->store, &THROTTLE, account_key, address_key, 0) !=
            STORE_OK)
            log_warning(r, "sign-in reservation not released");
        hashgate_reply_busy(r);
        goto out;
    }
    if (result != PASSWORD_WRONG) {
        start_session(r, user, account_key, address_key, new_hash);
        goto out;
    }
    /* A wrong password: its reservation stands as the failure. */
    resp_problem(r, 401, "unauthenticated", "Authentication failed",
                 "the username or password is wrong");
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    sodium_memzero(new_hash, sizeof new_hash);
    json_decref(user);
    problems_free(&p);
}

/* Ends the session behind the cookie for every client holding it; a token caller has no
 * session, and the cookie is cleared either way. */
static void session_delete(struct req *r)
{
    if (r->who.via_cookie) {
        struct audit_actor who;
        enum store_status st =
            store_session_end(r->app->store, req_actor(r, &who), r->who.session_id);
        if (st != STORE_OK && st != STORE_NOT_FOUND) {
            resp_store_error(r, st, "session");
            return;
        }
    }
    char cookie[160];
    set_cookie_header(r, "", 0, cookie, sizeof cookie);
    resp_bytes(r, 204, NULL, NULL, 0, cookie);
}

static void me_get(struct req *r)
{
    json_t *keys = NULL;
    enum store_status st = store_signing_key_list(r->app->store, r->who.user_id, &keys);
    if (st != STORE_OK) {
        resp_store_error(r, st, "signing keys");
        return;
    }
    const char *role = auth_role_name(r->who.role);
    json_t *teams = r->who.teams ? r->who.teams : json_array();
    json_t *body =
        json_pack("{s:{s:s, s:s, s:s, s:O}, s:s, s:O, s:s, s:o}", "user", "id", r->who.user_id,
                  "username", r->who.username, "role", role, "teams", teams, "role", role, "teams",
                  teams, "auth", r->who.via_cookie ? "session" : "token", "signing_keys", keys);
    if (!r->who.teams)
        json_decref(teams);
    char sid[SESSION_ID_TEXT_LEN + 1];
    if (body && r->who.via_cookie && auth_session_cookie(r, sid, sizeof sid)) {
        char csrf[SESSION_CSRF_TEXT_LEN + 1];
        session_csrf_token(sid, csrf);
        json_object_set_new(body, "csrf_token", json_string(csrf));
        sodium_memzero(csrf, sizeof csrf);
        sodium_memzero(sid, sizeof sid);
    }
    resp_json(r, 200, body);
}

/* PUT /me/signing-key {public_key}: the raw 32-byte Ed25519 key in standard base64. Keys that
 * are not canonical points of the main subgroup (small order included) are refused: a
 * signature under such a key does not bind its owner. */
static const struct evfield SIGNING_KEY_FIELDS[] = {
    {"public_key", EVF_TEXT, EVF_REQUIRED, 0, 0, 256, NULL, NULL},
    {"password", EVF_TEXT, EVF_SECRET, 0, 0, PASSWORD_MAX_BYTES, NULL, NULL},
    EVF_END,
};

static void step_up_refused(struct req *r, const char *detail)
{
    resp_problem(r, 403, "step-up-required", "Password required", "%s", detail);
}

/* Step-up before a key is enrolled: a stolen token or an old session alone must not add a key
 * that signs in the owner's name. The caller's own password (checked and counted like a
 * sign-in: wrong ones lock the account as at POST /session), or a browser session signed in
 * within CAPLEDGER_SIGNING_FRESH_LOGIN_S. Returns 0 to go on, else -1 with the reply sent. */
static int step_up(struct req *r, const char *password)
{
    if (!password) {
        int fresh = r->app->cfg->signing_fresh_s;
        if (r->who.via_cookie && fresh > 0 && r->who.signed_in_s >= 0 && r->who.signed_in_s < fresh)
            return 0;
        step_up_refused(r, r->who.via_cookie
                               ? "enrolling a signing key needs your password again: send it "
                                 "in \"password\" (or sign in again first)"
                               : "enrolling a signing key with an API token needs your password: "
                                 "send it in \"password\"");
        return -1;
    }
    char account_key[65], address_key[65], new_hash[PASSWORD_HASH_BYTES] = "";
    throttle_key(r->who.username, 1, account_key);
    throttle_key(r->ri->remote_addr, 0, address_key);
    if (throttled(r, account_key, address_key) != 0)
        return -1;
    json_t *user = NULL;
    int rc = -1;
    enum store_status st = store_user_login_get(r->app->store, r->who.username, &user);
    if (st != STORE_OK && st != STORE_NOT_FOUND) {
        resp_store_error(r, st, "sign-in");
        goto out;
    }
    const char *stored = json_string_value(json_object_get(user, "password_hash"));
    enum password_check result = PASSWORD_WRONG;
    if (check_password(stored, password, &result, new_hash) != 0) {
        if (store_login_throttle_release(r->app->store, &THROTTLE, account_key, address_key, 0) !=
            STORE_OK)
            log_warning(r, "step-up reservation not released");
        hashgate_reply_busy(r);
        goto out;
    }
    if (result == PASSWORD_WRONG) { /* its reservation stands as a failure */
        step_up_refused(r, "the password is wrong");
        goto out;
    }
    if (store_login_throttle_release(r->app->store, &THROTTLE, account_key, address_key, 1) !=
        STORE_OK)
        log_warning(r, "step-up reservation not released");
    rc = 0;
out:
    sodium_memzero(new_hash, sizeof new_hash);
    json_decref(user);
    return rc;
}

static void signing_key_put(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    evfield_check(r->body, SIGNING_KEY_FIELDS, "", 0, NULL, &p);
    const char *b64 = evfield_valid_string(r->body, "public_key", &p);
    uint8_t pk[crypto_sign_PUBLICKEYBYTES + 1];
    if (b64 && codec_b64_decode(b64, strlen(b64), pk, sizeof pk) != crypto_sign_PUBLICKEYBYTES)
        problems_add(&p, "/public_key",
                     "must be the standard base64 of a raw 32-byte Ed25519 public key");
    else if (b64 && !crypto_core_ed25519_is_valid_point(pk))
        problems_add(&p, "/public_key",
                     "is not a valid Ed25519 public key (not a point of the "
                     "main subgroup, or of small order)");
    const char *password = evfield_valid_string(r->body, "password", &p);
    if (p.total)
        goto invalid;
    if (step_up(r, password) != 0)
        goto out;
    char key_id[DECISION_KEY_ID_HEX_LEN + 1];
    decision_key_id(pk, key_id);
    struct audit_actor who;
    int created = 0;
    enum store_status st =
        store_signing_key_add(r->app->store, req_actor(r, &who), r->who.user_id, key_id, b64,
                              r->app->cfg->server_sk, &out, &created);
    if (st == STORE_CONFLICT) {
        resp_problem(r, 409, "conflict", "Conflict",
                     "this key is registered to another user, or was revoked");
        goto out;
    }
    if (st == STORE_UNAVAILABLE && store_log_fault(r->app->store, NULL, 0)) {
        resp_log_inconsistent(r);
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "signing key");
        goto out;
    }
    resp_json(r, created ? 201 : 200, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    json_decref(out);
    problems_free(&p);
}

static void signing_key_list(struct req *r)
{
    json_t *keys = NULL;
    enum store_status st = store_signing_key_list(r->app->store, r->who.user_id, &keys);
    if (st != STORE_OK) {
        resp_store_error(r, st, "signing keys");
        return;
    }
    resp_json(r, 200, json_pack("{s:o, s:n}", "items", keys, "next_cursor"));
}

static int key_id_valid(const char *s)
{
    uint8_t bin[DECISION_KEY_ID_HEX_LEN / 2];
    return codec_hex_decode_exact(s, bin, sizeof bin) == 0;
}

/* DELETE /me/signing-keys/{key_id} (owners, their own) and DELETE
 * /users/{name}/signing-keys/{key_id} (admins, anyone's): the revocation is a key event of the
 * log either way, and the audit trail names who revoked it. */
static void key_revoke(struct req *r, const char *user_id, const char *username, const char *key_id)
{
    json_t *out = NULL;
    const char *none = user_id ? "you have no signing key with this id"
                               : "this user has no signing key with this id";
    if (!key_id_valid(key_id)) {
        resp_problem(r, 404, "not-found", "Not found", "%s", none);
        return;
    }
    struct audit_actor who;
    enum store_status st = store_signing_key_revoke(r->app->store, req_actor(r, &who), user_id,
                                                    username, key_id, r->app->cfg->server_sk, &out);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 404, "not-found", "Not found", "%s", none);
        return;
    }
    if (st == STORE_UNAVAILABLE && store_log_fault(r->app->store, NULL, 0)) {
        resp_log_inconsistent(r);
        return;
    }
    resp_stored(r, st, out, "signing key");
}

static void signing_key_delete(struct req *r)
{
    key_revoke(r, r->who.user_id, NULL, r->params[0]);
}

static void user_signing_key_delete(struct req *r)
{
    key_revoke(r, NULL, r->params[0], r->params[1]);
}

static void user_signing_key_list(struct req *r)
{
    json_t *keys = NULL;
    enum store_status st = store_signing_key_list_named(r->app->store, r->params[0], &keys);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 404, "not-found", "Not found", "no user named '%s'", r->params[0]);
        return;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "signing keys");
        return;
    }
    resp_json(r, 200, json_pack("{s:o, s:n}", "items", keys, "next_cursor"));
}

const struct route session_routes[] = {
    {"POST", "/api/v1/session", session_create, ROLES_ALL, ROUTE_JSON_BODY | ROUTE_NO_SESSION, NULL,
     NULL},
    {"DELETE", "/api/v1/session", session_delete, ROLES_USERS, 0, NULL, NULL},
    {"GET", "/api/v1/me", me_get, ROLES_USERS, 0, NULL, NULL},
    {"PUT", "/api/v1/me/signing-key", signing_key_put, ROLE_OWNER, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/me/signing-keys", signing_key_list, ROLES_USERS, 0, NULL, NULL},
    {"DELETE", "/api/v1/me/signing-keys/{key_id}", signing_key_delete, ROLE_OWNER, 0, NULL, NULL},
    {"GET", "/api/v1/users/{name}/signing-keys", user_signing_key_list, ROLE_ADMIN, 0, NULL, NULL},
    {"DELETE", "/api/v1/users/{name}/signing-keys/{key_id}", user_signing_key_delete, ROLE_ADMIN, 0,
     NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
