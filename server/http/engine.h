/* The compute engines' one budget (http/engine.c): comparisons and what-if replays
 * share its slots, so a replay never holds a worker while the engine is busy — it is answered
 * at once, 503 (every slot busy) or 429 (the caller's own one taken), with Retry-After. */
#ifndef CAPLEDGER_HTTP_ENGINE_H
#define CAPLEDGER_HTTP_ENGINE_H

struct req;

/* 0 with a slot held for the caller; else -1 after answering 503 or 429. */
int engine_slot_enter(struct req *r) __attribute__((warn_unused_result));
void engine_slot_leave(struct req *r);

/* A comparison resting on a replay (docs/whatif.md "Feeding the cost engine"): in a scenario
 * (a copy the caller owns), each benchmark.queue_wait_from_whatif {sha256, arrangement} becomes
 * that arrangement's wait_quantiles_s as queue_wait_quantiles_s, and each
 * offer.reserved_utilization_from_whatif {sha256, arrangement} its pool_utilization as
 * reserved_utilization — plain numbers before the scenario is hashed. Problems (an unknown or
 * unreadable replay or arrangement, a figure it lacks) at their JSON Pointers; returns the
 * store's failure, or STORE_OK. */
#include <jansson.h>

#include "core/problems.h"
#include "store/store.h"
enum store_status whatif_resolve_scenario(struct req *r, json_t *scenario, struct problems *p);

#endif
