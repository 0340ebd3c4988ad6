/* The log's read side: checkpoint, verifier key, entries, proofs and the audit bundle.
 *
 * The same log is served as C2SP tlog-tiles (https://c2sp.org/tlog-tiles) with the prefix
 * /api/v1/log: <prefix>/checkpoint, <prefix>/tile/<L>/<N>[.p/<W>] (stored hashes, table
 * log_tile) and <prefix>/tile/entries/<N>[.p/<W>] (entry bundles of log_leaf's leaves).
 *
 * Readers of entries (leaves, entry bundles, the audit bundle): auditors, owners and admins.
 * Team members do not read them: the leaves hold every review's decisions, and the log cannot
 * be scoped by team without breaking proofs. The checkpoint, the key, hash tiles and proofs
 * hold hashes and signatures only: anyone may read them (ROUTE_LOG_PUBLIC), so generic
 * monitors and witnesses can follow the log, unless CAPLEDGER_LOG_PUBLIC=0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gzip.h"
#include "core/ledger/tile.h"
#include "http/resource.h"
#include "store/ledger.h"

/* ?name= as a leaf index (at most 2^53 - 1, the largest integer JSON readers keep exact):
 * 1 when given, 0 when absent, -1 when refused (a problem names the parameter). */
static int leaf_index(struct req *r, const char *name, long long *out, struct problems *p)
{
    static const struct res_range LEAF = {0, 9007199254740991.0};
    char buf[32];
    size_t before = p->total;
    if (res_query(r, name, RQ_INTEGER, &LEAF, buf, sizeof buf, p)) {
        *out = strtoll(buf, NULL, 10);
        return 1;
    }
    return p->total > before ? -1 : 0;
}

/* The latest head, or NULL after answering. */
static json_t *head_or_answer(struct req *r)
{
    json_t *head = NULL;
    enum store_status st = store_log_head(r->app->store, &head);
    return req_stored(r, st, head, "log checkpoint");
}

static long long tree_size(const json_t *head)
{
    return (long long)json_integer_value(json_object_get(head, "tree_size"));
}

static void reply_text(struct req *r, const json_t *head, const char *member)
{
    const char *text = json_string_value(json_object_get(head, member));
    resp_bytes(r, 200, "text/plain; charset=utf-8", text, strlen(text), NULL);
}

static void log_checkpoint(struct req *r)
{
    json_t *head = head_or_answer(r);
    if (!head)
        return;
    reply_text(r, head, "checkpoint");
    json_decref(head);
}

static void log_key(struct req *r)
{
    json_t *head = head_or_answer(r);
    if (!head)
        return;
    reply_text(r, head, "verifier_key");
    json_decref(head);
}

/* The checks done: make(store, a, b) answered as 200, or the faults in p as 422. */
static void log_range_reply(struct req *r, const struct problems *p, long long a, long long b,
                            enum store_status (*make)(struct store *, long long, long long,
                                                      json_t **),
                            const char *what)
{
    if (p->total) {
        resp_invalid(r, p, NULL);
        return;
    }
    json_t *out = NULL;
    enum store_status st = make(r->app->store, a, b, &out);
    resp_stored(r, st, out, what);
}

static void log_entries(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *head = NULL;
    long long start = 0, end = -1;
    int has_start = leaf_index(r, "start", &start, &p);
    int has_end = leaf_index(r, "end", &end, &p);
    if (has_start == 0)
        problems_add(&p, "?start", "is required: the first leaf index");
    if (!p.total && !(head = head_or_answer(r)))
        goto out;
    long long size = tree_size(head);
    if (has_end == 0)
        end = start + LEDGER_MAX_ENTRIES < size ? start + LEDGER_MAX_ENTRIES : size;
    if (head && end > size)
        problems_add(&p, "?end", "must be at most the tree size, %lld", size);
    if (head && start > end)
        problems_add(&p, "?start", "must be at most end");
    if (head && end - start > LEDGER_MAX_ENTRIES)
        problems_add(&p, "?end", "at most %d leaves at once", LEDGER_MAX_ENTRIES);
    log_range_reply(r, &p, start, end, store_log_entries, "log entries");
out:
    json_decref(head);
    problems_free(&p);
}

/* Shared by both proofs: reads two indexes (the second defaulting to the tree size), checks
 * lo_min <= a, a < b (inclusion) or a <= b (consistency), b <= size, and calls make. */
