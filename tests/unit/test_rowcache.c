/* The row cache: a hit only once the applied position reaches what the caller needs, fills
 * dropped when a change overtook them, forget and reset, the byte budget, least recently used
 * eviction within a set, keys that are not cached, and a cache that keeps nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "core/rowcache.h"

#define ID1 "0b6f3f0e-6a57-4d6c-9d0e-6c1f4d1a2b01"
#define ID2 "0b6f3f0e-6a57-4d6c-9d0e-6c1f4d1a2b02"

static void assert_get(struct rowcache *c, int kind, const char *id, uint64_t need,
                       const char *want, int want_behind)
{
    int behind = -1;
    char *got = rowcache_get(c, kind, id, need, &behind, NULL);
    assert_int_equal(behind, want_behind);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_hit_only_when_applied(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(64, 1 << 20);
    assert_non_null(c);
    assert_get(c, 0, ID1, 0, NULL, 0); /* nothing cached */
    assert_int_equal(rowcache_put(c, 0, ID1, "{\"v\":1}", NULL, rowcache_ticket(c)), 1);
    assert_get(c, 0, ID1, 0, "{\"v\":1}", 0);
    assert_get(c, 0, ID1, 100, NULL, 1); /* cached, but the caller needs position 100 */
    rowcache_applied(c, 100);
    assert_get(c, 0, ID1, 100, "{\"v\":1}", 0);
    assert_get(c, 0, ID1, 101, NULL, 1);
    rowcache_applied(c, 50); /* never backwards */
    assert_get(c, 0, ID1, 100, "{\"v\":1}", 0);
    assert_get(c, 1, ID1, 0, NULL, 0); /* another kind, same id */
    struct rowcache_stats st;
    rowcache_stats(c, &st);
    assert_int_equal(st.hits, 3);
    assert_int_equal(st.stale, 2);
    assert_int_equal(st.misses, 2);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.bytes, strlen("{\"v\":1}"));
    rowcache_free(c);
}

static void test_fill_overtaken_by_a_change_is_dropped(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(64, 1 << 20);
    uint64_t t = rowcache_ticket(c); /* a reader is about to read ID1 */
    rowcache_forget(c, 0, ID1);      /* a change committed meanwhile (or of any row) */
    assert_int_equal(rowcache_put(c, 0, ID1, "{\"v\":\"old\"}", NULL, t), 0);
    assert_get(c, 0, ID1, 0, NULL, 0);
    t = rowcache_ticket(c);
    assert_int_equal(rowcache_put(c, 0, ID1, "{\"v\":\"new\"}", NULL, t), 1);
    assert_get(c, 0, ID1, 0, "{\"v\":\"new\"}", 0);
    /* a reset drops fills in flight too */
    t = rowcache_ticket(c);
    rowcache_reset(c);
    assert_int_equal(rowcache_put(c, 0, ID2, "{}", NULL, t), 0);
    rowcache_free(c);
}

static void test_forget_and_reset(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(64, 1 << 20);
    rowcache_put(c, 0, ID1, "a", NULL, rowcache_ticket(c));
    rowcache_put(c, 0, ID2, "b", NULL, rowcache_ticket(c));
    rowcache_applied(c, 7);
    rowcache_forget(c, 0, ID1);
    assert_get(c, 0, ID1, 0, NULL, 0);
    assert_get(c, 0, ID2, 7, "b", 0);
    /* a drop removes the entry but leaves fills in flight */
    uint64_t t = rowcache_ticket(c);
    rowcache_drop(c, 0, ID2);
    assert_get(c, 0, ID2, 7, NULL, 0);
    assert_int_equal(rowcache_put(c, 0, ID2, "b2", NULL, t), 1);
    rowcache_reset(c);
    assert_get(c, 0, ID2, 0, NULL, 0);
    rowcache_put(c, 0, ID2, "c", NULL, rowcache_ticket(c));
    assert_get(c, 0, ID2, 7, NULL, 1); /* the reset set the applied position back to 0 */
    assert_get(c, 0, ID2, 0, "c", 0);
    struct rowcache_stats st;
    rowcache_stats(c, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.bytes, 1);
    assert_int_equal(st.applied, 0);
    rowcache_free(c);
}

