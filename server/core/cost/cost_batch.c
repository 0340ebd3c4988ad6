/* Closed form for batch kinds (training, fine_tuning, evaluation): the expected billed time and
 * cost of one completed result, item by item, exactly as docs/cost-model.md "Batch kinds" states.
 * Checkpointing and interruptions follow Daly (2006): an interrupted segment is lost and
 * redone after a restart that can itself be interrupted. */
#include "core/cost/cost_batch.h"

#include <math.h>
#include <string.h>

static void cost_batch_eval2(const struct cost_scenario *sc, const struct cost_assumptions *as,
                             const struct cost_option *opt, struct cost_batch_result *out);

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
    "rejected_runs",
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

static unsigned batch_feasibility(const struct cost_scenario *sc, const struct cost_assumptions *as,
                                  const struct cost_option *opt, double gpus_at_peak)
{
    unsigned reasons = 0;
    if (cost_memory_exceeded(sc, opt, as->memory_headroom))
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

/* The wait per attempt: engine 2's quantiles when given, else the exponential's mean. */
double cost_queue_quantiles_mean(const double *q)
{
    double sum = 0;
    for (int i = 0; i + 1 < COST_QUEUE_QUANTILES; i++)
        sum += (q[i] + q[i + 1]) / 200;
    return sum;
}

/* Engine 2 (docs/cost-model.md "Engine 2"): restarts per job from interruptions and crashes of
 * any instance, resumed from checkpoints; the items of one completed run, then rejected runs up
 * to an accepted one; storage and transfer where they are billed. */
static void cost_batch_eval2(const struct cost_scenario *sc, const struct cost_assumptions *as,
                             const struct cost_option *opt, struct cost_batch_result *out)
{
    const struct cost_benchmark *b = &opt->bench;
    const struct cost_offer *offer = &opt->offer;
    const struct cost_workload *w = &sc->workload;
    double n = b->instances;
    double rate = n * offer->price_per_hour / 3600;
    double u = cost_paid_utilization(offer);
    double q = b->failure_probability_given ? b->failure_probability : as->failure_probability;
    double f = as->failure_progress_fraction;
    double crash =
        b->crash_rate_given ? b->crash_rate_per_instance_hour : as->crash_rate_per_instance_hour;
    double lambda = n * (offer->interruption_rate_per_hour + crash) / 3600;
    double delta = b->checkpoint_write_s, restart = b->restart_s;
    double T = w->target_units / b->throughput_units_per_s;
    double a = as->acceptance_rate, V = as->planned_outcomes;
    double queue =
        b->queue_quantiles ? cost_queue_quantiles_mean(b->queue_quantiles) : b->queue_wait_s;
    out->rate_per_s = rate;
    out->paid_utilization = u;
    out->failure_probability = q;
    out->queue_s = queue;
    out->interruption_rate_per_s = lambda;
    out->compute_s = T;
    out->acceptance = a;

    double tau = T;
    if (b->checkpoint_interval_given)
        tau = b->checkpoint_interval_s;
    else if (lambda > 0 && delta > 0)
        tau = daly_optimum_interval(delta, 1 / lambda);
    double segments = fmax(1, round(T / tau));
    tau = T / segments;
    out->interval_s = tau;
    out->segments = segments;

    /* Where the data is: co-located with the source, read remotely, or staged at the offer. */
    bool source = w->data_source_given;
    bool colocated = source && offer->provider && offer->region &&
                     strcmp(offer->provider, w->source_provider) == 0 &&
                     strcmp(offer->region, w->source_region) == 0;
    double egress_src = colocated ? 0 : w->source_egress_price_gb;
    double dataset_month = w->dataset_gb * offer->storage_price_gb_month / V;
    double checkpoint_storage = w->checkpoint_gb * w->checkpoints_kept *
                                offer->storage_price_gb_month * as->retention_months;
    double per_outcome_storage = 0, per_outcome_transfer = 0, per_run_transfer = 0;
    out->source_egress_gb = 0;
    if (!source) {
        per_outcome_storage = dataset_month;
        per_run_transfer = b->transfer_gb * offer->egress_price_gb;
    } else if (b->staged) {
        per_outcome_storage = dataset_month;
        per_outcome_transfer = egress_src * w->dataset_gb / V;
    } else {
        out->source_egress_gb = egress_src; /* per attempt and per restart, below */
    }
    out->per_outcome_fixed = per_outcome_storage + per_outcome_transfer;
    out->per_run_fixed = checkpoint_storage + per_run_transfer;

    double useful = T * b->gpu_duty_cycle * rate;
    double stall = fmin(T * b->input_stall_fraction, T - T * b->gpu_duty_cycle) * rate;
    out->breakdown[COST_B_USEFUL] = useful;
    out->breakdown[COST_B_INPUT_STALL] = stall;
    out->breakdown[COST_B_OTHER_IDLE] = T * rate - useful - stall;
    out->breakdown[COST_B_SETUP] = b->setup_s * rate;
    if (!isfinite(T * rate) || !isfinite(out->per_outcome_fixed) || !isfinite(out->per_run_fixed)) {
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
        /* expm1: with a rate as small as 1e-300 per hour, exp(λ(τ+δ)) − 1 is 0 in doubles */
        t_int = exp(lambda * restart) * expm1(lambda * (tau + delta)) / lambda * T / tau;
    }
    double failed = q / (1 - q) * (b->setup_s + f * t_int);
    double billed = b->setup_s + t_int + failed;
    double wait = queue / (1 - q) + billed; /* Wt, per completed run */
    double attempts = 1 / (1 - q);
    double restarts = lambda * t_int * (1 + q * f / (1 - q));
    out->interrupted_s = t_int;
    out->failed_s = failed;
    out->billed_s = billed;
    out->attempts_per_run = attempts;
    out->restarts_per_run = restarts;
    out->time_to_result_s = wait / a;

    double *item = out->breakdown;
    item[COST_B_CHECKPOINT] = (t_int - T) * rate;
    item[COST_B_FAILED] = failed * rate;
    item[COST_B_UNUSED_RESERVATION] = billed * rate * (1 / u - 1);
    item[COST_B_ORCHESTRATION] = offer->orchestration_overhead * billed * rate / u;
    item[COST_B_ENGINEER_WAIT] =
        as->engineer_rate_per_hour * as->engineer_blocked_fraction * wait / 3600;
    double run_transfer = per_run_transfer + out->source_egress_gb * (attempts * b->transfer_gb +
                                                                      restarts * b->restage_gb);
    item[COST_B_STORAGE] = checkpoint_storage;
    item[COST_B_TRANSFER] = run_transfer;
    /* The gigabytes behind the transfer and storage items, for the findings. */
    double run_gb = !source ? b->transfer_gb
                    : b->staged || !(egress_src > 0)
                        ? 0
                        : attempts * b->transfer_gb + restarts * b->restage_gb;
    double outcome_gb = source && b->staged && egress_src > 0 ? w->dataset_gb / V : 0;
    out->read_gb = run_gb / a + outcome_gb;
    out->stored_dataset_gb = !source || b->staged ? w->dataset_gb : 0;
    double per_run = 0, compute = 0;
    for (int i = 0; i < COST_B_REJECTED_RUNS; i++)
        per_run += item[i];
    for (int i = COST_B_USEFUL; i <= COST_B_UNUSED_RESERVATION; i++)
        compute += item[i];
    item[COST_B_REJECTED_RUNS] = (1 / a - 1) * per_run;
    item[COST_B_STORAGE] += per_outcome_storage;
    item[COST_B_TRANSFER] += per_outcome_transfer;
    double total = 0;
    for (int i = 0; i < COST_B_ITEMS; i++)
        total += item[i];
    if (!isfinite(total) || !isfinite(out->time_to_result_s)) {
        mark_out_of_range(out);
        return;
    }
    out->total = total;
    /* A reservation bought already: its compute items (and their share of rejected runs) are
     * no new cash. */
    out->cash = offer->reserved_paid ? total - compute / a : total;
    out->runs = true;
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
    out->reasons = batch_feasibility(sc, as, opt, out->gpus_at_peak);
    out->acceptance = 1;
    if (sc->engine >= 2) {
        cost_batch_eval2(sc, as, opt, out);
        return;
    }

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
    for (int i = 0; i < COST_B_ITEMS_OF(1); i++)
        total += out->breakdown[i];
    if (!isfinite(total) || !isfinite(wait)) {
        mark_out_of_range(out);
        return;
    }
    out->total = total;
    out->runs = true;
}
