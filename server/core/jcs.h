/* RFC 8785 JSON Canonicalization Scheme over jansson trees.
 *
 * jansson's own dump is not canonical (it sorts keys by UTF-8 bytes, escapes control characters
 * in upper case and prints reals with %.17g), so the signed bytes of a decision, the leaves of
 * the log and the hashes of comparisons all go through this serializer instead. */
#ifndef CAPLEDGER_CORE_JCS_H
#define CAPLEDGER_CORE_JCS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/problems.h"

/* Longest ECMAScript form of a double: "-1.2345678901234567e-308" (24 bytes) plus NUL. */
#define JCS_NUMBER_MAX 32

/* Returns the canonical bytes of v as a malloc'd, NUL-terminated buffer (the caller frees it)
 * and stores their length in *len (len may be NULL). Returns NULL when v holds something JCS
 * cannot represent — NaN or an infinity, a string or key that is not valid UTF-8 (lone
 * surrogates included) — or when memory runs out. Integers beyond ±2^53 become the nearest
 * double, as an ECMAScript JSON.parse would make them. Borrows v. */
char *jcs_serialize(const json_t *v, size_t *len) __attribute__((warn_unused_result));

/* Lower-case hex of a SHA-256 and its NUL. */
#define JCS_SHA256_HEX 65

/* The canonical bytes of v as jcs_serialize makes them (the caller frees them; their length in
 * *len, len may be NULL), with the lower-case hex SHA-256 of those bytes written into hex: the
 * content address of a comparison, a scenario's input_sha256. NULL as for jcs_serialize. */
char *jcs_serialize_sha256(const json_t *v, size_t *len, char hex[JCS_SHA256_HEX])
    __attribute__((warn_unused_result));
/* The hash alone. Returns 0, or -1 when v cannot be canonicalized (or memory runs out). */
int jcs_sha256_hex(const json_t *v, char hex[JCS_SHA256_HEX]) __attribute__((warn_unused_result));

/* The same compact text with the same number and string forms, but object members in the
 * document's own order: not canonical, for replies people read (an engine result keeps
 * `engine_version` first and demand scenarios in the order the scenario named them). */
char *jcs_dump(const json_t *v, size_t *len) __attribute__((warn_unused_result));

/* Writes the ECMAScript Number::toString form of d (shortest round-trip digits; -0 → "0";
 * exponent form outside [1e-6, 1e21)) into out. Returns the length, or -1 for NaN/Inf. */
int jcs_format_double(double d, char out[JCS_NUMBER_MAX]) __attribute__((warn_unused_result));

/* True when s[0..n) is well-formed UTF-8 of Unicode scalar values (no overlong forms, no
 * surrogates, nothing above U+10FFFF): the strings JCS can carry. */
bool jcs_utf8_valid(const char *s, size_t n);

/* Parses one JSON text strictly for canonicalization: duplicate keys, lone surrogate escapes,
 * invalid UTF-8 and trailing garbage are refused. U+0000 is accepted in string values (use
 * json_string_length, not strlen, on them) and in member names (held by length: use
 * json_object_iter_key_len or json_object_getn; jansson's parser refuses them, so they are
 * parsed through a stand-in character and restored). Integers too large for jansson's
 * long long are kept as reals (every number of such a document is then a real), because JCS
 * reads numbers as doubles anyway. Returns a new reference, or NULL after appending the reason
 * (with line and column) to errs (errs may be NULL). */
json_t *jcs_parse(const char *buf, size_t len, struct problems *errs)
    __attribute__((warn_unused_result));

/* A string value read as text: NULL when v is not a string or holds U+0000 (which jcs_parse
 * accepts, but which would cut a C string short and let two different values compare equal). */
const char *jcs_text(const json_t *v);

#endif
