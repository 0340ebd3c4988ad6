#include "core/ledger/codec.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

char *codec_b64_encode(const uint8_t *bin, size_t n, char *out, size_t out_size)
{
    return sodium_bin2base64(out, out_size, bin, n, sodium_base64_VARIANT_ORIGINAL);
}

char *codec_b64_encode_new(const uint8_t *bin, size_t n)
{
    size_t size = CODEC_B64_LEN(n) + 1;
    char *out = malloc(size);
    if (out)
        codec_b64_encode(bin, n, out, size);
    return out;
}

long codec_b64_decode(const char *text, size_t len, uint8_t *out, size_t cap)
{
    /* libsodium 1.0.18 maps some bytes above 0x7F to base64 digits (found by fuzz_note:
     * "…kAXY\xe2\x80\x80KBg…" decoded as 32 bytes), so the alphabet is checked here first. */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/' || c == '='))
            return -1;
    }
    size_t bin_len = 0;
    const char *end = NULL;
    /* libsodium refuses bad padding and non-zero leftover bits; it stops at the first
     * character it cannot use, so the whole text must have been consumed. */
    if (sodium_base642bin(out, cap, text, len, NULL, &bin_len, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0)
        return -1;
    if (end != text + len)
        return -1;
    return (long)bin_len;
}

char *codec_hex_encode(const uint8_t *bin, size_t n, char *out)
{
    return sodium_bin2hex(out, 2 * n + 1, bin, n);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int codec_hex_decode_span(const char *text, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(text[2 * i]);
        if (hi < 0)
            return -1; /* also where text ends early: '\0' is not a digit */
        int lo = hex_digit(text[2 * i + 1]);
        if (lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int codec_hex_decode_exact(const char *text, uint8_t *out, size_t n)
{
    if (strlen(text) != 2 * n)
        return -1;
    return codec_hex_decode_span(text, out, n);
}
