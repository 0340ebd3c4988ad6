/* Webhooks and the delivery outbox. */
#include "store/webhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/notify/webhook.h"

#define DELIVERY_JSON(d)                                                                           \
    "json_build_object('id', " d ".id, 'webhook_id', " d ".webhook_id, 'event', " d ".event, "     \
    "'alert_id', " d ".alert_id, 'status', " d ".status, 'attempts', " d ".attempts, "             \
    "'next_attempt_at', CASE WHEN " d ".status IN ('pending', 'failing') THEN " d                  \
    ".next_attempt_at END, 'last_attempt_at', " d ".last_attempt_at, 'last_status', " d            \
    ".last_status, 'last_error', " d ".last_error, 'delivered_at', " d ".delivered_at, "           \
    "'created_at', " d ".created_at)"

/* url: the column, or (what the audit trail records) a parameter holding it redacted */
#define WEBHOOK_JSON_URL(url)                                                                      \
    "json_build_object('id', w.id, 'owner', w.owner, 'url', " url                                  \
    ", 'events', to_json(w.events), "                                                              \
    "'format', w.format, 'description', w.description, 'created_at', w.created_at, "               \
    "'deliveries', (SELECT json_build_object("                                                     \
    "'pending', count(*) FILTER (WHERE d.status = 'pending'), "                                    \
    "'failing', count(*) FILTER (WHERE d.status = 'failing'), "                                    \
    "'delivered', count(*) FILTER (WHERE d.status = 'delivered'), "                                \
    "'failed', count(*) FILTER (WHERE d.status = 'failed')) "                                      \
    "FROM webhook_delivery d WHERE d.webhook_id = w.id), "                                         \
    "'last_delivery', (SELECT json_build_object('id', d.id, 'event', d.event, 'status', "          \
    "d.status, 'attempts', d.attempts, 'last_status', d.last_status, 'last_error', "               \
    "d.last_error, 'last_attempt_at', d.last_attempt_at, 'delivered_at', d.delivered_at) "         \
    "FROM webhook_delivery d WHERE d.webhook_id = w.id "                                           \
    "ORDER BY coalesce(d.last_attempt_at, d.created_at) DESC, d.id DESC LIMIT 1))"
#define WEBHOOK_JSON WEBHOOK_JSON_URL("w.url")

/* The creator must still be an enabled owner or admin; admins' webhooks take every alert,
 * owners' those addressed to them (or to nobody in particular). Bodies come rendered in both
 * formats; each webhook takes its own. */
static const char *SQL_ENQUEUE =
    "WITH q AS (INSERT INTO webhook_delivery (webhook_id, event, alert_id, body) "
    "SELECT w.id, $1, $3::uuid, CASE w.format WHEN 'slack' THEN $5 ELSE $4 END "
    "FROM webhook w JOIN app_user u ON u.id = w.user_id "
    "WHERE $1 = ANY (w.events) AND u.disabled_at IS NULL AND u.role IN ('owner', 'admin') AND "
    "($2::text IS NULL OR w.owner = $2 OR ($6::boolean AND u.role = 'admin')) "
    "ON CONFLICT (webhook_id, event, alert_id) DO NOTHING RETURNING 1) "
    "SELECT to_json(count(*)) FROM q";

