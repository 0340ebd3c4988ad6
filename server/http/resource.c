/* The resource toolkit shared by every handler; see resource.h. */
#include "http/resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/formats/formats.h"
#include "core/formats/textnum.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"
#include "store/benchmarks.h"

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

void res_not_found(struct req *r, const char *what)
{
    resp_problem(r, 404, "not-found", "Not found", "%s not found", what);
}

void res_forbidden_team(struct req *r, const char *team)
{
    if (r->who.role & (ROLE_ADMIN | ROLE_AUDITOR))
        resp_problem(r, 403, "forbidden", "Forbidden",
                     "auditors and admins do not write team evidence");
    else
        resp_problem(r, 403, "forbidden", "Forbidden", "you are not a member of team '%s'",
                     team ? team : "(none)");
}

json_t *res_upload_record(struct req *r, const char *id, const char *kind, const char *team,
                          const char *format, size_t bytes, const char *sha_hex)
{
    char ct[96];
    req_content_type(r, ct, sizeof ct);
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o}", "id", id, "kind", kind, "created_by_name",
                  r->who.username, "content_type", ct[0] ? ct : "application/octet-stream", "bytes",
                  (json_int_t)bytes, "body_sha256", sha_hex, "params", json_object());
    if (!rec)
        return NULL;
    if (team)
        json_object_set_new(rec, "team", json_string(team));
    if (format)
        json_object_set_new(rec, "format", json_string(format));
    if (r->who.user_id[0])
        json_object_set_new(rec, "created_by", json_string(r->who.user_id));
    return rec;
}

void res_list(struct req *r, struct evlist_query *q, const char *what, res_filter_fn filters,
              res_fetch_fn fetch)
{
    struct page pg;
    struct res_filters f;
    struct problems p;
    problems_init(&p);
    json_t *items = NULL;
    if (page_begin(r, &pg, PAGE_AT_ID, &p) != 0)
        goto out;
    q->limit = pg.fetch;
    q->after_at = pg.after_at;
    q->after_id = pg.after_id;
    q->scope = &r->scope;
    q->user_id = r->who.user_id[0] ? r->who.user_id : NULL;
    q->from = res_query(r, "from", RQ_TIME, NULL, f.from, sizeof f.from, &p);
    q->to = res_query(r, "to", RQ_TIME, NULL, f.to, sizeof f.to, &p);
    if (filters)
        filters(r, q, &f, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    enum store_status st = fetch(r->app->store, q, &items);
    page_reply_fetched(r, &pg, st, items, "created_at", what);
    items = NULL;
out:
    json_decref(items);
    problems_free(&p);
}

json_t *res_rejected_json(const struct problems *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->count; i++) {
        json_t *e = json_pack("{s:I, s:s, s:s}", "line", (json_int_t)p->items[i].line, "pointer",
                              p->items[i].pointer, "message", p->items[i].message);
        if (e && p->items[i].column)
            json_object_set_new(e, "column", json_integer(p->items[i].column));
        json_array_append_new(a, e);
    }
    return a;
}

json_t *res_readable_benchmark(struct req *r, const char *id)
{
    json_t *b = NULL;
    enum store_status st = STORE_NOT_FOUND;
    if (uuid_valid(id))
        st = store_benchmark_get(r->app->store, id, &b);
    if (st == STORE_OK &&
        !principal_can_read_team(&r->who, json_string_value(json_object_get(b, "team"))))
        st = STORE_NOT_FOUND;
    return req_stored(r, st, b, "benchmark");
}
