/* Timestamps as the tools print them → epoch, and epoch → RFC 3339 UTC. Epoch figures were
 * checked with `date -u -d <time> +%s`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/timefmt.h"

static int64_t epoch_ms(const char *text)
{
    struct timefmt_fields f;
    int64_t ms;
    assert_true(timefmt_parse(text, strlen(text), &f));
    assert_int_equal(timefmt_resolve_ms(&f, NULL, NULL, &ms), 0);
    return ms;
}

static void test_forms(void **state)
{
    (void)state;
    assert_true(epoch_ms("2025-09-25T09:05:07") == 1758791107000);     /* sacct */
    assert_true(epoch_ms("2024/03/13 07:04:28.836") == 1710313468836); /* nvidia-smi */
    assert_true(epoch_ms("2025-01-01T10:00:00+01:00") == 1735722000000);
    assert_true(epoch_ms("2025-01-01T10:00:00+0100") == 1735722000000);
    assert_true(epoch_ms("2025-01-01T08:30:00-00:30") == 1735722000000);
    assert_true(epoch_ms("1969-12-31T23:59:59.5Z") == -500);
    assert_true(epoch_ms("2024-02-29T00:00:00Z") == 1709164800000);           /* leap day */
    assert_true(epoch_ms("2025-01-01T00:00:00.123456789Z") == 1735689600123); /* truncated */
    static const char *const bad[] = {"2025-02-29T00:00:00",
                                      "2025-13-01T00:00:00",
                                      "2025-01-01T24:00:00",
                                      "2025-01-01T00:60:00",
                                      "2025-01-01",
                                      "2025-01-01T00:00:00+25:00",
                                      "2025-01-01T00:00:00.",
                                      "2025-01-01T00:00:00 ",
                                      "2025-01-01T00:00:00Zulu",
                                      "2025/01-01T00:00:00",
                                      "Unknown",
                                      "0000-01-01T00:00:00", /* no year 0 (PostgreSQL refused
                                                                an upload's rollup with it) */
                                      ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct timefmt_fields f;
        assert_false(timefmt_parse(bad[i], strlen(bad[i]), &f));
    }
}

static void test_format(void **state)
{
    (void)state;
    char buf[TIMEFMT_UTC_LEN];
    assert_string_equal(timefmt_format_utc_ms(1758791107000, buf), "2025-09-25T09:05:07Z");
    assert_string_equal(timefmt_format_utc_ms(1710313468836, buf), "2024-03-13T07:04:28.836Z");
    assert_string_equal(timefmt_format_utc_ms(-500, buf), "1969-12-31T23:59:59.500Z");
    assert_string_equal(timefmt_format_utc_ms(253402300799000, buf), "9999-12-31T23:59:59Z");
    assert_string_equal(timefmt_format_utc_ms(253402300800000, buf), "9999-12-31T23:59:59Z");
    assert_int_equal(timefmt_days_from_civil(2000, 3, 1), 11017);
}

/* Calendar dates YYYY-MM-DD: leap years as the Gregorian calendar counts them. */
static void test_date_valid(void **state)
{
    (void)state;
    const char *good[] = {"2024-02-29", "2000-02-29", "2023-12-31",
                          "0001-01-01", "9999-12-31", "2023-04-30"};
    const char *bad[] = {"2023-02-29",  "1900-02-29", "0000-01-01", "2023-04-31", "2023-13-01",
                         "2023-00-10",  "2023-01-00", "2023-01-32", "2023-1-01",  "2023/01/01",
                         "2023-01-01T", "20230101",   "",           "2023-0a-01", "+023-01-01"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!timefmt_date_valid(good[i]))
            fail_msg("%s refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (timefmt_date_valid(bad[i]))
            fail_msg("%s accepted", bad[i]);
    assert_false(timefmt_date_valid(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_date_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
