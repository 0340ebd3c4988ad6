/* Fuzz target for the load-test importers: the first byte picks a format of the list in
 * core/formats/formats.h, or none (and a where filter for vLLM); the output document, when there is
 * one, is serialised. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/formats/loadtest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    enum loadtest_format format = (enum loadtest_format)(mode % LOADTEST_FORMAT_END);
    const struct loadtest_options opt = {.where_key = (mode & 4) ? "deployment" : NULL,
                                         .where_value = "base"};
    struct problems errs;
    problems_init(&errs);
    json_t *doc = loadtest_parse(format, (const char *)data + 1, size - 1, &opt, &errs);
    if (doc) {
        char *text = json_dumps(doc, JSON_COMPACT);
        free(text);
        json_decref(doc);
    }
    problems_free(&errs);
    return 0;
}
