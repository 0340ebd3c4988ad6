/* The cost engine's closed form for inference (cost_inference.c): capacity per replica,
 * replicas hour by hour, the cost of an accepted request. Inside the engine only (see
 * core/cost/cost_scenario.h). */
#ifndef CAPLEDGER_CORE_COST_INFERENCE_H
#define CAPLEDGER_CORE_COST_INFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cost/cost_scenario.h"

enum cost_inference_item {
    COST_I_USEFUL,
    COST_I_RETRIES,
    COST_I_IDLE_CAPACITY,
    COST_I_SPARES,
    COST_I_COLD_STARTS,
    COST_I_INTERRUPTIONS,
    COST_I_UNUSED_RESERVATION,
    COST_I_ORCHESTRATION,
    COST_I_REVIEW,
    COST_I_UNSERVED, /* engine 2 only */
    COST_I_ITEMS
};
#define COST_I_ITEMS_OF(engine) ((engine) >= 2 ? COST_I_ITEMS : COST_I_UNSERVED)
extern const char *const cost_inference_item_names[COST_I_ITEMS];

struct cost_inference_result {
    bool runs;           /* false: no capacity (slo) or overflow */
    double capacity_rps; /* κ, NAN when the first load point fails */
    double provisioned_h, cold_start_h, interruption_h, replica_hours;
    double peak_replicas; /* most replicas in any hour, spares included */
    double demand_rps_h;  /* Σd (rps × hours) */
    double requests, accepted;
    double breakdown[COST_I_ITEMS];
    double total, cost_per_outcome, cost_per_million_tokens, utilization;
    /* engine 2 */
    double slo_attainment, served_requests, cash_cost_per_outcome;
    double breach_hours; /* hours of the horizon in which some demand is shed */
};

/* κ from the sorted load points; NAN when the first point fails the SLO. */
double cost_inference_capacity(const struct cost_service *svc, const struct cost_benchmark *b);
/* Engine 2: κ with every SLO metric at once. */
double cost_inference_capacity2(const struct cost_service *svc, const struct cost_benchmark *b);
/* Engine 2: the dedicated fleet held under every named demand scenario (docs/cost-model.md). */
double cost_inference_dedicated_fleet(const struct cost_scenario *sc, const struct cost_option *opt,
                                      double capacity_rps);
/* Engine 2: replicas in hour h for an autoscaled or shared arrangement (bounded by
 * max_replicas), at demand × multiplier. */
double cost_inference_replicas2(const struct cost_service *svc, enum cost_arrangement arrangement,
                                double capacity_rps, double multiplier, size_t h);
/* Replicas in hour h (of the horizon; the demand profile repeats) for an autoscaled or shared
 * arrangement (a dedicated one holds its peak every hour), at demand × multiplier. */
double cost_inference_replicas(const struct cost_service *svc, enum cost_arrangement arrangement,
                               double capacity_rps, double multiplier, size_t h);
void cost_inference_eval(const struct cost_scenario *sc, const struct cost_option *opt,
                         double capacity_rps, double multiplier, struct cost_inference_result *out);
void cost_inference_eval2(const struct cost_scenario *sc, const struct cost_option *opt,
                          double capacity_rps, double multiplier,
                          struct cost_inference_result *out);

#endif
