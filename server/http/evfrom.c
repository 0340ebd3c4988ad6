/* Inputs from evidence: see evfrom.h. */
#include "http/evfrom.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "http/internal.h"
#include "store/evfrom.h"

/* A selection of runs: any of these, in a window of submitted_at. */
#define RUN_SELECTION                                                                              \
    {"cluster", EVF_STRING, 0, 0, 0, 127, NULL, NULL},                                             \
        {"partition", EVF_STRING, 0, 0, 0, 127, NULL, NULL},                                       \
        {"workload_class", EVF_LABEL, 0, 0, 0, 0, NULL, NULL},                                     \
        {"team", EVF_HANDLE, 0, 0, 0, 0, NULL, NULL},                                              \
        {"workload", EVF_UUID, 0, 0, 0, 0, NULL, NULL},                                            \
        {"from", EVF_TIME, 0, 0, 0, 0, NULL, NULL},                                                \
    {                                                                                              \
        "to", EVF_TIME, 0, 0, 0, 0, NULL, NULL                                                     \
    }

static const struct evfield QUEUE_WAIT_FROM[] = {RUN_SELECTION, EVF_END};
static const struct evfield FAILURE_FROM[] = {RUN_SELECTION, EVF_END};
static const char *const MEMORY[] = {"none", "used", NULL};
static const struct evfield UTILIZATION_FROM[] = {
    {"benchmark", EVF_UUID, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"memory", EVF_ENUM, 0, 0, 0, 0, MEMORY, NULL},
    EVF_END,
};
static const struct evfield THROUGHPUT_FROM[] = {
    {"workload", EVF_UUID, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"offer", EVF_UUID, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    EVF_END,
};

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void selection(struct req *r, const json_t *spec, struct evfrom_runs *q)
{
    memset(q, 0, sizeof *q);
    q->scope = &r->scope;
    q->cluster = str(spec, "cluster");
    q->partition = str(spec, "partition");
    q->workload_class = str(spec, "workload_class");
    q->team = str(spec, "team");
    q->workload_id = str(spec, "workload");
    q->from = str(spec, "from");
    q->to = str(spec, "to");
}

/* Where each figure came from, in the benchmark's source (which the engine ignores). */
static int provenance(json_t *bench, const char *figure, const json_t *spec, struct req *r,
                      json_t *counts_stolen, const char *ptr, struct problems *p)
{
    json_t *src = json_object_get(bench, "source");
    if (src && !json_is_object(src)) {
        json_decref(counts_stolen);
        problems_add(p, ptr,
                     "the benchmark's source must be an object to record where this came from");
        return -1;
    }
    if (!src) {
        src = json_object();
        json_object_set_new(bench, "source", src);
    }
    json_t *ev = json_object_get(src, "evidence_from");
    if (!json_is_object(ev)) {
        ev = json_object();
        json_object_set_new(src, "evidence_from", ev);
    }
    json_t *teams = json_loads(team_scope_param(&r->scope), JSON_DECODE_ANY, NULL);
    json_object_set_new(counts_stolen, "from", json_deep_copy(spec));
    json_object_set_new(counts_stolen, "teams", teams ? teams : json_null());
    json_object_set_new(ev, figure, counts_stolen);
    return 0;
}

/* Typed beside its *_from: refused, so no figure is silently replaced. */
static int typed_too(const json_t *bench, const char *field, const char *ptr, struct problems *p)
{
    if (!json_object_get(bench, field))
        return 0;
    problems_add(p, ptr, "gives %s from evidence and the benchmark also types %s: give one", field,
                 field);
    return 1;
}

static enum store_status queue_wait(struct req *r, json_t *bench, const json_t *spec,
                                    const char *ptr, struct problems *p)
{
    if (typed_too(bench, "queue_wait_s", ptr, p) ||
        typed_too(bench, "queue_wait_quantiles_s", ptr, p))
        return STORE_OK;
    struct evfrom_runs q;
    selection(r, spec, &q);
    json_t *out = NULL;
    enum store_status st = store_evfrom_queue_wait(r->app->store, &q, &out);
    if (st != STORE_OK)
        return st;
    json_int_t runs = json_integer_value(json_object_get(out, "runs"));
    json_t *qs = json_object_get(out, "quantiles");
    if (json_is_true(json_object_get(out, "timed_out")))
        problems_add(p, ptr,
                     "took longer than " EVFROM_TIMEOUT_TEXT
                     " to read: narrow the window (from, to) or the runs");
    else if (runs == 0)
        problems_add(p, ptr, "selects no started GPU run the caller may read: widen the selection");
    else if (runs > EVFROM_MAX_RUNS || !json_is_array(qs) || json_array_size(qs) != 101)
        problems_add(p, ptr, "selects more than %d runs: narrow the window (from, to) or the runs",
                     EVFROM_MAX_RUNS);
    else {
        json_object_set(bench, "queue_wait_quantiles_s", qs);
        json_object_del(out, "quantiles");
        json_object_set_new(out, "figure",
                            json_string("percentile_cont at 0, 0.01, …, 1 of started − submitted "
                                        "(s), GPU runs that started"));
        provenance(bench, "queue_wait_quantiles_s", spec, r, out, ptr, p);
        return STORE_OK;
    }
    json_decref(out);
    return STORE_OK;
}

static enum store_status failures(struct req *r, json_t *opt, json_t *bench, const json_t *spec,
                                  const char *ptr, struct problems *p)
{
    if (!json_object_get(spec, "workload") && !json_object_get(spec, "workload_class")) {
        problems_add(p, ptr, "names a workload or a workload_class whose runs give the rates");
        return STORE_OK;
    }
    if (typed_too(bench, "failure_probability", ptr, p) ||
        typed_too(bench, "crash_rate_per_instance_hour", ptr, p))
        return STORE_OK;
    const json_t *gpi = json_object_get(json_object_get(opt, "offer"), "gpus_per_instance");
    if (!json_is_number(gpi) || json_number_value(gpi) <= 0) {
        problems_add(p, ptr,
                     "needs the option's offer (its gpus_per_instance turns GPU-hours of runs into "
                     "instance-hours)");
        return STORE_OK;
    }
    struct evfrom_runs q;
    selection(r, spec, &q);
    json_t *out = NULL;
    enum store_status st = store_evfrom_failures(r->app->store, &q, &out);
    if (st != STORE_OK)
        return st;
    json_int_t runs = json_integer_value(json_object_get(out, "runs"));
    json_int_t attempts = json_integer_value(json_object_get(out, "attempts"));
    json_int_t failed = json_integer_value(json_object_get(out, "failed"));
    json_int_t crashes = json_integer_value(json_object_get(out, "crashes"));
    double gh = json_number_value(json_object_get(out, "gpu_hours"));
    double ih = gh / json_number_value(gpi);
    if (json_is_true(json_object_get(out, "timed_out")))
        problems_add(p, ptr,
                     "took longer than " EVFROM_TIMEOUT_TEXT
                     " to read: narrow the window (from, to) or the runs");
    else if (runs > EVFROM_MAX_RUNS)
        problems_add(p, ptr, "selects more than %d runs: narrow the window (from, to) or the runs",
                     EVFROM_MAX_RUNS);
    else if (attempts == 0)
        problems_add(p, ptr,
                     "selects no run the caller may read that completed or failed (%lld runs in "
                     "all): widen the selection",
                     (long long)runs);
    else if (!(ih > 0))
        problems_add(p, ptr, "the selected runs have no GPU time: no crash rate per instance-hour");
    else {
        double q_fail = (double)failed / (double)attempts;
        if (q_fail >= 1) {
            problems_add(p, ptr,
                         "every one of the %lld selected attempts failed: a failure probability "
                         "of 1 never completes; look at the runs",
                         (long long)attempts);
            json_decref(out);
            return STORE_OK;
        }
        json_object_set_new(bench, "failure_probability", json_real(q_fail));
        json_object_set_new(bench, "crash_rate_per_instance_hour", json_real((double)crashes / ih));
        json_object_set_new(out, "instance_hours", json_real(ih));
        json_object_set(out, "gpus_per_instance", (json_t *)gpi);
        json_object_set_new(out, "figure",
                            json_string("failure_probability = failed / attempts; "
                                        "crash_rate_per_instance_hour = crashes / (gpu_hours / "
                                        "gpus_per_instance)"));
        provenance(bench, "failure_probability", spec, r, out, ptr, p);
        return STORE_OK;
    }
    json_decref(out);
    return STORE_OK;
}

static enum store_status utilization(struct req *r, json_t *opt, json_t *bench, const json_t *spec,
                                     const char *ptr, struct problems *p)
{
    const char *mem = str(spec, "memory");
    bool want_memory = mem && strcmp(mem, "used") == 0;
    if (typed_too(bench, "gpu_duty_cycle", ptr, p) ||
        typed_too(bench, "input_stall_fraction", ptr, p) ||
        (want_memory && typed_too(bench, "memory_peak_gb", ptr, p)))
        return STORE_OK;
    json_t *out = NULL;
    enum store_status st =
        store_evfrom_utilization(r->app->store, &r->scope, str(spec, "benchmark"), &out);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, ptr, "no benchmark with id %s", str(spec, "benchmark"));
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    json_int_t with_duty = json_integer_value(json_object_get(out, "with_duty"));
    json_int_t idle = json_integer_value(json_object_get(out, "idle"));
    if (with_duty == 0) {
        problems_add(p, ptr, "benchmark %s has no telemetry sample with a duty cycle",
                     str(spec, "benchmark"));
        json_decref(out);
        return STORE_OK;
    }
    json_object_set(bench, "gpu_duty_cycle", json_object_get(out, "duty_mean"));
    json_object_set_new(bench, "input_stall_fraction", json_real((double)idle / (double)with_duty));
    if (want_memory) {
        const json_t *peak = json_object_get(out, "memory_used_peak_gb");
        const json_t *gpu = json_object_get(json_object_get(opt, "offer"), "gpu_memory_gb");
        if (!json_is_number(peak)) {
            problems_add(p, ptr, "memory: used, and the telemetry reports no memory used");
            json_decref(out);
            return STORE_OK;
        }
        /* memory used (a caching allocator's reservation) is an upper bound of what is required:
         * it never makes an option infeasible without the author saying so */
        if (json_is_number(gpu) && json_number_value(peak) > json_number_value(gpu)) {
            problems_add(p, ptr,
                         "the telemetry's peak memory used (%.4g GB, what the allocator held, not "
                         "what the workload requires) exceeds this option's %.4g GB GPU: type "
                         "memory_peak_gb (or the workload's memory_required_gb) instead",
                         json_number_value(peak), json_number_value(gpu));
            json_decref(out);
            return STORE_OK;
        }
        json_object_set_new(bench, "memory_peak_gb", json_real(json_number_value(peak)));
    }
    json_object_set_new(out, "memory_taken",
                        json_string(want_memory ? "used: the peak memory used by the process "
                                                  "(a caching allocator's reservation, an upper "
                                                  "bound of what is required)"
                                                : "none: memory_peak_gb not set from telemetry"));
    json_object_set_new(out, "figure",
                        json_string("gpu_duty_cycle = mean duty cycle of the samples; "
                                    "input_stall_fraction = samples under their upload's "
                                    "idle_below / samples with a duty cycle"));
    provenance(bench, "gpu_duty_cycle", spec, r, out, ptr, p);
    return STORE_OK;
}

