#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/duration.h"

static void test_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t ms;
    } ok[] = {{"15s", 15000},     {"10m", 600000}, {"1h", 3600000},
              {"1h30m", 5400000}, {"500ms", 500},  {"1m500ms", 60500},
              {"2d", 172800000},  {"0h1s", 1000},  {"366d", DURATION_MAX_MS},
              {"90s", 90000}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = -1;
        assert_true(duration_parse_ms(ok[i].s, &ms));
        assert_true(ms == ok[i].ms);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",      "15", "s",     "-5s",   "1.5s", "15 s", "15x",
        "15sec", "0s", "0ms0s", "1h-1m", " 1s",  "367d", "99999999999999999999s",
        "1mss",  "h1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 42;
        assert_false(duration_parse_ms(bad[i], &ms));
        assert_true(ms == 42);
    }
    int64_t ms;
    assert_false(duration_parse_ms(NULL, &ms));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
