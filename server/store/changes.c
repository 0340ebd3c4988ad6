/* The change listener. See changes.h. */
#include "store/changes.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sodium.h>

#include "core/auth/secret.h"
#include "core/rowcache.h"
#include "store/store_private.h"

#define SYNC_IDLE_MS 200     /* confirm a position this often when nobody asks */
#define SYNC_TIMEOUT_MS 5000 /* a confirmation that does not come back: the connection is bad */
#define PAUSE_MIN_MS 100
#define PAUSE_MAX_MS 2000

static const char *const TABLES[] = {[ROW_WORKLOAD] = "workload"};

struct changes {
    struct store *primary;
    struct rowcache *cache;
    int flush; /* confirmations commit with a flush (changes.h) */
    pthread_t thread;
    int wake; /* eventfd: stop or a wanted confirmation */
    atomic_int stop;
    atomic_int wanted;
    atomic_int up;
    atomic_uint_fast64_t syncs, notifications, connects;
    char channel[64]; /* this instance's own confirmations */
};

/* A confirmation: the position, then a notification that comes back once every commit up to
 * it has been delivered. A transaction that only notifies commits without a flush; the
 * flushed form adds a logical message, WAL of its own, and synchronous_commit local for its own
 * transaction (a server set to off would not flush it otherwise), so that its commit is
 * flushed. Local, not on: a commit that notifies holds PostgreSQL's one NOTIFY lock until it
 * returns, and one that waited for a synchronous standby (synchronous_standby_names naming one
 * that is not connected) held every notifying write of the cluster with it. lock_timeout: a
 * confirmation that waits for that lock behind another session's commit gives up by itself
 * when the listener does, so one that was abandoned leaves no backend behind. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define SQL_CONFIRM_SELECT                                                                         \
    "SELECT (pg_current_wal_insert_lsn() - '0/0')::text, pg_notify($1, $2), "                      \
    "set_config('lock_timeout', '" STR(SYNC_TIMEOUT_MS) "', true)"
static const char SQL_CONFIRM[] = SQL_CONFIRM_SELECT;
static const char SQL_CONFIRM_FLUSHED[] =
    SQL_CONFIRM_SELECT ", pg_logical_emit_message(true, 'capledger', ''), "
                       "set_config('synchronous_commit', 'local', true)";

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void log_line(const char *msg, const char *detail)
{
    json_t *line =
        json_pack("{s:s, s:s, s:s}", "level", "warn", "msg", msg, "detail", detail ? detail : "");
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL; /* escapes libpq's newlines */
    if (text)
        fprintf(stderr, "%s\n", text);
    free(text);
    json_decref(line);
}

/* Waits up to ms for the connection's socket (fd >= 0) or the wake fd; 1 when the socket is
 * readable. Drains the wake fd. */
static int wait_for(struct changes *ch, int fd, int ms)
{
    struct pollfd p[2] = {{.fd = ch->wake, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    int n = poll(p, fd >= 0 ? 2 : 1, ms < 0 ? 0 : ms);
    if (n > 0 && (p[0].revents & POLLIN)) {
        uint64_t v;
        ssize_t got = read(ch->wake, &v, sizeof v);
        (void)got;
    }
    return n > 0 && fd >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP));
}

static void forget(struct changes *ch, const char *payload)
{
    const char *colon = strchr(payload, ':');
    for (size_t k = 0; colon && k < sizeof TABLES / sizeof *TABLES; k++)
        if (strlen(TABLES[k]) == (size_t)(colon - payload) &&
            strncmp(payload, TABLES[k], (size_t)(colon - payload)) == 0) {
            rowcache_forget(ch->cache, (int)k, colon + 1);
            return;
        }
    rowcache_reset(ch->cache); /* a change we cannot place: forget everything */
}

/* Sends confirmation number n and reads the position it returns into *lsn; 1 when it came,
 * 0 when the connection failed, the listener is stopping, or it did not come within
 * SYNC_TIMEOUT_MS (the caller then closes the connection). Never blocks, so that neither the
 * listener nor the stop of the instance waits on a primary that does not answer. Not cancelled
 * either: PQcancel itself blocks on such a primary, and the statement ends by itself (above). */
