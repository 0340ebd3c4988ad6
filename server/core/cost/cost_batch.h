/* The cost engine's closed form for batch kinds (cost_batch.c): the expected cost of one
 * completed result, item by item. Inside the engine only (see core/cost/cost_scenario.h). */
#ifndef CAPLEDGER_CORE_COST_BATCH_H
#define CAPLEDGER_CORE_COST_BATCH_H

#include <stdbool.h>

#include "core/cost/cost_scenario.h"

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

/* Engine 2: the queue wait of one attempt drawn from the 101 percentiles, and their mean. */
double cost_queue_quantiles_mean(const double *q);

#endif
