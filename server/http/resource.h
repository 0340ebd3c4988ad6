/* The resource toolkit every handler shares: typed query parameters validated into a problem
 * list (http/query.h, included), lists with filters and keyset pages on (created_at, id), the
 * 404/403 answers of team scoping, upload records and their rejected lists. */
#ifndef CAPLEDGER_HTTP_RESOURCE_H
#define CAPLEDGER_HTTP_RESOURCE_H

#include "http/internal.h"
#include "http/page.h"
#include "http/query.h"
#include "store/evlist.h"

#include <stddef.h>

/* One filter of a list: ?name read by res_query as kind (rule as res_query takes it) into the
 * query's field at offset `field` (RES_FIELD(name of a const char * of struct evlist_query)). */
struct res_filter {
    const char *name;
    enum res_query_kind kind;
    const void *rule;
    size_t field;
};
#define RES_FIELD(member) offsetof(struct evlist_query, member)
/* The filters several lists share, each declared once: ?team= (a team's rows) and ?q= (a name
 * prefix, any case). */
#define RES_FILTER_TEAM                                                                            \
    {                                                                                              \
        "team", RQ_TEXT, NULL, RES_FIELD(team)                                                     \
    }
#define RES_FILTER_Q                                                                               \
    {                                                                                              \
        "q", RQ_TEXT, NULL, RES_FIELD(q)                                                           \
    }
#define RES_FILTERS_MAX 8
typedef enum store_status (*res_fetch_fn)(struct store *s, const struct evlist_query *q,
                                          json_t **out);
/* A list, declared once: what names it in replies and errors, the store call, and its own
 * filters (at most RES_FILTERS_MAX, ended by one without a name) beside ?from and ?to. */
struct res_list_kind {
    const char *what;
    res_fetch_fn fetch;
    struct res_filter filters[RES_FILTERS_MAX + 1];
};
/* A whole list request: page position and team scope, ?from=&to= (created_at unless the
 * store says otherwise), the kind's filters (a problem naming each bad one), the store call and
 * the {items, next_cursor} reply keyed on (created_at, id). q may carry fixed filters (a
 * benchmark id). */
void res_list(struct req *r, struct evlist_query *q, const struct res_list_kind *k);
/* The handler of a list route whose data is its res_list_kind (no fixed filter). */
void res_list_route(struct req *r);
/* 0 when every filter of a list route is among the query parameters the route declares (and
 * so reaches the handler); else -1 with the route and the filter in why. */
int res_list_route_check(const struct route *route, char *why, size_t why_size);

/* The rejected list of an upload's reply: [{line, pointer, message[, column]}], the first
 * PROBLEMS_MAX_KEPT problems (new reference). */
json_t *res_rejected_json(const struct problems *p);

/* The benchmark id if it exists and the caller may read it (new reference); else answers 404
 * (or 503) and returns NULL. */
json_t *res_readable_benchmark(struct req *r, const char *id);

/* 404 for something a caller may not see (its existence is not revealed). */
void res_not_found(struct req *r, const char *what);
/* 403 for a write to a team the caller does not belong to (or any write by auditors/admins). */
void res_forbidden_team(struct req *r, const char *team);

/* A new upload record (the columns of table upload) for the caller's upload: id, kind,
 * team (may be NULL), who, content type, format (may be NULL), bytes and digest. Counts
 * (lines, inserted, duplicates, skipped, rejected_total), params and summary are added by the
 * caller. */
json_t *res_upload_record(struct req *r, const char *id, const char *kind, const char *team,
                          const char *format, size_t bytes, const char *sha_hex);

#endif
