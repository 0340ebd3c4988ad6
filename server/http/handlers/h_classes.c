/* Workload class labels: GET /workload-classes (everyone signed in: the mapping, and the labels
 * runs carry that no mapping names, with run counts of the caller's teams) and PUT
 * /workload-classes/{label} (owners: map a label to the tier exploratory or production). */
#include <string.h>

#include "core/formats/evfield.h"
#include "core/validate.h"
#include "http/internal.h"
#include "store/classes.h"

static const char *const TIERS[] = {"exploratory", "production", NULL};

static const struct evfield CLASS_FIELDS[] = {
    {"tier", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, TIERS, NULL},
    EVF_END,
};

static void classes_list(struct req *r)
{
    json_t *out = NULL;
    enum store_status st = store_classes_list(r->app->store, &r->scope, &out);
    resp_stored(r, st, out, "workload classes");
}

static void class_put(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    const char *label = r->params[0];
    const char *fault = class_label_fault(label, strlen(label));
    if (fault)
        problems_add(&p, "", "the label in the path %s", fault);
    if (!json_is_object(r->body))
        problems_add(&p, "",
                     "a mapping is a JSON object {\"tier\": \"exploratory\"|\"production\"}");
    else
        evfield_check(r->body, CLASS_FIELDS, "", 0, NULL, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_class_put(r->app->store, req_actor(r, &who), label,
                        json_string_value(json_object_get(r->body, "tier")), &out);
    if (st == STORE_CONFLICT) {
        problems_add(&p, "/tier", "'%s' is a built-in label and is its own tier", label);
        resp_invalid(r, &p, NULL);
        goto out;
    }
    resp_stored(r, st, out, "workload class");
    out = NULL;
out:
    json_decref(out);
    problems_free(&p);
}

const struct route class_routes[] = {
    {"GET", "/api/v1/workload-classes", classes_list, ROLES_USERS, 0, NULL, NULL},
    {"PUT", "/api/v1/workload-classes/{label}", class_put, ROLE_OWNER, ROUTE_JSON_BODY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
