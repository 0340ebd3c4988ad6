/* Scenario validation: the whole document is checked before anything is computed, and every
 * problem is reported with its JSON Pointer so one 422 names them all. Fields are described by
 * declarative tables (name, type, which kinds they apply to, bounds, default, where they go);
 * a key that no table names is an unknown field, because users write these files by hand and a
 * misspelt `queue_wait` silently taking its default would change a decision. */
#include "core/cost/cost_scenario.h"

#include "core/cost/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cost_reason_names[COST_REASON_COUNT] = {
    "memory", "quota", "supply", "slo", "interruptions", "out_of_range", "slo_capacity",
};

enum field_type { F_NUMBER, F_INTEGER, F_STRING, F_BOOL, F_OBJECT, F_ARRAY, F_IGNORED, F_SLO };

/* Which engines a field exists in (0: both). A field of engine 2 alone is an unknown field in
 * engine 1, exactly as before engine 2 existed. */
#define E1 1u
#define E2 2u

/* Which kinds a field applies to / is required for. */
#define K_BATCH 1u
#define K_INFER 2u
#define K_BOTH (K_BATCH | K_INFER)

/* Bounds flags. */
#define B_LO 1u      /* ≥ lo */
#define B_LO_EXCL 2u /* > lo */
#define B_HI 4u      /* ≤ hi */
#define B_HI_EXCL 8u /* < hi */

#define NO_FIELD (-1)

struct field {
    const char *name;
    enum field_type type;
    unsigned applies, required, bounds;
    double lo, hi, dflt;
    ptrdiff_t value_off; /* double / const char * / bool in the target struct, or NO_FIELD */
    ptrdiff_t given_off; /* bool set when the key is present, or NO_FIELD */
    unsigned engines;    /* E1, E2, or 0 for both */
};

static bool in_engine(const struct field *f, int engine)
{
    return f->engines == 0 || (f->engines & (engine >= 2 ? E2 : E1));
}

/* Engine-2 fields, written out (designated initialisers keep the positional macros above). */
#define V2NUM(st, f, app, bnd_flags, l, h, d, g)                                                   \
    {                                                                                              \
        .name = #f, .type = F_NUMBER, .applies = app, .bounds = bnd_flags, .lo = l, .hi = h,       \
        .dflt = d, .value_off = offsetof(st, f), .given_off = g, .engines = E2                     \
    }
#define V2INT(st, f, app, l, h, d, g)                                                              \
    {                                                                                              \
        .name = #f, .type = F_INTEGER, .applies = app, .bounds = B_LO | B_HI, .lo = l, .hi = h,    \
        .dflt = d, .value_off = offsetof(st, f), .given_off = g, .engines = E2                     \
    }
#define V2STR(name_, st, f, app, req)                                                              \
    {                                                                                              \
        .name = name_, .type = F_STRING, .applies = app, .required = req,                          \
        .value_off = offsetof(st, f), .given_off = NO_FIELD, .engines = E2                         \
    }
#define V2SPECIAL(name_, type_, app)                                                               \
    {                                                                                              \
        .name = name_, .type = type_, .applies = app, .value_off = NO_FIELD,                       \
        .given_off = NO_FIELD, .engines = E2                                                       \
    }
#define ONLY_E1(name_, type_, app, req)                                                            \
    {                                                                                              \
        .name = name_, .type = type_, .applies = app, .required = req, .value_off = NO_FIELD,      \
        .given_off = NO_FIELD, .engines = E1                                                       \
    }
#define GIVEN(st, g) offsetof(st, g)

#define SEED_MAX 9007199254740991.0 /* 2^53 − 1 */

/* bnd expands to "bounds flags, lo, hi" (GE0, GT0, BETWEEN(l, h), ...). */
#define NUM(st, f, app, req, bnd, d)                                                               \
    {                                                                                              \
#f, F_NUMBER, app, req, bnd, d, offsetof(st, f), NO_FIELD, 0                               \
    }
#define NUMG(st, f, app, req, bnd, d, g)                                                           \
    {                                                                                              \
#f, F_NUMBER, app, req, bnd, d, offsetof(st, f), offsetof(st, g), 0                        \
    }
#define INT(st, f, app, req, bnd, d)                                                               \
    {                                                                                              \
#f, F_INTEGER, app, req, bnd, d, offsetof(st, f), NO_FIELD, 0                              \
    }
#define INTG(st, f, app, req, bnd, d, g)                                                           \
    {                                                                                              \
#f, F_INTEGER, app, req, bnd, d, offsetof(st, f), offsetof(st, g), 0                       \
    }
#define STR(st, f, app, req)                                                                       \
    {                                                                                              \
#f, F_STRING, app, req, 0, 0, 0, 0, offsetof(st, f), NO_FIELD, 0                           \
    }
#define STR_AS(name, st, f, app, req)                                                              \
    {                                                                                              \
        name, F_STRING, app, req, 0, 0, 0, 0, offsetof(st, f), NO_FIELD, 0                         \
    }
#define SPECIAL(name, type, app, req)                                                              \
    {                                                                                              \
        name, type, app, req, 0, 0, 0, 0, NO_FIELD, NO_FIELD, 0                                    \
    }
#define IGNORED(name)                                                                              \
    {                                                                                              \
        name, F_IGNORED, K_BOTH, 0, 0, 0, 0, 0, NO_FIELD, NO_FIELD, 0                              \
    }

#define GE0 B_LO, 0, 0
#define GT0 B_LO_EXCL, 0, 0
#define FRACTION B_LO | B_HI, 0, 1
#define FRACTION_LT1 B_LO | B_HI_EXCL, 0, 1
#define POS_FRACTION B_LO_EXCL | B_HI, 0, 1
#define BETWEEN(l, h) B_LO | B_HI, l, h

static const struct field top_table[] = {
    SPECIAL("workload", F_OBJECT, K_BOTH, K_BOTH),
    SPECIAL("assumptions", F_OBJECT, K_BATCH, 0),
    SPECIAL("service", F_OBJECT, K_INFER, K_INFER),
    SPECIAL("options", F_ARRAY, K_BOTH, K_BOTH),
    /* Stored scenarios carry these; they do not change any figure. */
    IGNORED("name"),
    IGNORED("description"),
    IGNORED("id"),
    /* 1 or 2 (read by cost_scenario_parse before anything else) */
    IGNORED("engine"),
};

static const struct field workload_table[] = {
    SPECIAL("kind", F_STRING, K_BOTH, K_BOTH),
    STR(struct cost_workload, name, K_BOTH, 0),
    STR(struct cost_workload, unit, K_BOTH, 0),
    NUM(struct cost_workload, target_units, K_BATCH, K_BATCH, GT0, 0),
    NUMG(struct cost_workload, memory_required_gb, K_BOTH, 0, GE0, 0, memory_required_given),
    NUM(struct cost_workload, dataset_gb, K_BATCH, 0, GE0, 0),
    NUM(struct cost_workload, checkpoint_gb, K_BATCH, 0, GE0, 0),
    NUM(struct cost_workload, checkpoints_kept, K_BATCH, 0, GE0, 1),
    NUMG(struct cost_workload, output_tokens_per_request, K_INFER, 0, GT0, 0, output_tokens_given),
    V2SPECIAL("data_source", F_OBJECT, K_BATCH),
    IGNORED("id"),
    IGNORED("team"),
    IGNORED("class"),
};

