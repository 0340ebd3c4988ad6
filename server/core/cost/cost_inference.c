/* Closed form for inference: capacity per replica from the load points against the SLO, then
 * replica-hours hour by hour over the demand profile for each arrangement, then the cost of an
 * accepted request (docs/cost-model.md "Inference, per option"). */
#include "core/cost/cost_private.h"

#include <math.h>
#include <string.h>

const char *const cost_inference_item_names[COST_I_ITEMS] = {
    "useful",      "retries",       "idle_capacity",      "spares",
    "cold_starts", "interruptions", "unused_reservation", "orchestration",
    "review",
};

/* Walks up the sorted load points while they meet the SLO; past the last passing point, a point
 * that fails on latency alone still tells where the target is crossed, so the capacity is read
 * off the straight line between the two (a point failing on errors gives no such line). */
double cost_inference_capacity(const struct cost_service *svc, const struct cost_benchmark *b)
{
    double capacity = NAN;
    for (size_t i = 0; i < b->load_point_count; i++) {
        const struct cost_load_point *p = &b->load_points[i];
        bool errors_ok = p->error_rate <= svc->max_error_rate;
        if (p->metric_ms <= svc->slo_target_ms && errors_ok) {
            capacity = p->achieved_rps;
            continue;
        }
        if (i > 0 && errors_ok) {
            const struct cost_load_point *last = &b->load_points[i - 1];
            capacity = last->achieved_rps + (p->achieved_rps - last->achieved_rps) *
                                                (svc->slo_target_ms - last->metric_ms) /
                                                (p->metric_ms - last->metric_ms);
        }
        break;
    }
    return capacity;
}

void cost_inference_eval(const struct cost_scenario *sc, const struct cost_option *opt,
                         double capacity_rps, double multiplier, struct cost_inference_result *out)
{
    const struct cost_service *svc = &sc->service;
    const struct cost_offer *offer = &opt->offer;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < COST_I_ITEMS; i++)
        out->breakdown[i] = NAN;
    out->capacity_rps = capacity_rps;
    out->total = out->cost_per_outcome = out->cost_per_million_tokens = out->utilization = NAN;
    out->provisioned_h = out->cold_start_h = out->interruption_h = out->replica_hours = NAN;
    out->peak_replicas = NAN;

    size_t hours = (size_t)svc->horizon_hours;
    double sum_demand = 0, sum_load = 0, max_load = 0;
    for (size_t h = 0; h < hours; h++) {
        double d = svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier;
        double l = d * (1 + svc->retry_rate);
        sum_demand += d;
        sum_load += l;
        max_load = fmax(max_load, l);
    }
    out->demand_rps_h = sum_demand;
    out->requests = sum_demand * 3600;
    out->accepted = out->requests * svc->acceptance_rate;
    out->breakdown[COST_I_REVIEW] = svc->review_cost_per_request * sum_demand * 3600;
    if (!isfinite(capacity_rps))
        return;

    double per_replica = capacity_rps * svc->target_utilization;
    double provisioned = 0, cold = 0, spare_h = 0, peak = 0;
    switch (opt->arrangement) {
    case COST_DEDICATED:
        peak = ceil(max_load / per_replica) + svc->spares;
        provisioned = peak * (double)hours;
        spare_h = svc->spares * (double)hours;
        break;
    case COST_AUTOSCALED: {
        double previous = 0;
        for (size_t h = 0; h < hours; h++) {
            double l = svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier *
                       (1 + svc->retry_rate);
            double replicas = fmax(svc->min_replicas, ceil(l / per_replica)) + svc->spares;
            if (h > 0 && replicas > previous)
                cold += (replicas - previous) * svc->cold_start_s / 3600;
            provisioned += replicas;
            peak = fmax(peak, replicas);
            previous = replicas;
        }
        spare_h = svc->spares * (double)hours;
        break;
    }
    case COST_SHARED:
    case COST_NO_ARRANGEMENT:
        for (size_t h = 0; h < hours; h++) {
            double l = svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier *
                       (1 + svc->retry_rate);
            double replicas = l / capacity_rps / svc->pool_utilization;
            provisioned += replicas;
            peak = fmax(peak, replicas);
        }
        break;
    }
    double interruption_h =
        offer->interruption_rate_per_hour * provisioned * svc->cold_start_s / 3600;
    double replica_hours = provisioned + cold + interruption_h;
    double rate = opt->bench.instances * offer->price_per_hour;
    double u = cost_paid_utilization(offer);
    double useful_h = sum_demand / capacity_rps;
    double retry_h = (sum_load - sum_demand) / capacity_rps;

    out->provisioned_h = provisioned;
    out->cold_start_h = cold;
    out->interruption_h = interruption_h;
    out->replica_hours = replica_hours;
    out->peak_replicas = peak;
    out->breakdown[COST_I_USEFUL] = useful_h * rate;
    out->breakdown[COST_I_RETRIES] = retry_h * rate;
    out->breakdown[COST_I_IDLE_CAPACITY] = (provisioned - useful_h - retry_h - spare_h) * rate;
    out->breakdown[COST_I_SPARES] = spare_h * rate;
    out->breakdown[COST_I_COLD_STARTS] = cold * rate;
    out->breakdown[COST_I_INTERRUPTIONS] = interruption_h * rate;
    out->breakdown[COST_I_UNUSED_RESERVATION] = replica_hours * rate * (1 / u - 1);
    out->breakdown[COST_I_ORCHESTRATION] = offer->orchestration_overhead * replica_hours * rate / u;
    double total = 0;
    for (int i = 0; i < COST_I_ITEMS; i++)
        total += out->breakdown[i];
    if (!isfinite(total)) {
        for (int i = 0; i < COST_I_ITEMS; i++)
            if (!isfinite(out->breakdown[i]))
                out->breakdown[i] = NAN;
        return;
    }
    out->total = total;
    out->cost_per_outcome = total / out->accepted;
    if (sc->workload.output_tokens_given)
        out->cost_per_million_tokens =
            total / (out->accepted * sc->workload.output_tokens_per_request) * 1e6;
    out->utilization = useful_h / replica_hours;
    out->runs = isfinite(out->cost_per_outcome);
}
