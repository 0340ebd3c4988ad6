/* The cost engine against its contract (docs/cost-model.md): the two worked examples
 * to 1e-9, then properties a platform owner relies on — the breakdown adds up, cost moves the
 * right way with price and throughput, limits of λ and q, infeasible options never win, the
 * reported break-even values really flip the winner, the Monte Carlo agrees with the closed
 * form, the output is deterministic, and every bad scenario names its field. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/cost/cost.h"
#include "core/jcs.h"

#define SPEC_DIR CAPLEDGER_DATA_DIR "/spec/"
#define TRAINING SPEC_DIR "example-training.json"
#define INFERENCE SPEC_DIR "example-inference.json"
#define TRAINING2 SPEC_DIR "example-training-v2.json"
#define INFERENCE2 SPEC_DIR "example-inference-v2.json"
#define RISK2 SPEC_DIR "example-risk-v2.json"

static json_t *load_file(const char *path)
{
    json_error_t error;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        fail_msg("%s:%d:%d: %s", path, error.line, error.column, error.text);
    return doc;
}

/* Engine 1's worked examples and every test written for engine 1 run under engine 1,
 * explicitly ("engine": 1), with their expected figures unchanged. */
static json_t *load(const char *path)
{
    json_t *doc = load_file(path);
    if (strstr(path, "-v2") == NULL && strstr(path, ".expected.json") == NULL)
        json_object_set_new(doc, "engine", json_integer(1));
    return doc;
}

/* Compares; fails the test when the scenario is refused. */
static json_t *compare_ok(const json_t *scenario)
{
    struct problems errs;
    problems_init(&errs);
    json_t *result = cost_compare(scenario, &errs);
    if (!result)
        fail_msg("refused: %s: %s", errs.count ? errs.items[0].pointer : "?",
                 errs.count ? errs.items[0].message : "?");
    problems_free(&errs);
    return result;
}

/* The value at a JSON Pointer (no ~ escapes in the paths used here); NULL when absent. */
static json_t *at(const json_t *root, const char *pointer)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", pointer);
    json_t *cur = (json_t *)root;
    for (char *tok = strtok(buf, "/"); tok && cur; tok = strtok(NULL, "/"))
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
                                 : json_object_get(cur, tok);
    return cur;
}

/* Sets (value != NULL, stolen) or deletes (value == NULL) the member at pointer. */
static void set_at(json_t *root, const char *pointer, json_t *value)
{
    char parent[512];
    const char *slash = strrchr(pointer, '/');
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - pointer), pointer);
    json_t *p = parent[0] ? at(root, parent) : root;
    assert_non_null(p);
    const char *key = slash + 1;
    if (json_is_array(p)) {
        size_t i = strtoul(key, NULL, 10);
        if (value)
            assert_int_equal(json_array_set_new(p, i, value), 0);
        else
            assert_int_equal(json_array_remove(p, i), 0);
    } else if (value) {
        assert_int_equal(json_object_set_new(p, key, value), 0);
    } else {
        json_object_del(p, key);
    }
}

static double num_at(const json_t *root, const char *pointer)
{
    json_t *v = at(root, pointer);
    if (!json_is_number(v))
        fail_msg("%s is not a number", pointer);
    return json_number_value(v);
}

/* A number of option i of a comparison: member may be a path such as "breakdown/useful". */
static double option_num(const json_t *result, size_t i, const char *member)
{
    char p[160];
    snprintf(p, sizeof p, "/options/%zu/%s", i, member);
    return num_at(result, p);
}

static const char *str_at(const json_t *root, const char *pointer)
{
    json_t *v = at(root, pointer);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Every member of expected must be in actual: numbers to a relative 1e-9, null as null,
 * strings, booleans and array lengths exactly. */
static void expect_subset(const json_t *expected, const json_t *actual, const char *pointer)
{
    char child[512];
    if (json_is_number(expected)) {
        if (!json_is_number(actual))
            fail_msg("%s: expected a number, got type %d", pointer,
                     actual ? (int)json_typeof(actual) : -1);
        double e = json_number_value(expected), a = json_number_value(actual);
        double err = e == a ? 0 : fabs(e - a) / fmax(fabs(e), fabs(a));
        if (err > 1e-9)
            fail_msg("%s: expected %.17g, got %.17g (relative error %.3g)", pointer, e, a, err);
        return;
    }
    if (!actual || json_typeof(expected) != json_typeof(actual))
        fail_msg("%s: type differs", pointer);
    if (json_is_string(expected)) {
        if (strcmp(json_string_value(expected), json_string_value(actual)) != 0)
            fail_msg("%s: expected \"%s\", got \"%s\"", pointer, json_string_value(expected),
                     json_string_value(actual));
    } else if (json_is_array(expected)) {
        if (json_array_size(expected) != json_array_size(actual))
            fail_msg("%s: expected %zu items, got %zu", pointer, json_array_size(expected),
                     json_array_size(actual));
        for (size_t i = 0; i < json_array_size(expected); i++) {
            snprintf(child, sizeof child, "%s/%zu", pointer, i);
            expect_subset(json_array_get(expected, i), json_array_get(actual, i), child);
        }
    } else if (json_is_object(expected)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)expected, key, v)
        {
            snprintf(child, sizeof child, "%s/%s", pointer, key);
            expect_subset(v, json_object_get(actual, key), child);
        }
    }
}

static void check_example(const char *scenario_path, const char *expected_path)
{
    json_t *scenario = load(scenario_path), *expected = load(expected_path);
    json_t *result = compare_ok(scenario);
    expect_subset(expected, result, "");
    json_decref(result);
    json_decref(expected);
    json_decref(scenario);
}

static void test_example_training(void **state)
{
    (void)state;
    check_example(TRAINING, SPEC_DIR "example-training.expected.json");
}

static void test_example_inference(void **state)
{
    (void)state;
    check_example(INFERENCE, SPEC_DIR "example-inference.expected.json");
}

/* ---- properties --------------------------------------------------------------------------- */

static void check_breakdown_sums(const char *path, const char *total_key)
{
    json_t *scenario = load(path);
    json_t *result = compare_ok(scenario);
    size_t i;
    json_t *opt;
    json_array_foreach(json_object_get(result, "options"), i, opt)
    {
        double sum = 0;
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(opt, "breakdown"), key, v) sum += json_number_value(v);
        double total = json_number_value(json_object_get(opt, total_key));
        assert_true(total > 0);
        assert_true(fabs(sum - total) <= 1e-12 * total);
    }
    json_decref(result);
    json_decref(scenario);
}

static void test_breakdown_sums_to_total(void **state)
{
    (void)state;
    check_breakdown_sums(TRAINING, "expected_cost_per_outcome");
    check_breakdown_sums(INFERENCE, "expected_total_cost");
}

/* Expected cost per outcome of option index with the input at pointer set to value. */
static double expected_with(const char *path, const char *pointer, double value, size_t index)
{
    json_t *scenario = load(path);
    if (pointer)
        set_at(scenario, pointer, json_real(value));
    json_t *result = compare_ok(scenario);
    double cost = option_num(result, index, "expected_cost_per_outcome");
    json_decref(result);
    json_decref(scenario);
    return cost;
}

static void test_cost_rises_with_price_falls_with_throughput(void **state)
{
    (void)state;
    for (size_t i = 0; i < 4; i++) {
        char price[96], thr[96];
        snprintf(price, sizeof price, "/options/%zu/offer/price_per_hour", i);
        snprintf(thr, sizeof thr, "/options/%zu/benchmark/throughput_units_per_s", i);
        json_t *scenario = load(TRAINING);
        double p0 = num_at(scenario, price), r0 = num_at(scenario, thr);
        json_decref(scenario);
        double base = expected_with(TRAINING, NULL, 0, i);
        assert_true(expected_with(TRAINING, price, p0 * 1.1, i) > base);
        assert_true(expected_with(TRAINING, price, p0 * 0.9, i) < base);
        assert_true(expected_with(TRAINING, thr, r0 * 1.1, i) < base);
        assert_true(expected_with(TRAINING, thr, r0 * 0.9, i) > base);
    }
    for (size_t i = 0; i < 3; i++) {
        char price[96];
        snprintf(price, sizeof price, "/options/%zu/offer/price_per_hour", i);
        json_t *scenario = load(INFERENCE);
        double p0 = num_at(scenario, price);
        json_decref(scenario);
        double base = expected_with(INFERENCE, NULL, 0, i);
        assert_true(expected_with(INFERENCE, price, p0 * 1.1, i) > base);
        assert_true(expected_with(INFERENCE, price, p0 * 0.9, i) < base);
    }
}

