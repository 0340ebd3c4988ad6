/* The signed decision log: the one way the tree grows. A leaf (a decision, a key event) is
 * appended under the locked head: the head checked against the stored checkpoints and leaves,
 * the leaf and its tiles stored, the head moved and the checkpoint of the new size signed. */
#include "store/ledger/ledger_private.h"

static const char *SQL_INSERT_CHECKPOINT =
    "INSERT INTO log_checkpoint (tree_size, root, note) VALUES ($1::bigint, decode($2, 'hex'), $3) "
    "ON CONFLICT (tree_size) DO NOTHING";
static const char *SQL_INSERT_LEAF = "INSERT INTO log_leaf (leaf_index, leaf, leaf_hash) "
                                     "VALUES ($1::bigint, decode($2, 'base64'), decode($3, 'hex'))";
static const char *SQL_UPDATE_HEAD =
    "UPDATE log_head SET size = $1::bigint, root = decode($2, 'hex'), "
    "frontier = decode($3, 'hex'), updated_at = now()";

json_t *ledger__hex_array(const uint8_t (*hashes)[MERKLE_HASH_BYTES], size_t n, int reversed)
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
enum store_status ledger__sign_checkpoint(struct store_conn *c, const char *origin, uint64_t size,
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
    enum store_status st = store_exec_tx(c, SQL_INSERT_CHECKPOINT, STORE_ARGS(p), &inserted);
    if (st == STORE_OK && inserted == 0 && note_out)
        st = STORE_CONFLICT; /* an append never meets a checkpoint of its new size */
    if (st == STORE_OK && note_out)
        *note_out = note;
    else
        free(note);
    return st;
}

/* Appends leaf[0..len) as leaf number `size` under the locked head: checks the head against the
 * stored checkpoints and leaves first (a fault fills `fault` and appends nothing), inserts the
 * leaf, moves the head and signs and stores the checkpoint of the new size. On success
 * *appended = {index, tree_size, checkpoint (note), inclusion proof hashes}. */
enum store_status ledger__append_leaf_locked(struct store_conn *c, const json_t *head,
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
    enum store_status st = ledger__head_consistent(c, head, &f, fault, fault_size);
    if (st != STORE_OK || fault[0])
        return st;
    json_t *proof = ledger__hex_array((const uint8_t(*)[MERKLE_HASH_BYTES])f.hash, f.count, 1);
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
    st = store_exec_tx(c, SQL_INSERT_LEAF, STORE_ARGS(pl), NULL);
    /* The tiles grow in the same transaction, under the same lock. */
    if (st == STORE_OK)
        st = store__tiles_write(c, stored, stored_count, fault, fault_size);
    if (st != STORE_OK || fault[0])
        goto out;
    const char *ph[] = {size_text, root_hex, frontier_text};
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_UPDATE_HEAD, STORE_ARGS(ph), NULL);
    if (st == STORE_OK)
        st = ledger__sign_checkpoint(c, origin, size + 1, root, server_sk, &note);
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
