/* Connection pool and query helpers over libpq. See store.h for the contract.
 *
 * The pool is a fixed array of slots guarded by one mutex and a condition variable. A slot
 * holds a PGconn or NULL; acquire takes a free slot and (re)connects it when it is NULL or
 * no longer CONNECTION_OK. After a failed connect the pool refuses new connects for a short
 * back-off so that, while the database is down, requests answer 503 at once instead of each
 * paying a connect timeout. */
#include "store/store.h"
#include "store/store_private.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ledger/codec.h"
#include "core/ledger/note.h"

#define RECONNECT_BACKOFF_MS 250
#define CONNECT_TIMEOUT_S "3"

/* Statements prepared on one connection: the SQL text (a copy, compared in full, so a
 * caller's reused buffer can never run the wrong statement) and its server-side name "sN". */
#define PREPARED_MAX 96

struct prepared {
    const char *key; /* the caller's pointer: a fast first test */
    char *sql;       /* owned copy */
};

/* A checkpoint this connection's transaction signed: it becomes the store's seen checkpoint
 * once (and only if) the transaction commits. */
struct seen_pending {
    int set;
    char origin[NOTE_NAME_MAX + 1];
    uint64_t size;
    uint8_t root[32];
};

struct store_conn {
    struct store *owner;
    PGconn *pg;
    PGcancel *cancel; /* pg's cancel request, set and freed under the pool's lock */
    int in_use;
    struct seen_pending pending;
    struct prepared prepared[PREPARED_MAX];
    int nprepared;
    char sqlstate[6];
    char constraint[64];
    char error[256];
    int large; /* carried a statement or result over CONN_LARGE_BYTES: closed when handed back */
};

/* libpq grows a connection's send and receive buffers to the largest statement and result it
 * carried and never shrinks them: an 8 MiB array of offers left 18 MiB on each pooled connection
 * it used (up to the pool's size times that). Such a connection is closed when handed back and
 * made again on next use (a connect costs a few ms; large statements are rare). */
#define CONN_LARGE_BYTES ((size_t)1 << 20)

static void forget_prepared(struct store_conn *c);

/* A thread waiting for a connection. Waiters are served in arrival order: a connection handed
 * back goes straight to the oldest waiter, so a thread arriving later cannot take it first (with
 * one condition variable for all, newcomers barged past the woken waiter and, with 32 clients on
 * 16 connections, some requests waited 400 ms while others went through at once). */
struct pool_waiter {
    struct pool_waiter *next;
    pthread_cond_t cv;
    struct store_conn *given;
};

struct store {
    char *conninfo;
    int size;
    struct store_conn *slots;
    pthread_mutex_t lock;
    struct pool_waiter *wait_head, *wait_tail; /* under lock */
    int64_t connect_failed_at_ms;
    atomic_uint_fast64_t db_errors;
    atomic_uint_fast64_t reconnects;
    char *log_fault; /* the first evidence that the decision log is inconsistent (under lock) */
    /* The largest checkpoint this process signed or observed, and its file (under seen_lock). */
    pthread_mutex_t seen_lock;
    char *seen_path;
    int seen_set;
    struct note_checkpoint seen;
};

/* Closes c's connection (its owner, or the pool at close). The cancel request goes first, under
 * the pool's lock, so store_cancel_running never uses a freed one. */
static void drop_connection(struct store *s, struct store_conn *c, int locked)
{
    if (!locked)
        pthread_mutex_lock(&s->lock);
    PGcancel *cancel = c->cancel;
    c->cancel = NULL;
    if (!locked)
        pthread_mutex_unlock(&s->lock);
    if (cancel)
        PQfreeCancel(cancel);
    if (c->pg)
        PQfinish(c->pg);
    c->pg = NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *store_status_name(enum store_status s)
{
    switch (s) {
    case STORE_OK:
        return "ok";
    case STORE_NOT_FOUND:
        return "not_found";
    case STORE_CONFLICT:
        return "conflict";
    case STORE_INVALID:
        return "invalid";
    case STORE_UNAVAILABLE:
        return "unavailable";
    case STORE_ERROR:
        return "error";
    case STORE_ACTOR_GONE:
        return "actor_gone";
    }
    return "error";
}

struct store *store_open(const char *conninfo, int pool_size)
{
    if (pool_size < 1)
        pool_size = 1;
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->conninfo = strdup(conninfo ? conninfo : "");
    s->slots = calloc((size_t)pool_size, sizeof *s->slots);
    if (!s->conninfo || !s->slots) {
        free(s->conninfo);
        free(s->slots);
        free(s);
        return NULL;
    }
    s->size = pool_size;
    for (int i = 0; i < pool_size; i++)
        s->slots[i].owner = s;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->seen_lock, NULL);
    return s;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->size; i++) {
        drop_connection(s, &s->slots[i], 1);
        forget_prepared(&s->slots[i]);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->seen_lock);
    free(s->seen_path);
    free(s->slots);
    free(s->conninfo);
    free(s->log_fault);
    free(s);
}

