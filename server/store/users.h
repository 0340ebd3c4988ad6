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

/* Stores a token hash for the user named username. *out: {id, label, user, created_at}. */
enum store_status store_token_create(struct store *s, const struct audit_actor *who,
                                     const char *username, const char *label,
                                     const char *token_sha256, json_t **out) STORE_MUSTCHECK;

#endif
