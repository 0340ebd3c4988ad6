/* RFC 9162 Merkle tree against transparency-dev's vectors, plus generated proofs checked by
 * the verifiers for every (index, size) and (old, new) pair of trees up to 70 leaves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <jansson.h>
#include <sodium.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/merkle.h"
#include "oracle/merkle_proofs.h"
#include "testutil.h"

#define VECTORS CAPLEDGER_DATA_DIR "/vectors/merkle"

static int setup(void **state)
{
    (void)state;
    return sodium_init() < 0 ? -1 : 0;
}

/* ---- roots.json ---------------------------------------------------------------------------- */

static void test_roots(void **state)
{
    (void)state;
    json_error_t error;
    json_t *doc = json_load_file(VECTORS "/roots.json", 0, &error);
    assert_non_null(doc);
    json_t *inputs = json_object_get(doc, "leaf_inputs_hex");
    json_t *hashes = json_object_get(doc, "leaf_hashes_hex");
    size_t n = json_array_size(inputs);
    assert_int_equal(n, 8);
    uint8_t leaf_hashes[8][MERKLE_HASH_BYTES];
    for (size_t i = 0; i < n; i++) {
        uint8_t input[64];
        long len =
            testutil_unhex(json_string_value(json_array_get(inputs, i)), input, sizeof input);
        assert_true(len >= 0);
        merkle_leaf_hash(input, (size_t)len, leaf_hashes[i]);
        char hex[65];
        assert_string_equal(codec_hex_encode(leaf_hashes[i], MERKLE_HASH_BYTES, hex),
                            json_string_value(json_array_get(hashes, i)));
    }
    uint8_t root[MERKLE_HASH_BYTES];
    char hex[65];
    merkle_root(NULL, 0, root);
    assert_string_equal(codec_hex_encode(root, sizeof root, hex),
                        json_string_value(json_object_get(doc, "empty_root_hex")));
    for (size_t size = 1; size <= n; size++) {
        char key[4];
        snprintf(key, sizeof key, "%zu", size);
        merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])leaf_hashes, size, root);
        assert_string_equal(
            codec_hex_encode(root, sizeof root, hex),
            json_string_value(json_object_get(json_object_get(doc, "roots_hex"), key)));
    }
    json_decref(doc);
}

/* ---- testdata/inclusion and testdata/consistency ------------------------------------------ */

struct decoded {
    uint8_t bytes[80][64];
    struct merkle_span spans[80];
    size_t count;
};

/* Decodes a base64 field (or null / missing: an empty span) into the next slot. */
static struct merkle_span decode_one(struct decoded *d, const json_t *v)
{
    struct merkle_span s = {d->bytes[d->count], 0};
    if (json_is_string(v)) {
        long n = codec_b64_decode(json_string_value(v), json_string_length(v), d->bytes[d->count],
                                  sizeof d->bytes[0]);
        assert_true(n >= 0);
        s.len = (size_t)n;
    }
    d->count++;
    return s;
}

static size_t decode_proof(struct decoded *d, const json_t *proof, struct merkle_span *out)
{
    size_t n = json_array_size(proof); /* 0 for null */
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        out[i] = decode_one(d, json_array_get(proof, i));
    return n;
}

struct tally {
    int accepted, rejected, files;
};

/* Sizes and indexes in the vectors go up to 2^64 − 1, beyond jansson's long long: such a file
 * is re-read with every number as a double, and values past the int64 range clamp to 2^64 − 1
 * (all of them are negative cases, which stay negative). */
static uint64_t as_u64(const json_t *v)
{
    if (json_is_integer(v))
        return (uint64_t)json_integer_value(v);
    double d = json_real_value(v);
    return d >= 9223372036854775807.0 ? UINT64_MAX : (uint64_t)d;
}

