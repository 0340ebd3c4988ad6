/* Realised against predicted (core/ledger/outcome.h): the predicted compute cost per outcome,
 * each verdict from its facts, and the figures, worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "core/ledger/drift.h"
#include "core/ledger/outcome.h"

/* compute = 100 + 10 + 5 + 2 + 3 + 4 + 0 = 124; the rest (orchestration, engineer_wait) 76 */
static const char *const OPTION =
    "{\"name\":\"a100\",\"expected_cost_per_outcome\":200,\"breakdown\":{\"useful\":100,"
    "\"input_stall\":10,\"other_idle\":5,\"setup\":2,\"checkpoint_and_interruption\":3,"
    "\"failed_attempts\":4,\"unused_reservation\":0,\"orchestration\":16,\"engineer_wait\":60}}";

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

/* runs, completed, cost (<0: not priced), currency */
static json_t *realised(long long runs, long long completed, double cost, const char *cur)
{
    json_t *r =
        json_pack("{s:I, s:I, s:f, s:I, s:f, s:[], s:[{s:s, s:I, s:I, s:f, s:f}]}", "runs",
                  (json_int_t)runs, "completed", (json_int_t)completed, "gpu_hours", 10.0,
                  "unpriced_runs", (json_int_t)0, "unpriced_gpu_hours", 0.0, "currencies", "months",
                  "month", "2026-01-01T00:00:00Z", "runs", (json_int_t)runs, "completed",
                  (json_int_t)completed, "gpu_hours", 10.0, "cost", cost < 0 ? 0 : cost);
    assert_non_null(r);
    if (cost >= 0) {
        json_object_set_new(r, "cost", json_real(cost));
        json_array_append_new(json_object_get(r, "currencies"), json_string(cur));
    } else {
        json_object_set_new(r, "cost", json_null());
    }
    return r;
}

static json_t *decide(const json_t *option, const char *cur, json_t *real_stolen)
{
    struct outcome_facts f = {.option = option,
                              .currency = cur,
                              .realised = real_stolen,
                              .threshold = 0.2,
                              .min_runs = 20};
    json_t *v = outcome_decide(&f);
    json_decref(real_stolen);
    assert_non_null(v);
    return v;
}

static const char *verdict(const json_t *v)
{
    return json_string_value(json_object_get(v, "verdict"));
}

static void test_predicted_compute(void **state)
{
    (void)state;
    json_t *o = load(OPTION);
    assert_true(fabs(outcome_predicted_compute(o) - 124) < 1e-12);
    /* engine 2: rejected_runs = (1/a − 1) × the per-run items (200 here, a = 0.5): its compute
     * share is 124/200 of it, so compute × (1 + 200/200) */
    json_object_set_new(json_object_get(o, "breakdown"), "rejected_runs", json_real(200));
    assert_true(fabs(outcome_predicted_compute(o) - 248) < 1e-12);
    assert_true(isnan(outcome_predicted_compute(NULL)));
    json_decref(o);
}

