/* The formats table (core/formats/formats.h): each reader's enum is built from its list, so a
 * name maps to its enum value and back; format_join renders an enum's allowed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/formats.h"
#include "core/formats/loadtest.h"
#include "core/formats/telemetry.h"
#include "oracle/format_names.h"

static void names_map_to_their_readers(void **state)
{
    (void)state;
    for (int f = 1; f < TELEMETRY_FORMAT_END; f++) {
        const char *name = TELEMETRY_FORMAT_NAMES[f - 1];
        assert_non_null(name);
        assert_int_equal(telemetry_format_from_name(name), f);
        assert_string_equal(telemetry_format_name((enum telemetry_format)f), name);
    }
    assert_null(TELEMETRY_FORMAT_NAMES[TELEMETRY_FORMAT_END - 1]);
    for (int f = 1; f < LOADTEST_FORMAT_END; f++)
        assert_int_equal(loadtest_format_from_name(LOADTEST_FORMAT_NAMES[f - 1]), f);
    assert_null(LOADTEST_FORMAT_NAMES[LOADTEST_FORMAT_END - 1]);
    assert_int_equal(format_find(RUNS_FORMAT_NAMES, "openb"), RUNS_OPENB);
    assert_int_equal(format_find(OFFERS_FORMAT_NAMES, "skypilot"), OFFERS_SKYPILOT);
    assert_int_equal(format_find(RUNS_FORMAT_NAMES, "nvidia-smi"), RUNS_UNKNOWN);
    assert_int_equal(format_find(RUNS_FORMAT_NAMES, NULL), RUNS_UNKNOWN);
    assert_int_equal(telemetry_format_from_name("sacct"), TELEMETRY_UNKNOWN);
    assert_string_equal(telemetry_format_name(TELEMETRY_UNKNOWN), "unknown");
}

static void every_kind_is_listed_once(void **state)
{
    (void)state;
    size_t n = 0;
    for (const struct format_kind *k = FORMAT_KINDS; k->kind; k++, n++)
        assert_ptr_equal(format_names_of(k->kind), k->names);
    assert_int_equal(n, 4);
    assert_ptr_equal(format_names_of("telemetry"), TELEMETRY_FORMAT_NAMES);
    assert_null(format_names_of("workloads"));
    assert_null(format_names_of(NULL));
}

static void join_keeps_whole_names(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(format_join(LOADTEST_FORMAT_NAMES, buf, sizeof buf),
                        "vllm, genai-perf, mlperf");
    char small[16]; /* "vllm, genai-perf" would need 17 */
    assert_string_equal(format_join(LOADTEST_FORMAT_NAMES, small, sizeof small), "vllm");
    static const char *const NONE[] = {NULL};
    assert_string_equal(format_join(NONE, buf, sizeof buf), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_map_to_their_readers),
        cmocka_unit_test(every_kind_is_listed_once),
        cmocka_unit_test(join_keeps_whole_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
