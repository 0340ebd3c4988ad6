/* Fuzz target for core/linebuf, the line splitter under every streamed upload. An upload's
 * chunk boundaries fall anywhere, so the lines and the faults must not depend on them: the
 * input (after a mode byte choosing the chunk size and a small or default line limit) is split
 * in one piece and in chunks, and both must give the same lines, line numbers and problems.
 * Every line handed out must be valid UTF-8 without NUL, within the limit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/formats/linebuf.h"
#include "oracle/linebuf_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    unsigned char digest[32]; /* running SHA-256 over (lineno, len, bytes) of every line */
    crypto_hash_sha256_state sha;
    size_t max_line;
};

static int on_line(const struct linebuf_line *line, void *ctx, struct problems *errs)
{
    (void)errs;
    struct seen *s = ctx;
    if (line->len > s->max_line || line->text[line->len] != '\0' ||
        linebuf_utf8_check((const unsigned char *)line->text, line->len) != line->len)
        abort();
    crypto_hash_sha256_update(&s->sha, (const unsigned char *)&line->lineno, sizeof line->lineno);
    crypto_hash_sha256_update(&s->sha, (const unsigned char *)&line->len, sizeof line->len);
    crypto_hash_sha256_update(&s->sha, (const unsigned char *)line->text, line->len);
    return 0;
}

static void split(const char *text, size_t len, size_t chunk, size_t max_line, struct seen *s,
                  struct problems *errs)
{
    crypto_hash_sha256_init(&s->sha);
    s->max_line = max_line ? max_line : LINEBUF_DEFAULT_MAX_LINE_BYTES;
    if (linebuf_stream(text, len, chunk, max_line, on_line, s, errs) != 0)
        abort();
    crypto_hash_sha256_final(&s->sha, s->digest);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    size_t chunk = (size_t)(mode & 31) + 1;
    size_t max_line = (mode & 32) ? 16 : 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct seen whole, pieces;
    struct problems errs_whole, errs_pieces;
    problems_init(&errs_whole);
    problems_init(&errs_pieces);
    split(text, len, 0, max_line, &whole, &errs_whole);
    split(text, len, chunk, max_line, &pieces, &errs_pieces);
    if (memcmp(whole.digest, pieces.digest, sizeof whole.digest) != 0 ||
        errs_whole.total != errs_pieces.total)
        abort();
    for (size_t i = 0; i < errs_whole.count; i++) {
        const struct problem *a = &errs_whole.items[i], *b = &errs_pieces.items[i];
        if (a->line != b->line || a->column != b->column || strcmp(a->message, b->message) != 0)
            abort();
    }
    problems_free(&errs_whole);
    problems_free(&errs_pieces);
    return 0;
}
