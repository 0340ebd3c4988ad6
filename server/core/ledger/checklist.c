/* The evidence checklist: see checklist.h. */
#include "core/ledger/checklist.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct item {
    json_t *evidence; /* array of ids, without repeats */
    json_t *missing;  /* array of sentences */
};

static void cite(struct item *it, const json_t *id)
{
    if (!json_is_string(id))
        return;
    size_t i;
    json_t *v;
    json_array_foreach(it->evidence, i, v) if (json_equal(v, id)) return;
    json_array_append(it->evidence, (json_t *)id);
}

static void cite_all(struct item *it, const json_t *ids)
{
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) cite(it, v);
}

static void miss(struct item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void miss(struct item *it, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    json_array_append_new(it->missing, json_string(text));
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int has_number(const json_t *obj, const char *key)
{
    return json_is_number(json_object_get(obj, key));
}

static long long count_of(const json_t *obj, const char *key)
{
    return (long long)json_number_value(json_object_get(obj, key));
}

/* What the items are decided from: the facts, and what follows from them. */
struct basis {
    const json_t *workloads; /* the review's workloads with their counts */
    const json_t *cited;     /* [{sha256, stored, workload_ids, resolved?, result?}] */
    const json_t *first;     /* cited[0] when stored, else NULL */
    const json_t *resolved;  /* first's resolved scenario */
    const json_t *options;   /* per option of first: stored facts */
    const char *none_reason; /* why there are no compared options, when first is NULL */
    const json_t *unmapped;  /* class labels without a tier */
};

static void item_workload_memory(const struct basis *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        cite(it, json_object_get(w, "id"));
        if (!has_number(w, "target_units"))
            miss(it, "workload '%s' gives no target_units", str(w, "name"));
        if (!has_number(w, "memory_required_gb"))
            miss(it, "workload '%s' gives no memory_required_gb", str(w, "name"));
    }
    if (!f->first) {
        miss(it, "%s, so no option has a memory verdict", f->none_reason);
        return;
    }
    cite(it, json_object_get(f->first, "sha256"));
    int workload_memory =
        has_number(json_object_get(f->resolved, "workload"), "memory_required_gb");
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        if (!workload_memory && !has_number(json_object_get(opt, "benchmark"), "memory_peak_gb"))
            miss(it,
                 "option '%s' has no memory verdict: its benchmark gives no memory_peak_gb and "
                 "the compared workload no memory_required_gb",
                 str(opt, "name"));
    }
}

/* A figure counts as measured only when it comes from a stored benchmark the scenario named by
 * id: numbers typed into a scenario are assumptions, whatever their field is called. */
static int measured(const json_t *stored, const json_t *opt, const char *field)
{
    return json_is_string(json_object_get(stored, "benchmark_id")) &&
           has_number(json_object_get(opt, "benchmark"), field);
}

static void miss_typed(struct item *it, const json_t *stored, const json_t *opt, const char *what)
{
    if (!json_is_string(json_object_get(stored, "benchmark_id")))
        miss(it,
             "option '%s': its benchmark is typed into the scenario, not a stored benchmark: "
             "%s there is an assumption, not a measurement",
             str(opt, "name"), what);
}

static void item_data_path(const struct basis *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        cite(it, json_object_get(w, "id"));
        if (!has_number(w, "dataset_gb"))
            miss(it, "workload '%s' gives no dataset size (dataset_gb)", str(w, "name"));
        if (!*str(w, "dataset_location"))
            miss(it, "workload '%s' gives no dataset location (dataset_location)", str(w, "name"));
    }
    if (!f->first) {
        miss(it, "%s, so no option's data path can be checked", f->none_reason);
        return;
    }
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "transfer_gb") || has_number(stored, "data_loading_s"))
            cite(it, json_object_get(stored, "benchmark_id"));
        else if (has_number(json_object_get(opt, "benchmark"), "transfer_gb"))
            miss_typed(it, stored, opt, "transfer_gb");
        else
            miss(it,
                 "option '%s': its benchmark gives neither transfer_gb nor a data-loading "
                 "time (data_loading_s)",
                 str(opt, "name"));
    }
}

