/* The one reader of query parameters; see query.h. */
#include "http/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/formats.h"
#include "core/formats/textnum.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"

/* The raw read under every kind: 1 when present and whole, 0 when absent; a value longer than
 * size - 1 bytes adds the too-long problem (it is never read as absent) and returns -1. */
static int query_raw(struct req *r, const char *name, const char *ptr, char *buf, size_t size,
                     struct problems *p)
{
    int n = r->query ? mg_get_var(r->query, strlen(r->query), name, buf, size) : -1;
    if (n == -2) {
        problems_add(p, ptr, "query parameter %s is too long: at most %zu bytes", name, size - 1);
        return -1;
    }
    return n >= 0;
}

/* 1 when raw is decimal digits (no sign) whose value lies in range; the value goes to *out. */
static int integer_in(const char *raw, size_t len, const struct res_range *range, long long *out)
{
    if (len < 1 || len > 18 || strspn(raw, "0123456789") != len)
        return 0;
    *out = strtoll(raw, NULL, 10);
    return (double)*out >= range->lo && (double)*out <= range->hi;
}

const char *res_query(struct req *r, const char *name, enum res_query_kind kind, const void *rule,
                      char *buf, size_t size, struct problems *p)
{
    char raw[256];
    char ptr[160];
    snprintf(ptr, sizeof ptr, "?%s", name);
    if (kind == RQ_RAW)
        return query_raw(r, name, ptr, buf, size, p) > 0 ? buf : NULL;
    if (query_raw(r, name, ptr, raw, sizeof raw, p) <= 0)
        return NULL;
    size_t len = strlen(raw);
    const struct res_range *range = rule;
    switch (kind) {
    case RQ_TEXT:
        if (len < 1 || len > 127 || len >= size) {
            problems_add(p, ptr, "query parameter %s must be 1-127 bytes", name);
            return NULL;
        }
        break;
    case RQ_UUID:
        if (!uuid_valid(raw)) {
            problems_add(p, ptr, "query parameter %s must be an id (a UUID)", name);
            return NULL;
        }
        break;
    case RQ_SHA256:
        if (!lower_hex_valid(raw, 64)) {
            problems_add(p, ptr, "query parameter %s must be a SHA-256 (64 lower-case hex)", name);
            return NULL;
        }
        break;
    case RQ_TIME: {
        struct timefmt_fields t;
        int64_t ms;
        if (!timefmt_parse(raw, len, &t) || !t.has_offset ||
            timefmt_resolve_ms(&t, NULL, NULL, &ms) != 0 || size < TIMEFMT_UTC_LEN) {
            problems_add(p, ptr, "query parameter %s must be an RFC 3339 time with an offset",
                         name);
            return NULL;
        }
        timefmt_format_utc_ms(ms, buf);
        return buf;
    }
    case RQ_ENUM: {
        const char *const *values = rule;
        int ok = 0;
        for (const char *const *v = values; *v && !ok; v++)
            ok = strcmp(*v, raw) == 0;
        if (!ok) {
            char list[256];
            problems_add(p, ptr, "query parameter %s must be one of %s", name,
                         format_join(values, list, sizeof list));
            return NULL;
        }
        break;
    }
    case RQ_BOOL:
        if (strcmp(raw, "true") != 0 && strcmp(raw, "false") != 0) {
            problems_add(p, ptr, "query parameter %s must be true or false", name);
            return NULL;
        }
        break;
    case RQ_INTEGER: {
        long long v;
        if (!integer_in(raw, len, range, &v)) {
            problems_add(p, ptr, "query parameter %s must be an integer from %.0f to %.0f", name,
                         range->lo, range->hi);
            return NULL;
        }
        snprintf(buf, size, "%lld", v);
        return buf;
    }
    case RQ_NUMBER: {
        double v;
        if (!textnum_parse_double(raw, len, &v) || !(v >= range->lo && v <= range->hi)) {
            problems_add(p, ptr, "query parameter %s must be a number from %g to %g", name,
                         range->lo, range->hi);
            return NULL;
        }
        snprintf(buf, size, "%.17g", v);
        return buf;
    }
    case RQ_RAW:
        break;
    }
    if (len >= size) {
        problems_add(p, ptr, "query parameter %s is too long: at most %zu bytes", name, size - 1);
        return NULL;
    }
    memcpy(buf, raw, len + 1);
    return buf;
}

bool res_query_bool(struct req *r, const char *name, struct problems *p)
{
    char buf[8];
    const char *v = res_query(r, name, RQ_BOOL, NULL, buf, sizeof buf, p);
    return v && strcmp(v, "true") == 0;
}