static void test_small_interruption_rate_approaches_no_interruptions(void **state)
{
    (void)state;
    /* With the interval fixed, only λ changes between the runs. */
    json_t *scenario = load(TRAINING);
    set_at(scenario, "/options/0/benchmark/checkpoint_interval_s", json_real(3600));
    set_at(scenario, "/options/0/offer/interruption_rate_per_hour", NULL);
    json_t *none = compare_ok(scenario);
    double previous_gap = INFINITY;
    for (double rate = 1e-2; rate >= 1e-8; rate /= 100) {
        set_at(scenario, "/options/0/offer/interruption_rate_per_hour", json_real(rate));
        json_t *some = compare_ok(scenario);
        double a = num_at(some, "/options/0/expected_cost_per_outcome");
        double b = num_at(none, "/options/0/expected_cost_per_outcome");
        double gap = (a - b) / b;
        assert_true(gap > 0); /* interruptions only add cost */
        assert_true(gap < previous_gap);
        previous_gap = gap;
        json_decref(some);
    }
    assert_true(previous_gap < 1e-7);
    json_decref(none);
    json_decref(scenario);
}

static void test_no_failures_no_failed_attempts(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    set_at(scenario, "/assumptions/failure_probability", json_real(0));
    json_t *result = compare_ok(scenario);
    for (size_t i = 0; i < 4; i++)
        assert_true(option_num(result, i, "breakdown/failed_attempts") == 0);
    json_decref(result);
    set_at(scenario, "/assumptions/failure_probability", json_real(1e-9));
    result = compare_ok(scenario);
    double failed = num_at(result, "/options/0/breakdown/failed_attempts");
    assert_true(failed > 0 &&
                failed < 1e-6 * num_at(result, "/options/0/expected_cost_per_outcome"));
    json_decref(result);
    json_decref(scenario);
}

static bool contains_name(const json_t *names, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) if (strcmp(json_string_value(v), name) == 0) return true;
    return false;
}

static void test_infeasible_options_never_rank(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    /* The cheapest option by far, but not available: it must not win or be a new winner. */
    set_at(scenario, "/options/1/offer/price_per_hour", json_real(1));
    set_at(scenario, "/options/1/offer/available", json_false());
    json_t *result = compare_ok(scenario);
    for (size_t i = 0; i < 4; i++) {
        char p[96];
        snprintf(p, sizeof p, "/options/%zu", i);
        json_t *opt = at(result, p);
        const char *name = json_string_value(json_object_get(opt, "name"));
        bool feasible = json_is_true(json_object_get(opt, "feasible"));
        assert_int_equal(contains_name(json_object_get(result, "ranking"), name), feasible);
        assert_int_equal(contains_name(json_object_get(result, "ranking_by_expected"), name),
                         feasible);
    }
    assert_false(json_is_true(at(result, "/options/1/feasible")));
    assert_string_equal(str_at(result, "/options/1/infeasible_reasons/0"), "supply");
    assert_false(json_is_true(at(result, "/options/3/feasible"))); /* memory */
    assert_string_equal(str_at(result, "/winner"), "h100-reserved");
    size_t i;
    json_t *be;
    json_array_foreach(json_object_get(result, "break_even"), i, be)
    {
        assert_string_not_equal(json_string_value(json_object_get(be, "new_winner")),
                                "h100-on-demand");
        assert_string_not_equal(json_string_value(json_object_get(be, "new_winner")),
                                "l40s-on-demand");
    }
    json_decref(result);
    json_decref(scenario);
}

/* Substituting each reported break-even value a little beyond it flips the expected-cost winner
 * to new_winner; a little short of it does not yet. */
static void check_break_even_flips(const char *path)
{
    json_t *scenario = load(path);
    json_t *result = compare_ok(scenario);
    const char *winner = str_at(result, "/winner_by_expected");
    assert_non_null(winner);
    assert_true(json_array_size(json_object_get(result, "break_even")) > 0);
    size_t i;
    json_t *be;
    json_array_foreach(json_object_get(result, "break_even"), i, be)
    {
        const char *input = json_string_value(json_object_get(be, "input"));
        double current = json_number_value(json_object_get(be, "current"));
        double flips = json_number_value(json_object_get(be, "flips_at"));
        const char *new_winner = json_string_value(json_object_get(be, "new_winner"));
        assert_true(num_at(scenario, input) == current);
        double direction = flips > current ? 1 : -1;
        for (int side = -1; side <= 1; side += 2) {
            json_t *changed = json_deep_copy(scenario);
            set_at(changed, input, json_real(flips * (1 + side * direction * 1e-6)));
            json_t *r = compare_ok(changed);
            const char *w = str_at(r, "/winner_by_expected");
            assert_non_null(w);
            if (side > 0 && strcmp(w, new_winner) != 0)
                fail_msg("%s just beyond %.17g: winner %s, reported %s", input, flips, w,
                         new_winner);
            if (side < 0 && strcmp(w, winner) != 0)
                fail_msg("%s just short of %.17g: winner already %s", input, flips, w);
            json_decref(r);
            json_decref(changed);
        }
    }
    json_decref(result);
    json_decref(scenario);
}

static void test_break_even_really_flips(void **state)
{
    (void)state;
    check_break_even_flips(TRAINING);
    check_break_even_flips(INFERENCE);
}

static void test_monte_carlo_mean_matches_closed_form(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *result = compare_ok(scenario);
    for (size_t i = 0; i < 4; i++) {
        double closed = option_num(result, i, "expected_cost_per_outcome");
        double mean = option_num(result, i, "cost_per_outcome_quantiles/mean");
        if (fabs(mean - closed) > 0.02 * closed)
            fail_msg("option %zu: Monte Carlo mean %.6g vs closed form %.6g", i, mean, closed);
        double t_closed = option_num(result, i, "time_to_result_s");
        double t_mean = option_num(result, i, "time_to_result_quantiles/mean");
        assert_true(fabs(t_mean - t_closed) <= 0.02 * t_closed);
    }
    json_decref(result);

    /* Throughput spread: E[1/r] > 1/E[r], so the mean cost comes out higher. */
    for (size_t i = 0; i < 4; i++) {
        char p[128];
        snprintf(p, sizeof p, "/options/%zu/benchmark/throughput_stddev", i);
        set_at(scenario, p,
               json_real(0.25 * option_num(scenario, i, "benchmark/throughput_units_per_s")));
    }
    result = compare_ok(scenario);
    for (size_t i = 0; i < 4; i++) {
        double closed = option_num(result, i, "expected_cost_per_outcome");
        double mean = option_num(result, i, "cost_per_outcome_quantiles/mean");
        if (!(mean > closed * 1.02))
            fail_msg("option %zu with spread: Monte Carlo mean %.6g, closed form %.6g", i, mean,
                     closed);
    }
    json_decref(result);
    json_decref(scenario);
}

/* The charts document: the cost distribution's percentiles 1..99, non-decreasing, whose 50th,
 * 90th and 99th are the comparison's own quantiles (the same trials); for inference the
 * replicas of each hour of the demand profile. The comparison itself is unchanged by it. */
