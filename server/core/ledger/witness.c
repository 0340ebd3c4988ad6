/* C2SP tlog-cosignature (Ed25519, cosignature/v1) and tlog-witness add-checkpoint, written
 * from the C2SP texts. */
#include "core/ledger/witness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"

#define ALG_COSIGNATURE_V1 0x04
#define EM_DASH_SPACE "\xe2\x80\x94 "
#define COSIG_BYTES (NOTE_KEY_ID_BYTES + 8 + crypto_sign_BYTES)

static void key_id(const char *name, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
                   uint8_t out[NOTE_KEY_ID_BYTES])
{
    crypto_hash_sha256_state st;
    const uint8_t sep[2] = {'\n', ALG_COSIGNATURE_V1};
    uint8_t digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, (const uint8_t *)name, strlen(name));
    crypto_hash_sha256_update(&st, sep, sizeof sep);
    crypto_hash_sha256_update(&st, pk, crypto_sign_PUBLICKEYBYTES);
    crypto_hash_sha256_final(&st, digest);
    memcpy(out, digest, NOTE_KEY_ID_BYTES);
}

int witness_key_init(struct witness_key *k, const char *name,
                     const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
{
    /* The same name rules as a note's key names: reuse them through a note verifier. */
    struct note_verifier v;
    if (note_verifier_init(&v, name, public_key) != NOTE_OK)
        return -1;
    snprintf(k->name, sizeof k->name, "%s", name);
    memcpy(k->public_key, public_key, crypto_sign_PUBLICKEYBYTES);
    key_id(k->name, k->public_key, k->key_id);
    return 0;
}

char *witness_key_text(const struct witness_key *k)
{
    return note_key_text(k->name, ALG_COSIGNATURE_V1, k->key_id, k->public_key);
}

int witness_key_parse(const char *text, struct witness_key *k)
{
    const char *plus1 = strchr(text, '+');
    const char *plus2 = plus1 ? strchr(plus1 + 1, '+') : NULL;
    if (!plus1 || !plus2 || plus2 - plus1 - 1 != 2 * NOTE_KEY_ID_BYTES ||
        (size_t)(plus1 - text) > NOTE_NAME_MAX)
        return -1;
    char name[NOTE_NAME_MAX + 1], id_hex[2 * NOTE_KEY_ID_BYTES + 1];
    memcpy(name, text, (size_t)(plus1 - text));
    name[plus1 - text] = '\0';
    memcpy(id_hex, plus1 + 1, 2 * NOTE_KEY_ID_BYTES);
    id_hex[2 * NOTE_KEY_ID_BYTES] = '\0';
    uint8_t id[NOTE_KEY_ID_BYTES], alg_key[1 + crypto_sign_PUBLICKEYBYTES + 1];
    if (codec_hex_decode_exact(id_hex, id, sizeof id) != 0)
        return -1;
    long n = codec_b64_decode(plus2 + 1, strlen(plus2 + 1), alg_key, sizeof alg_key);
    if (n != 1 + crypto_sign_PUBLICKEYBYTES || alg_key[0] != ALG_COSIGNATURE_V1 ||
        witness_key_init(k, name, alg_key + 1) != 0)
        return -1;
    return sodium_memcmp(k->key_id, id, NOTE_KEY_ID_BYTES) == 0 ? 0 : -1;
}

/* "cosignature/v1\ntime <t>\n" ‖ body. */
static uint8_t *cosigned_message(const char *body, size_t len, uint64_t t, size_t *out_len)
{
    char head[64];
    int h = snprintf(head, sizeof head, "cosignature/v1\ntime %" PRIu64 "\n", t);
    uint8_t *msg = malloc((size_t)h + len);
    if (!msg)
        return NULL;
    memcpy(msg, head, (size_t)h);
    memcpy(msg + h, body, len);
    *out_len = (size_t)h + len;
    return msg;
}

char *witness_cosign(const struct witness_key *k, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
                     const char *body, size_t len, uint64_t t)
{
    size_t msg_len;
    uint8_t *msg = cosigned_message(body, len, t, &msg_len);
    if (!msg)
        return NULL;
    uint8_t sig[COSIG_BYTES];
    memcpy(sig, k->key_id, NOTE_KEY_ID_BYTES);
    for (int i = 0; i < 8; i++)
        sig[NOTE_KEY_ID_BYTES + i] = (uint8_t)(t >> (56 - 8 * i));
    crypto_sign_detached(sig + NOTE_KEY_ID_BYTES + 8, NULL, msg, msg_len, sk);
    free(msg);
    char b64[CODEC_B64_LEN(COSIG_BYTES) + 1];
    codec_b64_encode(sig, sizeof sig, b64, sizeof b64);
    char *line = NULL;
    if (asprintf(&line, EM_DASH_SPACE "%s %s\n", k->name, b64) < 0)
        return NULL;
    return line;
}

int witness_cosignature_verify(const char *msg, size_t len, const struct witness_key *k,
                               uint64_t *t)
{
    /* The body ends at the blank line; signature lines follow. */
    const char *sep = NULL;
    for (size_t i = 1; i < len; i++)
        if (msg[i] == '\n' && msg[i - 1] == '\n') {
            sep = msg + i;
            break;
        }
    if (!sep)
        return -1;
    size_t body_len = (size_t)(sep - msg);
    const char *line = sep + 1, *end = msg + len;
    size_t dash = strlen(EM_DASH_SPACE), name_len = strlen(k->name);
    int forged = 0, verified = 0;
    uint64_t verified_at = 0;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            return -1;
        const char *name = line + dash;
        if ((size_t)(nl - line) > dash + name_len + 1 && memcmp(line, EM_DASH_SPACE, dash) == 0 &&
            memcmp(name, k->name, name_len) == 0 && name[name_len] == ' ') {
            const char *b64 = name + name_len + 1;
            uint8_t sig[COSIG_BYTES + 1];
            long sig_len = codec_b64_decode(b64, (size_t)(nl - b64), sig, sizeof sig);
            /* A line of another key of the same name (another key id, or another signature
             * type) is not k's: ignored, as a verifier ignores keys it does not hold. */
            if (sig_len == COSIG_BYTES && memcmp(sig, k->key_id, NOTE_KEY_ID_BYTES) == 0) {
                uint64_t ts = 0;
                for (int i = 0; i < 8; i++)
                    ts = ts << 8 | sig[NOTE_KEY_ID_BYTES + i];
                size_t msg_len;
                uint8_t *signed_msg = cosigned_message(msg, body_len, ts, &msg_len);
                int ok = signed_msg && ts <= INT64_MAX &&
                         crypto_sign_verify_detached(sig + NOTE_KEY_ID_BYTES + 8, signed_msg,
                                                     msg_len, k->public_key) == 0;
                free(signed_msg);
                if (ok && !verified) {
                    verified = 1;
                    verified_at = ts;
                } else if (!ok && signed_msg) { /* out of memory proves nothing either way */
                    forged = 1;
                }
            }
        }
        line = nl + 1;
    }
    if (forged)
        return WITNESS_COSIG_FORGED;
    if (!verified)
        return WITNESS_COSIG_ABSENT;
    if (t)
        *t = verified_at;
    return 0;
}