static const struct field assumptions_table[] = {
    NUMG(struct cost_assumptions, engineer_rate_per_hour, K_BATCH, 0, GE0, 0, engineer_rate_given),
    NUMG(struct cost_assumptions, engineer_blocked_fraction, K_BATCH, 0, FRACTION, 0,
         engineer_blocked_given),
    NUMG(struct cost_assumptions, failure_probability, K_BATCH, 0, FRACTION_LT1, 0,
         failure_probability_given),
    NUM(struct cost_assumptions, failure_progress_fraction, K_BATCH, 0, FRACTION, 0.5),
    NUM(struct cost_assumptions, retention_months, K_BATCH, 0, GE0, 1),
    NUM(struct cost_assumptions, memory_headroom, K_BATCH, 0, FRACTION_LT1, 0.05),
    NUM(struct cost_assumptions, reliable_quantile, K_BATCH, 0, POS_FRACTION, 0.9),
    INT(struct cost_assumptions, trials, K_BATCH, 0, BETWEEN(1, COST_MAX_TRIALS), 20000),
    INT(struct cost_assumptions, seed, K_BATCH, 0, BETWEEN(0, SEED_MAX), 1),
    V2STR("risk_measure", struct cost_assumptions, risk_measure, K_BATCH, 0),
    {.name = "planned_outcomes_per_month",
     .type = F_INTEGER,
     .applies = K_BATCH,
     .bounds = B_LO | B_HI,
     .lo = 1,
     .hi = COST_MAX_PLANNED_OUTCOMES,
     .dflt = 1,
     .value_off = offsetof(struct cost_assumptions, planned_outcomes),
     .given_off = offsetof(struct cost_assumptions, planned_outcomes_given),
     .engines = E2},
    V2NUM(struct cost_assumptions, acceptance_rate, K_BATCH, B_LO | B_HI, 0.001, 1, 1,
          GIVEN(struct cost_assumptions, acceptance_given)),
    V2NUM(struct cost_assumptions, crash_rate_per_instance_hour, K_BATCH, B_LO, 0, 0, 0,
          GIVEN(struct cost_assumptions, crash_rate_given)),
};

static const struct field service_table[] = {
    ONLY_E1("slo", F_OBJECT, K_INFER, K_INFER),
    {.name = "slo",
     .type = F_SLO,
     .applies = K_INFER,
     .required = K_INFER,
     .value_off = NO_FIELD,
     .given_off = NO_FIELD,
     .engines = E2},
    V2NUM(struct cost_service, slo_max_error_rate, K_INFER, B_LO | B_HI, 0, 1, 0.01,
          GIVEN(struct cost_service, slo_max_error_rate_given)),
    V2INT(struct cost_service, max_replicas, K_INFER, 1, 1e6, 0,
          GIVEN(struct cost_service, max_replicas_given)),
    V2NUM(struct cost_service, pool_capacity_rps, K_INFER, B_LO_EXCL, 0, 0, 0,
          GIVEN(struct cost_service, pool_capacity_given)),
    V2NUM(struct cost_service, min_slo_attainment, K_INFER, B_LO | B_HI, 0, 1, 0.999, NO_FIELD),
    V2NUM(struct cost_service, unserved_cost_per_request, K_INFER, B_LO, 0, 0, 0, NO_FIELD),
    SPECIAL("demand_rps_by_hour", F_ARRAY, K_INFER, K_INFER),
    INTG(struct cost_service, horizon_hours, K_INFER, 0, BETWEEN(1, COST_MAX_HORIZON_HOURS), 0,
         horizon_given),
    NUM(struct cost_service, retry_rate, K_INFER, 0, GE0, 0),
    NUM(struct cost_service, acceptance_rate, K_INFER, 0, POS_FRACTION, 1),
    NUM(struct cost_service, review_cost_per_request, K_INFER, 0, GE0, 0),
    NUM(struct cost_service, target_utilization, K_INFER, 0, POS_FRACTION, 0.8),
    INT(struct cost_service, spares, K_INFER, 0, BETWEEN(0, 1e6), 0),
    INT(struct cost_service, min_replicas, K_INFER, 0, BETWEEN(0, 1e6), 1),
    NUM(struct cost_service, cold_start_s, K_INFER, 0, GE0, 0),
    NUM(struct cost_service, memory_headroom, K_INFER, 0, FRACTION_LT1, 0.05),
    NUMG(struct cost_service, pool_utilization, K_INFER, 0, POS_FRACTION, 0,
         pool_utilization_given),
    SPECIAL("demand_scenarios", F_OBJECT, K_INFER, 0),
};

static const struct field slo_table[] = {
    STR_AS("metric", struct cost_service, slo_metric, K_INFER, K_INFER),
    {"target_ms", F_NUMBER, K_INFER, K_INFER, B_LO_EXCL, 0, 0, 0,
     offsetof(struct cost_service, slo_target_ms), NO_FIELD, 0},
    {"max_error_rate", F_NUMBER, K_INFER, 0, BETWEEN(0, 1), 0.01,
     offsetof(struct cost_service, max_error_rate), NO_FIELD, 0},
};

/* engine 2: one metric of service.slo in its array form */
static const struct field slo_item_table[] = {
    STR_AS("metric", struct cost_service, slo_metric, K_INFER, K_INFER),
    {"target_ms", F_NUMBER, K_INFER, K_INFER, B_LO_EXCL, 0, 0, 0,
     offsetof(struct cost_service, slo_target_ms), NO_FIELD, 0},
};

static const struct field data_source_table[] = {
    STR_AS("provider", struct cost_workload, source_provider, K_BATCH, K_BATCH),
    STR_AS("region", struct cost_workload, source_region, K_BATCH, K_BATCH),
    {"egress_price_gb", F_NUMBER, K_BATCH, 0, GE0, 0,
     offsetof(struct cost_workload, source_egress_price_gb), NO_FIELD, 0},
    /* where exactly (an s3:// URL, a bucket): descriptive, changes no figure */
    IGNORED("location"),
};

static const struct field option_table[] = {
    STR(struct cost_option, name, K_BOTH, K_BOTH),
    V2INT(struct cost_option, replicas, K_INFER, 1, 1e6, 0,
          GIVEN(struct cost_option, replicas_given)),
    SPECIAL("arrangement", F_STRING, K_INFER, K_INFER),
    SPECIAL("offer", F_OBJECT, K_BOTH, K_BOTH),
    SPECIAL("benchmark", F_OBJECT, K_BOTH, K_BOTH),
};

