/* Benchmarks: measured runs of a workload on an offer (seed: "Measure effective
 * utilization"). GET/POST /benchmarks, GET /benchmarks/{id}, and POST /benchmarks/import,
 * which turns a load-test tool's own output (vLLM, GenAI-Perf, MLPerf) into a benchmark with
 * load points. Immutable: no update route; a correction is a new benchmark with `supersedes`.
 * A benchmark belongs to its workload's team: members of that team (and owners) write it. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/formats/loadtest.h"
#include "core/formats/timefmt.h"
#include "core/jsonlimit.h"
#include "core/validate.h"
#include "core/formats/evfield.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/upload_sniff.h"
#include "http/upload.h"
#include "store/benchmarks.h"
#include "store/offers.h"
#include "store/uploads.h"
#include "store/workloads.h"

#define IMPORT_MAX_BYTES ((size_t)16 << 20) /* load-test outputs are kilobytes */

static const char *const OUTCOMES[] = {"succeeded", "failed", NULL};
static const char *const DATA_ACCESS[] = {"remote", "staged", NULL}; /* cost engine 2 */

#define FRACTION(name)                                                                             \
    {                                                                                              \
        name, EVF_NUMBER, 0, 0, 1, 0, NULL, NULL                                                   \
    }
#define NONNEG(name)                                                                               \
    {                                                                                              \
        name, EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL                                          \
    }
#define POS(name)                                                                                  \
    {                                                                                              \
        name, EVF_NUMBER, EVF_MIN_EXCLUSIVE, 0, EVF_NO_MAX, 0, NULL, NULL                          \
    }

/* A load point: the figures the cost model reads, plus any latency "<metric>_ms". */
static const struct evfield LOAD_POINT_FIELDS[] = {
    {"offered_rps", EVF_NUMBER, EVF_REQUIRED | EVF_MIN_EXCLUSIVE, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"achieved_rps", EVF_NUMBER, EVF_REQUIRED, 0, EVF_NO_MAX, 0, NULL, NULL},
    FRACTION("error_rate"),
    NONNEG("goodput_rps"),
    NONNEG("output_tokens_per_s"),
    POS("input_tokens_per_request"),
    POS("output_tokens_per_request"),
    {"concurrency", EVF_NUMBER, 0, 1, EVF_NO_MAX, 0, NULL, NULL},
    {"requests", EVF_INTEGER, 0, 0, 1e15, 0, NULL, NULL},
    {"saturated", EVF_BOOL, 0, 0, 0, 0, NULL, NULL},
    EVF_END,
};

