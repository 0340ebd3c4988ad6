/* The log's self-checks, pure over the facts the store reads (as Trillian and Tessera keep
 * storage apart from Merkle computation), so each verdict is unit-tested without PostgreSQL:
 *
 *  - before an append signs anything, the locked head must be what the stored checkpoints and
 *    leaves say, and what this server remembers having signed or observed (log_head_check);
 *  - at start, every stored leaf's hash is recomputed from its bytes and the root over them
 *    compared with the checkpoints (log_recompute_*, fed one leaf at a time in index order from
 *    wherever the store reads them, so memory stays O(log n)).
 *
 * Each fills `evidence` with one sentence naming the first contradiction ("" when none): that
 * sentence is what the integrity alert and the server's log carry. */
#ifndef CAPLEDGER_CORE_LEDGER_RECOMPUTE_H
#define CAPLEDGER_CORE_LEDGER_RECOMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ledger/merkle.h"

/* What this server remembers outside the database (its state file): the last checkpoint it
 * signed or observed. */
struct log_seen {
    bool known;
    uint64_t size;
    uint8_t root[MERKLE_HASH_BYTES];
    const char *state_path; /* named in the evidence */
};

struct log_head_facts {
    uint64_t size;                          /* the head row's size */
    const char *root;                       /* its root, lower-case hex (NULL: none) */
    const struct merkle_frontier *frontier; /* its compact range, parsed */
    const char *checkpoint_root;      /* root of the stored checkpoint of that size (NULL: none) */
    uint64_t latest_checkpoint;       /* size of the largest stored checkpoint */
    uint64_t leaves;                  /* stored leaves */
    struct log_seen seen;             /* the server's memory */
    const char *seen_checkpoint_root; /* root of the stored checkpoint of size seen.size */
};

/* The head must have the root of the stored checkpoint of its size, no larger checkpoint may be
 * stored, exactly `size` leaves, a compact range that folds to its root, and it must be (or
 * extend) the checkpoint the server remembers (core/ledger/seen.h). */
void log_head_check(const struct log_head_facts *f, char *evidence, size_t size);

struct log_recompute {
    uint64_t n; /* leaves consumed so far */
    struct merkle_frontier frontier;
    uint64_t latest_size; /* the checkpoint the head stands on */
    struct log_seen seen;
};

/* Starts a recomputation up to the checkpoint of size latest_size. seen may be NULL. */
void log_recompute_init(struct log_recompute *rc, uint64_t latest_size,
                        const struct log_seen *seen);
/* Consumes stored leaf `index` (its bytes and its stored hash). Returns 0 while consistent,
 * else -1 with evidence filled: a leaf missing (index is not the next one), a stored hash that
 * is not the hash of the bytes, or the root over the first seen.size leaves that is not the one
 * the server remembers. */
int log_recompute_leaf(struct log_recompute *rc, uint64_t index, const uint8_t *leaf, size_t len,
                       const uint8_t stored_hash[MERKLE_HASH_BYTES], char *evidence, size_t size)
    __attribute__((warn_unused_result));
/* After the last leaf: as many leaves as the checkpoint's size, and their root its root
 * (lower-case hex). Returns 0, or -1 with evidence filled. */
int log_recompute_finish(const struct log_recompute *rc, const char *latest_root_hex,
                         char *evidence, size_t size);

#endif
