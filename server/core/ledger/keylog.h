/* Key events in the decision log (docs/ledger-format.md; the exact forms are in docs/auditors.md).
 * An owner's signing key is enrolled, and revoked, by leaves of the log itself, so which keys could
 * sign at each point of the history is fixed by the signed log, not by a database column:
 *
 *   enrol leaf  = JCS({"at", "key_id", "kind": "key_enrol", "owner", "public_key"})
 *   revoke leaf = JCS({"at", "key_id", "kind": "key_revoke"})
 *
 * key_id is the lower-case hex SHA-256 of the raw 32-byte public key (standard base64), `at`
 * the server's RFC 3339 UTC time of the event, `owner` the username the key was registered
 * to. A decision leaf, JCS({record, signature, public_key, received_at}), has no "kind".
 * Pure; callers have run sodium_init(). */
#ifndef CAPLEDGER_CORE_LEDGER_KEYLOG_H
#define CAPLEDGER_CORE_LEDGER_KEYLOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEYLOG_KIND_ENROL "key_enrol"
#define KEYLOG_KIND_REVOKE "key_revoke"

enum keylog_kind {
    KEYLOG_DECISION, /* no "kind" member */
    KEYLOG_ENROL,
    KEYLOG_REVOKE,
};

/* The leaf bytes of an enrolment or a revocation, malloc'd, length in *len; NULL when an
 * argument cannot be canonicalized or memory runs out. */
char *keylog_enrol_leaf(const char *key_id, const char *public_key_b64, const char *owner,
                        const char *at, size_t *len) __attribute__((warn_unused_result));
char *keylog_revoke_leaf(const char *key_id, const char *at, size_t *len)
    __attribute__((warn_unused_result));

/* A parsed leaf's kind and, for key events, its members (borrowed from the document). */
struct keylog_event {
    enum keylog_kind kind;
    const char *key_id, *public_key, *owner, *at; /* public_key and owner: enrolments only */
};

/* Classifies a parsed leaf. A key event must have exactly its members, a key_id of 64
 * lower-case hex digits (for an enrolment the SHA-256 of public_key, base64 of 32 bytes), a
 * non-empty owner and an RFC 3339 UTC `at`; an unknown kind is refused. Returns 0, or -1 with
 * the fault in why. Decision leaves are checked elsewhere (core/bundle.c). */
int keylog_event_parse(const json_t *doc, struct keylog_event *ev, char *why, size_t why_size)
    __attribute__((warn_unused_result));

/* The state of every key along the log: for each key id the leaf that enrolled it (with owner
 * and public key) and the leaf that revoked it, if any. */
struct keylog;
struct keylog *keylog_new(void) __attribute__((warn_unused_result));
void keylog_free(struct keylog *k);

/* Applies the key event of leaf `index`. A second enrolment of a key, or a revocation of a key
 * not enrolled or already revoked, is refused: returns -1 with why; else 0. */
int keylog_apply(struct keylog *k, uint64_t index, const struct keylog_event *ev, char *why,
                 size_t why_size) __attribute__((warn_unused_result));

/* Whether key_id (with this base64 public key) may sign a decision at leaf `index`, after the
 * events applied so far: it must have been enrolled, with that public key, and not revoked.
 * Returns 0, or -1 with why (e.g. "key … was revoked by leaf 7"). */
int keylog_may_sign(const struct keylog *k, const char *key_id, const char *public_key_b64,
                    char *why, size_t why_size) __attribute__((warn_unused_result));

/* The owner an enrolled key was registered to, or NULL. */
const char *keylog_owner(const struct keylog *k, const char *key_id);

/* Number of key events applied. */
size_t keylog_events(const struct keylog *k);

#endif