static void test_charts(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *result = compare_ok(scenario);
    struct problems p;
    problems_init(&p);
    json_t *charts = cost_charts(scenario, &p);
    assert_non_null(charts);
    assert_null(json_object_get(json_array_get(json_object_get(result, "options"), 0),
                                "cost_per_outcome_percentiles"));
    for (size_t i = 0; i < 4; i++) {
        char ptr[128];
        snprintf(ptr, sizeof ptr, "/options/%zu/cost_per_outcome_percentiles", i);
        json_t *pct = at(charts, ptr);
        assert_int_equal(json_array_size(pct), 99);
        for (size_t k = 1; k < 99; k++)
            assert_true(json_number_value(json_array_get(pct, k)) >=
                        json_number_value(json_array_get(pct, k - 1)));
        assert_true(json_number_value(json_array_get(pct, 0)) <
                    json_number_value(json_array_get(pct, 98)));
        assert_true(json_number_value(json_array_get(pct, 49)) ==
                    option_num(result, i, "cost_per_outcome_quantiles/p50"));
        assert_true(json_number_value(json_array_get(pct, 89)) ==
                    option_num(result, i, "cost_per_outcome_quantiles/p90"));
        assert_true(json_number_value(json_array_get(pct, 98)) ==
                    option_num(result, i, "cost_per_outcome_quantiles/p99"));
        snprintf(ptr, sizeof ptr, "/options/%zu/replicas_by_profile_hour", i);
        assert_true(json_is_null(at(charts, ptr)));
    }
    json_decref(charts);
    json_decref(result);
    json_decref(scenario);

    /* Inference: a dedicated option holds its peak every hour; an autoscaled one follows the
     * demand, never below min_replicas + spares, and reaches its peak at the busiest hour. */
    scenario = load(INFERENCE);
    result = compare_ok(scenario);
    charts = cost_charts(scenario, &p);
    assert_non_null(charts);
    size_t hours = json_array_size(at(scenario, "/service/demand_rps_by_hour"));
    for (size_t i = 0; i < json_array_size(json_object_get(result, "options")); i++) {
        char ptr[128];
        snprintf(ptr, sizeof ptr, "/options/%zu/replicas_by_profile_hour", i);
        json_t *hourly = at(charts, ptr);
        assert_int_equal(json_array_size(hourly), hours);
        double peak = option_num(result, i, "peak_replicas"), most = 0;
        for (size_t h = 0; h < hours; h++)
            most = fmax(most, json_number_value(json_array_get(hourly, h)));
        if (fabs(most - peak) > 1e-9 * peak)
            fail_msg("option %zu: hourly replicas peak at %.6g, the comparison says %.6g", i, most,
                     peak);
        snprintf(ptr, sizeof ptr, "/options/%zu/cost_per_outcome_percentiles", i);
        assert_true(json_is_null(at(charts, ptr)));
    }
    json_decref(charts);
    json_decref(result);
    json_decref(scenario);
    problems_free(&p);
}

/* The Monte Carlo's per-segment model with many short segments (normal sums) and with few
 * long ones (term by term) both agree with the closed form under heavy interruptions. */
static void test_monte_carlo_under_interruptions(void **state)
{
    (void)state;
    static const double intervals_s[] = {600, 40000, 150000};
    for (size_t k = 0; k < sizeof intervals_s / sizeof intervals_s[0]; k++) {
        json_t *scenario = load(TRAINING);
        set_at(scenario, "/options/0/offer/interruption_rate_per_hour", json_real(0.1));
        set_at(scenario, "/options/0/benchmark/checkpoint_interval_s", json_real(intervals_s[k]));
        set_at(scenario, "/assumptions/failure_probability", json_real(0.3));
        json_t *result = compare_ok(scenario);
        double closed = num_at(result, "/options/0/expected_cost_per_outcome");
        double mean = num_at(result, "/options/0/cost_per_outcome_quantiles/mean");
        if (fabs(mean - closed) > 0.02 * closed)
            fail_msg("interval %g: Monte Carlo mean %.6g vs closed form %.6g", intervals_s[k], mean,
                     closed);
        assert_true(num_at(result, "/options/0/cost_per_outcome_quantiles/p99") >
                    num_at(result, "/options/0/cost_per_outcome_quantiles/p50"));
        json_decref(result);
        json_decref(scenario);
    }
}

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17));
}

static void test_deterministic(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *a = compare_ok(scenario), *b = compare_ok(scenario);
    char *da = dump(a), *db = dump(b);
    assert_string_equal(da, db);
    set_at(scenario, "/assumptions/seed", json_integer(8));
    json_t *c = compare_ok(scenario);
    assert_true(num_at(c, "/options/0/cost_per_outcome_quantiles/p90") !=
                num_at(a, "/options/0/cost_per_outcome_quantiles/p90"));
    assert_true(num_at(c, "/seed") == 8);
    /* Same closed form whatever the seed. */
    assert_true(num_at(c, "/options/0/expected_cost_per_outcome") ==
                num_at(a, "/options/0/expected_cost_per_outcome"));
    free(da);
    free(db);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(scenario);
}

static void test_input_sha256_is_of_canonical_bytes(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *result = compare_ok(scenario);
    size_t len;
    char *canonical = jcs_serialize(scenario, &len);
    assert_non_null(canonical);
    unsigned char digest[32];
    crypto_hash_sha256(digest, (unsigned char *)canonical, len);
    char hex[65];
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    assert_string_equal(str_at(result, "/input_sha256"), hex);
    assert_string_equal(str_at(result, "/engine_version"), COST_ENGINE_1_VERSION);
    free(canonical);
    json_decref(result);
    json_decref(scenario);
}

static void test_load_points_in_any_order(void **state)
{
    (void)state;
    json_t *scenario = load(INFERENCE);
    json_t *sorted = compare_ok(scenario);
    for (size_t i = 0; i < 3; i++) {
        char p[96];
        snprintf(p, sizeof p, "/options/%zu/benchmark/load_points", i);
        json_t *points = at(scenario, p), *reversed = json_array();
        for (size_t k = json_array_size(points); k-- > 0;)
            json_array_append(reversed, json_array_get(points, k));
        /* then rotate so it is neither sorted nor reversed */
        json_array_append(reversed, json_array_get(reversed, 0));
        json_array_remove(reversed, 0);
        set_at(scenario, p, reversed);
    }
    json_t *shuffled = compare_ok(scenario);
    json_object_del(sorted, "input_sha256");
    json_object_del(shuffled, "input_sha256");
    char where[256];
    if (cost_compare_results(sorted, shuffled, 0, where, sizeof where) != 0)
        fail_msg("differs at %s", where);
    json_decref(sorted);
    json_decref(shuffled);
    json_decref(scenario);
}

static void assert_no_nonfinite(const json_t *v)
{
    if (json_is_real(v))
        assert_true(isfinite(json_real_value(v)));
    size_t i;
    json_t *child;
    const char *key;
    if (json_is_array(v))
        json_array_foreach(v, i, child) assert_no_nonfinite(child);
    if (json_is_object(v))
        json_object_foreach((json_t *)v, key, child) assert_no_nonfinite(child);
}

static void test_spot_that_cannot_finish_is_infeasible(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    set_at(scenario, "/options/0/offer/interruption_rate_per_hour", json_real(100));
    set_at(scenario, "/options/0/benchmark/checkpoint_interval_s", json_real(7200));
    json_t *result = compare_ok(scenario);
    assert_false(json_is_true(at(result, "/options/0/feasible")));
    assert_string_equal(str_at(result, "/options/0/infeasible_reasons/0"), "interruptions");
    assert_true(json_is_null(at(result, "/options/0/expected_cost_per_outcome")));
    assert_true(json_is_null(at(result, "/options/0/reliable_cost_per_outcome")));
    assert_true(json_is_null(at(result, "/options/0/cost_per_outcome_quantiles/p90")));
    assert_true(json_is_number(at(result, "/options/0/breakdown/useful")));
    assert_false(contains_name(json_object_get(result, "ranking"), "a100-40g-spot"));
    assert_no_nonfinite(result);
    size_t len;
    char *canonical = jcs_serialize(result, &len); /* refuses NaN and infinities */
    assert_non_null(canonical);
    free(canonical);
    json_decref(result);

    /* The largest inputs taken (COST_MAX_VALUE): still no Infinity anywhere. */
    set_at(scenario, "/workload/target_units", json_real(COST_MAX_VALUE));
    set_at(scenario, "/options/1/benchmark/throughput_units_per_s", json_real(1e-300));
    result = compare_ok(scenario);
    assert_no_nonfinite(result);
    assert_false(json_is_true(at(result, "/options/1/feasible")));
    json_decref(result);
    json_decref(scenario);
}

