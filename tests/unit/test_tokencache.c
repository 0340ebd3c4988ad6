/* The token-resolution cache: freshness bounded by the time to live and the token's expiry,
 * flush, collisions, bad keys, and a disabled cache (ttl 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth/tokencache.h"

#define K1 "00000000000000000000000000000000000000000000000000000000000000aa"
#define K2 "11111111111111111111111111111111111111111111111111111111111111bb"
/* Same first eight bytes as K1 (same slot in any table size), another key. */
#define K1_TWIN "0000000000000000ffffffffffffffffffffffffffffffffffffffffffffffff"

static void assert_get(struct token_cache *c, const char *key, int64_t now, const char *want)
{
    char *got = token_cache_get(c, key, now);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_fresh_within_ttl_only(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(16, 1000);
    assert_non_null(c);
    assert_get(c, K1, 0, NULL);
    token_cache_put(c, K1, "{\"user\":1}", 5000, -1);
    assert_get(c, K1, 5000, "{\"user\":1}");
    assert_get(c, K1, 5999, "{\"user\":1}");
    assert_get(c, K1, 6000, NULL); /* stale at exactly put + ttl */
    assert_get(c, K1, 5500, NULL); /* and a stale entry is gone, not revived */
    token_cache_free(c);
}

static void test_expiry_before_ttl(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(16, 1000);
    token_cache_put(c, K1, "a", 100, 400); /* the token expires at 400 */
    assert_get(c, K1, 399, "a");
    assert_get(c, K1, 400, NULL);
    token_cache_put(c, K2, "b", 100, 50); /* already expired: not kept */
    assert_get(c, K2, 100, NULL);
    token_cache_free(c);
}

static void test_flush_forgets_everything(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(16, 1000);
    token_cache_put(c, K1, "a", 0, -1);
    token_cache_put(c, K2, "b", 0, -1);
    token_cache_flush(c);
    assert_get(c, K1, 1, NULL);
    assert_get(c, K2, 1, NULL);
    token_cache_free(c);
}

static void test_collision_evicts_never_confuses(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(1, 1000);
    token_cache_put(c, K1, "a", 0, -1);
    token_cache_put(c, K1_TWIN, "twin", 0, -1);
    assert_get(c, K1, 1, NULL); /* evicted; never the twin's row */
    assert_get(c, K1_TWIN, 1, "twin");
    token_cache_free(c);
}

static void test_bad_keys_and_rows(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(16, 1000);
    token_cache_put(c, "abc", "a", 0, -1);
    assert_get(c, "abc", 1, NULL);
    token_cache_put(c, K1 "0", "a", 0, -1); /* 65 characters */
    assert_get(c, K1 "0", 1, NULL);
    char key[65];
    memcpy(key, K1, 65);
    key[3] = 'g';
    token_cache_put(c, key, "a", 0, -1);
    assert_get(c, key, 1, NULL);
    char *big = malloc(20000);
    memset(big, 'x', 19999);
    big[19999] = '\0';
    token_cache_put(c, K2, big, 0, -1);
    assert_get(c, K2, 1, NULL);
    free(big);
    token_cache_put(c, K2, NULL, 0, -1);
    assert_get(c, K2, 1, NULL);
    assert_get(NULL, K1, 0, NULL);
    token_cache_put(NULL, K1, "a", 0, -1);
    token_cache_flush(NULL);
    token_cache_free(NULL);
    token_cache_free(c);
}

static void test_ttl_zero_and_bounds(void **state)
{
    (void)state;
    struct token_cache *c = token_cache_new(16, 0);
    assert_non_null(c);
    token_cache_put(c, K1, "a", 0, -1);
    assert_get(c, K1, 0, NULL);
    token_cache_free(c);
    assert_null(token_cache_new(16, TOKEN_CACHE_MAX_TTL_MS + 1));
    assert_null(token_cache_new(16, -1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_within_ttl_only),
        cmocka_unit_test(test_expiry_before_ttl),
        cmocka_unit_test(test_flush_forgets_everything),
        cmocka_unit_test(test_collision_evicts_never_confuses),
        cmocka_unit_test(test_bad_keys_and_rows),
        cmocka_unit_test(test_ttl_zero_and_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
