/* The signed decision log. See ledger.h for the append protocol; docs/ledger-format.md for formats.
 *
 * The head row keeps the tree's compact range (struct merkle_frontier, core/ledger/merkle.h), so
 * an append costs O(log n) hashes whatever the log's size. The old frontier, reversed, is also
 * the inclusion proof of the new leaf, so POST /decisions answers its proof without reading
 * other leaves. */
#include "store/ledger.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/ledger/decision_rules.h"
#include "core/ledger/jcs.h"
#include "core/ledger/keylog.h"
#include "core/ledger/gate.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "core/ledger/recompute.h"
#include "core/ledger/tile.h"
#include "core/validate.h"
#include "store/alerts.h"
#include "store/reviews.h"
#include "store/store_private.h"

#define UTC_MICROS(expr)                                                                           \
    "to_char((" expr ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
/* PostgreSQL's base64 breaks lines every 76 characters; docs/ledger-format.md's has no line breaks.
 */
#define B64(expr) "translate(encode(" expr ", 'base64'), E'\\n', '')"
/* Key events are found in log_leaf itself (db/migrations/0056_log_leaf_key_events.sql has the
 * index these two expressions use): a key event leaf begins with {"at": and its first
 * "key_id":" is its key id. The log_key_event table is never what a check trusts. */
#define KEY_EVENT_LEAF(leaf) "substring(" leaf " FROM 1 FOR 6) = '\\x7b226174223a'::bytea"
#define KEY_EVENT_KEY(leaf)                                                                        \
    "substring(" leaf " FROM position('\\x226b65795f6964223a22'::bytea IN " leaf ") + 10 FOR 64)"
/* The key event leaves of key `key` (an SQL text expression), as a FROM-less condition on l. */
#define KEY_EVENTS_OF(key)                                                                         \
    KEY_EVENT_LEAF("l.leaf") " AND " KEY_EVENT_KEY("l.leaf") " = convert_to(" key ", 'UTF8')"

static const char *SQL_INIT_HEAD =
    "INSERT INTO log_head (origin, verifier_key, size, root) VALUES ($1, $2, 0, decode($3, 'hex')) "
    "ON CONFLICT (singleton) DO NOTHING";
static const char *SQL_LOCK_HEAD =
    "SELECT json_build_object('origin', origin, 'verifier_key', verifier_key, 'size', size, "
    "'root', encode(root, 'hex'), 'frontier', encode(frontier, 'hex')) FROM log_head FOR UPDATE";
static const char *SQL_INSERT_CHECKPOINT =
    "INSERT INTO log_checkpoint (tree_size, root, note) VALUES ($1::bigint, decode($2, 'hex'), $3) "
    "ON CONFLICT (tree_size) DO NOTHING";
/* What the stored checkpoints and leaves say about a head of size $1, and the stored root of
 * size $2 (the checkpoint this server remembers signing or observing; all index look-ups). */
static const char *SQL_HEAD_EVIDENCE =
    "SELECT json_build_object('checkpoint_root', (SELECT encode(root, 'hex') FROM log_checkpoint "
    "WHERE tree_size = $1::bigint), 'latest_checkpoint', (SELECT max(tree_size) FROM "
    "log_checkpoint), 'leaves', (SELECT coalesce(max(leaf_index) + 1, 0) FROM log_leaf), "
    "'seen_checkpoint_root', (SELECT encode(root, 'hex') FROM log_checkpoint WHERE tree_size = "
    "$2::bigint))";
#define LEAF_PAGE 5000
/* A page of leaves as one JSON string "<index>:<hex leaf>:<hex hash>,...", in index order: an order
 * of magnitude cheaper to make and read than an array of objects. */
static const char *SQL_LEAF_PAGE =
    "SELECT json_build_object('n', count(*), 'first', min(leaf_index), 'last', max(leaf_index), "
    "'text', coalesce(string_agg(leaf_index || ':' || encode(leaf, 'hex') || ':' || "
    "encode(leaf_hash, 'hex'), ',' "
    "ORDER BY leaf_index), '')) FROM log_leaf WHERE leaf_index >= $1::bigint AND leaf_index < "
    "least($1::bigint + 5000, $2::bigint)";
static const char *SQL_CHECKPOINT_AT =
    "SELECT json_build_object('tree_size', tree_size, 'root', encode(root, 'hex')) "
    "FROM log_checkpoint WHERE tree_size = $1::bigint";

/* The signer's key, locked against revocation until this append commits. */
static const char *SQL_SIGNER =
    "SELECT json_build_object('user_id', k.user_id, 'username', u.username, 'role', u.role, "
    "'disabled', u.disabled_at IS NOT NULL, 'revoked', k.revoked_at IS NOT NULL, "
    "'public_key', " B64("k.public_key") ") "
                                         "FROM signing_key k JOIN app_user u ON u.id = k.user_id "
                                         "WHERE k.key_id = $1 FOR SHARE OF k";

static const char *SQL_FACTS =
    "SELECT json_build_object("
    "'review', (SELECT json_build_object('id', r.id, 'owner', r.owner) FROM review r "
    "  WHERE r.id = $1::uuid), "
    "'duplicate', EXISTS (SELECT 1 FROM decision d WHERE d.id = $2::uuid), "
    "'supersedes', (SELECT json_build_object('review_id', d.review_id, 'superseded_by', "
    "  (SELECT n.id FROM decision n WHERE n.supersedes = d.id)) FROM decision d "
    "  WHERE d.id = $3::uuid), "
    "'comparisons', (SELECT coalesce(json_agg(json_build_object('sha256', e.h, "
    "  'stored', c.sha256 IS NOT NULL, 'result', CASE WHEN e.i = 1 THEN c.result END) "
    "  ORDER BY e.i), '[]') FROM json_array_elements_text($4::json) WITH ORDINALITY AS e(h, i) "
    "  LEFT JOIN comparison c ON c.sha256 = e.h), "
    "'received_at', " UTC_MICROS("now()") ")";

static const char *SQL_INSERT_LEAF = "INSERT INTO log_leaf (leaf_index, leaf, leaf_hash) "
                                     "VALUES ($1::bigint, decode($2, 'base64'), decode($3, 'hex'))";
static const char *SQL_INSERT_DECISION =
    "INSERT INTO decision (id, review_id, decision, chosen_option, comparison_sha256, record, "
    "signature, signer_key_id, signer, supersedes, leaf_index, received_at) "
    "VALUES ($1::uuid, $2::uuid, $3, $4, ARRAY(SELECT json_array_elements_text($5::json)), "
    "$6::jsonb, $7, $8, $9, $10::uuid, $11::bigint, $12::timestamptz)";
static const char *SQL_UPDATE_HEAD =
    "UPDATE log_head SET size = $1::bigint, root = decode($2, 'hex'), "
    "frontier = decode($3, 'hex'), updated_at = now()";
static const char *SQL_REVIEW_DECIDED =
    "UPDATE review SET status = 'decided', version = version + 1, updated_at = now() "
    "WHERE id = $1::uuid";

/* A decision row as the API serves it, with its leaf, its signer's enrolment leaf and its
 * successor's leaf (formatted by hand: clang-format splits these strings a character a line). */
// clang-format off
#define DECISION_JSON                                                                              \
    "json_build_object('id', d.id, 'review_id', d.review_id, 'decision', d.decision, "            \
    "'chosen_option', d.chosen_option, 'comparison_sha256', to_json(d.comparison_sha256), "       \
    "'supersedes', d.supersedes, 'superseded_by', (SELECT min(n.id::text) FROM decision n "       \
    "WHERE n.supersedes = d.id), 'signer', d.signer, 'signer_key_id', d.signer_key_id, "          \
    "'leaf_index', d.leaf_index, 'received_at', " UTC_MICROS("d.received_at") ", "                \
    "'record', d.record, 'signature', d.signature, "                                              \
    "'leaf', (SELECT " B64("l.leaf") " FROM log_leaf l WHERE l.leaf_index = d.leaf_index), "      \
    "'enrol_leaf', (SELECT " B64("l.leaf") " FROM log_leaf l "                                    \
    "WHERE " KEY_EVENTS_OF("d.signer_key_id") " ORDER BY l.leaf_index LIMIT 1), "                 \
    "'successor_leaf', (SELECT " B64("l.leaf") " FROM decision n "                                \
    "JOIN log_leaf l ON l.leaf_index = n.leaf_index WHERE n.supersedes = d.id "                   \
    "ORDER BY n.leaf_index LIMIT 1))"
// clang-format on
#define DECISION_VISIBLE(param)                                                                    \
    "(" param "::jsonb = 'null'::jsonb OR EXISTS (SELECT 1 FROM review r JOIN workload w "         \
    "ON w.id = ANY (r.workload_ids) WHERE r.id = d.review_id AND w.team IN "                       \
    "(SELECT jsonb_array_elements_text(" param "::jsonb))))"

static const char *SQL_DECISION_GET =
    "SELECT " DECISION_JSON " FROM decision d WHERE d.id = $1::uuid AND " DECISION_VISIBLE("$2");
static const char *SQL_DECISION_LIST =
    "SELECT coalesce(json_agg(j ORDER BY leaf_index), '[]') FROM (SELECT " DECISION_JSON
    " AS j, d.leaf_index FROM decision d WHERE ($1::uuid IS NULL OR d.review_id = $1::uuid)"
    " AND " DECISION_VISIBLE("$2") " AND d.leaf_index > $3::bigint"
                                   " ORDER BY d.leaf_index LIMIT $4::integer) t";

