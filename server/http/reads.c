/* Read routing between the primary and a hot standby. See reads.h. */
#include "http/reads.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/jcs.h"
#include "http/resource.h"
#include "http/internal.h"
#include "core/rowcache.h"
#include "store/changes.h"
#include "store/replica.h"

#define SETS 256
#define WAYS 4

struct entry {
    char user[40];
    uint64_t lsn;     /* the primary's position after this user's last write through here */
    int64_t stamp_ms; /* when lsn was last known to cover every acknowledged write */
    int pending;      /* writes of this user in flight: their position is not known yet */
    int used;
};

enum target {
    TO_REPLICA,
    TO_PRIMARY_BEHIND, /* the standby had not replayed the caller's writes in time */
    TO_PRIMARY_DOWN,   /* the standby could not be reached */
    TO_PRIMARY_NO_LSN, /* the primary's position could not be read */
    TARGETS
};

static const char *const TARGET_LABEL[TARGETS] = {
    "target=\"replica\",reason=\"caught_up\"",
    "target=\"primary\",reason=\"replica_behind\"",
    "target=\"primary\",reason=\"replica_down\"",
    "target=\"primary\",reason=\"position_unknown\"",
};

struct reads {
    struct store *primary;
    struct store *replica;
    int wait_ms;
    pthread_mutex_t lock;
    struct entry entries[SETS * WAYS];
    /* The standby had replayed at least floor_lsn when last asked, and its pool has not
     * reconnected since (floor_reconnects): a restarted standby may start behind it. */
    uint64_t floor_lsn;
    uint64_t floor_reconnects;
    atomic_uint_fast64_t count[TARGETS];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct reads *reads_new(struct store *primary, struct store *replica, int wait_ms)
{
    struct reads *rd = calloc(1, sizeof *rd);
    if (!rd)
        return NULL;
    rd->primary = primary;
    rd->replica = replica;
    rd->wait_ms = wait_ms;
    pthread_mutex_init(&rd->lock, NULL);
    for (int i = 0; i < TARGETS; i++)
        atomic_init(&rd->count[i], 0);
    return rd;
}

void reads_free(struct reads *rd)
{
    if (!rd)
        return;
    pthread_mutex_destroy(&rd->lock);
    free(rd);
}

static size_t set_of(const char *user)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)user; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (size_t)(h % SETS) * WAYS;
}

/* Under the lock. */
static struct entry *find(struct reads *rd, const char *user)
{
    struct entry *set = &rd->entries[set_of(user)];
    for (int w = 0; w < WAYS; w++)
        if (set[w].used && strcmp(set[w].user, user) == 0)
            return &set[w];
    return NULL;
}

/* Under the lock: the user's entry, else a new one in place of an unused or the oldest idle
 * entry of its set; NULL when every entry of the set has a write in flight. Dropping an entry
 * is always safe: a user without one is served as unknown. */
static struct entry *find_or_add(struct reads *rd, const char *user)
{
    struct entry *e = find(rd, user);
    if (e)
        return e;
    struct entry *set = &rd->entries[set_of(user)];
    for (int w = 0; w < WAYS; w++) {
        struct entry *c = &set[w];
        if (c->pending)
            continue;
        if (!c->used) {
            e = c;
            break;
        }
        if (!e || c->stamp_ms < e->stamp_ms)
            e = c;
    }
    if (!e)
        return NULL;
    *e = (struct entry){.used = 1};
    snprintf(e->user, sizeof e->user, "%s", user);
    return e;
}

static struct store *to(struct reads *rd, enum target t)
{
    atomic_fetch_add(&rd->count[t], 1);
    return t == TO_REPLICA ? rd->replica : rd->primary;
}

enum reads_need_status reads_need(struct reads *rd, struct req *r, uint64_t *need_out)
{
    const char *user = r->who.user_id;
    if (!rd || !user[0])
        return READS_NEED_UNKNOWN;
    uint64_t need = 0;
    int known = 0;
    int64_t now = now_ms();
    pthread_mutex_lock(&rd->lock);
    struct entry *e = find(rd, user);
    if (e && e->pending) {
        pthread_mutex_unlock(&rd->lock);
        return READS_NEED_PENDING;
    }
    if (e && now - e->stamp_ms <= READS_TRUST_MS) {
        need = e->lsn;
        known = 1;
    }
    pthread_mutex_unlock(&rd->lock);

