/* Hot-standby positions and lag. See replica.h. */
#include "store/replica.h"

#include <jansson.h>
#include <time.h>

#define POLL_INTERVAL_NS 2000000L /* 2 ms between replay-position polls */

static const char SQL_PRIMARY_LSN[] =
    "SELECT json_build_object('lsn', (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint)";

/* On a standby pg_last_wal_replay_lsn() is where replay stands; on a primary it is NULL. */
static const char SQL_REPLAY[] =
    "SELECT json_build_object('recovery', pg_is_in_recovery(),"
    " 'replayed', COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0),"
    " 'received', COALESCE((pg_last_wal_receive_lsn() - '0/0'::pg_lsn)::bigint, 0),"
    " 'replay_age', COALESCE(EXTRACT(epoch FROM clock_timestamp() -"
    " pg_last_xact_replay_timestamp())::float8, 0))";

static uint64_t json_u64(const json_t *obj, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(obj, key));
    return v > 0 ? (uint64_t)v : 0;
}

enum store_status store_wal_position(struct store *primary, uint64_t *lsn)
{
    json_t *row = NULL;
    enum store_status st = store_json(primary, SQL_PRIMARY_LSN, 0, NULL, &row);
    if (st == STORE_OK)
        *lsn = json_u64(row, "lsn");
    json_decref(row);
    return st;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

enum replica_wait store_replica_wait(struct store *replica, uint64_t lsn, int wait_ms,
                                     uint64_t *replayed_out)
{
    *replayed_out = 0;
    /* A short acquire: a standby pool that is busy or backing off means "use the primary". */
    struct store_conn *c = store_acquire(replica, 200);
    if (!c)
        return REPLICA_DOWN;
    int64_t deadline = now_ms() + wait_ms;
    enum replica_wait result = REPLICA_BEHIND;
    for (;;) {
        json_t *row = NULL;
        if (store_json_tx(c, SQL_REPLAY, 0, NULL, &row) != STORE_OK) {
            json_decref(row);
            result = REPLICA_DOWN;
            break;
        }
        int recovery = json_is_true(json_object_get(row, "recovery"));
        uint64_t replayed = json_u64(row, "replayed");
        json_decref(row);
        *replayed_out = recovery ? replayed : UINT64_MAX;
        if (!recovery || replayed >= lsn) {
            result = REPLICA_CAUGHT_UP;
            break;
        }
        if (now_ms() >= deadline)
            break;
        struct timespec pause = {0, POLL_INTERVAL_NS};
        nanosleep(&pause, NULL);
    }
    store_release(replica, c);
    return result;
}

void store_replica_lag(struct store *primary, struct store *replica, struct replica_lag *lag)
{
    *lag = (struct replica_lag){0};
    uint64_t at = 0;
    if (store_wal_position(primary, &at) != STORE_OK)
        at = 0;
    json_t *row = NULL;
    if (store_json(replica, SQL_REPLAY, 0, NULL, &row) != STORE_OK) {
        json_decref(row);
        return;
    }
    lag->up = 1;
    lag->in_recovery = json_is_true(json_object_get(row, "recovery"));
    lag->primary = at;
    lag->replayed = json_u64(row, "replayed");
    double age = json_number_value(json_object_get(row, "replay_age"));
    json_decref(row);
    if (!lag->in_recovery) {
        lag->replayed = at;
        return;
    }
    if (at > lag->replayed) {
        lag->bytes = at - lag->replayed;
        /* Behind: the replayed commit's age is how stale the standby's answers can be. */
        lag->seconds = age > 0 ? age : 0;
    }
}
