/* C2SP signed-note and tlog-checkpoint, written from the C2SP texts; the rules on names,
 * text and signature lines follow Go's golang.org/x/mod/sumdb/note, whose published examples
 * are the test vectors. */
#include "core/ledger/note.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/jcs.h"

#define ALG_ED25519 0x01
#define EM_DASH_SPACE "\xe2\x80\x94 " /* "— " begins every signature line */
#define SIG_BYTES (NOTE_KEY_ID_BYTES + crypto_sign_BYTES)

const char *note_status_message(int status)
{
    switch (status) {
    case NOTE_OK:
        return "verified";
    case NOTE_MALFORMED:
        return "malformed signed note";
    case NOTE_UNSIGNED:
        return "no signature by the verifier key";
    case NOTE_BAD_SIGNATURE:
        return "signature does not verify";
    case NOTE_BAD_TEXT:
        return "note text must be UTF-8 without control characters, ending in a newline";
    case NOTE_BAD_NAME:
        return "invalid key name";
    case NOTE_BAD_VERIFIER:
        return "invalid verifier key";
    case NOTE_NO_MEMORY:
        return "out of memory";
    }
    return "unknown note status";
}

/* Unicode white space beyond ASCII (what Go's unicode.IsSpace adds), as UTF-8. */
static const char *const unicode_spaces[] = {
    "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81",
    "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86",
    "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8",
    "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80",
};

static bool name_valid_n(const char *name, size_t n)
{
    if (n == 0 || n > NOTE_NAME_MAX || !jcs_utf8_valid(name, n))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c == 0x7f || c == '+')
            return false;
    }
    for (size_t s = 0; s < sizeof unicode_spaces / sizeof unicode_spaces[0]; s++)
        if (memmem(name, n, unicode_spaces[s], strlen(unicode_spaces[s])))
            return false;
    return true;
}

/* Text a note can carry: UTF-8, no control characters but newline, ending in a newline. */
static bool text_valid(const char *text, size_t len)
{
    if (len == 0 || text[len - 1] != '\n' || !jcs_utf8_valid(text, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            return false;
    }
    return true;
}

static void key_id_n(const char *name, size_t n, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
                     uint8_t key_id[NOTE_KEY_ID_BYTES])
{
    crypto_hash_sha256_state st;
    const uint8_t sep[2] = {'\n', ALG_ED25519};
    uint8_t digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, (const uint8_t *)name, n);
    crypto_hash_sha256_update(&st, sep, sizeof sep);
    crypto_hash_sha256_update(&st, pk, crypto_sign_PUBLICKEYBYTES);
    crypto_hash_sha256_final(&st, digest);
    memcpy(key_id, digest, NOTE_KEY_ID_BYTES);
}

