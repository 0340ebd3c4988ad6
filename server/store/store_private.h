/* Shared between the store's own files only; never included above layer 2. */
#ifndef CAPLEDGER_STORE_PRIVATE_H
#define CAPLEDGER_STORE_PRIVATE_H

#include "store/store.h"

/* A numeric constant of C as SQL text, so a query and the code share one declaration:
 * "LIMIT " STORE_SQL_NUMBER(PAGE) with #define PAGE 5000 is "LIMIT 5000". */
#define STORE_SQL_NUMBER_(x) #x
#define STORE_SQL_NUMBER(x) STORE_SQL_NUMBER_(x)

#include <stdint.h>

#include <libpq-fe.h>

#include "core/ledger/tile.h"
#include "core/ledger/note.h"

/* A connection of its own (not from the pool) to the store's database, set up as the pool's
 * are; NULL when it cannot connect. The caller PQfinish()es it. */
PGconn *store__connect(struct store *s);

/* Runs a multi-statement script without parameters (migration files only). */
enum store_status store__exec_script(struct store_conn *c, const char *sql) STORE_MUSTCHECK;

/* Records that the decision log was found inconsistent (the first evidence is kept until the
 * process ends): appends stop and store_ready fails. store_log_fault reads it. */
void store__log_fault_set(struct store *s, const char *evidence);

/* store__log_fault_set, and the evidence logged and alerted to owners and admins. Call it
 * without holding a connection (the alert takes one). */
void store__log_fault(struct store *s, const char *evidence);

/* In the caller's transaction: appends the key event of kind "enrol" or "revoke" for key_id
 * (core/ledger/keylog.h) as the log's next leaf, from the signing_key row (its public key,
 * owner, created_at or revoked_at), and indexes it in log_key_event; nothing when the log
 * records that event already. Locks the log head until the transaction ends. When the log is
 * inconsistent nothing is appended and fault holds the evidence (report it with
 * store__log_fault once the connection is released). */
enum store_status store__log_key_event(struct store_conn *c, const char *key_id, const char *kind,
                                       const unsigned char *server_sk, char *fault,
                                       size_t fault_size) STORE_MUSTCHECK;

/* ---- the log's tiles (store/ledger/tiles.c) ---- */

/* In the caller's transaction, under the head lock: writes the stored hashes an append
 * completed (tile_append) into their tiles. A tile that does not end where a hash belongs
 * fills fault (the log is inconsistent) and writes nothing more. */
enum store_status store__tiles_write(struct store_conn *c, const struct tile_hash *h, size_t n,
                                     char *fault, size_t fault_size) STORE_MUSTCHECK;

enum store_tile_proof { STORE_TILE_INCLUSION, STORE_TILE_CONSISTENCY, STORE_TILE_ROOT };
/* From the stored tiles: the inclusion proof of leaf m in the tree of n leaves, the
 * consistency proof from size m to n, or (STORE_TILE_ROOT, m ignored) the root of n leaves in
 * proof[0]. STORE_INVALID for arguments out of range, STORE_ERROR when the tiles do not cover
 * the tree of n leaves. */
enum store_status store__tiles_prove(struct store_conn *c, enum store_tile_proof kind, uint64_t n,
                                     uint64_t m, uint8_t (*proof)[MERKLE_HASH_BYTES],
                                     size_t *len) STORE_MUSTCHECK;

/* At start, under the head lock: when the tiles do not hold exactly the stored hashes of the
 * tree of `size` leaves (a log from before migration 0070, or an interrupted rebuild), rebuilds
 * them from log_leaf (*rebuilt = 1). Then the root the tiles give must be root_hex; if not,
 * evidence is filled. */
enum store_status store__tiles_ensure(struct store_conn *c, uint64_t size, const char *root_hex,
                                      int *rebuilt, char *evidence,
                                      size_t evidence_size) STORE_MUSTCHECK;
/* The largest checkpoint this process signed or observed (store_log_state_open's file): 1 and
 * *out when there is one, 0 when it never saw one. */
int store__log_seen(struct store *s, struct note_checkpoint *out);
/* The state file's path, for evidence ("(none)" without one). */
const char *store__log_state_path(struct store *s);
/* Raises the seen checkpoint to (size, root) when larger (never lowers it), and writes the
 * state file atomically (temporary file, fsync, rename). Instances sharing the file keep the
 * largest any of them wrote. A failed write is logged. */
void store__log_seen_advance(struct store *s, const char *origin, uint64_t size,
                             const uint8_t root[32]);
/* In a transaction: the checkpoint it signed, which store_commit passes to
 * store__log_seen_advance once the transaction really committed (a rollback forgets it). */
void store__log_seen_pending(struct store_conn *c, const char *origin, uint64_t size,
                             const uint8_t root[32]);
/* The store a connection belongs to. */
struct store *store__conn_store(struct store_conn *c);

#endif
