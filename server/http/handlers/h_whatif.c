/* What-if replays over HTTP (docs/whatif.md): POST /whatif replays a selection of the team's
 * stored runs under candidate arrangements and stores the result, named by the SHA-256 of its
 * RFC 8785 bytes like a comparison; GET /whatif/{sha256} reads it back and
 * GET /whatif/{sha256}/input gives the resolved document (every job inline) that
 * `capledger whatif` replays offline to the same figures.
 *
 * Resolution before anything is replayed: `jobs` is a selection {team, cluster, partition,
 * workload_class, from, to}; an offer may be a stored offer's id; `pool_gpus: "cluster"` is the
 * capacity the selection's cluster records. The runs are streamed from PostgreSQL one row at a
 * time into the replay's own compact arrays (no JSON tree per job), inside a slot of the
 * engine's budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "core/formats/timefmt.h"
#include "core/jcs.h"
#include "core/validate.h"
#include "core/whatif/whatif.h"
#include "http/engine.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "store/compute.h"
#include "store/whatif.h"

static const struct evfield SELECTION_FIELDS[] = {
    {"team", EVF_HANDLE, EVF_REQUIRED | EVF_MSG_ALL, 0, 0, 0,
     EVF_WORDS("is required: the team whose runs are replayed"), NULL},
    {"cluster", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"partition", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"workload_class", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"from", EVF_TIME, 0, 0, 0, 0, NULL, NULL},
    {"to", EVF_TIME, 0, 0, 0, 0, NULL, NULL},
    EVF_END,
};

/* Epoch milliseconds of a valid EVF_TIME value. */
static int64_t time_ms(const json_t *v)
{
    struct timefmt_fields t;
    int64_t ms = 0;
    const char *s = json_string_value(v);
    if (s && timefmt_parse(s, strlen(s), &t) && timefmt_resolve_ms(&t, NULL, NULL, &ms) == 0)
        return ms;
    return 0;
}

struct resolving {
    enum store_status failure;
    const json_t *selection;
};

/* A stored offer's id → the offer's fields; else the value stays for the plan's check. */
static void resolve_offer(struct req *r, json_t *holder, const char *key, const char *ptr,
                          struct resolving *res, struct problems *p)
{
    json_t *v = json_object_get(holder, key);
    if (!json_is_string(v))
        return;
    const char *id = json_string_value(v);
    char at[128];
    problems_pointer(at, sizeof at, ptr, key);
    if (!uuid_valid(id)) {
        problems_add(p, at, "must be an offer object or the id of a stored offer");
        return;
    }
    json_t *row = NULL;
    enum store_status st = store_offer_as_scenario(r->app->store, id, &row);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, at, "no offer with id %s", id);
    } else if (st != STORE_OK) {
        res->failure = st;
    } else {
        json_object_set(row, "id", v);
        json_object_set(holder, key, row);
    }
    json_decref(row);
}

/* `pool_gpus: "cluster"` → the GPUs the selection's cluster (and partition) records. */
static void resolve_capacity(struct req *r, json_t *arrangement, const char *ptr,
                             struct resolving *res, struct problems *p)
{
    json_t *v = json_object_get(arrangement, "pool_gpus");
    if (!json_is_string(v))
        return;
    char at[128];
    problems_pointer(at, sizeof at, ptr, "pool_gpus");
    const char *cluster = json_string_value(json_object_get(res->selection, "cluster"));
    const char *partition = json_string_value(json_object_get(res->selection, "partition"));
    if (strcmp(json_string_value(v), "cluster") != 0) {
        problems_add(p, at,
                     "must be a number ≥ 0, a sweep {from, to, step}, or \"cluster\" (the "
                     "capacity the selection's cluster records)");
        return;
    }
    if (!cluster) {
        problems_add(p, at, "\"cluster\" needs a cluster in the selection (/jobs/cluster)");
        return;
    }
    double gpus = 0;
    enum store_status st = store_cluster_capacity(r->app->store, cluster, partition, &gpus);
    if (st == STORE_NOT_FOUND)
        problems_add(p, at,
                     "cluster '%s'%s%s records no capacity_gpus (PUT /clusters/%s sets it per "
                     "partition)",
                     cluster, partition ? ", partition " : "", partition ? partition : "", cluster);
    else if (st != STORE_OK)
        res->failure = st;
    else
        json_object_set_new(arrangement, "pool_gpus", json_real(gpus));
}