static void test_budget_and_sizes(void **state)
{
    (void)state;
    /* 4 slots = one set: the budget is that set's */
    struct rowcache *c = rowcache_new(4, 10);
    assert_int_equal(rowcache_put(c, 0, ID1, "0123456789a", NULL, rowcache_ticket(c)),
                     0); /* > budget */
    assert_int_equal(rowcache_put(c, 0, ID1, "012345", NULL, rowcache_ticket(c)), 1);
    assert_int_equal(rowcache_put(c, 0, ID2, "6789", NULL, rowcache_ticket(c)), 1);
    /* a third row displaces the least recently used until it fits */
    assert_int_equal(rowcache_put(c, 0, "r3", "abcde", NULL, rowcache_ticket(c)), 1);
    assert_get(c, 0, ID1, 0, NULL, 0);
    assert_get(c, 0, ID2, 0, "6789", 0);
    assert_get(c, 0, "r3", 0, "abcde", 0);
    struct rowcache_stats st;
    rowcache_stats(c, &st);
    assert_int_equal(st.bytes, 9);
    assert_int_equal(st.entries, 2);
    rowcache_free(c);

    /* 8 sets sharing 80 bytes: 10 each, never more in all */
    c = rowcache_new(32, 80);
    for (int i = 0; i < 200; i++) {
        char id[16], row[16];
        snprintf(id, sizeof id, "id%d", i);
        snprintf(row, sizeof row, "%d-%d", i, i % 7);
        rowcache_put(c, 0, id, row, NULL, rowcache_ticket(c));
        rowcache_stats(c, &st);
        assert_true(st.bytes <= 80);
    }
    rowcache_free(c);

    c = rowcache_new(16, 1 << 30);
    char *big = malloc(ROWCACHE_ROW_MAX + 2);
    memset(big, 'x', ROWCACHE_ROW_MAX + 1);
    big[ROWCACHE_ROW_MAX + 1] = 0;
    assert_int_equal(rowcache_put(c, 0, ID1, big, NULL, rowcache_ticket(c)), 0);
    big[ROWCACHE_ROW_MAX] = 0;
    assert_int_equal(rowcache_put(c, 0, ID1, big, NULL, rowcache_ticket(c)), 1);
    free(big);
    char long_id[ROWCACHE_ID_MAX + 2];
    memset(long_id, 'i', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = 0;
    assert_int_equal(rowcache_put(c, 0, long_id, "x", NULL, rowcache_ticket(c)), 0);
    assert_int_equal(rowcache_put(c, 0, "", "x", NULL, rowcache_ticket(c)), 0);
    assert_null(rowcache_get(c, 0, long_id, 0, NULL, NULL));
    rowcache_forget(c, 0, long_id); /* harmless */
    rowcache_free(c);
}

static void test_least_recently_used_goes(void **state)
{
    (void)state;
    /* one set of 4 ways: the fifth row evicts the one used least recently */
    struct rowcache *c = rowcache_new(4, 1 << 20);
    char id[8][8];
    for (int i = 0; i < 5; i++)
        snprintf(id[i], sizeof id[i], "r%d", i);
    for (int i = 0; i < 4; i++)
        assert_int_equal(rowcache_put(c, 0, id[i], id[i], NULL, rowcache_ticket(c)), 1);
    assert_get(c, 0, id[0], 0, "r0", 0); /* r1 is now the least recently used */
    assert_int_equal(rowcache_put(c, 0, id[4], "r4", NULL, rowcache_ticket(c)), 1);
    assert_get(c, 0, id[1], 0, NULL, 0);
    assert_get(c, 0, id[0], 0, "r0", 0);
    assert_get(c, 0, id[4], 0, "r4", 0);
    /* replacing a row keeps one entry */
    assert_int_equal(rowcache_put(c, 0, id[4], "r4b", NULL, rowcache_ticket(c)), 1);
    assert_get(c, 0, id[4], 0, "r4b", 0);
    struct rowcache_stats st;
    rowcache_stats(c, &st);
    assert_int_equal(st.entries, 4);
    rowcache_free(c);
}

static void test_meta_kept_beside_the_row(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(16, 1 << 20);
    assert_int_equal(rowcache_put(c, 0, ID1, "{}", "v3 vision", rowcache_ticket(c)), 1);
    char meta[ROWCACHE_META_MAX];
    char *got = rowcache_get(c, 0, ID1, 0, NULL, meta);
    assert_non_null(got);
    assert_string_equal(meta, "v3 vision");
    free(got);
    char long_meta[ROWCACHE_META_MAX + 1];
    memset(long_meta, 'm', ROWCACHE_META_MAX);
    long_meta[ROWCACHE_META_MAX] = 0;
    assert_int_equal(rowcache_put(c, 0, ID2, "{}", long_meta, rowcache_ticket(c)), 0);
    long_meta[ROWCACHE_META_MAX - 1] = 0;
    assert_int_equal(rowcache_put(c, 0, ID2, "{}", long_meta, rowcache_ticket(c)), 1);
    got = rowcache_get(c, 0, ID2, 0, NULL, meta);
    assert_string_equal(meta, long_meta);
    free(got);
    rowcache_free(c);
}

struct mover {
    struct rowcache *c;
    uint64_t to;
};

static void *move_later(void *arg)
{
    struct mover *m = arg;
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    rowcache_applied(m->c, m->to);
    return NULL;
}

static void test_await(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(16, 1 << 20);
    rowcache_applied(c, 10);
    assert_int_equal(rowcache_await(c, 10, 0), 1); /* already there */
    assert_int_equal(rowcache_await(c, 11, 0), 0);
    assert_int_equal(rowcache_await(c, 11, 30), 0); /* nobody moves it: times out */
    struct mover m = {c, 50};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, move_later, &m), 0);
    assert_int_equal(rowcache_await(c, 50, 5000), 1); /* woken when it moves */
    pthread_join(t, NULL);
    assert_int_equal(rowcache_await(NULL, 0, 0), 0);
    rowcache_free(c);
}

