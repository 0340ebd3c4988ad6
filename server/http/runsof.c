/* The workload a runs list or report narrows to: see runsof.h. */
#include "http/runsof.h"

#include "core/validate.h"
#include "http/internal.h"
#include "store/workloads.h"

json_t *runsof_workload(struct req *r, const char *id, const char *ptr, struct problems *p,
                        int *unavailable)
{
    *unavailable = 0;
    json_t *w = NULL;
    enum store_status st =
        uuid_valid(id) ? store_workload_get(r->app->store, id, &w) : STORE_NOT_FOUND;
    if (st != STORE_OK && st != STORE_NOT_FOUND) {
        *unavailable = 1;
        return NULL;
    }
    const char *team = json_string_value(json_object_get(w, "team"));
    if (st == STORE_NOT_FOUND || !team || !principal_can_read_team(&r->who, team)) {
        problems_add(p, ptr, "no workload with this id");
        json_decref(w);
        return NULL;
    }
    json_t *match = json_object_get(w, "runs_match");
    if (!json_is_object(match) || json_object_size(match) == 0) {
        problems_add(p, ptr,
                     "workload '%s' names no runs_match (how its runs are recognised: wckey, "
                     "comment, job_name or workload): set it with PATCH /api/v1/workloads/%s",
                     json_string_value(json_object_get(w, "name")), id);
        json_decref(w);
        return NULL;
    }
    json_t *out = json_pack("{s:s, s:O}", "team", team, "match", match);
    json_decref(w);
    return out;
}
