/* Strict number parsing and shortest printing: what the readers accept as a figure. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/textnum.h"

static void test_parse_double(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double value;
    } good[] = {{"0", 0},    {"-1.5", -1.5}, {"433.78", 433.78}, {"1e3", 1000}, {"+2.5E-3", 0.0025},
                {".5", 0.5}, {"5.", 5},      {"1e-400", 0}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        double v = -99;
        assert_true(textnum_parse_double(good[i].text, strlen(good[i].text), &v));
        assert_true(v == good[i].value);
    }
    /* what strtod would take but a figure must not be */
    static const char *const bad[] = {"",      "nan", "inf",   "Infinity", "0x10", " 1",
                                      "1 ",    "1e",  "e5",    ".",        "-",    "1,5",
                                      "1e400", "--1", "1.2.3", "12abc"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double v;
        assert_false(textnum_parse_double(bad[i], strlen(bad[i]), &v));
    }
}

/* fuzz_textnum: a number of 64 or more characters was refused as a double though the same text
 * was an int64 (corpus/textnum/zeros_64). Length is not a reason to refuse a number. */
static void test_parse_long_double(void **state)
{
    (void)state;
    char zeros[101];
    memset(zeros, '0', 100);
    zeros[100] = '\0';
    double v = -1;
    int64_t i = -1;
    assert_true(textnum_parse_int64(zeros, 100, &i));
    assert_true(textnum_parse_double(zeros, 100, &v));
    assert_true(i == 0 && v == 0);
    const char *pi = "3.14159265358979323846264338327950288419716939937510582097494459230781640";
    assert_true(textnum_parse_double(pi, strlen(pi), &v));
    assert_true(v == 3.141592653589793);
    zeros[99] = 'x'; /* still checked to the end */
    assert_false(textnum_parse_double(zeros, 100, &v));
}

static void test_parse_int64(void **state)
{
    (void)state;
    int64_t v;
    assert_true(textnum_parse_int64("9223372036854775807", 19, &v));
    assert_true(v == INT64_MAX);
    assert_true(textnum_parse_int64("-9223372036854775808", 20, &v));
    assert_true(v == INT64_MIN);
    assert_false(textnum_parse_int64("9223372036854775808", 19, &v));
    assert_false(textnum_parse_int64("-", 1, &v));
    assert_false(textnum_parse_int64("1.0", 3, &v));
    assert_false(textnum_parse_int64("", 0, &v));
}

/* The shortest text that reads back exactly, in plain notation for everyday magnitudes. */
static void test_format_double(void **state)
{
    (void)state;
    static const struct {
        double value;
        const char *text;
    } cases[] = {{80, "80"},
                 {0.46, "0.46"},
                 {0.1, "0.1"},
                 {-0.0, "0"},
                 {1.0 / 3, "0.3333333333333333"},
                 {79.6474609375, "79.6474609375"},
                 {1e-7, "1e-07"},
                 {1e20, "1e+20"},
                 {123456789012345, "123456789012345"},
                 {0.30000000000000004, "0.30000000000000004"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[TEXTNUM_DOUBLE_MAX_CHARS];
        assert_string_equal(textnum_format_double(cases[i].value, buf), cases[i].text);
    }
}

static void test_trim_and_words(void **state)
{
    (void)state;
    const char *s = " \t 81559 MiB \t";
    size_t len = strlen(s);
    textnum_trim(&s, &len);
    assert_int_equal(len, 9);
    assert_memory_equal(s, "81559 MiB", 9);
    assert_true(textnum_equals_word("unknown", 7, "Unknown"));
    assert_false(textnum_equals_word("Unknow", 6, "Unknown"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_double),   cmocka_unit_test(test_parse_long_double),
        cmocka_unit_test(test_parse_int64),    cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_trim_and_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
