/* The comparison: validates the scenario, evaluates every option (closed form, then Monte
 * Carlo or demand scenarios), decides feasibility, ranks, raises the flags, searches the
 * break-even points and writes the comparison document of docs/cost-model.md. */
#include "core/cost/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost/cost_batch.h"
#include "core/cost/cost_findings.h"
#include "core/cost/cost_inference.h"
#include "core/cost/cost_mc.h"
#include "core/cost/cost_scenario.h"
#include "core/jcs.h"

#define NO_WINNER (-1)

/* Everything known about one option after evaluation. */
struct option_eval {
    unsigned reasons;
    struct cost_batch_result batch;
    struct cost_mc_result mc;
    bool mc_ran;
    double capacity_rps;
    struct cost_inference_result inference;
    double *by_scenario; /* inference: cost per accepted request per demand scenario */
    /* engine 2, inference, per demand scenario: SLO attainment and the most replicas */
    double *attainment, *peak_by_scenario, *breach_hours;
    double cash;     /* engine 2: cash cost per outcome */
    double expected; /* expected cost per outcome, NAN when none */
    double reliable; /* what the ranking uses, NAN when none */
    double useful, total;
    double price_per_gpu_hour;
    double gpus_at_peak; /* inference: at the largest peak of any demand scenario */
};

static bool is_feasible(const struct option_eval *e)
{
    return e->reasons == 0 && isfinite(e->reliable) && isfinite(e->expected);
}

/* ---- evaluation ---------------------------------------------------------------------------- */

static int evaluate_batch(const struct cost_scenario *sc, size_t i, bool percentiles,
                          struct option_eval *e)
{
    cost_batch_eval(sc, &sc->assumptions, &sc->options[i], &e->batch);
    e->reasons = e->batch.reasons;
    e->expected = e->batch.total;
    e->useful = e->batch.breakdown[COST_B_USEFUL];
    e->total = e->batch.total;
    e->reliable = NAN;
    if (!e->batch.runs)
        return 0;
    e->cash = e->batch.cash;
    if ((sc->engine >= 2 ? cost_mc_run2(sc, i, &e->batch, percentiles, &e->mc)
                         : cost_mc_run(sc, i, &e->batch, percentiles, &e->mc)) != 0)
        return -1;
    e->mc_ran = true;
    e->reliable = e->mc.cost.reliable;
    if (!isfinite(e->reliable)) /* the reliable quantile lands on trials that cannot finish */
        e->reasons |= e->batch.interruption_rate_per_s > 0 ? COST_REASON_INTERRUPTIONS
                                                           : COST_REASON_OUT_OF_RANGE;
    return 0;
}

static unsigned inference_fixed_reasons(const struct cost_scenario *sc,
                                        const struct cost_option *opt)
{
    unsigned reasons = 0;
    if (cost_memory_exceeded(sc, opt, sc->service.memory_headroom))
        reasons |= COST_REASON_MEMORY;
    if (!opt->offer.available)
        reasons |= COST_REASON_SUPPLY;
    return reasons;
}

/* Engine 2: one fleet (dedicated) or one bound (autoscaled, shared) under every demand scenario;
 * an option whose SLO attainment falls below min_slo_attainment in any of them is infeasible. */
static int evaluate_inference2(const struct cost_scenario *sc, size_t i, struct option_eval *e)
{
    const struct cost_option *opt = &sc->options[i];
    const struct cost_service *svc = &sc->service;
    size_t k_count = svc->demand_scenario_count;
    e->reasons = inference_fixed_reasons(sc, opt);
    e->gpus_at_peak = NAN;
    e->capacity_rps = cost_inference_capacity2(svc, &opt->bench);
    cost_inference_eval2(sc, opt, e->capacity_rps, 1.0, &e->inference);
    e->expected = e->inference.runs ? e->inference.cost_per_outcome : NAN;
    e->cash = e->inference.runs ? e->inference.cash_cost_per_outcome : NAN;
    e->useful = e->inference.breakdown[COST_I_USEFUL];
    e->total = e->inference.total;
    e->by_scenario = malloc(k_count * sizeof *e->by_scenario);
    e->attainment = malloc(k_count * sizeof *e->attainment);
    e->peak_by_scenario = malloc(k_count * sizeof *e->peak_by_scenario);
    e->breach_hours = malloc(k_count * sizeof *e->breach_hours);
    if (!e->by_scenario || !e->attainment || !e->peak_by_scenario || !e->breach_hours)
        return -1;
    for (size_t k = 0; k < k_count; k++)
        e->by_scenario[k] = e->attainment[k] = e->peak_by_scenario[k] = e->breach_hours[k] = NAN;
    e->reliable = NAN;
    if (!isfinite(e->capacity_rps)) {
        e->reasons |= COST_REASON_SLO;
        return 0;
    }
    double peak = e->inference.peak_replicas, worst = NAN;
    bool runs = e->inference.runs;
    for (size_t k = 0; k < k_count; k++) {
        struct cost_inference_result r;
        cost_inference_eval2(sc, opt, e->capacity_rps, svc->demand_scenarios[k].multiplier, &r);
        e->by_scenario[k] = r.runs ? r.cost_per_outcome : NAN;
        e->attainment[k] = r.slo_attainment;
        e->peak_by_scenario[k] = r.peak_replicas;
        e->breach_hours[k] = r.breach_hours;
        runs = runs && r.runs;
        peak = fmax(peak, r.peak_replicas);
        worst = k == 0 ? e->by_scenario[k] : fmax(worst, e->by_scenario[k]);
        if (!(r.slo_attainment >= svc->min_slo_attainment - 1e-12))
            e->reasons |= COST_REASON_SLO_CAPACITY;
    }
    e->reliable = runs ? worst : NAN;
    if (!runs)
        e->reasons |= COST_REASON_OUT_OF_RANGE;
    e->gpus_at_peak = cost_ceil2(peak) * opt->bench.instances * opt->offer.gpus_per_instance;
    if (opt->offer.quota_given && e->gpus_at_peak > opt->offer.quota_gpus)
        e->reasons |= COST_REASON_QUOTA;
    return 0;
}

