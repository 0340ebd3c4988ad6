/* Teams: POST by admins, list and read by any signed-in user. */
#include "core/formats/evfield.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "http/page.h"
#include "store/teams.h"

static const struct evfield TEAM_FIELDS[] = {
    {"name", EVF_HANDLE, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    EVF_END,
};

static json_t *team_create_make(struct req *r, struct problems *p)
{
    if (!json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object");
        return NULL;
    }
    evfield_check(r->body, TEAM_FIELDS, "", 0, NULL, p);
    const char *name = evfield_valid_string(r->body, "name", p);
    if (p->total)
        return NULL;
    json_t *made = NULL;
    struct audit_actor who;
    enum store_status st = store_team_create(r->app->store, req_actor(r, &who), name, &made);
    if (st == STORE_OK)
        return made;
    json_decref(made);
    if (st == STORE_CONFLICT)
        resp_problem(r, 409, "conflict", "Conflict", "a team named '%s' already exists", name);
    else
        resp_store_error(r, st, "team");
    return NULL;
}

static void team_create(struct req *r)
{
    idem_create(r, team_create_make);
}

static void team_list(struct req *r)
{
    page_list(r, PAGE_TEXT, store_team_list, "teams", "name");
}

static void team_get(struct req *r)
{
    json_t *team = NULL;
    enum store_status st = store_team_get(r->app->store, r->params[0], &team);
    resp_stored(r, st, team, "team");
}

const struct route team_routes[] = {
    {"GET", "/api/v1/teams", team_list, ROLES_USERS, ROUTE_STANDBY, "limit cursor", NULL},
    {"POST", "/api/v1/teams", team_create, ROLE_ADMIN, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/teams/{id}", team_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
