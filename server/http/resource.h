/* The resource toolkit every handler shares: typed query parameters validated into a problem
 * list (http/query.h, included), lists with filters and keyset pages on (created_at, id), the
 * 404/403 answers of team scoping, upload records and their rejected lists. */
#ifndef CAPLEDGER_HTTP_RESOURCE_H
#define CAPLEDGER_HTTP_RESOURCE_H

#include "http/internal.h"
#include "http/page.h"
#include "http/query.h"
#include "store/evlist.h"

/* Query-string filters of a list, with the storage their values point into. */
struct res_filters {
    char team[128], kind[32], klass[32], workload[40], offer[40], state[32], provider[128],
        gpu_model[128], purchase_option[32], from[40], to[40], q[128], owner[80];
};
/* Reads a list's own filters into q (values kept in f); adds a problem per bad one. */
typedef void (*res_filter_fn)(struct req *r, struct evlist_query *q, struct res_filters *f,
                              struct problems *p);
typedef enum store_status (*res_fetch_fn)(struct store *s, const struct evlist_query *q,
                                          json_t **out);
/* A whole list request: page position and team scope, ?from=&to= (created_at unless the
 * store says otherwise), the list's own filters (filters may be NULL), the store call and the
 * {items, next_cursor} reply keyed on (created_at, id). q may carry fixed filters (a
 * benchmark id); what names the resource in errors. */
void res_list(struct req *r, struct evlist_query *q, const char *what, res_filter_fn filters,
              res_fetch_fn fetch);

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