int note_verifier_init(struct note_verifier *v, const char *name,
                       const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
{
    size_t n = strlen(name);
    if (!name_valid_n(name, n))
        return NOTE_BAD_NAME;
    memcpy(v->name, name, n + 1);
    memcpy(v->public_key, public_key, crypto_sign_PUBLICKEYBYTES);
    key_id_n(name, n, public_key, v->key_id);
    return NOTE_OK;
}

char *note_key_text(const char *name, uint8_t alg, const uint8_t key_id[NOTE_KEY_ID_BYTES],
                    const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
{
    uint8_t alg_key[1 + crypto_sign_PUBLICKEYBYTES];
    alg_key[0] = alg;
    memcpy(alg_key + 1, public_key, crypto_sign_PUBLICKEYBYTES);
    char id_hex[2 * NOTE_KEY_ID_BYTES + 1], key_b64[CODEC_B64_LEN(sizeof alg_key) + 1];
    codec_hex_encode(key_id, NOTE_KEY_ID_BYTES, id_hex);
    codec_b64_encode(alg_key, sizeof alg_key, key_b64, sizeof key_b64);
    char *out = NULL;
    if (asprintf(&out, "%s+%s+%s", name, id_hex, key_b64) < 0)
        return NULL;
    return out;
}

char *note_verifier_text(const struct note_verifier *v)
{
    return note_key_text(v->name, ALG_ED25519, v->key_id, v->public_key);
}

int note_verifier_parse(const char *text, struct note_verifier *v)
{
    const char *plus1 = strchr(text, '+');
    const char *plus2 = plus1 ? strchr(plus1 + 1, '+') : NULL;
    if (!plus1 || !plus2 || plus2 - plus1 - 1 != 2 * NOTE_KEY_ID_BYTES)
        return NOTE_BAD_VERIFIER;
    size_t name_len = (size_t)(plus1 - text);
    if (!name_valid_n(text, name_len))
        return NOTE_BAD_VERIFIER;
    char id_hex[2 * NOTE_KEY_ID_BYTES + 1];
    memcpy(id_hex, plus1 + 1, 2 * NOTE_KEY_ID_BYTES);
    id_hex[2 * NOTE_KEY_ID_BYTES] = '\0';
    uint8_t key_id[NOTE_KEY_ID_BYTES], alg_key[1 + crypto_sign_PUBLICKEYBYTES + 1];
    if (codec_hex_decode_exact(id_hex, key_id, sizeof key_id) != 0)
        return NOTE_BAD_VERIFIER;
    long n = codec_b64_decode(plus2 + 1, strlen(plus2 + 1), alg_key, sizeof alg_key);
    if (n != 1 + crypto_sign_PUBLICKEYBYTES || alg_key[0] != ALG_ED25519)
        return NOTE_BAD_VERIFIER;
    memcpy(v->name, text, name_len);
    v->name[name_len] = '\0';
    memcpy(v->public_key, alg_key + 1, crypto_sign_PUBLICKEYBYTES);
    key_id_n(v->name, name_len, v->public_key, v->key_id);
    if (sodium_memcmp(v->key_id, key_id, NOTE_KEY_ID_BYTES) != 0)
        return NOTE_BAD_VERIFIER;
    return NOTE_OK;
}

char *note_sign(const char *text, size_t text_len, const char *name,
                const uint8_t secret_key[crypto_sign_SECRETKEYBYTES], size_t *out_len, int *status)
{
    struct note_verifier v;
    /* libsodium's secret key is seed ‖ public key: the key id needs the public half. */
    int rc = note_verifier_init(&v, name, secret_key + crypto_sign_SEEDBYTES);
    if (rc == NOTE_OK && !text_valid(text, text_len))
        rc = NOTE_BAD_TEXT;
    if (rc != NOTE_OK) {
        *status = rc;
        return NULL;
    }
    uint8_t sig[SIG_BYTES];
    memcpy(sig, v.key_id, NOTE_KEY_ID_BYTES);
    crypto_sign_detached(sig + NOTE_KEY_ID_BYTES, NULL, (const uint8_t *)text, text_len,
                         secret_key);
    char sig_b64[CODEC_B64_LEN(SIG_BYTES) + 1];
    codec_b64_encode(sig, sizeof sig, sig_b64, sizeof sig_b64);
    size_t name_len = strlen(name), b64_len = strlen(sig_b64);
    size_t total = text_len + 1 + strlen(EM_DASH_SPACE) + name_len + 1 + b64_len + 1;
    char *out = malloc(total + 1);
    if (!out) {
        *status = NOTE_NO_MEMORY;
        return NULL;
    }
    size_t o = 0;
    memcpy(out + o, text, text_len);
    o += text_len;
    out[o++] = '\n';
    memcpy(out + o, EM_DASH_SPACE, strlen(EM_DASH_SPACE));
    o += strlen(EM_DASH_SPACE);
    memcpy(out + o, name, name_len);
    o += name_len;
    out[o++] = ' ';
    memcpy(out + o, sig_b64, b64_len);
    o += b64_len;
    out[o++] = '\n';
    out[o] = '\0';
    *out_len = o;
    *status = NOTE_OK;
    return out;
}

int note_open(const char *msg, size_t len, const struct note_verifier *v, size_t *text_len)
{
    if (!text_valid(msg, len))
        return NOTE_MALFORMED;
    /* The signatures follow the last blank line; the text keeps its own final newline. */
    size_t split = len;
    for (size_t i = len - 1; i > 0; i--)
        if (msg[i] == '\n' && msg[i - 1] == '\n') {
            split = i - 1;
            break;
        }
    if (split == len)
        return NOTE_MALFORMED;
    size_t body_len = split + 1;
    const char *line = msg + split + 2, *end = msg + len;
    if (line >= end)
        return NOTE_MALFORMED;
    int result = NOTE_UNSIGNED, count = 0;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t dash = strlen(EM_DASH_SPACE);
        if (++count > NOTE_MAX_SIGNATURES || (size_t)(nl - line) < dash ||
            memcmp(line, EM_DASH_SPACE, dash) != 0)
            return NOTE_MALFORMED;
        const char *name = line + dash;
        const char *space = memchr(name, ' ', (size_t)(nl - name));
        if (!space || !name_valid_n(name, (size_t)(space - name)))
            return NOTE_MALFORMED;
        uint8_t sig[SIG_BYTES + 64];
        long sig_len = codec_b64_decode(space + 1, (size_t)(nl - space - 1), sig, sizeof sig);
        if (sig_len < NOTE_KEY_ID_BYTES + 1)
            return NOTE_MALFORMED;
        size_t name_len = (size_t)(space - name);
        bool ours = name_len == strlen(v->name) && memcmp(name, v->name, name_len) == 0 &&
                    memcmp(sig, v->key_id, NOTE_KEY_ID_BYTES) == 0;
        if (ours && result == NOTE_UNSIGNED) {
            bool good = sig_len == SIG_BYTES &&
                        crypto_sign_verify_detached(sig + NOTE_KEY_ID_BYTES, (const uint8_t *)msg,
                                                    body_len, v->public_key) == 0;
            result = good ? NOTE_OK : NOTE_BAD_SIGNATURE;
        }
        line = nl + 1;
    }
    if (result == NOTE_OK)
        *text_len = body_len;
    return result;
}

/* ---- checkpoints -------------------------------------------------------------------------- */

char *note_checkpoint_body(const char *origin, uint64_t size, const uint8_t root[32])
{
    size_t n = strlen(origin);
    if (n == 0 || n > NOTE_NAME_MAX || !jcs_utf8_valid(origin, n))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)origin[i] < 0x20 || origin[i] == 0x7f)
            return NULL;
    char root_b64[CODEC_B64_LEN(32) + 1];
    codec_b64_encode(root, 32, root_b64, sizeof root_b64);
    char *out = NULL;
    if (asprintf(&out, "%s\n%" PRIu64 "\n%s\n", origin, size, root_b64) < 0)
        return NULL;
    return out;
}