/* The request body with its stored references resolved, `jobs` taken out and the selection
 * recorded as `selection`: the document the plan is read from and the resolved document is
 * written from (new reference). */
static json_t *resolve(struct req *r, struct resolving *res, struct problems *p)
{
    json_t *doc = json_deep_copy(r->body);
    if (!doc)
        return NULL;
    json_object_del(doc, "jobs");
    json_object_set(doc, "selection", (json_t *)res->selection);
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(doc, "arrangements"), i, a)
    {
        if (!json_is_object(a))
            continue;
        char ptr[64];
        problems_pointer_index(ptr, sizeof ptr, "/arrangements", i);
        resolve_offer(r, a, "pool_offer", ptr, res, p);
        json_t *ov = json_object_get(a, "overflow");
        if (json_is_object(ov)) {
            char sub[96];
            snprintf(sub, sizeof sub, "%s/overflow", ptr);
            resolve_offer(r, ov, "offer", sub, res, p);
        }
        resolve_capacity(r, a, ptr, res, p);
    }
    return doc;
}

struct reading {
    struct whatif_jobs jobs;
    struct problems *p;
    int oom;
};

/* One stored run, as store_whatif_jobs streams it. */
static int take_row(void *ctx, int ncols, const char *const *v)
{
    struct reading *rd = ctx;
    if (ncols < 6 || !v[0] || !v[1] || !v[3] || !v[4] || !v[5])
        return 1;
    char ptr[40];
    snprintf(ptr, sizeof ptr, "/jobs/%zu", rd->jobs.n);
    int rc = whatif_jobs_add(&rd->jobs, v[0], strlen(v[0]), strtoll(v[1], NULL, 10), v[2] != NULL,
                             v[2] ? strtoll(v[2], NULL, 10) : 0, true, strtoll(v[3], NULL, 10),
                             strtod(v[4], NULL), v[5], ptr, rd->p);
    if (rc == -2)
        rd->oom = 1;
    return rc != 0; /* a fault (beyond 2,000,000 jobs, say) stops the stream */
}

/* Not idem_create: 200 for a replay stored before (201 only when new), a 422 of its own words,
 * and the engine slot held across the work. */
