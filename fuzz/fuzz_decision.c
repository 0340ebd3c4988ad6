/* Fuzz target for decision records (core/decision): JSON bytes → decision_validate. A record it
 * passes must canonicalize (decision_message), sign and verify with a fixed key, fail to verify
 * under another key, and make a leaf that is itself canonical JCS. Every record, valid or not,
 * goes through decision_message and decision_verify with the input's own strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/decision.h"
#include "core/jcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The RFC 8032 TEST 1 public key, whose secret key is derived from the seed below. */
#define TEST1_PK_B64 "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
#define OTHER_PK_B64 "PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw="

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
    static int ready;
    if (!ready) {
        static const uint8_t seed[32] = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60,
                                         0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
                                         0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
                                         0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
        if (sodium_init() < 0 || crypto_sign_seed_keypair(pk, sk, seed) != 0)
            abort();
        ready = 1;
    }
    json_t *record = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!record)
        return 0;
    struct problems errs;
    problems_init(&errs);
    size_t found = decision_validate(record, "/record", &errs);
    if (found != errs.total)
        abort();
    size_t len;
    uint8_t *msg = decision_message(record, &len);
    if (found == 0) {
        char sig[DECISION_SIGNATURE_B64_LEN + 1];
        if (!msg || decision_sign(record, sk, sig) != 0 ||
            decision_verify(record, sig, TEST1_PK_B64) != 0 ||
            decision_verify(record, sig, OTHER_PK_B64) == 0)
            abort();
        size_t leaf_len;
        char *leaf = decision_leaf(record, sig, TEST1_PK_B64, "2025-09-12T14:07:00Z", &leaf_len);
        if (!leaf)
            abort();
        json_t *parsed = jcs_parse(leaf, leaf_len, NULL);
        size_t again_len;
        char *again = parsed ? jcs_serialize(parsed, &again_len) : NULL;
        if (!again || again_len != leaf_len || memcmp(again, leaf, leaf_len) != 0)
            abort();
        free(again);
        json_decref(parsed);
        free(leaf);
    }
    free(msg);
    const char *sig_text = json_string_value(json_object_get(record, "signature"));
    if (sig_text && decision_verify(record, sig_text, TEST1_PK_B64) == 0)
        abort(); /* a record holding its own signature cannot have been signed with it */
    problems_free(&errs);
    json_decref(record);
    return 0;
}
