/* Idempotency keys: claim, complete, release. A claim is committed at once (its own
 * statement), so a concurrent request with the same key sees it and is refused instead of
 * doing the work twice. */
#include "store/idempotency.h"

#include <stdio.h>

/* A claim is stale when it is old, or when the database session that made it is gone (the
 * instance holding it died: its sessions ended with it). A session of another role shows no
 * backend_start in pg_stat_activity: then its pid alone counts as alive. */
#define IDEM_STALE_CLAIM                                                                           \
    "i.user_id = $1::uuid AND i.key = $2 AND i.status IS NULL AND (i.created_at < now() - "        \
    "interval '" STORE_IDEM_STALE_CLAIM "' OR (i.claim_pid IS NOT NULL AND NOT EXISTS (SELECT 1 "  \
    "FROM pg_stat_activity a WHERE a.pid = i.claim_pid AND (a.backend_start IS NULL OR "           \
    "a.backend_start = i.claim_backend_start))))"

/* A stale claim whose request committed its write (an audit_event carrying the claim's nonce,
 * written in the write's transaction, is there) but never stored its reply: the key answers
 * "reply lost" from now on (0112_idempotency_lost_reply.sql) instead of letting a retry write
 * again. $3: false for a route whose handler recognises a retry of its own write. */
static const char *SQL_MARK_LOST =
    "UPDATE idempotency i SET status = 409, reply_lost = true, response = (SELECT "
    "json_build_object('action', e.action, 'target_id', e.target_id)::text FROM audit_event e "
    "WHERE e.idem_claim = i.claim_nonce ORDER BY e.id LIMIT 1) WHERE $3::boolean "
    "AND " IDEM_STALE_CLAIM " AND EXISTS (SELECT 1 FROM audit_event e WHERE e.idem_claim = "
    "i.claim_nonce)";

static const char *SQL_FORGET_EXPIRED =
    "DELETE FROM idempotency i WHERE (i.user_id = $1::uuid AND i.key = $2 AND i.created_at < "
    "now() - interval '" STORE_IDEM_TTL "') OR (" IDEM_STALE_CLAIM ")";

/* When the INSERT meets a row that a concurrent transaction committed after this statement's
 * snapshot, neither the insert nor the select sees it: claimed false with existing null, which
 * the caller treats as "in progress". */
static const char *SQL_CLAIM =
    "WITH ins AS (INSERT INTO idempotency (user_id, key, route, claim_pid, claim_backend_start, "
    "claim_nonce, body_sha256) SELECT $1::uuid, $2, $3, pg_backend_pid(), (SELECT backend_start "
    "FROM pg_stat_activity WHERE pid = pg_backend_pid()), $4, $5 ON CONFLICT DO NOTHING "
    "RETURNING 1) "
    "SELECT json_build_object('claimed', EXISTS (SELECT 1 FROM ins), 'existing', "
    "(SELECT json_build_object('route', route, 'body_sha256', body_sha256, 'status', status, "
    "'response', response, 'reply_lost', reply_lost) FROM idempotency WHERE user_id = $1::uuid "
    "AND key = $2))";

static const char *SQL_COMPLETE =
    "UPDATE idempotency SET body_sha256 = $3, status = $4::integer, response = $5 "
    "WHERE user_id = $1::uuid AND key = $2 AND status IS NULL";

static const char *SQL_RELEASE =
    "DELETE FROM idempotency WHERE user_id = $1::uuid AND key = $2 AND status IS NULL";

enum store_status store_idem_claim(struct store *s, const struct idem_claim *c, json_t **out)
{
    const char *lost[] = {c->user_id, c->key, c->own_retries ? "false" : "true"};
    enum store_status st = store_exec(s, SQL_MARK_LOST, 3, lost, NULL);
    if (st == STORE_OK)
        st = store_exec(s, SQL_FORGET_EXPIRED, 2, lost, NULL);
    if (st != STORE_OK)
        return st;
    const char *p[] = {c->user_id, c->key, c->route, c->nonce, c->body_sha256};
    return store_json(s, SQL_CLAIM, 5, p, out);
}

enum store_status store_idem_complete(struct store *s, const char *user_id, const char *key,
                                      const char *body_sha256, int status, const char *response)
{
    char status_text[16];
    snprintf(status_text, sizeof status_text, "%d", status);
    const char *p[] = {user_id, key, body_sha256, status_text, response};
    return store_exec(s, SQL_COMPLETE, 5, p, NULL);
}

enum store_status store_idem_release(struct store *s, const char *user_id, const char *key)
{
    const char *p[] = {user_id, key};
    return store_exec(s, SQL_RELEASE, 2, p, NULL);
}