static void check_file(const char *path, bool inclusion, struct tally *t)
{
    json_error_t error;
    json_t *v = json_load_file(path, 0, &error);
    if (!v && json_error_code(&error) == json_error_numeric_overflow)
        v = json_load_file(path, JSON_DECODE_INT_AS_REAL, &error);
    if (!v)
        fail_msg("%s: %s", path, error.text);
    bool want_err = json_is_true(json_object_get(v, "wantErr"));
    struct decoded *d = calloc(1, sizeof *d);
    struct merkle_span proof[64];
    size_t proof_len = decode_proof(d, json_object_get(v, "proof"), proof);
    int rc;
    if (inclusion) {
        struct merkle_span leaf = decode_one(d, json_object_get(v, "leafHash"));
        struct merkle_span root = decode_one(d, json_object_get(v, "root"));
        rc = merkle_verify_inclusion(as_u64(json_object_get(v, "leafIdx")),
                                     as_u64(json_object_get(v, "treeSize")), leaf, proof, proof_len,
                                     root);
    } else {
        struct merkle_span root1 = decode_one(d, json_object_get(v, "root1"));
        struct merkle_span root2 = decode_one(d, json_object_get(v, "root2"));
        rc = merkle_verify_consistency(as_u64(json_object_get(v, "size1")),
                                       as_u64(json_object_get(v, "size2")), root1, root2, proof,
                                       proof_len);
    }
    free(d);
    if ((rc != 0) != want_err)
        fail_msg("%s: verifier %s, want %s", path, rc == 0 ? "accepted" : "rejected",
                 want_err ? "an error" : "acceptance");
    if (rc == 0)
        t->accepted++;
    else
        t->rejected++;
    t->files++;
    json_decref(v);
}

static void walk(const char *dir, bool inclusion, struct tally *t)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
            check_file(path, inclusion, t);
        else
            walk(path, inclusion, t);
    }
    closedir(d);
}

/* Each folder has 98 files: 6 accepted (happy paths; for inclusion the single entry too, for
 * consistency equal sizes with equal roots) and 92 negative cases. */
static void check_vector_folder(const char *dir, bool inclusion)
{
    struct tally t = {0};
    walk(dir, inclusion, &t);
    assert_int_equal(t.files, 98);
    assert_int_equal(t.accepted, 6);
}

static void test_inclusion_vectors(void **state)
{
    (void)state;
    check_vector_folder(VECTORS "/testdata/inclusion", true);
}

static void test_consistency_vectors(void **state)
{
    (void)state;
    check_vector_folder(VECTORS "/testdata/consistency", false);
}

/* ---- generated proofs ---------------------------------------------------------------------- */

#define MAX_LEAVES 70

static void make_leaves(uint8_t (*h)[MERKLE_HASH_BYTES], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t leaf[8];
        for (int b = 0; b < 8; b++)
            leaf[b] = (uint8_t)(i >> (8 * b));
        merkle_leaf_hash(leaf, sizeof leaf, h[i]);
    }
}

static void test_generated_inclusion(void **state)
{
    (void)state;
    uint8_t h[MAX_LEAVES][MERKLE_HASH_BYTES];
    make_leaves(h, MAX_LEAVES);
    for (size_t n = 1; n <= MAX_LEAVES; n++) {
        uint8_t root[MERKLE_HASH_BYTES];
        merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, root);
        struct merkle_span root_span = {root, sizeof root};
        for (size_t m = 0; m < n; m++) {
            uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
            struct merkle_span spans[MERKLE_MAX_PROOF];
            size_t len;
            assert_int_equal(
                merkle_inclusion_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, m, proof, &len),
                0);
            merkle_spans((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, spans);
            struct merkle_span leaf = {h[m], MERKLE_HASH_BYTES};
            if (merkle_verify_inclusion(m, n, leaf, spans, len, root_span) != 0)
                fail_msg("inclusion %zu in %zu does not verify", m, n);
            /* The same proof must not pass for a neighbouring index or another leaf. */
            if (n > 1) {
                struct merkle_span other = {h[(m + 1) % n], MERKLE_HASH_BYTES};
                assert_int_equal(merkle_verify_inclusion(m, n, other, spans, len, root_span), -1);
            }
            if (len > 0) {
                proof[len - 1][0] ^= 1;
                assert_int_equal(merkle_verify_inclusion(m, n, leaf, spans, len, root_span), -1);
            }
        }
        uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
        size_t len;
        assert_int_equal(
            merkle_inclusion_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, n, proof, &len), -1);
    }
}

