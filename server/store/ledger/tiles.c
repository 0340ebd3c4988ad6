/* The log's tiles in PostgreSQL (table log_tile, db/migrations/0070_log_tiles.sql): written with
 * each append, rebuilt from the leaves at start when they do not cover the head, and read by
 * the proofs (a few tiles per level: O(log n) hashes, whatever the log's size). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/tile.h"
#include "store/ledger.h"
#include "store/store_private.h"

static const char *SQL_TILE_NEW = "INSERT INTO log_tile (level, tile_index, hashes) "
                                  "VALUES ($1::smallint, $2::bigint, decode($3, 'hex'))";
static const char *SQL_TILE_GROW =
    "UPDATE log_tile SET hashes = hashes || decode($3, 'hex') WHERE level = $1::smallint AND "
    "tile_index = $2::bigint AND length(hashes) = $4::integer * 32";
/* The planned tiles, each cut to the width the proof reads: one primary-key look-up per tile
 * (LATERAL, so that no plan scans the table, e.g. with stale statistics after a rebuild). */
static const char *SQL_TILES_READ =
    "SELECT coalesce(json_agg(json_build_array(u.l, u.i, t.h)), '[]') "
    "FROM unnest($1::integer[], $2::bigint[], $3::integer[]) AS u(l, i, w) "
    "CROSS JOIN LATERAL (SELECT encode(substr(hashes, 1, u.w * 32), 'hex') AS h FROM log_tile "
    "WHERE level = u.l AND tile_index = u.i) t";
static const char *SQL_TILES_STATS =
    "SELECT coalesce(json_agg(json_build_object('level', level, 'tiles', n, 'hashes', h, 'last', "
    "m)), '[]') FROM (SELECT level, count(*) AS n, sum(length(hashes)) / 32 AS h, max(tile_index) "
    "AS m FROM log_tile GROUP BY level) s";
static const char *SQL_TILES_CLEAR = "DELETE FROM log_tile";
#define HASH_PAGE 10000
static const char *SQL_HASH_PAGE =
    "SELECT to_json(coalesce(string_agg(encode(leaf_hash, 'hex'), '' ORDER BY leaf_index), '')) "
    "FROM log_leaf WHERE leaf_index >= $1::bigint AND leaf_index < $2::bigint";

enum store_status store__tiles_write(struct store_conn *c, const struct tile_hash *h, size_t n,
                                     char *fault, size_t fault_size)
{
    for (size_t i = 0; i < n; i++) {
        char level[8], tile[24], pos[8], hex[2 * MERKLE_HASH_BYTES + 1];
        snprintf(level, sizeof level, "%u", h[i].level);
        snprintf(tile, sizeof tile, "%llu", (unsigned long long)(h[i].index / TILE_WIDTH));
        unsigned at = (unsigned)(h[i].index % TILE_WIDTH);
        snprintf(pos, sizeof pos, "%u", at);
        codec_hex_encode(h[i].hash, MERKLE_HASH_BYTES, hex);
        const char *p[] = {level, tile, hex, pos};
        long affected = 0;
        enum store_status st = store_exec_tx(c, at == 0 ? SQL_TILE_NEW : SQL_TILE_GROW,
                                             at == 0 ? 3 : STORE_ARGS(p), &affected);
        if (st == STORE_CONFLICT || (st == STORE_OK && affected != 1)) {
            snprintf(fault, fault_size,
                     "the log's tile %u/%llu does not end where stored hash %llu belongs",
                     h[i].level, (unsigned long long)(h[i].index / TILE_WIDTH),
                     (unsigned long long)h[i].index);
            return STORE_OK;
        }
        if (st != STORE_OK)
            return st;
    }
    return STORE_OK;
}

