/* Users (admins), API tokens (everyone for themselves, admins for anyone) and the audit trail
 * (auditors and admins). A token is shown once, in the reply that creates it; only its SHA-256
 * is stored. */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "core/auth/password.h"
#include "core/auth/secret.h"
#include "core/auth/tokencache.h"
#include "core/validate.h"
#include "http/hashgate.h"
#include "http/internal.h"
#include "store/users.h"

#define TOKEN_LABEL_MAX_BYTES 200

/* Checks "teams" (optional array of team names) and names each unknown team by index. */
static void check_teams(struct req *r, const json_t *teams, const char *role, struct problems *p)
{
    char ptr[64];
    size_t i;
    json_t *t;
    if (teams && !json_is_array(teams)) {
        problems_add(p, "/teams", "must be an array of team names");
        return;
    }
    if (teams && json_array_size(teams) > 1000) {
        problems_add(p, "/teams", "must name at most 1000 teams");
        return;
    }
    if (role && strcmp(role, "team") == 0 && json_array_size(teams) == 0)
        problems_add(p, "/teams", "a team member needs at least one team");
    int all_names = 1;
    json_array_foreach(teams, i, t)
    {
        if (!json_is_string(t) || !team_name_valid(json_string_value(t))) {
            problems_add(p, problems_pointer_index(ptr, sizeof ptr, "/teams", i),
                         "must be a team name");
            all_names = 0;
        }
    }
    if (!all_names || json_array_size(teams) == 0)
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

static void user_create(struct req *r)
{
    static const char *const allowed[] = {"username", "password", "role", "teams", NULL};
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    char hash[PASSWORD_HASH_BYTES] = "";
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    json_check_unknown(r->body, "", allowed, &p);
    const char *username = json_want_string(r->body, "username", "", 1, 64, &p);
    if (username && !team_name_valid(username))
        problems_add(&p, "/username",
                     "use 1-64 letters, digits, '.', '_' or '-', starting with "
                     "a letter or digit");
    const char *password = json_want_string(r->body, "password", "", 1, PASSWORD_MAX_BYTES, &p);
    const char *rule = password ? password_rule_broken(password, strlen(password), username) : NULL;
    if (rule)
        problems_add(&p, "/password", "%s", rule);
    const char *role = json_want_string(r->body, "role", "", 1, 16, &p);
    if (role && !user_role_valid(role))
        problems_add(&p, "/role", "must be one of admin, owner, team, auditor");
    json_t *teams = json_object_get(r->body, "teams");
    if (json_is_null(teams))
        teams = NULL;
    check_teams(r, teams, role, &p);
    if (p.total)
        goto invalid;
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
    resp_json(r, 201, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    sodium_memzero(hash, sizeof hash);
    json_decref(out);
    problems_free(&p);
}

/* Reads ?limit= and ?cursor=; a cursor whose key fails key_ok (NULL: any key) is not one we
 * issued. Returns the limit, or -1 after answering 422. */
static int page_args(struct req *r, char *buf, size_t size, const char **after,
                     int (*key_ok)(const char *))
{
    int limit = req_limit(r);
    if (limit < 0 || req_cursor(r, buf, size, after) != 0)
        return -1;
    if (*after && key_ok && !key_ok(*after)) {
        struct problems p;
        problems_init(&p);
        problems_add(&p, "", "query parameter cursor is not a cursor this server issued");
        resp_invalid(r, &p, NULL);
        problems_free(&p);
        return -1;
    }
    return limit;
}

static void user_list(struct req *r)
{
    char after_buf[256];
    const char *after = NULL;
    int limit = page_args(r, after_buf, sizeof after_buf, &after, NULL);
    if (limit < 0)
        return;
    json_t *items = NULL;
    enum store_status st = store_user_list(r->app->store, after, limit + 1, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "users");
        return;
    }
    resp_page(r, items, limit, "username");
}

/* POST /tokens {label, user}: user defaults to the caller; only admins name someone else. */
static void token_create(struct req *r)
{
    static const char *const allowed[] = {"label", "user", "expires_in_days", NULL};
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    char token[TOKEN_TEXT_LEN + 1] = "", hash[65] = "";
    if (r->body && !json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    const char *label = NULL, *user = NULL;
    int expires_in_days = 0;
    if (r->body) {
        json_check_unknown(r->body, "", allowed, &p);
        label = json_want_string(r->body, "label", "", 0, TOKEN_LABEL_MAX_BYTES, &p);
        user = json_want_string(r->body, "user", "", 0, 64, &p);
        json_t *days = json_object_get(r->body, "expires_in_days");
        if (days && !json_is_null(days)) {
            if (!json_is_integer(days) || json_integer_value(days) < 1 ||
                json_integer_value(days) > TOKEN_MAX_DAYS)
                problems_add(&p, "/expires_in_days", "must be a whole number of days from 1 to %d",
                             TOKEN_MAX_DAYS);
            else
                expires_in_days = (int)json_integer_value(days);
        }
    }
    if (p.total)
        goto invalid;
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
        problems_add(&p, "/user", "no such user (or the user is disabled)");
        goto invalid;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "token");
        goto out;
    }
    json_object_set_new(out, "token", json_string(token));
    resp_json(r, 201, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    sodium_memzero(token, sizeof token);
    sodium_memzero(hash, sizeof hash);
    json_decref(out);
    problems_free(&p);
}

static void token_list(struct req *r)
{
    char after_buf[256];
    const char *after = NULL;
    int limit = page_args(r, after_buf, sizeof after_buf, &after, uuid_valid);
    if (limit < 0)
        return;
    const char *owner = r->who.role == ROLE_ADMIN ? NULL : r->who.user_id;
    json_t *items = NULL;
    enum store_status st = store_token_list(r->app->store, owner, after, limit + 1, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "tokens");
        return;
    }
    resp_page(r, items, limit, "id");
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

/* An audit event id: a bigserial. */
static int event_id_valid(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 18 && strspn(s, "0123456789") == n;
}

/* The audit trail, newest first: auditors and admins. */
static void audit_list(struct req *r)
{
    char before_buf[64];
    const char *before = NULL;
    int limit = page_args(r, before_buf, sizeof before_buf, &before, event_id_valid);
    if (limit < 0)
        return;
    json_t *items = NULL;
    enum store_status st = store_audit_list(r->app->store, before, limit + 1, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "audit events");
        return;
    }
    resp_page(r, items, limit, "id");
}

const struct route user_routes[] = {
    {"GET", "/api/v1/users", user_list, ROLE_ADMIN, 0, "limit cursor"},
    {"POST", "/api/v1/users", user_create, ROLE_ADMIN, ROUTE_JSON_BODY, NULL},
    {"GET", "/api/v1/tokens", token_list, ROLES_USERS, 0, "limit cursor"},
    {"POST", "/api/v1/tokens", token_create, ROLES_USERS, ROUTE_JSON_BODY | ROUTE_OPTIONAL_BODY,
     NULL},
    {"DELETE", "/api/v1/tokens/{id}", token_revoke, ROLES_USERS, 0, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
};

const struct route audit_routes[] = {
    {"GET", "/api/v1/audit/events", audit_list, ROLE_AUDITOR | ROLE_ADMIN, 0, "limit cursor"},
    {NULL, NULL, NULL, 0, 0, NULL},
};
