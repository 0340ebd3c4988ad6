/* The nesting scan in front of jansson: depth counted without recursion, strings skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/jsonlimit.h"

static char *nested(int n, const char *open, const char *close)
{
    size_t lo = strlen(open), lc = strlen(close);
    char *s = malloc((size_t)n * (lo + lc) + 1);
    size_t k = 0;
    for (int i = 0; i < n; i++, k += lo)
        memcpy(s + k, open, lo);
    for (int i = 0; i < n; i++, k += lc)
        memcpy(s + k, close, lc);
    s[k] = '\0';
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    char *ok = nested(JSON_NEST_MAX, "[", "]");
    char *deep = nested(JSON_NEST_MAX + 1, "{\"a\":", "}");
    struct json_nest_at at;
    assert_true(json_nest_ok(ok, strlen(ok), JSON_NEST_MAX, false, &at));
    assert_false(json_nest_ok(deep, strlen(deep), JSON_NEST_MAX, false, &at));
    assert_int_equal(at.line, 1);
    assert_int_equal(at.column, 5 * JSON_NEST_MAX + 1);
    json_error_t err;
    json_t *v = json_load_bounded(ok, strlen(ok), 0, &err);
    assert_non_null(v);
    json_decref(v);
    assert_null(json_load_bounded(deep, strlen(deep), 0, &err));
    assert_int_equal(json_error_code(&err), json_error_stack_overflow);
    free(ok);
    free(deep);
}

static void test_million_deep_does_not_recurse(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *s = malloc(n);
    memset(s, '[', n);
    json_error_t err;
    assert_null(json_load_bounded(s, n, JSON_DECODE_ANY, &err));
    assert_int_equal(json_error_code(&err), json_error_stack_overflow);
    free(s);
}

static void test_strings_and_lines(void **state)
{
    (void)state;
    /* brackets in strings, escaped quotes, and a newline before the offending bracket */
    const char *text = "{\"k\":\"[[[\\\"[[[\",\n \"v\":[[1]]}";
    struct json_nest_at at;
    assert_true(json_nest_ok(text, strlen(text), 3, false, &at));
    assert_false(json_nest_ok(text, strlen(text), 2, false, &at));
    assert_int_equal(at.line, 2);
    assert_int_equal(at.column, 7);
}

static void test_first_value_only(void **state)
{
    (void)state;
    /* documents read one after another: only the first is scanned */
    const char *two = "[1] [[[[1]]]]";
    assert_true(json_nest_ok(two, strlen(two), 1, true, NULL));
    assert_false(json_nest_ok(two, strlen(two), 1, false, NULL));
    const char *scalar = "17 [[[[1]]]]";
    assert_true(json_nest_ok(scalar, strlen(scalar), 1, true, NULL));
    json_error_t err;
    json_t *v = json_load_bounded(two, strlen(two), JSON_DISABLE_EOF_CHECK, &err);
    assert_true(json_is_array(v));
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_million_deep_does_not_recurse),
        cmocka_unit_test(test_strings_and_lines),
        cmocka_unit_test(test_first_value_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