/* Fetches the tiles s lists into *rows (the caller decrefs it) and loads them into s. */
static enum store_status tiles_load(struct store_conn *c, struct tile_set *s, json_t **rows,
                                    uint8_t **bytes)
{
    *rows = NULL;
    *bytes = NULL;
    size_t cap = 3 * 32 * s->count + 8;
    char *levels = malloc(cap), *indexes = malloc(cap), *widths = malloc(cap);
    enum store_status st = STORE_ERROR;
    size_t total = 0;
    if (!levels || !indexes || !widths)
        goto out;
    size_t a = 0, b = 0, w = 0;
    levels[a++] = '{';
    indexes[b++] = '{';
    widths[w++] = '{';
    for (size_t i = 0; i < s->count; i++) {
        a += (size_t)snprintf(levels + a, cap - a, "%s%u", i ? "," : "", s->ref[i].level);
        b += (size_t)snprintf(indexes + b, cap - b, "%s%llu", i ? "," : "",
                              (unsigned long long)s->ref[i].index);
        w += (size_t)snprintf(widths + w, cap - w, "%s%zu", i ? "," : "", s->ref[i].width);
        total += s->ref[i].width;
    }
    snprintf(levels + a, cap - a, "}");
    snprintf(indexes + b, cap - b, "}");
    snprintf(widths + w, cap - w, "}");
    const char *p[] = {levels, indexes, widths};
    st = store_json_tx(c, SQL_TILES_READ, STORE_ARGS(p), rows);
    if (st != STORE_OK)
        goto out;
    *bytes = malloc(total * MERKLE_HASH_BYTES + 1);
    if (!*bytes) {
        st = STORE_ERROR;
        goto out;
    }
    size_t used = 0, i;
    json_t *row;
    json_array_foreach(*rows, i, row)
    {
        const char *hex = json_string_value(json_array_get(row, 2));
        size_t len = hex ? strlen(hex) / 2 : 0;
        if (!hex || len % MERKLE_HASH_BYTES || used + len > total * MERKLE_HASH_BYTES ||
            codec_hex_decode_exact(hex, *bytes + used, len) != 0 ||
            tile_set_load(s, (unsigned)json_integer_value(json_array_get(row, 0)),
                          (uint64_t)json_integer_value(json_array_get(row, 1)), *bytes + used,
                          len / MERKLE_HASH_BYTES) != 0) {
            /* A tile shorter than the tree it should cover: the proof reports it missing. */
            continue;
        }
        used += len;
    }
out:
    free(levels);
    free(indexes);
    free(widths);
    return st;
}

enum store_status store__tiles_prove(struct store_conn *c, enum store_tile_proof kind, uint64_t n,
                                     uint64_t m, uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    struct tile_set s;
    tile_set_init(&s);
    int planned = kind == STORE_TILE_INCLUSION     ? tile_plan_inclusion(&s, n, m)
                  : kind == STORE_TILE_CONSISTENCY ? tile_plan_consistency(&s, n, m)
                                                   : tile_plan_root(&s, n);
    if (planned != 0)
        return STORE_INVALID;
    json_t *rows = NULL;
    uint8_t *bytes = NULL;
    enum store_status st = tiles_load(c, &s, &rows, &bytes);
    if (st == STORE_OK) {
        int made = kind == STORE_TILE_INCLUSION     ? tile_inclusion_proof(&s, n, m, proof, len)
                   : kind == STORE_TILE_CONSISTENCY ? tile_consistency_proof(&s, n, m, proof, len)
                                                    : tile_root(&s, n, proof[0]);
        if (kind == STORE_TILE_ROOT)
            *len = 1;
        /* A tile missing or short for a size the head has: the tiles do not cover the log. */
        if (made != 0)
            st = STORE_ERROR;
    }
    json_decref(rows);
    free(bytes);
    return st;
}

/* True when the stored tiles hold exactly the stored hashes of a tree of `size` leaves. */
static enum store_status tiles_cover(struct store_conn *c, uint64_t size, int *cover)
{
    json_t *stats = NULL;
    enum store_status st = store_json_tx(c, SQL_TILES_STATS, 0, NULL, &stats);
    if (st != STORE_OK)
        return st;
    *cover = 1;
    size_t seen = 0, i;
    json_t *row;
    json_array_foreach(stats, i, row)
    {
        unsigned level = (unsigned)json_integer_value(json_object_get(row, "level"));
        uint64_t want = tile_level_hashes(size, level);
        uint64_t tiles = (want + TILE_WIDTH - 1) / TILE_WIDTH;
        if ((uint64_t)json_integer_value(json_object_get(row, "hashes")) != want ||
            (uint64_t)json_integer_value(json_object_get(row, "tiles")) != tiles ||
            (uint64_t)json_integer_value(json_object_get(row, "last")) + 1 != tiles)
            *cover = 0;
        seen++;
    }
    size_t levels = 0;
    for (unsigned l = 0; l < TILE_LEVELS; l++)
        if (tile_level_hashes(size, l) > 0)
            levels++;
    if (seen != levels)
        *cover = 0;
    json_decref(stats);
    return STORE_OK;
}