void store__log_fault_set(struct store *s, const char *evidence)
{
    pthread_mutex_lock(&s->lock);
    if (!s->log_fault)
        s->log_fault = strdup(evidence);
    pthread_mutex_unlock(&s->lock);
}

bool store_log_fault(struct store *s, char *evidence, size_t size)
{
    pthread_mutex_lock(&s->lock);
    bool fault = s->log_fault != NULL;
    if (fault && evidence && size)
        snprintf(evidence, size, "%s", s->log_fault);
    pthread_mutex_unlock(&s->lock);
    return fault;
}

/* ---- the seen checkpoint (store.h: store_log_state_open) ---- */

/* Reads a state file (a checkpoint body); 1 when read, 0 when absent, -1 when unreadable. */
static int read_seen(const char *path, struct note_checkpoint *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : -1;
    char text[NOTE_NAME_MAX + 128];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (bad)
        return -1;
    text[n] = '\0';
    return note_checkpoint_parse(text, n, out) == 0 ? 1 : -1;
}

/* Writes path atomically: a temporary file beside it, fsync, rename, fsync of the folder. */
static int write_seen(const char *path, const struct note_checkpoint *cp)
{
    char *body = note_checkpoint_body(cp->origin, cp->size, cp->root);
    size_t tmp_len = strlen(path) + 32;
    char *tmp = malloc(tmp_len), *dir_copy = strdup(path);
    int rc = -1, fd = -1;
    if (!body || !tmp || !dir_copy)
        goto out;
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        goto out;
    size_t len = strlen(body);
    if (write(fd, body, len) != (ssize_t)len || fsync(fd) != 0)
        goto out;
    if (close(fd) != 0) {
        fd = -1;
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto out;
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    if (rc != 0 && tmp)
        unlink(tmp);
    free(body);
    free(tmp);
    free(dir_copy);
    return rc;
}

int store_log_state_open(struct store *s, const char *path, char *why, size_t why_size)
{
    struct note_checkpoint cp;
    int got = read_seen(path, &cp);
    if (got < 0) {
        snprintf(why, why_size,
                 "the log state file %s cannot be read or is not a checkpoint body (origin, "
                 "size, base64 root): restore it, or move it away only if this server never "
                 "signed for this log",
                 path);
        return -1;
    }
    pthread_mutex_lock(&s->seen_lock);
    free(s->seen_path);
    s->seen_path = strdup(path);
    s->seen_set = got == 1;
    if (got == 1)
        s->seen = cp;
    pthread_mutex_unlock(&s->seen_lock);
    if (!s->seen_path) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    return 0;
}

const char *store__log_state_path(struct store *s)
{
    return s->seen_path ? s->seen_path : "(none)";
}

int store__log_seen(struct store *s, struct note_checkpoint *out)
{
    pthread_mutex_lock(&s->seen_lock);
    int set = s->seen_set;
    if (set)
        *out = s->seen;
    pthread_mutex_unlock(&s->seen_lock);
    return set;
}

struct store *store__conn_store(struct store_conn *c)
{
    return c->owner;
}

void store__log_seen_advance(struct store *s, const char *origin, uint64_t size,
                             const uint8_t root[32])
{
    pthread_mutex_lock(&s->seen_lock);
    if (!s->seen_path) { /* no state file (tools other than serve): nothing is kept */
        pthread_mutex_unlock(&s->seen_lock);
        return;
    }
    /* Instances sharing the file keep the largest any of them wrote. */
    struct note_checkpoint file;
    int in_file = read_seen(s->seen_path, &file) == 1 && strcmp(file.origin, origin) == 0;
    if (in_file && (!s->seen_set || file.size > s->seen.size)) {
        s->seen = file;
        s->seen_set = 1;
    }
    if (!s->seen_set || size > s->seen.size) {
        snprintf(s->seen.origin, sizeof s->seen.origin, "%s", origin);
        s->seen.size = size;
        memcpy(s->seen.root, root, 32);
        s->seen_set = 1;
    }
    int stale = !in_file || file.size != s->seen.size || memcmp(file.root, s->seen.root, 32) != 0;
    if (stale && write_seen(s->seen_path, &s->seen) != 0)
        fprintf(stderr,
                "{\"level\":\"error\",\"msg\":\"cannot write the log state file\","
                "\"path\":\"%s\",\"error\":\"%s\"}\n",
                s->seen_path, strerror(errno));
    pthread_mutex_unlock(&s->seen_lock);
}

void store__log_seen_pending(struct store_conn *c, const char *origin, uint64_t size,
                             const uint8_t root[32])
{
    c->pending.set = 1;
    snprintf(c->pending.origin, sizeof c->pending.origin, "%s", origin);
    c->pending.size = size;
    memcpy(c->pending.root, root, 32);
}

void store_stats(struct store *s, struct store_stats *out)
{
    pthread_mutex_lock(&s->lock);
    out->size = s->size;
    out->in_use = 0;
    out->idle = 0;
    for (int i = 0; i < s->size; i++) {
        if (s->slots[i].in_use)
            out->in_use++;
        else if (s->slots[i].pg)
            out->idle++;
    }
    pthread_mutex_unlock(&s->lock);
    out->db_errors = atomic_load(&s->db_errors);
    out->reconnects = atomic_load(&s->reconnects);
}

/* The statements named on a connection die with it. */
static void forget_prepared(struct store_conn *c)
{
    for (int i = 0; i < c->nprepared; i++)
        free(c->prepared[i].sql);
    c->nprepared = 0;
}

static PGconn *connect_db(const char *conninfo)
{
    /* expand_dbname lets conninfo be a URL or key=value string; our connect_timeout and
     * application_name come first so the user's conninfo can override them. */
    /* client_min_messages: NOTICEs (e.g. "already exists, skipping") would otherwise go to
     * stderr unformatted, between the JSON log lines. */
    const char *keys[] = {"connect_timeout", "application_name", "options", "dbname", NULL};
    /* temp_buffers (allocated only as used; settable only before a session's first temporary
     * table): an upload's staging table stays in memory up to 64 MB instead of going to disk
     * at 8 MB. */
    const char *vals[] = {CONNECT_TIMEOUT_S, "capledger",
                          "-c client_min_messages=warning -c temp_buffers=64MB", conninfo, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (pg && PQstatus(pg) != CONNECTION_OK) {
        PQfinish(pg);
        return NULL;
    }
    if (pg) {
        PGresult *r = PQexec(pg, "SET TIME ZONE 'UTC'");
        PQclear(r);
    }
    return pg;
}

PGconn *store__connect(struct store *s)
{
    return connect_db(s->conninfo);
}

enum store_status store_probe(const char *conninfo, char *why, size_t why_size)
{
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {CONNECT_TIMEOUT_S, "capledger", conninfo, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    enum store_status st = STORE_OK;
    if (!pg || PQstatus(pg) != CONNECTION_OK) {
        st = STORE_UNAVAILABLE;
        const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
        size_t n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            n--;
        snprintf(why, why_size, "%.*s", (int)n, msg);
    }
    PQfinish(pg);
    return st;
}

/* Under s->lock: c to the oldest waiter, or back to the pool. */
static void hand_back_locked(struct store *s, struct store_conn *c)
{
    struct pool_waiter *w = s->wait_head;
    if (!w) {
        c->in_use = 0;
        return;
    }
    s->wait_head = w->next;
    if (!s->wait_head)
        s->wait_tail = NULL;
    w->given = c; /* stays in use: it changes hands */
    pthread_cond_signal(&w->cv);
}

/* Under s->lock: waits in line for a connection until the deadline; NULL when none came. */
static struct store_conn *wait_in_line(struct store *s, const struct timespec *deadline)
{
    struct pool_waiter w = {.next = NULL, .given = NULL};
    pthread_cond_init(&w.cv, NULL);
    if (s->wait_tail)
        s->wait_tail->next = &w;
    else
        s->wait_head = &w;
    s->wait_tail = &w;
    while (!w.given)
        if (pthread_cond_timedwait(&w.cv, &s->lock, deadline) == ETIMEDOUT)
            break;
    if (!w.given) { /* leave the line */
        struct pool_waiter **at = &s->wait_head, *prev = NULL;
        while (*at && *at != &w) {
            prev = *at;
            at = &(*at)->next;
        }
        if (*at)
            *at = w.next;
        if (s->wait_tail == &w)
            s->wait_tail = prev;
    }
    pthread_cond_destroy(&w.cv);
    return w.given;
}

struct store_conn *store_acquire(struct store *s, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    struct store_conn *c = NULL;
    pthread_mutex_lock(&s->lock);
    if (!s->wait_head) { /* nobody in line: prefer a slot with a live connection, then an empty one
                          */
        for (int i = 0; i < s->size && !c; i++)
            if (!s->slots[i].in_use && s->slots[i].pg)
                c = &s->slots[i];
        for (int i = 0; i < s->size && !c; i++)
            if (!s->slots[i].in_use)
                c = &s->slots[i];
    }
    if (!c)
        c = wait_in_line(s, &deadline);
    if (!c) {
        pthread_mutex_unlock(&s->lock);
        return NULL;
    }
    c->in_use = 1;
    int need_connect = !c->pg || PQstatus(c->pg) != CONNECTION_OK;
    int backing_off = need_connect && s->connect_failed_at_ms &&
                      now_ms() - s->connect_failed_at_ms < RECONNECT_BACKOFF_MS;
    pthread_mutex_unlock(&s->lock);

    if (need_connect) {
        drop_connection(s, c, 0);
        forget_prepared(c);
        if (!backing_off) {
            c->pg = connect_db(s->conninfo);
            atomic_fetch_add(&s->reconnects, 1);
            PGcancel *cancel = c->pg ? PQgetCancel(c->pg) : NULL;
            pthread_mutex_lock(&s->lock);
            c->cancel = cancel;
            pthread_mutex_unlock(&s->lock);
        }
        if (!c->pg) {
            atomic_fetch_add(&s->db_errors, backing_off ? 0 : 1);
            pthread_mutex_lock(&s->lock);
            if (!backing_off)
                s->connect_failed_at_ms = now_ms();
            hand_back_locked(s, c);
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        pthread_mutex_lock(&s->lock);
        s->connect_failed_at_ms = 0;
        pthread_mutex_unlock(&s->lock);
    }
    c->sqlstate[0] = '\0';
    c->error[0] = '\0';
    c->constraint[0] = '\0';
    return c;
}

void store_release(struct store *s, struct store_conn *c)
{
    if (!c)
        return;
    c->pending.set = 0;
    if (c->pg) {
        /* Never hand back a connection in the middle of something: drain, and drop it when
         * it is broken or left inside a transaction. */
        PGresult *r;
        while ((r = PQgetResult(c->pg)) != NULL)
            PQclear(r);
        if (c->large || PQstatus(c->pg) != CONNECTION_OK ||
            PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
            drop_connection(s, c, 0);
            forget_prepared(c);
        }
    }
    c->large = 0;
    pthread_mutex_lock(&s->lock);
    hand_back_locked(s, c);
    pthread_mutex_unlock(&s->lock);
}

int store_cancel_running(struct store *s)
{
    int asked = 0;
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->size; i++) {
        char why[128];
        if (s->slots[i].in_use && s->slots[i].cancel &&
            PQcancel(s->slots[i].cancel, why, sizeof why))
            asked++;
    }
    pthread_mutex_unlock(&s->lock);
    return asked;
}

/* Classifies a finished result; copies what is needed before the caller clears it. */
static enum store_status classify(struct store_conn *c, PGresult *r, struct store *owner_stats)
{
    (void)owner_stats;
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_COPY_IN)
        return STORE_OK;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *constraint = r ? PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME) : NULL;
    const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(c->pg);
    snprintf(c->sqlstate, sizeof c->sqlstate, "%s", state ? state : "");
    snprintf(c->constraint, sizeof c->constraint, "%s", constraint ? constraint : "");
    snprintf(c->error, sizeof c->error, "%s", msg ? msg : "");
    if (PQstatus(c->pg) != CONNECTION_OK || !state)
        return STORE_UNAVAILABLE;
    /* On a hot standby, 40001 and 40P01 are a read cancelled by a conflict with recovery (WAL
     * replay needed what it held): transient, answered as 503 so that the read is retried. */
    const char *standby = PQparameterStatus(c->pg, "in_hot_standby");
    if (standby && strcmp(standby, "on") == 0 &&
        (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0))
        return STORE_UNAVAILABLE;
    if (strcmp(state, "23505") == 0 || strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
        return STORE_CONFLICT;
    if (strcmp(state, "23503") == 0 || strcmp(state, "23514") == 0 || strcmp(state, "23502") == 0 ||
        strcmp(state, "22P02") == 0 || strcmp(state, "22007") == 0 || strcmp(state, "22008") == 0 ||
        strcmp(state, "22021") == 0 || strcmp(state, "22001") == 0 || strcmp(state, "22003") == 0)
        return STORE_INVALID;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0 ||
        strcmp(state, "53300") == 0)
        return STORE_UNAVAILABLE;
    return STORE_ERROR;
}

/* Runs sql as a prepared statement of this connection, preparing it on first use: planning
 * the same few dozen statements on every request cost more than the HTTP layer itself
 * (bench/http_api.sh). Falls back to PQexecParams when the cache is full. */
static PGresult *exec_cached(struct store_conn *c, const char *sql, int nparams,
                             const char *const *params)
{
    int i = 0;
    while (i < c->nprepared && !(c->prepared[i].key == sql && strcmp(c->prepared[i].sql, sql) == 0))
        i++;
    char name[16];
    snprintf(name, sizeof name, "s%d", i);
    if (i == c->nprepared) {
        if (i == PREPARED_MAX)
            return PQexecParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0);
        PGresult *prep = PQprepare(c->pg, name, sql, nparams, NULL);
        if (PQresultStatus(prep) != PGRES_COMMAND_OK)
            return prep; /* the statement's own error (syntax, missing table): classify it */
        PQclear(prep);
        char *copy = strdup(sql);
        if (!copy) {
            PGresult *dealloc = PQexec(c->pg, "DEALLOCATE ALL");
            PQclear(dealloc);
            forget_prepared(c);
            return PQexecParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0);
        }
        c->prepared[c->nprepared++] = (struct prepared){.key = sql, .sql = copy};
    }
    return PQexecPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
}

