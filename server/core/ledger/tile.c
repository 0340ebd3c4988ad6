/* C2SP tlog-tiles over RFC 9162 trees: see tile.h. The proof recursions are merkle.c's (RFC
 * 9162 §2.1.3.1 PATH and §2.1.4.1 SUBPROOF); only the subtree root differs: a perfect, aligned
 * subtree of height h = 8L + r is hashed up from 2^r level-L stored hashes read from one tile,
 * any other range splits at its largest power of two as MTH does. */
#include "core/ledger/tile.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void tile_set_init(struct tile_set *s)
{
    s->count = 0;
    s->missing = 0;
}

/* Plan mode records reads; compute mode serves them. */
struct walk {
    struct tile_set *set;
    bool plan;
};

static struct tile_ref *find(struct tile_set *s, unsigned level, uint64_t index)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->ref[i].level == level && s->ref[i].index == index)
            return &s->ref[i];
    return NULL;
}

/* The level-L stored hashes first .. first+count-1 (one tile), hashed up as a perfect tree. */
static void stored_root(struct walk *w, unsigned level, uint64_t first, size_t count,
                        uint8_t out[MERKLE_HASH_BYTES])
{
    uint64_t tile = first / TILE_WIDTH;
    size_t at = (size_t)(first % TILE_WIDTH), need = at + count;
    struct tile_ref *t = find(w->set, level, tile);
    if (w->plan) {
        memset(out, 0, MERKLE_HASH_BYTES);
        if (!t) {
            if (w->set->count == TILE_SET_MAX) {
                w->set->missing = 1;
                return;
            }
            t = &w->set->ref[w->set->count++];
            *t = (struct tile_ref){.level = level, .index = tile, .width = 0};
        }
        if (need > t->width)
            t->width = need;
        return;
    }
    if (!t || !t->bytes || t->loaded < need) {
        w->set->missing = 1;
        memset(out, 0, MERKLE_HASH_BYTES);
        return;
    }
    uint8_t row[TILE_WIDTH / 2][MERKLE_HASH_BYTES];
    if (count == 1) {
        memcpy(out, t->bytes + at * MERKLE_HASH_BYTES, MERKLE_HASH_BYTES);
        return;
    }
    /* count is 2..128: the first level of the tile's interior straight from the bytes. */
    for (size_t i = 0; i < count / 2; i++)
        merkle_node_hash(t->bytes + (at + 2 * i) * MERKLE_HASH_BYTES,
                         t->bytes + (at + 2 * i + 1) * MERKLE_HASH_BYTES, row[i]);
    for (size_t width = count / 2; width > 1; width /= 2)
        for (size_t i = 0; i < width / 2; i++)
            merkle_node_hash(row[2 * i], row[2 * i + 1], row[i]);
    memcpy(out, row[0], MERKLE_HASH_BYTES);
}

/* The largest power of two strictly below n (n ≥ 2). */
static uint64_t split_point(uint64_t n)
{
    uint64_t k = 1;
    while (k << 1 < n)
        k <<= 1;
    return k;
}

/* MTH(D[a:b]), b > a. */
static void range_root(struct walk *w, uint64_t a, uint64_t b, uint8_t out[MERKLE_HASH_BYTES])
{
    uint64_t n = b - a;
    if ((n & (n - 1)) == 0 && a % n == 0) {
        unsigned h = (unsigned)__builtin_ctzll(n);
        unsigned level = h / TILE_HEIGHT, r = h % TILE_HEIGHT;
        stored_root(w, level, a >> (TILE_HEIGHT * level), (size_t)1 << r, out);
        return;
    }
    uint64_t k = split_point(n);
    uint8_t left[MERKLE_HASH_BYTES], right[MERKLE_HASH_BYTES];
    range_root(w, a, a + k, left);
    range_root(w, a + k, b, right);
    merkle_node_hash(left, right, out);
}

/* PATH(m, D[a:b]). */
static void path(struct walk *w, uint64_t a, uint64_t b, uint64_t m,
                 uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    uint64_t n = b - a;
    if (n == 1)
        return;
    uint64_t k = split_point(n);
    if (m < k) {
        path(w, a, a + k, m, proof, len);
        range_root(w, a + k, b, proof[(*len)++]);
    } else {
        path(w, a + k, b, m - k, proof, len);
        range_root(w, a, a + k, proof[(*len)++]);
    }
}

