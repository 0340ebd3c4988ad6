#include "core/ledger/keylog.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"

/* One key's state: 112 bytes, not a JSON object per key (a log may enrol millions). */
#define KEYLOG_NONE UINT64_MAX
struct keylog_key {
    uint8_t id[32];             /* the key id's bytes; all zero: an empty slot */
    char public_key[48];        /* base64 text as the enrolment leaf has it (44 characters) */
    uint64_t enrolled, revoked; /* leaf indexes; revoked KEYLOG_NONE until revoked */
    const char *owner;          /* interned in owners */
    bool used;
};

struct keylog {
    struct keylog_key *slot; /* open addressing, linear probing, at most half full */
    size_t cap, count;
    json_t *owners; /* owner name → null: each name stored once (its key is the string) */
    size_t events;
};

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t why_size, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return -1;
}

static char *serialize(json_t *leaf, size_t *len)
{
    if (!leaf)
        return NULL;
    char *bytes = jcs_serialize(leaf, len);
    json_decref(leaf);
    return bytes;
}

char *keylog_enrol_leaf(const char *key_id, const char *public_key_b64, const char *owner,
                        const char *at, size_t *len)
{
    return serialize(json_pack("{s:s, s:s, s:s, s:s, s:s}", "at", at, "key_id", key_id, "kind",
                               KEYLOG_KIND_ENROL, "owner", owner, "public_key", public_key_b64),
                     len);
}

char *keylog_revoke_leaf(const char *key_id, const char *at, size_t *len)
{
    return serialize(
        json_pack("{s:s, s:s, s:s}", "at", at, "key_id", key_id, "kind", KEYLOG_KIND_REVOKE), len);
}

/* RFC 3339 in UTC, as the server writes it. */
static bool utc_time(const char *s)
{
    struct timefmt_fields f;
    size_t n = s ? strlen(s) : 0;
    return n >= 20 && s[10] == 'T' && s[n - 1] == 'Z' && timefmt_parse(s, n, &f);
}

int keylog_event_parse(const json_t *doc, struct keylog_event *ev, char *why, size_t why_size)
{
    memset(ev, 0, sizeof *ev);
    const json_t *kind = json_object_get(doc, "kind");
    if (!json_is_object(doc))
        return fail(why, why_size, "not a JSON object");
    if (!kind) {
        ev->kind = KEYLOG_DECISION;
        return 0;
    }
    const char *k = jcs_text(kind);
    size_t members;
    if (k && strcmp(k, KEYLOG_KIND_ENROL) == 0) {
        ev->kind = KEYLOG_ENROL;
        members = 5;
    } else if (k && strcmp(k, KEYLOG_KIND_REVOKE) == 0) {
        ev->kind = KEYLOG_REVOKE;
        members = 3;
    } else {
        return fail(why, why_size, "unknown leaf kind");
    }
    ev->key_id = jcs_text(json_object_get(doc, "key_id"));
    ev->at = jcs_text(json_object_get(doc, "at"));
    if (ev->kind == KEYLOG_ENROL) {
        ev->public_key = jcs_text(json_object_get(doc, "public_key"));
        ev->owner = jcs_text(json_object_get(doc, "owner"));
    }
    if (json_object_size(doc) != members || !ev->key_id || !ev->at ||
        (ev->kind == KEYLOG_ENROL && (!ev->public_key || !ev->owner || !*ev->owner)))
        return fail(why, why_size,
                    ev->kind == KEYLOG_ENROL
                        ? "a key_enrol leaf is {at, key_id, kind, owner, public_key}, all strings"
                        : "a key_revoke leaf is {at, key_id, kind}, all strings");
    if (!lower_hex_valid(ev->key_id, DECISION_KEY_ID_HEX_LEN))
        return fail(why, why_size, "key_id is not 64 lower-case hex digits");
    if (!utc_time(ev->at))
        return fail(why, why_size, "at is not an RFC 3339 UTC time");
    if (ev->kind == KEYLOG_ENROL) {
        uint8_t pk[crypto_sign_PUBLICKEYBYTES + 1];
        char id[DECISION_KEY_ID_HEX_LEN + 1];
        if (codec_b64_decode(ev->public_key, strlen(ev->public_key), pk, sizeof pk) !=
            crypto_sign_PUBLICKEYBYTES)
            return fail(why, why_size, "public_key is not base64 of 32 bytes");
        decision_key_id(pk, id);
        if (strcmp(id, ev->key_id) != 0)
            return fail(why, why_size, "key_id is not the SHA-256 of public_key");
    }
    return 0;
}

struct keylog *keylog_new(void)
{
    struct keylog *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->cap = 64;
    k->slot = calloc(k->cap, sizeof *k->slot);
    k->owners = json_object();
    if (!k->slot || !k->owners) {
        keylog_free(k);
        return NULL;
    }
    return k;
}

