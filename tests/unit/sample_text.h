/* Shared by the reader tests: load a real sample file from tests/data. (They stream it through
 * linebuf_stream in small chunks, so chunk boundaries fall everywhere.) */
#ifndef CAPLEDGER_TEST_SAMPLE_TEXT_H
#define CAPLEDGER_TEST_SAMPLE_TEXT_H

#include <stdio.h>
#include <stdlib.h>

#include "core/formats/linebuf.h"
#include "core/problems.h"
#include "testutil.h"
#include "oracle/linebuf_stream.h"

/* Reads CAPLEDGER_DATA_DIR/<rel> (tests/data/<rel>) whole; aborts the test run when it cannot. */
static inline char *sample_load(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CAPLEDGER_DATA_DIR, rel);
    char *text = testutil_read_file(path, len);
    if (!text) {
        perror(path);
        abort();
    }
    return text;
}

#endif
