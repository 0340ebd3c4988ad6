/* Workloads: the characterisation of a workload (seed: "Characterize the workload").
 * GET/POST /workloads, GET/PATCH /workloads/{id}. Team members read and write their teams'
 * workloads; owners write any team's; auditors and admins read all. PATCH is a JSON merge
 * patch (RFC 7396) guarded by If-Match: the merged document is validated whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/formats/evfield.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "http/reads.h"
#include "store/changes.h"
#include "store/workloads.h"

static const char *const KINDS[] = {"training", "fine_tuning", "evaluation", "inference", NULL};
static const char *const CLASSES[] = {"exploratory", "production", NULL};
static const char *const PRECISIONS[] = {"fp64", "fp32", "tf32", "bf16",  "fp16",
                                         "fp8",  "int8", "int4", "mixed", NULL};
static const char *const BATCH_BEHAVIOURS[] = {"fixed", "dynamic", "continuous", NULL};
static const char *const DISTRIBUTED_PATTERNS[] = {
    "single_gpu", "data_parallel", "fsdp", "tensor_parallel", "pipeline_parallel", "hybrid", NULL};
static const char *const DIRECTIONS[] = {"at_most", "at_least", NULL};

static const struct evfield TARGET_QUALITY[] = {
    {"metric", EVF_STRING, EVF_REQUIRED, 0, 0, 100, NULL, NULL},
    {"target", EVF_NUMBER, EVF_REQUIRED, -1e300, 1e300, 0, NULL, NULL},
    {"direction", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, DIRECTIONS, NULL},
    EVF_END,
};

/* How the workload's runs are recognised in job accounting: any of these, on runs of its team. */
static const struct evfield RUNS_MATCH[] = {
    {"wckey", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"comment", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"job_name", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"workload", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    EVF_END,
};

#define POS(name)                                                                                  \
    {                                                                                              \
        name, EVF_NUMBER, EVF_MIN_EXCLUSIVE, 0, EVF_NO_MAX, 0, NULL, NULL                          \
    }
#define NONNEG(name)                                                                               \
    {                                                                                              \
        name, EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL                                          \
    }
#define POS_INT(name)                                                                              \
    {                                                                                              \
        name, EVF_INTEGER, 0, 1, 2147483647, 0, NULL, NULL                                         \
    }
#define TEXT(name, max)                                                                            \
    {                                                                                              \
        name, EVF_STRING, 0, 0, 0, max, NULL, NULL                                                 \
    }

/* The client fields are WORKLOAD_CLIENT_COLUMNS of store/workloads.c, in its order
 * (tests/integration/field_tables.test.mjs ties them). */
static const struct evfield WORKLOAD_FIELDS[] = {
    {"team", EVF_STRING, EVF_REQUIRED, 0, 0, 64, NULL, NULL},
    {"name", EVF_STRING, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    {"kind", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, KINDS, NULL},
    {"class", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, CLASSES, NULL},
    TEXT("description", 4000),
    POS("model_parameters"),
    {"precision", EVF_ENUM, 0, 0, 0, 0, PRECISIONS, NULL},
    POS("memory_required_gb"),
    POS_INT("sequence_length"),
    POS_INT("image_width_px"),
    POS_INT("image_height_px"),
    POS_INT("global_batch_size"),
    {"batch_behaviour", EVF_ENUM, 0, 0, 0, 0, BATCH_BEHAVIOURS, NULL},
    NONNEG("dataset_gb"),
    TEXT("dataset_location", 500),
    TEXT("storage", 200),
    TEXT("network", 200),
    POS("expected_run_duration_s"),
    NONNEG("checkpoint_gb"),
    POS("checkpoint_interval_s"),
    POS_INT("checkpoints_kept"),
    {"distributed_pattern", EVF_ENUM, 0, 0, 0, 0, DISTRIBUTED_PATTERNS, NULL},
    NONNEG("communication_gb_per_step"),
    POS("target_units"),
    {"unit", EVF_NAME, 0, 0, 0, 0, NULL, NULL},
    {"target_quality", EVF_OBJECT, 0, 0, 0, 0, NULL, TARGET_QUALITY},
    POS("input_tokens_per_request"),
    POS("output_tokens_per_request"),
    {"runs_match", EVF_OBJECT, 0, 0, 0, 0, NULL, RUNS_MATCH},
    EVF_SERVER_FIELD("id"),
    EVF_SERVER_FIELD("version"),
    EVF_SERVER_FIELD("created_by"),
    EVF_SERVER_FIELD("created_at"),
    EVF_SERVER_FIELD("updated_at"),
    EVF_END,
};

/* Checks that go beyond one field; p gets each fault. */
static void workload_check(const json_t *doc, struct problems *p)
{
    evfield_check(doc, WORKLOAD_FIELDS, "", 0, NULL, p);
    const char *team = json_string_value(json_object_get(doc, "team"));
    if (team && !team_name_valid(team))
        problems_add(p, "/team", "is not a team name");
}

static void reply_store_fault(struct req *r, enum store_status st, const json_t *doc)
{
    if (st == STORE_CONFLICT)
        resp_problem(r, 409, "conflict", "Conflict", "team '%s' already has a workload named '%s'",
                     json_string_value(json_object_get(doc, "team")),
                     json_string_value(json_object_get(doc, "name")));
    else if (st == STORE_INVALID) {
        struct problems p;
        problems_init(&p);
        problems_add(&p, "/team", "no team named '%s' exists",
                     json_string_value(json_object_get(doc, "team")));
        resp_invalid(r, &p, NULL);
        problems_free(&p);
    } else
        resp_store_error(r, st, "workload");
}

/* POST /workloads (idem_create): the new workload, or NULL having answered or filled p. */
static json_t *workload_create_make(struct req *r, struct problems *p)
{
    workload_check(r->body, p);
    if (p->total)
        return NULL;
    const char *team = json_string_value(json_object_get(r->body, "team"));
    if (!principal_can_write_team(&r->who, team)) {
        res_forbidden_team(r, team);
        return NULL;
    }
    struct audit_actor who;
    json_t *out = NULL;
    enum store_status st = store_workload_create(r->app->store, req_actor(r, &who), r->body, &out);
    if (st != STORE_OK) {
        json_decref(out);
        reply_store_fault(r, st, r->body);
        return NULL;
    }
    return out;
}

static void workload_create(struct req *r)
{
    idem_create(r, workload_create_make);
}

/* The workload if it exists and the caller may read it; else answers 404 and returns NULL. */
static json_t *readable_workload(struct req *r, const char *id)
{
    json_t *w = NULL;
    if (!uuid_valid(id)) {
        res_not_found(r, "workload");
        return NULL;
    }
    enum store_status st = store_workload_get(r->app->store, id, &w);
    if (st == STORE_NOT_FOUND ||
        (st == STORE_OK &&
         !principal_can_read_team(&r->who, json_string_value(json_object_get(w, "team"))))) {
        json_decref(w);
        res_not_found(r, "workload");
        return NULL;
    }
    return req_stored(r, st, w, "workload");
}

static void workload_get(struct req *r)
{
    if (!uuid_valid(r->params[0]))
        res_not_found(r, "workload");
    else
        resp_cached_row(r, ROW_WORKLOAD, r->params[0], store_workload_get, "workload");
}

static void workload_patch(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *current = NULL, *merged = NULL, *out = NULL, *base = NULL;
    if (etag_required(r, "workload") != 0)
        goto out;
    if (etag_patch_body(r, &p) != 0)
        goto out;
    current = readable_workload(r, r->params[0]);
    if (!current)
        goto out;
    const char *old_team = json_string_value(json_object_get(current, "team"));
    if (!principal_can_write_team(&r->who, old_team)) {
        res_forbidden_team(r, old_team);
        goto out;
    }
    if (etag_check(r, current, "workload") != 0)
        goto out;
    /* Server-set members in the patch are refused by name before merging. */
    base = evfield_project(current, WORKLOAD_FIELDS);
    merged = evfield_merge_patch(base, r->body);
    const char *key;
    json_t *value;
    json_object_foreach(r->body, key, value)
    {
        const struct evfield *f = evfield_find(WORKLOAD_FIELDS, key);
        char ptr[300];
        if (f && (f->flags & EVF_SERVER))
            problems_add(&p, problems_pointer(ptr, sizeof ptr, "", key),
                         "is set by the server and may not be changed");
    }
    json_t *clean = evfield_project(merged, WORKLOAD_FIELDS);
    json_object_foreach(merged, key, value)
    {
        if (!evfield_find(WORKLOAD_FIELDS, key)) {
            char ptr[300];
            problems_add(&p, problems_pointer(ptr, sizeof ptr, "", key), "unknown field");
        }
    }
    if (!p.total)
        workload_check(clean, &p);
    if (p.total) {
        json_decref(clean);
        resp_invalid(r, &p, NULL);
        goto out;
    }
    const char *new_team = json_string_value(json_object_get(clean, "team"));
    if (strcmp(new_team, old_team) != 0 && !principal_can_write_team(&r->who, new_team)) {
        res_forbidden_team(r, new_team); /* before the decref: new_team lives in clean */
        json_decref(clean);
        goto out;
    }
    struct audit_actor who;
    enum store_status st = store_workload_update(r->app->store, req_actor(r, &who), r->params[0],
                                                 etag_row_version(current), clean, &out);
    if (st == STORE_NOT_FOUND)
        resp_problem(r, 412, "precondition-failed", "Precondition failed",
                     "the workload changed while this update ran; read it again");
    else if (st != STORE_OK)
        reply_store_fault(r, st, clean);
    json_decref(clean);
    if (st != STORE_OK)
        goto out;
    resp_versioned(r, 200, out);
    out = NULL;
out:
    json_decref(current);
    json_decref(base);
    json_decref(merged);
    json_decref(out);
    problems_free(&p);
}

static const struct res_list_kind WORKLOADS = {
    "workloads",
    store_workload_list,
    {RES_FILTER_TEAM,
     {"kind", RQ_ENUM, KINDS, RES_FIELD(kind)},
     {"class", RQ_ENUM, CLASSES, RES_FIELD(class_)},
     RES_FILTER_Q},
};

const struct route workload_routes[] = {
    {"GET", "/api/v1/workloads", res_list_route, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to team kind class q", &WORKLOADS},
    {"POST", "/api/v1/workloads", workload_create, ROLE_OWNER | ROLE_TEAM, ROUTE_JSON_BODY, NULL,
     NULL},
    {"GET", "/api/v1/workloads/{id}", workload_get, ROLES_USERS, ROUTE_ROW_CACHE | ROUTE_STANDBY,
     NULL, NULL},
    {"PATCH", "/api/v1/workloads/{id}", workload_patch, ROLE_OWNER | ROLE_TEAM, ROUTE_JSON_BODY,
     NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