static void whatif_create(struct req *r)
{
    struct idem idem;
    struct problems p;
    problems_init(&p);
    struct reading rd = {.p = &p};
    whatif_jobs_init(&rd.jobs);
    json_t *doc = NULL, *result = NULL, *stored = NULL;
    char *resolved = NULL, *result_bytes = NULL;
    struct whatif_plan *plan = NULL;
    int slot = 0;
    if (idem_begin(r, &idem) == IDEM_ANSWERED)
        goto out;
    if (!json_is_object(r->body)) {
        problems_add(&p, "",
                     "a replay is a JSON object {jobs, arrangements, wait_p90_max_s, "
                     "baseline}");
        goto invalid;
    }
    const json_t *sel = json_object_get(r->body, "jobs");
    if (!json_is_object(sel)) {
        problems_add(&p, "/jobs",
                     "is required: a selection of stored runs {team, cluster, partition, "
                     "workload_class, from, to} (inline jobs: capledger whatif FILE.json)");
        goto invalid;
    }
    evfield_check(sel, SELECTION_FIELDS, "/jobs", 0, NULL, &p);
    if (!p.total && json_object_get(sel, "from") && json_object_get(sel, "to") &&
        time_ms(json_object_get(sel, "from")) > time_ms(json_object_get(sel, "to")))
        problems_add(&p, "/jobs/from", "is after /jobs/to: the window is empty");
    if (p.total)
        goto invalid;
    const char *team = json_string_value(json_object_get(sel, "team"));
    if (!principal_can_write_team(&r->who, team)) {
        resp_problem(r, 403, "forbidden", "Forbidden", "you may not replay or store for team '%s'",
                     team);
        goto out;
    }
    struct resolving res = {.failure = STORE_OK, .selection = sel};
    doc = resolve(r, &res, &p);
    if (!doc) {
        resp_problem(r, 500, "internal", "Internal error", "out of memory");
        goto out;
    }
    if (res.failure != STORE_OK) {
        resp_store_error(r, res.failure, "referenced record");
        goto out;
    }
    plan = malloc(sizeof *plan);
    if (!plan) {
        resp_problem(r, 500, "internal", "Internal error", "out of memory");
        goto out;
    }
    if (whatif_plan_parse(doc, plan, &p) != 0 || p.total)
        goto invalid;
    if (engine_slot_enter(r) != 0)
        goto out;
    slot = 1;
    struct store_whatif_selection q = {
        .team = team,
        .cluster = json_string_value(json_object_get(sel, "cluster")),
        .partition = json_string_value(json_object_get(sel, "partition")),
        .workload_class = json_string_value(json_object_get(sel, "workload_class")),
        .from = json_string_value(json_object_get(sel, "from")),
        .to = json_string_value(json_object_get(sel, "to")),
    };
    enum store_status st = store_whatif_jobs(r->app->store, &q, take_row, &rd);
    if (rd.oom) {
        resp_problem(r, 500, "internal", "Internal error", "out of memory reading the runs");
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "runs");
        goto out;
    }
    if (!p.total && rd.jobs.n == 0)
        problems_add(&p, "/jobs", "selects no stored runs of team '%s'", team);
    if (!p.total)
        whatif_check_work(rd.jobs.n, plan, &p);
    if (p.total)
        goto invalid;
    char input_sha[JCS_SHA256_HEX], sha[JCS_SHA256_HEX];
    size_t resolved_len;
    resolved = whatif_resolved_jcs(doc, &rd.jobs, &resolved_len, input_sha);
    result = resolved ? whatif_run(&rd.jobs, plan, input_sha) : NULL;
    result_bytes = result ? jcs_serialize_sha256(result, NULL, sha) : NULL;
    engine_slot_leave(r);
    slot = 0;
    if (!result_bytes) {
        resp_problem(r, 500, "internal", "Internal error", "out of memory replaying");
        goto out;
    }
    struct audit_actor who;
    st = store_whatif_put(r->app->store, req_actor(r, &who), sha, input_sha, WHATIF_ENGINE_VERSION,
                          rd.jobs.n, team, sel, resolved, result_bytes, &stored);
    if (st != STORE_OK) {
        resp_store_error(r, st, "what-if replay");
        goto out;
    }
    int created = json_is_true(json_object_get(stored, "created"));
    json_object_del(stored, "created");
    json_object_set(stored, "result", result);
    idem_reply(r, &idem, created ? 201 : 200, stored);
    stored = NULL;
    goto out;
invalid:
    resp_invalid(r, &p, "The replay document is invalid: see errors (JSON Pointers into it).");
out:
    if (slot)
        engine_slot_leave(r);
    idem_end(r, &idem);
    problems_free(&p);
    whatif_jobs_free(&rd.jobs);
    free(plan);
    free(resolved);
    free(result_bytes);
    json_decref(doc);
    json_decref(result);
    json_decref(stored);
}

static int sha_ok(struct req *r)
{
    if (lower_hex_valid(r->params[0], 64))
        return 1;
    resp_problem(r, 404, "not-found", "Not found",
                 "what-if replays are named by a lower-case hex SHA-256");
    return 0;
}

static void whatif_get(struct req *r)
{
    if (!sha_ok(r))
        return;
    json_t *out = NULL;
    enum store_status st = store_whatif_get(r->app->store, r->params[0], &r->scope, &out);
    resp_stored(r, st, out, "what-if replay");
}

