/* Reading from a hot standby (CAPLEDGER_READ_DATABASE_URL): WAL positions of the primary and
 * the standby, waiting for the standby to replay up to a position, and its lag. Positions are
 * byte offsets in the WAL (pg_lsn - '0/0'). */
#ifndef CAPLEDGER_STORE_REPLICA_H
#define CAPLEDGER_STORE_REPLICA_H

#include <stdint.h>

#include "store/store.h"

/* A position of the primary's WAL past every commit acknowledged before the call. With
 * synchronous_commit on (or local, remote_write, remote_apply) a commit is acknowledged only
 * once its record is flushed, so the flush position (pg_current_wal_flush_lsn()) is such a
 * bound, and it is WAL the standby can already have. With synchronous_commit off a commit
 * returns before its record is even written (a stale read of one's own write was seen so, on a
 * test cluster), so the insert position (pg_current_wal_insert_lsn()) is used: it may lie in WAL
 * not flushed yet, which the standby gets only after the WAL writer's next flush
 * (wal_writer_delay, 200 ms by default) — asking for it made reads on a quiet primary wait
 * CAPLEDGER_READ_WAIT_MS and then read the primary. */
enum store_status store_wal_position(struct store *primary, uint64_t *lsn);

enum replica_wait {
    REPLICA_CAUGHT_UP, /* the standby has replayed lsn: its answers include those writes */
    REPLICA_BEHIND,    /* still behind after wait_ms */
    REPLICA_DOWN,      /* cannot be reached or failed the query */
};

/* Polls the standby's pg_last_wal_replay_lsn() until it reaches lsn or wait_ms pass; the last
 * position seen goes to *replayed (UINT64_MAX for a read database that is not in recovery: a
 * primary, e.g. the same server, counts as caught up). */
enum replica_wait store_replica_wait(struct store *replica, uint64_t lsn, int wait_ms,
                                     uint64_t *replayed);

struct replica_lag {
    int up;           /* 1: the standby answered */
    int in_recovery;  /* 1: it is a standby (0: a primary used as the read database) */
    uint64_t bytes;   /* primary position - standby replay position (0 when not behind) */
    double seconds;   /* 0 when caught up, else now - last replayed commit's timestamp */
    uint64_t primary; /* the positions compared */
    uint64_t replayed;
};

/* Reads both positions; lag->up is 0 when the standby cannot be asked. The primary's position
 * is 0 when the primary cannot be asked (then bytes is 0). */
void store_replica_lag(struct store *primary, struct store *replica, struct replica_lag *lag);

#endif