/* The latest checkpoint, with the cosignature lines its witnesses answered (a note may carry
 * any number of signature lines; verifiers ignore the keys they do not hold). */
static const char *SQL_HEAD =
    "SELECT json_build_object('origin', h.origin, 'verifier_key', h.verifier_key, "
    "'tree_size', c.tree_size, 'root', encode(c.root, 'hex'), 'checkpoint', c.note || "
    "coalesce((SELECT string_agg(x.line, '' ORDER BY x.witness) FROM log_cosignature x "
    "WHERE x.tree_size = c.tree_size), '')) "
    "FROM log_head h CROSS JOIN LATERAL (SELECT * FROM log_checkpoint "
    "ORDER BY tree_size DESC LIMIT 1) c";
static const char *SQL_ENTRIES = "SELECT coalesce(json_agg(" B64(
    "leaf") " ORDER BY leaf_index), '[]') FROM log_leaf "
            "WHERE leaf_index >= $1::bigint AND leaf_index < $2::bigint";
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

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : NULL;
}

static json_t *hex_array(const uint8_t (*hashes)[MERKLE_HASH_BYTES], size_t n, int reversed)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        char hex[2 * MERKLE_HASH_BYTES + 1];
        codec_hex_encode(hashes[reversed ? n - 1 - i : i], MERKLE_HASH_BYTES, hex);
        json_array_append_new(a, json_string(hex));
    }
    return a;
}

/* Signs the checkpoint of (size, root) and stores it. The primary key on tree_size makes a
 * second, different root for a size impossible; the same checkpoint again is a no-op. */
static enum store_status sign_checkpoint(struct store_conn *c, const char *origin, uint64_t size,
                                         const uint8_t root[MERKLE_HASH_BYTES],
                                         const unsigned char *sk, char **note_out)
{
    char *body = note_checkpoint_body(origin, size, root);
    if (!body)
        return STORE_ERROR;
    size_t len = 0;
    int status = 0;
    char *note = note_sign(body, strlen(body), origin, sk, &len, &status);
    free(body);
    if (!note)
        return STORE_ERROR;
    char size_text[24], root_hex[2 * MERKLE_HASH_BYTES + 1];
    snprintf(size_text, sizeof size_text, "%llu", (unsigned long long)size);
    codec_hex_encode(root, MERKLE_HASH_BYTES, root_hex);
    const char *p[] = {size_text, root_hex, note};
    long inserted = 0;
    enum store_status st = store_exec_tx(c, SQL_INSERT_CHECKPOINT, 3, p, &inserted);
    if (st == STORE_OK && inserted == 0 && note_out)
        st = STORE_CONFLICT; /* an append never meets a checkpoint of its new size */
    if (st == STORE_OK && note_out)
        *note_out = note;
    else
        free(note);
    return st;
}

/* ---- authenticated leaf reads ---- */

/* The server's own note verifier, per store, set by store_log_init from the key it signs
 * with (never from log_head.verifier_key, which a superuser can edit). Set once at start,
 * before any request; read after. */
#define LOG_VERIFIERS 8
static struct {
    const struct store *store;
    struct note_verifier v;
} log_verifiers[LOG_VERIFIERS];

static void log_verifier_set(const struct store *s, const struct note_verifier *v)
{
    for (size_t i = 0; i < LOG_VERIFIERS; i++)
        if (log_verifiers[i].store == s || !log_verifiers[i].store) {
            log_verifiers[i].store = s;
            log_verifiers[i].v = *v;
            return;
        }
}

static const struct note_verifier *log_verifier(const struct store *s)
{
    for (size_t i = 0; i < LOG_VERIFIERS; i++)
        if (log_verifiers[i].store == s)
            return &log_verifiers[i].v;
    /* A store the log was not opened on (the read replica's) reads the same log, signed by
     * the same server key: the key of the process's log. */
    return log_verifiers[0].store ? &log_verifiers[0].v : NULL;
}

static const char *SQL_LATEST_NOTE =
    "SELECT json_build_object('tree_size', tree_size, 'note', note) FROM log_checkpoint "
    "ORDER BY tree_size DESC LIMIT 1";

/* The latest stored checkpoint, only when its note signature verifies with the server's own
 * key: the root every authenticated read is checked against. Fills fault otherwise. */
