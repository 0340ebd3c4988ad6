/* The signed decision log (docs/ledger-format.md): decisions appended as RFC 9162 leaves, one
 * signed C2SP checkpoint per tree size, proofs, and the audit bundle.
 *
 * Appends from any number of server instances serialise on the log_head row (SELECT … FOR
 * UPDATE) inside one transaction: index = size, insert the leaf, insert the decision, update
 * the head (size, root and compact range), sign and insert the checkpoint, mark the review
 * decided, audit, commit. The compact range kept in the head makes an append O(log n) hashes;
 * proofs read the stored leaf hashes of the tree they are for (O(n) 32-byte hashes). */
#ifndef CAPLEDGER_STORE_LEDGER_H
#define CAPLEDGER_STORE_LEDGER_H

#include <sodium.h>
#include <stdint.h>

#include "core/problems.h"
#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"

/* Most leaves GET /log/entries answers at once. */
#define LEDGER_MAX_ENTRIES 1000

/* At start, right after migrations: on first start records origin and the server's verifier
 * key in the log head and signs the checkpoint of the empty tree. On later starts refuses
 * (STORE_CONFLICT, the reason in why) when origin or key differ from those recorded: the log's
 * checkpoints must all verify with one key under one origin. */
enum store_status store_log_init(struct store *s, const char *origin,
                                 const unsigned char server_sk[crypto_sign_SECRETKEYBYTES],
                                 char *why, size_t why_size) STORE_MUSTCHECK;

enum ledger_outcome {
    LEDGER_APPENDED = 0,
    LEDGER_INVALID,     /* p names each bad field under /record or /signature (422) */
    LEDGER_REFUSED,     /* an advance the gate refuses: p lists every unmet condition (422) */
    LEDGER_NOT_SIGNER,  /* the caller is not the holder of the signing key (403) */
    LEDGER_DUPLICATE,   /* a decision with this id exists (409) */
    LEDGER_NOT_CURRENT, /* the review has a current decision the record does not supersede (409) */
    /* The stored log contradicts itself (a head rewound or changed by hand): nothing was
     * signed, this process appends nothing more, /readyz fails and owners and admins have an
     * alert (503, problem type log-inconsistent). */
    LEDGER_INCONSISTENT,
};

struct ledger_append {
    const json_t *record;           /* shape-checked with decision_validate (borrowed) */
    const char *signature_b64;      /* the approver's signature */
    const char *caller_user_id;     /* the authenticated caller: must hold the signing key */
    const unsigned char *server_sk; /* signs the checkpoint (64-byte libsodium secret key) */
};

/* Checks the record against stored data (review, supersedes, cited comparisons and chosen
 * option, evidence ids, the signer's key: registered, an owner's, not revoked, the caller's),
 * verifies the signature, applies the gate to `advance`, then appends. On LEDGER_APPENDED
 * *out = {id, review_id, leaf_index, tree_size, received_at, checkpoint (note text),
 * inclusion_proof: {leaf_index, tree_size, hashes: [hex]}} (new reference); on
 * LEDGER_NOT_CURRENT *out = {current_decision: id}: a review has one current decision, and a
 * new one must supersede it (checked under the head lock, so two appends cannot both become
 * current); otherwise *outcome says why and p holds the problems. */
enum store_status store_decision_append(struct store *s, const struct audit_actor *who,
                                        const struct ledger_append *in,
                                        enum ledger_outcome *outcome, struct problems *p,
                                        json_t **out) STORE_MUSTCHECK;
/* The dry run of an append: the same checks of the record (duplicate id, stored references,
 * evidence, the gate for `advance`, the current decision) in one read-only snapshot, without
 * the signer's key or the signature, and nothing written. *outcome as the append would answer;
 * *out = {checklist (the one the gate uses: on the first cited comparison), current_decision
 * (id or null; set when the record does not supersede it)}. */
enum store_status store_decision_check(struct store *s, const json_t *record,
                                       enum ledger_outcome *outcome, struct problems *p,
                                       json_t **out) STORE_MUSTCHECK;

/* A decision {id, review_id, decision, chosen_option, comparison_sha256, supersedes,
 * superseded_by, signer, signer_key_id, leaf_index, received_at, record, signature};
 * scope as store_review_get. What is served comes from the decision's leaf: the stored
 * row must say the same, its signer be the owner the key's enrolment leaf names, and a
 * successor's leaf supersede it. Otherwise *out is NULL, fault names the difference (and
 * owners and admins get a log_integrity alert) — the edited row is never served. */
