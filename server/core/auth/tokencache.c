#include "core/auth/tokencache.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BYTES 32
#define ROW_MAX 16384

struct slot {
    uint8_t key[KEY_BYTES];
    int64_t fresh_until_ms; /* 0: empty */
    char *row;
};

struct token_cache {
    pthread_mutex_t lock;
    struct slot *slots;
    size_t mask;
    int64_t ttl_ms;
};

static int key_of(const char *hex, uint8_t out[KEY_BYTES])
{
    size_t bin_len = 0;
    if (!hex || strlen(hex) != 2 * KEY_BYTES)
        return -1;
    if (sodium_hex2bin(out, KEY_BYTES, hex, 2 * KEY_BYTES, NULL, &bin_len, NULL) != 0 ||
        bin_len != KEY_BYTES)
        return -1;
    return 0;
}

static size_t index_of(const struct token_cache *c, const uint8_t key[KEY_BYTES])
{
    uint64_t v;
    memcpy(&v, key, sizeof v);
    return (size_t)(v & c->mask);
}

static void slot_clear(struct slot *s)
{
    if (s->row) {
        sodium_memzero(s->row, strlen(s->row));
        free(s->row);
    }
    sodium_memzero(s, sizeof *s);
}

struct token_cache *token_cache_new(size_t slots, int64_t ttl_ms)
{
    if (ttl_ms < 0 || ttl_ms > TOKEN_CACHE_MAX_TTL_MS)
        return NULL;
    size_t n = 1;
    while (n < slots && n < ((size_t)1 << 20))
        n <<= 1;
    struct token_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->slots = calloc(n, sizeof *c->slots);
    if (!c->slots || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->slots);
        free(c);
        return NULL;
    }
    c->mask = n - 1;
    c->ttl_ms = ttl_ms;
    return c;
}

void token_cache_flush(struct token_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i <= c->mask; i++)
        slot_clear(&c->slots[i]);
    pthread_mutex_unlock(&c->lock);
}

void token_cache_free(struct token_cache *c)
{
    if (!c)
        return;
    token_cache_flush(c);
    pthread_mutex_destroy(&c->lock);
    free(c->slots);
    free(c);
}

char *token_cache_get(struct token_cache *c, const char *key_hex, int64_t now_ms)
{
    uint8_t key[KEY_BYTES];
    if (!c || c->ttl_ms == 0 || key_of(key_hex, key) != 0)
        return NULL;
    char *copy = NULL;
    pthread_mutex_lock(&c->lock);
    struct slot *s = &c->slots[index_of(c, key)];
    if (s->row && sodium_memcmp(s->key, key, KEY_BYTES) == 0) {
        if (now_ms < s->fresh_until_ms)
            copy = strdup(s->row);
        else
            slot_clear(s);
    }
    pthread_mutex_unlock(&c->lock);
    sodium_memzero(key, sizeof key);
    return copy;
}

void token_cache_put(struct token_cache *c, const char *key_hex, const char *row_text,
                     int64_t now_ms, int64_t expires_ms)
{
    uint8_t key[KEY_BYTES];
    if (!c || c->ttl_ms == 0 || !row_text || strlen(row_text) > ROW_MAX ||
        key_of(key_hex, key) != 0)
        return;
    int64_t until = now_ms + c->ttl_ms;
    if (expires_ms >= 0 && expires_ms < until)
        until = expires_ms;
    char *copy = until > now_ms ? strdup(row_text) : NULL;
    if (!copy) {
        sodium_memzero(key, sizeof key);
        return;
    }
    pthread_mutex_lock(&c->lock);
    struct slot *s = &c->slots[index_of(c, key)];
    slot_clear(s);
    memcpy(s->key, key, KEY_BYTES);
    s->row = copy;
    s->fresh_until_ms = until;
    pthread_mutex_unlock(&c->lock);
    sodium_memzero(key, sizeof key);
}