static enum store_status run(struct store_conn *c, const char *sql, int nparams,
                             const char *const *params, PGresult **out)
{
    size_t sent = 0, received = 0;
    for (int i = 0; i < nparams; i++)
        sent += params[i] ? strlen(params[i]) : 0;
    PGresult *r = exec_cached(c, sql, nparams, params);
    for (int row = 0; r && row < PQntuples(r) && received <= CONN_LARGE_BYTES; row++)
        for (int col = 0; col < PQnfields(r); col++)
            received += (size_t)PQgetlength(r, row, col);
    if (sent > CONN_LARGE_BYTES || received > CONN_LARGE_BYTES)
        c->large = 1;
    enum store_status st = classify(c, r, NULL);
    if (st != STORE_OK) {
        if (st == STORE_UNAVAILABLE || st == STORE_ERROR)
            fprintf(stderr,
                    "{\"level\":\"error\",\"msg\":\"database\",\"sqlstate\":\"%s\","
                    "\"status\":\"%s\"}\n",
                    c->sqlstate, store_status_name(st));
        PQclear(r);
        return st;
    }
    *out = r;
    return STORE_OK;
}

enum store_status store_json_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, json_t **out)
{
    PGresult *r = NULL;
    enum store_status st = run(c, sql, nparams, params, &r);
    if (st != STORE_OK)
        return st;
    if (out) {
        *out = NULL;
        if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
            PQclear(r);
            return STORE_NOT_FOUND;
        }
        json_error_t err;
        const char *text = PQgetvalue(r, 0, 0);
        size_t len = (size_t)PQgetlength(r, 0, 0);
        *out = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        /* jsonb prints a large double (a comparison's 1.2e22) as an integer of 23 digits,
         * which jansson cannot hold as an integer: read that document's numbers as doubles. */
        if (!*out && json_error_code(&err) == json_error_numeric_overflow)
            *out = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                              &err);
        if (!*out) {
            snprintf(c->error, sizeof c->error, "result is not JSON: %s", err.text);
            st = STORE_ERROR;
        }
    }
    PQclear(r);
    return st;
}

