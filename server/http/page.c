/* The one pagination path; see page.h. */
#include "http/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"
#include "http/query.h"

static void answer_one(struct req *r, const char *pointer, const char *message)
{
    struct problems p;
    problems_init(&p);
    problems_add(&p, pointer, "%s", message);
    resp_invalid(r, &p, NULL);
    problems_free(&p);
}

/* ?name= as text (the page checks its shape): 1 when present, 0 when absent, -1 after answering
 * 422 (too long for buf). */
static int page_param(struct req *r, const char *name, char *buf, size_t size)
{
    struct problems p;
    problems_init(&p);
    int given = res_query(r, name, RQ_RAW, NULL, buf, size, &p) != NULL;
    if (p.total) {
        resp_invalid(r, &p, NULL);
        given = -1;
    }
    problems_free(&p);
    return given;
}

/* ?limit= into *limit (the default when absent): 0, or -1 after answering 422. */
static int read_limit(struct req *r, int *limit)
{
    static const struct res_range range = {1, PAGE_MAX_LIMIT};
    struct problems p;
    char buf[32];
    problems_init(&p);
    const char *v = res_query(r, "limit", RQ_INTEGER, &range, buf, sizeof buf, &p);
    *limit = v ? atoi(v) : PAGE_DEFAULT_LIMIT;
    int rc = p.total ? -1 : 0;
    if (rc)
        resp_invalid(r, &p, NULL);
    problems_free(&p);
    return rc;
}

/* 1 when the decoded key has the shape of kind (and pg holds its parts). */
static int take_key(struct page *pg)
{
    const char *k = pg->after;
    size_t n = strlen(k);
    switch (pg->kind) {
    case PAGE_TEXT:
        return 1;
    case PAGE_UUID:
        return uuid_valid(k);
    case PAGE_SERIAL:
        if (n == 0 || n > 18 || strspn(k, "0123456789") != n)
            return 0;
        pg->after_index = strtoll(k, NULL, 10);
        return 1;
    case PAGE_AT_ID: {
        const char *bar = strchr(k, '|');
        size_t at_len = bar ? (size_t)(bar - k) : 0;
        struct timefmt_fields t;
        /* The time as the server wrote it (RFC 3339 with an offset), never a word PostgreSQL
         * would read as a time of its own ("now", "infinity", "epoch", "J2451187"). */
        if (!bar || at_len == 0 || at_len >= sizeof pg->at || strlen(bar + 1) >= sizeof pg->id ||
            !timefmt_parse(k, at_len, &t) || !t.has_offset || !bar[1] || t.offset_s <= -16 * 3600 ||
            t.offset_s >= 16 * 3600) /* PostgreSQL's offsets */
            return 0;
        memcpy(pg->at, k, at_len);
        pg->at[at_len] = '\0';
        snprintf(pg->id, sizeof pg->id, "%s", bar + 1);
        pg->after_at = pg->at;
        pg->after_id = pg->id;
        return 1;
    }
    }
    return 0;
}

int page_begin(struct req *r, struct page *pg, enum page_cursor kind, struct problems *p)
{
    memset(pg, 0, sizeof *pg);
    pg->kind = kind;
    pg->after_index = -1;
    if (read_limit(r, &pg->limit) != 0)
        return -1;
    pg->fetch = pg->limit + 1;
    char raw[512];
    int given = page_param(r, "cursor", raw, sizeof raw);
    if (given < 0)
        return -1;
    if (!given || !raw[0]) /* an empty cursor is the first page: a shell loop's first turn */
        return 0;
    if (cursor_decode(raw, pg->key, sizeof pg->key) != 0) {
        answer_one(r, "?cursor", "query parameter cursor is not a cursor this server issued");
        return -1;
    }
    pg->after = pg->key;
    if (take_key(pg))
        return 0;
    pg->after = NULL;
    if (p) {
        problems_add(p, "?cursor", "query parameter cursor is not a cursor of this list");
        return 0;
    }
    answer_one(r, "?cursor", "query parameter cursor is not a cursor of this list");
    return -1;
}

/* The cursor of the page after the one ending with last, or NULL. */
static char *next_cursor(const struct page *pg, const json_t *last, const char *key_field)
{
    char key[256];
    const json_t *k = json_object_get(last, key_field);
    if (pg->kind == PAGE_AT_ID) {
        const json_t *id = json_object_get(last, "id");
        if (!json_is_string(k) || !json_is_string(id))
            return NULL;
        snprintf(key, sizeof key, "%s|%s", json_string_value(k), json_string_value(id));
    } else if (json_is_string(k)) {
        snprintf(key, sizeof key, "%s", json_string_value(k));
    } else if (json_is_integer(k)) {
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(k));
    } else {
        return NULL;
    }
    return cursor_encode(key);
}

void page_reply(struct req *r, const struct page *pg, json_t *items, const char *key_field)
{
    size_t keep = (size_t)pg->limit;
    json_t *next = json_null();
    if (json_array_size(items) > keep) {
        while (json_array_size(items) > keep)
            json_array_remove(items, keep);
        char *cursor = next_cursor(pg, json_array_get(items, keep - 1), key_field);
        if (cursor) {
            json_decref(next);
            next = json_string(cursor);
            free(cursor);
        }
    }
    resp_json(r, 200, json_pack("{s:o, s:o}", "items", items, "next_cursor", next));
}

void page_reply_fetched(struct req *r, const struct page *pg, enum store_status st, json_t *items,
                        const char *key_field, const char *what)
{
    if (st == STORE_OK) {
        page_reply(r, pg, items, key_field);
        return;
    }
    json_decref(items);
    if (st == STORE_INVALID && pg->after) /* a key of the right shape the database refused */
        answer_one(r, "?cursor", "query parameter cursor is not a cursor of this list");
    else
        resp_store_error(r, st, what);
}

void page_list(struct req *r, enum page_cursor kind, page_fetch_fn fetch, const char *what,
               const char *key_field)
{
    struct page pg;
    if (page_begin(r, &pg, kind, NULL) != 0)
        return;
    json_t *items = NULL;
    enum store_status st = fetch(r->app->store, pg.after, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, key_field, what);
}
