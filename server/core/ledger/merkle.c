/* RFC 9162 §2.1, written from the RFC's pseudocode (the step comments below follow its
 * numbering). Generation recurses on k, the largest power of two below n, as MTH does: each
 * call hashes its subtree once, so a proof costs O(n) hashes and O(log n) stack. */
#include "core/ledger/merkle.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"

void merkle_leaf_hash(const uint8_t *leaf, size_t len, uint8_t out[MERKLE_HASH_BYTES])
{
    crypto_hash_sha256_state st;
    const uint8_t prefix = 0x00;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, &prefix, 1);
    crypto_hash_sha256_update(&st, leaf, len);
    crypto_hash_sha256_final(&st, out);
}

void merkle_node_hash(const uint8_t left[MERKLE_HASH_BYTES], const uint8_t right[MERKLE_HASH_BYTES],
                      uint8_t out[MERKLE_HASH_BYTES])
{
    uint8_t buf[1 + 2 * MERKLE_HASH_BYTES];
    buf[0] = 0x01;
    memcpy(buf + 1, left, MERKLE_HASH_BYTES);
    memcpy(buf + 1 + MERKLE_HASH_BYTES, right, MERKLE_HASH_BYTES);
    crypto_hash_sha256(out, buf, sizeof buf);
}

/* The largest power of two strictly below n (n ≥ 2). */
static size_t split_point(size_t n)
{
    size_t k = 1;
    while (k << 1 < n)
        k <<= 1;
    return k;
}

static void subtree_root(const uint8_t (*h)[MERKLE_HASH_BYTES], size_t n,
                         uint8_t out[MERKLE_HASH_BYTES])
{
    if (n == 1) {
        memcpy(out, h[0], MERKLE_HASH_BYTES);
        return;
    }
    size_t k = split_point(n);
    uint8_t left[MERKLE_HASH_BYTES], right[MERKLE_HASH_BYTES];
    subtree_root(h, k, left);
    subtree_root(h + k, n - k, right);
    merkle_node_hash(left, right, out);
}

void merkle_root(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n,
                 uint8_t out[MERKLE_HASH_BYTES])
{
    if (n == 0)
        crypto_hash_sha256(out, (const uint8_t *)"", 0);
    else
        subtree_root(leaf_hashes, n, out);
}

static bool span_is_hash(struct merkle_span s)
{
    return s.data != NULL && s.len == MERKLE_HASH_BYTES;
}

static bool span_equals(struct merkle_span s, const uint8_t hash[MERKLE_HASH_BYTES])
{
    return span_is_hash(s) && memcmp(s.data, hash, MERKLE_HASH_BYTES) == 0;
}

static bool all_hashes(const struct merkle_span *proof, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!span_is_hash(proof[i]))
            return false;
    return true;
}