static int evaluate_inference(const struct cost_scenario *sc, size_t i, struct option_eval *e)
{
    if (sc->engine >= 2)
        return evaluate_inference2(sc, i, e);
    const struct cost_option *opt = &sc->options[i];
    const struct cost_service *svc = &sc->service;
    e->reasons = inference_fixed_reasons(sc, opt);
    e->gpus_at_peak = NAN;
    e->capacity_rps = cost_inference_capacity(svc, &opt->bench);
    cost_inference_eval(sc, opt, e->capacity_rps, 1.0, &e->inference);
    e->expected = e->inference.runs ? e->inference.cost_per_outcome : NAN;
    e->useful = e->inference.breakdown[COST_I_USEFUL];
    e->total = e->inference.total;
    e->by_scenario = malloc(svc->demand_scenario_count * sizeof *e->by_scenario);
    if (!e->by_scenario)
        return -1;
    if (!isfinite(e->capacity_rps)) {
        e->reasons |= COST_REASON_SLO;
        for (size_t k = 0; k < svc->demand_scenario_count; k++)
            e->by_scenario[k] = NAN;
        e->reliable = NAN;
        return 0;
    }
    /* The arrangement must hold at every demand named: quota at the largest peak of them all,
     * reliable cost the worst of them. */
    double peak = e->inference.peak_replicas, worst = e->expected;
    bool runs = e->inference.runs;
    for (size_t k = 0; k < svc->demand_scenario_count; k++) {
        struct cost_inference_result r;
        cost_inference_eval(sc, opt, e->capacity_rps, svc->demand_scenarios[k].multiplier, &r);
        e->by_scenario[k] = r.runs ? r.cost_per_outcome : NAN;
        runs = runs && r.runs;
        peak = fmax(peak, r.peak_replicas);
        worst = k == 0 ? e->by_scenario[k] : fmax(worst, e->by_scenario[k]);
    }
    e->reliable = runs ? worst : NAN;
    if (!runs)
        e->reasons |= COST_REASON_OUT_OF_RANGE;
    e->gpus_at_peak = ceil(peak) * opt->bench.instances * opt->offer.gpus_per_instance;
    if (opt->offer.quota_given && e->gpus_at_peak > opt->offer.quota_gpus)
        e->reasons |= COST_REASON_QUOTA;
    return 0;
}

/* Index of the lowest finite cost among feasible options; ties go to scenario order. */
static int lowest(const double *cost, const bool *feasible, size_t n)
{
    int best = NO_WINNER;
    for (size_t i = 0; i < n; i++)
        if (feasible[i] && isfinite(cost[i]) && (best == NO_WINNER || cost[i] < cost[best]))
            best = (int)i;
    return best;
}

/* ---- break-even ---------------------------------------------------------------------------- */

enum be_field {
    BE_PRICE,
    BE_THROUGHPUT,
    BE_INTERRUPTION_RATE,
    BE_RESERVED_UTILIZATION,
    BE_FAILURE_PROBABILITY,
    BE_ENGINEER_RATE,
    BE_ENGINEER_BLOCKED,
    /* engine 2 */
    BE_CRASH_RATE_OPTION,
    BE_CRASH_RATE,
    BE_ACCEPTANCE,
    BE_PLANNED_OUTCOMES,
};

struct be_spec {
    enum be_field field;
    const char *pointer; /* within the option for option fields, else from the root */
    bool fraction;       /* searched over [x, 0.99] instead of [x, 10x] */
};

