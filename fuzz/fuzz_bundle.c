/* Fuzz target for offline audit-bundle verification (core/bundle): JSON bytes → bundle_verify,
 * with the bundle's own "previous_checkpoint" string (when it has one) as the earlier
 * checkpoint, then bundle_recompute with Monte Carlo trials capped so each input stays fast.
 * A failure must say why; a bundle whose leaves were reordered must not verify.
 *
 * The same bytes go through the streaming reader (core/ledger/bundle_reader.h), fed in pieces
 * of sizes taken from the input: it must accept what a whole-document jcs_parse accepts, give
 * the same members and leaves, and the streamed checks (bundle_check_*) must reach the same
 * verdict with the same message as bundle_verify. */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/bundle.h"
#include "core/ledger/bundle_reader.h"
#include "core/jcs.h"
#include "oracle/bundle_verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT_BYTES (256u << 10)
#define FUZZ_MAX_TRIALS 200

static void cap_trials(json_t *bundle)
{
    const char *key;
    json_t *entry;
    json_object_foreach(json_object_get(bundle, "comparisons"), key, entry)
    {
        json_t *assumptions = json_object_get(json_object_get(entry, "scenario"), "assumptions");
        json_t *trials = json_object_get(assumptions, "trials");
        if (json_is_number(trials) && json_number_value(trials) > FUZZ_MAX_TRIALS)
            json_object_set_new(assumptions, "trials", json_integer(FUZZ_MAX_TRIALS));
    }
}

static void no_notice(void *ctx, const char *message)
{
    (void)ctx;
    (void)message;
}

struct collected {
    json_t *leaves;
    int other; /* a leaf that is not a string */
    struct bundle_check *check;
    char why[512];
    int failed;
};

static int collect_leaf(void *ctx, size_t index, const char *text, size_t len)
{
    (void)index;
    struct collected *c = ctx;
    if (c->check) {
        c->failed = bundle_check_leaf(c->check, text, len, c->why, sizeof c->why);
        return c->failed;
    }
    if (!text)
        c->other = 1;
    json_array_append_new(c->leaves, text ? json_stringn(text, len) : json_null());
    return 0;
}

/* Feeds data in pieces whose sizes come from the data itself. */
static int feed(struct bundle_reader *r, const uint8_t *data, size_t size)
{
    size_t at = 0, step = size ? (size_t)data[0] % 7 + 1 : 1;
    while (at < size) {
        size_t n = size - at < step ? size - at : step;
        if (bundle_reader_feed(r, (const char *)data + at, n) != 0)
            return -1;
        at += n;
        step = (size_t)data[at % size] % 97 + 1;
    }
    return bundle_reader_end(r);
}

/* The reader against a whole-document parse. */
static void check_reader(const uint8_t *data, size_t size)
{
    json_t *whole = jcs_parse((const char *)data, size, NULL);
    struct collected c = {.leaves = json_array()};
    struct bundle_reader *r = bundle_reader_new(collect_leaf, &c, true, 1u << 20, 1u << 20);
    if (!r || !c.leaves)
        abort();
    int ok = feed(r, data, size) == 0;
    if (!ok && bundle_reader_error(r, NULL, NULL)[0] == '\0')
        abort();
    if (json_is_object(whole) && !ok)
        abort(); /* a document jcs_parse accepts */
    if (ok && whole && !c.other) {
        json_t *rebuilt = json_deep_copy(bundle_reader_members(r));
        if (bundle_reader_has_leaves(r))
            json_object_set(rebuilt, "leaves", c.leaves);
        if (!json_equal(rebuilt, whole))
            abort();
        json_decref(rebuilt);
    }
    bundle_reader_free(r);
    json_decref(c.leaves);
    json_decref(whole);
}

/* The streamed checks against bundle_verify. */
static void check_streamed(const uint8_t *data, size_t size, const struct bundle_trust *trust,
                           int rc, const char *why)
{
    struct bundle_reader *members = bundle_reader_new(NULL, NULL, true, 1u << 20, 1u << 20);
    if (!members)
        abort();
    if (feed(members, data, size) == 0) {
        struct collected c = {0};
        long long n =
            bundle_reader_has_leaves(members) ? (long long)bundle_reader_leaves(members) : -1;
        c.check = bundle_check_begin(bundle_reader_members(members), n, trust, c.why, sizeof c.why);
        int streamed = c.check ? 0 : 1;
        if (c.check) {
            struct bundle_reader *leaves =
                bundle_reader_new(collect_leaf, &c, false, 1u << 20, 1u << 20);
            if (!leaves)
                abort();
            streamed = feed(leaves, data, size) != 0 ? 1 : 0;
            if (streamed && !bundle_reader_stopped(leaves))
                abort(); /* the first pass read the same bytes */
            bundle_reader_free(leaves);
            if (!streamed)
                streamed = bundle_check_end(c.check, NULL, c.why, sizeof c.why);
            bundle_check_free(c.check);
        }
        if (streamed != rc || (rc && strcmp(c.why, why) != 0))
            abort();
    }
    bundle_reader_free(members);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (sodium_init() < 0)
            abort();
        ready = 1;
    }
    if (size > FUZZ_MAX_INPUT_BYTES)
        return 0;
    check_reader(data, size);
    json_t *bundle = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!bundle)
        return 0;
    const char *previous = json_string_value(json_object_get(bundle, "previous_checkpoint"));
    /* The bundle's own key as the one held: the checks after the key comparison get fuzzed. */
    struct bundle_trust trust = {
        .verifier_key = json_string_value(json_object_get(bundle, "verifier_key")),
        .previous_checkpoint = previous,
    };
    char why[512] = "";
    int rc = bundle_verify(bundle, &trust, NULL, why, sizeof why);
    if (rc != 0 && why[0] == '\0')
        abort();
    check_streamed(data, size, &trust, rc, why);
    json_t *leaves = json_object_get(bundle, "leaves");
    if (rc == 0 && json_array_size(leaves) >= 2) {
        json_t *first = json_incref(json_array_get(leaves, 0));
        json_t *second = json_array_get(leaves, 1);
        if (!json_equal(first, second)) {
            json_array_set(leaves, 0, second);
            json_array_set_new(leaves, 1, first);
            first = NULL;
            if (bundle_verify(bundle, &trust, NULL, why, sizeof why) == 0)
                abort();
        }
        json_decref(first);
    }
    cap_trials(bundle);
    why[0] = '\0';
    if (bundle_recompute(bundle, 1e-9, no_notice, NULL, why, sizeof why) != 0 && why[0] == '\0')
        abort();
    json_decref(bundle);
    return 0;
}
