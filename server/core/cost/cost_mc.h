/* The cost engine's Monte Carlo for batch kinds (cost_mc.c), over the batch closed form; its
 * generator is documented in core/cost/cost.h. Inside the engine only (see
 * core/cost/cost_scenario.h). */
#ifndef CAPLEDGER_CORE_COST_MC_H
#define CAPLEDGER_CORE_COST_MC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cost/cost_batch.h"
#include "core/cost/cost_scenario.h"

struct cost_rng {
    uint64_t s[4];
};
void cost_rng_seed(struct cost_rng *rng, uint64_t seed);
void cost_rng_jump(struct cost_rng *rng);
uint64_t cost_rng_next(struct cost_rng *rng);
double cost_rng_uniform(struct cost_rng *rng); /* [0, 1) */

struct cost_quantiles {
    double mean, p50, p90, p99, reliable; /* NAN when the rank lands on an unfinished trial */
    double cvar; /* engine 2: the mean of the worst (1 − α) of the trials */
};

#define COST_PERCENTILES 99 /* the cost distribution's percentiles 1..99, for charts */

struct cost_mc_result {
    struct cost_quantiles cost, time;
    /* cost_percentile[k-1]: the nearest-rank k-th percentile of the cost per outcome (NAN when
     * that rank is a trial that could not finish); filled only when asked (it sorts every
     * trial) */
    double cost_percentile[COST_PERCENTILES];
    size_t unfinished_trials;
};

/* Runs sc->trials trials of option index opt_index (closed form in cf), with the cost
 * percentiles when asked. Returns 0, or -1 when memory runs out. */
int cost_mc_run(const struct cost_scenario *sc, size_t opt_index,
                const struct cost_batch_result *cf, bool percentiles, struct cost_mc_result *out)
    __attribute__((warn_unused_result));
/* Engine 2: each trial is the mean cost of V outcomes (docs/cost-model.md). */
int cost_mc_run2(const struct cost_scenario *sc, size_t opt_index,
                 const struct cost_batch_result *cf, bool percentiles, struct cost_mc_result *out)
    __attribute__((warn_unused_result));

#endif
