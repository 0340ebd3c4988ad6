/* Users (admins), API tokens (everyone for themselves, admins for anyone) and the audit trail
 * (auditors and admins). A token is shown once, in the reply that creates it; only its SHA-256
 * is stored. */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "core/auth/password.h"
#include "core/auth/secret.h"
#include "core/auth/tokencache.h"
#include "core/formats/evfield.h"
#include "core/validate.h"
#include "http/hashgate.h"
#include "http/internal.h"
#include "http/page.h"
#include "store/users.h"

#define TOKEN_LABEL_MAX_BYTES 200

static const struct evfield TEAM_NAME[] = {
    {"team", EVF_HANDLE, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be a team name"), NULL},
    EVF_END,
};

static const struct evfield USER_FIELDS[] = {
    {"username", EVF_HANDLE, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"password", EVF_TEXT, EVF_REQUIRED | EVF_SECRET, 0, 0, PASSWORD_MAX_BYTES, NULL, NULL},
    {"role", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, USER_ROLES, NULL},
    {"teams", EVF_LIST, 0, 0, 0, 1000, EVF_WORDS("must be an array of at most 1000 team names"),
     TEAM_NAME},
    EVF_END,
};

static const struct evfield TOKEN_FIELDS[] = {
    {"label", EVF_TEXT, 0, 0, 0, TOKEN_LABEL_MAX_BYTES, NULL, NULL},
    {"user", EVF_TEXT, 0, 0, 0, 64, NULL, NULL},
    {"expires_in_days", EVF_INTEGER, EVF_MSG_ALL, 1, TOKEN_MAX_DAYS, 0,
     EVF_WORDS("must be a whole number of days from 1 to 3650"), NULL},
    EVF_END,
};
_Static_assert(TOKEN_MAX_DAYS == 3650, "the expires_in_days message names TOKEN_MAX_DAYS");

/* What the table cannot say of "teams" (already checked as names): a team member needs one, and
 * each must exist (each unknown one named by index). */
static void check_teams(struct req *r, const json_t *teams, const char *role, struct problems *p)
{
    char ptr[64];
    size_t i;
    json_t *t;
    if (problems_has(p, "/teams"))
        return;
    if (role && strcmp(role, "team") == 0 && json_array_size(teams) == 0)
        problems_add(p, "/teams", "a team member needs at least one team");
    for (i = 0; i < json_array_size(teams); i++)
        if (problems_has(p, problems_pointer_index(ptr, sizeof ptr, "/teams", i)))
            return;
    if (json_array_size(teams) == 0)
        return;
    json_t *missing = NULL;
    if (store_team_names_missing(r->app->store, teams, &missing) == STORE_OK) {
        json_array_foreach(missing, i, t)
        {
            size_t index = (size_t)json_integer_value(t);
            problems_add(p, problems_pointer_index(ptr, sizeof ptr, "/teams", index),
                         "no team named '%s'", json_string_value(json_array_get(teams, index)));
        }
    }
    /* On a store error the insert below still refuses unknown teams, as one 422. */
    json_decref(missing);
}

static json_t *user_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *out = NULL;
    char hash[PASSWORD_HASH_BYTES] = "";
    if (!json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object");
        goto out;
    }
    evfield_check(r->body, USER_FIELDS, "", 0, NULL, p);
    const char *username = evfield_valid_string(r->body, "username", p);
    const char *password = evfield_valid_string(r->body, "password", p);
    const char *rule = password ? password_rule_broken(password, strlen(password), username) : NULL;
    if (rule)
        problems_add(p, "/password", "%s", rule);
    const char *role = evfield_valid_string(r->body, "role", p);
    json_t *teams = json_object_get(r->body, "teams");
    if (json_is_null(teams))
        teams = NULL;
    check_teams(r, teams, role, p);
    if (p->total)
        goto out;
    if (hashgate_enter(HASHGATE_WAIT_MS) != 0) {
        hashgate_reply_busy(r);
        goto out;
    }
    int hashed = password_hash(password, strlen(password), hash);
    hashgate_leave();
    if (hashed != 0) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_user_create(r->app->store, req_actor(r, &who), username, role, hash, teams, &out);
    if (st == STORE_CONFLICT) {
        resp_problem(r, 409, "conflict", "Conflict", "a user named '%s' already exists", username);
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "user");
        goto out;
    }
    made = out;
    out = NULL;