static void log_proof(struct req *r, const char *a_name, const char *b_name, int strict,
                      enum store_status (*make)(struct store *, long long, long long, json_t **))
{
    struct problems p;
    problems_init(&p);
    json_t *head = NULL;
    long long a = 0, b = 0;
    int has_a = leaf_index(r, a_name, &a, &p);
    int has_b = leaf_index(r, b_name, &b, &p);
    char ptr[64];
    snprintf(ptr, sizeof ptr, "?%s", a_name);
    if (has_a == 0)
        problems_add(&p, ptr, "is required");
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    head = head_or_answer(r);
    if (!head)
        goto out;
    long long size = tree_size(head);
    if (has_b == 0)
        b = size;
    if (b > size) {
        snprintf(ptr, sizeof ptr, "?%s", b_name);
        problems_add(&p, ptr, "must be at most the tree size, %lld", size);
    }
    snprintf(ptr, sizeof ptr, "?%s", a_name);
    if (strict && a >= b)
        problems_add(&p, ptr, "must be below %s (%lld)", b_name, b);
    if (!strict && (a < 1 || a > b))
        problems_add(&p, ptr,
                     "must be from 1 to %s (%lld): a proof from the empty tree proves "
                     "nothing",
                     b_name, b);
    log_range_reply(r, &p, a, b, make, "log proof");
out:
    json_decref(head);
    problems_free(&p);
}

static void log_inclusion(struct req *r)
{
    log_proof(r, "index", "size", 1, store_log_inclusion);
}

static void log_consistency(struct req *r)
{
    log_proof(r, "first", "second", 0, store_log_consistency);
}

/* Tiles never change once served: a partial tile's width is in its path, and a wider one is
 * another resource. Private: only authenticated readers may see them. */
#define TILE_CACHE "Cache-Control: private, max-age=31536000, immutable\r\n"

/* What each malformed part of a tile path must be. */
static const char *tile_part_rule(enum tile_path_part part)
{
    switch (part) {
    case TILE_PATH_LEVEL:
        return "the level must be a decimal 0..63 without leading zeros (or \"entries\")";
    case TILE_PATH_INDEX:
        return "the index must be zero-padded groups of three digits, every group but the last "
               "prefixed with x (1234067 is x001/x234/067), with no leading x000 group and at "
               "most 6 groups";
    case TILE_PATH_WIDTH:
        return "the width of a partial tile (.p/W) must be a decimal 1..255 without leading "
               "zeros; a full tile has no .p/ suffix";
    case TILE_PATH_OK:
        break;
    }
    return "";
}

/* Parses the tile path "<level>/<rest>" (level "entries" for a bundle): 0 with the tile, or
 * -1 after answering 400 naming the malformed part. */
static int tile_request(struct req *r, const char *level_text, unsigned *level, uint64_t *index,
                        size_t *width, char *shown, size_t shown_size)
{
    snprintf(shown, shown_size, "tile/%s/%s", level_text, r->params[r->nparams - 1]);
    enum tile_path_part bad = tile_path_read(shown + 5, level, index, width);
    if (bad == TILE_PATH_OK && (strcmp(level_text, "entries") == 0) == (*level == TILE_ENTRIES))
        return 0;
    if (bad == TILE_PATH_OK)
        bad = TILE_PATH_LEVEL;
    resp_problem_with(r, 400, "bad-tile-path", "Bad tile path",
                      json_pack("{s:s}", "part", tile_path_part_name(bad)),
                      "%.200s: %s (C2SP tlog-tiles)", shown, tile_part_rule(bad));
    return -1;
}

static void tile_reply(struct req *r, enum store_status st, uint8_t *bytes, size_t len,
                       const char *shown)
{
    if (st == STORE_OK)
        resp_bytes(r, 200, "application/octet-stream", (const char *)bytes, len, TILE_CACHE);
    else if (st == STORE_NOT_FOUND)
        resp_problem(r, 404, "not-found", "Not found",
                     "%.200s is not part of the tree of the log's latest checkpoint", shown);
    else
        resp_store_error(r, st, "log tile");
    free(bytes);
}