/* What a load-test reader hands over is checked as POST /benchmarks checks its load points. */
static const struct evfield IMPORTED_FIELDS[] = {
    {"load_points", EVF_ARRAY, EVF_EXTRA_MS, 0, 0, LOADTEST_MAX_POINTS, NULL, LOAD_POINT_FIELDS},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

static const struct evfield BENCHMARK_FIELDS[] = {
    {"workload_id", EVF_UUID, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"offer_id", EVF_UUID, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"team", EVF_STRING, 0, 0, 0, 64, NULL, NULL},
    {"measured_at", EVF_TIME, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"repetitions", EVF_INTEGER, 0, 1, 1000000, 0, NULL, NULL},
    {"outcome", EVF_ENUM, 0, 0, 0, 0, OUTCOMES, NULL},
    {"failure_reason", EVF_STRING, 0, 0, 0, 2000, NULL, NULL},
    {"ran_by", EVF_STRING, 0, 0, 0, 128, NULL, NULL},
    {"supersedes", EVF_UUID, 0, 0, 0, 0, NULL, NULL},
    {"notes", EVF_STRING, 0, 0, 0, 4000, NULL, NULL},
    {"instances", EVF_INTEGER, 0, 1, 100000, 0, NULL, NULL},
    POS("throughput_units_per_s"),
    NONNEG("throughput_stddev"),
    FRACTION("gpu_duty_cycle"),
    FRACTION("input_stall_fraction"),
    NONNEG("data_loading_s"),
    FRACTION("cpu_bound_fraction"),
    FRACTION("communication_fraction"),
    NONNEG("setup_s"),
    NONNEG("checkpoint_write_s"),
    NONNEG("restart_s"),
    POS("checkpoint_interval_s"),
    NONNEG("queue_wait_s"),
    {"preemptions", EVF_INTEGER, 0, 0, 1000000, 0, NULL, NULL},
    NONNEG("transfer_gb"),
    POS("memory_peak_gb"),
    {"failure_probability", EVF_NUMBER, EVF_MAX_EXCLUSIVE, 0, 1, 0, NULL, NULL},
    {"data_access", EVF_ENUM, 0, 0, 0, 0, DATA_ACCESS, NULL},
    NONNEG("restage_gb"),
    NONNEG("crash_rate_per_instance_hour"),
    {"load_points", EVF_ARRAY, EVF_EXTRA_MS, 0, 0, LOADTEST_MAX_POINTS, NULL, LOAD_POINT_FIELDS},
    EVF_SERVER_FIELD("id"),
    EVF_SERVER_FIELD("capacity_usable"),
    EVF_SERVER_FIELD("flags"),
    EVF_SERVER_FIELD("source"),
    EVF_SERVER_FIELD("upload_id"),
    EVF_SERVER_FIELD("created_by"),
    EVF_SERVER_FIELD("created_at"),
    EVF_SERVER_FIELD("superseded_by"),
    EVF_SERVER_FIELD("derived"),
    EVF_END,
};

/* What a benchmark refers to, once checked: the workload's team and kind. */
struct bench_refs {
    char team[80];
    char kind[32];
};

/* Checks workload_id, offer_id and supersedes against the store and the caller's rights.
 * Returns 0; or -1 after answering (403, 503), or 1 when problems were added (422 to send). */
static int check_refs(struct req *r, const char *workload_id, const char *offer_id,
                      const char *supersedes, struct bench_refs *refs, struct problems *p)
{
    json_t *w = NULL, *o = NULL, *old = NULL;
    int rc = 0;
    enum store_status st = store_workload_get(r->app->store, workload_id, &w);
    const char *team = json_string_value(json_object_get(w, "team"));
    if (st == STORE_NOT_FOUND || (st == STORE_OK && !principal_can_read_team(&r->who, team))) {
        problems_add(p, "/workload_id", "no workload with this id");
    } else if (st != STORE_OK) {
        resp_store_error(r, st, "workload");
        rc = -1;
        goto out;
    } else if (!principal_can_write_team(&r->who, team)) {
        res_forbidden_team(r, team);
        rc = -1;
        goto out;
    } else {
        snprintf(refs->team, sizeof refs->team, "%s", team);
        snprintf(refs->kind, sizeof refs->kind, "%s",
                 json_string_value(json_object_get(w, "kind")));
    }
    st = store_offer_get(r->app->store, offer_id, &o);
    if (st == STORE_NOT_FOUND)
        problems_add(p, "/offer_id", "no offer with this id");
    else if (st != STORE_OK) {
        resp_store_error(r, st, "offer");
        rc = -1;
        goto out;
    }
    if (supersedes) {
        st = store_benchmark_get(r->app->store, supersedes, &old);
        const char *old_team = json_string_value(json_object_get(old, "team"));
        if (st == STORE_NOT_FOUND ||
            (st == STORE_OK && !principal_can_read_team(&r->who, old_team)))
            problems_add(p, "/supersedes", "no benchmark with this id");
        else if (st != STORE_OK) {
            resp_store_error(r, st, "benchmark");
            rc = -1;
            goto out;
        } else if (!principal_can_write_team(&r->who, old_team))
            problems_add(p, "/supersedes", "the benchmark belongs to team '%s', not yours",
                         old_team);
        else if (!json_is_null(json_object_get(old, "superseded_by")))
            problems_add(p, "/supersedes", "that benchmark was already superseded by %s",
                         json_string_value(json_object_get(old, "superseded_by")));
    }
    rc = p->total ? 1 : 0;
out:
    json_decref(w);
    json_decref(o);
    json_decref(old);
    return rc;
}

/* The cost model refuses two load points with the same offered_rps (docs/cost-model.md). hint ends
 * the message (how to fix it for an import). */
static void check_duplicate_points(const json_t *points, const char *hint, struct problems *p)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(points, i, a)
    {
        double x = json_number_value(json_object_get(a, "offered_rps"));
        json_array_foreach(points, j, b)
        {
            if (j >= i)
                break;
            if (json_number_value(json_object_get(b, "offered_rps")) == x) {
                char ptr[64];
                snprintf(ptr, sizeof ptr, "/load_points/%zu/offered_rps", i);
                problems_add(p, ptr, "the same offered_rps (%g) as load point %zu%s", x, j, hint);
                break;
            }
        }
    }
}