static enum store_status throughput(struct req *r, json_t *bench, const json_t *spec,
                                    const char *ptr, struct problems *p)
{
    if (typed_too(bench, "throughput_units_per_s", ptr, p) ||
        typed_too(bench, "throughput_stddev", ptr, p))
        return STORE_OK;
    json_t *out = NULL;
    enum store_status st = store_evfrom_throughput(r->app->store, &r->scope, str(spec, "workload"),
                                                   str(spec, "offer"), &out);
    if (st != STORE_OK)
        return st;
    json_int_t n = json_integer_value(json_object_get(out, "n"));
    if (n < 2) {
        problems_add(p, ptr,
                     "%lld succeeded benchmark%s of that workload on that offer give a throughput "
                     "(the caller may read); at least 2 give a spread",
                     (long long)n, n == 1 ? "" : "s");
        json_decref(out);
        return STORE_OK;
    }
    json_object_set(bench, "throughput_units_per_s", json_object_get(out, "mean"));
    json_object_set(bench, "throughput_stddev", json_object_get(out, "stddev"));
    json_object_set_new(out, "figure",
                        json_string("mean and sample standard deviation (n − 1) of "
                                    "throughput_units_per_s"));
    provenance(bench, "throughput_units_per_s", spec, r, out, ptr, p);
    return STORE_OK;
}