static const struct field offer_table[] = {
    STR(struct cost_offer, gpu_model, K_BOTH, 0),
    NUM(struct cost_offer, gpus_per_instance, K_BOTH, K_BOTH, GT0, 1),
    NUM(struct cost_offer, gpu_memory_gb, K_BOTH, K_BOTH, GT0, 0),
    SPECIAL("purchase_option", F_STRING, K_BOTH, K_BOTH),
    NUMG(struct cost_offer, price_per_hour, K_BOTH, K_BOTH, GT0, 0, price_given),
    STR(struct cost_offer, currency, K_BOTH, K_BOTH),
    NUMG(struct cost_offer, reserved_utilization, K_BOTH, 0, POS_FRACTION, 1,
         reserved_utilization_given),
    NUMG(struct cost_offer, interruption_rate_per_hour, K_BOTH, 0, GE0, 0, interruption_rate_given),
    NUM(struct cost_offer, provisioning_delay_s, K_BOTH, 0, GE0, 0),
    NUMG(struct cost_offer, quota_gpus, K_BOTH, 0, GE0, 0, quota_given),
    {"available", F_BOOL, K_BOTH, 0, 0, 0, 0, 1, offsetof(struct cost_offer, available), NO_FIELD,
     0},
    NUM(struct cost_offer, storage_price_gb_month, K_BOTH, 0, GE0, 0),
    NUM(struct cost_offer, egress_price_gb, K_BOTH, 0, GE0, 0),
    NUM(struct cost_offer, orchestration_overhead, K_BOTH, 0, GE0, 0),
    {.name = "reserved_paid",
     .type = F_BOOL,
     .applies = K_BOTH,
     .value_off = offsetof(struct cost_offer, reserved_paid),
     .given_off = NO_FIELD,
     .engines = E2},
    /* Engine 2 places the data by them (workload.data_source); engine 1 ignores them. */
    V2STR("provider", struct cost_offer, provider, K_BOTH, 0),
    V2STR("region", struct cost_offer, region, K_BOTH, 0),
    ONLY_E1("provider", F_IGNORED, K_BOTH, 0),
    ONLY_E1("region", F_IGNORED, K_BOTH, 0),
    /* Descriptive fields of a stored offer record (docs/evidence.md); they change no figure. */
    IGNORED("id"),
    IGNORED("instance_type"),
    IGNORED("source"),
    IGNORED("notes"),
};

static const struct field benchmark_table[] = {
    INT(struct cost_benchmark, instances, K_BOTH, 0, BETWEEN(1, 1e6), 1),
    NUMG(struct cost_benchmark, throughput_units_per_s, K_BATCH, K_BATCH, GT0, 0, throughput_given),
    NUM(struct cost_benchmark, throughput_stddev, K_BATCH, 0, GE0, 0),
    NUM(struct cost_benchmark, gpu_duty_cycle, K_BATCH, 0, FRACTION, 1),
    NUM(struct cost_benchmark, input_stall_fraction, K_BATCH, 0, FRACTION, 0),
    NUM(struct cost_benchmark, setup_s, K_BATCH, 0, GE0, 0),
    NUM(struct cost_benchmark, checkpoint_write_s, K_BATCH, 0, GE0, 0),
    NUM(struct cost_benchmark, restart_s, K_BATCH, 0, GE0, 0),
    NUMG(struct cost_benchmark, checkpoint_interval_s, K_BATCH, 0, GT0, 0,
         checkpoint_interval_given),
    NUMG(struct cost_benchmark, queue_wait_s, K_BATCH, 0, GE0, 0, queue_wait_given),
    NUM(struct cost_benchmark, transfer_gb, K_BATCH, 0, GE0, 0),
    NUMG(struct cost_benchmark, memory_peak_gb, K_BOTH, 0, GE0, 0, memory_peak_given),
    NUMG(struct cost_benchmark, failure_probability, K_BATCH, 0, FRACTION_LT1, 0,
         failure_probability_given),
    SPECIAL("load_points", F_ARRAY, K_INFER, K_INFER),
    V2NUM(struct cost_benchmark, crash_rate_per_instance_hour, K_BATCH, B_LO, 0, 0, 0,
          GIVEN(struct cost_benchmark, crash_rate_given)),
    V2SPECIAL("data_access", F_STRING, K_BATCH),
    V2NUM(struct cost_benchmark, restage_gb, K_BATCH, B_LO, 0, 0, 0, NO_FIELD),
    V2SPECIAL("queue_wait_quantiles_s", F_ARRAY, K_BATCH),
    V2SPECIAL("queue_wait_from", F_OBJECT, K_BATCH),
    /* Descriptive fields of a stored benchmark record (docs/evidence.md). */
    IGNORED("id"),
    IGNORED("workload_id"),
    IGNORED("offer_id"),
    IGNORED("team"),
    IGNORED("measured_at"),
    IGNORED("supersedes"),
    IGNORED("source"),
    IGNORED("notes"),
};

static const struct field load_point_table[] = {
    {"offered_rps", F_NUMBER, K_INFER, K_INFER, B_LO_EXCL, 0, 0, 0,
     offsetof(struct cost_load_point, offered_rps), NO_FIELD, 0},
    {"achieved_rps", F_NUMBER, K_INFER, K_INFER, B_LO_EXCL, 0, 0, 0,
     offsetof(struct cost_load_point, achieved_rps), NO_FIELD, 0},
    {"error_rate", F_NUMBER, K_INFER, 0, BETWEEN(0, 1), 0,
     offsetof(struct cost_load_point, error_rate), NO_FIELD, 0},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct name_value {
    const char *name;
    int value;
};

static const struct name_value kind_names[] = {
    {"training", COST_TRAINING},
    {"fine_tuning", COST_FINE_TUNING},
    {"evaluation", COST_EVALUATION},
    {"inference", COST_INFERENCE},
};
static const struct name_value purchase_names[] = {
    {"on_demand", COST_ON_DEMAND},
    {"spot", COST_SPOT},
    {"reserved", COST_RESERVED},
    {"committed", COST_COMMITTED},
};
static const struct name_value risk_names[] = {
    {"cvar", 0},
    {"quantile", 1},
};
static const struct name_value data_access_names[] = {
    {"remote", 0},
    {"staged", 1},
};
static const struct name_value arrangement_names[] = {
    {"dedicated", COST_DEDICATED},
    {"autoscaled", COST_AUTOSCALED},
    {"shared", COST_SHARED},
};

/* Looks s up in table; -1 when absent. */
static int lookup_name(const struct name_value *table, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, s) == 0)
            return table[i].value;
    return -1;
}

static void add_choice_problem(struct problems *errs, const char *ptr, const char *what,
                               const struct name_value *table, size_t n)
{
    char list[160] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? "|" : "", table[i].name);
    }
    problems_add(errs, ptr, "unknown %s: expected one of %s", what, list);
}

