/* Idempotency keys (the rows behind server/http/idempotency.c). */
#ifndef CAPLEDGER_STORE_IDEMPOTENCY_H
#define CAPLEDGER_STORE_IDEMPOTENCY_H

#include <stdbool.h>

#include "store/store.h"

/* Keys are remembered this long; an older row is forgotten and the key may be used again. */
#define STORE_IDEM_TTL "24 hours"
/* A claim still pending after this long belongs to a request that died with its server. */
#define STORE_IDEM_STALE_CLAIM "15 minutes"

/* A claim of (user_id, key) for route: nonce is 32 hex digits the server drew for this claim
 * (the audit_event of every write made under it carries it: struct audit_actor.idem_claim);
 * body_sha256 the request's digest when known before it runs (a JSON body), else NULL;
 * own_retries: the route's handler recognises a retry of its own committed write (decisions). */
struct idem_claim {
    const char *user_id, *key, *route, *nonce, *body_sha256;
    bool own_retries;
};
/* *out (new reference) is {claimed: bool, existing: null | {route, body_sha256, status,
 * response, reply_lost}}: claimed true → this request owns the key; else the key's earlier row
 * (status null while that request is still running), or existing null when a concurrent request
 * claimed it a moment ago. A stale claim (its instance died, or 15 minutes passed) is
 * forgotten, unless the write made under it committed — and its route is not own_retries or
 * this request is on another route: then the row becomes {status: 409, reply_lost: true,
 * response: {"action", "target_id"} as text} — the reply was lost, the write must not be
 * repeated. */
enum store_status store_idem_claim(struct store *s, const struct idem_claim *c,
                                   json_t **out) STORE_MUSTCHECK;
/* Records the reply of the request that holds the claim with nonce. STORE_CONFLICT when the
 * claim is no longer its own (settled by a retry meanwhile): nothing recorded. */
enum store_status store_idem_complete(struct store *s, const char *user_id, const char *key,
                                      const char *nonce, const char *body_sha256, int status,
                                      const char *response) STORE_MUSTCHECK;
/* Settles the claim with nonce of a request that ends without a recorded reply: when a write
 * made under it committed (and its route is not own_retries) the key answers "reply lost" from
 * now on; else it is forgotten, and a retry runs again. */
enum store_status store_idem_release(struct store *s, const char *user_id, const char *key,
                                     const char *nonce) STORE_MUSTCHECK;

#endif