enum store_status store_rows_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, store_row_fn fn, void *ctx)
{
    if (!PQsendQueryParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0) ||
        !PQsetSingleRowMode(c->pg)) {
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
        PGresult *r;
        while ((r = PQgetResult(c->pg)))
            PQclear(r);
        return PQstatus(c->pg) == CONNECTION_OK ? STORE_ERROR : STORE_UNAVAILABLE;
    }
    enum store_status st = STORE_OK;
    bool stopped = false;
    const char *values[STORE_ROW_MAX_COLUMNS];
    PGresult *r;
    while ((r = PQgetResult(c->pg))) {
        ExecStatusType rs = PQresultStatus(r);
        if (rs == PGRES_SINGLE_TUPLE && !stopped) {
            int n = PQnfields(r) < STORE_ROW_MAX_COLUMNS ? PQnfields(r) : STORE_ROW_MAX_COLUMNS;
            for (int k = 0; k < n; k++)
                values[k] = PQgetisnull(r, 0, k) ? NULL : PQgetvalue(r, 0, k);
            if (fn(ctx, n, values) != 0) {
                /* the caller has what it needs: ask the server to stop sending */
                stopped = true;
                PGcancel *cancel = PQgetCancel(c->pg);
                char why[128];
                if (cancel) {
                    PQcancel(cancel, why, sizeof why);
                    PQfreeCancel(cancel);
                }
            }
        } else if (rs != PGRES_SINGLE_TUPLE && rs != PGRES_TUPLES_OK && !stopped &&
                   st == STORE_OK) {
            st = classify(c, r, NULL);
        }
        PQclear(r);
    }
    return st;
}

