/* The seven-item evidence checklist (core/ledger/checklist.h): every item covered from complete
 * facts, then each fact taken away in turn, with the exact sentence it must write and the
 * evidence it must cite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "core/ledger/checklist.h"

enum {
    MEMORY,
    DATA_PATH,
    UTILISATION,
    QUEUE,
    FAILURES,
    SETUP,
    COST,
    ITEM_COUNT,
};

static const char *const ITEM_NAMES[ITEM_COUNT] = {
    "workload and memory profile",
    "data and storage path",
    "effective GPU utilisation",
    "queue and provisioning delay",
    "failure and rerun rate",
    "engineering setup and support",
    "completed-result and service-level cost",
};

#define SHA1 "1111111111111111111111111111111111111111111111111111111111111111"
#define SHA2 "2222222222222222222222222222222222222222222222222222222222222222"

/* Facts under which every item is covered: one workload, one stored comparison with one option
 * whose figures all come from the stored benchmark b-1. */
static const char *const WORKLOADS =
    "[{\"id\":\"w-1\",\"name\":\"train\",\"team\":\"ml\",\"class\":\"training\","
    "\"target_units\":100,\"memory_required_gb\":40,\"dataset_gb\":500,"
    "\"dataset_location\":\"s3://data\",\"team_runs\":25,\"team_run_uploads\":[\"u-runs\"],"
    "\"benchmark_repetitions\":3,\"benchmarks\":[\"b-1\"]}]";
static const char *const CITED =
    "[{\"sha256\":\"" SHA1 "\",\"stored\":true,\"workload_ids\":[\"w-1\"],"
    "\"resolved\":{\"workload\":{\"memory_required_gb\":40},"
    "\"options\":[{\"name\":\"a100\",\"benchmark\":{\"memory_peak_gb\":30,\"transfer_gb\":10,"
    "\"gpu_duty_cycle\":0.8,\"input_stall_fraction\":0.1,\"queue_wait_s\":60,\"setup_s\":3600}}],"
    "\"assumptions\":{\"engineer_rate_per_hour\":100,\"engineer_blocked_fraction\":0.2}},"
    "\"result\":{}}]";
static const char *const OPTIONS =
    "[{\"name\":\"a100\",\"benchmark_id\":\"b-1\",\"data_loading_s\":null,\"telemetry\":false,"
    "\"telemetry_uploads\":[],\"offer_name\":\"offer-a\",\"cluster_runs\":0,"
    "\"cluster_run_uploads\":[]}]";

struct fixture {
    json_t *workloads, *cited, *options;
    int by_caller;
    json_t *result;
};

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *v = json_loads(text, 0, &error);
    if (!v)
        fail_msg("fixture does not parse: %s", error.text);
    return v;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->workloads = parse(WORKLOADS);
    f->cited = parse(CITED);
    f->options = parse(OPTIONS);
    f->by_caller = 1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    json_decref(f->workloads);
    json_decref(f->cited);
    json_decref(f->options);
    json_decref(f->result);
    free(f);
    return 0;
}

/* Pieces of the fixture to change before deciding. */
static json_t *workload(struct fixture *f)
{
    return json_array_get(f->workloads, 0);
}
static json_t *first(struct fixture *f)
{
    return json_array_get(f->cited, 0);
}
static json_t *resolved(struct fixture *f)
{
    return json_object_get(first(f), "resolved");
}
static json_t *bench(struct fixture *f)
{
    return json_object_get(json_array_get(json_object_get(resolved(f), "options"), 0), "benchmark");
}
static json_t *stored(struct fixture *f)
{
    return json_array_get(f->options, 0);
}

static const json_t *decide(struct fixture *f)
{
    json_decref(f->result);
    struct checklist_facts facts = {.workloads = f->workloads,
                                    .cited = f->cited,
                                    .options = checklist_compared(f->cited) ? f->options : NULL,
                                    .cited_by_caller = f->by_caller};
    f->result = checklist_decide(&facts);
    assert_non_null(f->result);
    assert_int_equal(json_array_size(json_object_get(f->result, "items")), ITEM_COUNT);
    return f->result;
}

