/* Who is asking: an API token (Authorization: Bearer cl_…) or a browser session cookie. A
 * request without credentials is anonymous; a request with a bad token is refused with 401
 * rather than treated as anonymous, so a pipeline with a revoked token fails loudly. A token
 * takes precedence over a cookie sent with it.
 *
 * A cookie that names no live session (expired, logged out) makes the request anonymous: the
 * route's role check then answers 401 where a user is needed, and signing in still works.
 * Browsers send cookies on their own, so a cookie-authenticated unsafe request must also
 * prove it comes from our page: X-CSRF-Token (derived from the session id, see core/auth/session.h)
 * and an Origin (or Referer) naming this server's Host. Tokens are never sent on their own,
 * so token requests need neither. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/auth/secret.h"
#include "core/auth/session.h"
#include "core/auth/tokencache.h"
#include "http/internal.h"
#include "store/sessions.h"
#include "store/users.h"

#define SESSION_TOUCH_MAX_S 60.0 /* last use is written at most this often per session */

int auth_session_cookie(struct req *r, char *buf, size_t size)
{
    const char *header = req_header(r, "Cookie");
    if (!header || size < SESSION_ID_TEXT_LEN + 1)
        return 0;
    if (!session_cookie_find(header, SESSION_COOKIE_NAME, buf, size))
        return 0;
    if (!session_id_shape_ok(buf)) {
        sodium_memzero(buf, size);
        return 0;
    }
    return 1;
}

void principal_clear(struct principal *p)
{
    json_decref(p->teams);
    p->teams = NULL;
}

static unsigned role_bit_of(const char *role)
{
    if (!role)
        return 0;
    if (strcmp(role, "admin") == 0)
        return ROLE_ADMIN;
    if (strcmp(role, "owner") == 0)
        return ROLE_OWNER;
    if (strcmp(role, "team") == 0)
        return ROLE_TEAM;
    if (strcmp(role, "auditor") == 0)
        return ROLE_AUDITOR;
    return 0;
}

const char *auth_role_name(unsigned role)
{
    switch (role) {
    case ROLE_ADMIN:
        return "admin";
    case ROLE_OWNER:
        return "owner";
    case ROLE_TEAM:
        return "team";
    case ROLE_AUDITOR:
        return "auditor";
    default:
        return "anonymous";
    }
}

static int fill_principal(struct principal *who, json_t *row)
{
    unsigned role = role_bit_of(json_string_value(json_object_get(row, "role")));
    const char *uid = json_string_value(json_object_get(row, "user_id"));
    const char *name = json_string_value(json_object_get(row, "username"));
    if (!role || !uid || !name)
        return -1;
    who->role = role;
    snprintf(who->user_id, sizeof who->user_id, "%s", uid);
    snprintf(who->username, sizeof who->username, "%s", name);
    const char *tid = json_string_value(json_object_get(row, "token_id"));
    snprintf(who->token_id, sizeof who->token_id, "%s", tid ? tid : "");
    who->teams = json_incref(json_object_get(row, "teams"));
    json_t *age = json_object_get(row, "signed_in_s");
    who->signed_in_s = json_is_number(age) ? (long)json_number_value(age) : -1;
    return 0;
}

static int unauthorized(struct req *r, const char *detail)
{
    resp_problem(r, 401, "unauthenticated", "Authentication failed", "%s", detail);
    return -1;
}

static int forbidden(struct req *r, const char *detail)
{
    resp_problem(r, 403, "csrf", "Forbidden", "%s", detail);
    return -1;
}

static int is_unsafe(const char *method)
{
    return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
           strcmp(method, "OPTIONS") != 0;
}

int req_same_origin(struct req *r, const char *url)
{
    const char *pub = r->app->cfg->public_origin;
    if (!pub)
        return session_origin_matches(url, req_header(r, "Host"), r->ri->is_ssl ? "https" : "http");
    int tls = strncmp(pub, "https://", 8) == 0;
    char host[256];
    snprintf(host, sizeof host, "%s", pub + (tls ? 8 : 7));
    host[strcspn(host, "/")] = '\0';
    return session_origin_matches(url, host, tls ? "https" : "http");
}

/* Same-origin proof for cookie-authenticated unsafe requests (see the top of the file). */
static int csrf_check(struct req *r, const char *session_id)
{
    if (!session_csrf_ok(session_id, req_header(r, "X-CSRF-Token")))
        return forbidden(r, "send the X-CSRF-Token header from POST /api/v1/session or "
                            "GET /api/v1/me");
    const char *origin = req_header(r, "Origin");
    const char *from = origin ? origin : req_header(r, "Referer");
    if (!req_same_origin(r, from))
        return forbidden(r, "the request's Origin (or Referer) is not this server");
    return 0;
}

