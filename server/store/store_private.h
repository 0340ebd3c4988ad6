/* Shared between the store's own files only; never included above layer 2. */
#ifndef CAPLEDGER_STORE_PRIVATE_H
#define CAPLEDGER_STORE_PRIVATE_H

#include "store/store.h"

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

#endif
