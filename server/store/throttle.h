/* Sign-in throttling, per account and per client address, in PostgreSQL so that it holds
 * across server instances. Keys are SHA-256 hex (see 0004_login_throttle.sql). */
#ifndef CAPLEDGER_STORE_THROTTLE_H
#define CAPLEDGER_STORE_THROTTLE_H

#include "store/store.h"

struct login_throttle_policy {
    int account_failures; /* failures within window_s that lock an account */
    int address_failures; /* failures within window_s that lock a client address */
    int window_s;         /* counting window, and how long a lock lasts */
};

/* Counts this attempt against both keys before any password is checked: one statement takes
 * both row locks, so N attempts sent at once count as N and only the first `limit` of them
 * may go on. *retry_after_s: 0 when the attempt may go on (check the password), else the
 * seconds until the keys' locks end (answer 429). A key that reaches its limit is locked for
 * window_s. */
enum store_status store_login_throttle_reserve(struct store *s,
                                               const struct login_throttle_policy *policy,
                                               const char *account_sha256,
                                               const char *address_sha256,
                                               long *retry_after_s) STORE_MUSTCHECK;
/* The attempt was not a failure. signed_in: the account's counter is cleared; else (the
 * password was never checked, e.g. the hashing gate was full) the account's reservation is
 * given back. The address's reservation is given back either way. */
enum store_status store_login_throttle_release(struct store *s,
                                               const struct login_throttle_policy *policy,
                                               const char *account_sha256,
                                               const char *address_sha256,
                                               int signed_in) STORE_MUSTCHECK;
/* Deletes counters whose window and lock are long over. */
enum store_status
store_login_throttle_purge(struct store *s,
                           const struct login_throttle_policy *policy) STORE_MUSTCHECK;

#endif
