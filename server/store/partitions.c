/* Time partitions: the work is capledger_partitions_maintain (in SQL, next to the tables it
 * changes). It runs in its own transaction with a short lock timeout, so it never queues the
 * API behind it for long: when a lock is not had in time, it gives up and the next run
 * (an hour later) tries again. */
#include "store/partitions.h"

#include <stdio.h>

static const char *SQL_MAINTAIN =
    "SELECT capledger_partitions_maintain($1::integer, $2::integer)::json";

enum store_status store_partitions_maintain(struct store *s, int ahead, int retention_months,
                                            json_t **out, char *why, size_t why_size)
{
    *out = NULL;
    if (why_size)
        why[0] = '\0';
    char a[16], r[16];
    snprintf(a, sizeof a, "%d", ahead);
    snprintf(r, sizeof r, "%d", retention_months);
    const char *p[] = {a, r};
    struct store_conn *c = store_acquire(s, 5000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, "SET LOCAL lock_timeout = '5s'", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_MAINTAIN, STORE_ARGS(p), out);
    if (st == STORE_OK)
        st = store_commit(c);
    if (st != STORE_OK) {
        snprintf(why, why_size, "%s %s", store_last_sqlstate(c), store_last_error(c));
        store_rollback(c);
        json_decref(*out);
        *out = NULL;
    }
    store_release(s, c);
    return st;
}