static void test_generated_consistency(void **state)
{
    (void)state;
    uint8_t h[MAX_LEAVES][MERKLE_HASH_BYTES];
    make_leaves(h, MAX_LEAVES);
    uint8_t roots[MAX_LEAVES + 1][MERKLE_HASH_BYTES];
    for (size_t n = 0; n <= MAX_LEAVES; n++)
        merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, roots[n]);
    for (size_t n = 1; n <= MAX_LEAVES; n++) {
        for (size_t m = 1; m <= n; m++) {
            uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
            struct merkle_span spans[MERKLE_MAX_PROOF];
            size_t len;
            assert_int_equal(
                merkle_consistency_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, m, proof, &len),
                0);
            merkle_spans((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, spans);
            struct merkle_span r1 = {roots[m], MERKLE_HASH_BYTES},
                               r2 = {roots[n], MERKLE_HASH_BYTES};
            if (merkle_verify_consistency(m, n, r1, r2, spans, len) != 0)
                fail_msg("consistency %zu → %zu does not verify", m, n);
            if (m < n) {
                /* Another old root (a rewritten prefix) must fail. */
                struct merkle_span wrong = {roots[m - 1], MERKLE_HASH_BYTES};
                assert_int_equal(merkle_verify_consistency(m, n, wrong, r2, spans, len), -1);
                proof[0][31] ^= 0x80;
                assert_int_equal(merkle_verify_consistency(m, n, r1, r2, spans, len), -1);
            }
        }
        uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
        size_t len;
        assert_int_equal(
            merkle_consistency_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, 0, proof, &len),
            -1);
        assert_int_equal(
            merkle_consistency_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n, n + 1, proof, &len),
            -1);
    }
}

/* The vectors' happy paths were made from the same eight leaves as roots.json: proofs generated
 * here must be byte-identical to theirs, not merely verify. */
static void test_generated_matches_published(void **state)
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
    json_decref(roots);
    json_t *v = json_load_file(VECTORS "/testdata/consistency/1/happy-path.json", 0, NULL);
    assert_non_null(v);
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len;
    assert_int_equal(merkle_consistency_proof(
                         (const uint8_t(*)[MERKLE_HASH_BYTES])h,
                         (size_t)json_integer_value(json_object_get(v, "size2")),
                         (size_t)json_integer_value(json_object_get(v, "size1")), proof, &len),
                     0);
    json_t *want = json_object_get(v, "proof");
    assert_int_equal(len, json_array_size(want));
    for (size_t i = 0; i < len; i++) {
        char b64[CODEC_B64_LEN(MERKLE_HASH_BYTES) + 1];
        assert_string_equal(codec_b64_encode(proof[i], MERKLE_HASH_BYTES, b64, sizeof b64),
                            json_string_value(json_array_get(want, i)));
    }
    json_decref(v);
    v = json_load_file(VECTORS "/testdata/inclusion/1/happy-path.json", 0, NULL);
    assert_non_null(v);
    assert_int_equal(merkle_inclusion_proof(
                         (const uint8_t(*)[MERKLE_HASH_BYTES])h,
                         (size_t)json_integer_value(json_object_get(v, "treeSize")),
                         (size_t)json_integer_value(json_object_get(v, "leafIdx")), proof, &len),
                     0);
    want = json_object_get(v, "proof");
    assert_int_equal(len, json_array_size(want));
    for (size_t i = 0; i < len; i++) {
        char b64[CODEC_B64_LEN(MERKLE_HASH_BYTES) + 1];
        assert_string_equal(codec_b64_encode(proof[i], MERKLE_HASH_BYTES, b64, sizeof b64),
                            json_string_value(json_array_get(want, i)));
    }
    json_decref(v);
}

