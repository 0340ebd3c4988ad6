/* RFC 9162 §2.1 Merkle tree: leaf and interior hashes, the root of n leaves, and inclusion and
 * consistency proofs with their verifiers.
 *
 * The server answers proof requests from its tiles (core/ledger/tile.h); whole-array proof
 * generators are test oracles (tests/oracle/merkle_proofs.h). Verifiers take every hash as bytes
 * plus a length, because a proof arrives from outside: a hash of the wrong length must fail
 * verification, not be read past or truncated. All functions are pure; hashing is libsodium's
 * SHA-256 (callers have run sodium_init()). */
#ifndef CAPLEDGER_CORE_MERKLE_H
#define CAPLEDGER_CORE_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#define MERKLE_HASH_BYTES 32
/* Proofs are at most one hash per tree level, and consistency proofs one more. */
#define MERKLE_MAX_PROOF 66

/* A borrowed byte string: a hash or proof element as received. */
struct merkle_span {
    const uint8_t *data;
    size_t len;
};

/* SHA-256(0x00 ‖ leaf). */
void merkle_leaf_hash(const uint8_t *leaf, size_t len, uint8_t out[MERKLE_HASH_BYTES]);
/* SHA-256(0x01 ‖ left ‖ right). */
void merkle_node_hash(const uint8_t left[MERKLE_HASH_BYTES], const uint8_t right[MERKLE_HASH_BYTES],
                      uint8_t out[MERKLE_HASH_BYTES]);

/* MTH of the n leaf hashes; for n = 0 the hash of the empty string. */
void merkle_root(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n,
                 uint8_t out[MERKLE_HASH_BYTES]);

/* RFC 9162 §2.1.3.2. Returns 0 when the proof shows leaf_hash at index in the tree of size
 * tree_size with this root, else -1 (any hash not 32 bytes long included). */
int merkle_verify_inclusion(uint64_t index, uint64_t tree_size, struct merkle_span leaf_hash,
                            const struct merkle_span *proof, size_t proof_len,
                            struct merkle_span root) __attribute__((warn_unused_result));

/* RFC 9162 §2.1.4.2. Returns 0 when the proof shows the tree (size1, root1) is a prefix of
 * (size2, root2), else -1. Equal sizes need an empty proof and equal roots (for size 0: both
 * the empty-tree hash); size1 = 0 < size2 is always refused. */
int merkle_verify_consistency(uint64_t size1, uint64_t size2, struct merkle_span root1,
                              struct merkle_span root2, const struct merkle_span *proof,
                              size_t proof_len) __attribute__((warn_unused_result));

/* An authenticated leaf read: 0 when leaf[0..len) is leaf `index` of the tree of size n whose
 * root is `root` (the root of a checkpoint whose signature the caller verified), by the
 * inclusion proof proof[0..proof_len) — its RFC 9162 leaf hash goes to leaf_hash either way;
 * -1 when the proof does not show it (index >= n included). */
int merkle_leaf_authentic(const uint8_t *leaf, size_t len, uint64_t index, uint64_t n,
                          const uint8_t (*proof)[MERKLE_HASH_BYTES], size_t proof_len,
                          const uint8_t root[MERKLE_HASH_BYTES],
                          uint8_t leaf_hash[MERKLE_HASH_BYTES]) __attribute__((warn_unused_result));

/* Convenience for callers holding fixed-size hashes: spans over an array of 32-byte hashes,
 * written to spans[0..n). */
void merkle_spans(const uint8_t (*hashes)[MERKLE_HASH_BYTES], size_t n, struct merkle_span *spans);

/* The compact range of a tree of `size` leaves (its "frontier"): one hash per set bit of size,
 * the roots of the perfect subtrees the RFC 9162 tree splits into, largest (leftmost) first.
 * Appending a leaf merges it with the trailing subtrees of equal size (as a binary counter
 * carries), and the root is the frontier folded from the right: O(log n) hashes per append
 * whatever the tree's size, without the other leaves. Before an append, the frontier reversed
 * is the inclusion proof of the leaf it appends (index size, in the tree of size + 1). */
#define MERKLE_FRONTIER_MAX 64 /* one hash per bit of a 64-bit size */

struct merkle_frontier {
    uint8_t hash[MERKLE_FRONTIER_MAX][MERKLE_HASH_BYTES];
    size_t count; /* the number of set bits of the tree's size */
};

/* Reads the frontier of a tree of `size` leaves from its hashes as hex, concatenated. Returns 0,
 * or -1 when the text is not exactly popcount(size) hashes. */
int merkle_frontier_parse(const char *hex, uint64_t size, struct merkle_frontier *f)
    __attribute__((warn_unused_result));
/* The frontier as hex, its hashes concatenated (malloc'd; "" for the empty tree); NULL when out
 * of memory. */
char *merkle_frontier_hex(const struct merkle_frontier *f);
/* Adds leaf_hash as leaf number `size`, f being the frontier of the tree of `size` leaves. */
void merkle_frontier_append(struct merkle_frontier *f, uint64_t size,
                            const uint8_t leaf_hash[MERKLE_HASH_BYTES]);
/* MTH of the tree the frontier stands for (the empty-tree hash when it has no hashes). */
void merkle_frontier_root(const struct merkle_frontier *f, uint8_t out[MERKLE_HASH_BYTES]);

#endif
