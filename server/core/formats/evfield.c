/* Field-table validation for the evidence resources; see evfield.h. */
#include "core/formats/evfield.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/formats/csv.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"

#define EVF_DEFAULT_STRING_MAX 200

const struct evfield *evfield_find(const struct evfield *fields, const char *name)
{
    for (const struct evfield *f = fields; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

int evfield_index(const struct evfield *fields, const char *name)
{
    for (int i = 0; fields[i].name; i++)
        if (strcmp(fields[i].name, name) == 0)
            return i;
    return -1;
}

/* "ttft_p99_ms": a latency figure in a load point. */
static int is_ms_name(const char *key)
{
    size_t len = strlen(key);
    if (len < 4 || len > 64 || strcmp(key + len - 3, "_ms") != 0 || !islower((unsigned char)key[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(islower((unsigned char)key[i]) || isdigit((unsigned char)key[i]) || key[i] == '_'))
            return 0;
    return 1;
}

static int name_word_valid(const char *s, size_t len)
{
    if (len < 1 || len > 32 || !islower((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

static void describe_range(char *buf, size_t size, const struct evfield *f)
{
    const char *lo = (f->flags & EVF_MIN_EXCLUSIVE) ? "(" : "[";
    if (f->max >= EVF_NO_MAX)
        snprintf(buf, size, "in %s%g, %g]", lo, f->min, EVF_CEILING);
    else
        snprintf(buf, size, "in %s%g, %g%s", lo, f->min, f->max,
                 (f->flags & EVF_MAX_EXCLUSIVE) ? ")" : "]");
}

static int in_range(const struct evfield *f, double v)
{
    if ((f->flags & EVF_MIN_EXCLUSIVE) ? !(v > f->min) : !(v >= f->min))
        return 0;
    if (f->max >= EVF_NO_MAX)
        return v <= EVF_CEILING;
    return (f->flags & EVF_MAX_EXCLUSIVE) ? v < f->max : v <= f->max;
}

static void check_value(const struct evfield *f, const json_t *v, const char *ptr, long line,
                        long column, struct problems *p);

/* The field's own message (EVF_WORDS), or NULL: an enumeration's values are its values. */
static const char *msg_of(const struct evfield *f)
{
    return f->type == EVF_ENUM || !f->values ? NULL : f->values[0];
}

static const char *item_msg_of(const struct evfield *f)
{
    return f->type == EVF_ENUM || !f->values || !f->values[0] ? NULL : f->values[1];
}

/* Appends a fault of f at ptr: the field's own message when it words every fault (EVF_MSG_ALL)
 * or when own is set (a format fault), else the default text. */
static void fault(struct problems *p, const struct evfield *f, int own, long line, long column,
                  const char *ptr, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void fault(struct problems *p, const struct evfield *f, int own, long line, long column,
                  const char *ptr, const char *fmt, ...)
{
    const char *msg = msg_of(f);
    if (msg && (own || (f->flags & EVF_MSG_ALL))) {
        problems_add_line(p, line, column, ptr, "%s", msg);
        return;
    }
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    problems_add_line(p, line, column, ptr, "%s", text);
}

static void check_members(const json_t *obj, const struct evfield *fields, unsigned flags,
                          const char *prefix, long line, struct problems *p)
{
    char ptr[512];
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        const struct evfield *f = evfield_find(fields, key);
        problems_pointer(ptr, sizeof ptr, prefix, key);
        if (f && (f->flags & EVF_SERVER)) {
            problems_add_line(p, line, 0, ptr, "is set by the server and may not be given");
        } else if (!f && (flags & EVF_EXTRA_MS) && is_ms_name(key)) {
            if (!json_is_number(value) || !(json_number_value(value) >= 0) ||
                json_number_value(value) > EVF_CEILING)
                problems_add_line(p, line, 0, ptr, "a latency in ms must be a number in [0, %g]",
                                  EVF_CEILING);
        } else if (!f) {
            problems_add_line(p, line, 0, ptr, "unknown field");
        }
    }
}

static void check_values(const json_t *obj, const struct evfield *fields, const char *prefix,
                         long line, const long *columns, struct problems *p)
{
    char ptr[512];
    for (int i = 0; fields[i].name; i++) {
        const struct evfield *f = &fields[i];
        if (f->flags & EVF_SERVER)
            continue;
        long column = columns ? columns[i] : 0;
        json_t *v = json_object_get(obj, f->name);
        problems_pointer(ptr, sizeof ptr, prefix, f->name);
        if (!v || json_is_null(v)) {
            if (f->flags & EVF_REQUIRED)
                fault(p, f, 0, line, column, ptr, "is required");
            continue;
        }
        check_value(f, v, ptr, line, column, p);
    }
}

static void check_object(const json_t *obj, const struct evfield *fields, unsigned flags,
                         const char *prefix, long line, const long *columns, struct problems *p)
{
    if (!json_is_object(obj)) {
        problems_add_line(p, line, 0, prefix, "must be a JSON object");
        return;
    }
    check_members(obj, fields, flags, prefix, line, p);
    check_values(obj, fields, prefix, line, columns, p);
}

/* EVF_TEXT, EVF_DATE and EVF_HANDLE: a string of at most max_len bytes ("" only when optional),
 * then the type's own form. */
static void check_text(const struct evfield *f, const json_t *v, const char *ptr, long line,
                       long column, struct problems *p)
{
    if (!json_is_string(v)) {
        fault(p, f, 0, line, column, ptr, "must be a string");
        return;
    }
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    size_t max = f->type == EVF_DATE     ? 10
                 : f->type == EVF_HANDLE ? 64
                 : f->type == EVF_LABEL  ? CLASS_LABEL_MAX
                 : f->max_len            ? f->max_len
                                         : EVF_DEFAULT_STRING_MAX;
    char why[128];
    const char *label_fault = f->type == EVF_LABEL ? class_label_fault(s, len) : NULL;
    if (label_fault)
        fault(p, f, 0, line, column, ptr, "%s", label_fault);
    else if (len == 0 && (f->flags & EVF_REQUIRED))
        fault(p, f, 0, line, column, ptr, "must not be empty");
    else if (len > max)
        fault(p, f, 0, line, column, ptr, "must be at most %zu bytes", max);
    else if (memchr(s, '\0', len))
        fault(p, f, 0, line, column, ptr, "must not contain NUL characters");
    else if (!(f->flags & EVF_SECRET) && text_fault(s, len, max > EVF_LINE_MAX, why, sizeof why))
        fault(p, f, 0, line, column, ptr, "%s", why);
    else if (f->type == EVF_DATE && !timefmt_date_valid(s))
        fault(p, f, 1, line, column, ptr, "must be a date YYYY-MM-DD");
    else if (f->type == EVF_HANDLE && !team_name_valid(s))
        fault(p, f, 1, line, column, ptr,
              "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
}

static void check_list(const struct evfield *f, const json_t *v, const char *ptr, long line,
                       long column, struct problems *p)
{
    size_t n = json_array_size(v);
    if (!json_is_array(v)) {
        fault(p, f, 1, line, column, ptr, "must be an array");
        return;
    }
    if (f->max_len && n > f->max_len) {
        fault(p, f, 1, line, column, ptr, "must have at most %zu items", f->max_len);
        return;
    }
    if ((double)n < f->min) {
        fault(p, f, 1, line, column, ptr, "must have at least %g items", f->min);
        return;
    }
    char iptr[512];
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(v, i);
        problems_pointer_index(iptr, sizeof iptr, ptr, i);
        size_t before = p->total;
        check_value(&f->sub[0], item, iptr, line, column, p);
        if (!(f->flags & EVF_UNIQUE) || p->total != before || !json_is_string(item))
            continue;
        for (size_t k = 0; k < i; k++) {
            const json_t *other = json_array_get(v, k);
            if (json_is_string(other) &&
                strcasecmp(json_string_value(other), json_string_value(item)) == 0) {
                problems_add_line(p, line, column, iptr, "repeats %s/%zu", ptr, k);
                break;
            }
        }
    }
}

static void check_value(const struct evfield *f, const json_t *v, const char *ptr, long line,
                        long column, struct problems *p)
{
    char range[96];
    switch (f->type) {
    case EVF_TEXT:
    case EVF_DATE:
    case EVF_HANDLE:
    case EVF_LABEL:
        check_text(f, v, ptr, line, column, p);
        return;
    case EVF_LIST:
        check_list(f, v, ptr, line, column, p);
        return;
    case EVF_ANY:
        if (!json_is_object(v))
            fault(p, f, 1, line, column, ptr, "must be a JSON object");
        return;
    case EVF_STRING:
    case EVF_NAME:
    case EVF_ENUM:
    case EVF_TIME:
    case EVF_UUID:
    case EVF_CURRENCY: {
        if (!json_is_string(v)) {
            fault(p, f, 0, line, column, ptr, "must be a string");
            return;
        }
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        size_t max = f->max_len ? f->max_len : EVF_DEFAULT_STRING_MAX;
        char why[128];
        if (memchr(s, '\0', len)) {
            fault(p, f, 0, line, column, ptr, "must not contain NUL characters");
        } else if (f->type == EVF_STRING && (len == 0 || len > max)) {
            fault(p, f, 0, line, column, ptr, "must be 1 to %zu bytes", max);
        } else if (f->type == EVF_STRING &&
                   text_fault(s, len, max > EVF_LINE_MAX, why, sizeof why)) {
            fault(p, f, 0, line, column, ptr, "%s", why);
        } else if (f->type == EVF_NAME && !name_word_valid(s, len)) {
            fault(p, f, 1, line, column, ptr,
                  "must be 1-32 of a-z, 0-9 and '_', starting with a letter");
        } else if (f->type == EVF_ENUM) {
            int ok = 0;
            for (const char *const *e = f->values; *e && !ok; e++)
                ok = strcmp(*e, s) == 0;
            if (!ok) {
                const char *q = (f->flags & EVF_QUOTE) ? "'" : "";
                char list[400] = "";
                for (const char *const *e = f->values; *e; e++) {
                    size_t used = strlen(list);
                    if (used + strlen(*e) + 5 >= sizeof list)
                        break;
                    snprintf(list + used, sizeof list - used, "%s%s%s%s", used ? ", " : "", q, *e,
                             q);
                }
                problems_add_line(p, line, column, ptr, "must be one of %s", list);
            }
        } else if (f->type == EVF_TIME) {
            struct timefmt_fields t;
            int64_t ms;
            if (!timefmt_parse(s, len, &t) || !t.has_offset ||
                timefmt_resolve_ms(&t, NULL, NULL, &ms) != 0)
                fault(p, f, 1, line, column, ptr,
                      "must be an RFC 3339 time with an offset, e.g. "
                      "2025-01-31T12:00:00Z");
        } else if (f->type == EVF_UUID && !uuid_valid(s)) {
            fault(p, f, 1, line, column, ptr, "must be an id (a UUID)");
        } else if (f->type == EVF_CURRENCY &&
                   !(len == 3 && isupper((unsigned char)s[0]) && isupper((unsigned char)s[1]) &&
                     isupper((unsigned char)s[2]))) {
            fault(p, f, 1, line, column, ptr, "must be a three-letter currency code (USD)");
        }
        return;
    }
    case EVF_NUMBER:
    case EVF_INTEGER: {
        if (f->type == EVF_INTEGER ? !json_is_integer(v) : !json_is_number(v)) {
            fault(p, f, 0, line, column, ptr, "must be %s",
                  f->type == EVF_INTEGER ? "an integer" : "a number");
            return;
        }
        double x = json_number_value(v);
        if (!isfinite(x) || !in_range(f, x)) {
            describe_range(range, sizeof range, f);
            fault(p, f, 1, line, column, ptr, "must be %s", range);
        }
        return;
    }
    case EVF_BOOL:
        if (!json_is_boolean(v))
            fault(p, f, 0, line, column, ptr, "must be true or false");
        return;
    case EVF_OBJECT:
        check_object(v, f->sub, f->flags, ptr, line, NULL, p);
        return;
    case EVF_ARRAY: {
        if (!json_is_array(v)) {
            fault(p, f, 1, line, column, ptr, "must be an array");
            return;
        }
        if (f->max_len && json_array_size(v) > f->max_len) {
            fault(p, f, 1, line, column, ptr, "must have at most %zu items", f->max_len);
            return;
        }
        size_t i;
        json_t *item;
        char iptr[512];
        json_array_foreach(v, i, item)
        {
            problems_pointer_index(iptr, sizeof iptr, ptr, i);
            if (item_msg_of(f) && !json_is_object(item))
                problems_add_line(p, line, column, iptr, "%s", item_msg_of(f));
            else
                check_object(item, f->sub, f->flags, iptr, line, NULL, p);
        }
        return;
    }
    }
}

void evfield_check(const json_t *obj, const struct evfield *fields, const char *prefix, long line,
                   const long *columns, struct problems *p)
{
    check_object(obj, fields, 0, prefix, line, columns, p);
}

void evfield_check_members(const json_t *obj, const struct evfield *fields, const char *prefix,
                           struct problems *p)
{
    if (json_is_object(obj))
        check_members(obj, fields, 0, prefix, 0, p);
}

void evfield_check_values(const json_t *obj, const struct evfield *fields, const char *prefix,
                          struct problems *p)
{
    check_values(obj, fields, prefix, 0, NULL, p);
}

json_t *evfield_from_cell(const struct evfield *f, const char *cell, size_t len)
{
    enum csv_cell_kind kind = f->type == EVF_NUMBER    ? CSV_CELL_NUMBER
                              : f->type == EVF_INTEGER ? CSV_CELL_INTEGER
                              : f->type == EVF_BOOL    ? CSV_CELL_BOOL
                                                       : CSV_CELL_TEXT;
    return csv_cell_json(cell, len, kind);
}

json_t *evfield_merge_patch(const json_t *target, const json_t *patch)
{
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    json_t *out = json_is_object(target) ? json_deep_copy(target) : json_object();
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)patch, key, value)
    {
        if (json_is_null(value)) {
            json_object_del(out, key);
            continue;
        }
        json_t *merged = evfield_merge_patch(json_object_get(out, key), value);
        json_object_set_new(out, key, merged);
    }
    return out;
}

json_t *evfield_project(const json_t *obj, const struct evfield *fields)
{
    json_t *out = json_object();
    for (const struct evfield *f = fields; f->name; f++) {
        if (f->flags & EVF_SERVER)
            continue;
        json_t *v = json_object_get(obj, f->name);
        json_object_set_new(out, f->name, v ? json_deep_copy(v) : json_null());
    }
    return out;
}

const char *evfield_valid_string(const json_t *obj, const char *name, const struct problems *p)
{
    char ptr[512];
    const char *s = json_string_value(json_object_get(obj, name));
    return s && !problems_has(p, problems_pointer(ptr, sizeof ptr, "", name)) ? s : NULL;
}