/* ---- the compact range ----------------------------------------------------------------- */

/* Appending roots.json's leaves one at a time gives the published root of every size. */
static void test_frontier_roots(void **state)
{
    (void)state;
    json_error_t error;
    json_t *doc = json_load_file(VECTORS "/roots.json", 0, &error);
    assert_non_null(doc);
    struct merkle_frontier f = {.count = 0};
    uint8_t root[MERKLE_HASH_BYTES];
    char hex[65];
    merkle_frontier_root(&f, root);
    assert_string_equal(codec_hex_encode(root, sizeof root, hex),
                        json_string_value(json_object_get(doc, "empty_root_hex")));
    json_t *inputs = json_object_get(doc, "leaf_inputs_hex");
    assert_int_equal(json_array_size(inputs), 8);
    for (size_t i = 0; i < json_array_size(inputs); i++) {
        uint8_t input[64], leaf[MERKLE_HASH_BYTES];
        long len =
            testutil_unhex(json_string_value(json_array_get(inputs, i)), input, sizeof input);
        assert_true(len >= 0);
        merkle_leaf_hash(input, (size_t)len, leaf);
        merkle_frontier_append(&f, i, leaf);
        assert_int_equal(f.count, (size_t)__builtin_popcountll(i + 1));
        merkle_frontier_root(&f, root);
        char key[24];
        snprintf(key, sizeof key, "%zu", i + 1);
        assert_string_equal(
            codec_hex_encode(root, sizeof root, hex),
            json_string_value(json_object_get(json_object_get(doc, "roots_hex"), key)));
    }
    json_decref(doc);
}

/* For every size up to MAX_LEAVES: the frontier's root is MTH, the frontier reversed is the
 * inclusion proof of the leaf appended next, and the hex form reads back to the same frontier. */
static void test_frontier_generated(void **state)
{
    (void)state;
    uint8_t h[MAX_LEAVES][MERKLE_HASH_BYTES];
    make_leaves(h, MAX_LEAVES);
    struct merkle_frontier f = {.count = 0};
    for (size_t n = 0; n < MAX_LEAVES; n++) {
        uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
        size_t len;
        assert_int_equal(
            merkle_inclusion_proof((const uint8_t(*)[MERKLE_HASH_BYTES])h, n + 1, n, proof, &len),
            0);
        assert_int_equal(len, f.count);
        for (size_t i = 0; i < len; i++)
            assert_memory_equal(proof[i], f.hash[f.count - 1 - i], MERKLE_HASH_BYTES);

        merkle_frontier_append(&f, n, h[n]);
        uint8_t want[MERKLE_HASH_BYTES], got[MERKLE_HASH_BYTES];
        merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])h, n + 1, want);
        merkle_frontier_root(&f, got);
        if (memcmp(want, got, sizeof want) != 0)
            fail_msg("frontier root of %zu leaves is not MTH", n + 1);

        char *hex = merkle_frontier_hex(&f);
        assert_non_null(hex);
        assert_int_equal(strlen(hex), f.count * 2 * MERKLE_HASH_BYTES);
        struct merkle_frontier back;
        assert_int_equal(merkle_frontier_parse(hex, n + 1, &back), 0);
        assert_int_equal(back.count, f.count);
        assert_memory_equal(back.hash, f.hash, f.count * MERKLE_HASH_BYTES);
        /* the wrong size for the text: popcount differs, or one hash too few */
        if (f.count > 1)
            assert_int_equal(merkle_frontier_parse(hex + 2 * MERKLE_HASH_BYTES, n + 1, &back), -1);
        if (__builtin_popcountll(n + 2) != (int)f.count)
            assert_int_equal(merkle_frontier_parse(hex, n + 2, &back), -1);
        free(hex);
    }
}