/* The order docs/cost-model.md lists them in: options, their fields, then the assumptions. */
static const struct be_spec option_inputs[] = {
    {BE_PRICE, "offer/price_per_hour", false},
    {BE_THROUGHPUT, "benchmark/throughput_units_per_s", false},
    {BE_INTERRUPTION_RATE, "offer/interruption_rate_per_hour", false},
    {BE_RESERVED_UTILIZATION, "offer/reserved_utilization", true},
};
static const struct be_spec assumption_inputs[] = {
    {BE_FAILURE_PROBABILITY, "/assumptions/failure_probability", true},
    {BE_ENGINEER_RATE, "/assumptions/engineer_rate_per_hour", false},
    {BE_ENGINEER_BLOCKED, "/assumptions/engineer_blocked_fraction", true},
};
/* Engine 2 adds crash rates, the acceptance rate and the planned volume (docs/cost-model.md). */
static const struct be_spec option_inputs2[] = {
    {BE_PRICE, "offer/price_per_hour", false},
    {BE_THROUGHPUT, "benchmark/throughput_units_per_s", false},
    {BE_INTERRUPTION_RATE, "offer/interruption_rate_per_hour", false},
    {BE_CRASH_RATE_OPTION, "benchmark/crash_rate_per_instance_hour", false},
    {BE_RESERVED_UTILIZATION, "offer/reserved_utilization", true},
};
static const struct be_spec assumption_inputs2[] = {
    {BE_FAILURE_PROBABILITY, "/assumptions/failure_probability", true},
    {BE_CRASH_RATE, "/assumptions/crash_rate_per_instance_hour", false},
    {BE_ACCEPTANCE, "/assumptions/acceptance_rate", true},
    {BE_PLANNED_OUTCOMES, "/assumptions/planned_outcomes_per_month", false},
    {BE_ENGINEER_RATE, "/assumptions/engineer_rate_per_hour", false},
    {BE_ENGINEER_BLOCKED, "/assumptions/engineer_blocked_fraction", true},
};

struct be_context {
    const struct cost_scenario *sc;
    const struct option_eval *evals;
    double *cost;   /* scratch, one per option */
    bool *feasible; /* scratch */
};

static double *option_field(struct cost_option *opt, enum be_field field)
{
    switch (field) {
    case BE_PRICE:
        return &opt->offer.price_per_hour;
    case BE_THROUGHPUT:
        return &opt->bench.throughput_units_per_s;
    case BE_INTERRUPTION_RATE:
        return &opt->offer.interruption_rate_per_hour;
    case BE_RESERVED_UTILIZATION:
        return &opt->offer.reserved_utilization;
    case BE_CRASH_RATE_OPTION:
        return &opt->bench.crash_rate_per_instance_hour;
    default:
        return NULL;
    }
}

static bool option_field_given(const struct cost_option *opt, enum be_field field)
{
    switch (field) {
    case BE_PRICE:
        return opt->offer.price_given;
    case BE_THROUGHPUT:
        return opt->bench.throughput_given;
    case BE_INTERRUPTION_RATE:
        return opt->offer.interruption_rate_given;
    case BE_RESERVED_UTILIZATION:
        return opt->offer.reserved_utilization_given;
    case BE_CRASH_RATE_OPTION:
        return opt->bench.crash_rate_given;
    default:
        return false;
    }
}

static double *assumption_field(struct cost_assumptions *as, enum be_field field, bool *given)
{
    switch (field) {
    case BE_FAILURE_PROBABILITY:
        *given = as->failure_probability_given;
        return &as->failure_probability;
    case BE_ENGINEER_RATE:
        *given = as->engineer_rate_given;
        return &as->engineer_rate_per_hour;
    case BE_ENGINEER_BLOCKED:
        *given = as->engineer_blocked_given;
        return &as->engineer_blocked_fraction;
    case BE_CRASH_RATE:
        *given = as->crash_rate_given;
        return &as->crash_rate_per_instance_hour;
    case BE_ACCEPTANCE:
        *given = as->acceptance_given;
        return &as->acceptance_rate;
    case BE_PLANNED_OUTCOMES:
        *given = as->planned_outcomes_given;
        return &as->planned_outcomes;
    default:
        *given = false;
        return NULL;
    }
}

/* Expected cost and closed-form feasibility of one option under changed inputs. Reasons found
 * from the Monte Carlo or the demand scenarios of the real inputs stay (the fields searched
 * here change none of them). */
static void be_evaluate_option(const struct be_context *ctx, const struct cost_assumptions *as,
                               const struct cost_option *opt, size_t i)
{
    const struct option_eval *base = &ctx->evals[i];
    if (cost_is_batch(ctx->sc)) {
        struct cost_batch_result r;
        cost_batch_eval(ctx->sc, as, opt, &r);
        unsigned mc_reasons = base->reasons & ~base->batch.reasons;
        ctx->feasible[i] = r.runs && (r.reasons | mc_reasons) == 0;
        ctx->cost[i] = r.total;
    } else {
        struct cost_inference_result r;
        if (ctx->sc->engine >= 2)
            cost_inference_eval2(ctx->sc, opt, base->capacity_rps, 1.0, &r);
        else
            cost_inference_eval(ctx->sc, opt, base->capacity_rps, 1.0, &r);
        ctx->feasible[i] = r.runs && base->reasons == 0;
        ctx->cost[i] = r.cost_per_outcome;
    }
}

