/* The signed decision log: start-up (the log's recomputation, tiles, keys not yet logged). */
#include "store/ledger/ledger_private.h"

static const char *SQL_INIT_HEAD =
    "INSERT INTO log_head (origin, verifier_key, size, root) VALUES ($1, $2, 0, decode($3, 'hex')) "
    "ON CONFLICT (singleton) DO NOTHING";

/* ---- start-up ---- */

/* Under the head lock, inside store_log_init's transaction (so that the lock is held until the
 * state file is updated and the transaction commits once): the tiles must cover the head
 * (built from the leaves when they do not: a log from before the tiles, migration 0070) and
 * give its root. Tiles are derived data: tiles that give another root are rebuilt from the
 * stored leaves, and only when those do not give the head's root either is it a fault (the
 * leaves themselves are then checked against the checkpoint by ledger__leaves_consistent). A
 * savepoint keeps a failed rebuild from being committed. */
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
    ledger__log_verifier_set(s, &v);
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
        st = store_exec_tx(c, SQL_INIT_HEAD, STORE_ARGS(p), NULL);
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
        st = ledger__sign_checkpoint(c, origin, 0, empty_root, server_sk, NULL);
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
        st = ledger__head_consistent(c, head, &f, evidence, sizeof evidence);
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
        st = ledger__leaves_consistent(c, size, evidence, sizeof evidence);
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
        st = ledger__log_unlogged_keys(s, server_sk, evidence, sizeof evidence);
        if (st != STORE_OK)
            snprintf(why, why_size, "cannot enrol the signing keys in the log: %s",
                     store_status_name(st));
    }
    if (st == STORE_OK && evidence[0])
        store__log_fault(s, evidence);
    return st;
}
