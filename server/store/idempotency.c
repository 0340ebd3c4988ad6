/* Idempotency keys: claim, complete, release (0010, 0080, 0112).
 *
 * Exactly one write per key, whatever instance dies when: a write made under a claim holds the
 * claim's row (FOR SHARE) from its audit row to its commit, and commits only while the claim is
 * still its own and pending (store/audit.c). Whoever settles a claim — a retry taking over a
 * stale one, the request itself at its end — first locks the row (FOR UPDATE) and only then
 * looks for a write made under it: a write that committed is seen (the key becomes "reply
 * lost"); one still running waits for the settling, then finds its claim gone and fails. */
#include "store/idempotency.h"

#include <stdio.h>
#include <string.h>

/* A claim is stale when it is old, or when the database session that made it is gone (the
 * instance holding it died: its sessions ended with it). A session of another role shows no
 * backend_start in pg_stat_activity: then its pid alone counts as alive. Either way a write
 * still running under it cannot commit once the claim is settled (above). */
#define IDEM_STALE_CLAIM                                                                           \
    "i.user_id = $1::uuid AND i.key = $2 AND i.status IS NULL AND (i.created_at < now() - "        \
    "interval '" STORE_IDEM_STALE_CLAIM "' OR (i.claim_pid IS NOT NULL AND NOT EXISTS (SELECT 1 "  \
    "FROM pg_stat_activity a WHERE a.pid = i.claim_pid AND (a.backend_start IS NULL OR "           \
    "a.backend_start = i.claim_backend_start))))"

/* A write made under the claim committed (its audit_event carries the claim's nonce). */
#define IDEM_WRITTEN "EXISTS (SELECT 1 FROM audit_event e WHERE e.idem_claim = i.claim_nonce)"

/* The key's row, locked for the settling (lock_timeout: a write holding it ends in moments). */
static const char *SQL_LOCK_TIMEOUT = "SET LOCAL lock_timeout = '5s'";
static const char *SQL_LOCK_KEY =
    "SELECT 1 FROM idempotency WHERE user_id = $1::uuid AND key = $2 FOR UPDATE";

/* The claim's write committed but its reply was never kept: the key answers "reply lost" from
 * now on instead of letting a retry write again. */
#define IDEM_MARK_LOST                                                                             \
    "UPDATE idempotency i SET status = 409, reply_lost = true, response = (SELECT "                \
    "json_build_object('action', e.action, 'target_id', e.target_id)::text FROM audit_event e "    \
    "WHERE e.idem_claim = i.claim_nonce ORDER BY e.id LIMIT 1) WHERE " IDEM_WRITTEN

/* A retry on route $3: a stale claim of the key whose write committed → lost, unless its route
 * answers retries of its own writes and this retry is on that route (decisions: the handler
 * finds the same signed record); any other stale claim, and an expired row, are forgotten. */
static const char *SQL_MARK_LOST_STALE =
    IDEM_MARK_LOST " AND (NOT i.own_retries OR i.route <> $3) AND " IDEM_STALE_CLAIM;
static const char *SQL_FORGET_STALE =
    "DELETE FROM idempotency i WHERE (i.user_id = $1::uuid AND i.key = $2 AND i.created_at < "
    "now() - interval '" STORE_IDEM_TTL "') OR (" IDEM_STALE_CLAIM ")";

/* The request that holds the claim ($3: its nonce) ends without a kept reply. */
static const char *SQL_MARK_LOST_OWN = IDEM_MARK_LOST
    " AND NOT i.own_retries AND i.user_id = $1::uuid AND i.key = $2 AND i.claim_nonce = $3 AND "
    "i.status IS NULL";
static const char *SQL_FORGET_OWN =
    "DELETE FROM idempotency i WHERE i.user_id = $1::uuid AND i.key = $2 AND i.claim_nonce = $3 "
    "AND i.status IS NULL";