static int be_winner(const struct be_context *ctx, const struct be_spec *spec, size_t option,
                     double value)
{
    const struct cost_scenario *sc = ctx->sc;
    for (size_t i = 0; i < sc->option_count; i++) {
        ctx->cost[i] = ctx->evals[i].expected;
        ctx->feasible[i] = is_feasible(&ctx->evals[i]);
    }
    if (option < sc->option_count) {
        struct cost_option opt = sc->options[option];
        *option_field(&opt, spec->field) = value;
        be_evaluate_option(ctx, &sc->assumptions, &opt, option);
    } else {
        struct cost_assumptions as = sc->assumptions;
        bool given;
        *assumption_field(&as, spec->field, &given) = value;
        for (size_t i = 0; i < sc->option_count; i++)
            be_evaluate_option(ctx, &as, &sc->options[i], i);
    }
    return lowest(ctx->cost, ctx->feasible, sc->option_count);
}

/* Bisection of docs/cost-model.md: [x, 10x] (fractions [x, 0.99]) first, then [x/10, x]. Returns
 * the new winner (flips_at set) or NO_WINNER when the input never changes it there. */
static int be_search(const struct be_context *ctx, const struct be_spec *spec, size_t option,
                     double x, int current, double *flips_at)
{
    double far_ends[2];
    int ranges = 0;
    if (!spec->fraction)
        far_ends[ranges++] = 10 * x;
    else if (x < 0.99)
        far_ends[ranges++] = 0.99;
    far_ends[ranges++] = x / 10;
    for (int r = 0; r < ranges; r++) {
        double near = x, far = far_ends[r];
        int far_winner = be_winner(ctx, spec, option, far);
        if (far_winner == current)
            continue;
        /* 200 halvings bound the loop even if 1e-12·x underflows. */
        for (int step = 0; step < 200 && fabs(far - near) >= 1e-12 * x; step++) {
            double mid = 0.5 * (near + far);
            int w = be_winner(ctx, spec, option, mid);
            if (w == current) {
                near = mid;
            } else {
                far = mid;
                far_winner = w;
            }
        }
        if (far_winner == NO_WINNER)
            return NO_WINNER; /* only feasible options may appear as new_winner */
        *flips_at = 0.5 * (near + far);
        return far_winner;
    }
    return NO_WINNER;
}

/* ---- JSON output ------------------------------------------------------------------------- */

