/* Job accounting runs (docs/evidence.md "Job accounting"). An upload streams its rows through COPY
 * into a temporary staging table, then one INSERT … SELECT … ON CONFLICT DO NOTHING moves them into
 * `run`: duplicates (already stored, or repeated within the upload) are counted and skipped,
 * and the upload record and audit row are written in the same transaction. */
#ifndef CAPLEDGER_STORE_RUNS_H
#define CAPLEDGER_STORE_RUNS_H

#include <stddef.h>

#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"
#include "store/uploads.h"

/* The staging columns in COPY order: the input line, the cluster, then core/formats/run.h's
 * RUN_COPY_COLUMNS. */
#define STORE_RUNS_STAGE_COLUMNS_PREFIX "lineno, cluster, "

/* Starts an upload (store/uploads.h's upload_tx): creates the staging table and starts COPY
 * into it. Send rows with store_upload_tx_send; cancel with store_upload_tx_abort. */
enum store_status store_runs_begin(struct store *s, struct upload_tx **out) STORE_MUSTCHECK;
/* Ends COPY, moves the staged rows into run with upload_id = rec's "id" — each classed by
 * klass (?class=; NULL: the run's own, else the cluster's partition map, else its default
 * class, else none) — sets rec's "inserted" and "duplicates", inserts the upload record rec
 * (borrowed, updated), audits and commits; then releases everything (u is freed whatever the
 * result). *staged, *inserted and *duplicates receive the counts, *classes (new reference)
 * the runs stored per class ({"production": 12, "unclassified": 3}); rec's "warnings" are set
 * from them (core/formats/run.h run_upload_warnings) and stored with the record. */
enum store_status store_runs_finish(struct upload_tx *u, const struct audit_actor *who, json_t *rec,
                                    const char *klass, long *staged, long *inserted,
                                    long *duplicates, json_t **classes) STORE_MUSTCHECK;

struct runs_query {
    const struct team_scope *scope; /* the caller's teams (NULL: all) */
    const char *team, *workload_class, *state, *cluster, *upload_id;
    const char *from, *to; /* submitted_at in [from, to) */
    const char *after_id;  /* keyset: the last id of the previous page */
    int limit;             /* page size + 1 */
};
/* Runs in id order (the order they were stored). */
enum store_status store_runs_list(struct store *s, const struct runs_query *q,
                                  json_t **out) STORE_MUSTCHECK;

#endif
