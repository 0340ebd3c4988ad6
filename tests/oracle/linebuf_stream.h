/* Test oracle: a whole text through the line splitter (core/formats/linebuf.h) as if it arrived
 * in pieces, for the readers' unit tests, fuzz targets and benchmarks. The server never holds a
 * body whole: its upload driver pushes each piece as it is read. Built only into tests (CMake's
 * capledger_test_oracle). */
#ifndef CAPLEDGER_TESTS_ORACLE_LINEBUF_STREAM_H
#define CAPLEDGER_TESTS_ORACLE_LINEBUF_STREAM_H

#include <stddef.h>

#include "core/formats/linebuf.h"
#include "core/problems.h"

/* Called for each valid line by linebuf_stream; a non-zero return stops the stream. */
typedef int (*linebuf_line_fn)(const struct linebuf_line *line, void *ctx, struct problems *errs);

/* Splits a whole buffer as if it arrived in pieces of `chunk` bytes (0: in one piece), calling
 * fn for every valid line and reporting the splitter's faults into errs — what the upload
 * driver (http/upload.c) does with a streamed body, for bodies already in memory.
 * Returns fn's non-zero value when it stopped the stream, -1 when memory ran out, else 0. */
int linebuf_stream(const char *text, size_t len, size_t chunk, size_t max_line_bytes,
                   linebuf_line_fn fn, void *ctx, struct problems *errs)
    __attribute__((warn_unused_result));

#endif
