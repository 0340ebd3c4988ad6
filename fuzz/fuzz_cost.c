/* Fuzz target: scenario JSON bytes → cost_compare. It must never crash, never return a figure
 * that is NaN or infinite, and always either compare or name at least one problem; a result
 * must render as a table and match itself. Large trial counts are capped so each input stays
 * fast: the Monte Carlo cost is linear in trials and proven elsewhere. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost/cost.h"

#define FUZZ_MAX_INPUT_BYTES (256u << 10)
#define FUZZ_MAX_TRIALS 2000

static void check_finite(const json_t *v)
{
    if (json_is_real(v) && !isfinite(json_real_value(v)))
        abort();
    size_t i;
    const char *key;
    json_t *child;
    if (json_is_array(v))
        json_array_foreach(v, i, child) check_finite(child);
    if (json_is_object(v))
        json_object_foreach((json_t *)v, key, child) check_finite(child);
}

static void cap_trials(json_t *scenario)
{
    json_t *trials = json_object_get(json_object_get(scenario, "assumptions"), "trials");
    if (json_is_number(trials) && json_number_value(trials) > FUZZ_MAX_TRIALS)
        json_object_set_new(json_object_get(scenario, "assumptions"), "trials",
                            json_integer(FUZZ_MAX_TRIALS));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    json_error_t error;
    json_t *scenario = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &error);
    if (!scenario)
        return 0;
    cap_trials(scenario);
    struct problems errs;
    problems_init(&errs);
    json_t *result = cost_compare(scenario, &errs);
    if (!result && errs.total == 0)
        abort(); /* a refusal must say why */
    if (result) {
        check_finite(result);
        char *table = cost_format_table(result);
        if (!table)
            abort();
        free(table);
        char where[256];
        if (cost_compare_results(result, result, 0, where, sizeof where) != 0)
            abort();
        json_decref(result);
    }
    problems_free(&errs);
    json_decref(scenario);
    return 0;
}