static void test_frontier_parse_refuses(void **state)
{
    (void)state;
    struct merkle_frontier f;
    char text[2 * 2 * MERKLE_HASH_BYTES + 2];
    assert_int_equal(merkle_frontier_parse("", 0, &f), 0);
    assert_int_equal(f.count, 0);
    assert_int_equal(merkle_frontier_parse("", 1, &f), -1);
    memset(text, 'a', 2 * MERKLE_HASH_BYTES);
    text[2 * MERKLE_HASH_BYTES] = '\0';
    assert_int_equal(merkle_frontier_parse(text, 1, &f), 0);
    assert_int_equal(merkle_frontier_parse(text, 2, &f), 0); /* 2 = one perfect subtree */
    assert_int_equal(merkle_frontier_parse(text, 3, &f), -1);
    text[5] = 'g'; /* not hex */
    assert_int_equal(merkle_frontier_parse(text, 1, &f), -1);
    text[5] = 'a';
    strcat(text, "a"); /* one digit too many */
    assert_int_equal(merkle_frontier_parse(text, 1, &f), -1);
}

/* The authenticated leaf read: the leaf's bytes, its index and a proof for (index, n) against
 * the root; any change to the bytes, the index, the proof or the root fails. */
static void test_leaf_authentic(void **state)
{
    (void)state;
    enum { N = 7 };
    uint8_t leaves[N][4], hashes[N][MERKLE_HASH_BYTES], root[MERKLE_HASH_BYTES];
    for (size_t i = 0; i < N; i++) {
        memcpy(leaves[i], "leaf", 4);
        leaves[i][3] = (uint8_t)('0' + i);
        merkle_leaf_hash(leaves[i], 4, hashes[i]);
    }
    merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])hashes, N, root);
    for (size_t i = 0; i < N; i++) {
        uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES], got[MERKLE_HASH_BYTES];
        size_t len = 0;
        assert_int_equal(
            merkle_inclusion_proof((const uint8_t(*)[MERKLE_HASH_BYTES])hashes, N, i, proof, &len),
            0);
        const uint8_t(*pr)[MERKLE_HASH_BYTES] = (const uint8_t(*)[MERKLE_HASH_BYTES])proof;
        assert_int_equal(merkle_leaf_authentic(leaves[i], 4, i, N, pr, len, root, got), 0);
        assert_memory_equal(got, hashes[i], MERKLE_HASH_BYTES);
        uint8_t changed[4];
        memcpy(changed, leaves[i], 4);
        changed[0] ^= 1;
        assert_int_equal(merkle_leaf_authentic(changed, 4, i, N, pr, len, root, got), -1);
        assert_int_equal(merkle_leaf_authentic(leaves[i], 4, (i + 1) % N, N, pr, len, root, got),
                         -1);
        assert_int_equal(merkle_leaf_authentic(leaves[i], 4, N, N, pr, len, root, got), -1);
        uint8_t other[MERKLE_HASH_BYTES];
        memcpy(other, root, sizeof other);
        other[5] ^= 0x80;
        assert_int_equal(merkle_leaf_authentic(leaves[i], 4, i, N, pr, len, other, got), -1);
        if (len > 0) {
            proof[len - 1][0] ^= 1;
            assert_int_equal(merkle_leaf_authentic(leaves[i], 4, i, N, pr, len, root, got), -1);
            assert_int_equal(merkle_leaf_authentic(leaves[i], 4, i, N, pr, len - 1, root, got), -1);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roots),
        cmocka_unit_test(test_inclusion_vectors),
        cmocka_unit_test(test_consistency_vectors),
        cmocka_unit_test(test_generated_inclusion),
        cmocka_unit_test(test_generated_consistency),
        cmocka_unit_test(test_generated_matches_published),
        cmocka_unit_test(test_frontier_roots),
        cmocka_unit_test(test_frontier_generated),
        cmocka_unit_test(test_frontier_parse_refuses),
        cmocka_unit_test(test_leaf_authentic),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
