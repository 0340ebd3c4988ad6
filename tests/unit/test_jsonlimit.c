/* The nesting scan in front of jansson: depth counted without recursion, strings skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* Allocations counted as glibc's chunks of the requested sizes (a header keeps each size), so
 * the figure does not depend on the allocator the test runs under. */
static size_t live, peak;

static size_t chunk_of(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

static void *counted_malloc(size_t n)
{
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    p[0] = n;
    live += chunk_of(n);
    if (live > peak)
        peak = live;
    return p + 2;
}

static void counted_free(void *q)
{
    if (!q)
        return;
    size_t *p = (size_t *)q - 2;
    live -= chunk_of(p[0]);
    free(p);
}

/* The parse's peak of live bytes against the estimate: never under it, at most 2.5 times. */
static void cost_within(const char *text)
{
    size_t len = strlen(text), estimate = json_parse_cost(text, len, false);
    json_set_alloc_funcs(counted_malloc, counted_free);
    live = peak = 0;
    json_error_t err;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &err);
    assert_non_null(v);
    json_decref(v);
    json_set_alloc_funcs(malloc, free);
    assert_true(peak > 0);
    if (estimate < peak || estimate > peak / 2 * 5)
        fail_msg("%.40s…: estimate %zu, parsed peak %zu", text, estimate, peak);
}

static char *repeat(const char *open, const char *item, const char *sep, const char *close,
                    size_t n)
{
    size_t li = strlen(item), ls = strlen(sep);
    char *s = malloc(strlen(open) + n * (li + ls) + strlen(close) + 1);
    size_t k = strlen(open);
    memcpy(s, open, k);
    for (size_t i = 0; i < n; i++) {
        memcpy(s + k, item, li);
        k += li;
        if (i + 1 < n) {
            memcpy(s + k, sep, ls);
            k += ls;
        }
    }
    strcpy(s + k, close);
    return s;
}

static void test_parse_cost_tracks_jansson(void **state)
{
    (void)state;
    static const char *const items[] = {
        "0",
        "-12.5e3",
        "{}",
        "[]",
        "\"a string of some length, as names are\"",
        ("{\"external_id\":\"j1\",\"submitted_at\":\"2025-03-01T10:00:00Z\",\"gpus\":8,"
         "\"state\":\"COMPLETED\",\"team\":\"vision\",\"gpu_utilization\":0.73}"), /* one run */
        "[1,2,3,[4,5,{\"k\":[true,false,null]}]]",
        "true",
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        char *text = repeat("[", items[i], ",", "]", 100000);
        cost_within(text);
        free(text);
    }
    char *keys = malloc(100000 * 24 + 2);
    size_t k = 0;
    keys[k++] = '{';
    for (int i = 0; i < 100000; i++)
        k += (size_t)sprintf(keys + k, "%s\"key%d\":%d", i ? "," : "", i, i);
    strcpy(keys + k, "}");
    cost_within(keys);
    free(keys);
    /* One long token: jansson's lexer keeps its text in a buffer that doubles (a new one, then
     * the old freed) besides the value made of it, so a 31 MiB string in a runs array took
     * 96 MiB to parse where the estimate said 31. */
    static const char *const tokens[][3] = {
        {"[\"", "a", "\"]"},
        {"[\"", "\\u00e9", "\"]"},
        {"[0.", "1", "]"},
        {"{\"", "k", "\":0}"},
    };
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        size_t n = 1000000 / strlen(tokens[i][1]);
        char *text = repeat(tokens[i][0], tokens[i][1], "", tokens[i][2], n);
        cost_within(text);
        free(text);
    }
}

static void test_parse_budget_refuses_before_parsing(void **state)
{
    (void)state;
    char *zeros = repeat("[", "0", ",", "]", 1000000);
    size_t len = strlen(zeros), cost = json_parse_cost(zeros, len, false);
    assert_true(cost >= 1000000 * 32);
    json_error_t err;
    assert_null(json_load_budget(zeros, len, 0, cost - 1, &err));
    assert_int_equal(json_error_code(&err), json_error_out_of_memory);
    assert_non_null(strstr(err.text, "MiB"));
    json_t *v = json_load_budget(zeros, len, 0, cost, &err);
    assert_true(json_is_array(v));
    json_decref(v);
    /* with JSON_DISABLE_EOF_CHECK only the first value counts */
    const char *two = "[0] [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]";
    assert_int_equal(json_parse_cost(two, strlen(two), true), json_parse_cost("[0]", 3, false));
    /* a number first: its own text, not the rest of the buffer, is the lexer's */
    assert_int_equal(json_parse_cost(two + 1, strlen(two + 1), true),
                     json_parse_cost("0", 1, false));
    v = json_load_budget(two, strlen(two), JSON_DISABLE_EOF_CHECK, 256, &err);
    assert_true(json_is_array(v));
    json_decref(v);
    free(zeros);
}

static void test_texts_check(void **state)
{
    (void)state;
    json_error_t err;
    json_t *v =
        json_loads("{\"model\":\"a\\u001b]0;x\\u0007\",\"notes\":\"two\\nlines\\tok\","
                   "\"results\":[{\"backend\":\"b\\u009b\"},{\"backend\":\"\\u00e9\"}],\"n\":1}",
                   0, &err);
    assert_non_null(v);
    struct problems p;
    problems_init(&p);
    assert_int_equal(json_texts_check(v, "", &p), 2);
    assert_int_equal(p.count, 2);
    const char *a = p.items[0].pointer, *b = p.items[1].pointer;
    assert_true((strcmp(a, "/model") == 0 && strcmp(b, "/results/0/backend") == 0) ||
                (strcmp(b, "/model") == 0 && strcmp(a, "/results/0/backend") == 0));
    problems_free(&p);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_million_deep_does_not_recurse),
        cmocka_unit_test(test_strings_and_lines),
        cmocka_unit_test(test_first_value_only),
        cmocka_unit_test(test_parse_cost_tracks_jansson),
        cmocka_unit_test(test_parse_budget_refuses_before_parsing),
        cmocka_unit_test(test_texts_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
