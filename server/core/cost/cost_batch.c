/* Closed form for batch kinds (training, fine_tuning, evaluation): the expected billed time and
 * cost of one completed result, item by item, exactly as docs/cost-model.md "Batch kinds" states.
 * Checkpointing and interruptions follow Daly (2006): an interrupted segment is lost and
 * redone after a restart that can itself be interrupted. */
#include "core/cost/cost_private.h"

#include <math.h>
#include <string.h>

const char *const cost_batch_item_names[COST_B_ITEMS] = {
    "useful",
    "input_stall",
    "other_idle",
    "setup",
    "checkpoint_and_interruption",
    "failed_attempts",
    "unused_reservation",
    "orchestration",
    "storage",
    "transfer",
    "engineer_wait",
};

/* Daly's higher-order estimate of the optimum compute time between checkpoints, for mean time
 * between interruptions M and checkpoint write time δ. */
static double daly_optimum_interval(double write_s, double mtbi_s)
{
    if (write_s >= 2 * mtbi_s)
        return mtbi_s;
    double ratio = write_s / (2 * mtbi_s);
    return sqrt(2 * write_s * mtbi_s) * (1 + sqrt(ratio) / 3 + ratio / 9) - write_s;
}

static unsigned batch_feasibility(const struct cost_assumptions *as, const struct cost_option *opt,
                                  double gpus_at_peak)
{
    unsigned reasons = 0;
    if (cost_memory_exceeded(opt, as->memory_headroom))
        reasons |= COST_REASON_MEMORY;
    if (opt->offer.quota_given && gpus_at_peak > opt->offer.quota_gpus)
        reasons |= COST_REASON_QUOTA;
    if (!opt->offer.available)
        reasons |= COST_REASON_SUPPLY;
    return reasons;
}

/* Figures beyond a double: the option is infeasible and what overflowed becomes null. */
static void mark_out_of_range(struct cost_batch_result *out)
{
    out->reasons |= COST_REASON_OUT_OF_RANGE;
    for (int i = 0; i < COST_B_ITEMS; i++)
        if (!isfinite(out->breakdown[i]))
            out->breakdown[i] = NAN;
    if (!isfinite(out->time_to_result_s))
        out->time_to_result_s = NAN;
}

void cost_batch_eval(const struct cost_scenario *sc, const struct cost_assumptions *as,
                     const struct cost_option *opt, struct cost_batch_result *out)
{
    const struct cost_benchmark *b = &opt->bench;
    const struct cost_offer *offer = &opt->offer;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < COST_B_ITEMS; i++)
        out->breakdown[i] = NAN;
    out->total = NAN;
    out->time_to_result_s = NAN;
    out->interrupted_s = out->failed_s = out->billed_s = NAN;

    out->gpus_at_peak = b->instances * offer->gpus_per_instance;
    out->reasons = batch_feasibility(as, opt, out->gpus_at_peak);

    double rate = b->instances * offer->price_per_hour / 3600;
    double u = cost_paid_utilization(offer);
    double q = b->failure_probability_given ? b->failure_probability : as->failure_probability;
    double f = as->failure_progress_fraction;
    double lambda = offer->interruption_rate_per_hour / 3600;
    double delta = b->checkpoint_write_s, restart = b->restart_s;
    double T = sc->workload.target_units / b->throughput_units_per_s;
    out->rate_per_s = rate;
    out->paid_utilization = u;
    out->failure_probability = q;
    out->queue_s = b->queue_wait_s;
    out->interruption_rate_per_s = lambda;
    out->compute_s = T;

    double tau = T;
    if (b->checkpoint_interval_given)
        tau = b->checkpoint_interval_s;
    else if (lambda > 0 && delta > 0)
        tau = daly_optimum_interval(delta, 1 / lambda);
    double segments = fmax(1, round(T / tau));
    tau = T / segments;
    out->interval_s = tau;
    out->segments = segments;

    /* Items that need no interrupted time: known even when the run cannot finish. */
    double useful = T * b->gpu_duty_cycle * rate;
    double stall = fmin(T * b->input_stall_fraction, T - T * b->gpu_duty_cycle) * rate;
    out->breakdown[COST_B_USEFUL] = useful;
    out->breakdown[COST_B_INPUT_STALL] = stall;
    out->breakdown[COST_B_OTHER_IDLE] = T * rate - useful - stall;
    out->breakdown[COST_B_SETUP] = b->setup_s * rate;
    out->breakdown[COST_B_STORAGE] =
        (sc->workload.checkpoint_gb * sc->workload.checkpoints_kept + sc->workload.dataset_gb) *
        offer->storage_price_gb_month * as->retention_months;
    out->breakdown[COST_B_TRANSFER] = b->transfer_gb * offer->egress_price_gb;
    if (!isfinite(T * rate) || !isfinite(out->breakdown[COST_B_STORAGE]) ||
        !isfinite(out->breakdown[COST_B_TRANSFER])) {
        mark_out_of_range(out);
        return;
    }

    double t_int;
    if (lambda == 0) {
        t_int = T * (tau + delta) / tau;
    } else {
        if (lambda * (tau + delta) > COST_INTERRUPTION_EXPONENT_LIMIT ||
            lambda * restart > COST_INTERRUPTION_EXPONENT_LIMIT) {
            out->reasons |= COST_REASON_INTERRUPTIONS;
            return;
        }
        t_int = (1 / lambda) * exp(lambda * restart) * (exp(lambda * (tau + delta)) - 1) * T / tau;
    }
    double failed = q / (1 - q) * (b->setup_s + f * t_int);
    double billed = b->setup_s + t_int + failed;
    double wait = b->queue_wait_s / (1 - q) + billed;
    out->interrupted_s = t_int;
    out->failed_s = failed;
    out->billed_s = billed;
    out->time_to_result_s = wait;

    out->breakdown[COST_B_CHECKPOINT] = (t_int - T) * rate;
    out->breakdown[COST_B_FAILED] = failed * rate;
    out->breakdown[COST_B_UNUSED_RESERVATION] = billed * rate * (1 / u - 1);
    out->breakdown[COST_B_ORCHESTRATION] = offer->orchestration_overhead * billed * rate / u;
    out->breakdown[COST_B_ENGINEER_WAIT] =
        as->engineer_rate_per_hour * as->engineer_blocked_fraction * wait / 3600;
    double total = 0;
    for (int i = 0; i < COST_B_ITEMS; i++)
        total += out->breakdown[i];
    if (!isfinite(total) || !isfinite(wait)) {
        mark_out_of_range(out);
        return;
    }
    out->total = total;
    out->runs = true;
}
