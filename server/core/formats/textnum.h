/* Strict number parsing and printing for the text formats the importers read.
 *
 * strtod alone accepts too much for evidence ("nan", "inf", hex floats, leading spaces,
 * locale-dependent separators) and silently saturates on overflow. These accept exactly a
 * decimal number (optional sign, digits, optional fraction, optional exponent) that fits a
 * finite double, and nothing else, so a bad cell becomes a problem instead of a figure. */
#ifndef CAPLEDGER_CORE_TEXTNUM_H
#define CAPLEDGER_CORE_TEXTNUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEXTNUM_DOUBLE_MAX_CHARS 32 /* longest shortest-round-trip rendering, with sign */

/* s[0..len) must be the whole number: no surrounding spaces. */
bool textnum_parse_double(const char *s, size_t len, double *out)
    __attribute__((warn_unused_result));
/* Digits only, with an optional leading '-'; false on overflow. */
bool textnum_parse_int64(const char *s, size_t len, int64_t *out)
    __attribute__((warn_unused_result));

/* Narrows [*s, *s + *len) past leading and trailing spaces and tabs. */
void textnum_trim(const char **s, size_t *len);

/* The shortest decimal that reads back as exactly v ("8", "0.25", "1e-07"); v must be finite.
 * buf needs TEXTNUM_DOUBLE_MAX_CHARS bytes. Returns buf. */
const char *textnum_format_double(double v, char *buf);

/* Case-insensitive comparison of s[0..len) with the NUL-terminated word. */
bool textnum_equals_word(const char *s, size_t len, const char *word);

#endif