static void whatif_input(struct req *r)
{
    if (!sha_ok(r))
        return;
    char *bytes = NULL;
    size_t len = 0;
    enum store_status st = store_whatif_input(r->app->store, r->params[0], &r->scope, &bytes, &len);
    if (st != STORE_OK) {
        resp_store_error(r, st, "what-if replay");
        return;
    }
    resp_bytes(r, 200, "application/json", bytes, len, NULL);
    free(bytes);
}

const struct route whatif_routes[] = {
    {"POST", "/api/v1/whatif", whatif_create, ROLE_OWNER | ROLE_TEAM, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/whatif/{sha256}", whatif_get, ROLES_USERS, 0, NULL, NULL},
    {"GET", "/api/v1/whatif/{sha256}/input", whatif_input, ROLES_USERS, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};

/* ---- a replay feeding the cost engine ---- */

/* The arrangement `name` of a stored replay the caller may read: NULL after a problem at ptr. */
static json_t *stored_arrangement(struct req *r, const json_t *ref, const char *ptr,
                                  enum store_status *failure, json_t **row, struct problems *p)
{
    const char *sha = json_string_value(json_object_get(ref, "sha256"));
    const char *name = json_string_value(json_object_get(ref, "arrangement"));
    if (!json_is_object(ref) || !sha || !lower_hex_valid(sha, 64) || !name ||
        json_object_size(ref) != 2) {
        problems_add(p, ptr,
                     "must be {sha256, arrangement}: a stored what-if replay and one of "
                     "its arrangements");
        return NULL;
    }
    enum store_status st = store_whatif_get(r->app->store, sha, &r->scope, row);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, ptr, "no what-if replay %s", sha);
        return NULL;
    }
    if (st != STORE_OK) {
        *failure = st;
        return NULL;
    }
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(json_object_get(*row, "result"), "arrangements"), i, a)
    {
        const char *n = json_string_value(json_object_get(a, "name"));
        if (n && strcmp(n, name) == 0)
            return a;
    }
    problems_add(p, ptr, "replay %.12s… has no arrangement '%.160s'", sha, name);
    return NULL;
}

/* Replaces the reference member `from` of holder by `to` = the arrangement's `figure`. */
static void take_figure(struct req *r, json_t *holder, const char *from, const char *to,
                        const char *figure, const char *ptr, enum store_status *failure,
                        struct problems *p)
{
    json_t *ref = json_object_get(holder, from);
    if (!ref)
        return;
    char at[160];
    problems_pointer(at, sizeof at, ptr, from);
    json_t *row = NULL;
    json_t *a = stored_arrangement(r, ref, at, failure, &row, p);
    json_t *v = a ? json_object_get(a, figure) : NULL;
    if (a && (!v || json_is_null(v) || (json_is_number(v) && json_number_value(v) <= 0)))
        problems_add(p, at, "arrangement '%s' has no %s (no job replayed, or no pool GPU used)",
                     json_string_value(json_object_get(a, "name")), figure);
    else if (a) {
        json_object_set(holder, to, v);
        json_object_del(holder, from);
    }
    json_decref(row);
}

enum store_status whatif_resolve_scenario(struct req *r, json_t *scenario, struct problems *p)
{
    enum store_status failure = STORE_OK;
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(scenario, "options"), i, opt)
    {
        char ptr[96];
        json_t *bench = json_object_get(opt, "benchmark");
        if (json_is_object(bench)) {
            snprintf(ptr, sizeof ptr, "/options/%zu/benchmark", i);
            take_figure(r, bench, "queue_wait_from_whatif", "queue_wait_quantiles_s",
                        "wait_quantiles_s", ptr, &failure, p);
        }
        json_t *offer = json_object_get(opt, "offer");
        if (json_is_object(offer)) {
            snprintf(ptr, sizeof ptr, "/options/%zu/offer", i);
            take_figure(r, offer, "reserved_utilization_from_whatif", "reserved_utilization",
                        "pool_utilization", ptr, &failure, p);
        }
        if (failure != STORE_OK)
            break;
    }
    return failure;
}
