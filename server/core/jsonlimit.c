/* Non-recursive nesting scan in front of jansson (see jsonlimit.h). */
#include "core/jsonlimit.h"

#include "core/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

bool json_nest_ok(const char *buf, size_t len, int max, bool first_only, struct json_nest_at *at)
{
    int depth = 0;
    long line = 1;
    size_t line_start = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
        }
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            break;
        case '[':
        case '{':
            if (++depth > max) {
                if (at) {
                    at->line = line;
                    at->column = (long)(i - line_start) + 1;
                    at->offset = i;
                }
                return false;
            }
            break;
        case ']':
        case '}':
            if (depth > 0 && --depth == 0 && first_only)
                return true;
            break;
        case ' ':
        case '\t':
        case '\r':
        case '\n':
            break;
        default:
            if (depth == 0 && first_only)
                return true; /* a scalar at the top: nothing nests */
        }
    }
    return true;
}

static size_t numbers_check(const json_t *v, const char *ptr, int depth, struct problems *p)
{
    char child[512];
    size_t added = 0;
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (!(x >= -JSON_NUMBER_MAX_ABS && x <= JSON_NUMBER_MAX_ABS)) {
            problems_add(p, ptr, "a number must be between -%.0f and %.0f", JSON_NUMBER_MAX_ABS,
                         JSON_NUMBER_MAX_ABS);
            added++;
        }
    } else if ((json_is_array(v) || json_is_object(v)) && depth >= JSON_NEST_MAX) {
        problems_add(p, ptr, "nested deeper than %d levels", JSON_NEST_MAX);
        added++;
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            added +=
                numbers_check(json_array_get(v, i),
                              problems_pointer_index(child, sizeof child, ptr, i), depth + 1, p);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)v, key, member) added +=
            numbers_check(member, problems_pointer(child, sizeof child, ptr, key), depth + 1, p);
    }
    return added;
}

size_t json_numbers_check(const json_t *v, const char *prefix, struct problems *p)
{
    return numbers_check(v, prefix ? prefix : "", 0, p);
}

static size_t texts_check(const json_t *v, const char *ptr, int depth, struct problems *p)
{
    char child[512], why[128];
    size_t added = 0;
    if (json_is_string(v)) {
        if (text_fault(json_string_value(v), json_string_length(v), 1, why, sizeof why)) {
            problems_add(p, ptr, "%s", why);
            added++;
        }
    } else if (depth >= JSON_NEST_MAX) {
        return 0; /* json_numbers_check names it */
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            added += texts_check(json_array_get(v, i),
                                 problems_pointer_index(child, sizeof child, ptr, i), depth + 1, p);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)v, key, member) added +=
            texts_check(member, problems_pointer(child, sizeof child, ptr, key), depth + 1, p);
    }
    return added;
}

size_t json_texts_check(const json_t *v, const char *prefix, struct problems *p)
{
    return texts_check(v, prefix ? prefix : "", 0, p);
}

/* A malloc chunk holding n bytes (glibc, 64-bit: 8 bytes of header, 16-byte steps, 32 at
 * least). */
static size_t chunk(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

/* jansson 2.14's allocations per value: a number is a json_integer_t or json_real_t (24
 * bytes); a string a json_string_t (32) and its text; an array a json_array_t (40) and a
 * table of 8 slots that doubles as it fills; an object a json_object_t (72) and 8 buckets of
 * 16 bytes that double, and per member a pair (56 bytes and the key). true, false and null are
 * shared. */
#define COST_NUMBER 32
#define COST_STRING 48
#define COST_ARRAY (48 + 80)
#define COST_OBJECT (80 + 144)
#define COST_SLOT 24   /* per further element: its slot, doubled, and the tables left behind */
#define COST_BUCKET 32 /* per member: its bucket, doubled */

/* jansson's lexer copies each token's text into one buffer that it keeps for the whole parse and
 * grows by allocating one twice the size and then freeing the old: for the longest token, up to
 * twice its text, and a member name's token is still held while its member copies it (a 31 MiB
 * string parsed with 96 MiB where the value itself held 31). */
static size_t with_lexer(size_t cost, size_t longest)
{
    return cost + 3 * chunk(longest + 1);
}

static bool number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

size_t json_parse_cost(const char *buf, size_t len, bool first_only)
{
    size_t cost = 0, str_start = 0, last_len = 0, num_start = 0, longest = 0;
    int depth = 0;
    bool in_string = false, escaped = false, in_number = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
                last_len = i - str_start;
                if (last_len > longest)
                    longest = last_len;
                cost += COST_STRING + chunk(last_len + 1);
                if (depth == 0 && first_only)
                    return with_lexer(cost, longest);
            }
            continue;
        }
        if (in_number && number_char(c))
            continue;
        if (in_number && i - num_start > longest)
            longest = i - num_start;
        in_number = false;
        switch (c) {
        case '"':
            in_string = true;
            str_start = i + 1;
            break;
        case ':': /* the string before was a key: a pair rather than a json_string_t */
            cost -= COST_STRING + chunk(last_len + 1);
            cost += chunk(56 + last_len + 1) + COST_BUCKET;
            break;
        case ',':
            cost += COST_SLOT;
            break;
        case '[':
        case '{':
            cost += c == '[' ? COST_ARRAY : COST_OBJECT;
            depth++;
            break;
        case ']':
        case '}':
            if (depth > 0 && --depth == 0 && first_only)
                return with_lexer(cost, longest);
            break;
        default:
            if (c == '-' || (c >= '0' && c <= '9')) {
                in_number = true;
                num_start = i;
                cost += COST_NUMBER;
                if (depth == 0 && first_only) {
                    size_t end = i + 1;
                    while (end < len && number_char(buf[end]))
                        end++;
                    return with_lexer(cost, end - i);
                }
            } else if (depth == 0 && first_only && c != ' ' && c != '\t' && c != '\r' &&
                       c != '\n') {
                return with_lexer(cost, longest); /* a literal at the top */
            }
        }
    }
    if (in_number && len - num_start > longest)
        longest = len - num_start;
    if (in_string && len - str_start > longest)
        longest = len - str_start;
    return with_lexer(cost, longest);
}

json_t *json_load_bounded(const char *buf, size_t len, size_t flags, json_error_t *err)
{
    return json_load_budget(buf, len, flags, SIZE_MAX, err);
}

json_t *json_load_budget(const char *buf, size_t len, size_t flags, size_t max_cost,
                         json_error_t *err)
{
    struct json_nest_at at;
    if (!json_nest_ok(buf, len, JSON_NEST_MAX, (flags & JSON_DISABLE_EOF_CHECK) != 0, &at)) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->line = (int)at.line;
            err->column = (int)at.column;
            err->position = (int)at.offset;
            snprintf(err->source, sizeof err->source, "<buffer>");
            snprintf(err->text, sizeof err->text, "nested deeper than %d levels", JSON_NEST_MAX);
            /* jansson keeps the error code in the text buffer's last byte */
            err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_stack_overflow;
        }
        return NULL;
    }
    size_t cost =
        max_cost == SIZE_MAX ? 0 : json_parse_cost(buf, len, (flags & JSON_DISABLE_EOF_CHECK) != 0);
    if (cost > max_cost) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->line = 1;
            err->column = 1;
            snprintf(err->source, sizeof err->source, "<buffer>");
            snprintf(err->text, sizeof err->text,
                     "parsed, it would take about %zu MiB of memory; the limit is %zu MiB",
                     (cost + ((size_t)1 << 20) - 1) >> 20, max_cost >> 20);
            err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
        }
        return NULL;
    }
    return json_loadb(buf, len, flags, err);
}