/* A figure: null instead of NaN or an infinity, which JSON cannot hold. */
static json_t *figure(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

struct builder {
    bool ok; /* false once any allocation failed */
};

static json_t *put(struct builder *b, json_t *obj, const char *key, json_t *value)
{
    if (!value || !obj || json_object_set_new(obj, key, value) != 0)
        b->ok = false;
    return value;
}

static void append(struct builder *b, json_t *arr, json_t *value)
{
    if (!value || !arr || json_array_append_new(arr, value) != 0)
        b->ok = false;
}

static json_t *reasons_json(struct builder *b, unsigned reasons)
{
    json_t *arr = json_array();
    for (int i = 0; i < COST_REASON_COUNT; i++)
        if (reasons & (1u << i))
            append(b, arr, json_string(cost_reason_names[i]));
    return arr;
}

static json_t *quantiles_json(struct builder *b, const struct cost_quantiles *q, bool cvar)
{
    json_t *o = json_object();
    put(b, o, "mean", figure(q->mean));
    put(b, o, "p50", figure(q->p50));
    put(b, o, "p90", figure(q->p90));
    put(b, o, "p99", figure(q->p99));
    if (cvar)
        put(b, o, "cvar", figure(q->cvar));
    return o;
}

static json_t *breakdown_json(struct builder *b, const double *items, const char *const *names,
                              int count)
{
    json_t *o = json_object();
    for (int i = 0; i < count; i++)
        put(b, o, names[i], figure(items[i]));
    return o;
}

/* The members every option starts with: name, arrangement (inference), feasibility. */
static json_t *option_head_json(struct builder *b, const struct cost_option *opt,
                                const struct option_eval *e)
{
    json_t *o = json_object();
    put(b, o, "name", json_string(opt->name));
    if (opt->arrangement_name)
        put(b, o, "arrangement", json_string(opt->arrangement_name));
    put(b, o, "feasible", json_boolean(is_feasible(e)));
    put(b, o, "infeasible_reasons", reasons_json(b, e->reasons));
    return o;
}

static json_t *batch_option_json(struct builder *b, const struct cost_scenario *sc, size_t i,
                                 const struct option_eval *e)
{
    const struct cost_option *opt = &sc->options[i];
    const struct cost_batch_result *r = &e->batch;
    json_t *o = option_head_json(b, opt, e);
    bool v2 = sc->engine >= 2;
    put(b, o, "expected_cost_per_outcome", figure(r->total));
    if (v2)
        put(b, o, "cash_cost_per_outcome", figure(e->cash));
    put(b, o, "breakdown",
        breakdown_json(b, r->breakdown, cost_batch_item_names, COST_B_ITEMS_OF(sc->engine)));
    put(b, o, "time_to_result_s", figure(r->time_to_result_s));
    put(b, o, "billed_instance_hours",
        figure(v2 ? opt->bench.instances * r->billed_s / 3600 / r->acceptance
                  : opt->bench.instances * r->billed_s / 3600));
    put(b, o, "checkpoint_interval_s", figure(r->interval_s));
    put(b, o, "checkpoint_segments", figure(r->segments));
    put(b, o, "price_per_gpu_hour", figure(e->price_per_gpu_hour));
    put(b, o, "compute_s", figure(r->compute_s));
    put(b, o, "interrupted_compute_s", figure(r->interrupted_s));
    put(b, o, "failed_attempt_s", figure(r->failed_s));
    put(b, o, "gpus_at_peak", figure(r->gpus_at_peak));
    static const struct cost_quantiles none = {NAN, NAN, NAN, NAN, NAN, NAN};
    put(b, o, "cost_per_outcome_quantiles", quantiles_json(b, e->mc_ran ? &e->mc.cost : &none, v2));
    put(b, o, "time_to_result_quantiles", quantiles_json(b, e->mc_ran ? &e->mc.time : &none, v2));
    if (v2) {
        put(b, o, "acceptance_rate", figure(r->acceptance));
        put(b, o, "attempts_per_run", figure(r->attempts_per_run));
        put(b, o, "restarts_per_run", figure(r->restarts_per_run));
        put(b, o, "restart_rate_per_hour", figure(r->interruption_rate_per_s * 3600));
        put(b, o, "queue_wait_mean_s", figure(r->queue_s));
    }
    put(b, o, "reliable_cost_per_outcome", figure(e->reliable));
    put(b, o, "unfinished_trials", json_integer((json_int_t)e->mc.unfinished_trials));
    json_t *findings = put(b, o, "findings", json_array());
    if (findings && cost_findings_batch(sc, opt, r, e->reasons, findings) != 0)
        b->ok = false;
    return o;
}

static json_t *inference_option_json(struct builder *b, const struct cost_scenario *sc, size_t i,
                                     const struct option_eval *e)
{
    const struct cost_option *opt = &sc->options[i];
    const struct cost_inference_result *r = &e->inference;
    json_t *o = option_head_json(b, opt, e);
    put(b, o, "capacity_rps_per_replica", figure(e->capacity_rps));
    put(b, o, "replica_hours", figure(r->replica_hours));
    put(b, o, "provisioned_replica_hours", figure(r->provisioned_h));
    put(b, o, "cold_start_replica_hours", figure(r->cold_start_h));
    put(b, o, "interruption_replica_hours", figure(r->interruption_h));
    put(b, o, "peak_replicas", figure(r->peak_replicas));
    put(b, o, "gpus_at_peak", figure(e->gpus_at_peak));
    put(b, o, "requests", figure(r->requests));
    put(b, o, "accepted_requests", figure(r->accepted));
    bool v2 = sc->engine >= 2;
    put(b, o, "expected_total_cost", figure(r->total));
    put(b, o, "expected_cost_per_outcome", figure(r->cost_per_outcome));
    if (v2) {
        put(b, o, "cash_cost_per_outcome", figure(e->cash));
        put(b, o, "served_requests", figure(r->served_requests));
    }
    put(b, o, "breakdown",
        breakdown_json(b, r->breakdown, cost_inference_item_names, COST_I_ITEMS_OF(sc->engine)));
    put(b, o, "utilization", figure(r->utilization));
    put(b, o, "price_per_gpu_hour", figure(e->price_per_gpu_hour));
    put(b, o, "cost_per_million_output_tokens", figure(r->cost_per_million_tokens));
    if (v2) {
        put(b, o, "slo_attainment", figure(r->slo_attainment));
        put(b, o, "replicas_peak", figure(r->peak_replicas));
        put(b, o, "slo_breach_hours", figure(isfinite(e->capacity_rps) ? r->breach_hours : NAN));
        json_t *failing = put(b, o, "slo_capacity_scenarios", json_array());
        for (size_t k = 0; k < sc->service.demand_scenario_count; k++)
            if (isfinite(e->attainment[k]) &&
                !(e->attainment[k] >= sc->service.min_slo_attainment - 1e-12))
                append(b, failing, json_string(sc->service.demand_scenarios[k].name));
    }
    json_t *by = put(b, o, "by_demand_scenario", json_object());
    for (size_t k = 0; k < sc->service.demand_scenario_count; k++)
        put(b, by, sc->service.demand_scenarios[k].name, figure(e->by_scenario[k]));
    if (v2) {
        json_t *detail = put(b, o, "by_demand_scenario_detail", json_object());
        for (size_t k = 0; k < sc->service.demand_scenario_count; k++) {
            json_t *d = put(b, detail, sc->service.demand_scenarios[k].name, json_object());
            put(b, d, "cost_per_outcome", figure(e->by_scenario[k]));
            put(b, d, "slo_attainment", figure(e->attainment[k]));
            put(b, d, "replicas_peak", figure(e->peak_by_scenario[k]));
            put(b, d, "slo_breach_hours", figure(e->breach_hours[k]));
        }
    }
    put(b, o, "reliable_cost_per_outcome", figure(e->reliable));
    json_t *findings = put(b, o, "findings", json_array());
    if (findings && cost_findings_inference(sc, opt, r, e->reasons, e->gpus_at_peak, findings) != 0)
        b->ok = false;
    return o;
}

struct ranked {
    size_t index;
    double key;
};

static int compare_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index); /* ties: scenario order */
}

