/* Offline verification of an audit bundle (docs/ledger-format.md, GET /api/v1/audit/bundle):
 *
 *   {origin, verifier_key, checkpoint, leaves: [base64 leaf bytes in index order],
 *    signer_keys: {key_id: {public_key, owner, revoked_at}},
 *    comparisons: {sha256: {scenario, result}}}
 *
 * Pure, for `capledger verify` and the tests: the caller reads the files. Callers have run
 * sodium_init(). */
#ifndef CAPLEDGER_CORE_BUNDLE_H
#define CAPLEDGER_CORE_BUNDLE_H

#include <jansson.h>
#include <stddef.h>

/* What the auditor holds out of band (docs/auditors.md, "The trust model"). */
struct bundle_trust {
    /* Required: the log's note verifier key text (what GET /api/v1/log/key answers), fetched
     * and compared with a published copy beforehand. The bundle's own verifier_key is only
     * compared with it: a forger chooses that one. */
    const char *verifier_key;
    /* Optional: an earlier checkpoint (signed note) the auditor kept, or NULL. */
    const char *previous_checkpoint;
    /* Optional: the approvers' public keys (standard base64 of the raw 32 bytes) the auditor
     * collected out of band; when approver_count > 0 every decision must be signed by one. */
    const char *const *approvers;
    size_t approver_count;
    /* Optional: witness verifier keys (c2sp.org/tlog-cosignature, type 0x04) and how many of
     * them must have cosigned the bundle's checkpoint (quorum <= witness_count). */
    const char *const *witnesses;
    size_t witness_count, quorum;
};

/* The checks, stopping at the first fault:
 *  1. trust->verifier_key parses; the bundle's verifier_key is that same key and names the
 *     bundle's origin;
 *  2. the checkpoint is signed by it, for that origin, and covers exactly the bundle's leaves;
 *     with witnesses, at least quorum of them cosigned it (a valid cosignature/v1 line);
 *  3. each leaf is canonical JCS, of one of three kinds (core/ledger/keylog.h):
 *     - a key enrolment or revocation: well formed; a key is enrolled once, and revoked only
 *       after its enrolment and once;
 *     - a decision {record, signature, public_key, received_at}: its record's signer_key_id is
 *       the SHA-256 of its public key and is listed in signer_keys with that key; the approver
 *       signature verifies; the key was not revoked (signer_keys' revoked_at) at or before
 *       received_at; once the log has any key event, the key was enrolled by an earlier leaf,
 *       with this public key, and not revoked by an earlier leaf (decisions before the log's
 *       first key event — a log begun before key events were logged — are "legacy" and have
 *       only signer_keys to go by); with pinned approvers, the key is one of them; every
 *       comparison the record cites is in the bundle;
 *  4. the RFC 9162 root over all leaves equals the checkpoint's root;
 *  5. each comparison's key is the SHA-256 of the RFC 8785 bytes of its result, and the
 *     result's input_sha256 (when present) that of its scenario;
 *  6. with trust->previous_checkpoint: it is signed by the same key for the same origin, and a
 *     consistency proof built from the leaves shows its tree is a prefix of the bundle's.
 * The verdict is 0 when everything verifies; else 1 with the first bad item named in why, e.g.
 * "leaf 17: approver signature does not verify". On success, report (a JSON object, or NULL)
 * receives "approvers": {key_id: {owner (or null), public_key, pinned, enrolled (leaf index or
 * null), leaves: [index…]}} for every key enrolled, signing or pinned, and "legacy_decisions":
 * the number of legacy decision leaves, and "witnesses": {name: cosignature time (POSIX
 * seconds) or null} for the witness keys given.
 *
 * They run one leaf at a time, so a bundle of any size is checked in bounded memory
 * (core/ledger/bundle_reader.h reads it; `capledger verify` calls these): begin with the
 * bundle's members other than "leaves" (borrowed until the end) and the number of leaves (-1:
 * no "leaves" array), then each leaf's base64 text in order (NULL for one that is not a
 * string), then end. Memory: the walk's state — per signing key and per decision what the
 * checks must remember (key events, the review line of each decision id, the report's
 * approvers) — and the Merkle frontier (O(log n) hashes); nothing per leaf otherwise. begin
 * returns NULL with why; leaf and end return 0 or 1 with why. A check that failed may not go
 * on: free it. (Tests check a bundle held whole with tests/oracle/bundle_verify.h.) */
struct bundle_check;
struct bundle_check *bundle_check_begin(const json_t *members, long long leaf_count,
                                        const struct bundle_trust *trust, char *why,
                                        size_t why_size) __attribute__((warn_unused_result));
int bundle_check_leaf(struct bundle_check *c, const char *b64, size_t b64_len, char *why,
                      size_t why_size) __attribute__((warn_unused_result));
int bundle_check_end(struct bundle_check *c, json_t *report, char *why, size_t why_size)
    __attribute__((warn_unused_result));
void bundle_check_free(struct bundle_check *c);

/* Receives a remark that does not fail verification (an engine_version that differs). */
typedef void (*bundle_notice_fn)(void *ctx, const char *message);

/* `capledger verify --recompute`: runs the cost engine on each comparison's scenario and
 * compares every figure with the stored result to relative rel_tol (docs/ledger-format.md: 1e-9). A
 * stored result from another engine_version is compared all the same and reported through notice
 * (may be NULL). Returns 0 when all agree; else 1 with the comparison and the JSON Pointer of
 * the first difference in why. Call it after the checks above, which check the hashes. */
int bundle_recompute(const json_t *bundle, double rel_tol, bundle_notice_fn notice, void *ctx,
                     char *why, size_t why_size) __attribute__((warn_unused_result));

#endif
