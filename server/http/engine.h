/* The compute engines' one budget (http/handlers/h_compute.c): comparisons and what-if replays
 * share its slots, so a replay never holds a worker while the engine is busy — it is answered
 * at once, 503 (every slot busy) or 429 (the caller's own one taken), with Retry-After. */
#ifndef CAPLEDGER_HTTP_ENGINE_H
#define CAPLEDGER_HTTP_ENGINE_H

struct req;

/* 0 with a slot held for the caller; else -1 after answering 503 or 429. */
int engine_slot_enter(struct req *r) __attribute__((warn_unused_result));
void engine_slot_leave(struct req *r);

#endif
