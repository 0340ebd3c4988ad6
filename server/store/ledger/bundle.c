/* The signed decision log: the audit bundle, streamed. */
#include "store/ledger/ledger_private.h"

static const char *SQL_BUNDLE_KEYS =
    "SELECT coalesce(json_object_agg(k.key_id, json_build_object('public_key', " B64(
        "k.public_key") ", 'owner', u.username, 'revoked_at', "
                        "CASE WHEN k.revoked_at IS NOT NULL THEN " UTC_MICROS(
                            "k.revoked_at") " END)), '{}') "
                                            "FROM signing_key k JOIN app_user u ON u.id = "
                                            "k.user_id "
                                            "WHERE k.key_id IN (SELECT "
                                            "json_array_elements_text($1::json))";
static const char *SQL_BUNDLE_COMPARISONS =
    "SELECT coalesce(json_object_agg(c.sha256, json_build_object('scenario', c.resolved, "
    "'result', c.result)), '{}') FROM comparison c "
    "WHERE c.sha256 IN (SELECT json_array_elements_text($1::json))";

struct citations {
    json_t *order; /* array */
    json_t *seen;  /* object: string -> true */
};

static void cite(struct citations *set, const json_t *s)
{
    const char *text = jcs_text(s);
    if (!text || json_object_get(set->seen, text))
        return;
    json_object_set_new(set->seen, text, json_true());
    json_array_append(set->order, (json_t *)s);
}

/* The key ids and comparison hashes a leaf's record names. Only a leaf with a top-level
 * "record" member can name any (key events have none), so the others are not parsed. A leaf
 * that does not parse is skipped here: the verifier names it. */
static void collect_citations(const uint8_t *leaf_bytes, size_t len, struct citations *key_ids,
                              struct citations *hashes)
{
    static const char member[] = "\"record\":";
    if (!memmem(leaf_bytes, len, member, sizeof member - 1))
        return;
    json_t *leaf = json_loadb((const char *)leaf_bytes, len, 0, NULL);
    const json_t *record = json_object_get(leaf, "record");
    cite(key_ids, json_object_get(record, "signer_key_id"));
    size_t k;
    json_t *h;
    json_array_foreach(json_object_get(record, "comparison_sha256"), k, h) cite(hashes, h);
    json_decref(leaf);
}

/* The leaves of a page as one JSON string, "b64,b64,..." (PostgreSQL's base64 with its line
 * breaks): an order of magnitude cheaper to make and read than a JSON array of them. */
static const char *SQL_BUNDLE_PAGE =
    "SELECT to_json(coalesce(string_agg(encode(leaf, 'base64'), ',' ORDER BY leaf_index), '')) "
    "FROM log_leaf WHERE leaf_index >= $1::bigint AND leaf_index < $2::bigint";

static bool is_b64(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '+' || ch == '/' || ch == '=';
}

#define BUNDLE_PAGE 2000 /* leaves read and written at once */

struct bundle_out {
    store_sink sink;
    void *ctx;
    int *written;
    int failed;
};

static void put(struct bundle_out *o, const char *bytes, size_t len)
{
    if (o->failed || len == 0)
        return;
    *o->written = 1;
    if (o->sink(o->ctx, bytes, len) != 0)
        o->failed = 1;
}

/* `,"name":` then v as resp_json dumps it (first member: `{"name":`). */
static int put_member(struct bundle_out *o, const char *name, const json_t *v, int first)
{
    char head[64];
    int n = snprintf(head, sizeof head, "%s\"%s\":", first ? "{" : ",", name);
    size_t len = 0;
    char *text = jcs_dump(v, &len);
    if (!text)
        return -1;
    put(o, head, (size_t)n);
    put(o, text, len);
    free(text);
    return 0;
}

/* Writes the leaves of one page (text as SQL_BUNDLE_PAGE makes it) as JSON strings, each after
 * a comma unless it is the bundle's first, and collects their citations. -1 when a leaf is not
 * base64 (the database gave something else) or memory runs out. */
