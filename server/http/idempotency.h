/* Idempotency-Key for POST handlers (docs/api-rules.md: same key + same body → the first reply
 * again; a different body → 409).
 *
 * A handler declares `struct idem idem;` and, before doing any work, calls idem_begin (routes
 * with ROUTE_JSON_BODY: the body is already parsed) or idem_begin_stream (ROUTE_STREAM_BODY:
 * call it before reading the body, then pass every chunk read to idem_update). When either
 * returns IDEM_ANSWERED the request has been answered (the stored reply replayed with header
 * `Idempotency-Replayed: true`, or a problem: 409 key reused with another body or still in
 * progress, 409 reply lost when the first request's write committed on an instance that
 * stopped before it kept the reply, 422 malformed key, 503) and the handler only cleans up.
 * Otherwise it does its work and answers its success with idem_reply (which stores the reply for
 * later retries) instead of resp_json; error answers go through the usual
 * resp_problem/resp_invalid. At its single exit it always calls idem_end, which releases the key
 * when no reply was stored, so a retry after a 4xx or 5xx runs again (a validation fault then
 * answers the same way).
 *
 * The body digest is SHA-256 over "METHOD PATH?QUERY\n" followed by the body: the raw bytes
 * for streamed bodies, and for JSON bodies the parsed document re-serialised compactly with
 * sorted keys (so whitespace differences are the same body). Keys are per user, 1-255 visible
 * ASCII characters, and remembered for 24 hours. */
#ifndef CAPLEDGER_HTTP_IDEMPOTENCY_H
#define CAPLEDGER_HTTP_IDEMPOTENCY_H

#include <sodium.h>

#include "http/internal.h"

#define IDEM_KEY_MAX 255

enum idem_step {
    IDEM_PROCEED = 0, /* do the work (with or without a key) */
    IDEM_ANSWERED,    /* the request has been answered; do nothing but clean up */
};

struct idem {
    int active; /* this request holds a claimed key */
    int stored; /* its reply was stored */
    int hashing;
    int own_retries; /* idem_begin_own_retries */
    char key[IDEM_KEY_MAX + 1];
    char nonce[33]; /* drawn for its claim (store_idem_claim) */
    char route[320];
    crypto_hash_sha256_state sha;
};

enum idem_step idem_begin(struct req *r, struct idem *ctx) __attribute__((warn_unused_result));
/* As idem_begin, for a handler that recognises a retry of its own committed write and answers
 * it (decisions: the same signed record is answered 200 with the stored decision): a stale
 * claim is taken over even when the write made under it committed. */
enum idem_step idem_begin_own_retries(struct req *r, struct idem *ctx)
    __attribute__((warn_unused_result));
enum idem_step idem_begin_stream(struct req *r, struct idem *ctx)
    __attribute__((warn_unused_result));
/* Adds body bytes read by a streaming handler to the digest (no-op without a key). */
void idem_update(struct idem *ctx, const void *data, size_t len);
/* Answers status with body (stolen) as application/json and stores it for replays. */
void idem_reply(struct req *r, struct idem *ctx, int status, json_t *body_stolen);
void idem_end(struct req *r, struct idem *ctx);

/* The skeleton of a JSON create route: idem_begin, then make(r, p), which returns the new row
 * (answered 201 and stored for replays) or NULL, having either answered itself (403, 409, a
 * store fault) or put the faults in p (answered 422); idem_end. */
void idem_create(struct req *r, create_fn make);

#endif