static enum store_status signed_checkpoint(struct store_conn *c, struct note_checkpoint *cp,
                                           char *fault, size_t size)
{
    const struct note_verifier *v = log_verifier(store__conn_store(c));
    if (!v) {
        snprintf(fault, size, "the log was not opened: no key to authenticate its leaves");
        return STORE_OK;
    }
    json_t *row = NULL;
    enum store_status st = store_json_tx(c, SQL_LATEST_NOTE, 0, NULL, &row);
    if (st == STORE_NOT_FOUND) {
        snprintf(fault, size, "no checkpoint is stored: no leaf can be authenticated");
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    const char *note = text_of(row, "note");
    if (!note || note_checkpoint_open(note, strlen(note), v, cp) != 0 ||
        (json_int_t)cp->size != json_integer_value(json_object_get(row, "tree_size")))
        snprintf(fault, size,
                 "the latest stored checkpoint (size %lld) does not verify with the server's "
                 "key %s",
                 (long long)json_integer_value(json_object_get(row, "tree_size")), v->name);
    json_decref(row);
    return STORE_OK;
}

/* An authenticated leaf read: leaf[0..len), read as leaf `index`, must be the leaf the signed
 * checkpoint cp includes at that index, by an inclusion proof from the stored tiles
 * (merkle_leaf_authentic). Fills fault ("" when authentic); the caller treats a fault as a
 * log-integrity fault (store__log_fault) and serves nothing of the leaf. */
static enum store_status leaf_authenticate(struct store_conn *c, const struct note_checkpoint *cp,
                                           uint64_t index, const uint8_t *leaf, size_t len,
                                           char *fault, size_t size)
{
    fault[0] = '\0';
    if (index >= cp->size) {
        snprintf(fault, size, "leaf %llu is not in the latest signed checkpoint (size %llu)",
                 (unsigned long long)index, (unsigned long long)cp->size);
        return STORE_OK;
    }
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES], hash[MERKLE_HASH_BYTES];
    size_t proof_len = 0;
    enum store_status st =
        store__tiles_prove(c, STORE_TILE_INCLUSION, cp->size, index, proof, &proof_len);
    if (st == STORE_ERROR || st == STORE_INVALID) {
        snprintf(fault, size, "the stored tiles give no inclusion proof of leaf %llu in size %llu",
                 (unsigned long long)index, (unsigned long long)cp->size);
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    if (merkle_leaf_authentic(leaf, len, index, cp->size,
                              (const uint8_t(*)[MERKLE_HASH_BYTES])proof, proof_len, cp->root,
                              hash) != 0)
        snprintf(fault, size,
                 "leaf %llu as stored is not the leaf the signed checkpoint of size %llu "
                 "includes at that index",
                 (unsigned long long)index, (unsigned long long)cp->size);
    return STORE_OK;
}

/* leaf_authenticate of base64 leaf bytes. */
static enum store_status leaf_authenticate_b64(struct store_conn *c,
                                               const struct note_checkpoint *cp, uint64_t index,
                                               const char *b64, char *fault, size_t size)
{
    size_t b64_len = b64 ? strlen(b64) : 0;
    uint8_t *bytes = malloc(b64_len / 4 * 3 + 1);
    if (!bytes)
        return STORE_ERROR;
    long len = b64 ? codec_b64_decode(b64, b64_len, bytes, b64_len / 4 * 3 + 1) : -1;
    enum store_status st = STORE_OK;
    if (len < 0)
        snprintf(fault, size, "leaf %llu is missing or not base64", (unsigned long long)index);
    else
        st = leaf_authenticate(c, cp, index, bytes, (size_t)len, fault, size);
    free(bytes);
    return st;
}

/* ---- integrity: never two roots for one size ---- */

/* Called when the stored log contradicts itself: this process stops appending and is not
 * ready (store_log_fault), the evidence goes to the log, and owners and admins get an alert. */
void store__log_fault(struct store *s, const char *evidence)
{
    store__log_fault_set(s, evidence);
    json_t *line =
        json_pack("{s:s, s:s, s:s}", "level", "error", "msg",
                  "the decision log is inconsistent: appends stopped", "evidence", evidence);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    fprintf(stderr, "%s\n", text ? text : "{\"level\":\"error\",\"msg\":\"log inconsistent\"}");
    free(text);
    json_decref(line);
    if (store_alert_log_integrity(s, evidence) != STORE_OK)
        fprintf(stderr, "{\"level\":\"error\",\"msg\":\"cannot record the log alert\"}\n");
}

/* The facts of log_head_check (core/ledger/recompute.h) about the locked head, read in the
 * append's transaction. */
static enum store_status head_consistent(struct store_conn *c, const json_t *head,
                                         const struct merkle_frontier *f, char *evidence,
                                         size_t size)
{
    evidence[0] = '\0';
    json_int_t n = json_integer_value(json_object_get(head, "size"));
    struct store *s = store__conn_store(c);
    struct note_checkpoint seen;
    int has_seen = store__log_seen(s, &seen);
    char size_text[24], seen_text[24];
    snprintf(size_text, sizeof size_text, "%lld", (long long)n);
    snprintf(seen_text, sizeof seen_text, "%llu", has_seen ? (unsigned long long)seen.size : 0ULL);
    const char *p[] = {size_text, seen_text};
    json_t *facts = NULL;
    enum store_status st = store_json_tx(c, SQL_HEAD_EVIDENCE, 2, p, &facts);
    if (st != STORE_OK)
        return st;
    struct log_head_facts hf = {
        .size = (uint64_t)n,
        .root = text_of(head, "root"),
        .frontier = f,
        .checkpoint_root = text_of(facts, "checkpoint_root"),
        .latest_checkpoint =
            (uint64_t)json_integer_value(json_object_get(facts, "latest_checkpoint")),
        .leaves = (uint64_t)json_integer_value(json_object_get(facts, "leaves")),
        .seen = {.known = has_seen,
                 .size = has_seen ? seen.size : 0,
                 .state_path = store__log_state_path(s)},
        .seen_checkpoint_root = text_of(facts, "seen_checkpoint_root"),
    };
    if (has_seen)
        memcpy(hf.seen.root, seen.root, sizeof hf.seen.root);
    log_head_check(&hf, evidence, size);
    json_decref(facts);
    return STORE_OK;
}

/* At start: the stored leaves, page by page, through log_recompute (core/ledger/recompute.h)
 * up to the checkpoint of size `bound`. Fills evidence ("" when consistent). */
static enum store_status leaves_consistent(struct store_conn *c, uint64_t bound, char *evidence,
                                           size_t size)
{
    evidence[0] = '\0';
    struct store *s = store__conn_store(c);
    struct note_checkpoint seen_cp;
    struct log_seen seen = {.known = store__log_seen(s, &seen_cp) != 0,
                            .state_path = store__log_state_path(s)};
    if (seen.known) {
        seen.size = seen_cp.size;
        memcpy(seen.root, seen_cp.root, sizeof seen.root);
    }
    json_t *latest = NULL;
    char bound_text[24];
    snprintf(bound_text, sizeof bound_text, "%llu", (unsigned long long)bound);
    const char *bp[] = {bound_text};
    enum store_status st = store_json_tx(c, SQL_CHECKPOINT_AT, 1, bp, &latest);
    if (st == STORE_NOT_FOUND) {
        snprintf(evidence, size,
                 "the log head is of size %llu, but no checkpoint of that size is "
                 "stored",
                 (unsigned long long)bound);
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    struct log_recompute rc;
    log_recompute_init(&rc, (uint64_t)json_integer_value(json_object_get(latest, "tree_size")),
                       &seen);
    uint8_t *bytes = NULL;
    size_t cap = 0;
    for (;;) {
        char start[24];
        snprintf(start, sizeof start, "%llu", (unsigned long long)rc.n);
        const char *p[] = {start, bound_text};
        json_t *page = NULL;
        st = store_json_tx(c, SQL_LEAF_PAGE, 2, p, &page);
        if (st != STORE_OK)
            break;
        json_int_t page_leaves = json_integer_value(json_object_get(page, "n"));
        const char *at = text_of(page, "text");
        while (at && *at && st == STORE_OK && !evidence[0]) {
            /* <index>:<hex leaf>:<hex hash> */
            char *end = NULL;
            unsigned long long index = strtoull(at, &end, 10);
            const char *leaf_hex = end && *end == ':' ? end + 1 : NULL;
            const char *hash_hex = leaf_hex ? strchr(leaf_hex, ':') : NULL;
            uint8_t stored_hash[MERKLE_HASH_BYTES];
            if (!hash_hex ||
                codec_hex_decode_span(hash_hex + 1, stored_hash, sizeof stored_hash) != 0) {
                st = STORE_ERROR;
                break;
            }
            size_t leaf_len = (size_t)(hash_hex - leaf_hex) / 2;
            if (leaf_len + 1 > cap) {
                uint8_t *grown = realloc(bytes, leaf_len + 1);
                if (!grown) {
                    st = STORE_ERROR;
                    break;
                }
                bytes = grown;
                cap = leaf_len + 1;
            }
            if (codec_hex_decode_span(leaf_hex, bytes, leaf_len) != 0) {
                st = STORE_ERROR;
                break;
            }
            if (log_recompute_leaf(&rc, index, bytes, leaf_len, stored_hash, evidence, size) != 0)
                break;
            at = hash_hex + 1 + 2 * MERKLE_HASH_BYTES;
            if (*at == ',')
                at++;
        }
        json_decref(page);
        if (st != STORE_OK || evidence[0] || page_leaves < LEAF_PAGE || rc.n >= bound)
            break;
    }
    free(bytes);
    if (st == STORE_OK && !evidence[0])
        log_recompute_finish(&rc, text_of(latest, "root"), evidence, size); /* fills evidence */
    json_decref(latest);
    return st;
}

/* ---- start-up ---- */

/* Under the head lock, inside store_log_init's transaction (so that the lock is held until the
 * state file is updated and the transaction commits once): the tiles must cover the head
 * (built from the leaves when they do not: a log from before the tiles, migration 0070) and
 * give its root. Tiles are derived data: tiles that give another root are rebuilt from the
 * stored leaves, and only when those do not give the head's root either is it a fault (the
 * leaves themselves are then checked against the checkpoint by leaves_consistent). A savepoint
 * keeps a failed rebuild from being committed. */
static enum store_status tiles_at_start(struct store_conn *c, const json_t *head, char *evidence,
                                        size_t size)
{
    int rebuilt = 0;
    uint64_t n = (uint64_t)json_integer_value(json_object_get(head, "size"));
    const char *root = text_of(head, "root") ? text_of(head, "root") : "";
    enum store_status st = store_exec_tx(c, "SAVEPOINT log_tiles", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store__tiles_ensure(c, n, root, &rebuilt, evidence, size);
    if (st == STORE_OK && evidence[0] && !rebuilt) {
        char first[240];
        snprintf(first, sizeof first, "%s", evidence);
        evidence[0] = '\0';
        fprintf(stderr,
                "{\"level\":\"error\",\"msg\":\"the log tiles do not give the checkpoint's "
                "root: rebuilding them from the leaves\",\"evidence\":\"%s\"}\n",
                first);
        st = store_exec_tx(c, "DELETE FROM log_tile", 0, NULL, NULL);
        if (st == STORE_OK)
            st = store__tiles_ensure(c, n, root, &rebuilt, evidence, size);
        if (st == STORE_OK && evidence[0]) {
            char second[240];
            snprintf(second, sizeof second, "%s", evidence);
            char both[500];
            snprintf(both, sizeof both, "%.230s; rebuilt from the stored leaves: %.230s", first,
                     second);
            snprintf(evidence, size, "%s", both);
        }
    }
    if (st == STORE_OK && evidence[0])
        st = store_exec_tx(c, "ROLLBACK TO SAVEPOINT log_tiles", 0, NULL, NULL);
    else if (st == STORE_OK)
        st = store_exec_tx(c, "RELEASE SAVEPOINT log_tiles", 0, NULL, NULL);
    if (st == STORE_OK && rebuilt && !evidence[0])
        fprintf(stderr,
                "{\"level\":\"info\",\"msg\":\"log tiles built from the leaves\",\"size\":%llu}\n",
                (unsigned long long)n);
    return st;
}

static enum store_status log_unlogged_keys(struct store *s, const unsigned char *server_sk,
                                           char *fault, size_t fault_size);

enum store_status store_log_init(struct store *s, const char *origin,
                                 const unsigned char server_sk[crypto_sign_SECRETKEYBYTES],
                                 char *why, size_t why_size)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES], empty_root[MERKLE_HASH_BYTES];
    crypto_sign_ed25519_sk_to_pk(pk, server_sk);
    struct note_verifier v;
    if (note_verifier_init(&v, origin, pk) != NOTE_OK) {
        snprintf(why, why_size, "CAPLEDGER_LOG_ORIGIN '%s' is not a valid note name", origin);
        return STORE_INVALID;
    }
    char *vkey = note_verifier_text(&v);
    if (!vkey) {
        snprintf(why, why_size, "out of memory");
        return STORE_ERROR;
    }
    log_verifier_set(s, &v);
    merkle_root(NULL, 0, empty_root);
    char empty_hex[2 * MERKLE_HASH_BYTES + 1];
    codec_hex_encode(empty_root, sizeof empty_root, empty_hex);

    json_t *head = NULL;
    char evidence[512] = "";
    struct store_conn *c = store_acquire(s, 5000);
    if (!c) {
        free(vkey);
        snprintf(why, why_size, "the database is unreachable");
        return STORE_UNAVAILABLE;
    }
    const char *p[] = {origin, vkey, empty_hex};
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_INIT_HEAD, 3, p, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st != STORE_OK) {
        snprintf(why, why_size, "cannot read the log head: %s", store_status_name(st));
        goto out;
    }
    const char *stored_origin = json_string_value(json_object_get(head, "origin"));
    const char *stored_key = json_string_value(json_object_get(head, "verifier_key"));
    if (!stored_origin || strcmp(stored_origin, origin) != 0) {
        snprintf(why, why_size,
                 "the log's origin is '%s' but CAPLEDGER_LOG_ORIGIN is '%s': a log keeps the "
                 "origin it was started with",
                 stored_origin ? stored_origin : "", origin);
        st = STORE_CONFLICT;
        goto out;
    }
    if (!stored_key || strcmp(stored_key, vkey) != 0) {
        snprintf(why, why_size,
                 "the log is signed by key %s but this server's key is %s: start it with the "
                 "key file the log was started with (CAPLEDGER_KEY_FILE)",
                 stored_key ? stored_key : "", vkey);
        st = STORE_CONFLICT;
        goto out;
    }
    struct note_checkpoint seen;
    if (store__log_seen(s, &seen) && strcmp(seen.origin, origin) != 0) {
        snprintf(why, why_size,
                 "the log state file %s is of the log '%s', not of CAPLEDGER_LOG_ORIGIN '%s'",
                 store__log_state_path(s), seen.origin, origin);
        st = STORE_CONFLICT;
        goto out;
    }
    if (json_integer_value(json_object_get(head, "size")) == 0)
        st = sign_checkpoint(c, origin, 0, empty_root, server_sk, NULL);
    if (st != STORE_OK) {
        snprintf(why, why_size, "cannot record the log head: %s", store_status_name(st));
        goto out;
    }
    /* The head, the checkpoints and the leaves must agree; if not, the server starts but
     * appends nothing and is not ready, so that an operator sees why. The head's own checks
     * run before the commit, under the head's row lock: another instance appending meanwhile
     * would otherwise move the checkpoints past the head read here (a false "rewound"). The
     * rehash of every leaf (O(n): about a minute for 1,000,000 leaves) runs after the commit,
     * over the leaves below the head read here, which appends never change: other instances
     * keep appending while this one starts. */
    struct merkle_frontier f;
    uint64_t size = (uint64_t)json_integer_value(json_object_get(head, "size"));
    if (merkle_frontier_parse(text_of(head, "frontier") ? text_of(head, "frontier") : "", size,
                              &f) != 0)
        snprintf(evidence, sizeof evidence, "the log head's compact range does not fit its size");
    else
        st = head_consistent(c, head, &f, evidence, sizeof evidence);
    if (st == STORE_OK && !evidence[0])
        st = tiles_at_start(c, head, evidence, sizeof evidence);
    if (st != STORE_OK)
        snprintf(why, why_size, "cannot check the log: %s", store_status_name(st));
    uint8_t head_root[MERKLE_HASH_BYTES];
    if (st == STORE_OK && !evidence[0] && text_of(head, "root") &&
        codec_hex_decode_exact(text_of(head, "root"), head_root, sizeof head_root) == 0)
        store__log_seen_advance(s, origin, size, head_root); /* observed, and recomputed */
    if (st == STORE_OK) {
        st = store_commit(c);
        if (st != STORE_OK)
            snprintf(why, why_size, "cannot record the log head: %s", store_status_name(st));
    }
    if (st == STORE_OK && !evidence[0]) {
        st = leaves_consistent(c, size, evidence, sizeof evidence);
        if (st != STORE_OK)
            snprintf(why, why_size, "cannot check the log's leaves: %s", store_status_name(st));
    }
out:
    if (st != STORE_OK)
        store_rollback(c);
    store_release(s, c);
    json_decref(head);
    free(vkey);
    if (st == STORE_OK && !evidence[0]) {
        st = log_unlogged_keys(s, server_sk, evidence, sizeof evidence);
        if (st != STORE_OK)
            snprintf(why, why_size, "cannot enrol the signing keys in the log: %s",
                     store_status_name(st));
    }
    if (st == STORE_OK && evidence[0])
        store__log_fault(s, evidence);
    return st;
}

