/* The compute engines' one budget (engine.h). */
#include "http/engine.h"

#include "http/gate.h"
#include "http/internal.h"

/* The engine is CPU-bound (a comparison at its work limit, COST_MAX_OPTION_TRIALS, runs for
 * well under a second and a half of one core; engine 2's trials are each V outcomes, but a
 * trial's work does not grow with V or the acceptance rate — sums of many runs are drawn as one
 * normal — so options × trials stays the bound: 64 options × 31,250 trials at V = 640 and
 * acceptance 0.001 took 0.63 s of CPU): at most ENGINE_SLOTS at once — a fixed two, whatever the
 * machine's core count, so a comparison keeps a core to itself on the 2-core hosts this is
 * sized for — and ENGINE_PER_USER per user. A
 * request that finds the engine busy is answered at once — 503, or 429 when its user already
 * has one running — with Retry-After: waiting would hold a worker thread. */
#define ENGINE_SLOTS 2
#define ENGINE_PER_USER 1
static struct gate engine_gate =
    GATE_INIT(ENGINE_SLOTS, "the cost engine is busy with other comparisons; retry shortly");

/* A slot of the engine for the caller (engine_slot_leave gives it back); else answers 429 (the
 * caller's own limit) or 503 (every slot busy) and returns -1. */
int engine_slot_enter(struct req *r)
{
    int got = gate_try_enter_as(&engine_gate, r->who.user_id, ENGINE_PER_USER);
    if (got == 0)
        return 0;
    if (got == -2)
        gate_reply_own_limit(r, ENGINE_PER_USER);
    else
        gate_reply_busy(r, &engine_gate);
    return -1;
}

void engine_slot_leave(struct req *r)
{
    gate_leave_as(&engine_gate, r->who.user_id);
}
