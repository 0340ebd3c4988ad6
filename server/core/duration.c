#include "core/duration.h"

#include <string.h>

bool duration_parse_ms(const char *s, int64_t *ms)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    int64_t total = 0;
    if (!s || !*s)
        return false;
    while (*s) {
        int64_t n = 0;
        const char *start = s;
        while (*s >= '0' && *s <= '9') {
            n = n * 10 + (*s - '0');
            if (n > DURATION_MAX_MS)
                return false;
            s++;
        }
        if (s == start)
            return false;
        int64_t unit = 0;
        size_t len = 0;
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            size_t l = strlen(units[u].name);
            /* "ms" before "m": the longest name that matches and is not followed by a letter */
            if (strncmp(s, units[u].name, l) == 0 && !(s[l] >= 'a' && s[l] <= 'z') && l > len) {
                unit = units[u].ms;
                len = l;
            }
        }
        if (!unit || n > DURATION_MAX_MS / unit)
            return false;
        total += n * unit;
        if (total > DURATION_MAX_MS)
            return false;
        s += len;
    }
    if (total <= 0)
        return false;
    *ms = total;
    return true;
}