/* SUBPROOF(m, D[a:b], whole). */
static void subproof(struct walk *w, uint64_t a, uint64_t b, uint64_t m, bool whole,
                     uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    uint64_t n = b - a;
    if (m == n) {
        if (!whole)
            range_root(w, a, b, proof[(*len)++]);
        return;
    }
    uint64_t k = split_point(n);
    if (m <= k) {
        subproof(w, a, a + k, m, whole, proof, len);
        range_root(w, a + k, b, proof[(*len)++]);
    } else {
        subproof(w, a + k, b, m - k, false, proof, len);
        range_root(w, a, a + k, proof[(*len)++]);
    }
}

static int inclusion(struct walk *w, uint64_t n, uint64_t index,
                     uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    *len = 0;
    if (index >= n)
        return -1;
    path(w, 0, n, index, proof, len);
    return w->set->missing ? -1 : 0;
}

static int consistency(struct walk *w, uint64_t n, uint64_t old_size,
                       uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *len)
{
    *len = 0;
    if (old_size == 0 || old_size > n)
        return -1;
    if (old_size < n)
        subproof(w, 0, n, old_size, true, proof, len);
    return w->set->missing ? -1 : 0;
}

int tile_plan_inclusion(struct tile_set *s, uint64_t n, uint64_t index)
{
    struct walk w = {s, true};
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len;
    return inclusion(&w, n, index, proof, &len);
}

