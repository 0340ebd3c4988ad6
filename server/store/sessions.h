/* Browser sessions. Only the SHA-256 hex of a session id reaches this layer. */
#ifndef CAPLEDGER_STORE_SESSIONS_H
#define CAPLEDGER_STORE_SESSIONS_H

#include "store/audit.h"
#include "store/store.h"

/* Starts a session for user_id lasting absolute_s seconds at most, audited as session.create
 * with who as the actor. *out: {id, user_id, created_at, expires_at}. STORE_NOT_FOUND when the
 * user is disabled (meanwhile). */
enum store_status store_session_create(struct store *s, const struct audit_actor *who,
                                       const char *session_sha256, const char *user_id,
                                       int absolute_s, json_t **out) STORE_MUSTCHECK;

/* Resolves a live session: not ended, before its absolute expiry, and used within the last
 * idle_s seconds; its user not disabled. Records the use (at most every touch_s seconds, to
 * spare a write per request). *out: {user_id, username, role, teams: [names], session_id,
 * signed_in_s (whole seconds since the sign-in that started it)}.
 * STORE_NOT_FOUND when there is no such live session. */
enum store_status store_session_resolve(struct store *s, const char *session_sha256, int idle_s,
                                        double touch_s, json_t **out) STORE_MUSTCHECK;

/* Ends the session (for every client that holds its cookie), audited as session.end.
 * STORE_NOT_FOUND when it had already ended. */
enum store_status store_session_end(struct store *s, const struct audit_actor *who,
                                    const char *session_sha256) STORE_MUSTCHECK;

/* Deletes sessions that expired more than a day ago. */
enum store_status store_session_purge(struct store *s) STORE_MUSTCHECK;

#endif
