/* Shared by the reader tests: load a real sample file, and stream a buffer through the line
 * splitter in small chunks (so chunk boundaries fall everywhere), calling a per-line function
 * the way the HTTP layer will. */
#ifndef CAPLEDGER_TEST_SAMPLE_TEXT_H
#define CAPLEDGER_TEST_SAMPLE_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/linebuf.h"
#include "core/problems.h"
#include "testutil.h"

/* Reads CAPLEDGER_SHARED_DIR/data/<rel> whole; aborts the test run when it cannot. */
static inline char *sample_load(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/%s", CAPLEDGER_SHARED_DIR, rel);
    char *text = testutil_read_file(path, len);
    if (!text) {
        perror(path);
        abort();
    }
    return text;
}

typedef int (*sample_line_fn)(const char *line, size_t len, long lineno, void *ctx,
                              struct problems *errs);

/* Streams text through a linebuf in chunks of `chunk` bytes; splitter faults go to errs.
 * Stops early when fn returns non-zero and returns that value (0 when every line was fed). */
static inline int sample_stream(const char *text, size_t len, size_t chunk, size_t max_line,
                                sample_line_fn fn, void *ctx, struct problems *errs)
{
    struct linebuf lb;
    linebuf_init(&lb, max_line);
    int rc = 0;
    size_t off = 0;
    bool done = false;
    while (rc == 0 && !done) {
        if (off < len) {
            size_t n = len - off < chunk ? len - off : chunk;
            if (linebuf_push(&lb, text + off, n) != 0)
                abort();
            off += n;
        } else {
            linebuf_finish(&lb);
            done = true;
        }
        struct linebuf_line line;
        enum linebuf_status st;
        while (rc == 0 && (st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE) {
            if (st == LINEBUF_LINE)
                rc = fn(line.text, line.len, line.lineno, ctx, errs);
            else
                linebuf_report(&lb, st, &line, errs);
        }
    }
    linebuf_free(&lb);
    return rc;
}

#endif