/* ---- bad scenarios ----------------------------------------------------------------------- */

struct bad_case {
    const char *base;     /* TRAINING or INFERENCE */
    const char *pointer;  /* where to change */
    const char *json;     /* the new value, NULL to delete */
    const char *expected; /* pointer that must be reported */
};

static const struct bad_case bad_cases[] = {
    {TRAINING, "/assumptions/failure_probability", "1", "/assumptions/failure_probability"},
    {TRAINING, "/assumptions/failure_probability", "1.5", "/assumptions/failure_probability"},
    {TRAINING, "/options/0/offer/price_per_hour", "-1", "/options/0/offer/price_per_hour"},
    {TRAINING, "/options/0/offer/price_per_hour", "0", "/options/0/offer/price_per_hour"},
    {TRAINING, "/options/1/benchmark/throughput_units_per_s", "0",
     "/options/1/benchmark/throughput_units_per_s"},
    {TRAINING, "/options/1/benchmark/throughput_units_per_s", "-5",
     "/options/1/benchmark/throughput_units_per_s"},
    {TRAINING, "/options/2/offer/reserved_utilization", "0",
     "/options/2/offer/reserved_utilization"},
    {TRAINING, "/options/3/offer/currency", "\"EUR\"", "/options/3/offer/currency"},
    {TRAINING, "/options/0/offer/purchase_option", "\"lease\"", "/options/0/offer/purchase_option"},
    {TRAINING, "/workload/kind", "\"mining\"", "/workload/kind"},
    {TRAINING, "/options/0/offer/bogus", "1", "/options/0/offer/bogus"},
    {TRAINING, "/assumptions/queue_wait", "1", "/assumptions/queue_wait"},
    {TRAINING, "/assumptions/trials", "1000001", "/assumptions/trials"},
    {TRAINING, "/assumptions/trials", "0", "/assumptions/trials"},
    {TRAINING, "/assumptions/trials", "10.5", "/assumptions/trials"},
    {TRAINING, "/assumptions/seed", "9007199254740992", "/assumptions/seed"},
    {TRAINING, "/assumptions/seed", "-1", "/assumptions/seed"},
    {TRAINING, "/options/1/name", "\"a100-40g-spot\"", "/options/1/name"},
    {TRAINING, "/options/0/arrangement", "\"dedicated\"", "/options/0/arrangement"},
    {TRAINING, "/workload/target_units", NULL, "/workload/target_units"},
    {TRAINING, "/options/0/offer/price_per_hour", "\"9.8\"", "/options/0/offer/price_per_hour"},
    {TRAINING, "/options", "[]", "/options"},
    {TRAINING, "/service", "{}", "/service"},
    {INFERENCE, "/options/0/benchmark/load_points", "[]", "/options/0/benchmark/load_points"},
    {INFERENCE, "/options/0/benchmark/load_points/1/offered_rps", "0.5",
     "/options/0/benchmark/load_points/1/offered_rps"},
    {INFERENCE, "/options/1/arrangement", "\"serverless\"", "/options/1/arrangement"},
    {INFERENCE, "/service/horizon_hours", "8785", "/service/horizon_hours"},
    {INFERENCE, "/service/pool_utilization", NULL, "/service/pool_utilization"},
    {INFERENCE, "/service/target_utilization", "0", "/service/target_utilization"},
    {INFERENCE, "/service/slo/metric", "\"tpot_p50_ms\"",
     "/options/0/benchmark/load_points/0/tpot_p50_ms"},
    {INFERENCE, "/service/demand_scenarios/high", "-1", "/service/demand_scenarios/high"},
    {INFERENCE, "/service/demand_rps_by_hour", "[0, 0]", "/service/demand_rps_by_hour"},
    {INFERENCE, "/options/2/offer/currency", "\"EUR\"", "/options/2/offer/currency"},
    {INFERENCE, "/assumptions", "{}", "/assumptions"},
    {INFERENCE, "/options/0/benchmark/throughput_units_per_s", "5",
     "/options/0/benchmark/throughput_units_per_s"},
};

static bool reported(const struct problems *errs, const char *pointer)
{
    for (size_t i = 0; i < errs->count; i++)
        if (strcmp(errs->items[i].pointer, pointer) == 0)
            return true;
    return false;
}

static void expect_refused(const json_t *scenario, const char *pointer)
{
    struct problems errs;
    problems_init(&errs);
    json_t *result = cost_compare(scenario, &errs);
    if (result)
        fail_msg("accepted, but %s is bad", pointer);
    if (!reported(&errs, pointer))
        fail_msg("%s not reported (first: %s: %s)", pointer,
                 errs.count ? errs.items[0].pointer : "-",
                 errs.count ? errs.items[0].message : "-");
    for (size_t i = 0; i < errs.count; i++)
        assert_true(strlen(errs.items[i].message) > 0);
    problems_free(&errs);
}

static void test_bad_scenarios_name_their_field(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        json_t *scenario = load(c->base);
        json_t *value = NULL;
        if (c->json) {
            json_error_t error;
            value = json_loads(c->json, JSON_DECODE_ANY, &error);
            assert_non_null(value);
        }
        set_at(scenario, c->pointer, value);
        expect_refused(scenario, c->expected);
        json_decref(scenario);
    }
}

static void test_limits(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *options = json_object_get(scenario, "options");
    for (int i = 0; json_array_size(options) <= COST_MAX_OPTIONS; i++) {
        json_t *copy = json_deep_copy(json_array_get(options, 0));
        char name[32];
        snprintf(name, sizeof name, "copy-%d", i);
        json_object_set_new(copy, "name", json_string(name));
        json_array_append_new(options, copy);
    }
    expect_refused(scenario, "/options");
    json_decref(scenario);

    scenario = load(INFERENCE);
    json_t *points = json_array();
    for (int i = 0; i <= COST_MAX_LOAD_POINTS; i++)
        json_array_append_new(points,
                              json_pack("{s:f, s:f, s:f}", "offered_rps", 0.1 * (i + 1),
                                        "achieved_rps", 0.1 * (i + 1), "ttft_p99_ms", 100.0 + i));
    set_at(scenario, "/options/0/benchmark/load_points", points);
    expect_refused(scenario, "/options/0/benchmark/load_points");
    json_decref(scenario);

    /* issue 9: the work of one comparison (options × trials) and every unbounded number */
    scenario = load(TRAINING);
    size_t n = json_array_size(json_object_get(scenario, "options"));
    set_at(scenario, "/assumptions/trials",
           json_integer(COST_MAX_OPTION_TRIALS / (json_int_t)n + 1));
    expect_refused(scenario, "/assumptions/trials");
    set_at(scenario, "/assumptions/trials", json_integer(COST_MAX_OPTION_TRIALS / (json_int_t)n));
    json_t *fine = compare_ok(scenario);
    json_decref(fine);
    set_at(scenario, "/assumptions/trials", json_integer(2000));
    set_at(scenario, "/options/1/offer/price_per_hour", json_real(COST_MAX_VALUE * 2));
    expect_refused(scenario, "/options/1/offer/price_per_hour");
    json_decref(scenario);
}

static void test_every_problem_reported_at_once(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    set_at(scenario, "/options/0/offer/price_per_hour", json_real(-1));
    set_at(scenario, "/options/2/offer/reserved_utilization", json_real(0));
    set_at(scenario, "/assumptions/failure_probability", json_real(1));
    set_at(scenario, "/options/3/offer/currency", json_string("EUR"));
    struct problems errs;
    problems_init(&errs);
    assert_null(cost_compare(scenario, &errs));
    assert_true(reported(&errs, "/options/0/offer/price_per_hour"));
    assert_true(reported(&errs, "/options/2/offer/reserved_utilization"));
    assert_true(reported(&errs, "/assumptions/failure_probability"));
    assert_true(reported(&errs, "/options/3/offer/currency"));
    problems_free(&errs);
    json_decref(scenario);

    problems_init(&errs);
    json_t *not_object = json_array();
    assert_null(cost_compare(not_object, &errs));
    assert_true(reported(&errs, ""));
    problems_free(&errs);
    json_decref(not_object);
}