/* ---- appending ---- */

static enum store_status check_signer_in_log(struct store_conn *c, const char *key_id,
                                             const char *public_key, struct problems *p,
                                             char *fault, size_t fault_size);

/* The signer's key: registered, not revoked (in the table and in the log), an enabled owner's,
 * and the caller's. */
static enum store_status check_signer(struct store_conn *c, const struct ledger_append *in,
                                      enum ledger_outcome *outcome, struct problems *p, char *fault,
                                      size_t fault_size, json_t **key_out)
{
    const char *key_id = text_of(in->record, "signer_key_id");
    const char *params[] = {key_id};
    json_t *key = NULL;
    enum store_status st = store_json_tx(c, SQL_SIGNER, 1, params, &key);
    if (st == STORE_NOT_FOUND) {
        problems_add(p, "/record/signer_key_id", "no signing key with this id is registered");
        *outcome = LEDGER_INVALID;
        return STORE_OK;
    }
    if (st != STORE_OK)
        return st;
    if (strcmp(text_of(key, "user_id") ? text_of(key, "user_id") : "",
               in->caller_user_id ? in->caller_user_id : "") != 0) {
        *outcome = LEDGER_NOT_SIGNER;
    } else if (json_is_true(json_object_get(key, "revoked"))) {
        problems_add(p, "/record/signer_key_id", "this key was revoked: sign with a current key");
        *outcome = LEDGER_INVALID;
    } else if (json_is_true(json_object_get(key, "disabled")) ||
               strcmp(text_of(key, "role") ? text_of(key, "role") : "", "owner") != 0) {
        problems_add(p, "/record/signer_key_id",
                     "the key's holder '%s' is not an owner: only owners sign decisions",
                     text_of(key, "username") ? text_of(key, "username") : "");
        *outcome = LEDGER_INVALID;
    } else if (decision_verify(in->record, in->signature_b64, text_of(key, "public_key")) != 0) {
        problems_add(p, "/signature",
                     "does not verify over \"capledger-decision-v1\\n\" followed by the RFC 8785 "
                     "bytes of the record, with the key signer_key_id names");
        *outcome = LEDGER_INVALID;
    } else {
        size_t before = p->total;
        st = check_signer_in_log(c, key_id, text_of(key, "public_key"), p, fault, fault_size);
        if (fault[0])
            *outcome = LEDGER_INCONSISTENT;
        else if (p->total > before)
            *outcome = LEDGER_INVALID;
    }
    *key_out = key;
    return st;
}

/* The gate (core/ledger/gate.h) over the checklist of the record's citations and its first
 * cited comparison. */
static void check_gate(const json_t *record, const json_t *facts, const json_t *checklist,
                       struct problems *p)
{
    struct gate_facts g = {
        .record = record,
        .checklist = checklist,
        .comparison = json_array_get(json_object_get(facts, "comparisons"), 0),
    };
    gate_check(&g, p);
}

/* Appends leaf[0..len) as leaf number `size` under the locked head: checks the head against the
 * stored checkpoints and leaves first (a fault fills `fault` and appends nothing), inserts the
 * leaf, moves the head and signs and stores the checkpoint of the new size. On success
 * *appended = {index, tree_size, checkpoint (note), inclusion proof hashes}. */
static enum store_status append_leaf_locked(struct store_conn *c, const json_t *head,
                                            const char *leaf, size_t leaf_len,
                                            const unsigned char *server_sk, char *fault,
                                            size_t fault_size, json_t **appended)
{
    *appended = NULL;
    uint64_t size = (uint64_t)json_integer_value(json_object_get(head, "size"));
    const char *origin = text_of(head, "origin");
    struct merkle_frontier f;
    if (!origin || merkle_frontier_parse(text_of(head, "frontier") ? text_of(head, "frontier") : "",
                                         size, &f) != 0) {
        snprintf(fault, fault_size, "the log head's compact range does not fit its size %llu",
                 (unsigned long long)size);
        return STORE_OK;
    }
    enum store_status st = head_consistent(c, head, &f, fault, fault_size);
    if (st != STORE_OK || fault[0])
        return st;
    json_t *proof = hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])f.hash, f.count, 1);
    char *leaf_b64 = codec_b64_encode_new((const uint8_t *)leaf, leaf_len);
    char *frontier_text = NULL, *note = NULL;
    st = STORE_ERROR;
    if (!leaf_b64 || !proof)
        goto out;
    uint8_t leaf_hash[MERKLE_HASH_BYTES], root[MERKLE_HASH_BYTES];
    merkle_leaf_hash((const uint8_t *)leaf, leaf_len, leaf_hash);
    struct tile_hash stored[TILE_LEVELS];
    size_t stored_count = tile_append(&f, size, leaf_hash, stored);
    merkle_frontier_root(&f, root);
    frontier_text = merkle_frontier_hex(&f);
    if (!frontier_text)
        goto out;
    char index_text[24], size_text[24], leaf_hex[65], root_hex[65];
    snprintf(index_text, sizeof index_text, "%llu", (unsigned long long)size);
    snprintf(size_text, sizeof size_text, "%llu", (unsigned long long)size + 1);
    codec_hex_encode(leaf_hash, sizeof leaf_hash, leaf_hex);
    codec_hex_encode(root, sizeof root, root_hex);
    const char *pl[] = {index_text, leaf_b64, leaf_hex};
    st = store_exec_tx(c, SQL_INSERT_LEAF, 3, pl, NULL);
    /* The tiles grow in the same transaction, under the same lock. */
    if (st == STORE_OK)
        st = store__tiles_write(c, stored, stored_count, fault, fault_size);
    if (st != STORE_OK || fault[0])
        goto out;
    const char *ph[] = {size_text, root_hex, frontier_text};
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_UPDATE_HEAD, 3, ph, NULL);
    if (st == STORE_OK)
        st = sign_checkpoint(c, origin, size + 1, root, server_sk, &note);
    if (st == STORE_OK) /* remembered outside the database once the transaction commits */
        store__log_seen_pending(c, origin, size + 1, root);
    if (st == STORE_CONFLICT) {
        snprintf(fault, fault_size, "a checkpoint of size %llu was already stored",
                 (unsigned long long)size + 1);
        st = STORE_OK;
        goto out;
    }
    if (st != STORE_OK)
        goto out;
    *appended = json_pack("{s:I, s:I, s:s, s:O}", "leaf_index", (json_int_t)size, "tree_size",
                          (json_int_t)(size + 1), "checkpoint", note, "hashes", proof);
    if (!*appended)
        st = STORE_ERROR;
