#include "core/auth/password.h"

#include <sodium.h>
#include <string.h>
#include <strings.h>

_Static_assert(PASSWORD_HASH_BYTES == crypto_pwhash_STRBYTES, "argon2 string size");

/* An argon2id hash at the interactive limits of a random password nobody kept: verifying
 * against it costs what a real verify costs. */
static const char DUMMY_HASH[PASSWORD_HASH_BYTES] =
    "$argon2id$v=19$m=65536,t=2,p=1$sauLyPtP+3ZCneEbjsLD7A$ItfctzhRSQ8vKSGML+VbFXwt/Uboz5buuUG8/"
    "BgKp/I";

const char *password_rule_broken(const char *password, size_t len, const char *username)
{
    if (len > PASSWORD_MAX_BYTES)
        return "must be at most 1024 bytes";
    if (memchr(password, '\0', len))
        return "must not contain NUL characters";
    size_t chars = 0; /* UTF-8 code points: count bytes that do not continue a sequence */
    for (size_t i = 0; i < len; i++)
        chars += ((unsigned char)password[i] & 0xC0) != 0x80;
    if (chars < PASSWORD_MIN_CHARS)
        return "must be at least 12 characters";
    size_t distinct = 0;
    unsigned char seen[256] = {0};
    for (size_t i = 0; i < len; i++)
        if (!seen[(unsigned char)password[i]]++)
            distinct++;
    if (distinct < 5)
        return "must use at least 5 different characters";
    if (username && *username && strlen(username) == len &&
        strncasecmp(password, username, len) == 0)
        return "must not be the username";
    return NULL;
}

int password_hash(const char *password, size_t len, char out[PASSWORD_HASH_BYTES])
{
    return crypto_pwhash_str_alg(out, password, len, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                 crypto_pwhash_MEMLIMIT_INTERACTIVE,
                                 crypto_pwhash_ALG_ARGON2ID13) == 0
               ? 0
               : -1;
}

enum password_check password_verify(const char *stored, const char *password, size_t len)
{
    if (!stored) {
        /* The result is thrown away: only the time spent matters. */
        int ignored = crypto_pwhash_str_verify(DUMMY_HASH, password, len);
        (void)ignored;
        return PASSWORD_WRONG;
    }
    if (crypto_pwhash_str_verify(stored, password, len) != 0)
        return PASSWORD_WRONG;
    int rehash = crypto_pwhash_str_needs_rehash(stored, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                                crypto_pwhash_MEMLIMIT_INTERACTIVE);
    return rehash == 0 ? PASSWORD_OK : PASSWORD_OK_REHASH;
}
