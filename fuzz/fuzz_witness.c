/* tlog-witness add-checkpoint requests and cosignature lines on arbitrary bytes: witness_check
 * answers one of the statuses the protocol allows, a 200 points inside the request at a
 * checkpoint the log signed, and a cosignature line parse never reads past its note. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/witness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The published test key "PeterNeumann" (golang.org/x/mod sumdb/note) as the log. */
#define LOG_KEY "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct note_verifier log;
    static struct witness_key w;
    static int ready;
    if (!ready) {
        uint8_t pk[crypto_sign_PUBLICKEYBYTES] = {1};
        if (sodium_init() < 0 || note_verifier_parse(LOG_KEY, &log) != NOTE_OK ||
            witness_key_init(&w, "witness.example/w1", pk) != 0)
            abort();
        ready = 1;
    }
    struct witness_state st = {.size = size % 5};
    memset(st.root, size & 0xff, sizeof st.root);
    struct witness_verdict v;
    witness_check((const char *)data, size, &log, &st, &v);
    switch (v.status) {
    case 200:
        if (!v.checkpoint || v.checkpoint < (const char *)data ||
            v.checkpoint + v.body_len > (const char *)data + size)
            abort();
        break;
    case 400:
    case 403:
    case 404:
    case 409:
    case 422:
        if (!v.why[0])
            abort();
        break;
    default:
        abort();
    }
    uint64_t t = 0;
    if (witness_cosignature_verify((const char *)data, size, &w, &t) == 0 && t > INT64_MAX)
        abort(); /* tlog-cosignature: a timestamp never exceeds 2^63 - 1 */
    return 0;
}