enum rank_key { RANK_RELIABLE, RANK_EXPECTED, RANK_CASH };

/* Feasible options by key; writes the names into a new array. */
static json_t *ranking_json(struct builder *b, const struct cost_scenario *sc,
                            const struct option_eval *evals, enum rank_key by, json_t **winner)
{
    size_t n = 0;
    struct ranked *list = malloc(sc->option_count * sizeof *list);
    json_t *arr = json_array();
    if (!list) {
        b->ok = false;
        *winner = json_null();
        return arr;
    }
    for (size_t i = 0; i < sc->option_count; i++)
        if (is_feasible(&evals[i]))
            list[n++] = (struct ranked){i, by == RANK_RELIABLE   ? evals[i].reliable
                                           : by == RANK_EXPECTED ? evals[i].expected
                                                                 : evals[i].cash};
    qsort(list, n, sizeof *list, compare_ranked);
    for (size_t k = 0; k < n; k++)
        append(b, arr, json_string(sc->options[list[k].index].name));
    *winner = n ? json_string(sc->options[list[0].index].name) : json_null();
    free(list);
    return arr;
}

static json_t *hourly_price_trap_json(struct builder *b, const struct cost_scenario *sc,
                                      const struct option_eval *evals)
{
    int cheapest_hourly = NO_WINNER, cheapest_outcome = NO_WINNER;
    for (size_t i = 0; i < sc->option_count; i++) {
        if (!is_feasible(&evals[i]))
            continue;
        if (cheapest_hourly == NO_WINNER ||
            evals[i].price_per_gpu_hour < evals[cheapest_hourly].price_per_gpu_hour)
            cheapest_hourly = (int)i;
        if (cheapest_outcome == NO_WINNER || evals[i].expected < evals[cheapest_outcome].expected)
            cheapest_outcome = (int)i;
    }
    if (cheapest_outcome == NO_WINNER ||
        evals[cheapest_outcome].price_per_gpu_hour == evals[cheapest_hourly].price_per_gpu_hour)
        return json_null(); /* one of the cheapest per GPU-hour is also cheapest per outcome */
    json_t *o = json_object();
    put(b, o, "cheapest_hourly", json_string(sc->options[cheapest_hourly].name));
    put(b, o, "cheapest_per_outcome", json_string(sc->options[cheapest_outcome].name));
    put(b, o, "ratio", figure(evals[cheapest_hourly].expected / evals[cheapest_outcome].expected));
    return o;
}

/* Winner per demand scenario (inference); NULL-safe on OOM through the builder. */
static json_t *demand_winners_json(struct builder *b, const struct cost_scenario *sc,
                                   const struct option_eval *evals, bool *sensitive)
{
    json_t *o = json_object();
    double *cost = malloc(sc->option_count * sizeof *cost);
    bool *feasible = malloc(sc->option_count * sizeof *feasible);
    *sensitive = false;
    if (!cost || !feasible) {
        b->ok = false;
        free(cost);
        free(feasible);
        return o;
    }
    int first = NO_WINNER;
    for (size_t k = 0; k < sc->service.demand_scenario_count; k++) {
        for (size_t i = 0; i < sc->option_count; i++) {
            cost[i] = evals[i].by_scenario[k];
            feasible[i] = is_feasible(&evals[i]);
        }
        int w = lowest(cost, feasible, sc->option_count);
        if (k == 0)
            first = w;
        else if (w != first)
            *sensitive = true;
        put(b, o, sc->service.demand_scenarios[k].name,
            w == NO_WINNER ? json_null() : json_string(sc->options[w].name));
    }
    free(cost);
    free(feasible);
    return o;
}

