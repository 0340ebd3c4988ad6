/* The signed decision log: decisions served bound to their leaves, the head, entries and proofs. */
#include "store/ledger/ledger_private.h"

#define DECISION_JSON                                                                              \
    "json_build_object('id', d.id, 'review_id', d.review_id, 'decision', d.decision, "             \
    "'chosen_option', d.chosen_option, 'comparison_sha256', to_json(d.comparison_sha256), "        \
    "'supersedes', d.supersedes, 'superseded_by', (SELECT min(n.id::text) FROM decision n "        \
    "WHERE n.supersedes = d.id), 'signer', d.signer, 'signer_key_id', d.signer_key_id, "           \
    "'leaf_index', d.leaf_index, 'received_at', " UTC_MICROS(                                      \
        "d.received_at") ", "                                                                      \
                         "'record', d.record, 'signature', d.signature, "                          \
                         "'leaf', (SELECT " B64(                                                   \
                             "l.leaf") " FROM log_leaf l WHERE l.leaf_index = d.leaf_index), "     \
                                       "'enrol_leaf', (SELECT " B64(                               \
                                           "l.leaf") " FROM log_leaf l "                           \
                                                     "WHERE " KEY_EVENTS_OF(                       \
                                                         "d.signer_key_id") " ORDER BY "           \
                                                                            "l.leaf_index LIMIT "  \
                                                                            "1), "                 \
                                                                            "'successor_leaf', "   \
                                                                            "(SELECT " B64(        \
                                                                                "l.leaf") " FROM " \
                                                                                          "decisi" \
                                                                                          "on n "  \
                                                                                          "JOIN "  \
                                                                                          "log_"   \
                                                                                          "leaf "  \
                                                                                          "l ON "  \
                                                                                          "l."     \
                                                                                          "leaf_"  \
                                                                                          "index " \
                                                                                          "= "     \
                                                                                          "n."     \
                                                                                          "leaf_"  \
                                                                                          "index " \
                                                                                          "WHERE " \
                                                                                          "n."     \
                                                                                          "supers" \
                                                                                          "edes "  \
                                                                                          "= "     \
                                                                                          "d.id "  \
                                                                                          "ORDER " \
                                                                                          "BY "    \
                                                                                          "n."     \
                                                                                          "leaf_"  \
                                                                                          "index " \
                                                                                          "LIMIT " \
                                                                                          "1))"
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
static const char *SQL_ENTRIES = "SELECT coalesce(json_agg(" B64(
    "leaf") " ORDER BY leaf_index), '[]') FROM log_leaf "
            "WHERE leaf_index >= $1::bigint AND leaf_index < $2::bigint";

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
 * each authenticated against the latest signed checkpoint (ledger__leaf_authenticate). Fills fault
 * ("" when both are authentic). */
static enum store_status authenticate_row(struct store_conn *c, const struct note_checkpoint *cp,
                                          const json_t *row, char *fault, size_t size)
{
    json_int_t index = json_integer_value(json_object_get(row, "leaf_index"));
    const char *id = text_of(row, "id") ? text_of(row, "id") : "?";
    char why[400] = "";
    enum store_status st =
        index < 0 ? STORE_OK
                  : ledger__leaf_authenticate_b64(c, cp, (uint64_t)index, text_of(row, "leaf"), why,
                                                  sizeof why);
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
    st = store_json_tx(c, SQL_ENROL_INDEX, STORE_ARGS(pk), &at);
    if (st == STORE_OK)
        st = ledger__leaf_authenticate_b64(c, cp, (uint64_t)json_integer_value(at),
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
        st = ledger__signed_checkpoint(c, &cp, log_fault, sizeof log_fault);
    if (st == STORE_OK && review_id) { /* the review's whole line, as the log proves it */
        json_t *current = NULL;
        st = ledger__review_line(c, review_id, &current, log_fault, sizeof log_fault);
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
    return decisions_read(s, SQL_DECISION_GET, STORE_ARGS(p), NULL, fault, fault_size, out);
}

enum store_status store_decision_list(struct store *s, const char *review_id,
                                      const struct team_scope *scope, long long after_index,
                                      int limit, char *fault, size_t fault_size, json_t **out)
{
    char after[24], lim[16];
    snprintf(after, sizeof after, "%lld", after_index);
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {review_id, team_scope_param(scope), after, lim};
    return decisions_read(s, SQL_DECISION_LIST, STORE_ARGS(p), review_id, fault, fault_size, out);
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
    enum store_status st = store_json(s, SQL_ENTRIES, STORE_ARGS(p), &leaves);
    if (st != STORE_OK)
        return st;
    *out = json_pack("{s:I, s:I, s:o}", "start", (json_int_t)start, "end", (json_int_t)end,
                     "leaves", leaves);
    return *out ? STORE_OK : STORE_ERROR;
}

/* A proof from the stored tiles (tiles.c): O(log n) hashes read. */
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
                  "hashes", ledger__hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, 0));
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
    *out =
        json_pack("{s:I, s:I, s:o}", "first", (json_int_t)first, "second", (json_int_t)second,
                  "hashes", ledger__hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])proof, len, 0));
    return *out ? STORE_OK : STORE_ERROR;
}

/* The distinct strings a bundle cites, in first-seen order (the order the keys and comparisons
 * queries are given them), with a member set so that a million leaves cost a million look-ups,
 * not a scan each. */