static void test_row_room(void **state)
{
    (void)state;
    assert_int_equal(rowcache_row_room(0, 1 << 20), 0);
    assert_int_equal(rowcache_row_room(4096, 16u << 20), ROWCACHE_ROW_MAX); /* the defaults */
    assert_int_equal(rowcache_row_room(1048576, 1u << 20), 4);
    assert_int_equal(rowcache_row_room(5, 100), 50); /* 2 sets */
}

static void test_cache_of_nothing(void **state)
{
    (void)state;
    struct rowcache *c = rowcache_new(0, 1 << 20);
    assert_non_null(c);
    assert_int_equal(rowcache_put(c, 0, ID1, "a", NULL, rowcache_ticket(c)), 0);
    assert_get(c, 0, ID1, 0, NULL, 0);
    rowcache_forget(c, 0, ID1);
    rowcache_reset(c);
    rowcache_free(c);
    /* and no cache at all */
    assert_null(rowcache_get(NULL, 0, ID1, 0, NULL, NULL));
    assert_int_equal(rowcache_put(NULL, 0, ID1, "a", NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_only_when_applied),
        cmocka_unit_test(test_fill_overtaken_by_a_change_is_dropped),
        cmocka_unit_test(test_forget_and_reset),
        cmocka_unit_test(test_budget_and_sizes),
        cmocka_unit_test(test_least_recently_used_goes),
        cmocka_unit_test(test_meta_kept_beside_the_row),
        cmocka_unit_test(test_await),
        cmocka_unit_test(test_row_room),
        cmocka_unit_test(test_cache_of_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
