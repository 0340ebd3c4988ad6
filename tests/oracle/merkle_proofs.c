/* RFC 9162 proof generators, for tests only (merkle_proofs.h). */
#include "merkle_proofs.h"

#include <stdbool.h>

/* The largest power of two smaller than n (n > 1). */
static size_t split_point(size_t n)
{
    size_t k = 1;
    while (k << 1 < n)
        k <<= 1;
    return k;
}

/* PATH(m, D[n]): the path for the subtree, then the sibling subtree's root. */
static void path(const uint8_t (*h)[MERKLE_HASH_BYTES], size_t n, size_t m,
                 uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    if (n == 1)
        return;
    size_t k = split_point(n);
    if (m < k) {
        path(h, k, m, proof, len);
        merkle_root(h + k, n - k, proof[(*len)++]);
    } else {
        path(h + k, n - k, m - k, proof, len);
        merkle_root(h, k, proof[(*len)++]);
    }
}

int merkle_inclusion_proof(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n, size_t index,
                           uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
{
    *proof_len = 0;
    if (index >= n)
        return -1;
    path(leaf_hashes, n, index, proof, proof_len);
    return 0;
}

/* SUBPROOF(m, D[n], b). */
static void subproof(const uint8_t (*h)[MERKLE_HASH_BYTES], size_t n, size_t m, bool whole,
                     uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    if (m == n) {
        if (!whole)
            merkle_root(h, n, proof[(*len)++]);
        return;
    }
    size_t k = split_point(n);
    if (m <= k) {
        subproof(h, k, m, whole, proof, len);
        merkle_root(h + k, n - k, proof[(*len)++]);
    } else {
        subproof(h + k, n - k, m - k, false, proof, len);
        merkle_root(h, k, proof[(*len)++]);
    }
}

int merkle_consistency_proof(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n,
                             size_t old_size, uint8_t (*proof)[MERKLE_HASH_BYTES],
                             size_t *proof_len)
{
    *proof_len = 0;
    if (old_size == 0 || old_size > n)
        return -1;
    if (old_size < n)
        subproof(leaf_hashes, n, old_size, true, proof, proof_len);
    return 0;
}
