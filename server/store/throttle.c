/* Sign-in throttling. */
#include "store/throttle.h"

#include <stdio.h>

/* $1 account key, $2 address key, $3 account limit, $4 address limit, $5 window (s).
 * A counter whose window is over and which is not locked starts again at 1. An attempt that
 * brings a counter to its limit locks the key; one beyond the limit is refused. Both rows are
 * locked in one statement, account first, so concurrent attempts serialize per key. */
static const char *SQL_RESERVE =
    "WITH up AS ("
    " INSERT INTO login_throttle AS t (scope, key_sha256, failures, window_start, locked_until)"
    " SELECT v.scope, v.key, 1, now(),"
    "   CASE WHEN v.lim <= 1 THEN now() + make_interval(secs => $5::int) END"
    " FROM (VALUES ('account', $1, $3::int), ('address', $2, $4::int)) AS v(scope, key, lim)"
    " ON CONFLICT (scope, key_sha256) DO UPDATE SET"
    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $5::int)"
    "    AND coalesce(t.locked_until <= now(), true) THEN 1 ELSE t.failures + 1 END,"
    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $5::int)"
    "    AND coalesce(t.locked_until <= now(), true) THEN now() ELSE t.window_start END,"
    "  locked_until = CASE"
    "    WHEN t.window_start < now() - make_interval(secs => $5::int)"
    "      AND coalesce(t.locked_until <= now(), true)"
    "      THEN CASE WHEN (CASE t.scope WHEN 'account' THEN $3::int ELSE $4::int END) <= 1"
    "        THEN now() + make_interval(secs => $5::int) END"
    "    WHEN t.failures + 1 >= (CASE t.scope WHEN 'account' THEN $3::int ELSE $4::int END)"
    "      THEN greatest(t.locked_until, now() + make_interval(secs => $5::int))"
    "    ELSE t.locked_until END"
    " RETURNING t.scope, t.failures, t.locked_until)"
    "SELECT json_build_object('retry_after_s', coalesce(ceil(extract(epoch FROM"
    "  max(locked_until) FILTER (WHERE failures > CASE scope WHEN 'account' THEN $3::int"
    "    ELSE $4::int END) - now()))::bigint, 0)) FROM up";

/* Gives a reservation back: the counter goes down by one (the row goes when it reaches 0), and
 * a lock this reservation set is lifted. With $4 = 'signed-in' the account's row is deleted. */
static const char *SQL_RELEASE =
    "WITH gone AS (DELETE FROM login_throttle WHERE $4 = 'signed-in' AND scope = 'account'"
    "   AND key_sha256 = $1 RETURNING 1),"
    " down AS (UPDATE login_throttle AS t SET failures = t.failures - 1,"
    "   locked_until = CASE WHEN t.failures - 1 < (CASE t.scope WHEN 'account' THEN $3::int"
    "     ELSE $5::int END) THEN NULL ELSE t.locked_until END"
    "   WHERE t.failures > 1 AND ((t.scope = 'address' AND t.key_sha256 = $2)"
    "     OR ($4 <> 'signed-in' AND t.scope = 'account' AND t.key_sha256 = $1)) RETURNING 1)"
    "DELETE FROM login_throttle WHERE failures = 1 AND ((scope = 'address' AND key_sha256 = $2)"
    "  OR ($4 <> 'signed-in' AND scope = 'account' AND key_sha256 = $1))";

static const char *SQL_PURGE =
    "DELETE FROM login_throttle WHERE window_start < now() - make_interval(secs => $1::int) "
    "AND (locked_until IS NULL OR locked_until < now())";

enum store_status store_login_throttle_reserve(struct store *s,
                                               const struct login_throttle_policy *policy,
                                               const char *account_sha256,
                                               const char *address_sha256, long *retry_after_s)
{
    char acc[16], addr[16], win[16];
    snprintf(acc, sizeof acc, "%d", policy->account_failures);
    snprintf(addr, sizeof addr, "%d", policy->address_failures);
    snprintf(win, sizeof win, "%d", policy->window_s);
    const char *p[] = {account_sha256, address_sha256, acc, addr, win};
    json_t *row = NULL;
    enum store_status st = store_json(s, SQL_RESERVE, STORE_ARGS(p), &row);
    *retry_after_s = 0;
    if (st == STORE_OK) {
        json_int_t v = json_integer_value(json_object_get(row, "retry_after_s"));
        *retry_after_s = v > 0 ? (long)v : 0;
    }
    json_decref(row);
    return st;
}

enum store_status store_login_throttle_release(struct store *s,
                                               const struct login_throttle_policy *policy,
                                               const char *account_sha256,
                                               const char *address_sha256, int signed_in)
{
    char acc[16], addr[16];
    snprintf(acc, sizeof acc, "%d", policy->account_failures);
    snprintf(addr, sizeof addr, "%d", policy->address_failures);
    const char *p[] = {account_sha256, address_sha256, acc, signed_in ? "signed-in" : "unused",
                       addr};
    return store_exec(s, SQL_RELEASE, STORE_ARGS(p), NULL);
}

enum store_status store_login_throttle_purge(struct store *s,
                                             const struct login_throttle_policy *policy)
{
    char win[16];
    snprintf(win, sizeof win, "%d", policy->window_s);
    const char *p[] = {win};
    return store_exec(s, SQL_PURGE, STORE_ARGS(p), NULL);
}