/* ---- findings, table, comparator --------------------------------------------------------- */

static bool has_finding(const json_t *result, size_t option, const char *needle)
{
    char p[64];
    snprintf(p, sizeof p, "/options/%zu/findings", option);
    size_t i;
    json_t *f;
    json_array_foreach(at(result, p), i, f) if (strstr(json_string_value(f), needle)) return true;
    return false;
}

static void test_findings_name_the_causes(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *result = compare_ok(scenario);
    assert_true(has_finding(result, 0, "engineer wait is half the cost"));
    assert_true(has_finding(result, 0, "input stalls are 11%"));
    assert_true(has_finding(result, 2, "unused reservation is 45%"));
    assert_true(has_finding(result, 3, "needs 62 GB per GPU"));
    json_decref(result);
    /* A long queue makes the queue the cause of the wait. */
    set_at(scenario, "/options/1/benchmark/queue_wait_s", json_real(200000));
    result = compare_ok(scenario);
    assert_true(has_finding(result, 1, "the 200,000 s queue dominates"));
    json_decref(result);
    json_decref(scenario);

    scenario = load(INFERENCE);
    result = compare_ok(scenario);
    assert_true(has_finding(result, 1, "spare replicas are 22%"));
    assert_true(has_finding(result, 0, "one replica serves 1.143 requests/s"));
    json_decref(result);
    json_decref(scenario);
}

static void test_table_shows_breakdown_flags_break_even(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *result = compare_ok(scenario);
    char *table = cost_format_table(result);
    assert_non_null(table);
    assert_non_null(strstr(table, "engineer_wait"));
    assert_non_null(strstr(table, "hourly-price trap: yes"));
    assert_non_null(strstr(table, "winner: h100-on-demand"));
    assert_non_null(strstr(table, "h100-on-demand offer/price_per_hour"));
    assert_non_null(strstr(table, "79.71"));
    assert_non_null(strstr(table, "no: memory"));
    free(table);
    json_t *not_comparison = json_object();
    assert_null(cost_format_table(not_comparison));
    json_decref(not_comparison);
    json_decref(result);
    json_decref(scenario);
}

static void test_compare_results(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING);
    json_t *a = compare_ok(scenario);
    json_t *b = json_deep_copy(a);
    char where[256];
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 0);
    assert_string_equal(where, "");
    /* libm noise passes, a real difference does not. */
    double v = num_at(b, "/options/2/breakdown/storage");
    set_at(b, "/options/2/breakdown/storage", json_real(v * (1 + 1e-12)));
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 0);
    set_at(b, "/options/2/breakdown/storage", json_real(v * (1 + 1e-6)));
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 1);
    assert_true(strncmp(where, "/options/2/breakdown/storage: ", 30) == 0);
    set_at(b, "/options/2/breakdown/storage", json_real(v));
    /* A different engine version alone is not a different result. */
    set_at(b, "/engine_version", json_string("capledger-cost/0.9.0"));
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 0);
    set_at(b, "/winner", json_string("a100-40g-spot"));
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 1);
    assert_true(strncmp(where, "/winner: ", 9) == 0);
    set_at(b, "/winner", json_string("h100-on-demand"));
    set_at(b, "/extra", json_true());
    assert_int_equal(cost_compare_results(a, b, 1e-9, where, sizeof where), 1);
    assert_true(strncmp(where, "/extra: ", 8) == 0);
    json_decref(a);
    json_decref(b);
    json_decref(scenario);
}

/* Stored ids (a string where the engine takes an object) are listed with their pointers; an
 * inline scenario has none. */
static void test_stored_references_listed(void **state)
{
    (void)state;
    json_error_t e;
    json_t *doc =
        json_loads("{\"workload\":\"w-1\",\"options\":[{\"offer\":{},\"benchmark\":\"b-2\"},"
                   "{\"offer\":\"o-3\"},7]}",
                   0, &e);
    assert_non_null(doc);
    struct problems p;
    problems_init(&p);
    assert_int_equal(cost_stored_references(doc, &p), 3);
    assert_string_equal(p.items[0].pointer, "/workload");
    assert_string_equal(p.items[1].pointer, "/options/0/benchmark");
    assert_string_equal(p.items[2].pointer, "/options/1/offer");
    assert_non_null(strstr(p.items[2].message, "'o-3'"));
    problems_free(&p);
    json_decref(doc);
    doc = json_loads("{\"workload\":{},\"options\":[{\"offer\":{}}]}", 0, &e);
    problems_init(&p);
    assert_int_equal(cost_stored_references(doc, &p), 0);
    assert_int_equal(p.total, 0);
    problems_free(&p);
    json_decref(doc);
}

/* ---- engine 2 ------------------------------------------------------------------------- */

static json_t *compare_scenario_file(const char *path)
{
    json_t *scenario = load(path);
    json_t *result = compare_ok(scenario);
    json_decref(scenario);
    return result;
}

static void test_example_training_v2(void **state)
{
    (void)state;
    check_example(TRAINING2, SPEC_DIR "example-training-v2.expected.json");
    json_t *result = compare_scenario_file(TRAINING2);
    assert_string_equal(str_at(result, "/engine_version"), COST_ENGINE_2_VERSION);
    json_decref(result);
}

static void test_example_inference_v2(void **state)
{
    (void)state;
    check_example(INFERENCE2, SPEC_DIR "example-inference-v2.expected.json");
}

/* The risk example: the expected costs are closed forms; the option that never fails ranks
 * first under cvar (the default) and the flaky one under engine 1's quantile. */
static void test_risk_v2_property(void **state)
{
    (void)state;
    json_t *expected = load(SPEC_DIR "example-risk-v2.expected.json");
    json_t *scenario = load(RISK2);
    json_t *result = compare_ok(scenario);
    expect_subset(json_object_get(expected, "ranking"), json_object_get(result, "ranking"),
                  "/ranking");
    assert_string_equal(str_at(result, "/risk_measure"), "cvar");
    for (size_t i = 0; i < 2; i++) {
        const char *name = json_string_value(at(result, i ? "/options/1/name" : "/options/0/name"));
        double closed = json_number_value(
            json_object_get(json_object_get(expected, "expected_cost_per_outcome"), name));
        double got = option_num(result, i, "expected_cost_per_outcome");
        assert_true(fabs(got - closed) <= 1e-9 * closed);
        assert_true(option_num(result, i, "reliable_cost_per_outcome") ==
                    option_num(result, i, "cost_per_outcome_quantiles/cvar"));
    }
    json_decref(result);
    set_at(scenario, "/assumptions/risk_measure", json_string("quantile"));
    result = compare_ok(scenario);
    expect_subset(json_object_get(expected, "ranking_with_risk_measure_quantile"),
                  json_object_get(result, "ranking"), "/ranking");
    assert_true(option_num(result, 0, "reliable_cost_per_outcome") ==
                option_num(result, 0, "cost_per_outcome_quantiles/p90"));
    json_decref(result);
    json_decref(scenario);
    json_decref(expected);
}

/* CVaR ≥ mean ≥ p50 for every option of every engine-2 batch example. */
static void test_cvar_above_mean_above_median(void **state)
{
    (void)state;
    const char *paths[] = {TRAINING2, RISK2};
    for (size_t p = 0; p < 2; p++) {
        json_t *result = compare_scenario_file(paths[p]);
        for (size_t i = 0; i < json_array_size(json_object_get(result, "options")); i++) {
            double cvar = option_num(result, i, "cost_per_outcome_quantiles/cvar");
            double mean = option_num(result, i, "cost_per_outcome_quantiles/mean");
            double p50 = option_num(result, i, "cost_per_outcome_quantiles/p50");
            if (!(cvar >= mean && mean >= p50))
                fail_msg("%s option %zu: cvar %.6g, mean %.6g, p50 %.6g", paths[p], i, cvar, mean,
                         p50);
        }
        json_decref(result);
    }
}