static const json_t *item(const json_t *result, int k)
{
    const json_t *it = json_array_get(json_object_get(result, "items"), (size_t)k);
    assert_string_equal(json_string_value(json_object_get(it, "item")), ITEM_NAMES[k]);
    return it;
}

static int has_string(const json_t *array, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v) if (strcmp(json_string_value(v), s) == 0) return 1;
    return 0;
}

static void print_missing(const json_t *it)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(it, "missing"), i, v)
        print_message("  missing: %s\n", json_string_value(v));
}

/* Exactly the items in `uncovered` (a bit per item) are not covered, and the whole says so. */
static void assert_uncovered(const json_t *result, unsigned uncovered)
{
    for (int k = 0; k < ITEM_COUNT; k++) {
        const json_t *it = item(result, k);
        int covered = json_is_true(json_object_get(it, "covered"));
        if (covered != !(uncovered & 1u << k)) {
            print_missing(it);
            fail_msg("item '%s' covered=%d, expected %d", ITEM_NAMES[k], covered,
                     !(uncovered & 1u << k));
        }
        /* covered exactly when nothing is missing */
        assert_int_equal(covered, json_array_size(json_object_get(it, "missing")) == 0);
    }
    assert_int_equal(json_is_true(json_object_get(result, "covered")), uncovered == 0);
}

static void assert_missing(const json_t *result, int k, const char *sentence)
{
    const json_t *it = item(result, k);
    if (!has_string(json_object_get(it, "missing"), sentence)) {
        print_missing(it);
        fail_msg("item '%s' does not say: %s", ITEM_NAMES[k], sentence);
    }
}

static void assert_only_missing(const json_t *result, int k, const char *sentence)
{
    assert_missing(result, k, sentence);
    assert_int_equal(json_array_size(json_object_get(item(result, k), "missing")), 1);
}

static void assert_cites(const json_t *result, int k, const char *id)
{
    if (!has_string(json_object_get(item(result, k), "evidence"), id))
        fail_msg("item '%s' does not cite %s", ITEM_NAMES[k], id);
}

static void assert_cites_not(const json_t *result, int k, const char *id)
{
    if (has_string(json_object_get(item(result, k), "evidence"), id))
        fail_msg("item '%s' cites %s", ITEM_NAMES[k], id);
}

#define BIT(k) (1u << (k))

/* ---- all covered, and what each item cites ---- */

static void test_complete_facts_cover_every_item(void **state)
{
    struct fixture *f = *state;
    const json_t *r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, MEMORY, "w-1");
    assert_cites(r, MEMORY, SHA1);
    assert_cites(r, DATA_PATH, "w-1");
    assert_cites(r, DATA_PATH, "b-1");
    assert_cites(r, UTILISATION, "b-1");
    assert_cites(r, QUEUE, "b-1");
    assert_cites(r, FAILURES, "u-runs");
    assert_cites(r, SETUP, SHA1);
    assert_cites(r, SETUP, "b-1");
    assert_cites(r, COST, SHA1);
    /* an id is cited once however many reasons there are */
    assert_int_equal(json_array_size(json_object_get(item(r, SETUP), "evidence")), 2);
}

static void test_compared_is_the_first_when_stored(void **state)
{
    struct fixture *f = *state;
    assert_ptr_equal(checklist_compared(f->cited), first(f));
    json_object_set_new(first(f), "stored", json_false());
    assert_null(checklist_compared(f->cited));
    assert_null(checklist_compared(NULL));
    json_t *empty = json_array();
    assert_null(checklist_compared(empty));
    json_decref(empty);
}

/* ---- the review names no workloads ---- */

static void test_no_workloads(void **state)
{
    struct fixture *f = *state;
    json_array_clear(f->workloads);
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(MEMORY) | BIT(DATA_PATH) | BIT(FAILURES) | BIT(COST));
    assert_only_missing(r, MEMORY, "the review names no workloads");
    assert_only_missing(r, DATA_PATH, "the review names no workloads");
    assert_only_missing(r, FAILURES, "the review names no workloads");
    assert_only_missing(r, COST, "the review names no workloads");
}

