/* The change listener: keeps a row cache (core/rowcache.h) true to the primary.
 *
 * One thread with a connection of its own to the primary LISTENs on capledger_rows, where a
 * trigger on each cached table (db/migrations/0105_row_changes.sql) notifies "table:id" for
 * every row updated or deleted; each notification forgets that row. PostgreSQL delivers
 * notifications in commit order, so to confirm how far it has come the thread runs
 * SELECT pg_current_wal_insert_lsn(), pg_notify(<its own channel>, <n>): when notification n comes
 * back, every transaction that committed at or before that position has been handled, and the
 * cache's applied position moves there (rowcache_applied). It confirms every second, and
 * at once when a reader asks (changes_wanted: a read found the cache behind the caller's
 * writes). A lost connection resets the cache (notifications may have been missed) and again
 * once LISTEN is back in force, then reconnects with a growing pause (at most 2 s). */
#ifndef CAPLEDGER_STORE_CHANGES_H
#define CAPLEDGER_STORE_CHANGES_H

#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

struct rowcache;
struct changes;

/* The kinds of rows the cache keeps (the tables with the trigger). */
enum row_kind { ROW_WORKLOAD };

/* Starts the thread on primary's conninfo. NULL when it cannot start (then nothing is
 * cached: the caller keeps no cache). flush: each confirmation commits with a WAL flush (one
 * more fsync on the primary), for an instance that reads a hot standby. A transaction that
 * only notifies commits without one, and the WAL it leaves unflushed reaches the standby only
 * at the WAL writer's next round (200 ms): every standby read of a quiet primary, which waits
 * for the primary's insert position (http/reads.h), would wait for it. */
struct changes *changes_start(struct store *primary, struct rowcache *cache, int flush);
void changes_stop(struct changes *ch);

/* A reader needs a newer applied position: confirm one now (cheap; never blocks). */
void changes_wanted(struct changes *ch);

/* Prometheus text: the listener's state and the cache's counters. */
void changes_metrics(struct changes *ch, FILE *out);

#endif
