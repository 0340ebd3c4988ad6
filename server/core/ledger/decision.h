/* Decision records (docs/ledger-format.md): the bytes an approver signs, their Ed25519 check, the
 * log leaf a verified decision becomes, and field validation for POST /decisions.
 *
 *   signed message = "capledger-decision-v1\n" ‖ JCS(record)
 *   signer_key_id  = lower-case hex SHA-256 of the raw 32-byte public key
 *   leaf           = JCS({"record", "signature", "public_key", "received_at"})
 *
 * Signatures and keys travel as standard padded base64 (core/ledger/codec.h). Pure; callers have
 * run sodium_init(). */
#ifndef CAPLEDGER_CORE_DECISION_H
#define CAPLEDGER_CORE_DECISION_H

#include <jansson.h>
#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problems.h"

#define DECISION_CONTEXT "capledger-decision-v1\n"
#define DECISION_KEY_ID_HEX_LEN 64
#define DECISION_SIGNATURE_B64_LEN 88  /* base64 of 64 bytes */
#define DECISION_PUBLIC_KEY_B64_LEN 44 /* base64 of 32 bytes */
/* The longest record (its RFC 8785 bytes) accepted: its leaf must fit an entry of a C2SP entry
 * bundle (TILE_ENTRY_MAX, 65,535 bytes), with room for the signature, the public key,
 * received_at and the member names (under 300 bytes). */
#define DECISION_RECORD_MAX 65000u
#define DECISION_MAX_SAFE_INTEGER 9007199254740991LL /* 2^53 − 1 */

/* The signed message for record: malloc'd (the caller frees it), length in *len. NULL when the
 * record cannot be canonicalized (see jcs_serialize) or memory runs out. Borrows record. */
uint8_t *decision_message(const json_t *record, size_t *len) __attribute__((warn_unused_result));

/* Lower-case hex SHA-256 of the raw public key into out[DECISION_KEY_ID_HEX_LEN + 1]. */
void decision_key_id(const uint8_t public_key[crypto_sign_PUBLICKEYBYTES],
                     char out[DECISION_KEY_ID_HEX_LEN + 1]);

/* Signs record with libsodium's 64-byte secret key; writes the base64 signature into
 * out[DECISION_SIGNATURE_B64_LEN + 1]. Returns 0, or -1 when the record cannot be
 * canonicalized. */
int decision_sign(const json_t *record, const uint8_t secret_key[crypto_sign_SECRETKEYBYTES],
                  char out[DECISION_SIGNATURE_B64_LEN + 1]) __attribute__((warn_unused_result));

/* Verifies a base64 signature over record's signed message with a base64 raw public key.
 * Returns 0 when it verifies; -1 when it does not, or either string is not canonical base64
 * of the right length, or the record cannot be canonicalized. */
int decision_verify(const json_t *record, const char *signature_b64, const char *public_key_b64)
    __attribute__((warn_unused_result));

/* The log leaf for a verified decision, malloc'd, length in *len; NULL when something cannot
 * be canonicalized. received_at is the server's RFC 3339 UTC time of the append. */
char *decision_leaf(const json_t *record, const char *signature_b64, const char *public_key_b64,
                    const char *received_at, size_t *len) __attribute__((warn_unused_result));

/* Checks record against docs/ledger-format.md — only strings, booleans, null, integers within
 * ±(2^53 − 1), arrays and objects; the known fields with their types; required fields; `decision`
 * one of advance|revise|stop; UUID `id` and `supersedes`; RFC 3339 UTC `created_at`; 64 lower-case
 * hex `signer_key_id` and comparison hashes — appending one problem per fault with a JSON Pointer
 * under prefix (e.g. "/record"; NULL or "" for the root). Returns how many it appended. The
 * gate conditions (checklist, owner named, chosen option the winner) are not checked here. */
size_t decision_validate(const json_t *record, const char *prefix, struct problems *errs);

/* What the API serves about a decision, taken from its log leaf alone: {id, review_id,
 * decision, chosen_option, comparison_sha256, supersedes, signer_key_id (from the record),
 * received_at, record, signature (from the leaf)}; optional record members absent are null.
 * NULL when the bytes are not a decision leaf. */
json_t *decision_view(const uint8_t *leaf, size_t len) __attribute__((warn_unused_result));

/* The first of those members in which row (a stored decision, as the API would serve it)
 * differs from view; NULL when none does. */
const char *decision_view_mismatch(const json_t *row, const json_t *view);

#endif
