/* Inputs from evidence (docs/evidence.md "Inputs from evidence"): in a scenario being resolved
 * (a copy the caller owns), each option's benchmark.queue_wait_from, failure_from,
 * utilization_from and throughput_from become plain figures computed from the stored evidence
 * the caller may read, and the benchmark's source.evidence_from records, per figure, the
 * selection, the teams read, the query and the counts, so the hashed document says how to redo
 * it. */
#ifndef CAPLEDGER_HTTP_EVFROM_H
#define CAPLEDGER_HTTP_EVFROM_H

#include <jansson.h>

#include "core/problems.h"
#include "store/store.h"

struct req;

/* Problems at the *_from's JSON Pointer (a bad selection, nothing selected, too much selected,
 * a figure also typed); returns the store's failure, or STORE_OK. */
enum store_status evfrom_resolve_scenario(struct req *r, json_t *scenario, struct problems *p);

#endif