static int confirm(struct changes *ch, PGconn *pg, const char *n, uint64_t *lsn)
{
    const char *p[] = {ch->channel, n};
    if (!PQsendQueryParams(pg, ch->flush ? SQL_CONFIRM_FLUSHED : SQL_CONFIRM, 2, NULL, p, NULL,
                           NULL, 0)) {
        log_line("row cache: confirming a position failed", PQerrorMessage(pg));
        return 0;
    }
    /* The row comes before the commit, and the commit may still fail (lock_timeout): only the
     * end of the statement tells, and every result is read without blocking. */
    int64_t deadline = now_ms() + SYNC_TIMEOUT_MS;
    int row = 0, failed = 0;
    for (;;) {
        if (!PQconsumeInput(pg)) {
            log_line("row cache: confirming a position failed", PQerrorMessage(pg));
            return 0;
        }
        while (!PQisBusy(pg)) {
            PGresult *res = PQgetResult(pg);
            if (!res)
                return row && !failed;
            if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
                *lsn = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
                row = 1;
            } else if (PQresultStatus(res) != PGRES_TUPLES_OK) {
                log_line("row cache: confirming a position failed", PQresultErrorMessage(res));
                failed = 1;
            }
            PQclear(res);
        }
        int64_t left = deadline - now_ms();
        if (atomic_load(&ch->stop))
            return 0;
        if (left <= 0) {
            log_line("row cache: a confirmation did not come back", "reconnecting");
            return 0;
        }
        wait_for(ch, PQsocket(pg), (int)left);
    }
}

/* Runs on one connection until it fails or the listener stops. up: 1 from the first
 * confirmation that comes back (a connection whose confirmations never do is not a cache). */
static void listen_on(struct changes *ch, PGconn *pg)
{
    uint64_t sent = 0, pending_lsn = 0;
    int outstanding = 0;
    int64_t sent_at = 0, next_sync = 0;
    while (!atomic_load(&ch->stop)) {
        int64_t now = now_ms();
        if (!outstanding && (atomic_exchange(&ch->wanted, 0) || now >= next_sync)) {
            char n[24];
            snprintf(n, sizeof n, "%" PRIu64, ++sent);
            if (!confirm(ch, pg, n, &pending_lsn))
                return;
            outstanding = 1;
            sent_at = now;
            atomic_fetch_add(&ch->syncs, 1);
        }
        if (!PQconsumeInput(pg)) {
            log_line("row cache: the listener's connection failed", PQerrorMessage(pg));
            return;
        }
        PGnotify *nt;
        while ((nt = PQnotifies(pg)) != NULL) {
            if (strcmp(nt->relname, ch->channel) == 0) {
                /* only our own session's confirmation counts: another session (one that read
                 * the channel's name from pg_stat_activity) cannot move the position */
                if (outstanding && nt->be_pid == PQbackendPID(pg) &&
                    strtoull(nt->extra, NULL, 10) == sent) {
                    rowcache_applied(ch->cache, pending_lsn);
                    atomic_store(&ch->up, 1);
                    outstanding = 0;
                    next_sync = now_ms() + SYNC_IDLE_MS;
                }
            } else {
                atomic_fetch_add(&ch->notifications, 1);
                forget(ch, nt->extra);
            }
            PQfreemem(nt);
        }
        now = now_ms();
        if (outstanding && now - sent_at > SYNC_TIMEOUT_MS) {
            log_line("row cache: a confirmation did not come back", "reconnecting");
            return;
        }
        int64_t until = outstanding ? sent_at + SYNC_TIMEOUT_MS : next_sync;
        if (outstanding || !atomic_load(&ch->wanted))
            wait_for(ch, PQsocket(pg), (int)(until - now));
    }
}

static void *run(void *arg)
{
    struct changes *ch = arg;
    int pause = PAUSE_MIN_MS;
    while (!atomic_load(&ch->stop)) {
        PGconn *pg = store__connect(ch->primary);
        char listen_sql[128];
        snprintf(listen_sql, sizeof listen_sql, "LISTEN capledger_rows; LISTEN \"%s\"",
                 ch->channel);
        PGresult *res = pg ? PQexec(pg, listen_sql) : NULL;
        int ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        if (ok) {
            /* from here on every change is notified: drop what was filled before */
            rowcache_reset(ch->cache);
            atomic_fetch_add(&ch->connects, 1);
            pause = PAUSE_MIN_MS;
            listen_on(ch, pg);
            atomic_store(&ch->up, 0);
            rowcache_reset(ch->cache);
        }
        if (pg)
            PQfinish(pg);
        if (atomic_load(&ch->stop))
            break;
        wait_for(ch, -1, pause);
        pause = pause * 2 > PAUSE_MAX_MS ? PAUSE_MAX_MS : pause * 2;
    }
    return NULL;
}

