/* Test oracle: an upload kind's format names by its name (format_names.h). */
#include "oracle/format_names.h"

#include <string.h>

const char *const *format_names_of(const char *kind)
{
    for (const struct format_kind *k = FORMAT_KINDS; k->kind; k++)
        if (kind && strcmp(k->kind, kind) == 0)
            return k->names;
    return NULL;
}