static const char *SQL_TILES_INSERT =
    "INSERT INTO log_tile (level, tile_index, hashes) SELECT l, i, decode(h, 'hex') FROM "
    "json_to_recordset($1::json) AS x(l smallint, i bigint, h text)";

/* Adds tile (level, tile) of count hashes to the batch rows. */
static int batch_tile(json_t *rows, unsigned level, uint64_t tile, const uint8_t *hashes,
                      size_t count)
{
    char *hex = malloc(2 * count * MERKLE_HASH_BYTES + 1);
    if (!hex)
        return -1;
    codec_hex_encode(hashes, count * MERKLE_HASH_BYTES, hex);
    int rc = json_array_append_new(
        rows, json_pack("{s:i, s:I, s:s}", "l", (int)level, "i", (json_int_t)tile, "h", hex));
    free(hex);
    return rc;
}

static enum store_status batch_flush(struct store_conn *c, json_t *rows)
{
    if (json_array_size(rows) == 0)
        return STORE_OK;
    char *text = json_dumps(rows, JSON_COMPACT);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text};
    enum store_status st = store_exec_tx(c, SQL_TILES_INSERT, STORE_ARGS(p), NULL);
    free(text);
    json_array_clear(rows);
    return st;
}

/* Writes every tile of the tree of the first `size` leaves, from log_leaf's hashes, a page at
 * a time: memory holds one tile per level and one page. */
static enum store_status tiles_rebuild(struct store_conn *c, uint64_t size)
{
    enum store_status st = store_exec_tx(c, SQL_TILES_CLEAR, 0, NULL, NULL);
    if (st != STORE_OK)
        return st;
    uint8_t(*cur)[TILE_WIDTH][MERKLE_HASH_BYTES] =
        calloc(TILE_LEVELS, sizeof(uint8_t[TILE_WIDTH][MERKLE_HASH_BYTES]));
    uint64_t done[TILE_LEVELS] = {0}; /* stored hashes of each level so far */
    json_t *rows = json_array();
    struct merkle_frontier f = {.count = 0};
    if (!cur || !rows) {
        st = STORE_ERROR;
        goto out;
    }
    for (uint64_t start = 0; start < size && st == STORE_OK; start += HASH_PAGE) {
        uint64_t end = start + HASH_PAGE < size ? start + HASH_PAGE : size;
        char a[24], b[24];
        snprintf(a, sizeof a, "%llu", (unsigned long long)start);
        snprintf(b, sizeof b, "%llu", (unsigned long long)end);
        const char *p[] = {a, b};
        json_t *page = NULL;
        st = store_json_tx(c, SQL_HASH_PAGE, STORE_ARGS(p), &page);
        if (st != STORE_OK)
            break;
        const char *hex = json_string_value(page);
        if (!hex || strlen(hex) != (end - start) * 2 * MERKLE_HASH_BYTES) {
            st = STORE_ERROR; /* a gap the database refuses: head_consistent saw the count */
            json_decref(page);
            break;
        }
        for (uint64_t i = start; i < end && st == STORE_OK; i++) {
            char part[2 * MERKLE_HASH_BYTES + 1];
            memcpy(part, hex + (i - start) * 2 * MERKLE_HASH_BYTES, 2 * MERKLE_HASH_BYTES);
            part[2 * MERKLE_HASH_BYTES] = '\0';
            uint8_t leaf[MERKLE_HASH_BYTES];
            if (codec_hex_decode_exact(part, leaf, sizeof leaf) != 0) {
                st = STORE_ERROR;
                break;
            }
            struct tile_hash out[TILE_LEVELS];
            size_t k = tile_append(&f, i, leaf, out);
            for (size_t j = 0; j < k; j++) {
                unsigned l = out[j].level;
                memcpy(cur[l][out[j].index % TILE_WIDTH], out[j].hash, MERKLE_HASH_BYTES);
                done[l]++;
                if (done[l] % TILE_WIDTH == 0 &&
                    batch_tile(rows, l, done[l] / TILE_WIDTH - 1, cur[l][0], TILE_WIDTH) != 0)
                    st = STORE_ERROR;
            }
        }
        json_decref(page);
        if (st == STORE_OK)
            st = batch_flush(c, rows);
    }
    /* The partial tiles at the right edge. */
    for (unsigned l = 0; l < TILE_LEVELS && st == STORE_OK; l++)
        if (done[l] % TILE_WIDTH && batch_tile(rows, l, done[l] / TILE_WIDTH, cur[l][0],
                                               (size_t)(done[l] % TILE_WIDTH)) != 0)
            st = STORE_ERROR;
    if (st == STORE_OK)
        st = batch_flush(c, rows);
out:
    free(cur);
    json_decref(rows);
    return st;
}