static json_t *break_even_json(struct builder *b, const struct cost_scenario *sc,
                               const struct option_eval *evals)
{
    json_t *arr = json_array();
    struct be_context ctx = {sc, evals, malloc(sc->option_count * sizeof(double)),
                             malloc(sc->option_count * sizeof(bool))};
    if (!ctx.cost || !ctx.feasible) {
        b->ok = false;
        goto out;
    }
    for (size_t i = 0; i < sc->option_count; i++) {
        ctx.cost[i] = evals[i].expected;
        ctx.feasible[i] = is_feasible(&evals[i]);
    }
    int current = lowest(ctx.cost, ctx.feasible, sc->option_count);
    bool v2 = sc->engine >= 2;
    const struct be_spec *opt_specs = v2 ? option_inputs2 : option_inputs;
    const struct be_spec *as_specs = v2 ? assumption_inputs2 : assumption_inputs;
    size_t n_option_inputs = v2 ? sizeof option_inputs2 / sizeof option_inputs2[0]
                                : sizeof option_inputs / sizeof option_inputs[0];
    size_t n_assumption_inputs = !cost_is_batch(sc) ? 0
                                 : v2 ? sizeof assumption_inputs2 / sizeof assumption_inputs2[0]
                                      : sizeof assumption_inputs / sizeof assumption_inputs[0];
    size_t total = sc->option_count * n_option_inputs + n_assumption_inputs;
    for (size_t k = 0; k < total; k++) {
        const struct be_spec *spec;
        size_t option = SIZE_MAX;
        double x;
        bool given;
        if (k < sc->option_count * n_option_inputs) {
            option = k / n_option_inputs;
            spec = &opt_specs[k % n_option_inputs];
            struct cost_option copy = sc->options[option];
            if ((spec->field == BE_THROUGHPUT || spec->field == BE_CRASH_RATE_OPTION) &&
                !cost_is_batch(sc))
                continue;
            given = option_field_given(&copy, spec->field);
            x = *option_field(&copy, spec->field);
        } else {
            spec = &as_specs[k - sc->option_count * n_option_inputs];
            struct cost_assumptions copy = sc->assumptions;
            x = *assumption_field(&copy, spec->field, &given);
        }
        if (!given || !(x > 0))
            continue;
        double flips_at = NAN;
        int winner = be_search(&ctx, spec, option, x, current, &flips_at);
        if (winner == NO_WINNER)
            continue;
        char pointer[96];
        if (option < sc->option_count)
            snprintf(pointer, sizeof pointer, "/options/%zu/%s", option, spec->pointer);
        else
            snprintf(pointer, sizeof pointer, "%s", spec->pointer);
        json_t *o = json_object();
        put(b, o, "input", json_string(pointer));
        put(b, o, "current", figure(x));
        put(b, o, "flips_at", figure(flips_at));
        put(b, o, "new_winner", json_string(sc->options[winner].name));
        append(b, arr, o);
    }
out:
    free(ctx.cost);
    free(ctx.feasible);
    return arr;
}

static json_t *overhead_dominates_json(struct builder *b, const struct cost_scenario *sc,
                                       const struct option_eval *evals)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < sc->option_count; i++)
        if (is_feasible(&evals[i]) && evals[i].useful < evals[i].total / 2)
            append(b, arr, json_string(sc->options[i].name));
    return arr;
}

/* ---- entry points ------------------------------------------------------------------------ */

int cost_validate(const json_t *scenario, struct problems *errs)
{
    struct cost_scenario sc;
    if (cost_scenario_parse(scenario, 0, &sc, errs) != 0)
        return -1;
    cost_scenario_free(&sc);
    return 0;
}

