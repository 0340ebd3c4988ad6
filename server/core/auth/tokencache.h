/* A short-lived, in-process cache of API-token resolutions, so that a busy pipeline's requests
 * do not each look the token up in PostgreSQL.
 *
 * What is cached is the resolved principal (the store's row as JSON text: user, role, teams,
 * token id), keyed by the token's SHA-256 (never the token). An entry is fresh for at most the
 * cache's time to live (CAPLEDGER_TOKEN_CACHE_MS, at most 1000 ms) and never past the token's own
 * expiry, so a token revoked or expired, a user disabled or a team membership changed on any
 * instance is honoured by every instance within that time; the instance that revokes flushes at
 * once. Only successful resolutions are cached: an unknown token always reaches the database.
 *
 * Direct-mapped (the key is a uniformly random hash, so its first bytes pick the slot; a
 * collision evicts), one mutex, copies in and out: no pointer into the cache escapes it.
 * Pure: the caller passes the clock. Thread-safe. */
#ifndef CAPLEDGER_CORE_TOKENCACHE_H
#define CAPLEDGER_CORE_TOKENCACHE_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_CACHE_MAX_TTL_MS 1000

struct token_cache;

/* slots: rounded up to a power of two (at least 1); ttl_ms in [0, TOKEN_CACHE_MAX_TTL_MS]
 * (0: the cache keeps nothing). NULL when out of memory. */
struct token_cache *token_cache_new(size_t slots, int64_t ttl_ms);
void token_cache_free(struct token_cache *c);

/* A copy (caller frees) of the row cached for key (64 lower-case hex characters) if it is fresh
 * at now_ms; else NULL. */
char *token_cache_get(struct token_cache *c, const char *key_hex, int64_t now_ms);

/* Caches row_text for key from now_ms until now_ms + ttl, or until expires_ms when that comes
 * first (expires_ms < 0: the token has no expiry). A key that is not 64 hex characters, or a row
 * over 16 KiB, is not cached. */
void token_cache_put(struct token_cache *c, const char *key_hex, const char *row_text,
                     int64_t now_ms, int64_t expires_ms);

/* Forgets everything (after a revocation on this instance: revocations name a token's id, not
 * its hash). */
void token_cache_flush(struct token_cache *c);

#endif