enum store_status store__tiles_ensure(struct store_conn *c, uint64_t size, const char *root_hex,
                                      int *rebuilt, char *evidence, size_t evidence_size)
{
    *rebuilt = 0;
    int cover = 0;
    enum store_status st = tiles_cover(c, size, &cover);
    if (st != STORE_OK)
        return st;
    if (!cover) {
        st = tiles_rebuild(c, size);
        if (st == STORE_OK) /* fresh statistics for the new rows */
            st = store_exec_tx(c, "ANALYZE log_tile", 0, NULL, NULL);
        if (st != STORE_OK)
            return st;
        *rebuilt = 1;
    }
    if (size == 0)
        return STORE_OK;
    uint8_t root[1][MERKLE_HASH_BYTES];
    size_t len = 0;
    st = store__tiles_prove(c, STORE_TILE_ROOT, size, 0, root, &len);
    char hex[2 * MERKLE_HASH_BYTES + 1] = "";
    if (st == STORE_OK)
        codec_hex_encode(root[0], MERKLE_HASH_BYTES, hex);
    if (st == STORE_ERROR || (st == STORE_OK && strcmp(hex, root_hex) != 0)) {
        snprintf(evidence, evidence_size,
                 "the log's tiles give root %s for size %llu, not the head's root %s",
                 hex[0] ? hex : "(missing tiles)", (unsigned long long)size, root_hex);
        return STORE_OK;
    }
    return st;
}

/* ---- serving tiles and entry bundles (C2SP tlog-tiles) ---- */

/* The latest checkpoint's size and, in the same snapshot, the first w hashes of one tile (null
 * when the row is missing or shorter). */
static const char *SQL_TILE_SERVE =
    "SELECT json_build_object('size', (SELECT max(tree_size) FROM log_checkpoint), 'hex', "
    "(SELECT encode(substr(hashes, 1, $3::integer * 32), 'hex') FROM log_tile WHERE level = "
    "$1::smallint AND tile_index = $2::bigint AND length(hashes) >= $3::integer * 32))";
/* The latest checkpoint's size and the leaves [$1, $2) that it covers, [index, hex or null
 * when longer than an entry can be]. */
static const char *SQL_BUNDLE_SERVE =
    "SELECT json_build_object('size', c.size, 'leaves', (SELECT coalesce(json_agg(json_build_array("
    "leaf_index, CASE WHEN length(leaf) <= $3::integer THEN encode(leaf, 'hex') END) ORDER BY "
    "leaf_index), '[]') FROM log_leaf WHERE leaf_index >= $1::bigint AND leaf_index < $2::bigint "
    "AND leaf_index < c.size)) FROM (SELECT max(tree_size) AS size FROM log_checkpoint) c";

static uint64_t size_of(const json_t *row)
{
    json_int_t n = json_integer_value(json_object_get(row, "size"));
    return n > 0 ? (uint64_t)n : 0;
}

