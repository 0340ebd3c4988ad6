/* RFC 8785 canonicalizer: whatever jcs_parse accepts must serialize, and canonical output must
 * be a fixed point (serialize(parse(serialize(x))) == serialize(x)). The first 8 bytes, read as
 * a double, must also print in a form that reads back as the same number. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= sizeof(double)) {
        double d;
        memcpy(&d, data, sizeof d);
        char text[JCS_NUMBER_MAX];
        int n = jcs_format_double(d, text);
        if (isfinite(d) != (n > 0))
            abort();
        if (n > 0 && strtod(text, NULL) != d)
            abort();
    }
    json_t *doc = jcs_parse((const char *)data, size, NULL);
    if (!doc)
        return 0;
    size_t len1;
    char *once = jcs_serialize(doc, &len1);
    json_decref(doc);
    if (!once)
        abort(); /* everything the parser accepts is representable */
    json_t *again = jcs_parse(once, len1, NULL);
    if (!again)
        abort();
    size_t len2;
    char *twice = jcs_serialize(again, &len2);
    json_decref(again);
    if (!twice || len1 != len2 || memcmp(once, twice, len1) != 0)
        abort();
    free(once);
    free(twice);
    return 0;
}
