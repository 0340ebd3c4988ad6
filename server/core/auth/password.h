/* Password rules, applied before hashing. Bounded at both ends: argon2id cost does not depend
 * on length, but an unbounded body would still be read and copied. */
#ifndef CAPLEDGER_CORE_PASSWORD_H
#define CAPLEDGER_CORE_PASSWORD_H

#include <stddef.h>

#define PASSWORD_MIN_CHARS 12
#define PASSWORD_MAX_BYTES 1024

/* NULL when acceptable, else the rule broken (a static sentence for the 422). */
const char *password_rule_broken(const char *password, size_t len, const char *username);

/* Hashing and checking: argon2id strings from libsodium at the interactive limits (~64 MiB and
 * ~0.1 s per call here), so callers bound how many run at once. */
#define PASSWORD_HASH_BYTES 128 /* crypto_pwhash_STRBYTES, with the NUL */

/* Hashes password into out. Returns 0, or -1 when memory runs out. */
int password_hash(const char *password, size_t len, char out[PASSWORD_HASH_BYTES])
    __attribute__((warn_unused_result));

enum password_check {
    PASSWORD_WRONG = 0,     /* mismatch, or a stored hash this library cannot read */
    PASSWORD_OK = 1,        /* matches, and the hash uses the current parameters */
    PASSWORD_OK_REHASH = 2, /* matches, but was hashed with other parameters: rehash it */
};
/* Checks password against a stored hash; stored NULL burns the same time against a fixed
 * dummy hash and answers PASSWORD_WRONG, so unknown users cannot be told apart by timing. */
enum password_check password_verify(const char *stored, const char *password, size_t len)
    __attribute__((warn_unused_result));

#endif
