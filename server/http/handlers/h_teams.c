/* Teams: POST by admins, list and read by any signed-in user. */
#include "core/formats/evfield.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "http/page.h"
#include "store/teams.h"

static const struct evfield TEAM_FIELDS[] = {
    {"name", EVF_HANDLE, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

static void team_create(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    struct idem idem;
    if (idem_begin(r, &idem) == IDEM_ANSWERED)
        goto out;
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "must be a JSON object");
        goto invalid;
    }
    evfield_check(r->body, TEAM_FIELDS, "", 0, NULL, &p);
    const char *name = evfield_valid_string(r->body, "name", &p);
    if (p.total)
        goto invalid;
    struct audit_actor who;
    enum store_status st = store_team_create(r->app->store, req_actor(r, &who), name, &out);
    if (st == STORE_CONFLICT) {
        resp_problem(r, 409, "conflict", "Conflict", "a team named '%s' already exists", name);
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "team");
        goto out;
    }
    idem_reply(r, &idem, 201, out);
    out = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, NULL);
out:
    idem_end(r, &idem);
    json_decref(out);
    problems_free(&p);
}

static void team_list(struct req *r)
{
    page_list(r, PAGE_TEXT, store_team_list, "teams", "name");
}

static void team_get(struct req *r)
{
    json_t *team = NULL;
    enum store_status st = store_team_get(r->app->store, r->params[0], &team);
    if (st != STORE_OK) {
        resp_store_error(r, st, "team");
        return;
    }
    resp_json(r, 200, team);
}

const struct route team_routes[] = {
    {"GET", "/api/v1/teams", team_list, ROLES_USERS, 0, "limit cursor"},
    {"POST", "/api/v1/teams", team_create, ROLE_ADMIN, ROUTE_JSON_BODY, NULL},
    {"GET", "/api/v1/teams/{id}", team_get, ROLES_USERS, 0, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
};