int merkle_verify_inclusion(uint64_t index, uint64_t tree_size, struct merkle_span leaf_hash,
                            const struct merkle_span *proof, size_t proof_len,
                            struct merkle_span root)
{
    /* 1. */
    if (index >= tree_size || !span_is_hash(leaf_hash) || !span_is_hash(root) ||
        !all_hashes(proof, proof_len) || proof_len > MERKLE_MAX_PROOF)
        return -1;
    /* 2. */
    uint64_t fn = index, sn = tree_size - 1;
    uint8_t r[MERKLE_HASH_BYTES];
    memcpy(r, leaf_hash.data, MERKLE_HASH_BYTES);
    /* 3. */
    for (size_t i = 0; i < proof_len; i++) {
        const uint8_t *p = proof[i].data;
        if (sn == 0)
            return -1;
        if ((fn & 1) || fn == sn) {
            merkle_node_hash(p, r, r);
            if (!(fn & 1))
                while (!(fn & 1) && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
        } else {
            merkle_node_hash(r, p, r);
        }
        fn >>= 1;
        sn >>= 1;
    }
    /* 4. */
    return sn == 0 && span_equals(root, r) ? 0 : -1;
}

int merkle_verify_consistency(uint64_t size1, uint64_t size2, struct merkle_span root1,
                              struct merkle_span root2, const struct merkle_span *proof,
                              size_t proof_len)
{
    if (size1 > size2)
        return -1;
    if (size1 == size2) {
        /* Nothing to prove beyond "same tree": the roots must be the same bytes. */
        if (proof_len != 0 || root1.len != root2.len || !root1.data || !root2.data ||
            memcmp(root1.data, root2.data, root1.len) != 0)
            return -1;
        if (size1 == 0) {
            uint8_t empty[MERKLE_HASH_BYTES];
            merkle_root(NULL, 0, empty);
            return span_equals(root1, empty) ? 0 : -1;
        }
        return 0;
    }
    if (size1 == 0)
        return -1;
    if (!span_is_hash(root1) || !span_is_hash(root2) || !all_hashes(proof, proof_len) ||
        proof_len > MERKLE_MAX_PROOF)
        return -1;
    /* 1.–2. When size1 is a power of two, its root is a node of the new tree and the proof
     * leaves it out: the walk starts from it. */
    bool prepend = (size1 & (size1 - 1)) == 0;
    size_t total = proof_len + (prepend ? 1 : 0);
    if (proof_len == 0)
        return -1;
#define PATH_AT(i) (prepend ? ((i) == 0 ? root1.data : proof[(i)-1].data) : proof[(i)].data)
    /* 3.–4. */
    uint64_t fn = size1 - 1, sn = size2 - 1;
    while (fn & 1) {
        fn >>= 1;
        sn >>= 1;
    }
    /* 5. */
    uint8_t fr[MERKLE_HASH_BYTES], sr[MERKLE_HASH_BYTES];
    memcpy(fr, PATH_AT(0), MERKLE_HASH_BYTES);
    memcpy(sr, PATH_AT(0), MERKLE_HASH_BYTES);
    /* 6. */
    for (size_t i = 1; i < total; i++) {
        const uint8_t *c = PATH_AT(i);
        if (sn == 0)
            return -1;
        if ((fn & 1) || fn == sn) {
            merkle_node_hash(c, fr, fr);
            merkle_node_hash(c, sr, sr);
            if (!(fn & 1))
                while (!(fn & 1) && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
        } else {
            merkle_node_hash(sr, c, sr);
        }
        fn >>= 1;
        sn >>= 1;
    }
#undef PATH_AT
    /* 7. */
    return span_equals(root1, fr) && span_equals(root2, sr) && sn == 0 ? 0 : -1;
}

void merkle_spans(const uint8_t (*hashes)[MERKLE_HASH_BYTES], size_t n, struct merkle_span *spans)
{
    for (size_t i = 0; i < n; i++)
        spans[i] = (struct merkle_span){hashes[i], MERKLE_HASH_BYTES};
}

/* ---- the compact range ---- */

int merkle_frontier_parse(const char *hex, uint64_t size, struct merkle_frontier *f)
{
    size_t count = (size_t)__builtin_popcountll(size);
    if (strlen(hex) != count * 2 * MERKLE_HASH_BYTES)
        return -1;
    for (size_t i = 0; i < count; i++) {
        char part[2 * MERKLE_HASH_BYTES + 1];
        memcpy(part, hex + i * 2 * MERKLE_HASH_BYTES, 2 * MERKLE_HASH_BYTES);
        part[2 * MERKLE_HASH_BYTES] = '\0';
        if (codec_hex_decode_exact(part, f->hash[i], MERKLE_HASH_BYTES) != 0)
            return -1;
    }
    f->count = count;
    return 0;
}

char *merkle_frontier_hex(const struct merkle_frontier *f)
{
    char *hex = malloc(f->count * 2 * MERKLE_HASH_BYTES + 1);
    if (!hex)
        return NULL;
    hex[0] = '\0';
    for (size_t i = 0; i < f->count; i++)
        codec_hex_encode(f->hash[i], MERKLE_HASH_BYTES, hex + i * 2 * MERKLE_HASH_BYTES);
    return hex;
}

void merkle_frontier_append(struct merkle_frontier *f, uint64_t size,
                            const uint8_t leaf_hash[MERKLE_HASH_BYTES])
{
    uint8_t node[MERKLE_HASH_BYTES];
    memcpy(node, leaf_hash, sizeof node);
    for (uint64_t k = size; k & 1; k >>= 1)
        merkle_node_hash(f->hash[--f->count], node, node);
    memcpy(f->hash[f->count++], node, sizeof node);
}

void merkle_frontier_root(const struct merkle_frontier *f, uint8_t out[MERKLE_HASH_BYTES])
{
    if (f->count == 0) {
        merkle_root(NULL, 0, out);
        return;
    }
    memcpy(out, f->hash[f->count - 1], MERKLE_HASH_BYTES);
    for (size_t i = f->count - 1; i-- > 0;)
        merkle_node_hash(f->hash[i], out, out);
}

int merkle_leaf_authentic(const uint8_t *leaf, size_t len, uint64_t index, uint64_t n,
                          const uint8_t (*proof)[MERKLE_HASH_BYTES], size_t proof_len,
                          const uint8_t root[MERKLE_HASH_BYTES],
                          uint8_t leaf_hash[MERKLE_HASH_BYTES])
{
    merkle_leaf_hash(leaf, len, leaf_hash);
    if (index >= n || proof_len > MERKLE_MAX_PROOF)
        return -1;
    struct merkle_span spans[MERKLE_MAX_PROOF];
    merkle_spans(proof, proof_len, spans);
    struct merkle_span lh = {leaf_hash, MERKLE_HASH_BYTES}, r = {root, MERKLE_HASH_BYTES};
    return merkle_verify_inclusion(index, n, lh, spans, proof_len, r);
}
