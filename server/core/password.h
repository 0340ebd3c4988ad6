/* Password rules, applied before hashing. Bounded at both ends: argon2id cost does not depend
 * on length, but an unbounded body would still be read and copied. */
#ifndef CAPLEDGER_CORE_PASSWORD_H
#define CAPLEDGER_CORE_PASSWORD_H

#include <stddef.h>

#define PASSWORD_MIN_CHARS 12
#define PASSWORD_MAX_BYTES 1024

/* NULL when acceptable, else the rule broken (a static sentence for the 422). */
const char *password_rule_broken(const char *password, size_t len, const char *username);

#endif
