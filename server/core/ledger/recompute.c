/* The log's self-checks (recompute.h). */
#include "core/ledger/recompute.h"

#include <stdio.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/seen.h"

void log_head_check(const struct log_head_facts *f, char *evidence, size_t size)
{
    evidence[0] = '\0';
    long long n = (long long)f->size;
    char folded[2 * MERKLE_HASH_BYTES + 1] = "";
    if (f->frontier->count) {
        uint8_t r[MERKLE_HASH_BYTES];
        merkle_frontier_root(f->frontier, r);
        codec_hex_encode(r, sizeof r, folded);
    }
    if (!f->root || !f->checkpoint_root || strcmp(f->root, f->checkpoint_root) != 0)
        snprintf(evidence, size,
                 "the log head has size %lld and root %s, but the stored checkpoint of size %lld "
                 "has root %s",
                 n, f->root ? f->root : "(none)", n,
                 f->checkpoint_root ? f->checkpoint_root : "(none)");
    else if (f->latest_checkpoint != f->size)
        snprintf(evidence, size,
                 "the log head has size %lld, but a checkpoint of size %lld is stored: the head "
                 "was rewound",
                 n, (long long)f->latest_checkpoint);
    else if (f->leaves != f->size)
        snprintf(evidence, size, "the log head has size %lld, but %lld leaves are stored", n,
                 (long long)f->leaves);
    else if (n > 0 && strcmp(folded, f->root) != 0)
        snprintf(evidence, size,
                 "the log head's compact range folds to root %s, not to its root %s (size %lld)",
                 folded, f->root, n);
    /* The database agrees with itself; it must also agree with what this server remembers
     * (outside the database) having signed or observed: a deeper rewind — checkpoints and
     * cosignatures deleted with the leaves — shows only here. */
    if (evidence[0] || !f->seen.known)
        return;
    uint8_t head_root[MERKLE_HASH_BYTES], cp_at_seen[MERKLE_HASH_BYTES];
    int have_cp =
        f->seen_checkpoint_root &&
        codec_hex_decode_exact(f->seen_checkpoint_root, cp_at_seen, sizeof cp_at_seen) == 0;
    char why[400];
    if (codec_hex_decode_exact(f->root, head_root, sizeof head_root) != 0)
        snprintf(evidence, size, "the log head's root is not a hash");
    else if (seen_check(f->seen.size, f->seen.root, f->size, head_root, have_cp ? cp_at_seen : NULL,
                        why, sizeof why) != 0)
        snprintf(evidence, size, "%s (state file %s)", why, f->seen.state_path);
}

void log_recompute_init(struct log_recompute *rc, uint64_t latest_size, const struct log_seen *seen)
{
    memset(rc, 0, sizeof *rc);
    rc->latest_size = latest_size;
    if (seen && seen->known && seen->size > 0) /* the empty tree: nothing to recompute */
        rc->seen = *seen;
}

int log_recompute_leaf(struct log_recompute *rc, uint64_t index, const uint8_t *leaf, size_t len,
                       const uint8_t stored_hash[MERKLE_HASH_BYTES], char *evidence, size_t size)
{
    evidence[0] = '\0';
    if (index != rc->n) {
        snprintf(evidence, size, "leaf %llu is missing from the stored leaves",
                 (unsigned long long)rc->n);
        return -1;
    }
    uint8_t hash[MERKLE_HASH_BYTES];
    merkle_leaf_hash(leaf, len, hash);
    if (memcmp(hash, stored_hash, sizeof hash) != 0) {
        snprintf(evidence, size, "leaf %llu's stored hash is not the hash of its bytes",
                 (unsigned long long)rc->n);
        return -1;
    }
    merkle_frontier_append(&rc->frontier, rc->n, hash);
    rc->n++;
    /* The checkpoint this server remembers, below the latest (which log_recompute_finish
     * compares): its root over the stored leaves. */
    if (rc->seen.known && rc->n == rc->seen.size && rc->latest_size != rc->n) {
        uint8_t r[MERKLE_HASH_BYTES];
        merkle_frontier_root(&rc->frontier, r);
        if (memcmp(r, rc->seen.root, sizeof r) != 0) {
            char got[2 * MERKLE_HASH_BYTES + 1], want[2 * MERKLE_HASH_BYTES + 1];
            codec_hex_encode(r, sizeof r, got);
            codec_hex_encode(rc->seen.root, sizeof rc->seen.root, want);
            snprintf(evidence, size,
                     "the root over the first %llu stored leaves is %s, but this server signed or "
                     "observed root %s for that size (state file %s)",
                     (unsigned long long)rc->n, got, want, rc->seen.state_path);
            return -1;
        }
    }
    return 0;
}

int log_recompute_finish(const struct log_recompute *rc, const char *latest_root_hex,
                         char *evidence, size_t size)
{
    evidence[0] = '\0';
    char root[2 * MERKLE_HASH_BYTES + 1];
    uint8_t r[MERKLE_HASH_BYTES];
    merkle_frontier_root(&rc->frontier, r);
    codec_hex_encode(r, sizeof r, root);
    if (rc->latest_size != rc->n)
        snprintf(evidence, size, "%llu of the head's %llu leaves are stored: leaf %llu is missing",
                 (unsigned long long)rc->n, (unsigned long long)rc->latest_size,
                 (unsigned long long)rc->n);
    else if (!latest_root_hex || strcmp(latest_root_hex, root) != 0)
        snprintf(evidence, size,
                 "the root over the %llu stored leaves is %s, but the checkpoint of that size has "
                 "root %s",
                 (unsigned long long)rc->n, root, latest_root_hex ? latest_root_hex : "(none)");
    return evidence[0] ? -1 : 0;
}
