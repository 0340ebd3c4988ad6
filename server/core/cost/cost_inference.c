/* Closed form for inference: capacity per replica from the load points against the SLO, then
 * replica-hours hour by hour over the demand profile for each arrangement, then the cost of an
 * accepted request (docs/cost-model.md "Inference, per option"). */
#include "core/cost/cost_inference.h"

#include <math.h>
#include <string.h>

const char *const cost_inference_item_names[COST_I_ITEMS] = {
    "useful",      "retries",       "idle_capacity",      "spares",
    "cold_starts", "interruptions", "unused_reservation", "orchestration",
    "review",      "unserved",
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
        if (p->metric_ms[0] <= svc->slo_target_ms && errors_ok) {
            capacity = p->achieved_rps;
            continue;
        }
        if (i > 0 && errors_ok) {
            const struct cost_load_point *last = &b->load_points[i - 1];
            capacity = last->achieved_rps + (p->achieved_rps - last->achieved_rps) *
                                                (svc->slo_target_ms - last->metric_ms[0]) /
                                                (p->metric_ms[0] - last->metric_ms[0]);
        }
        break;
    }
    return capacity;
}

double cost_inference_replicas(const struct cost_service *svc, enum cost_arrangement arrangement,
                               double capacity_rps, double multiplier, size_t h)
{
    double load =
        svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier * (1 + svc->retry_rate);
    if (arrangement == COST_AUTOSCALED)
        return fmax(svc->min_replicas, ceil(load / (capacity_rps * svc->target_utilization))) +
               svc->spares;
    return load / capacity_rps / svc->pool_utilization; /* a share of a pool */
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

    double provisioned = 0, cold = 0, spare_h = 0, peak = 0;
    switch (opt->arrangement) {
    case COST_DEDICATED:
        peak = ceil(max_load / (capacity_rps * svc->target_utilization)) + svc->spares;
        provisioned = peak * (double)hours;
        spare_h = svc->spares * (double)hours;
        break;
    case COST_AUTOSCALED: {
        double previous = 0;
        for (size_t h = 0; h < hours; h++) {
            double replicas =
                cost_inference_replicas(svc, COST_AUTOSCALED, capacity_rps, multiplier, h);
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
            double replicas =
                cost_inference_replicas(svc, COST_SHARED, capacity_rps, multiplier, h);
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
    for (int i = 0; i < COST_I_ITEMS_OF(1); i++)
        total += out->breakdown[i];
    if (!isfinite(total)) {
        for (int i = 0; i < COST_I_ITEMS_OF(1); i++)
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

/* ---- engine 2 ------------------------------------------------------------------------------ */

/* Every SLO metric at once: a point passes when each metric is within its target and its error
 * rate within the limit. Past the last passing point, a point failing on latency alone is read
 * off the straight line for each metric it fails; the capacity is the smallest of those. */
double cost_inference_capacity2(const struct cost_service *svc, const struct cost_benchmark *b)
{
    double capacity = NAN;
    for (size_t i = 0; i < b->load_point_count; i++) {
        const struct cost_load_point *p = &b->load_points[i];
        bool errors_ok = p->error_rate <= svc->max_error_rate;
        bool metrics_ok = true;
        for (size_t m = 0; m < svc->slo_count; m++)
            metrics_ok = metrics_ok && p->metric_ms[m] <= svc->slo_targets_ms[m];
        if (metrics_ok && errors_ok) {
            capacity = p->achieved_rps;
            continue;
        }
        if (i > 0 && errors_ok) {
            const struct cost_load_point *last = &b->load_points[i - 1];
            double smallest = INFINITY;
            for (size_t m = 0; m < svc->slo_count; m++) {
                if (p->metric_ms[m] <= svc->slo_targets_ms[m])
                    continue;
                double at = last->achieved_rps + (p->achieved_rps - last->achieved_rps) *
                                                     (svc->slo_targets_ms[m] - last->metric_ms[m]) /
                                                     (p->metric_ms[m] - last->metric_ms[m]);
                smallest = fmin(smallest, at);
            }
            capacity = smallest;
        }
        break;
    }
    return capacity;
}

/* Engine 1's peak: the most load in an hour priced (a horizon shorter than the profile does
 * not reach the profile's later hours). */
static double peak_load(const struct cost_service *svc)
{
    double most = 0;
    size_t hours = (size_t)svc->horizon_hours;
    for (size_t h = 0; h < svc->profile_hours && h < hours; h++)
        most = fmax(most, svc->demand_rps_by_hour[h]);
    return most * (1 + svc->retry_rate);
}

double cost_inference_dedicated_fleet(const struct cost_scenario *sc, const struct cost_option *opt,
                                      double capacity_rps)
{
    const struct cost_service *svc = &sc->service;
    if (opt->replicas_given)
        return opt->replicas;
    double most = 1;
    for (size_t k = 0; k < svc->demand_scenario_count; k++)
        most = fmax(most, svc->demand_scenarios[k].multiplier);
    return cost_ceil2(peak_load(svc) * most / (capacity_rps * svc->target_utilization)) +
           svc->spares;
}

/* Replicas wanted in hour h before any bound (autoscaled), or the pool's share (shared). */
static double wanted_replicas(const struct cost_service *svc, enum cost_arrangement arrangement,
                              double capacity_rps, double load)
{
    if (arrangement == COST_AUTOSCALED)
        return fmax(svc->min_replicas,
                    cost_ceil2(load / (capacity_rps * svc->target_utilization))) +
               svc->spares;
    double served = svc->pool_capacity_given ? fmin(load, svc->pool_capacity_rps) : load;
    return served / capacity_rps / svc->pool_utilization;
}

double cost_inference_replicas2(const struct cost_service *svc, enum cost_arrangement arrangement,
                                double capacity_rps, double multiplier, size_t h)
{
    double load =
        svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier * (1 + svc->retry_rate);
    double r = wanted_replicas(svc, arrangement, capacity_rps, load);
    if (arrangement == COST_AUTOSCALED && svc->max_replicas_given)
        r = fmin(r, svc->max_replicas);
    return r;
}

void cost_inference_eval2(const struct cost_scenario *sc, const struct cost_option *opt,
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
    out->peak_replicas = out->slo_attainment = out->cash_cost_per_outcome = NAN;

    size_t hours = (size_t)svc->horizon_hours;
    double sum_demand = 0;
    for (size_t h = 0; h < hours; h++)
        sum_demand += svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier;
    out->demand_rps_h = sum_demand;
    out->requests = sum_demand * 3600;
    if (!isfinite(capacity_rps))
        return;

    double fleet = opt->arrangement == COST_DEDICATED
                       ? cost_inference_dedicated_fleet(sc, opt, capacity_rps)
                       : 0;
    double provisioned = 0, cold = 0, spare_h = 0, peak = 0, previous = 0;
    double served_d = 0, served_l = 0;
    for (size_t h = 0; h < hours; h++) {
        double d = svc->demand_rps_by_hour[h % svc->profile_hours] * multiplier;
        double l = d * (1 + svc->retry_rate);
        double replicas, capacity = INFINITY; /* what the arrangement can serve this hour */
        switch (opt->arrangement) {
        case COST_DEDICATED:
            replicas = fleet;
            capacity = (fleet - svc->spares) * capacity_rps;
            break;
        case COST_AUTOSCALED: {
            double wanted = wanted_replicas(svc, COST_AUTOSCALED, capacity_rps, l);
            replicas = wanted;
            if (svc->max_replicas_given && wanted > svc->max_replicas) {
                replicas = svc->max_replicas;
                capacity = (replicas - svc->spares) * capacity_rps;
            }
            if (h > 0 && replicas > previous)
                cold += (replicas - previous) * svc->cold_start_s / 3600;
            previous = replicas;
            break;
        }
        default:
            replicas = wanted_replicas(svc, COST_SHARED, capacity_rps, l);
            if (svc->pool_capacity_given)
                capacity = svc->pool_capacity_rps;
            break;
        }
        double share = l > 0 ? fmin(1, capacity / l) : 1; /* excess load is shed */
        if (share < 1)
            out->breach_hours++;
        served_d += d * share;
        served_l += l * share;
        provisioned += replicas;
        peak = fmax(peak, replicas);
    }
    if (opt->arrangement != COST_SHARED)
        spare_h = svc->spares * (double)hours;
    double interruption_h =
        offer->interruption_rate_per_hour * provisioned * svc->cold_start_s / 3600;
    double replica_hours = provisioned + cold + interruption_h;
    double rate = opt->bench.instances * offer->price_per_hour;
    double u = cost_paid_utilization(offer);
    double useful_h = served_d / capacity_rps;
    double retry_h = (served_l - served_d) / capacity_rps;
    double served = served_d * 3600;

    out->provisioned_h = provisioned;
    out->cold_start_h = cold;
    out->interruption_h = interruption_h;
    out->replica_hours = replica_hours;
    out->peak_replicas = peak;
    out->served_requests = served;
    out->accepted = served * svc->acceptance_rate;
    out->slo_attainment = sum_demand > 0 ? served_d / sum_demand : 1;
    double *item = out->breakdown;
    item[COST_I_USEFUL] = useful_h * rate;
    item[COST_I_RETRIES] = retry_h * rate;
    item[COST_I_IDLE_CAPACITY] = (provisioned - useful_h - retry_h - spare_h) * rate;
    item[COST_I_SPARES] = spare_h * rate;
    item[COST_I_COLD_STARTS] = cold * rate;
    item[COST_I_INTERRUPTIONS] = interruption_h * rate;
    item[COST_I_UNUSED_RESERVATION] = replica_hours * rate * (1 / u - 1);
    item[COST_I_ORCHESTRATION] = offer->orchestration_overhead * replica_hours * rate / u;
    item[COST_I_REVIEW] = svc->review_cost_per_request * served;
    item[COST_I_UNSERVED] = svc->unserved_cost_per_request * 3600 * (sum_demand - served_d);
    double total = 0, compute = 0;
    for (int i = 0; i < COST_I_ITEMS; i++)
        total += item[i];
    for (int i = COST_I_USEFUL; i <= COST_I_UNUSED_RESERVATION; i++)
        compute += item[i];
    if (!isfinite(total)) {
        for (int i = 0; i < COST_I_ITEMS; i++)
            if (!isfinite(item[i]))
                item[i] = NAN;
        return;
    }
    out->total = total;
    out->cost_per_outcome = total / out->accepted;
    out->cash_cost_per_outcome = (offer->reserved_paid ? total - compute : total) / out->accepted;
    if (sc->workload.output_tokens_given)
        out->cost_per_million_tokens =
            total / (out->accepted * sc->workload.output_tokens_per_request) * 1e6;
    out->utilization = useful_h / replica_hours;
    out->runs = isfinite(out->cost_per_outcome);
}
