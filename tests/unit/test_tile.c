/* C2SP tlog-tiles (core/ledger/tile.h): proofs and roots computed from tiles must equal the
 * ones merkle.c computes from every leaf hash — for every (index, size) and (old, new) of
 * trees up to 300 leaves (two tiles and a partial one), for random pairs of a tree with
 * level-2 tiles, and for the RFC 9162 vectors of transparency-dev's 8-leaf tree — plus the
 * tiles an append writes, and the spec's path encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/merkle.h"
#include "oracle/merkle_proofs.h"
#include "core/ledger/tile.h"
#include "testutil.h"
#include "oracle/tile_path.h"

#define VECTORS CAPLEDGER_DATA_DIR "/vectors/merkle"

static int setup(void **state)
{
    (void)state;
    return sodium_init() < 0 ? -1 : 0;
}

/* An in-memory tile store: the stored hashes of each level, as tile_append writes them. */
struct mem {
    uint8_t (*level[TILE_LEVELS])[MERKLE_HASH_BYTES];
    uint64_t count[TILE_LEVELS];
    uint8_t (*leaves)[MERKLE_HASH_BYTES];
    uint64_t n;
    struct merkle_frontier f;
};

static void mem_build(struct mem *m, const uint8_t (*leaves)[MERKLE_HASH_BYTES], uint64_t n)
{
    memset(m, 0, sizeof *m);
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        m->level[l] = malloc(((size_t)(n >> (TILE_HEIGHT * l)) + 1) * MERKLE_HASH_BYTES);
    struct merkle_frontier check = {.count = 0};
    for (uint64_t i = 0; i < n; i++) {
        struct tile_hash out[TILE_LEVELS];
        size_t k = tile_append(&m->f, i, leaves[i], out);
        merkle_frontier_append(&check, i, leaves[i]);
        assert_int_equal(m->f.count, check.count);
        assert_memory_equal(m->f.hash, check.hash, check.count * MERKLE_HASH_BYTES);
        for (size_t j = 0; j < k; j++) {
            /* Written in order: each completes the next hash of its level. */
            assert_int_equal(out[j].index, m->count[out[j].level]);
            memcpy(m->level[out[j].level][m->count[out[j].level]++], out[j].hash,
                   MERKLE_HASH_BYTES);
        }
    }
    m->n = n;
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        assert_int_equal(m->count[l], tile_level_hashes(n, l));
}

static void mem_free(struct mem *m)
{
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        free(m->level[l]);
}

/* Loads every tile the plan lists, as the store does (the tiles of the whole tree, whatever
 * smaller size the proof is for: prefixes of a tile never change). */
static void mem_load(const struct mem *m, struct tile_set *s)
{
    for (size_t i = 0; i < s->count; i++) {
        struct tile_ref *t = &s->ref[i];
        uint64_t first = t->index * TILE_WIDTH;
        assert_true(first < m->count[t->level]);
        uint64_t have = m->count[t->level] - first;
        assert_int_equal(tile_set_load(s, t->level, t->index, m->level[t->level][first],
                                       have > TILE_WIDTH ? TILE_WIDTH : (size_t)have),
                         0);
    }
}

static void check_inclusion(const struct mem *m, const uint8_t (*leaves)[MERKLE_HASH_BYTES],
                            uint64_t n, uint64_t index)
{
    uint8_t want[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES], got[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t want_len, got_len;
    assert_int_equal(merkle_inclusion_proof(leaves, (size_t)n, (size_t)index, want, &want_len), 0);
    struct tile_set s;
    tile_set_init(&s);
    assert_int_equal(tile_plan_inclusion(&s, n, index), 0);
    mem_load(m, &s);
    assert_int_equal(tile_inclusion_proof(&s, n, index, got, &got_len), 0);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len * MERKLE_HASH_BYTES);
}

static void check_consistency(const struct mem *m, const uint8_t (*leaves)[MERKLE_HASH_BYTES],
                              uint64_t n, uint64_t old)
{
    uint8_t want[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES], got[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t want_len, got_len;
    assert_int_equal(merkle_consistency_proof(leaves, (size_t)n, (size_t)old, want, &want_len), 0);
    struct tile_set s;
    tile_set_init(&s);
    assert_int_equal(tile_plan_consistency(&s, n, old), 0);
    mem_load(m, &s);
    assert_int_equal(tile_consistency_proof(&s, n, old, got, &got_len), 0);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len * MERKLE_HASH_BYTES);
}

