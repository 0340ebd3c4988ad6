/* The cost engine over HTTP: stateless POST /compare, stored scenarios, and stored comparisons
 * named by the SHA-256 of their RFC 8785 bytes so decision records can cite them.
 *
 * A scenario may name stored records instead of spelling them out: `workload` as a workload
 * id, an option's `offer` or `benchmark` as an id (an option with a benchmark id and no offer
 * takes the benchmark's offer). resolve_scenario() replaces every id by the record's scenario
 * fields; the resolved document is what is validated, computed, hashed and stored. */
#include <stdlib.h>
#include <string.h>

#include "core/cost/cost.h"
#include "core/formats/evfield.h"
#include "core/jcs.h"
#include "core/validate.h"
#include "http/engine.h"
#include "http/gate.h"
#include "http/evfrom.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "store/compute.h"

/* Resolution outcome beyond validation problems: a store failure answers 503/500. */
struct resolution {
    enum store_status failure; /* STORE_OK unless the store failed */
    char team[80];             /* the team of the first referenced benchmark or workload */
};

/* Fetches the record a string reference names; NULL (with a problem, or res->failure) when it
 * cannot: the reference is not an id, no such record, or another team's. */
static json_t *fetch(struct req *r,
                     enum store_status (*get)(struct store *, const char *, json_t **),
                     const json_t *ref, const char *ptr, const char *what, struct resolution *res,
                     struct problems *p)
{
    const char *id = json_string_value(ref);
    if (!uuid_valid(id)) {
        problems_add(p, ptr, "must be an object or the id of a stored record");
        return NULL;
    }
    json_t *row = NULL;
    enum store_status st = get(r->app->store, id, &row);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, ptr, "no %s with id %s", what, id);
        return NULL;
    }
    if (st != STORE_OK) {
        res->failure = st;
        return NULL;
    }
    const char *team = json_string_value(json_object_get(row, "team"));
    if (team && !principal_can_read_team(&r->who, team)) {
        /* Existence must not leak across teams: the same answer as a missing record. */
        problems_add(p, ptr, "no %s with id %s", what, id);
        json_decref(row);
        return NULL;
    }
    if (team && !res->team[0])
        snprintf(res->team, sizeof res->team, "%s", team);
    return row;
}

static json_t *resolve_scenario(struct req *r, const json_t *doc, struct resolution *res,
                                struct problems *p)
{
    json_t *out = json_deep_copy(doc);
    if (!out || !json_is_object(out))
        return out;
    json_t *wl = json_object_get(out, "workload");
    if (json_is_string(wl)) {
        json_t *row = fetch(r, store_workload_as_scenario, wl, "/workload", "workload", res, p);
        if (row)
            json_object_set(out, "workload", json_object_get(row, "workload"));
        json_decref(row);
    }
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(out, "options"), i, opt)
    {
        if (!json_is_object(opt))
            continue;
        char ptr[64];
        json_t *bench = json_object_get(opt, "benchmark");
        if (json_is_string(bench)) {
            snprintf(ptr, sizeof ptr, "/options/%zu/benchmark", i);
            json_t *row = fetch(r, store_benchmark_as_scenario, bench, ptr, "benchmark", res, p);
            if (row) {
                if (!json_is_true(json_object_get(row, "capacity_usable")))
                    problems_add(p, ptr,
                                 "benchmark %s is flagged invalid (e.g. an INVALID MLPerf "
                                 "result) and is never used as capacity",
                                 json_string_value(bench));
                json_object_set(opt, "benchmark", json_object_get(row, "benchmark"));
                if (!json_object_get(opt, "offer"))
                    json_object_set(opt, "offer", json_object_get(row, "offer_id"));
            }
            json_decref(row);
        }
        json_t *offer = json_object_get(opt, "offer");
        if (json_is_string(offer)) {
            snprintf(ptr, sizeof ptr, "/options/%zu/offer", i);
            json_t *row = fetch(r, store_offer_as_scenario, offer, ptr, "offer", res, p);
            if (row)
                json_object_set(opt, "offer", row);
            json_decref(row);
        }
    }
    /* a stored what-if replay's figures, as plain numbers (docs/whatif.md) */
    enum store_status st = whatif_resolve_scenario(r, out, p);
    if (st != STORE_OK && res->failure == STORE_OK)
        res->failure = st;
    /* inputs from the stored evidence (docs/evidence.md "Inputs from evidence") */
    st = evfrom_resolve_scenario(r, out, p);
    if (st != STORE_OK && res->failure == STORE_OK)
        res->failure = st;
    return out;
}