out:
    sodium_memzero(hash, sizeof hash);
    json_decref(out);
    return made;
}

static void user_create(struct req *r)
{
    resp_create(r, user_create_make);
}

static void user_list(struct req *r)
{
    page_list(r, PAGE_TEXT, store_user_list, "users", "username");
}

/* POST /users/{name}/disable: the account closed at once (core of store_user_disable): its
 * sessions end and its tokens and signing keys are revoked, the keys as key events of the log.
 * This instance forgets its cached tokens now; every other one within CAPLEDGER_TOKEN_CACHE_MS.
 * An admin may not close their own account (the command line can). */
static void user_disable(struct req *r)
{
    if (strcmp(r->params[0], r->who.username) == 0) {
        resp_problem(r, 409, "conflict", "Conflict",
                     "you cannot disable your own account (another admin, or `capledger user "
                     "disable`, can)");
        return;
    }
    json_t *out = NULL;
    struct audit_actor who;
    enum store_status st = store_user_disable(r->app->store, req_actor(r, &who), r->params[0],
                                              r->app->cfg->server_sk, &out);
    if (st == STORE_OK)
        token_cache_flush(r->app->tokens);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 404, "not-found", "Not found", "no user named '%s'", r->params[0]);
        return;
    }
    resp_stored(r, st, out, "user");
}

static void user_enable(struct req *r)
{
    json_t *out = NULL;
    struct audit_actor who;
    enum store_status st = store_user_enable(r->app->store, req_actor(r, &who), r->params[0], &out);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 404, "not-found", "Not found", "no user named '%s'", r->params[0]);
        return;
    }
    resp_stored(r, st, out, "user");
}

static const struct evfield PASSWORD_FIELDS[] = {
    {"password", EVF_TEXT, EVF_REQUIRED | EVF_SECRET, 0, 0, PASSWORD_MAX_BYTES, NULL, NULL},
    EVF_END,
};

/* POST /users/{name}/password {password}: a new password, under the rules of POST /users; the
 * user's sessions end (API tokens stay: revoke them, or disable the user, when they may have
 * leaked too). */
static void user_password(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    char hash[PASSWORD_HASH_BYTES] = "";
    if (!json_is_object(r->body))
        problems_add(&p, "", "must be a JSON object");
    else
        evfield_check(r->body, PASSWORD_FIELDS, "", 0, NULL, &p);
    const char *password = evfield_valid_string(r->body, "password", &p);
    const char *rule =
        password ? password_rule_broken(password, strlen(password), r->params[0]) : NULL;
    if (rule)
        problems_add(&p, "/password", "%s", rule);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    if (hashgate_enter(HASHGATE_WAIT_MS) != 0) {
        hashgate_reply_busy(r);
        goto out;
    }
    int hashed = password_hash(password, strlen(password), hash);
    hashgate_leave();
    if (hashed != 0) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_user_password_set(r->app->store, req_actor(r, &who), r->params[0], hash, &out);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 404, "not-found", "Not found", "no user named '%s'", r->params[0]);
        goto out;
    }
    resp_stored(r, st, out, "user");
    out = NULL;
out:
    sodium_memzero(hash, sizeof hash);
    json_decref(out);
    problems_free(&p);
}

