/* The problem list (core/problems.h): what the editing calls change, and what they leave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "core/problems.h"

static void test_prefix_from(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    problems_add(&p, "/name", "kept as it is");
    problems_add(&p, "/options/0/offer", "a");
    problems_add(&p, "", "b");
    problems_prefix(&p, 1, "/document");
    assert_string_equal(p.items[0].pointer, "/name");
    assert_string_equal(p.items[1].pointer, "/document/options/0/offer");
    assert_string_equal(p.items[2].pointer, "/document");
    assert_string_equal(p.items[1].message, "a");
    assert_int_equal(p.total, 3);
    problems_free(&p);
}

static void test_default_line_from(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    problems_add(&p, "/x", "before");
    problems_add_line(&p, 7, 3, "/y", "has a line");
    problems_add(&p, "/z", "no line");
    problems_default_line(&p, 1, 12);
    assert_int_equal(p.items[0].line, 0);
    assert_int_equal(p.items[1].line, 7);
    assert_int_equal(p.items[1].column, 3);
    assert_int_equal(p.items[2].line, 12);
    problems_free(&p);
}

static void test_place_whole_input(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    problems_add(&p, "", "not the expected tool's output");
    problems_add(&p, "/gpus", "a pointer, no line");
    problems_add_line(&p, 4, 0, "", "a line");
    problems_place_whole_input(&p, 1);
    assert_int_equal(p.items[0].line, 1);
    assert_int_equal(p.items[1].line, 0);
    assert_int_equal(p.items[2].line, 4);
    problems_free(&p);
}

static void test_kept_and_counted(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    for (int i = 0; i < PROBLEMS_MAX_KEPT + 5; i++)
        problems_add(&p, NULL, "n%d", i);
    assert_int_equal(p.count, PROBLEMS_MAX_KEPT);
    assert_int_equal(p.total, PROBLEMS_MAX_KEPT + 5);
    assert_string_equal(p.items[0].pointer, "");
    problems_prefix(&p, PROBLEMS_MAX_KEPT + 1, "/never"); /* from beyond the kept: nothing */
    assert_string_equal(p.items[PROBLEMS_MAX_KEPT - 1].pointer, "");
    problems_free(&p);
    assert_int_equal(p.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_from),
        cmocka_unit_test(test_default_line_from),
        cmocka_unit_test(test_place_whole_input),
        cmocka_unit_test(test_kept_and_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
