/* Builds a large decision log for bench/log_scale.sh, as COPY text PostgreSQL loads directly:
 * N key-enrolment leaves (core/ledger/keylog.h, distinct keys), their tiles (core/ledger/tile.h,
 * the same code the server's append uses), and the head and checkpoint the server's own key
 * signs, so that the server starts on it, proves from it and capledger verify accepts its
 * bundle. The point is proof and bundle latency at that size, not append speed.
 *
 * Run: build/bench_loggen N ORIGIN KEY_FILE OUT_DIR
 * Writes OUT_DIR/leaves.copy (log_leaf), OUT_DIR/tiles.copy (log_tile), OUT_DIR/head.sql. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/keylog.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "core/ledger/tile.h"

static int read_seed(const char *path, uint8_t sk[crypto_sign_SECRETKEYBYTES])
{
    FILE *f = fopen(path, "r");
    char hex[2 * crypto_sign_SEEDBYTES + 2] = "";
    if (!f)
        return -1;
    size_t n = fread(hex, 1, 2 * crypto_sign_SEEDBYTES, f);
    fclose(f);
    hex[n] = '\0';
    uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
    if (n != 2 * crypto_sign_SEEDBYTES || codec_hex_decode_exact(hex, seed, sizeof seed) != 0)
        return -1;
    crypto_sign_seed_keypair(pk, sk, seed);
    return 0;
}

static void put_bytea(FILE *out, const uint8_t *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    fputs("\\\\x", out);
    for (size_t i = 0; i < len; i++) {
        fputc(digits[bytes[i] >> 4], out);
        fputc(digits[bytes[i] & 15], out);
    }
}

int main(int argc, char **argv)
{
    if (argc != 5 || sodium_init() < 0) {
        fprintf(stderr, "usage: bench_loggen N ORIGIN KEY_FILE OUT_DIR\n");
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10);
    const char *origin = argv[2];
    uint8_t sk[crypto_sign_SECRETKEYBYTES];
    if (n == 0 || read_seed(argv[3], sk) != 0) {
        fprintf(stderr, "bench_loggen: N must be positive and KEY_FILE a 32-byte hex seed\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/leaves.copy", argv[4]);
    FILE *leaves = fopen(path, "w");
    snprintf(path, sizeof path, "%s/tiles.copy", argv[4]);
    FILE *tiles = fopen(path, "w");
    snprintf(path, sizeof path, "%s/head.sql", argv[4]);
    FILE *head = fopen(path, "w");
    if (!leaves || !tiles || !head) {
        fprintf(stderr, "bench_loggen: cannot write to %s\n", argv[4]);
        return 1;
    }
    static uint8_t cur[TILE_LEVELS][TILE_WIDTH][MERKLE_HASH_BYTES];
    uint64_t done[TILE_LEVELS] = {0};
    struct merkle_frontier f = {.count = 0};
    for (uint64_t i = 0; i < n; i++) {
        uint8_t seed[16], pk[32], key_hash[32];
        memcpy(seed, "bench-key-", 10);
        for (int b = 0; b < 6; b++)
            seed[10 + b] = (uint8_t)(i >> (8 * b));
        crypto_hash_sha256(pk, seed, sizeof seed);
        crypto_hash_sha256(key_hash, pk, sizeof pk);
        char key_id[65], pk_b64[CODEC_B64_LEN(32) + 1];
        codec_hex_encode(key_hash, sizeof key_hash, key_id);
        codec_b64_encode(pk, sizeof pk, pk_b64, sizeof pk_b64);
        size_t len = 0;
        char *leaf = keylog_enrol_leaf(key_id, pk_b64, "bench-owner", "2026-01-01T00:00:00Z", &len);
        if (!leaf)
            return 1;
        uint8_t hash[MERKLE_HASH_BYTES];
        merkle_leaf_hash((const uint8_t *)leaf, len, hash);
        fprintf(leaves, "%llu\t", (unsigned long long)i);
        put_bytea(leaves, (const uint8_t *)leaf, len);
        fputc('\t', leaves);
        put_bytea(leaves, hash, sizeof hash);
        fputc('\n', leaves);
        free(leaf);
        struct tile_hash out[TILE_LEVELS];
        size_t k = tile_append(&f, i, hash, out);
        for (size_t j = 0; j < k; j++) {
            unsigned l = out[j].level;
            memcpy(cur[l][out[j].index % TILE_WIDTH], out[j].hash, MERKLE_HASH_BYTES);
            if (++done[l] % TILE_WIDTH == 0) {
                fprintf(tiles, "%u\t%llu\t", l, (unsigned long long)(done[l] / TILE_WIDTH - 1));
                put_bytea(tiles, cur[l][0], TILE_WIDTH * MERKLE_HASH_BYTES);
                fputc('\n', tiles);
            }
        }
    }
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        if (done[l] % TILE_WIDTH) {
            fprintf(tiles, "%u\t%llu\t", l, (unsigned long long)(done[l] / TILE_WIDTH));
            put_bytea(tiles, cur[l][0], (size_t)(done[l] % TILE_WIDTH) * MERKLE_HASH_BYTES);
            fputc('\n', tiles);
        }
    uint8_t root[MERKLE_HASH_BYTES];
    merkle_frontier_root(&f, root);
    char root_hex[65];
    codec_hex_encode(root, sizeof root, root_hex);
    char *frontier = merkle_frontier_hex(&f);
    char *body = note_checkpoint_body(origin, n, root);
    size_t note_len = 0;
    int status = 0;
    char *note = body ? note_sign(body, strlen(body), origin, sk, &note_len, &status) : NULL;
    if (!frontier || !note || strstr(note, "$note$")) {
        fprintf(stderr, "bench_loggen: cannot sign the checkpoint\n");
        return 1;
    }
    fprintf(head,
            "UPDATE log_head SET size = %llu, root = '\\x%s', frontier = '\\x%s', updated_at = "
            "now();\nINSERT INTO log_checkpoint (tree_size, root, note) VALUES (%llu, '\\x%s', "
            "$note$%s$note$);\n",
            (unsigned long long)n, root_hex, frontier, (unsigned long long)n, root_hex, note);
    free(frontier);
    free(body);
    free(note);
    fclose(leaves);
    fclose(tiles);
    fclose(head);
    printf("%llu leaves, root %s\n", (unsigned long long)n, root_hex);
    return 0;
}
