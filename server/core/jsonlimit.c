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
