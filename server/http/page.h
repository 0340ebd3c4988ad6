/* The one pagination path of every list: ?limit= and ?cursor= read into a struct page, the
 * store asked for one row more than a page, and {items, next_cursor} answered with the cursor
 * made from the last item kept. Cursors are opaque to clients (core/cursor.h encodes them);
 * each list says which key its cursor holds, and a cursor of another shape is refused. */
#ifndef CAPLEDGER_HTTP_PAGE_H
#define CAPLEDGER_HTTP_PAGE_H

#include "http/internal.h"

#define PAGE_DEFAULT_LIMIT 50
#define PAGE_MAX_LIMIT 500

enum page_cursor {
    PAGE_TEXT,   /* any key this server encoded: a name, or a key the store takes apart */
    PAGE_UUID,   /* an id */
    PAGE_SERIAL, /* a bigserial or a leaf index: 1-18 digits */
    PAGE_AT_ID,  /* "<at>|<id>": the keyset of the lists ordered by (created_at, id) */
};

struct page {
    enum page_cursor kind;
    int limit;                       /* the page size: ?limit= (default 50, 1..500) */
    int fetch;                       /* limit + 1: the rows to ask the store for */
    const char *after;               /* the decoded cursor; NULL on the first page */
    const char *after_at, *after_id; /* PAGE_AT_ID: its two halves */
    long long after_index;           /* PAGE_SERIAL: its number; -1 on the first page */
    char key[256], at[64], id[64];
};

/* Reads ?limit= and ?cursor= into pg. A bad limit or a cursor this server did not encode is
 * answered (422) at once: returns -1. A cursor of another shape than kind is added to p as
 * ?cursor, so that it is answered with the list's other query faults, or answered at once when
 * p is NULL (-1). Returns 0 otherwise. */
int page_begin(struct req *r, struct page *pg, enum page_cursor kind, struct problems *p);

/* Answers {items, next_cursor}: items hold pg->fetch rows at most; the extra one is dropped
 * and the cursor is made from the last item kept: its key_field (a string or an integer), or
 * for PAGE_AT_ID its key_field, '|' and its "id". */
void page_reply(struct req *r, const struct page *pg, json_t *items_stolen, const char *key_field);

/* After the store call: st == STORE_OK answers page_reply; STORE_INVALID on a later page is a
 * cursor that decoded but is not one of this list (422); any other fault resp_store_error
 * naming what. items stolen. */
void page_reply_fetched(struct req *r, const struct page *pg, enum store_status st,
                        json_t *items_stolen, const char *key_field, const char *what);

/* A whole list keyed on one field (teams and clusters by name): page_begin, then
 * fetch(store, after, fetch, &items), then page_reply_fetched. */
typedef enum store_status (*page_fetch_fn)(struct store *s, const char *after, int limit,
                                           json_t **out);
void page_list(struct req *r, enum page_cursor kind, page_fetch_fn fetch, const char *what,
               const char *key_field);

#endif
