/* The one reader of query parameters (part of the resource toolkit, http/resource.h): below
 * both the pages (http/page.c) and the lists that use them. */
#ifndef CAPLEDGER_HTTP_QUERY_H
#define CAPLEDGER_HTTP_QUERY_H

#include <stdbool.h>

#include "http/internal.h"

/* The one reader of query parameters: what each kind accepts, and what it writes to buf. A
 * refused value adds one problem at "?name" whose message names the parameter ("query
 * parameter limit must be ..."), so a UI can put the parameter's label in its place. */
enum res_query_kind {
    RQ_TEXT,    /* 1-127 bytes */
    RQ_UUID,    /* an id */
    RQ_SHA256,  /* 64 lower-case hex (a comparison's hash) */
    RQ_TIME,    /* RFC 3339 with offset; normalised to UTC text (size >= 40) */
    RQ_ENUM,    /* one of rule, a NULL-terminated list of names (const char *const *) */
    RQ_BOOL,    /* true|false */
    RQ_INTEGER, /* decimal digits, no sign, in rule (const struct res_range *); written as %lld
                   (size >= 32) */
    RQ_NUMBER,  /* a number in rule (const struct res_range *); written as %.17g (size >= 32) */
    RQ_RAW,     /* any value buf holds, even empty: the caller checks its shape (lists) */
};

/* The closed interval an RQ_INTEGER or RQ_NUMBER value must fall in. */
struct res_range {
    double lo, hi;
};

/* Reads ?name= of the given kind into buf; returns buf when present and valid, or NULL when
 * absent or refused (then a problem naming the parameter is added to p). A value longer than
 * buf holds (at most 255 bytes but for RQ_RAW) is refused as too long, never read as absent.
 * rule: the names of RQ_ENUM, the range of RQ_INTEGER and RQ_NUMBER, else NULL. */
const char *res_query(struct req *r, const char *name, enum res_query_kind kind, const void *rule,
                      char *buf, size_t size, struct problems *p);
/* ?name=true|false: true only for true; false when absent or refused (with the problem). */
bool res_query_bool(struct req *r, const char *name, struct problems *p);

#endif