out:
    json_decref(proof);
    free(leaf_b64);
    free(frontier_text);
    free(note);
    return st;
}

/* Inserts the leaf and the decision, moves the head, signs the checkpoint. Called with the
 * head row locked. */
static enum store_status append_locked(struct store_conn *c, const struct ledger_append *in,
                                       const json_t *head, const json_t *key,
                                       const char *received_at, enum ledger_outcome *outcome,
                                       char *fault, size_t fault_size, json_t **out)
{
    const json_t *record = in->record;
    size_t leaf_len = 0;
    char *leaf = decision_leaf(record, in->signature_b64, text_of(key, "public_key"), received_at,
                               &leaf_len);
    char *record_text = json_dumps(record, JSON_COMPACT);
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    json_t *appended = NULL;
    enum store_status st = STORE_ERROR;
    if (!leaf || !record_text || !cited_text)
        goto out;
    st = append_leaf_locked(c, head, leaf, leaf_len, in->server_sk, fault, fault_size, &appended);
    if (st != STORE_OK || fault[0]) {
        if (fault[0])
            *outcome = LEDGER_INCONSISTENT;
        goto out;
    }
    json_int_t index = json_integer_value(json_object_get(appended, "leaf_index"));
    char index_text[24];
    snprintf(index_text, sizeof index_text, "%lld", (long long)index);
    const char *pd[] = {text_of(record, "id"),
                        text_of(record, "review_id"),
                        text_of(record, "decision"),
                        text_of(record, "chosen_option"),
                        cited_text,
                        record_text,
                        in->signature_b64,
                        text_of(record, "signer_key_id"),
                        text_of(key, "username"),
                        text_of(record, "supersedes"),
                        index_text,
                        received_at};
    st = store_exec_tx(c, SQL_INSERT_DECISION, 12, pd, NULL);
    if (st == STORE_CONFLICT && strcmp(store_last_constraint(c), "decision_pkey") == 0) {
        /* Another append with this id committed while this one waited for the head. */
        *outcome = LEDGER_DUPLICATE;
        st = STORE_OK;
        goto out;
    }
    /* A concurrent decision superseding the same one: decision_supersedes_once refuses it
     * (STORE_CONFLICT, answered 409); the facts check before the lock catches the usual case. */
    if (st != STORE_OK)
        goto out;
    *out =
        json_pack("{s:s, s:s, s:I, s:O, s:s, s:O, s:{s:I, s:O, s:O}}", "id", text_of(record, "id"),
                  "review_id", text_of(record, "review_id"), "leaf_index", index, "tree_size",
                  json_object_get(appended, "tree_size"), "received_at", received_at, "checkpoint",
                  json_object_get(appended, "checkpoint"), "inclusion_proof", "leaf_index", index,
                  "tree_size", json_object_get(appended, "tree_size"), "hashes",
                  json_object_get(appended, "hashes"));
    if (!*out)
        st = STORE_ERROR;
out:
    json_decref(appended);
    free(leaf);
    free(record_text);
    free(cited_text);
    return st;
}

/* A review's decision leaves, found in the log itself (db/migrations/0100_log_leaf_reviews.sql),
 * with whether each has its decision row, and the review's rows that have no leaf. */
#define DECISION_LEAF "substring(l.leaf FROM 1 FOR 14) = '\\x7b227075626c69635f6b6579223a'::bytea"
static const char *SQL_REVIEW_LEAVES =
    "SELECT json_build_object('leaves', (SELECT coalesce(json_agg(json_build_object('i', "
    "l.leaf_index, 'leaf', " B64(
        "l.leaf") ", 'row', EXISTS (SELECT 1 FROM decision d WHERE "
                  "d.leaf_index = l.leaf_index)) ORDER BY l.leaf_index), "
                  "'[]') FROM log_leaf l WHERE " DECISION_LEAF
                  " AND log_leaf_review_id(l.leaf) = $1), 'orphans', (SELECT "
                  "coalesce(json_agg(d.leaf_index "
                  "ORDER BY d.leaf_index), '[]') FROM decision d WHERE d.review_id = $1::uuid AND "
                  "NOT EXISTS "
                  "(SELECT 1 FROM log_leaf l WHERE l.leaf_index = d.leaf_index AND " DECISION_LEAF
                  " AND log_leaf_review_id(l.leaf) = $1)))";

/* The review's line of decisions as the signed log proves it: every decision leaf of the review
 * authenticated, each with its row, no row without its leaf, no decision superseded twice.
 * *current = the id of the one no other supersedes (new reference; NULL for a review without
 * decisions). Fills fault on any contradiction (a log-integrity fault). */
static enum store_status review_line(struct store_conn *c, const char *review_id, json_t **current,
                                     char *fault, size_t size)
{
    *current = NULL;
    const char *pr[] = {review_id};
    json_t *found = NULL;
    enum store_status st = store_json_tx(c, SQL_REVIEW_LEAVES, 1, pr, &found);
    if (st != STORE_OK)
        return st;
    const json_t *leaves = json_object_get(found, "leaves");
    const json_t *orphans = json_object_get(found, "orphans");
    json_t *superseded = json_object(), *ids = json_array();
    struct note_checkpoint cp;
    if (json_array_size(orphans) > 0)
        snprintf(fault, size,
                 "review %s: the decision row of leaf %lld has no decision leaf of the review in "
                 "the log",
                 review_id, (long long)json_integer_value(json_array_get(orphans, 0)));
    else if (json_array_size(leaves) > 0)
        st = signed_checkpoint(c, &cp, fault, size);
    size_t i;
    json_t *one;
    json_array_foreach(leaves, i, one)
    {
        if (st != STORE_OK || fault[0])
            break;
        long long index = (long long)json_integer_value(json_object_get(one, "i"));
        char why[400] = "";
        st = leaf_authenticate_b64(c, &cp, (uint64_t)index, text_of(one, "leaf"), why, sizeof why);
        if (st != STORE_OK)
            break;
        json_t *view = why[0] ? NULL : decision_view_b64(text_of(one, "leaf"));
        if (why[0])
            snprintf(fault, size, "review %s: decision %s", review_id, why);
        else if (!view)
            snprintf(fault, size, "review %s: leaf %lld is not a decision leaf", review_id, index);
        else if (!json_is_true(json_object_get(one, "row")))
            snprintf(fault, size, "review %s: decision %s (leaf %lld) has no decision row",
                     review_id, text_of(view, "id") ? text_of(view, "id") : "?", index);
        else if (text_of(view, "supersedes") &&
                 json_object_get(superseded, text_of(view, "supersedes")))
            snprintf(fault, size, "review %s: two decision leaves supersede decision %s", review_id,
                     text_of(view, "supersedes"));
        if (!fault[0]) {
            if (text_of(view, "supersedes"))
                json_object_set_new(superseded, text_of(view, "supersedes"), json_true());
            json_array_append(ids, json_object_get(view, "id"));
        }
        json_decref(view);
    }
    /* The last leaf no other supersedes: the line's end. */
    for (size_t k = json_array_size(ids); st == STORE_OK && !fault[0] && k-- > 0;) {
        const char *id = json_string_value(json_array_get(ids, k));
        if (id && !json_object_get(superseded, id)) {
            *current = json_string(id);
            break;
        }
    }
    json_decref(superseded);
    json_decref(ids);
    json_decref(found);
    return st;
}

/* The review's current decision must be the one the record supersedes: a review has one line
 * of decisions, never two current ones — read from the review's authenticated leaves
 * (review_line), never from the decision table alone. On a mismatch *outcome =
 * LEDGER_NOT_CURRENT and *current = the current decision's id (new reference); on a
 * contradiction in the log *outcome = LEDGER_INCONSISTENT and fault says why. */