static int resolve_session(struct req *r, const char *session_id)
{
    char hash[65];
    secret_sha256_hex(session_id, strlen(session_id), hash);
    int idle = r->app->cfg->session_idle_s;
    double touch = idle / 4.0 < SESSION_TOUCH_MAX_S ? idle / 4.0 : SESSION_TOUCH_MAX_S;
    json_t *row = NULL;
    enum store_status st = store_session_resolve(r->app->store, hash, idle, touch, &row);
    int rc = 0;
    if (st == STORE_OK && fill_principal(&r->who, row) == 0) {
        r->who.via_cookie = 1;
        snprintf(r->who.session_id, sizeof r->who.session_id, "%s", hash);
        if (is_unsafe(r->method))
            rc = csrf_check(r, session_id);
    } else if (st != STORE_OK && st != STORE_NOT_FOUND) {
        resp_store_error(r, st, "session");
        rc = -1;
    }
    json_decref(row);
    sodium_memzero(hash, sizeof hash);
    return rc;
}

static int resolve_bearer(struct req *r, const char *authz);

int auth_resolve(struct req *r)
{
    const char *authz = req_header(r, "Authorization");
    if (authz)
        return resolve_bearer(r, authz);
    if (r->route && (r->route->flags & ROUTE_NO_SESSION))
        return 0;
    char sid[SESSION_ID_TEXT_LEN + 1];
    if (!auth_session_cookie(r, sid, sizeof sid))
        return 0;
    int rc = resolve_session(r, sid);
    sodium_memzero(sid, sizeof sid);
    return rc;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The token's row from the cache when fresh, else from PostgreSQL (and then cached until the
 * cache's time to live or the token's expiry, whichever comes first: core/auth/tokencache.h). */
static enum store_status token_resolve(struct app *app, const char *hash, json_t **row)
{
    int64_t now = monotonic_ms();
    char *cached = token_cache_get(app->tokens, hash, now);
    if (cached) {
        *row = json_loads(cached, 0, NULL);
        sodium_memzero(cached, strlen(cached));
        free(cached);
        if (*row)
            return STORE_OK;
    }
    enum store_status st = store_token_resolve(app->store, hash, row);
    if (st != STORE_OK)
        return st;
    json_t *left = json_object_get(*row, "expires_in_ms");
    int64_t expires = json_is_number(left) ? now + (int64_t)json_number_value(left) : -1;
    char *text = json_dumps(*row, JSON_COMPACT);
    if (text) {
        token_cache_put(app->tokens, hash, text, now, expires);
        sodium_memzero(text, strlen(text));
        free(text);
    }
    return STORE_OK;
}

static int resolve_bearer(struct req *r, const char *authz)
{
    if (strncasecmp(authz, "Bearer ", 7) != 0)
        return unauthorized(r, "use Authorization: Bearer <token>");
    const char *token = authz + 7;
    if (!secret_token_shape_ok(token))
        return unauthorized(r, "the token is not valid");
    char hash[65];
    secret_sha256_hex(token, strlen(token), hash);
    json_t *row = NULL;
    enum store_status st = token_resolve(r->app, hash, &row);
    int rc = 0;
    if (st == STORE_NOT_FOUND)
        rc = unauthorized(r, "the token is not valid");
    else if (st != STORE_OK) {
        resp_store_error(r, st, "token");
        rc = -1;
    } else if (fill_principal(&r->who, row) != 0) {
        rc = unauthorized(r, "the token's user has no valid role");
    }
    json_decref(row);
    sodium_memzero(hash, sizeof hash);
    return rc;
}

static int is_member(const struct principal *p, const char *team)
{
    size_t i;
    json_t *t;
    if (!team)
        return 0;
    json_array_foreach(p->teams, i, t)
    {
        if (json_is_string(t) && strcmp(json_string_value(t), team) == 0)
            return 1;
    }
    return 0;
}

int principal_can_read_team(const struct principal *p, const char *team)
{
    if (p->role & (ROLE_OWNER | ROLE_AUDITOR | ROLE_ADMIN))
        return 1;
    return p->role == ROLE_TEAM && is_member(p, team);
}

int principal_can_write_team(const struct principal *p, const char *team)
{
    if (p->role == ROLE_OWNER)
        return 1;
    return p->role == ROLE_TEAM && is_member(p, team);
}

void principal_scope(const struct principal *p, struct team_scope *out)
{
    team_scope_init(out, p->role != ROLE_TEAM, p->teams);
}
