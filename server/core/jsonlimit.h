/* Bounds on JSON input before any recursive code sees it.
 *
 * jansson's parser recurses once per nested array or object and only stops at 2,048 levels,
 * far below what a worker thread's stack can hold: a 2 KB body of `[[[[…` used to crash the
 * server. json_nest_scan() measures the nesting without recursion (strings and their escapes
 * are skipped; nothing else is validated), and json_load_bounded() refuses anything nested
 * deeper than JSON_NEST_MAX before calling jansson. Every parse of untrusted JSON goes through
 * json_load_bounded (or checks json_nest_scan first); code that walks parsed trees recursively
 * stops at JSON_NEST_MAX as well. */
#ifndef CAPLEDGER_CORE_JSONLIMIT_H
#define CAPLEDGER_CORE_JSONLIMIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/problems.h"

/* The deepest nesting of arrays and objects any input may have (a scenario needs 5). */
#define JSON_NEST_MAX 64

/* Where a scan stopped: the 1-based line and column (in bytes) of the bracket that went past
 * the limit. */
struct json_nest_at {
    long line;
    long column;
    size_t offset;
};

/* Returns true when no array or object in buf[0..len) nests deeper than max. With first_only,
 * the scan stops after the first complete value (for documents read one after another). */
bool json_nest_ok(const char *buf, size_t len, int max, bool first_only, struct json_nest_at *at);

/* json_loadb after json_nest_ok(JSON_NEST_MAX): a document nested too deeply fails with
 * json_error_stack_overflow as its code and "nested deeper than 64 levels" as its text, at the
 * line and column of the offending bracket. */
json_t *json_load_bounded(const char *buf, size_t len, size_t flags, json_error_t *err);

/* What parsing a document may cost: jansson builds a tree of small allocations, up to about 20
 * times the text for compact numbers ([0,0,0,…]) and 75 times for empty objects ([{},{},…]),
 * so a 16 MiB body could take 320 MiB to 1.2 GiB before any handler looked at it.
 * json_parse_cost() estimates, from the text alone and without recursion or allocation, the
 * bytes the tree will hold (malloc chunks of jansson 2.14's values, arrays, objects and their
 * members, and three times the longest token for the lexer's buffer, which doubles as it grows;
 * an overestimate of at most about 2 times, unit-tested against counted allocations).
 * first_only: the first value only. */
size_t json_parse_cost(const char *buf, size_t len, bool first_only);

/* The most one parsed document (or one value of a stream of them) may cost. */
#define JSON_PARSE_MAX ((size_t)64 << 20)

/* json_load_bounded, refusing a document whose json_parse_cost is above max_cost before any of
 * it is parsed: it fails with json_error_out_of_memory as its code and a text naming both
 * figures in MiB. With JSON_DISABLE_EOF_CHECK only the first value is costed. */
json_t *json_load_budget(const char *buf, size_t len, size_t flags, size_t max_cost,
                         json_error_t *err);

/* The largest magnitude any JSON number of an input may have: 2^53 − 1, the integers a double
 * holds exactly (seeds and decision integers go up to it). Beyond it a figure is not a real
 * one, arithmetic on it overflows, and PostgreSQL prints it back as an integer of more digits
 * than a 64-bit reader takes (4e23 came back as 400000000000000000000000). */
#define JSON_NUMBER_MAX_ABS 9007199254740991.0

/* Adds a problem, at its JSON Pointer under prefix, for every number in v whose magnitude is
 * above JSON_NUMBER_MAX_ABS (and for nesting past JSON_NEST_MAX). Returns how many. */
size_t json_numbers_check(const json_t *v, const char *prefix, struct problems *p);

/* Adds a problem, at its JSON Pointer under prefix, for every string in v that text_fault
 * (core/validate.h) refuses as multi-line text: what a reader of a tool's output passes on
 * (a model name, a backend) meets the rule of every text field. Returns how many. */
size_t json_texts_check(const json_t *v, const char *prefix, struct problems *p);

#endif