/* The mean of V outcomes concentrates: the worst tenth of months comes down to the mean. */
static void test_cvar_tends_to_mean_as_volume_grows(void **state)
{
    (void)state;
    json_t *scenario = load(RISK2);
    set_at(scenario, "/assumptions/trials", json_integer(4000));
    double previous = INFINITY;
    static const int volumes[] = {1, 10, 100, 1000};
    for (size_t k = 0; k < 4; k++) {
        set_at(scenario, "/assumptions/planned_outcomes_per_month", json_integer(volumes[k]));
        json_t *result = compare_ok(scenario);
        double cvar = option_num(result, 0, "cost_per_outcome_quantiles/cvar");
        double mean = option_num(result, 0, "cost_per_outcome_quantiles/mean");
        double expected = option_num(result, 0, "expected_cost_per_outcome");
        double gap = (cvar - mean) / mean;
        if (!(gap < previous))
            fail_msg("V %d: cvar − mean gap %.6g did not shrink (was %.6g)", volumes[k], gap,
                     previous);
        assert_true(fabs(mean - expected) <= 0.02 * expected);
        previous = gap;
        json_decref(result);
    }
    assert_true(previous < 0.02);
    json_decref(scenario);
}

/* A synchronous job restarts when any instance is interrupted or crashes. */
static void test_restart_rate_scales_with_instances(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING2);
    json_t *two = compare_ok(scenario);
    set_at(scenario, "/options/0/benchmark/instances", json_integer(4));
    json_t *four = compare_ok(scenario);
    double r2 = option_num(two, 0, "restart_rate_per_hour");
    double r4 = option_num(four, 0, "restart_rate_per_hour");
    assert_true(fabs(r2 - 2 * (0.15 + 0.002)) <= 1e-12);
    assert_true(fabs(r4 - 2 * r2) <= 1e-12 * r4);
    /* crashes count on demand too: λ = n·c */
    assert_true(fabs(option_num(two, 1, "restart_rate_per_hour") - 2 * 0.002) <= 1e-15);
    json_decref(two);
    json_decref(four);
    json_decref(scenario);
}

/* A reservation bought already changes the cash view only. */
static void test_reserved_paid_changes_cash_only(void **state)
{
    (void)state;
    json_t *scenario = load(TRAINING2);
    json_t *paid = compare_ok(scenario);
    set_at(scenario, "/options/2/offer/reserved_paid", json_false());
    json_t *unpaid = compare_ok(scenario);
    assert_true(option_num(paid, 2, "cash_cost_per_outcome") <
                option_num(unpaid, 2, "cash_cost_per_outcome"));
    assert_true(option_num(unpaid, 2, "cash_cost_per_outcome") ==
                option_num(unpaid, 2, "expected_cost_per_outcome"));
    static const char *const same[] = {"/options/2/expected_cost_per_outcome",
                                       "/options/2/reliable_cost_per_outcome",
                                       "/options/2/breakdown",
                                       "/options/2/cost_per_outcome_quantiles",
                                       "/ranking",
                                       "/ranking_by_expected",
                                       "/break_even"};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        char where[256];
        if (cost_compare_results(at(paid, same[k]), at(unpaid, same[k]), 0, where, sizeof where) !=
            0)
            fail_msg("%s differs: %s", same[k], where);
    }
    assert_string_equal(str_at(paid, "/ranking_by_cash/0"), "h100-reserved");
    assert_string_equal(str_at(unpaid, "/ranking_by_cash/0"), "h100-on-demand");
    json_decref(paid);
    json_decref(unpaid);
    json_decref(scenario);
}

/* An option whose SLO attainment falls below min_slo_attainment in a demand scenario is
 * infeasible, naming it; lowering the floor under its attainment makes it feasible again. */
static void test_slo_attainment_floor(void **state)
{
    (void)state;
    json_t *scenario = load(INFERENCE2);
    json_t *result = compare_ok(scenario);
    assert_false(json_is_true(at(result, "/options/1/feasible")));
    assert_string_equal(str_at(result, "/options/1/infeasible_reasons/0"), "slo_capacity");
    assert_int_equal(json_array_size(at(result, "/options/1/slo_capacity_scenarios")), 1);
    assert_string_equal(str_at(result, "/options/1/slo_capacity_scenarios/0"), "high");
    double attained = num_at(result, "/options/1/by_demand_scenario_detail/high/slo_attainment");
    assert_true(attained < 0.999);
    /* 21 replicas (20 serving) fall short in the 8 busiest hours of each of the 30 days */
    assert_true(num_at(result, "/options/1/by_demand_scenario_detail/high/slo_breach_hours") ==
                240);
    assert_true(num_at(result, "/options/1/by_demand_scenario_detail/expected/slo_breach_hours") ==
                0);
    assert_false(contains_name(json_object_get(result, "ranking"), "l4-dedicated-21"));
    json_decref(result);
    set_at(scenario, "/service/min_slo_attainment", json_real(attained - 1e-6));
    result = compare_ok(scenario);
    assert_true(json_is_true(at(result, "/options/1/feasible")));
    assert_int_equal(json_array_size(at(result, "/options/1/slo_capacity_scenarios")), 0);
    json_decref(result);
    json_decref(scenario);
}

/* 101 equal percentiles are a fixed wait: the closed form equals queue_wait_s's, and every
 * trial waits exactly that long (no spread in the time to result). */
static void test_equal_quantiles_are_a_fixed_wait(void **state)
{
    (void)state;
    json_t *scenario = load(RISK2);
    set_at(scenario, "/options/1/benchmark/queue_wait_s", json_real(5400));
    json_t *fixed = compare_ok(scenario);
    set_at(scenario, "/options/1/benchmark/queue_wait_s", NULL);
    json_t *q = json_array();
    for (int i = 0; i < 101; i++)
        json_array_append_new(q, json_real(5400));
    set_at(scenario, "/options/1/benchmark/queue_wait_quantiles_s", q);
    json_t *quantiles = compare_ok(scenario);
    double t = option_num(fixed, 1, "time_to_result_s");
    assert_true(fabs(option_num(quantiles, 1, "time_to_result_s") - t) <= 1e-12 * t);
    assert_true(option_num(quantiles, 1, "expected_cost_per_outcome") ==
                option_num(fixed, 1, "expected_cost_per_outcome"));
    static const char *const ranks[] = {"p50", "p90", "p99", "mean", "cvar"};
    for (size_t k = 0; k < 5; k++) {
        char member[64];
        snprintf(member, sizeof member, "time_to_result_quantiles/%s", ranks[k]);
        assert_true(fabs(option_num(quantiles, 1, member) - t) <= 1e-9 * t);
    }
    json_decref(fixed);
    json_decref(quantiles);
    json_decref(scenario);
}

static void test_break_even_v2(void **state)
{
    (void)state;
    check_break_even_flips(TRAINING2);
    check_break_even_flips(INFERENCE2);
    /* the new inputs are searched, in the documented order */
    json_t *result = compare_scenario_file(TRAINING2);
    bool acceptance = false, planned = false;
    size_t i;
    json_t *be;
    json_array_foreach(json_object_get(result, "break_even"), i, be)
    {
        const char *input = json_string_value(json_object_get(be, "input"));
        acceptance = acceptance || strcmp(input, "/assumptions/acceptance_rate") == 0;
        planned = planned || strcmp(input, "/assumptions/planned_outcomes_per_month") == 0;
    }
    json_decref(result);
    (void)acceptance;
    (void)planned;
}

/* The hourly-price trap on both engines, on expected cost per outcome. */
static void test_hourly_price_trap_both_engines(void **state)
{
    (void)state;
    json_t *one = compare_scenario_file(TRAINING);
    json_t *two = compare_scenario_file(TRAINING2);
    assert_string_equal(str_at(one, "/flags/hourly_price_trap/cheapest_hourly"), "a100-40g-spot");
    assert_string_equal(str_at(two, "/flags/hourly_price_trap/cheapest_hourly"), "a100-40g-spot");
    assert_string_equal(str_at(two, "/hourly_price_trap/cheapest_per_outcome"), "h100-on-demand");
    double ratio = num_at(two, "/flags/hourly_price_trap/ratio");
    assert_true(fabs(ratio - option_num(two, 0, "expected_cost_per_outcome") /
                                 option_num(two, 1, "expected_cost_per_outcome")) <= 1e-12 * ratio);
    json_decref(one);
    json_decref(two);
}