/* Rules between fields, once the workload's kind is known. */
static void check_consistency(const json_t *doc, const struct bench_refs *refs, struct problems *p)
{
    const char *outcome = json_string_value(json_object_get(doc, "outcome"));
    int failed = outcome && strcmp(outcome, "failed") == 0;
    int has_reason = json_is_string(json_object_get(doc, "failure_reason"));
    if (failed && !has_reason)
        problems_add(p, "/failure_reason", "a failed benchmark needs its failure reason");
    if (!failed && has_reason)
        problems_add(p, "/failure_reason", "only a failed benchmark has a failure reason");
    const char *team = json_string_value(json_object_get(doc, "team"));
    if (team && refs->team[0] && strcmp(team, refs->team) != 0)
        problems_add(p, "/team", "a benchmark belongs to its workload's team, '%s'", refs->team);
    json_t *points = json_object_get(doc, "load_points");
    int inference = strcmp(refs->kind, "inference") == 0;
    if (!failed && refs->kind[0]) {
        if (inference && json_array_size(points) == 0)
            problems_add(p, "/load_points", "a succeeded inference benchmark needs load points");
        if (!inference && !json_is_number(json_object_get(doc, "throughput_units_per_s")))
            problems_add(p, "/throughput_units_per_s",
                         "a succeeded %s benchmark needs its measured throughput", refs->kind);
    }
    check_duplicate_points(points, "", p);
}

/* The store's fault of a create (409 when the superseded benchmark was corrected meanwhile). */
static void created_fault(struct req *r, enum store_status st)
{
    if (st == STORE_CONFLICT)
        resp_problem(r, 409, "conflict", "Conflict",
                     "the superseded benchmark has just received another correction");
    else
        resp_store_error(r, st, "benchmark");
}

/* POST /benchmarks (idem_create): the new benchmark, or NULL having answered or filled p. */
static json_t *benchmark_create_make(struct req *r, struct problems *p)
{
    evfield_check(r->body, BENCHMARK_FIELDS, "", 0, NULL, p);
    if (p->total)
        return NULL;
    struct bench_refs refs = {"", ""};
    const char *supersedes = json_string_value(json_object_get(r->body, "supersedes"));
    int rc =
        check_refs(r, json_string_value(json_object_get(r->body, "workload_id")),
                   json_string_value(json_object_get(r->body, "offer_id")), supersedes, &refs, p);
    if (rc < 0)
        return NULL;
    check_consistency(r->body, &refs, p);
    if (p->total)
        return NULL;
    json_t *doc = json_deep_copy(r->body), *out = NULL;
    json_object_del(doc, "team");
    if (!json_object_get(doc, "ran_by"))
        json_object_set_new(doc, "ran_by", json_string(r->who.username));
    struct audit_actor who;
    enum store_status st =
        store_benchmark_create(r->app->store, req_actor(r, &who), doc, refs.team, &out);
    json_decref(doc);
    if (st != STORE_OK) {
        json_decref(out);
        created_fault(r, st);
        return NULL;
    }
    return out;
}

static void benchmark_create(struct req *r)
{
    idem_create(r, benchmark_create_make);
}

/* The import's benchmark columns from the tool's parsed result and the query parameters. */
static json_t *import_doc(const json_t *parsed, const char *format, const char *workload_id,
                          const char *offer_id, const char *measured_at, const char *ran_by,
                          const char *supersedes, const char *upload_id)
{
    int valid = !json_is_false(json_object_get(parsed, "valid"));
    json_t *flags = json_array();
    if (!valid)
        json_array_append_new(
            flags, json_string(strcmp(format, "mlperf") == 0 ? "mlperf_invalid" : "invalid"));
    if (json_is_true(json_object_get(parsed, "saturated")))
        json_array_append_new(flags, json_string("saturated"));
    json_t *source =
        json_pack("{s:s, s:O*, s:O*, s:O*, s:O*, s:O*}", "format", format, "tool",
                  json_object_get(parsed, "tool"), "model", json_object_get(parsed, "model"),
                  "results", json_object_get(parsed, "results"), "rejected_load_points",
                  json_object_get(parsed, "rejected_load_points"), "warnings",
                  json_object_get(parsed, "warnings"));
    /* An invalid result keeps its points in source.rejected_load_points, never as capacity. */
    json_t *points = json_object_get(parsed, "load_points");
    points = valid && json_is_array(points) ? json_incref(points) : json_array();
    json_t *doc =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:b, s:o, s:o, s:s}", "workload_id", workload_id,
                  "offer_id", offer_id, "measured_at", measured_at, "ran_by", ran_by, "outcome",
                  "succeeded", "load_points", points, "capacity_usable", valid, "flags", flags,
                  "source", source, "upload_id", upload_id);
    if (doc && supersedes)
        json_object_set_new(doc, "supersedes", json_string(supersedes));
    return doc;
}

