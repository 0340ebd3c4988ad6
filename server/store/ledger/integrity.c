/* The signed decision log: authenticated leaf reads and the log's integrity (a log that
 * contradicts itself stops appends and raises an alert). */
#include "store/ledger/ledger_private.h"

static const char *SQL_HEAD_EVIDENCE =
    "SELECT json_build_object('checkpoint_root', (SELECT encode(root, 'hex') FROM log_checkpoint "
    "WHERE tree_size = $1::bigint), 'latest_checkpoint', (SELECT max(tree_size) FROM "
    "log_checkpoint), 'leaves', (SELECT coalesce(max(leaf_index) + 1, 0) FROM log_leaf), "
    "'seen_checkpoint_root', (SELECT encode(root, 'hex') FROM log_checkpoint WHERE tree_size = "
    "$2::bigint))";
/* Leaves read per page at start: the number, and the same number as SQL text. */
#define LEAF_PAGE 5000
/* A page of leaves as one JSON string "<index>:<hex leaf>:<hex hash>,...", in index order: an order
 * of magnitude cheaper to make and read than an array of objects. */
static const char *SQL_LEAF_PAGE =
    "SELECT json_build_object('n', count(*), 'first', min(leaf_index), 'last', max(leaf_index), "
    "'text', coalesce(string_agg(leaf_index || ':' || encode(leaf, 'hex') || ':' || "
    "encode(leaf_hash, 'hex'), ',' "
    "ORDER BY leaf_index), '')) FROM log_leaf WHERE leaf_index >= $1::bigint AND leaf_index < "
    "least($1::bigint + " STORE_SQL_NUMBER(LEAF_PAGE) ", $2::bigint)";
static const char *SQL_CHECKPOINT_AT =
    "SELECT json_build_object('tree_size', tree_size, 'root', encode(root, 'hex')) "
    "FROM log_checkpoint WHERE tree_size = $1::bigint";

/* The signer's key, locked against revocation until this append commits. */

/* ---- authenticated leaf reads ---- */

/* The server's own note verifier, per store, set by store_log_init from the key it signs
 * with (never from log_head.verifier_key, which a superuser can edit). Set once at start,
 * before any request; read after. */
#define LOG_VERIFIERS 8
static struct {
    const struct store *store;
    struct note_verifier v;
} log_verifiers[LOG_VERIFIERS];

void ledger__log_verifier_set(const struct store *s, const struct note_verifier *v)
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
enum store_status ledger__signed_checkpoint(struct store_conn *c, struct note_checkpoint *cp,
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
enum store_status ledger__leaf_authenticate(struct store_conn *c, const struct note_checkpoint *cp,
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

/* ledger__leaf_authenticate of base64 leaf bytes. */
enum store_status ledger__leaf_authenticate_b64(struct store_conn *c,
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
        st = ledger__leaf_authenticate(c, cp, index, bytes, (size_t)len, fault, size);
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
enum store_status ledger__head_consistent(struct store_conn *c, const json_t *head,
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
    enum store_status st = store_json_tx(c, SQL_HEAD_EVIDENCE, STORE_ARGS(p), &facts);
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
enum store_status ledger__leaves_consistent(struct store_conn *c, uint64_t bound, char *evidence,
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
    enum store_status st = store_json_tx(c, SQL_CHECKPOINT_AT, STORE_ARGS(bp), &latest);
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
        st = store_json_tx(c, SQL_LEAF_PAGE, STORE_ARGS(p), &page);
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