int note_checkpoint_parse(const char *text, size_t len, struct note_checkpoint *out)
{
    if (!text_valid(text, len))
        return -1;
    const char *lines[3], *end = text + len, *p = text;
    size_t lens[3];
    for (int i = 0; i < 3; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || nl == p)
            return -1;
        lines[i] = p;
        lens[i] = (size_t)(nl - p);
        p = nl + 1;
    }
    /* Extension lines: each non-empty. */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == p)
            return -1;
        p = nl + 1;
    }
    if (lens[0] > NOTE_NAME_MAX)
        return -1;
    if (lens[1] > 20 || (lens[1] > 1 && lines[1][0] == '0'))
        return -1;
    uint64_t size = 0;
    for (size_t i = 0; i < lens[1]; i++) {
        char c = lines[1][i];
        if (c < '0' || c > '9')
            return -1;
        uint64_t digit = (uint64_t)(c - '0');
        if (size > (UINT64_MAX - digit) / 10)
            return -1;
        size = size * 10 + digit;
    }
    uint8_t root[33];
    if (codec_b64_decode(lines[2], lens[2], root, sizeof root) != 32)
        return -1;
    memcpy(out->origin, lines[0], lens[0]);
    out->origin[lens[0]] = '\0';
    out->size = size;
    memcpy(out->root, root, 32);
    return 0;
}

int note_checkpoint_open(const char *msg, size_t len, const struct note_verifier *v,
                         struct note_checkpoint *out)
{
    size_t text_len = 0;
    if (note_open(msg, len, v, &text_len) != NOTE_OK ||
        note_checkpoint_parse(msg, text_len, out) != 0 || strcmp(out->origin, v->name) != 0)
        return -1;
    return 0;
}
