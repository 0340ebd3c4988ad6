/* Fuzz target for core/formats/skypilot: the input is a vms.csv text fed line by line (at most
 * 1 MiB per line, as the upload's line splitter allows); with bit 0 of the first byte set, the
 * rest is one GpuInfo literal instead. Checks: a parsed GpuInfo has at least as many GPU kinds
 * as its name implies, a refusal's offset lies within the input; every offer read has a GPU
 * model, a count in [1, 1024], memory > 0 and a price ≥ 0, and collapses zones (no two offers
 * share a key); the offers render as JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/skypilot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (data[0] & 1) {
        struct skypilot_gpuinfo gi;
        size_t off = 0;
        const char *why = NULL;
        if (skypilot_gpuinfo_parse(text, len, &gi, &off, &why) == 0) {
            if (gi.name[0] && gi.gpu_kinds == 0)
                abort();
        } else if (!why || off > len) {
            abort();
        }
        return 0;
    }
    struct skypilot_reader r;
    struct problems p;
    struct csv_row row;
    skypilot_reader_init(&r);
    problems_init(&p);
    csv_row_init(&row);
    long line = 0;
    size_t i = 0;
    while (i < len) {
        const char *e = memchr(text + i, '\n', len - i);
        size_t n = e ? (size_t)(e - (text + i)) : len - i;
        line++;
        long bad = 0;
        if (n > 0 && n <= ((size_t)1 << 20) && csv_split(&row, text + i, n, ',', &bad) == 0 &&
            skypilot_feed(&r, &row, line, &p) != 0)
            break;
        i += n + 1;
    }
    for (size_t k = 0; k < r.n; k++) {
        const struct skypilot_offer *o = &r.offers[k];
        if (!o->gpu_model[0] || o->gpus < 1 || o->gpus > 1024 || !(o->gpu_memory_gb > 0) ||
            !(o->price >= 0) || o->zones < 1)
            abort();
        for (size_t m = k + 1; m < r.n && m < k + 64; m++)
            if (r.offers[m].spot == o->spot &&
                strcmp(r.offers[m].instance_type, o->instance_type) == 0 &&
                strcmp(r.offers[m].region, o->region) == 0)
                abort();
    }
    json_t *a = skypilot_offers_json(&r, "fuzz", "USD");
    if (a && json_array_size(a) != r.n)
        abort();
    json_decref(a);
    csv_row_free(&row);
    problems_free(&p);
    skypilot_reader_free(&r);
    return 0;
}