static enum store_status check_current(struct store_conn *c, const json_t *record,
                                       enum ledger_outcome *outcome, json_t **current, char *fault,
                                       size_t fault_size)
{
    json_t *id = NULL;
    enum store_status st = review_line(c, text_of(record, "review_id"), &id, fault, fault_size);
    if (st != STORE_OK)
        return st;
    if (fault[0]) {
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    if (!id)
        return STORE_OK; /* the first decision of the review */
    const char *sup = text_of(record, "supersedes");
    if (!sup || strcmp(sup, json_string_value(id)) != 0) {
        *outcome = LEDGER_NOT_CURRENT;
        *current = id;
        return STORE_OK;
    }
    json_decref(id);
    return STORE_OK;
}

/* Everything an append checks about the record before the head lock, in the order the append
 * does it: duplicate id, references to stored data, evidence, then the gate for `advance`.
 * *outcome stays LEDGER_APPENDED when the record may be appended. The checklist the gate uses
 * (on the first cited comparison) goes to *checklist when asked for, whatever the decision. */
static enum store_status check_record(struct store_conn *c, const json_t *record,
                                      const char *cited_text, enum ledger_outcome *outcome,
                                      struct problems *p, json_t **facts, json_t **checklist)
{
    size_t before = p->total;
    /* review_id is any id to the record validator; only a uuid can name a stored review. */
    const char *review_id = text_of(record, "review_id");
    const char *pf[] = {review_id && uuid_valid(review_id) ? review_id : NULL,
                        text_of(record, "id"), text_of(record, "supersedes"), cited_text};
    enum store_status st = store_json_tx(c, SQL_FACTS, 4, pf, facts);
    if (st != STORE_OK)
        return st;
    if (json_is_true(json_object_get(*facts, "duplicate"))) {
        *outcome = LEDGER_DUPLICATE;
        return STORE_OK;
    }
    decision_check_references(record, *facts, p);
    st = store_evidence_check(c, json_object_get(record, "evidence"), "/record/evidence", p);
    if (st != STORE_OK)
        return st;
    if (p->total > before) {
        *outcome = LEDGER_INVALID;
        return STORE_OK;
    }
    int advance = strcmp(text_of(record, "decision"), "advance") == 0;
    if (!advance && !checklist)
        return STORE_OK;
    json_t *items = NULL;
    st = store_review_checklist_tx(c, review_id, json_object_get(record, "comparison_sha256"), NULL,
                                   &items);
    if (st != STORE_OK)
        return st;
    if (advance) {
        check_gate(record, *facts, items, p);
        if (p->total > before)
            *outcome = LEDGER_REFUSED;
    }
    if (checklist)
        *checklist = items;
    else
        json_decref(items);
    return STORE_OK;
}

/* ---- key events ---- */

static const char *SQL_KEY_FOR_EVENT = "SELECT json_build_object('public_key', " B64(
    "k.public_key") ", 'owner', u.username, "
                    "'created_at', " UTC_MICROS(
                        "k.created_at") ", 'revoked_at', CASE WHEN k.revoked_at IS NOT "
                                        "NULL THEN " UTC_MICROS(
                                            "k.revoked_at") " END, 'logged', EXISTS (SELECT 1 FROM "
                                                            "log_leaf l WHERE " KEY_EVENTS_OF(
                                                                "k.key_id") " AND position("
                                                                            "convert_to('\"kind\":"
                                                                            "\"key_' || $2 || "
                                                                            "'\"', 'UTF8') IN "
                                                                            "l.leaf) > 0)) FROM "
                                                                            "signing_key k JOIN "
                                                                            "app_user u ON u.id = "
                                                                            "k.user_id WHERE "
                                                                            "k.key_id = $1";
static const char *SQL_INSERT_KEY_EVENT =
    "INSERT INTO log_key_event (key_id, kind, leaf_index) VALUES ($1, $2, $3::bigint)";
/* Keys the log does not enrol yet, or whose revocation it does not record yet, oldest first. */
static const char *SQL_KEYS_UNLOGGED =
    "SELECT coalesce(json_agg(json_build_object('key_id', k.key_id, 'revoked', k.revoked_at IS "
    "NOT NULL) ORDER BY k.created_at, k.key_id), '[]') FROM signing_key k WHERE (NOT EXISTS "
    "(SELECT 1 FROM log_leaf l WHERE " KEY_EVENTS_OF(
        "k.key_id") " AND position('\"kind\":"
                    "\"key_enrol\"' IN "
                    "convert_from(l.leaf, 'UTF8')) > "
                    "0) AND k.key_id IN (SELECT "
                    "key_id FROM "
                    "log_key_backfill_key)) OR "
                    "(k.revoked_at IS NOT NULL AND EXISTS (SELECT 1 FROM log_leaf l "
                    "WHERE " KEY_EVENTS_OF(
                        "k.key_id") " AND position('\"kind\":\"key_enrol\"' IN "
                                    "convert_from(l.leaf, 'UTF8')) > "
                                    "0) AND NOT EXISTS (SELECT 1 FROM log_leaf l "
                                    "WHERE " KEY_EVENTS_OF(
                                        "k.key_id") " AND position('\"kind\":\"key_revoke\"' IN "
                                                    "convert_from(l.leaf, 'UTF8')) > 0))";
/* Key rows the log never enrolled (after the backfill): written into the database by hand. */
static const char *SQL_KEYS_NOT_ENROLLED =
    "SELECT coalesce(json_agg(k.key_id ORDER BY k.key_id), '[]') FROM signing_key k WHERE NOT "
    "EXISTS (SELECT 1 FROM log_leaf l WHERE " KEY_EVENTS_OF(
        "k.key_id") " AND position('\"kind\":\"key_enrol\"' IN convert_from(l.leaf, 'UTF8')) > "
                    "0)";
/* The leaves that enrolled and revoked a key, for the check at append time: found in log_leaf
 * (never through the log_key_event index, which a superuser can edit), with what the index
 * says, which must agree. */
static const char *SQL_KEY_LEAVES =
    "SELECT json_build_object('leaves', (SELECT coalesce(json_agg(json_build_object('i', "
    "l.leaf_index, 'leaf', " B64("l.leaf") ") ORDER BY l.leaf_index), '[]') FROM log_leaf l "
                                           "WHERE " KEY_EVENTS_OF(
                                               "$1") "), 'indexed', (SELECT coalesce(json_agg(e."
                                                     "leaf_index ORDER BY e.leaf_index), '[]') "
                                                     "FROM log_key_event e WHERE e.key_id = $1))";

enum store_status store__log_key_event(struct store_conn *c, const char *key_id, const char *kind,
                                       const unsigned char *server_sk, char *fault,
                                       size_t fault_size)
{
    const char *pk[] = {key_id, kind};
    json_t *key = NULL, *head = NULL, *appended = NULL;
    char *leaf = NULL;
    enum store_status st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_KEY_FOR_EVENT, 2, pk, &key);
    if (st != STORE_OK || json_is_true(json_object_get(key, "logged")))
        goto out;
    size_t len = 0;
    int enrol = strcmp(kind, "enrol") == 0;
    if (enrol)
        leaf = keylog_enrol_leaf(key_id, text_of(key, "public_key"), text_of(key, "owner"),
                                 text_of(key, "created_at"), &len);
    else if (text_of(key, "revoked_at"))
        leaf = keylog_revoke_leaf(key_id, text_of(key, "revoked_at"), &len);
    if (!leaf) {
        st = STORE_ERROR;
        goto out;
    }
    st = append_leaf_locked(c, head, leaf, len, server_sk, fault, fault_size, &appended);
    if (st != STORE_OK || fault[0])
        goto out;
    char index_text[24];
    snprintf(index_text, sizeof index_text, "%lld",
             (long long)json_integer_value(json_object_get(appended, "leaf_index")));
    const char *pe[] = {key_id, kind, index_text};
    st = store_exec_tx(c, SQL_INSERT_KEY_EVENT, 3, pe, NULL);
out:
    free(leaf);
    json_decref(key);
    json_decref(head);
    json_decref(appended);
    return st;
}

/* At start: enrol (and revoke) in the log every key it does not record yet — the keys of a log
 * begun before key events were logged, appended after its existing leaves. */
static enum store_status log_unlogged_keys(struct store *s, const unsigned char *server_sk,
                                           char *fault, size_t fault_size)
{
    struct store_conn *c = store_acquire(s, 5000);
    if (!c)
        return STORE_UNAVAILABLE;
    json_t *head = NULL, *keys = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK) /* serialises concurrent starters before reading what is missing */
        st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_KEYS_UNLOGGED, 0, NULL, &keys);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *key_id = text_of(k, "key_id");
        if (st == STORE_OK && !fault[0])
            st = store__log_key_event(c, key_id, "enrol", server_sk, fault, fault_size);
        if (st == STORE_OK && !fault[0] && json_is_true(json_object_get(k, "revoked")))
            st = store__log_key_event(c, key_id, "revoke", server_sk, fault, fault_size);
    }
    json_t *strays = NULL;
    int append_fault = fault[0] != '\0';
    if (st == STORE_OK && !fault[0])
        st = store_json_tx(c, SQL_KEYS_NOT_ENROLLED, 0, NULL, &strays);
    if (st == STORE_OK && !fault[0] && json_array_size(strays) > 0) {
        char *ids = json_dumps(strays, JSON_COMPACT);
        snprintf(fault, fault_size,
                 "signing key rows %s have no enrolment leaf in the log (written into the "
                 "database behind the server's back): they sign nothing",
                 ids ? ids : "?");
        free(ids);
    }
    /* The backfill commits even when a stray key is found: its leaves are the log's own. */
    if (st == STORE_OK && !append_fault)
        st = store_commit(c);
    else
        store_rollback(c);
    store_release(s, c);
    json_decref(head);
    json_decref(keys);
    json_decref(strays);
    return st;
}

/* The signer's standing in the log itself: the leaves that enrolled and revoked key_id, read
 * back and replayed (core/ledger/keylog.h). Adds a problem when the key may not sign. */
