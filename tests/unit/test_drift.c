/* core/ledger/drift: the option a decision stands on, the four metrics against what was
 * observed since, and when one departs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/ledger/drift.h"

static json_t *parse(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(v);
    return v;
}

/* A decided review: two options, the second chosen. */
static const char *DECIDED =
    "{\"chosen_option\": \"h100\", \"winner\": \"a100\", \"resolved\": {"
    "\"assumptions\": {\"failure_probability\": 0.05},"
    "\"options\": ["
    "{\"name\": \"a100\", \"offer\": {}, \"benchmark\": {\"throughput_units_per_s\": 10}},"
    "{\"name\": \"h100\", \"offer\": {\"provisioning_delay_s\": 300},"
    " \"benchmark\": {\"gpu_duty_cycle\": 0.8, \"throughput_units_per_s\": 40}}]}}";

static void test_option(void **state)
{
    (void)state;
    json_t *d = parse(DECIDED);
    size_t i = 9;
    const json_t *opt = drift_option(d, &i);
    assert_non_null(opt);
    assert_int_equal(i, 1); /* the chosen one, not the winner */
    json_object_del(d, "chosen_option");
    assert_non_null(drift_option(d, &i));
    assert_int_equal(i, 0); /* no choice: the winner */
    json_object_set_new(d, "winner", json_string("l40s"));
    assert_null(drift_option(d, &i)); /* a name that is no option */
    json_decref(d);
}

static void test_metrics_and_departures(void **state)
{
    (void)state;
    json_t *d = parse(DECIDED);
    size_t i;
    const json_t *opt = drift_option(d, &i);
    /* 40 runs, 10 failed (25 % against the scenario's 5 %); utilisation over 40 runs 0.78
     * (within 25 % of 0.8); queue 19 started runs only (too few); throughput 30 from two
     * benchmarks (25 % below 40: at the threshold, not beyond). */
    json_t *seen = parse("{\"runs\": 40, \"failed\": 10, \"util_n\": 40, \"util_mean\": 0.78,"
                         "\"queue_n\": 19, \"queue_mean_s\": 3000, \"duty_n\": 3,"
                         "\"duty_mean\": 0.1, \"throughput_n\": 2, \"throughput_mean\": 30}");
    struct drift_metric m[DRIFT_METRICS];
    drift_metrics(d, opt, seen, m);
    double rel;

    assert_string_equal(m[0].name, "failure_rate");
    assert_true(m[0].known);
    assert_true(fabs(m[0].assumed - 0.05) < 1e-12);
    assert_true(fabs(m[0].observed - 0.25) < 1e-12);
    assert_true(drift_departs(&m[0], 0.25, &rel));
    assert_true(fabs(rel - 4.0) < 1e-12); /* (0.25 − 0.05) / 0.05 */

    assert_string_equal(m[1].name, "gpu_utilization");
    assert_true(m[1].known); /* the runs' figure wins over the benchmarks' duty cycle */
    assert_true(fabs(m[1].observed - 0.78) < 1e-12);
    assert_string_equal(m[1].evidence_key, "run_uploads");
    assert_false(drift_departs(&m[1], 0.25, &rel));

    assert_string_equal(m[2].name, "queue_wait_s");
    assert_false(m[2].known);                      /* 19 < DRIFT_MIN_RUNS */
    assert_true(fabs(m[2].assumed - 300) < 1e-12); /* the offer's provisioning delay */
    assert_false(drift_departs(&m[2], 0.25, &rel));

    assert_string_equal(m[3].name, "throughput_units_per_s");
    assert_true(m[3].known);
    assert_false(drift_departs(&m[3], 0.25, &rel)); /* exactly 25 %: not beyond */
    assert_true(drift_departs(&m[3], 0.2, &rel));
    assert_true(fabs(rel + 0.25) < 1e-12);

    char msg[600];
    drift_message(&m[0], 4.0, 0.25, msg, sizeof msg);
    assert_string_equal(msg, "failure rate since the decision is 0.25 over 40 GPU runs since the "
                             "decision, higher than the 0.05 the decision assumed by 400% "
                             "(threshold 25%): the decision may no longer hold");
    json_decref(seen);

    /* Few runs with utilisation: the benchmarks' duty cycle stands in. A zero assumption is
     * measured against the floor (0.01), not divided by zero. */
    seen = parse("{\"runs\": 5, \"util_n\": 5, \"duty_n\": 3, \"duty_mean\": 0.4}");
    drift_metrics(d, opt, seen, m);
    assert_false(m[0].known);
    assert_true(m[1].known);
    assert_string_equal(m[1].evidence_key, "benchmarks");
    assert_true(drift_departs(&m[1], 0.25, &rel)); /* 0.4 against 0.8: −50 % */
    json_decref(seen);
    json_object_set_new(json_object_get(json_object_get(d, "resolved"), "assumptions"),
                        "failure_probability", json_real(0));
    seen = parse("{\"runs\": 20, \"failed\": 1}");
    drift_metrics(d, opt, seen, m);
    assert_true(drift_departs(&m[0], 0.25, &rel));
    assert_true(fabs(rel - 5.0) < 1e-12); /* 0.05 / 0.01 */
    /* A metric's own threshold wins over the review's. */
    m[0].threshold = 10;
    assert_false(drift_departs(&m[0], 0.25, &rel));
    json_decref(seen);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option),
        cmocka_unit_test(test_metrics_and_departures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