static void check_root(const struct mem *m, const uint8_t (*leaves)[MERKLE_HASH_BYTES], uint64_t n)
{
    uint8_t want[MERKLE_HASH_BYTES], got[MERKLE_HASH_BYTES];
    merkle_root(leaves, (size_t)n, want);
    struct tile_set s;
    tile_set_init(&s);
    assert_int_equal(tile_plan_root(&s, n), 0);
    mem_load(m, &s);
    assert_int_equal(tile_root(&s, n, got), 0);
    assert_memory_equal(got, want, MERKLE_HASH_BYTES);
}

static uint8_t (*make_leaves(uint64_t n))[MERKLE_HASH_BYTES]
{
    uint8_t(*h)[MERKLE_HASH_BYTES] = malloc((size_t)n * MERKLE_HASH_BYTES);
    for (uint64_t i = 0; i < n; i++) {
        uint8_t data[8];
        for (int b = 0; b < 8; b++)
            data[b] = (uint8_t)(i >> (8 * b));
        merkle_leaf_hash(data, sizeof data, h[i]);
    }
    return h;
}

static void test_every_pair_small(void **state)
{
    (void)state;
    const uint64_t max = 300;
    uint8_t(*leaves)[MERKLE_HASH_BYTES] = make_leaves(max);
    struct mem m;
    mem_build(&m, (const uint8_t(*)[MERKLE_HASH_BYTES])leaves, max);
    const uint8_t(*cl)[MERKLE_HASH_BYTES] = (const uint8_t(*)[MERKLE_HASH_BYTES])leaves;
    for (uint64_t n = 1; n <= max; n++) {
        check_root(&m, cl, n);
        /* Every pair up to 70 leaves; above, every index of every 23rd size and the sizes
         * around the tile boundary. */
        bool all = n <= 70 || n % 23 == 0 || (n >= 254 && n <= 258);
        for (uint64_t i = 0; i < n; i++)
            if (all || i % 37 == 0 || i == n - 1) {
                check_inclusion(&m, cl, n, i);
                check_consistency(&m, cl, n, i + 1);
            }
    }
    mem_free(&m);
    free(leaves);
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void test_random_pairs_large(void **state)
{
    (void)state;
    const uint64_t max = 70000; /* past 65,536: level-2 tiles */
    uint8_t(*leaves)[MERKLE_HASH_BYTES] = make_leaves(max);
    const uint8_t(*cl)[MERKLE_HASH_BYTES] = (const uint8_t(*)[MERKLE_HASH_BYTES])leaves;
    struct mem m;
    mem_build(&m, cl, max);
    uint64_t x = 88172645463325252ull;
    const uint64_t edges[] = {65535, 65536, 65537, 69888, 69889, 70000};
    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
        check_root(&m, cl, edges[e]);
        check_inclusion(&m, cl, edges[e], edges[e] - 1);
        check_consistency(&m, cl, edges[e], 256);
    }
    for (int k = 0; k < 60; k++) {
        uint64_t n = 1 + next_random(&x) % max;
        uint64_t i = next_random(&x) % n;
        check_inclusion(&m, cl, n, i);
        check_consistency(&m, cl, n, i + 1);
    }
    /* A proof in a large tree reads few tiles and few hashes of each. */
    struct tile_set s;
    tile_set_init(&s);
    assert_int_equal(tile_plan_inclusion(&s, max, 12345), 0);
    size_t hashes = 0;
    for (size_t i = 0; i < s.count; i++)
        hashes += s.ref[i].width;
    assert_true(s.count <= 8);
    assert_true(hashes <= 3 * TILE_WIDTH);
    mem_free(&m);
    free(leaves);
}

