/* Timings of the ledger's pure core, to size the server's work per request: canonicalising a
 * comparison, formatting doubles, Merkle roots and proofs over a large log (the store answers
 * proofs from tiles now: both are timed), and verifying an approver signature.
 * Times are CPU time of this process, so other load on the machine inflates them less.
 * Run: build/bench_ledger [leaves] (default 100000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/ledger/merkle.h"
#include "oracle/merkle_proofs.h"
#include "core/ledger/tile.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t leaves = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    if (sodium_init() < 0 || leaves == 0)
        return 1;

    json_t *doc = json_load_file(CAPLEDGER_DATA_DIR "/spec/example-inference.expected.json",
                                 JSON_REJECT_DUPLICATES, NULL);
    if (!doc)
        return 1;
    size_t len = 0;
    const int reps = 2000;
    double t0 = now_s();
    for (int i = 0; i < reps; i++) {
        char *bytes = jcs_serialize(doc, &len);
        free(bytes);
    }
    printf("jcs_serialize example-inference.expected.json (%zu bytes): %.1f us/op\n", len,
           (now_s() - t0) / reps * 1e6);
    json_decref(doc);

    const int doubles = 1000000;
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    char text[JCS_NUMBER_MAX];
    long total_chars = 0;
    t0 = now_s();
    for (int i = 0; i < doubles; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        double d = (double)(state >> 11) * 0x1p-53 * 1e6; /* typical money/throughput figures */
        total_chars += jcs_format_double(d, text);
    }
    printf("jcs_format_double on doubles in [0, 1e6): %.0f ns/op (%.1f chars)\n",
           (now_s() - t0) / doubles * 1e9, (double)total_chars / doubles);

    uint8_t(*hashes)[MERKLE_HASH_BYTES] = malloc(leaves * sizeof *hashes);
    if (!hashes)
        return 1;
    for (size_t i = 0; i < leaves; i++)
        merkle_leaf_hash((const uint8_t *)&i, sizeof i, hashes[i]);
    uint8_t root[MERKLE_HASH_BYTES], proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t proof_len;
    t0 = now_s();
    merkle_root((const uint8_t(*)[MERKLE_HASH_BYTES])hashes, leaves, root);
    printf("merkle_root over %zu leaf hashes: %.2f ms\n", leaves, (now_s() - t0) * 1e3);
    t0 = now_s();
    if (merkle_inclusion_proof((const uint8_t(*)[MERKLE_HASH_BYTES])hashes, leaves, leaves / 2,
                               proof, &proof_len) != 0)
        return 1;
    printf("merkle_inclusion_proof index %zu of %zu: %.2f ms (%zu hashes)\n", leaves / 2, leaves,
           (now_s() - t0) * 1e3, proof_len);
    t0 = now_s();
    if (merkle_consistency_proof((const uint8_t(*)[MERKLE_HASH_BYTES])hashes, leaves, leaves / 2,
                                 proof, &proof_len) != 0)
        return 1;
    printf("merkle_consistency_proof %zu -> %zu: %.2f ms (%zu hashes)\n", leaves / 2, leaves,
           (now_s() - t0) * 1e3, proof_len);

    /* The same proofs from tiles (what the store does now): build them as appends do, then
     * plan, load (pointers into the in-memory levels) and prove. */
    uint8_t(*level[TILE_LEVELS])[MERKLE_HASH_BYTES];
    uint64_t count[TILE_LEVELS] = {0};
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        level[l] = malloc((leaves / ((size_t)1 << (TILE_HEIGHT * (l < 7 ? l : 7))) + 1) *
                          MERKLE_HASH_BYTES);
    struct merkle_frontier f = {.count = 0};
    t0 = now_s();
    for (size_t i = 0; i < leaves; i++) {
        struct tile_hash out[TILE_LEVELS];
        size_t k = tile_append(&f, i, hashes[i], out);
        for (size_t j = 0; j < k; j++)
            memcpy(level[out[j].level][count[out[j].level]++], out[j].hash, MERKLE_HASH_BYTES);
    }
    printf("tile_append of %zu leaves: %.2f ms\n", leaves, (now_s() - t0) * 1e3);
    const int reps_tile = 1000;
    size_t tiles_read = 0;
    t0 = now_s();
    for (int r = 0; r < reps_tile; r++) {
        uint64_t index = (uint64_t)r * 7919 % leaves;
        struct tile_set set;
        tile_set_init(&set);
        if (tile_plan_inclusion(&set, leaves, index) != 0)
            return 1;
        for (size_t i = 0; i < set.count; i++) {
            struct tile_ref *t = &set.ref[i];
            uint64_t first = t->index * TILE_WIDTH, have = count[t->level] - first;
            if (tile_set_load(&set, t->level, t->index, level[t->level][first],
                              have > TILE_WIDTH ? TILE_WIDTH : (size_t)have) != 0)
                return 1;
        }
        tiles_read += set.count;
        if (tile_inclusion_proof(&set, leaves, index, proof, &proof_len) != 0)
            return 1;
    }
    printf("tile inclusion proof in %zu leaves (plan + prove, %.1f tiles read): %.1f us/op\n",
           leaves, (double)tiles_read / reps_tile, (now_s() - t0) / reps_tile * 1e6);
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        free(level[l]);
    free(hashes);

    uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
    crypto_sign_keypair(pk, sk);
    char pk_b64[DECISION_PUBLIC_KEY_B64_LEN + 1], sig[DECISION_SIGNATURE_B64_LEN + 1];
    sodium_bin2base64(pk_b64, sizeof pk_b64, pk, sizeof pk, sodium_base64_VARIANT_ORIGINAL);
    json_t *record =
        json_pack("{s:s, s:s, s:[s], s:s}", "decision", "advance", "question", "Which arrangement?",
                  "assumptions", "failure rate 2%", "created_at", "2025-09-12T14:06:12Z");
    if (!record || decision_sign(record, sk, sig) != 0)
        return 1;
    const int verifies = 2000;
    t0 = now_s();
    for (int i = 0; i < verifies; i++)
        if (decision_verify(record, sig, pk_b64) != 0)
            return 1;
    printf("decision_verify (JCS + Ed25519): %.1f us/op\n", (now_s() - t0) / verifies * 1e6);
    json_decref(record);
    return 0;
}
