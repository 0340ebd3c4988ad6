/* Owners' Ed25519 public keys for signing decision records (0005_signing_keys.sql). A key is
 * never deleted: revoked keys stop new signatures and still verify old records. */
#ifndef CAPLEDGER_STORE_SIGNING_KEYS_H
#define CAPLEDGER_STORE_SIGNING_KEYS_H

#include "store/audit.h"
#include "store/store.h"

/* Registers public_key_b64 (standard base64 of the raw 32-byte key; key_id its SHA-256 hex,
 * which the database re-checks) for user_id, audited as signing_key.add, and appends its
 * enrolment leaf to the decision log in the same transaction (server_sk signs the checkpoint;
 * STORE_UNAVAILABLE when the log is inconsistent). When the same user
 * already holds the key unrevoked, answers that key with *created = 0. STORE_CONFLICT when the
 * key belongs to another user or was revoked. *out: {key_id, public_key, created_at,
 * revoked_at}. */
enum store_status store_signing_key_add(struct store *s, const struct audit_actor *who,
                                        const char *user_id, const char *key_id,
                                        const char *public_key_b64, const unsigned char *server_sk,
                                        json_t **out, int *created) STORE_MUSTCHECK;

/* The user's keys, newest first: array of {key_id, public_key, created_at, revoked_at}. */
enum store_status store_signing_key_list(struct store *s, const char *user_id,
                                         json_t **out) STORE_MUSTCHECK;

/* store_signing_key_list of the user called username (admins). STORE_NOT_FOUND when there is
 * no such user. */
enum store_status store_signing_key_list_named(struct store *s, const char *username,
                                               json_t **out) STORE_MUSTCHECK;

/* Revokes the key of the user user_id (or, when user_id is NULL, of the user called username:
 * an admin revoking another user's key) — idempotent: an already revoked key keeps its first
 * revoked_at — audited as signing_key.revoke, with its revocation leaf appended to the
 * decision log in the same transaction (once). STORE_NOT_FOUND when the user has no such
 * key. */
enum store_status store_signing_key_revoke(struct store *s, const struct audit_actor *who,
                                           const char *user_id, const char *username,
                                           const char *key_id, const unsigned char *server_sk,
                                           json_t **out) STORE_MUSTCHECK;

/* For verifying signatures: the key with this id, whoever owns it.
 * *out (new reference): {key_id, user_id, user (username), role, public_key (standard base64
 * of the raw 32 bytes), created_at, revoked_at (null while active)}. STORE_NOT_FOUND when no
 * key has this id. */
enum store_status store_signing_key_get(struct store *s, const char *key_id,
                                        json_t **out) STORE_MUSTCHECK;

#endif
