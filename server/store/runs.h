/* Job accounting runs (docs/evidence.md "Job accounting"). An upload streams its runs straight
 * into `run` in batches (db/migrations/0110_run_ingest_direct.sql): per batch, the keys
 * (cluster, external_id) not yet in run_key go in — the first line of a key wins, a key already
 * stored or met earlier in the upload is a duplicate — then the runs whose key went in are
 * COPYed into run in binary format. The server classes each run and sums the usage rollups and
 * queue-wait histograms itself (core/formats/runrollup.h), upserting the aggregated rows at the
 * end. The upload holds a transaction-level lock on each cluster it writes (taken when the
 * cluster is first met), so two uploads to one cluster run one after the other from that point.
 * Everything, with the upload record and its audit row, is one transaction. */
#ifndef CAPLEDGER_STORE_RUNS_H
#define CAPLEDGER_STORE_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"
#include "store/uploads.h"

struct run;

struct runs_upload;

/* Starts an upload whose runs get upload_id, classed by klass (?class=; NULL: the run's own,
 * else the cluster's partition map by partition and GPU model, else by partition, else the
 * cluster's default class, else none). *out is NULL on failure. */
enum store_status store_runs_begin(struct store *s, const char *upload_id, const char *klass,
                                   struct runs_upload **out) STORE_MUSTCHECK;
/* The most distinct class labels one upload's runs may carry. */
#define RUNS_LABELS_MAX 1024

/* Adds a valid run (with its cluster): buffered, sent a batch at a time. STORE_UNAVAILABLE when
 * another upload held the run's cluster longer than 30 s. STORE_INVALID when the run's class
 * would be the upload's RUNS_LABELS_MAX + 1st label: the run is not added (a fault of its line)
 * and the upload goes on. On any other failure, abort the upload. */
enum store_status store_runs_add(struct runs_upload *u, const struct run *r) STORE_MUSTCHECK;
/* Sends what is left, upserts the rollups, sets rec's "inserted", "duplicates" and "warnings",
 * inserts the upload record rec (borrowed, updated), audits and commits; then releases
 * everything (u is freed whatever the result). *staged (runs added), *inserted and *duplicates
 * receive the counts, *classes (new reference) the runs stored per class ({"production": 12,
 * "unclassified": 3}; NULL when it fails). */
enum store_status store_runs_finish(struct runs_upload *u, const struct audit_actor *who,
                                    json_t *rec, long *staged, long *inserted, long *duplicates,
                                    json_t **classes) STORE_MUSTCHECK;
/* Rolls back and frees u (NULL allowed). */
void store_runs_abort(struct runs_upload *u);
/* True when the upload failed for another upload holding a cluster it names (the lock wait
 * ran out, or a deadlock between the two): retryable, nothing was stored. */
bool store_runs_contended(const struct runs_upload *u);

struct runs_query {
    const struct team_scope *scope; /* the caller's teams (NULL: all) */
    const char *team, *workload_class, *state, *cluster, *upload_id;
    const char *from, *to;   /* submitted_at in [from, to) */
    const char *after_id;    /* keyset: the last id of the previous page */
    int limit;               /* page size + 1 */
    const char *workload_id; /* the runs its runs_match recognises among its team's (NULL: all) */
};
/* Runs in id order (the order they were stored). */
enum store_status store_runs_list(struct store *s, const struct runs_query *q,
                                  json_t **out) STORE_MUSTCHECK;

#endif
