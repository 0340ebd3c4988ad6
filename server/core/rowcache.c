#include "core/rowcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAYS 4

struct entry {
    int kind;
    int used; /* 0: empty */
    uint64_t touched;
    size_t len;
    char *text;
    char id[ROWCACHE_ID_MAX + 1];
    char meta[ROWCACHE_META_MAX];
};

struct set {
    struct entry way[WAYS];
};

struct rowcache {
    pthread_mutex_t lock;
    pthread_cond_t moved; /* P moved forward */
    struct set *sets;
    size_t nsets;
    size_t budget;
    uint64_t clock;
    struct rowcache_stats st;
};

size_t rowcache_row_room(size_t slots, size_t budget_bytes)
{
    size_t sets = (slots + WAYS - 1) / WAYS;
    if (!sets)
        return 0;
    size_t share = budget_bytes / sets;
    return share < ROWCACHE_ROW_MAX ? share : ROWCACHE_ROW_MAX;
}

struct rowcache *rowcache_new(size_t slots, size_t budget_bytes)
{
    struct rowcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nsets = (slots + WAYS - 1) / WAYS;
    c->budget = budget_bytes;
    if (c->nsets && !(c->sets = calloc(c->nsets, sizeof *c->sets))) {
        free(c);
        return NULL;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int cond_ok = pthread_cond_init(&c->moved, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (!cond_ok || pthread_mutex_init(&c->lock, NULL) != 0) {
        if (cond_ok)
            pthread_cond_destroy(&c->moved);
        free(c->sets);
        free(c);
        return NULL;
    }
    return c;
}

static void entry_clear(struct rowcache *c, struct entry *e)
{
    if (!e->used)
        return;
    c->st.bytes -= e->len;
    c->st.entries--;
    free(e->text);
    memset(e, 0, sizeof *e);
}

void rowcache_free(struct rowcache *c)
{
    if (!c)
        return;
    for (size_t s = 0; s < c->nsets; s++)
        for (int w = 0; w < WAYS; w++)
            free(c->sets[s].way[w].text);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->moved);
    free(c->sets);
    free(c);
}

static int key_ok(const char *id)
{
    return id && id[0] && strlen(id) <= ROWCACHE_ID_MAX;
}

/* NULL for a cache that keeps nothing. */
static struct set *set_of(struct rowcache *c, int kind, const char *id)
{
    if (!c->nsets)
        return NULL;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)kind;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return &c->sets[h % c->nsets];
}

static struct entry *find(struct set *s, int kind, const char *id)
{
    for (int w = 0; w < WAYS; w++)
        if (s->way[w].used && s->way[w].kind == kind && strcmp(s->way[w].id, id) == 0)
            return &s->way[w];
    return NULL;
}

