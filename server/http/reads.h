/* Read routing between the primary and a hot standby (CAPLEDGER_READ_DATABASE_URL).
 *
 * Read-only GETs that may answer from slightly stale data (reports, lists and single rows of
 * the evidence and comparisons; never sessions, tokens, users, the log or the audit bundle)
 * go to the standby, but only once it has replayed every write the caller could have seen
 * acknowledged: each such read asks the primary's current position
 * (pg_current_wal_insert_lsn(), a bound on every write acknowledged to anyone so far, through
 * any instance) and waits up to read_wait_ms for the standby's pg_last_wal_replay_lsn() to reach
 * it, else it goes to the primary; a standby that cannot be reached sends the read to the
 * primary as well.
 *
 * The row cache (resp_cached_row) instead trusts what the instance remembers: per user, the
 * primary's position after that user's last write through it, asked again after
 * READS_TRUST_MS. That spares the database round trip a cached read exists to avoid, at a
 * cost written up in docs/scaling.md: a write acknowledged through another instance within
 * that time is seen once its change notification arrives (milliseconds). */
#ifndef CAPLEDGER_HTTP_READS_H
#define CAPLEDGER_HTTP_READS_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "store/store.h"

struct req;
struct reads;

/* How long the row cache trusts a remembered position without asking the primary again, ms.
 * Shorter than the time HAProxy takes to take an instance out and put it back (fall + rise
 * checks); a caller it moves while a write is in flight is not covered (see above). */
#define READS_TRUST_MS 1000

/* replica may be NULL: then reads_choose always answers the primary; the instance still
 * remembers its users' writes for the row cache (reads_need). */
struct reads *reads_new(struct store *primary, struct store *replica, int wait_ms);
void reads_free(struct reads *rd);

enum reads_need_status {
    READS_NEED_OK,      /* *need: a read that reflects the primary up to here is fresh enough */
    READS_NEED_PENDING, /* the caller has a write in flight: read the primary */
    READS_NEED_UNKNOWN, /* anonymous, or the primary's position could not be read */
};
/* The WAL position a cached read by this caller must reflect: the primary's position after
 * the caller's last write through this instance, or the primary's current position for a
 * caller not seen within READS_TRUST_MS (one round trip to the primary). */
enum reads_need_status reads_need(struct reads *rd, struct req *r, uint64_t *need);

/* The store a read-only request should use: the standby once it has replayed the primary's
 * position at the time of the call, else the primary; NULL when the primary's position could
 * not be read for want of a connection (the pool exhausted, the primary down): answer 503. */
struct store *reads_choose(struct reads *rd);

/* Around a write (any method but GET/HEAD/OPTIONS) of an authenticated user. */
void reads_write_begins(struct reads *rd, struct req *r);
void reads_write_ends(struct reads *rd, struct req *r);

/* Answers a GET by id of a row scoped by its "team" member (readable by principal_can_read_team,
 * else 404 naming what), with the row's version as its ETag, exactly as get(store, id, &row)
 * and resp_read_versioned would: from the row cache when the cache has applied every write
 * the caller must see (reads_need), else from r->app->store (the primary: ROUTE_ROW_CACHE),
 * and then cached. Absent rows and errors are never cached. */
void resp_cached_row(struct req *r, int kind, const char *id,
                     enum store_status (*get)(struct store *, const char *, json_t **),
                     const char *what);

/* Prometheus text: replica up, lag (bytes, seconds), reads by target and reason. */
void reads_metrics(struct reads *rd, FILE *out);

#endif