static void item_utilisation(const struct basis *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's utilisation can be checked", f->none_reason);
        return;
    }
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        const json_t *bench = json_object_get(opt, "benchmark");
        int both = measured(stored, opt, "gpu_duty_cycle") &&
                   measured(stored, opt, "input_stall_fraction");
        int telemetry = json_is_true(json_object_get(stored, "telemetry")) ||
                        json_array_size(json_object_get(stored, "telemetry_uploads")) > 0;
        if (both || telemetry) {
            cite(it, json_object_get(stored, "benchmark_id"));
            cite_all(it, json_object_get(stored, "telemetry_uploads"));
            continue;
        }
        if (has_number(bench, "gpu_duty_cycle") && has_number(bench, "input_stall_fraction")) {
            miss_typed(it, stored, opt, "the duty cycle and input-stall fraction");
            continue;
        }
        miss(it, "option '%s': its benchmark has no measured %s%s%s and no telemetry is attached",
             str(opt, "name"), has_number(bench, "gpu_duty_cycle") ? "" : "gpu_duty_cycle",
             !has_number(bench, "gpu_duty_cycle") && !has_number(bench, "input_stall_fraction")
                 ? " or "
                 : "",
             has_number(bench, "input_stall_fraction") ? "" : "input_stall_fraction");
    }
}

static void item_queue(const struct basis *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's queue delay can be checked", f->none_reason);
        return;
    }
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "queue_wait_s")) {
            cite(it, json_object_get(stored, "benchmark_id"));
            continue;
        }
        long long runs = count_of(stored, "cluster_runs");
        if (runs >= CHECKLIST_MIN_RUNS) {
            cite_all(it, json_object_get(stored, "cluster_run_uploads"));
            continue;
        }
        char clusters[300];
        if (*str(stored, "offer_name"))
            snprintf(clusters, sizeof clusters, "'%s' or '%s'", str(opt, "name"),
                     str(stored, "offer_name"));
        else
            snprintf(clusters, sizeof clusters, "'%s'", str(opt, "name"));
        miss(it,
             "option '%s': its benchmark has no measured queue_wait_s, and %lld started GPU runs "
             "of its cluster (%s) give queue waits where %d are needed",
             str(opt, "name"), runs, clusters, CHECKLIST_MIN_RUNS);
    }
}

static void item_failures(const struct basis *f, struct item *it)
{
    size_t i;
    json_t *w;
    json_array_foreach(f->workloads, i, w)
    {
        long long runs = count_of(w, "team_runs");
        long long reps = count_of(w, "benchmark_repetitions");
        if (runs >= CHECKLIST_MIN_RUNS)
            cite_all(it, json_object_get(w, "team_run_uploads"));
        else if (reps >= CHECKLIST_MIN_RUNS)
            cite_all(it, json_object_get(w, "benchmarks"));
        else
            miss(it,
                 "workload '%s': the failure probability is backed by %lld GPU runs of team '%s' "
                 "and class '%s' and %lld benchmark repetitions; at least %d of either are needed",
                 str(w, "name"), runs, str(w, "team"), str(w, "class"), reps, CHECKLIST_MIN_RUNS);
    }
    if (json_array_size(it->missing) && json_array_size(f->unmapped)) {
        char labels[300] = "";
        size_t used = 0;
        const json_t *l;
        json_array_foreach(f->unmapped, i, l)
        {
            int n = snprintf(labels + used, sizeof labels - used, "%s'%s'", used ? ", " : "",
                             json_string_value(l) ? json_string_value(l) : "");
            if (n < 0 || (size_t)n >= sizeof labels - used) {
                labels[used] = '\0';
                break;
            }
            used += (size_t)n;
        }
        miss(it,
             "runs with the class labels %s count as exploratory until an owner maps each to a "
             "tier (PUT /api/v1/workload-classes/{label})",
             labels);
    }
}

static void item_setup(const struct basis *f, struct item *it)
{
    if (!f->first) {
        miss(it, "%s, so no option's setup time can be checked", f->none_reason);
        return;
    }
    cite(it, json_object_get(f->first, "sha256"));
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(f->resolved, "options"), i, opt)
    {
        const json_t *stored = json_array_get(f->options, i);
        if (measured(stored, opt, "setup_s"))
            cite(it, json_object_get(stored, "benchmark_id"));
        else if (has_number(json_object_get(opt, "benchmark"), "setup_s"))
            miss_typed(it, stored, opt, "setup_s");
        else
            miss(it, "option '%s': its benchmark gives no setup_s", str(opt, "name"));
    }
    const json_t *a = json_object_get(f->resolved, "assumptions");
    if (!has_number(a, "engineer_rate_per_hour"))
        miss(it, "the scenario gives no engineer rate (assumptions/engineer_rate_per_hour)");
    if (!has_number(a, "engineer_blocked_fraction"))
        miss(it, "the scenario gives no engineer blocked fraction "
                 "(assumptions/engineer_blocked_fraction)");
}