    if (!known) {
        /* Every write acknowledged before now lies at or before the primary's position. */
        if (store_wal_position(rd->primary, &need) != STORE_OK)
            return READS_NEED_UNKNOWN;
        pthread_mutex_lock(&rd->lock);
        e = find_or_add(rd, user);
        if (e && !e->pending) {
            if (e->lsn > need)
                need = e->lsn;
            e->lsn = need;
            e->stamp_ms = now;
        }
        pthread_mutex_unlock(&rd->lock);
    }
    *need_out = need;
    return READS_NEED_OK;
}

struct store *reads_choose(struct reads *rd)
{
    if (!rd->replica)
        return rd->primary;
    /* Every write acknowledged to anyone before this read began lies at or before the
     * primary's position now. No memory of the caller stands in for it: a caller's write may
     * be acknowledged through another instance after this one last saw them (HAProxy moves a
     * caller while a write is still in flight there, or retries a request elsewhere), and the
     * standby could then answer without it. */
    uint64_t need = 0;
    enum store_status st = store_wal_position(rd->primary, &need);
    if (st != STORE_OK) {
        /* The primary cannot be asked: reading it instead would wait for it once more. */
        struct store *primary = to(rd, TO_PRIMARY_NO_LSN);
        return st == STORE_UNAVAILABLE ? NULL : primary;
    }
    /* Replay only moves forward while the standby's sessions last: a position it had already
     * replayed spares asking it again. */
    struct store_stats stats;
    store_stats(rd->replica, &stats);
    pthread_mutex_lock(&rd->lock);
    int floor_ok = rd->floor_reconnects == stats.reconnects && rd->floor_lsn >= need;
    pthread_mutex_unlock(&rd->lock);
    if (floor_ok)
        return to(rd, TO_REPLICA);
    uint64_t replayed = 0;
    enum replica_wait w = store_replica_wait(rd->replica, need, rd->wait_ms, &replayed);
    store_stats(rd->replica, &stats);
    pthread_mutex_lock(&rd->lock);
    if (w == REPLICA_DOWN || rd->floor_reconnects != stats.reconnects) {
        rd->floor_lsn = 0;
        rd->floor_reconnects = stats.reconnects;
    }
    if (w != REPLICA_DOWN && replayed > rd->floor_lsn)
        rd->floor_lsn = replayed;
    pthread_mutex_unlock(&rd->lock);
    switch (w) {
    case REPLICA_CAUGHT_UP:
        return to(rd, TO_REPLICA);
    case REPLICA_BEHIND:
        return to(rd, TO_PRIMARY_BEHIND);
    case REPLICA_DOWN:
        break;
    }
    return to(rd, TO_PRIMARY_DOWN);
}

void reads_write_begins(struct reads *rd, struct req *r)
{
    if (!r->who.user_id[0])
        return;
    pthread_mutex_lock(&rd->lock);
    struct entry *e = find_or_add(rd, r->who.user_id);
    if (e) {
        e->pending++;
        r->reads_pending = 1;
    }
    pthread_mutex_unlock(&rd->lock);
}

void reads_write_ends(struct reads *rd, struct req *r)
{
    if (!r->reads_pending)
        return;
    r->reads_pending = 0;
    uint64_t at = 0;
    int ok = store_wal_position(rd->primary, &at) == STORE_OK;
    pthread_mutex_lock(&rd->lock);
    struct entry *e = find(rd, r->who.user_id);
    if (e) {
        if (e->pending > 0)
            e->pending--;
        if (ok) {
            if (at > e->lsn)
                e->lsn = at;
            e->stamp_ms = now_ms();
        } else {
            e->stamp_ms = INT64_MIN / 2; /* unknown: the next read asks the primary */
        }
    }
    pthread_mutex_unlock(&rd->lock);
}

void reads_metrics(struct reads *rd, FILE *out)
{
    if (!rd || !rd->replica)
        return;
    struct replica_lag lag;
    store_replica_lag(rd->primary, rd->replica, &lag);
    fprintf(out,
            "# HELP capledger_db_replica_up 1 when the read database (hot standby) answers.\n"
            "# TYPE capledger_db_replica_up gauge\n"
            "capledger_db_replica_up %d\n"
            "# HELP capledger_db_replica_in_recovery 1 when the read database is a standby.\n"
            "# TYPE capledger_db_replica_in_recovery gauge\n"
            "capledger_db_replica_in_recovery %d\n",
            lag.up, lag.in_recovery);
    if (lag.up && lag.primary)
        fprintf(out,
                "# HELP capledger_db_replica_lag_bytes WAL the standby has not replayed yet.\n"
                "# TYPE capledger_db_replica_lag_bytes gauge\n"
                "capledger_db_replica_lag_bytes %llu\n"
                "# HELP capledger_db_replica_lag_seconds Age of the last replayed commit "
                "while the standby is behind (0 when caught up).\n"
                "# TYPE capledger_db_replica_lag_seconds gauge\n"
                "capledger_db_replica_lag_seconds %.3f\n",
                (unsigned long long)lag.bytes, lag.seconds);
    fputs("# HELP capledger_db_reads_total Read-only requests that may use the standby, by the "
          "database that answered and why.\n"
          "# TYPE capledger_db_reads_total counter\n",
          out);
    for (int i = 0; i < TARGETS; i++)
        fprintf(out, "capledger_db_reads_total{%s} %llu\n", TARGET_LABEL[i],
                (unsigned long long)atomic_load(&rd->count[i]));
}

