/* Webhooks and their delivery outbox (db/migrations/0040_webhooks.sql).
 *
 * To deliver an alert, call store_webhook_enqueue_tx inside the transaction that raises it:
 * the alert and its deliveries then commit (or roll back) together, and the background
 * deliverer (http/deliver.c) posts them later, never in the request that raised the alert. */
#ifndef CAPLEDGER_STORE_WEBHOOKS_H
#define CAPLEDGER_STORE_WEBHOOKS_H

#include "store/audit.h"
#include "store/store.h"

/* Queues one delivery of `alert` (its JSON row; "id" is used as the alert id when it is a
 * UUID) for every webhook subscribed to `event` (an alert kind: "drift", "log_integrity")
 * of an enabled owner or admin who is to hear of it: the webhooks of `owner` (the username
 * the alert is addressed to), and with admins_too every admin's webhooks as well (admins see
 * every alert; pass 0 when each admin gets an alert row of their own). owner NULL: every
 * subscribed webhook. Queuing the same alert twice for a webhook is a no-op. *queued (may be
 * NULL) counts new deliveries. Must run inside the caller's transaction on c. */
enum store_status store_webhook_enqueue_tx(struct store_conn *c, const char *event,
                                           const char *owner, int admins_too, const json_t *alert,
                                           int *queued) STORE_MUSTCHECK;

#define WEBHOOKS_PER_USER 25     /* a user's webhooks, at most */
#define WEBHOOK_PINGS_WAITING 50 /* test messages not yet delivered to one owner, at most */

/* Webhooks: {id, owner, url, events, format, description, created_at,
 *            deliveries: {pending, failing, delivered, failed},
 *            last_delivery: null | {id, event, status, attempts, last_status, last_error,
 *                                   last_attempt_at, delivered_at}}. */
struct webhook_new {
    const char *user_id, *owner; /* the creator */
    const char *url, *events_json, *format, *description, *secret_sealed;
};
/* STORE_NOT_FOUND (nothing written) when the user has WEBHOOKS_PER_USER already. */
enum store_status store_webhook_create(struct store *s, const struct audit_actor *who,
                                       const struct webhook_new *w, json_t **out) STORE_MUSTCHECK;
/* owner NULL: every webhook (admins), else that user's. Keyset on (created_at, id). */
enum store_status store_webhook_list(struct store *s, const char *owner, const char *after_at,
                                     const char *after_id, int limit, json_t **out) STORE_MUSTCHECK;
/* STORE_NOT_FOUND also when owner is given and the webhook is someone else's. */
enum store_status store_webhook_get(struct store *s, const char *id, const char *owner,
                                    json_t **out) STORE_MUSTCHECK;
/* Deletes the webhook and its deliveries (pending ones are never posted). */
enum store_status store_webhook_delete(struct store *s, const struct audit_actor *who,
                                       const char *id, const char *owner) STORE_MUSTCHECK;
/* A test delivery ("ping") of body to the webhook, audited; *out: the delivery.
 * STORE_NOT_FOUND when WEBHOOK_PINGS_WAITING test messages are still waiting. */
enum store_status store_webhook_ping(struct store *s, const struct audit_actor *who, const char *id,
                                     const char *body, json_t **out) STORE_MUSTCHECK;

/* Deliveries of a webhook, newest first: {id, webhook_id, event, alert_id, status, attempts,
 * next_attempt_at (null once delivered or failed), last_attempt_at, last_status, last_error,
 * delivered_at, created_at}. Keyset on (created_at, id) descending. */
enum store_status store_webhook_deliveries(struct store *s, const char *webhook_id,
                                           const char *before_at, const char *before_id, int limit,
                                           json_t **out) STORE_MUSTCHECK;

/* The deliverer's side. Claims up to max due deliveries (pending or failing, next attempt
 * reached), under a lock that serialises claims across instances: each gets a new lease, one
 * more attempt counted, and its next attempt moved lease_s ahead (so a crashed instance's claim
 * is retried then: at least once). Owners are isolated: at most one delivery in flight per
 * destination (scheme, host and port) and per owner, across instances — a log-integrity alert
 * waits for no owner, only for its own destination —, none to a destination whose breaker is
 * open, log-integrity alerts first, and at most max_ordinary of the others. *out: [{id, lease,
 * attempts, url, destination, event, secret_sealed, body}]. */
enum store_status store_webhook_claim(struct store *s, double lease_s, int max, int max_ordinary,
                                      json_t **out) STORE_MUSTCHECK;

struct webhook_result {
    const char *id, *lease;
    const char *verdict; /* "delivered", "failing" (retried retry_s later, or failed once
                            attempts reach max_attempts) or "failed" (given up) */
    int http_status;     /* 0: no reply came */
    const char *error;   /* may be NULL */
    double retry_s;
    int max_attempts;
    const char *destination;
    int breaker_failure; /* counts against the destination's breaker (else closes it) */
};
/* Records an attempt's outcome when the lease is still the claimer's, and the destination's
 * breaker (core/notify/webhook.h). */
enum store_status store_webhook_result(struct store *s,
                                       const struct webhook_result *res) STORE_MUSTCHECK;

#endif