/* ---- no compared options: each reason, in each item that needs them ---- */

static void assert_no_options(const json_t *r, const char *reason)
{
    char s[300];
    snprintf(s, sizeof s, "%s, so no option has a memory verdict", reason);
    assert_only_missing(r, MEMORY, s);
    snprintf(s, sizeof s, "%s, so no option's data path can be checked", reason);
    assert_only_missing(r, DATA_PATH, s);
    snprintf(s, sizeof s, "%s, so no option's utilisation can be checked", reason);
    assert_only_missing(r, UTILISATION, s);
    snprintf(s, sizeof s, "%s, so no option's queue delay can be checked", reason);
    assert_only_missing(r, QUEUE, s);
    snprintf(s, sizeof s, "%s, so no option's setup time can be checked", reason);
    assert_only_missing(r, SETUP, s);
}

static void test_nothing_cited(void **state)
{
    struct fixture *f = *state;
    json_array_clear(f->cited);
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(MEMORY) | BIT(DATA_PATH) | BIT(UTILISATION) | BIT(QUEUE) | BIT(SETUP) |
                            BIT(COST));
    assert_no_options(r, "no comparison is cited");
    assert_only_missing(r, COST, "no comparison is cited");
}

static void test_no_stored_comparison_yet(void **state)
{
    struct fixture *f = *state;
    json_array_clear(f->cited);
    f->by_caller = 0;
    const json_t *r = decide(f);
    assert_no_options(r, "no stored comparison for the review's workloads exists yet");
    assert_only_missing(r, COST, "no stored comparison for the review's workloads exists yet");
}

static void test_first_cited_not_stored(void **state)
{
    struct fixture *f = *state;
    json_array_set_new(f->cited, 0, json_pack("{s:s, s:b}", "sha256", SHA2, "stored", 0));
    const json_t *r = decide(f);
    assert_no_options(r, "the first cited comparison is not stored");
    assert_missing(r, COST, "comparison " SHA2 " is not stored");
    assert_missing(r, COST, "the first cited comparison is not stored");
}

/* ---- workload and memory profile ---- */

static void test_memory_workload_fields(void **state)
{
    struct fixture *f = *state;
    json_object_del(workload(f), "target_units");
    json_object_set_new(workload(f), "memory_required_gb", json_null());
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(MEMORY));
    assert_missing(r, MEMORY, "workload 'train' gives no target_units");
    assert_missing(r, MEMORY, "workload 'train' gives no memory_required_gb");
    assert_int_equal(json_array_size(json_object_get(item(r, MEMORY), "missing")), 2);
}

static void test_memory_verdict_needs_peak_or_requirement(void **state)
{
    struct fixture *f = *state;
    /* the benchmark's peak alone is enough */
    json_object_del(json_object_get(resolved(f), "workload"), "memory_required_gb");
    assert_uncovered(decide(f), 0);
    /* the compared workload's requirement alone is enough */
    json_object_set_new(json_object_get(resolved(f), "workload"), "memory_required_gb",
                        json_integer(40));
    json_object_del(bench(f), "memory_peak_gb");
    assert_uncovered(decide(f), 0);
    /* neither */
    json_object_del(json_object_get(resolved(f), "workload"), "memory_required_gb");
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(MEMORY));
    assert_only_missing(r, MEMORY,
                        "option 'a100' has no memory verdict: its benchmark gives no "
                        "memory_peak_gb and the compared workload no memory_required_gb");
}

/* ---- data and storage path ---- */

static void test_data_path_workload_fields(void **state)
{
    struct fixture *f = *state;
    json_object_del(workload(f), "dataset_gb");
    json_object_set_new(workload(f), "dataset_location", json_string(""));
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(DATA_PATH));
    assert_missing(r, DATA_PATH, "workload 'train' gives no dataset size (dataset_gb)");
    assert_missing(r, DATA_PATH, "workload 'train' gives no dataset location (dataset_location)");
}

static void test_data_path_loading_time_is_enough(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "transfer_gb");
    json_object_set_new(stored(f), "data_loading_s", json_real(12.5));
    const json_t *r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, DATA_PATH, "b-1");
}