/* How long a read whose row is cached waits for the listener to apply the caller's position
 * before it reads the database instead. */
#define ROW_AWAIT_MS 20

/* What the cache keeps beside a row's text: its ETag, a newline, then "=" and its team, or "-"
 * for a row of no team. */
static int row_meta(const json_t *row, char meta[ROWCACHE_META_MAX])
{
    char etag[ETAG_MAX];
    const char *team = json_string_value(json_object_get(row, "team"));
    int n = snprintf(meta, ROWCACHE_META_MAX, "%s\n%s%s", etag_version(row, etag), team ? "=" : "-",
                     team ? team : "");
    return n > 0 && n < ROWCACHE_META_MAX && !strchr(team ? team : "", '\n') ? 0 : -1;
}

static void row_answer(struct req *r, const char *what, const char *text, size_t len,
                       const char *meta)
{
    const char *nl = strchr(meta, '\n');
    const char *team = nl && nl[1] == '=' ? nl + 2 : NULL;
    if (!nl || !principal_can_read_team(&r->who, team)) {
        res_not_found(r, what);
        return;
    }
    char extra[ETAG_MAX + 16];
    snprintf(extra, sizeof extra, "ETag: \"%.*s\"\r\n", (int)(nl - meta), meta);
    resp_bytes(r, 200, "application/json", text, len, extra);
}

void resp_cached_row(struct req *r, int kind, const char *id,
                     enum store_status (*get)(struct store *, const char *, json_t **),
                     const char *what)
{
    struct rowcache *rc = r->app->rows;
    uint64_t need = 0;
    char meta[ROWCACHE_META_MAX];
    /* The key is the id as PostgreSQL prints it (the trigger names rows so): an upper-case
     * spelling of a uuid is the same row, and must be forgotten with it. */
    char key[ROWCACHE_ID_MAX + 1];
    size_t n = strlen(id);
    if (n > ROWCACHE_ID_MAX)
        rc = NULL;
    for (size_t i = 0; rc && i <= n; i++)
        key[i] = (char)tolower((unsigned char)id[i]);
    if (rc && reads_need(r->app->reads, r, &need) == READS_NEED_OK) {
        int behind = 0;
        char *text = rowcache_get(rc, kind, key, need, &behind, meta);
        if (text) {
            row_answer(r, what, text, strlen(text), meta);
            free(text);
            return;
        }
        /* Cached, but the caller's writes are not applied yet: the listener confirms a newer
         * position at once, usually within a round trip; wait that long rather than read. */
        if (behind) {
            changes_wanted(r->app->changes);
            if (rowcache_await(rc, need, ROW_AWAIT_MS) &&
                (text = rowcache_get(rc, kind, key, need, NULL, meta)) != NULL) {
                row_answer(r, what, text, strlen(text), meta);
                free(text);
                return;
            }
        }
    }
    uint64_t ticket = rowcache_ticket(rc);
    json_t *row = NULL;
    enum store_status st = get(r->app->store, id, &row);
    if (st == STORE_NOT_FOUND) {
        json_decref(row);
        if (rc) /* gone (its notice may still be on its way) */
            rowcache_drop(rc, kind, key);
        res_not_found(r, what);
        return;
    }
    if (!(row = req_stored(r, st, row, what)))
        return;
    size_t len = 0;
    char *text = row_meta(row, meta) == 0 ? jcs_dump(row, &len) : NULL;
    if (!text) { /* JCS refuses it (a NUL in a string), or no room for its meta: not cached */
        if (principal_can_read_team(&r->who, json_string_value(json_object_get(row, "team"))))
            resp_read_versioned(r, row);
        else {
            json_decref(row);
            res_not_found(r, what);
        }
        return;
    }
    json_decref(row);
    if (rc)
        rowcache_put(rc, kind, key, text, meta, ticket);
    row_answer(r, what, text, len, meta);
    free(text);
}
