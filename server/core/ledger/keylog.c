#include "core/ledger/keylog.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/ledger/jcs.h"
#include "core/formats/timefmt.h"
#include "core/validate.h"

struct keylog {
    json_t *keys; /* key_id → {enrolled: index, revoked: index or null, owner, public_key} */
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
    if (k && !(k->keys = json_object())) {
        free(k);
        return NULL;
    }
    return k;
}

void keylog_free(struct keylog *k)
{
    if (!k)
        return;
    json_decref(k->keys);
    free(k);
}

int keylog_apply(struct keylog *k, uint64_t index, const struct keylog_event *ev, char *why,
                 size_t why_size)
{
    json_t *key = json_object_get(k->keys, ev->key_id);
    if (ev->kind == KEYLOG_ENROL) {
        if (key)
            return fail(why, why_size,
                        "key %s is enrolled again (first by leaf %" JSON_INTEGER_FORMAT ")",
                        ev->key_id, json_integer_value(json_object_get(key, "enrolled")));
        if (json_object_set_new(k->keys, ev->key_id,
                                json_pack("{s:I, s:n, s:s, s:s}", "enrolled", (json_int_t)index,
                                          "revoked", "owner", ev->owner, "public_key",
                                          ev->public_key)) != 0)
            return fail(why, why_size, "out of memory");
    } else if (ev->kind == KEYLOG_REVOKE) {
        if (!key)
            return fail(why, why_size, "key %s is revoked but no earlier leaf enrols it",
                        ev->key_id);
        json_t *revoked = json_object_get(key, "revoked");
        if (!json_is_null(revoked))
            return fail(why, why_size,
                        "key %s is revoked again (first by leaf %" JSON_INTEGER_FORMAT ")",
                        ev->key_id, json_integer_value(revoked));
        json_object_set_new(key, "revoked", json_integer((json_int_t)index));
    } else {
        return fail(why, why_size, "not a key event");
    }
    k->events++;
    return 0;
}

int keylog_may_sign(const struct keylog *k, const char *key_id, const char *public_key_b64,
                    char *why, size_t why_size)
{
    json_t *key = json_object_get(k->keys, key_id ? key_id : "");
    if (!key)
        return fail(why, why_size, "key %s is not enrolled by an earlier leaf of the log",
                    key_id ? key_id : "(none)");
    const char *enrolled_pk = json_string_value(json_object_get(key, "public_key"));
    if (!public_key_b64 || !enrolled_pk || strcmp(enrolled_pk, public_key_b64) != 0)
        return fail(why, why_size,
                    "the public key differs from the one leaf %" JSON_INTEGER_FORMAT " enrolled",
                    json_integer_value(json_object_get(key, "enrolled")));
    json_t *revoked = json_object_get(key, "revoked");
    if (!json_is_null(revoked))
        return fail(why, why_size, "key %s was revoked by leaf %" JSON_INTEGER_FORMAT, key_id,
                    json_integer_value(revoked));
    return 0;
}

const char *keylog_owner(const struct keylog *k, const char *key_id)
{
    return json_string_value(json_object_get(json_object_get(k->keys, key_id), "owner"));
}

size_t keylog_events(const struct keylog *k)
{
    return k->events;
}
