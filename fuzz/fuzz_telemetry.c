/* Fuzz target for the telemetry readers: the first byte picks the format (or detection), the
 * noheader query list (nvidia-smi) or ?at= (dcgm), and the chunk size; every sample goes through
 * the COPY renderer and the summary, whose JSON is built at the end. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/formats/linebuf.h"
#include "core/formats/telemetry.h"
#include "oracle/linebuf_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_sink {
    struct telemetry_summary summary;
    struct pgcopy_buf copy;
};

static int fuzz_on_sample(const struct telemetry_sample *s, void *ctx)
{
    struct fuzz_sink *sink = ctx;
    pgcopy_reset(&sink->copy);
    telemetry_copy_line(s, &sink->copy);
    return telemetry_summary_add(&sink->summary, s);
}

static int fuzz_feed_line(const struct linebuf_line *line, void *ctx, struct problems *errs)
{
    return telemetry_feed_line(ctx, line->text, line->len, line->lineno, errs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    /* Each format of the list (core/formats/formats.h) and detection (0); 4 while there are
     * three formats, the bit above being the noheader / ?at= choice. */
    enum telemetry_format format = (enum telemetry_format)(mode % TELEMETRY_FORMAT_END);
    if (format == TELEMETRY_UNKNOWN)
        format = telemetry_detect_format((const char *)data, size);
    struct telemetry_options opt = {
        .fields = (mode & 4) ? "timestamp,index,uuid,utilization.gpu,memory.used,memory.total,"
                               "power.draw"
                             : NULL,
        .has_at = format == TELEMETRY_DCGM && (mode & 4),
        .at_ms = 1764816300250,
    };
    struct problems errs;
    problems_init(&errs);
    struct fuzz_sink sink;
    pgcopy_init(&sink.copy);
    if (telemetry_summary_init(&sink.summary, 0.05) != 0)
        abort();
    struct telemetry_reader reader;
    if (telemetry_reader_init(&reader, format, &opt, fuzz_on_sample, &sink, &errs) == 0) {
        int rc = linebuf_stream((const char *)data, size, (size_t)(mode >> 3) + 1, 8192,
                                fuzz_feed_line, &reader, &errs);
        if (rc == 0)
            (void)!telemetry_finish(&reader, &errs);
    }
    telemetry_reader_free(&reader);
    json_t *summary = telemetry_summary_json(&sink.summary);
    json_decref(summary);
    telemetry_summary_free(&sink.summary);
    pgcopy_free(&sink.copy);
    problems_free(&errs);
    return 0;
}
