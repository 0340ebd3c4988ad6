/* The PostgreSQL store: layer 2's public interface.
 *
 * A bounded, thread-safe pool of libpq connections. Connections found broken (the database
 * restarted, the network dropped) are closed and replaced on the next acquire, so the service
 * resumes by itself when the database returns. While the database is unreachable every call
 * answers STORE_UNAVAILABLE quickly (the HTTP layer turns that into 503).
 *
 * Queries return their rows as JSON built by PostgreSQL (json_build_object / json_agg), parsed
 * here into jansson values: a PGresult never leaves this layer. All SQL is parameterised. */
#ifndef CAPLEDGER_STORE_H
#define CAPLEDGER_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_MUSTCHECK __attribute__((warn_unused_result))

enum store_status {
    STORE_OK = 0,
    STORE_NOT_FOUND,   /* no row */
    STORE_CONFLICT,    /* unique violation (23505) or a serialisation conflict that persisted */
    STORE_INVALID,     /* a reference to a missing row (23503), a check violation (23514) */
    STORE_UNAVAILABLE, /* cannot reach the database, or the pool is exhausted */
    STORE_ERROR,       /* anything else: a bug, logged with its SQLSTATE */
    STORE_ACTOR_GONE,  /* the acting user was disabled, or its API token revoked, after the
                          request was authenticated (store/audit.c): nothing was written */
};

const char *store_status_name(enum store_status s);

struct store;

/* True once this process has found the decision log inconsistent (a head that disagrees with
 * the stored checkpoints or leaves; see store/ledger.h): it then appends nothing more and is
 * not ready. Copies the evidence into evidence[size] (may be NULL). */
bool store_log_fault(struct store *s, char *evidence, size_t size);

/* The file, outside the database, where this server keeps the largest checkpoint it signed or
 * observed (a checkpoint body: origin, size, base64 root); serve uses CAPLEDGER_KEY_FILE's path
 * with ".state" appended. Read here (absent: none seen yet), written on every append and at
 * start. An append or start that finds the database's head behind it, or with another root,
 * is the log-inconsistent state. Call before store_log_init. Returns 0, or -1 with *why set
 * when the file exists but cannot be read as a checkpoint body. */
int store_log_state_open(struct store *s, const char *path, char *why, size_t why_size);

struct store;
struct store_conn; /* one checked-out connection, for transactions */

struct store_stats {
    int size, in_use, idle;
    uint64_t db_errors, reconnects;
};

/* conninfo: a libpq conninfo string or URL. pool_size: maximum connections. */
struct store *store_open(const char *conninfo, int pool_size) STORE_MUSTCHECK;
void store_close(struct store *s);
/* Asks PostgreSQL to cancel the statement running on every connection in use (a stop whose
 * requests outlived their time); returns how many it asked. Their callers see an error. */
int store_cancel_running(struct store *s);
void store_stats(struct store *s, struct store_stats *out);

/* Connects once to conninfo: STORE_OK, or STORE_UNAVAILABLE with libpq's reason in why. */
enum store_status store_probe(const char *conninfo, char *why, size_t why_size) STORE_MUSTCHECK;

/* Runs the migrations in dir (files NNNN_name.sql, in order), each in its own transaction,
 * recorded with its SHA-256 in schema_migrations, under an advisory lock so concurrent
 * starters are safe. Refuses (STORE_CONFLICT, message in why) when an applied file changed. */
enum store_status store_migrate(struct store *s, const char *dir, char *why,
                                size_t why_size) STORE_MUSTCHECK;
/* STORE_OK when the database answers and every migration file in dir is applied. */
enum store_status store_ready(struct store *s, const char *dir, char *why,
                              size_t why_size) STORE_MUSTCHECK;

/* Checks out a connection (waits up to timeout_ms for a free slot). NULL → unavailable. */
struct store_conn *store_acquire(struct store *s, int timeout_ms) STORE_MUSTCHECK;
void store_release(struct store *s, struct store_conn *c);