void keylog_free(struct keylog *k)
{
    if (!k)
        return;
    free(k->slot);
    json_decref(k->owners);
    free(k);
}

/* The key id's 32 bytes from 64 lower-case hex digits; -1 for anything else. */
static int id_bytes(const char *key_id, uint8_t out[32])
{
    if (!key_id || strlen(key_id) != 64)
        return -1;
    for (size_t i = 0; i < 64; i++)
        if (!((key_id[i] >= '0' && key_id[i] <= '9') || (key_id[i] >= 'a' && key_id[i] <= 'f')))
            return -1;
    return codec_hex_decode_exact(key_id, out, 32);
}

/* The slot of id, or the empty slot where it would go. */
static struct keylog_key *probe(const struct keylog *k, const uint8_t id[32])
{
    uint64_t h;
    memcpy(&h, id, sizeof h); /* a SHA-256: uniform */
    for (size_t i = (size_t)h & (k->cap - 1);; i = (i + 1) & (k->cap - 1))
        if (!k->slot[i].used || memcmp(k->slot[i].id, id, 32) == 0)
            return &k->slot[i];
}

static const struct keylog_key *find(const struct keylog *k, const char *key_id)
{
    uint8_t id[32];
    if (id_bytes(key_id, id) != 0)
        return NULL;
    const struct keylog_key *e = probe(k, id);
    return e->used ? e : NULL;
}

static int grow_table(struct keylog *k)
{
    struct keylog_key *old = k->slot;
    size_t old_cap = k->cap;
    k->cap *= 2;
    if (!(k->slot = calloc(k->cap, sizeof *k->slot))) {
        k->slot = old;
        k->cap = old_cap;
        return -1;
    }
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *probe(k, old[i].id) = old[i];
    free(old);
    return 0;
}

static const char *intern(struct keylog *k, const char *owner)
{
    if (!json_object_get(k->owners, owner) && json_object_set_new(k->owners, owner, json_null()))
        return NULL;
    return json_object_iter_key(json_object_iter_at(k->owners, owner));
}

int keylog_apply(struct keylog *k, uint64_t index, const struct keylog_event *ev, char *why,
                 size_t why_size)
{
    uint8_t id[32];
    if (ev->kind != KEYLOG_ENROL && ev->kind != KEYLOG_REVOKE)
        return fail(why, why_size, "not a key event");
    if (id_bytes(ev->key_id, id) != 0)
        return fail(why, why_size, "key_id is not 64 lower-case hex digits");
    struct keylog_key *key = probe(k, id);
    if (ev->kind == KEYLOG_ENROL) {
        if (key->used)
            return fail(why, why_size, "key %s is enrolled again (first by leaf %" PRIu64 ")",
                        ev->key_id, key->enrolled);
        const char *owner = ev->owner ? intern(k, ev->owner) : NULL;
        if (!ev->public_key || strlen(ev->public_key) >= sizeof key->public_key || !owner)
            return fail(why, why_size, "out of memory");
        memcpy(key->id, id, sizeof id);
        snprintf(key->public_key, sizeof key->public_key, "%s", ev->public_key);
        key->enrolled = index;
        key->revoked = KEYLOG_NONE;
        key->owner = owner;
        key->used = true;
        if (++k->count * 2 > k->cap && grow_table(k) != 0)
            return fail(why, why_size, "out of memory");
    } else {
        if (!key->used)
            return fail(why, why_size, "key %s is revoked but no earlier leaf enrols it",
                        ev->key_id);
        if (key->revoked != KEYLOG_NONE)
            return fail(why, why_size, "key %s is revoked again (first by leaf %" PRIu64 ")",
                        ev->key_id, key->revoked);
        key->revoked = index;
    }
    k->events++;
    return 0;
}

int keylog_may_sign(const struct keylog *k, const char *key_id, const char *public_key_b64,
                    char *why, size_t why_size)
{
    const struct keylog_key *key = find(k, key_id);
    if (!key)
        return fail(why, why_size, "key %s is not enrolled by an earlier leaf of the log",
                    key_id ? key_id : "(none)");
    if (!public_key_b64 || strcmp(key->public_key, public_key_b64) != 0)
        return fail(why, why_size, "the public key differs from the one leaf %" PRIu64 " enrolled",
                    key->enrolled);
    if (key->revoked != KEYLOG_NONE)
        return fail(why, why_size, "key %s was revoked by leaf %" PRIu64, key_id, key->revoked);
    return 0;
}

const char *keylog_owner(const struct keylog *k, const char *key_id)
{
    const struct keylog_key *key = find(k, key_id);
    return key ? key->owner : NULL;
}

size_t keylog_events(const struct keylog *k)
{
    return k->events;
}
