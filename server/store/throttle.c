/* Sign-in throttling. */
#include "store/throttle.h"

#include <stdio.h>

static const char *SQL_CHECK =
    "SELECT json_build_object('retry_after_s', "
    "  ceil(extract(epoch FROM max(locked_until) - now()))::bigint) "
    "FROM login_throttle WHERE locked_until > now() AND "
    "  ((scope = 'account' AND key_sha256 = $1) OR (scope = 'address' AND key_sha256 = $2)) "
    "HAVING max(locked_until) IS NOT NULL";

/* A failure outside the current window starts a new one. Reaching the limit sets the lock;
 * the counter keeps counting so a locked key stays visible in the table. */
static const char *SQL_FAILED =
    "WITH w AS (SELECT make_interval(secs => $5::int) AS len) "
    "INSERT INTO login_throttle AS t (scope, key_sha256, failures, window_start, locked_until) "
    "SELECT v.scope, v.key, 1, now(), "
    "  CASE WHEN v.max_failures <= 1 THEN now() + w.len END "
    "FROM w, (VALUES ('account', $1, $3::int), ('address', $2, $4::int)) "
    "  AS v(scope, key, max_failures) "
    "ON CONFLICT (scope, key_sha256) DO UPDATE SET "
    "  failures = CASE WHEN t.window_start < now() - make_interval(secs => $5::int) THEN 1 "
    "    ELSE t.failures + 1 END, "
    "  window_start = CASE WHEN t.window_start < now() - make_interval(secs => $5::int) "
    "    THEN now() ELSE t.window_start END, "
    "  locked_until = CASE WHEN t.window_start >= now() - make_interval(secs => $5::int) "
    "    AND t.failures + 1 >= (CASE t.scope WHEN 'account' THEN $3::int ELSE $4::int END) "
    "    THEN now() + make_interval(secs => $5::int) ELSE t.locked_until END";

static const char *SQL_SUCCEEDED =
    "DELETE FROM login_throttle WHERE scope = 'account' AND key_sha256 = $1";

static const char *SQL_PURGE =
    "DELETE FROM login_throttle WHERE window_start < now() - make_interval(secs => $1::int) "
    "AND (locked_until IS NULL OR locked_until < now())";

enum store_status store_login_throttle_check(struct store *s, const char *account_sha256,
                                             const char *address_sha256, long *retry_after_s)
{
    const char *p[] = {account_sha256, address_sha256};
    json_t *row = NULL;
    enum store_status st = store_json1(s, SQL_CHECK, 2, p, &row);
    *retry_after_s = 0;
    if (st == STORE_OK) {
        json_int_t v = json_integer_value(json_object_get(row, "retry_after_s"));
        *retry_after_s = v > 0 ? (long)v : 1;
    }
    json_decref(row);
    return st == STORE_NOT_FOUND ? STORE_OK : st;
}

enum store_status store_login_throttle_failed(struct store *s,
                                              const struct login_throttle_policy *policy,
                                              const char *account_sha256,
                                              const char *address_sha256)
{
    char acc[16], addr[16], win[16];
    snprintf(acc, sizeof acc, "%d", policy->account_failures);
    snprintf(addr, sizeof addr, "%d", policy->address_failures);
    snprintf(win, sizeof win, "%d", policy->window_s);
    const char *p[] = {account_sha256, address_sha256, acc, addr, win};
    return store_exec1(s, SQL_FAILED, 5, p, NULL);
}

enum store_status store_login_throttle_succeeded(struct store *s, const char *account_sha256)
{
    const char *p[] = {account_sha256};
    return store_exec1(s, SQL_SUCCEEDED, 1, p, NULL);
}

enum store_status store_login_throttle_purge(struct store *s,
                                             const struct login_throttle_policy *policy)
{
    char win[16];
    snprintf(win, sizeof win, "%d", policy->window_s);
    const char *p[] = {win};
    return store_exec1(s, SQL_PURGE, 1, p, NULL);
}
