#include "core/password.h"

#include <string.h>
#include <strings.h>

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
    if (username && *username && strlen(username) == len && strncasecmp(password, username, len) == 0)
        return "must not be the username";
    return NULL;
}