/* The parameter count and array of a statement, from the array itself: STORE_ARGS(p) for
 * `const char *p[] = {...}` is "n, p" with n its length, so a count can never disagree with
 * its array. A pointer instead of an array does not compile. */
#define STORE_ARGS(p)                                                                              \
    (int)(sizeof(p) / sizeof((p)[0]) +                                                             \
          0 * sizeof(char[1 -                                                                      \
                          2 * __builtin_types_compatible_p(__typeof__(p), __typeof__(&(p)[0]))])), \
        (p)

/* Runs sql with text parameters (NULL = SQL NULL). When out is given, the first column of the
 * first row is parsed as JSON into *out (new reference): the query must return one row with one
 * json column, or no row (→ STORE_NOT_FOUND). */
enum store_status store_json_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, json_t **out) STORE_MUSTCHECK;
/* Like store_json_tx without a result; *affected gets the row count when not NULL. */
enum store_status store_exec_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, long *affected) STORE_MUSTCHECK;
/* Runs sql and hands each row to fn as it arrives (libpq's single-row mode: the result is
 * never held whole), values[k] the text of column k or NULL for SQL NULL (at most
 * STORE_ROW_MAX_COLUMNS columns). fn returns non-zero to stop: the statement is cancelled and
 * the call returns STORE_OK. Not inside a transaction the caller wants to keep (a cancelled
 * statement aborts it). */
#define STORE_ROW_MAX_COLUMNS 16
typedef int (*store_row_fn)(void *ctx, int ncols, const char *const *values);
enum store_status store_rows_tx(struct store_conn *c, const char *sql, int nparams,
                                const char *const *params, store_row_fn fn,
                                void *ctx) STORE_MUSTCHECK;
/* One-shot helpers that acquire and release around a single statement. */
enum store_status store_json(struct store *s, const char *sql, int nparams,
                             const char *const *params, json_t **out) STORE_MUSTCHECK;
/* store_json in a transaction of its own that first runs setup_sql (a SET LOCAL, say). */
enum store_status store_json_setup(struct store *s, const char *setup_sql, const char *sql,
                                   int nparams, const char *const *params,
                                   json_t **out) STORE_MUSTCHECK;
enum store_status store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params, long *affected) STORE_MUSTCHECK;

enum store_status store_begin(struct store_conn *c) STORE_MUSTCHECK;
enum store_status store_commit(struct store_conn *c) STORE_MUSTCHECK;
void store_rollback(struct store_conn *c);

/* COPY FROM STDIN streaming: start with a full "COPY t (cols) FROM STDIN" statement, send
 * rows in COPY text format, then end (abort with an error message to cancel). */
enum store_status store_copy_begin(struct store_conn *c, const char *copy_sql) STORE_MUSTCHECK;
enum store_status store_copy_send(struct store_conn *c, const char *data,
                                  size_t len) STORE_MUSTCHECK;
enum store_status store_copy_end(struct store_conn *c, const char *abort_reason,
                                 long *rows) STORE_MUSTCHECK;
/* A COPY that sends while the caller works: after this (on), store_copy_send queues without
 * waiting for the socket, and store_copy_flush pushes what is queued as far as the socket takes
 * (0: all sent, 1: some still queued, -1: the connection failed). Off: sends block again
 * (store_copy_end switches it off too). Queue little at a time: libpq's buffer grows to hold
 * whatever is queued. */
enum store_status store_copy_nonblocking(struct store_conn *c, bool on) STORE_MUSTCHECK;
int store_copy_flush(struct store_conn *c);

/* The last error's SQLSTATE and message on this connection (for logs, never for clients). */
const char *store_last_sqlstate(struct store_conn *c);
const char *store_last_error(struct store_conn *c);
/* The constraint a 23505/23503 error named, or "" (lets handlers name the JSON field). */
const char *store_last_constraint(struct store_conn *c);

#endif
