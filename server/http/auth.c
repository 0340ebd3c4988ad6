/* Who is asking: an API token (Authorization: Bearer cl_…). A request without credentials is
 * anonymous; a request with bad credentials is refused with 401 rather than treated as
 * anonymous, so a pipeline with a revoked token fails loudly. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/secret.h"
#include "http/internal.h"
#include "store/users.h"

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
    return 0;
}

static int unauthorized(struct req *r, const char *detail)
{
    resp_problem(r, 401, "unauthenticated", "Authentication failed", "%s", detail);
    return -1;
}

int auth_resolve(struct req *r)
{
    const char *authz = req_header(r, "Authorization");
    if (!authz)
        return 0;
    if (strncasecmp(authz, "Bearer ", 7) != 0)
        return unauthorized(r, "use Authorization: Bearer <token>");
    const char *token = authz + 7;
    if (!secret_token_shape_ok(token))
        return unauthorized(r, "the token is not valid");
    char hash[65];
    secret_sha256_hex(token, strlen(token), hash);
    json_t *row = NULL;
    enum store_status st = store_token_resolve(r->app->store, hash, &row);
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
    json_array_foreach(p->teams, i, t) {
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

char *principal_team_filter(const struct principal *p)
{
    if (p->role != ROLE_TEAM)
        return strdup("null");
    return json_dumps(p->teams ? p->teams : json_array(), JSON_COMPACT);
}