static void test_data_path_typed_transfer_is_an_assumption(void **state)
{
    struct fixture *f = *state;
    /* the scenario typed its benchmark in: no stored benchmark behind the figures */
    json_object_set_new(stored(f), "benchmark_id", json_null());
    const json_t *r = decide(f);
    assert_missing(r, DATA_PATH,
                   "option 'a100': its benchmark is typed into the scenario, not a stored "
                   "benchmark: transfer_gb there is an assumption, not a measurement");
    assert_cites_not(r, DATA_PATH, "b-1");
}

static void test_data_path_neither_figure(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "transfer_gb");
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(DATA_PATH));
    assert_only_missing(r, DATA_PATH,
                        "option 'a100': its benchmark gives neither transfer_gb nor a "
                        "data-loading time (data_loading_s)");
}

/* ---- effective GPU utilisation ---- */

static void test_utilisation_telemetry_is_enough(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "gpu_duty_cycle");
    json_object_del(bench(f), "input_stall_fraction");
    json_object_set_new(stored(f), "telemetry", json_true());
    assert_uncovered(decide(f), 0);
    json_object_set_new(stored(f), "telemetry", json_false());
    json_object_set_new(stored(f), "telemetry_uploads", json_pack("[s]", "u-tel"));
    const json_t *r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, UTILISATION, "u-tel");
}

static void test_utilisation_typed_figures(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(stored(f), "benchmark_id", json_null());
    const json_t *r = decide(f);
    assert_only_missing(r, UTILISATION,
                        "option 'a100': its benchmark is typed into the scenario, not a stored "
                        "benchmark: the duty cycle and input-stall fraction there is an "
                        "assumption, not a measurement");
}

static void test_utilisation_missing_figures(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "gpu_duty_cycle");
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(UTILISATION));
    assert_only_missing(r, UTILISATION,
                        "option 'a100': its benchmark has no measured gpu_duty_cycle and no "
                        "telemetry is attached");
    json_object_set_new(bench(f), "gpu_duty_cycle", json_real(0.5));
    json_object_del(bench(f), "input_stall_fraction");
    assert_only_missing(decide(f), UTILISATION,
                        "option 'a100': its benchmark has no measured input_stall_fraction and "
                        "no telemetry is attached");
    json_object_del(bench(f), "gpu_duty_cycle");
    assert_only_missing(decide(f), UTILISATION,
                        "option 'a100': its benchmark has no measured gpu_duty_cycle or "
                        "input_stall_fraction and no telemetry is attached");
}

/* ---- queue and provisioning delay ---- */

static void test_queue_runs_of_the_cluster(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "queue_wait_s");
    json_object_set_new(stored(f), "cluster_runs", json_integer(CHECKLIST_MIN_RUNS));
    json_object_set_new(stored(f), "cluster_run_uploads", json_pack("[s]", "u-cluster"));
    const json_t *r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, QUEUE, "u-cluster");

    json_object_set_new(stored(f), "cluster_runs", json_integer(CHECKLIST_MIN_RUNS - 1));
    r = decide(f);
    assert_uncovered(r, BIT(QUEUE));
    assert_only_missing(r, QUEUE,
                        "option 'a100': its benchmark has no measured queue_wait_s, and 19 "
                        "started GPU runs of its cluster ('a100' or 'offer-a') give queue waits "
                        "where 20 are needed");
    json_object_del(stored(f), "offer_name");
    assert_only_missing(decide(f), QUEUE,
                        "option 'a100': its benchmark has no measured queue_wait_s, and 19 "
                        "started GPU runs of its cluster ('a100') give queue waits where 20 are "
                        "needed");
}

static void test_queue_typed_wait_is_not_measured(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(stored(f), "benchmark_id", json_null());
    assert_missing(decide(f), QUEUE,
                   "option 'a100': its benchmark has no measured queue_wait_s, and 0 started GPU "
                   "runs of its cluster ('a100' or 'offer-a') give queue waits where 20 are "
                   "needed");
}

/* ---- failure and rerun rate ---- */

