/* Non-recursive nesting scan in front of jansson (see jsonlimit.h). */
#include "core/jsonlimit.h"

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

json_t *json_load_bounded(const char *buf, size_t len, size_t flags, json_error_t *err)
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
    return json_loadb(buf, len, flags, err);
}