enum store_status evfrom_resolve_scenario(struct req *r, json_t *scenario, struct problems *p)
{
    static const struct {
        const char *key;
        const struct evfield *fields;
    } FROM[] = {{"queue_wait_from", QUEUE_WAIT_FROM},
                {"failure_from", FAILURE_FROM},
                {"utilization_from", UTILIZATION_FROM},
                {"throughput_from", THROUGHPUT_FROM}};
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(scenario, "options"), i, opt)
    {
        json_t *bench = json_object_get(opt, "benchmark");
        if (!json_is_object(bench))
            continue;
        for (size_t k = 0; k < sizeof FROM / sizeof FROM[0]; k++) {
            json_t *spec = json_object_get(bench, FROM[k].key);
            if (!spec)
                continue;
            json_incref(spec);
            json_object_del(bench, FROM[k].key);
            char ptr[96];
            snprintf(ptr, sizeof ptr, "/options/%zu/benchmark/%s", i, FROM[k].key);
            size_t before = p->total;
            if (!json_is_object(spec))
                problems_add(p, ptr, "must be an object");
            else
                evfield_check(spec, FROM[k].fields, ptr, 0, NULL, p);
            enum store_status st = STORE_OK;
            if (p->total == before) {
                if (k == 0)
                    st = queue_wait(r, bench, spec, ptr, p);
                else if (k == 1)
                    st = failures(r, opt, bench, spec, ptr, p);
                else if (k == 2)
                    st = utilization(r, opt, bench, spec, ptr, p);
                else
                    st = throughput(r, bench, spec, ptr, p);
            }
            json_decref(spec);
            if (st != STORE_OK)
                return st;
        }
    }
    return STORE_OK;
}
