/* The cost engine's inside, ground floor: the scenario as the engine reads it (kinds, offers,
 * benchmarks, options, assumptions, the service), the infeasibility reasons, the small rules
 * every part applies, and the parser that fills it (cost_scenario.c). The engine's files stand
 * on it one way: cost_batch.c and cost_inference.c (the closed forms), cost_mc.c (Monte Carlo,
 * over the batch closed form), cost_findings.c (the sentences), and cost.c on top, which
 * assembles the comparison. Not for other layers: they call core/cost/cost.h only.
 *
 * Strings in these structs are borrowed from the scenario document, which the caller keeps
 * alive for the whole cost_compare() call. */
#ifndef CAPLEDGER_CORE_COST_SCENARIO_H
#define CAPLEDGER_CORE_COST_SCENARIO_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problems.h"

enum cost_kind { COST_TRAINING, COST_FINE_TUNING, COST_EVALUATION, COST_INFERENCE };
enum cost_purchase { COST_ON_DEMAND, COST_SPOT, COST_RESERVED, COST_COMMITTED };
enum cost_arrangement { COST_NO_ARRANGEMENT, COST_DEDICATED, COST_AUTOSCALED, COST_SHARED };

/* Infeasibility reasons as bits, in the order they are reported. */
enum cost_reason {
    COST_REASON_MEMORY = 1u << 0,
    COST_REASON_QUOTA = 1u << 1,
    COST_REASON_SUPPLY = 1u << 2,
    COST_REASON_SLO = 1u << 3,
    COST_REASON_INTERRUPTIONS = 1u << 4,
    /* Figures beyond a double (absurd magnitudes that passed validation): never Infinity. */
    COST_REASON_OUT_OF_RANGE = 1u << 5,
    /* Engine 2, inference: SLO attainment below min_slo_attainment in a demand scenario. */
    COST_REASON_SLO_CAPACITY = 1u << 6,
};
#define COST_REASON_COUNT 7

/* Engine 2: at most this many SLO metrics at once (service.slo as an array). */
#define COST_MAX_SLO_METRICS 8
/* Engine 2: queue waits as the 0th … 100th percentiles. */
#define COST_QUEUE_QUANTILES 101
extern const char *const cost_reason_names[COST_REASON_COUNT];

struct cost_workload {
    const char *name;
    const char *unit;
    double target_units;
    double memory_required_gb;
    bool memory_required_given;
    double dataset_gb, checkpoint_gb, checkpoints_kept;
    double output_tokens_per_request;
    bool output_tokens_given;
    /* engine 2: where the dataset lives (workload.data_source) */
    bool data_source_given;
    const char *source_provider, *source_region;
    double source_egress_price_gb;
};

struct cost_assumptions {
    double engineer_rate_per_hour, engineer_blocked_fraction, failure_probability;
    bool engineer_rate_given, engineer_blocked_given, failure_probability_given;
    double failure_progress_fraction, retention_months, memory_headroom, reliable_quantile;
    double trials, seed;
    /* engine 2 */
    const char *risk_measure; /* "cvar" (NULL: the default) or "quantile" */
    bool risk_quantile;       /* risk_measure is "quantile" */
    double planned_outcomes;  /* V */
    double acceptance_rate;   /* a */
    double crash_rate_per_instance_hour;
    bool acceptance_given, planned_outcomes_given, crash_rate_given;
};

struct cost_demand_scenario {
    const char *name;
    double multiplier;
};

struct cost_service {
    const char *slo_metric; /* engine 1, and the first metric in engine 2 */
    double slo_target_ms, max_error_rate;
    /* engine 2: every metric at once (engine 1's object form is an array of one) */
    const char *slo_metrics[COST_MAX_SLO_METRICS];
    double slo_targets_ms[COST_MAX_SLO_METRICS];
    size_t slo_count;
    double slo_max_error_rate;
    bool slo_max_error_rate_given;
    double max_replicas, pool_capacity_rps, min_slo_attainment, unserved_cost_per_request;
    bool max_replicas_given, pool_capacity_given;
    const double *demand_rps_by_hour; /* owned by struct cost_scenario */
    size_t profile_hours;
    double horizon_hours;
    bool horizon_given;
    double retry_rate, acceptance_rate, review_cost_per_request, target_utilization;
    double spares, min_replicas, cold_start_s, memory_headroom, pool_utilization;
    bool pool_utilization_given;
    struct cost_demand_scenario *demand_scenarios; /* owned by struct cost_scenario */
    size_t demand_scenario_count;
};

