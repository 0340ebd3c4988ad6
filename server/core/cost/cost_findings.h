/* The cost engine's findings (cost_findings.c): the sentences that say where an option's cost
 * goes, and readable numbers for them and for the terminal table. Inside the engine only (see
 * core/cost/cost_scenario.h). */
#ifndef CAPLEDGER_CORE_COST_FINDINGS_H
#define CAPLEDGER_CORE_COST_FINDINGS_H

#include <jansson.h>
#include <stddef.h>

#include "core/cost/cost_batch.h"
#include "core/cost/cost_inference.h"
#include "core/cost/cost_scenario.h"

/* Appends sentences to findings (a JSON array, borrowed); reasons are the option's final
 * infeasibility bits. Returns 0, or -1 on OOM. */
int cost_findings_batch(const struct cost_scenario *sc, const struct cost_option *opt,
                        const struct cost_batch_result *r, unsigned reasons, json_t *findings)
    __attribute__((warn_unused_result));
int cost_findings_inference(const struct cost_scenario *sc, const struct cost_option *opt,
                            const struct cost_inference_result *r, unsigned reasons,
                            double gpus_at_peak, json_t *findings)
    __attribute__((warn_unused_result));

/* Readable numbers for sentences and tables: "5,400", "3,236", "0.15", "45.6", "1.2e+09". */
void cost_format_number(double x, char *buf, size_t size);

#endif
