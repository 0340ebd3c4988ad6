/* Users, team membership and API tokens. Only hashes of secrets reach this layer. */
#ifndef CAPLEDGER_STORE_USERS_H
#define CAPLEDGER_STORE_USERS_H

#include "store/audit.h"
#include "store/store.h"

/* Resolves an API token by the SHA-256 hex of its text and records its use.
 * *out: {user_id, username, role, teams: [names], token_id}. STORE_NOT_FOUND when unknown,
 * revoked, or its user is disabled. */
enum store_status store_token_resolve(struct store *s, const char *token_sha256,
                                      json_t **out) STORE_MUSTCHECK;

/* Creates a user with an already-hashed password and the named teams (all must exist:
 * else STORE_INVALID). *out: {id, username, role, teams, created_at}. */
enum store_status store_user_create(struct store *s, const struct audit_actor *who,
                                    const char *username, const char *role,
                                    const char *password_hash, const json_t *team_names,
                                    json_t **out) STORE_MUSTCHECK;

/* Creates the admin user only when there is no user at all (first start). STORE_CONFLICT when
 * users already exist (nothing is changed). Serialised by an advisory lock. */
enum store_status store_bootstrap_admin(struct store *s, const char *password_hash) STORE_MUSTCHECK;

/* Stores a token hash for the user named username, expiring after expires_in_days (0: never).
 * *out: {id, label, user, created_at, expires_at}. */
enum store_status store_token_create(struct store *s, const struct audit_actor *who,
                                     const char *username, const char *label,
                                     const char *token_sha256, int expires_in_days,
                                     json_t **out) STORE_MUSTCHECK;

/* For signing in: {id, username, role, teams, password_hash} of an enabled user.
 * STORE_NOT_FOUND when there is no such enabled user. The hash stays in the HTTP layer; never
 * send it out. */
enum store_status store_user_login_get(struct store *s, const char *username,
                                       json_t **out) STORE_MUSTCHECK;

/* Replaces the password hash with new_hash only if it is still old_hash (a concurrent change
 * wins), audited as user.password_rehash (the hashes stay out of the audit trail). */
enum store_status store_user_rehash(struct store *s, const struct audit_actor *who,
                                    const char *user_id, const char *old_hash,
                                    const char *new_hash) STORE_MUSTCHECK;

/* Users ordered by username, at most limit after the username `after` (NULL: from the
 * start). *out: array of {id, username, role, teams, created_at, disabled_at}. */
enum store_status store_user_list(struct store *s, const char *after, int limit,
                                  json_t **out) STORE_MUSTCHECK;

/* *out: array of the 0-based indexes of the names in team_names (a JSON array of strings)
 * that name no team, in order ([] when all exist). */
enum store_status store_team_names_missing(struct store *s, const json_t *team_names,
                                           json_t **out) STORE_MUSTCHECK;

/* API tokens ordered by id, at most limit after the id `after` (NULL: from the start);
 * user_id NULL lists every user's tokens. *out: array of {id, label, user, created_at,
 * last_used_at, revoked_at} (never the token or its hash). */
enum store_status store_token_list(struct store *s, const char *user_id, const char *after,
                                   int limit, json_t **out) STORE_MUSTCHECK;

/* Revokes token id (idempotent), audited as token.revoke; owner_id non-NULL restricts it to
 * that user's tokens. STORE_NOT_FOUND when there is no such token (for that owner). */
enum store_status store_token_revoke(struct store *s, const struct audit_actor *who, const char *id,
                                     const char *owner_id) STORE_MUSTCHECK;

/* Closes the account of username, in one transaction audited as user.disable: disabled_at set
 * (kept when already set), every live session ended, every API token and every signing key
 * revoked, each key's revocation appended to the decision log as a key event (server_sk signs
 * the checkpoint). When the log is inconsistent the account is closed all the same and the
 * revocations wait for the log's restoration (signing_keys_logged false). *out: {id, username,
 * role, teams, created_at, disabled_at, sessions_ended, tokens_revoked, signing_keys_revoked:
 * [key ids], signing_keys_logged}. STORE_NOT_FOUND when there is no such user. */
enum store_status store_user_disable(struct store *s, const struct audit_actor *who,
                                     const char *username, const unsigned char *server_sk,
                                     json_t **out) STORE_MUSTCHECK;

/* Lets username sign in again (audited as user.enable). What the disable revoked stays
 * revoked. *out: {id, username, role, teams, created_at, disabled_at}. STORE_NOT_FOUND when
 * there is no such user. */
enum store_status store_user_enable(struct store *s, const struct audit_actor *who,
                                    const char *username, json_t **out) STORE_MUSTCHECK;

/* Replaces username's password hash and ends its sessions (audited as user.password_reset;
 * the hash stays out of the trail). *out: {id, username, role, teams, created_at, disabled_at,
 * sessions_ended}. STORE_NOT_FOUND when there is no such user. */
enum store_status store_user_password_set(struct store *s, const struct audit_actor *who,
                                          const char *username, const char *password_hash,
                                          json_t **out) STORE_MUSTCHECK;

#endif