/* transparency-dev's 8-leaf tree: the happy-path proofs, byte for byte, from tiles. */
static void test_rfc9162_vectors(void **state)
{
    (void)state;
    json_t *roots = json_load_file(VECTORS "/roots.json", 0, NULL);
    assert_non_null(roots);
    uint8_t h[8][MERKLE_HASH_BYTES];
    for (size_t i = 0; i < 8; i++) {
        uint8_t input[64];
        long len = testutil_unhex(
            json_string_value(json_array_get(json_object_get(roots, "leaf_inputs_hex"), i)), input,
            sizeof input);
        merkle_leaf_hash(input, (size_t)len, h[i]);
    }
    struct mem m;
    mem_build(&m, (const uint8_t(*)[MERKLE_HASH_BYTES])h, 8);
    for (uint64_t n = 1; n <= 8; n++) {
        uint8_t want[MERKLE_HASH_BYTES], got[MERKLE_HASH_BYTES];
        char key[4];
        snprintf(key, sizeof key, "%u", (unsigned)n);
        assert_int_equal(testutil_unhex(json_string_value(json_object_get(
                                            json_object_get(roots, "roots_hex"), key)),
                                        want, sizeof want),
                         MERKLE_HASH_BYTES);
        struct tile_set s;
        tile_set_init(&s);
        assert_int_equal(tile_plan_root(&s, n), 0);
        mem_load(&m, &s);
        assert_int_equal(tile_root(&s, n, got), 0);
        assert_memory_equal(got, want, MERKLE_HASH_BYTES);
    }
    const char *files[] = {VECTORS "/testdata/inclusion/1/happy-path.json",
                           VECTORS "/testdata/consistency/1/happy-path.json"};
    for (int f = 0; f < 2; f++) {
        json_t *v = json_load_file(files[f], 0, NULL);
        assert_non_null(v);
        uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
        size_t len;
        struct tile_set s;
        tile_set_init(&s);
        if (f == 0) {
            uint64_t n = (uint64_t)json_integer_value(json_object_get(v, "treeSize"));
            uint64_t i = (uint64_t)json_integer_value(json_object_get(v, "leafIdx"));
            assert_int_equal(tile_plan_inclusion(&s, n, i), 0);
            mem_load(&m, &s);
            assert_int_equal(tile_inclusion_proof(&s, n, i, proof, &len), 0);
        } else {
            uint64_t n = (uint64_t)json_integer_value(json_object_get(v, "size2"));
            uint64_t o = (uint64_t)json_integer_value(json_object_get(v, "size1"));
            assert_int_equal(tile_plan_consistency(&s, n, o), 0);
            mem_load(&m, &s);
            assert_int_equal(tile_consistency_proof(&s, n, o, proof, &len), 0);
        }
        json_t *want = json_object_get(v, "proof");
        assert_int_equal(len, json_array_size(want));
        for (size_t i = 0; i < len; i++) {
            char b64[CODEC_B64_LEN(MERKLE_HASH_BYTES) + 1];
            assert_string_equal(codec_b64_encode(proof[i], MERKLE_HASH_BYTES, b64, sizeof b64),
                                json_string_value(json_array_get(want, i)));
        }
        json_decref(v);
    }
    mem_free(&m);
    json_decref(roots);
}

/* A tile not loaded, or shorter than the plan needs, makes no proof. */
static void test_missing_tiles_refused(void **state)
{
    (void)state;
    uint8_t(*leaves)[MERKLE_HASH_BYTES] = make_leaves(600);
    struct mem m;
    mem_build(&m, (const uint8_t(*)[MERKLE_HASH_BYTES])leaves, 600);
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len;
    struct tile_set s;
    tile_set_init(&s);
    assert_int_equal(tile_plan_inclusion(&s, 600, 3), 0);
    assert_true(s.count >= 2);
    assert_int_equal(tile_inclusion_proof(&s, 600, 3, proof, &len), -1);
    for (size_t i = 0; i < s.count; i++)
        if (s.ref[i].width > 1) /* too short for the plan */
            assert_int_equal(tile_set_load(&s, s.ref[i].level, s.ref[i].index,
                                           m.level[s.ref[i].level][s.ref[i].index * TILE_WIDTH],
                                           s.ref[i].width - 1),
                             -1);
    assert_int_equal(tile_set_load(&s, 5, 0, m.level[0][0], TILE_WIDTH), -1); /* not planned */
    assert_int_equal(tile_plan_inclusion(&s, 600, 600), -1);
    tile_set_init(&s);
    assert_int_equal(tile_plan_consistency(&s, 600, 0), -1);
    assert_int_equal(tile_plan_consistency(&s, 600, 601), -1);
    assert_int_equal(tile_plan_root(&s, 0), -1);
    mem_free(&m);
    free(leaves);
}

