/* Reading from a hot standby (CAPLEDGER_READ_DATABASE_URL): WAL positions of the primary and
 * the standby, waiting for the standby to replay up to a position, and its lag. Positions are
 * byte offsets in the WAL (pg_lsn - '0/0'). */
#ifndef CAPLEDGER_STORE_REPLICA_H
#define CAPLEDGER_STORE_REPLICA_H

#include <stdint.h>

#include "store/store.h"

/* The primary's current WAL insert position (pg_current_wal_insert_lsn()): every commit
 * acknowledged before the call has its record before it, whatever the writer's
 * synchronous_commit. Not the flush position: a commit under synchronous_commit off (a SET in
 * the writer's session, PGOPTIONS) is acknowledged before its record is flushed, and reads
 * after it missed it (20 of 20 such writes in an attack pass). Not the write position either
 * (a stale read of one's own write was seen so). The insert position may lie in WAL not yet
 * flushed, which the standby gets only after the WAL writer's next round (wal_writer_delay,
 * 200 ms); on a quiet primary the only such WAL was the row cache listener's confirmations,
 * which therefore, on an instance with a standby, write WAL of their own and so commit with a
 * flush (store/changes.h). */
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