typedef json_t *(*engine_fn)(const json_t *scenario, struct problems *errs);

/* Resolves and computes with engine (cost_compare, or cost_charts). Answers on failure
 * (returns NULL); on success *resolved_out gets the resolved scenario (new reference) when
 * asked. */
static json_t *compute(struct req *r, const json_t *doc, engine_fn engine, json_t **resolved_out,
                       struct resolution *res)
{
    struct problems p;
    problems_init(&p);
    json_t *result = NULL;
    if (!json_is_object(doc)) {
        problems_add(&p, "", "a scenario must be a JSON object");
        resp_invalid(r, &p, NULL);
        goto out;
    }
    json_t *resolved = resolve_scenario(r, doc, res, &p);
    if (res->failure != STORE_OK) {
        resp_store_error(r, res->failure, "referenced record");
        json_decref(resolved);
        goto out;
    }
    if (!p.total) {
        if (engine_slot_enter(r) != 0) {
            json_decref(resolved);
            goto out;
        }
        result = engine(resolved, &p);
        engine_slot_leave(r);
    }
    if (!result) {
        resp_invalid(r, &p,
                     "The scenario is invalid: see errors (JSON Pointers into the "
                     "scenario document).");
        json_decref(resolved);
        goto out;
    }
    if (resolved_out)
        *resolved_out = resolved;
    else
        json_decref(resolved);
out:
    problems_free(&p);
    return result;
}

/* Not idem_create: a comparison is computed, not created (200, nothing stored), but its reply
 * is still kept for a retry with the same Idempotency-Key. */
static void compare_with(struct req *r, engine_fn engine)
{
    struct idem idem;
    if (idem_begin(r, &idem) == IDEM_PROCEED) {
        struct resolution res = {.failure = STORE_OK};
        json_t *result = compute(r, r->body, engine, NULL, &res);
        if (result)
            idem_reply(r, &idem, 200, result);
    }
    idem_end(r, &idem);
}

static void compare_stateless(struct req *r)
{
    compare_with(r, cost_compare);
}

/* What the charts of that comparison need (cost_charts): the Monte Carlo percentiles of each
 * option, or the replicas hour by hour. */
static void compare_charts(struct req *r)
{
    compare_with(r, cost_charts);
}

/* One workload of a scenario: it must exist, be readable by the caller, and belong to the
 * scenario's team. Appends a problem at ptr otherwise; answers (and returns the status) when
 * the store fails. */
static enum store_status check_workload_team(struct req *r, const char *team, const char *id,
                                             const char *ptr, struct problems *p)
{
    json_t *row = NULL;
    enum store_status st = store_workload_as_scenario(r->app->store, id, &row);
    const char *owner = json_string_value(json_object_get(row, "team"));
    if (st == STORE_NOT_FOUND || (st == STORE_OK && !principal_can_read_team(&r->who, owner))) {
        problems_add(p, ptr, "no workload with id %s", id);
        st = STORE_OK;
    } else if (st == STORE_OK && strcmp(owner, team) != 0) {
        problems_add(p, ptr, "workload %s belongs to team '%s', not to the scenario's team '%s'",
                     id, owner, team);
    } else if (st != STORE_OK) {
        resp_store_error(r, st, "workload");
    }
    json_decref(row);
    return st;
}

