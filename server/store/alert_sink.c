/* Log-integrity alerts: the sink the log (store/ledger/) and the witness collector
 * (http/cosign.c) report to. Apart from the drift sweep (alerts.c), which reads the log: the
 * log depends on this file, never on the sweep. */
#include "store/alerts.h"

#include <stdio.h>

#include "store/alert_row.h"
#include "store/webhooks.h"

/* One alert per enabled owner and admin; the same evidence again raises nothing new. Returns
 * the new alerts, for their webhooks. */
static const char *SQL_RAISE_LOG_INTEGRITY =
    "WITH n AS (INSERT INTO alert AS a (kind, owner, message, evidence) "
    "SELECT 'log_integrity', u.username, $1, "
    "'[]'::jsonb FROM app_user u WHERE u.role IN ('owner', 'admin') AND u.disabled_at IS NULL "
    "ON CONFLICT (owner, md5(message)) WHERE kind = 'log_integrity' DO NOTHING "
    "RETURNING " ALERT_JSON " AS j) SELECT coalesce(json_agg(j), '[]') FROM n";

enum store_status store_alert_log_integrity(struct store *s, const char *evidence)
{
    char message[1024];
    snprintf(message, sizeof message,
             "The decision log is inconsistent and capledger stopped appending to it: %s. "
             "Compare the latest checkpoint auditors or witnesses hold with the database before "
             "anything else.",
             evidence);
    return store_alert_log_integrity_message(s, message);
}

enum store_status store_alert_log_integrity_message(struct store *s, const char *message)
{
    const char *p[] = {message};
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *rows = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_RAISE_LOG_INTEGRITY, STORE_ARGS(p), &rows);
    /* each owner's and admin's own alert goes to their own webhooks, in this transaction */
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (st != STORE_OK)
            break;
        st = store_webhook_enqueue_tx(
            c, "log_integrity", json_string_value(json_object_get(row, "owner")), 0, row, NULL);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    else
        store_rollback(c);
    store_release(s, c);
    json_decref(rows);
    return st;
}