enum store_status store_decision_get(struct store *s, const char *id,
                                     const struct team_scope *scope, char *fault, size_t fault_size,
                                     json_t **out) STORE_MUSTCHECK;
/* In log order after leaf index after_index (-1 from the start); review_id NULL for all.
 * Each decision bound to its leaf as store_decision_get; one that differs faults the list. */
enum store_status store_decision_list(struct store *s, const char *review_id,
                                      const struct team_scope *scope, long long after_index,
                                      int limit, char *fault, size_t fault_size,
                                      json_t **out) STORE_MUSTCHECK;

/* {origin, verifier_key, tree_size, root (hex), checkpoint (note text)}: the latest. */
enum store_status store_log_head(struct store *s, json_t **out) STORE_MUSTCHECK;
/* {start, end, leaves: [base64]} for [start, end); the caller keeps end <= tree size and
 * end - start <= LEDGER_MAX_ENTRIES. */
enum store_status store_log_entries(struct store *s, long long start, long long end,
                                    json_t **out) STORE_MUSTCHECK;
/* {leaf_index, tree_size, hashes: [hex]} (RFC 9162 §2.1.3); the caller keeps
 * index < size <= tree size. */
enum store_status store_log_inclusion(struct store *s, long long index, long long size,
                                      json_t **out) STORE_MUSTCHECK;
/* {first, second, hashes: [hex]} (RFC 9162 §2.1.4); the caller keeps
 * 0 < first <= second <= tree size. */
enum store_status store_log_consistency(struct store *s, long long first, long long second,
                                        json_t **out) STORE_MUSTCHECK;

/* ---- C2SP tlog-tiles (https://c2sp.org/tlog-tiles; store/ledger/tiles.c) ---- */

/* Tile (level, index) of width w (1..256) of the tree of the latest checkpoint: w·32 bytes of
 * stored hashes in *out (malloc'd; the caller frees it), read in one snapshot with the
 * checkpoint. STORE_NOT_FOUND when that tree has no such tile (core/ledger/tile.h:
 * tile_in_tree); STORE_ERROR when the stored tiles do not cover it (a broken log). */
enum store_status store_log_tile(struct store *s, unsigned level, uint64_t index, size_t width,
                                 uint8_t **out, size_t *len) STORE_MUSTCHECK;
/* The entry bundle `index` of width w (1..256): leaves index·256 .. index·256+w-1, each as a
 * big-endian uint16 length and its bytes, in *out (malloc'd). STORE_NOT_FOUND as above;
 * STORE_INVALID when a leaf is longer than an entry can be (TILE_ENTRY_MAX), its index in
 * *too_long. */
enum store_status store_log_entry_bundle(struct store *s, uint64_t index, size_t width,
                                         uint8_t **out, size_t *len,
                                         long long *too_long) STORE_MUSTCHECK;

/* Where a streamed reply goes: writes len bytes, returns 0, or -1 to stop (the client left). */
typedef int (*store_sink)(void *ctx, const char *bytes, size_t len);

/* The docs/ledger-format.md audit bundle of the latest checkpoint: {origin, verifier_key,
 * checkpoint, leaves, signer_keys, comparisons}, written to sink a piece at a time (the leaves
 * a page at a time), so memory does not grow with the log: the bytes are those of the whole
 * document dumped compactly in that member order (http's resp_json). Key ids and cited
 * comparisons are read from the leaves themselves, not from the decision index. Nothing is
 * written before the checkpoint is read, so an error then (STORE_UNAVAILABLE, ...) can still be
 * answered; *written says whether any byte went out (after which an error can only cut the
 * stream short). */
enum store_status store_audit_bundle_stream(struct store *s, store_sink sink, void *ctx,
                                            int *written) STORE_MUSTCHECK;

/* ---- witnesses (http/cosign.c) ---- */

/* {tree_size, signed_note}: the latest checkpoint as the server signed it (no cosignatures). */
enum store_status store_log_head_note(struct store *s, json_t **out) STORE_MUSTCHECK;
/* The size the witness (its verifier key text) last cosigned; 0 when it never did. */
enum store_status store_log_witness_size(struct store *s, const char *witness,
                                         long long *size) STORE_MUSTCHECK;
/* Records the size a witness says it last cosigned (its 409 answer). */
enum store_status store_log_witness_seen(struct store *s, const char *witness,
                                         long long size) STORE_MUSTCHECK;
/* Stores a verified cosignature line of the checkpoint of `size` and moves the witness on. */
enum store_status store_log_cosigned(struct store *s, const char *witness, long long size,
                                     const char *line) STORE_MUSTCHECK;

#endif
