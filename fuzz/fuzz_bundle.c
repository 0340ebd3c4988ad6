/* Fuzz target for offline audit-bundle verification (core/bundle): JSON bytes → bundle_verify,
 * with the bundle's own "previous_checkpoint" string (when it has one) as the earlier
 * checkpoint, then bundle_recompute with Monte Carlo trials capped so each input stays fast.
 * A failure must say why; a bundle whose leaves were reordered must not verify. */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/bundle.h"

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
