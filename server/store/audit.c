#include "store/audit.h"

#include <stdio.h>
#include <stdlib.h>

static const char *SQL_INSERT =
    "INSERT INTO audit_event (actor_user, actor_name, actor_token, request_id, action, "
    "target_id, change, idem_claim) SELECT $1::uuid, $2, $3::uuid, $4, $5, $6, $7::jsonb, $8 "
    /* a write under an Idempotency-Key claim holds the claim (store/idempotency.c) to its
     * commit, and is refused when a retry settled the claim meanwhile */
    "WHERE $8::text IS NULL OR EXISTS (SELECT 1 FROM idempotency i WHERE i.claim_nonce = $8 AND "
    "i.status IS NULL FOR SHARE)";

/* The actor still stands when its write commits. An instance reuses a resolved token for up to
 * CAPLEDGER_TOKEN_CACHE_MS, so a disabled user's (or a revoked token's) request may pass
 * authentication there after the disable; its write is refused here, in its transaction, so
 * nothing it does (a token for someone else, a new admin, a password) outlives the disable.
 * FOR SHARE waits for a disable or revocation committing meanwhile, then sees it. A token may
 * revoke itself: a revocation stamped now() is this transaction's own. */
static const char *SQL_ACTOR =
    "SELECT 1 FROM app_user u WHERE u.id = $1::uuid AND u.disabled_at IS NULL AND "
    "($2::uuid IS NULL OR EXISTS (SELECT 1 FROM api_token t WHERE t.id = $2::uuid AND "
    "t.user_id = u.id AND (t.revoked_at IS NULL OR t.revoked_at = now()) FOR SHARE)) "
    "FOR SHARE OF u";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(json_build_object('id', id::text, 'at', at, 'actor', "
    "json_build_object('user_id', actor_user, 'name', actor_name, 'token_id', actor_token), "
    "'request_id', request_id, 'action', action, 'target_id', target_id, 'change', change) "
    "ORDER BY id DESC), '[]') FROM (SELECT * FROM audit_event "
    "WHERE $1::bigint IS NULL OR id < $1::bigint ORDER BY id DESC LIMIT $2) e";

static int params_of(const struct audit_actor *who, const char *action, const char *target_id,
                     const json_t *change, const char *p[8], char **change_text)
{
    *change_text = change ? json_dumps(change, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    p[0] = who->user_id && *who->user_id ? who->user_id : NULL;
    p[1] = who->name && *who->name ? who->name : "system";
    p[2] = who->token_id && *who->token_id ? who->token_id : NULL;
    p[3] = who->request_id ? who->request_id : "";
    p[4] = action;
    p[5] = target_id;
    p[6] = *change_text ? *change_text : "{}";
    p[7] = who->idem_claim;
    return 8;
}

enum store_status store_audit_record_tx(struct store_conn *c, const struct audit_actor *who,
                                        const char *action, const char *target_id,
                                        const json_t *change)
{
    const char *p[8];
    char *text;
    int n = params_of(who, action, target_id, change, p, &text);
    long added = 0;
    enum store_status st = STORE_OK;
    if (p[0]) {
        const char *actor[] = {p[0], p[2]};
        long standing = 0;
        st = store_exec_tx(c, SQL_ACTOR, STORE_ARGS(actor), &standing);
        if (st == STORE_OK && standing == 0)
            st = STORE_ACTOR_GONE;
    }
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_INSERT, n, p, &added);
    free(text);
    if (st == STORE_OK && added == 0) {
        /* a retry through another instance settled this request's claim: its write must not
         * commit (the retry has done it, or will); the client's own retry gets that answer */
        fprintf(stderr,
                "{\"level\":\"warn\",\"msg\":\"write refused: its Idempotency-Key claim was "
                "settled by a retry\",\"request_id\":\"%s\"}\n",
                who->request_id ? who->request_id : "");
        st = STORE_UNAVAILABLE;
    }
    return st;
}

enum store_status store_audit_list(struct store *s, const char *before_id, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {before_id, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_write_audited_checked(struct store *s, const struct audit_actor *who,
                                              const char *action, const struct audit_check *check,
                                              const char *sql, int nparams,
                                              const char *const *params, json_t **out)
{
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *row = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK && check && check->fn) {
        size_t before = check->p->total;
        st = check->fn(c, check->doc, check->p);
        if (st == STORE_OK && check->p->total > before)
            st = STORE_INVALID;
    }
    if (st == STORE_OK)
        st = store_json_tx(c, sql, nparams, params, &row);
    if (st == STORE_OK && check && check->then)
        st = check->then(c, row, check->ctx);
    if (st == STORE_OK) {
        const char *target = json_string_value(json_object_get(row, "id"));
        if (!target) /* content-addressed records (comparisons) are named by their hash */
            target = json_string_value(json_object_get(row, "sha256"));
        st = store_audit_record_tx(c, who, action, target, row);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    if (st != STORE_OK) {
        store_rollback(c);
        json_decref(row);
        row = NULL;
    }
    store_release(s, c);
    *out = row;
    return st;
}

enum store_status store_write_audited(struct store *s, const struct audit_actor *who,
                                      const char *action, const char *sql, int nparams,
                                      const char *const *params, json_t **out)
{
    return store_write_audited_checked(s, who, action, NULL, sql, nparams, params, out);
}
