#include "core/auth/secret.h"

#include <sodium.h>
#include <string.h>

void secret_token_new(char out[TOKEN_TEXT_LEN + 1])
{
    unsigned char raw[32];
    randombytes_buf(raw, sizeof raw);
    memcpy(out, TOKEN_PREFIX, 3);
    sodium_bin2base64(out + 3, TOKEN_TEXT_LEN + 1 - 3, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
}

int secret_token_shape_ok(const char *text)
{
    if (strlen(text) != TOKEN_TEXT_LEN || strncmp(text, TOKEN_PREFIX, 3) != 0)
        return 0;
    for (const char *c = text + 3; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            return 0;
    return 1;
}

void secret_random_hex(char *out, size_t out_size)
{
    unsigned char raw[64];
    size_t n = (out_size - 1) / 2;
    if (n > sizeof raw)
        n = sizeof raw;
    randombytes_buf(raw, n);
    sodium_bin2hex(out, 2 * n + 1, raw, n);
}

void secret_sha256_hex(const char *text, size_t len, char hex[65])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, (const unsigned char *)text, len);
    sodium_bin2hex(hex, 65, digest, sizeof digest);
}