struct cost_load_point {
    double offered_rps, achieved_rps, error_rate;
    double metric_ms[COST_MAX_SLO_METRICS]; /* per SLO metric, in the service's order */
};

struct cost_offer {
    const char *gpu_model;
    const char *purchase_name;
    const char *currency;
    enum cost_purchase purchase;
    double gpus_per_instance, gpu_memory_gb, price_per_hour, reserved_utilization;
    double interruption_rate_per_hour, provisioning_delay_s, quota_gpus;
    bool price_given, reserved_utilization_given, interruption_rate_given, quota_given;
    bool available;
    double storage_price_gb_month, egress_price_gb, orchestration_overhead;
    /* engine 2 */
    const char *provider, *region;
    bool reserved_paid;
};

struct cost_benchmark {
    double instances;
    double throughput_units_per_s, throughput_stddev, gpu_duty_cycle, input_stall_fraction;
    bool throughput_given;
    double setup_s, checkpoint_write_s, restart_s, checkpoint_interval_s, queue_wait_s;
    bool checkpoint_interval_given, queue_wait_given;
    double transfer_gb, memory_peak_gb, failure_probability;
    bool memory_peak_given, failure_probability_given;
    struct cost_load_point *load_points; /* sorted by offered_rps; owned by the scenario */
    size_t load_point_count;
    /* engine 2 */
    double crash_rate_per_instance_hour;
    bool crash_rate_given;
    bool staged; /* data_access "staged" (else "remote") */
    double restage_gb;
    double *queue_quantiles; /* COST_QUEUE_QUANTILES waits, or NULL; owned by the scenario */
};

struct cost_option {
    const char *name;
    const char *arrangement_name;
    enum cost_arrangement arrangement;
    struct cost_offer offer;
    struct cost_benchmark bench;
    double replicas; /* engine 2, dedicated: the fleet held (0: sized from the demand) */
    bool replicas_given;
};

struct cost_scenario {
    int engine; /* 1 or 2 */
    enum cost_kind kind;
    const char *kind_name;
    struct cost_workload workload;
    struct cost_assumptions assumptions;
    struct cost_service service;
    struct cost_option *options;
    size_t option_count;
    const char *currency;
    uint64_t seed;
    size_t trials;
};

/* cost_scenario.c: validates doc and fills sc (every problem appended to errs) for engine (1 or
 * 2; 0: the scenario's own "engine", else the default). Returns 0, or -1 when the scenario is
 * invalid (sc is then freed already). */
int cost_scenario_parse(const json_t *doc, int engine, struct cost_scenario *sc,
                        struct problems *errs) __attribute__((warn_unused_result));
void cost_scenario_free(struct cost_scenario *sc);

static inline bool cost_is_batch(const struct cost_scenario *sc)
{
    return sc->kind != COST_INFERENCE;
}

/* Reserved and committed capacity is paid whether used or not; everything else only when used. */
static inline double cost_paid_utilization(const struct cost_offer *offer)
{
    return offer->purchase == COST_RESERVED || offer->purchase == COST_COMMITTED
               ? offer->reserved_utilization
               : 1.0;
}

/* Feasibility, both kinds: the benchmark's peak memory (else the workload's requirement) must
 * fit in the GPU's memory less the headroom (engine 2: with 1e-9 of slack for rounding). */
static inline bool cost_memory_exceeded(const struct cost_scenario *sc,
                                        const struct cost_option *opt, double headroom)
{
    double slack = sc->engine >= 2 ? 1e-9 : 0;
    return opt->bench.memory_peak_given &&
           opt->bench.memory_peak_gb > opt->offer.gpu_memory_gb * (1 - headroom) + slack;
}

/* Engine 2's ceiling of a replica count: ⌈x − 1e-9⌉, so that 35.0000000001 is 35. */
static inline double cost_ceil2(double x)
{
    return ceil(x - 1e-9);
}

#endif