static const char *SQL_CREATE =
    "INSERT INTO webhook AS w (user_id, owner, url, events, format, description, secret_sealed) "
    "SELECT $1::uuid, $2, $3, ARRAY(SELECT json_array_elements_text($4::json)), $5, $6, $7 "
    "WHERE (SELECT count(*) FROM webhook x WHERE x.user_id = $1::uuid) < $9::integer "
    "RETURNING " WEBHOOK_JSON_URL("$8::text");

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM (SELECT " WEBHOOK_JSON
    " AS j, w.created_at, w.id FROM webhook w WHERE ($1::text IS NULL OR w.owner = $1) AND "
    "($2::timestamptz IS NULL OR (w.created_at, w.id) > ($2::timestamptz, $3::uuid)) "
    "ORDER BY w.created_at, w.id LIMIT $4::integer) t";

static const char *SQL_GET = "SELECT " WEBHOOK_JSON " FROM webhook w WHERE w.id = $1::uuid AND "
                             "($2::text IS NULL OR w.owner = $2)";

static const char *SQL_DELETE =
    "DELETE FROM webhook w WHERE w.id = $1::uuid AND ($2::text IS NULL OR w.owner = $2) "
    "RETURNING json_build_object('id', w.id, 'owner', w.owner, 'events', to_json(w.events), "
    "'format', w.format)";

/* Bounded per owner: the test messages waiting for all of the creator's webhooks together. */
static const char *SQL_PING =
    "INSERT INTO webhook_delivery AS d (webhook_id, event, body) SELECT $1::uuid, 'ping', $2 "
    "WHERE (SELECT count(*) FROM webhook_delivery x JOIN webhook xw ON xw.id = x.webhook_id "
    "WHERE xw.user_id = (SELECT user_id FROM webhook WHERE id = $1::uuid) AND x.event = 'ping' "
    "AND x.status IN ('pending', 'failing')) < $3::integer RETURNING " DELIVERY_JSON("d");

static const char *SQL_DELIVERIES =
    "SELECT coalesce(json_agg(j ORDER BY created_at DESC, id DESC), '[]') FROM "
    "(SELECT " DELIVERY_JSON("d") " AS j, d.created_at, d.id FROM webhook_delivery d "
                                  "WHERE d.webhook_id = $1::uuid AND ($2::timestamptz IS NULL OR "
                                  "(d.created_at, d.id) < ($2::timestamptz, $3::uuid)) "
                                  "ORDER BY d.created_at DESC, d.id DESC LIMIT $4::integer) t";

/* A claim, under a transaction-level advisory lock (taken by a statement of its own, so this
 * one's snapshot sees every claim committed before it, on any instance): due deliveries whose
 * destination has nothing in flight and no open breaker, and — except for log-integrity alerts
 * — whose owner (the webhook's creator) has nothing in flight either; one per owner and one per
 * destination per claim, log-integrity alerts first, then the longest due; at most $3 other
 * than log-integrity alerts (the deliverer keeps a thread for those). "In flight": leased and
 * the lease not run out. */
static const char *SQL_CLAIM =
    "WITH busy AS (SELECT w.destination, w.user_id FROM webhook_delivery x "
    "  JOIN webhook w ON w.id = x.webhook_id WHERE x.lease IS NOT NULL "
    "  AND x.status IN ('pending', 'failing') AND x.next_attempt_at > now()), "
    "due AS (SELECT d.id, d.next_attempt_at, d.event = 'log_integrity' AS urgent, w.destination, "
    "  w.user_id FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id "
    "  WHERE d.status IN ('pending', 'failing') AND d.next_attempt_at <= now() "
    "  AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.destination = w.destination) "
    "  AND (d.event = 'log_integrity' OR NOT EXISTS (SELECT 1 FROM busy b "
    "    WHERE b.user_id = w.user_id)) "
    "  AND NOT EXISTS (SELECT 1 FROM webhook_destination o WHERE o.destination = w.destination "
    "    AND o.open_until > now())), "
    "per_owner AS (SELECT DISTINCT ON (user_id, urgent) * FROM due "
    "  ORDER BY user_id, urgent, next_attempt_at), "
    "per_dest AS (SELECT DISTINCT ON (destination) * FROM per_owner "
    "  ORDER BY destination, urgent DESC, next_attempt_at), "
    "ranked AS (SELECT id, urgent, next_attempt_at, row_number() OVER (PARTITION BY urgent "
    "  ORDER BY next_attempt_at) AS n FROM per_dest), "
    "pick AS (SELECT id FROM ranked WHERE urgent OR n <= $3::integer "
    "  ORDER BY urgent DESC, next_attempt_at LIMIT $2::integer), "
    "c AS (UPDATE webhook_delivery d SET lease = gen_random_uuid(), attempts = d.attempts + 1, "
    "last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $1::float8) "
    "FROM pick WHERE d.id = pick.id AND d.status IN ('pending', 'failing') "
    "RETURNING d.id, d.lease, d.attempts, d.webhook_id, d.body, d.event) "
    "SELECT coalesce(json_agg(json_build_object('id', c.id, 'lease', c.lease, 'attempts', "
    "c.attempts, 'url', w.url, 'destination', w.destination, 'event', c.event, "
    "'secret_sealed', w.secret_sealed, 'body', c.body)), '[]') "
    "FROM c JOIN webhook w ON w.id = c.webhook_id";

/* The outcome ($3: delivered, failing, failed) when the lease is still the claimer's, and the
 * destination's breaker: $8 counts against it (a timeout, no connection), anything else
 * closes it; it opens for $9 seconds (core: webhook_breaker_open_s of the new count, passed
 * as a JSON array indexed by the count) from WEBHOOK_BREAKER_FAILURES on. */
static const char *SQL_RESULT =
    "WITH r AS (UPDATE webhook_delivery SET lease = NULL, last_status = $4::integer, "
    "last_error = $5, status = CASE WHEN $3 = 'delivered' THEN 'delivered' "
    "WHEN $3 = 'failed' OR attempts >= $7::integer THEN 'failed' ELSE 'failing' END, "
    "delivered_at = CASE WHEN $3 = 'delivered' THEN now() END, "
    "next_attempt_at = now() + make_interval(secs => $6::float8) "
    "WHERE id = $1::uuid AND lease = $2::uuid RETURNING 1), "
    "b AS (INSERT INTO webhook_destination AS o (destination, failures, open_until) "
    "SELECT $10, CASE WHEN $8::boolean THEN 1 ELSE 0 END, NULL FROM r "
    "ON CONFLICT (destination) DO UPDATE SET "
    "failures = CASE WHEN $8::boolean THEN o.failures + 1 ELSE 0 END, "
    "open_until = CASE WHEN $8::boolean AND (($9::jsonb) ->> least(o.failures + 1, "
    "  jsonb_array_length($9::jsonb) - 1))::float8 > 0 THEN now() + make_interval(secs => "
    "  (($9::jsonb) ->> least(o.failures + 1, jsonb_array_length($9::jsonb) - 1))::float8) END, "
    "updated_at = now() RETURNING 1) "
    "SELECT to_json((SELECT count(*) FROM r) + 0 * (SELECT count(*) FROM b))";

enum store_status store_webhook_enqueue_tx(struct store_conn *c, const char *event,
                                           const char *owner, int admins_too, const json_t *alert,
                                           int *queued)
{
    if (queued)
        *queued = 0;
    char *json_body = webhook_body("json", event, alert);
    char *slack_body = webhook_body("slack", event, alert);
    const char *alert_id = json_string_value(json_object_get(alert, "id"));
    enum store_status st = STORE_ERROR;
    if (json_body && slack_body) {
        const char *p[] = {
            event,     owner,      alert_id && uuid_valid(alert_id) ? alert_id : NULL,
            json_body, slack_body, admins_too ? "true" : "false"};
        json_t *n = NULL;
        st = store_json_tx(c, SQL_ENQUEUE, STORE_ARGS(p), &n);
        if (st == STORE_OK && queued)
            *queued = (int)json_integer_value(n);
        json_decref(n);
    }
    free(json_body);
    free(slack_body);
    return st;
}

enum store_status store_webhook_create(struct store *s, const struct audit_actor *who,
                                       const struct webhook_new *w, json_t **out)
{
    /* The audit trail records the URL without its path (a Slack-style URL carries its
     * credential there); the caller gets it whole. */
    char redacted[300];
    webhook_url_redact(w->url, redacted, sizeof redacted);
    char max[16];
    snprintf(max, sizeof max, "%d", WEBHOOKS_PER_USER);
    const char *p[] = {w->user_id,       w->owner,  w->url,
                       w->events_json,   w->format, w->description,
                       w->secret_sealed, redacted,  max};
    enum store_status st =
        store_write_audited(s, who, "webhook.create", SQL_CREATE, STORE_ARGS(p), out);
    if (st == STORE_OK)
        json_object_set_new(*out, "url", json_string(w->url));
    return st;
}

enum store_status store_webhook_list(struct store *s, const char *owner, const char *after_at,
                                     const char *after_id, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {owner, after_at, after_id, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_webhook_get(struct store *s, const char *id, const char *owner,
                                    json_t **out)
{
    const char *p[] = {id, owner};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_webhook_delete(struct store *s, const struct audit_actor *who,
                                       const char *id, const char *owner)
{
    const char *p[] = {id, owner};
    json_t *row = NULL;
    enum store_status st =
        store_write_audited(s, who, "webhook.delete", SQL_DELETE, STORE_ARGS(p), &row);
    json_decref(row);
    return st;
}

/* Pings of one owner queue one at a time: SQL_PING's count, in a statement begun after this
 * lock, sees every ping committed before it (concurrent ones each saw fewer than the bound). */
static enum store_status ping_lock(struct store_conn *c, const json_t *webhook_id,
                                   struct problems *p)
{
    (void)p;
    const char *param[] = {json_string_value(webhook_id)};
    return store_exec_tx(c,
                         "SELECT pg_advisory_xact_lock(hashtext('capledger.webhook_ping'), "
                         "hashtext(user_id::text)) FROM webhook WHERE id = $1::uuid",
                         STORE_ARGS(param), NULL);
}

enum store_status store_webhook_ping(struct store *s, const struct audit_actor *who, const char *id,
                                     const char *body, json_t **out)
{
    char max[16];
    snprintf(max, sizeof max, "%d", WEBHOOK_PINGS_WAITING);
    const char *p[] = {id, body, max};
    json_t *webhook_id = json_string(id);
    struct problems none;
    problems_init(&none);
    struct audit_check lock = {.fn = ping_lock, .doc = webhook_id, .p = &none};
    enum store_status st = webhook_id ? store_write_audited_checked(s, who, "webhook.ping", &lock,
                                                                    SQL_PING, STORE_ARGS(p), out)
                                      : STORE_ERROR;
    problems_free(&none);
    json_decref(webhook_id);
    return st;
}

enum store_status store_webhook_deliveries(struct store *s, const char *webhook_id,
                                           const char *before_at, const char *before_id, int limit,
                                           json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {webhook_id, before_at, before_id, lim};
    return store_json(s, SQL_DELIVERIES, STORE_ARGS(p), out);
}

/* A fixed key for the claims' advisory lock ("webhook" in ASCII). */
#define CLAIM_LOCK "131090826373227"

enum store_status store_webhook_claim(struct store *s, double lease_s, int max, int max_ordinary,
                                      json_t **out)
{
    char lease[32], lim[16], ordinary[16];
    snprintf(lease, sizeof lease, "%.3f", lease_s);
    snprintf(lim, sizeof lim, "%d", max);
    snprintf(ordinary, sizeof ordinary, "%d", max_ordinary);
    const char *p[] = {lease, lim, ordinary};
    const char *lock[] = {CLAIM_LOCK};
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, "SELECT pg_advisory_xact_lock($1::bigint)", STORE_ARGS(lock), NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_CLAIM, STORE_ARGS(p), out);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st != STORE_OK) {
        store_rollback(c);
        json_decref(*out);
        *out = NULL;
    }
    store_release(s, c);
    return st;
}

enum store_status store_webhook_result(struct store *s, const struct webhook_result *res)
{
    char status[16], retry[32], max[16];
    snprintf(status, sizeof status, "%d", res->http_status);
    snprintf(retry, sizeof retry, "%.3f", res->retry_s);
    snprintf(max, sizeof max, "%d", res->max_attempts);
    /* The breaker's open time for each count of failures in a row, from core. */
    char open[512];
    size_t n = 0;
    n += (size_t)snprintf(open + n, sizeof open - n, "[");
    for (int f = 0; f <= WEBHOOK_BREAKER_FAILURES + 8 && n < sizeof open - 32; f++)
        n += (size_t)snprintf(open + n, sizeof open - n, "%s%.0f", f ? "," : "",
                              webhook_breaker_open_s(f));
    snprintf(open + n, sizeof open - n, "]");
    const char *p[] = {res->id,      res->lease,
                       res->verdict, res->http_status ? status : NULL,
                       res->error,   retry,
                       max,          res->breaker_failure ? "true" : "false",
                       open,         res->destination ? res->destination : ""};
    return store_exec(s, SQL_RESULT, STORE_ARGS(p), NULL);
}
