/* Plausibility of telemetry against an offer: model names as the tools print them against the
 * offers' model names, memory totals, MIG and impossible values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/plausible.h"

static void test_model_names(void **state)
{
    (void)state;
    assert_true(plausible_model_matches("A100-80GB", "NVIDIA A100-SXM4-80GB"));
    assert_true(plausible_model_matches("A100", "NVIDIA A100 80GB PCIe"));
    assert_true(plausible_model_matches("H100-80GB", "NVIDIA H100 80GB HBM3"));
    assert_true(plausible_model_matches("L40S", "NVIDIA L40S"));
    assert_true(plausible_model_matches("RTX6000", "Quadro RTX 6000"));
    assert_true(plausible_model_matches("RTX 4000 Ada", "NVIDIA RTX 4000 Ada Generation"));
    assert_true(plausible_model_matches("NVIDIA", "anything")); /* no model number: no verdict */
    assert_false(plausible_model_matches("A100-80GB", "GeForce GTX 1080 Ti"));
    assert_false(plausible_model_matches("H100-80GB", "NVIDIA RTX 4000 Ada Generation"));
    assert_false(plausible_model_matches("L40S", "NVIDIA H200"));
}

static struct telemetry_sample sample(const char *model, double used, double total, double duty,
                                      bool mig)
{
    struct telemetry_sample s;
    memset(&s, 0, sizeof s);
    strcpy(s.gpu, "GPU-0");
    snprintf(s.model, sizeof s.model, "%s", model);
    s.memory_used_gb = used;
    s.memory_total_gb = total;
    s.duty_cycle = duty;
    s.sm_active = s.power_w = NAN;
    s.mig = mig;
    return s;
}

static const char *code_at(const json_t *w, size_t i)
{
    return json_string_value(json_object_get(json_array_get(w, i), "code"));
}

static void test_warnings(void **state)
{
    (void)state;
    struct plausible_telemetry p;
    /* the case: an 80 GB A100, 78 GB used, on a 40 GB A100 offer */
    plausible_telemetry_init(&p);
    struct telemetry_sample s = sample("", 78.4, 80, 0.3, false);
    plausible_telemetry_add(&p, &s);
    json_t *w = plausible_telemetry_warnings(&p, "A100-40GB", 40);
    assert_int_equal(json_array_size(w), 2);
    assert_string_equal(code_at(w, 0), "memory_mismatch");
    assert_string_equal(code_at(w, 1), "memory_over_offer");
    assert_true(plausible_refuses(w));
    json_decref(w);
    /* the same on its own offer: nothing; an L40S reports 45 GiB of its 48 GB: within 12 % */
    w = plausible_telemetry_warnings(&p, "A100-80GB", 80);
    assert_int_equal(json_array_size(w), 0);
    assert_false(plausible_refuses(w));
    json_decref(w);
    plausible_telemetry_init(&p);
    s = sample("NVIDIA L40S", 1, 44.99, 0, false);
    plausible_telemetry_add(&p, &s);
    w = plausible_telemetry_warnings(&p, "L40S", 48);
    assert_int_equal(json_array_size(w), 0);
    json_decref(w);
    /* two other GPUs named: one warning each; used over total: impossible, not refusing */
    plausible_telemetry_init(&p);
    s = sample("GeForce GTX 1080 Ti", 2.8, 10.9, 0.36, false);
    plausible_telemetry_add(&p, &s);
    s = sample("GeForce GTX 1060 6GB", 7, 5.9, 0, false);
    plausible_telemetry_add(&p, &s);
    w = plausible_telemetry_warnings(&p, "A100-80GB", NAN);
    assert_int_equal(json_array_size(w), 3);
    assert_string_equal(code_at(w, 0), "gpu_model_mismatch");
    assert_string_equal(code_at(w, 1), "gpu_model_mismatch");
    assert_string_equal(code_at(w, 2), "memory_over_total");
    assert_false(json_is_true(json_object_get(json_array_get(w, 2), "refuses")));
    json_decref(w);
    /* MIG without utilization: says why there is no duty cycle */
    plausible_telemetry_init(&p);
    s = sample("NVIDIA H100 80GB HBM3", 10.9, 79.6, NAN, true);
    plausible_telemetry_add(&p, &s);
    w = plausible_telemetry_warnings(&p, "H100-80GB", 80);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(code_at(w, 0), "mig");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(w, 0), "message")),
                           "no duty cycle can be measured"));
    json_decref(w);
    /* no offer known, no samples with a duty cycle */
    plausible_telemetry_init(&p);
    s = sample("", NAN, NAN, NAN, false);
    plausible_telemetry_add(&p, &s);
    w = plausible_telemetry_warnings(&p, NULL, NAN);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(code_at(w, 0), "no_duty_cycle");
    json_decref(w);
    /* attack pass: dmon names neither model nor memory total, so an H200 capture went onto an
     * A100 benchmark without a word: now it says the fit could not be checked (not refusing) */
    plausible_telemetry_init(&p);
    s = sample("", 60, NAN, 1.0, false);
    plausible_telemetry_add(&p, &s);
    w = plausible_telemetry_warnings(&p, "A100-80GB", 80);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(code_at(w, 0), "gpu_unchecked");
    assert_false(plausible_refuses(w));
    json_decref(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_names),
        cmocka_unit_test(test_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
