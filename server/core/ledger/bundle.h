/* Offline verification of an audit bundle (LEDGER.md, GET /api/v1/audit/bundle):
 *
 *   {origin, verifier_key, checkpoint, leaves: [base64 leaf bytes in index order],
 *    signer_keys: {key_id: {public_key, owner, revoked_at}},
 *    comparisons: {sha256: {scenario, result}}}
 *
 * Shared by `capledger verify` and the server-side tests, so it is pure: the caller reads the
 * files. Callers have run sodium_init(). */
#ifndef CAPLEDGER_CORE_BUNDLE_H
#define CAPLEDGER_CORE_BUNDLE_H

#include <jansson.h>
#include <stddef.h>

/* Checks, stopping at the first fault:
 *  1. the verifier key parses and names the bundle's origin;
 *  2. the checkpoint is signed by it, for that origin, and covers exactly the bundle's leaves;
 *  3. each leaf is canonical JCS of {record, signature, public_key, received_at}; its record's
 *     signer_key_id is the SHA-256 of its public key and is listed in signer_keys with that
 *     key; the approver signature verifies; the key was not revoked at or before received_at;
 *     every comparison the record cites is in the bundle;
 *  4. the RFC 9162 root over all leaves equals the checkpoint's root;
 *  5. each comparison's key is the SHA-256 of the RFC 8785 bytes of its result, and the
 *     result's input_sha256 (when present) that of its scenario;
 *  6. with previous_checkpoint (a signed note, or NULL): it is signed by the same key for the
 *     same origin, and a consistency proof built from the leaves shows its tree is a prefix of
 *     the bundle's.
 * Returns 0 when everything verifies; else 1 with the first bad item named in why, e.g.
 * "leaf 17: approver signature does not verify". Borrows bundle. */
int bundle_verify(const json_t *bundle, const char *previous_checkpoint, char *why, size_t why_size)
    __attribute__((warn_unused_result));

/* Receives a remark that does not fail verification (an engine_version that differs). */
typedef void (*bundle_notice_fn)(void *ctx, const char *message);

/* `capledger verify --recompute`: runs the cost engine on each comparison's scenario and
 * compares every figure with the stored result to relative rel_tol (LEDGER.md: 1e-9). A stored
 * result from another engine_version is compared all the same and reported through notice
 * (may be NULL). Returns 0 when all agree; else 1 with the comparison and the JSON Pointer of
 * the first difference in why. Call it after bundle_verify, which checks the hashes. */
int bundle_recompute(const json_t *bundle, double rel_tol, bundle_notice_fn notice, void *ctx,
                     char *why, size_t why_size) __attribute__((warn_unused_result));

#endif
