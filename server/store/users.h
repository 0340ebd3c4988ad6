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

#endif
