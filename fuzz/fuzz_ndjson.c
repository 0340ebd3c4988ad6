/* Fuzz target for JSON Lines uploads (POST /runs as application/x-ndjson): the input is split
 * into lines as an upload is, each line goes through the nesting scan, jansson and the run
 * validator, and each accepted run is rendered as a COPY row. The scan and the parser must
 * agree: a line the scan refuses never reaches jansson, and a line it passes never makes
 * jansson hit its own (recursive) depth limit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonlimit.h"
#include "core/formats/linebuf.h"
#include "core/formats/pgcopy.h"
#include "core/formats/run.h"
#include "oracle/run_text.h"
#include "oracle/linebuf_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(const struct linebuf_line *line, void *ctx, struct problems *errs)
{
    struct pgcopy_buf *copy = ctx;
    bool shallow = json_nest_ok(line->text, line->len, JSON_NEST_MAX, false, NULL);
    json_error_t err;
    json_t *obj = json_load_bounded(line->text, line->len, JSON_REJECT_DUPLICATES, &err);
    if (!shallow && (obj || json_error_code(&err) != json_error_stack_overflow))
        abort();
    if (shallow && !obj && json_error_code(&err) == json_error_stack_overflow)
        abort();
    struct run run;
    if (obj && run_from_json(obj, "", &run, errs) == 0) {
        run_copy_line(&run, copy);
        pgcopy_reset(copy);
    }
    json_decref(obj);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct problems errs;
    problems_init(&errs);
    struct pgcopy_buf copy;
    pgcopy_init(&copy);
    if (linebuf_stream((const char *)data, size, 4096, 0, on_line, &copy, &errs) != 0)
        abort();
    pgcopy_free(&copy);
    problems_free(&errs);
    return 0;
}
