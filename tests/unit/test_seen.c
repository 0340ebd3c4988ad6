/* The checkpoint a log server remembers (outside its database) against the database's head:
 * equal or extended is fine; smaller, another root for the size, or a stored checkpoint of
 * that size with another root (or none) is a rewound or rewritten database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/ledger/seen.h"

static const uint8_t A[32] = {1}, B[32] = {2};

static void test_same_head(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(seen_check(5, A, 5, A, NULL, why, sizeof why), 0);
    assert_string_equal(why, "");
    assert_int_equal(seen_check(0, A, 0, A, NULL, why, sizeof why), 0);
}

static void test_head_extends_it(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(seen_check(5, A, 9, B, A, why, sizeof why), 0);
    assert_string_equal(why, "");
}

static void test_rewound(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(seen_check(5, A, 4, B, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "the log head has size 4, but this server signed or observed the "
                                "checkpoint of size 5 (root 01000000"));
    assert_non_null(strstr(why, "the database was rewound"));
    assert_int_equal(seen_check(1, A, 0, A, NULL, why, sizeof why), -1);
}

static void test_other_root_same_size(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(seen_check(5, A, 5, B, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "the log head has size 5 and root 0200"));
    assert_non_null(strstr(why, "but this server signed or observed root 0100"));
}

static void test_stored_checkpoint_rewritten_or_gone(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(seen_check(5, A, 9, B, B, why, sizeof why), -1);
    assert_non_null(strstr(why, "the stored checkpoint of size 5 has root 0200"));
    assert_int_equal(seen_check(5, A, 9, B, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "no checkpoint of size 5 is stored"));
}

static void test_why_is_bounded(void **state)
{
    (void)state;
    char why[16];
    assert_int_equal(seen_check(5, A, 4, B, NULL, why, sizeof why), -1);
    assert_int_equal(strlen(why), sizeof why - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_head),
        cmocka_unit_test(test_head_extends_it),
        cmocka_unit_test(test_rewound),
        cmocka_unit_test(test_other_root_same_size),
        cmocka_unit_test(test_stored_checkpoint_rewritten_or_gone),
        cmocka_unit_test(test_why_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
