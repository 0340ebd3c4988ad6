#include "core/formats/textnum.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Checks the decimal grammar by hand so strtod only ever sees what it cannot misread. */
static bool textnum_is_decimal(const char *s, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t exp_digits = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == len;
}

bool textnum_parse_double(const char *s, size_t len, double *out)
{
    /* strtod needs a terminated copy. Numbers as tools print them fit the stack buffer; a
     * longer one (leading zeros, 70 digits of pi — fuzz_textnum found "000…0" of 64+ bytes
     * accepted as an int64 but refused as a double) is copied to the heap instead of refused. */
    char tmp[64];
    if (len == 0 || !textnum_is_decimal(s, len))
        return false;
    char *text = len < sizeof tmp ? tmp : malloc(len + 1);
    if (!text)
        return false;
    memcpy(text, s, len);
    text[len] = '\0';
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    bool ok = end == text + len && isfinite(v) && !(errno == ERANGE && fabs(v) > 1.0);
    if (text != tmp)
        free(text);
    if (ok)
        *out = v;
    return ok;
}

bool textnum_parse_int64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool negative = false;
    if (len > 0 && s[0] == '-') {
        negative = true;
        i = 1;
    }
    if (i == len)
        return false;
    uint64_t v = 0;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned digit = (unsigned)(s[i] - '0');
        if (v > (limit - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

void textnum_trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

const char *textnum_format_double(double v, char *buf)
{
    if (v == 0) { /* also -0: a figure of nothing has no sign */
        strcpy(buf, "0");
        return buf;
    }
    /* A double's shortest round-trip decimal has at most 17 significant digits. When it has
     * at most 15, "%.15g" prints exactly it (the 15-digit rounding of the nearest double to a
     * k-digit decimal is that decimal followed by zeros, which %g strips), so at most three
     * conversions are needed instead of trying every precision from 1: a million-row COPY
     * spends its time on data, not here. %g keeps plain notation for 1e-4 <= |v| < 1e15. */
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, TEXTNUM_DOUBLE_MAX_CHARS, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

bool textnum_equals_word(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}