enum store_status store_log_tile(struct store *s, unsigned level, uint64_t index, size_t width,
                                 uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (level >= TILE_LEVELS || width == 0 || width > TILE_WIDTH || index > INT64_MAX)
        return STORE_NOT_FOUND;
    char l[8], i[24], w[8];
    snprintf(l, sizeof l, "%u", level);
    snprintf(i, sizeof i, "%llu", (unsigned long long)index);
    snprintf(w, sizeof w, "%zu", width);
    const char *p[] = {l, i, w};
    json_t *row = NULL;
    enum store_status st = store_json(s, SQL_TILE_SERVE, STORE_ARGS(p), &row);
    if (st != STORE_OK)
        return st;
    const char *hex = json_string_value(json_object_get(row, "hex"));
    if (!tile_in_tree(size_of(row), level, index, width)) {
        st = STORE_NOT_FOUND;
    } else if (!hex || strlen(hex) != width * 2 * MERKLE_HASH_BYTES) {
        fprintf(stderr,
                "{\"level\":\"error\",\"msg\":\"the log's tile %u/%llu does not cover the "
                "checkpoint's tree\",\"size\":%llu}\n",
                level, (unsigned long long)index, (unsigned long long)size_of(row));
        st = STORE_ERROR;
    } else if (!(*out = malloc(width * MERKLE_HASH_BYTES)) ||
               codec_hex_decode_exact(hex, *out, width * MERKLE_HASH_BYTES) != 0) {
        free(*out);
        *out = NULL;
        st = STORE_ERROR;
    } else {
        *len = width * MERKLE_HASH_BYTES;
    }
    json_decref(row);
    return st;
}

enum store_status store_log_entry_bundle(struct store *s, uint64_t index, size_t width,
                                         uint8_t **out, size_t *len, long long *too_long)
{
    *out = NULL;
    *len = 0;
    *too_long = -1;
    if (width == 0 || width > TILE_WIDTH || index > (uint64_t)INT64_MAX / TILE_WIDTH - 1)
        return STORE_NOT_FOUND;
    char a[24], b[24], m[16];
    snprintf(a, sizeof a, "%llu", (unsigned long long)(index * TILE_WIDTH));
    snprintf(b, sizeof b, "%llu", (unsigned long long)(index * TILE_WIDTH + width));
    snprintf(m, sizeof m, "%u", TILE_ENTRY_MAX);
    const char *p[] = {a, b, m};
    json_t *row = NULL;
    enum store_status st = store_json(s, SQL_BUNDLE_SERVE, STORE_ARGS(p), &row);
    if (st != STORE_OK)
        return st;
    const json_t *leaves = json_object_get(row, "leaves");
    size_t total = 0, k;
    json_t *leaf;
    if (!tile_in_tree(size_of(row), TILE_ENTRIES, index, width)) {
        st = STORE_NOT_FOUND;
        goto out;
    }
    st = STORE_ERROR;
    if (json_array_size(leaves) != width) /* leaves missing below the checkpoint's size */
        goto out;
    json_array_foreach(leaves, k, leaf)
    {
        const char *hex = json_string_value(json_array_get(leaf, 1));
        if (!hex) {
            *too_long = (long long)json_integer_value(json_array_get(leaf, 0));
            st = STORE_INVALID;
            goto out;
        }
        total += 2 + strlen(hex) / 2;
    }
    uint8_t *buf = malloc(total ? total : 1), *leaf_bytes = malloc(TILE_ENTRY_MAX);
    size_t used = 0;
    json_array_foreach(leaves, k, leaf)
    {
        const char *hex = json_string_value(json_array_get(leaf, 1));
        size_t n = strlen(hex) / 2;
        if (!buf || !leaf_bytes || codec_hex_decode_exact(hex, leaf_bytes, n) != 0)
            break;
        used += tile_entry_put(buf + used, total - used, leaf_bytes, n);
    }
    free(leaf_bytes);
    if (buf && used == total) {
        *out = buf;
        *len = total;
        st = STORE_OK;
    } else {
        free(buf);
    }
out:
    json_decref(row);
    return st;
}
