#include "core/cursor.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

char *cursor_encode(const char *key)
{
    size_t len = strlen(key);
    size_t out_len = sodium_base64_encoded_len(len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    char *out = malloc(out_len);
    if (out)
        sodium_bin2base64(out, out_len, (const unsigned char *)key, len,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return out;
}

int cursor_decode(const char *cursor, char *buf, size_t size)
{
    /* libsodium 1.0.18 maps some bytes above 0x7F to base64 digits, so two different cursors
     * decoded to the same key (fuzz_codec: "…MlQx\xceDoMN…"); only our alphabet is accepted. */
    for (const char *c = cursor; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            return -1;
    size_t len = 0;
    if (size == 0 || sodium_base642bin((unsigned char *)buf, size - 1, cursor, strlen(cursor), NULL,
                                       &len, NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
        return -1;
    buf[len] = '\0';
    if (memchr(buf, '\0', len))
        return -1;
    return 0;
}
