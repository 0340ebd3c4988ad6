/* The signed decision log: witnesses' cosignatures. */
#include "store/ledger/ledger_private.h"

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
    enum store_status st = store_json(s, SQL_WITNESS_SIZE, STORE_ARGS(p), &v);
    *size = st == STORE_OK ? (long long)json_integer_value(v) : 0;
    json_decref(v);
    return st == STORE_NOT_FOUND ? STORE_OK : st;
}

enum store_status store_log_witness_seen(struct store *s, const char *witness, long long size)
{
    char size_text[24];
    snprintf(size_text, sizeof size_text, "%lld", size);
    const char *p[] = {witness, size_text};
    return store_exec(s, SQL_WITNESS_SEEN, STORE_ARGS(p), NULL);
}

enum store_status store_log_cosigned(struct store *s, const char *witness, long long size,
                                     const char *line)
{
    char size_text[24];
    snprintf(size_text, sizeof size_text, "%lld", size);
    const char *p[] = {witness, size_text, line};
    return store_exec(s, SQL_COSIGNED, STORE_ARGS(p), NULL);
}