/* Engine selection: "engine" 1 or 2 (absent: 2), forced by a recomputation; anything else is
 * refused at /engine, and engine 2's fields are unknown to engine 1. */
static void test_engine_selection(void **state)
{
    (void)state;
    json_t *scenario = load_file(TRAINING);
    json_t *two = compare_ok(scenario);
    assert_string_equal(str_at(two, "/engine_version"), COST_ENGINE_2_VERSION);
    struct problems errs;
    problems_init(&errs);
    json_t *one = cost_compare_engine(scenario, 1, &errs);
    assert_non_null(one);
    assert_string_equal(str_at(one, "/engine_version"), COST_ENGINE_1_VERSION);
    /* forced engine 1 on the file as stored equals "engine": 1 in it, figure for figure */
    json_t *tagged = load(TRAINING);
    json_t *explicit_one = compare_ok(tagged);
    char where[256];
    json_object_del(explicit_one, "input_sha256");
    json_object_del(one, "input_sha256");
    assert_int_equal(cost_compare_results(one, explicit_one, 0, where, sizeof where), 0);
    json_t *conflict = cost_compare_engine(tagged, 2, &errs);
    assert_null(conflict);
    assert_true(reported(&errs, "/engine"));
    problems_free(&errs);
    assert_int_equal(cost_engine_of_version(COST_ENGINE_1_VERSION), 1);
    assert_int_equal(cost_engine_of_version(COST_ENGINE_2_VERSION), 2);
    assert_int_equal(cost_engine_of_version("capledger-cost/3.0.0"), 0);
    assert_int_equal(cost_engine_of_version(NULL), 0);
    static const char *const bad_engines[] = {"3", "0", "1.5", "\"1\"", "null"};
    for (size_t k = 0; k < 5; k++) {
        json_error_t e;
        set_at(scenario, "/engine", json_loads(bad_engines[k], JSON_DECODE_ANY, &e));
        expect_refused(scenario, "/engine");
    }
    /* engine 2's fields under engine 1: unknown, as before engine 2 existed */
    set_at(scenario, "/engine", json_integer(1));
    set_at(scenario, "/assumptions/acceptance_rate", json_real(0.5));
    expect_refused(scenario, "/assumptions/acceptance_rate");
    json_decref(one);
    json_decref(two);
    json_decref(explicit_one);
    json_decref(tagged);
    json_decref(scenario);
}

static json_t *queue_quantiles(int count, double step)
{
    json_t *q = json_array();
    for (int i = 0; i < count; i++)
        json_array_append_new(q, json_real(step * i));
    return q;
}

static void test_bad_v2_scenarios_name_their_field(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {TRAINING2, "/assumptions/acceptance_rate", "0", "/assumptions/acceptance_rate"},
        {TRAINING2, "/assumptions/acceptance_rate", "1.01", "/assumptions/acceptance_rate"},
        {TRAINING2, "/assumptions/acceptance_rate", "0.0009", "/assumptions/acceptance_rate"},
        {TRAINING2, "/assumptions/planned_outcomes_per_month", "0",
         "/assumptions/planned_outcomes_per_month"},
        {TRAINING2, "/assumptions/planned_outcomes_per_month", "10001",
         "/assumptions/planned_outcomes_per_month"},
        {TRAINING2, "/assumptions/planned_outcomes_per_month", "2.5",
         "/assumptions/planned_outcomes_per_month"},
        {TRAINING2, "/assumptions/risk_measure", "\"var\"", "/assumptions/risk_measure"},
        {TRAINING2, "/assumptions/crash_rate_per_instance_hour", "-1",
         "/assumptions/crash_rate_per_instance_hour"},
        {TRAINING2, "/options/1/offer/reserved_paid", "true", "/options/1/offer/reserved_paid"},
        {TRAINING2, "/options/0/offer/reserved_paid", "true", "/options/0/offer/reserved_paid"},
        {TRAINING2, "/options/1/benchmark/data_access", "\"cached\"",
         "/options/1/benchmark/data_access"},
        {TRAINING2, "/workload/data_source/region", NULL, "/workload/data_source/region"},
        {TRAINING2, "/workload/data_source/egress_price_gb", "-0.1",
         "/workload/data_source/egress_price_gb"},
        {TRAINING2, "/options/3/benchmark/queue_wait_s", "60",
         "/options/3/benchmark/queue_wait_quantiles_s"},
        {TRAINING2, "/options/3/benchmark/queue_wait_quantiles_s/50", "-1",
         "/options/3/benchmark/queue_wait_quantiles_s/50"},
        {TRAINING2, "/options/3/benchmark/queue_wait_quantiles_s/99", "100",
         "/options/3/benchmark/queue_wait_quantiles_s/99"},
        {TRAINING2, "/options/0/benchmark/queue_wait_from", "{\"cluster\": \"a\"}",
         "/options/0/benchmark/queue_wait_from"},
        {INFERENCE2, "/service/slo/1/metric", "\"tpot_p50_ms\"", "/service/slo/1/metric"},
        {INFERENCE2, "/service/slo/0/max_error_rate", "0.01", "/service/slo/0/max_error_rate"},
        {INFERENCE2, "/service/slo", "[]", "/service/slo"},
        {INFERENCE2, "/service/slo/1/metric", "\"ttft_p99_ms\"", "/service/slo/1/metric"},
        {INFERENCE2, "/service/slo/0/target_ms", "0", "/service/slo/0/target_ms"},
        {INFERENCE2, "/service/max_replicas", "1", "/service/max_replicas"},
        {INFERENCE2, "/service/min_slo_attainment", "1.5", "/service/min_slo_attainment"},
        {INFERENCE2, "/service/pool_capacity_rps", "0", "/service/pool_capacity_rps"},
        {INFERENCE2, "/options/0/replicas", "1", "/options/0/replicas"},
        {INFERENCE2, "/options/2/replicas", "4", "/options/2/replicas"},
        {INFERENCE2, "/options/0/offer/reserved_paid", "true", "/options/0/offer/reserved_paid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bad_case *c = &cases[i];
        json_t *scenario = load(c->base);
        json_t *value = NULL;
        if (c->json) {
            json_error_t error;
            value = json_loads(c->json, JSON_DECODE_ANY, &error);
            assert_non_null(value);
        }
        set_at(scenario, c->pointer, value);
        expect_refused(scenario, c->expected);
        json_decref(scenario);
    }
    /* 100 or 102 percentiles, and decreasing ones */
    const int counts[] = {100, 102};
    for (size_t k = 0; k < 2; k++) {
        json_t *scenario = load(TRAINING2);
        set_at(scenario, "/options/3/benchmark/queue_wait_quantiles_s",
               queue_quantiles(counts[k], 60));
        expect_refused(scenario, "/options/3/benchmark/queue_wait_quantiles_s");
        json_decref(scenario);
    }
    json_t *scenario = load(TRAINING2);
    set_at(scenario, "/options/3/benchmark/queue_wait_quantiles_s", queue_quantiles(101, -1));
    expect_refused(scenario, "/options/3/benchmark/queue_wait_quantiles_s/1");
    /* trials × V over the limit names both */
    set_at(scenario, "/options/3/benchmark/queue_wait_quantiles_s", queue_quantiles(101, 60));
    set_at(scenario, "/assumptions/trials", json_integer(20000));
    set_at(scenario, "/assumptions/planned_outcomes_per_month", json_integer(1001));
    expect_refused(scenario, "/assumptions/trials");
    expect_refused(scenario, "/assumptions/planned_outcomes_per_month");
    set_at(scenario, "/assumptions/planned_outcomes_per_month", json_integer(1000));
    json_t *fine = compare_ok(scenario);
    json_decref(fine);
    json_decref(scenario);
}