/* When the INSERT meets a row that a concurrent transaction committed after this statement's
 * snapshot, neither the insert nor the select sees it: claimed false with existing null, which
 * the caller treats as "in progress". */
static const char *SQL_CLAIM =
    "WITH ins AS (INSERT INTO idempotency (user_id, key, route, claim_pid, claim_backend_start, "
    "claim_nonce, body_sha256, own_retries) SELECT $1::uuid, $2, $3, pg_backend_pid(), (SELECT "
    "backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()), $4, $5, $6::boolean ON "
    "CONFLICT DO NOTHING RETURNING 1) "
    "SELECT json_build_object('claimed', EXISTS (SELECT 1 FROM ins), 'existing', "
    "(SELECT json_build_object('route', route, 'body_sha256', body_sha256, 'status', status, "
    "'response', response, 'reply_lost', reply_lost) FROM idempotency WHERE user_id = $1::uuid "
    "AND key = $2))";

static const char *SQL_COMPLETE =
    "UPDATE idempotency SET body_sha256 = $3, status = $4::integer, response = $5 "
    "WHERE user_id = $1::uuid AND key = $2 AND claim_nonce = $6 AND status IS NULL";

/* One statement of a settling: its SQL and parameters. */
struct step {
    const char *sql;
    int nparams;
    const char *const *params;
};

/* Runs the steps in one transaction, after locking the key's row: every statement after the
 * lock sees what committed before it (READ COMMITTED). The last step's JSON into *out when out
 * is given. */
static enum store_status settle(struct store *s, const char *user_id, const char *key,
                                const struct step *steps, size_t n, json_t **out)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    const char *lock[] = {user_id, key};
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_LOCK_TIMEOUT, 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_LOCK_KEY, STORE_ARGS(lock), NULL);
    for (size_t i = 0; i < n && st == STORE_OK; i++)
        st = i + 1 == n && out
                 ? store_json_tx(c, steps[i].sql, steps[i].nparams, steps[i].params, out)
                 : store_exec_tx(c, steps[i].sql, steps[i].nparams, steps[i].params, NULL);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st == STORE_ERROR && strcmp(store_last_sqlstate(c), "55P03") == 0)
        st = STORE_UNAVAILABLE; /* lock_timeout: a write held the row that long; retry */
    if (st != STORE_OK) {
        store_rollback(c);
        if (out) {
            json_decref(*out);
            *out = NULL;
        }
    }
    store_release(s, c);
    return st;
}

enum store_status store_idem_claim(struct store *s, const struct idem_claim *c, json_t **out)
{
    *out = NULL;
    const char *stale[] = {c->user_id, c->key, c->route};
    const char *claim[] = {c->user_id, c->key,         c->route,
                           c->nonce,   c->body_sha256, c->own_retries ? "true" : "false"};
    const struct step steps[] = {
        {SQL_MARK_LOST_STALE, 3, stale}, {SQL_FORGET_STALE, 2, stale}, {SQL_CLAIM, 6, claim}};
    return settle(s, c->user_id, c->key, steps, 3, out);
}

enum store_status store_idem_complete(struct store *s, const char *user_id, const char *key,
                                      const char *nonce, const char *body_sha256, int status,
                                      const char *response)
{
    char status_text[16];
    snprintf(status_text, sizeof status_text, "%d", status);
    const char *p[] = {user_id, key, body_sha256, status_text, response, nonce};
    long n = 0;
    enum store_status st = store_exec(s, SQL_COMPLETE, STORE_ARGS(p), &n);
    return st == STORE_OK && n == 0 ? STORE_CONFLICT : st; /* the claim is no longer its own */
}

enum store_status store_idem_release(struct store *s, const char *user_id, const char *key,
                                     const char *nonce)
{
    const char *own[] = {user_id, key, nonce};
    const struct step steps[] = {{SQL_MARK_LOST_OWN, 3, own}, {SQL_FORGET_OWN, 3, own}};
    return settle(s, user_id, key, steps, 2, NULL);
}