static enum store_status check_workloads(struct req *r, const char *team, const json_t *ids,
                                         const char *prefix, struct problems *p)
{
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        char ptr[64];
        if (strcmp(prefix, "/workload_ids") == 0)
            snprintf(ptr, sizeof ptr, "%s/%zu", prefix, i);
        else
            snprintf(ptr, sizeof ptr, "%s", prefix);
        enum store_status st = check_workload_team(r, team, json_string_value(id), ptr, p);
        if (st != STORE_OK)
            return st;
    }
    return STORE_OK;
}

static const struct evfield WORKLOAD_ID[] = {
    {"workload_id", EVF_UUID, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be a workload id"), NULL},
    EVF_END,
};

static const struct evfield SCENARIO_FIELDS[] = {
    {"name", EVF_TEXT, EVF_REQUIRED, 0, 0, 200, NULL, NULL},
    {"team", EVF_TEXT, EVF_REQUIRED, 0, 0, 64, NULL, NULL},
    {"document", EVF_ANY, EVF_REQUIRED | EVF_MSG_ALL, 0, 0, 0,
     EVF_WORDS("is required: the scenario document (docs/cost-model.md)"), NULL},
    {"workload_ids", EVF_LIST, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be an array of workload ids"),
     WORKLOAD_ID},
    EVF_END,
};

static json_t *scenario_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *ids = NULL, *resolved = NULL, *out = NULL;
    if (!json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object");
        goto out;
    }
    evfield_check(r->body, SCENARIO_FIELDS, "", 0, NULL, p);
    const char *name = evfield_valid_string(r->body, "name", p);
    const char *team = evfield_valid_string(r->body, "team", p);
    json_t *doc = json_object_get(r->body, "document");
    json_t *given_ids = json_object_get(r->body, "workload_ids");
    ids = json_array();
    if (json_is_array(given_ids))
        json_array_extend(ids, given_ids);
    if (team && !principal_can_write_team(&r->who, team)) {
        resp_problem(r, 403, "forbidden", "Forbidden", "you may not write for team '%s'", team);
        goto out;
    }
    if (p->total)
        goto out;
    json_t *wl = json_object_get(doc, "workload");
    if (json_is_string(wl) && uuid_valid(json_string_value(wl)) && !json_array_size(ids))
        json_array_append(ids, wl);
    /* The workloads a scenario answers for must be the scenario's team's own: the review
     * checklist counts its comparisons as evidence for them. */
    if (check_workloads(r, team, ids, given_ids ? "/workload_ids" : "/document/workload", p) !=
        STORE_OK)
        goto out;
    if (json_is_string(wl) && uuid_valid(json_string_value(wl)) && given_ids &&
        check_workload_team(r, team, json_string_value(wl), "/document/workload", p) != STORE_OK)
        goto out;
    if (p->total)
        goto out;
    /* Validate now (references resolve, the scenario computes) so a stored scenario is one
     * that can be compared; the stored document keeps the references. */
    struct resolution res = {.failure = STORE_OK};
    resolved = resolve_scenario(r, doc, &res, p);
    if (res.failure != STORE_OK) {
        resp_store_error(r, res.failure, "referenced record");
        goto out;
    }
    if (!p->total && cost_validate(resolved, p) != 0 && !p->total)
        problems_add(p, "/document", "is not a valid scenario");
    if (p->total) {
        problems_prefix(p, 0, "/document"); /* pointers are into the document */
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_scenario_create(r->app->store, req_actor(r, &who), team, name, ids, doc, &out);
    json_t *taken = NULL;
    if (st == STORE_OK)
        made = out;
    else if (st == STORE_INVALID)
        problems_add(p, "/team", "no team named '%s'", team);
    else if (st == STORE_CONFLICT &&
             store_scenario_named(r->app->store, team, name, &taken) == STORE_OK) {
        /* Names are unique per team: name the scenario that has it and offer a free one. */
        const char *sugg = json_string_value(json_object_get(taken, "suggested_name"));
        resp_problem_with(
            r, 409, "conflict", "Conflict",
            json_pack("{s:O, s:s?, s:[{s:s, s:s}]}", "existing", taken, "suggested_name", sugg,
                      "errors", "pointer", "/name", "message",
                      "another scenario of this team has this name"),
            "team '%s' already has a scenario named '%s' (stored %.10s by %s): choose another "
            "name%s%s%s",
            team, json_string_value(json_object_get(taken, "name")),
            json_string_value(json_object_get(taken, "created_at")),
            json_string_value(json_object_get(taken, "created_by")), sugg ? ", such as '" : "",
            sugg ? sugg : "", sugg ? "'" : "");
        json_decref(taken);
    } else {
        resp_store_error(r, st, "scenario");
    }
out:
    json_decref(ids);
    json_decref(resolved);
    if (!made)
        json_decref(out);
    return made;
}

static void scenario_create(struct req *r)
{
    idem_create(r, scenario_create_make);
}

static void scenario_list(struct req *r)
{
    struct page pg;
    if (page_begin(r, &pg, PAGE_TEXT, NULL) != 0)
        return;
    struct problems p;
    problems_init(&p);
    char prefix[128], team[128];
    const char *q = res_query(r, "q", RQ_TEXT, NULL, prefix, sizeof prefix, &p);
    const char *t = res_query(r, "team", RQ_TEXT, NULL, team, sizeof team, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        problems_free(&p);
        return;
    }
    problems_free(&p);
    json_t *items = NULL;
    enum store_status st =
        store_scenario_list(r->app->store, &r->scope, q, t, pg.after, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "cursor_key", "scenarios");
}

/* The scenario of the path, if the caller's teams may see it (new reference); else NULL after
 * answering (404 for a malformed, unknown or foreign id alike). */
static json_t *visible_scenario(struct req *r)
{
    if (!uuid_valid(r->params[0])) {
        resp_problem(r, 404, "not-found", "Not found", "scenario not found");
        return NULL;
    }
    json_t *out = NULL;
    enum store_status st = store_scenario_get(r->app->store, r->params[0], &r->scope, &out);
    return req_stored(r, st, out, "scenario");
}

static void scenario_get(struct req *r)
{
    json_t *scenario = visible_scenario(r);
    if (scenario)
        resp_json(r, 200, scenario);
}

/* Not idem_create: the same result stored before is answered 200 (201 only when new). */
static void comparison_create(struct req *r)
{
    json_t *scenario = NULL, *resolved = NULL, *result = NULL, *stored = NULL;
    char *bytes = NULL;
    struct idem idem;
    if (idem_begin(r, &idem) == IDEM_ANSWERED)
        goto out;
    scenario = visible_scenario(r);
    if (!scenario)
        goto out;
    const char *team = json_string_value(json_object_get(scenario, "team"));
    if (!principal_can_write_team(&r->who, team)) {
        resp_problem(r, 403, "forbidden", "Forbidden", "you may not write for team '%s'", team);
        goto out;
    }
    struct resolution res = {.failure = STORE_OK};
    result = compute(r, json_object_get(scenario, "document"), cost_compare, &resolved, &res);
    if (!result)
        goto out; /* answered */
    char sha[JCS_SHA256_HEX];
    bytes = jcs_serialize_sha256(result, NULL, sha);
    if (!bytes) {
        resp_problem(r, 500, "internal", "Internal error", "the result cannot be canonicalised");
        goto out;
    }
    struct audit_actor who;
    enum store_status st = store_comparison_put(
        r->app->store, req_actor(r, &who), sha, r->params[0], team,
        json_object_get(scenario, "workload_ids"),
        json_string_value(json_object_get(result, "input_sha256")),
        json_string_value(json_object_get(result, "engine_version")), resolved, bytes, &stored);
    if (st != STORE_OK) {
        resp_store_error(r, st, "comparison");
        goto out;
    }
    int created = json_is_true(json_object_get(stored, "created"));
    json_object_del(stored, "created");
    idem_reply(r, &idem, created ? 201 : 200, stored);
    stored = NULL;
out:
    idem_end(r, &idem);
    free(bytes);
    json_decref(scenario);
    json_decref(resolved);
    json_decref(result);
    json_decref(stored);
}

static void comparison_get(struct req *r)
{
    if (!lower_hex_valid(r->params[0], 64)) {
        resp_problem(r, 404, "not-found", "Not found",
                     "comparisons are named by a lower-case hex SHA-256");
        return;
    }
    json_t *out = NULL;
    enum store_status st = store_comparison_get(r->app->store, r->params[0], &r->scope, &out);
    resp_stored(r, st, out, "comparison");
}

/* The charts of a stored comparison, recomputed from its resolved scenario (the same seed and
 * engine give the trials its quantiles came from). */
static void comparison_charts(struct req *r)
{
    if (!lower_hex_valid(r->params[0], 64)) {
        resp_problem(r, 404, "not-found", "Not found",
                     "comparisons are named by a lower-case hex SHA-256");
        return;
    }
    json_t *stored = NULL, *charts = NULL;
    enum store_status st = store_comparison_get(r->app->store, r->params[0], &r->scope, &stored);
    if (st != STORE_OK) {
        resp_store_error(r, st, "comparison");
        return;
    }
    struct problems p;
    problems_init(&p);
    if (engine_slot_enter(r) != 0)
        goto out;
    /* with the engine that made the comparison (its quantiles came from that engine's trials) */
    charts = cost_charts_engine(
        json_object_get(stored, "scenario"),
        cost_engine_of_version(json_string_value(json_object_get(stored, "engine_version"))), &p);
    engine_slot_leave(r);
    if (!charts) { /* a stored scenario the engine took once and refuses now: not the caller's */
        resp_problem(r, 500, "internal", "Internal error",
                     "the stored comparison's scenario cannot be recomputed");
        goto out;
    }
    resp_json(r, 200, charts);
out:
    json_decref(stored);
    problems_free(&p);
}

static void comparison_list(struct req *r)
{
    json_t *scenario = visible_scenario(r), *items = NULL;
    if (!scenario)
        return;
    json_decref(scenario);
    struct page pg;
    if (page_begin(r, &pg, PAGE_TEXT, NULL) != 0)
        return;
    enum store_status st = store_comparison_list(r->app->store, r->params[0], NULL, &r->scope,
                                                 pg.after, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "cursor_key", "scenario");
}

#define READERS ROLES_USERS
#define WRITERS (ROLE_OWNER | ROLE_TEAM)

const struct route compute_routes[] = {
    {"POST", "/api/v1/compare", compare_stateless, READERS, ROUTE_JSON_BODY, NULL, NULL},
    {"POST", "/api/v1/compare/charts", compare_charts, READERS, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/scenarios", scenario_list, READERS, ROUTE_STANDBY, "limit cursor q team",
     NULL},
    {"POST", "/api/v1/scenarios", scenario_create, WRITERS, ROUTE_JSON_BODY, NULL, NULL},
    {"GET", "/api/v1/scenarios/{id}", scenario_get, READERS, ROUTE_STANDBY, NULL, NULL},
    {"GET", "/api/v1/scenarios/{id}/comparisons", comparison_list, READERS, ROUTE_STANDBY,
     "limit cursor", NULL},
    {"POST", "/api/v1/scenarios/{id}/comparisons", comparison_create, WRITERS, 0, NULL, NULL},
    {"GET", "/api/v1/comparisons/{sha256}", comparison_get, READERS, ROUTE_STANDBY, NULL, NULL},
    {"GET", "/api/v1/comparisons/{sha256}/charts", comparison_charts, READERS, ROUTE_STANDBY, NULL,
     NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