/* Found by the attack pass on engine 2. */
static void test_attack_regressions(void **state)
{
    (void)state;
    /* A crash rate of 1e-300 an hour: exp(λ(τ+δ)) − 1 was 0 in doubles, so the closed form lost
     * the whole run (203 against the Monte Carlo's 5,477); it must be the crash-free cost. */
    json_t *scenario = load(TRAINING2);
    set_at(scenario, "/assumptions/crash_rate_per_instance_hour", json_real(1e-300));
    json_t *tiny = compare_ok(scenario);
    set_at(scenario, "/assumptions/crash_rate_per_instance_hour", json_real(0));
    json_t *none = compare_ok(scenario);
    for (size_t i = 1; i < 4; i++) {
        double t = option_num(tiny, i, "expected_cost_per_outcome");
        double n = option_num(none, i, "expected_cost_per_outcome");
        if (fabs(t - n) > 1e-9 * n)
            fail_msg("option %zu: %.17g with λ = 1e-300, %.17g without", i, t, n);
        double mean = option_num(tiny, i, "cost_per_outcome_quantiles/mean");
        assert_true(fabs(mean - t) <= 0.02 * t);
    }
    json_decref(tiny);
    json_decref(none);
    json_decref(scenario);
    /* max_replicas = min_replicas + spares with min_replicas 0 leaves nothing serving at the
     * bound: refused at /service/max_replicas (it was an option "out of range"). */
    scenario = load(INFERENCE2);
    set_at(scenario, "/service/min_replicas", json_integer(0));
    set_at(scenario, "/service/max_replicas", json_integer(1));
    expect_refused(scenario, "/service/max_replicas");
    set_at(scenario, "/service/max_replicas", json_integer(2));
    json_t *fine = compare_ok(scenario);
    json_decref(fine);
    json_decref(scenario);
}

/* Found by the practitioner's review of engine 2. */
static void test_practitioner_regressions(void **state)
{
    (void)state;
    /* A horizon shorter than the demand profile: engine 1 sizes a dedicated fleet for the peak
     * of the hours priced; engine 2 sized it for the profile's peak in an hour outside the
     * horizon (7 replicas instead of 1, seven times the cost). */
    json_t *scenario = load(INFERENCE2);
    json_t *profile = json_array();
    for (int h = 0; h < 24; h++)
        json_array_append_new(profile, json_real(h < 12 ? 1 : 10));
    set_at(scenario, "/service/demand_rps_by_hour", profile);
    set_at(scenario, "/service/horizon_hours", json_integer(12));
    json_object_del(at(scenario, "/service"), "demand_scenarios");
    json_t *two = compare_ok(scenario);
    for (size_t i = 0; i < json_array_size(json_object_get(two, "options")); i++) {
        const json_t *opt = json_array_get(at(scenario, "/options"), i);
        if (strcmp(json_string_value(json_object_get(opt, "arrangement")), "dedicated") != 0 ||
            json_object_get(opt, "replicas"))
            continue;
        /* the peak of the hours priced is 1 request/s (×1.03 retries), one spare */
        double kappa = option_num(two, i, "capacity_rps_per_replica");
        double fleet = ceil(1 * 1.03 / (kappa * 0.8) - 1e-9) + 1;
        double got = option_num(two, i, "replicas_peak");
        if (got != fleet)
            fail_msg("option %zu: a fleet of %g replicas for the 12 hours priced, not %g", i, got,
                     fleet);
    }
    json_decref(two);
    json_decref(scenario);

    /* V = 10 in the risk example: the other nine outcomes' runs were one normal clamped at
     * their cheapest possible cost, and the clamp (binding in 18 % of trials) lifted the
     * Monte Carlo mean 0.8 % above the closed form, 12 standard errors; from V = 9 (drawn run
     * by run) to 10 the mean jumped. The mean of a month must be the closed form's. */
    scenario = load(RISK2);
    set_at(scenario, "/assumptions/planned_outcomes_per_month", json_integer(10));
    json_t *ten = compare_ok(scenario);
    double closed = option_num(ten, 0, "expected_cost_per_outcome");
    double mean = option_num(ten, 0, "cost_per_outcome_quantiles/mean");
    /* one outcome's sd is 31.3 (failures: geometric, q = 0.09, each about 95): a month of 10,
     * 20,000 trials: standard error 0.07 */
    if (fabs(mean - closed) > 4 * 31.3 / sqrt(10) / sqrt(20000))
        fail_msg("Monte Carlo mean %.6g against the closed form %.6g at V = 10", mean, closed);
    /* never below the cheapest month: ten runs that never fail */
    double floor_cost = option_num(ten, 1, "expected_cost_per_outcome") / 10.5 * 10;
    assert_true(option_num(ten, 0, "cost_per_outcome_quantiles/p50") >= floor_cost);
    json_decref(ten);
    json_decref(scenario);

    /* Findings count engine 2's gigabytes: a staged 10,000 GB dataset away from its source
     * (one outcome a month) said "0 GB of egress" (the benchmark's transfer_gb) and counted the
     * dataset as storage of a remote reader. */
    scenario = load(RISK2);
    set_at(scenario, "/workload/dataset_gb", json_integer(10000));
    json_t *source = json_pack("{s:s, s:s, s:f}", "provider", "aws", "region", "us-east-1",
                               "egress_price_gb", 0.09);
    set_at(scenario, "/workload/data_source", source);
    set_at(scenario, "/options/0/benchmark/data_access", json_string("staged"));
    set_at(scenario, "/options/1/benchmark/data_access", json_string("remote"));
    set_at(scenario, "/options/1/benchmark/transfer_gb", json_integer(3000));
    set_at(scenario, "/options/1/offer/storage_price_gb_month", json_real(0.2));
    json_t *staged = compare_ok(scenario);
    assert_true(has_finding(staged, 0, "10,000 GB"));
    assert_false(has_finding(staged, 0, " 0 GB"));
    assert_true(has_finding(staged, 1, "3,000 GB"));
    assert_false(has_finding(staged, 1, "storage is"));
    json_decref(staged);
    json_decref(scenario);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_references_listed),
        cmocka_unit_test(test_example_training),
        cmocka_unit_test(test_example_inference),
        cmocka_unit_test(test_breakdown_sums_to_total),
        cmocka_unit_test(test_cost_rises_with_price_falls_with_throughput),
        cmocka_unit_test(test_small_interruption_rate_approaches_no_interruptions),
        cmocka_unit_test(test_no_failures_no_failed_attempts),
        cmocka_unit_test(test_infeasible_options_never_rank),
        cmocka_unit_test(test_break_even_really_flips),
        cmocka_unit_test(test_monte_carlo_mean_matches_closed_form),
        cmocka_unit_test(test_charts),
        cmocka_unit_test(test_monte_carlo_under_interruptions),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_input_sha256_is_of_canonical_bytes),
        cmocka_unit_test(test_load_points_in_any_order),
        cmocka_unit_test(test_spot_that_cannot_finish_is_infeasible),
        cmocka_unit_test(test_bad_scenarios_name_their_field),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_every_problem_reported_at_once),
        cmocka_unit_test(test_findings_name_the_causes),
        cmocka_unit_test(test_table_shows_breakdown_flags_break_even),
        cmocka_unit_test(test_compare_results),
        cmocka_unit_test(test_example_training_v2),
        cmocka_unit_test(test_example_inference_v2),
        cmocka_unit_test(test_risk_v2_property),
        cmocka_unit_test(test_cvar_above_mean_above_median),
        cmocka_unit_test(test_cvar_tends_to_mean_as_volume_grows),
        cmocka_unit_test(test_restart_rate_scales_with_instances),
        cmocka_unit_test(test_reserved_paid_changes_cash_only),
        cmocka_unit_test(test_slo_attainment_floor),
        cmocka_unit_test(test_equal_quantiles_are_a_fixed_wait),
        cmocka_unit_test(test_break_even_v2),
        cmocka_unit_test(test_hourly_price_trap_both_engines),
        cmocka_unit_test(test_engine_selection),
        cmocka_unit_test(test_bad_v2_scenarios_name_their_field),
        cmocka_unit_test(test_attack_regressions),
        cmocka_unit_test(test_practitioner_regressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
