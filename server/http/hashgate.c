/* The password-hashing gate: one per process, because memory is one per process. */
#include "http/hashgate.h"

#include "http/gate.h"

static struct gate hash_gate =
    GATE_INIT(HASHGATE_SLOTS, "too many passwords are being checked at once; retry shortly");

int hashgate_enter(int timeout_ms)
{
    return gate_enter(&hash_gate, timeout_ms);
}

void hashgate_leave(void)
{
    gate_leave(&hash_gate);
}

void hashgate_reply_busy(struct req *r)
{
    gate_reply_busy(r, &hash_gate);
}
