/* The Merkle tree's interior hashes stored as C2SP tlog-tiles (https://c2sp.org/tlog-tiles):
 * tiles of height 8, so that proofs read O(log n) stored hashes instead of every leaf hash.
 *
 * A "stored hash" at level L, index k is the root of the perfect subtree of 256^L leaves
 * [k·256^L, (k+1)·256^L): level 0 holds the leaf hashes, level 1 the roots of each 256 leaves,
 * and so on. Tile (L, N) is the run of level-L stored hashes N·256 .. N·256+W-1 (its width W is
 * 256 for a full tile, less for the partial tile at the right edge), their bytes concatenated:
 * exactly the body the tlog-tiles spec serves at tile/<L>/<N>[.p/<W>]. Any node of the tree of
 * height h = 8L + r (r < 8) is the root of 2^r consecutive level-L stored hashes, all in one
 * tile, so a proof needs only a few tiles per level.
 *
 * Proofs are made in two passes over the same recursion as merkle.c: tile_plan_* lists the
 * tiles (and the widths of them) a proof reads, the caller loads those into the tile_set, and
 * tile_*_proof computes the proof from them. Both are pure; the proofs equal merkle.c's
 * byte for byte. */
#ifndef CAPLEDGER_CORE_TILE_H
#define CAPLEDGER_CORE_TILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ledger/merkle.h"

#define TILE_HEIGHT 8
#define TILE_WIDTH 256 /* 2^TILE_HEIGHT hashes in a full tile */
/* Stored-hash levels of a 64-bit tree: ceil(64 / 8). */
#define TILE_LEVELS 8
/* More than any proof reads: per level at most a handful of tiles (the leaf's, the right
 * edge's, the old size's edge). */
#define TILE_SET_MAX 64

struct tile_ref {
    unsigned level;
    uint64_t index;
    size_t width;         /* hashes needed from the tile's start (plan) */
    const uint8_t *bytes; /* loaded: width * 32 bytes or more (borrowed), NULL until loaded */
    size_t loaded;        /* hashes available at bytes */
};

struct tile_set {
    struct tile_ref ref[TILE_SET_MAX];
    size_t count;
    int missing; /* a computation asked for a hash no loaded tile holds */
};

void tile_set_init(struct tile_set *s);

/* Lists in s the tiles (with the width read of each) the inclusion proof of index in the tree
 * of n leaves reads. Returns 0, or -1 when index >= n. */
int tile_plan_inclusion(struct tile_set *s, uint64_t n, uint64_t index)
    __attribute__((warn_unused_result));
/* The same for the consistency proof from old_size to n (0 < old_size <= n); -1 otherwise. */
int tile_plan_consistency(struct tile_set *s, uint64_t n, uint64_t old_size)
    __attribute__((warn_unused_result));
/* The same for the root of the tree of n leaves (n > 0); -1 for n = 0. */
int tile_plan_root(struct tile_set *s, uint64_t n) __attribute__((warn_unused_result));

/* Gives the set the bytes of tile (level, index): count hashes, 32 bytes each (borrowed until
 * the proof is made). Returns 0, or -1 when the set does not list that tile or count is below
 * the width the plan needs from it. */
int tile_set_load(struct tile_set *s, unsigned level, uint64_t index, const uint8_t *bytes,
                  size_t count) __attribute__((warn_unused_result));

/* The proofs and the root from the loaded set, equal to what RFC 9162 defines over all leaf
 * hashes (merkle_root, and the test oracles of tests/oracle/merkle_proofs.h). Return 0, or -1
 * when the arguments are out of range or a tile the plan lists was not loaded. */
int tile_inclusion_proof(struct tile_set *s, uint64_t n, uint64_t index,
                         uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
    __attribute__((warn_unused_result));
int tile_consistency_proof(struct tile_set *s, uint64_t n, uint64_t old_size,
                           uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
    __attribute__((warn_unused_result));
int tile_root(struct tile_set *s, uint64_t n, uint8_t out[MERKLE_HASH_BYTES])
    __attribute__((warn_unused_result));

/* One stored hash an append completes: level-L hash number `index`, i.e. hash index % 256 of
 * tile (level, index / 256). */
struct tile_hash {
    unsigned level;
    uint64_t index;
    uint8_t hash[MERKLE_HASH_BYTES];
};

/* merkle_frontier_append (f is the frontier of the tree of `size` leaves; it becomes that of
 * size + 1), also writing to out[] the stored hashes the new leaf completes: always the leaf
 * hash at level 0, and the level-L hash whenever 256^L divides size + 1. Returns how many
 * (1 .. TILE_LEVELS). */
size_t tile_append(struct merkle_frontier *f, uint64_t size,
                   const uint8_t leaf_hash[MERKLE_HASH_BYTES], struct tile_hash out[TILE_LEVELS]);

/* The number of level-L stored hashes a tree of n leaves has (n / 256^L). */
uint64_t tile_level_hashes(uint64_t n, unsigned level);

/* Level TILE_ENTRIES names the entry bundles ("tile/entries/..."). */
#define TILE_ENTRIES 0xffffffffu

/* The part of a tile path a reader refuses (tile_path_read). */
enum tile_path_part {
    TILE_PATH_OK = 0,
    TILE_PATH_LEVEL, /* not "entries" nor a decimal 0..63 without leading zeros */
    TILE_PATH_INDEX, /* N not canonical x-groups of three digits, or more than 6 groups */
    TILE_PATH_WIDTH, /* ".p/W" with W not a decimal 1..255 without leading zeros */
};
/* The spec's largest level ("a decimal ASCII integer between 0 and 63"). */
#define TILE_LEVEL_MAX 63

/* Parses the part of a C2SP tlog-tiles path after "tile/": "<L>/<N>" or "<L>/<N>.p/<W>", L a
 * level 0..63 or "entries" (TILE_ENTRIES), N in the spec's x-prefixed groups of three digits
 * (every group but the last written "xNNN"), W 1..255; says which part is malformed (a
 * non-canonical encoding included: leading zeros, an empty group, a width of 256). Levels
 * TILE_LEVELS..63 are well formed yet name no tile of a tree of at most 2^64 leaves, so a
 * server answers them "not found" (tile_in_tree is false), not "bad request". *level, *index,
 * *width are set only on TILE_PATH_OK. */
enum tile_path_part tile_path_read(const char *text, unsigned *level, uint64_t *index,
                                   size_t *width) __attribute__((warn_unused_result));
/* "level", "index", "width" ("" for TILE_PATH_OK). */
const char *tile_path_part_name(enum tile_path_part part);

/* Whether tile (level, index) of width w exists in the tree of `size` leaves: its last hash
 * is a stored hash of that tree (index·256 + w <= size / 256^level). A full tile (w = 256) or
 * a partial one of any width up to what the tree has; level TILE_ENTRIES is the entry bundle,
 * which exists exactly when level 0's tile does. Never overflows. */
bool tile_in_tree(uint64_t size, unsigned level, uint64_t index, size_t width);

/* Entry bundles are "sequences of big-endian uint16 length-prefixed log entries": an entry
 * (a leaf) is at most this long. */
#define TILE_ENTRY_MAX 65535u
/* Writes one entry of an entry bundle — its length as a big-endian uint16, then its bytes —
 * at out (size bytes). Returns the bytes written (len + 2), or 0 when len > TILE_ENTRY_MAX or
 * it does not fit. */
size_t tile_entry_put(uint8_t *out, size_t size, const uint8_t *entry, size_t len);

#endif