static void test_paths(void **state)
{
    (void)state;
    char out[64];
    /* The spec's example: index 1234067 is x001/x234/067. */
    assert_int_equal(tile_path(0, 1234067, 256, out, sizeof out), 20);
    assert_string_equal(out, "tile/0/x001/x234/067");
    assert_true(tile_path(1, 1234067, 8, out, sizeof out) > 0);
    assert_string_equal(out, "tile/1/x001/x234/067.p/8");
    assert_true(tile_path(TILE_ENTRIES, 5, 256, out, sizeof out) > 0);
    assert_string_equal(out, "tile/entries/005");
    assert_true(tile_path(2, 1000, 256, out, sizeof out) > 0);
    assert_string_equal(out, "tile/2/x001/000");
    assert_int_equal(tile_path(0, 1234067, 8, out, 10), -1);

    unsigned level;
    uint64_t index;
    size_t width;
    assert_int_equal(tile_path_parse("0/x001/x234/067", &level, &index, &width), 0);
    assert_int_equal(level, 0);
    assert_int_equal(index, 1234067);
    assert_int_equal(width, 256);
    assert_int_equal(tile_path_parse("1/067.p/8", &level, &index, &width), 0);
    assert_int_equal(level, 1);
    assert_int_equal(index, 67);
    assert_int_equal(width, 8);
    assert_int_equal(tile_path_parse("entries/x001/000.p/255", &level, &index, &width), 0);
    assert_int_equal(level, TILE_ENTRIES);
    assert_int_equal(index, 1000);
    assert_int_equal(width, 255);
    const char *bad[] = {"",
                         "0",
                         "0/",
                         "0/67",
                         "0/0067",
                         "0/x067",
                         "0/x000/067",
                         "0/067.p/0",
                         "0/067.p/256",
                         "0/067.p/08",
                         "0/067.p/",
                         "0/067/",
                         "8/067",
                         "00/067",
                         "a/067",
                         "0/067x",
                         "0/067.p/1x",
                         "entries/67",
                         "0/x001/x002/x003/x004/x005/x006/007"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tile_path_parse(bad[i], &level, &index, &width) == 0)
            fail_msg("'%s' was accepted", bad[i]);
    /* Round trips. */
    const uint64_t idx[] = {0, 7, 999, 1000, 123456789012ull};
    for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
        assert_true(tile_path(3, idx[i], 17, out, sizeof out) > 0);
        assert_int_equal(tile_path_parse(out + 5, &level, &index, &width), 0);
        assert_int_equal(level, 3);
        assert_int_equal(index, idx[i]);
        assert_int_equal(width, 17);
    }
}

/* Which part of a bad path is named; the levels the spec allows beyond a 64-bit tree. */
static void test_path_parts(void **state)
{
    (void)state;
    unsigned level = 0;
    uint64_t index = 0;
    size_t width = 0;
    static const struct {
        const char *text;
        enum tile_path_part part;
    } cases[] = {
        {"0/x001/x234/067", TILE_PATH_OK},
        {"63/000", TILE_PATH_OK},
        {"entries/x001/000.p/255", TILE_PATH_OK},
        {"64/000", TILE_PATH_LEVEL},
        {"100/000", TILE_PATH_LEVEL},
        {"07/000", TILE_PATH_LEVEL},
        {"-1/000", TILE_PATH_LEVEL},
        {"data/000", TILE_PATH_LEVEL},
        {"entries", TILE_PATH_LEVEL},
        {"", TILE_PATH_LEVEL},
        {"0/x1/234", TILE_PATH_INDEX},
        {"0/1234", TILE_PATH_INDEX},
        {"0/x000/001", TILE_PATH_INDEX},
        {"0/x001/x002/x003/x004/x005/x006/007", TILE_PATH_INDEX},
        {"0/18446744073709551615", TILE_PATH_INDEX},
        {"0/067/", TILE_PATH_INDEX},
        {"0/067.p", TILE_PATH_INDEX},
        {"0/067.p/0", TILE_PATH_WIDTH},
        {"0/067.p/256", TILE_PATH_WIDTH},
        {"0/067.p/08", TILE_PATH_WIDTH},
        {"0/067.p/1000", TILE_PATH_WIDTH},
        {"0/067.p/", TILE_PATH_WIDTH},
        {"0/067.p/1/", TILE_PATH_WIDTH},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum tile_path_part got = tile_path_read(cases[i].text, &level, &index, &width);
        if (got != cases[i].part)
            fail_msg("'%s': part %d, expected %d", cases[i].text, (int)got, (int)cases[i].part);
    }
    assert_int_equal(tile_path_read("63/x999/x999/x999/x999/x999/999", &level, &index, &width),
                     TILE_PATH_OK);
    assert_int_equal(level, 63);
    assert_true(index == 999999999999999999ull);
    /* Well formed, but no tile of a 64-bit tree: tile_path_parse refuses it. */
    assert_int_equal(tile_path_parse("8/000", &level, &index, &width), -1);
    assert_string_equal(tile_path_part_name(TILE_PATH_LEVEL), "level");
    assert_string_equal(tile_path_part_name(TILE_PATH_INDEX), "index");
    assert_string_equal(tile_path_part_name(TILE_PATH_WIDTH), "width");
}

