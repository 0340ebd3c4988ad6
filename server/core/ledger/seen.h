/* The largest checkpoint a log server has signed or observed, kept outside the database (the
 * state file next to its key, store/store.h: store_log_state_open), against the head the
 * database holds. A database rewound by its administrator — leaves, decisions, checkpoints
 * and cosignatures deleted, the head put back — agrees with itself, but not with what the
 * server remembers having signed: the server must never sign a second root for a size it
 * already signed. */
#ifndef CAPLEDGER_CORE_LEDGER_SEEN_H
#define CAPLEDGER_CORE_LEDGER_SEEN_H

#include <stddef.h>
#include <stdint.h>

/* Whether a database head of (head_size, head_root) may follow the checkpoint (seen_size,
 * seen_root) the server remembers. cp_root_at_seen is the root of the database's stored
 * checkpoint of size seen_size (NULL when none is stored); it is read only when the head is
 * larger. Returns 0 when the head is that checkpoint or extends it (as far as the stored
 * checkpoint shows), else -1 with why filled: the head is smaller (rewound), or has another
 * root for that size, or the database's checkpoint of that size has another root or is gone. */
int seen_check(uint64_t seen_size, const uint8_t seen_root[32], uint64_t head_size,
               const uint8_t head_root[32], const uint8_t *cp_root_at_seen, char *why,
               size_t why_size);

#endif