/* Reads an enumerated string member; returns its value, or -1 after adding a problem. */
static int read_choice(const json_t *obj, const char *key, const char *prefix, const char *what,
                       const struct name_value *table, size_t n, const char **name_out,
                       struct problems *errs)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || !json_is_string(v))
        return -1; /* absence and type are reported by the table walk */
    char ptr[512];
    problems_pointer(ptr, sizeof ptr, prefix, key);
    int value = lookup_name(table, n, json_string_value(v));
    if (value < 0)
        add_choice_problem(errs, ptr, what, table, n);
    else if (name_out)
        *name_out = json_string_value(v);
    return value;
}

static const char *kind_label(unsigned mask)
{
    return mask == K_BATCH ? "batch kinds (training, fine_tuning, evaluation)" : "inference";
}

static void describe_bounds(const struct field *f, char *buf, size_t size)
{
    char lo[48] = "", hi[48] = "";
    if (f->bounds & (B_LO | B_LO_EXCL))
        snprintf(lo, sizeof lo, "%s %.17g", f->bounds & B_LO ? "≥" : ">", f->lo);
    if (f->bounds & (B_HI | B_HI_EXCL))
        snprintf(hi, sizeof hi, "%s %.17g", f->bounds & B_HI ? "≤" : "<", f->hi);
    else
        snprintf(hi, sizeof hi, "≤ %g", COST_MAX_VALUE);
    snprintf(buf, size, "must be %s%s%s", lo, lo[0] && hi[0] ? " and " : "", hi);
}

static bool within_bounds(const struct field *f, double x)
{
    if ((f->bounds & B_LO) && !(x >= f->lo))
        return false;
    if ((f->bounds & B_LO_EXCL) && !(x > f->lo))
        return false;
    if ((f->bounds & B_HI) && !(x <= f->hi))
        return false;
    if ((f->bounds & B_HI_EXCL) && !(x < f->hi))
        return false;
    if (!(f->bounds & (B_HI | B_HI_EXCL)) && !(x <= COST_MAX_VALUE))
        return false;
    return true;
}

static const struct field *find_field(const struct field *fields, size_t n, const char *key,
                                      int engine)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name, key) == 0 && in_engine(&fields[i], engine))
            return &fields[i];
    return NULL;
}

/* Sets every stored field of target to its default, then reads obj (which may be NULL: defaults
 * only). kinds is K_BATCH or K_INFER, or K_BOTH while the kind is unknown (then no field is
 * refused or required for its kind). Special fields (objects, arrays, enumerations) are only
 * type-checked here; their owners read them. Every problem goes to errs. */
static void read_fields(const json_t *obj, const char *prefix, const struct field *fields, size_t n,
                        void *target, unsigned kinds, int engine, struct problems *errs)
{
    char ptr[512];
    for (size_t i = 0; i < n; i++) {
        const struct field *f = &fields[i];
        if (f->value_off == NO_FIELD)
            continue;
        char *slot = (char *)target + f->value_off;
        if (f->type == F_NUMBER || f->type == F_INTEGER)
            *(double *)slot = f->dflt;
        else if (f->type == F_BOOL)
            *(bool *)slot = f->dflt != 0;
        else if (f->type == F_STRING)
            *(const char **)slot = NULL;
        if (f->given_off != NO_FIELD)
            *(bool *)((char *)target + f->given_off) = false;
    }
    if (!obj)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct field *f = &fields[i];
        if (!in_engine(f, engine))
            continue;
        bool required = kinds != K_BOTH ? (f->required & kinds) != 0 : f->required == K_BOTH;
        if (required && !json_object_get(obj, f->name))
            problems_add(errs, problems_pointer(ptr, sizeof ptr, prefix, f->name),
                         "required field is missing");
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        problems_pointer(ptr, sizeof ptr, prefix, key);
        const struct field *f = find_field(fields, n, key, engine);
        if (!f) {
            problems_add(errs, ptr, "unknown field");
            continue;
        }
        if (kinds != K_BOTH && !(f->applies & kinds)) {
            problems_add(errs, ptr, "applies to %s only", kind_label(f->applies));
            continue;
        }
        char *slot = f->value_off == NO_FIELD ? NULL : (char *)target + f->value_off;
        switch (f->type) {
        case F_NUMBER:
        case F_INTEGER: {
            if (!json_is_number(v)) {
                problems_add(errs, ptr, "must be a number");
                continue;
            }
            double x = json_number_value(v);
            if (!isfinite(x)) {
                problems_add(errs, ptr, "must be a finite number");
                continue;
            }
            if (f->type == F_INTEGER && floor(x) != x) {
                problems_add(errs, ptr, "must be an integer");
                continue;
            }
            if (!within_bounds(f, x)) {
                char why[128];
                describe_bounds(f, why, sizeof why);
                problems_add(errs, ptr, "%s (got %.17g)", why, x);
                continue;
            }
            *(double *)slot = x;
            break;
        }
        case F_STRING:
            if (!json_is_string(v)) {
                problems_add(errs, ptr, "must be a string");
                continue;
            }
            if (slot)
                *(const char **)slot = json_string_value(v);
            break;
        case F_BOOL:
            if (!json_is_boolean(v)) {
                problems_add(errs, ptr, "must be true or false");
                continue;
            }
            *(bool *)slot = json_is_true(v);
            break;
        case F_OBJECT:
            if (!json_is_object(v))
                problems_add(errs, ptr, "must be an object");
            break;
        case F_ARRAY:
            if (!json_is_array(v))
                problems_add(errs, ptr, "must be an array");
            break;
        case F_SLO:
            if (!json_is_array(v) && !json_is_object(v))
                problems_add(errs, ptr,
                             "must be an object {metric, target_ms} or an array of them");
            break;
        case F_IGNORED:
            break;
        }
        if (f->given_off != NO_FIELD)
            *(bool *)((char *)target + f->given_off) = true;
    }
}

/* ---- inference pieces ---------------------------------------------------------------------- */

static int parse_demand_profile(const json_t *arr, struct cost_service *svc, struct problems *errs)
{
    const char *ptr = "/service/demand_rps_by_hour";
    size_t n = json_array_size(arr);
    if (n == 0) {
        problems_add(errs, ptr, "the demand profile needs at least one hour");
        return 0;
    }
    if (n > COST_MAX_HORIZON_HOURS) {
        problems_add(errs, ptr, "at most %d hours (got %zu)", COST_MAX_HORIZON_HOURS, n);
        return 0;
    }
    double *hours = malloc(n * sizeof *hours);
    if (!hours)
        return -1;
    double sum = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        char item[96];
        problems_pointer_index(item, sizeof item, ptr, i);
        if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
            !(json_number_value(v) <= COST_MAX_VALUE)) {
            problems_add(errs, item, "must be a number ≥ 0 and ≤ %g (requests per second)",
                         COST_MAX_VALUE);
            ok = false;
            continue;
        }
        hours[i] = json_number_value(v);
        sum += hours[i];
    }
    if (ok && !(sum > 0))
        problems_add(errs, ptr, "the demand is zero in every hour: no outcome to cost");
    svc->demand_rps_by_hour = hours;
    svc->profile_hours = n;
    return 0;
}

