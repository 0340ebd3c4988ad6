/* Fuzz target for the job accounting readers: sacct text (or, with bit 3 of the first byte,
 * an openb pod list) streamed through the line splitter (chunk size, header mode, -o list and
 * steps chosen by the first byte), every run rendered as a COPY row, and the same bytes tried
 * as a POST /runs JSON array. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/formats/linebuf.h"
#include "core/formats/openb.h"
#include "core/formats/sacct.h"
#include "oracle/run_text.h"
#include "oracle/linebuf_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_jobs {
    bool pods;
    struct sacct_reader sacct;
    struct openb_reader openb;
    struct pgcopy_buf copy;
};

static int fuzz_line(const struct linebuf_line *line, void *ctx, struct problems *errs)
{
    struct fuzz_jobs *j = ctx;
    struct run run;
    bool got = j->pods
                   ? openb_feed_line(&j->openb, line->text, line->len, line->lineno, &run, errs) ==
                         OPENB_RUN
                   : sacct_feed_line(&j->sacct, line->text, line->len, line->lineno, &run, errs) ==
                         SACCT_RUN;
    if (got) {
        pgcopy_reset(&j->copy);
        run_copy_line(&run, &j->copy);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    struct problems errs;
    problems_init(&errs);
    const struct sacct_options opt = {
        .fields = (mode & 1) ? "JobID,JobIDRaw,User,Account,State,Start,End,ExitCode,Submit,"
                               "Partition,QOS,AllocTRES,JobName"
                             : NULL,
        .include_steps = (mode & 2) != 0,
        .team = (mode & 4) ? "fuzz" : NULL,
    };
    const struct openb_options pod_opt = {.trace_start_s = 1672531200, .team = "fuzz"};
    struct fuzz_jobs jobs = {.pods = (mode & 8) != 0};
    pgcopy_init(&jobs.copy);
    openb_reader_init(&jobs.openb, &pod_opt);
    if (sacct_reader_init(&jobs.sacct, &opt, &errs) == 0 &&
        linebuf_stream((const char *)data, size, (size_t)(mode >> 4) + 1, 4096, fuzz_line, &jobs,
                       &errs) < 0)
        abort();
    pgcopy_free(&jobs.copy);

    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (json_is_array(doc)) {
        size_t i;
        json_t *item;
        json_array_foreach(doc, i, item)
        {
            char prefix[32];
            struct run run;
            problems_pointer_index(prefix, sizeof prefix, "", i);
            (void)!run_from_json(item, prefix, &run, &errs);
        }
    }
    json_decref(doc);
    problems_free(&errs);
    return 0;
}