static json_t *build_comparison(const struct cost_scenario *sc, struct option_eval *evals,
                                const char *sha)
{
    struct builder b = {true};
    json_t *doc = json_object();
    bool v2 = sc->engine >= 2;
    put(&b, doc, "engine_version", json_string(v2 ? COST_ENGINE_2_VERSION : COST_ENGINE_1_VERSION));
    put(&b, doc, "input_sha256", json_string(sha));
    if (v2)
        put(&b, doc, "engine", json_integer(sc->engine));
    put(&b, doc, "kind", json_string(sc->kind_name));
    put(&b, doc, "currency", json_string(sc->currency));
    bool batch = cost_is_batch(sc);
    /* Inference has no Monte Carlo: no seed is used and no trial is run. */
    put(&b, doc, "seed", batch ? json_integer((json_int_t)sc->seed) : json_null());
    put(&b, doc, "trials", json_integer(batch ? (json_int_t)sc->trials : 0));
    if (batch)
        put(&b, doc, "reliable_quantile", figure(sc->assumptions.reliable_quantile));
    if (batch && v2) {
        put(&b, doc, "risk_measure",
            json_string(sc->assumptions.risk_quantile ? "quantile" : "cvar"));
        put(&b, doc, "planned_outcomes_per_month",
            json_integer((json_int_t)sc->assumptions.planned_outcomes));
    }
    json_t *options = put(&b, doc, "options", json_array());
    for (size_t i = 0; i < sc->option_count; i++)
        append(&b, options,
               batch ? batch_option_json(&b, sc, i, &evals[i])
                     : inference_option_json(&b, sc, i, &evals[i]));
    json_t *winner, *winner_expected;
    put(&b, doc, "ranking", ranking_json(&b, sc, evals, RANK_RELIABLE, &winner));
    put(&b, doc, "winner", winner);
    put(&b, doc, "ranking_by_expected",
        ranking_json(&b, sc, evals, RANK_EXPECTED, &winner_expected));
    put(&b, doc, "winner_by_expected", winner_expected);
    if (v2) {
        json_t *winner_cash;
        put(&b, doc, "ranking_by_cash", ranking_json(&b, sc, evals, RANK_CASH, &winner_cash));
        put(&b, doc, "winner_by_cash", winner_cash);
        /* also at the top level, where engine 2's contract reads it */
        put(&b, doc, "hourly_price_trap", hourly_price_trap_json(&b, sc, evals));
    }
    json_t *flags = put(&b, doc, "flags", json_object());
    put(&b, flags, "hourly_price_trap", hourly_price_trap_json(&b, sc, evals));
    put(&b, flags, "overhead_dominates", overhead_dominates_json(&b, sc, evals));
    if (batch) {
        put(&b, flags, "demand_sensitive", json_null()); /* one demand: nothing to vary */
    } else {
        bool sensitive;
        put(&b, doc, "winner_by_demand_scenario", demand_winners_json(&b, sc, evals, &sensitive));
        put(&b, flags, "demand_sensitive", json_boolean(sensitive));
    }
    put(&b, doc, "break_even", break_even_json(&b, sc, evals));
    if (!b.ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* What the charts of a comparison need beyond the comparison itself, per option: the Monte
 * Carlo cost percentiles 1..99 (batch) or the replicas of each hour of the demand profile at
 * the expected demand (inference). */
static json_t *build_charts(const struct cost_scenario *sc, const struct option_eval *evals,
                            const char *sha)
{
    struct builder b = {true};
    json_t *doc = json_object();
    put(&b, doc, "engine_version",
        json_string(sc->engine >= 2 ? COST_ENGINE_2_VERSION : COST_ENGINE_1_VERSION));
    put(&b, doc, "input_sha256", json_string(sha));
    json_t *options = put(&b, doc, "options", json_array());
    for (size_t i = 0; i < sc->option_count; i++) {
        const struct option_eval *e = &evals[i];
        const struct cost_option *opt = &sc->options[i];
        json_t *o = json_object();
        put(&b, o, "name", json_string(opt->name));
        json_t *pct =
            put(&b, o, "cost_per_outcome_percentiles", e->mc_ran ? json_array() : json_null());
        for (size_t k = 0; e->mc_ran && pct && k < COST_PERCENTILES; k++)
            append(&b, pct, figure(e->mc.cost_percentile[k]));
        bool hourly_known = !cost_is_batch(sc) && isfinite(e->capacity_rps);
        json_t *hourly =
            put(&b, o, "replicas_by_profile_hour", hourly_known ? json_array() : json_null());
        for (size_t h = 0; hourly_known && hourly && h < sc->service.profile_hours; h++)
            append(&b, hourly,
                   figure(opt->arrangement == COST_DEDICATED ? e->inference.peak_replicas
                          : sc->engine >= 2
                              ? cost_inference_replicas2(&sc->service, opt->arrangement,
                                                         e->capacity_rps, 1, h)
                              : cost_inference_replicas(&sc->service, opt->arrangement,
                                                        e->capacity_rps, 1, h)));
        append(&b, options, o);
    }
    if (!b.ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Parses and evaluates the scenario, then builds the comparison, or the charts document. */
static json_t *evaluate(const json_t *scenario, int engine, bool charts, struct problems *errs)
{
    struct cost_scenario sc;
    if (cost_scenario_parse(scenario, engine, &sc, errs) != 0)
        return NULL;
    char sha[65];
    if (jcs_sha256_hex(scenario, sha) != 0) {
        /* Parsed JSON always canonicalises; only a tree built in memory with bad UTF-8 (or
         * memory running out) gets here. */
        problems_add(errs, "", "the scenario cannot be canonicalised (RFC 8785) for hashing");
        cost_scenario_free(&sc);
        return NULL;
    }
    json_t *doc = NULL;
    struct option_eval *evals = calloc(sc.option_count, sizeof *evals);
    if (!evals)
        goto out;
    for (size_t i = 0; i < sc.option_count; i++) {
        const struct cost_offer *offer = &sc.options[i].offer;
        evals[i].price_per_gpu_hour = offer->price_per_hour / offer->gpus_per_instance;
        int rc = cost_is_batch(&sc) ? evaluate_batch(&sc, i, charts, &evals[i])
                                    : evaluate_inference(&sc, i, &evals[i]);
        if (rc != 0)
            goto out;
    }
    doc = charts ? build_charts(&sc, evals, sha) : build_comparison(&sc, evals, sha);
out:
    if (!doc)
        problems_add(errs, "", "out of memory while comparing");
    if (evals)
        for (size_t i = 0; i < sc.option_count; i++) {
            free(evals[i].by_scenario);
            free(evals[i].attainment);
            free(evals[i].peak_by_scenario);
            free(evals[i].breach_hours);
        }
    free(evals);
    cost_scenario_free(&sc);
    return doc;
}

json_t *cost_compare(const json_t *scenario, struct problems *errs)
{
    return evaluate(scenario, 0, false, errs);
}

json_t *cost_charts(const json_t *scenario, struct problems *errs)
{
    return evaluate(scenario, 0, true, errs);
}

static int checked_engine(int engine, struct problems *errs)
{
    if (engine < 0 || engine > 2) {
        problems_add(errs, "/engine", "no engine %d: 1 or 2", engine);
        return -1;
    }
    return 0;
}

json_t *cost_compare_engine(const json_t *scenario, int engine, struct problems *errs)
{
    return checked_engine(engine, errs) ? NULL : evaluate(scenario, engine, false, errs);
}

json_t *cost_charts_engine(const json_t *scenario, int engine, struct problems *errs)
{
    return checked_engine(engine, errs) ? NULL : evaluate(scenario, engine, true, errs);
}

int cost_engine_of_version(const char *engine_version)
{
    if (!engine_version)
        return 0;
    if (strncmp(engine_version, "capledger-cost/1.", 17) == 0)
        return 1;
    if (strncmp(engine_version, "capledger-cost/2.", 17) == 0)
        return 2;
    return 0;
}
