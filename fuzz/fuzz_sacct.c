/* Fuzz target for the job accounting readers: sacct text (or, with bit 3 of the first byte,
 * an openb pod list) streamed through the line splitter (chunk size, header mode, -o list and
 * steps chosen by the first byte), every run rendered as a COPY row, and the same bytes tried
 * as a POST /runs JSON array. */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/linebuf.h"
#include "core/openb.h"
#include "core/sacct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    struct problems errs;
    problems_init(&errs);
    struct sacct_options opt = {
        .fields = (mode & 1) ? "JobID,JobIDRaw,User,Account,State,Start,End,ExitCode,Submit,"
                               "Partition,QOS,AllocTRES,JobName"
                             : NULL,
        .include_steps = (mode & 2) != 0,
        .team = (mode & 4) ? "fuzz" : NULL,
    };
    struct sacct_reader reader;
    struct openb_reader pods;
    const struct openb_options pod_opt = {.trace_start_s = 1672531200, .team = "fuzz"};
    openb_reader_init(&pods, &pod_opt);
    struct pgcopy_buf copy;
    pgcopy_init(&copy);
    if (sacct_reader_init(&reader, &opt, &errs) == 0) {
        struct linebuf lb;
        linebuf_init(&lb, 4096);
        size_t chunk = (size_t)(mode >> 4) + 1;
        for (size_t off = 0;; off += chunk) {
            if (off < size) {
                if (linebuf_push(&lb, data + off, off + chunk <= size ? chunk : size - off) != 0)
                    abort();
            } else {
                linebuf_finish(&lb);
            }
            struct linebuf_line line;
            enum linebuf_status st;
            while ((st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE) {
                if (st != LINEBUF_LINE) {
                    linebuf_report(&lb, st, &line, &errs);
                    continue;
                }
                struct run run;
                bool got = (mode & 8) ? openb_feed_line(&pods, line.text, line.len, line.lineno,
                                                        &run, &errs) == OPENB_RUN
                                      : sacct_feed_line(&reader, line.text, line.len, line.lineno,
                                                        &run, &errs) == SACCT_RUN;
                if (got) {
                    pgcopy_reset(&copy);
                    run_copy_line(&run, &copy);
                }
            }
            if (off >= size)
                break;
        }
        linebuf_free(&lb);
    }
    pgcopy_free(&copy);

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
