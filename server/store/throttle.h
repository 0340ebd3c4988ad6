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

/* *retry_after_s: 0 when neither key is locked, else the seconds until both locks end. */
enum store_status store_login_throttle_check(struct store *s, const char *account_sha256,
                                             const char *address_sha256,
                                             long *retry_after_s) STORE_MUSTCHECK;
/* Counts a failure against both keys; locks a key that reaches its limit for window_s. */
enum store_status store_login_throttle_failed(struct store *s,
                                              const struct login_throttle_policy *policy,
                                              const char *account_sha256,
                                              const char *address_sha256) STORE_MUSTCHECK;
/* A successful sign-in clears the account's counter (the address keeps its own). */
enum store_status store_login_throttle_succeeded(struct store *s,
                                                 const char *account_sha256) STORE_MUSTCHECK;
/* Deletes counters whose window and lock are long over. */
enum store_status
store_login_throttle_purge(struct store *s,
                           const struct login_throttle_policy *policy) STORE_MUSTCHECK;

#endif
