/* The signed decision log, in PostgreSQL: what its files share (the .c files of store/ledger/,
 * private to them). See store/ledger.h for the append protocol and docs/ledger-format.md for
 * formats.
 *
 *   integrity.c  authenticated leaf reads; the log contradicting itself (core/ledger/recompute.h
 *                decides, this reads the facts)
 *   start.c      start-up: recomputation, tiles, keys not yet logged
 *   head.c       the one way the tree grows: a leaf under the locked head, the head moved, the
 *                checkpoint signed (decisions and key events both append through it)
 *   append.c     appending a decision: signer, references and gate
 *                (core/ledger/decision_rules.h, gate.h), then its leaf
 *   keys.c       key events (enrolments, revocations) as leaves; a signer's standing in them
 *   reads.c      decisions served bound to their leaves; head, entries, proofs
 *   bundle.c     the audit bundle, streamed
 *   witnesses.c  witnesses' cosignatures
 *   tiles.c      the C2SP tiles of the tree
 *
 * The head row keeps the tree's compact range (struct merkle_frontier, core/ledger/merkle.h), so
 * an append costs O(log n) hashes whatever the log's size. The old frontier, reversed, is also
 * the inclusion proof of the new leaf, so POST /decisions answers its proof without reading
 * other leaves. */
#ifndef CAPLEDGER_STORE_LEDGER_PRIVATE_H
#define CAPLEDGER_STORE_LEDGER_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/ledger/decision_rules.h"
#include "core/ledger/gate.h"
#include "core/jcs.h"
#include "core/ledger/keylog.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "core/ledger/recompute.h"
#include "core/ledger/tile.h"
#include "core/validate.h"
#include "store/alerts.h"
#include "store/ledger.h"
#include "store/reviews.h"
#include "store/store_private.h"

#define UTC_MICROS(expr)                                                                           \
    "to_char((" expr ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
/* PostgreSQL's base64 breaks lines every 76 characters; docs/ledger-format.md's has no line breaks.
 */
#define B64(expr) "translate(encode(" expr ", 'base64'), E'\\n', '')"
/* Key events are found in log_leaf itself (db/migrations/0056_log_leaf_key_events.sql has the
 * index these two expressions use): a key event leaf begins with {"at": and its first
 * "key_id":" is its key id. The log_key_event table is never what a check trusts. */
#define KEY_EVENT_LEAF(leaf) "substring(" leaf " FROM 1 FOR 6) = '\\x7b226174223a'::bytea"
#define KEY_EVENT_KEY(leaf)                                                                        \
    "substring(" leaf " FROM position('\\x226b65795f6964223a22'::bytea IN " leaf ") + 10 FOR 64)"
/* The key event leaves of key `key` (an SQL text expression), as a FROM-less condition on l. */
#define KEY_EVENTS_OF(key)                                                                         \
    KEY_EVENT_LEAF("l.leaf") " AND " KEY_EVENT_KEY("l.leaf") " = convert_to(" key ", 'UTF8')"

#define SQL_LOCK_HEAD                                                                              \
    "SELECT json_build_object('origin', origin, 'verifier_key', verifier_key, 'size', size, "      \
    "'root', encode(root, 'hex'), 'frontier', encode(frontier, 'hex')) FROM log_head FOR UPDATE"
#define SQL_HEAD                                                                                   \
    "SELECT json_build_object('origin', h.origin, 'verifier_key', h.verifier_key, "                \
    "'tree_size', c.tree_size, 'root', encode(c.root, 'hex'), 'checkpoint', c.note || "            \
    "coalesce((SELECT string_agg(x.line, '' ORDER BY x.witness) FROM log_cosignature x "           \
    "WHERE x.tree_size = c.tree_size), '')) "                                                      \
    "FROM log_head h CROSS JOIN LATERAL (SELECT * FROM log_checkpoint "                            \
    "ORDER BY tree_size DESC LIMIT 1) c"

static inline const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : NULL;
}

/* ---- shared between the files (defined where named) ---- */

/* head.c: a JSON array of the hashes' hex, in order or reversed. */
json_t *ledger__hex_array(const uint8_t (*hashes)[MERKLE_HASH_BYTES], size_t n, int reversed);
/* head.c: signs and stores the checkpoint of (origin, size, root); its note in *note. */
enum store_status ledger__sign_checkpoint(struct store_conn *c, const char *origin, uint64_t size,
                                          const uint8_t root[MERKLE_HASH_BYTES],
                                          const unsigned char *server_sk, char **note);
/* head.c: appends leaf[0..len) under the locked head (see there). */
enum store_status ledger__append_leaf_locked(struct store_conn *c, const json_t *head,
                                             const char *leaf, size_t leaf_len,
                                             const unsigned char *server_sk, char *fault,
                                             size_t fault_size, json_t **appended);
/* append.c: a review's decisions as the log says, and the current one. */
enum store_status ledger__review_line(struct store_conn *c, const char *review_id, json_t **current,
                                      char *fault, size_t fault_size);
/* integrity.c */
void ledger__log_verifier_set(const struct store *s, const struct note_verifier *v);
enum store_status ledger__signed_checkpoint(struct store_conn *c, struct note_checkpoint *cp,
                                            char *fault, size_t fault_size);
enum store_status ledger__leaf_authenticate(struct store_conn *c, const struct note_checkpoint *cp,
                                            uint64_t index, const uint8_t *leaf, size_t len,
                                            char *why, size_t why_size);
enum store_status ledger__leaf_authenticate_b64(struct store_conn *c,
                                                const struct note_checkpoint *cp, uint64_t index,
                                                const char *leaf_b64, char *why, size_t why_size);
enum store_status ledger__head_consistent(struct store_conn *c, const json_t *head,
                                          const struct merkle_frontier *f, char *evidence,
                                          size_t size);
enum store_status ledger__leaves_consistent(struct store_conn *c, uint64_t bound, char *evidence,
                                            size_t size);
/* keys.c */
enum store_status ledger__log_unlogged_keys(struct store *s, const unsigned char *server_sk,
                                            char *fault, size_t fault_size);
enum store_status ledger__check_signer_in_log(struct store_conn *c, const char *key_id,
                                              const char *public_key, struct problems *p,
                                              char *fault, size_t fault_size);

#endif
