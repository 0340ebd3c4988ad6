/* core/ledger/recompute: the head check before an append and the recomputation at start, each
 * contradiction named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/recompute.h"

#define N 7

/* N leaves "leaf 0" … "leaf 6", their hashes, and the root after each size. */
static char leaf_text[N][16];
static uint8_t leaf_hash[N][MERKLE_HASH_BYTES];
static uint8_t root_at[N + 1][MERKLE_HASH_BYTES];
static char root_hex_at[N + 1][2 * MERKLE_HASH_BYTES + 1];

static int setup(void **state)
{
    (void)state;
    if (sodium_init() < 0)
        return -1;
    for (int i = 0; i < N; i++) {
        snprintf(leaf_text[i], sizeof leaf_text[i], "leaf %d", i);
        merkle_leaf_hash((const uint8_t *)leaf_text[i], strlen(leaf_text[i]), leaf_hash[i]);
    }
    for (int n = 0; n <= N; n++) {
        merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])leaf_hash, (size_t)n, root_at[n]);
        codec_hex_encode(root_at[n], MERKLE_HASH_BYTES, root_hex_at[n]);
    }
    return 0;
}

static int feed(struct log_recompute *rc, int from, int to, char *evidence, size_t size)
{
    for (int i = from; i < to; i++)
        if (log_recompute_leaf(rc, (uint64_t)i, (const uint8_t *)leaf_text[i], strlen(leaf_text[i]),
                               leaf_hash[i], evidence, size) != 0)
            return -1;
    return 0;
}

static void test_recompute_consistent(void **state)
{
    (void)state;
    char evidence[400];
    struct log_seen seen = {.known = true, .size = 4, .state_path = "/var/x"};
    memcpy(seen.root, root_at[4], MERKLE_HASH_BYTES);
    struct log_recompute rc;
    log_recompute_init(&rc, N, &seen);
    assert_int_equal(feed(&rc, 0, N, evidence, sizeof evidence), 0);
    assert_int_equal(log_recompute_finish(&rc, root_hex_at[N], evidence, sizeof evidence), 0);
    assert_string_equal(evidence, "");
    /* The empty log. */
    log_recompute_init(&rc, 0, NULL);
    assert_int_equal(log_recompute_finish(&rc, root_hex_at[0], evidence, sizeof evidence), 0);
}

static void test_recompute_contradictions(void **state)
{
    (void)state;
    char evidence[400];
    struct log_recompute rc;

    /* A leaf missing in the middle. */
    log_recompute_init(&rc, N, NULL);
    assert_int_equal(feed(&rc, 0, 3, evidence, sizeof evidence), 0);
    assert_int_equal(log_recompute_leaf(&rc, 4, (const uint8_t *)leaf_text[4], strlen(leaf_text[4]),
                                        leaf_hash[4], evidence, sizeof evidence),
                     -1);
    assert_string_equal(evidence, "leaf 3 is missing from the stored leaves");

    /* A leaf whose bytes were edited (its stored hash kept). */
    log_recompute_init(&rc, N, NULL);
    assert_int_equal(feed(&rc, 0, 2, evidence, sizeof evidence), 0);
    assert_int_equal(log_recompute_leaf(&rc, 2, (const uint8_t *)"leaf X", 6, leaf_hash[2],
                                        evidence, sizeof evidence),
                     -1);
    assert_string_equal(evidence, "leaf 2's stored hash is not the hash of its bytes");

    /* The server remembers another root for size 4. */
    struct log_seen seen = {.known = true, .size = 4, .state_path = "/var/x"};
    memcpy(seen.root, root_at[3], MERKLE_HASH_BYTES);
    log_recompute_init(&rc, N, &seen);
    assert_int_equal(feed(&rc, 0, N, evidence, sizeof evidence), -1);
    assert_non_null(strstr(evidence, "the root over the first 4 stored leaves is"));
    assert_non_null(strstr(evidence, "(state file /var/x)"));

    /* The tail cut off: fewer leaves than the checkpoint's size. */
    log_recompute_init(&rc, N, NULL);
    assert_int_equal(feed(&rc, 0, 5, evidence, sizeof evidence), 0);
    assert_int_equal(log_recompute_finish(&rc, root_hex_at[N], evidence, sizeof evidence), -1);
    assert_string_equal(evidence, "5 of the head's 7 leaves are stored: leaf 5 is missing");

    /* The checkpoint's root is not the root over the leaves. */
    log_recompute_init(&rc, N, NULL);
    assert_int_equal(feed(&rc, 0, N, evidence, sizeof evidence), 0);
    assert_int_equal(log_recompute_finish(&rc, root_hex_at[6], evidence, sizeof evidence), -1);
    assert_non_null(strstr(evidence, "but the checkpoint of that size has root"));
}

/* Head facts of a consistent log of n leaves. */
static struct log_head_facts head_of(int n, struct merkle_frontier *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < n; i++)
        merkle_frontier_append(f, (uint64_t)i, leaf_hash[i]);
    struct log_head_facts h = {
        .size = (uint64_t)n,
        .root = root_hex_at[n],
        .frontier = f,
        .checkpoint_root = root_hex_at[n],
        .latest_checkpoint = (uint64_t)n,
        .leaves = (uint64_t)n,
        .seen = {.state_path = "/var/x"},
    };
    return h;
}

static void test_head_check(void **state)
{
    (void)state;
    char evidence[400];
    struct merkle_frontier f;
    struct log_head_facts h = head_of(5, &f);
    log_head_check(&h, evidence, sizeof evidence);
    assert_string_equal(evidence, "");

    h = head_of(5, &f);
    h.checkpoint_root = root_hex_at[4];
    log_head_check(&h, evidence, sizeof evidence);
    assert_non_null(strstr(evidence, "the log head has size 5 and root"));

    h = head_of(5, &f);
    h.latest_checkpoint = 6;
    log_head_check(&h, evidence, sizeof evidence);
    assert_non_null(strstr(evidence, "a checkpoint of size 6 is stored: the head was rewound"));

    h = head_of(5, &f);
    h.leaves = 4;
    log_head_check(&h, evidence, sizeof evidence);
    assert_string_equal(evidence, "the log head has size 5, but 4 leaves are stored");

    struct merkle_frontier other;
    h = head_of(5, &f);
    struct log_head_facts wrong = head_of(4, &other);
    h.frontier = wrong.frontier; /* a compact range of another tree */
    log_head_check(&h, evidence, sizeof evidence);
    assert_non_null(strstr(evidence, "compact range folds to root"));

    /* The server remembers size 6: the database's head of size 5 was rewound. */
    h = head_of(5, &f);
    h.seen.known = true;
    h.seen.size = 6;
    memcpy(h.seen.root, root_at[6], MERKLE_HASH_BYTES);
    log_head_check(&h, evidence, sizeof evidence);
    assert_non_null(strstr(evidence, "(state file /var/x)"));

    /* It remembers size 3 and the database still has that checkpoint: the head extends it. */
    h = head_of(5, &f);
    h.seen.known = true;
    h.seen.size = 3;
    memcpy(h.seen.root, root_at[3], MERKLE_HASH_BYTES);
    h.seen_checkpoint_root = root_hex_at[3];
    log_head_check(&h, evidence, sizeof evidence);
    assert_string_equal(evidence, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recompute_consistent),
        cmocka_unit_test(test_recompute_contradictions),
        cmocka_unit_test(test_head_check),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
