/* Job accounting runs (API.md "A run"). An upload streams its rows through COPY into a
 * temporary staging table, then one INSERT … SELECT … ON CONFLICT DO NOTHING moves them into
 * `run`: duplicates (already stored, or repeated within the upload) are counted and skipped,
 * and the upload record and audit row are written in the same transaction. */
#ifndef CAPLEDGER_STORE_RUNS_H
#define CAPLEDGER_STORE_RUNS_H

#include <stddef.h>

#include "store/audit.h"
#include "store/store.h"

/* The staging columns in COPY order: the input line, the cluster, then core/run.h's
 * RUN_COPY_COLUMNS. */
#define STORE_RUNS_STAGE_COLUMNS_PREFIX "lineno, cluster, "

struct runs_upload; /* an open upload: a connection inside a transaction, COPY in progress */

/* Checks out a connection, begins the transaction, creates the staging table and starts
 * COPY. *out is NULL on failure. */
enum store_status store_runs_begin(struct store *s, struct runs_upload **out) STORE_MUSTCHECK;
/* Sends COPY text rows (whole rows only). */
enum store_status store_runs_send(struct runs_upload *u, const char *data,
                                  size_t len) STORE_MUSTCHECK;
/* Ends COPY, moves the staged rows into run with upload_id = rec's "id", sets rec's
 * "inserted" and "duplicates", inserts the upload record rec (borrowed, updated), audits and
 * commits; then releases everything (u is freed whatever the result). *staged, *inserted and
 * *duplicates receive the counts. */
enum store_status store_runs_finish(struct runs_upload *u, const struct audit_actor *who,
                                    json_t *rec, long *staged, long *inserted,
                                    long *duplicates) STORE_MUSTCHECK;
/* Cancels the upload: aborts COPY, rolls back, releases, frees u. NULL is allowed. */
void store_runs_abort(struct runs_upload *u);

struct runs_query {
    const char *teams_json; /* the caller's teams, or "null" */
    const char *team, *workload_class, *state, *cluster, *upload_id;
    const char *from, *to; /* submitted_at in [from, to) */
    const char *after_id;  /* keyset: the last id of the previous page */
    int limit;             /* page size + 1 */
};
/* Runs in id order (the order they were stored). */
enum store_status store_runs_list(struct store *s, const struct runs_query *q,
                                  json_t **out) STORE_MUSTCHECK;

#endif
