/* The webhook deliverer: background threads (a dispatcher and `threads` workers per server
 * instance) that post the outbox's due deliveries (store_webhook_claim: under a lease, so
 * instances never post the same row at once; one in flight per destination and per owner, so
 * one owner's slow receivers hold one worker at most; one worker kept for log-integrity alerts)
 * with libcurl, sign each attempt (core/notify/webhook.h), and record the outcome: delivered on
 * a 2xx, given up on a permanent refusal, else retried with exponential backoff and jitter until
 * WEBHOOK_MAX_ATTEMPTS; a destination that keeps timing out is left alone for a while (its
 * breaker). It never runs inside a request. */
#ifndef CAPLEDGER_HTTP_DELIVER_H
#define CAPLEDGER_HTTP_DELIVER_H

#include "store/store.h"

struct deliver_config {
    struct store *store;
    const unsigned char *server_sk; /* 64 bytes: unseals the webhooks' secrets */
    double timeout_s;               /* one attempt, connect included (default 10) */
    double retry_base_s;            /* the first backoff step (default 15) */
    int deny_private;               /* also refuse loopback and private addresses */
    int threads;                    /* workers posting at once (at least 2) */
    const char *user_agent;
};

struct deliverer;

/* Starts the thread; NULL (message printed) when it cannot. */
struct deliverer *deliver_start(const struct deliver_config *cfg);
/* Stops it: an attempt in flight is abandoned within a fraction of a second (and retried). */
void deliver_stop(struct deliverer *d);

#endif
