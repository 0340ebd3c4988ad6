/* Signed-note, verifier-key and checkpoint parsers on arbitrary bytes. A note that opens must
 * hand back a text that is a prefix of it; a three-line checkpoint that parses must be exactly
 * what note_checkpoint_body writes for the parsed values. */
#include <stdlib.h>
#include <string.h>

#include "core/ledger/note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The published test key "PeterNeumann" (golang.org/x/mod sumdb/note), so seeds with its
 * signature lines reach the signature check. */
#define VERIFIER "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct note_verifier v;
    static int ready;
    if (!ready) {
        if (sodium_init() < 0 || note_verifier_parse(VERIFIER, &v) != NOTE_OK)
            abort();
        ready = 1;
    }
    const char *msg = (const char *)data;
    size_t text_len = 0;
    if (note_open(msg, size, &v, &text_len) == NOTE_OK && (text_len == 0 || text_len >= size))
        abort();

    struct note_checkpoint cp;
    if (note_checkpoint_parse(msg, size, &cp) == 0) {
        size_t lines = 0;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        if (lines == 3) {
            char *body = note_checkpoint_body(cp.origin, cp.size, cp.root);
            if (!body || strlen(body) != size || memcmp(body, data, size) != 0)
                abort();
            free(body);
        }
    }

    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct note_verifier parsed;
    if (note_verifier_parse(text, &parsed) == NOTE_OK) {
        char *back = note_verifier_text(&parsed);
        if (!back || strcmp(back, text) != 0)
            abort();
        free(back);
    }
    free(text);
    return 0;
}