char *witness_request(uint64_t old_size, const uint8_t (*proof)[MERKLE_HASH_BYTES],
                      size_t proof_len, const char *checkpoint, size_t *len)
{
    size_t cp_len = strlen(checkpoint);
    size_t cap = 32 + proof_len * (CODEC_B64_LEN(MERKLE_HASH_BYTES) + 1) + 1 + cp_len + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = (size_t)snprintf(out, cap, "old %" PRIu64 "\n", old_size);
    for (size_t i = 0; i < proof_len; i++) {
        codec_b64_encode(proof[i], MERKLE_HASH_BYTES, out + o, cap - o);
        o += strlen(out + o);
        out[o++] = '\n';
    }
    out[o++] = '\n';
    memcpy(out + o, checkpoint, cp_len);
    o += cp_len;
    out[o] = '\0';
    *len = o;
    return out;
}

static void verdict(struct witness_verdict *v, int status, const char *why)
{
    v->status = status;
    snprintf(v->why, sizeof v->why, "%s", why);
}

void witness_check(const char *body, size_t len, const struct note_verifier *log,
                   const struct witness_state *state, struct witness_verdict *v)
{
    memset(v, 0, sizeof *v);
    const char *p = body, *end = body + len;
    const char *nl = memchr(p, '\n', len);
    /* "old <size>\n": decimal without leading zeroes (unless 0). */
    if (!nl || nl - p < 5 || memcmp(p, "old ", 4) != 0 || (nl - p > 5 && p[4] == '0') ||
        nl - p > 24) {
        verdict(v, 400, "the body must start with \"old <size>\\n\"");
        return;
    }
    uint64_t old_size = 0;
    for (const char *d = p + 4; d < nl; d++) {
        if (*d < '0' || *d > '9' || old_size > (UINT64_MAX - 9) / 10) {
            verdict(v, 400, "the old size is not a decimal number");
            return;
        }
        old_size = old_size * 10 + (uint64_t)(*d - '0');
    }
    p = nl + 1;
    uint8_t proof[WITNESS_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t proof_len = 0;
    while (p < end && *p != '\n') {
        nl = memchr(p, '\n', (size_t)(end - p));
        uint8_t hash[MERKLE_HASH_BYTES + 1];
        if (proof_len == WITNESS_MAX_PROOF) {
            verdict(v, 400, "more than 63 consistency proof lines");
            return;
        }
        if (!nl || codec_b64_decode(p, (size_t)(nl - p), hash, sizeof hash) != MERKLE_HASH_BYTES) {
            verdict(v, 400, "a consistency proof line is not the base64 of a 32-byte hash");
            return;
        }
        memcpy(proof[proof_len++], hash, MERKLE_HASH_BYTES);
        p = nl + 1;
    }
    if (p >= end) {
        verdict(v, 400, "no empty line and checkpoint after the proof");
        return;
    }
    const char *cp_text = p + 1;
    size_t cp_len = (size_t)(end - cp_text), body_len = 0;
    /* The origin first (404), then the log's signature (403). */
    const char *origin_end = memchr(cp_text, '\n', cp_len);
    if (!origin_end || (size_t)(origin_end - cp_text) != strlen(log->name) ||
        memcmp(cp_text, log->name, strlen(log->name)) != 0) {
        verdict(v, 404, "unknown log origin");
        return;
    }
    int status = note_open(cp_text, cp_len, log, &body_len);
    if (status == NOTE_MALFORMED || status == NOTE_BAD_TEXT) {
        verdict(v, 400, "the checkpoint is not a signed note");
        return;
    }
    if (status != NOTE_OK) {
        verdict(v, 403, "no valid signature by the log's key");
        return;
    }
    if (note_checkpoint_parse(cp_text, body_len, &v->cp) != 0) {
        verdict(v, 400, "not a checkpoint (origin, size, root)");
        return;
    }
    if (old_size > v->cp.size) {
        verdict(v, 400, "the old size is larger than the checkpoint's");
        return;
    }
    if (old_size != state->size) {
        verdict(v, 409, "the old size is not the size this witness last cosigned");
        return;
    }
    if (old_size == v->cp.size) {
        if (proof_len != 0 || memcmp(state->root, v->cp.root, MERKLE_HASH_BYTES) != 0) {
            verdict(v, 409, "another root for the size this witness cosigned: a fork");
            return;
        }
    } else if (old_size == 0) {
        if (proof_len != 0) {
            verdict(v, 422, "a proof from the empty tree must be empty");
            return;
        }
    } else {
        struct merkle_span spans[WITNESS_MAX_PROOF];
        merkle_spans((const uint8_t(*)[MERKLE_HASH_BYTES])proof, proof_len, spans);
        struct merkle_span r1 = {state->root, MERKLE_HASH_BYTES},
                           r2 = {v->cp.root, MERKLE_HASH_BYTES};
        if (merkle_verify_consistency(old_size, v->cp.size, r1, r2, spans, proof_len) != 0) {
            verdict(v, 422,
                    "the consistency proof does not verify: not an extension of what "
                    "this witness cosigned");
            return;
        }
    }
    v->status = 200;
    v->checkpoint = cp_text;
    v->body_len = body_len;
}

int witness_conflict_size(const char *body, size_t len, uint64_t *size)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < len && body[i] >= '0' && body[i] <= '9'; i++) {
        unsigned d = (unsigned)(body[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (i == 0 || i > 20 || (i > 1 && body[0] == '0'))
        return -1;
    if (i < len && !(body[i] == '\n' && i + 1 == len))
        return -1;
    *size = v;
    return 0;
}
