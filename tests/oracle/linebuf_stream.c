/* Test oracle: a whole text through the line splitter (linebuf_stream.h). */
#include "oracle/linebuf_stream.h"

#include <stdbool.h>

int linebuf_stream(const char *text, size_t len, size_t chunk, size_t max_line_bytes,
                   linebuf_line_fn fn, void *ctx, struct problems *errs)
{
    struct linebuf lb;
    linebuf_init(&lb, max_line_bytes);
    if (chunk == 0)
        chunk = len ? len : 1;
    int rc = 0;
    size_t off = 0;
    bool done = false;
    while (rc == 0 && !done) {
        if (off < len) {
            size_t n = len - off < chunk ? len - off : chunk;
            if (linebuf_push(&lb, text + off, n) != 0) {
                rc = -1;
                break;
            }
            off += n;
        } else {
            linebuf_finish(&lb);
            done = true;
        }
        struct linebuf_line line;
        enum linebuf_status st;
        while (rc == 0 && (st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE) {
            if (st == LINEBUF_LINE)
                rc = fn(&line, ctx, errs);
            else
                linebuf_report(&lb, st, &line, errs);
        }
    }
    linebuf_free(&lb);
    return rc;
}
