/* Shared between the store's own files only; never included above layer 2. */
#ifndef CAPLEDGER_STORE_PRIVATE_H
#define CAPLEDGER_STORE_PRIVATE_H

#include "store/store.h"

/* Runs a multi-statement script without parameters (migration files only). */
enum store_status store__exec_script(struct store_conn *c, const char *sql) STORE_MUSTCHECK;

/* Records that the decision log was found inconsistent (the first evidence is kept until the
 * process ends): appends stop and store_ready fails. store_log_fault reads it. */
void store__log_fault_set(struct store *s, const char *evidence);

#endif