enum store_status store_exec_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, long *affected)
{
    PGresult *r = NULL;
    enum store_status st = run(c, sql, nparams, params, &r);
    if (st != STORE_OK)
        return st;
    if (affected) {
        const char *n = PQcmdTuples(r);
        *affected = (n && *n) ? strtol(n, NULL, 10) : PQntuples(r);
    }
    PQclear(r);
    return STORE_OK;
}

enum store_status store_json(struct store *s, const char *sql, int nparams,
                             const char *const *params, json_t **out)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_json_tx(c, sql, nparams, params, out);
    if (st == STORE_UNAVAILABLE || st == STORE_ERROR)
        atomic_fetch_add(&s->db_errors, 1);
    store_release(s, c);
    return st;
}

enum store_status store_json_setup(struct store *s, const char *setup_sql, const char *sql,
                                   int nparams, const char *const *params, json_t **out)
{
    *out = NULL;
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, setup_sql, 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, sql, nparams, params, out);
    if (st == STORE_OK)
        st = store_commit(c);
    else
        store_rollback(c);
    if (st != STORE_OK) {
        json_decref(*out);
        *out = NULL;
    }
    if (st == STORE_UNAVAILABLE || st == STORE_ERROR)
        atomic_fetch_add(&s->db_errors, 1);
    store_release(s, c);
    return st;
}

