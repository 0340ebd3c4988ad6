/* Upload records: GET /uploads and GET /uploads/{id}. Every upload (job accounting,
 * telemetry, price sheet, load-test import) answers with the id of its record, which decision
 * records cite as evidence; these routes let anyone who may read the data check what an id
 * stands for: who sent what (size, SHA-256, parameters) and what came of it. Visible to the
 * uploader and to whoever may read the upload's team (team-less uploads: owners, auditors,
 * admins). */
#include <string.h>

#include "core/validate.h"
#include "http/resource.h"
#include "store/uploads.h"

static const char *const KINDS[] = {"runs", "telemetry", "offers", "benchmark_import", NULL};

static int may_read(struct req *r, const json_t *u)
{
    const char *team = json_string_value(json_object_get(u, "team"));
    const char *by = json_string_value(json_object_get(u, "created_by"));
    if (by && r->who.user_id[0] && strcmp(by, r->who.user_id) == 0)
        return 1;
    if (!team)
        return r->who.role != ROLE_TEAM;
    return principal_can_read_team(&r->who, team);
}

static void upload_get(struct req *r)
{
    json_t *u = NULL;
    enum store_status st = STORE_NOT_FOUND;
    if (uuid_valid(r->params[0]))
        st = store_upload_get(r->app->store, r->params[0], &u);
    if (st == STORE_OK && !may_read(r, u))
        st = STORE_NOT_FOUND;
    resp_stored(r, st, u, "upload");
}

static const struct res_list_kind UPLOADS = {
    "uploads",
    store_upload_list,
    {RES_FILTER_TEAM, {"kind", RQ_ENUM, KINDS, RES_FIELD(kind)}},
};

const struct route upload_routes[] = {
    {"GET", "/api/v1/uploads", res_list_route, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to team kind", &UPLOADS},
    {"GET", "/api/v1/uploads/{id}", upload_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
