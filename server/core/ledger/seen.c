#include "core/ledger/seen.h"

#include <stdio.h>
#include <string.h>

#include "core/ledger/codec.h"

int seen_check(uint64_t seen_size, const uint8_t seen_root[32], uint64_t head_size,
               const uint8_t head_root[32], const uint8_t *cp_root_at_seen, char *why,
               size_t why_size)
{
    why[0] = '\0';
    char seen_hex[65], other_hex[65];
    codec_hex_encode(seen_root, 32, seen_hex);
    if (head_size < seen_size) {
        snprintf(why, why_size,
                 "the log head has size %llu, but this server signed or observed the checkpoint "
                 "of size %llu (root %s): the database was rewound",
                 (unsigned long long)head_size, (unsigned long long)seen_size, seen_hex);
        return -1;
    }
    if (head_size == seen_size) {
        if (memcmp(head_root, seen_root, 32) == 0)
            return 0;
        codec_hex_encode(head_root, 32, other_hex);
        snprintf(why, why_size,
                 "the log head has size %llu and root %s, but this server signed or observed "
                 "root %s for that size",
                 (unsigned long long)head_size, other_hex, seen_hex);
        return -1;
    }
    if (!cp_root_at_seen) {
        snprintf(why, why_size,
                 "no checkpoint of size %llu is stored, but this server signed or observed one "
                 "(root %s): the database's checkpoints were rewritten",
                 (unsigned long long)seen_size, seen_hex);
        return -1;
    }
    if (memcmp(cp_root_at_seen, seen_root, 32) != 0) {
        codec_hex_encode(cp_root_at_seen, 32, other_hex);
        snprintf(why, why_size,
                 "the stored checkpoint of size %llu has root %s, but this server signed or "
                 "observed root %s for that size",
                 (unsigned long long)seen_size, other_hex, seen_hex);
        return -1;
    }
    return 0;
}
