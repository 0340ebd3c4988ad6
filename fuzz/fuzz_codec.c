/* Fuzz target for the text encodings (a small family): core/codec's strict base64 and hex
 * decoders and core/cursor's list cursors. Anything a strict decoder accepts must encode back
 * to exactly the input (one text per value: these strings are compared and signed as they
 * are), and encoding arbitrary bytes must decode back to them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/cursor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_BYTES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_BYTES)
        return 0;
    static uint8_t bin[FUZZ_MAX_BYTES];
    static char text[CODEC_B64_LEN(FUZZ_MAX_BYTES) + 1];
    char *input = malloc(size + 1);
    if (!input)
        return 0;
    memcpy(input, data, size);
    input[size] = '\0';

    long n = codec_b64_decode(input, size, bin, sizeof bin);
    if (n >= 0) {
        codec_b64_encode(bin, (size_t)n, text, sizeof text);
        if (strlen(text) != size || memcmp(text, data, size) != 0)
            abort();
    }
    codec_b64_encode(data, size, text, sizeof text);
    if (codec_b64_decode(text, strlen(text), bin, sizeof bin) != (long)size ||
        memcmp(bin, data, size) != 0)
        abort();

    if (size % 2 == 0 && codec_hex_decode_exact(input, bin, size / 2) == 0) {
        codec_hex_encode(bin, size / 2, text);
        if (memcmp(text, data, size) != 0)
            abort();
    }

    char key[256];
    if (cursor_decode(input, key, sizeof key) == 0) {
        char *again = cursor_encode(key);
        if (!again || strcmp(again, input) != 0)
            abort();
        free(again);
    }
    if (!memchr(data, '\0', size)) {
        char *cursor = cursor_encode(input);
        char *back = malloc(size + 1);
        if (!cursor || !back || cursor_decode(cursor, back, size + 1) != 0 ||
            strcmp(back, input) != 0)
            abort();
        free(cursor);
        free(back);
    }
    free(input);
    return 0;
}