static void item_cost(const struct basis *f, struct item *it)
{
    size_t i, k;
    json_t *c, *w;
    int any = 0;
    json_array_foreach(f->cited, i, c)
    {
        if (json_is_true(json_object_get(c, "stored"))) {
            cite(it, json_object_get(c, "sha256"));
            any = 1;
        } else
            miss(it, "comparison %s is not stored", str(c, "sha256"));
    }
    if (!any) {
        miss(it, "%s", f->none_reason);
        return;
    }
    json_array_foreach(f->workloads, i, w)
    {
        int covered = 0;
        json_array_foreach(f->cited, k, c)
        {
            size_t j;
            json_t *id;
            json_array_foreach(json_object_get(c, "workload_ids"), j, id) covered |=
                json_equal(id, json_object_get(w, "id"));
        }
        if (!covered)
            miss(it, "no cited comparison is for workload '%s' (%s)", str(w, "name"), str(w, "id"));
    }
}

/* docs/reviews.md's table, in its order. per_workload: the item needs the review's workloads. */
static const struct {
    const char *name;
    void (*decide)(const struct basis *, struct item *);
    int per_workload;
} ITEMS[] = {
    {"workload and memory profile", item_workload_memory, 1},
    {"data and storage path", item_data_path, 1},
    {"effective GPU utilisation", item_utilisation, 0},
    {"queue and provisioning delay", item_queue, 0},
    {"failure and rerun rate", item_failures, 1},
    {"engineering setup and support", item_setup, 0},
    {"completed-result and service-level cost", item_cost, 1},
};

const json_t *checklist_compared(const json_t *cited)
{
    const json_t *first = json_array_get(cited, 0);
    return json_is_true(json_object_get(first, "stored")) ? first : NULL;
}

json_t *checklist_decide(const struct checklist_facts *facts)
{
    struct basis basis = {
        .workloads = facts->workloads, .cited = facts->cited, .unmapped = facts->unmapped_classes};
    const struct basis *f = &basis;
    if (json_array_size(facts->cited) == 0)
        basis.none_reason = facts->cited_by_caller
                                ? "no comparison is cited"
                                : "no stored comparison for the review's workloads exists yet";
    else if (!checklist_compared(facts->cited))
        basis.none_reason = "the first cited comparison is not stored";
    else {
        basis.first = checklist_compared(facts->cited);
        basis.resolved = json_object_get(basis.first, "resolved");
        basis.options = facts->options;
    }

    json_t *items = json_array();
    int all = 1;
    for (size_t i = 0; i < sizeof ITEMS / sizeof ITEMS[0]; i++) {
        struct item it = {json_array(), json_array()};
        if (ITEMS[i].per_workload && !json_array_size(f->workloads))
            miss(&it, "the review names no workloads");
        ITEMS[i].decide(f, &it);
        int covered = json_array_size(it.missing) == 0;
        all &= covered;
        int contradicted = 0;
        size_t k;
        const json_t *c;
        json_array_foreach(facts->typed_vs_evidence, k, c) contradicted |=
            json_is_true(json_object_get(c, "contradicted")) &&
            strcmp(str(c, "item"), ITEMS[i].name) == 0;
        json_array_append_new(items, json_pack("{s:s, s:b, s:s, s:o, s:o}", "item", ITEMS[i].name,
                                               "covered", covered, "status",
                                               !covered       ? "missing"
                                               : contradicted ? "contradicted"
                                                              : "covered",
                                               "evidence", it.evidence, "missing", it.missing));
    }
    json_t *unmapped = json_is_array(facts->unmapped_classes)
                           ? json_deep_copy(facts->unmapped_classes)
                           : json_array();
    json_t *tve = json_is_array(facts->typed_vs_evidence) ? json_deep_copy(facts->typed_vs_evidence)
                                                          : json_array();
    return json_pack("{s:b, s:o, s:o, s:o}", "covered", all, "items", items, "unmapped_classes",
                     unmapped, "typed_vs_evidence", tve);
}