static int parse_demand_scenarios(const json_t *obj, struct cost_service *svc,
                                  struct problems *errs)
{
    const char *ptr = "/service/demand_scenarios";
    static const char default_name[] = "expected";
    size_t n = obj ? json_object_size(obj) : 1;
    if (obj && n == 0) {
        problems_add(errs, ptr, "name at least one demand scenario (or leave the field out)");
        return 0;
    }
    if (n > COST_MAX_DEMAND_SCENARIOS) {
        problems_add(errs, ptr, "at most %d demand scenarios (got %zu)", COST_MAX_DEMAND_SCENARIOS,
                     n);
        return 0;
    }
    svc->demand_scenarios = calloc(n, sizeof *svc->demand_scenarios);
    if (!svc->demand_scenarios)
        return -1;
    svc->demand_scenario_count = n;
    if (!obj) {
        svc->demand_scenarios[0] = (struct cost_demand_scenario){default_name, 1.0};
        return 0;
    }
    size_t i = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        char item[512];
        problems_pointer(item, sizeof item, ptr, key);
        if (!json_is_number(v) || !(json_number_value(v) > 0) ||
            !(json_number_value(v) <= COST_MAX_VALUE))
            problems_add(errs, item,
                         "must be a number > 0 and ≤ %g (a multiplier of the demand "
                         "profile)",
                         COST_MAX_VALUE);
        else
            svc->demand_scenarios[i] = (struct cost_demand_scenario){key, json_number_value(v)};
        i++;
    }
    return 0;
}

struct sorted_point {
    struct cost_load_point point;
    size_t index; /* position in the input, for pointers */
};

static int compare_points(const void *a, const void *b)
{
    const struct sorted_point *x = a, *y = b;
    if (x->point.offered_rps != y->point.offered_rps)
        return x->point.offered_rps < y->point.offered_rps ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The SLO metrics every load point must measure: engine 1's one metric, or engine 2's list. */
static size_t slo_metrics(const struct cost_scenario *sc, const char *const **names)
{
    static const char *const none[1] = {NULL};
    if (sc->engine >= 2) {
        *names = sc->service.slo_metrics;
        return sc->service.slo_count;
    }
    *names = sc->service.slo_metric ? &sc->service.slo_metric : none;
    return sc->service.slo_metric ? 1 : 0;
}

/* missing: bit m set when some load point lacks SLO metric m. */
static int parse_load_points(const json_t *arr, const char *prefix, const struct cost_scenario *sc,
                             struct cost_benchmark *b, unsigned *missing, struct problems *errs)
{
    const char *const *metrics;
    size_t metric_count = slo_metrics(sc, &metrics);
    size_t n = json_array_size(arr);
    if (n == 0) {
        problems_add(errs, prefix, "no load points: the capacity per replica cannot be measured");
        return 0;
    }
    if (n > COST_MAX_LOAD_POINTS) {
        problems_add(errs, prefix, "at most %d load points (got %zu)", COST_MAX_LOAD_POINTS, n);
        return 0;
    }
    struct sorted_point *pts = calloc(n, sizeof *pts);
    if (!pts)
        return -1;
    size_t before = errs->total;
    for (size_t i = 0; i < n; i++) {
        char ptr[512], member[512];
        problems_pointer_index(ptr, sizeof ptr, prefix, i);
        const json_t *lp = json_array_get(arr, i);
        pts[i].index = i;
        if (!json_is_object(lp)) {
            problems_add(errs, ptr, "a load point must be an object");
            continue;
        }
        read_fields(NULL, ptr, load_point_table, COUNT(load_point_table), &pts[i].point, K_INFER,
                    sc->engine, errs);
        for (size_t m = 0; m < COST_MAX_SLO_METRICS; m++)
            pts[i].point.metric_ms[m] = NAN;
        for (size_t k = 0; k < COUNT(load_point_table); k++)
            if (!json_object_get(lp, load_point_table[k].name) && load_point_table[k].required)
                problems_add(errs,
                             problems_pointer(member, sizeof member, ptr, load_point_table[k].name),
                             "required field is missing");
        /* Load points are measurement tables: latency percentiles (`ttft_p99_ms`, …) and other
         * measured rates may appear under any name, so any extra member is accepted as long as
         * it is a measurement (a finite number ≥ 0). */
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)lp, key, v)
        {
            problems_pointer(member, sizeof member, ptr, key);
            const struct field *f =
                find_field(load_point_table, COUNT(load_point_table), key, sc->engine);
            if (!json_is_number(v) || !isfinite(json_number_value(v))) {
                problems_add(errs, member, "must be a number");
                continue;
            }
            double x = json_number_value(v);
            if (f) {
                if (!within_bounds(f, x)) {
                    char why[128];
                    describe_bounds(f, why, sizeof why);
                    problems_add(errs, member, "%s (got %.17g)", why, x);
                } else {
                    *(double *)((char *)&pts[i].point + f->value_off) = x;
                }
                continue;
            }
            if (x < 0) {
                problems_add(errs, member, "a measurement must be ≥ 0 (got %.17g)", x);
                continue;
            }
            for (size_t m = 0; m < metric_count; m++)
                if (strcmp(key, metrics[m]) == 0)
                    pts[i].point.metric_ms[m] = x;
        }
        for (size_t m = 0; m < metric_count; m++)
            if (!json_object_get(lp, metrics[m])) {
                problems_add(errs, problems_pointer(member, sizeof member, ptr, metrics[m]),
                             "the SLO metric '%s' is missing from this load point", metrics[m]);
                *missing |= 1u << m;
            }
    }
    if (errs->total == before) {
        qsort(pts, n, sizeof *pts, compare_points);
        for (size_t i = 1; i < n; i++)
            if (pts[i].point.offered_rps == pts[i - 1].point.offered_rps) {
                char point[512], ptr[600], other[512];
                size_t later = pts[i].index > pts[i - 1].index ? pts[i].index : pts[i - 1].index;
                size_t earlier = pts[i].index > pts[i - 1].index ? pts[i - 1].index : pts[i].index;
                problems_pointer_index(point, sizeof point, prefix, later);
                problems_pointer(ptr, sizeof ptr, point, "offered_rps");
                problems_pointer_index(other, sizeof other, prefix, earlier);
                problems_add(errs, ptr, "two load points offer %.17g rps (the other is %s)",
                             pts[i].point.offered_rps, other);
            }
    }
    b->load_points = malloc(n * sizeof *b->load_points);
    if (!b->load_points) {
        free(pts);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        b->load_points[i] = pts[i].point;
    b->load_point_count = n;
    free(pts);
    return 0;
}