struct changes *changes_start(struct store *primary, struct rowcache *cache, int flush)
{
    struct changes *ch = calloc(1, sizeof *ch);
    if (!ch)
        return NULL;
    ch->primary = primary;
    ch->cache = cache;
    ch->flush = flush;
    char hex[17];
    secret_random_hex(hex, sizeof hex);
    snprintf(ch->channel, sizeof ch->channel, "capledger_sync_%s", hex);
    ch->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ch->wake < 0) {
        free(ch);
        return NULL;
    }
    if (pthread_create(&ch->thread, NULL, run, ch) != 0) {
        close(ch->wake);
        free(ch);
        return NULL;
    }
    return ch;
}

static void poke(struct changes *ch)
{
    uint64_t one = 1;
    ssize_t n = write(ch->wake, &one, sizeof one);
    (void)n;
}

void changes_stop(struct changes *ch)
{
    if (!ch)
        return;
    atomic_store(&ch->stop, 1);
    poke(ch);
    pthread_join(ch->thread, NULL);
    close(ch->wake);
    free(ch);
}

void changes_wanted(struct changes *ch)
{
    if (ch && !atomic_exchange(&ch->wanted, 1))
        poke(ch);
}

void changes_metrics(struct changes *ch, FILE *out)
{
    struct rowcache_stats st;
    rowcache_stats(ch ? ch->cache : NULL, &st);
    fprintf(out,
            "# HELP capledger_row_cache_listener_up 1 while the row cache's change listener "
            "holds its connection to the primary and its confirmations come back.\n"
            "# TYPE capledger_row_cache_listener_up gauge\n"
            "capledger_row_cache_listener_up %d\n"
            "# HELP capledger_row_cache_requests_total Cached reads by outcome (stale: cached, "
            "but the cache had not yet applied the caller's writes).\n"
            "# TYPE capledger_row_cache_requests_total counter\n"
            "capledger_row_cache_requests_total{outcome=\"hit\"} %" PRIu64 "\n"
            "capledger_row_cache_requests_total{outcome=\"miss\"} %" PRIu64 "\n"
            "capledger_row_cache_requests_total{outcome=\"stale\"} %" PRIu64 "\n"
            "# HELP capledger_row_cache_fills_total Rows read from the primary and cached "
            "(dropped: a change overtook the read).\n"
            "# TYPE capledger_row_cache_fills_total counter\n"
            "capledger_row_cache_fills_total{outcome=\"cached\"} %" PRIu64 "\n"
            "capledger_row_cache_fills_total{outcome=\"dropped\"} %" PRIu64 "\n"
            "# HELP capledger_row_cache_changes_total Row changes notified by the primary.\n"
            "# TYPE capledger_row_cache_changes_total counter\n"
            "capledger_row_cache_changes_total %" PRIu64 "\n"
            "# HELP capledger_row_cache_confirmations_total Positions confirmed with the "
            "primary.\n"
            "# TYPE capledger_row_cache_confirmations_total counter\n"
            "capledger_row_cache_confirmations_total %" PRIu64 "\n"
            "# HELP capledger_row_cache_entries Rows cached now.\n"
            "# TYPE capledger_row_cache_entries gauge\n"
            "capledger_row_cache_entries %" PRIu64 "\n"
            "# HELP capledger_row_cache_bytes Bytes of row text cached now.\n"
            "# TYPE capledger_row_cache_bytes gauge\n"
            "capledger_row_cache_bytes %" PRIu64 "\n",
            ch ? atomic_load(&ch->up) : 0, st.hits, st.misses, st.stale, st.fills, st.fills_dropped,
            ch ? (uint64_t)atomic_load(&ch->notifications) : 0,
            ch ? (uint64_t)atomic_load(&ch->syncs) : 0, st.entries, st.bytes);
}
