/* Witness cosignatures (C2SP tlog-cosignature, Ed25519 "cosignature/v1") and the
 * add-checkpoint request of the C2SP tlog-witness protocol: what `capledger witness serve`
 * checks before it cosigns, what the log server sends and reads back, and what
 * `capledger verify --witness` checks. Pure; callers have run sodium_init().
 *
 *   witness verifier key  = "<name>+<8 hex key id>+<base64(0x04 ‖ public key)>"
 *   key id                = SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4]
 *   signed message        = "cosignature/v1\ntime <t>\n" ‖ checkpoint body
 *   signature line        = "— <name> <base64(key id ‖ u64be t ‖ Ed25519 signature)>\n"
 *   add-checkpoint body   = "old <size>\n" ‖ proof lines (base64 hashes) ‖ "\n" ‖ checkpoint */
#ifndef CAPLEDGER_CORE_LEDGER_WITNESS_H
#define CAPLEDGER_CORE_LEDGER_WITNESS_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ledger/merkle.h"
#include "core/ledger/note.h"

#define WITNESS_MAX_PROOF 63 /* tlog-witness: at most 63 consistency proof lines */

struct witness_key {
    char name[NOTE_NAME_MAX + 1];
    uint8_t key_id[NOTE_KEY_ID_BYTES];
    uint8_t public_key[crypto_sign_PUBLICKEYBYTES];
};

/* Fills k for name and public key (key id computed). Returns 0, or -1 for a bad name. */
int witness_key_init(struct witness_key *k, const char *name,
                     const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
    __attribute__((warn_unused_result));
/* The verifier key text of k, malloc'd; NULL when out of memory. */
char *witness_key_text(const struct witness_key *k) __attribute__((warn_unused_result));
/* Parses witness verifier key text (type byte 0x04). Returns 0, or -1 when malformed or its
 * key id does not match. */
int witness_key_parse(const char *text, struct witness_key *k) __attribute__((warn_unused_result));

/* The cosignature line over body[0..len) (a checkpoint body, final newline included) at POSIX
 * time t, malloc'd; NULL when out of memory. */
char *witness_cosign(const struct witness_key *k, const uint8_t sk[crypto_sign_SECRETKEYBYTES],
                     const char *body, size_t len, uint64_t t) __attribute__((warn_unused_result));

/* Looks in the signed note msg[0..len) for a cosignature line by k over its body. Returns 0
 * and the timestamp in *t when one verifies; WITNESS_COSIG_ABSENT when the note has no line of
 * k (its name and key id) or is not well formed; WITNESS_COSIG_FORGED when any line of k does
 * not verify (a bad signature, or a time beyond 2^63 − 1), even beside one that does: the note
 * must then be rejected as a whole (C2SP signed-note), not read as uncosigned. */
#define WITNESS_COSIG_ABSENT (-1)
#define WITNESS_COSIG_FORGED (-2)
int witness_cosignature_verify(const char *msg, size_t len, const struct witness_key *k,
                               uint64_t *t) __attribute__((warn_unused_result));

/* The add-checkpoint request body: "old <old_size>\n", one base64 line per proof hash, "\n",
 * then the checkpoint note. malloc'd, length in *len; NULL when out of memory. */
char *witness_request(uint64_t old_size, const uint8_t (*proof)[MERKLE_HASH_BYTES],
                      size_t proof_len, const char *checkpoint, size_t *len)
    __attribute__((warn_unused_result));

/* A witness's 409 body (C2SP tlog-witness, text/x.tlog.size): the tree size it last cosigned,
 * in decimal, then a newline. Sizes are uint64: 2^64 − 1 is read as itself (it was clamped to
 * 2^63 − 1 through a signed parse). Returns 0, or -1 when the body is not that. */
int witness_conflict_size(const char *body, size_t len, uint64_t *size)
    __attribute__((warn_unused_result));

/* What a witness decides for one request. */
struct witness_state {
    uint64_t size; /* 0 and the empty-tree root before the first cosignature */
    uint8_t root[MERKLE_HASH_BYTES];
};

struct witness_verdict {
    int status;                /* HTTP status: 200, 400, 403, 404, 409 or 422 */
    char why[256];             /* for anything but 200 */
    struct note_checkpoint cp; /* with 200: the checkpoint to record and cosign */
    size_t body_len;           /* with 200: length of the checkpoint body (signed text) */
    const char *checkpoint;    /* with 200: where the checkpoint starts in the request */
};

/* tlog-witness add-checkpoint, for a witness that trusts log key `log` and last cosigned
 * `state` for its origin (known: 0 when it never saw this origin, which the caller treats as
 * 404 unless configured). Checks in the order the spec gives: body syntax (400), origin
 * (404), the log's signature (403), old size <= new size (400), old size = last cosigned
 * size (409), equal sizes need equal roots (409), the consistency proof (422). */
void witness_check(const char *body, size_t len, const struct note_verifier *log,
                   const struct witness_state *state, struct witness_verdict *v);

#endif