/* POST /benchmarks/import: one load-test output, its parameters and what was read of it. */
struct bench_import {
    struct bench_refs refs;
    char format[16], workload_id[40], offer_id[40], measured_at[40], ran_by[130], supersedes[40],
        where[200];
    const char *fmt, *wid, *oid, *at, *by, *sup;
    struct loadtest_options lopt;
    json_t *parsed, *doc;
};

static int import_params(struct upload *u)
{
    struct bench_import *b = u->state;
    struct problems *p = &u->errs;
    struct req *r = u->r;
    /* Each required parameter: absent → "is required"; present but bad → res_query's problem. */
    size_t before = p->total;
    b->fmt = res_query(r, "format", RQ_ENUM, LOADTEST_FORMAT_NAMES, b->format, sizeof b->format, p);
    char names[128];
    if (!b->fmt && p->total == before)
        problems_add(p, "?format", "query parameter format is required (%s)",
                     format_join(LOADTEST_FORMAT_NAMES, names, sizeof names));
    before = p->total;
    b->wid = res_query(r, "workload_id", RQ_UUID, NULL, b->workload_id, sizeof b->workload_id, p);
    if (!b->wid && p->total == before)
        problems_add(p, "?workload_id", "query parameter workload_id is required");
    before = p->total;
    b->oid = res_query(r, "offer_id", RQ_UUID, NULL, b->offer_id, sizeof b->offer_id, p);
    if (!b->oid && p->total == before)
        problems_add(p, "?offer_id", "query parameter offer_id is required");
    b->at = res_query(r, "measured_at", RQ_TIME, NULL, b->measured_at, sizeof b->measured_at, p);
    b->by = res_query(r, "ran_by", RQ_TEXT, NULL, b->ran_by, sizeof b->ran_by, p);
    b->sup = res_query(r, "supersedes", RQ_UUID, NULL, b->supersedes, sizeof b->supersedes, p);
    const char *wh = res_query(r, "where", RQ_TEXT, NULL, b->where, sizeof b->where, p);
    if (wh) {
        char *eq = strchr(b->where, '=');
        if (!eq || eq == b->where || !eq[1])
            problems_add(p, "?where",
                         "query parameter where reads key=value (a --metadata "
                         "key of a vLLM sweep)");
        else {
            *eq = '\0';
            b->lopt.where_key = b->where;
            b->lopt.where_value = eq + 1;
        }
    }
    if (p->total)
        return 0;
    if (check_refs(r, b->wid, b->oid, b->sup, &b->refs, p) < 0)
        return -1;
    if (!p->total && strcmp(b->refs.kind, "inference") != 0)
        problems_add(p, "?workload_id", "load tests measure inference: this workload's kind is %s",
                     b->refs.kind);
    u->team = b->refs.team;
    u->format = b->fmt;
    return 0;
}

/* The tool's outputs are small and their readers take the whole text. */
static int import_read(struct upload *u)
{
    struct bench_import *b = u->state;
    struct problems *p = &u->errs;
    struct req *r = u->r;
    const char *body = u->body;
    size_t len = u->bytes;
    size_t lead = 0;
    while (lead < len && strchr(" \t\r\n", body[lead]) && body[lead])
        lead++;
    struct json_nest_at deep;
    if (lead < len && (body[lead] == '[' || body[lead] == '{') &&
        !json_nest_ok(body, len, JSON_NEST_MAX, false, &deep)) {
        json_error_t err = {.line = (int)deep.line, .column = (int)deep.column};
        err.text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_stack_overflow;
        resp_json_error(r, &err, 0);
        return -1;
    }
    /* The readers parse the JSON outputs a value at a time, each refused past JSON_PARSE_MAX:
     * the largest they may hold, from the budget of parsed JSON. */
    if (lead < len && (body[lead] == '[' || body[lead] == '{') &&
        req_json_reserve(r, json_parse_cost(body, len, false)) != 0)
        return -1;
    b->parsed = loadtest_parse(loadtest_format_from_name(b->fmt), body, len, &b->lopt, p);
    if (!b->parsed) {
        if (strcmp(b->fmt, "vllm") != 0)      /* vLLM output is JSON: "" is its root */
            problems_place_whole_input(p, 1); /* where the reader gave up */
        /* An MLPerf log sent as vLLM, a sacct file sent here: say so, not the parser's symptom. */
        upload_guess(&u->guess, body, len, SNIFF_LOADTEST, b->fmt);
        u->fatal = 1;
        return 0;
    }
    u->accepted = 1;
    json_numbers_check(b->parsed, "", p); /* what the readers pass on is stored as it is */
    json_texts_check(b->parsed, "", p);
    /* Each load point within the ranges POST /benchmarks enforces (a reader passes a negative
     * latency on as it is: stored, it would make the benchmark unusable in any scenario). */
    evfield_check_values(b->parsed, IMPORTED_FIELDS, "", p);
    check_duplicate_points(json_object_get(b->parsed, "load_points"),
                           ": the results mix configurations; choose one with ?where=key=value "
                           "(a --metadata key, e.g. where=deployment=base)",
                           p);
    return 0;
}