int tile_plan_consistency(struct tile_set *s, uint64_t n, uint64_t old_size)
{
    struct walk w = {s, true};
    uint8_t proof[MERKLE_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t len;
    return consistency(&w, n, old_size, proof, &len);
}

int tile_plan_root(struct tile_set *s, uint64_t n)
{
    if (n == 0)
        return -1;
    struct walk w = {s, true};
    uint8_t out[MERKLE_HASH_BYTES];
    range_root(&w, 0, n, out);
    return s->missing ? -1 : 0;
}

int tile_set_load(struct tile_set *s, unsigned level, uint64_t index, const uint8_t *bytes,
                  size_t count)
{
    struct tile_ref *t = find(s, level, index);
    if (!t || count < t->width || !bytes)
        return -1;
    t->bytes = bytes;
    t->loaded = count;
    return 0;
}

int tile_inclusion_proof(struct tile_set *s, uint64_t n, uint64_t index,
                         uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
{
    struct walk w = {s, false};
    return inclusion(&w, n, index, proof, proof_len);
}

int tile_consistency_proof(struct tile_set *s, uint64_t n, uint64_t old_size,
                           uint8_t (*proof)[MERKLE_HASH_BYTES], size_t *proof_len)
{
    struct walk w = {s, false};
    return consistency(&w, n, old_size, proof, proof_len);
}

int tile_root(struct tile_set *s, uint64_t n, uint8_t out[MERKLE_HASH_BYTES])
{
    if (n == 0)
        return -1;
    struct walk w = {s, false};
    range_root(&w, 0, n, out);
    return s->missing ? -1 : 0;
}

size_t tile_append(struct merkle_frontier *f, uint64_t size,
                   const uint8_t leaf_hash[MERKLE_HASH_BYTES], struct tile_hash out[TILE_LEVELS])
{
    uint8_t node[MERKLE_HASH_BYTES];
    memcpy(node, leaf_hash, sizeof node);
    out[0].level = 0;
    out[0].index = size;
    memcpy(out[0].hash, node, sizeof node);
    size_t n = 1;
    unsigned height = 0;
    for (uint64_t k = size; k & 1; k >>= 1) {
        merkle_node_hash(f->hash[--f->count], node, node);
        height++;
        if (height % TILE_HEIGHT == 0 && n < TILE_LEVELS) {
            unsigned level = height / TILE_HEIGHT;
            out[n].level = level;
            out[n].index = ((size + 1) >> (TILE_HEIGHT * level)) - 1;
            memcpy(out[n].hash, node, sizeof node);
            n++;
        }
    }
    memcpy(f->hash[f->count++], node, sizeof node);
    return n;
}

uint64_t tile_level_hashes(uint64_t n, unsigned level)
{
    return level * TILE_HEIGHT >= 64 ? 0 : n >> (TILE_HEIGHT * level);
}

static bool three_digits(const char *p)
{
    return p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9';
}

/* The level: "entries", or a decimal 0..63 without leading zeros (the spec's range; levels
 * from TILE_LEVELS up name no tile of a 64-bit tree but are well formed). */
static const char *read_level(const char *p, unsigned *level)
{
    if (strncmp(p, "entries/", 8) == 0) {
        *level = TILE_ENTRIES;
        return p + 8;
    }
    if (p[0] < '0' || p[0] > '9')
        return NULL;
    unsigned l = (unsigned)(p[0] - '0');
    p++;
    if (p[0] >= '0' && p[0] <= '9') {
        if (l == 0) /* a leading zero */
            return NULL;
        l = l * 10 + (unsigned)(p[0] - '0');
        p++;
    }
    if (p[0] != '/' || l > TILE_LEVEL_MAX)
        return NULL;
    *level = l;
    return p + 1;
}

enum tile_path_part tile_path_read(const char *text, unsigned *level, uint64_t *index,
                                   size_t *width)
{
    const char *p = read_level(text, level);
    if (!p)
        return TILE_PATH_LEVEL;
    const char *digits_at = p;
    uint64_t n = 0;
    int groups = 0;
    for (;;) {
        bool more = p[0] == 'x';
        if (more)
            p++;
        if (!three_digits(p))
            return TILE_PATH_INDEX;
        if (groups == 6) /* 7 groups would pass 2^64 */
            return TILE_PATH_INDEX;
        n = n * 1000 + (uint64_t)((p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0'));
        p += 3;
        groups++;
        if (more) {
            if (p[0] != '/')
                return TILE_PATH_INDEX;
            p++;
            continue;
        }
        break;
    }
    /* The encoding is canonical: no leading all-zero group ("x000/001" is "001"). */
    if (groups > 1 && strncmp(digits_at, "x000", 4) == 0)
        return TILE_PATH_INDEX;
    *index = n;
    *width = TILE_WIDTH;
    if (p[0] == '\0')
        return TILE_PATH_OK;
    if (strncmp(p, ".p/", 3) != 0)
        return TILE_PATH_INDEX; /* anything else after the digits */
    p += 3;
    if (p[0] < '1' || p[0] > '9')
        return TILE_PATH_WIDTH;
    size_t wv = 0;
    for (int i = 0; p[i]; i++) {
        if (p[i] < '0' || p[i] > '9' || i >= 3)
            return TILE_PATH_WIDTH;
        wv = wv * 10 + (size_t)(p[i] - '0');
    }
    if (wv >= TILE_WIDTH)
        return TILE_PATH_WIDTH;
    *width = wv;
    return TILE_PATH_OK;
}

const char *tile_path_part_name(enum tile_path_part part)
{
    switch (part) {
    case TILE_PATH_LEVEL:
        return "level";
    case TILE_PATH_INDEX:
        return "index";
    case TILE_PATH_WIDTH:
        return "width";
    case TILE_PATH_OK:
        break;
    }
    return "";
}

bool tile_in_tree(uint64_t size, unsigned level, uint64_t index, size_t width)
{
    if (level == TILE_ENTRIES)
        level = 0;
    if (level >= TILE_LEVELS || width == 0 || width > TILE_WIDTH)
        return false;
    uint64_t have = tile_level_hashes(size, level); /* stored hashes of that level */
    if (index > have / TILE_WIDTH)
        return false;
    return index * TILE_WIDTH + width <= have;
}

size_t tile_entry_put(uint8_t *out, size_t size, const uint8_t *entry, size_t len)
{
    if (len > TILE_ENTRY_MAX || size < len + 2)
        return 0;
    out[0] = (uint8_t)(len >> 8);
    out[1] = (uint8_t)(len & 0xff);
    if (len)
        memcpy(out + 2, entry, len);
    return len + 2;
}
