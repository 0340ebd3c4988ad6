/* Bounds how many password hashes run at once. Each argon2id call at the interactive limits
 * takes ~64 MiB for ~0.1 s: a burst of sign-ins must queue here rather than exhaust memory. */
#ifndef CAPLEDGER_HTTP_HASHGATE_H
#define CAPLEDGER_HTTP_HASHGATE_H

#define HASHGATE_SLOTS 2      /* hashes at once: 128 MiB at most */
#define HASHGATE_WAIT_MS 3000 /* longer than this in the queue → 503 */

/* Takes a slot, waiting up to timeout_ms. Returns 0 with the slot held, -1 on timeout. */
int hashgate_enter(int timeout_ms) __attribute__((warn_unused_result));
void hashgate_leave(void);

struct req;
/* Answers 503 problem+json with Retry-After: 1, for when hashgate_enter timed out. */
void hashgate_reply_busy(struct req *r);

#endif
