/* Test oracles: RFC 9162 §2.1.3.1 and §2.1.4.1 proof generators over a whole array of leaf
 * hashes, written straight from the RFC's recursive definitions. The server never needs them
 * (it answers proofs from its tiles, core/ledger/tile.h); tests and benchmarks compare the
 * server's proofs and the verifiers against them. Built only into tests (CMake's
 * capledger_test_oracle). */
#ifndef CAPLEDGER_TESTS_ORACLE_MERKLE_PROOFS_H
#define CAPLEDGER_TESTS_ORACLE_MERKLE_PROOFS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ledger/merkle.h"

/* PATH(index, D[n]) into proof[] (room for MERKLE_MAX_PROOF hashes), its length in *proof_len.
 * Returns 0, or -1 when index >= n. */
int merkle_inclusion_proof(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n, size_t index,
                           uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
    __attribute__((warn_unused_result));

/* PROOF(old_size, D[n]) into proof[] (room for MERKLE_MAX_PROOF hashes). old_size = n gives an
 * empty proof. Returns 0, or -1 when old_size is 0 or above n. */
int merkle_consistency_proof(const uint8_t (*leaf_hashes)[MERKLE_HASH_BYTES], size_t n,
                             size_t old_size, uint8_t (*proof)[MERKLE_HASH_BYTES],
                             size_t *proof_len) __attribute__((warn_unused_result));

#endif