/* The spec's example: a tree of 70,000 leaves has 273 full level-0 tiles and a partial one of
 * width 112, one full level-1 tile and a partial one of 17, a partial level-2 tile of 1. */
static void test_in_tree(void **state)
{
    (void)state;
    assert_true(tile_in_tree(70000, 0, 272, 256));
    assert_false(tile_in_tree(70000, 0, 273, 256));
    assert_true(tile_in_tree(70000, 0, 273, 112));
    assert_true(tile_in_tree(70000, 0, 273, 1));
    assert_false(tile_in_tree(70000, 0, 273, 113));
    assert_false(tile_in_tree(70000, 0, 274, 1));
    assert_true(tile_in_tree(70000, TILE_ENTRIES, 273, 112));
    assert_false(tile_in_tree(70000, TILE_ENTRIES, 273, 113));
    assert_true(tile_in_tree(70000, 1, 0, 256));
    assert_true(tile_in_tree(70000, 1, 1, 17));
    assert_false(tile_in_tree(70000, 1, 1, 18));
    assert_true(tile_in_tree(70000, 2, 0, 1));
    assert_false(tile_in_tree(70000, 2, 0, 2));
    assert_false(tile_in_tree(70000, 3, 0, 1));
    /* A tree of 256 leaves: a full level-0 tile and a level-1 tile of width 1. */
    assert_true(tile_in_tree(256, 0, 0, 256));
    assert_true(tile_in_tree(256, 1, 0, 1));
    assert_false(tile_in_tree(0, 0, 0, 1));
    /* No overflow at the edges of 64 bits. */
    assert_false(tile_in_tree(UINT64_MAX, 0, UINT64_MAX, 256));
    assert_false(tile_in_tree(UINT64_MAX, 0, UINT64_MAX / 256 + 1, 1));
    assert_true(tile_in_tree(UINT64_MAX, 0, UINT64_MAX / 256 - 1, 256));
    assert_true(tile_in_tree(UINT64_MAX, 7, 0, 255));
    assert_false(tile_in_tree(UINT64_MAX, 7, 0, 256));
    assert_false(tile_in_tree(UINT64_MAX, 8, 0, 1));
    assert_false(tile_in_tree(UINT64_MAX, 63, 0, 1));
    assert_false(tile_in_tree(1000, 0, 0, 0));
}

static void test_entry_put(void **state)
{
    (void)state;
    uint8_t out[300];
    const uint8_t leaf[] = {'a', 'b', 'c'};
    assert_int_equal(tile_entry_put(out, sizeof out, leaf, 3), 5);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 3);
    assert_memory_equal(out + 2, "abc", 3);
    assert_int_equal(tile_entry_put(out, sizeof out, leaf, 0), 2);
    assert_int_equal(out[0] | out[1], 0);
    assert_int_equal(tile_entry_put(out, 4, leaf, 3), 0); /* does not fit */
    static uint8_t entry[TILE_ENTRY_MAX + 1], big[TILE_ENTRY_MAX + 3];
    assert_int_equal(tile_entry_put(big, sizeof big, entry, TILE_ENTRY_MAX), TILE_ENTRY_MAX + 2);
    assert_int_equal(big[0], 0xff);
    assert_int_equal(big[1], 0xff);
    assert_int_equal(tile_entry_put(big, sizeof big, entry, TILE_ENTRY_MAX + 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_pair_small),
        cmocka_unit_test(test_random_pairs_large),
        cmocka_unit_test(test_rfc9162_vectors),
        cmocka_unit_test(test_missing_tiles_refused),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_path_parts),
        cmocka_unit_test(test_in_tree),
        cmocka_unit_test(test_entry_put),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