static void test_within_and_drift(void **state)
{
    (void)state;
    json_t *o = load(OPTION);
    /* 30 runs, 25 completed, 3,100 spent: 124 per completed run = the prediction */
    json_t *v = decide(o, "USD", realised(30, 25, 3100, "USD"));
    assert_string_equal(verdict(v), "within");
    assert_true(fabs(json_real_value(json_object_get(v, "error"))) < 1e-12);
    json_t *r = json_object_get(v, "realised");
    assert_true(fabs(json_real_value(json_object_get(r, "cost_per_completed")) - 124) < 1e-12);
    json_t *m = json_array_get(json_object_get(r, "months"), 0);
    assert_true(fabs(json_real_value(json_object_get(m, "cost_per_completed")) - 124) < 1e-12);
    json_t *p = json_object_get(v, "predicted");
    assert_true(fabs(json_real_value(json_object_get(p, "expected_cost_per_outcome")) - 200) <
                1e-12);
    struct drift_metric dm;
    double rel = 0;
    assert_int_equal(outcome_drift_metric(v, &dm, &rel), -1); /* within: no alert */
    json_decref(v);
    /* 35 % more per completed run: 167.4 × 25 = 4185 → error 0.35 > 0.2 */
    v = decide(o, "USD", realised(30, 25, 124 * 1.35 * 25, "USD"));
    assert_string_equal(verdict(v), "drift");
    assert_true(fabs(json_real_value(json_object_get(v, "error")) - 0.35) < 1e-12);
    /* the alert it raises: 124 assumed, 167.4 observed over 30 runs, beyond its own 0.2 */
    assert_int_equal(outcome_drift_metric(v, &dm, &rel), 0);
    assert_string_equal(dm.name, "cost_per_outcome");
    assert_true(fabs(dm.assumed - 124) < 1e-9 && fabs(dm.observed - 167.4) < 1e-9);
    assert_int_equal(dm.samples, 30);
    assert_true(fabs(dm.threshold - 0.2) < 1e-12 && fabs(rel - 0.35) < 1e-12);
    double departs_rel;
    assert_true(drift_departs(&dm, DRIFT_DEFAULT_THRESHOLD, &departs_rel));
    assert_true(fabs(departs_rel - 0.35) < 1e-9);
    json_decref(v);
    /* exactly at the threshold is within; cheaper than predicted is within */
    v = decide(o, "USD", realised(30, 25, 124 * 1.2 * 25, "USD"));
    assert_string_equal(verdict(v), "within");
    json_decref(v);
    v = decide(o, "USD", realised(30, 25, 1000, "USD"));
    assert_string_equal(verdict(v), "within");
    assert_true(json_real_value(json_object_get(v, "error")) < 0);
    json_decref(v);
    json_decref(o);
}

static void test_not_enough(void **state)
{
    (void)state;
    json_t *o = load(OPTION);
    json_t *v = decide(o, "USD", realised(19, 19, 1e6, "USD"));
    assert_string_equal(verdict(v), "too_few_runs");
    assert_true(json_is_null(json_object_get(v, "error")));
    json_decref(v);
    v = decide(o, "USD", realised(40, 0, 5000, "USD"));
    assert_string_equal(verdict(v), "no_completed_run");
    assert_true(
        json_is_null(json_object_get(json_object_get(v, "realised"), "cost_per_completed")));
    json_decref(v);
    json_decref(o);
}

static void test_not_comparable(void **state)
{
    (void)state;
    json_t *o = load(OPTION);
    json_t *v = decide(o, "USD", realised(30, 25, 3100, "EUR"));
    assert_string_equal(verdict(v), "not_comparable");
    assert_non_null(strstr(json_string_value(json_object_get(v, "reason")), "EUR"));
    json_decref(v);
    v = decide(o, "USD", realised(30, 25, -1, NULL));
    assert_string_equal(verdict(v), "not_comparable");
    json_decref(v);
    v = decide(NULL, "USD", realised(30, 25, 3100, "USD"));
    assert_string_equal(verdict(v), "not_comparable");
    json_decref(v);
    json_t *two = realised(30, 25, 3100, "USD");
    json_array_append_new(json_object_get(two, "currencies"), json_string("EUR"));
    v = decide(o, "USD", two);
    assert_string_equal(verdict(v), "not_comparable");
    json_decref(v);
    json_decref(o);
}

/* GPU-hours no cluster map prices: the priced cost over every completed run would understate
 * the realised cost per outcome (a third of the hours unpriced reads a third cheaper), so no
 * figure per completed run and no verdict but not_comparable, naming the unpriced runs; a month
 * with unpriced hours has no figure either. */
