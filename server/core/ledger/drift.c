/* The drift rule (drift.h). */
#include "core/ledger/drift.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double number_or(const json_t *obj, const char *key, double fallback)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : fallback;
}

const json_t *decision_option(const char *chosen, const char *winner, const json_t *options,
                              size_t *index)
{
    const char *name = chosen ? chosen : winner;
    size_t i;
    json_t *opt;
    json_array_foreach(options, i, opt)
    {
        const char *n = json_string_value(json_object_get(opt, "name"));
        if (name && n && strcmp(n, name) == 0) {
            if (index)
                *index = i;
            return opt;
        }
    }
    return NULL;
}

const json_t *drift_option(const json_t *decided, size_t *index)
{
    return decision_option(json_string_value(json_object_get(decided, "chosen_option")),
                           json_string_value(json_object_get(decided, "winner")),
                           json_object_get(json_object_get(decided, "resolved"), "options"), index);
}

void drift_metrics(const json_t *decided, const json_t *opt, const json_t *seen,
                   struct drift_metric m[DRIFT_METRICS])
{
    const json_t *bench = json_object_get(opt, "benchmark");
    const json_t *offer = json_object_get(opt, "offer");
    const json_t *assume = json_object_get(json_object_get(decided, "resolved"), "assumptions");
    long long runs = (long long)number_or(seen, "runs", 0);
    long long util_n = (long long)number_or(seen, "util_n", 0);
    long long duty_n = (long long)number_or(seen, "duty_n", 0);
    long long queue_n = (long long)number_or(seen, "queue_n", 0);
    long long tput_n = (long long)number_or(seen, "throughput_n", 0);

    m[0] = (struct drift_metric){
        .name = "failure_rate", .label = "failure rate", .unit = "", .floor = 0.01};
    m[0].assumed =
        number_or(bench, "failure_probability", number_or(assume, "failure_probability", 0));
    m[0].known = runs >= DRIFT_MIN_RUNS;
    m[0].observed = runs ? number_or(seen, "failed", 0) / (double)runs : 0;
    m[0].samples = runs;
    m[0].basis = "GPU runs since the decision";
    m[0].evidence_key = "run_uploads";

    m[1] = (struct drift_metric){
        .name = "gpu_utilization", .label = "GPU utilisation", .unit = "", .floor = 0.01};
    m[1].assumed = number_or(bench, "gpu_duty_cycle", 1);
    if (util_n >= DRIFT_MIN_RUNS) {
        m[1].known = 1;
        m[1].observed = number_or(seen, "util_mean", 0);
        m[1].samples = util_n;
        m[1].basis = "GPU runs since the decision that report utilisation";
        m[1].evidence_key = "run_uploads";
    } else if (duty_n > 0) {
        m[1].known = 1;
        m[1].observed = number_or(seen, "duty_mean", 0);
        m[1].samples = duty_n;
        m[1].basis = "benchmarks since the decision";
        m[1].evidence_key = "benchmarks";
    }

    m[2] = (struct drift_metric){
        .name = "queue_wait_s", .label = "queue wait", .unit = " s", .floor = 60};
    m[2].assumed = number_or(bench, "queue_wait_s", number_or(offer, "provisioning_delay_s", 0));
    m[2].known = queue_n >= DRIFT_MIN_RUNS;
    m[2].observed = number_or(seen, "queue_mean_s", 0);
    m[2].samples = queue_n;
    m[2].basis = "started GPU runs since the decision";
    m[2].evidence_key = "run_uploads";

    m[3] = (struct drift_metric){
        .name = "throughput_units_per_s", .label = "throughput", .unit = " units/s", .floor = 1e-9};
    m[3].assumed = number_or(bench, "throughput_units_per_s", 0);
    m[3].known = tput_n > 0 && m[3].assumed > 0;
    m[3].observed = number_or(seen, "throughput_mean", 0);
    m[3].samples = tput_n;
    m[3].basis = "benchmarks since the decision";
    m[3].evidence_key = "benchmarks";
}

double drift_threshold(const struct drift_metric *m, double review_threshold)
{
    return m->threshold > 0 ? m->threshold : review_threshold;
}

int drift_departs(const struct drift_metric *m, double review_threshold, double *rel)
{
    *rel = (m->observed - m->assumed) / fmax(fabs(m->assumed), m->floor);
    return m->known && fabs(*rel) > drift_threshold(m, review_threshold);
}

void drift_message(const struct drift_metric *m, double rel, double threshold, char *out,
                   size_t size)
{
    snprintf(out, size,
             "%s since the decision is %.4g%s over %lld %s, %s than the %.4g%s the decision "
             "assumed by %.0f%% (threshold %.0f%%): the decision may no longer hold",
             m->label, m->observed, m->unit, m->samples, m->basis, rel > 0 ? "higher" : "lower",
             m->assumed, m->unit, fabs(rel) * 100, threshold * 100);
}