/* ---- options ------------------------------------------------------------------------------ */

/* Engine 2: 101 percentiles of observed queue waits, finite, ≥ 0, non-decreasing. */
static int parse_queue_quantiles(const json_t *arr, const char *ptr, struct cost_benchmark *b,
                                 struct problems *errs)
{
    size_t n = json_array_size(arr);
    if (n != COST_QUEUE_QUANTILES) {
        problems_add(errs, ptr,
                     "must hold exactly %d waits in seconds, the 0th … 100th percentiles (got %zu)",
                     COST_QUEUE_QUANTILES, n);
        return 0;
    }
    double *q = malloc(n * sizeof *q);
    if (!q)
        return -1;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        char item[256];
        problems_pointer_index(item, sizeof item, ptr, i);
        double x = json_is_number(v) ? json_number_value(v) : NAN;
        if (!(x >= 0) || !(x <= COST_MAX_VALUE)) {
            problems_add(errs, item, "must be a number ≥ 0 and ≤ %g (seconds)", COST_MAX_VALUE);
            ok = false;
            continue;
        }
        q[i] = x;
        if (ok && i > 0 && x < q[i - 1]) {
            problems_add(errs, item,
                         "percentiles must not decrease: %.17g s after %.17g s (percentile %zu)", x,
                         q[i - 1], i - 1);
            ok = false;
        }
    }
    if (!ok) {
        free(q);
        return 0;
    }
    b->queue_quantiles = q;
    return 0;
}

/* The fields engine 2 adds to an option, and the rules that tie them to others. */
static int parse_option_v2(const json_t *o, struct cost_option *opt, const struct cost_scenario *sc,
                           unsigned kinds, const char *ptr, struct problems *errs)
{
    char sub[192], offer_ptr[160];
    const json_t *bench = json_object_get(o, "benchmark");
    problems_pointer(offer_ptr, sizeof offer_ptr, ptr, "offer");
    if (opt->offer.reserved_paid && opt->offer.purchase != COST_RESERVED &&
        opt->offer.purchase != COST_COMMITTED)
        problems_add(errs, problems_pointer(sub, sizeof sub, offer_ptr, "reserved_paid"),
                     "only a reserved or committed offer can be paid already (this one is %s)",
                     opt->offer.purchase_name ? opt->offer.purchase_name : "not one");
    if (opt->replicas_given) {
        problems_pointer(sub, sizeof sub, ptr, "replicas");
        if (opt->arrangement != COST_DEDICATED)
            problems_add(errs, sub, "applies to a dedicated arrangement only");
        else if (!(opt->replicas > sc->service.spares))
            problems_add(errs, sub,
                         "must exceed service.spares (%.17g): spares do not serve, so %.17g "
                         "replicas would serve nothing",
                         sc->service.spares, opt->replicas);
    }
    if (!json_is_object(bench) || !(kinds & K_BATCH))
        return 0;
    char bptr[160];
    problems_pointer(bptr, sizeof bptr, ptr, "benchmark");
    int access = read_choice(bench, "data_access", bptr, "data_access", data_access_names,
                             COUNT(data_access_names), NULL, errs);
    opt->bench.staged = access == 1;
    const json_t *qq = json_object_get(bench, "queue_wait_quantiles_s");
    if (json_is_array(qq)) {
        problems_pointer(sub, sizeof sub, bptr, "queue_wait_quantiles_s");
        if (opt->bench.queue_wait_given)
            problems_add(errs, sub,
                         "give either queue_wait_quantiles_s or queue_wait_s, not both (%s/"
                         "queue_wait_s is given too)",
                         bptr);
        else if (parse_queue_quantiles(qq, sub, &opt->bench, errs) != 0)
            return -1;
    }
    if (json_object_get(bench, "queue_wait_from"))
        problems_add(errs, problems_pointer(sub, sizeof sub, bptr, "queue_wait_from"),
                     "the server resolves queue_wait_from into queue_wait_quantiles_s from the "
                     "stored runs; a scenario computed as it is must give the quantiles");
    return 0;
}

static int parse_option(const json_t *o, size_t index, struct cost_scenario *sc, unsigned kinds,
                        unsigned *missing_metrics, struct problems *errs)
{
    struct cost_option *opt = &sc->options[index];
    char ptr[96], sub[160];
    problems_pointer_index(ptr, sizeof ptr, "/options", index);
    if (!json_is_object(o)) {
        problems_add(errs, ptr, "an option must be an object");
        return 0;
    }
    read_fields(o, ptr, option_table, COUNT(option_table), opt, kinds, sc->engine, errs);
    if (opt->name && opt->name[0] == '\0')
        problems_add(errs, problems_pointer(sub, sizeof sub, ptr, "name"), "must not be empty");
    if (kinds & K_INFER) {
        int a = read_choice(o, "arrangement", ptr, "arrangement", arrangement_names,
                            COUNT(arrangement_names), &opt->arrangement_name, errs);
        opt->arrangement = a < 0 ? COST_NO_ARRANGEMENT : (enum cost_arrangement)a;
    }

    const json_t *offer = json_object_get(o, "offer");
    problems_pointer(sub, sizeof sub, ptr, "offer");
    read_fields(json_is_object(offer) ? offer : NULL, sub, offer_table, COUNT(offer_table),
                &opt->offer, kinds, sc->engine, errs);
    if (json_is_object(offer)) {
        int p = read_choice(offer, "purchase_option", sub, "purchase_option", purchase_names,
                            COUNT(purchase_names), &opt->offer.purchase_name, errs);
        opt->offer.purchase = p < 0 ? COST_ON_DEMAND : (enum cost_purchase)p;
        if (opt->offer.currency && opt->offer.currency[0] == '\0') {
            char cur[192];
            problems_add(errs, problems_pointer(cur, sizeof cur, sub, "currency"),
                         "must not be empty");
        }
    }

    const json_t *bench = json_object_get(o, "benchmark");
    problems_pointer(sub, sizeof sub, ptr, "benchmark");
    read_fields(json_is_object(bench) ? bench : NULL, sub, benchmark_table, COUNT(benchmark_table),
                &opt->bench, kinds, sc->engine, errs);
    if (sc->engine >= 2 && parse_option_v2(o, opt, sc, kinds, ptr, errs) != 0)
        return -1;
    /* Defaults that come from elsewhere in the scenario. */
    if (!opt->bench.queue_wait_given)
        opt->bench.queue_wait_s = opt->offer.provisioning_delay_s;
    if (!opt->bench.memory_peak_given) {
        opt->bench.memory_peak_gb = sc->workload.memory_required_gb;
        opt->bench.memory_peak_given = sc->workload.memory_required_given;
    }
    const json_t *lps = json_is_object(bench) ? json_object_get(bench, "load_points") : NULL;
    if (kinds == K_INFER && json_is_array(lps)) {
        char lptr[192];
        problems_pointer(lptr, sizeof lptr, sub, "load_points");
        if (parse_load_points(lps, lptr, sc, &opt->bench, missing_metrics, errs) != 0)
            return -1;
    }
    return 0;
}