enum store_status store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params, long *affected)
{
    struct store_conn *c = store_acquire(s, 2000);
    if (!c)
        return STORE_UNAVAILABLE;
    enum store_status st = store_exec_tx(c, sql, nparams, params, affected);
    if (st == STORE_UNAVAILABLE || st == STORE_ERROR)
        atomic_fetch_add(&s->db_errors, 1);
    store_release(s, c);
    return st;
}

enum store_status store_begin(struct store_conn *c)
{
    return store_exec_tx(c, "BEGIN", 0, NULL, NULL);
}

enum store_status store_commit(struct store_conn *c)
{
    if (!c->pending.set)
        return store_exec_tx(c, "COMMIT", 0, NULL, NULL);
    PGresult *r = NULL;
    enum store_status st = run(c, "COMMIT", 0, NULL, &r);
    /* A COMMIT of an aborted transaction succeeds as a ROLLBACK: only a real commit counts. */
    int committed = st == STORE_OK && r && strcmp(PQcmdStatus(r), "COMMIT") == 0;
    PQclear(r);
    if (committed)
        store__log_seen_advance(c->owner, c->pending.origin, c->pending.size, c->pending.root);
    c->pending.set = 0;
    return st;
}

void store_rollback(struct store_conn *c)
{
    if (c)
        c->pending.set = 0;
    if (c && c->pg && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->pg, "ROLLBACK");
        PQclear(r);
    }
}

