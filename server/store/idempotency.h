/* Idempotency keys (the rows behind server/http/idempotency.c). */
#ifndef CAPLEDGER_STORE_IDEMPOTENCY_H
#define CAPLEDGER_STORE_IDEMPOTENCY_H

#include "store/store.h"

/* Keys are remembered this long; an older row is forgotten and the key may be used again. */
#define STORE_IDEM_TTL "24 hours"
/* A claim still pending after this long belongs to a request that died with its server. */
#define STORE_IDEM_STALE_CLAIM "15 minutes"

/* Claims (user_id, key) for route, for the request request_id. *out (new reference) is
 * {claimed: bool, existing: null | {route, body_sha256, status, response}}: claimed true → this
 * request owns the key; else the key's earlier row (status null while that request is still
 * running), or existing null when a concurrent request claimed it a moment ago. A stale claim
 * (its request's instance died) is forgotten, unless that request's write committed: then the
 * row becomes {status: 409, body_sha256: null, response: {"action", "target_id"} as text} —
 * the reply was lost, the write must not be repeated. */
enum store_status store_idem_claim(struct store *s, const char *user_id, const char *key,
                                   const char *route, const char *request_id,
                                   json_t **out) STORE_MUSTCHECK;
/* Records the reply of the request that claimed the key. */
enum store_status store_idem_complete(struct store *s, const char *user_id, const char *key,
                                      const char *body_sha256, int status,
                                      const char *response) STORE_MUSTCHECK;
/* Forgets a claim whose request ended without a reply worth replaying. */
enum store_status store_idem_release(struct store *s, const char *user_id,
                                     const char *key) STORE_MUSTCHECK;

#endif
