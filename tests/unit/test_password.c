/* Password rules (named in the 422) and argon2id hashing: verify, wrong password, rehash of
 * hashes made with other parameters, and the dummy verify for unknown users. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sodium.h>
#include <string.h>
#include <time.h>

#include "core/auth/password.h"

static const char *broken(const char *pw, const char *user)
{
    return password_rule_broken(pw, strlen(pw), user);
}

static void test_rules(void **state)
{
    (void)state;
    assert_null(broken("correct horse battery", "ana"));
    assert_string_equal(broken("short", "ana"), "must be at least 12 characters");
    assert_string_equal(broken("aaaaaaaaaaaaaaaa", "ana"),
                        "must use at least 5 different characters");
    assert_string_equal(broken("Ana.Long-Name1", "ana.long-name1"), "must not be the username");
    /* Twelve characters counted as code points, not bytes: 11 × "é" (22 bytes) is too short. */
    assert_string_equal(broken("ééééééééééé", NULL), "must be at least 12 characters");
    char nul[] = "abcdefghijk\0lmnop";
    assert_string_equal(password_rule_broken(nul, sizeof nul - 1, NULL),
                        "must not contain NUL characters");
    char big[PASSWORD_MAX_BYTES + 2];
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = (char)('a' + i % 26);
    big[sizeof big - 1] = '\0';
    assert_string_equal(broken(big, NULL), "must be at most 1024 bytes");
    big[PASSWORD_MAX_BYTES] = '\0';
    assert_null(broken(big, NULL));
}

static void test_hash_and_verify(void **state)
{
    (void)state;
    char hash[PASSWORD_HASH_BYTES];
    const char *pw = "correct horse battery";
    assert_int_equal(password_hash(pw, strlen(pw), hash), 0);
    assert_non_null(strstr(hash, "$argon2id$v=19$m=65536,t=2,p=1$"));
    assert_null(strstr(hash, pw));
    assert_int_equal(password_verify(hash, pw, strlen(pw)), PASSWORD_OK);
    assert_int_equal(password_verify(hash, "correct horse batterx", strlen(pw)), PASSWORD_WRONG);
    assert_int_equal(password_verify(hash, pw, strlen(pw) - 1), PASSWORD_WRONG);
    char again[PASSWORD_HASH_BYTES];
    assert_int_equal(password_hash(pw, strlen(pw), again), 0);
    assert_string_not_equal(hash, again); /* salted */
}

/* Made with crypto_pwhash_str_alg(…, OPSLIMIT_MIN, 8 KiB, ARGON2ID13): a legacy hash. */
static const char LOW_COST[] =
    "$argon2id$v=19$m=8,t=1,p=1$TBz0z0tKfYf0CbTB2A284g$WQfF+bx341v77V22ylXPd268THelDwpRG3Yyky16JkY";

static void test_rehash_when_parameters_differ(void **state)
{
    (void)state;
    char stored[PASSWORD_HASH_BYTES] = {0};
    memcpy(stored, LOW_COST, sizeof LOW_COST);
    const char *pw = "low-cost legacy password 1";
    assert_int_equal(password_verify(stored, pw, strlen(pw)), PASSWORD_OK_REHASH);
    assert_int_equal(password_verify(stored, "low-cost legacy password 2", strlen(pw)),
                     PASSWORD_WRONG);
}

static void test_garbage_hash_is_wrong(void **state)
{
    (void)state;
    char stored[PASSWORD_HASH_BYTES] = "not a hash";
    assert_int_equal(password_verify(stored, "whatever it is", 14), PASSWORD_WRONG);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An unknown user costs a real verify. Each time is the fastest of three, so that a busy
 * machine slowing one run down does not decide the comparison. */
static void test_dummy_verify_costs_a_verify(void **state)
{
    (void)state;
    char hash[PASSWORD_HASH_BYTES];
    const char *pw = "correct horse battery";
    assert_int_equal(password_hash(pw, strlen(pw), hash), 0);
    double real = 1e9, dummy = 1e9;
    for (int i = 0; i < 3; i++) {
        double t0 = now_s();
        assert_int_equal(password_verify(hash, "wrong password here", 19), PASSWORD_WRONG);
        double t1 = now_s();
        assert_int_equal(password_verify(NULL, "wrong password here", 19), PASSWORD_WRONG);
        double t2 = now_s();
        real = t1 - t0 < real ? t1 - t0 : real;
        dummy = t2 - t1 < dummy ? t2 - t1 : dummy;
    }
    assert_true(dummy > real * 0.5);
    assert_true(dummy < real * 2.0);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_hash_and_verify),
        cmocka_unit_test(test_rehash_when_parameters_differ),
        cmocka_unit_test(test_garbage_hash_is_wrong),
        cmocka_unit_test(test_dummy_verify_costs_a_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