char *rowcache_get(struct rowcache *c, int kind, const char *id, uint64_t need, int *behind,
                   char *meta)
{
    if (behind)
        *behind = 0;
    if (!c || !key_ok(id))
        return NULL;
    char *copy = NULL;
    pthread_mutex_lock(&c->lock);
    struct set *s = set_of(c, kind, id);
    struct entry *e = s ? find(s, kind, id) : NULL;
    if (!e) {
        c->st.misses++;
    } else if (c->st.applied < need) {
        c->st.stale++;
        if (behind)
            *behind = 1;
    } else {
        e->touched = ++c->clock;
        copy = malloc(e->len + 1);
        if (copy) {
            memcpy(copy, e->text, e->len + 1);
            if (meta)
                memcpy(meta, e->meta, sizeof e->meta);
            c->st.hits++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

uint64_t rowcache_ticket(struct rowcache *c)
{
    /* One counter for every set: a forget anywhere drops the fills in flight. Simple, and a
     * dropped fill only costs the next read a round trip. */
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    uint64_t t = c->st.forgets + c->st.resets;
    pthread_mutex_unlock(&c->lock);
    return t;
}

static size_t set_bytes(const struct set *s)
{
    size_t n = 0;
    for (int w = 0; w < WAYS; w++)
        n += s->way[w].len;
    return n;
}

/* An empty entry of s if there is one, else the least recently used. */
static struct entry *slot_for(struct set *s)
{
    struct entry *e = &s->way[0];
    for (int w = 0; w < WAYS; w++) {
        if (!s->way[w].used)
            return &s->way[w];
        if (s->way[w].touched < e->touched)
            e = &s->way[w];
    }
    return e;
}

/* The least recently used entry of s in use other than keep; NULL when there is none. */
static struct entry *oldest_other(struct set *s, const struct entry *keep)
{
    struct entry *e = NULL;
    for (int w = 0; w < WAYS; w++) {
        struct entry *c = &s->way[w];
        if (c != keep && c->used && (!e || c->touched < e->touched))
            e = c;
    }
    return e;
}

int rowcache_put(struct rowcache *c, int kind, const char *id, const char *text, const char *meta,
                 uint64_t ticket)
{
    if (!meta)
        meta = "";
    if (!c || !c->nsets || !key_ok(id) || !text || strlen(meta) >= ROWCACHE_META_MAX)
        return 0;
    size_t len = strlen(text);
    /* Each set holds at most its share of the budget, so the whole never exceeds it and a
     * new row only ever displaces rows of its own set. */
    if (len > rowcache_row_room(c->nsets * WAYS, c->budget))
        return 0;
    char *mine = malloc(len + 1);
    if (!mine)
        return 0;
    memcpy(mine, text, len + 1);
    int stored = 0;
    pthread_mutex_lock(&c->lock);
    if (c->st.forgets + c->st.resets != ticket) {
        c->st.fills_dropped++;
    } else {
        struct set *s = set_of(c, kind, id);
        struct entry *e = find(s, kind, id);
        if (!e)
            e = slot_for(s);
        entry_clear(c, e);
        struct entry *old;
        size_t share = c->budget / c->nsets;
        while (set_bytes(s) + len > share && (old = oldest_other(s, e)) != NULL)
            entry_clear(c, old);
        e->used = 1;
        e->kind = kind;
        memcpy(e->id, id, strlen(id) + 1);
        memcpy(e->meta, meta, strlen(meta) + 1);
        e->text = mine;
        e->len = len;
        e->touched = ++c->clock;
        c->st.bytes += len;
        c->st.entries++;
        c->st.fills++;
        mine = NULL;
        stored = 1;
    }
    pthread_mutex_unlock(&c->lock);
    free(mine);
    return stored;
}

void rowcache_forget(struct rowcache *c, int kind, const char *id)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->st.forgets++;
    struct set *s = key_ok(id) ? set_of(c, kind, id) : NULL;
    struct entry *e = s ? find(s, kind, id) : NULL;
    if (e)
        entry_clear(c, e);
    pthread_mutex_unlock(&c->lock);
}

void rowcache_drop(struct rowcache *c, int kind, const char *id)
{
    if (!c || !key_ok(id))
        return;
    pthread_mutex_lock(&c->lock);
    struct set *s = set_of(c, kind, id);
    struct entry *e = s ? find(s, kind, id) : NULL;
    if (e)
        entry_clear(c, e);
    pthread_mutex_unlock(&c->lock);
}

void rowcache_reset(struct rowcache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->st.resets++;
    c->st.applied = 0;
    for (size_t s = 0; s < c->nsets; s++)
        for (int w = 0; w < WAYS; w++)
            entry_clear(c, &c->sets[s].way[w]);
    pthread_mutex_unlock(&c->lock);
}

void rowcache_applied(struct rowcache *c, uint64_t lsn)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (lsn > c->st.applied) {
        c->st.applied = lsn;
        pthread_cond_broadcast(&c->moved);
    }
    pthread_mutex_unlock(&c->lock);
}

int rowcache_await(struct rowcache *c, uint64_t need, int timeout_ms)
{
    if (!c)
        return 0;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long ns = until.tv_nsec + (long long)(timeout_ms > 0 ? timeout_ms : 0) * 1000000LL;
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&c->lock);
    while (c->st.applied < need && pthread_cond_timedwait(&c->moved, &c->lock, &until) == 0)
        ;
    int ok = c->st.applied >= need;
    pthread_mutex_unlock(&c->lock);
    return ok;
}

void rowcache_stats(struct rowcache *c, struct rowcache_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}