static enum store_status check_signer_in_log(struct store_conn *c, const char *key_id,
                                             const char *public_key, struct problems *p,
                                             char *fault, size_t fault_size)
{
    const char *params[] = {key_id};
    json_t *found = NULL;
    enum store_status st = store_json_tx(c, SQL_KEY_LEAVES, 1, params, &found);
    if (st != STORE_OK)
        return st;
    const json_t *leaves = json_object_get(found, "leaves");
    /* The index must point at exactly these leaves: a difference is a log-integrity fault
     * (someone edited the leaves or the index behind the server's back), never served. */
    json_t *at = json_array();
    size_t j;
    json_t *one;
    json_array_foreach(leaves, j, one) json_array_append(at, json_object_get(one, "i"));
    if (!json_equal(at, json_object_get(found, "indexed"))) {
        char *a = json_dumps(at, JSON_COMPACT);
        char *b = json_dumps(json_object_get(found, "indexed"), JSON_COMPACT);
        snprintf(fault, fault_size,
                 "key %s: the key event index (log_key_event) names leaves %s, but the log's "
                 "key event leaves of the key are %s",
                 key_id, b ? b : "null", a ? a : "null");
        free(a);
        free(b);
    }
    json_decref(at);
    /* Every key event leaf the check relies on is authenticated against the signed log. */
    struct note_checkpoint cp;
    if (!fault[0] && json_array_size(leaves) > 0)
        st = signed_checkpoint(c, &cp, fault, fault_size);
    json_array_foreach(leaves, j, one)
    {
        if (st != STORE_OK || fault[0])
            break;
        char why[400] = "";
        st = leaf_authenticate_b64(c, &cp, (uint64_t)json_integer_value(json_object_get(one, "i")),
                                   text_of(one, "leaf"), why, sizeof why);
        if (why[0])
            snprintf(fault, fault_size, "key %s: key event %s", key_id, why);
    }
    if (st != STORE_OK || fault[0]) {
        json_decref(found);
        return st;
    }
    struct keylog *k = keylog_new();
    char why[512] = "";
    size_t i;
    json_t *row;
    int revoked = 0;
    json_array_foreach(leaves, i, row)
    {
        const char *b64 = text_of(row, "leaf");
        size_t b64_len = b64 ? strlen(b64) : 0;
        uint8_t *bytes = malloc(b64_len / 4 * 3 + 1);
        long len = bytes ? codec_b64_decode(b64, b64_len, bytes, b64_len / 4 * 3 + 1) : -1;
        json_t *doc = len >= 0 ? jcs_parse((const char *)bytes, (size_t)len, NULL) : NULL;
        free(bytes);
        struct keylog_event ev;
        if (!k || !doc || keylog_event_parse(doc, &ev, why, sizeof why) != 0 ||
            ev.kind == KEYLOG_DECISION || strcmp(ev.key_id, key_id) != 0 ||
            keylog_apply(k, (uint64_t)json_integer_value(json_object_get(row, "i")), &ev, why,
                         sizeof why) != 0) {
            if (!why[0])
                snprintf(why, sizeof why, "leaf %lld is not a key event of this key",
                         (long long)json_integer_value(json_object_get(row, "i")));
            json_decref(doc);
            break;
        }
        revoked |= ev.kind == KEYLOG_REVOKE;
        json_decref(doc);
    }
    if (!why[0] && k && keylog_may_sign(k, key_id, public_key, why, sizeof why) == 0)
        why[0] = '\0';
    else if (revoked)
        problems_add(p, "/record/signer_key_id",
                     "this key was revoked (the log records it: %s): sign with a current key", why);
    else
        problems_add(p, "/record/signer_key_id", "the log does not let this key sign: %s",
                     why[0] ? why : "out of memory");
    keylog_free(k);
    json_decref(found);
    return STORE_OK;
}

enum store_status store_decision_append(struct store *s, const struct audit_actor *who,
                                        const struct ledger_append *in,
                                        enum ledger_outcome *outcome, struct problems *p,
                                        json_t **out)
{
    *out = NULL;
    *outcome = LEDGER_INVALID;
    const json_t *record = in->record;
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    if (!cited_text)
        return STORE_ERROR;
    json_t *key = NULL, *facts = NULL, *head = NULL, *result = NULL, *current = NULL;
    char fault[512] = "";
    if (store_log_fault(s, NULL, 0)) {
        free(cited_text);
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(cited_text);
        return STORE_UNAVAILABLE;
    }
    size_t before = p->total;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = check_signer(c, in, outcome, p, fault, sizeof fault, &key);
    if (st != STORE_OK || *outcome == LEDGER_NOT_SIGNER || *outcome == LEDGER_INCONSISTENT ||
        p->total > before)
        goto out;
    *outcome = LEDGER_APPENDED;
    st = check_record(c, record, cited_text, outcome, p, &facts, NULL);
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        goto out;
    /* Everything above ran without the head lock; from here appends are serialised, so the
     * current decision read here is still current when this one commits. */
    st = store_json_tx(c, SQL_LOCK_HEAD, 0, NULL, &head);
    if (st == STORE_OK)
        st = check_current(c, record, outcome, &current, fault, sizeof fault);
    if (st != STORE_OK || *outcome == LEDGER_INCONSISTENT)
        goto out;
    if (*outcome == LEDGER_NOT_CURRENT) {
        result = json_pack("{s:O}", "current_decision", current);
        goto out;
    }
    st = append_locked(c, in, head, key, text_of(facts, "received_at"), outcome, fault,
                       sizeof fault, &result);
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        goto out;
    const char *pr[] = {text_of(record, "review_id")};
    st = store_exec_tx(c, SQL_REVIEW_DECIDED, 1, pr, NULL);
    if (st == STORE_OK) {
        json_t *change =
            json_pack("{s:s, s:s, s:s, s:O}", "id", text_of(record, "id"), "review_id",
                      text_of(record, "review_id"), "decision", text_of(record, "decision"),
                      "leaf_index", json_object_get(result, "leaf_index"));
        st = store_audit_record_tx(c, who, "decision.append", text_of(record, "id"), change);
        json_decref(change);
    }
    if (st == STORE_OK)
        st = store_commit(c);
out:
    if (st != STORE_OK || (*outcome != LEDGER_APPENDED && *outcome != LEDGER_NOT_CURRENT)) {
        json_decref(result);
        result = NULL;
    }
    if (st != STORE_OK || *outcome != LEDGER_APPENDED)
        store_rollback(c);
    store_release(s, c);
    free(cited_text);
    json_decref(key);
    json_decref(facts);
    json_decref(head);
    json_decref(current);
    if (fault[0])
        store__log_fault(s, fault);
    *out = result;
    return st;
}

enum store_status store_decision_check(struct store *s, const json_t *record,
                                       enum ledger_outcome *outcome, struct problems *p,
                                       json_t **out)
{
    *out = NULL;
    *outcome = LEDGER_APPENDED;
    if (store_log_fault(s, NULL, 0)) { /* the append would refuse everything */
        *outcome = LEDGER_INCONSISTENT;
        return STORE_OK;
    }
    char *cited_text = json_dumps(json_object_get(record, "comparison_sha256"), JSON_COMPACT);
    if (!cited_text)
        return STORE_ERROR;
    json_t *facts = NULL, *checklist = NULL, *current = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(cited_text);
        return STORE_UNAVAILABLE;
    }
    /* One read-only transaction: every check sees one snapshot, and nothing is written. */
    enum store_status st =
        store_exec_tx(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, NULL);
    if (st == STORE_OK)
        st = check_record(c, record, cited_text, outcome, p, &facts, &checklist);
    char fault[512] = "";
    if (st == STORE_OK && *outcome == LEDGER_APPENDED)
        st = check_current(c, record, outcome, &current, fault, sizeof fault);
    if (st == STORE_OK) {
        *out = json_pack("{s:o, s:o}", "checklist", checklist ? checklist : json_null(),
                         "current_decision", current ? current : json_null());
        checklist = current = NULL;
        if (!*out)
            st = STORE_ERROR;
    }
    store_rollback(c);
    store_release(s, c);
    free(cited_text);
    json_decref(facts);
    json_decref(checklist);
    json_decref(current);
    if (fault[0])
        store__log_fault(s, fault);
    return st;
}

/* ---- reading ---- */

/* ---- reading: decisions bound to their leaves ---- */

/* A decision row that differs from its leaf: logged and alerted, never served. */
static void report_mismatch(struct store *s, const char *fault)
{
    json_t *line = json_pack("{s:s, s:s, s:s}", "level", "error", "msg",
                             "a decision row differs from its log leaf", "evidence", fault);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    if (text)
        fprintf(stderr, "%s\n", text);
    free(text);
    json_decref(line);
    if (store_alert_log_integrity(s, fault) != STORE_OK)
        fprintf(stderr, "{\"level\":\"error\",\"msg\":\"cannot record the log alert\"}\n");
}

static const char *SQL_ENROL_INDEX =
    "SELECT to_json(l.leaf_index) FROM log_leaf l WHERE " KEY_EVENTS_OF(
        "$1") " ORDER BY l.leaf_index LIMIT 1";

/* The leaves a served decision row rests on — its own leaf and its signer's enrolment leaf —
 * each authenticated against the latest signed checkpoint (leaf_authenticate). Fills fault
 * ("" when both are authentic). */