static json_t *import_finish(struct upload *u, json_t *rec, int *status)
{
    struct bench_import *b = u->state;
    struct req *r = u->r;
    char now[TIMEFMT_UTC_LEN];
    const char *at = b->at;
    if (!at) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        at = timefmt_format_utc_ms((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, now);
    }
    b->doc = import_doc(b->parsed, b->fmt, b->wid, b->oid, at, b->by ? b->by : r->who.username,
                        b->sup, u->id);
    if (!b->doc) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return NULL;
    }
    json_object_set_new(
        rec, "inserted",
        json_integer((json_int_t)json_array_size(json_object_get(b->doc, "load_points"))));
    json_object_set_new(rec, "rejected_total",
                        json_integer((json_int_t)json_array_size(
                            json_object_get(b->parsed, "rejected_load_points"))));
    json_object_set_new(rec, "params",
                        json_pack("{s:s, s:s}", "workload_id", b->wid, "offer_id", b->oid));
    json_t *warnings = json_object_get(b->parsed, "warnings");
    json_object_set(rec, "warnings", warnings ? warnings : json_array());
    struct audit_actor who;
    json_t *out = NULL;
    enum store_status st =
        store_benchmark_import(r->app->store, req_actor(r, &who), b->doc, b->refs.team, rec, &out);
    if (st != STORE_OK) {
        json_decref(out);
        created_fault(r, st);
        return NULL;
    }
    json_object_set(out, "warnings", json_object_get(rec, "warnings"));
    *status = 201;
    return out;
}

static void import_abort(struct upload *u)
{
    struct bench_import *b = u->state;
    json_decref(b->parsed);
    json_decref(b->doc);
}

/* The tool's output file as it is: a body of up to 16 MiB, and the tree of a JSON one, so
 * every import takes one of the bounded upload slots (the default rule). */
static const struct upload_kind IMPORT_UPLOAD = {
    .kind = "benchmark_import",
    .types = {{"application/json", UPLOAD_WHOLE, NULL},
              {"text/plain", UPLOAD_WHOLE, NULL},
              {"text/csv", UPLOAD_WHOLE, NULL},
              {"application/x-ndjson", UPLOAD_WHOLE, NULL},
              {"application/octet-stream", UPLOAD_WHOLE, NULL}},
    .types_hint = "send the tool's output file as is (application/json, text/plain or text/csv)",
    .whole_max = IMPORT_MAX_BYTES,
    .whole_what = "a load-test output",
    .state_size = sizeof(struct bench_import),
    .all_or_nothing = 1,
    .params = import_params,
    .body = {.read = import_read},
    .store = {.finish = import_finish, .abort = import_abort},
    .says = {.unreadable = "The load-test output could not be read: see errors.",
             .faulty = "The load points cannot form one benchmark: see errors."},
};

static void benchmark_import(struct req *r)
{
    upload_run(r, &IMPORT_UPLOAD);
}

static void benchmark_get(struct req *r)
{
    json_t *b = res_readable_benchmark(r, r->params[0]);
    if (b)
        resp_json(r, 200, b);
}

/* from/to (read by res_list) apply to measured_at here. */
static const struct res_list_kind BENCHMARKS = {
    "benchmarks",
    store_benchmark_list,
    {RES_FILTER_TEAM,
     {"workload", RQ_UUID, NULL, RES_FIELD(workload_id)},
     {"offer", RQ_UUID, NULL, RES_FIELD(offer_id)},
     {"outcome", RQ_ENUM, OUTCOMES, RES_FIELD(state)},
     RES_FILTER_Q},
};

const struct route benchmark_routes[] = {
    {"GET", "/api/v1/benchmarks", res_list_route, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to team workload offer outcome q", &BENCHMARKS},
    {"POST", "/api/v1/benchmarks", benchmark_create, ROLE_OWNER | ROLE_TEAM, ROUTE_JSON_BODY, NULL,
     NULL},
    {"POST", "/api/v1/benchmarks/import", benchmark_import, ROLE_OWNER | ROLE_TEAM,
     ROUTE_STREAM_BODY, "format workload_id offer_id measured_at ran_by supersedes where", NULL},
    {"GET", "/api/v1/benchmarks/{id}", benchmark_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
