/* The resource toolkit shared by every handler; see resource.h. */
#include "http/resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "store/benchmarks.h"

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

void res_list(struct req *r, struct evlist_query *q, const struct res_list_kind *k)
{
    struct page pg;
    char from[40], to[40], values[RES_FILTERS_MAX][128]; /* what the query's fields point into */
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
    q->from = res_query(r, "from", RQ_TIME, NULL, from, sizeof from, &p);
    q->to = res_query(r, "to", RQ_TIME, NULL, to, sizeof to, &p);
    for (size_t i = 0; i < RES_FILTERS_MAX && k->filters[i].name; i++) {
        const struct res_filter *f = &k->filters[i];
        const char **field = (const char **)(void *)((char *)q + f->field);
        *field = res_query(r, f->name, f->kind, f->rule, values[i], sizeof values[i], &p);
    }
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    enum store_status st = k->fetch(r->app->store, q, &items);
    page_reply_fetched(r, &pg, st, items, "created_at", k->what);
    items = NULL;
out:
    json_decref(items);
    problems_free(&p);
}

void res_list_route(struct req *r)
{
    struct evlist_query q = {0};
    res_list(r, &q, r->route->data);
}

int res_list_route_check(const struct route *route, char *why, size_t why_size)
{
    const struct res_list_kind *k = route->data;
    for (size_t i = 0; i < RES_FILTERS_MAX && k->filters[i].name; i++) {
        const char *name = k->filters[i].name, *at = route->query;
        size_t n = strlen(name);
        while (at && (at = strstr(at, name)) != NULL) {
            if ((at == route->query || at[-1] == ' ') && (at[n] == ' ' || !at[n]))
                break;
            at += n;
        }
        if (!at) {
            snprintf(why, why_size, "%s %s: filter %s is not among the route's query parameters",
                     route->method, route->pattern, name);
            return -1;
        }
    }
    return 0;
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