static void log_tile(struct req *r)
{
    unsigned level;
    uint64_t index;
    size_t width, len = 0;
    char shown[256];
    if (tile_request(r, r->params[0], &level, &index, &width, shown, sizeof shown) != 0)
        return;
    uint8_t *bytes = NULL;
    enum store_status st = store_log_tile(r->app->store, level, index, width, &bytes, &len);
    tile_reply(r, st, bytes, len, shown);
}

static void log_entry_bundle(struct req *r)
{
    unsigned level;
    uint64_t index;
    size_t width, len = 0;
    char shown[256];
    if (tile_request(r, "entries", &level, &index, &width, shown, sizeof shown) != 0)
        return;
    uint8_t *bytes = NULL;
    long long too_long = -1;
    enum store_status st =
        store_log_entry_bundle(r->app->store, index, width, &bytes, &len, &too_long);
    if (st == STORE_INVALID) {
        /* Appends refuse such leaves (DECISION_RECORD_MAX); a log written before that rule
         * may hold one: this bundle cannot be served, the leaf itself can. */
        resp_problem(r, 404, "log-entry-too-large", "Log entry too large",
                     "leaf %lld is longer than an entry bundle can hold (%u bytes): read it "
                     "from /api/v1/audit/bundle",
                     too_long, TILE_ENTRY_MAX);
        return;
    }
    /* Entry bundles are JSON text, served gzip-compressed to clients that take it (C2SP
     * tlog-tiles); hash tiles are random bytes and stay as they are. */
    uint8_t *gz = NULL;
    size_t gz_len = 0;
    if (st == STORE_OK && gzip_accepted(req_header(r, "Accept-Encoding")) &&
        gzip_compress(bytes, len, &gz, &gz_len) == 0) {
        resp_bytes(r, 200, "application/octet-stream", (const char *)gz, gz_len,
                   TILE_CACHE "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n");
        free(gz);
        free(bytes);
        return;
    }
    if (st == STORE_OK) {
        resp_bytes(r, 200, "application/octet-stream", (const char *)bytes, len,
                   TILE_CACHE "Vary: Accept-Encoding\r\n");
        free(bytes);
        return;
    }
    tile_reply(r, st, bytes, len, shown);
}

/* The bundle is streamed: the reply starts with its first bytes, so that an error before
 * them (no database) is still a problem+json reply. */
struct bundle_sink {
    struct req *r;
    struct resp_stream *s;
};

static int bundle_write(void *ctx, const char *bytes, size_t len)
{
    struct bundle_sink *b = ctx;
    if (!b->s && !(b->s = resp_stream_begin(b->r, 200, "application/json")))
        return -1;
    return resp_stream_write(b->s, bytes, len);
}

static void audit_bundle(struct req *r)
{
    struct bundle_sink b = {r, NULL};
    int written = 0;
    enum store_status st = store_audit_bundle_stream(r->app->store, bundle_write, &b, &written);
    if (b.s)
        resp_stream_end(b.s, st == STORE_OK);
    else if (st != STORE_OK)
        resp_store_error(r, st, "audit bundle");
    else
        resp_store_error(r, STORE_ERROR, "audit bundle");
}

const struct route log_routes[] = {
    {"GET", "/api/v1/log/checkpoint", log_checkpoint, ROLES_ALL, ROUTE_LOG_PUBLIC, NULL, NULL},
    {"GET", "/api/v1/log/key", log_key, ROLES_ALL, ROUTE_LOG_PUBLIC, NULL, NULL},
    {"GET", "/api/v1/log/entries", log_entries, ROLES_LOG_READERS, 0, "start end", NULL},
    {"GET", "/api/v1/log/proof/inclusion", log_inclusion, ROLES_ALL, ROUTE_LOG_PUBLIC, "index size",
     NULL},
    {"GET", "/api/v1/log/proof/consistency", log_consistency, ROLES_ALL, ROUTE_LOG_PUBLIC,
     "first second", NULL},
    {"GET", "/api/v1/log/tile/entries/{index}", log_entry_bundle, ROLES_LOG_READERS,
     ROUTE_PATH_TAIL, NULL, NULL},
    {"GET", "/api/v1/log/tile/{level}/{index}", log_tile, ROLES_ALL,
     ROUTE_PATH_TAIL | ROUTE_LOG_PUBLIC, NULL, NULL},
    {"GET", "/api/v1/audit/bundle", audit_bundle, ROLES_LOG_READERS, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