static void test_partly_unpriced(void **state)
{
    (void)state;
    json_t *o = load(OPTION);
    /* 3,100 priced over 25 completed would read 124, "within"; 5 of the 10 GPU-hours unpriced */
    json_t *r = realised(30, 25, 3100, "USD");
    json_object_set_new(r, "unpriced_runs", json_integer(4));
    json_object_set_new(r, "unpriced_gpu_hours", json_real(5));
    json_object_set_new(json_array_get(json_object_get(r, "months"), 0), "unpriced_gpu_hours",
                        json_real(5));
    json_t *v = decide(o, "USD", r);
    assert_string_equal(verdict(v), "not_comparable");
    assert_true(json_is_null(json_object_get(v, "error")));
    const char *why = json_string_value(json_object_get(v, "reason"));
    assert_non_null(strstr(why, "4 runs"));
    assert_non_null(strstr(why, "PUT /api/v1/clusters"));
    json_t *real = json_object_get(v, "realised");
    assert_true(json_is_null(json_object_get(real, "cost_per_completed")));
    assert_true(fabs(json_real_value(json_object_get(real, "cost")) - 3100) < 1e-12);
    json_t *m = json_array_get(json_object_get(real, "months"), 0);
    assert_true(json_is_null(json_object_get(m, "cost_per_completed")));
    assert_true(fabs(json_real_value(json_object_get(m, "unpriced_gpu_hours")) - 5) < 1e-12);
    json_decref(v);
    json_decref(o);
}

static void test_track_record(void **state)
{
    (void)state;
    json_t *list = load("["
                        "{\"signer\":\"olga\",\"teams\":[\"vision\"],\"verdict\":\"drift\","
                        "\"error\":0.35},"
                        "{\"signer\":\"olga\",\"teams\":[\"vision\",\"nlp\"],"
                        "\"verdict\":\"within\",\"error\":-0.1},"
                        "{\"signer\":\"olga\",\"teams\":[\"nlp\"],\"verdict\":\"within\","
                        "\"error\":0.05},"
                        "{\"signer\":\"pavel\",\"teams\":[\"nlp\"],"
                        "\"verdict\":\"too_few_runs\",\"error\":null}]");
    json_t *tr = outcome_track_record(list);
    assert_non_null(tr);
    json_t *olga = json_array_get(json_object_get(tr, "owners"), 0);
    assert_string_equal(json_string_value(json_object_get(olga, "owner")), "olga");
    assert_int_equal(json_integer_value(json_object_get(olga, "decisions")), 3);
    assert_int_equal(json_integer_value(json_object_get(olga, "scored")), 3);
    assert_int_equal(json_integer_value(json_object_get(olga, "within_threshold")), 2);
    assert_true(fabs(json_real_value(json_object_get(olga, "share_within_threshold")) - 2.0 / 3) <
                1e-12);
    assert_true(fabs(json_real_value(json_object_get(olga, "median_error")) - 0.05) < 1e-12);
    /* pavel: a decision not scored yet: no share, no median */
    json_t *pavel = json_array_get(json_object_get(tr, "owners"), 1);
    assert_int_equal(json_integer_value(json_object_get(pavel, "scored")), 0);
    assert_true(json_is_null(json_object_get(pavel, "share_within_threshold")));
    assert_true(json_is_null(json_object_get(pavel, "median_error")));
    /* teams, sorted: nlp (within −0.1, within 0.05, not scored) then vision (0.35, −0.1) */
    json_t *nlp = json_array_get(json_object_get(tr, "teams"), 0);
    assert_string_equal(json_string_value(json_object_get(nlp, "team")), "nlp");
    assert_int_equal(json_integer_value(json_object_get(nlp, "decisions")), 3);
    assert_true(fabs(json_real_value(json_object_get(nlp, "median_error")) - (-0.025)) < 1e-12);
    json_t *vision = json_array_get(json_object_get(tr, "teams"), 1);
    assert_true(fabs(json_real_value(json_object_get(vision, "median_error")) - 0.125) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(vision, "share_within_threshold")) - 0.5) <
                1e-12);
    json_decref(tr);
    json_decref(list);
    tr = outcome_track_record(NULL);
    assert_int_equal(json_array_size(json_object_get(tr, "owners")), 0);
    json_decref(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predicted_compute), cmocka_unit_test(test_within_and_drift),
        cmocka_unit_test(test_not_enough),        cmocka_unit_test(test_not_comparable),
        cmocka_unit_test(test_track_record),      cmocka_unit_test(test_partly_unpriced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
