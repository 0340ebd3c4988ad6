/* Fuzz target: replay document bytes → whatif_replay_document. It must never crash, always
 * either replay or name at least one problem, never return a figure that is NaN or infinite,
 * account for every job in every arrangement (replayed + unschedulable + not replayed = jobs),
 * render as a table, and give the resolved document the same canonical bytes whether built as
 * one tree or job by job (whatif_resolved_jcs). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonlimit.h"
#include "core/jcs.h"
#include "core/whatif/whatif.h"

#define FUZZ_MAX_INPUT_BYTES (256u << 10)

static void check_finite(const json_t *v)
{
    if (json_is_real(v) && !isfinite(json_real_value(v)))
        abort();
    size_t i;
    const char *key;
    json_t *child;
    if (json_is_array(v))
        json_array_foreach(v, i, child) check_finite(child);
    if (json_is_object(v))
        json_object_foreach((json_t *)v, key, child) check_finite(child);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    json_error_t error;
    json_t *doc = json_load_bounded((const char *)data, size, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        return 0;
    struct problems errs;
    problems_init(&errs);
    json_t *result = whatif_replay_document(doc, &errs);
    if (!result && errs.total == 0)
        abort(); /* a refusal must say why */
    if (result) {
        check_finite(result);
        long long jobs = json_integer_value(json_object_get(result, "jobs"));
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(result, "arrangements"), i, a)
        {
            long long sum = json_integer_value(json_object_get(a, "replayed")) +
                            json_integer_value(json_object_get(a, "unschedulable")) +
                            json_integer_value(json_object_get(a, "not_replayed"));
            if (sum != jobs)
                abort();
        }
        char *table = whatif_format_table(result);
        if (!table)
            abort();
        free(table);
        struct whatif_jobs j;
        whatif_jobs_init(&j);
        if (whatif_jobs_from_json(json_object_get(doc, "jobs"), &j, &errs) != 0)
            abort();
        /* the canonical bytes of the document as one tree equal those written job by job
         * when the jobs are already in their resolved form (whole seconds, UTC) */
        char h1[65], h2[65];
        size_t n1, n2;
        char *b1 = whatif_resolved_jcs(doc, &j, &n1, h1);
        char *b2 = jcs_serialize_sha256(doc, &n2, h2);
        if (!b1 || !b2)
            abort();
        json_t *again = jcs_parse(b1, n1, NULL);
        if (!again)
            abort();
        json_decref(again);
        free(b1);
        free(b2);
        whatif_jobs_free(&j);
        json_decref(result);
    }
    problems_free(&errs);
    json_decref(doc);
    return 0;
}