static void check_options_together(struct cost_scenario *sc, struct problems *errs)
{
    for (size_t i = 0; i < sc->option_count; i++) {
        const struct cost_option *opt = &sc->options[i];
        char ptr[160];
        if (opt->name)
            for (size_t j = 0; j < i; j++)
                if (sc->options[j].name && strcmp(sc->options[j].name, opt->name) == 0) {
                    snprintf(ptr, sizeof ptr, "/options/%zu/name", i);
                    problems_add(errs, ptr,
                                 "option names must be unique: '%s' is also /options/%zu",
                                 opt->name, j);
                    break;
                }
        if (opt->offer.currency && opt->offer.currency[0]) {
            if (!sc->currency) {
                sc->currency = opt->offer.currency;
            } else if (strcmp(sc->currency, opt->offer.currency) != 0) {
                snprintf(ptr, sizeof ptr, "/options/%zu/offer/currency", i);
                problems_add(errs, ptr,
                             "all options must share one currency: %s here, %s in the first",
                             opt->offer.currency, sc->currency);
            }
        }
    }
    if (sc->kind == COST_INFERENCE && !sc->service.pool_utilization_given)
        for (size_t i = 0; i < sc->option_count; i++)
            if (sc->options[i].arrangement == COST_SHARED) {
                problems_add(errs, "/service/pool_utilization",
                             "required when an option is shared (/options/%zu)", i);
                break;
            }
}

static void add_oom(struct problems *errs)
{
    problems_add(errs, "", "out of memory while reading the scenario");
}

/* Engine 2's service.slo: engine 1's object (an array of one, its max_error_rate the limit unless
 * slo_max_error_rate is given) or an array of {metric, target_ms} under one error limit. */
