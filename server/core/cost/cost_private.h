/* Internals of the cost engine shared by its files (cost_scenario.c parses and validates,
 * cost_batch.c and cost_inference.c hold the closed forms, cost_mc.c the Monte Carlo,
 * cost_findings.c the sentences, cost.c assembles the comparison). Not for other layers:
 * they call core/cost/cost.h only.
 *
 * Strings in these structs are borrowed from the scenario document, which the caller keeps
 * alive for the whole cost_compare() call. */
#ifndef CAPLEDGER_CORE_COST_PRIVATE_H
#define CAPLEDGER_CORE_COST_PRIVATE_H

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

/* ---- batch closed form (cost_batch.c) ---------------------------------------------------- */

enum cost_batch_item {
    COST_B_USEFUL,
    COST_B_INPUT_STALL,
    COST_B_OTHER_IDLE,
    COST_B_SETUP,
    COST_B_CHECKPOINT,
    COST_B_FAILED,
    COST_B_UNUSED_RESERVATION,
    COST_B_ORCHESTRATION,
    COST_B_STORAGE,
    COST_B_TRANSFER,
    COST_B_ENGINEER_WAIT,
    COST_B_REJECTED_RUNS, /* engine 2 only */
    COST_B_ITEMS
};
/* How many breakdown items a comparison of that engine reports. */
#define COST_B_ITEMS_OF(engine) ((engine) >= 2 ? COST_B_ITEMS : COST_B_REJECTED_RUNS)
extern const char *const cost_batch_item_names[COST_B_ITEMS];

/* λ·(τ+δ) or λ·R beyond this: the run cannot finish between interruptions (docs/cost-model.md). */
#define COST_INTERRUPTION_EXPONENT_LIMIT 20.0

struct cost_batch_result {
    unsigned reasons;     /* enum cost_reason bits */
    bool runs;            /* false when it cannot finish (interruptions) or overflows */
    double compute_s;     /* T */
    double interval_s;    /* τ as used */
    double segments;      /* n_seg */
    double interrupted_s; /* T_int */
    double failed_s;      /* failed */
    double billed_s;      /* B */
    double queue_s;       /* queue wait per attempt */
    double failure_probability;
    double time_to_result_s; /* Wt */
    double rate_per_s;       /* instances·price/3600 */
    double paid_utilization; /* u */
    double interruption_rate_per_s;
    double gpus_at_peak;
    double breakdown[COST_B_ITEMS]; /* NAN where it cannot be computed */
    double total;                   /* NAN when !runs */
    /* engine 2 */
    double acceptance;        /* a (1 in engine 1) */
    double per_outcome_fixed; /* dataset storage and staging per outcome (not divided by a) */
    double per_run_fixed;     /* per-run storage and transfer when fixed (no source, staged) */
    double source_egress_gb;  /* egress_src when each attempt reads from the source, else 0 */
    double read_gb;           /* engine 2: GB billed as transfer per useful outcome */
    double stored_dataset_gb; /* engine 2: dataset GB stored at the offer (a month, shared by V) */
    double restarts_per_run;  /* N_run */
    double attempts_per_run;  /* A */
    double cash;              /* cash cost per outcome */
};

void cost_batch_eval(const struct cost_scenario *sc, const struct cost_assumptions *as,
                     const struct cost_option *opt, struct cost_batch_result *out);

/* ---- inference closed form (cost_inference.c) -------------------------------------------- */

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

/* ---- Monte Carlo (cost_mc.c) ------------------------------------------------------------- */

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
/* Engine 2: the queue wait of one attempt drawn from the 101 percentiles, and their mean. */
double cost_queue_quantiles_mean(const double *q);

/* ---- findings (cost_findings.c) ---------------------------------------------------------- */

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
