/* Line splitter for streamed text uploads.
 *
 * An upload arrives in chunks whose boundaries fall anywhere (inside a line, between the CR and
 * the LF of a CRLF, inside a multi-byte UTF-8 character). The caller pushes each chunk and then
 * pops complete lines until LINEBUF_NEED_MORE, so at most one line plus one chunk is ever held:
 * a 1,000,000-line upload needs no more memory than its longest line.
 *
 * Each popped line is checked before a reader sees it: a line longer than the maximum is
 * reported once (and its bytes skipped up to the next LF), a line with a NUL byte or invalid
 * UTF-8 (overlong forms, surrogates, code points above U+10FFFF, truncated sequences) is
 * reported with its 1-based byte column. Line endings LF and CRLF are accepted; a UTF-8 byte
 * order mark at the start of the first line is dropped. Line numbers are 1-based. */
#ifndef CAPLEDGER_CORE_LINEBUF_H
#define CAPLEDGER_CORE_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problems.h"

#define LINEBUF_DEFAULT_MAX_LINE_BYTES ((size_t)1 << 20) /* 1 MiB */

enum linebuf_status {
    LINEBUF_NEED_MORE = 0, /* no complete line buffered: push more, or finish */
    LINEBUF_LINE,          /* a valid line is in out */
    LINEBUF_TOO_LONG,      /* out->lineno names a line longer than the maximum; it is skipped */
    LINEBUF_BAD_BYTES,     /* out->lineno/column name a NUL byte or invalid UTF-8; skipped */
};

struct linebuf_line {
    char *text;  /* NUL-terminated, without its line ending; valid until the next push/pop */
    size_t len;  /* bytes before the terminator */
    long lineno; /* 1-based */
    long column; /* LINEBUF_BAD_BYTES: 1-based byte column of the first bad byte */
    bool is_nul; /* LINEBUF_BAD_BYTES: the bad byte is NUL (else invalid UTF-8) */
};

struct linebuf {
    char *buf;
    size_t len;     /* bytes held */
    size_t start;   /* first byte not yet popped */
    size_t scanned; /* bytes after start already searched for LF */
    size_t cap;
    size_t max_line; /* longest accepted line, in bytes, line ending excluded */
    long lineno;     /* number of the line being assembled */
    bool skipping;   /* discarding the rest of an overlong line */
    bool finished;   /* no more input: a final unterminated line is complete */
    bool oom;        /* an allocation failed: the stream cannot continue */
};

/* max_line_bytes 0 → LINEBUF_DEFAULT_MAX_LINE_BYTES. Never fails (allocation is lazy). */
void linebuf_init(struct linebuf *lb, size_t max_line_bytes);
void linebuf_free(struct linebuf *lb);

/* Appends a chunk. Returns 0, or -1 when memory ran out (the splitter is then unusable).
 * Pop every line of the previous chunk first, or the buffer grows with each chunk. */
int linebuf_push(struct linebuf *lb, const void *data, size_t len)
    __attribute__((warn_unused_result));

/* Marks the end of input, so that a last line without LF can be popped. */
void linebuf_finish(struct linebuf *lb);

/* Takes the next line or fault. out is filled for every status but LINEBUF_NEED_MORE. */
enum linebuf_status linebuf_pop(struct linebuf *lb, struct linebuf_line *out)
    __attribute__((warn_unused_result));

/* Adds the problem for a LINEBUF_TOO_LONG or LINEBUF_BAD_BYTES status (others: nothing). */
void linebuf_report(const struct linebuf *lb, enum linebuf_status status,
                    const struct linebuf_line *line, struct problems *errs);

/* Index of the first byte of s[0..len) that is NUL or not valid UTF-8, or len when all are. */
size_t linebuf_utf8_check(const unsigned char *s, size_t len);

#endif
