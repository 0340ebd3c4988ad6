/* The evidence formats of each upload kind (formats.h). */
#include "core/formats/formats.h"

#include <string.h>

#define FORMAT_NAME(id, name) name,

const char *const RUNS_FORMAT_NAMES[] = {FORMATS_RUNS(FORMAT_NAME) NULL};
const char *const TELEMETRY_FORMAT_NAMES[] = {FORMATS_TELEMETRY(FORMAT_NAME) NULL};
const char *const LOADTEST_FORMAT_NAMES[] = {FORMATS_LOADTEST(FORMAT_NAME) NULL};
const char *const OFFERS_FORMAT_NAMES[] = {FORMATS_OFFERS(FORMAT_NAME) NULL};

const struct format_kind FORMAT_KINDS[] = {
    {"runs", RUNS_FORMAT_NAMES},
    {"telemetry", TELEMETRY_FORMAT_NAMES},
    {"loadtest", LOADTEST_FORMAT_NAMES},
    {"offers", OFFERS_FORMAT_NAMES},
    {NULL, NULL},
};

int format_find(const char *const *names, const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i + 1;
    return 0;
}

const char *format_join(const char *const *names, char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    for (; *names; names++) {
        size_t n = strlen(*names);
        if (len + n + 3 >= size) /* room for ", ", the name and the end */
            break;
        if (len) {
            memcpy(buf + len, ", ", 2);
            len += 2;
        }
        memcpy(buf + len, *names, n + 1);
        len += n;
    }
    return buf;
}