static int put_page(struct bundle_out *o, const char *text, int *any, struct citations *key_ids,
                    struct citations *hashes)
{
    size_t cap = strlen(text) + 3;
    char *b64 = malloc(cap);
    uint8_t *bytes = malloc(cap);
    int rc = 0;
    if (!b64 || !bytes)
        rc = -1;
    for (const char *p = text; rc == 0 && *p;) {
        size_t n = 0;
        b64[n++] = '"';
        for (; *p && *p != ','; p++)
            if (*p != '\n') {
                if (!is_b64(*p)) {
                    rc = -1;
                    break;
                }
                b64[n++] = *p;
            }
        if (*p == ',')
            p++;
        if (rc != 0)
            break;
        long len = codec_b64_decode(b64 + 1, n - 1, bytes, cap);
        if (len >= 0)
            collect_citations(bytes, (size_t)len, key_ids, hashes);
        b64[n++] = '"';
        if (*any)
            put(o, ",", 1);
        put(o, b64, n);
        *any = 1;
    }
    free(b64);
    free(bytes);
    return rc;
}

enum store_status store_audit_bundle_stream(struct store *s, store_sink sink, void *ctx,
                                            int *written)
{
    *written = 0;
    struct bundle_out o = {sink, ctx, written, 0};
    json_t *head = NULL, *page = NULL, *keys = NULL, *comparisons = NULL;
    struct citations key_ids = {json_array(), json_object()};
    struct citations hashes = {json_array(), json_object()};
    char *ids_text = NULL, *hashes_text = NULL;
    enum store_status st = STORE_ERROR;
    struct store_conn *c = NULL;
    if (!key_ids.order || !key_ids.seen || !hashes.order || !hashes.seen)
        goto out;
    c = store_acquire(s, 2000);
    if (!c) {
        st = STORE_UNAVAILABLE;
        goto out;
    }
    /* The checkpoint first, then exactly its leaves: leaves are immutable, so a concurrent
     * append cannot make the two disagree. */
    st = store_json_tx(c, SQL_HEAD, 0, NULL, &head);
    if (st != STORE_OK)
        goto out;
    long long size = (long long)json_integer_value(json_object_get(head, "tree_size"));
    st = STORE_ERROR;
    if (put_member(&o, "origin", json_object_get(head, "origin"), 1) != 0 ||
        put_member(&o, "verifier_key", json_object_get(head, "verifier_key"), 0) != 0 ||
        put_member(&o, "checkpoint", json_object_get(head, "checkpoint"), 0) != 0)
        goto out;
    put(&o, ",\"leaves\":[", 11);
    st = STORE_OK;
    int any = 0;
    for (long long start = 0; start < size && st == STORE_OK && !o.failed; start += BUNDLE_PAGE) {
        long long end = start + BUNDLE_PAGE < size ? start + BUNDLE_PAGE : size;
        char a[24], b[24];
        snprintf(a, sizeof a, "%lld", start);
        snprintf(b, sizeof b, "%lld", end);
        const char *pe[] = {a, b};
        st = store_json_tx(c, SQL_BUNDLE_PAGE, STORE_ARGS(pe), &page);
        if (st != STORE_OK)
            break;
        /* Fewer leaves than the range when one was removed behind the database's back: the
         * bundle carries what is stored, and capledger verify names what is missing. */
        if (!json_string_value(page) ||
            put_page(&o, json_string_value(page), &any, &key_ids, &hashes) != 0) {
            st = STORE_ERROR;
            break;
        }
        json_decref(page);
        page = NULL;
    }
    if (st != STORE_OK)
        goto out;
    put(&o, "]", 1);
    ids_text = json_dumps(key_ids.order, JSON_COMPACT);
    hashes_text = json_dumps(hashes.order, JSON_COMPACT);
    if (!ids_text || !hashes_text) {
        st = STORE_ERROR;
        goto out;
    }
    const char *pk[] = {ids_text};
    st = store_json_tx(c, SQL_BUNDLE_KEYS, STORE_ARGS(pk), &keys);
    if (st != STORE_OK)
        goto out;
    const char *pc[] = {hashes_text};
    st = store_json_tx(c, SQL_BUNDLE_COMPARISONS, STORE_ARGS(pc), &comparisons);
    if (st != STORE_OK)
        goto out;
    if (put_member(&o, "signer_keys", keys, 0) != 0 ||
        put_member(&o, "comparisons", comparisons, 0) != 0) {
        st = STORE_ERROR;
        goto out;
    }
    put(&o, "}", 1);
out:
    if (c)
        store_release(s, c);
    json_decref(head);
    json_decref(page);
    json_decref(keys);
    json_decref(comparisons);
    json_decref(key_ids.order);
    json_decref(key_ids.seen);
    json_decref(hashes.order);
    json_decref(hashes.seen);
    free(ids_text);
    free(hashes_text);
    return st == STORE_OK && o.failed ? STORE_ERROR : st;
}
