/* An in-process cache of single rows as the store renders them (JSON text), so that a
 * token-authenticated GET by id is answered without a database round trip, and never with
 * data older than the caller's own writes.
 *
 * Freshness is a WAL position, as for a hot standby (http/reads.h): the cache has "applied" a
 * position P when every transaction that committed at or before P has had its rows forgotten
 * here. The store's change listener (store/changes.h) moves P forward: it forgets the rows
 * that PostgreSQL's NOTIFY names (a trigger on each cached table) and confirms P with a
 * notification of its own that comes back after every earlier commit's. A read may use an entry
 * only when P has reached the position the caller needs (rowcache_get's need); otherwise it
 * reads the database.
 *
 * A fill races with a change: the row read from the database may be overtaken by a commit
 * whose notification was handled between the read and the fill. So a fill carries a ticket
 * taken before the read, and is dropped when any row was forgotten since (rowcache_ticket,
 * rowcache_put). rowcache_reset (the listener lost its connection: notifications may be lost)
 * forgets everything and sets P back to 0.
 *
 * Set-associative (4 ways, least recently used), one mutex, copies in and out: no pointer into
 * the cache escapes it. A byte budget bounds the memory held. Pure: no I/O. Thread-safe. */
#ifndef CAPLEDGER_CORE_ROWCACHE_H
#define CAPLEDGER_CORE_ROWCACHE_H

#include <stddef.h>
#include <stdint.h>

#define ROWCACHE_ID_MAX 64     /* a key's id: at most this many bytes */
#define ROWCACHE_ROW_MAX 16384 /* a longer row is not cached */
#define ROWCACHE_META_MAX 192  /* what the caller keeps beside a row (its scope, its version) */

struct rowcache;

/* The longest row a cache of slots and budget_bytes can keep: each set of 4 slots holds at
 * most its share of the budget (and no row is over ROWCACHE_ROW_MAX). 0 for 0 slots. */
size_t rowcache_row_room(size_t slots, size_t budget_bytes);
#define ROWCACHE_ROOM_MIN 4096 /* serve refuses sizes that leave less room for a row */

struct rowcache_stats {
    uint64_t hits, misses, stale; /* stale: an entry was there but P had not reached need */
    uint64_t fills, fills_dropped, forgets, resets;
    uint64_t entries, bytes, applied;
};

/* slots: rounded up to a multiple of 4 ways (0: a cache that keeps nothing); budget_bytes:
 * the most row text held at once. NULL when out of memory. */
struct rowcache *rowcache_new(size_t slots, size_t budget_bytes);
void rowcache_free(struct rowcache *c);

/* A copy (caller frees) of the row cached for (kind, id) when P >= need, and its meta text
 * copied into meta[ROWCACHE_META_MAX] (may be NULL); else NULL, with *behind set to 1 when the
 * row is cached but P < need (behind may be NULL). */
char *rowcache_get(struct rowcache *c, int kind, const char *id, uint64_t need, int *behind,
                   char *meta);

/* Taken before reading a row from the database; handed to rowcache_put with the row. */
uint64_t rowcache_ticket(struct rowcache *c);

/* Caches text and meta (at most ROWCACHE_META_MAX - 1 bytes, else nothing is cached) for
 * (kind, id) unless a row was forgotten since ticket was taken. Returns 1 when cached. */
int rowcache_put(struct rowcache *c, int kind, const char *id, const char *text, const char *meta,
                 uint64_t ticket);

/* A row changed (or may have): drop it, and drop every fill in flight. */
void rowcache_forget(struct rowcache *c, int kind, const char *id);

/* The database no longer has this row: drop the entry, if any (fills in flight are left: a
 * stale one is forgotten when the deletion's notice arrives). */
void rowcache_drop(struct rowcache *c, int kind, const char *id);

/* Everything may have changed: drop every entry and fill in flight, P = 0. */
void rowcache_reset(struct rowcache *c);

/* Every commit at or before lsn has been forgotten: P = max(P, lsn); wakes rowcache_await. */
void rowcache_applied(struct rowcache *c, uint64_t lsn);

/* Waits up to timeout_ms for P to reach need; 1 when it has. */
int rowcache_await(struct rowcache *c, uint64_t need, int timeout_ms);

void rowcache_stats(struct rowcache *c, struct rowcache_stats *out);

#endif
