/* Fuzz target for core/textnum, the number parser behind every importer and CSV cell: a number
 * it accepts is finite and prints (textnum_format_double) as text that reads back as exactly the
 * same double; an accepted int64 is also accepted as the same double; trimming leaves no outer
 * space or tab. The first 8 bytes, read as a double, must print within
 * TEXTNUM_DOUBLE_MAX_CHARS and read back exactly. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/formats/textnum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(double d)
{
    char buf[TEXTNUM_DOUBLE_MAX_CHARS];
    const char *text = textnum_format_double(d, buf);
    size_t n = strnlen(text, sizeof buf);
    double back;
    /* == also lets -0 print as "0", which textnum does on purpose. */
    if (n == sizeof buf || !textnum_parse_double(text, n, &back) || back != d)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= sizeof(double)) {
        double raw;
        memcpy(&raw, data, sizeof raw);
        if (isfinite(raw))
            round_trip(raw);
    }
    const char *s = (const char *)data;
    double d;
    int64_t i;
    bool is_double = textnum_parse_double(s, size, &d);
    if (is_double) {
        if (!isfinite(d))
            abort();
        round_trip(d);
    }
    if (textnum_parse_int64(s, size, &i) && (!is_double || d != (double)i))
        abort();

    const char *t = s;
    size_t tlen = size;
    textnum_trim(&t, &tlen);
    if (t < s || t + tlen > s + size)
        abort();
    if (tlen > 0 && (t[0] == ' ' || t[0] == '\t' || t[tlen - 1] == ' ' || t[tlen - 1] == '\t'))
        abort();
    if (textnum_equals_word(t, tlen, "true") != (tlen == 4 && strncasecmp(t, "true", 4) == 0))
        abort();
    return 0;
}