static void parse_slo_v2(const json_t *slo, struct cost_service *svc, struct problems *errs)
{
    if (json_is_object(slo)) {
        read_fields(slo, "/service/slo", slo_table, COUNT(slo_table), svc, K_INFER, 2, errs);
        svc->slo_metrics[0] = svc->slo_metric;
        svc->slo_targets_ms[0] = svc->slo_target_ms;
        svc->slo_count = svc->slo_metric ? 1 : 0;
        if (svc->slo_max_error_rate_given)
            svc->max_error_rate = svc->slo_max_error_rate;
        return;
    }
    if (!json_is_array(slo))
        return; /* reported by the table walk */
    size_t n = json_array_size(slo);
    if (n == 0 || n > COST_MAX_SLO_METRICS) {
        problems_add(errs, "/service/slo", "name 1 … %d SLO metrics (got %zu)",
                     COST_MAX_SLO_METRICS, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char ptr[64], member[96];
        problems_pointer_index(ptr, sizeof ptr, "/service/slo", i);
        const json_t *item = json_array_get(slo, i);
        if (!json_is_object(item)) {
            problems_add(errs, ptr, "must be an object {metric, target_ms}");
            continue;
        }
        if (json_object_get(item, "max_error_rate")) {
            problems_add(errs, problems_pointer(member, sizeof member, ptr, "max_error_rate"),
                         "the array form has one error limit for all metrics: give it as "
                         "service.slo_max_error_rate");
            continue;
        }
        struct cost_service one;
        read_fields(item, ptr, slo_item_table, COUNT(slo_item_table), &one, K_INFER, 2, errs);
        if (!one.slo_metric)
            continue;
        if (one.slo_metric[0] == '\0') {
            problems_add(errs, problems_pointer(member, sizeof member, ptr, "metric"),
                         "must name a load-point field such as ttft_p99_ms");
            continue;
        }
        for (size_t k = 0; k < i && k < svc->slo_count; k++)
            if (svc->slo_metrics[k] && strcmp(svc->slo_metrics[k], one.slo_metric) == 0)
                problems_add(errs, problems_pointer(member, sizeof member, ptr, "metric"),
                             "'%s' is named twice", one.slo_metric);
        svc->slo_metrics[i] = one.slo_metric;
        svc->slo_targets_ms[i] = one.slo_target_ms;
        svc->slo_count = i + 1;
    }
    for (size_t i = 0; i < svc->slo_count; i++)
        if (!svc->slo_metrics[i]) /* a refused item: keep the list dense for the load points */
            svc->slo_metrics[i] = "";
    svc->slo_metric = svc->slo_count ? svc->slo_metrics[0] : NULL;
    svc->slo_target_ms = svc->slo_count ? svc->slo_targets_ms[0] : 0;
    svc->max_error_rate = svc->slo_max_error_rate;
}

/* Engine 2's rules across the document's parts (each problem names its field). */
static void check_scenario_v2(const json_t *doc, struct cost_scenario *sc, unsigned kinds,
                              unsigned missing_metrics, struct problems *errs)
{
    const json_t *workload = json_object_get(doc, "workload");
    const json_t *source =
        json_is_object(workload) ? json_object_get(workload, "data_source") : NULL;
    if (json_is_object(source) && (kinds & K_BATCH)) {
        read_fields(source, "/workload/data_source", data_source_table, COUNT(data_source_table),
                    &sc->workload, K_BATCH, sc->engine, errs);
        sc->workload.data_source_given = true;
    }
    const json_t *assumptions = json_object_get(doc, "assumptions");
    if (json_is_object(assumptions)) {
        int r = read_choice(assumptions, "risk_measure", "/assumptions", "risk_measure", risk_names,
                            COUNT(risk_names), NULL, errs);
        sc->assumptions.risk_quantile = r == 1;
    }
    if (kinds == K_BATCH &&
        sc->assumptions.trials * sc->assumptions.planned_outcomes > COST_MAX_OUTCOME_TRIALS) {
        char why[256];
        snprintf(why, sizeof why,
                 "trials × planned_outcomes_per_month may be at most %d (%.17g × %.17g): ask for "
                 "fewer trials or fewer outcomes a month",
                 COST_MAX_OUTCOME_TRIALS, sc->assumptions.trials, sc->assumptions.planned_outcomes);
        problems_add(errs, "/assumptions/trials", "%s", why);
        problems_add(errs, "/assumptions/planned_outcomes_per_month", "%s", why);
    }
    if (kinds == K_INFER) {
        const struct cost_service *svc = &sc->service;
        if (svc->max_replicas_given && (svc->max_replicas < svc->min_replicas + svc->spares ||
                                        !(svc->max_replicas > svc->spares)))
            problems_add(errs, "/service/max_replicas",
                         "must be at least min_replicas + spares (%.17g + %.17g) and more than "
                         "spares (spares do not serve)",
                         svc->min_replicas, svc->spares);
        const json_t *slo = json_object_get(json_object_get(doc, "service"), "slo");
        for (size_t m = 0; m < svc->slo_count; m++)
            if (missing_metrics & (1u << m)) {
                char ptr[64];
                if (json_is_array(slo))
                    snprintf(ptr, sizeof ptr, "/service/slo/%zu/metric", m);
                else
                    snprintf(ptr, sizeof ptr, "/service/slo/metric");
                problems_add(errs, ptr,
                             "unknown metric '%s': not every load point measures it (see the "
                             "load points named)",
                             svc->slo_metrics[m]);
            }
    }
}

/* The engine the scenario asks for ("engine": 1 or 2; absent: the default); 0 after a problem. */
static int scenario_engine(const json_t *doc, int forced, struct problems *errs)
{
    const json_t *v = json_object_get(doc, "engine");
    int asked = COST_ENGINE_DEFAULT;
    if (v) {
        double x = json_is_number(v) ? json_number_value(v) : NAN;
        if (x != 1 && x != 2) {
            problems_add(errs, "/engine",
                         "must be 1 (engine 1, kept for the comparisons it made) or 2 (the "
                         "default)");
            return 0;
        }
        asked = (int)x;
    }
    if (forced && v && asked != forced) {
        problems_add(errs, "/engine", "this comparison is computed with engine %d, not %d", forced,
                     asked);
        return 0;
    }
    return forced ? forced : asked;
}

int cost_scenario_parse(const json_t *doc, int engine, struct cost_scenario *sc,
                        struct problems *errs)
{
    memset(sc, 0, sizeof *sc);
    size_t before = errs->total;
    if (!json_is_object(doc)) {
        problems_add(errs, "", "a scenario must be a JSON object");
        return -1;
    }
    sc->engine = scenario_engine(doc, engine, errs);
    if (!sc->engine)
        sc->engine = engine ? engine : COST_ENGINE_DEFAULT; /* go on to report the rest */
    unsigned missing_metrics = 0;
    const json_t *workload = json_object_get(doc, "workload");
    int kind = -1;
    if (json_is_object(workload))
        kind = read_choice(workload, "kind", "/workload", "workload kind", kind_names,
                           COUNT(kind_names), &sc->kind_name, errs);
    sc->kind = kind < 0 ? COST_TRAINING : (enum cost_kind)kind;
    unsigned kinds = kind < 0 ? K_BOTH : kind == COST_INFERENCE ? K_INFER : K_BATCH;

    read_fields(doc, "", top_table, COUNT(top_table), NULL, kinds, sc->engine, errs);
    read_fields(json_is_object(workload) ? workload : NULL, "/workload", workload_table,
                COUNT(workload_table), &sc->workload, kinds, sc->engine, errs);

    const json_t *assumptions = json_object_get(doc, "assumptions");
    read_fields(json_is_object(assumptions) ? assumptions : NULL, "/assumptions", assumptions_table,
                COUNT(assumptions_table), &sc->assumptions, kinds, sc->engine, errs);
    sc->seed = (uint64_t)sc->assumptions.seed;
    sc->trials = kinds == K_INFER ? 0 : (size_t)sc->assumptions.trials;

    const json_t *service = json_object_get(doc, "service");
    if (kinds == K_INFER && json_is_object(service)) {
        read_fields(service, "/service", service_table, COUNT(service_table), &sc->service, kinds,
                    sc->engine, errs);
        const json_t *slo = json_object_get(service, "slo");
        if (sc->engine >= 2)
            parse_slo_v2(slo, &sc->service, errs);
        else
            read_fields(json_is_object(slo) ? slo : NULL, "/service/slo", slo_table,
                        COUNT(slo_table), &sc->service, kinds, sc->engine, errs);
        const json_t *profile_json = json_object_get(service, "demand_rps_by_hour");
        if (json_is_array(profile_json) &&
            parse_demand_profile(profile_json, &sc->service, errs) != 0)
            goto oom;
        const json_t *scen = json_object_get(service, "demand_scenarios");
        if (parse_demand_scenarios(json_is_object(scen) ? scen : NULL, &sc->service, errs) != 0)
            goto oom;
        if (!sc->service.horizon_given)
            sc->service.horizon_hours = (double)sc->service.profile_hours;
    }

    const json_t *options = json_object_get(doc, "options");
    if (json_is_array(options)) {
        size_t n = json_array_size(options);
        if (n == 0) {
            problems_add(errs, "/options", "no options to compare");
        } else if (n > COST_MAX_OPTIONS) {
            problems_add(errs, "/options", "at most %d options (got %zu)", COST_MAX_OPTIONS, n);
        } else {
            sc->options = calloc(n, sizeof *sc->options);
            if (!sc->options)
                goto oom;
            sc->option_count = n;
            for (size_t i = 0; i < n; i++)
                if (parse_option(json_array_get(options, i), i, sc, kinds, &missing_metrics,
                                 errs) != 0)
                    goto oom;
            check_options_together(sc, errs);
            if (sc->trials > 0 && n * sc->trials > COST_MAX_OPTION_TRIALS)
                problems_add(errs, "/assumptions/trials",
                             "options × trials may be at most %d per comparison (%zu × %zu = "
                             "%zu): ask for fewer trials or compare fewer options",
                             COST_MAX_OPTION_TRIALS, n, sc->trials, n * sc->trials);
        }
    }
    if (sc->engine >= 2)
        check_scenario_v2(doc, sc, kinds, missing_metrics, errs);
    if (errs->total != before) {
        cost_scenario_free(sc);
        return -1;
    }
    return 0;
oom:
    add_oom(errs);
    cost_scenario_free(sc);
    return -1;
}

void cost_scenario_free(struct cost_scenario *sc)
{
    for (size_t i = 0; i < sc->option_count; i++)
        free(sc->options[i].bench.load_points);
    for (size_t i = 0; i < sc->option_count; i++)
        free(sc->options[i].bench.queue_quantiles);
    free(sc->options);
    free((void *)sc->service.demand_rps_by_hour);
    free(sc->service.demand_scenarios);
    memset(sc, 0, sizeof *sc);
}

int cost_stored_references(const json_t *scenario, struct problems *p)
{
    int n = 0;
    char ptr[64];
    const json_t *wl = json_object_get(scenario, "workload");
    if (json_is_string(wl)) {
        problems_add(p, "/workload", "names the stored workload '%s' by id", json_string_value(wl));
        n++;
    }
    size_t i;
    const json_t *opt;
    json_array_foreach(json_object_get(scenario, "options"), i, opt)
    {
        static const char *const keys[] = {"benchmark", "offer"};
        for (size_t k = 0; k < 2; k++) {
            const json_t *v = json_object_get(opt, keys[k]);
            if (!json_is_string(v))
                continue;
            snprintf(ptr, sizeof ptr, "/options/%zu/%s", i, keys[k]);
            problems_add(p, ptr, "names the stored %s '%s' by id", keys[k], json_string_value(v));
            n++;
        }
    }
    return n;
}