enum store_status store_copy_begin(struct store_conn *c, const char *copy_sql)
{
    PGresult *r = PQexec(c->pg, copy_sql);
    enum store_status st = classify(c, r, NULL);
    if (st == STORE_OK && PQresultStatus(r) != PGRES_COPY_IN)
        st = STORE_ERROR;
    PQclear(r);
    return st;
}

enum store_status store_copy_send(struct store_conn *c, const char *data, size_t len)
{
    if (len > 0x7fffffff || PQputCopyData(c->pg, data, (int)len) != 1) {
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
        return STORE_UNAVAILABLE;
    }
    return STORE_OK;
}

/* Sends everything libpq holds (a nonblocking connection), waiting on the socket as libpq's
 * documentation of PQflush says: PQsetnonblocking refuses to switch back while data waits. */
static int flush_all(struct store_conn *c)
{
    int f;
    while ((f = PQflush(c->pg)) == 1) {
        struct pollfd pfd = {.fd = PQsocket(c->pg), .events = POLLIN | POLLOUT};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            return -1;
        if ((pfd.revents & POLLIN) && !PQconsumeInput(c->pg))
            return -1;
    }
    return f;
}

enum store_status store_copy_nonblocking(struct store_conn *c, bool on)
{
    if ((!on && PQisnonblocking(c->pg) && flush_all(c) != 0) ||
        PQsetnonblocking(c->pg, on ? 1 : 0) != 0) {
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
        return STORE_UNAVAILABLE;
    }
    return STORE_OK;
}

int store_copy_flush(struct store_conn *c)
{
    int r = PQflush(c->pg);
    if (r < 0)
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
    return r;
}

enum store_status store_copy_end(struct store_conn *c, const char *abort_reason, long *rows)
{
    if (PQisnonblocking(c->pg) && (flush_all(c) != 0 || PQsetnonblocking(c->pg, 0) != 0)) {
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
        return STORE_UNAVAILABLE;
    }
    if (PQputCopyEnd(c->pg, abort_reason) != 1) {
        snprintf(c->error, sizeof c->error, "%s", PQerrorMessage(c->pg));
        return STORE_UNAVAILABLE;
    }
    PGresult *r = PQgetResult(c->pg);
    enum store_status st = abort_reason ? STORE_OK : classify(c, r, NULL);
    if (st == STORE_OK && rows && r) {
        const char *n = PQcmdTuples(r);
        *rows = (n && *n) ? strtol(n, NULL, 10) : 0;
    }
    PQclear(r);
    while ((r = PQgetResult(c->pg)) != NULL)
        PQclear(r);
    return st;
}

const char *store_last_sqlstate(struct store_conn *c)
{
    return c->sqlstate;
}

const char *store_last_error(struct store_conn *c)
{
    return c->error;
}

const char *store_last_constraint(struct store_conn *c)
{
    return c->constraint;
}

enum store_status store__exec_script(struct store_conn *c, const char *sql)
{
    PGresult *r = PQexec(c->pg, sql);
    enum store_status st = classify(c, r, NULL);
    PQclear(r);
    return st;
}