/* POST /tokens {label, user}: user defaults to the caller; only admins name someone else. */
static json_t *token_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *out = NULL;
    char token[TOKEN_TEXT_LEN + 1] = "", hash[65] = "";
    if (r->body && !json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object");
        goto out;
    }
    const char *label = NULL, *user = NULL;
    int expires_in_days = 0;
    if (r->body) {
        evfield_check(r->body, TOKEN_FIELDS, "", 0, NULL, p);
        label = evfield_valid_string(r->body, "label", p);
        user = evfield_valid_string(r->body, "user", p);
        expires_in_days = (int)json_integer_value(json_object_get(r->body, "expires_in_days"));
    }
    if (p->total)
        goto out;
    if (!user || !*user)
        user = r->who.username;
    if (r->who.role != ROLE_ADMIN && strcmp(user, r->who.username) != 0) {
        resp_problem(r, 403, "forbidden", "Forbidden", "only admins create tokens for other users");
        goto out;
    }
    secret_token_new(token);
    secret_sha256_hex(token, strlen(token), hash);
    struct audit_actor who;
    enum store_status st = store_token_create(r->app->store, req_actor(r, &who), user, label, hash,
                                              expires_in_days, &out);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, "/user", "no such user (or the user is disabled)");
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "token");
        goto out;
    }
    json_object_set_new(out, "token", json_string(token));
    made = out;
    out = NULL;
out:
    sodium_memzero(token, sizeof token);
    sodium_memzero(hash, sizeof hash);
    json_decref(out);
    return made;
}

static void token_create(struct req *r)
{
    resp_create(r, token_create_make);
}

static void token_list(struct req *r)
{
    struct page pg;
    if (page_begin(r, &pg, PAGE_UUID, NULL) != 0)
        return;
    const char *owner = r->who.role == ROLE_ADMIN ? NULL : r->who.user_id;
    json_t *items = NULL;
    enum store_status st = store_token_list(r->app->store, owner, pg.after, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "id", "tokens");
}

/* Revoking another user's token answers 404, as if it did not exist (unless admin). */
static void token_revoke(struct req *r)
{
    const char *owner = r->who.role == ROLE_ADMIN ? NULL : r->who.user_id;
    enum store_status st = STORE_NOT_FOUND;
    struct audit_actor who;
    if (uuid_valid(r->params[0]))
        st = store_token_revoke(r->app->store, req_actor(r, &who), r->params[0], owner);
    if (st == STORE_OK)
        token_cache_flush(r->app->tokens); /* other instances: within CAPLEDGER_TOKEN_CACHE_MS */
    if (st != STORE_OK) {
        resp_store_error(r, st, "token");
        return;
    }
    resp_bytes(r, 204, NULL, NULL, 0, NULL);
}

/* The audit trail, newest first: auditors and admins. The cursor is an event id (a
 * bigserial) that the page ends before. */
static void audit_list(struct req *r)
{
    page_list(r, PAGE_SERIAL, store_audit_list, "audit events", "id");
}

const struct route user_routes[] = {
    {"GET", "/api/v1/users", user_list, ROLE_ADMIN, 0, "limit cursor", NULL},
    {"POST", "/api/v1/users", user_create, ROLE_ADMIN, ROUTE_JSON_BODY, NULL, NULL},
    {"POST", "/api/v1/users/{name}/disable", user_disable, ROLE_ADMIN, 0, NULL, NULL},
    {"POST", "/api/v1/users/{name}/enable", user_enable, ROLE_ADMIN, 0, NULL, NULL},
    {"POST", "/api/v1/users/{name}/password", user_password, ROLE_ADMIN, ROUTE_JSON_BODY, NULL,
     NULL},
    {"GET", "/api/v1/tokens", token_list, ROLES_USERS, 0, "limit cursor", NULL},
    {"POST", "/api/v1/tokens", token_create, ROLES_USERS, ROUTE_JSON_BODY | ROUTE_OPTIONAL_BODY,
     NULL, NULL},
    {"DELETE", "/api/v1/tokens/{id}", token_revoke, ROLES_USERS, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};

const struct route audit_routes[] = {
    {"GET", "/api/v1/audit/events", audit_list, ROLE_AUDITOR | ROLE_ADMIN, 0, "limit cursor", NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