static enum store_status authenticate_row(struct store_conn *c, const struct note_checkpoint *cp,
                                          const json_t *row, char *fault, size_t size)
{
    json_int_t index = json_integer_value(json_object_get(row, "leaf_index"));
    const char *id = text_of(row, "id") ? text_of(row, "id") : "?";
    char why[400] = "";
    enum store_status st = index < 0 ? STORE_OK
                                     : leaf_authenticate_b64(c, cp, (uint64_t)index,
                                                             text_of(row, "leaf"), why, sizeof why);
    if (st == STORE_OK && !why[0] && index < 0)
        snprintf(why, sizeof why, "it has no leaf index");
    if (st != STORE_OK || why[0]) {
        if (why[0])
            snprintf(fault, size, "decision %s: %s", id, why);
        return st;
    }
    const char *key_id = text_of(row, "signer_key_id");
    if (!text_of(row, "enrol_leaf"))
        return STORE_OK; /* decision_bind_to_leaf names a signer the log never enrolled */
    const char *pk[] = {key_id};
    json_t *at = NULL;
    st = store_json_tx(c, SQL_ENROL_INDEX, 1, pk, &at);
    if (st == STORE_OK)
        st = leaf_authenticate_b64(c, cp, (uint64_t)json_integer_value(at),
                                   text_of(row, "enrol_leaf"), why, sizeof why);
    json_decref(at);
    if (st == STORE_OK && why[0])
        snprintf(fault, size, "decision %s: the enrolment leaf of its signer's key: %s", id, why);
    return st == STORE_NOT_FOUND ? STORE_OK : st;
}

/* Reads decision rows (sql, a JSON object or an array of them) and serves only what the signed
 * log proves: every row's leaves authenticated (a failure is a log-integrity fault:
 * store__log_fault), then bound to its leaf (a row that differs is an integrity error). */
static enum store_status decisions_read(struct store *s, const char *sql, int n,
                                        const char *const *params, const char *review_id,
                                        char *fault, size_t fault_size, json_t **out)
{
    fault[0] = '\0';
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    char log_fault[512] = "";
    json_t *rows = NULL;
    enum store_status st =
        store_exec_tx(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, sql, n, params, &rows);
    struct note_checkpoint cp;
    size_t count = json_is_array(rows) ? json_array_size(rows) : 1;
    if (st == STORE_OK && count > 0)
        st = signed_checkpoint(c, &cp, log_fault, sizeof log_fault);
    if (st == STORE_OK && review_id) { /* the review's whole line, as the log proves it */
        json_t *current = NULL;
        st = review_line(c, review_id, &current, log_fault, sizeof log_fault);
        json_decref(current);
    }
    for (size_t i = 0; st == STORE_OK && !log_fault[0] && i < count; i++)
        st = authenticate_row(c, &cp, json_is_array(rows) ? json_array_get(rows, i) : rows,
                              log_fault, sizeof log_fault);
    store_rollback(c);
    store_release(s, c);
    if (st == STORE_OK && log_fault[0]) {
        store__log_fault(s, log_fault);
        snprintf(fault, fault_size, "%s", log_fault);
    }
    for (size_t i = 0; st == STORE_OK && !fault[0] && i < count; i++)
        decision_bind_to_leaf(json_is_array(rows) ? json_array_get(rows, i) : rows, fault,
                              fault_size);
    if (st == STORE_OK && fault[0] && !log_fault[0])
        report_mismatch(s, fault);
    if (st != STORE_OK || fault[0])
        json_decref(rows);
    else
        *out = rows;
    return st;
}

enum store_status store_decision_get(struct store *s, const char *id,
                                     const struct team_scope *scope, char *fault, size_t fault_size,
                                     json_t **out)
{
    const char *p[] = {id, team_scope_param(scope)};
    return decisions_read(s, SQL_DECISION_GET, 2, p, NULL, fault, fault_size, out);
}

enum store_status store_decision_list(struct store *s, const char *review_id,
                                      const struct team_scope *scope, long long after_index,
                                      int limit, char *fault, size_t fault_size, json_t **out)
{
    char after[24], lim[16];
    snprintf(after, sizeof after, "%lld", after_index);
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {review_id, team_scope_param(scope), after, lim};
    return decisions_read(s, SQL_DECISION_LIST, 4, p, review_id, fault, fault_size, out);
}

enum store_status store_log_head(struct store *s, json_t **out)
{
    return store_json(s, SQL_HEAD, 0, NULL, out);
}

enum store_status store_log_entries(struct store *s, long long start, long long end, json_t **out)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", start);
    snprintf(b, sizeof b, "%lld", end);
    const char *p[] = {a, b};
    json_t *leaves = NULL;
    enum store_status st = store_json(s, SQL_ENTRIES, 2, p, &leaves);
    if (st != STORE_OK)
        return st;
    *out = json_pack("{s:I, s:I, s:o}", "start", (json_int_t)start, "end", (json_int_t)end,
                     "leaves", leaves);
    return *out ? STORE_OK : STORE_ERROR;
}

/* A proof from the stored tiles (ledger_tiles.c): O(log n) hashes read. */
static enum store_status tile_proof(struct store *s, enum store_tile_proof kind, long long n,
                                    long long m, uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    if (n < 0 || m < 0)
        return STORE_INVALID;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store__tiles_prove(c, kind, (uint64_t)n, (uint64_t)m, proof, len);
    store_release(s, c);
    return st;
}

enum store_status store_log_inclusion(struct store *s, long long index, long long size,
                                      json_t **out)
{
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len = 0;
    enum store_status st = tile_proof(s, STORE_TILE_INCLUSION, size, index, proof, &len);
    if (st != STORE_OK)
        return st;
    *out =
        json_pack("{s:I, s:I, s:o}", "leaf_index", (json_int_t)index, "tree_size", (json_int_t)size,
                  "hashes", hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, 0));
    return *out ? STORE_OK : STORE_ERROR;
}

enum store_status store_log_consistency(struct store *s, long long first, long long second,
                                        json_t **out)
{
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len = 0;
    enum store_status st = tile_proof(s, STORE_TILE_CONSISTENCY, second, first, proof, &len);
    if (st != STORE_OK)
        return st;
    *out = json_pack("{s:I, s:I, s:o}", "first", (json_int_t)first, "second", (json_int_t)second,
                     "hashes", hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, 0));
    return *out ? STORE_OK : STORE_ERROR;
}

/* The distinct strings a bundle cites, in first-seen order (the order the keys and comparisons
 * queries are given them), with a member set so that a million leaves cost a million look-ups,
 * not a scan each. */
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
        st = store_json_tx(c, SQL_BUNDLE_PAGE, 2, pe, &page);
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
    st = store_json_tx(c, SQL_BUNDLE_KEYS, 1, pk, &keys);
    if (st != STORE_OK)
        goto out;
    const char *pc[] = {hashes_text};
    st = store_json_tx(c, SQL_BUNDLE_COMPARISONS, 1, pc, &comparisons);
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

/* ---- witnesses ---- */

static const char *SQL_HEAD_NOTE =
    "SELECT json_build_object('tree_size', tree_size, 'signed_note', note) FROM log_checkpoint "
    "ORDER BY tree_size DESC LIMIT 1";
static const char *SQL_WITNESS_SIZE = "SELECT to_json(size) FROM log_witness WHERE witness = $1";
static const char *SQL_WITNESS_SEEN =
    "INSERT INTO log_witness (witness, size) VALUES ($1, $2::bigint) ON CONFLICT (witness) DO "
    "UPDATE SET size = EXCLUDED.size, updated_at = now()";
static const char *SQL_COSIGNED =
    "WITH c AS (INSERT INTO log_cosignature (tree_size, witness, line) VALUES ($2::bigint, $1, "
    "$3) ON CONFLICT DO NOTHING) INSERT INTO log_witness (witness, size) VALUES ($1, "
    "$2::bigint) ON CONFLICT (witness) DO UPDATE SET size = greatest(log_witness.size, "
    "EXCLUDED.size), updated_at = now()";

enum store_status store_log_head_note(struct store *s, json_t **out)
{
    return store_json(s, SQL_HEAD_NOTE, 0, NULL, out);
}

enum store_status store_log_witness_size(struct store *s, const char *witness, long long *size)
{
    const char *p[] = {witness};
    json_t *v = NULL;
    enum store_status st = store_json(s, SQL_WITNESS_SIZE, 1, p, &v);
    *size = st == STORE_OK ? (long long)json_integer_value(v) : 0;
    json_decref(v);
    return st == STORE_NOT_FOUND ? STORE_OK : st;
}

enum store_status store_log_witness_seen(struct store *s, const char *witness, long long size)
{
    char size_text[24];
    snprintf(size_text, sizeof size_text, "%lld", size);
    const char *p[] = {witness, size_text};
    return store_exec(s, SQL_WITNESS_SEEN, 2, p, NULL);
}

enum store_status store_log_cosigned(struct store *s, const char *witness, long long size,
                                     const char *line)
{
    char size_text[24];
    snprintf(size_text, sizeof size_text, "%lld", size);
    const char *p[] = {witness, size_text, line};
    return store_exec(s, SQL_COSIGNED, 3, p, NULL);
}