static void test_failures(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(workload(f), "team_runs", json_integer(3));
    json_object_set_new(workload(f), "benchmark_repetitions", json_integer(CHECKLIST_MIN_RUNS));
    const json_t *r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, FAILURES, "b-1");
    assert_cites_not(r, FAILURES, "u-runs");

    json_object_set_new(workload(f), "benchmark_repetitions", json_integer(4));
    r = decide(f);
    assert_uncovered(r, BIT(FAILURES));
    assert_only_missing(r, FAILURES,
                        "workload 'train': the failure probability is backed by 3 GPU runs of "
                        "team 'ml' and class 'training' and 4 benchmark repetitions; at least 20 "
                        "of either are needed");
}

/* ---- engineering setup and support ---- */

static void test_setup_figures(void **state)
{
    struct fixture *f = *state;
    json_object_del(bench(f), "setup_s");
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(SETUP));
    assert_only_missing(r, SETUP, "option 'a100': its benchmark gives no setup_s");
    json_object_set_new(bench(f), "setup_s", json_integer(60));
    json_object_set_new(stored(f), "benchmark_id", json_null());
    assert_missing(decide(f), SETUP,
                   "option 'a100': its benchmark is typed into the scenario, not a stored "
                   "benchmark: setup_s there is an assumption, not a measurement");
}

static void test_setup_assumptions(void **state)
{
    struct fixture *f = *state;
    json_t *a = json_object_get(resolved(f), "assumptions");
    json_object_del(a, "engineer_rate_per_hour");
    json_object_set_new(a, "engineer_blocked_fraction", json_string("0.2"));
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(SETUP));
    assert_missing(r, SETUP,
                   "the scenario gives no engineer rate (assumptions/engineer_rate_per_hour)");
    assert_missing(r, SETUP,
                   "the scenario gives no engineer blocked fraction "
                   "(assumptions/engineer_blocked_fraction)");
}

/* ---- completed-result and service-level cost ---- */

static void test_cost_every_cited_is_stored(void **state)
{
    struct fixture *f = *state;
    json_array_append_new(f->cited, json_pack("{s:s, s:b}", "sha256", SHA2, "stored", 0));
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(COST));
    assert_only_missing(r, COST, "comparison " SHA2 " is not stored");
}

static void test_cost_every_workload_is_covered(void **state)
{
    struct fixture *f = *state;
    json_array_append_new(f->workloads,
                          json_pack("{s:s, s:s, s:i, s:i, s:s, s:i, s:i, s:[]}", "id", "w-2",
                                    "name", "serve", "target_units", 1, "memory_required_gb", 8,
                                    "dataset_location", "nfs", "dataset_gb", 1, "team_runs", 30,
                                    "team_run_uploads"));
    const json_t *r = decide(f);
    assert_uncovered(r, BIT(COST));
    assert_only_missing(r, COST, "no cited comparison is for workload 'serve' (w-2)");
    /* a second cited comparison answering for it covers it */
    json_array_append_new(f->cited, json_pack("{s:s, s:b, s:[s]}", "sha256", SHA2, "stored", 1,
                                              "workload_ids", "w-2"));
    r = decide(f);
    assert_uncovered(r, 0);
    assert_cites(r, COST, SHA2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_complete_facts_cover_every_item),
        T(test_compared_is_the_first_when_stored),
        T(test_no_workloads),
        T(test_nothing_cited),
        T(test_no_stored_comparison_yet),
        T(test_first_cited_not_stored),
        T(test_memory_workload_fields),
        T(test_memory_verdict_needs_peak_or_requirement),
        T(test_data_path_workload_fields),
        T(test_data_path_loading_time_is_enough),
        T(test_data_path_typed_transfer_is_an_assumption),
        T(test_data_path_neither_figure),
        T(test_utilisation_telemetry_is_enough),
        T(test_utilisation_typed_figures),
        T(test_utilisation_missing_figures),
        T(test_queue_runs_of_the_cluster),
        T(test_queue_typed_wait_is_not_measured),
        T(test_failures),
        T(test_setup_figures),
        T(test_setup_assumptions),
        T(test_cost_every_cited_is_stored),
        T(test_cost_every_workload_is_covered),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
